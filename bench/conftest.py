"""What every format's pytest-benchmark cases share."""
import pytest


@pytest.fixture
def run(benchmark):
    """run(fn, case): time fn on the case's input (3 rounds after a warm-up) and record its
    size and MB/s beside the timings."""
    def go(fn, c):
        benchmark.extra_info["input_mb"] = c.mb
        benchmark.extra_info["rows"] = c.rows
        benchmark.pedantic(fn, rounds=3, warmup_rounds=1, iterations=1)
        benchmark.extra_info["mb_s"] = c.mb / benchmark.stats.stats.min
    return go
