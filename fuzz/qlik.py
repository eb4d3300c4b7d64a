#!/usr/bin/env python
"""qlik: the decode of a stream and of a message list (Kafka envelope and Pub/Sub form,
metadata messages, masks), with and without the catalog, every mode, decode_tables / decode /
headers / read_batches in small batches, native against reference (fuzz/harness.py says what
is checked and how an input reads)."""
import harness
import test_qlik_fuzz as t

FMT = "qlik"


def variants():
    out = []
    for i in range(len(t.VARIANTS)):
        msgs, cat, opts, _ = t.corpus(i)
        out.append((cat, opts, [msgs[:6], msgs[6:12]]))
    out.append((t.ITEM, {}, []))     # the peer message's table (its file seeds from ../shared)
    return out


TARGET = harness.DecodeTarget(FMT, variants)

if __name__ == "__main__":
    harness.main(TARGET)
