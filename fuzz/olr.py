#!/usr/bin/env python
"""olr: the decode of a stream and of a message list, with and without the catalog, every
mode, decode_tables / decode / headers / read_batches in small batches, native against
reference (fuzz/harness.py says what is checked and how an input reads)."""
import harness
import test_olr_fuzz as t

FMT = "olr"


def variants():
    """Every writer variant of the generator (the peer files seed the campaign from
    ../shared, fuzz/seeds.py, and are not variants: the committed corpus holds none)."""
    out = []
    for i in range(len(t.VARIANTS)):
        msgs, cat, opts, _ = t.corpus(i)
        out.append((cat, opts, [msgs[:6], msgs[6:14]]))
    out.append((None, {}, []))       # the peer files' outputs, read without a catalog
    return out


TARGET = harness.DecodeTarget(FMT, variants)

if __name__ == "__main__":
    harness.main(TARGET)
