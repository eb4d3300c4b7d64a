"""Round trip and differential: events written by the `olr` encoder in every writer variant
decode — natively and with the reference — to exactly those events; and the native decoder
gives what the reference gives on generated streams, the peer files and broken input."""
from __future__ import annotations

import datetime as dt
import decimal
import struct

import pyarrow as pa
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import cdcfast
import cdcfast.reference
from cdcfast import Catalog
from cdcfast.encode import encode, events, generate
from cdcfast.encode.olr import number_text, xid_text
from conftest import shared_path

DECODERS = (cdcfast, cdcfast.reference)
HEAD = ("op", "source_op", "schema", "table", "txid", "commit_ts", "change_ts", "commit_pos",
        "change_pos", "seq", "source")
IMAGES = ("before", "after", "changed", "present")
UTC = dt.timezone.utc


def _check(got, want, images):
    assert len(got) == len(want)
    for g, e in zip(got, want):
        assert g["_error"] is None, g["_error"]
        for k in HEAD + (IMAGES if images else ()):
            assert g[k] == e[k], (k, g[k], e[k])


WRITER = st.fixed_dictionaries({
    "scn": st.sampled_from(["scn", "scns"]),
    "tm": st.sampled_from(["tm", "tms", "iso", "zone"]),
    "xid": st.sampled_from(["hex", "dec", "xidn"]),
    "images": st.sampled_from(["object", "array"]),
    "columns": st.booleans(),
    "compact": st.booleans(),
    "first_only": st.booleans(),
    "epoch_unit": st.sampled_from(["s", "ms", "us", "ns"]),
    "full": st.booleans(),
})


@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 10 ** 6), width=st.integers(1, 26), rows=st.integers(1, 50),
       tables=st.integers(1, 2), checkpoints=st.booleans(), opts=WRITER)
def test_generated_streams_decode_to_their_events(seed, width, rows, tables, checkpoints,
                                                  opts):
    kw = dict(table_width=width, tables=tables, seed=seed, checkpoints=checkpoints, **opts)
    data, cat = generate("olr", rows, **kw)
    want, _ = events("olr", rows, **kw)
    unit = opts["epoch_unit"]       # "auto" misreads sub-second epochs near 1970 (SPEC §5.4)
    for dec in DECODERS:
        _check(dec.headers(data, format="olr", catalog=cat, epoch_unit=unit).to_pylist(),
               want, images=False)
        got = dec.decode_tables(data, format="olr", catalog=cat, epoch_unit=unit)
        for name, t in got.items():
            _check(t.to_pylist(), [e for e in want if e["op"] in ("c", "u", "d")
                                   and f"{e['schema']}.{e['table']}" == name], True)
        if opts["columns"]:         # schema.columns type the tables as the catalog does
            bare = dec.decode_tables(data, format="olr", epoch_unit=unit)
            assert bare.keys() == got.keys()
            for name in got:
                assert bare[name].equals(got[name])


@settings(max_examples=8, deadline=None)
@given(seed=st.integers(0, 10 ** 6), rows=st.integers(1, 40))
def test_messages_as_a_list_carry_forward_within_the_call(seed, rows):
    msgs, cat = generate("olr", rows, seed=seed, messages=True)
    want, _ = events("olr", rows, seed=seed)
    assert all(b"\n" not in m for m in msgs) and len(msgs) == len(want)
    for dec in DECODERS:
        _check(dec.headers(msgs, format="olr", catalog=cat).to_pylist(), want, images=False)


# -- encode(): any values of every type ----------------------------------------------------

CAT = Catalog.from_dict({"tables": [{"schema": "S", "table": "T", "key": ["ID"], "columns": [
    {"name": "ID", "type": "NUMBER(10)", "nullable": False},
    {"name": "AMOUNT", "type": "NUMBER(12,3)"}, {"name": "N", "type": "NUMBER"},
    {"name": "TEXT", "type": "VARCHAR2(50)"}, {"name": "C", "type": "CHAR(4)"},
    {"name": "D", "type": "DATE"}, {"name": "TS", "type": "TIMESTAMP(6)"},
    {"name": "TZ", "type": "TIMESTAMP WITH TIME ZONE"}, {"name": "R", "type": "RAW(16)"},
    {"name": "F", "type": "BINARY_FLOAT"}, {"name": "DBL", "type": "BINARY_DOUBLE"},
    {"name": "B", "type": "BOOLEAN"}]}]})
NAMES = [c.name for c in CAT.tables[0].columns]
FLOATS = {"F", "DBL"}

_text = st.text(st.characters(blacklist_categories=("Cs",)), max_size=12)
_moment = st.datetimes(dt.datetime(1900, 1, 1), dt.datetime(2100, 1, 1))
VALUES = {
    "AMOUNT": st.decimals(min_value=-10 ** 9 + 1, max_value=10 ** 9 - 1, places=3),
    "N": st.decimals(allow_nan=False, allow_infinity=False).map(number_text),
    "TEXT": _text, "C": _text,
    "D": _moment.map(lambda t: t.replace(microsecond=0)), "TS": _moment,
    "TZ": _moment.map(lambda t: t.replace(tzinfo=UTC)), "R": st.binary(max_size=16),
    "F": st.floats(width=32, allow_nan=False, allow_infinity=False),
    "DBL": st.floats(allow_nan=False, allow_infinity=False), "B": st.booleans(),
}
ROW = st.fixed_dictionaries({k: st.none() | v for k, v in VALUES.items()})


def _same(a, b, name):
    if a is None or b is None:
        return a is None and b is None
    if name in FLOATS:
        return struct.pack("<d", a) == struct.pack("<d", b)
    return a == b


def _expected(op, before, after, compact):
    """before/after/changed/present as decoded from what the writer sends."""
    if op == "c":
        return {"before": None, "after": after, "changed": dict.fromkeys(NAMES, True),
                "present": dict.fromkeys(NAMES, True)}
    if op == "d":
        return {"before": before, "after": None, "changed": dict.fromkeys(NAMES, False),
                "present": dict.fromkeys(NAMES, True)}
    differs = {n: not _same(before[n], after[n], n) for n in NAMES}
    sent = {n: n == "ID" or differs[n] for n in NAMES} if compact else dict.fromkeys(NAMES, True)
    return {"before": {n: before[n] if sent[n] else None for n in NAMES},
            "after": {n: after[n] if sent[n] else None for n in NAMES},
            "changed": differs, "present": sent}


@st.composite
def changes(draw):
    n = draw(st.integers(1, 6))
    out = []
    for i in range(n):
        op = draw(st.sampled_from(["c", "u", "d"]))
        rows = [dict(draw(ROW), ID=decimal.Decimal(i)) for _ in range(2)]
        out.append((op, rows[0], rows[1]))
    return out


@settings(max_examples=30, deadline=None)
@given(chg=changes(), opts=WRITER.filter(lambda o: o["epoch_unit"] in ("us", "ns")
                                          or o["tm"] == "iso"),
       scn=st.integers(0, 2 ** 63 - 1), xid=st.tuples(st.integers(0, 0xFFFF),
                                                      st.integers(0, 0xFFFF),
                                                      st.integers(0, 0xFFFFFFFF)),
       when=st.datetimes(dt.datetime(1971, 1, 1), dt.datetime(2100, 1, 1)))
def test_any_values_round_trip(chg, opts, scn, xid, when):
    """Values of every type at their extremes (38-digit NUMBER text, float32 limits,
    timestamps to the µs before and after 1970, any text) come back exactly."""
    txid = "0x%04x.%03x.%08x" % xid
    ts = when.replace(tzinfo=UTC)
    sent = xid_text(txid, opts["xid"])
    head = {"txid": txid, "commit_ts": ts, "change_ts": ts, "schema": "S", "table": "T"}
    evs, want = [], []
    for k, (op, before, after) in enumerate(chg):
        c_idx = k + 1
        source = dict.fromkeys(("db", "scn", "c_scn", "c_idx", "obj", "num", "xid", "rid", "ddl",
                                "checkpoint_seq", "checkpoint_offset", "checkpoint_redo"))
        source.update(scn=scn, c_scn=scn, c_idx=c_idx, xid=str(sent),
                      obj=9 if opts["columns"] else None)
        ev = {**head, "op": op, "source_op": op, "before": before if op != "c" else None,
              "after": after if op != "d" else None, "source": source}
        evs.append(ev)
        pos = scn.to_bytes(8, "big")
        index = k if opts["full"] else 0
        c_pos = c_idx if not opts["full"] else 1
        want.append({**ev, "source": dict(source, c_idx=c_pos), "commit_pos": pos, "seq": k,
                     "change_pos": pos + c_pos.to_bytes(8, "big") + index.to_bytes(4, "big"),
                     **_expected(op, before, after, opts["compact"])})
    data = encode(evs, "olr", catalog=CAT, **opts)
    unit = opts["epoch_unit"] if opts["tm"] != "iso" else "auto"
    for dec in DECODERS:
        t = dec.decode(data, format="olr", catalog=CAT, epoch_unit=unit)
        _check(t.to_pylist(), want, images=True)


def test_encode_checks_its_options_and_values():
    ev = {"op": "c", "schema": "S", "table": "T", "txid": "1.2.3", "after": {"ID": 1}}
    with pytest.raises(ValueError, match="tm must be one of tm, tms, iso, zone"):
        encode([ev], "olr", catalog=CAT, tm="epoch")
    with pytest.raises(ValueError, match="after.DBL: cannot write nan"):
        encode([dict(ev, after={"ID": 1, "DBL": float("nan")})], "olr", catalog=CAT)
    with pytest.raises(ValueError, match="columns the table lacks"):
        encode([dict(ev, after={"ID": 1, "X": 1})], "olr", catalog=CAT)
    with pytest.raises(ValueError, match="not a transaction id"):
        encode([dict(ev, txid="x")], "olr", catalog=CAT)
    # without a catalog, types come from the Python values
    (r,) = cdcfast.decode(encode([dict(ev, after={"ID": 1, "W": "x"})], "olr"),
                          format="olr").to_pylist()
    assert r["after"] == {"ID": "1", "W": "x"} and r["txid"] == "0x0001.002.00000003"


# -- differential: native against the reference -------------------------------------------

def _same_results(data, **kw):
    for call in ("decode_tables", "headers"):
        a = getattr(cdcfast.Decoder("olr", **kw), call)(data)
        b = getattr(cdcfast.reference.Decoder("olr", **kw), call)(data)
        if isinstance(a, pa.Table):
            a, b = {"*": a}, {"*": b}
        assert a.keys() == b.keys()
        for k in a:
            assert a[k].equals(b[k]), (call, k)
    da, db = cdcfast.Decoder("olr", **kw), cdcfast.reference.Decoder("olr", **kw)
    da.decode_tables(data)
    db.decode_tables(data)
    assert da.last_stats == db.last_stats


@pytest.mark.parametrize("opts", [
    {}, {"scn": "scn", "tm": "tm", "xid": "hex", "epoch_unit": "ms"},
    {"tm": "iso", "xid": "xidn", "images": "array", "full": True},
    {"tm": "zone", "columns": True, "compact": False, "first_only": False, "epoch_unit": "us"},
    {"checkpoints": True, "tables": 3},
])
def test_native_equals_reference_on_generated_streams(opts):
    data, cat = generate("olr", 1500, table_width=20, seed=11, **opts)
    _same_results(data, catalog=cat)
    _same_results(data)                 # schema.columns, or the JSON kinds


def test_native_equals_reference_on_the_peer_files():
    files = sorted(shared_path("peer-data", "olr").glob("*/output.json"))
    assert files
    for f in files:
        _same_results(f.read_bytes())


def test_native_equals_reference_on_broken_input():
    data, cat = generate("olr", 200, table_width=8, seed=2)
    lines = data.split(b"\n")
    broken = []
    for i, line in enumerate(lines):
        if i % 7 == 3:
            line = line[: len(line) // 2]                  # truncated
        elif i % 11 == 5:
            line = line.replace(b'"c_idx":', b'"c_idx":-')  # negative
        elif i % 13 == 6:
            line = line.replace(b'"op":"', b'"op":"x')      # unknown op
        elif i % 17 == 2:
            line = line.replace(b'"ID":', b'"ID":"a', 1)    # bad value
        broken.append(line)
    stream = b"\n".join(broken)
    for mode in ("PERMISSIVE", "DROPMALFORMED"):
        _same_results(stream, catalog=cat, mode=mode)
        _same_results(stream, mode=mode)
