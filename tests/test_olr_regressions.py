"""Hand-written regressions of `olr` (native against reference, and the values expected).

Spellings of one table merged by decode(table=X) (issue 20, item 3). Without a catalog entry,
decode(table="A.T") takes every name matching "A.T" case-insensitively as that table, so the
records of `a.t` and `A.T` share one output. The reference typed each spelling with its own
layout, yet built the output with the layout of the spelling X names, so a JSON-kinds text
(`"1"`) reached a decimal128 builder: `ArrowTypeError('int or Decimal object expected, got
str')` (or a column of the other spelling's layout was silently dropped). The fuzzing found it
(test_olr_fuzz.py::test_mutated_streams_native_equals_reference[4], seed 4002, without
../shared: `olr_test.table_1` with no `schema.columns` before `OLR_TEST.TABLE_1` with them).
Now the merged spellings are one table, as ibm-delimited and qlik read them, whose first data
event fixes the layout (docs/olr.md, "Columns and their types"). The debezium twin had the
same flaw (its embedded schema per spelling); its case is here too.
"""
from __future__ import annotations

import decimal
import json

import pyarrow as pa
import pytest

import cdcfast
import cdcfast.reference
from jsonfuzz import compare

# a.t without schema.columns (JSON kinds), A.T with them (X is NUMBER(5,0))
KINDS = b'{"payload":[{"op":"c","schema":{"owner":"a","table":"t"},"after":{"X":1}}]}'
BAD = b'{"payload":[{"op":"c","schema":{"owner":"a","table":"t"},"after":{"X":"abc"}}]}'
TYPED = (b'{"payload":[{"op":"c","schema":{"owner":"A","table":"T","columns":[{"name":"X",'
         b'"type":"number","precision":5}]},"after":{"X":2}}]}')
OTHER = b'{"payload":[{"op":"c","schema":{"owner":"A","table":"T"},"after":{"Y":2}}]}'


def both(fmt, source, table, **kw):
    """decode(table=…) by the native and the reference decoder: equal, and the one result."""
    a = cdcfast.decode(source, format=fmt, table=table, **kw)
    b = cdcfast.reference.decode(source, format=fmt, table=table, **kw)
    assert a.schema == b.schema
    assert a.equals(b), (a.to_pylist(), b.to_pylist())
    return a


def rows(t):
    return [(r["table"], r["after"], r["_error"]) for r in t.to_pylist()]


def test_kinds_spelling_first_types_the_merged_table():
    """The fuzz failure, minimised: a.t's JSON kinds fix the layout, A.T's `schema.columns`
    come too late (the reference raised ArrowTypeError)."""
    t = both("olr", [KINDS, TYPED], "A.T")
    assert t.schema.field("after").type == pa.struct([("X", pa.string())])
    assert rows(t) == [("t", {"X": "1"}, None), ("T", {"X": "2"}, None)]


def test_typed_spelling_first_types_the_merged_table():
    """A.T's columns fix the layout; a.t's values are read as NUMBER(5,0), a bad one is an
    error on its row (the reference raised ArrowTypeError)."""
    t = both("olr", [TYPED, KINDS, BAD], "A.T")
    assert t.schema.field("after").type == pa.struct([("X", pa.decimal128(5, 0))])
    assert rows(t) == [
        ("T", {"X": decimal.Decimal(2)}, None), ("t", {"X": decimal.Decimal(1)}, None),
        ("t", {"X": None}, "after.X: '\"abc\"' is not NUMBER(5,0) (message 2, byte 70)")]
    for m in (cdcfast, cdcfast.reference):
        d = m.Decoder("olr")
        d.decode([TYPED, KINDS], table="A.T")
        assert d.last_stats["unknown_tables"] == 0      # a.t is typed by A.T's columns
        with pytest.raises(cdcfast.DecodeError) as e:
            m.decode([TYPED, BAD], format="olr", table="A.T", mode="FAILFAST")
        assert (str(e.value), e.value.message_index, e.value.byte_offset, e.value.field) == (
            "after.X: '\"abc\"' is not NUMBER(5,0) (message 1, byte 70)", 1, 70, "after.X")


@pytest.mark.parametrize("order", ["kinds_first", "other_first"])
def test_json_kinds_of_every_spelling(order):
    """Two JSON-kinds spellings: one table whose columns are the keys of both (the reference
    dropped the other spelling's column X)."""
    src = [KINDS, OTHER] if order == "kinds_first" else [OTHER, KINDS]
    t = both("olr", src, "A.T")
    names = ["X", "Y"] if order == "kinds_first" else ["Y", "X"]
    assert t.schema.field("after").type == pa.struct([(n, pa.string()) for n in names])
    got = {r[0]: r[1] for r in rows(t)}
    assert got == {"t": dict.fromkeys(names) | {"X": "1"}, "T": dict.fromkeys(names) | {"Y": "2"}}


def test_decode_tables_keeps_spellings_apart():
    a = cdcfast.decode_tables([KINDS, TYPED], format="olr")
    b = cdcfast.reference.decode_tables([KINDS, TYPED], format="olr")
    assert a.keys() == b.keys() == {"a.t", "A.T"}
    for k in a:
        assert a[k].equals(b[k])
    assert a["a.t"].schema.field("after").type == pa.struct([("X", pa.string())])
    assert a["A.T"].schema.field("after").type == pa.struct([("X", pa.decimal128(5, 0))])


@pytest.mark.parametrize("source", [
    [KINDS, TYPED], [TYPED, KINDS, BAD], [KINDS, OTHER, TYPED], [OTHER, BAD, TYPED],
    pa.chunked_array([pa.array([TYPED]), pa.array([BAD, KINDS])]),
    pa.chunked_array([pa.array([KINDS]), pa.array([TYPED, OTHER])]),
    b"\n".join([TYPED, OTHER, BAD, KINDS]),
], ids=range(7))
@pytest.mark.parametrize("table", ["A.T", "a.t", "a.T"])
def test_merged_spellings_every_mode(source, table):
    """Every mode, decode_tables, headers and read_batches (batches of 1 and 3)."""
    for bs in (1, 3):
        diffs = compare("olr", source, None, {}, table, batch_size=bs)
        assert not diffs, "\n".join(diffs)


# -- the debezium twin ------------------------------------------------------------------------

def dbz(owner, table, ftype, value):
    f = [{"type": ftype, "optional": True, "field": "X"}]
    return json.dumps({"schema": {"type": "struct", "fields": [
        {"type": "struct", "fields": f, "optional": True, "field": "before"},
        {"type": "struct", "fields": f, "optional": True, "field": "after"},
        {"type": "struct", "field": "source", "fields": [
            {"type": "string", "field": "schema"}, {"type": "string", "field": "table"}]},
        {"type": "string", "field": "op"}]},
        "payload": {"before": None, "after": {"X": value}, "op": "c",
                    "source": {"schema": owner, "table": table}}}).encode()


@pytest.mark.parametrize("order", ["text_first", "int_first"])
def test_debezium_merged_spellings(order):
    """a.t's schema says string, A.T's int32: the first change event of either spelling types
    decode(table="A.T") (the reference raised ArrowInvalid)."""
    text, num = dbz("a", "t", "string", "1"), dbz("A", "T", "int32", 2)
    src = [text, num] if order == "text_first" else [num, text]
    t = both("debezium", src, "A.T")
    if order == "text_first":
        assert t.schema.field("after").type == pa.struct([("X", pa.string())])
        assert rows(t) == [("t", {"X": "1"}, None), ("T", {"X": "2"}, None)]
    else:
        assert t.schema.field("after").type == pa.struct([("X", pa.int32())])
        assert rows(t) == [("T", {"X": 2}, None), ("t", {"X": 1}, None)]
    for bs in (1, 3):
        diffs = compare("debezium", src, None, {}, "A.T", batch_size=bs)
        assert not diffs, "\n".join(diffs)
