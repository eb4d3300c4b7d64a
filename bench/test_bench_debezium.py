"""pytest-benchmark cases of SPEC §8 for debezium: the same generated input (bare payloads,
base64 decimals, MicroTimestamp and Date, BEGIN/END transaction documents between the events)
for cdcfast (decode and headers()), the reference decoder, pyarrow.json with an explicit schema
and json.loads + Table.from_pylist. Run: python -m pytest bench --benchmark-only
(CDCFAST_BENCH_MB sets the input size, default 20; `cdcfast bench --format debezium` prints the
same figures as one table)."""
import os

import pytest

from cdcfast import bench

MB = float(os.environ.get("CDCFAST_BENCH_MB", "20"))


@pytest.fixture(scope="module")
def case():
    return bench.make_case("debezium", MB)


@pytest.fixture(scope="module")
def small():
    return bench.make_case("debezium", min(MB, 2))


def test_cdcfast(run, case):
    run(bench.cdcfast_decode(case), case)


def test_cdcfast_headers(run, case):
    run(bench.cdcfast_headers(case), case)


def test_reference(run, small):
    run(bench.reference_decode(small), small)


def test_pyarrow_json(run, case):
    run(bench.pyarrow_json(case), case)


def test_json_loads(run, small):
    run(bench.json_loads(small), small)


def test_msgspec_loads(run, small):
    fn = bench.msgspec_loads(small)
    if fn is None:
        pytest.skip("msgspec is not installed")
    run(fn, small)
