"""Write the benchmark's generated input of one format (100 MB, 20 columns) to FORMAT.pkl:
the same case `cdcfast bench` times. usage: python case.py FORMAT"""
import pickle
import sys

from cdcfast.bench._timing import make_case

fmt = sys.argv[1]
c = make_case(fmt, 100)
with open(f"{fmt}.pkl", "wb") as f:
    pickle.dump((c.data, c.catalog, c.table), f)
