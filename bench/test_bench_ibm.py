"""pytest-benchmark cases of SPEC §8 for ibm-delimited: the same generated input for cdcfast,
the reference decoder and pyarrow.csv. Run: python -m pytest bench --benchmark-only
(CDCFAST_BENCH_MB sets the input size, default 20; `cdcfast bench` prints the same figures
as one table)."""
import os

import pytest

from cdcfast import bench

MB = float(os.environ.get("CDCFAST_BENCH_MB", "20"))


@pytest.fixture(scope="module")
def case():
    return bench.make_case("ibm-delimited", MB)


@pytest.fixture(scope="module")
def small():
    return bench.make_case("ibm-delimited", min(MB, 2))


def test_cdcfast(run, case):
    run(bench.cdcfast_decode(case), case)


def test_reference(run, small):
    run(bench.reference_decode(small), small)


def test_pyarrow_csv_strings(run, case):
    run(bench.pyarrow_csv(case, typed=False), case)


def test_pyarrow_csv_typed(run, case):
    run(bench.pyarrow_csv(case, typed=True), case)
