"""`columns=` in Spark (SPEC §1, §6): the data source's option `columns` and a user-specified
subset schema, and `columns=` of cs.decode / cs.map_in_arrow / cs.pandas_udf /
cs.decode_tables / cs.spark_schema, give what cdcfast.decode(columns=…) gives in Python."""
from __future__ import annotations

import json

import pyarrow as pa
import pytest

import cdcfast
from cdcfast import spark as cs

pytest.importorskip("pyspark")

PROJECTION = "op,commit_ts,commit_pos,seq,after"


@pytest.fixture(scope="module", params=["ibm-delimited", "debezium"])
def files(request, tmp_path_factory):
    """Two files of a generated two-table stream, its catalog file, the format."""
    fmt = request.param
    folder = tmp_path_factory.mktemp(fmt)
    data, cat = cdcfast.encode.generate(fmt, 400, table_width=6, tables=2, seed=9)
    lines = data.split(b"\n")
    half = len(lines) // 2
    if fmt == "debezium":           # cut at a line that opens a document
        while half < len(lines) and not lines[half].startswith(b"{"):
            half += 1
    paths = [folder / "in" / "a.dat", folder / "in" / "b.dat"]
    paths[0].parent.mkdir()
    paths[0].write_bytes(b"\n".join(lines[:half]) + b"\n")
    paths[1].write_bytes(b"\n".join(lines[half:]))
    catalog = folder / "catalog.json"
    catalog.write_text(json.dumps(cat.to_dict()))
    return fmt, cat, paths, catalog


def in_python(fmt, cat, paths, table, columns):
    """decode of each file (each an input of its own), in Spark's types, rows by seq."""
    t = pa.concat_tables([cdcfast.decode(p.read_bytes(), fmt, catalog=cat, table=table,
                                         columns=columns) for p in paths])
    return t.cast(cs._spark_arrow_schema(t.schema, False))


def rows(table: pa.Table) -> list:
    return sorted(table.to_pylist(), key=lambda r: json.dumps(r, sort_keys=True, default=str))


def reader(spark, fmt, catalog, table):
    cs.register(spark)
    return spark.read.format("cdcfast").option("format", fmt).option("catalog", str(catalog)) \
        .option("table", table)


def test_the_option_columns(spark, files):
    fmt, cat, paths, catalog = files
    table = cat.tables[0].name
    df = reader(spark, fmt, catalog, table).option("columns", PROJECTION) \
        .load(str(paths[0].parent))
    assert df.columns == ["op", "commit_ts", "commit_pos", "seq", "after", "_error"]
    want = in_python(fmt, cat, paths, table, PROJECTION)
    got = df.toArrow()
    assert got.num_rows == want.num_rows > 0
    assert rows(got.cast(want.schema)) == rows(want)


def test_a_user_schema_selects_as_columns_does(spark, files):
    fmt, cat, paths, catalog = files
    table = cat.tables[1].name
    c0, c1 = (c.name for c in cat.get(table).columns[:2])
    full = cs.spark_schema(fmt, catalog=cat, table=table, time_type=False)
    after = full["after"].dataType
    from pyspark.sql.types import StructField, StructType
    narrow = StructType([after[c1], after[c0]][::-1])      # table order
    # any order of the envelope's columns; an image struct with some of its columns
    schema = StructType([full["_error"], StructField("after", narrow), full["seq"],
                         full["op"]])
    got = reader(spark, fmt, catalog, table).schema(schema).load(str(paths[0].parent))
    assert got.schema == schema
    want = in_python(fmt, cat, paths, table, ["op", "seq", f"after.{c0}", f"after.{c1}"])
    got = got.toArrow().select(want.schema.names)
    assert rows(got.cast(want.schema)) == rows(want)
    with pytest.raises(Exception, match="must include `_error string`"):
        reader(spark, fmt, catalog, table).schema(StructType([full["op"]])) \
            .load(str(paths[0])).collect()
    with pytest.raises(Exception, match="not an envelope column"):
        reader(spark, fmt, catalog, table).schema("op string, _error string, nope int") \
            .load(str(paths[0])).collect()
    with pytest.raises(Exception, match="the schema's seq is int; the data source gives bigint"):
        reader(spark, fmt, catalog, table).schema("seq int, _error string") \
            .load(str(paths[0])).collect()


def test_message_column_adapters(spark, files):
    fmt, cat, paths, catalog = files
    table = cat.tables[0].name
    c = cat.get(table).columns[3].name
    cols = ["seq", "op", f"before.{c}", "present"]
    msgs = [p.read_bytes() for p in paths]
    df = spark.createDataFrame([(m, i) for i, m in enumerate(msgs)], "value binary, n int")
    want = in_python(fmt, cat, paths, table, cols)
    got = cs.decode(df, fmt, catalog=cat, table=table, keep=["n"], columns=cols).toArrow()
    assert got.column_names == ["op", "seq", "before", "present", "_error", "n"]
    assert rows(got.drop_columns(["n"]).cast(want.schema)) == rows(want)
    schema = cs.spark_schema(fmt, catalog=cat, table=table, columns=cols, time_type=False)
    assert [f.name for f in schema.fields] == ["op", "seq", "before", "present", "_error"]
    assert [f.name for f in schema["before"].dataType.fields] == [c]
    udf = cs.pandas_udf(fmt, catalog=cat, table=table, columns=cols)
    events = df.select(udf("value").alias("e")).toArrow().column("e").combine_chunks()
    flat = pa.Table.from_struct_array(events.flatten())
    assert rows(flat.cast(want.schema)) == rows(want)
    per_table = cs.decode_tables(df, fmt, catalog=cat, columns=["op", f"after.{c}"])
    want = cdcfast.decode_tables(msgs, fmt, catalog=cat, columns=["op", f"after.{c}"])
    for t in cat.tables:
        got = per_table[t.name].toArrow()
        mine = want[t.name].cast(cs._spark_arrow_schema(want[t.name].schema, False))
        assert got.num_rows == mine.num_rows > 0
        assert rows(got.cast(mine.schema)) == rows(mine)
    with pytest.raises(ValueError, match="unknown name 'opx'"):
        cs.decode(df, fmt, catalog=cat, table=table, columns="opx")


def test_bitmask_flags_and_testing_a_bit_in_sql(spark, files):
    fmt, cat, paths, catalog = files
    table = cat.tables[0].name
    col = cat.get(table).columns[2].name
    df = reader(spark, fmt, catalog, table).option("flags", "bitmask") \
        .option("columns", "seq,op,changed,present").load(str(paths[0].parent))
    assert dict(df.dtypes)["changed"] == "bigint"
    got = df.selectExpr("seq", "op", f"{cs.flag_sql('changed', cat, table, col)} AS c") \
        .toArrow()
    want = pa.concat_tables([cdcfast.decode(p.read_bytes(), fmt, catalog=cat, table=table,
                                            columns="seq,op,changed") for p in paths])
    expect = sorted((r["seq"], r["op"], None if r["changed"] is None else r["changed"][col])
                    for r in want.to_pylist())
    assert sorted((r["seq"], r["op"], r["c"]) for r in got.to_pylist()) == expect
    assert any(e[2] for e in expect) and any(e[2] is False for e in expect)
    msgs = spark.createDataFrame([(p.read_bytes(),) for p in paths], "value binary")
    mapped = cs.decode(msgs, fmt, catalog=cat, table=table, columns="seq,present",
                       flags="bitmask")
    assert dict(mapped.dtypes)["present"] == "bigint"
    assert mapped.count() == want.num_rows
