#!/usr/bin/env python
"""debezium: the decode of a stream and of a message list (with and without embedded schemas,
transaction metadata, tombstones, pretty-printed, every decimal and time mode), with and
without the catalog, every mode, decode_tables / decode / headers / read_batches in small
batches, native against reference (fuzz/harness.py says what is checked and how an input
reads)."""
import harness
from cdcfast.encode import generate

FMT = "debezium"
WRITERS = [
    dict(),
    dict(schemas=True, tables=2),
    dict(decimal_handling="double", time_precision="connect", tombstones=True),
    dict(decimal_handling="string", pretty=True, transactions=False),
    dict(schemas=True, time_precision="connect", decimal_handling="string"),
]
DECODER = ("decimal_handling", "time_precision")


def variants():
    out = []
    for i, w in enumerate(WRITERS):
        msgs, cat = generate(FMT, 10, table_width=4 + 3 * i, seed=40 + i, messages=True, **w)
        out.append((cat, {k: w[k] for k in DECODER if k in w}, [msgs[:5], msgs[5:12]]))
    out.append((None, {}, []))       # the peer files (seeded from ../shared)
    return out


TARGET = harness.DecodeTarget(FMT, variants)

if __name__ == "__main__":
    harness.main(TARGET)
