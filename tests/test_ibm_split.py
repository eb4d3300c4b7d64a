"""The record splitter at 64-byte block edges (native/cdcfast/_split.h).

The native splitter reads 64 bytes at a time and keeps, from one block to the next, whether it
is inside a string, whether the last byte closed one and whether a doubled string delimiter is
pending. These tests put quotes, doubled quotes, delimiters inside strings, quoting errors and
message ends at every offset around block edges, and check that native and reference decoders
give the same table (fields, unescaped values, `_error` texts with their byte positions).
"""
from __future__ import annotations

import os

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

import cdcfast
from cdcfast.encode import generate
from cdcfast import reference

FMT = "ibm-delimited"
HEADER = (b'10,"IBM","2024164","080001261032","S","T","ISRT","0000:0000:0388:4757:0000:0000",'
          b'"0000:0000:0000:0271:03e1:0000:0000:0000","2024-06-12-08.00.01","ASNQCAP",0000')

# pieces of after-image fields; some are quoting errors on purpose
GOOD = [b"", b"1", b"abc", b'"x"', b'""', b'""""', b'"a""b"', b'"a,b"', b'"a\nb"',
        b'"' + b"q" * 40 + b'""' + b"r" * 30 + b'"', b'"\xc3\xa9t\xc3\xa9"', b"x" * 70]
BAD = [b'a"b', b'"ab"c', b'"ab', b'"a"""b"', b'"""', b'ab""']


def record(before: int, fields: list[bytes]) -> bytes:
    """An insert of len(fields) columns; `before` pads the plan name to move the fields
    across block edges."""
    head = HEADER.replace(b'"ASNQCAP"', b'"' + b"P" * before + b'"')
    return head + b"," * (len(fields) + 1) + b",".join(fields)


def same(data):
    if not isinstance(data, list):
        data = [data]
    got = cdcfast.decode_tables(data, format=FMT)
    want = reference.decode_tables(data, format=FMT)
    assert got.keys() == want.keys()
    for k in got:
        assert got[k].to_pylist() == want[k].to_pylist(), k
    return got


fields_st = st.lists(st.sampled_from(GOOD), min_size=1, max_size=6)
PROFILE = settings(max_examples=60 if os.environ.get("CI", "").lower() == "true" else 300,
                   deadline=None, derandomize=os.environ.get("CI", "").lower() == "true",
                   database=None, suppress_health_check=[HealthCheck.too_slow])


@pytest.mark.parametrize("pad", range(0, 130, 1))
def test_every_alignment_of_a_doubled_quote(pad):
    """A doubled quote, a closing quote and a field end at every offset from the record start
    (the record starts at byte 0, so block edges fall at 64 and 128)."""
    fields = [b'"' + b"a" * (pad % 67) + b'""' + b"b" * (pad // 3) + b'"', b'"x"', b""]
    got = same(record(pad % 61, fields) + b"\n")
    (t,) = got.values()
    row = t.to_pylist()[0]
    assert row["_error"] is None
    assert row["after"] == {"C1": "a" * (pad % 67) + '"' + "b" * (pad // 3), "C2": "x",
                            "C3": None}


@PROFILE
@given(st.lists(st.tuples(st.integers(0, 70), fields_st), min_size=1, max_size=4),
       st.booleans())
def test_clean_records_at_any_offset(recs, as_messages):
    width = len(recs[0][1])
    rows = [record(pad, (f * width)[:width]) for pad, f in recs]
    data = rows if as_messages else b"\n".join(rows)
    got = same(data)
    (t,) = got.values()
    assert t.num_rows == len(rows)
    assert t.column("_error").null_count == len(rows)


@PROFILE
@given(st.integers(0, 70), fields_st, st.sampled_from(BAD), st.integers(0, 6),
       st.booleans())
def test_quoting_errors_at_any_offset(pad, fields, bad, at, cut):
    """A broken field anywhere, or the message cut inside a string: the same error, at the
    same byte, from both decoders."""
    fields = list(fields)
    fields.insert(at % (len(fields) + 1), bad)
    data = record(pad, fields)
    if cut:
        data = data[:len(data) - (at % 5)]
    got = same([data, record(pad, [b'"ok"'] * len(fields))])
    errors = [r["_error"] for t in got.values() for r in t.to_pylist() if r["_error"]]
    if not cut and bad in (b'a"b', b'"ab"c', b'ab""'):    # nothing makes these well-formed
        assert errors, data


def test_both_splitters_agree():
    """The AVX2 splitter (where the CPU has it) and the portable one give the same tables:
    the portable one runs in a child process with CDCFAST_NO_AVX2=1."""
    import json
    from conftest import scalar_and_simd
    code = """
import json, sys
import cdcfast
from cdcfast.encode import generate
from cdcfast import _ibm
from cdcfast.encode import generate
sys.path.insert(0, {tests!r})
from test_ibm_split import record, GOOD, BAD
msgs, _ = generate("ibm-delimited", rows=400, table_width=9, seed=5, messages=True)
odd = [record(pad, [GOOD[(pad + i) % len(GOOD)] for i in range(5)]
              + [BAD[pad % len(BAD)]] * (pad % 2)) for pad in range(70)]
out = {{}}
for name, data in (("generated", msgs), ("odd", odd)):
    tables = cdcfast.decode_tables(data, format="ibm-delimited")
    out[name] = {{str(k): t.to_pylist() for k, t in tables.items()}}
print(_ibm.split_level())
print(json.dumps(out, default=str, sort_keys=True))
"""
    import pathlib
    here = str(pathlib.Path(__file__).parent)
    runs = {}
    for mode, stdout in scalar_and_simd(code.format(tests=here)).items():
        level, payload = stdout.split("\n", 1)
        runs[mode] = (int(level), json.loads(payload))
    assert runs["1"][0] == 1
    assert runs[""][0] in (1, 2)            # 2 where the CPU has AVX2
    assert runs[""][1] == runs["1"][1]
    assert sum(len(rows) for rows in runs["1"][1]["odd"].values()) == 70


def _careful(data: bytes) -> int:
    """Records of `data` (one message) that the splitter had to split byte by byte."""
    import numpy as np
    from cdcfast import _ibm
    sc = _ibm.Scanner(data, np.array([0, len(data)], dtype=np.int64), None, b',\n"')
    t = sc.new_table(-1, False)
    while True:
        st = sc.scan(512, 1 << 24)
        if st == 2:
            sc.add_name(*sc.pending_names(), t)
            continue
        sc.reset()
        if st == 0:
            return sc.careful


def test_clean_records_never_take_the_careful_path():
    """Only records with a quoting error (or a string cut off by the message end) are split
    byte by byte: a generated stream full of quotes, doubled quotes, delimiters and newlines
    inside strings goes entirely through the 64-byte splitter."""
    data, _ = generate("ibm-delimited", rows=3000, table_width=20, seed=3)
    assert data.count(b'""') > 100 and data.count(b'"\n') < data.count(b"\n")
    assert _careful(data) == 0
    bad = [record(pad, [b'"x"', b'a"b', b'"y"']) for pad in range(70)]
    assert _careful(b"\n".join(bad)) == 70


@pytest.mark.parametrize("step", [1, 700, 4096, 50_000])
def test_record_starts_cut_only_between_records(step):
    """The data source's cuts of big files (split_points, through the kernel's
    next_record_start) split every record as the decoder does: strings holding record
    delimiters, doubled quotes, a quoting error and blank lines never move a cut off a record
    start, so the pieces decode to the same rows."""
    import pyarrow as pa
    data, cat = generate(FMT, rows=600, seed=12, table_width=6)
    data = data + b"\n\n" + record(3, [b'"a\nb"', b'"x""y"', b'"bad"z', b"1"]) + b"\n" + data
    points = cdcfast.Decoder(FMT, catalog=cat).split_points(data, step)
    assert points[0] == 0 and points[-1] == len(data) and points == sorted(set(points))
    assert all(data[p - 1:p] == b"\n" for p in points[1:-1])
    if step == 1:
        assert len(points) > 1000                     # a cut at every record
    whole = cdcfast.decode_tables(data, format=FMT, catalog=cat)
    parts = [cdcfast.decode_tables(data[a:b], format=FMT, catalog=cat)
             for a, b in zip(points, points[1:])]
    for key, table in whole.items():
        got = pa.concat_tables([p[key] for p in parts if key in p])
        cols = ["op", "txid", "commit_pos", "after", "before", "source"]
        assert got.select(cols).equals(table.select(cols)), key


def test_next_record_start_is_the_first_cut_at_or_after_an_offset():
    """_ibm.next_record_start(data, delims, x) is the first record start at or after x of
    the records split from the start: a newline inside a string, a blank line (it starts no
    record) or a record with a quoting error never makes one; len(data) past the last."""
    from cdcfast import _ibm
    recs = [record(1, [b'"a\nb"', b"1"]), b"", b"", record(2, [b'"x""y"', b"2"]),
            record(3, [b'"bad"z', b"3"]), record(4, [b'"c,\n"', b"4"])]
    data = b"\n".join(recs) + b"\n"
    starts, pos = [], 0
    for r in recs:
        if pos and r:
            starts.append(pos)
        pos += len(r) + 1
    assert len(starts) == 3
    for x in range(1, len(data) + 1):
        want = next((s for s in starts if s >= x), len(data))
        assert _ibm.next_record_start(data, b',\n"', x) == want, x


def test_next_record_start_agrees_with_the_reference_split():
    """On a generated stream with blank lines and strings holding delimiters: the first
    record start at or after any offset is the first record of the reference's split
    (cdcfast.reference.ibm_delimited.split_message) that starts there or later."""
    import bisect
    import random
    from cdcfast import _ibm
    from cdcfast.reference.ibm_delimited import split_message
    data, _ = generate(FMT, rows=700, seed=21, table_width=6)
    data = data + b"\n\n" + record(3, [b'"a\nb"', b'"x""y"', b'"bad"z', b"1"]) + b"\n" + data
    starts = [r.start for r in split_message(data, ord(","), ord("\n"), ord('"'))]
    # (more than the 1,024 records the kernel's walk takes at a time)
    assert starts[0] == 0 and len(starts) > 1100
    rnd = random.Random(3)
    for x in [1, len(data) - 1, len(data)] + [s + d for s in starts[::37] for d in (0, 1)] \
            + [rnd.randrange(1, len(data)) for _ in range(300)]:
        i = bisect.bisect_left(starts, x)
        want = starts[i] if i < len(starts) else len(data)
        assert _ibm.next_record_start(data, b',\n"', x) == want, x
