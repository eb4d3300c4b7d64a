"""What bench.py and bench2.py share: the benchmark's input, in Python and loaded by the
prototype, the decoder to compare with, the libraries."""
import ctypes as C
import os
import sys

import cdcfast
from cdcfast.bench._timing import make_case

HERE = os.path.dirname(os.path.abspath(__file__))
DATA = os.path.join(HERE, "dbz.jsonl")      # made by data.py
ROUNDS = int(sys.argv[1]) if len(sys.argv) > 1 else 7
CHUNK = int(sys.argv[2]) if len(sys.argv) > 2 else 1 << 18
I = C.c_int64

case = make_case("debezium", 100)
d, cat, t = case.data, case.catalog, case.table
dec = cdcfast.Decoder("debezium", catalog=cat, threads=1)
L = C.CDLL(os.path.join(HERE, "libproto.so"))
S = C.CDLL(os.path.join(HERE, "libsj.so"))
L.px_load.restype = C.c_void_p
L.px_load.argtypes = [C.c_char_p, C.POINTER(C.c_int64)]
L.px_out_new.restype = C.c_void_p
n = C.c_int64()
buf = C.c_void_p(L.px_load(DATA.encode(), C.byref(n)))
N = n.value
assert N == len(d), "dbz.jsonl is not the benchmark's input: run data.py"


def best_times(contenders: dict) -> dict:
    """Best wall time of each contender over ROUNDS interleaved rounds (gc off)."""
    import gc
    import time
    best = {k: 1e9 for k in contenders}
    gc.disable()
    for _ in range(ROUNDS):
        for k, f in contenders.items():
            t0 = time.perf_counter()
            f()
            best[k] = min(best[k], time.perf_counter() - t0)
    gc.enable()
    return best
