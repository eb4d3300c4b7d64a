"""`olr` through the Spark layer (SPEC §6) on a real local SparkSession: mapInArrow,
decode_tables and pandas_udf over a Kafka-like DataFrame of OpenLogReplicator messages
(begin/commit/checkpoint messages, tombstones, corrupt messages, whole transactions in one
message), carry-forward of scn/tm within a partition, the file data source (files cut at
`\\n{`, `epoch_unit` through .option) and the catalog Spark needs (a table typed from the
data: Catalog.from_olr over messages written with schema.columns).

Spark's rows are compared with cdcfast.decode's as Python rows. Each Spark row is an input
of its own for seq and error positions (SPEC §6): an event's seq is its ordinal within its
message and an error names message 0; carry-forward (scn and tm sent only on a transaction's
first message) reaches across the messages of a partition. A file or file piece is one
input."""
from __future__ import annotations

import json

import pyarrow as pa
import pytest

import cdcfast
from cdcfast import Catalog
from cdcfast import spark as cs

pytest.importorskip("pyspark")

FMT = "olr"
TABLE = "OLR_TEST.TABLE_1"
BAD_JSON = b'{"xid":"1.2.3","payload":[{"op":"c","schema":{"table":"TABLE_1"},}]}'
NO_PAYLOAD = b'{"xid":"1.2.3","scn":5}'


def with_tombstones(msgs, every=25):
    """The messages with a tombstone (None) after every `every`-th one."""
    out = []
    for i, m in enumerate(msgs):
        out.append(m)
        if i % every == every - 1:
            out.append(None)
    return out


@pytest.fixture(scope="module")
def stream():
    """Messages of two tables (12 columns: NUMBER with and without precision, DATE,
    TIMESTAMP, CHAR, BINARY_FLOAT/DOUBLE, …) framed by begin/commit messages, checkpoints,
    tombstones; scn and tm on every message (no carry-forward needed)."""
    msgs, cat = cdcfast.encode.generate(FMT, rows=240, tables=2, table_width=12, seed=7,
                                        messages=True, checkpoints=True, first_only=False)
    msgs = with_tombstones(msgs)
    assert None in msgs and any(m and b'"op":"chkpt"' in m for m in msgs)
    return msgs, cat


def kafka_df(spark, msgs, partitions=None):
    """A Kafka-like DataFrame (rows in input order; `partitions`: coalesced to that many)."""
    rows = [(f'{{"i":{i}}}'.encode(), m, f"t{i % 2}", i % 3, 1000 + i)
            for i, m in enumerate(msgs)]
    df = spark.createDataFrame(
        rows, "key binary, value binary, topic string, partition int, offset long")
    return df.coalesce(partitions) if partitions else df


def spark_types(t: pa.Table) -> pa.Table:
    """A Python result in the types Spark exchanges."""
    return t.cast(cs._spark_arrow_schema(t.schema, False))


def rows(t: pa.Table, drop=()) -> list:
    """The rows as JSON texts, sorted; `drop`: top-level columns left out."""
    out = []
    for r in t.to_pylist():
        for k in drop:
            r.pop(k)
        out.append(json.dumps(r, default=repr, sort_keys=True))
    return sorted(out)


def per_message(msgs, table=TABLE, **kw) -> pa.Table:
    """Each message decoded as an input of its own (as Spark's rows are), in order."""
    return pa.concat_tables([spark_types(cdcfast.decode([m], format=FMT, table=table, **kw))
                             for m in msgs if m is not None])


def message_offsets(msgs, table=TABLE) -> list:
    """For each event of `table` in `msgs`, in order: its message's offset."""
    out = []
    for i, m in enumerate(msgs):
        try:
            doc = json.loads(m) if m is not None else None
        except ValueError:
            continue
        for el in (doc or {}).get("payload") or ():
            s = el.get("schema") or {}
            if el.get("op") in ("c", "u", "d") and f"{s.get('owner')}.{s.get('table')}" == table:
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
    assert got.column("commit_ts").null_count == 0
    offsets = message_offsets(msgs)
    index = [o - 1000 for o in offsets]
    want = want.append_column("key", pa.array([f'{{"i":{i}}}'.encode() for i in index]))
    want = want.append_column("topic", pa.array([f"t{i % 2}" for i in index]))
    want = want.append_column("partition", pa.array([i % 3 for i in index], pa.int32()))
    want = want.append_column("offset", pa.array(offsets, pa.int64()))
    got = got.cast(want.schema)
    # in input order, everything as in Python but seq: a message holds one element here, and
    # seq counts within the message (SPEC §6), where Python counts over the whole list
    assert got.drop_columns(["seq"]).equals(want.drop_columns(["seq"]))
    assert set(got.column("seq").to_pylist()) == {0}
    assert len(set(want.column("seq").to_pylist())) == want.num_rows


def test_whole_transactions_in_one_message(spark):
    """The writer's full format: a message per transaction, its events in one payload. seq
    counts the events within each message; mapInArrow and the pandas UDF agree with each
    message decoded on its own."""
    msgs, cat = cdcfast.encode.generate(FMT, rows=80, table_width=8, seed=3, messages=True,
                                        full=True)
    assert len(msgs) < 50
    df = kafka_df(spark, msgs)
    got = cs.decode(df, format=FMT, catalog=cat, keep=["offset"]).toArrow()
    want = per_message(msgs, catalog=cat)
    assert got.num_rows == want.num_rows == 80
    assert max(want.column("seq").to_pylist()) > 0
    assert got.drop_columns(["offset"]).cast(want.schema).equals(want)
    assert got.column("offset").to_pylist() == message_offsets(msgs)
    udf = cs.pandas_udf(format=FMT, catalog=cat, table=TABLE)
    events = df.select("offset", udf("value").alias("events")).orderBy("offset").collect()
    assert [len(r.events) for r in events] == [cdcfast.decode([m], format=FMT, catalog=cat)
                                               .num_rows for m in msgs]
    assert [e["seq"] for r in events for e in r.events] == want.column("seq").to_pylist()


def test_carry_forward_within_a_partition(spark):
    """scn and tm only on a transaction's first message (the writer's default): the events
    of the following messages take them from the earlier message of the same xid in the same
    partition, across Arrow batches (maxRecordsPerBatch 7 here)."""
    msgs, cat = cdcfast.encode.generate(FMT, rows=60, table_width=6, seed=5, messages=True)
    assert sum(b'"tms"' in m for m in msgs) < len(msgs) / 2
    want = spark_types(cdcfast.decode(msgs, format=FMT, catalog=cat))
    assert want.column("commit_ts").null_count == 0
    key = "spark.sql.execution.arrow.maxRecordsPerBatch"
    before = spark.conf.get(key)
    spark.conf.set(key, "7")
    try:
        got = cs.decode(kafka_df(spark, msgs, partitions=1), format=FMT, catalog=cat).toArrow()
    finally:
        spark.conf.set(key, before)
    assert got.column("commit_ts").to_pylist() == want.column("commit_ts").to_pylist()
    assert got.column("source").to_pylist() == want.column("source").to_pylist()


def test_decode_tables_corrupt_messages_and_failfast(spark, stream):
    """Two tables plus, in PERMISSIVE mode, the key None: invalid JSON and a message without
    `payload` give rows with `_corrupt_record` and an `_error` naming message 0. FAILFAST
    fails the task."""
    msgs, cat = stream
    data = list(msgs) + [BAD_JSON, NO_PAYLOAD]
    got = cs.decode_tables(kafka_df(spark, data), format=FMT, catalog=cat, keep=["offset"])
    want = cdcfast.decode_tables(data, format=FMT, catalog=cat)
    assert set(got) == set(want) == {"OLR_TEST.TABLE_1", "OLR_TEST.TABLE_2", None}
    for key in ("OLR_TEST.TABLE_1", "OLR_TEST.TABLE_2"):
        t = got[key].toArrow()
        assert t.column("offset").to_pylist() == message_offsets(data, key)
        w = spark_types(want[key])
        assert t.drop_columns(["offset", "seq"]).cast(w.drop_columns(["seq"]).schema).equals(
            w.drop_columns(["seq"])), key
    bad = sorted(got[None].collect(), key=lambda r: r.offset)
    assert [r.offset for r in bad] == [1000 + len(data) - 2, 1000 + len(data) - 1]
    assert [r._corrupt_record for r in bad] == [BAD_JSON, NO_PAYLOAD]
    python = want[None].column("_error").to_pylist()
    assert python[0].startswith("invalid JSON: ") and python[1].startswith("payload: missing")
    for r, p, i in zip(bad, python, (len(data) - 2, len(data) - 1)):
        assert r._error == p.replace(f"(message {i},", "(message 0,")
        assert "(message 0, byte " in r._error
    with pytest.raises(Exception, match="invalid JSON"):
        cs.decode(kafka_df(spark, data[-4:]), format=FMT, catalog=cat, table=TABLE,
                  mode="FAILFAST").collect()


def test_pandas_udf_gives_each_message_its_events(spark, stream):
    msgs, cat = stream
    small = msgs[:40]
    assert None in small and any(m and b'"op":"commit"' in m for m in small)
    udf = cs.pandas_udf(format=FMT, catalog=cat, table=TABLE)
    got = kafka_df(spark, small).select("offset", udf("value").alias("events")) \
        .orderBy("offset").collect()
    assert len(got) == 40
    for row, m in zip(got, small):
        want = spark_types(cdcfast.decode([m], format=FMT, catalog=cat, table=TABLE)) \
            if m is not None else None
        if want is None:
            assert row.events == []
            continue
        assert [e.asDict(recursive=True)["after"] for e in row.events] == \
            want.column("after").to_pylist()
        # Spark hands TimestampType values back as naive UTC (the session's time zone)
        assert [(e["op"], e["txid"], e["seq"], e["commit_ts"]) for e in row.events] == \
            [(r["op"], r["txid"], r["seq"], r["commit_ts"].replace(tzinfo=None))
             for r in want.to_pylist()]
    assert sum(len(r.events) for r in got) == \
        cdcfast.decode(small, format=FMT, catalog=cat, table=TABLE).num_rows > 5


def test_spark_needs_a_catalog_and_from_olr_makes_one(spark, tmp_path):
    """Without a catalog (or schema.columns) OLR types a table from its JSON kinds — the data
    — so the Spark entry points refuse and point to Catalog.from_olr; a catalog from a
    sample of messages written with schema.columns gives what decoding with those gives."""
    msgs, _ = cdcfast.encode.generate(FMT, rows=120, table_width=12, seed=9, messages=True,
                                      columns=True, first_only=False)
    df = kafka_df(spark, msgs)
    for call in (lambda: cs.decode(df, format=FMT), lambda: cs.decode_tables(df, format=FMT),
                 lambda: cs.pandas_udf(format=FMT), lambda: cs.map_in_arrow(format=FMT)):
        with pytest.raises(ValueError, match=r"needs a catalog.*Catalog\.from_olr"):
            call()
    cs.register(spark)
    p = tmp_path / "olr.json"
    p.write_bytes(b"".join(m + b"\n" for m in msgs))
    with pytest.raises(Exception, match=r"Catalog\.from_olr"):
        spark.read.format("cdcfast").option("format", FMT).load(str(p)).schema
    cat = Catalog.from_olr(msgs[:20])                       # a sample
    assert [t.name for t in cat] == [TABLE]
    got = cs.decode(df, format=FMT, catalog=cat).toArrow()
    want = spark_types(cdcfast.decode(msgs, format=FMT))    # typed by schema.columns
    assert got.num_rows == want.num_rows == 120
    assert got.column("_error").null_count == got.num_rows
    assert got.drop_columns(["seq"]).cast(want.drop_columns(["seq"]).schema) \
        .equals(want.drop_columns(["seq"]))


# -- the data source -----------------------------------------------------------------------------
def test_data_source_files_cut_at_object_starts(spark, tmp_path):
    """A folder of two streams with scn/tm on first messages only: a small file, and a big
    one read in pieces cut where a line opens an object. Each file piece is one input:
    Spark's rows are those of each piece decoded on its own (carry-forward within the
    piece), and together those of the whole files but for seq and the carried fields of
    transactions a cut runs through."""
    cs.register(spark)
    folder = tmp_path / "in"
    folder.mkdir()
    files = {}
    for name, n in (("a-small.json", 60), ("b-big.json", 900)):
        data, cat = cdcfast.encode.generate(FMT, rows=n, tables=2, table_width=6,
                                            seed=len(files) + 11, checkpoints=True)
        (folder / name).write_bytes(data)
        files[name] = data
    split = int(0.05 * (1 << 20))
    pieces = {n: cdcfast.Decoder(FMT).split_points(d, split) if len(d) > split else [0, len(d)]
              for n, d in files.items()}
    assert len(pieces["a-small.json"]) == 2 and len(pieces["b-big.json"]) - 1 >= 3
    for n, cuts in pieces.items():
        assert all(files[n][c - 1:c + 1] == b"\n{" for c in cuts[1:-1])
    df = spark.read.format("cdcfast").option("format", FMT) \
        .option("catalog", json.dumps(cat.to_dict())).option("table", "OLR_TEST.TABLE_2") \
        .option("split_mb", "0.05").load(str(folder))
    assert df.rdd.getNumPartitions() == sum(len(c) - 1 for c in pieces.values())
    got = df.toArrow()

    def py(data):
        return spark_types(cdcfast.decode(data, format=FMT, catalog=cat,
                                          table="OLR_TEST.TABLE_2"))

    per_piece = pa.concat_tables([py(files[n][a:b]) for n, cuts in pieces.items()
                                  for a, b in zip(cuts, cuts[1:])])
    whole = pa.concat_tables([py(d) for d in files.values()])
    assert got.num_rows == per_piece.num_rows == whole.num_rows > 300
    assert got.column("_error").null_count == got.num_rows
    assert got.cast(per_piece.schema).equals(per_piece)
    # a piece's events carry scn/tm from its own begin messages: only the events of a
    # transaction that a cut runs through (at most 4 per cut) lack them
    lost = per_piece.column("commit_ts").null_count
    assert whole.column("commit_ts").null_count == 0
    assert lost <= 4 * (sum(len(c) - 2 for c in pieces.values()))
    # in the same order: rows equal but for seq, and for the carried fields where lost
    carried = ["commit_ts", "change_ts", "source"]
    pp = per_piece.drop_columns(["seq"]).to_pylist()
    wh = whole.drop_columns(["seq"]).to_pylist()
    for p, w in zip(pp, wh):
        if p["commit_ts"] is None:
            assert p["source"]["scn"] is None
            p.update({k: w[k] for k in carried})
        assert p == w


def test_data_source_passes_epoch_unit(spark, tmp_path):
    """epoch_unit passes through .option: nanosecond epochs near 1970 are misread by "auto"
    (by their number of digits), read right with "ns"."""
    cs.register(spark)
    data, cat = cdcfast.encode.generate(FMT, rows=100, table_width=8, seed=3, epoch_unit="ns")
    p = tmp_path / "ns.json"
    p.write_bytes(data)
    want = spark_types(cdcfast.decode(data, format=FMT, catalog=cat, epoch_unit="ns"))
    assert want.column("_error").null_count == want.num_rows == 100
    auto = cdcfast.decode(data, format=FMT, catalog=cat)
    assert not auto.column("after").equals(cdcfast.decode(data, format=FMT, catalog=cat,
                                                          epoch_unit="ns").column("after"))
    reader = spark.read.format("cdcfast").option("format", FMT) \
        .option("catalog", json.dumps(cat.to_dict()))
    got = reader.option("epoch_unit", "ns").load(str(p)).toArrow()
    assert got.cast(want.schema).equals(want)
    with pytest.raises(Exception, match="epoch_unit must be one of"):
        reader.option("epoch_unit", "minutes").load(str(p)).schema
