#!/usr/bin/env python
"""ibm-delimited: the decode of a stream and of a message list, with and without the catalog,
every mode, decode_tables / decode / headers / read_batches in small batches, native against
reference (fuzz/harness.py says what is checked and how an input reads)."""
import harness
import test_ibm_fuzz as t

FMT = "ibm-delimited"


def variants():
    """The test suite's generator dialects (code pages, delimiters, decimal comma, trailing
    delimiter, two tables) and its header-like soup with a five-column catalog."""
    out = []
    for i in range(len(t.VARIANTS)):
        msgs, cat, opts, _, _ = t.corpus(i)
        out.append((cat, opts, [msgs[:4], msgs[4:12]]))
    soup = [[t.soup(lambda xs, k=k: xs[(k * 7 + j) % len(xs)], 12) for j in range(3)]
            for k in range(3)]
    # the vendor's example record (IBM's "Delimited message format" page) and its header
    example = [b'10,"IBM","2006030","182318000005","S","T","ISRT","TX","0000",'
               b'"2006-06-30-18.00.52","P",0,"C1C2",1,"x""y",-1.5E3,"a\nb","AB"\n']
    out.append((t.SOUP_CATALOG, {}, soup + [example]))
    return out


TARGET = harness.DecodeTarget(FMT, variants)

if __name__ == "__main__":
    harness.main(TARGET)
