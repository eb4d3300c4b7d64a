"""The `debezium` encoder and generator on their own (no decoder): the seed's and a real Db2
2.6.2 connector's messages, value encodings per connector mode, the envelope schema,
transaction metadata, tombstones, and the generator's promises."""
import base64
import datetime as dt
import decimal
import json
import struct

import pyarrow as pa
import pytest

from cdcfast.catalog import Catalog
from cdcfast.encode import encode as encode_any, events as events_any, generate as generate_any
from cdcfast.encode.debezium import encode, events, generate
from conftest import shared_path

UTC = dt.timezone.utc
D = decimal.Decimal

CUSTOMERS = [{"name": "ID", "type": "INTEGER", "nullable": False},
             {"name": "FIRST_NAME", "type": "VARCHAR(255)", "nullable": False},
             {"name": "LAST_NAME", "type": "VARCHAR(255)", "nullable": False},
             {"name": "EMAIL", "type": "VARCHAR(255)", "nullable": False}]


def catalog_of(*columns, schema="S", table="T"):
    """A one-table catalog; ``columns`` are (name, type) pairs."""
    return Catalog.from_dict({"tables": [{"schema": schema, "table": table, "columns": [
        {"name": n, "type": t} for n, t in columns]}]})


def at_us(n):
    return dt.datetime(1970, 1, 1, tzinfo=UTC) + dt.timedelta(microseconds=n)


def change(after=None, before=None, op="c", schema="S", table="T", **more):
    return {"op": op, "schema": schema, "table": table, "before": before, "after": after,
            **more}


def payload(data):
    """The one document's payload (either form)."""
    doc = json.loads(data)
    return doc["payload"] if "payload" in doc else doc


def value(ctype, v, **options):
    """The JSON value written for ``v`` in a column of type ``ctype``."""
    return payload(encode([change({"C": v})], catalog_of(("C", ctype)), **options))["after"]["C"]


def raw_value(ctype, v, **options):
    """The JSON text written for ``v`` (the bare payload: `"C":` is followed by it)."""
    text = encode([change({"C": v})], catalog_of(("C", ctype)), **options).decode()
    start = text.index('"after":{"C":') + len('"after":{"C":')
    return text[start:text.index(',"source"', start) - 1]


def documents(data):
    """Parse a stream of JSON documents (one per line or pretty-printed); each must start
    with `{` (or be the tombstone `null`) at the start of a line."""
    text = data.decode("utf-8")
    dec = json.JSONDecoder()
    out, i = [], 0
    while True:
        while i < len(text) and text[i] in " \n":
            i += 1
        if i == len(text):
            return out
        assert i == 0 or text[i - 1] == "\n"
        assert text[i] in "{n"
        doc, i = dec.raw_decode(text, i)
        out.append(doc)


# -- real messages -------------------------------------------------------------------------

def test_seed_create_event():
    """seeds/debezium-db2-connector.txt, "Change event values", create event: the payload
    values it shows (the seed's JSON has call-out marks and trailing commas, so its values
    are copied here). Our `snapshot` is the string 2.x writes (the seed shows `false`)."""
    catalog = Catalog.from_dict({"tables": [{"schema": "MYSCHEMA", "table": "CUSTOMERS",
                                             "key": ["ID"], "columns": CUSTOMERS}]})
    ev = {"op": "c", "schema": "MYSCHEMA", "table": "CUSTOMERS", "txid": None,
          "commit_ts": at_us(1559729468470476), "commit_pos": None, "change_pos": None,
          "before": None,
          "after": {"ID": 1005, "FIRST_NAME": "john", "LAST_NAME": "doe",
                    "EMAIL": "john.doe@example.org"},
          "source": {"version": "3.0.4.Final", "connector": "db2", "name": "myconnector",
                     "db": "mydatabase", "snapshot": "false",
                     "change_lsn": "00000027:00000758:0003",
                     "commit_lsn": "00000027:00000758:0005",
                     "processed_ts": at_us(1559729471739762)}}
    got = payload(encode([ev], catalog))
    assert got["before"] is None
    assert got["after"] == {"ID": 1005, "FIRST_NAME": "john", "LAST_NAME": "doe",
                            "EMAIL": "john.doe@example.org"}
    assert got["op"] == "c"
    assert (got["ts_ms"], got["ts_us"]) == (1559729471739, 1559729471739762)
    src = got["source"]
    assert src == {"version": "3.0.4.Final", "connector": "db2", "name": "myconnector",
                   "ts_ms": 1559729468470, "snapshot": "false", "db": "mydatabase",
                   "sequence": None, "ts_us": 1559729468470476,
                   "ts_ns": 1559729468470476000, "schema": "MYSCHEMA", "table": "CUSTOMERS",
                   "change_lsn": "00000027:00000758:0003",
                   "commit_lsn": "00000027:00000758:0005"}
    # the same LSNs from the positions' bytes (docs/debezium.md: the groups' digits as bytes)
    ev2 = {**ev, "source": {k: v for k, v in ev["source"].items() if not k.endswith("lsn")},
           "change_pos": bytes.fromhex("00000027000007580003"),
           "commit_pos": bytes.fromhex("00000027000007580005")}
    assert payload(encode([ev2], catalog))["source"] == src
    # the update and delete examples' shapes
    upd = {**ev, "op": "u", "before": ev["after"],
           "after": {**ev["after"], "EMAIL": "noreply@example.org"}}
    dele = {**ev, "op": "d", "before": upd["after"], "after": None}
    got_u, got_d = map(payload, encode([upd, dele], catalog).splitlines())
    assert got_u["before"]["EMAIL"] == "john.doe@example.org"
    assert got_u["after"]["EMAIL"] == "noreply@example.org"
    assert got_d["before"]["EMAIL"] == "noreply@example.org" and got_d["after"] is None


def test_real_db2_2_6_2_message():
    """peer-data db2_cdc: the whole document, schema included, as the real 2.6.2 connector
    wrote it (its payload ts_ns has digits below the µs we do not carry)."""
    real = json.loads(shared_path("peer-data", "debezium", "db2",
                                  "db2_cdc-customers-insert.json").read_text())
    catalog = Catalog.from_dict({"tables": [{"schema": "DB2INST1", "table": "CUSTOMERS",
                                             "columns": CUSTOMERS}]})
    ev = {"op": "c", "schema": "DB2INST1", "table": "CUSTOMERS", "txid": None,
          "commit_ts": at_us(1736898381548533),
          "commit_pos": bytes.fromhex("0000000000001e36000000000004a1b4"),
          "change_pos": bytes.fromhex("0000000000000000000000000446140f"),
          "before": None,
          "after": {"ID": 1006, "FIRST_NAME": "Jimmy", "LAST_NAME": "Page",
                    "EMAIL": "zoso@zep.com"},
          "source": {"version": "2.6.2.Final", "connector": "db2", "name": "db2server",
                     "db": "TESTDB", "snapshot": "false",
                     "processed_ts": at_us(1736898381548812)}}
    got = json.loads(encode([ev], catalog, schemas=True))
    assert got["schema"] == real["schema"]
    real["payload"]["ts_ns"] = 1736898381548812000
    assert got["payload"] == real["payload"]
    assert list(got["payload"]) == list(real["payload"])                # key order too
    assert list(got["payload"]["source"]) == list(real["payload"]["source"])
    assert got == json.loads(encode(pa.Table.from_pylist([ev]), catalog, schemas=True))


# -- value encodings -----------------------------------------------------------------------

@pytest.mark.parametrize("unscaled", [0, 1, -1, 127, 128, -128, -129, 10 ** 30 - 1,
                                      -(10 ** 30)])
def test_decimal_precise_is_minimal_twos_complement(unscaled):
    v = D(unscaled).scaleb(-2, decimal.Context(prec=50))
    raw = base64.b64decode(value("DECIMAL(31,2)", v), validate=True)
    assert int.from_bytes(raw, "big", signed=True) == unscaled
    shortest = next(n for n in range(1, 20) if -(1 << (8 * n - 1)) <= unscaled < 1 << (8 * n - 1))
    assert len(raw) == shortest


def test_decimal_precise_exact_bytes():
    assert value("DECIMAL(5,2)", D("0.00")) == "AA=="
    assert value("DECIMAL(5,2)", D("1.27")) == "fw=="
    assert value("DECIMAL(5,2)", D("1.28")) == "AIA="
    assert value("DECIMAL(5,2)", D("-1.28")) == "gA=="
    assert value("DECIMAL(5,2)", D("-1.29")) == "/38="
    assert value("DECIMAL(5,2)", D("1.5")) == "AJY="          # 150 at scale 2
    assert value("DECIMAL(5,2)", 3) == "ASw="                 # 300
    with pytest.raises(ValueError, match="after.C"):
        value("DECIMAL(5,2)", D("1.234"))      # nothing is rounded


def test_decimal_string_and_double_modes():
    assert value("DECIMAL(9,2)", D("1.5"), decimal_handling="string") == "1.50"
    assert value("DECIMAL(9,2)", D("-0.05"), decimal_handling="string") == "-0.05"
    assert value("DECIMAL(9,2)", D("-0.00"), decimal_handling="string") == "0.00"
    assert value("DECIMAL(5,0)", D("42"), decimal_handling="string") == "42"
    # double: a JSON number with the exact decimal text, never through a float
    assert raw_value("DECIMAL(31,8)", D("12345678901234567890.12345678"),
                     decimal_handling="double") == "12345678901234567890.12345678"
    assert raw_value("DECIMAL(9,2)", D("-7.1"), decimal_handling="double") == "-7.10"
    assert raw_value("DECIMAL(5,0)", D("7"), decimal_handling="double") == "7"
    with pytest.raises(ValueError):
        encode([], decimal_handling="exact")


def test_dates_before_and_after_1970():
    assert value("DATE", dt.date(1970, 1, 1)) == 0
    assert value("DATE", dt.date(1969, 12, 31)) == -1
    assert value("DATE", dt.date(2023, 11, 30)) == 19691
    assert value("DATE", dt.date(1000, 1, 1)) == -354285       # as peer-data tiflow's
    assert value("DATE", dt.date(9999, 12, 31)) == 2932896
    assert value("DATE", dt.date(1969, 12, 31), time_precision="connect") == -1


class Nanos(dt.datetime):
    """A datetime that carries the nanoseconds below its µs, as pandas.Timestamp does."""
    nanosecond = 0


def nanos(*fields, ns, tzinfo=None):
    v = Nanos(*fields, tzinfo=tzinfo)
    v.nanosecond = ns
    return v


@pytest.mark.parametrize("ctype, mode, expected", [
    ("TIMESTAMP(0)", "adaptive", 1701347696123),    # ms: the unit, not the column, cuts
    ("TIMESTAMP(3)", "adaptive", 1701347696123),
    ("TIMESTAMP", "adaptive", 1701347696123456),
    ("TIMESTAMP(6)", "adaptive_time_microseconds", 1701347696123456),
    ("TIMESTAMP(9)", "adaptive", 1701347696123456789),
    ("TIMESTAMP(12)", "adaptive", 1701347696123456789),
    ("TIMESTAMP(9)", "adaptive_time_microseconds", 1701347696123456789),
    ("TIMESTAMP(6)", "connect", 1701347696123),
    ("TIMESTAMP(9)", "connect", 1701347696123),
])
def test_timestamp_units(ctype, mode, expected):
    v = nanos(2023, 11, 30, 12, 34, 56, 123456, ns=789)
    assert value(ctype, v, time_precision=mode) == expected


def test_timestamps_are_wall_clock_and_floor_before_1970():
    assert value("TIMESTAMP", dt.datetime(1970, 1, 1)) == 0
    assert value("TIMESTAMP", dt.datetime(1969, 12, 31, 23, 59, 59, 999999)) == -1
    assert value("TIMESTAMP(3)", dt.datetime(1969, 12, 31, 23, 59, 59, 999000)) == -1
    assert value("TIMESTAMP(9)", dt.datetime(1969, 12, 31, 23, 59, 59, 999999)) == -1000
    # seed "Timestamp types": 2018-06-20 15:13:16.945104 -> 1529507596945 ms (UTC based)
    assert value("TIMESTAMP(3)", dt.datetime(2018, 6, 20, 15, 13, 16, 945000)) == 1529507596945


@pytest.mark.parametrize("ctype, mode, expected", [
    ("TIME", "adaptive", 45296000),
    ("TIME(3)", "adaptive", 45296123),
    ("TIME(6)", "adaptive", 45296123456),
    ("TIME(9)", "adaptive", 45296123456000),
    ("TIME", "adaptive_time_microseconds", 45296123456),
    ("TIME(9)", "adaptive_time_microseconds", 45296123456),
    ("TIME(6)", "connect", 45296123),
])
def test_time_units(ctype, mode, expected):
    v = dt.time(12, 34, 56, 0 if ctype == "TIME" and mode == "adaptive" else 123456)
    assert value(ctype, v, time_precision=mode) == expected


def test_zoned_timestamp_text():
    def zoned(v):
        return value("TIMESTAMP WITH TIME ZONE", v)

    plus2 = dt.timezone(dt.timedelta(hours=2))
    assert zoned(dt.datetime(2023, 11, 30, 14, 34, 56, 100000, tzinfo=plus2)) \
        == "2023-11-30T12:34:56.1Z"                 # in UTC, fraction digits only as needed
    assert zoned(dt.datetime(2023, 11, 30, 12, 34, 56, tzinfo=UTC)) == "2023-11-30T12:34:56Z"
    assert zoned(dt.datetime(2023, 11, 30, 12, 34, 56, 123450, tzinfo=UTC)) \
        == "2023-11-30T12:34:56.12345Z"
    assert zoned(dt.datetime(2023, 11, 30, 12, 34, 56)) == "2023-11-30T12:34:56Z"   # naive: UTC
    assert zoned(nanos(1960, 1, 2, 3, 4, 5, 6, tzinfo=UTC, ns=7)) \
        == "1960-01-02T03:04:05.000006007Z"


def test_floats():
    assert raw_value("REAL", 0.1) == "0.1"                # float32 shortest round trip
    assert raw_value("REAL", 0.10000000149011612) == "0.1"
    assert raw_value("REAL", 16777217.0) == "16777216.0"
    assert raw_value("REAL", 3.4028234663852886e38) == "3.4028235e+38"
    assert raw_value("REAL", 1.0) == "1.0"
    assert raw_value("DOUBLE", 0.1) == "0.1"
    assert raw_value("DOUBLE", 1e-20) == "1e-20"
    assert raw_value("DOUBLE", -0.0) == "-0.0"
    assert raw_value("DOUBLE", 2.0 ** 70) == "1.1805916207174113e+21"
    assert value("DOUBLE", float("nan")) == "NaN"           # the strings the decoder reads
    assert value("REAL", float("-inf")) == "-Infinity"


def test_binary_boolean_integers_and_decfloat():
    assert value("VARBINARY(8)", b"\x00\xff\x10") == "AP8Q"
    assert value("BLOB", b"") == ""
    assert value("CHAR(4) FOR BIT DATA", bytearray(b"abcd")) == "YWJjZA=="
    assert value("BOOLEAN", True) is True and value("BOOLEAN", False) is False
    assert value("BIGINT", -(1 << 63)) == -(1 << 63)
    assert value("SMALLINT", 7) == 7
    assert raw_value("DECFLOAT", D("1.2300E+5")) == '"1.2300E+5"'   # exact text


def test_strings_are_escaped():
    special = 'a"b\\c\nd\te\x01f\x1f \u2028 é中文 😀'
    text = raw_value("VARCHAR(80)", special)
    assert text == '"a\\"b\\\\c\\nd\\te\\u0001f\\u001f \u2028 é中文 😀"'
    assert json.loads(text) == special
    data = encode([change({"C": "😀"})], catalog_of(("C", "VARCHAR(4)")))
    assert "😀".encode("utf-8") in data                     # UTF-8, never \ud83d escapes
    assert value("XML", "<a x=\"1\"/>") == "<a x=\"1\"/>"
    assert value("CHAR(5)", "ab   ") == "ab   "


def test_lsn_text_from_bytes():
    def lsns(pos):
        src = payload(encode([change({"C": 1}, commit_pos=pos, change_pos=pos)],
                             catalog_of(("C", "INTEGER"))))["source"]
        assert src["change_lsn"] == src["commit_lsn"]
        return src["commit_lsn"]

    assert lsns(bytes.fromhex("00000027000007580003")) == "00000027:00000758:0003"
    text = lsns(bytes.fromhex("0000000000001e36000000000004a1b4"))
    assert text == "00000000:00001e36:000000000004a1b4"
    assert bytes.fromhex(text.replace(":", "")) == bytes.fromhex("0000000000001e36000000000004a1b4")
    assert lsns(bytes.fromhex("0102")) == "0102"
    assert lsns(None) is None


def test_images_header_fields_and_op_shapes():
    cat = catalog_of(("A", "INTEGER"), ("B", "VARCHAR(5)"))
    got = payload(encode([change({"A": 1}, op="u", before={"A": 0, "B": None})], cat))
    assert got["before"] == {"A": 0, "B": None}
    assert got["after"] == {"A": 1}                # a column not given is left out (present)
    assert (got["ts_ms"], got["ts_us"], got["transaction"]) == (None, None, None)
    assert got["source"]["connector"] == "db2" and got["source"]["snapshot"] == "false"
    trunc = payload(encode([change(op="t", before={"A": 1})], cat))
    assert trunc["before"] is None and trunc["after"] is None and trunc["op"] == "t"
    snap = payload(encode([change({"A": 1}, op="r", source={"snapshot": True})], cat))
    assert snap["source"]["snapshot"] == "true"
    with pytest.raises(ValueError, match="lacks"):
        encode([change({"A": 1, "Z": 2})], cat)
    with pytest.raises(ValueError, match="op"):
        encode([change({"A": 1}, op="x")], cat)
    with pytest.raises(ValueError, match="time_precision"):
        encode([], time_precision="nanos")


def test_mysql_style_table_without_schema():
    cat = Catalog.from_dict({"tables": [{"table": "products", "columns": [
        {"name": "id", "type": "INTEGER"}]}]})
    doc = json.loads(encode([change({"id": 1}, schema=None, table="products",
                                    source={"name": "dbserver1"})], cat, schemas=True))
    assert "schema" not in doc["payload"]["source"]
    assert doc["payload"]["source"]["table"] == "products"
    assert doc["schema"]["name"] == "dbserver1.products.Envelope"
    source_fields = [f["field"] for f in doc["schema"]["fields"][2]["fields"]]
    assert "schema" not in source_fields and "table" in source_fields


def test_without_catalog_types_come_from_python_values():
    evs = [change({"S": "x", "I": 5, "B": True, "F": 0.5, "M": D("1.5"), "Y": b"\x01",
                   "DA": dt.date(1969, 12, 31), "TS": dt.datetime(1970, 1, 1, 0, 0, 1),
                   "TZ": dt.datetime(2020, 1, 1, tzinfo=UTC), "T": dt.time(0, 0, 1), "N": None}),
           change({"S": None, "I": None, "B": None, "F": None, "M": D("-2.25"), "Y": None,
                   "DA": None, "TS": None, "TZ": None, "T": None, "N": None})]
    docs = [json.loads(line) for line in encode(evs, schemas=True).splitlines()]
    fields = {f["field"]: f for f in docs[0]["schema"]["fields"][1]["fields"]}
    assert [f["field"] for f in docs[0]["schema"]["fields"][1]["fields"]] == list(evs[0]["after"])
    assert fields["S"]["type"] == fields["N"]["type"] == "string"
    assert fields["I"]["type"] == "int64" and fields["B"]["type"] == "boolean"
    assert fields["F"]["type"] == "double" and fields["Y"]["type"] == "bytes"
    assert fields["M"]["parameters"] == {"scale": "2", "connect.decimal.precision": "3"}
    assert fields["DA"]["name"] == "io.debezium.time.Date"
    assert fields["TS"]["name"] == "io.debezium.time.MicroTimestamp"
    assert fields["T"]["name"] == "io.debezium.time.MicroTime"
    assert fields["TZ"]["name"] == "io.debezium.time.ZonedTimestamp"
    after = docs[0]["payload"]["after"]
    assert after == {"S": "x", "I": 5, "B": True, "F": 0.5, "M": "AJY=", "Y": "AQ==",
                     "DA": -1, "TS": 1000000, "TZ": "2020-01-01T00:00:00Z", "T": 1000000,
                     "N": None}
    assert base64.b64decode(docs[1]["payload"]["after"]["M"]) == (-225).to_bytes(2, "big",
                                                                                 signed=True)
    assert docs[0]["schema"] == docs[1]["schema"]


# -- schemas -------------------------------------------------------------------------------

ALL_TYPES = [("I", "INTEGER"), ("SI", "SMALLINT"), ("BI", "BIGINT"), ("DE", "DECIMAL(9,2)"),
             ("NU", "NUMERIC(31,5)"), ("R", "REAL"), ("DO", "DOUBLE"), ("CH", "CHAR(3)"),
             ("VC", "VARCHAR(20)"), ("CL", "CLOB"), ("X", "XML"), ("BN", "BINARY(4)"),
             ("VB", "VARBINARY(9)"), ("BL", "BLOB"), ("DA", "DATE"), ("T0", "TIME"),
             ("T6", "TIME(6)"), ("T9", "TIME(9)"), ("TS3", "TIMESTAMP(3)"), ("TS", "TIMESTAMP"),
             ("TS9", "TIMESTAMP(9)"), ("TZ", "TIMESTAMP WITH TIME ZONE"), ("BO", "BOOLEAN"),
             ("DF", "DECFLOAT(34)")]


def field_types(fields):
    return [(f["field"], f["type"], f.get("name"), f.get("parameters")) for f in fields]


@pytest.mark.parametrize("mode, decimals, time_names", [
    ("adaptive", "precise",
     [("T0", "int32", "io.debezium.time.Time"), ("T6", "int64", "io.debezium.time.MicroTime"),
      ("T9", "int64", "io.debezium.time.NanoTime"),
      ("TS3", "int64", "io.debezium.time.Timestamp"),
      ("TS", "int64", "io.debezium.time.MicroTimestamp"),
      ("TS9", "int64", "io.debezium.time.NanoTimestamp"),
      ("DA", "int32", "io.debezium.time.Date")]),
    ("adaptive_time_microseconds", "string",
     [("T0", "int64", "io.debezium.time.MicroTime"),
      ("T9", "int64", "io.debezium.time.MicroTime"),
      ("TS3", "int64", "io.debezium.time.Timestamp"),
      ("TS9", "int64", "io.debezium.time.NanoTimestamp")]),
    ("connect", "double",
     [("T0", "int32", "org.apache.kafka.connect.data.Time"),
      ("T9", "int32", "org.apache.kafka.connect.data.Time"),
      ("TS", "int64", "org.apache.kafka.connect.data.Timestamp"),
      ("TS9", "int64", "org.apache.kafka.connect.data.Timestamp"),
      ("DA", "int32", "org.apache.kafka.connect.data.Date")]),
])
def test_schema_lists_catalog_columns_with_connector_types(mode, decimals, time_names):
    cols = list(ALL_TYPES) + [("NN", "INTEGER")]
    cat = Catalog.from_dict({"tables": [{"schema": "S", "table": "T", "columns": [
        {"name": n, "type": t, "nullable": n != "NN"} for n, t in cols]}]})
    doc = json.loads(encode([change({"I": 1}, source={"name": "srv"})], cat, schemas=True,
                            time_precision=mode, decimal_handling=decimals))
    schema = doc["schema"]
    assert schema["name"] == "srv.S.T.Envelope" and schema["type"] == "struct"
    assert [f["field"] for f in schema["fields"]] == ["before", "after", "source", "op",
                                                      "ts_ms", "ts_us", "ts_ns", "transaction"]
    before, after, source = schema["fields"][:3]
    assert before["fields"] == after["fields"]
    assert before["name"] == after["name"] == "srv.S.T.Value" and before["optional"] is True
    assert [f["field"] for f in after["fields"]] == [n for n, _ in cols]
    assert [f["optional"] for f in after["fields"]] == [True] * len(ALL_TYPES) + [False]
    by = {f["field"]: f for f in after["fields"]}
    for name, type_, semantic in time_names:
        assert (by[name]["type"], by[name].get("name")) == (type_, semantic), name
    plain = {"I": "int32", "SI": "int16", "BI": "int64", "R": "float", "DO": "double",
             "CH": "string", "VC": "string", "CL": "string", "BN": "bytes", "VB": "bytes",
             "BL": "bytes", "BO": "boolean", "DF": "string", "NN": "int32"}
    for name, type_ in plain.items():
        assert (by[name]["type"], by[name].get("name")) == (type_, None), name
    assert (by["X"]["type"], by["X"]["name"]) == ("string", "io.debezium.data.Xml")
    assert (by["TZ"]["type"], by["TZ"]["name"]) == ("string", "io.debezium.time.ZonedTimestamp")
    if decimals == "precise":
        assert field_types([by["DE"], by["NU"]]) == [
            ("DE", "bytes", "org.apache.kafka.connect.data.Decimal",
             {"scale": "2", "connect.decimal.precision": "9"}),
            ("NU", "bytes", "org.apache.kafka.connect.data.Decimal",
             {"scale": "5", "connect.decimal.precision": "31"})]
    else:
        kind = "string" if decimals == "string" else "double"
        assert field_types([by["DE"], by["NU"]]) == [("DE", kind, None, None),
                                                     ("NU", kind, None, None)]
    assert source["name"] == "io.debezium.connector.db2.Source"
    assert schema["fields"][7]["name"] == "event.block"


def test_every_message_of_a_table_has_the_same_schema_text():
    data, catalog = generate(400, tables=2, table_width=30, schemas=True, seed=3)
    by_table = {}
    for line in data.decode().splitlines():
        schema_text = line[len('{"schema":'):line.index(',"payload":')]
        name = json.loads(schema_text)["name"]
        by_table.setdefault(name, set()).add(schema_text)
    assert sorted(by_table) == ["db2server.GEN.TABLE_1.Envelope",
                                "db2server.GEN.TABLE_2.Envelope",
                                "io.debezium.connector.common.TransactionMetadataValue"]
    assert all(len(texts) == 1 for texts in by_table.values())
    schema = json.loads(next(iter(by_table["db2server.GEN.TABLE_1.Envelope"])))
    assert [f["field"] for f in schema["fields"][1]["fields"]] == \
        [c.name for c in catalog.get("GEN.TABLE_1").columns]


# -- transactions and tombstones -----------------------------------------------------------

def test_transaction_metadata_and_blocks():
    cat = Catalog.from_dict({"tables": [
        {"schema": "S", "table": "A", "columns": [{"name": "X", "type": "INTEGER"}]},
        {"schema": "S", "table": "B", "columns": [{"name": "X", "type": "INTEGER"}]}]})
    ts = dt.datetime(2024, 1, 2, 3, 4, 5, 678901, tzinfo=UTC)

    def ev(op, table=None, txid="00000025:00000d08:0025", **more):
        return {"op": op, "schema": "S" if table else None, "table": table, "txid": txid,
                "commit_ts": ts, "before": None, "after": {"X": 1} if table else None, **more}

    stream = [ev("begin"), ev("c", "A"), ev("c", "B"), ev("c", "A"), ev("commit"),
              ev("c", "A", txid=None), ev("c", "B", txid="7", seq=42),
              ev("u", "B", txid="7", before={"X": 0},
                 source={"data_collection_order": 9}),
              ev("commit", txid="7", source={"event_count": 5,
                                             "data_collections": '[{"data_collection":"S.B",'
                                                                 '"event_count":5}]'})]
    docs = [json.loads(line) for line in encode(stream, cat).splitlines()]
    assert docs[0] == {"status": "BEGIN", "id": "00000025:00000d08:0025",
                       "ts_ms": 1704164645678, "event_count": None, "data_collections": None}
    assert [d["transaction"] for d in docs[1:4]] == [
        {"id": "00000025:00000d08:0025", "total_order": 1, "data_collection_order": 1},
        {"id": "00000025:00000d08:0025", "total_order": 2, "data_collection_order": 1},
        {"id": "00000025:00000d08:0025", "total_order": 3, "data_collection_order": 2}]
    assert list(docs[4]) == ["status", "id", "ts_ms", "event_count", "data_collections"]
    assert docs[4] == {"status": "END", "id": "00000025:00000d08:0025",
                       "ts_ms": 1704164645678, "event_count": 3,
                       "data_collections": [{"data_collection": "S.A", "event_count": 2},
                                            {"data_collection": "S.B", "event_count": 1}]}
    assert docs[5]["transaction"] is None                    # no txid
    assert docs[6]["transaction"] == {"id": "7", "total_order": 42, "data_collection_order": 1}
    assert docs[7]["transaction"] == {"id": "7", "total_order": 2, "data_collection_order": 9}
    assert docs[8]["event_count"] == 5
    assert docs[8]["data_collections"] == [{"data_collection": "S.B", "event_count": 5}]
    # without transaction metadata the block is null (as the real 2.6.2 message has it)
    off = [json.loads(line) for line in encode(stream[1:4], cat, transaction=False).splitlines()]
    assert all("transaction" in d and d["transaction"] is None for d in off)
    # in the envelope form the metadata event carries its own schema
    env = json.loads(encode([ev("begin")], cat, schemas=True))
    assert env["schema"]["name"] == "io.debezium.connector.common.TransactionMetadataValue"
    assert env["payload"]["status"] == "BEGIN"


@pytest.mark.parametrize("rows, seed", [(600, 11), (5002, 3)])
def test_generated_transactions_frame_their_events(rows, seed):
    """BEGIN, its events, END with their counts; past FRESH_ROWS pooled transactions repeat,
    and the one the stream's end cuts short (5002, seed 3) gets an END of its own."""
    evs, _ = events(rows, tables=3, seed=seed)
    open_txn, seen = None, []
    for ev in evs:
        if ev["op"] == "begin":
            assert open_txn is None
            open_txn, seen = ev["txid"], []
        elif ev["op"] == "commit":
            assert ev["txid"] == open_txn
            assert ev["source"]["event_count"] == len(seen)
            counts = {}
            for s in seen:
                counts[f"{s['schema']}.{s['table']}"] = counts.get(f"{s['schema']}.{s['table']}",
                                                                   0) + 1
            assert json.loads(ev["source"]["data_collections"]) == [
                {"data_collection": k, "event_count": n} for k, n in counts.items()]
            open_txn = None
        elif ev["op"] == "r":
            assert open_txn is None and ev["txid"] is None
        else:
            assert ev["txid"] == open_txn
            seen.append(ev)
            assert ev["seq"] == len(seen)                     # total_order, 1-based
            per_table = sum(1 for s in seen if s["table"] == ev["table"])
            assert ev["source"]["data_collection_order"] == per_table
    assert open_txn is None
    if rows == 5002:
        last = evs[-1]
        pooled = [e for e in evs[:-1] if e["op"] == "commit" and e["txid"] == last["txid"]]
        assert last["source"]["event_count"] < pooled[0]["source"]["event_count"]
    # transactions=False: no metadata events, no txids
    plain, _ = events(300, seed=11, transactions=False)
    assert len(plain) == 300 and all(ev["txid"] is None for ev in plain)
    assert [ev["seq"] for ev in plain] == list(range(300))


def test_tombstones_follow_deletes():
    msgs, _ = generate(500, seed=4, messages=True, tombstones=True)
    evs, _ = events(500, seed=4)
    deletes = sum(1 for ev in evs if ev["op"] == "d")
    assert deletes > 10
    assert msgs.count(None) == deletes
    for i, m in enumerate(msgs):
        if m is None:
            assert json.loads(msgs[i - 1])["op"] == "d"
    assert [m for m in msgs if m is not None] == generate(500, seed=4, messages=True)[0]
    stream, _ = generate(500, seed=4, tombstones=True)
    assert documents(stream).count(None) == deletes
    assert encode(evs, generate(500, seed=4)[1]).count(b"null\n") == 0   # encode writes none


# -- the generator -------------------------------------------------------------------------

@pytest.mark.parametrize("options", [{}, {"schemas": True}, {"pretty": True},
                                     {"schemas": True, "pretty": True},
                                     {"transactions": False, "decimal_handling": "string",
                                      "time_precision": "connect"},
                                     {"decimal_handling": "double",
                                      "time_precision": "adaptive_time_microseconds"}])
def test_every_generated_message_parses(options):
    data, _ = generate(700, tables=2, seed=2, **options)
    evs, _ = events(700, tables=2, seed=2, **options)
    docs = documents(data)
    assert len(docs) == len(evs)
    msgs, _ = generate(700, tables=2, seed=2, messages=True, **options)
    assert len(msgs) == len(evs)
    assert [json.loads(m) for m in msgs] == docs
    assert all(not m.endswith(b"\n") for m in msgs)
    if options.get("pretty"):
        assert data.count(b"\n{") == len(evs) - 1 and b'\n  "' in data
    else:
        assert data.count(b"\n") == len(evs)
    if options.get("schemas"):
        assert all(set(d) == {"schema", "payload"} for d in docs)


def test_generate_is_deterministic_per_seed():
    a, cat_a = generate(300, seed=7)
    b, cat_b = generate(300, seed=7)
    assert a == b and cat_a.to_dict() == cat_b.to_dict()
    assert generate(300, seed=8)[0] != a
    msgs, _ = generate(300, seed=7, messages=True)
    assert b"".join(m + b"\n" for m in msgs) == a
    assert generate_any("debezium", 300, seed=7)[0] == a
    assert events_any("debezium", 300, seed=7)[0] == events(300, seed=7)[0]


@pytest.mark.parametrize("rows", [0, 1, 4, 57, 5003, 6000])
def test_generate_gives_n_data_events(rows):
    evs, catalog = events(rows, table_width=12, tables=3, seed=rows)
    assert sum(1 for ev in evs if ev["op"] in ("c", "u", "d", "r")) == rows
    assert [t.name for t in catalog] == ["GEN.TABLE_1", "GEN.TABLE_2", "GEN.TABLE_3"]
    assert len(documents(generate(rows, table_width=12, tables=3, seed=rows)[0])) == len(evs)
    assert rows == 0 or evs[-1]["op"] == "commit"           # the last transaction is closed


@pytest.mark.parametrize("options", [{}, {"schemas": True, "pretty": True},
                                     {"transactions": False, "decimal_handling": "double"}])
def test_encoding_the_events_gives_the_generated_bytes(options):
    """Past FRESH_ROWS (5000), so re-sampled transactions and a cut last one are in."""
    data, catalog = generate(5200, tables=2, seed=5, **options)
    evs, _ = events(5200, tables=2, seed=5, **options)
    enc = {k: v for k, v in options.items() if k != "transactions"}
    assert encode(evs, catalog, transaction=options.get("transactions", True), **enc) == data
    if not options:
        assert encode_any(evs, "debezium", catalog) == data


def test_generated_content_is_realistic():
    evs, catalog = events(3000, seed=1)
    data = [ev for ev in evs if ev["op"] in ("c", "u", "d", "r")]
    ops = [ev["op"] for ev in data]
    assert ops.count("u") > ops.count("c") > ops.count("d") > 0 and 0 < ops.count("r") < 100
    assert ops[:ops.count("r")] == ["r"] * ops.count("r")    # the snapshot opens the stream
    snaps = [ev["source"]["snapshot"] for ev in data if ev["op"] == "r"]
    assert set(snaps[:-1]) == {"true"} and snaps[-1] == "last"
    assert {ev["source"]["snapshot"] for ev in data if ev["op"] != "r"} == {"false"}
    for ev in data:
        if ev["op"] == "u":
            changed = [k for k in ev["after"] if ev["after"][k] != ev["before"][k]]
            assert ev["before"]["ID"] == ev["after"]["ID"] and len(changed) <= 5
        assert (ev["before"] is None) == (ev["op"] in ("c", "r"))
        assert (ev["after"] is None) == (ev["op"] == "d")
        assert ev["source"]["version"] == "2.6.2.Final" and ev["source"]["db"] == "TESTDB"
    streamed = [ev for ev in data if ev["op"] != "r"]
    commits = [ev["commit_pos"] for ev in streamed]
    assert commits == sorted(commits) and len(set(commits)) > 100
    changes = [ev["change_pos"] for ev in streamed]
    assert changes == sorted(changes) and len(set(changes)) == len(changes)
    times = [ev["commit_ts"] for ev in streamed]
    assert times == sorted(times)
    processed = [ev["source"]["processed_ts"] for ev in streamed]
    assert processed == sorted(processed)
    assert all(ev["txid"] == ev["source"]["commit_lsn"] for ev in streamed)
    cols = catalog.get("GEN.TABLE_1").columns
    types = {c.type.name for c in cols}
    assert {"INTEGER", "BIGINT", "SMALLINT", "DECIMAL(11,2)", "DECIMAL(31,8)", "VARCHAR(40)",
            "CHAR(8)", "DATE", "TIMESTAMP", "TIMESTAMP(3)", "TIMESTAMP(9)", "TIME", "DOUBLE",
            "REAL", "BOOLEAN", "VARBINARY(16)", "TIMESTAMP WITH TIME ZONE", "CLOB"} <= types
    rows = [ev["after"] for ev in data if ev["after"] is not None]
    nulls = sum(v is None for r in rows for k, v in r.items() if k != "ID" and k != "CREATED_TS")
    assert 0.06 < nulls / sum(len(r) - 2 for r in rows) < 0.14
    texts = "".join(r["NAME"] or "" for r in rows) + "".join(r["NOTES"] or "" for r in rows)
    for ch in ('"', "\\", "\n", "\t", "\x01", "é", "中"):
        assert ch in texts, ch
    assert any(ord(c) > 0xFFFF for c in texts)
    assert any(r["ORDER_DATE"] and r["ORDER_DATE"].year < 1970 for r in rows)
    assert any(r["STATUS"] and len(r["STATUS"]) == 8 and r["STATUS"].endswith(" ")
               for r in rows)


# -- events() against the JSON, decoded here by hand --------------------------------------

EPOCH = dt.datetime(1970, 1, 1)


def from_decimal(text, scale):
    n = int.from_bytes(base64.b64decode(text), "big", signed=True)
    return D(n).scaleb(-scale, decimal.Context(prec=50))


HAND = {   # column -> JSON value -> the Python value a decoder gives back (default modes)
    "ID": lambda v: v,
    "NAME": lambda v: v,
    "AMOUNT": lambda v: from_decimal(v, 2),
    "BALANCE": lambda v: from_decimal(v, 8),
    "ORDER_DATE": lambda v: dt.date(1970, 1, 1) + dt.timedelta(days=v),
    "CREATED_TS": lambda v: EPOCH + dt.timedelta(microseconds=v),
    "UPDATED_TS": lambda v: EPOCH + dt.timedelta(milliseconds=v),
    "EXACT_TS": lambda v: EPOCH + dt.timedelta(microseconds=v // 1000),
    "SHIP_TIME": lambda v: (dt.datetime.min + dt.timedelta(milliseconds=v)).time(),
    "WEIGHT": lambda v: struct.unpack("f", struct.pack("f", v))[0],     # REAL: float32
    "RATE": lambda v: v,
    "TRACKING": lambda v: base64.b64decode(v),
    "EVENT_TSZ": lambda v: dt.datetime.fromisoformat(v.replace("Z", "+00:00")),
    "GIFT_WRAP": lambda v: v,
    "STATUS": lambda v: v,
}


def test_events_agree_with_generated_json():
    msgs, catalog = generate(400, seed=9, messages=True)
    evs, _ = events(400, seed=9)
    assert len(msgs) == len(evs)
    checked = 0
    for i, (msg, ev) in enumerate(zip(msgs, evs)):
        doc = json.loads(msg)
        if ev["op"] in ("begin", "commit"):
            assert doc["status"] == ("BEGIN" if ev["op"] == "begin" else "END")
            assert doc["id"] == ev["txid"] and ev["seq"] == i
            assert at_us(doc["ts_ms"] * 1000) == ev["commit_ts"]
            if ev["op"] == "commit":
                assert doc["event_count"] == ev["source"]["event_count"]
                assert ev["source"]["data_collections"] in msg.decode()
            continue
        src = doc["source"]
        assert (doc["op"], src["schema"], src["table"]) == (ev["op"], ev["schema"], ev["table"])
        assert at_us(src["ts_us"]) == ev["commit_ts"] == ev["change_ts"]
        assert at_us(doc["ts_us"]) == ev["source"]["processed_ts"]
        assert bytes.fromhex(src["commit_lsn"].replace(":", "")) == ev["commit_pos"]
        if ev["change_pos"] is None:
            assert src["change_lsn"] is None
        else:
            assert bytes.fromhex(src["change_lsn"].replace(":", "")) == ev["change_pos"]
        if doc["transaction"] is None:
            assert ev["txid"] is None and ev["seq"] == i
        else:
            assert doc["transaction"]["id"] == ev["txid"]
            assert doc["transaction"]["total_order"] == ev["seq"]
        if checked < 50:
            for image in ("before", "after"):
                if ev[image] is None:
                    assert doc[image] is None
                    continue
                assert list(doc[image]) == [c.name for c in catalog.get("GEN.TABLE_1").columns]
                for col, decode in HAND.items():
                    got = doc[image][col]
                    want = ev[image][col]
                    assert (None if got is None else decode(got)) == want, (i, image, col)
            checked += 1
    assert checked == 50


def test_events_hold_what_the_time_precision_mode_keeps():
    """`connect` writes every TIME/TIMESTAMP in ms, so the generated values stop at the ms
    (what a decoder gives back); the default keeps µs, and ns beside for TIMESTAMP(9)."""
    msgs, _ = generate(200, seed=6, messages=True, time_precision="connect")
    evs, _ = events(200, seed=6, time_precision="connect")
    seen = 0
    for msg, ev in zip(msgs, evs):
        if ev["after"] is None or ev["op"] in ("begin", "commit"):
            continue
        after = json.loads(msg)["after"]
        for col in ("CREATED_TS", "UPDATED_TS", "EXACT_TS"):
            v = ev["after"][col]
            if v is not None:
                assert v.microsecond % 1000 == 0 and getattr(v, "nanosecond", 0) == 0
                assert EPOCH + dt.timedelta(milliseconds=after[col]) == v
                seen += 1
    assert seen > 300
    default, _ = events(200, seed=6)
    exact = [ev["after"]["EXACT_TS"] for ev in default
             if ev["after"] is not None and ev["after"].get("EXACT_TS") is not None]
    assert any(v.microsecond % 1000 for v in exact) and any(v.nanosecond for v in exact)
