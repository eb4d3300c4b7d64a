"""`debezium` decoded from the seed's examples and from real connector output (peer-data),
with the native decoder and the reference alike: exact values, positions and error texts."""
from __future__ import annotations

import base64
import datetime as dt
import decimal
import json
import re

import pyarrow as pa
import pytest

import cdcfast
import cdcfast.reference
from cdcfast import Catalog, DecodeError
from conftest import shared_path

UTC = dt.timezone.utc

DECODERS = [pytest.param(cdcfast, id="native"), pytest.param(cdcfast.reference, id="reference")]

CUSTOMERS = Catalog.from_dict({"tables": [{
    "schema": "MYSCHEMA", "table": "CUSTOMERS", "key": ["ID"], "columns": [
        {"name": "ID", "type": "INTEGER", "nullable": False},
        {"name": "FIRST_NAME", "type": "VARCHAR(255)", "nullable": False},
        {"name": "LAST_NAME", "type": "VARCHAR(255)", "nullable": False},
        {"name": "EMAIL", "type": "VARCHAR(255)", "nullable": False}]}]})


def us(t: int) -> dt.datetime:
    return dt.datetime(1970, 1, 1, tzinfo=UTC) + dt.timedelta(microseconds=t)


# -- the seed's examples --------------------------------------------------------------------

def seed_text() -> str:
    """The seed document (../shared/seeds; the test skips without it)."""
    return shared_path("seeds", "debezium-db2-connector.txt").read_text(encoding="utf-8")


def seed_block(marker: str) -> str:
    """The JSON example that follows `marker` in the seed, as printed there: from its first
    line `{` to the matching `}` at the start of a line, callouts `(1)` removed."""
    text = seed_text()
    at = text.index(marker)
    start = text.index("\n{\n", at) + 1
    end = text.index("\n}\n", start) + 2
    return re.sub(r"[ \t]+\(\d+\)$", "", text[start:end], flags=re.M)


def corrected(block: str) -> str:
    """The seed's example made valid JSON: no trailing commas."""
    return re.sub(r",(\s*[}\]])", r"\1", block)


# the seed's create, update and delete examples (read when a test asks: never at import)
def seed_create() -> str:
    return seed_block("shows the value portion of a change event that the connector generates "
                      "for an operation that creates data")


def seed_update() -> str:
    return seed_block("Here is an example of a change event value in an event that the "
                      "connector generates for an update")


def seed_delete() -> str:
    return seed_block("The event value payload in a delete event for the sample customers "
                      "table looks like this")


def without_schema_placeholder(block: str) -> str:
    """The update and delete examples print the schema as `{ ... }` (the delete example adds
    a stray `},`): drop that line, keep the payload."""
    block = block.replace('  "schema": { ... },\n  },\n', "")
    return block.replace('  "schema": { ... },\n', "")


@pytest.mark.parametrize("dec", DECODERS)
def test_seed_create_with_its_schema(dec):
    doc = corrected(seed_create())
    t = dec.decode(doc.encode(), format="debezium", catalog=CUSTOMERS)
    assert t.num_rows == 1
    r = t.to_pylist()[0]
    assert r["_error"] is None and r["_corrupt_record"] is None
    assert (r["op"], r["source_op"], r["schema"], r["table"]) == ("c", "c", "MYSCHEMA",
                                                                  "CUSTOMERS")
    assert r["before"] is None
    assert r["after"] == {"ID": 1005, "FIRST_NAME": "john", "LAST_NAME": "doe",
                          "EMAIL": "john.doe@example.org"}
    assert r["commit_ts"] == r["change_ts"] == us(1559729468470476)      # source.ts_us
    assert r["change_pos"] == bytes.fromhex("00000027" "00000758" "0003")
    assert r["commit_pos"] == bytes.fromhex("00000027" "00000758" "0005")
    assert r["changed"] == dict.fromkeys(r["after"], True)
    assert r["present"] == dict.fromkeys(r["after"], True)
    assert r["txid"] is None and r["seq"] == 0
    assert r["source"] == {
        "version": "3.0.4.Final", "connector": "db2", "name": "myconnector",
        "db": "mydatabase", "snapshot": "false", "processed_ts": us(1559729471739762),
        "change_lsn": "00000027:00000758:0003", "commit_lsn": "00000027:00000758:0005",
        "data_collection_order": None, "event_count": None, "data_collections": None}


@pytest.mark.parametrize("dec", DECODERS)
def test_seed_create_without_catalog_reads_the_embedded_schema(dec):
    t = dec.decode(corrected(seed_create()).encode(), format="debezium")
    assert t.schema.field("after").type == pa.struct(
        [("ID", pa.int32()), ("FIRST_NAME", pa.string()), ("LAST_NAME", pa.string()),
         ("EMAIL", pa.string())])
    assert t.column("after").to_pylist()[0]["EMAIL"] == "john.doe@example.org"


@pytest.mark.parametrize("dec", DECODERS)
def test_seed_create_as_printed_is_bad_input(dec):
    """The seed prints a trailing comma after the last field of the source schema's field
    list and after `commit_lsn`: not JSON. The first one is where the document breaks."""
    data = seed_create().encode()
    t = dec.decode(data, format="debezium", catalog=CUSTOMERS)
    assert t.num_rows == 1
    r = t.to_pylist()[0]
    first_comma = re.search(rb",(\s*)\]", data)
    pos = first_comma.end() - 1                     # the `]` a value should have preceded
    assert r["_error"] == f"invalid JSON: unexpected ']' (message 0, byte {pos})"
    assert r["_corrupt_record"] == data.rstrip()
    assert r["op"] is None and r["after"] is None
    with pytest.raises(DecodeError) as e:
        dec.decode(data, format="debezium", catalog=CUSTOMERS, mode="FAILFAST")
    assert (e.value.message_index, e.value.byte_offset) == (0, pos)
    assert dec.decode(data, format="debezium", catalog=CUSTOMERS,
                      mode="DROPMALFORMED").num_rows == 0


@pytest.mark.parametrize("dec", DECODERS)
def test_seed_update_and_delete(dec):
    stream = (corrected(without_schema_placeholder(seed_update())) + "\n"
              + corrected(without_schema_placeholder(seed_delete())) + "\n").encode()
    d = dec.Decoder("debezium", catalog=CUSTOMERS)
    t = d.decode(stream)
    assert d.last_stats["records"] == 2 and d.last_stats["errors"] == 0
    up, de = t.to_pylist()
    assert up["op"] == "u" and de["op"] == "d"
    assert up["before"]["EMAIL"] == "john.doe@example.org"
    assert up["after"]["EMAIL"] == "noreply@example.org"
    assert up["changed"] == {"ID": False, "FIRST_NAME": False, "LAST_NAME": False,
                             "EMAIL": True}
    assert up["commit_pos"] == bytes.fromhex("0000002700000ac00007")
    assert up["commit_ts"] == us(1559729995937497)
    assert de["before"] == up["after"] and de["after"] is None
    assert de["changed"] == dict.fromkeys(de["before"], False)
    assert de["present"] == dict.fromkeys(de["before"], True)
    assert de["change_pos"] == bytes.fromhex("0000002700000db00005")
    assert [up["seq"], de["seq"]] == [0, 1]


@pytest.mark.parametrize("dec", DECODERS)
def test_seed_transaction_metadata(dec):
    text = seed_text()
    at = text.index("Transaction boundary events contain the following fields")
    begin = text[text.index("\n{\n", at) + 1:]
    begin, end = begin[:begin.index("\n}\n") + 2], begin[begin.index("\n}\n") + 3:]
    end = end[end.index("{"):end.index("\n}\n") + 2]
    enrich = seed_block("Following is an example of a message:")
    enrich = enrich.replace('  "source": {\n...\n  },\n',
                            '  "source": {"schema": "MYSCHEMA", "table": "CUSTOMERS"},\n')
    stream = "\n".join([begin, enrich, end]).encode()
    cat = Catalog.from_dict({"tables": [{"schema": "MYSCHEMA", "table": "CUSTOMERS",
                                         "columns": [{"name": "pk", "type": "BIGINT"},
                                                     {"name": "aa", "type": "BIGINT"}]}]})
    h = dec.headers(stream, format="debezium", catalog=cat)
    rows = h.to_pylist()
    assert [r["op"] for r in rows] == ["begin", "c", "commit"]
    assert [r["source_op"] for r in rows] == ["BEGIN", "c", "END"]
    assert [r["txid"] for r in rows] == ["00000025:00000d08:0025"] * 3
    assert rows[0]["commit_ts"] == us(1486500577125000)
    assert rows[2]["commit_ts"] == us(1486500577691000)
    assert rows[0]["schema"] is None and rows[0]["table"] is None
    assert rows[2]["source"]["event_count"] == 2
    assert json.loads(rows[2]["source"]["data_collections"]) == [
        {"data_collection": "testDB.dbo.tablea", "event_count": 1},
        {"data_collection": "testDB.dbo.tableb", "event_count": 1}]
    assert rows[0]["source"]["event_count"] is None
    # numeric strings are numbers: total_order "1" is the seq; ts_us "…875" the processing time
    assert rows[1]["seq"] == 1 and rows[1]["source"]["data_collection_order"] == 1
    assert rows[1]["source"]["processed_ts"] == us(1580390884335875)
    assert [r["seq"] for r in rows] == [0, 1, 2]
    assert all(r["_error"] is None for r in rows)
    t = dec.decode(stream, format="debezium", catalog=cat)
    assert t.to_pylist()[0]["after"] == {"pk": 2, "aa": 1}
    d = dec.Decoder("debezium", catalog=cat)
    d.decode(stream)
    assert d.last_stats["control"] == 2 and d.last_stats["events"] == 1


@pytest.mark.parametrize("dec", DECODERS)
def test_seed_schema_change_event_is_ddl(dec):
    block = seed_block("The following example shows a message in the schema change topic")
    block = block.replace('  "schema": {\n  ...\n  },\n', "")
    h = dec.headers(block.encode(), format="debezium")
    (r,) = h.to_pylist()
    assert (r["op"], r["source_op"], r["schema"], r["table"]) == ("ddl", "CREATE", "DB2INST1",
                                                                  "CUSTOMERS")
    assert r["commit_pos"] == bytes.fromhex("0000002500000d9800a2") and r["change_pos"] is None
    assert r["commit_ts"] == us(0) and r["source"]["snapshot"] == "true"
    assert r["_error"] is None
    assert dec.decode_tables(block.encode(), format="debezium") == {}


# -- peer data: real connector output -------------------------------------------------------

def _peer(name: str) -> bytes:
    """A file of ../shared/peer-data/debezium (the test skips without it)."""
    return shared_path("peer-data", "debezium", *name.split("/")).read_bytes()


PRODUCTS = [{"name": "id", "type": "INTEGER", "nullable": False},
            {"name": "name", "type": "VARCHAR(255)", "nullable": False},
            {"name": "description", "type": "VARCHAR(512)"},
            {"name": "weight", "type": "DOUBLE"}]


@pytest.mark.parametrize("dec", DECODERS)
@pytest.mark.parametrize("name,table,catalog", [
    ("flink/debezium-data-schema-include.txt", "products", None),
    ("flink/debezium-data-schema-exclude.txt", "products",
     {"tables": [{"table": "products", "columns": PRODUCTS}]}),
    ("flink/debezium-postgres-data-schema-include.txt", "inventory.products", None),
    ("flink/debezium-postgres-data-schema-exclude.txt", "inventory.products",
     {"tables": [{"schema": "inventory", "table": "products", "columns": PRODUCTS}]}),
    ("flink/debezium-postgres-data-replica-identity.txt", "inventory.products",
     {"tables": [{"schema": "inventory", "table": "products", "columns": PRODUCTS}]}),
])
def test_flink_files(dec, name, table, catalog):
    data = _peer(name)
    d = dec.Decoder("debezium", catalog=catalog)
    t = d.decode(data, table=table)
    assert d.last_stats["errors"] == 0 and d.last_stats["records"] == 16
    assert t.num_rows == 16
    want = [json.loads(line) for line in data.decode().splitlines()]
    want = [w.get("payload", w) for w in want]
    for r, w in zip(t.to_pylist(), want):
        assert r["op"] == w["op"] and r["_error"] is None
        for img in ("before", "after"):
            if w[img] is None:
                assert r[img] is None
            else:
                assert r[img] == w[img]       # ints, text, doubles exactly as sent
        assert r["commit_ts"] == us(w["source"]["ts_ms"] * 1000)
        assert r["source"]["processed_ts"] == us(w["ts_ms"] * 1000)
        assert r["source"]["snapshot"] == str(w["source"]["snapshot"]).lower()
    ops = [r["op"] for r in t.to_pylist()]
    if "replica" in name:
        rows = t.to_pylist()
        ups = [r for r in rows if r["op"] == "u"]
        assert ups and all(r["before"] is None and r["changed"] is None for r in ups)
        assert all(r["present"] == dict.fromkeys(r["after"], True) for r in ups)
        (de,) = [r for r in rows if r["op"] == "d"]
        assert de["before"] is None and de["after"] is None
        assert de["present"] is None and de["changed"] == dict.fromkeys(de["changed"], False)
    else:
        assert ops.count("u") == 4 and ops.count("d") == 1


@pytest.mark.parametrize("dec", DECODERS)
def test_db2_connector_2_6_insert(dec):
    t = dec.decode(_peer("db2/db2_cdc-customers-insert.json"), format="debezium")
    (r,) = t.to_pylist()
    assert r["_error"] is None
    assert (r["schema"], r["table"], r["op"]) == ("DB2INST1", "CUSTOMERS", "c")
    assert r["after"] == {"ID": 1006, "FIRST_NAME": "Jimmy", "LAST_NAME": "Page",
                          "EMAIL": "zoso@zep.com"}
    assert r["commit_ts"] == us(1736898381548533)
    assert r["commit_pos"] == bytes.fromhex("0000000000001e36000000000004a1b4")
    assert r["change_pos"] == bytes.fromhex("0000000000000000000000000446140f")
    assert r["source"]["processed_ts"] == us(1736898381548812)
    assert t.schema.field("after").type.field("ID").type == pa.int32()


@pytest.mark.parametrize("dec", DECODERS)
def test_db2_connector_1_3_outbox_row(dec):
    cat = {"tables": [{"schema": "DB2INST1", "table": "ORDEREVENTS", "columns": [
        {"name": "ID", "type": "VARCHAR(16) FOR BIT DATA", "nullable": False},
        {"name": "AGGREGATETYPE", "type": "VARCHAR(255)"},
        {"name": "AGGREGATEID", "type": "VARCHAR(255)"},
        {"name": "TYPE", "type": "VARCHAR(255)"},
        {"name": "TIMESTAMP", "type": "TIMESTAMP"},
        {"name": "PAYLOAD", "type": "VARCHAR(4000)"}]}]}
    t = dec.decode(_peer("db2/vaccine-order-mgr-orderevents.value.json"), format="debezium",
                   catalog=cat)
    (r,) = t.to_pylist()
    assert r["_error"] is None and r["op"] == "r"
    a = r["after"]
    assert a["ID"] == base64.b64decode("lvz4gYs/Q+aSqKmWjVGMXg==")
    assert a["TIMESTAMP"] == dt.datetime(2020, 11, 13, 21, 54, 0, 331350)
    assert json.loads(a["PAYLOAD"])["deliveryLocation"] == "London"
    assert r["source"]["snapshot"] == "last"
    assert r["change_pos"] is None
    assert r["commit_pos"] == bytes.fromhex("000000000000150f0000000000048fca")


@pytest.mark.parametrize("dec", DECODERS)
def test_tiflow_all_types_row(dec):
    data = _peer("tiflow/datatype.dbz.json")
    d = dec.Decoder("debezium")
    t = d.decode(data)
    (r,) = t.to_pylist()
    a = r["after"]
    # the one error the file holds: MySQL's TIME is an interval, -12:34:56.123456 is no time
    # of day (SPEC §5.3)
    at = data.index(b"-45296123456")
    assert r["_error"] == ("after.col_t_neg: '-45296123456' is not "
                           f"io.debezium.time.MicroTime (message 0, byte {at})")
    assert a["col_t_neg"] is None and d.last_stats["errors"] == 1
    assert a["col_d_1000"] == dt.date(1000, 1, 1) and a["col_d_9999"] == dt.date(9999, 12, 31)
    assert a["col_d_0000"] is None
    assert a["col_dt_fsp_1"] == dt.datetime(2023, 11, 30, 12, 34, 56, 100000)
    assert a["col_dt_fsp_4"] == dt.datetime(2023, 11, 30, 12, 34, 56, 123500)
    assert a["col_t_fsp_6"] == dt.time(12, 34, 56, 123456)
    assert a["col_ts_fsp_5"] == dt.datetime(2023, 11, 30, 12, 34, 56, 123460, tzinfo=UTC)
    assert a["col_bit_1"] is True and a["col_bit_60"] == b"\x10" + bytes(7)
    assert a["col_decimal"] == 12345.12345 and a["col_float"] == pytest.approx(12345.123)
    assert t.schema.field("after").type.field("col_float").type == pa.float32()
    assert a["col_bigint_unsigned"] == -1 and a["col_int"] == -2 ** 31
    assert a["col_varbinary"] == "Zm9v"             # binary.handling.mode=base64: a string
    assert a["col_enum_invalid"] == "" and a["col_json"] == '["foo"]'
    assert a["col_y"] == 2023
    assert r["schema"] is None and r["table"] == "foo"


def test_decimal_variants_exact():
    """Decimal as base64 at its scale, as a JSON number (decimal.handling.mode=double, or a
    NUMERIC writer), as text; VariableScaleDecimal as exact text — never through a double."""
    fields = [
        {"type": "bytes", "name": "org.apache.kafka.connect.data.Decimal", "field": "A",
         "parameters": {"scale": "2", "connect.decimal.precision": "31"}},
        {"type": "double", "field": "B"},
        {"type": "struct", "name": "io.debezium.data.VariableScaleDecimal", "field": "C",
         "fields": [{"type": "int32", "field": "scale"}, {"type": "bytes", "field": "value"}]},
    ]
    schema = {"type": "struct", "fields": [
        {"type": "struct", "fields": fields, "field": "before", "optional": True},
        {"type": "struct", "fields": fields, "field": "after", "optional": True}]}
    big = 10 ** 30 - 1
    raw = base64.b64encode(big.to_bytes(13, "big", signed=True)).decode()
    neg = base64.b64encode((-12345).to_bytes(2, "big", signed=True)).decode()
    msg = json.dumps({"schema": schema, "payload": {
        "before": None, "after": {"A": raw, "B": 0.1, "C": {"scale": 3, "value": neg}},
        "source": {"table": "T"}, "op": "c"}})
    for dec in (cdcfast, cdcfast.reference):
        t = dec.decode([msg], format="debezium")
        a = t.column("after").to_pylist()[0]
        assert t.schema.field("after").type.field("A").type == pa.decimal128(31, 2)
        assert a["A"] == decimal.Decimal(f"{big}E-2")
        assert a["B"] == 0.1 and a["C"] == "-12.345"
    cat = {"tables": [{"table": "T", "columns": [{"name": "A", "type": "DECIMAL(31,2)"},
                                                 {"name": "B", "type": "DECIMAL(5,1)"},
                                                 {"name": "C", "type": "DECIMAL(9,4)"}]}]}
    for dec in (cdcfast, cdcfast.reference):
        a = dec.decode([msg], format="debezium", catalog=cat).column("after").to_pylist()[0]
        assert a == {"A": decimal.Decimal(f"{big}E-2"), "B": decimal.Decimal("0.1"),
                     "C": decimal.Decimal("-12.3450")}


# -- framing, tombstones, bad input ---------------------------------------------------------

T_CAT = Catalog.from_dict({"tables": [{"schema": "S", "table": "T", "columns": [
    {"name": "ID", "type": "INTEGER", "nullable": False},
    {"name": "AMOUNT", "type": "DECIMAL(9,2)"},
    {"name": "NAME", "type": "VARCHAR(20)"},
    {"name": "TS", "type": "TIMESTAMP"},
    {"name": "D", "type": "DATE"}]}]})


def event(op="c", before=None, after=None, **extra) -> str:
    p = {"before": before, "after": after,
         "source": {"version": "2.6.2.Final", "connector": "db2", "name": "n", "ts_ms": 1000,
                    "snapshot": "false", "db": "DB", "schema": "S", "table": "T",
                    "change_lsn": "00000001:00000002:0003", "commit_lsn": None},
         "op": op, "ts_ms": 2000}
    p.update(extra)
    return json.dumps(p)


ROW = {"ID": 1, "AMOUNT": "AMM=", "NAME": "a", "TS": 1700000000123456, "D": 19000}


@pytest.mark.parametrize("dec", DECODERS)
def test_tombstones_and_message_forms(dec):
    msgs = [event(after=ROW), None, "", "  \n", "null", '{"schema":null,"payload":null}',
            event("d", before=ROW).encode()]
    d = dec.Decoder("debezium", catalog=T_CAT)
    t = d.decode(msgs)
    assert t.column("op").to_pylist() == ["c", "d"]
    assert t.column("seq").to_pylist() == [0, 1]      # tombstones take no ordinal
    assert d.last_stats["tombstones"] == 5 and d.last_stats["records"] == 2
    assert t.column("after").to_pylist()[0] == {
        "ID": 1, "AMOUNT": decimal.Decimal("1.95"), "NAME": "a",
        "TS": dt.datetime(2023, 11, 14, 22, 13, 20, 123456), "D": dt.date(2022, 1, 8)}
    pa_msgs = pa.array([m.encode() if isinstance(m, str) else m for m in msgs], pa.binary())
    assert dec.decode(pa_msgs, format="debezium", catalog=T_CAT).equals(t)


@pytest.mark.parametrize("dec", DECODERS)
def test_stream_forms(dec):
    one = event(after=ROW)
    pretty = json.dumps(json.loads(one), indent=2)
    stream = f"{one}\n{pretty}\n  {one} {one}\n\n".encode()
    t = dec.decode(stream, format="debezium", catalog=T_CAT)
    assert t.num_rows == 4 and t.column("_error").null_count == 4
    assert t.column("seq").to_pylist() == [0, 1, 2, 3]


@pytest.mark.parametrize("dec", DECODERS)
@pytest.mark.parametrize("bad,reason,where", [
    (b'{"op":"c",}', "unexpected '}'", 10),
    (b'{"op":"c"', "truncated document", 9),
    (b'{"op":"c\x01"}', "control character in string", 8),
    (b'{"op":"\\x"}', "invalid escape", 7),
    (b'{"op":01}', "invalid number", 6),
    (b'{"op":"\xff"}', "invalid UTF-8", 7),
    (b'{"op":NaN}', "unexpected 'N'", 6),
    (b'[1,2]', "the document is not an object", 0),
    (b'"text"', "the document is not an object", 0),
])
def test_corrupt_documents(dec, bad, reason, where):
    good = event(after=ROW).encode()
    stream = good + b"\n" + bad + b"\n" + good + b"\n"
    t = dec.decode(stream, format="debezium", catalog=T_CAT)
    rows = t.to_pylist()
    assert [r["op"] for r in rows] == ["c", None, "c"]
    at = len(good) + 1 + where
    assert rows[1]["_error"] == f"invalid JSON: {reason} (message 0, byte {at})"
    assert rows[1]["_corrupt_record"] == bad
    assert rows[1]["seq"] == 1 and rows[2]["seq"] == 2
    # as one message of an array: positions within the message
    t = dec.decode([good, bad, good], format="debezium", catalog=T_CAT)
    assert t.column("_error").to_pylist()[1] == f"invalid JSON: {reason} (message 1, byte {where})"


@pytest.mark.parametrize("dec", DECODERS)
def test_corrupt_document_resumes_at_next_line_object(dec):
    good = event(after=ROW).encode()
    stream = good + b'\n{"op": "c", "after": {"ID": 1\n  {"x": 1}\n' + good + b"\n"
    rows = dec.decode(stream, format="debezium", catalog=T_CAT).to_pylist()
    assert [r["op"] for r in rows] == ["c", None, "c"]
    assert rows[1]["_corrupt_record"] == b'{"op": "c", "after": {"ID": 1\n  {"x": 1}'


@pytest.mark.parametrize("dec", DECODERS)
def test_value_errors_name_field_and_byte(dec):
    bad = dict(ROW, AMOUNT="A$M=", D="x", NAME=7)
    msg = event(after=bad)
    rows = dec.decode([msg], format="debezium", catalog=T_CAT).to_pylist()
    at = msg.index('"A$M="')
    assert rows[0]["_error"] == f"after.AMOUNT: '\"A$M=\"' is not DECIMAL(9,2) (message 0, byte {at})"
    assert rows[0]["after"]["AMOUNT"] is None and rows[0]["after"]["D"] is None
    assert rows[0]["after"]["NAME"] == "7"          # a string column takes a number's text
    with pytest.raises(DecodeError) as e:
        dec.decode([msg], format="debezium", catalog=T_CAT, mode="FAILFAST")
    assert e.value.field == "after.AMOUNT" and e.value.byte_offset == at


@pytest.mark.parametrize("dec", DECODERS)
def test_header_errors_and_missing_table(dec):
    msg = event(after=ROW)
    msg = msg.replace('"ts_ms": 1000', '"ts_ms": "soon"')
    (r,) = dec.decode([msg], format="debezium", catalog=T_CAT).to_pylist()
    at = msg.index('"soon"')
    assert r["_error"] == f"source.ts_ms: '\"soon\"' is not an integer (message 0, byte {at})"
    assert r["commit_ts"] is None and r["after"]["ID"] == 1
    nosrc = json.dumps({"before": None, "after": ROW, "op": "c"})
    d = dec.Decoder("debezium", catalog=T_CAT)
    (r,) = d.decode([nosrc], table="S.T").to_pylist()
    assert r["_error"] == "source.table: missing (message 0, byte 0)"
    assert r["_corrupt_record"] == nosrc.encode()


@pytest.mark.parametrize("dec", DECODERS)
def test_duplicate_keys(dec):
    msg = event(after=ROW).replace('"NAME": "a"', '"NAME": "a", "NAME": "b"')
    (r,) = dec.decode([msg], format="debezium", catalog=T_CAT).to_pylist()
    at = msg.index('"NAME": "b"')
    assert r["_error"] == f"after.NAME: given twice (message 0, byte {at})"
    assert r["after"]["NAME"] is None


@pytest.mark.parametrize("dec", DECODERS)
def test_missing_and_extra_columns(dec):
    d = dec.Decoder("debezium", catalog=T_CAT)
    t = d.decode([event(after={"ID": 3, "NAME": "x", "EXTRA": 1})])
    (r,) = t.to_pylist()
    assert r["after"] == {"ID": 3, "AMOUNT": None, "NAME": "x", "TS": None, "D": None}
    assert r["present"] == {"ID": True, "AMOUNT": False, "NAME": True, "TS": False,
                            "D": False}
    assert d.last_stats["extra_columns"] == 1 and r["_error"] is None


def test_no_catalog_no_schema_is_refused():
    for dec in (cdcfast, cdcfast.reference):
        with pytest.raises(ValueError, match="catalog"):
            dec.decode([event(after=ROW)], format="debezium")
        h = dec.headers([event(after=ROW)], format="debezium")
        assert h.column("table").to_pylist() == ["T"]


def test_options_are_checked():
    with pytest.raises(ValueError, match="decimal_handling"):
        cdcfast.Decoder("debezium", decimal_handling="exact")
    with pytest.raises(ValueError, match="unknown option"):
        cdcfast.Decoder("debezium", tombstones=True)


@pytest.mark.parametrize("dec", DECODERS)
@pytest.mark.parametrize("handling,value,want", [
    ("precise", '"AMM="', "1.95"), ("string", '"1234.50"', "1234.50"),
    ("double", "1234.5", "1234.50"), ("precise", "7.25", "7.25"),
])
def test_decimal_handling_without_schema(dec, handling, value, want):
    msg = event(after={"ID": 1}).replace('"after": {"ID": 1}',
                                          f'"after": {{"ID": 1, "AMOUNT": {value}}}')
    t = dec.decode([msg], format="debezium", catalog=T_CAT, decimal_handling=handling)
    assert t.column("after").to_pylist()[0]["AMOUNT"] == decimal.Decimal(want)


@pytest.mark.parametrize("dec", DECODERS)
@pytest.mark.parametrize("mode,ctype,value,want", [
    ("adaptive", "TIMESTAMP(3)", 1000, dt.datetime(1970, 1, 1, 0, 0, 1)),
    ("adaptive", "TIMESTAMP(6)", 1000, dt.datetime(1970, 1, 1, 0, 0, 0, 1000)),
    ("adaptive", "TIMESTAMP(9)", -1, dt.datetime(1969, 12, 31, 23, 59, 59, 999999)),
    ("connect", "TIMESTAMP(6)", 1000, dt.datetime(1970, 1, 1, 0, 0, 1)),
    ("adaptive", "TIME(0)", 1000, dt.time(0, 0, 1)),
    ("adaptive", "TIME(6)", 1000, dt.time(0, 0, 0, 1000)),
    ("adaptive_time_microseconds", "TIME(0)", 1000, dt.time(0, 0, 0, 1000)),
    ("adaptive", "TIME(9)", 1999, dt.time(0, 0, 0, 1)),
])
def test_time_precision_without_schema(dec, mode, ctype, value, want):
    cat = {"tables": [{"schema": "S", "table": "T", "columns": [{"name": "X", "type": ctype}]}]}
    t = dec.decode([event(after={"X": value})], format="debezium", catalog=cat,
                   time_precision=mode)
    assert t.column("after").to_pylist()[0]["X"] == want


@pytest.mark.parametrize("dec", DECODERS)
@pytest.mark.parametrize("name", ["db2/vaccine-order-mgr-orderevents.key.json",
                                  "tiflow/datatype.dbz.key.json"])
def test_message_keys_are_flagged_not_dropped(dec, name):
    """A Kafka message key is no change event (no op, no source): in a value stream it is an
    unattributable record, flagged, never dropped in silence (docs/debezium.md)."""
    data = _peer(name)
    d = dec.Decoder("debezium")
    t = d.decode_tables(data)
    (r,) = t[None].to_pylist()
    prefix = "payload." if b'"payload"' in data else ""
    assert r["_error"] == f"{prefix}source.table: missing (message 0, byte 0)"
    assert r["_corrupt_record"] == data.strip()
    assert d.last_stats["records"] == 1 and d.last_stats["errors"] == 1


@pytest.mark.parametrize("envelope", [False, True])
@pytest.mark.parametrize("total", [512, 513])
def test_nesting_limit_counts_from_the_document(envelope, total):
    """Nesting is counted from the document's root in both decoders (512 allowed), also for a
    value deep inside a row image, which the native walk reads without the scanner."""
    cat = {"tables": [{"schema": "S", "table": "T", "columns": [
        {"name": "ID", "type": "INTEGER"}, {"name": "J", "type": "VARCHAR(9000)"}]}]}
    k = total - (3 if envelope else 2)
    p = ('{"before":null,"after":{"ID":1,"J":%s},"source":{"schema":"S","table":"T"},'
         '"op":"c"}' % ("[" * k + "]" * k))
    doc = '{"schema":null,"payload":%s}' % p if envelope else p
    a = cdcfast.decode([doc], format="debezium", catalog=cat)
    b = cdcfast.reference.decode([doc], format="debezium", catalog=cat)
    assert a.equals(b)
    err = a.column("_error").to_pylist()[0]
    if total == 512:
        assert err is None and a.column("after").to_pylist()[0]["J"].count("[") == k
    else:
        at = doc.index("[" * (k - (total - 512) + 1) + "]") + k - (total - 512)
        assert err == f"invalid JSON: nesting deeper than 512 (message 0, byte {at})"


@pytest.mark.parametrize("dec", DECODERS)
def test_requested_table_without_catalog_known_before_its_first_event(dec):
    """decode(table=…) of a table the catalog lacks: an unattributable record before its first
    change event already goes into its result, whose columns that event's embedded schema
    gives (the native decoder finds it with a probe of the kernel, not with Python)."""
    from cdcfast.encode import generate
    data, _ = generate("debezium", 30, table_width=5, seed=3, tables=2, schemas=True)
    docs = data.split(b"\n")
    stream = b'{"op": "c", "after": {"ID": 1}}\n' + b"\n".join(docs)
    t = dec.decode(stream, format="debezium", table="GEN.TABLE_2")
    assert t.column("_error").to_pylist()[0] == "source.table: missing (message 0, byte 0)"
    assert t.schema.field("after").type.num_fields == 5
    assert t.num_rows == 1 + sum(b'"table":"TABLE_2"' in d and b'"op":' in d for d in docs)
    with pytest.raises(ValueError, match="neither in the catalog nor in the input"):
        dec.decode(stream, format="debezium", table="GEN.TABLE_9")
