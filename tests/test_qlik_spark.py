"""`qlik` through the Spark layer (SPEC §6) on a real local SparkSession: mapInArrow,
decode_tables and pandas_udf over a Kafka-like DataFrame of Qlik Replicate messages
(metadata messages, REFRESH then CDC messages, tombstones, corrupt messages), the metadata
lookup within a partition, the `table` argument for messages that name no table, catalogs
from Catalog.from_qlik, and the file data source (Kafka and Pub/Sub streams cut at `\\n{`).

Spark's rows are compared with cdcfast.decode's as Python rows. Each Spark row is an input
of its own for seq and error positions (SPEC §6): a REFRESH's seq (its ordinal in its input)
is 0 and an error names message 0, while a CDC event's seq is its transactionEventCounter
everywhere. A data message finds its table through the metadata message (schemaId =
messageSchemaId) met earlier in the same partition."""
from __future__ import annotations

import json
from dataclasses import replace

import pyarrow as pa
import pyarrow.compute as pc
import pytest

import cdcfast
from cdcfast import Catalog
from cdcfast import spark as cs

pytest.importorskip("pyspark")

FMT = "qlik"
TABLE = "GEN.TABLE_1"
TABLES = {"GEN.TABLE_1", "GEN.TABLE_2"}
BAD_JSON = b'{"magic":"atMSG","type":"DT","message":{"data":{"ID":"1",}}}'
NO_TABLE = (b'{"magic":"atMSG","type":"DT","messageSchemaId":"nope","message":{"data":'
            b'{"ID":"7"},"headers":{"operation":"INSERT"}}}')


def with_tombstones(msgs, every=25):
    out = []
    for i, m in enumerate(msgs):
        out.append(m)
        if i % every == every - 1:
            out.append(None)
    return out


@pytest.fixture(scope="module")
def stream():
    """Kafka-form messages of two tables (12 columns: decimals, dates, times, timestamps,
    doubles, …): a metadata message before each table's first data message, a short full
    load (REFRESH) first, then transactions; tombstones between."""
    msgs, cat = cdcfast.encode.generate(FMT, rows=240, tables=2, table_width=12, seed=7,
                                        messages=True)
    msgs = with_tombstones(msgs)
    assert sum(m is not None and b'"type":"MD"' in m for m in msgs) == 2
    return msgs, cat


def kafka_df(spark, msgs, partitions=1):
    """A Kafka-like DataFrame in `partitions` partitions (rows in input order)."""
    rows = [(f'{{"i":{i}}}'.encode(), m, f"t{i % 2}", i % 3, 1000 + i)
            for i, m in enumerate(msgs)]
    df = spark.createDataFrame(
        rows, "key binary, value binary, topic string, partition int, offset long")
    assert df.rdd.getNumPartitions() >= partitions
    return df.coalesce(partitions)


def spark_types(t: pa.Table) -> pa.Table:
    """A Python result in the types Spark exchanges (TIME as text)."""
    return t.cast(cs._spark_arrow_schema(t.schema, False))


def refresh_seq_zero(t: pa.Table) -> pa.Table:
    """A Python result with the seq Spark gives: a REFRESH's seq (its ordinal in the input)
    is 0, each message being an input of its own; a CDC event keeps its counter."""
    seq = pc.if_else(pc.equal(t.column("op"), "r"), 0, t.column("seq"))
    return t.set_column(t.schema.get_field_index("seq"), t.schema.field("seq"), seq)


def message_offsets(msgs, table) -> list:
    """For each data message of `table` in `msgs`, in order: its offset."""
    ids, out = {}, []
    for i, m in enumerate(msgs):
        if m is None:
            continue
        try:
            doc = json.loads(m)
        except ValueError:
            continue
        if doc.get("type") == "MD":
            lin = doc["message"]["lineage"]
            ids[doc["message"]["schemaId"]] = f"{lin['schema']}.{lin['table']}"
        elif ids.get(doc.get("messageSchemaId")) == table:
            out.append(1000 + i)
    return out


# -- a message column ----------------------------------------------------------------------------
def test_decode_equals_python_with_kept_columns(spark, stream):
    msgs, cat = stream
    keep = ["key", "topic", "partition", "offset"]
    got = cs.decode(kafka_df(spark, msgs), format=FMT, catalog=cat, table=TABLE,
                    column="value", keep=keep).toArrow()
    want = spark_types(cdcfast.decode(msgs, format=FMT, catalog=cat, table=TABLE))
    assert got.num_rows == want.num_rows > 100
    assert got.column_names == want.column_names + keep
    assert got.column("_error").null_count == got.num_rows
    assert set(want.column("op").to_pylist()) == {"c", "u", "d", "r"}
    offsets = message_offsets(msgs, TABLE)
    index = [o - 1000 for o in offsets]
    want = want.append_column("key", pa.array([f'{{"i":{i}}}'.encode() for i in index]))
    want = want.append_column("topic", pa.array([f"t{i % 2}" for i in index]))
    want = want.append_column("partition", pa.array([i % 3 for i in index], pa.int32()))
    want = want.append_column("offset", pa.array(offsets, pa.int64()))
    assert got.cast(want.schema).equals(refresh_seq_zero(want))


def test_metadata_lookup_within_a_partition(spark, stream):
    """decode_tables without a `table`: a data message names its table only through the
    metadata message before it. In one partition it is found across Arrow batches (7
    messages each here); in the second of two partitions it is not, and those records are
    unattributable (key None), as in Python over that partition's messages alone."""
    msgs, cat = stream
    want = cdcfast.decode_tables(msgs, format=FMT, catalog=cat)
    assert set(want) == TABLES
    key = "spark.sql.execution.arrow.maxRecordsPerBatch"
    before = spark.conf.get(key)
    spark.conf.set(key, "7")
    try:
        got = cs.decode_tables(kafka_df(spark, msgs), format=FMT, catalog=cat)
        assert set(got) == TABLES | {None}
        assert got[None].count() == 0
        for t in TABLES:
            w = refresh_seq_zero(spark_types(want[t]))
            assert got[t].toArrow().cast(w.schema).equals(w), t
        # two partitions: the metadata messages are in the first one only (and the catalog
        # has no schema ids: tests/test_qlik_attribution.py gives it them)
        cat = Catalog([replace(t, qlik_schema_ids=()) for t in cat])
        df = kafka_df(spark, msgs, partitions=2)
        sizes = df.rdd.glom().map(len).collect()
        assert len(sizes) == 2 and min(sizes) > 50
        second = msgs[sizes[0]:]
        assert not any(m is not None and b'"type":"MD"' in m for m in second)
        got = cs.decode_tables(df, format=FMT, catalog=cat, keep=["offset"])
        lost = got[None].toArrow()
        alone = cdcfast.decode_tables(second, format=FMT, catalog=cat)
        assert set(alone) == {None}
        assert lost.num_rows == alone[None].num_rows == sum(m is not None for m in second)
        assert lost.column("offset").to_pylist() == \
            [1000 + sizes[0] + i for i, m in enumerate(second) if m is not None]
        assert all("names metadata this input lacks" in e
                   and "(message 0, byte " in e for e in lost.column("_error").to_pylist())
        assert sum(got[t].count() for t in TABLES) == \
            sum(want[t].num_rows for t in TABLES) - lost.num_rows
    finally:
        spark.conf.set(key, before)


def test_from_qlik_catalog_and_the_table_argument(spark):
    """A catalog built with Catalog.from_qlik over the metadata messages gives what Python
    gives from the metadata messages alone; a stream without metadata messages (a topic of
    one table) is decoded with `table=…`, and without one its records are unattributable."""
    msgs, gen_cat = cdcfast.encode.generate(FMT, rows=120, tables=2, table_width=12, seed=9,
                                            messages=True)
    cat = Catalog.from_qlik(msgs)
    assert {t.name for t in cat} == TABLES
    df = kafka_df(spark, msgs)
    for t in TABLES:
        got = cs.decode(df, format=FMT, catalog=cat, table=t).toArrow()
        want = spark_types(cdcfast.decode(msgs, format=FMT, table=t))  # typed by the MD
        assert got.num_rows == want.num_rows > 40
        assert got.column("_error").null_count == got.num_rows
        assert got.cast(want.schema).equals(refresh_seq_zero(want))
    # no metadata messages: messageSchemaId null; the table comes from the argument
    plain, plain_cat = cdcfast.encode.generate(FMT, rows=80, table_width=8, seed=4,
                                               messages=True, md=False)
    assert not any(b'"type":"MD"' in m for m in plain)
    df = kafka_df(spark, plain)
    got = cs.decode(df, format=FMT, catalog=plain_cat, table=TABLE).toArrow()
    want = spark_types(cdcfast.decode(plain, format=FMT, catalog=plain_cat, table=TABLE))
    assert got.num_rows == want.num_rows == 80
    assert got.column("_error").null_count == 80
    assert got.cast(want.schema).equals(refresh_seq_zero(want))
    udf = cs.pandas_udf(format=FMT, catalog=plain_cat, table=TABLE)
    events = df.select("offset", udf("value").alias("ev")).orderBy("offset").collect()
    assert [len(r.ev) for r in events] == [1] * 80
    assert [r.ev[0].asDict(recursive=True)["after"] for r in events] == \
        want.column("after").to_pylist()
    tables = cs.decode_tables(df, format=FMT, catalog=plain_cat)
    assert tables[TABLE].count() == 0
    errors = [r._error for r in tables[None].collect()]
    assert len(errors) == 80 and all(
        e.startswith("messageSchemaId: null, and the message names no table; pass table=…")
        for e in errors)


def test_decode_tables_corrupt_messages_and_failfast(spark, stream):
    """Invalid JSON and a data message whose messageSchemaId no metadata message has: rows
    under the key None with `_corrupt_record` and an `_error` naming message 0. FAILFAST
    fails the task."""
    msgs, cat = stream
    data = list(msgs) + [BAD_JSON, NO_TABLE]
    got = cs.decode_tables(kafka_df(spark, data), format=FMT, catalog=cat, keep=["offset"])
    want = cdcfast.decode_tables(data, format=FMT, catalog=cat)
    assert set(got) == set(want) == TABLES | {None}
    for key in TABLES:
        t = got[key].toArrow()
        assert t.column("offset").to_pylist() == message_offsets(data, key)
        w = refresh_seq_zero(spark_types(want[key]))
        assert t.drop_columns(["offset"]).cast(w.schema).equals(w), key
    bad = sorted(got[None].collect(), key=lambda r: r.offset)
    assert [r.offset for r in bad] == [1000 + len(data) - 2, 1000 + len(data) - 1]
    assert [r._corrupt_record for r in bad] == [BAD_JSON, NO_TABLE]
    python = want[None].column("_error").to_pylist()
    assert python[0].startswith("invalid JSON: ")
    assert python[1].startswith("messageSchemaId: 'nope' names metadata this input lacks")
    for r, p, i in zip(bad, python, (len(data) - 2, len(data) - 1)):
        assert r._error == p.replace(f"(message {i},", "(message 0,")
    with pytest.raises(Exception, match="invalid JSON"):
        cs.decode(kafka_df(spark, data[-4:]), format=FMT, catalog=cat, table=TABLE,
                  mode="FAILFAST").collect()


def test_pandas_udf_gives_each_message_its_events(spark, stream):
    """A message's events (one per data message; none for metadata messages and
    tombstones), its table found through the metadata message earlier in the partition."""
    msgs, cat = stream
    small = msgs[:40]
    assert None in small and b'"type":"MD"' in small[0]
    udf = cs.pandas_udf(format=FMT, catalog=cat, table="GEN.TABLE_2")
    got = kafka_df(spark, small).select("offset", udf("value").alias("events")) \
        .orderBy("offset").collect()
    assert len(got) == 40
    want = refresh_seq_zero(spark_types(cdcfast.decode(small, format=FMT, catalog=cat,
                                                       table="GEN.TABLE_2")))
    mine = set(message_offsets(small, "GEN.TABLE_2"))
    assert [len(r.events) for r in got] == [int(r.offset in mine) for r in got]
    events = [e for r in got for e in r.events]
    assert [e.asDict(recursive=True)["after"] for e in events] == \
        want.column("after").to_pylist()
    assert [(e["op"], e["txid"], e["seq"]) for e in events] == \
        [(r["op"], r["txid"], r["seq"]) for r in want.to_pylist()]


def test_spark_needs_a_catalog(spark, tmp_path):
    """Without a catalog a Qlik table's columns are the data's keys (or come from metadata
    messages only met while reading): the Spark entry points refuse and point to
    Catalog.from_qlik."""
    msgs, _ = cdcfast.encode.generate(FMT, rows=20, table_width=6, seed=2, messages=True)
    df = kafka_df(spark, msgs)
    for call in (lambda: cs.decode(df, format=FMT, table=TABLE),
                 lambda: cs.decode_tables(df, format=FMT),
                 lambda: cs.pandas_udf(format=FMT, table=TABLE),
                 lambda: cs.map_in_arrow(format=FMT)):
        with pytest.raises(ValueError, match=r"needs a catalog.*Catalog\.from_qlik"):
            call()
    cs.register(spark)
    p = tmp_path / "q.json"
    p.write_bytes(b"".join(m + b"\n" for m in msgs))
    with pytest.raises(Exception, match=r"Catalog\.from_qlik"):
        spark.read.format("cdcfast").option("format", FMT).option("table", TABLE) \
            .load(str(p)).schema


# -- the data source -----------------------------------------------------------------------------
def test_data_source_files_cut_at_object_starts(spark, tmp_path):
    """A Kafka stream of one table (pretty-printed) and a Pub/Sub stream of two, both read
    in pieces cut where a line opens an object. A piece after the first lacks the metadata
    message, so its records are named by the catalog's schema ids (the generator's catalog
    has them, as Catalog.from_qlik's); the Pub/Sub form names the table in every message.
    Spark's rows are those of each piece decoded on its own, and together those of the whole
    files but for REFRESH seqs."""
    cs.register(spark)
    files = {}
    for name, n, kw in (("kafka.json", 300, {"pretty": True, "tables": 1}),
                        ("pubsub.json", 500, {"form": "pubsub", "tables": 2})):
        data, cat = cdcfast.encode.generate(FMT, rows=n, table_width=8, seed=len(files) + 5,
                                            **kw)
        folder = tmp_path / name.split(".")[0]
        folder.mkdir()
        (folder / name).write_bytes(data)
        files[name] = (folder, data, cat)
    split = int(0.05 * (1 << 20))
    for name, (folder, data, cat) in files.items():
        cuts = cdcfast.Decoder(FMT).split_points(data, split)
        assert len(cuts) - 1 >= 3, name
        assert all(data[c - 1:c + 1] == b"\n{" for c in cuts[1:-1])
        df = spark.read.format("cdcfast").option("format", FMT) \
            .option("catalog", json.dumps(cat.to_dict())).option("table", TABLE) \
            .option("split_mb", "0.05").load(str(folder))
        assert df.rdd.getNumPartitions() == len(cuts) - 1
        got = df.toArrow()

        def py(d):
            return spark_types(cdcfast.decode(d, format=FMT, catalog=cat, table=TABLE))

        per_piece = pa.concat_tables([py(data[a:b]) for a, b in zip(cuts, cuts[1:])])
        whole = py(data)
        assert got.num_rows == per_piece.num_rows == whole.num_rows > 150, name
        assert got.column("_error").null_count == got.num_rows
        assert got.cast(per_piece.schema).equals(per_piece)
        cdc = pc.not_equal(whole.column("op"), "r")
        assert per_piece.filter(cdc).equals(whole.filter(cdc))


def test_data_source_mode_and_unknown_options(spark, tmp_path):
    """mode passes through .option; qlik has no format options, so any other is an error
    naming the option."""
    cs.register(spark)
    data, cat = cdcfast.encode.generate(FMT, rows=50, table_width=6, seed=8)
    p = tmp_path / "q.json"
    p.write_bytes(data + BAD_JSON + b"\n")
    reader = spark.read.format("cdcfast").option("format", FMT) \
        .option("catalog", json.dumps(cat.to_dict()))
    assert reader.load(str(p)).count() == 51
    got = reader.option("mode", "DROPMALFORMED").load(str(p)).toArrow()
    want = spark_types(cdcfast.decode(data, format=FMT, catalog=cat))
    assert got.cast(want.schema).equals(want)
    with pytest.raises(Exception, match="unknown option.*for qlik: epoch_unit"):
        reader.option("epoch_unit", "s").load(str(p)).schema
