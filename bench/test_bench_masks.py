"""pytest-benchmark case of the Qlik hex-mask kernel (_hexmask.h through
cdcfast._masks.decode_masks): 1,000,000 changeMask texts of a 20-column table into a
struct<bool × 20>, single core; the issue's target is ≥ 50 M masks/s (qlik's decoding cases:
bench/test_bench_json.py). Run: python -m pytest bench/test_bench_masks.py --benchmark-only -s"""
import pytest

from cdcfast._masks import decode_masks
from cdcfast.bench.qlik import sample_masks

MASKS = 1_000_000
COLUMNS = 20


@pytest.fixture(scope="module")
def masks():
    return sample_masks(MASKS, COLUMNS)


def test_decode_masks(benchmark, masks):
    benchmark.extra_info["masks"] = MASKS
    struct, bad = benchmark.pedantic(decode_masks, args=(masks, COLUMNS), rounds=10,
                                     warmup_rounds=2, iterations=1)
    assert len(struct) == MASKS and len(bad) == 0
    rate = MASKS / benchmark.stats.stats.min
    benchmark.extra_info["masks_per_s"] = rate
    print(f"\nqlik masks: {rate / 1e6:.1f} M masks/s "
          f"({COLUMNS} columns, {MASKS:,} masks, best of 10)")
