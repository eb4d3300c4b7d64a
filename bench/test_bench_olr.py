"""pytest-benchmark cases of SPEC §8 for olr: the same generated OpenLogReplicator messages
(the peer-data writer's options: scns, tms epoch seconds, dotted xids, compact images) for
cdcfast (decode and headers()), the reference decoder, pyarrow.json with an explicit schema and
json.loads + Table.from_pylist. Run: python -m pytest bench --benchmark-only
(CDCFAST_BENCH_MB sets the input size, default 20; `cdcfast bench --format olr` prints the
same figures as one table)."""
import os

import pytest

from cdcfast import bench

MB = float(os.environ.get("CDCFAST_BENCH_MB", "20"))


@pytest.fixture(scope="module")
def case():
    return bench.make_case("olr", MB)


@pytest.fixture(scope="module")
def small():
    return bench.make_case("olr", min(MB, 2))


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
