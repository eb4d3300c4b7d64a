"""`cdcfast bench` (SPEC §8): cdcfast against the reference decoder and the general-purpose
tools, on the same generated input.

- `_timing`: the generated case (`Case`, `make_case`) and the interleaved best-of timing;
- `core`: the contenders, the further figures (cold start, memory), `run`, `report`, `dumps`;
- `debezium`, `olr`, `qlik`: the explicit schemas the JSON contenders read each format with
  (and qlik's hex-mask rate); `lldf`: the plain `struct` decoder;
- `spark`: `cdcfast bench --spark`, the same input through local Spark.

Imports go one way: this file → `core` → the format modules and `spark` (those inside
functions), and `core`, `spark` → `_timing`, which imports none of them
(tests/test_bench_package.py checks the graph has no cycle).
"""
from ._timing import Case, best_time, best_times, make_case
from .core import (cdcfast_decode, cdcfast_headers, dumps, json_loads, msgspec_loads,
                   pyarrow_csv, pyarrow_json, reference_decode, report, run, struct_decode)

__all__ = ["Case", "best_time", "best_times", "make_case", "cdcfast_decode", "cdcfast_headers",
           "dumps", "json_loads", "msgspec_loads", "pyarrow_csv", "pyarrow_json",
           "reference_decode", "report", "run", "struct_decode"]
