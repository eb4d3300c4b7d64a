"""Decode FORMAT.pkl N times on one thread; with --time, print the best MB/s of N (after a
warm-up). usage: python decode.py FORMAT N [--time]"""
import pickle
import sys
import time

import cdcfast

fmt, n = sys.argv[1], int(sys.argv[2])
with open(f"{fmt}.pkl", "rb") as f:
    data, catalog, table = pickle.load(f)
dec = cdcfast.Decoder(fmt, catalog=catalog, threads=1)
if "--time" in sys.argv:
    dec.decode(data, table=table)
best = float("inf")
for _ in range(n):
    t = time.perf_counter()
    dec.decode(data, table=table)
    best = min(best, time.perf_counter() - t)
print(f"{fmt} {len(data)} bytes, best {len(data) / 1e6 / best:.0f} MB/s")
