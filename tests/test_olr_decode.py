"""`olr` decoded from the seed's examples and hand-made messages in every writer variant, with
the native decoder and the reference alike: exact values, positions, carry-forward, compact
images, error texts and byte offsets, modes and statistics (docs/olr.md)."""
from __future__ import annotations

import datetime as dt
import decimal
import json

import pyarrow as pa
import pytest

import cdcfast
import cdcfast.reference
from cdcfast import Catalog, DecodeError
from cdcfast.formats.base import ALL, MESSAGE, Want, grown_table, new_stats
from cdcfast.sources import parts

UTC = dt.timezone.utc
DECODERS = [pytest.param(cdcfast, id="native"), pytest.param(cdcfast.reference, id="reference")]
D = decimal.Decimal

CAT = Catalog.from_dict({"tables": [{"schema": "OLR_TEST", "table": "T", "key": ["ID"],
                                     "columns": [
    {"name": "ID", "type": "NUMBER(10)", "nullable": False},
    {"name": "NAME", "type": "VARCHAR2(20)"},
    {"name": "AMOUNT", "type": "NUMBER(9,2)"},
    {"name": "N", "type": "NUMBER"},
    {"name": "C", "type": "CHAR(6)"},
    {"name": "D", "type": "DATE"},
    {"name": "TS", "type": "TIMESTAMP(6)"},
    {"name": "TZ", "type": "TIMESTAMP WITH TIME ZONE"},
    {"name": "R", "type": "RAW(8)"},
    {"name": "F", "type": "BINARY_FLOAT"},
    {"name": "DBL", "type": "BINARY_DOUBLE"},
    {"name": "B", "type": "BOOLEAN"}]}]})
COLS = [c.name for c in CAT.tables[0].columns]


def doc(**fields) -> str:
    """One message as the writer prints it: compact JSON, keys in the order given."""
    return json.dumps(fields, separators=(",", ":"), ensure_ascii=False)


def el(op="c", table="T", owner="OLR_TEST", **fields) -> dict:
    e = {"op": op}
    if table is not None:
        e["schema"] = {"owner": owner, "table": table} if owner else {"table": table}
    e.update(fields)
    return e


def at(utc_seconds, us=0) -> dt.datetime:
    return dt.datetime(1970, 1, 1, tzinfo=UTC) + dt.timedelta(seconds=utc_seconds,
                                                              microseconds=us)


def wall(*args) -> dt.datetime:
    return dt.datetime(*args)


def rows(dec, data, **kw):
    return dec.decode(data, format="olr", catalog=kw.pop("catalog", CAT), **kw).to_pylist()


# -- the seed's examples ------------------------------------------------------------------

@pytest.mark.parametrize("dec", DECODERS)
def test_seed_message_fields_and_array_images(dec):
    """The seed's field examples (`scns` "0x0000008a33ac2263", `xid` "0x0009.003.0000568e")
    in one message whose after image is an array of one-column objects, as the seed draws
    them."""
    m = doc(scns="0x0000008a33ac2263", tm=1749983400, xid="0x0009.003.0000568e",
            db="ORCLPDB", payload=[el(
                schema={"owner": "OLR_TEST", "table": "T", "obj": 87234},
                rid="AAAVS+AAMAAAACGAAA", num=7,
                after=[{"ID": 1}, {"NAME": "Alice"}, {"AMOUNT": 100.5}])])
    (r,) = rows(dec, m.encode())
    assert r["_error"] is None
    assert (r["op"], r["source_op"], r["schema"], r["table"]) == ("c", "c", "OLR_TEST", "T")
    assert r["txid"] == "0x0009.003.0000568e"
    assert r["commit_ts"] == r["change_ts"] == at(1749983400)
    assert r["commit_pos"] == (0x8a33ac2263).to_bytes(8, "big")
    assert r["change_pos"] == (0x8a33ac2263).to_bytes(8, "big") + bytes(12)
    assert r["after"] == dict(dict.fromkeys(COLS), ID=1, NAME="Alice", AMOUNT=D("100.50"))
    assert r["present"] == dict.fromkeys(COLS, True)
    assert r["changed"] == dict.fromkeys(COLS, True)
    assert r["source"] == {
        "db": "ORCLPDB", "scn": 0x8a33ac2263, "c_scn": None, "c_idx": None, "obj": 87234,
        "num": 7, "xid": "0x0009.003.0000568e", "rid": "AAAVS+AAMAAAACGAAA", "ddl": None,
        "checkpoint_seq": None, "checkpoint_offset": None, "checkpoint_redo": None}


@pytest.mark.parametrize("dec", DECODERS)
@pytest.mark.parametrize("field,value,txid", [
    ("xid", "0x0009.003.0000568e", "0x0009.003.0000568e"),     # the seed's hex example
    ("xid", "9.3.22158", "0x0009.003.0000568e"),               # the seed's decimal example
    ("xid", "0x9.3.568E", "0x0009.003.0000568e"),              # short groups, upper case
    ("xidn", 22158, "0x0000.000.0000568e"),       # the seed's xidn example: the sqn part only
    ("xidn", 9 << 48 | 3 << 32 | 22158, "0x0009.003.0000568e"),   # as the writer computes it
    ("xidn", str(9 << 48 | 3 << 32 | 22158), "0x0009.003.0000568e"),
    ("xid", "65535.65535.4294967295", "0xffff.ffff.ffffffff"),
])
def test_xid_forms_are_normalized(dec, field, value, txid):
    m = doc(scn=1, **{field: value}, payload=[{"op": "begin"}])
    (r,) = dec.headers([m], format="olr").to_pylist()
    assert r["_error"] is None
    assert r["txid"] == txid
    assert r["source"]["xid"] == str(value)          # as sent (xidn: its decimal text)


@pytest.mark.parametrize("dec", DECODERS)
def test_seed_control_elements(dec):
    """begin, commit, ddl (the statement as `sql`, as the writer sends it, or `ddl`, as the
    seed says) and chkpt (seq, offset, redo 1 as the seed says, or true as the writer sends
    it): headers() only, with their own fields."""
    stream = "\n".join([
        doc(scn=100, tm=1749983400, c_scn=100, c_idx=1, xid="1.2.3", payload=[{"op": "begin"}]),
        doc(c_scn=100, c_idx=2, xid="1.2.3", payload=[
            {"op": "ddl", "sql": "ALTER TABLE T ADD (EMAIL VARCHAR2(200))"}]),
        doc(c_scn=100, c_idx=3, xid="1.2.3", payload=[
            el("ddl", ddl="TRUNCATE TABLE T")]),
        doc(c_scn=100, c_idx=4, xid="1.2.3", payload=[{"op": "commit"}]),
        doc(scn=101, tm=1749983401, payload=[{"op": "chkpt", "seq": 1187, "offset": 4096,
                                              "redo": 1}]),
        doc(scn=102, tm=1749983402, payload=[{"op": "chkpt", "seq": 1188, "offset": 0,
                                              "redo": True}]),
        doc(scns="0x67", tms="1749983403", payload=[{"op": "chkpt", "seq": 1188,
                                                     "offset": 512}]),
    ]).encode()
    h = dec.headers(stream, format="olr").to_pylist()
    assert [r["op"] for r in h] == ["begin", "ddl", "ddl", "commit"] + ["checkpoint"] * 3
    assert [r["source_op"] for r in h] == ["begin", "ddl", "ddl", "commit"] + ["chkpt"] * 3
    assert [r["seq"] for r in h] == list(range(7))
    assert all(r["_error"] is None for r in h)
    assert h[1]["source"]["ddl"] == "ALTER TABLE T ADD (EMAIL VARCHAR2(200))"
    assert (h[1]["schema"], h[1]["table"]) == (None, None)
    assert h[2]["source"]["ddl"] == "TRUNCATE TABLE T"
    assert (h[2]["schema"], h[2]["table"]) == ("OLR_TEST", "T")       # a ddl names its table
    assert [r["txid"] for r in h] == ["0x0001.002.00000003"] * 4 + [None] * 3
    assert [r["source"]["scn"] for r in h] == [100] * 4 + [101, 102, 103]
    assert [r["commit_ts"] for r in h] == [at(1749983400)] * 4 + [
        at(1749983401), at(1749983402), at(1749983403)]
    chk = [r["source"] for r in h[4:]]
    assert [(c["checkpoint_seq"], c["checkpoint_offset"], c["checkpoint_redo"])
            for c in chk] == [(1187, 4096, True), (1188, 0, True), (1188, 512, None)]
    assert h[4]["commit_pos"] == (101).to_bytes(8, "big")       # no c_scn: the scn
    assert h[4]["change_pos"] == (101).to_bytes(8, "big") + bytes(12)
    # the ddl of table T is in headers(table=...) and never in decode()
    assert [r["op"] for r in dec.headers(stream, format="olr", table="OLR_TEST.T")
            .to_pylist()] == ["ddl"]
    d = dec.Decoder("olr", catalog=CAT)
    assert d.decode(stream, table="OLR_TEST.T").num_rows == 0
    assert d.last_stats["control"] == 7 and d.last_stats["records"] == 7


# -- writer variants ----------------------------------------------------------------------

@pytest.mark.parametrize("dec", DECODERS)
@pytest.mark.parametrize("fields,unit,want", [
    ({"tm": 1749983400}, "auto", at(1749983400)),
    ({"tm": 1749983400123}, "auto", at(1749983400, 123000)),
    ({"tm": 1749983400123456}, "auto", at(1749983400, 123456)),
    ({"tm": 1749983400123456789}, "auto", at(1749983400, 123456)),      # ns floored
    ({"tm": 1749983400}, "ms", at(1749983, 400000)),
    ({"tm": -1}, "auto", at(-1)),                                       # before 1970
    ({"tm": -1999}, "ns", at(0, -2)),                                   # floored, not cut
    ({"tms": "1749983400"}, "auto", at(1749983400)),
    ({"tms": "1749983400123456789"}, "ns", at(1749983400, 123456)),
    ({"tms": "2025-06-15T10:30:00Z"}, "auto", at(1749983400)),
    ({"tms": "2025-06-15 12:30:00.123456789+02:00"}, "auto", at(1749983400, 123456)),
    ({"tms": "2025-06-15T10:30:00"}, "auto", at(1749983400)),
    ({"tms": "1749983400,Europe/Warsaw"}, "auto", at(1749983400)),
    ({"tms": "2025-06-15T10:30:00Z,+00:00"}, "auto", at(1749983400)),
    ({"tm": "1749983400"}, "auto", at(1749983400)),      # a number sent as text
    ({"tm": 1, "tms": "1749983400"}, "auto", at(1)),     # both sent: tm is read
])
def test_time_forms(dec, fields, unit, want):
    m = doc(scn=1, **fields, xid="1.2.3", payload=[{"op": "begin"}])
    (r,) = dec.headers([m], format="olr", epoch_unit=unit).to_pylist()
    assert r["_error"] is None
    assert r["commit_ts"] == r["change_ts"] == want


@pytest.mark.parametrize("dec", DECODERS)
@pytest.mark.parametrize("fields,scn", [
    ({"scn": 3762392}, 3762392),
    ({"scns": "0x00000000003968d8"}, 3762392),
    ({"scns": "0x3968D8"}, 3762392),
    ({"scn": "3762392"}, 3762392),
    ({"scns": "0x7fffffffffffffff"}, 2 ** 63 - 1),
    ({"scn": 5, "scns": "0x6"}, 5),
])
def test_scn_forms(dec, fields, scn):
    m = doc(**fields, tm=0, xid="1.2.3", payload=[{"op": "begin"}])
    (r,) = dec.headers([m], format="olr").to_pylist()
    assert r["_error"] is None
    assert r["source"]["scn"] == scn and r["commit_pos"] == scn.to_bytes(8, "big")


@pytest.mark.parametrize("dec", DECODERS)
def test_column_values_by_type(dec):
    after = {"ID": 7, "NAME": "it's \"x\"\n", "AMOUNT": -999.9, "N": "@@",
             "C": "ab    ", "D": "1749983400", "TS": "2025-06-15T10:30:00.123456",
             "TZ": "1749983400,+02:00", "R": "DEADbeef", "F": 3.14, "DBL": 1e+100, "B": 1}
    text = doc(scn=1, tm=1, xid="1.2.3", payload=[el(after=after)]).replace(
        '"@@"', "0.000000000000000000000000000000000001")
    (r,) = rows(dec, text.encode())
    assert r["_error"] is None
    a = r["after"]
    assert a["ID"] == 7 and a["NAME"] == "it's \"x\"\n"
    assert a["AMOUNT"] == D("-999.90")
    assert a["N"] == "0.000000000000000000000000000000000001"     # NUMBER: the text as sent
    assert a["C"] == "ab    "                                     # CHAR keeps its padding
    assert a["D"] == wall(2025, 6, 15, 10, 30)                    # Oracle DATE: a timestamp
    assert a["TS"] == wall(2025, 6, 15, 10, 30, 0, 123456)
    assert a["TZ"] == at(1749983400)
    assert a["R"] == bytes.fromhex("deadbeef")
    assert a["F"] == pytest.approx(3.14) and a["DBL"] == 1e100 and a["B"] is True
    t = dec.decode(text.encode(), format="olr", catalog=CAT)
    after_t = t.schema.field("after").type
    assert after_t.field("D").type == pa.timestamp("us")
    assert after_t.field("N").type == pa.string()
    assert after_t.field("AMOUNT").type == pa.decimal128(9, 2)
    assert after_t.field("F").type == pa.float32()
    assert after_t.field("TZ").type == pa.timestamp("us", tz="UTC")


def with_value(col: str, raw: str) -> str:
    """A message whose after image holds `raw` (JSON text, as sent) for `col`."""
    after = {"ID": 1}
    after[col] = "@@"
    return doc(scn=1, tm=1, xid="1.2.3", payload=[el(after=after)]).replace('"@@"', raw)


@pytest.mark.parametrize("dec", DECODERS)
@pytest.mark.parametrize("col,raw,want", [
    ("ID", '"42"', 42), ("ID", "4.2e1", 42), ("ID", "42.0", 42),
    ("AMOUNT", '"12345.67"', D("12345.67")), ("AMOUNT", "1.5e2", D("150.00")),
    ("AMOUNT", "1.230", D("1.23")), ("AMOUNT", "-0.0", D("0.00")),
    ("N", "-1E+5", "-1E+5"), ("N", '"7.50"', "7.50"),
    ("B", "0", False), ("B", "true", True), ("B", '"false"', False), ("B", '"1"', True),
    ("F", '"1.5"', 1.5), ("DBL", '"-0.0625"', -0.0625), ("DBL", "1e-320", 1e-320),
    ("NAME", "12.50", "12.50"), ("NAME", "true", "true"), ("R", '""', b""),
    ("D", '"1999-12-31 23:59:59"', wall(1999, 12, 31, 23, 59, 59)),
    ("TS", '"946684800000"', wall(2000, 1, 1)), ("TS", '"-86400"', wall(1969, 12, 31)),
    ("TS", "946684800", wall(2000, 1, 1)),
    ("TZ", '"2000-01-01T01:00:00+01:00"', at(946684800)),
])
def test_value_readings(dec, col, raw, want):
    text = with_value(col, raw)
    (r,) = rows(dec, text.encode())
    assert r["_error"] is None
    assert r["after"][col] == want


# -- compact images (SPEC §5.4) ----------------------------------------------------------

@pytest.mark.parametrize("dec", DECODERS)
def test_compact_insert_update_delete(dec):
    """OpenLogReplicator's default compact mode, as peer-data shows it: an insert leaves out
    its null columns, an update carries the changed columns and the key, a delete its
    non-null columns."""
    stream = "\n".join([
        doc(scns="0x10", tms="100", c_scn=16, c_idx=1, xid="2.3.4", payload=[
            el(after={"ID": 1, "NAME": "a", "AMOUNT": 5})]),
        doc(c_scn=16, c_idx=2, xid="2.3.4", payload=[
            el("u", before={"ID": 1, "NAME": "a", "AMOUNT": 5, "B": None},
               after={"ID": 1, "NAME": "b", "AMOUNT": 5, "B": 1})]),
        doc(c_scn=16, c_idx=3, xid="2.3.4", payload=[el("u", before={"ID": 1}, after={"ID": 1})]),
        doc(c_scn=16, c_idx=4, xid="2.3.4", payload=[el("u", before={}, after={"B": 0})]),
        doc(c_scn=16, c_idx=5, xid="2.3.4", payload=[el("d", before={"ID": 1, "NAME": "b"})]),
        doc(c_scn=16, c_idx=6, xid="2.3.4", payload=[el("u", before={"ID": 1})]),
    ]).encode()
    c, u1, u2, u3, d, u4 = rows(dec, stream)
    none = dict.fromkeys(COLS)
    assert c["after"] == dict(none, ID=1, NAME="a", AMOUNT=D("5.00"))
    assert c["present"] == dict.fromkeys(COLS, True) and c["before"] is None
    assert u1["before"] == dict(none, ID=1, NAME="a", AMOUNT=D("5.00"))
    assert u1["after"] == dict(none, ID=1, NAME="b", AMOUNT=D("5.00"), B=True)
    sent = {"ID", "NAME", "AMOUNT", "B"}
    assert u1["present"] == {k: k in sent for k in COLS}
    assert u1["changed"] == {k: k in ("NAME", "B") for k in COLS}
    # nothing changed: only the key is sent
    assert u2["present"] == {k: k == "ID" for k in COLS}
    assert u2["changed"] == dict.fromkeys(COLS, False)
    # an empty before image (peer-data boolean-type): what the after sends changed
    assert u3["before"] == none and u3["after"] == dict(none, B=False)
    assert u3["changed"] == {k: k == "B" for k in COLS}
    assert d["before"] == dict(none, ID=1, NAME="b") and d["after"] is None
    assert d["present"] == dict.fromkeys(COLS, True)
    assert d["changed"] == dict.fromkeys(COLS, False)
    # an update without an after image: present and changed unknown
    assert u4["after"] is None and u4["present"] is None and u4["changed"] is None
    assert all(r["_error"] is None for r in (c, u1, u2, u3, d, u4))


@pytest.mark.parametrize("dec", DECODERS)
def test_floats_compare_by_bits_and_nulls_safely(dec):
    m = doc(scn=1, tm=1, xid="1.2.3", payload=[
        el("u", before={"ID": 1, "DBL": 0.0, "NAME": None, "F": 1.5},
           after={"ID": 1, "DBL": -0.0, "NAME": None, "F": 1.5})])
    (r,) = rows(dec, [m])
    assert r["changed"]["DBL"] is True and r["changed"]["NAME"] is False
    assert r["changed"]["F"] is False


# -- carry-forward and positions --------------------------------------------------------------

def _txn_stream():
    return [
        doc(scns="0x64", tms="1000", c_scn=100, c_idx=1, xid="5.8.744",
            payload=[{"op": "begin"}]),
        doc(c_scn=100, c_idx=2, xid="5.8.744", payload=[el(after={"ID": 1})]),
        doc(c_scn=200, c_idx=1, xid="6.1.1", payload=[el(after={"ID": 2})]),   # never began
        doc(c_scn=100, c_idx=3, xid="0x0005.008.000002e8",                     # same xid, hex
            payload=[el(after={"ID": 3}), {"op": "commit"}]),
        doc(c_scn=100, c_idx=4, xid="5.8.744", payload=[el(after={"ID": 4})]),  # after commit
        doc(scn=300, c_scn=300, c_idx=1, xid="6.1.1", payload=[el(after={"ID": 5})]),
        doc(c_scn=300, c_idx=2, xid="6.1.1", payload=[el(after={"ID": 6})]),
    ]


@pytest.mark.parametrize("dec", DECODERS)
@pytest.mark.parametrize("as_stream", [True, False])
def test_scn_and_tm_carried_forward_by_xid(dec, as_stream):
    msgs = _txn_stream()
    src = ("\n".join(msgs) + "\n").encode() if as_stream else msgs
    h = dec.headers(src, format="olr").to_pylist()
    assert [r["source"]["scn"] for r in h] == [100, 100, None, 100, 100, None, 300, 300]
    assert [r["commit_ts"] for r in h] == [at(1000)] * 2 + [None] + [at(1000)] * 2 + [None] * 3
    assert [r["op"] for r in h] == ["begin", "c", "c", "c", "commit", "c", "c", "c"]
    assert all(r["_error"] is None for r in h)


@pytest.mark.parametrize("dec", DECODERS)
def test_a_bad_scn_is_not_carried(dec):
    msgs = [doc(scns="0xZZ", tms="1000", xid="1.1.1", payload=[{"op": "begin"}]),
            doc(xid="1.1.1", payload=[el(after={"ID": 1})])]
    h = dec.headers(msgs, format="olr").to_pylist()
    assert [r["source"]["scn"] for r in h] == [None, None]
    assert [r["commit_ts"] for r in h] == [at(1000)] * 2
    assert h[0]["_error"] == "scns: '\"0xZZ\"' is not an SCN (message 0, byte 8)"
    assert h[1]["_error"] is None


@pytest.mark.parametrize("dec", DECODERS)
def test_positions_sort_in_log_order(dec):
    """change_pos = c_scn (8 bytes) + c_idx (8) + the element's index (4): a total, bytewise
    order, also for elements of one message and transactions that share a c_scn."""
    msgs = [
        doc(scn=90, tm=1, c_scn=100, c_idx=1, xid="1.1.1", payload=[{"op": "begin"}]),
        doc(c_scn=100, c_idx=2, xid="1.1.1", payload=[
            el(after={"ID": 1}), el(after={"ID": 2}), el("d", before={"ID": 1})]),
        doc(c_scn=100, c_idx=3, xid="1.1.1", payload=[{"op": "commit"}]),
        doc(scn=100, tm=1, c_scn=100, c_idx=4, xid="2.2.2", payload=[{"op": "begin"}]),
        doc(scn=100, tm=1, xid="3.3.3", payload=[el(after={"ID": 3})]),   # no c_scn: the scn
        doc(tm=1, xid="4.4.4", payload=[el(after={"ID": 4})]),            # neither: null
    ]
    h = dec.headers(msgs, format="olr").to_pylist()
    pos = [r["change_pos"] for r in h]
    c100 = (100).to_bytes(8, "big")
    assert pos[:6] == [c100 + (1).to_bytes(8, "big") + (0).to_bytes(4, "big"),
                       c100 + (2).to_bytes(8, "big") + (0).to_bytes(4, "big"),
                       c100 + (2).to_bytes(8, "big") + (1).to_bytes(4, "big"),
                       c100 + (2).to_bytes(8, "big") + (2).to_bytes(4, "big"),
                       c100 + (3).to_bytes(8, "big") + (0).to_bytes(4, "big"),
                       c100 + (4).to_bytes(8, "big") + (0).to_bytes(4, "big")]
    assert pos[:6] == sorted(pos[:6])
    assert [r["commit_pos"] for r in h[:7]] == [c100] * 7
    assert h[6]["change_pos"] == c100 + bytes(12)
    assert h[7]["commit_pos"] is None and h[7]["change_pos"] is None
    assert [r["seq"] for r in h] == list(range(8))
    assert h[1]["source"]["scn"] == 90       # the carried scn, not the c_scn


@pytest.mark.parametrize("dec", DECODERS)
def test_each_message_an_input_in_spark(dec):
    """With Spark's message columns each message is an input (SPEC §6): seq restarts, rows
    carry their message index, and the scn and time are still carried from one message to
    the next (carry-forward works within a partition)."""
    msgs = _txn_stream()[:2]
    d = dec.Decoder("olr", catalog=CAT)
    want = Want(CAT, ALL, messages=True)
    out = list(d._fmt.batches(parts(msgs), want, True, 100, "PERMISSIVE", new_stats(),
                              d._native))
    ((key, batch),) = out
    assert key == "OLR_TEST.T"
    r = batch.to_pylist()[0]
    assert r["seq"] == 0 and r["source"]["scn"] == 100 and r[MESSAGE] == 1
    (r,) = rows(dec, msgs)
    assert r["seq"] == 1 and r["source"]["scn"] == 100


# -- typing without a catalog -----------------------------------------------------------------

SCHEMA_COLUMNS = [
    {"name": "ID", "type": "number", "precision": 10, "scale": 0, "nullable": False},
    {"name": "N", "type": "number", "precision": -1, "scale": -1, "nullable": True},
    {"name": "I", "type": "integer", "nullable": True},
    {"name": "S", "type": "varchar2", "length": 10, "nullable": True},
    {"name": "C", "type": "char", "length": 3, "nullable": True},
    {"name": "D", "type": "date", "nullable": True},
    {"name": "TS", "type": "timestamp", "length": 11, "nullable": True},
    {"name": "TZ", "type": "timestamp with time zone", "length": 13, "nullable": True},
    {"name": "R", "type": "raw", "length": 4, "nullable": True},
    {"name": "BL", "type": "blob", "nullable": True},
    {"name": "BF", "type": "binary_float", "nullable": True},
    {"name": "BD", "type": "binary_double", "nullable": True},
    {"name": "FL", "type": "float", "nullable": True},
    {"name": "B", "type": "boolean", "nullable": True},
    {"name": "L", "type": "long", "nullable": True},
    {"name": "IV", "type": "interval day to second", "length": 11, "nullable": True},
    {"name": "NEG", "type": "number", "precision": 5, "scale": -2, "nullable": True},
]


@pytest.mark.parametrize("dec", DECODERS)
def test_schema_columns_type_a_table_without_catalog(dec):
    after = {"ID": 1, "N": 1.5, "I": 123, "S": "x", "C": "ab ", "D": "86400",
             "TS": "86400", "TZ": "86400,+01:00", "R": "00ff", "BL": "ab", "BF": 0.5,
             "BD": 0.25, "FL": 2, "B": 0, "L": "long text", "IV": "+01 00:00:00.000000",
             "NEG": 12300}
    schema = {"owner": "OLR_TEST", "table": "X", "obj": 5, "columns": SCHEMA_COLUMNS}
    m = doc(scn=1, tm=1, xid="1.1.1", payload=[{"op": "c", "schema": schema, "after": after}])
    t = dec.decode([m], format="olr")
    types = {f.name: f.type for f in t.schema.field("after").type}
    assert types == {
        "ID": pa.decimal128(10, 0), "N": pa.string(), "I": pa.decimal128(38, 0),
        "S": pa.string(), "C": pa.string(), "D": pa.timestamp("us"), "TS": pa.timestamp("us"),
        "TZ": pa.timestamp("us", tz="UTC"), "R": pa.binary(), "BL": pa.binary(),
        "BF": pa.float32(), "BD": pa.float64(), "FL": pa.float64(), "B": pa.bool_(),
        "L": pa.string(), "IV": pa.string(), "NEG": pa.string()}
    (r,) = t.to_pylist()
    assert r["_error"] is None
    a = r["after"]
    assert (a["ID"], a["N"], a["I"], a["D"], a["TZ"], a["R"], a["B"], a["NEG"]) == (
        D(1), "1.5", D(123), wall(1970, 1, 2), at(86400), b"\x00\xff", False, "12300")
    assert a["IV"] == "+01 00:00:00.000000" and r["source"]["obj"] == 5
    # nullable false is enforced
    bad = m.replace('"ID":1,', '"ID":null,')
    (r,) = dec.decode([bad], format="olr").to_pylist()
    assert r["_error"] == ("after.ID: null in NOT NULL column (message 0, byte "
                           f"{bad.index('null,')})")
    # a catalog wins over schema.columns
    cat = {"tables": [{"schema": "OLR_TEST", "table": "X",
                       "columns": [{"name": "ID", "type": "VARCHAR2(9)"}]}]}
    d = dec.Decoder("olr", catalog=cat)
    (r,) = d.decode([m]).to_pylist()
    assert r["after"] == {"ID": "1"} and d.last_stats["extra_columns"] == 16


@pytest.mark.parametrize("dec", DECODERS)
def test_json_kinds_when_nothing_describes_the_table(dec):
    """No catalog, no schema.columns: every column a string (a number's text as sent), the
    columns those met in the call in first-seen order (peer-data ddl-add-column: EMAIL
    appears mid-stream); a column met later is null in earlier rows, `present` as for a
    column the image left out."""
    msgs = [
        doc(scn=1, tm=1, xid="1.1.1", payload=[el(after={"ID": 1, "VAL": 100.50})]),
        doc(xid="1.1.1", payload=[el("u", before={"ID": 1, "VAL": 100.50},
                                     after={"ID": 1, "VAL": 2})]),
        doc(xid="1.1.1", payload=[el(after={"ID": 2, "OK": True, "EMAIL": "x@y"})]),
        doc(xid="1.1.1", payload=[el("d", before={"EMAIL": None, "ID": 2})]),
    ]
    msgs[0] = msgs[0].replace("100.5}", "100.50}")
    msgs[1] = msgs[1].replace("100.5}", "100.50}")
    d = dec.Decoder("olr")
    t = d.decode(msgs)
    assert [f.name for f in t.schema.field("after").type] == ["ID", "VAL", "OK", "EMAIL"]
    assert all(f.type == pa.string() for f in t.schema.field("after").type)
    c, u, c2, dl = t.to_pylist()
    assert c["after"] == {"ID": "1", "VAL": "100.50", "OK": None, "EMAIL": None}
    assert c["present"] == dict.fromkeys(["ID", "VAL", "OK", "EMAIL"], True)
    assert u["present"] == {"ID": True, "VAL": True, "OK": False, "EMAIL": False}
    assert u["changed"] == {"ID": False, "VAL": True, "OK": False, "EMAIL": False}
    assert c2["after"] == {"ID": "2", "VAL": None, "OK": "true", "EMAIL": "x@y"}
    assert dl["before"] == {"ID": "2", "VAL": None, "OK": None, "EMAIL": None}
    assert d.last_stats["unknown_tables"] == 4 and d.last_stats["extra_columns"] == 0
    # read in small batches: the same rows (a batch may hold only the columns met so far)
    got = list(dec.read_batches(msgs, format="olr", table="OLR_TEST.T", batch_size=1))
    assert grown_table(got).equals(t)


@pytest.mark.parametrize("dec", DECODERS)
def test_schemaless_tables_are_keyed_by_their_bare_name(dec):
    m = doc(scn=1, tm=1, xid="1.1.1", payload=[
        {"op": "c", "schema": {"table": "OBJ_87234"}, "after": {"COL_0": 1}}])
    got = dec.decode_tables([m], format="olr")
    (r,) = got["OBJ_87234"].to_pylist()
    assert (r["schema"], r["table"]) == (None, "OBJ_87234") and r["after"] == {"COL_0": "1"}
    cat = {"tables": [{"table": "OBJ_87234", "columns": [{"name": "COL_0", "type": "NUMBER(5)"}]}]}
    (r,) = dec.decode([m], format="olr", catalog=cat).to_pylist()
    assert r["after"] == {"COL_0": D(1)}


@pytest.mark.parametrize("dec", DECODERS)
def test_catalog_names_the_table(dec):
    m = doc(scn=1, tm=1, xid="1.1.1", payload=[el(owner="olr_test", table="t",
                                                  after={"ID": 1})])
    (r,) = rows(dec, [m], table="OLR_TEST.T")
    assert (r["schema"], r["table"]) == ("OLR_TEST", "T")


# -- bad input --------------------------------------------------------------------------------

def _error_case(message: str, needle: str, nth: int = 1) -> int:
    """Byte offset of the nth `needle` in the message."""
    pos = -1
    for _ in range(nth):
        pos = message.encode().index(needle.encode(), pos + 1)
    return pos


GOOD = {"scn": 1, "tm": 1, "c_scn": 1, "c_idx": 1, "xid": "1.2.3"}


def _msg(payload=None, **head) -> str:
    fields = dict(GOOD, **head)
    fields = {k: v for k, v in fields.items() if v is not None}
    return doc(**fields, payload=payload if payload is not None else [el(after={"ID": 1})])


BAD_FIELDS = [
    # (message, field, reason, where the error points: (needle, occurrence))
    (_msg(scn=None, scns="0xZZ"), "scns", "'\"0xZZ\"' is not an SCN", '"0xZZ"'),
    (_msg(scn=None, scns="0x10000000000000000"), "scns",
     "'\"0x10000000000000000\"' is not an SCN", '"0x1'),
    (_msg(scn=None, scns="0x8000000000000000"), "scns",
     "'\"0x8000000000000000\"' is not an SCN", '"0x8'),
    (_msg(scn=-5), "scn", "'-5' is not an SCN", "-5"),
    (_msg(scn=1.5), "scn", "'1.5' is not an SCN", "1.5"),
    (_msg(c_scn="x"), "c_scn", "'\"x\"' is not an SCN", '"x"'),
    (_msg(c_idx=-1), "c_idx", "'-1' is not a non-negative integer", "-1"),
    (_msg(tm=None, tms="yesterday"), "tms", "'\"yesterday\"' is not a time", '"yesterday"'),
    (_msg(tm=None, tms="2025-02-30T00:00:00"), "tms",
     "'\"2025-02-30T00:00:00\"' is not a time", '"2025-02-30'),
    (_msg(tm=10 ** 30), "tm", f"'{10 ** 30}' is not a time", "10000"),
    (_msg(tm=1.5), "tm", "'1.5' is not a time", "1.5"),
    (_msg(xid="1.2"), "xid", "'\"1.2\"' is not a transaction id", '"1.2"'),
    (_msg(xid="65536.0.0"), "xid", "'\"65536.0.0\"' is not a transaction id", '"65536'),
    (_msg(xid=7), "xid", "'7' is not a transaction id", "7,"),
    (_msg(xid=None, xidn=-1), "xidn", "'-1' is not a transaction id", "-1"),
    (_msg(xid=None, xidn=2 ** 64), "xidn", f"'{2 ** 64}' is not a transaction id", "1844"),
    (_msg(num="x"), "num", "'\"x\"' is not an integer", '"x"'),
    (_msg(db="@@").replace('"@@"', '"\\ud800"'), "db",
     "'\"\\\\ud800\"' has a lone surrogate in a \\u escape", '"\\ud800"'),
    (_msg([el(after={"ID": 1}, rid=5, num=1.5)]), "payload.num", "'1.5' is not an integer",
     "1.5"),
    (_msg([el(after={"ID": 1}, schema={"owner": 5, "table": "T"})]), "payload.schema.owner",
     "'5' is not text", "5,"),
    (_msg([el(after={"ID": 1}, schema={"owner": "OLR_TEST", "table": "T", "obj": "o"})]),
     "payload.schema.obj", "'\"o\"' is not an integer", '"o"'),
    (_msg([el(after={"ID": 1}, schema={"owner": "OLR_TEST", "table": "T", "columns": 5})]),
     "payload.schema.columns", "'5' is not a list of columns", "5}"),
    (_msg([el(after={"ID": 1}, schema={"owner": "OLR_TEST", "table": "T",
                                       "columns": [{"type": "number"}]})]),
     "payload.schema.columns", "'[{\"type\":\"number\"}]' is not a list of columns", '[{"type"'),
    (_msg([el(op="x", after={"ID": 1})]), "payload.op",
     "'\"x\"' is not one of begin, commit, c, u, d, ddl, chkpt", '"x"'),
    (_msg([{"schema": {"owner": "OLR_TEST", "table": "T"}, "after": {"ID": 1}}]),
     "payload.op", "missing", '{"schema"'),
    (_msg([{"op": "chkpt", "seq": 1, "offset": 2, "redo": 2}]), "payload.redo",
     "'2' is not a boolean", "2}"),
    (_msg([el(after={"ID": 1, "AMOUNT": 1.234})]), "after.AMOUNT", "'1.234' is not NUMBER(9,2)",
     "1.234"),
    (_msg([el(after={"ID": 1, "AMOUNT": 12345678})]), "after.AMOUNT",
     "'12345678' is not NUMBER(9,2)", "12345678"),
    (_msg([el(after={"ID": 1, "AMOUNT": "1,5"})]), "after.AMOUNT", "'\"1,5\"' is not NUMBER(9,2)",
     '"1,5"'),
    (_msg([el(after={"ID": 1.5})]), "after.ID", "'1.5' is not NUMBER(10)", "1.5"),
    (_msg([el(after={"ID": None})]), "after.ID", "null in NOT NULL column", "null"),
    (_msg([el(after={"ID": 1, "N": "abc"})]), "after.N", "'\"abc\"' is not NUMBER", '"abc"'),
    (_msg([el(after={"ID": 1, "R": "abc"})]), "after.R", "'\"abc\"' is not RAW(8)", '"abc"'),
    (_msg([el(after={"ID": 1, "R": 12})]), "after.R", "'12' is not RAW(8)", "12}"),
    (_msg([el(after={"ID": 1, "B": 2})]), "after.B", "'2' is not BOOLEAN", "2}"),
    (_msg([el(after={"ID": 1, "D": "15-JUN-25"})]), "after.D", "'\"15-JUN-25\"' is not DATE",
     '"15-JUN'),
    (_msg([el(after={"ID": 1, "TS": 1.5})]), "after.TS", "'1.5' is not TIMESTAMP(6)", "1.5"),
    (_msg([el(after={"ID": 1, "F": 1e39})]), "after.F", "'1e+39' is not BINARY_FLOAT", "1e+39"),
    (_msg([el(after={"ID": 1, "DBL": "NaN"})]), "after.DBL", "'\"NaN\"' is not BINARY_DOUBLE",
     '"NaN"'),
    (_msg([el(after={"ID": 1, "NAME": {"a": 1}})]), "after.NAME",
     "'{\"a\":1}' is not VARCHAR2(20)", '{"a"'),
    (_msg([el(after={"ID": 1, "NAME": "@@"})]).replace('"@@"', '"\\udc00"'), "after.NAME",
     "'\"\\\\udc00\"' has a lone surrogate in a \\u escape", '"\\udc00"'),
    (_msg([el(after=5)]), "after", "'5' is not an object", "5}"),
    (_msg([el(after=[{"ID": 1}, {"NAME": "a", "AMOUNT": 1}])]), "after",
     "'{\"NAME\":\"a\",\"AMOUNT\":1}' is not an object of one column", '{"NAME"'),
    (_msg([el(after=[{"ID": 1}, 7])]), "after", "'7' is not an object of one column", "7]"),
    (_msg([el("u", before="x", after={"ID": 1})]), "before", "'\"x\"' is not an object", '"x"'),
    (_msg([el(after=[{"ID": 1}, {"ID": 2}])]), "after.ID", "given twice", '"ID"', 2),
]


@pytest.mark.parametrize("dec", DECODERS)
@pytest.mark.parametrize("message,field,reason,needle,nth",
                         [c if len(c) == 5 else c + (1,) for c in BAD_FIELDS])
def test_field_errors_name_field_reason_and_byte(dec, message, field, reason, needle, nth):
    pos = _error_case(message, needle, nth)
    # image errors are found where images are read (decode), the others in headers() too
    read = dec.decode if field.startswith(("after", "before")) else dec.headers
    h = read([message], format="olr", catalog=CAT).to_pylist()
    assert [r["_error"] for r in h] == [f"{field}: {reason} (message 0, byte {pos})"]
    assert h[0]["_corrupt_record"] is None and h[0]["seq"] == 0
    with pytest.raises(DecodeError) as e:
        read([message], format="olr", catalog=CAT, mode="FAILFAST")
    assert (e.value.field, e.value.reason, e.value.byte_offset, e.value.message_index) == (
        field, reason, pos, 0)


@pytest.mark.parametrize("dec", DECODERS)
def test_duplicate_keys(dec):
    m = _msg([el(after={"ID": 1, "NAME": "a"})])
    for key, text, field in ((m.replace('"NAME":"a"', '"NAME":"a","NAME":"b"'), '"NAME":"b"',
                              "after.NAME"),
                             (m.replace('"xid":"1.2.3"', '"xid":"1.2.3","xid":"1.2.4"'),
                              '"xid":"1.2.4"', "xid"),
                             (m.replace('"tm":1,', '"tm":1,"tm":2,'), '"tm":2', "tm")):
        (r,) = dec.decode([key], format="olr", catalog=CAT).to_pylist()
        assert r["_error"] == f"{field}: given twice (message 0, byte {key.index(text)})"
    bad = m.replace('"NAME":"a"', '"NAME":"a","NAME":"b"')
    (r,) = rows(dec, [bad])
    assert r["after"]["NAME"] is None and r["after"]["ID"] == 1


CORRUPT = [
    # (message, error text without the position, position needle or 0, corrupt bytes)
    (b'{"scn":1,"payload":[{"op":"c",}]}', "invalid JSON: unexpected '}'", b"}]}", None),
    (b'{"scn":1,"payload":[', "invalid JSON: truncated document", None, None),
    (b'[1,2]', "invalid JSON: the document is not an object", 0, None),
    (b'{"scn":1,"xid":"1.1.1"}', "payload: missing", 0, None),
    (b'{"scn":1,"payload":null}', "payload: missing", 0, None),
    (b'{"scn":1,"payload":{"op":"c"}}', "payload: '{\"op\":\"c\"}' is not an array",
     b'{"op"', None),
    (b'{"payload":[],"payload":[]}', "payload: given twice", b'"payload":[]}', None),
    (b'{"scn":1,"payload":[{"op":"begin"},5]}', "payload[1]: '5' is not an object", b"5]",
     b"5"),
    (b'{"scn":1,"payload":[{"op":"c","after":{"ID":1}}]}', "payload.schema.table: missing",
     b'{"op"', b'{"op":"c","after":{"ID":1}}'),
    (b'{"scn":1,"payload":[{"op":"u","schema":{"table":""}}]}', "payload.schema.table: missing",
     b'{"op"', b'{"op":"u","schema":{"table":""}}'),
    (b'{"scn":1,"payload":[{"op":"x"}]}',
     "payload.op: '\"x\"' is not one of begin, commit, c, u, d, ddl, chkpt", b'"x"',
     b'{"op":"x"}'),
    (b'{"scn":1,"payload":[{}]}', "payload.op: missing", b"{}]", b"{}"),
]


@pytest.mark.parametrize("dec", DECODERS)
@pytest.mark.parametrize("bad,reason,needle,record", CORRUPT)
def test_corrupt_records(dec, bad, reason, needle, record):
    good = _msg().encode()
    stream = good + b"\n" + bad + b"\n" + good + b"\n"
    base = len(good) + 1
    # needle: where the error points; 0 the document's start, None its end (truncated)
    where = base if needle == 0 else base + len(bad) if needle is None \
        else base + bad.index(needle)
    t = dec.decode(stream, format="olr", catalog=CAT)
    rs = t.to_pylist()
    got = [r for r in rs if r["_error"] is not None]
    assert len(got) == 1
    (r,) = got
    assert r["_error"] == f"{reason} (message 0, byte {where})"
    assert r["_corrupt_record"] == (record if record is not None else bad)
    assert (r["op"], r["schema"], r["table"], r["after"], r["source"]) == (None,) * 5
    assert [x["op"] for x in rs] == ["c", None, "c"]
    assert rs[2]["seq"] == rs[1]["seq"] + 1
    d = dec.Decoder("olr", catalog=CAT)
    got = d.decode_tables(stream)
    assert got[None].column("_error").to_pylist() == [r["_error"]]
    assert d.last_stats["errors"] == 1
    # as a message of a list: positions within the message
    (r,) = [x for x in rows(dec, [good, bad, good]) if x["_error"]]
    assert r["_error"] == f"{reason} (message 1, byte {where - base})"


@pytest.mark.parametrize("dec", DECODERS)
def test_modes_and_stats(dec):
    bad_value = _msg([el(after={"ID": 2, "AMOUNT": "x"})])
    other = _msg([el(table="OTHER", after={"A": 1})])
    msgs = [_msg(), None, "", bad_value, "{oops", other, _msg([]), "null", _msg(
        [el(after={"ID": 3, "EXTRA": 1, "MORE": 2})])]
    d = dec.Decoder("olr", catalog=CAT)
    t = d.decode(msgs, table="OLR_TEST.T")
    assert t.column("seq").to_pylist() == [0, 1, 2, 4]
    assert [e is not None for e in t.column("_error").to_pylist()] == [False, True, True, False]
    assert d.last_stats == {"records": 5, "events": 4, "errors": 2, "dropped": 0,
                            "tombstones": 3, "control": 0, "unknown_tables": 1,
                            "extra_columns": 2}
    d = dec.Decoder("olr", catalog=CAT, mode="DROPMALFORMED")
    t = d.decode(msgs, table="OLR_TEST.T")
    assert t.column("seq").to_pylist() == [0, 4]
    assert d.last_stats["dropped"] == 2 and d.last_stats["events"] == 2
    d = dec.Decoder("olr", catalog=CAT, mode="FAILFAST")
    with pytest.raises(DecodeError) as e:
        d.decode(msgs, table="OLR_TEST.T")
    assert e.value.message_index == 3 and e.value.field == "after.AMOUNT"
    assert e.value.byte_offset == bad_value.index('"x"')
    # FAILFAST counts only the requested table's records and unattributable ones
    ok = [_msg(), _msg([el(table="OTHER", after={"A": {"x": 1}})])]
    assert dec.decode(ok, format="olr", catalog=CAT, table="OLR_TEST.T",
                      mode="FAILFAST").num_rows == 1


@pytest.mark.parametrize("dec", DECODERS)
def test_tables_headers_and_unattributable_records(dec):
    msgs = [_msg(), "[]", _msg([el(table="OTHER", after={"A": 1})]),
            _msg([{"op": "commit"}])]
    got = dec.decode_tables(msgs, format="olr", catalog=CAT)
    assert sorted(got, key=str) == [None, "OLR_TEST.OTHER", "OLR_TEST.T"]
    assert got["OLR_TEST.OTHER"].column("after").to_pylist() == [{"A": "1"}]
    # an unattributable record is in every decode(table=…) result and in headers()
    t = dec.decode(msgs, format="olr", catalog=CAT, table="OLR_TEST.T")
    assert t.column("seq").to_pylist() == [0, 1]
    h = dec.headers(msgs, format="olr", catalog=CAT)
    assert h.column("op").to_pylist() == ["c", None, "c", "commit"]
    assert dec.headers(msgs, format="olr", table="OLR_TEST.OTHER").column(
        "seq").to_pylist() == [1, 2]
    with pytest.raises(ValueError, match="several tables"):
        dec.decode(msgs, format="olr", catalog=CAT)
    with pytest.raises(ValueError, match="neither in the catalog nor in the input"):
        dec.decode(msgs, format="olr", table="X.Y")
    empty = dec.decode([_msg([{"op": "begin"}])], format="olr", catalog=CAT,
                       table="OLR_TEST.T")
    assert empty.num_rows == 0
    assert empty.schema == cdcfast.Decoder("olr", catalog=CAT).schema("OLR_TEST.T")
    assert empty.schema.field("after").type.field("D").type == pa.timestamp("us")


@pytest.mark.parametrize("dec", DECODERS)
def test_read_batches_and_streams(dec, tmp_path):
    msgs = [_msg([el(after={"ID": i})], c_idx=i) for i in range(1, 8)]
    path = tmp_path / "olr.json"
    path.write_text("\n".join(msgs) + "\n")
    whole = dec.decode(str(path), format="olr", catalog=CAT)
    got = list(dec.read_batches(str(path), format="olr", catalog=CAT, batch_size=3))
    assert [b.num_rows for b in got] == [3, 3, 1]
    assert pa.Table.from_batches(got).equals(whole)
    assert whole.column("after").to_pylist()[6]["ID"] == 7
    pretty = "\n".join(json.dumps(json.loads(m), indent=2) for m in msgs).encode()
    assert dec.decode(pretty, format="olr", catalog=CAT).equals(whole)
    chunked = pa.chunked_array([pa.array(msgs[:4]), pa.array(msgs[4:])])
    assert dec.decode(chunked, format="olr", catalog=CAT).equals(whole)


def test_options_are_checked():
    for dec in (cdcfast, cdcfast.reference):
        with pytest.raises(ValueError, match="epoch_unit must be one of auto, s, ms, us, ns"):
            dec.Decoder("olr", epoch_unit="days")
        with pytest.raises(ValueError, match="unknown option"):
            dec.Decoder("olr", scn="scns")
        assert dec.Decoder("olr", epoch_unit="MS").options == {"epoch_unit": "ms"}
