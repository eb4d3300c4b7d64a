"""pytest-benchmark case of the Qlik hex-mask kernel (_hexmask.h through
cdcfast._masks.decode_masks): 1,000,000 changeMask texts of a 20-column table into a
struct<bool × 20>, single core; the issue's target is ≥ 50 M masks/s. Run:
python -m pytest bench/test_bench_qlik.py --benchmark-only -s"""
import random

import pyarrow as pa
import pytest

from cdcfast._masks import decode_masks

MASKS = 1_000_000
COLUMNS = 20


@pytest.fixture(scope="module")
def masks():
    """Masks as Replicate writes them for 20 columns (3 bytes: `0FFFFF` for an insert), a
    third all-set, the rest updates touching a few columns."""
    rng = random.Random(0)
    texts = []
    for _ in range(MASKS):
        if rng.random() < 1 / 3:
            texts.append("0FFFFF")
        else:
            bits = 0
            for _ in range(rng.randint(1, 4)):
                bits |= 1 << rng.randrange(COLUMNS)
            texts.append(f"{bits:06X}")
    return pa.array(texts, pa.string())


def test_decode_masks(benchmark, masks):
    benchmark.extra_info["masks"] = MASKS
    struct, bad = benchmark.pedantic(decode_masks, args=(masks, COLUMNS), rounds=10,
                                     warmup_rounds=2, iterations=1)
    assert len(struct) == MASKS and len(bad) == 0
    rate = MASKS / benchmark.stats.stats.min
    benchmark.extra_info["masks_per_s"] = rate
    print(f"\nqlik masks: {rate / 1e6:.1f} M masks/s "
          f"({COLUMNS} columns, {MASKS:,} masks, best of 10)")
