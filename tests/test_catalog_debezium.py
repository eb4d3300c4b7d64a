"""Catalog.from_debezium (SPEC §5.3): tables from Debezium schema-change events, and from the
schemas embedded in data change events (schemas.enable=true)."""
import json
import re

import pyarrow as pa
import pytest

import cdcfast
from cdcfast import Catalog
from conftest import shared_path

UTC = pa.timestamp("us", tz="UTC")

# The seed's example message (debezium-db2-connector.txt, "Schema change topic"), with the
# callout marks "(1)"…"(10)" removed and its elided "schema": { ... } replaced by a real
# (shortened) Connect schema object.
SEED_MESSAGE = """
{
  "schema": {
    "type": "struct",
    "fields": [
      {"type": "string", "optional": false, "field": "databaseName"}
    ],
    "optional": false,
    "name": "io.debezium.connector.db2.SchemaChangeValue",
    "version": 1
  },
  "payload": {
    "source": {
      "version": "3.0.4.Final",
      "connector": "db2",
      "name": "db2",
      "ts_ms": 0,
      "snapshot": "true",
      "db": "testdb",
      "schema": "DB2INST1",
      "table": "CUSTOMERS",
      "change_lsn": null,
      "commit_lsn": "00000025:00000d98:00a2",
      "event_serial_no": null
    },
    "ts_ms": 1588252618953,
    "databaseName": "TESTDB",
    "schemaName": "DB2INST1",
    "ddl": null,
    "tableChanges": [
      {
        "type": "CREATE",
        "id": "\\"DB2INST1\\".\\"CUSTOMERS\\"",
        "table": {
          "defaultCharsetName": null,
          "primaryKeyColumnNames": [
            "ID"
          ],
          "columns": [
            {
              "name": "ID",
              "jdbcType": 4,
              "nativeType": null,
              "typeName": "int identity",
              "typeExpression": "int identity",
              "charsetName": null,
              "length": 10,
              "scale": 0,
              "position": 1,
              "optional": false,
              "autoIncremented": false,
              "generated": false
            },
            {
              "name": "FIRST_NAME",
              "jdbcType": 12,
              "nativeType": null,
              "typeName": "varchar",
              "typeExpression": "varchar",
              "charsetName": null,
              "length": 255,
              "scale": null,
              "position": 2,
              "optional": false,
              "autoIncremented": false,
              "generated": false
            },
            {
              "name": "LAST_NAME",
              "jdbcType": 12,
              "nativeType": null,
              "typeName": "varchar",
              "typeExpression": "varchar",
              "charsetName": null,
              "length": 255,
              "scale": null,
              "position": 3,
              "optional": false,
              "autoIncremented": false,
              "generated": false
            },
            {
              "name": "EMAIL",
              "jdbcType": 12,
              "nativeType": null,
              "typeName": "varchar",
              "typeExpression": "varchar",
              "charsetName": null,
              "length": 255,
              "scale": null,
              "position": 4,
              "optional": false,
              "autoIncremented": false,
              "generated": false
            }
          ],
          "attributes": [
            {
              "customAttribute": "attributeValue"
            }
          ]
        }
      }
    ]
  }
}
"""


def col(name, jdbc, position=None, length=None, scale=None, optional=True, type_name="x"):
    d = {"name": name, "jdbcType": jdbc, "typeName": type_name, "length": length,
         "scale": scale, "optional": optional}
    if position is not None:
        d["position"] = position
    return d


def change(columns, id='"S"."T"', type_="CREATE", key=None):
    return {"type": type_, "id": id,
            "table": {"primaryKeyColumnNames": key or [], "columns": columns}}


def event(*changes, source=None):
    """A bare payload of a schema-change event."""
    return {"source": source or {"connector": "db2", "schema": "S", "table": "T"},
            "databaseName": "TESTDB", "ddl": None, "tableChanges": list(changes)}


def shape(table):
    return [(c.name, c.type.name, c.type.arrow_type, c.nullable) for c in table.columns]


# -- the seed's example -------------------------------------------------------------------------
def test_seed_example():
    cat = Catalog.from_debezium([SEED_MESSAGE])
    assert len(cat) == 1
    t = cat.get("DB2INST1.CUSTOMERS")
    assert (t.schema, t.table, t.name) == ("DB2INST1", "CUSTOMERS", "DB2INST1.CUSTOMERS")
    assert t.key == ("ID",)
    assert shape(t) == [
        ("ID", "INTEGER", pa.int32(), False),
        ("FIRST_NAME", "VARCHAR(255)", pa.string(), False),
        ("LAST_NAME", "VARCHAR(255)", pa.string(), False),
        ("EMAIL", "VARCHAR(255)", pa.string(), False),
    ]
    assert all(c.type.length == 255 for c in t.columns[1:])


def test_seed_example_bytes_and_bare_payload():
    bare = json.dumps(json.loads(SEED_MESSAGE)["payload"]).encode()
    for messages in ([SEED_MESSAGE.encode()], [bare], SEED_MESSAGE, SEED_MESSAGE.encode()):
        cat = Catalog.from_debezium(messages)
        assert [t.name for t in cat] == ["DB2INST1.CUSTOMERS"]
        assert [c.name for c in cat.get("DB2INST1.CUSTOMERS").columns] == \
            ["ID", "FIRST_NAME", "LAST_NAME", "EMAIL"]


# -- jdbcType → Arrow ---------------------------------------------------------------------------
# (jdbcType, length, scale, catalog type name, Arrow type)
JDBC = [
    (4, 10, 0, "INTEGER", pa.int32()),
    (-5, 19, 0, "BIGINT", pa.int64()),
    (5, 5, 0, "SMALLINT", pa.int16()),
    (-6, 3, 0, "SMALLINT", pa.int16()),                   # TINYINT → int16 (SPEC §5.3)
    (3, 9, 2, "DECIMAL(9,2)", pa.decimal128(9, 2)),
    (3, 31, None, "DECIMAL(31,0)", pa.decimal128(31, 0)),  # null scale → 0
    (3, None, None, "DECIMAL", pa.decimal128(5, 0)),       # no length → the type's default
    (2, 38, 10, "NUMERIC(38,10)", pa.decimal128(38, 10)),
    (2, 39, 0, "DECFLOAT", pa.string()),                   # beyond decimal128: exact text
    (3, 0, 0, "DECFLOAT", pa.string()),
    (3, 5, 7, "DECFLOAT", pa.string()),                    # scale > precision
    (8, None, None, "DOUBLE", pa.float64()),
    (7, None, None, "REAL", pa.float32()),
    (6, 53, None, "DOUBLE", pa.float64()),                 # FLOAT → float64
    (1, 8, None, "CHAR(8)", pa.string()),
    (1, None, None, "CHAR", pa.string()),
    (12, 255, None, "VARCHAR(255)", pa.string()),
    (12, 0, None, "VARCHAR", pa.string()),
    (-1, 32700, None, "LONG VARCHAR", pa.string()),
    (-15, 4, None, "NCHAR(4)", pa.string()),
    (-9, 30, None, "NVARCHAR2(30)", pa.string()),
    (-16, None, None, "NVARCHAR2", pa.string()),
    (2005, 1048576, None, "CLOB", pa.string()),
    (2011, None, None, "NCLOB", pa.string()),
    (91, 10, None, "DATE", pa.date32()),
    (92, 8, 0, "TIME(0)", pa.time64("us")),
    (92, None, 3, "TIME(3)", pa.time64("us")),
    (92, None, None, "TIME", pa.time64("us")),
    (93, 26, 6, "TIMESTAMP(6)", pa.timestamp("us")),
    (93, 32, 12, "TIMESTAMP(12)", pa.timestamp("us")),
    (93, None, None, "TIMESTAMP", pa.timestamp("us")),
    (2014, None, 3, "TIMESTAMP(3) WITH TIME ZONE", UTC),
    (2014, None, None, "TIMESTAMP WITH TIME ZONE", UTC),
    (2013, None, None, "VARCHAR", pa.string()),            # TIME WITH TIME ZONE: text
    (16, 1, None, "BOOLEAN", pa.bool_()),
    (-7, 1, None, "BOOLEAN", pa.bool_()),
    (-2, 16, None, "BINARY(16)", pa.binary()),
    (-3, 100, None, "VARBINARY(100)", pa.binary()),
    (-4, 32700, None, "VARBINARY", pa.binary()),
    (2004, 1048576, None, "BLOB", pa.binary()),
    (2009, None, None, "XML", pa.string()),
    (1111, None, None, "VARCHAR", pa.string()),            # OTHER: text
    (-360, 34, None, "VARCHAR", pa.string()),              # a vendor type (Db2 DECFLOAT): text
    (None, None, None, "VARCHAR", pa.string()),            # no jdbcType: text
]


@pytest.mark.parametrize("jdbc,length,scale,name,arrow", JDBC)
@pytest.mark.parametrize("optional", [True, False])
def test_jdbc_types(jdbc, length, scale, name, arrow, optional):
    cat = Catalog.from_debezium([event(change([col("C", jdbc, 1, length, scale, optional)]))])
    c = cat.get("S.T").columns[0]
    assert c.type.name == name
    assert c.type.arrow_type == arrow
    assert c.nullable is optional


def test_precision_and_scale_read_from_length_and_scale():
    cols = [col("D", 3, 1, 31, 8), col("TM", 92, 2, 15, 6), col("TS", 93, 3, 29, 9),
            col("TZ", 2014, 4, 32, 0)]
    t = Catalog.from_debezium([event(change(cols))]).get("S.T")
    d, tm, ts, tz = t.columns
    assert (d.type.precision, d.type.scale) == (31, 8)
    assert d.type.arrow_type == pa.decimal128(31, 8)
    assert tm.type.precision == 6
    assert ts.type.precision == 9
    assert tz.type.precision == 0
    # with no scale: TIME means TIME(0), TIMESTAMP means TIMESTAMP(6) (SPEC §5.3)
    t = Catalog.from_debezium([event(change([col("TM", 92, 1), col("TS", 93, 2)]))]).get("S.T")
    assert [c.type.precision for c in t.columns] == [0, 6]


def test_optional_missing_is_nullable():
    c = col("C", 4, 1)
    del c["optional"]
    assert Catalog.from_debezium([event(change([c]))]).get("S.T").columns[0].nullable is True


def test_type_name_is_information_only():
    a = Catalog.from_debezium([event(change([col("C", 4, 1, type_name="int identity")]))])
    b = Catalog.from_debezium([event(change([col("C", 4, 1, type_name="whatever")]))])
    assert a.to_dict() == b.to_dict()


# -- columns, key -------------------------------------------------------------------------------
def test_columns_ordered_by_position():
    cols = [col("C", 4, 3), col("A", 4, 1), col("B", 4, 2)]
    t = Catalog.from_debezium([event(change(cols))]).get("S.T")
    assert [c.name for c in t.columns] == ["A", "B", "C"]


def test_position_ties_and_missing_keep_the_order_sent():
    ties = [col("X", 4, 2), col("Y", 4, 1), col("Z", 4, 2)]
    t = Catalog.from_debezium([event(change(ties))]).get("S.T")
    assert [c.name for c in t.columns] == ["Y", "X", "Z"]
    missing = [col("X", 4, 2), col("Y", 4), col("Z", 4, 1)]
    t = Catalog.from_debezium([event(change(missing))]).get("S.T")
    assert [c.name for c in t.columns] == ["X", "Y", "Z"]


def test_key_keeps_only_columns():
    t = Catalog.from_debezium([event(change([col("A", 4, 1), col("B", 4, 2)],
                                            key=["B", "NOPE", "A"]))]).get("S.T")
    assert t.key == ("B", "A")
    ch = change([col("A", 4, 1)])
    ch["table"]["primaryKeyColumnNames"] = None
    assert Catalog.from_debezium([event(ch)]).get("S.T").key == ()
    del ch["table"]["primaryKeyColumnNames"]
    assert Catalog.from_debezium([event(ch)]).get("S.T").key == ()


def test_duplicate_column_is_an_error():
    with pytest.raises(ValueError, match=r"message #0, tableChanges\[0\].*A is listed twice"):
        Catalog.from_debezium([event(change([col("A", 4, 1), col("A", 12, 2)]))])


# -- CREATE / ALTER / DROP ----------------------------------------------------------------------
def test_alter_replaces_create():
    create = event(change([col("A", 4, 1)], key=["A"]))
    other = event(change([col("Z", 4, 1)], id='"S"."OTHER"'))
    alter = event(change([col("A", -5, 1), col("B", 12, 2, 20)], type_="ALTER"))
    cat = Catalog.from_debezium([create, other, alter])
    assert [t.name for t in cat] == ["S.T", "S.OTHER"]
    t = cat.get("S.T")
    assert shape(t) == [("A", "BIGINT", pa.int64(), True),
                        ("B", "VARCHAR(20)", pa.string(), True)]
    assert t.key == ()


def test_latest_create_wins_without_raising():
    first = event(change([col("A", 4, 1)]))
    second = event(change([col("B", 91, 1)]))
    cat = Catalog.from_debezium([first, second])
    assert len(cat) == 1
    assert shape(cat.get("S.T")) == [("B", "DATE", pa.date32(), True)]


def test_drop_removes():
    create = event(change([col("A", 4, 1)]), change([col("B", 4, 1)], id='"S"."U"'))
    drop = event({"type": "DROP", "id": '"S"."T"', "table": None})
    cat = Catalog.from_debezium([create, drop])
    assert [t.name for t in cat] == ["S.U"]
    assert "S.T" not in cat
    # created again after the drop
    cat = Catalog.from_debezium([create, drop, event(change([col("C", 16, 1)]))])
    assert [t.name for t in cat] == ["S.U", "S.T"]
    assert [c.name for c in cat.get("S.T").columns] == ["C"]
    # dropping an unknown table is not an error
    assert len(Catalog.from_debezium([drop])) == 0


# -- table ids ----------------------------------------------------------------------------------
@pytest.mark.parametrize("tid,schema,table", [
    ('"DB2INST1"."CUSTOMERS"', "DB2INST1", "CUSTOMERS"),
    ('"MY.SCHEMA"."A.B"', "MY.SCHEMA", "A.B"),
    ('"S"."SAY ""HI"""', "S", 'SAY "HI"'),
    ("DB2INST1.CUSTOMERS", "DB2INST1", "CUSTOMERS"),
    ('"testDB"."dbo"."customers"', "dbo", "customers"),
    ("postgres.public.orders", "public", "orders"),
    ('"CUSTOMERS"', None, "CUSTOMERS"),
    ("CUSTOMERS", None, "CUSTOMERS"),
])
def test_table_id_forms(tid, schema, table):
    cat = Catalog.from_debezium([event(change([col("A", 4, 1)], id=tid),
                                       source={"schema": "IGNORED", "table": "IGNORED"})])
    (t,) = cat.tables
    assert (t.schema, t.table) == (schema, table)


def test_missing_id_uses_source():
    ch = change([col("A", 4, 1)])
    del ch["id"]
    cat = Catalog.from_debezium([event(ch, source={"schema": "DB2INST1", "table": "ORDERS"})])
    assert [(t.schema, t.table) for t in cat] == [("DB2INST1", "ORDERS")]
    ch["id"] = None
    cat = Catalog.from_debezium([event(ch, source={"schema": "", "table": "ORDERS"})])
    assert [(t.schema, t.table) for t in cat] == [(None, "ORDERS")]


def test_no_table_name_at_all_is_an_error():
    ch = change([col("A", 4, 1)])
    del ch["id"]
    with pytest.raises(ValueError, match="message #1, tableChanges\\[0\\] names no table"):
        Catalog.from_debezium([None, event(ch, source={"schema": "S", "table": ""})])


# -- input forms --------------------------------------------------------------------------------
def _two_events():
    return [event(change([col("A", 4, 1)], id='"S"."T1"')),
            event(change([col("B", 12, 1, 5)], id='"S"."T2"'))]


def _names(cat):
    return [t.name for t in cat]


def test_list_of_bytes_str_dicts_mixed():
    e1, e2 = _two_events()
    envelope = {"schema": {"type": "struct", "fields": []}, "payload": e2}
    for messages in ([json.dumps(e1).encode(), json.dumps(envelope).encode()],
                     [json.dumps(e1), json.dumps(envelope)],
                     [e1, envelope],
                     [bytearray(json.dumps(e1).encode()), envelope],
                     iter([e1, json.dumps(e2)])):
        cat = Catalog.from_debezium(messages)
        assert _names(cat) == ["S.T1", "S.T2"]
        assert cat.get("S.T2").columns[0].type.name == "VARCHAR(5)"


def test_single_dict():
    assert _names(Catalog.from_debezium(_two_events()[0])) == ["S.T1"]


def test_ndjson_stream():
    e1, e2 = _two_events()
    text = json.dumps(e1) + "\n" + json.dumps({"schema": None, "payload": e2}) + "\n"
    assert _names(Catalog.from_debezium(text)) == ["S.T1", "S.T2"]
    assert _names(Catalog.from_debezium(text.encode())) == ["S.T1", "S.T2"]


def test_pretty_printed_stream_of_two_documents():
    e1, e2 = _two_events()
    text = "\n" + json.dumps(e1, indent=2) + "\n\n" + json.dumps(e2, indent=4) + "  \n"
    assert "\n" in json.dumps(e1, indent=2)
    assert _names(Catalog.from_debezium(text.encode())) == ["S.T1", "S.T2"]
    # documents back to back with no separator are still read
    assert _names(Catalog.from_debezium(json.dumps(e1) + json.dumps(e2))) == ["S.T1", "S.T2"]


def test_other_messages_skipped():
    e1, e2 = _two_events()
    data_event = {"schema": {"type": "struct"},
                  "payload": {"before": None, "after": {"ID": 1}, "op": "c",
                              "source": {"schema": "S", "table": "T9"}}}
    tx = {"status": "BEGIN", "id": "00000025:00000d98:00a2", "ts_ms": 1}
    messages = [None, b"", "   ", data_event, json.dumps(tx), e1,
                {"schema": None, "payload": None}, "null", {"tableChanges": None},
                {"tableChanges": []}, e2]
    assert _names(Catalog.from_debezium(messages)) == ["S.T1", "S.T2"]
    assert len(Catalog.from_debezium([])) == 0
    assert len(Catalog.from_debezium("")) == 0
    assert len(Catalog.from_debezium(b"\n\n")) == 0


def test_malformed_json_names_the_message():
    e1, _ = _two_events()
    with pytest.raises(ValueError, match="message #2 is not valid JSON"):
        Catalog.from_debezium([e1, None, '{"tableChanges": [', json.dumps(e1)])
    with pytest.raises(ValueError, match="message #0 is not valid JSON"):
        Catalog.from_debezium([b"{'single': 'quotes'}"])
    first = json.dumps(e1) + "\n"
    stream = first + '{"tableChanges": [}\n'
    with pytest.raises(ValueError,
                       match=f"document #1 \\(byte {len(first.encode())} of the stream\\) "
                             "is not valid JSON"):
        Catalog.from_debezium(stream.encode())


def test_not_utf8_is_a_value_error():
    with pytest.raises(ValueError, match="message #0 is not UTF-8"):
        Catalog.from_debezium([b'{"tableChanges": "\xff"}'])


# -- round trip ---------------------------------------------------------------------------------
def test_round_trip_through_dict():
    cols = [col(f"C{i}", jdbc, i, length, scale, i % 2 == 0)
            for i, (jdbc, length, scale, _, _) in enumerate(JDBC)]
    messages = [SEED_MESSAGE, event(change(cols, key=["C1", "C3"]))]
    cat = Catalog.from_debezium(messages)
    again = Catalog.from_dict(json.loads(json.dumps(cat.to_dict())))
    assert again.tables == cat.tables
    assert _names(again) == ["DB2INST1.CUSTOMERS", "S.T"]
    assert [c.type.arrow_type for c in again.get("S.T").columns] == [a for *_, a in JDBC]


# -- schemas embedded in data change events (schemas.enable=true) --------------------------------
KAFKA = "org.apache.kafka.connect.data."
DBZ = "io.debezium."

# (Connect field schema without "field", catalog type name, Arrow type)
CONNECT = [
    ({"type": "int8"}, "TINYINT", pa.int8()),
    ({"type": "int16"}, "SMALLINT", pa.int16()),
    ({"type": "int32"}, "INTEGER", pa.int32()),
    ({"type": "int64"}, "BIGINT", pa.int64()),
    ({"type": "float"}, "REAL", pa.float32()),
    ({"type": "float32"}, "REAL", pa.float32()),
    ({"type": "double"}, "DOUBLE", pa.float64()),
    ({"type": "float64"}, "DOUBLE", pa.float64()),
    ({"type": "boolean"}, "BOOLEAN", pa.bool_()),
    ({"type": "string"}, "VARCHAR", pa.string()),
    ({"type": "bytes"}, "VARBINARY", pa.binary()),
    ({"type": "int32", "name": DBZ + "time.Date"}, "DATE", pa.date32()),
    ({"type": "int32", "name": KAFKA + "Date"}, "DATE", pa.date32()),
    ({"type": "int32", "name": DBZ + "time.Time"}, "TIME(3)", pa.time64("us")),
    ({"type": "int32", "name": KAFKA + "Time"}, "TIME(3)", pa.time64("us")),
    ({"type": "int64", "name": DBZ + "time.MicroTime"}, "TIME(6)", pa.time64("us")),
    ({"type": "int64", "name": DBZ + "time.NanoTime"}, "TIME(9)", pa.time64("us")),
    ({"type": "int64", "name": DBZ + "time.Timestamp"}, "TIMESTAMP(3)", pa.timestamp("us")),
    ({"type": "int64", "name": KAFKA + "Timestamp"}, "TIMESTAMP(3)", pa.timestamp("us")),
    ({"type": "int64", "name": DBZ + "time.MicroTimestamp"}, "TIMESTAMP(6)", pa.timestamp("us")),
    ({"type": "int64", "name": DBZ + "time.NanoTimestamp"}, "TIMESTAMP(9)", pa.timestamp("us")),
    ({"type": "string", "name": DBZ + "time.ZonedTimestamp"}, "TIMESTAMP WITH TIME ZONE", UTC),
    ({"type": "bytes", "name": KAFKA + "Decimal",
      "parameters": {"scale": "2", "connect.decimal.precision": "9"}}, "DECIMAL(9,2)",
     pa.decimal128(9, 2)),
    ({"type": "bytes", "name": KAFKA + "Decimal", "parameters": {"scale": "4"}},
     "DECIMAL(38,4)", pa.decimal128(38, 4)),                          # no precision: 38
    ({"type": "bytes", "name": KAFKA + "Decimal", "parameters": {}}, "DECIMAL(38,0)",
     pa.decimal128(38, 0)),
    ({"type": "bytes", "name": KAFKA + "Decimal",
      "parameters": {"scale": "0", "connect.decimal.precision": "40"}}, "DECFLOAT",
     pa.string()),                                                     # beyond decimal128
    ({"type": "bytes", "name": KAFKA + "Decimal", "parameters": {"scale": "-2"}}, "DECFLOAT",
     pa.string()),
    ({"type": "bytes", "name": KAFKA + "Decimal",
      "parameters": {"scale": "5", "connect.decimal.precision": "3"}}, "DECIMAL(5,5)",
     pa.decimal128(5, 5)),                  # as the decoder reads it: precision at least scale
    ({"type": "struct", "name": DBZ + "data.VariableScaleDecimal",
      "fields": [{"type": "int32", "field": "scale"}, {"type": "bytes", "field": "value"}]},
     "DECFLOAT", pa.string()),
    ({"type": "int32", "name": DBZ + "time.Year"}, "INTEGER", pa.int32()),
    ({"type": "bytes", "name": DBZ + "data.Bits", "parameters": {"length": "5"}},
     "VARBINARY", pa.binary()),
    ({"type": "struct", "fields": [{"type": "int32", "field": "x"}]}, "VARCHAR", pa.string()),
    ({"type": "array", "items": {"type": "int32"}}, "VARCHAR", pa.string()),
    ({"type": "map", "keys": {"type": "string"}, "values": {"type": "string"}}, "VARCHAR",
     pa.string()),
    ({"type": "string", "name": DBZ + "data.Json"}, "VARCHAR", pa.string()),
    ({"type": "string", "name": DBZ + "time.ZonedTime"}, "VARCHAR", pa.string()),
    ({"type": "int32", "name": "some.other.Logical"}, "INTEGER", pa.int32()),
    ({"type": "nonsense"}, "VARCHAR", pa.string()),
]


def data_event(fields, schema="S", table="T", op="c", image="after", payload=None):
    """A data change event in the envelope form with an embedded Connect schema."""
    value = {"type": "struct", "optional": True, "name": "x.Value", "field": image,
             "fields": fields}
    src = {"connector": "db2", "table": table}
    if schema is not None:
        src["schema"] = schema
    p = {"before": None, "after": None, "source": src, "op": op, "ts_ms": 1}
    p.update(payload or {})
    return {"schema": {"type": "struct", "name": "x.Envelope",
                       "fields": [value, {"type": "struct", "field": "source", "fields": []},
                                  {"type": "string", "field": "op"}]},
            "payload": p}


def f(name, type_="int32", optional=True, **kw):
    return {"type": type_, "optional": optional, "field": name, **kw}


@pytest.mark.parametrize("fs,name,arrow", CONNECT)
def test_embedded_schema_types(fs, name, arrow):
    from cdcfast.formats.debezium import field_encoding
    cat = Catalog.from_debezium([data_event([{**fs, "field": "C"}])])
    c = cat.get("S.T").columns[0]
    assert c.type.name == name
    assert c.type.arrow_type == arrow
    # the Arrow type the decoder gives the field without a catalog
    assert field_encoding({**fs, "field": "C"})[2].arrow_type == arrow


def test_embedded_schema_columns_nullability_and_name():
    fields = [f("ID", optional=False), f("NAME", "string"), f("NOTE", "string", optional=None),
              f("ID", "string")]                    # given twice: the first counts
    del fields[2]["optional"]                       # missing: nullable
    cat = Catalog.from_debezium([data_event(fields)])
    t = cat.get("S.T")
    assert (t.schema, t.table, t.key) == ("S", "T", ())
    assert shape(t) == [("ID", "INTEGER", pa.int32(), False),
                        ("NAME", "VARCHAR", pa.string(), True),
                        ("NOTE", "VARCHAR", pa.string(), True)]
    # no schema, or an empty one (MySQL): the bare name
    for schema in (None, ""):
        cat = Catalog.from_debezium([data_event([f("A")], schema=schema, table="orders")])
        assert [(t.schema, t.table, t.name) for t in cat] == [(None, "orders", "orders")]


def test_embedded_schema_before_when_no_after():
    ev = data_event([f("A"), f("B", "boolean")], image="before", op="d")
    assert shape(Catalog.from_debezium([ev]).get("S.T")) == [
        ("A", "INTEGER", pa.int32(), True), ("B", "BOOLEAN", pa.bool_(), True)]
    ev["schema"]["fields"].insert(0, {"type": "struct", "field": "after", "fields": [f("Z")]})
    assert [c.name for c in Catalog.from_debezium([ev]).get("S.T").columns] == ["Z"]


def test_first_embedded_schema_defines_the_table():
    first = data_event([f("A")])
    later = data_event([f("A", "int64"), f("B", "string")], op="u")
    other = data_event([f("X")], table="U")
    cat = Catalog.from_debezium([first, other, later])
    assert [t.name for t in cat] == ["S.T", "S.U"]
    assert shape(cat.get("S.T")) == [("A", "INTEGER", pa.int32(), True)]


def test_schema_change_events_and_embedded_schemas_together():
    create = event(change([col("A", -5, 1)], key=["A"]))
    embedded = data_event([f("A"), f("B", "string")])
    alter = event(change([col("A", -5, 1), col("C", 91, 2)], type_="ALTER"))
    # a schema-change event defined it: the embedded schema is ignored
    cat = Catalog.from_debezium([create, embedded])
    assert shape(cat.get("S.T")) == [("A", "BIGINT", pa.int64(), True)]
    assert cat.get("S.T").key == ("A",)
    # the embedded schema defined it: a later schema-change event replaces it
    cat = Catalog.from_debezium([embedded, alter])
    assert [c.name for c in cat.get("S.T").columns] == ["A", "C"]
    # after a DROP the table has no definition: the next embedded schema defines it again
    drop = event({"type": "DROP", "id": '"S"."T"', "table": None})
    cat = Catalog.from_debezium([create, drop, embedded])
    assert [c.name for c in cat.get("S.T").columns] == ["A", "B"]


def test_embedded_schema_skipped_where_it_defines_nothing():
    fields = [f("A")]
    no_op = data_event(fields)
    del no_op["payload"]["op"]
    no_source = data_event(fields)
    del no_source["payload"]["source"]
    no_table = data_event(fields, table="")
    message = data_event(fields, op="m")
    no_image = data_event(fields)
    no_image["schema"]["fields"] = no_image["schema"]["fields"][1:]
    bare = data_event(fields)["payload"]           # schemas.enable=false: nothing to read
    null_schema = {"schema": None, "payload": data_event(fields)["payload"]}
    status = {"schema": data_event(fields)["schema"],
              "payload": {"status": "BEGIN", "id": "1", "ts_ms": 1, "op": "c",
                          "source": {"table": "T"}}}
    messages = [no_op, no_source, no_table, message, no_image, bare, null_schema, status,
                {"schema": data_event(fields)["schema"], "payload": None}]
    assert len(Catalog.from_debezium(messages)) == 0
    assert len(Catalog.from_debezium(messages + [data_event(fields)])) == 1


def test_embedded_schema_round_trips_through_dict():
    fields = [{**fs, "field": f"C{i}", "optional": i % 2 == 0}
              for i, (fs, _, _) in enumerate(CONNECT)]
    cat = Catalog.from_debezium([data_event(fields)])
    again = Catalog.from_dict(json.loads(json.dumps(cat.to_dict())))
    assert again.tables == cat.tables
    assert [c.type.arrow_type for c in again.get("S.T").columns] == [a for *_, a in CONNECT]


# decoding with the catalog built from the embedded schemas gives what decoding without one
# gives (SPEC §1: "with a catalog table (or Debezium's embedded schema)")
@pytest.mark.parametrize("messages,options", [
    (False, {}),
    (True, {"decimal_handling": "string", "time_precision": "connect"}),
    (False, {"decimal_handling": "double", "time_precision": "adaptive_time_microseconds"})])
def test_catalog_from_embedded_schemas_decodes_the_same(messages, options):
    """Generated data, every column type the generator has (26 columns), as a stream and as
    messages, under each way the connector writes decimals and times."""
    data, _ = cdcfast.encode.generate("debezium", rows=160, tables=2, seed=5, schemas=True,
                                      tombstones=True, table_width=26, messages=messages,
                                      **options)
    cat = Catalog.from_debezium(data)
    assert sorted(t.name for t in cat) == ["GEN.TABLE_1", "GEN.TABLE_2"]
    assert Catalog.from_dict(json.loads(json.dumps(cat.to_dict()))).tables == cat.tables
    want = cdcfast.decode_tables(data, format="debezium")
    got = cdcfast.decode_tables(data, format="debezium", catalog=cat)
    assert set(got) == set(want) == {"GEN.TABLE_1", "GEN.TABLE_2"}
    for k in want:
        assert want[k].num_rows > 50
        assert want[k].column("_error").null_count == want[k].num_rows
        assert got[k].equals(want[k]), k


PEER_WITH_SCHEMAS = ["flink/debezium-data-schema-include.txt",
                     "flink/debezium-postgres-data-schema-include.txt",
                     "tiflow/datatype.dbz.json", "db2/db2_cdc-customers-insert.json"]


@pytest.mark.parametrize("name", PEER_WITH_SCHEMAS)
def test_catalog_from_embedded_schemas_of_real_messages(name):
    data = shared_path("peer-data", "debezium", *name.split("/")).read_bytes()
    cat = Catalog.from_debezium(data)
    assert len(cat) == 1
    want = cdcfast.decode(data, format="debezium")
    got = cdcfast.decode(data, format="debezium", catalog=cat)
    assert cat.to_dict() == Catalog.from_dict(cat.to_dict()).to_dict()
    assert got.schema.equals(want.schema) and got.num_rows == want.num_rows > 0
    assert got.drop_columns(["_error"]).equals(want.drop_columns(["_error"]))
    # an error names the catalog's type where there is one (docs/debezium.md): the only
    # error expected, tiflow's TIME outside one day, says TIME(6) where the schema's reading
    # says io.debezium.time.MicroTime
    if name.startswith("tiflow"):
        assert got.column("_error").to_pylist() == [
            "after.col_t_neg: '-45296123456' is not TIME(6) (message 0, byte 18776)"]
        assert want.column("_error").to_pylist() == [
            re.sub(r"TIME\(6\)", "io.debezium.time.MicroTime", e)
            for e in got.column("_error").to_pylist()]
    else:
        assert got.column("_error").null_count == got.num_rows
        assert got.equals(want)
