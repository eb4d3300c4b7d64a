"""The input of the experiment: the benchmark's 100 MB of Debezium change events (cdcfast
bench's generator), one document per line, written beside this file as dbz.jsonl."""
import os

from cdcfast.bench._timing import make_case

HERE = os.path.dirname(os.path.abspath(__file__))
with open(os.path.join(HERE, "dbz.jsonl"), "wb") as f:
    f.write(make_case("debezium", 100).data)
