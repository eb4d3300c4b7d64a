"""The Spark layer (SPEC §6) on a real local SparkSession: what Spark returns equals
cdcfast.decode on the same generated input, for the message-column adapters (mapInArrow,
pandas_udf), the file data source (batch and streaming) and the modes."""
from __future__ import annotations

import json
import os
import shutil
import time

import pyarrow as pa
import pytest

import cdcfast
from cdcfast import spark as cs

pytest.importorskip("pyspark")

FMT = "ibm-delimited"
TABLE = "SALES.ORDERS_0"


@pytest.fixture(scope="module")
def stream():
    """600 generated records (every column type, TIME included) in 150-odd messages."""
    msgs, cat = cdcfast.encode.generate(FMT, rows=600, seed=4, messages=True)
    return msgs, cat


def kafka_df(spark, msgs, partitions=3):
    rows = [(m, f"t{i % 2}", i % 4, 1000 + i) for i, m in enumerate(msgs)]
    return spark.createDataFrame(rows, "value binary, topic string, partition int, offset long") \
        .repartition(partitions) if partitions > 1 else \
        spark.createDataFrame(rows, "value binary, topic string, partition int, offset long")


def expected(msgs, cat, **kw) -> pa.Table:
    """cdcfast.decode of the messages, in the types Spark exchanges."""
    t = cdcfast.decode(msgs, format=FMT, catalog=cat, table=TABLE, **kw)
    return t.cast(cs._spark_arrow_schema(t.schema, False))


def by_key(table: pa.Table, keys=("offset", "seq")) -> list:
    rows = table.to_pylist()
    return sorted(rows, key=lambda r: tuple(r[k] for k in keys))


def test_decode_equals_python_with_kept_columns(spark, stream):
    msgs, cat = stream
    df = kafka_df(spark, msgs, partitions=1)
    got = cs.decode(df, format=FMT, catalog=cat, table=TABLE,
                    keep=["topic", "partition", "offset"]).toArrow()
    want = expected(msgs, cat)
    assert got.num_rows == want.num_rows == 600
    assert got.column_names == want.column_names + ["topic", "partition", "offset"]
    assert got.select(want.column_names).cast(want.schema).equals(want)
    # every event carries its message's row: count the events per message from Python
    per_msg = [cdcfast.decode([m], format=FMT, catalog=cat, table=TABLE).num_rows for m in msgs]
    offsets = got.column("offset").to_pylist()
    assert offsets == [1000 + i for i, k in enumerate(per_msg) for _ in range(k)]
    assert got.column("topic").to_pylist() == [f"t{(o - 1000) % 2}" for o in offsets]


def test_decode_across_partitions(spark, stream):
    """Rows spread over 3 partitions: the same events, each with its own row's columns."""
    msgs, cat = stream
    got = cs.decode(kafka_df(spark, msgs, 3), format=FMT, catalog=cat,
                    keep=["offset"]).toArrow()
    want = expected(msgs, cat)
    index = [i for i, m in enumerate(msgs)
             for _ in range(cdcfast.decode([m], format=FMT, catalog=cat).num_rows)]
    want = want.append_column("offset", pa.array([1000 + i for i in index], pa.int64()))
    assert by_key(got.cast(want.schema)) == by_key(want)


def test_map_in_arrow_and_schema(spark, stream):
    msgs, cat = stream
    df = kafka_df(spark, msgs, 1)
    fn, schema = cs.map_in_arrow(format=FMT, catalog=cat, table=TABLE, column="value")
    assert schema == cs.spark_schema(FMT, catalog=cat, table=TABLE)
    assert [f.name for f in schema][:4] == ["op", "source_op", "schema", "table"]
    got = df.select("value").mapInArrow(fn, schema).toArrow()
    assert got.cast(expected(msgs, cat).schema).equals(expected(msgs, cat))
    from pyspark.sql.types import DecimalType, TimestampNTZType, TimestampType
    after = schema["after"].dataType
    assert after["AMOUNT"].dataType == DecimalType(11, 2)
    # Db2's TIMESTAMP is a wall clock; WITH TIME ZONE and the envelope's times are instants
    assert after["CREATED_TS"].dataType == TimestampNTZType()
    assert after["EVENT_TSZ"].dataType == TimestampType()
    assert schema["commit_ts"].dataType == TimestampType()


def test_time_columns_as_text_or_spark_time(spark, stream):
    """TIME is ISO text unless the session enables Spark's TIME type (Spark 4.x keeps it off:
    without it Spark can neither write nor cast TIME values)."""
    msgs, cat = stream
    want = cdcfast.decode(msgs, format=FMT, catalog=cat)
    times = want.column("after").combine_chunks().field("SHIP_TIME").to_pylist()
    assert sum(t is not None for t in times) > 300
    assert not cs.time_type_enabled(spark)
    df = kafka_df(spark, msgs, 1)
    got = cs.decode(df, format=FMT, catalog=cat).toArrow()
    assert got.column("after").combine_chunks().field("SHIP_TIME").to_pylist() == \
        [t.strftime("%H:%M:%S.%f") if t is not None else None for t in times]
    try:
        from pyspark.sql.types import TimeType
    except ImportError:
        return
    spark.conf.set("spark.sql.timeType.enabled", "true")
    try:
        frame = cs.decode(df, format=FMT, catalog=cat)
        assert isinstance(frame.schema["after"].dataType["SHIP_TIME"].dataType, TimeType)
        got = frame.toArrow()
        assert got.column("after").combine_chunks().field("SHIP_TIME").to_pylist() == times
    finally:
        spark.conf.set("spark.sql.timeType.enabled", "false")


def test_pandas_udf_gives_each_message_its_events(spark, stream):
    msgs, cat = stream
    df = kafka_df(spark, msgs[:40], 1)
    udf = cs.pandas_udf(format=FMT, catalog=cat, table=TABLE)
    got = df.select("offset", udf("value").alias("events")).orderBy("offset").collect()
    assert len(got) == 40
    for row, m in zip(got, msgs[:40]):
        want = cdcfast.decode([m], format=FMT, catalog=cat, table=TABLE)
        assert [e["seq"] for e in row.events] == want.column("seq").to_pylist()
        assert [e["after"]["ORDER_ID"] if e["after"] else None for e in row.events] == \
            [a["ORDER_ID"] if a else None for a in want.column("after").to_pylist()]


def test_decode_tables_and_unattributable_records(spark):
    msgs, cat = cdcfast.encode.generate(FMT, rows=300, tables=2, seed=6, messages=True,
                                        table_width=6)
    msgs = list(msgs) + [b'garbage,"unterminated']
    df = kafka_df(spark, msgs, 1)
    got = cs.decode_tables(df, format=FMT, catalog=cat, keep=["offset"])
    want = cdcfast.decode_tables(msgs, format=FMT, catalog=cat)
    assert set(got) == set(want) and None in got and len(got) == 3
    for key in [t.name for t in cat.tables]:
        t = got[key].toArrow()
        assert t.drop_columns(["offset"]).cast(want[key].schema).equals(want[key]), key
    # in Spark each row is its own input: the error names message 0 (Python: its index)
    bad = got[None].collect()
    assert len(bad) == 1 and bad[0]._corrupt_record == b'garbage,"unterminated'
    assert bad[0].offset == 1000 + len(msgs) - 1
    assert bad[0]._error == want[None].column("_error")[0].as_py().replace(
        f"message {len(msgs) - 1},", "message 0,")


def test_modes_in_a_spark_task(spark, stream):
    msgs, cat = stream
    import re
    bad = re.sub(rb'"(ISRT|REPL|DLET)"', b'"XXXX"', msgs[3], count=1)
    assert bad != msgs[3]
    data = msgs[:10] + [bad]
    df = kafka_df(spark, data, 1)
    permissive = cs.decode(df, format=FMT, catalog=cat).toArrow()
    assert permissive.column("_error").null_count == permissive.num_rows - 1
    dropped = cs.decode(df, format=FMT, catalog=cat, mode="DROPMALFORMED").toArrow()
    assert dropped.num_rows == permissive.num_rows - 1
    with pytest.raises(Exception, match="operation"):
        cs.decode(df, format=FMT, catalog=cat, mode="FAILFAST").collect()


def test_spark_layer_needs_a_catalog(spark, stream):
    msgs, _ = stream
    with pytest.raises(ValueError, match="catalog"):
        cs.decode(kafka_df(spark, msgs[:3], 1), format=FMT)


# -- the data source ---------------------------------------------------------------------------
def write_files(folder, count, rows=200, seed=10):
    """`count` generated files, each a stream of one table, and the catalog."""
    os.makedirs(folder, exist_ok=True)
    paths, cat = [], None
    for i in range(count):
        data, cat = cdcfast.encode.generate(FMT, rows=rows, seed=seed + i)
        p = os.path.join(folder, f"part-{seed + i:03d}.del")
        with open(p + ".tmp", "wb") as f:
            f.write(data)
        os.replace(p + ".tmp", p)               # moved in whole, as a writer should
        paths.append(p)
    return paths, cat


def file_events(paths, cat) -> pa.Table:
    ts = [cdcfast.decode(p, format=FMT, catalog=cat, table=TABLE) for p in paths]
    t = pa.concat_tables(ts)
    return t.cast(cs._spark_arrow_schema(t.schema, False))


def sorted_rows(t: pa.Table) -> list:
    return sorted(json.dumps(r, default=str, sort_keys=True) for r in t.to_pylist())


def test_data_source_reads_files_folders_and_globs(spark, tmp_path):
    cs.register(spark)
    paths, cat = write_files(tmp_path / "in", 3)
    catalog_file = tmp_path / "catalog.json"
    catalog_file.write_text(json.dumps(cat.to_dict()))
    reader = spark.read.format("cdcfast").option("format", FMT) \
        .option("catalog", str(catalog_file)).option("table", TABLE)
    want = file_events(paths, cat)
    folder = reader.load(str(tmp_path / "in")).toArrow()
    assert sorted_rows(folder.cast(want.schema)) == sorted_rows(want)
    # three small files on two cores: packed as Spark packs files (tests/test_spark_files.py)
    assert reader.load(str(tmp_path / "in")).rdd.getNumPartitions() == 2
    one = reader.load(paths[1]).toArrow()
    assert one.cast(want.schema).equals(file_events(paths[1:2], cat))
    globbed = reader.load(str(tmp_path / "in" / "part-01[01].del")).toArrow()
    assert sorted_rows(globbed.cast(want.schema)) == sorted_rows(file_events(paths[:2], cat))


def test_data_source_options(spark, tmp_path):
    """Format options pass as .option(...); the catalog can be inline JSON."""
    cs.register(spark)
    data, cat = cdcfast.encode.generate(FMT, rows=50, seed=2, column_delimiter=";",
                                        table_width=5)
    p = tmp_path / "semi.del"
    p.write_bytes(data)
    got = spark.read.format("cdcfast").option("format", FMT) \
        .option("catalog", json.dumps(cat.to_dict())).option("column_delimiter", ";") \
        .load(str(p)).toArrow()
    want = cdcfast.decode(data, format=FMT, catalog=cat, column_delimiter=";")
    assert got.num_rows == 50 and got.column("_error").null_count == 50
    assert got.cast(want.schema).equals(want)
    with pytest.raises(Exception, match="unknown option"):
        spark.read.format("cdcfast").option("format", FMT) \
            .option("catalog", json.dumps(cat.to_dict())).option("colum_delimiter", ";") \
            .load(str(p)).collect()


def test_streaming_over_a_folder_loses_and_repeats_nothing(spark, tmp_path):
    """availableNow runs: files added between runs are read once each, and a query restarted
    from its checkpoint neither loses nor repeats a file."""
    cs.register(spark)
    folder, out, ckpt = tmp_path / "landing", tmp_path / "out", tmp_path / "ckpt"
    first, cat = write_files(folder, 2, rows=120, seed=20)
    catalog_file = tmp_path / "catalog.json"
    catalog_file.write_text(json.dumps(cat.to_dict()))

    def run():
        q = (spark.readStream.format("cdcfast").option("format", FMT)
             .option("catalog", str(catalog_file)).option("table", TABLE).load(str(folder))
             .writeStream.format("parquet").option("path", str(out))
             .option("checkpointLocation", str(ckpt)).trigger(availableNow=True).start())
        q.awaitTermination(120)
        assert q.exception() is None
        return spark.read.parquet(str(out)).toArrow()

    got = run()
    assert sorted_rows(got.cast(file_events(first, cat).schema)) == \
        sorted_rows(file_events(first, cat))
    time.sleep(0.05)
    more, _ = write_files(folder, 2, rows=80, seed=40)
    got = run()                                   # a new query object: from the checkpoint
    want = file_events(first + more, cat)
    assert got.num_rows == want.num_rows == 2 * 120 + 2 * 80
    assert sorted_rows(got.cast(want.schema)) == sorted_rows(want)
    got = run()                                   # nothing new: nothing added
    assert got.num_rows == want.num_rows


def test_data_source_cuts_big_files_at_record_starts(spark, tmp_path):
    """A file bigger than split_mb is read in pieces, one partition each, cut where records
    start (its strings hold record delimiters; the tasks find them): the same events as the whole file; seq and
    byte offsets count within each piece, as each is an input of its own."""
    cs.register(spark)
    data, cat = cdcfast.encode.generate(FMT, rows=3000, seed=31, table_width=8)
    assert data.count(b"\n") > 3000                   # record delimiters inside strings
    p = tmp_path / "big.del"
    p.write_bytes(data)
    reader = spark.read.format("cdcfast").option("format", FMT) \
        .option("catalog", json.dumps(cat.to_dict())).option("split_mb", "0.25")
    df = reader.load(str(p))
    # byte ranges of 0.25 MB, one partition each (smaller than Spark's 4 MB open cost); each
    # task finds the record starts of its range: the pieces of split_points
    split = int(0.25 * (1 << 20))
    cuts = cdcfast.Decoder(FMT, catalog=cat).split_points(data, split)
    assert len(cuts) - 1 >= 3 and df.rdd.getNumPartitions() == -(-len(data) // split)
    got = df.toArrow()
    want = cdcfast.decode(data, format=FMT, catalog=cat)
    assert got.num_rows == want.num_rows == 3000
    assert got.column("_error").null_count == 3000
    cols = ["op", "txid", "commit_ts", "after", "before"]
    assert got.select(cols).cast(want.select(cols).schema).equals(want.select(cols))
    seq = got.column("seq").to_pylist()
    assert seq.count(0) == len(cuts) - 1             # each piece counts from 0


def test_decode_a_string_column_with_tombstones(spark, stream):
    """Messages as text (a string column), with null rows (Kafka tombstones) skipped."""
    msgs, cat = stream
    rows = [(m.decode("utf-8"), i) for i, m in enumerate(msgs[:30])] + [(None, 99)]
    df = spark.createDataFrame(rows, "value string, offset long")
    got = cs.decode(df, format=FMT, catalog=cat, keep=["offset"]).toArrow()
    want = expected(msgs[:30], cat)
    assert got.drop_columns(["offset"]).cast(want.schema).equals(want)
    assert 99 not in got.column("offset").to_pylist()


def test_list_files_refuses_what_matches_nothing(tmp_path):
    (tmp_path / "a.del").write_bytes(b"")
    (tmp_path / "_b.del").write_bytes(b"")
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "c.del").write_bytes(b"")
    assert cs.list_files([str(tmp_path)]) == [str(tmp_path / "a.del"),
                                              str(tmp_path / "sub" / "c.del")]
    for missing in (tmp_path / "nope.del", tmp_path / "*.txt"):
        with pytest.raises(FileNotFoundError, match="no file matches"):
            cs.list_files([str(missing)])
        assert cs.list_files([str(missing)], missing_ok=True) == []
