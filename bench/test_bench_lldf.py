"""pytest-benchmark cases of SPEC §8 for lldf: the same generated input for cdcfast (decode and
headers()), the reference decoder and a plain struct decoder. Run: python -m pytest bench
--benchmark-only (CDCFAST_BENCH_MB sets the input size, default 20; `cdcfast bench --format
lldf` prints the same figures as one table, with read_batches memory)."""
import os

import pytest

from cdcfast import bench

MB = float(os.environ.get("CDCFAST_BENCH_MB", "20"))


@pytest.fixture(scope="module")
def case():
    return bench.make_case("lldf", MB)


@pytest.fixture(scope="module")
def small():
    return bench.make_case("lldf", min(MB, 2))


def test_cdcfast(run, case):
    run(bench.cdcfast_decode(case), case)


def test_cdcfast_headers(run, case):
    run(bench.cdcfast_headers(case), case)


def test_reference(run, small):
    run(bench.reference_decode(small), small)


def test_struct_decoder(run, small):
    run(bench.struct_decode(small), small)
