"""Catalog.from_qlik (SPEC §5.5): tables from Qlik Replicate metadata messages, and the same
reading when the decoder meets them in a data stream."""
from __future__ import annotations

import json

import pyarrow as pa
import pytest

import cdcfast
import cdcfast.reference
from cdcfast import Catalog
from cdcfast.encode import generate


def md(columns, schema="SRC", table="ORDERS", schema_id="id1", kafka=True) -> dict:
    body = {"schemaId": schema_id,
            "lineage": {"server": "srv", "task": "t", "schema": schema, "table": table,
                        "tableVersion": 1, "timestamp": "2023-01-01T00:00:00.000"},
            "tableStructure": {"tableColumns": columns}, "dataSchema": "{}"}
    if not kafka:
        return body
    return {"magic": "atMSG", "type": "MD", "headers": None, "messageSchemaId": None,
            "messageSchema": None, "message": body}


def col(ordinal, type_, length=0, precision=0, scale=0, pk=0) -> dict:
    return {"ordinal": ordinal, "type": type_, "length": length, "precision": precision,
            "scale": scale, "primaryKeyPosition": pk}


ORDERS = {"LINE": col(2, "INT2", pk=2), "ORDER_ID": col(1, "INT8", pk=1),
          "AMOUNT": col(4, "NUMERIC", precision=11, scale=2), "NOTE": col(3, "STRING", 40)}


def test_columns_by_ordinal_and_key_by_position():
    cat = Catalog.from_qlik([md(ORDERS)])
    assert cat.to_dict() == {"tables": [{
        "schema": "SRC", "table": "ORDERS", "key": ["ORDER_ID", "LINE"],
        "qlik_schema_ids": ["id1"], "columns": [
            {"name": "ORDER_ID", "type": "BIGINT"}, {"name": "LINE", "type": "SMALLINT"},
            {"name": "NOTE", "type": "VARCHAR(40)"}, {"name": "AMOUNT", "type": "DECIMAL(11,2)"}]}]}
    assert Catalog.from_dict(cat.to_dict()).to_dict() == cat.to_dict()


TYPES = [
    # (Replicate column, catalog type, Arrow type)
    (col(1, "INT1"), "TINYINT", pa.int8()), (col(1, "INT2"), "SMALLINT", pa.int16()),
    (col(1, "UINT1"), "SMALLINT", pa.int16()), (col(1, "INT4"), "INTEGER", pa.int32()),
    (col(1, "UINT2"), "INTEGER", pa.int32()), (col(1, "INT8"), "BIGINT", pa.int64()),
    (col(1, "UINT4"), "BIGINT", pa.int64()), (col(1, "UINT8"), "DECIMAL(20,0)",
                                              pa.decimal128(20, 0)),
    (col(1, "REAL4"), "REAL", pa.float32()), (col(1, "REAL8"), "DOUBLE", pa.float64()),
    (col(1, "NUMERIC", precision=38, scale=10), "DECIMAL(38,10)", pa.decimal128(38, 10)),
    (col(1, "NUMERIC", precision=5), "DECIMAL(5,0)", pa.decimal128(5, 0)),
    (col(1, "NUMERIC"), "DECFLOAT", pa.string()),                       # no precision
    (col(1, "NUMERIC", precision=40, scale=2), "DECFLOAT", pa.string()),
    (col(1, "NUMERIC", precision=10, scale=-2), "DECFLOAT", pa.string()),
    (col(1, "STRING", 20), "VARCHAR(20)", pa.string()), (col(1, "STRING"), "VARCHAR",
                                                         pa.string()),
    (col(1, "WSTRING", 30), "NVARCHAR2(30)", pa.string()),
    (col(1, "CLOB"), "CLOB", pa.string()), (col(1, "NCLOB"), "NCLOB", pa.string()),
    (col(1, "BYTES", 16), "VARBINARY(16)", pa.binary()), (col(1, "BLOB"), "BLOB", pa.binary()),
    (col(1, "DATE"), "DATE", pa.date32()), (col(1, "TIME", scale=3), "TIME(3)", pa.time64("us")),
    (col(1, "TIME"), "TIME(0)", pa.time64("us")),
    (col(1, "DATETIME", scale=9), "TIMESTAMP(9)", pa.timestamp("us")),
    (col(1, "DATETIME", scale=None), "TIMESTAMP", pa.timestamp("us")),
    (col(1, "boolean"), "BOOLEAN", pa.bool_()), (col(1, "GEOMETRY"), "VARCHAR", pa.string()),
]


@pytest.mark.parametrize("column,type_name,arrow", TYPES,
                         ids=[f"{c['type']}-{t}" for c, t, _ in TYPES])
def test_type_mapping(column, type_name, arrow):
    t, = Catalog.from_qlik([md({"C": column})])
    assert t.columns[0].type.name == type_name
    assert t.columns[0].type.arrow_type == arrow
    assert t.columns[0].nullable


def test_lob_columns_are_flagged():
    t, = Catalog.from_qlik([md({"A": col(1, "CLOB"), "B": col(2, "NCLOB"), "C": col(3, "BLOB"),
                                "D": col(4, "STRING", 5)})])
    assert [c.type.is_lob for c in t.columns] == [True, True, True, False]


def test_every_input_shape():
    one = md(ORDERS)
    want = Catalog.from_qlik([one]).to_dict()
    text = json.dumps(one)
    assert Catalog.from_qlik(one).to_dict() == want                       # one dict
    assert Catalog.from_qlik([text.encode()]).to_dict() == want           # bytes messages
    assert Catalog.from_qlik([text]).to_dict() == want                    # str messages
    assert Catalog.from_qlik(json.dumps(one, indent=4) + "\n" + text).to_dict() == want
    assert Catalog.from_qlik([md(ORDERS, kafka=False)]).to_dict() == want  # the Pub/Sub form
    data = {"magic": "atMSG", "type": "DT", "message": {"data": {}, "headers": {}}}
    assert Catalog.from_qlik([None, "", json.dumps(data), text]).to_dict() == want


def test_the_latest_definition_wins_in_first_order():
    v2 = dict(ORDERS, EXTRA=col(5, "DATE"))
    other = md({"X": col(1, "INT4")}, table="OTHER")
    cat = Catalog.from_qlik([md(ORDERS), other, md(v2)])
    assert [t.name for t in cat] == ["SRC.ORDERS", "SRC.OTHER"]
    assert [c.name for c in cat.get("SRC.ORDERS").columns][-1] == "EXTRA"


def test_order_as_sent_without_ordinals_and_no_schema():
    cols = {"B": {"type": "INT4"}, "A": col(1, "INT4")}
    t, = Catalog.from_qlik([md(cols, schema="")])
    assert [c.name for c in t.columns] == ["B", "A"] and t.schema is None and t.name == "ORDERS"


def test_metadata_without_structure_describes_nothing():
    body = md(ORDERS)
    del body["message"]["tableStructure"]
    assert len(Catalog.from_qlik([body])) == 0


@pytest.mark.parametrize("change,text", [
    (lambda m: m["message"].pop("lineage"), "message #0: message.lineage: missing"),
    (lambda m: m["message"]["lineage"].update(table=""),
     "message #0: message.lineage.table: missing"),
    (lambda m: m["message"]["lineage"].update(table=5),
     "message #0: message.lineage.table: 5 is not a table name"),
    (lambda m: m["message"].update(tableStructure=[]),
     "message #0: message.tableStructure: [] is not an object"),
    (lambda m: m["message"]["tableStructure"].pop("tableColumns"),
     "message #0: message.tableStructure.tableColumns: missing"),
    (lambda m: m["message"]["tableStructure"]["tableColumns"].update(NOTE="x"),
     "message #0: message.tableStructure.tableColumns.NOTE: 'x' is not an object"),
    (lambda m: m["message"].update(schemaId=[1]),
     "message #0: message.schemaId: [1] is not a string"),
])
def test_malformed_metadata_is_named(change, text):
    m = md(json.loads(json.dumps(ORDERS)))
    change(m)
    with pytest.raises(ValueError) as e:
        Catalog.from_qlik([m])
    assert str(e.value) == text


def test_malformed_json_is_named():
    with pytest.raises(ValueError, match=r"message #1 is not valid JSON"):
        Catalog.from_qlik([json.dumps(md(ORDERS)), "{"])
    with pytest.raises(ValueError, match=r"document #1 \(byte \d+ of the stream\)"):
        Catalog.from_qlik(json.dumps(md(ORDERS)) + "\n{")


@pytest.mark.parametrize("dec", [cdcfast, cdcfast.reference], ids=["native", "reference"])
def test_generated_metadata_describes_the_generated_catalog(dec):
    """What the generator writes as metadata messages is its catalog; decoding with the
    metadata alone gives what decoding with the catalog gives."""
    msgs, cat = generate("qlik", 300, table_width=45, tables=2, seed=4, messages=True)
    assert Catalog.from_qlik(msgs).to_dict() == cat.to_dict()
    with_cat = dec.decode_tables(msgs, format="qlik", catalog=cat)
    alone = dec.decode_tables(msgs, format="qlik")
    assert with_cat.keys() == alone.keys() == {"GEN.TABLE_1", "GEN.TABLE_2"}
    for k in with_cat:
        assert with_cat[k].equals(alone[k])
