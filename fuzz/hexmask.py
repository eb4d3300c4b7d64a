#!/usr/bin/env python
"""The hex-mask kernel (native/cdcfast/_hexmask.h through cdcfast._masks.decode_masks, what the
qlik kernel reads changeMask and columnMask with) against the reference's reading of a mask
(cdcfast.reference.qlik.mask_bits): per row, bit i of int(mask, 16) is column i; a null or
empty text is a null row; a text that is not hex is a null row listed as bad.

Input: byte 0 the column count less one, byte 1 bits 0-1 the array type (string,
large_string, binary, large_binary), bit 2 LOB columns (from byte 2's bits, repeated), bit 3
a slice that drops the first row, bit 4 column names; the rest the mask texts, split at `,`
(`~` alone: a null)."""
import numpy as np
import pyarrow as pa

import harness
from cdcfast._masks import decode_masks
from cdcfast.reference.qlik import NOT_HEX, mask_bits

Finding = harness.Finding
TYPES = (pa.string(), pa.large_string(), pa.binary(), pa.large_binary())


def expected(texts, ncols, lob):
    rows, bad = [], []
    for r, t in enumerate(texts):
        if t is None or t == "":
            rows.append(None)
            continue
        x = mask_bits(t)
        if x is NOT_HEX:
            rows.append(None)
            bad.append(r)
        else:
            rows.append([None if lob and lob[i] else bool(x >> i & 1) for i in range(ncols)])
    return rows, bad


def check(data: bytes) -> None:
    ncols = (data[0] if data else 0) + 1
    opts = data[1] if len(data) > 1 else 0
    typ = TYPES[opts & 3]
    lob = None
    if opts & 4:
        bits = data[2] if len(data) > 2 else 0
        lob = [bool(bits >> (i % 8) & 1) for i in range(ncols)]
    raw = [None if p == b"~" else p for p in data[3:].split(b",")]
    if pa.types.is_string(typ) or pa.types.is_large_string(typ):
        texts = [None if p is None else p.decode("utf-8", "replace") for p in raw]
    else:
        texts = raw
    arr = pa.array(texts, typ)
    if opts & 8 and len(texts) > 1:
        arr, texts = arr.slice(1), texts[1:]
    names = [f"col_{i}" for i in range(ncols)] if opts & 16 else None
    got, bad = decode_masks(arr, ncols, lob, names)
    got.validate(full=True)
    as_text = [None if t is None else t.decode("latin-1") if isinstance(t, bytes) else t
               for t in texts]
    want, want_bad = expected(as_text, ncols, lob)
    rows = [None if r is None else list(r.values()) for r in got.to_pylist()]
    if rows != want or bad.dtype != np.int64 or bad.tolist() != want_bad:
        raise Finding(f"decode_masks({texts!r}, {ncols}, lob={lob}): rows {rows}, bad "
                      f"{bad.tolist()}; the reference: {want}, bad {want_bad}")
    if names is not None and got.type.num_fields and got.type.field(0).name != names[0]:
        raise Finding("decode_masks: the column names are not the ones given")


class Target:
    check = staticmethod(check)

    @staticmethod
    def seeds():
        for ncols, opts, masks in [(16, 0, b"008080,00FFFF"), (3, 16, b"0B,00,05"),
                                   (4, 2, b"0B"), (70, 5, b"F" * 18 + b",~,,0x0F,ZZ"),
                                   (130, 9, b"0" * 33 + b"1," + b"ff" * 17),
                                   (8, 3, b"\xc3\xa9,F\x00,8000000000")]:
            yield bytes([ncols - 1, opts, 0b10100101]) + masks


TARGET = Target()

if __name__ == "__main__":
    harness.main(TARGET)
