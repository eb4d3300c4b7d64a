"""What every bench module shares: the generated case and the interleaved best-of timing
(core.py's contenders and spark.py's Spark contenders both time through it)."""
from __future__ import annotations

import time
from dataclasses import dataclass


@dataclass
class Case:
    format: str
    data: bytes
    catalog: object
    table: str
    rows: int

    @property
    def mb(self) -> float:
        return len(self.data) / 1e6


def make_case(format: str = "ibm-delimited", size_mb: float = 100, table_width: int = 20,
              seed: int = 0) -> Case:
    """Generated input of about `size_mb` MB with one table of `table_width` columns."""
    from ..encode import generate
    probe, _ = generate(format, rows=2000, table_width=table_width, seed=seed)
    rows = max(1, int(size_mb * 1e6 / (len(probe) / 2000)))
    data, catalog = generate(format, rows=rows, table_width=table_width, seed=seed)
    return Case(format, data, catalog, catalog.tables[0].name, rows)


def best_time(fn, repeat: int = 3) -> float:
    """Best wall time of `repeat` runs after one warm-up run."""
    return best_times({"": fn}, repeat)[""]


def best_times(fns: dict, repeat: int = 5) -> dict:
    """Best wall time of each function over `repeat` rounds after a warm-up round. Rounds
    run every function once, in turn: on a shared machine a slow spell then hits all the
    contenders alike instead of one of them."""
    best = {k: float("inf") for k in fns}
    for r in range(repeat + 1):
        for k, fn in fns.items():
            t = time.perf_counter()
            fn()
            if r:
                best[k] = min(best[k], time.perf_counter() - t)
    return best
