"""The catalog (SPEC §2): every type of the table, its Arrow type, errors, JSON round trip."""
import json

import pyarrow as pa
import pytest

from cdcfast import Catalog
from cdcfast.catalog import parse_type

UTC = pa.timestamp("us", tz="UTC")

TYPES = [
    ("TINYINT", pa.int8()), ("SMALLINT", pa.int16()), ("INTEGER", pa.int32()),
    ("int", pa.int32()), ("BIGINT", pa.int64()),
    ("DECIMAL(9,2)", pa.decimal128(9, 2)), ("DEC(7)", pa.decimal128(7, 0)),
    ("NUMERIC", pa.decimal128(5, 0)), ("decimal ( 31 , 8 )", pa.decimal128(31, 8)),
    ("NUMBER(10,2)", pa.decimal128(10, 2)), ("NUMBER", pa.string()),
    ("DECFLOAT", pa.string()), ("DECFLOAT(16)", pa.string()), ("DECFLOAT(34)", pa.string()),
    ("REAL", pa.float32()), ("FLOAT(21)", pa.float32()), ("FLOAT(22)", pa.float64()),
    ("BINARY_FLOAT", pa.float32()), ("DOUBLE", pa.float64()),
    ("DOUBLE PRECISION", pa.float64()), ("FLOAT", pa.float64()), ("BINARY_DOUBLE", pa.float64()),
    ("CHAR(8)", pa.string()), ("CHARACTER(3)", pa.string()), ("VARCHAR(20)", pa.string()),
    ("LONG VARCHAR", pa.string()), ("GRAPHIC(4)", pa.string()), ("VARGRAPHIC(9)", pa.string()),
    ("CLOB(1M)", pa.string()), ("DBCLOB(10K)", pa.string()), ("XML", pa.string()),
    ("VARCHAR2(30 BYTE)", pa.string()), ("NVARCHAR2(30)", pa.string()), ("NCHAR(2)", pa.string()),
    ("NCLOB", pa.string()),
    ("BINARY(16)", pa.binary()), ("VARBINARY(100)", pa.binary()), ("BLOB(2G)", pa.binary()),
    ("RAW(16)", pa.binary()), ("CHAR(10) FOR BIT DATA", pa.binary()),
    ("varchar(40) for bit data", pa.binary()), ("ROWID", pa.binary()),
    ("DATE", pa.date32()), ("TIME", pa.time64("us")), ("TIME(3)", pa.time64("us")),
    ("TIMESTAMP", pa.timestamp("us")), ("TIMESTAMP(12)", pa.timestamp("us")),
    ("TIMESTAMP(0)", pa.timestamp("us")), ("TIMESTAMP WITH TIME ZONE", UTC),
    ("TIMESTAMP(3) WITH TIME ZONE", UTC), ("BOOLEAN", pa.bool_()),
]


@pytest.mark.parametrize("name,arrow", TYPES)
def test_type_table(name, arrow):
    assert parse_type(name).arrow_type == arrow


def test_defaults_and_facts():
    assert parse_type("TIMESTAMP").precision == 6
    assert parse_type("TIME").precision == 0
    assert parse_type("DECIMAL").precision == 5 and parse_type("DECIMAL").scale == 0
    assert parse_type("CLOB(1M)").is_lob and not parse_type("CLOB(1M)").is_char
    assert parse_type("VARCHAR(3)").is_char and not parse_type("VARCHAR(3)").is_lob
    assert parse_type("BLOB").is_lob
    assert not parse_type("CHAR(4) FOR BIT DATA").is_char


@pytest.mark.parametrize("bad", ["FOO", "INT(3)", "DECIMAL(40,2)", "DECIMAL(5,7)", "VARCHAR(3,2)",
                                 "TIMESTAMP(13)", "DECFLOAT(20)", "DATE FOR BIT DATA",
                                 "INTEGER WITH TIME ZONE", ""])
def test_unknown_types_are_rejected(bad):
    with pytest.raises(ValueError):
        parse_type(bad)


def test_unknown_type_names_table_and_column():
    with pytest.raises(ValueError, match=r"TEST\.T.*SALARY.*MONEY"):
        Catalog.from_dict({"tables": [{"schema": "TEST", "table": "T", "columns": [
            {"name": "ID", "type": "INTEGER"}, {"name": "SALARY", "type": "MONEY"}]}]})


def test_malformed_catalogs():
    for bad in [{}, {"tables": {}}, {"tables": [{"columns": []}]},
                {"tables": [{"table": "T", "columns": [{"name": "A"}]}]},
                {"tables": [{"table": "T", "columns": [{"name": "A", "type": "INT"},
                                                      {"name": "A", "type": "INT"}]}]},
                {"tables": [{"table": "T", "key": ["B"],
                             "columns": [{"name": "A", "type": "INT"}]}]},
                {"tables": [{"table": "T", "columns": []}, {"table": "T", "columns": []}]}]:
        with pytest.raises(ValueError):
            Catalog.from_dict(bad)


CAT = {"tables": [
    {"schema": "TEST", "table": "EMPLOYEE", "key": ["LAST_NAME"],
     "aliases": ["TEST.EMPLOYE"],
     "columns": [{"name": "FIRST_NAME", "type": "VARCHAR(20)"},
                 {"name": "LAST_NAME", "type": "VARCHAR(20)", "nullable": False},
                 {"name": "SALARY", "type": "DECIMAL(9,2)"}]},
    {"table": "bare", "columns": [{"name": "x", "type": "bigint"}]},
]}


def test_round_trip_and_lookup(tmp_path):
    cat = Catalog.from_dict(CAT)
    assert cat.to_dict() == CAT | {"tables": [
        CAT["tables"][0], {"table": "bare", "columns": [{"name": "x", "type": "BIGINT"}]}]}
    path = tmp_path / "c.json"
    cat.save(path)
    again = Catalog.load(path)
    assert again.to_dict() == cat.to_dict()
    assert json.loads(path.read_text()) == cat.to_dict()
    emp = cat.get("TEST.EMPLOYEE")
    assert emp.name == "TEST.EMPLOYEE" and emp.key == ("LAST_NAME",)
    assert [c.nullable for c in emp.columns] == [True, False, True]
    assert cat.get("test.employee") is emp          # case-insensitive after exact
    assert cat.get("TEST.EMPLOYE") is emp           # an alias
    assert cat.get("bare").name == "bare"
    assert cat.get("TEST.NOPE") is None
    assert Catalog.coerce(str(path)).to_dict() == cat.to_dict()
    assert Catalog.coerce(CAT).get("TEST.EMPLOYEE").columns[2].type.arrow_type == \
        pa.decimal128(9, 2)


def test_catalog_values_copy_as_themselves():
    """Tables, columns and types never change: a copy, deep or not, is the value itself (a
    call on several threads deep-copies the state each piece starts from)."""
    import copy
    from cdcfast.catalog import Catalog
    cat = Catalog.from_dict({"tables": [{"schema": "S", "table": "T", "columns": [
        {"name": "A", "type": "INTEGER"}, {"name": "B", "type": "VARCHAR(10)"}]}]})
    t = cat.tables[0]
    state = {"layouts": {"S.T": [t, list(t.columns)]}}
    got = copy.deepcopy(state)
    assert got == state and got["layouts"] is not state["layouts"]
    assert got["layouts"]["S.T"][0] is t
    assert got["layouts"]["S.T"][1] is not state["layouts"]["S.T"][1]     # (a list: copied)
    assert all(a is b for a, b in zip(got["layouts"]["S.T"][1], t.columns))
    assert copy.copy(t.columns[0].type) is t.columns[0].type


@pytest.mark.parametrize("fmt, opts, old, new", [
    ("olr", {"columns": True, "full": True}, b'"name":"NAME"', b'"name":""'),
    ("debezium", {"schemas": True}, b'"field":"NAME"', b'"field":""'),
    ("qlik", {}, b'"ITEM_NO":{"ordinal"', b'"":{"ordinal"')])
def test_a_built_catalog_has_no_unnamed_column(fmt, opts, old, new):
    """A column the messages name "" cannot be written to a catalog file and read back
    (from_dict needs a name): the builders refuse it as they refuse other bad definitions
    (found by fuzz/catalog.py: Catalog.from_olr built it, to_dict/from_dict then failed)."""
    from cdcfast.encode import generate
    data, _ = generate(fmt, rows=30, table_width=4, seed=1, **opts)
    assert old in data
    with pytest.raises(ValueError, match="has no name|without a name"):
        getattr(Catalog, f"from_{fmt}")(data.replace(old, new))
    Catalog.from_dict(getattr(Catalog, f"from_{fmt}")(data).to_dict())     # (the rest builds)
