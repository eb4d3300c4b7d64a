"""Catalog.from_olr (SPEC §2, §5.4): tables from the schema.columns OpenLogReplicator sends."""
from __future__ import annotations

import json

import pyarrow as pa
import pytest

import cdcfast
from cdcfast import Catalog
from cdcfast.encode import generate

COLUMNS = [
    {"name": "ID", "type": "number", "precision": 10, "scale": 0, "nullable": False},
    {"name": "N", "type": "number", "precision": -1, "scale": -1, "nullable": True},
    {"name": "BIG", "type": "number", "precision": 40, "scale": 0, "nullable": True},
    {"name": "NEG", "type": "number", "precision": 5, "scale": -2, "nullable": True},
    {"name": "P", "type": "number", "precision": 7, "nullable": True},
    {"name": "I", "type": "integer", "nullable": True},
    {"name": "V", "type": "varchar2", "length": 100, "nullable": True},
    {"name": "NV", "type": "nvarchar2", "length": 20, "nullable": True},
    {"name": "C", "type": "char", "length": 3, "nullable": True},
    {"name": "NC", "type": "nchar", "nullable": True},
    {"name": "CL", "type": "clob", "nullable": True},
    {"name": "NCL", "type": "nclob", "nullable": True},
    {"name": "R", "type": "raw", "length": 16, "nullable": True},
    {"name": "BL", "type": "blob", "nullable": True},
    {"name": "D", "type": "date", "nullable": True},
    {"name": "TS", "type": "timestamp", "length": 11, "nullable": True},
    {"name": "TZ", "type": "timestamp with time zone", "length": 13, "nullable": True},
    {"name": "BF", "type": "binary_float", "nullable": True},
    {"name": "BD", "type": "binary_double", "nullable": True},
    {"name": "FL", "type": "float", "nullable": True},
    {"name": "B", "type": "boolean"},
    {"name": "L", "type": "long", "nullable": True},
    {"name": "RID", "type": "rowid", "nullable": True},
    {"name": "IYM", "type": "interval year to month", "length": 5, "nullable": True},
    {"name": "LTZ", "type": "timestamp with local time zone", "length": 11, "nullable": True},
    {"name": "U", "type": "unknown", "nullable": True},
    {"name": "ID", "type": "varchar2", "length": 5, "nullable": True},       # twice: the first
]
TYPES = {
    "ID": "NUMBER(10,0)", "N": "NUMBER", "BIG": "NUMBER", "NEG": "NUMBER", "P": "NUMBER(7,0)",
    "I": "NUMBER(38,0)", "V": "VARCHAR2(100)", "NV": "NVARCHAR2(20)", "C": "CHAR(3)",
    "NC": "NCHAR", "CL": "CLOB", "NCL": "NCLOB", "R": "RAW(16)", "BL": "BLOB", "D": "DATE",
    "TS": "TIMESTAMP", "TZ": "TIMESTAMP WITH TIME ZONE", "BF": "BINARY_FLOAT",
    "BD": "BINARY_DOUBLE", "FL": "FLOAT", "B": "BOOLEAN", "L": "VARCHAR2", "RID": "VARCHAR2",
    "IYM": "VARCHAR2", "LTZ": "VARCHAR2", "U": "VARCHAR2",
}


def message(columns, table="T", owner="OLR_TEST", op="c", **after) -> dict:
    schema = {"owner": owner, "table": table} if owner else {"table": table}
    schema["columns"] = columns
    return {"scn": 1, "tm": 1, "xid": "1.2.3",
            "payload": [{"op": op, "schema": schema, "after": after or {"ID": 1}}]}


def test_types_names_and_nullability():
    cat = Catalog.from_olr([message(COLUMNS)])
    (t,) = cat.tables
    assert (t.schema, t.table, t.name, t.key) == ("OLR_TEST", "T", "OLR_TEST.T", ())
    assert {c.name: c.type.name for c in t.columns} == TYPES
    assert [c.name for c in t.columns] == list(TYPES)
    assert [c.name for c in t.columns if not c.nullable] == ["ID"]
    # it round-trips through the catalog's JSON
    again = Catalog.from_dict(json.loads(json.dumps(cat.to_dict())))
    assert again.to_dict() == cat.to_dict()


def test_the_catalog_types_columns_as_the_decoder_does_without_one():
    m = json.dumps(message(COLUMNS, ID=1, N=1.5, D="86400", TS="86400", B=1, I=7))
    cat = Catalog.from_olr(m)
    for dec in (cdcfast, cdcfast.reference):
        bare = dec.decode([m], format="olr")
        typed = dec.decode([m], format="olr", catalog=cat)
        assert bare.equals(typed)
    schema = cdcfast.Decoder("olr", catalog=cat).schema("OLR_TEST.T")
    after = schema.field("after").type
    assert after.field("D").type == pa.timestamp("us")        # Oracle DATE: a time of day
    assert after.field("N").type == pa.string() and after.field("I").type == pa.decimal128(38, 0)


def test_message_forms():
    msgs = [message(COLUMNS[:2]), message(COLUMNS[:3], table="U")]
    stream = "\n".join(json.dumps(m) for m in msgs)
    forms = [msgs, stream, stream.encode(), [json.dumps(m).encode() for m in msgs],
             [None, "", json.dumps(msgs[0]), msgs[1]]]
    for form in forms:
        cat = Catalog.from_olr(form)
        assert [t.name for t in cat.tables] == ["OLR_TEST.T", "OLR_TEST.U"]
        assert [len(t.columns) for t in cat.tables] == [2, 3]
    assert [t.name for t in Catalog.from_olr(msgs[1]).tables] == ["OLR_TEST.U"]


def test_the_newest_definition_wins_and_keeps_its_place():
    msgs = [message(COLUMNS[:2]), message(COLUMNS[:1], table="U"),
            message([{"name": "ID", "type": "varchar2", "length": 4}]),
            {"payload": [{"op": "begin"}, {"op": "c", "schema": {"owner": "OLR_TEST",
                                                                  "table": "T"}}]}]
    cat = Catalog.from_olr(msgs)
    assert [t.name for t in cat.tables] == ["OLR_TEST.T", "OLR_TEST.U"]
    assert [(c.name, c.type.name) for c in cat.get("OLR_TEST.T").columns] == [
        ("ID", "VARCHAR2(4)")]


def test_schemaless_tables_and_other_elements():
    msgs = [message(COLUMNS[:1], table="OBJ_73001", owner=None),
            {"scn": 5, "payload": [{"op": "chkpt", "seq": 1, "offset": 0}]},
            {"payload": "not a list"}, {"no": "payload"}, "[1, 2]",
            {"payload": [{"op": "ddl", "schema": {"owner": "A", "table": "X",
                                                  "columns": COLUMNS[:1]}}]}]
    cat = Catalog.from_olr(msgs)
    assert [t.name for t in cat.tables] == ["OBJ_73001", "A.X"]
    assert cat.tables[0].schema is None


def test_generated_streams_with_columns():
    data, gen_cat = generate("olr", 60, table_width=24, tables=2, seed=5, columns=True)
    cat = Catalog.from_olr(data)
    assert [t.name for t in cat.tables] == [t.name for t in gen_cat.tables]
    for ours, theirs in zip(cat.tables, gen_cat.tables):
        assert [c.name for c in ours.columns] == [c.name for c in theirs.columns]
        assert [c.nullable for c in ours.columns] == [c.nullable for c in theirs.columns]
        assert [c.type.arrow_type for c in ours.columns] == [c.type.arrow_type
                                                             for c in theirs.columns]
    a = cdcfast.reference.decode_tables(data, format="olr", catalog=cat)
    b = cdcfast.reference.decode_tables(data, format="olr", catalog=gen_cat)
    assert a.keys() == b.keys() and all(a[k].equals(b[k]) for k in a)


def test_bad_input_is_a_value_error():
    with pytest.raises(ValueError, match=r"message #1 is not valid JSON"):
        Catalog.from_olr([json.dumps(message(COLUMNS[:1])), "{oops"])
    with pytest.raises(ValueError, match=r"document #1 \(byte \d+ of the stream\)"):
        Catalog.from_olr(json.dumps(message(COLUMNS[:1])) + "\n{oops")
    with pytest.raises(ValueError, match=r"message #0, payload\[0\]: table OLR_TEST.T: "
                                         r"'columns' is not a list of objects with a name"):
        Catalog.from_olr([message([{"type": "number"}])])
    with pytest.raises(ValueError, match="'columns' is not a list"):
        Catalog.from_olr([message("ID")])
