"""`qlik` decoded from the seed's and peer-data's examples and from hand-made messages in the
shapes the peer-data README describes, with the native decoder and the reference alike: exact
values, masks, positions and error texts (docs/qlik.md)."""
from __future__ import annotations

import copy
import datetime as dt
import decimal
import json

import pyarrow as pa
import pytest

import cdcfast
import cdcfast.reference
from cdcfast import Catalog, DecodeError
from conftest import shared_path

UTC = dt.timezone.utc

DECODERS = [pytest.param(cdcfast, id="native"), pytest.param(cdcfast.reference, id="reference")]


def sample() -> bytes:
    """The real Kafka message in ../shared/peer-data/qlik (the test skips without it)."""
    return shared_path("peer-data", "qlik", "globant_tests_dataflow-update.json").read_bytes()


def sample_doc() -> dict:
    return json.loads(sample())


# The sample's 16 columns, in the order of its `data` object (test_sample_columns checks)
SAMPLE_COLUMNS = ["item_no", "mfg_div_cd", "phys_loc_cd", "plnr_cd", "inv_class_cd",
                  "use_um_cd", "byr_cd", "item_desc", "itm_aut_ord_fct", "itm_ord_mod_cd",
                  "itm_whs_ctl_cd", "itm_aut_ord_cd", "gnr_pt_no_ind", "div_adr_no",
                  "ems_rel_cd", "load_date_time"]

# The sample's 16 columns, typed as an SAP-TM item table would be: flags CHAR(1), a count, a
# load timestamp; item_no the key.
ITEM = Catalog.from_dict({"tables": [{"schema": "SAPTM", "table": "ITEM", "key": ["item_no"],
                                      "columns": [
    {"name": "item_no", "type": "VARCHAR(18)", "nullable": False},
    {"name": "mfg_div_cd", "type": "CHAR(1)"}, {"name": "phys_loc_cd", "type": "CHAR(1)"},
    {"name": "plnr_cd", "type": "CHAR(1)"}, {"name": "inv_class_cd", "type": "CHAR(1)"},
    {"name": "use_um_cd", "type": "CHAR(2)"}, {"name": "byr_cd", "type": "CHAR(1)"},
    {"name": "item_desc", "type": "VARCHAR(40)"}, {"name": "itm_aut_ord_fct", "type": "SMALLINT"},
    {"name": "itm_ord_mod_cd", "type": "CHAR(1)"}, {"name": "itm_whs_ctl_cd", "type": "CHAR(1)"},
    {"name": "itm_aut_ord_cd", "type": "CHAR(1)"}, {"name": "gnr_pt_no_ind", "type": "CHAR(1)"},
    {"name": "div_adr_no", "type": "VARCHAR(4)"}, {"name": "ems_rel_cd", "type": "CHAR(1)"},
    {"name": "load_date_time", "type": "TIMESTAMP"}]}]})

EMP = Catalog.from_dict({"tables": [{"schema": "HR", "table": "EMP", "key": ["ID"], "columns": [
    {"name": "ID", "type": "INTEGER", "nullable": False},
    {"name": "NAME", "type": "VARCHAR(20)"},
    {"name": "SALARY", "type": "DECIMAL(9,2)"},
    {"name": "QTY", "type": "SMALLINT"},
    {"name": "NOTES", "type": "CLOB"},
    {"name": "HIRED", "type": "DATE"}]}]})


def at(data: bytes, marker: bytes, skip: int = 0) -> int:
    """Byte offset of `marker` in data, plus `skip`."""
    return data.index(marker) + skip


def value_at(data: bytes, key: str) -> int:
    """Offset of the value of the first `"key": ` / `"key":` in data."""
    for sep in (b'": ', b'":'):
        i = data.find(b'"' + key.encode() + sep)
        if i >= 0:
            return i + 1 + len(key) + len(sep)
    raise AssertionError(key)


def pubsub(op="UPDATE", data=None, before=None, schema="HR", table="EMP", **headers) -> dict:
    """A Pub/Sub data message (the seed's form) of HR.EMP."""
    h = {"operation": op, "changeSequence": "20230911032325000000000000000000005",
         "timestamp": "2023-09-11T03:23:25.000", "streamPosition": "00000000.00bb2531",
         "transactionId": "00000000000000000000000000060008", "changeMask": "02",
         "columnMask": "3F", "transactionEventCounter": 1, "transactionLastEvent": True}
    h.update(headers)
    doc = {"schema": schema, "table": table, "headers": {k: v for k, v in h.items()
                                                          if v is not ...}}
    doc["data"] = {"ID": "7", "NAME": "Ann", "SALARY": "1200.50", "QTY": "3", "NOTES": "x",
                   "HIRED": "2020-02-29"} if data is None else data
    doc["beforeData"] = before
    return doc


def line(*docs) -> bytes:
    return b"".join(json.dumps(d).encode() + b"\n" for d in docs)


def metadata(schema_id="s1", schema="SAPTM", table="ITEM", columns=None) -> dict:
    """A Kafka metadata message (type MD) for the sample's table."""
    if columns is None:
        columns = {c: {"ordinal": i + 1, "type": "STRING", "length": 40, "precision": 0,
                       "scale": 0, "primaryKeyPosition": 1 if c == "item_no" else 0}
                   for i, c in enumerate(SAMPLE_COLUMNS)}
        columns["itm_aut_ord_fct"].update(type="INT2", length=0)
        columns["load_date_time"].update(type="DATETIME", length=0, scale=6)
    return {"magic": "atMSG", "type": "MD", "headers": None, "messageSchemaId": None,
            "messageSchema": None,
            "message": {"schemaId": schema_id,
                        "lineage": {"server": "srv", "task": "t1", "schema": schema,
                                    "table": table, "tableVersion": 1,
                                    "timestamp": "2023-03-21T21:00:00.000"},
                        "tableStructure": {"tableColumns": columns},
                        "dataSchema": "{}"}}


# -- the peer-data sample ---------------------------------------------------------------------

def test_sample_columns():
    assert list(sample_doc()["message"]["data"]) == SAMPLE_COLUMNS
    assert [c.name for c in ITEM.tables[0].columns] == SAMPLE_COLUMNS


@pytest.mark.parametrize("dec", DECODERS)
def test_sample_with_a_catalog(dec):
    d = dec.Decoder("qlik", catalog=ITEM)
    r, = d.decode(sample(), table="SAPTM.ITEM").to_pylist()
    assert r["_error"] is None and r["_corrupt_record"] is None
    assert (r["op"], r["source_op"], r["schema"], r["table"]) == ("u", "UPDATE", "SAPTM", "ITEM")
    assert r["txid"] == "0000000066DA0202A903000000000000"
    assert r["commit_ts"] == r["change_ts"] == dt.datetime(2023, 3, 21, 21, 34, 19, 511000,
                                                           tzinfo=UTC)
    assert r["commit_pos"] == r["change_pos"] == b"20230321213416580000000000000000017"
    assert r["seq"] == 1                                    # transactionEventCounter
    assert r["after"]["item_desc"] == "RIVET 3/16 POPR FENDER"
    assert r["before"]["item_desc"] == "KAFKA UPD FOR TESTING"
    assert r["after"]["itm_aut_ord_fct"] == 1 and r["after"]["itm_ord_mod_cd"] == ""
    assert r["after"]["load_date_time"] == dt.datetime(2023, 3, 21, 14, 34, 21)
    assert r["before"]["load_date_time"] is None
    # changeMask 008080 over 16 columns: the 8th and the 16th, exactly the columns that differ
    differ = [c for c in SAMPLE_COLUMNS if r["before"][c] != r["after"][c]]
    assert differ == ["item_desc", "load_date_time"]
    assert [c for c, v in r["changed"].items() if v] == differ
    assert r["present"] == dict.fromkeys(SAMPLE_COLUMNS, True)          # columnMask 00FFFF
    assert r["source"] == {
        "change_sequence": "20230321213416580000000000000000017",
        "stream_position": "1015;638150312565803470;20221211140008252023B|"
                           "0000000003A90202DB790001",
        "change_mask": "008080", "column_mask": "00FFFF", "transaction_last_event": True,
        "operation": "UPDATE"}
    assert d.last_stats == {"records": 1, "events": 1, "errors": 0, "dropped": 0,
                            "tombstones": 0, "control": 0, "unknown_tables": 0,
                            "extra_columns": 0}


@pytest.mark.parametrize("dec", DECODERS)
def test_sample_without_a_catalog_reads_strings(dec):
    d = dec.Decoder("qlik")
    t = d.decode(sample(), table="SAPTM.ITEM")
    assert t.schema.field("after").type == pa.struct([(c, pa.string()) for c in SAMPLE_COLUMNS])
    r, = t.to_pylist()
    assert r["after"] == sample_doc()["message"]["data"]
    assert r["before"] == sample_doc()["message"]["beforeData"]
    assert (r["schema"], r["table"]) == ("SAPTM", "ITEM")      # the argument, split
    assert [c for c, v in r["changed"].items() if v] == ["item_desc", "load_date_time"]
    assert all(r["present"].values())
    assert d.last_stats["unknown_tables"] == 1


@pytest.mark.parametrize("dec", DECODERS)
def test_sample_names_no_table_without_the_argument(dec):
    """messageSchemaId is null and no metadata message came first: unattributable."""
    pos = value_at(sample(), "messageSchemaId")
    text = ("messageSchemaId: null, and the message names no table; pass table=… "
            f"(message 0, byte {pos})")
    got = dec.decode_tables(sample(), format="qlik", catalog=ITEM)
    assert list(got) == [None]
    r, = got[None].to_pylist()
    assert r["_error"] == text and r["_corrupt_record"] == sample().rstrip()
    assert r["op"] is None and r["seq"] == 0
    h, = dec.headers(sample(), format="qlik").to_pylist()    # listed: no table, no error
    assert (h["op"], h["schema"], h["table"], h["_error"]) == ("u", None, None, None)
    with pytest.raises(DecodeError) as e:
        dec.decode_tables(sample(), format="qlik", mode="FAILFAST")
    assert (e.value.message_index, e.value.byte_offset, e.value.field) == (0, pos,
                                                                          "messageSchemaId")
    d = dec.Decoder("qlik", mode="DROPMALFORMED")
    assert all(t.num_rows == 0 for t in d.decode_tables(sample()).values())
    assert d.last_stats["dropped"] == 1


@pytest.mark.parametrize("dec", DECODERS)
def test_metadata_message_names_and_types_the_table(dec):
    doc = copy.deepcopy(sample_doc())
    doc["messageSchemaId"] = "s1"
    stream = line(metadata(), doc)
    d = dec.Decoder("qlik")
    t = d.decode(stream)
    r, = t.to_pylist()
    assert (r["schema"], r["table"], r["_error"]) == ("SAPTM", "ITEM", None)
    assert t.schema.field("after").type.field("itm_aut_ord_fct").type == pa.int16()
    assert r["after"]["itm_aut_ord_fct"] == 1
    assert r["after"]["load_date_time"] == dt.datetime(2023, 3, 21, 14, 34, 21)
    assert r["seq"] == 1
    assert d.last_stats["control"] == 1 and d.last_stats["records"] == 1
    assert d.last_stats["unknown_tables"] == 0
    h = d.headers(stream)
    assert h.num_rows == 1 and h.column("table").to_pylist() == ["ITEM"]
    # the catalog wins over the metadata message
    cat_t = dec.decode(stream, format="qlik", catalog=ITEM)
    assert cat_t.schema.field("after").type.field("div_adr_no").type == pa.string()
    assert cat_t.to_pylist()[0]["after"]["load_date_time"] == dt.datetime(2023, 3, 21, 14, 34,
                                                                          21)
    # a schemaId no metadata message had
    doc["messageSchemaId"] = "s2"
    other = line(metadata(), doc)
    pos = other.index(b'"s2"')
    r, = dec.decode_tables(other, format="qlik")[None].to_pylist()
    assert r["_error"] == ("messageSchemaId: 's2' names metadata this input lacks: no "
                           "metadata message before it and no catalog table has that "
                           "schemaId; give a catalog built with cdcfast.Catalog.from_qlik "
                           f"over the metadata (MD) messages (message 0, byte {pos})")


@pytest.mark.parametrize("dec", DECODERS)
def test_metadata_after_the_data_does_not_name_it(dec):
    doc = copy.deepcopy(sample_doc())
    doc["messageSchemaId"] = "s1"
    got = dec.decode_tables(line(doc, metadata()), format="qlik")
    assert list(got) == [None]
    # messages of one input: the lookup spans them
    msgs = [json.dumps(metadata()).encode(), json.dumps(doc).encode()]
    assert dec.decode(msgs, format="qlik").column("table").to_pylist() == ["ITEM"]


# -- the seed's Pub/Sub form and the README's shapes ------------------------------------------

@pytest.mark.parametrize("dec", DECODERS)
def test_pubsub_update_insert_delete_refresh(dec):
    up = pubsub(before={"ID": "7", "NAME": "Bob", "SALARY": "1100.00", "QTY": "3",
                        "NOTES": "x", "HIRED": "2020-02-29"}, changeMask="07")
    ins = pubsub("INSERT", changeMask="3F", transactionEventCounter="2")
    dele = pubsub("DELETE", changeMask="01", transactionLastEvent="FALSE")
    ref = pubsub("REFRESH", changeSequence="", timestamp="", streamPosition="",
                 transactionId="", changeMask="", columnMask="", transactionEventCounter="",
                 transactionLastEvent="")
    d = dec.Decoder("qlik", catalog=EMP)
    u, c, x, r = d.decode(line(up, ins, dele, ref)).to_pylist()
    assert [e["op"] for e in (u, c, x, r)] == ["u", "c", "d", "r"]
    assert u["before"]["NAME"] == "Bob" and u["after"]["NAME"] == "Ann"
    assert u["after"] == {"ID": 7, "NAME": "Ann", "SALARY": decimal.Decimal("1200.50"),
                          "QTY": 3, "NOTES": "x", "HIRED": dt.date(2020, 2, 29)}
    # 07: ID, NAME, SALARY; NOTES is a CLOB: null
    assert u["changed"] == {"ID": True, "NAME": True, "SALARY": True, "QTY": False,
                            "NOTES": None, "HIRED": False}
    assert c["before"] is None and c["seq"] == 2
    assert c["changed"] == {"ID": True, "NAME": True, "SALARY": True, "QTY": True,
                            "NOTES": None, "HIRED": True}
    assert x["after"] is None and x["before"]["ID"] == 7               # DELETE: data is before
    assert x["changed"] == {"ID": True, "NAME": False, "SALARY": False, "QTY": False,
                            "NOTES": None, "HIRED": False}          # the key, kept as sent
    assert x["source"]["transaction_last_event"] is False
    # REFRESH: every "" header is null; seq the ordinal; no masks: §3
    assert (r["txid"], r["commit_ts"], r["commit_pos"], r["seq"]) == (None, None, None, 3)
    assert r["source"] == {"change_sequence": None, "stream_position": None,
                           "change_mask": None, "column_mask": None,
                           "transaction_last_event": None, "operation": "REFRESH"}
    names = [col.name for col in EMP.tables[0].columns]
    assert r["changed"] == dict.fromkeys(names, True)
    assert r["present"] == dict.fromkeys(names, True)
    assert d.last_stats["errors"] == 0 and d.last_stats["records"] == 4


@pytest.mark.parametrize("dec", DECODERS)
def test_masks_computed_without_them(dec):
    base = {"ID": "7", "NAME": "Ann", "SALARY": "1.00", "QTY": "3", "NOTES": "n",
            "HIRED": "2020-01-01"}
    up = pubsub(data=dict(base, NAME="Bo"), before=base, changeMask=..., columnMask=...)
    dele = pubsub("DELETE", data=base, changeMask=..., columnMask=...)
    lone = pubsub(data=base, changeMask=..., columnMask=...)          # no beforeData
    u, x, n = dec.decode(line(up, dele, lone), format="qlik", catalog=EMP).to_pylist()
    assert u["changed"] == {"ID": False, "NAME": True, "SALARY": False, "QTY": False,
                            "NOTES": False, "HIRED": False}
    assert x["changed"] == dict.fromkeys(base, False)
    assert n["changed"] is None and n["present"] == dict.fromkeys(base, True)


@pytest.mark.parametrize("dec", DECODERS)
def test_readme_shapes(dec):
    """The 2019 JS message: changeMask 00, columnMask 05 over 3 columns (FIRST_NAME not
    present, null in both images); the support article's: 02 / 07 over ID, NAME, tableName;
    the seed's 0B: the 1st, 2nd and 4th columns."""
    cat = Catalog.from_dict({"tables": [
        {"schema": "S", "table": "CUST", "columns": [
            {"name": "CUSTOMER_ID", "type": "INTEGER"},
            {"name": "FIRST_NAME", "type": "VARCHAR(9)"},
            {"name": "LAST_NAME", "type": "VARCHAR(9)"}]},
        {"schema": "S", "table": "KIT", "columns": [
            {"name": "ID", "type": "INTEGER"}, {"name": "NAME", "type": "VARCHAR(20)"},
            {"name": "tableName", "type": "VARCHAR(9)"}]},
        {"schema": "S", "table": "FOUR", "columns": [
            {"name": c, "type": "VARCHAR(3)"} for c in "ABCD"]}]})
    cust = pubsub(schema="S", table="CUST", changeMask="00", columnMask="05",
                  data={"CUSTOMER_ID": "1", "FIRST_NAME": None, "LAST_NAME": "Doe"},
                  before={"CUSTOMER_ID": "1", "FIRST_NAME": None, "LAST_NAME": "Doe"})
    kit = pubsub(schema="S", table="KIT", changeMask="02", columnMask="07",
                 data={"ID": "2", "NAME": "test Kafka", "tableName": "kit"},
                 before={"ID": "2", "NAME": "ok", "tableName": "kit"})
    four = pubsub(schema="S", table="FOUR", changeMask="0B", columnMask="0F",
                  data=dict.fromkeys("ABCD", "y"), before=dict.fromkeys("ABCD", "x"))
    got = dec.decode_tables(line(cust, kit, four), format="qlik", catalog=cat)
    c, = got["S.CUST"].to_pylist()
    assert c["changed"] == {"CUSTOMER_ID": False, "FIRST_NAME": False, "LAST_NAME": False}
    assert c["present"] == {"CUSTOMER_ID": True, "FIRST_NAME": False, "LAST_NAME": True}
    assert c["after"]["FIRST_NAME"] is None
    k, = got["S.KIT"].to_pylist()
    assert k["changed"] == {"ID": False, "NAME": True, "tableName": False}
    assert all(k["present"].values())
    f, = got["S.FOUR"].to_pylist()
    assert f["changed"] == {"A": True, "B": True, "C": False, "D": True}


@pytest.mark.parametrize("dec", DECODERS)
def test_present_from_the_keys_without_a_column_mask(dec):
    msg = pubsub("INSERT", data={"ID": "1", "NAME": "a"}, columnMask=...)
    r, = dec.decode(line(msg), format="qlik", catalog=EMP).to_pylist()
    assert r["present"] == {"ID": True, "NAME": True, "SALARY": False, "QTY": False,
                            "NOTES": False, "HIRED": False}
    assert r["after"]["SALARY"] is None


@pytest.mark.parametrize("dec", DECODERS)
def test_values_by_type(dec):
    cat = Catalog.from_dict({"tables": [{"schema": "T", "table": "V", "columns": [
        {"name": "I8", "type": "TINYINT"}, {"name": "I64", "type": "BIGINT"},
        {"name": "D", "type": "DECIMAL(38,10)"}, {"name": "X", "type": "DECFLOAT"},
        {"name": "F4", "type": "REAL"}, {"name": "F8", "type": "DOUBLE"},
        {"name": "B", "type": "BOOLEAN"}, {"name": "BIN", "type": "VARBINARY(8)"},
        {"name": "DT", "type": "DATE"}, {"name": "TM", "type": "TIME(6)"},
        {"name": "TS", "type": "TIMESTAMP(9)"}, {"name": "TZ", "type": "TIMESTAMP WITH TIME ZONE"},
        {"name": "S", "type": "VARCHAR(9)"}]}]})
    row = {"I8": "-128", "I64": 9223372036854775807, "D": "1234567890123456789012345678.1234567890",
           "X": "1.5e300", "F4": "0.1", "F8": 2.5e-300, "B": "True", "BIN": "0aFF",
           "DT": "1969-12-31", "TM": "23:59:59.9999999", "TS": "2023-03-21T14:34:21.123456789",
           "TZ": "2023-03-21 14:34:21", "S": 12.50}
    text = b'{"schema":"T","table":"V","headers":{"operation":"INSERT"},"data":' \
        + json.dumps(row).encode() + b"}"
    r, = dec.decode(text, format="qlik", catalog=cat).to_pylist()
    assert r["_error"] is None, r["_error"]
    a = r["after"]
    assert a["I8"] == -128 and a["I64"] == 2 ** 63 - 1
    assert a["D"] == decimal.Decimal("1234567890123456789012345678.1234567890")
    assert a["X"] == "1.5e300"
    assert a["F4"] == pytest.approx(0.1, rel=1e-7) and a["F8"] == 2.5e-300
    assert a["B"] is True and a["BIN"] == b"\x0a\xff"
    assert a["DT"] == dt.date(1969, 12, 31)
    assert a["TM"] == dt.time(23, 59, 59, 999999)                    # floored
    assert a["TS"] == dt.datetime(2023, 3, 21, 14, 34, 21, 123456)
    assert a["TZ"] == dt.datetime(2023, 3, 21, 14, 34, 21, tzinfo=UTC)
    assert a["S"] == "12.5"                                          # a number's text as sent


# -- bad input -----------------------------------------------------------------------------------

BAD_CASES = [
    # (name, message, field, reason, the marker whose offset the error names)
    ("mask", pubsub(changeMask="x1"), "headers.changeMask", "'x1' is not hex", b'"x1"'),
    ("decimal", pubsub(data={"ID": "1", "SALARY": "abc"}), "after.SALARY",
     "'abc' is not DECIMAL(9,2)", b'"abc"'),
    ("empty int", pubsub(data={"ID": "1", "QTY": ""}), "after.QTY", "'' is not SMALLINT",
     b'""'),
    ("too precise", pubsub(data={"ID": "1", "SALARY": "1.234"}), "after.SALARY",
     "'1.234' is not DECIMAL(9,2)", b'"1.234"'),
    ("date", pubsub(data={"ID": "1", "HIRED": "2021-02-29"}), "after.HIRED",
     "'2021-02-29' is not DATE", b'"2021-02-29"'),
    ("not null", pubsub(data={"ID": None}), "after.ID", "null in NOT NULL column", b"null}"),
    ("delete value", pubsub("DELETE", data={"ID": "x"}), "before.ID", "'x' is not INTEGER",
     b'"x"'),
    ("operation", pubsub("MERGE"), "headers.operation",
     "'MERGE' is not one of INSERT, UPDATE, DELETE, REFRESH", b'"MERGE"'),
    ("timestamp", pubsub(timestamp="2023-09-11 25:00:00"), "headers.timestamp",
     "'2023-09-11 25:00:00' is not a timestamp (YYYY-MM-DD HH:MM:SS[.f])", b'"2023-09-11 25'),
    ("counter", pubsub(transactionEventCounter="1.5"), "headers.transactionEventCounter",
     "'1.5' is not an integer", b'"1.5"'),
    ("last event", pubsub(transactionLastEvent="yes"), "headers.transactionLastEvent",
     "'yes' is not a boolean", b'"yes"'),
    ("text", pubsub(transactionId={"a": 1}), "headers.transactionId",
     "'{\"a\": 1}' is not a string", b'{"a": 1}'),
    ("image", pubsub(data=["7"]), "data", "'[\"7\"]' is not an object", b'["7"]'),
    ("type", {"type": "XY", **pubsub()}, "type", "'XY' is not DT or MD", b'"XY"'),
]


@pytest.mark.parametrize("dec", DECODERS)
@pytest.mark.parametrize("name,msg,field,reason,marker", BAD_CASES, ids=[c[0] for c in BAD_CASES])
def test_bad_values_and_fields(dec, name, msg, field, reason, marker):
    good = pubsub()
    data = line(good, msg)
    pos = data.index(marker, len(line(good)))
    local = pos - len(line(good))
    d = dec.Decoder("qlik", catalog=EMP)
    g, r = d.decode(data).to_pylist()
    assert g["_error"] is None
    assert r["_error"] == f"{field}: {reason} (message 0, byte {pos})"
    assert r["_corrupt_record"] is None and r["seq"] == 1
    assert d.last_stats["errors"] == 1 and d.last_stats["events"] == 2
    # as a message of its own, the byte counts within it
    r, = dec.decode([json.dumps(msg)], format="qlik", catalog=EMP).to_pylist()
    assert r["_error"] == f"{field}: {reason} (message 0, byte {local})"
    d = dec.Decoder("qlik", catalog=EMP, mode="DROPMALFORMED")
    assert d.decode(data).num_rows == 1
    assert d.last_stats["dropped"] == 1 and d.last_stats["errors"] == 1
    with pytest.raises(DecodeError) as e:
        dec.decode(data, format="qlik", catalog=EMP, mode="FAILFAST")
    assert (e.value.field, e.value.reason, e.value.message_index, e.value.byte_offset) == (
        field, reason, 0, pos)


@pytest.mark.parametrize("dec", DECODERS)
def test_what_a_bad_row_keeps(dec):
    r, = dec.decode(line(pubsub(changeMask="0x2")), format="qlik", catalog=EMP).to_pylist()
    assert r["changed"] is None and r["present"] is not None        # the other mask is read
    assert r["after"]["NAME"] == "Ann" and r["source"]["change_mask"] == "0x2"
    r, = dec.decode(line(pubsub("MERGE")), format="qlik", catalog=EMP).to_pylist()
    assert (r["op"], r["source_op"]) == (None, "MERGE")
    assert r["before"] is r["after"] is r["changed"] is r["present"] is None
    r, = dec.decode(line(pubsub(data={"ID": "1", "SALARY": "abc"})), format="qlik",
                    catalog=EMP).to_pylist()
    assert r["after"] == {"ID": 1, "NAME": None, "SALARY": None, "QTY": None, "NOTES": None,
                          "HIRED": None}


@pytest.mark.parametrize("dec", DECODERS)
def test_missing_operation_and_headers(dec):
    no_op = pubsub()
    del no_op["headers"]["operation"]
    data = line(no_op)
    r, = dec.decode(data, format="qlik", catalog=EMP).to_pylist()
    assert r["_error"] == "headers.operation: missing (message 0, byte 0)"
    bad = pubsub()
    bad["headers"] = "x"
    data = line(bad)
    pos = data.index(b'"x"')
    r, = dec.decode(data, format="qlik", catalog=EMP).to_pylist()
    assert r["_error"] == f"headers: 'x' is not an object (message 0, byte {pos})"
    assert r["txid"] is None and r["op"] is None


@pytest.mark.parametrize("dec", DECODERS)
def test_kafka_field_paths_and_keys_given_twice(dec):
    doc = copy.deepcopy(sample_doc())
    doc["message"]["headers"]["changeMask"] = "00G0"
    data = json.dumps(doc).encode()
    pos = data.index(b'"00G0"')
    r, = dec.decode(data, format="qlik", table="SAPTM.ITEM").to_pylist()
    assert r["_error"] == f"message.headers.changeMask: '00G0' is not hex (message 0, byte {pos})"
    twice = sample().replace(b'"item_no": "AAL614",', b'"item_no": "AAL614", "item_no": "B",', 1)
    pos = twice.index(b'"item_no": "B"')
    r, = dec.decode(twice, format="qlik", table="SAPTM.ITEM").to_pylist()
    assert r["_error"] == f"after.item_no: given twice (message 0, byte {pos})"


@pytest.mark.parametrize("dec", DECODERS)
def test_corrupt_documents(dec):
    good = line(pubsub())
    broken = b'{"schema":"HR","table":"EMP","headers":{"operation":"INSERT",}}\n'
    not_object = b"[1, 2]\n"
    no_message = b'{"magic":"atMSG","type":"DT","message":"x"}\n'
    no_table = b'{"headers":{"operation":"INSERT"},"data":{"ID":"1"}}\n'
    bad_md = b'{"magic":"atMSG","type":"MD","message":{"lineage":{"schema":"A"}}}\n'
    # a document that does not start a line with `{` (the array) is read on after the one
    # before it; one that is not well-formed takes the rest of its piece (docs/debezium.md)
    parts = [good, not_object, broken, no_message, no_table, bad_md, good]
    data = b"".join(parts)
    base = [len(b"".join(parts[:i])) for i in range(len(parts))]
    x_at = base[3] + no_message.index(b'"x"')
    d = dec.Decoder("qlik", catalog=EMP)
    got = d.decode_tables(data)
    assert got["HR.EMP"].num_rows == 2
    errs = got[None].column("_error").to_pylist()
    assert errs == [
        f"invalid JSON: the document is not an object (message 0, byte {base[1]})",
        f"invalid JSON: unexpected '}}' (message 0, byte {base[2] + broken.index(b',}') + 1})",
        f"message: 'x' is not an object (message 0, byte {x_at})",
        f"table: missing; pass table=… (message 0, byte {base[4]})",
        f"message.lineage.table: missing (message 0, byte {base[5]})",
    ]
    assert got[None].column("_corrupt_record").to_pylist() == [
        not_object.rstrip(), broken.rstrip(), no_message.rstrip(), no_table.rstrip(),
        bad_md.rstrip()]
    assert got[None].column("seq").to_pylist() == [1, 2, 3, 4, 5]
    assert d.last_stats["records"] == 7 and d.last_stats["control"] == 0
    # with a table argument the table-less message is that table's
    t = dec.decode(data, format="qlik", catalog=EMP, table="HR.EMP")
    assert t.num_rows == 7 and t.column("_error").null_count == 3


# -- the API around it ----------------------------------------------------------------------------

@pytest.mark.parametrize("dec", DECODERS)
def test_stats_tombstones_and_extra_columns(dec):
    extra = pubsub(data={"ID": "1", "ZZ": "?"})
    other = pubsub(schema="HR", table="DEPT", data={"DNO": "1"})
    msgs = [None, json.dumps(extra), "", "null", json.dumps(metadata()), json.dumps(other)]
    d = dec.Decoder("qlik", catalog=EMP)
    got = d.decode_tables(msgs)
    assert sorted(got) == ["HR.DEPT", "HR.EMP"]
    assert got["HR.DEPT"].column("after").to_pylist() == [{"DNO": "1"}]
    assert d.last_stats == {"records": 2, "events": 2, "errors": 0, "dropped": 0,
                            "tombstones": 3, "control": 1, "unknown_tables": 1,
                            "extra_columns": 1}
    assert d.decode(msgs, table="HR.EMP").column("seq").to_pylist() == [1]


@pytest.mark.parametrize("dec", DECODERS)
def test_headers_skip_metadata_and_filter(dec):
    doc = copy.deepcopy(sample_doc())
    doc["messageSchemaId"] = "s1"
    stream = line(metadata(), doc, pubsub(), pubsub("DELETE"))
    h = dec.headers(stream, format="qlik")
    assert h.column("table").to_pylist() == ["ITEM", "EMP", "EMP"]
    assert h.column("seq").to_pylist() == [1, 1, 1]
    assert "after" not in h.schema.names
    assert dec.headers(stream, format="qlik", table="HR.EMP").column("op").to_pylist() == [
        "u", "d"]


@pytest.mark.parametrize("dec", DECODERS)
def test_derived_columns_grow(dec):
    first = pubsub("INSERT", schema="X", table="T", data={"A": "1"}, changeMask=...,
                   columnMask=...)
    second = pubsub("INSERT", schema="X", table="T", data={"A": "2", "B": "b"},
                    changeMask=..., columnMask=...)
    data = line(first, second)
    t = dec.decode(data, format="qlik")
    assert t.column("after").to_pylist() == [{"A": "1", "B": None}, {"A": "2", "B": "b"}]
    assert t.column("present").to_pylist() == [{"A": True, "B": None},
                                               {"A": True, "B": True}]
    batches = list(dec.read_batches(data, format="qlik", table="X.T", batch_size=1))
    assert [b.schema.field("after").type.num_fields for b in batches] == [1, 2]
    d = dec.Decoder("qlik")
    assert d.decode_tables([json.dumps(first), json.dumps(second)])["X.T"].equals(t)


def test_message_column_mode_restarts_seq_and_keeps_the_lookup():
    """Each message an input (Spark's message column): seq and byte offsets per message, the
    metadata lookup across the partition."""
    from cdcfast.formats import get
    from cdcfast.formats.base import Want, new_stats
    from cdcfast.sources import parts
    doc = copy.deepcopy(sample_doc())
    doc["messageSchemaId"] = "s1"
    del doc["message"]["headers"]["transactionEventCounter"]
    msgs = [json.dumps(metadata()), json.dumps(doc), json.dumps(doc), "{"]
    fmt = get("qlik")(ITEM)
    want = Want(fmt.catalog, "SAPTM.ITEM", messages=True)
    (key, batch), = fmt.batches(parts(msgs), want, True, 100, "PERMISSIVE", new_stats(),
                                native=False)
    assert key == "SAPTM.ITEM"
    assert batch.column("seq").to_pylist() == [0, 0, 0]
    assert batch.column("_message").to_pylist() == [1, 2, 3]
    assert batch.column("_error").to_pylist()[2] == ("invalid JSON: truncated document "
                                                     "(message 0, byte 1)")


def test_spark_asks_for_a_catalog_built_from_metadata():
    from cdcfast import spark as cs
    with pytest.raises(ValueError, match=r"Catalog\.from_qlik"):
        cs.map_in_arrow(format="qlik")


def test_no_options():
    with pytest.raises(ValueError, match="unknown option"):
        cdcfast.Decoder("qlik", epoch_unit="s")
    assert cdcfast.Decoder("qlik").config()["options"] == {}


@pytest.mark.parametrize("catalog", [True, False])
def test_unknown_object_fields_are_skipped_without_reading_before_the_field_table(catalog):
    """Found by the sanitizer build (ci/sanitize.sh, UBSan: index -1 out of bounds in
    Scanner.walk): a key that is none of ours (field -1) with an object value was looked up
    in the per-field counts before its field was checked. The decode is the same with such
    keys around the data as without them, natively and in the reference."""
    plain = pubsub(before={"ID": "7", "NAME": "Bob", "SALARY": "1100.00", "QTY": "3",
                           "NOTES": "x", "HIRED": "2020-02-29"}, changeMask="07")
    extra = {"x-vendor": {"a": {"b": [1, {"c": 2}]}}, **plain, "zz": {"data": {"ID": "9"}}}
    extra["headers"] = {"x-trace": {"id": "1"}, **plain["headers"]}
    kw = {"catalog": EMP} if catalog else {}
    want = cdcfast.reference.decode(line(plain), format="qlik", **kw)
    for dec in (cdcfast, cdcfast.reference):
        got = dec.decode(line(extra), format="qlik", **kw)
        assert got.drop_columns(["source"]).to_pylist() == \
            want.drop_columns(["source"]).to_pylist()
