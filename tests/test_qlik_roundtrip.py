"""Round trip and differential: events encoded as Qlik Replicate messages decode — natively
and with the reference — to exactly those events; generated streams of every option decode to
the events the generator encoded."""
from __future__ import annotations

import datetime as dt
import decimal
import itertools

import pyarrow as pa
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import cdcfast
import cdcfast.reference
from cdcfast import Catalog
from cdcfast.encode import encode, events, generate
from cdcfast.encode.qlik import mask_text
from cdcfast.reference._jsondoc import same

HEAD = ("op", "source_op", "schema", "table", "txid", "commit_ts", "change_ts", "commit_pos",
        "change_pos", "seq", "source")
UTC = dt.timezone.utc

CATALOG = Catalog.from_dict({"tables": [{"schema": "APP", "table": "ALL_KINDS", "key": ["ID"],
                                         "columns": [
    {"name": "ID", "type": "INTEGER"}, {"name": "NAME", "type": "VARCHAR(30)"},
    {"name": "AMOUNT", "type": "DECIMAL(12,3)"}, {"name": "RATE", "type": "DOUBLE"},
    {"name": "WEIGHT", "type": "REAL"}, {"name": "FLAG", "type": "BOOLEAN"},
    {"name": "RAW", "type": "VARBINARY(8)"}, {"name": "DAY", "type": "DATE"},
    {"name": "CLOCK", "type": "TIME(6)"}, {"name": "STAMP", "type": "TIMESTAMP(6)"},
    {"name": "ZONED", "type": "TIMESTAMP WITH TIME ZONE"}, {"name": "DOC", "type": "CLOB"},
    {"name": "TINY", "type": "TINYINT"}, {"name": "EXACT", "type": "DECFLOAT"}]}]})
TABLE = CATALOG.tables[0]
COLS = [(c, None) for c in TABLE.columns]

VALUES = {
    "ID": st.integers(-2 ** 31, 2 ** 31 - 1),
    "NAME": st.text(max_size=30),
    "AMOUNT": st.integers(-10 ** 12 + 1, 10 ** 12 - 1).map(lambda u: decimal.Decimal(u) / 1000),
    "RATE": st.floats(allow_nan=False),
    "WEIGHT": st.floats(allow_nan=False, width=32),
    "FLAG": st.booleans(),
    "RAW": st.binary(max_size=8),
    "DAY": st.dates(dt.date(1, 1, 1), dt.date(9999, 12, 31)),
    "CLOCK": st.times(),
    "STAMP": st.datetimes(dt.datetime(1000, 1, 1), dt.datetime(9999, 12, 31)),
    "ZONED": st.datetimes(dt.datetime(1900, 1, 1), dt.datetime(2200, 1, 1),
                          timezones=st.just(UTC)),
    "DOC": st.text(max_size=200),
    "TINY": st.integers(-128, 127),
    "EXACT": st.from_regex(r"-?(0|[1-9][0-9]{0,30})(\.[0-9]{1,20})?([eE][+-]?[0-9]{1,3})?",
                           fullmatch=True),
}


def image(draw, present):
    """A row image: values where present (sometimes null), None elsewhere."""
    return {name: (draw(st.none() | strat) if present[name] else None)
            for name, strat in VALUES.items()}


@st.composite
def change_events(draw, masks: bool):
    out = []
    for i in range(draw(st.integers(1, 6))):
        op = draw(st.sampled_from("cudr"))
        present = {c.name: draw(st.booleans()) if masks else draw(st.booleans() | st.just(True))
                   for c in TABLE.columns}
        before = image(draw, present) if op in "ud" else None
        after = image(draw, present) if op in "cur" else None
        if masks:                       # sent as the mask says (LOBs never)
            changed = {c.name: None if c.type.is_lob else draw(st.booleans())
                       for c in TABLE.columns}
        elif op in "cr":
            changed = dict.fromkeys(present, True)
        elif op == "d":
            changed = dict.fromkeys(present, False)
        else:
            changed = {c.name: not same(before[c.name], after[c.name], c.type.kind)
                       for c in TABLE.columns}
        cdc = op != "r"
        stamp = draw(st.none() | st.datetimes(dt.datetime(1971, 1, 1), dt.datetime(2100, 1, 1),
                                              timezones=st.just(UTC))) if cdc else None
        pos = draw(st.none() | st.from_regex(r"[0-9]{35}", fullmatch=True)) if cdc else None
        out.append({
            "op": op, "source_op": {"c": "INSERT", "u": "UPDATE", "d": "DELETE",
                                    "r": "REFRESH"}[op],
            "schema": "APP", "table": "ALL_KINDS",
            "txid": draw(st.none() | st.text(min_size=1, max_size=32)) if cdc else None,
            "commit_ts": stamp, "change_ts": stamp,
            "commit_pos": pos and pos.encode(), "change_pos": pos and pos.encode(),
            "seq": draw(st.integers(0, 2 ** 63 - 1)) if cdc else i,
            "before": before, "after": after, "changed": changed, "present": present,
            "source": {"change_sequence": pos,
                       "stream_position": draw(st.none() | st.text(min_size=1, max_size=20)),
                       "change_mask": mask_text(changed, COLS) if masks else None,
                       "column_mask": mask_text(present, COLS) if masks else None,
                       "transaction_last_event": draw(st.none() | st.booleans()),
                       "operation": {"c": "INSERT", "u": "UPDATE", "d": "DELETE",
                                     "r": "REFRESH"}[op]}})
    return out


def _check(rows, want, images=True):
    assert len(rows) == len(want)
    for got, ev in zip(rows, want):
        assert got["_error"] is None, got["_error"]
        for k in HEAD:
            assert got[k] == ev[k], (k, got[k], ev[k])
        if images:
            for k in ("before", "after", "changed", "present"):
                assert got[k] == ev[k], (k, got[k], ev[k])


@settings(max_examples=40, deadline=None)
@given(data=st.data(), masks=st.booleans(), form=st.sampled_from(["kafka", "pubsub"]),
       md=st.booleans(), all_strings=st.booleans(), pretty=st.booleans())
def test_encoded_events_decode_to_themselves(data, masks, form, md, all_strings, pretty):
    evs = data.draw(change_events(masks))
    stream = encode(evs, "qlik", catalog=CATALOG, form=form, md=md, all_strings=all_strings,
                    pretty=pretty, masks=masks)
    for dec in (cdcfast, cdcfast.reference):
        t = dec.decode(stream, format="qlik", catalog=CATALOG, table="APP.ALL_KINDS")
        _check(t.to_pylist(), evs)
        h = dec.headers(stream, format="qlik", table="APP.ALL_KINDS")
        _check(h.to_pylist(), evs, images=False)


OPTIONS = st.fixed_dictionaries({
    "form": st.sampled_from(["kafka", "pubsub"]), "md": st.booleans(),
    "all_strings": st.booleans(), "pretty": st.booleans(), "masks": st.booleans()})


@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 10 ** 6), width=st.integers(1, 45), rows=st.integers(1, 80),
       opts=OPTIONS)
def test_generated_streams_decode_to_their_events(seed, width, rows, opts):
    data, cat = generate("qlik", rows, table_width=width, seed=seed, **opts)
    want, _ = events("qlik", rows, table_width=width, seed=seed, **opts)
    for dec in (cdcfast, cdcfast.reference):
        _check(dec.decode(data, format="qlik", catalog=cat, table="GEN.TABLE_1").to_pylist(),
               want)
        if opts["md"]:                  # the metadata messages type the table by themselves
            alone = dec.decode(data, format="qlik")
            _check(alone.to_pylist(), want)


# every value of every option, each (form, md, masks) combination once; all_strings and pretty
# alternate over them, and so does the number of tables where the form names them
CASES = [(form, md, masks, i % 2 == 0, i % 3 == 0,
          1 if form == "kafka" and not md else 1 + 2 * (i % 2))
         for i, (form, md, masks) in enumerate(itertools.product(["kafka", "pubsub"],
                                                                  [True, False], [True, False]))]


@pytest.mark.parametrize("form,md,masks,all_strings,pretty,tables", CASES)
def test_native_equals_reference(form, md, masks, all_strings, pretty, tables):
    """cdcfast.decode against cdcfast.reference.decode on generated data of every option, as
    a stream and as messages (a pyarrow array), with the catalog and without."""
    opts = dict(form=form, md=md, all_strings=all_strings, pretty=pretty, masks=masks)
    data, cat = generate("qlik", 300, table_width=20, tables=tables, seed=11, **opts)
    msgs, _ = generate("qlik", 300, table_width=20, tables=tables, seed=11, messages=True,
                       **opts)
    for source in (data, pa.array(msgs, pa.binary())):
        for catalog in (cat, None):
            if tables == 1:
                a = cdcfast.decode(source, format="qlik", catalog=catalog, table="GEN.TABLE_1")
                b = cdcfast.reference.decode(source, format="qlik", catalog=catalog,
                                             table="GEN.TABLE_1")
                assert a.equals(b) and a.num_rows == 300
            else:
                a = cdcfast.decode_tables(source, format="qlik", catalog=catalog)
                b = cdcfast.reference.decode_tables(source, format="qlik", catalog=catalog)
                assert a.keys() == b.keys() and all(a[k].equals(b[k]) for k in a)
                assert sum(t.num_rows for t in a.values()) == 300
        assert cdcfast.headers(source, format="qlik", catalog=cat).equals(
            cdcfast.reference.headers(source, format="qlik", catalog=cat))


def test_generated_stream_looks_like_replicate():
    want, cat = events("qlik", 400, table_width=16, seed=3)
    assert [c.name for c in cat.tables[0].columns][:2] == ["ID", "ITEM_NO"]
    assert len(cat.tables[0].columns) == 16
    ops = [e["op"] for e in want]
    assert ops[0] == "r" and {"c", "u", "d", "r"} <= set(ops)
    cdc = [e for e in want if e["op"] != "r"]
    assert all(len(e["source"]["change_sequence"]) == 35 for e in cdc)
    assert all(len(e["txid"]) == 32 for e in cdc)
    seqs = [e["source"]["change_sequence"] for e in cdc]
    assert seqs == sorted(seqs)                                    # change order
    assert {e["source"]["column_mask"] for e in cdc} >= {"00FFFF"}
    assert all(len(e["source"]["change_mask"]) == 6 for e in cdc)
    assert any(e["source"]["transaction_last_event"] for e in cdc)
    ups = [e for e in cdc if e["op"] == "u"]
    assert all(e["before"] is not None for e in ups)
    data, _ = generate("qlik", 400, table_width=16, seed=3)
    assert data.count(b'"type":"MD"') == 1 and data.count(b'"type":"DT"') == 400
