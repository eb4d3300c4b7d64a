"""Round trip and differential: generated Debezium streams (random tables, values, options)
decode — natively and with the reference — to exactly the events the generator encoded."""
from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import cdcfast
import cdcfast.reference
from cdcfast.encode import events, generate

HEAD = ("op", "source_op", "schema", "table", "txid", "commit_ts", "change_ts", "commit_pos",
        "change_pos", "seq", "source")


def _check(rows, want, images):
    assert len(rows) == len(want)
    for got, ev in zip(rows, want):
        assert got["_error"] is None, got["_error"]
        for k in HEAD:
            assert got[k] == ev[k], (k, got[k], ev[k])
        if images:
            assert got["before"] == ev["before"]
            assert got["after"] == ev["after"]


OPTIONS = st.fixed_dictionaries({
    "schemas": st.booleans(),
    "decimal_handling": st.sampled_from(["precise", "string", "double"]),
    "time_precision": st.sampled_from(["adaptive", "adaptive_time_microseconds", "connect"]),
    "transactions": st.booleans(),
    "pretty": st.booleans(),
})


@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 10 ** 6), width=st.integers(1, 24), rows=st.integers(1, 60),
       opts=OPTIONS)
def test_generated_streams_decode_to_their_events(seed, width, rows, opts):
    data, cat = generate("debezium", rows, table_width=width, seed=seed, **opts)
    want, _ = events("debezium", rows, table_width=width, seed=seed, **opts)
    dec_opts = {k: opts[k] for k in ("decimal_handling", "time_precision")}
    for dec in (cdcfast, cdcfast.reference):
        h = dec.headers(data, format="debezium", catalog=cat, **dec_opts)
        _check(h.to_pylist(), want, images=False)
        t = dec.decode(data, format="debezium", catalog=cat, **dec_opts)
        _check(t.to_pylist(), [e for e in want if e["op"] in ("c", "u", "d", "r", "t")], True)
        if opts["schemas"]:             # the embedded schema types the table by itself
            t2 = dec.decode(data, format="debezium", **dec_opts)
            assert t2.num_rows == t.num_rows and t2.column("_error").null_count == t2.num_rows
            cat_t, emb_t = t.schema.field("after").type, t2.schema.field("after").type
            assert [f.name for f in cat_t] == [f.name for f in emb_t]
            same = [f.name for f in cat_t if emb_t.field(f.name).type == f.type]
            assert len(same) >= len(cat_t) // 2      # most types agree; compare those
            for img in ("before", "after"):
                for a, b in zip(t.column(img).to_pylist(), t2.column(img).to_pylist()):
                    assert (a is None) == (b is None)
                    if a is not None:
                        assert {k: a[k] for k in same} == {k: b[k] for k in same}


@settings(max_examples=10, deadline=None)
@given(seed=st.integers(0, 10 ** 6), rows=st.integers(1, 40), tables=st.integers(1, 3))
def test_messages_with_tombstones(seed, rows, tables):
    msgs, cat = generate("debezium", rows, seed=seed, tables=tables, messages=True,
                         tombstones=True)
    want, _ = events("debezium", rows, seed=seed, tables=tables)
    for dec in (cdcfast, cdcfast.reference):
        d = dec.Decoder("debezium", catalog=cat)
        got = d.decode_tables(msgs)
        assert d.last_stats["tombstones"] == sum(m is None for m in msgs)
        for name, t in got.items():
            _check(t.to_pylist(), [e for e in want if e["op"] in ("c", "u", "d", "r", "t")
                                   and f"{e['schema']}.{e['table']}" == name], True)


def test_native_equals_reference_on_a_larger_stream():
    data, cat = generate("debezium", 3000, seed=5)
    a = cdcfast.decode_tables(data, format="debezium", catalog=cat)
    b = cdcfast.reference.decode_tables(data, format="debezium", catalog=cat)
    assert a.keys() == b.keys()
    for k in a:
        assert a[k].equals(b[k])
