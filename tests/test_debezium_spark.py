"""`debezium` through the Spark layer (SPEC §6) on a real local SparkSession: mapInArrow,
decode_tables and pandas_udf over a Kafka-like DataFrame (tombstones, BEGIN/END messages, a
corrupt message), the file data source (NDJSON and pretty-printed streams, big files cut at
`\\n{`, format options), streaming over a folder, and the catalog Spark needs (embedded schemas
are only known once a message is read: Catalog.from_debezium over a sample).

Spark's rows are compared with cdcfast.decode's as Python rows. Each Spark row, file and file
piece is an input of its own (SPEC §6), so an error names message 0 in a message column. The
seq of an event without a transaction block (snapshot reads: its ordinal in its input, SPEC
§5.3) depends on how the input is cut, so it is left out where Spark's inputs differ from
Python's; an event in a transaction has its total_order as seq everywhere."""
from __future__ import annotations

import json
import os
import time

import pyarrow as pa
import pytest

import cdcfast
from cdcfast import Catalog
from cdcfast import spark as cs

pytest.importorskip("pyspark")

FMT = "debezium"
TABLE = "GEN.TABLE_1"
BAD_JSON = b'{"payload": {"op": "c", "source": {"table": "TABLE_1"}, "after": {"ID": 1,}}}'


@pytest.fixture(scope="module")
def stream():
    """Messages of two tables (12 columns: decimals, dates, times, timestamps, binary, …), with
    a tombstone (None) after each delete and BEGIN/END transaction messages."""
    msgs, cat = cdcfast.encode.generate(FMT, rows=300, tables=2, table_width=12, seed=7,
                                        messages=True, tombstones=True)
    assert None in msgs and any(m and b'"status":"BEGIN"' in m for m in msgs)
    return msgs, cat


def kafka_df(spark, msgs):
    """A Kafka-like DataFrame, one partition (so Spark's rows come in input order)."""
    rows = [(f'{{"i":{i}}}'.encode(), m, f"t{i % 2}", i % 3, 1000 + i)
            for i, m in enumerate(msgs)]
    return spark.createDataFrame(
        rows, "key binary, value binary, topic string, partition int, offset long")


def spark_types(t: pa.Table) -> pa.Table:
    """A Python result in the types Spark exchanges (TIME as text)."""
    return t.cast(cs._spark_arrow_schema(t.schema, False))


def rows(t: pa.Table, txn_seq_only: bool = False) -> list:
    """The rows as JSON texts, sorted. `txn_seq_only`: the seq of events without a
    transaction (an ordinal in their input) left out."""
    out = []
    for r in t.to_pylist():
        if txn_seq_only and r["txid"] is None:
            r["seq"] = None
        out.append(json.dumps(r, default=repr, sort_keys=True))
    return sorted(out)


def message_offsets(msgs, table=TABLE) -> list:
    """For each event of `table` in `msgs`, in order: its message's offset (a Debezium message
    holds one event; BEGIN/END messages have no `op`)."""
    out = []
    for i, m in enumerate(msgs):
        try:
            p = json.loads(m) if m is not None else None
        except ValueError:
            continue
        p = p.get("payload", p) if isinstance(p, dict) and "payload" in p else p
        if isinstance(p, dict) and p.get("op") in ("c", "u", "d", "r") and \
                f"{p['source']['schema']}.{p['source']['table']}" == table:
            out.append(1000 + i)
    return out


# -- a message column ----------------------------------------------------------------------------
def test_decode_equals_python_with_kept_columns(spark, stream):
    msgs, cat = stream
    keep = ["key", "topic", "partition", "offset"]
    got = cs.decode(kafka_df(spark, msgs), format=FMT, catalog=cat, table=TABLE, column="value",
                    keep=keep).toArrow()
    want = spark_types(cdcfast.decode(msgs, format=FMT, catalog=cat, table=TABLE))
    assert got.num_rows == want.num_rows > 100
    assert got.column_names == want.column_names + keep
    assert got.column("_error").null_count == got.num_rows
    offsets = message_offsets(msgs)
    index = [o - 1000 for o in offsets]         # the kept columns of each event's message
    want = want.append_column("key", pa.array([f'{{"i":{i}}}'.encode() for i in index]))
    want = want.append_column("topic", pa.array([f"t{i % 2}" for i in index]))
    want = want.append_column("partition", pa.array([i % 3 for i in index], pa.int32()))
    want = want.append_column("offset", pa.array(offsets, pa.int64()))
    assert rows(got.cast(want.schema), True) == rows(want, True)
    # every transaction event carries its own total_order as seq, in Spark as in Python
    assert [s for s, t in zip(got.column("seq").to_pylist(), got.column("txid").to_pylist())
            if t is not None] == \
        [s for s, t in zip(want.column("seq").to_pylist(), want.column("txid").to_pylist())
         if t is not None]
    # an event without a transaction block has its ordinal in its own input as seq: each
    # message is an input in Spark (SPEC §6), so every such event is the first of its own
    lone = [s for s, t in zip(got.column("seq").to_pylist(), got.column("txid").to_pylist())
            if t is None]
    assert lone and set(lone) == {0}


def test_decode_tables_corrupt_message_and_failfast(spark, stream):
    """Two tables plus, in PERMISSIVE mode, the key None: a message that is not JSON gives a
    row with `_corrupt_record` and an `_error` naming message 0 (each row is its own input).
    FAILFAST fails the task."""
    msgs, cat = stream
    data = list(msgs) + [BAD_JSON]
    df = kafka_df(spark, data)
    got = cs.decode_tables(df, format=FMT, catalog=cat, keep=["offset"])
    want = cdcfast.decode_tables(data, format=FMT, catalog=cat)
    assert set(got) == set(want) == {"GEN.TABLE_1", "GEN.TABLE_2", None}
    for key in ("GEN.TABLE_1", "GEN.TABLE_2"):
        t = got[key].toArrow()
        assert t.column("offset").to_pylist() == message_offsets(data, key)
        w = spark_types(want[key])
        assert rows(t.drop_columns(["offset"]).cast(w.schema), True) == rows(w, True), key
    bad = got[None].collect()
    assert len(bad) == 1
    assert bad[0]._corrupt_record == BAD_JSON and bad[0].offset == 1000 + len(data) - 1
    python_error = want[None].column("_error")[0].as_py()
    assert python_error.startswith("invalid JSON: ")
    assert bad[0]._error == python_error.replace(f"(message {len(data) - 1},", "(message 0,")
    assert "(message 0, byte " in bad[0]._error
    with pytest.raises(Exception, match="invalid JSON"):
        cs.decode(kafka_df(spark, data[-3:]), format=FMT, catalog=cat, table=TABLE,
                  mode="FAILFAST").collect()


def test_pandas_udf_gives_each_message_its_events(spark, stream):
    msgs, cat = stream
    small = msgs[:40]
    assert None in small and any(m and b'"status":"END"' in m for m in small)
    udf = cs.pandas_udf(format=FMT, catalog=cat, table=TABLE)
    got = kafka_df(spark, small).select("offset", udf("value").alias("events")) \
        .orderBy("offset").collect()
    assert len(got) == 40
    for row, m in zip(got, small):
        want = spark_types(cdcfast.decode([m], format=FMT, catalog=cat, table=TABLE))
        assert [e.asDict(recursive=True)["after"] for e in row.events] == \
            want.column("after").to_pylist()
        assert [(e["op"], e["txid"], e["change_pos"]) for e in row.events] == \
            [(r["op"], r["txid"], r["change_pos"]) for r in want.to_pylist()]
    assert sum(len(r.events) for r in got) == \
        cdcfast.decode(small, format=FMT, catalog=cat, table=TABLE).num_rows > 5


def test_spark_needs_a_catalog_and_from_debezium_makes_one(spark, tmp_path):
    """Embedded schemas are only known once a message is read, and Spark must know the schema
    before: the Spark entry points refuse debezium without a catalog and say how to get one;
    a catalog from a sample of the messages then gives what decoding with the embedded
    schemas gives."""
    msgs, _ = cdcfast.encode.generate(FMT, rows=120, table_width=12, seed=9, messages=True,
                                      schemas=True, tombstones=True)
    df = kafka_df(spark, msgs)
    for call in (lambda: cs.decode(df, format=FMT), lambda: cs.decode_tables(df, format=FMT),
                 lambda: cs.pandas_udf(format=FMT), lambda: cs.map_in_arrow(format=FMT)):
        with pytest.raises(ValueError, match=r"needs a catalog.*Catalog\.from_debezium"):
            call()
    cs.register(spark)
    p = tmp_path / "events.json"
    p.write_bytes(b"".join(m + b"\n" if m is not None else b"null\n" for m in msgs))
    with pytest.raises(Exception, match=r"Catalog\.from_debezium"):
        spark.read.format("cdcfast").option("format", FMT).load(str(p)).schema
    cat = Catalog.from_debezium(msgs[:20])                 # a sample
    assert [t.name for t in cat] == [TABLE]
    got = cs.decode(df, format=FMT, catalog=cat).toArrow()
    want = spark_types(cdcfast.decode(msgs, format=FMT))   # from the embedded schemas
    assert got.num_rows == want.num_rows > 100
    assert got.column("_error").null_count == got.num_rows
    assert rows(got.cast(want.schema), True) == rows(want, True)


# -- the data source -----------------------------------------------------------------------------
def write(path, data: bytes):
    with open(f"{path}.tmp", "wb") as f:
        f.write(data)
    os.replace(f"{path}.tmp", path)               # moved in whole, as a writer should


def test_data_source_files_cut_at_object_starts(spark, tmp_path):
    """A folder of three streams: a small NDJSON file, a big one and a pretty-printed one,
    both bigger than split_mb and so read in pieces cut where a line opens an object (`\\n{`,
    Decoder.split_points). Spark's rows are those of each piece decoded on its own,
    and together those of the whole files: nothing lost or repeated at the cuts."""
    cs.register(spark)
    folder = tmp_path / "in"
    folder.mkdir()
    files = {}
    for name, rows_, kw in (("a-small.json", 100, {}), ("b-big.json", 600, {}),
                            ("c-pretty.json", 250, {"pretty": True})):
        data, cat = cdcfast.encode.generate(FMT, rows=rows_, tables=2, table_width=8,
                                            seed=len(files) + 11, tombstones=True, **kw)
        write(folder / name, data)
        files[name] = data
    assert files["c-pretty.json"].count(b"\n") > 20 * 250
    split = int(0.1 * (1 << 20))
    pieces = {n: cdcfast.Decoder(FMT).split_points(d, split) if len(d) > split else [0, len(d)]
              for n, d in files.items()}
    assert len(pieces["a-small.json"]) == 2
    assert len(pieces["b-big.json"]) - 1 >= 4 and len(pieces["c-pretty.json"]) - 1 >= 2
    for n, cuts in pieces.items():
        assert all(files[n][c - 1:c + 1] == b"\n{" for c in cuts[1:-1])
    reader = spark.read.format("cdcfast").option("format", FMT) \
        .option("catalog", json.dumps(cat.to_dict())).option("table", "GEN.TABLE_2") \
        .option("split_mb", "0.1")
    df = reader.load(str(folder))
    assert df.rdd.getNumPartitions() == sum(len(c) - 1 for c in pieces.values())
    got = df.toArrow()

    def py(data):
        return spark_types(cdcfast.decode(data, format=FMT, catalog=cat, table="GEN.TABLE_2"))

    per_piece = pa.concat_tables([py(files[n][a:b]) for n, cuts in pieces.items()
                                  for a, b in zip(cuts, cuts[1:])])
    whole = pa.concat_tables([py(d) for d in files.values()])
    assert got.num_rows == per_piece.num_rows == whole.num_rows > 400
    assert got.column("_error").null_count == got.num_rows
    assert rows(got.cast(per_piece.schema)) == rows(per_piece)
    assert rows(per_piece, True) == rows(whole, True)


def test_data_source_passes_format_options(spark, tmp_path):
    """decimal_handling / time_precision pass through .option (values written without a
    schema, as the connector writes them under those settings)."""
    cs.register(spark)
    options = {"decimal_handling": "string", "time_precision": "connect"}
    data, cat = cdcfast.encode.generate(FMT, rows=150, table_width=12, seed=3, **options)
    p = tmp_path / "string-connect.json"
    p.write_bytes(data)
    want = spark_types(cdcfast.decode(data, format=FMT, catalog=cat, **options))
    assert want.column("_error").null_count == want.num_rows == 150
    # read with the default options, the same bytes are errors
    assert cdcfast.decode(data, format=FMT, catalog=cat).column("_error").null_count < 100
    reader = spark.read.format("cdcfast").option("format", FMT) \
        .option("catalog", json.dumps(cat.to_dict()))
    for k, v in options.items():
        reader = reader.option(k, v)
    got = reader.load(str(p)).toArrow()
    assert got.cast(want.schema).equals(want)


def test_streaming_over_a_folder(spark, tmp_path):
    """availableNow runs over a folder: a file added between runs is read once."""
    cs.register(spark)
    folder, out, ckpt = tmp_path / "landing", tmp_path / "out", tmp_path / "ckpt"
    folder.mkdir()
    first, cat = cdcfast.encode.generate(FMT, rows=100, table_width=6, seed=21,
                                         tombstones=True)
    write(folder / "part-1.json", first)
    catalog_file = tmp_path / "catalog.json"
    cat.save(catalog_file)

    def run():
        q = (spark.readStream.format("cdcfast").option("format", FMT)
             .option("catalog", str(catalog_file)).option("table", TABLE).load(str(folder))
             .writeStream.format("parquet").option("path", str(out))
             .option("checkpointLocation", str(ckpt)).trigger(availableNow=True).start())
        q.awaitTermination(120)
        assert q.exception() is None
        return spark.read.parquet(str(out)).toArrow()

    def py(*streams):
        return pa.concat_tables([spark_types(cdcfast.decode(d, format=FMT, catalog=cat))
                                 for d in streams])

    got = run()
    assert rows(got.cast(py(first).schema)) == rows(py(first))
    time.sleep(0.05)
    second, _ = cdcfast.encode.generate(FMT, rows=80, table_width=6, seed=22)
    write(folder / "part-2.json", second)
    got = run()                                   # a new query object: from the checkpoint
    want = py(first, second)
    assert got.num_rows == want.num_rows == 180
    assert rows(got.cast(want.schema)) == rows(want)
