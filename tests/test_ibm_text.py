"""Text values 16 bytes at a time (native/cdcfast/_utf8.h): the UTF-8 check and the copy that
drops the second of each doubled string delimiter.

Byte strings built from valid characters of every length and from each kind of invalid
sequence (lone and extra continuations, overlongs, surrogates, code points past U+10FFFF,
bytes that never occur, a character cut by the value's end), at every offset around the
16-byte blocks, with and without doubled quotes: the native decoder keeps exactly the values
Python's strict UTF-8 decoder accepts, with the same `_error` texts as the reference. The
same cases run in a child process with CDCFAST_NO_AVX2=1, where the scalar check runs.
"""
from __future__ import annotations

import json
import os
import random

import cdcfast
from cdcfast import reference
from conftest import scalar_and_simd

HEADER = ('10,"IBM","2024164","080001261032","S","T","ISRT","0000:0000:0388:4757:0000:0000",'
          '"0000:0000:0000:0271:03e1:0000:0000:0000","2024-06-12-08.00.01","ASNQCAP",0000,,')
CATALOG = {"tables": [{"schema": "S", "table": "T",
                       "columns": [{"name": "V", "type": "VARCHAR(300)"}]}]}

GOOD = ["a", "é", "ß", "€", "文", "\uffff", "\U0001f600", "\U0010ffff", "\u0800", "\u07ff",
        "\ud7ff", "\ue000", '"']
BAD = [b"\x80", b"\xbf", b"\xc0\x80", b"\xc1\xbf", b"\xe0\x80\x80", b"\xe0\x9f\xbf",
       b"\xed\xa0\x80", b"\xed\xbf\xbf", b"\xf0\x80\x80\x80", b"\xf0\x8f\xbf\xbf",
       b"\xf4\x90\x80\x80", b"\xf5\x80\x80\x80", b"\xf8\x88\x80\x80\x80", b"\xff", b"\xfe",
       b"\xc3", b"\xe2\x82", b"\xf0\x9f\x98", b"\xc3\xa9\xa9", b"\xe2\x82\xac\x80"]


def values(seed: int = 3, count: int = 3000) -> list[bytes]:
    """Byte strings of 0-80 bytes: mostly valid text, about a third with one bad piece."""
    rng = random.Random(seed)
    out = []
    for i in range(count):
        size = rng.randint(0, 80)
        parts = []
        while sum(len(p) for p in parts) < size:
            parts.append(("x" * rng.randint(1, 20) if rng.random() < 0.5
                          else rng.choice(GOOD)).encode())
        if i % 3 == 0:
            parts.insert(rng.randint(0, len(parts)), rng.choice(BAD))
        out.append(b"".join(parts))
    return out


def decoded(data: bytes, api) -> list:
    t = api.decode(data, format="ibm-delimited", catalog=CATALOG, table="S.T")
    return list(zip(t.column("after").combine_chunks().field(0).to_pylist(),
                    t.column("_error").to_pylist()))


def run_cases() -> list:
    vals = values()
    data = b"\n".join(HEADER.encode() + b'"' + v.replace(b'"', b'""') + b'"' for v in vals)
    data += b"\n" + HEADER.encode() + b"x" * 40        # the last values are far from the end
    return decoded(data, cdcfast)[:-1]


def test_text_values_like_python():
    got = run_cases()
    vals = values()
    data = b"\n".join(HEADER.encode() + b'"' + v.replace(b'"', b'""') + b'"' for v in vals)
    data += b"\n" + HEADER.encode() + b"x" * 40
    assert got == decoded(data, reference)[:-1]
    kept = 0
    for v, (value, error) in zip(vals, got):
        try:
            text = v.decode("utf-8")
        except UnicodeDecodeError:
            assert value is None and error is not None, v
        else:
            assert value == text and error is None, v
            kept += 1
    assert 1500 < kept < len(vals)
    assert sum(b'"' in v for v in vals) > 300            # the copy that drops doubled quotes


def test_scalar_check_agrees():
    """The byte-by-byte check (CDCFAST_NO_AVX2=1, in a child process) decides the same."""
    here = os.path.dirname(__file__)
    code = (f"import sys, json; sys.path.insert(0, {here!r}); import test_ibm_text as t; "
            "from cdcfast import _ibm; print(_ibm.utf8_level()); print(json.dumps(t.run_cases()))")
    runs = {}
    for mode, stdout in scalar_and_simd(code).items():
        level, payload = stdout.split("\n", 1)
        runs[mode] = (level, json.loads(payload))
    assert runs["1"][0] == "False"
    assert runs["1"][1] == runs[""][1] == [list(r) for r in run_cases()]
