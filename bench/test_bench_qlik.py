"""pytest-benchmark cases of SPEC §8 for qlik: the hex-mask kernel (_hexmask.h through
cdcfast._masks.decode_masks: 1,000,000 changeMask texts of a 20-column table into a
struct<bool × 20>, single core; the issue's target is ≥ 50 M masks/s), and on the same
generated Kafka messages cdcfast (decode and headers()), the reference decoder, pyarrow.json
with an explicit schema and json.loads + Table.from_pylist. Run:
python -m pytest bench/test_bench_qlik.py --benchmark-only -s (CDCFAST_BENCH_MB sets the input
size, default 20; `cdcfast bench --format qlik` prints the same figures as one table)."""
import os

import pytest

from cdcfast import bench
from cdcfast._masks import decode_masks
from cdcfast.bench_qlik import sample_masks

MASKS = 1_000_000
COLUMNS = 20
MB = float(os.environ.get("CDCFAST_BENCH_MB", "20"))


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


@pytest.fixture(scope="module")
def case():
    return bench.make_case("qlik", MB)


@pytest.fixture(scope="module")
def small():
    return bench.make_case("qlik", min(MB, 2))


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
