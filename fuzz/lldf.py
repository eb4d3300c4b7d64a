#!/usr/bin/env python
"""lldf: the decode of a stream and of a message list (every framing, code pages, HFP and
IEEE floats, segmented records, control records), with and without the catalog, every mode,
decode_tables / decode / headers / read_batches in small batches, native against reference
(fuzz/harness.py says what is checked and how an input reads)."""
import harness
import test_lldf_fuzz as t

FMT = "lldf"


def variants():
    out = []
    for i in range(len(t.VARIANTS)):
        msgs, cat, opts = t.corpus(i)
        out.append((cat, opts, [list(msgs[:3]), list(msgs[3:8])]))
    return out


TARGET = harness.DecodeTarget(FMT, variants)

if __name__ == "__main__":
    harness.main(TARGET)
