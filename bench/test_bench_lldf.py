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


def _run(benchmark, fn, c):
    benchmark.extra_info["input_mb"] = c.mb
    benchmark.extra_info["rows"] = c.rows
    benchmark.pedantic(fn, rounds=3, warmup_rounds=1, iterations=1)
    benchmark.extra_info["mb_s"] = c.mb / benchmark.stats.stats.min


def test_cdcfast(benchmark, case):
    _run(benchmark, bench.cdcfast_decode(case), case)


def test_cdcfast_headers(benchmark, case):
    _run(benchmark, bench.cdcfast_headers(case), case)


def test_reference(benchmark, small):
    _run(benchmark, bench.reference_decode(small), small)


def test_struct_decoder(benchmark, small):
    _run(benchmark, bench.struct_decode(small), small)
