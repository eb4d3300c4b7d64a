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


def _run(benchmark, fn, c):
    benchmark.extra_info["input_mb"] = c.mb
    benchmark.extra_info["rows"] = c.rows
    benchmark.pedantic(fn, rounds=3, warmup_rounds=1, iterations=1)
    benchmark.extra_info["mb_s"] = c.mb / benchmark.stats.stats.min


def test_cdcfast(benchmark, case):
    _run(benchmark, bench.cdcfast_decode(case), case)


def test_reference(benchmark, small):
    _run(benchmark, bench.reference_decode(small), small)


def test_pyarrow_csv_strings(benchmark, case):
    _run(benchmark, bench.pyarrow_csv(case, typed=False), case)


def test_pyarrow_csv_typed(benchmark, case):
    _run(benchmark, bench.pyarrow_csv(case, typed=True), case)
