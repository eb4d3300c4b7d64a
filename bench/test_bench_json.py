"""pytest-benchmark cases of SPEC §8 for the JSON formats (debezium, olr, qlik): on each
format's generated input (`cdcfast.bench.make_case`: debezium's bare payloads with base64
decimals and BEGIN/END documents; olr as peer-data's writer writes it; qlik's Kafka messages
with their metadata messages) cdcfast (decode and headers()), the reference decoder,
pyarrow.json with an explicit schema of the messages' JSON types, json.loads +
Table.from_pylist and msgspec where it applies. Run: python -m pytest bench --benchmark-only
(CDCFAST_BENCH_MB sets the input size, default 20; `cdcfast bench --format F` prints the same
figures as one table)."""
import os

import pytest

from cdcfast import bench

MB = float(os.environ.get("CDCFAST_BENCH_MB", "20"))
FORMATS = ("debezium", "olr", "qlik")


@pytest.fixture(scope="module", params=FORMATS)
def case(request):
    return bench.make_case(request.param, MB)


@pytest.fixture(scope="module", params=FORMATS)
def small(request):
    return bench.make_case(request.param, min(MB, 2))


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
        pytest.skip("msgspec is not installed (or the format's numbers need json's options)")
    run(fn, small)
