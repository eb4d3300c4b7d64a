"""`lldf` through the Spark layer (SPEC §6) on a real local SparkSession: the file data source
(rdw framing, segmented records, big files cut at record starts) and mapInArrow over a
message column equal cdcfast.decode on the same bytes."""
from __future__ import annotations

import json

import pyarrow as pa
import pytest

import cdcfast
from cdcfast import spark as cs

pytest.importorskip("pyspark")

FMT = "lldf"
TABLE = "SALES.ORDERS_0"


def spark_types(t: pa.Table) -> pa.Table:
    return t.cast(cs._spark_arrow_schema(t.schema, False))


def test_data_source_cuts_a_segmented_rdw_file_at_record_starts(spark, tmp_path):
    """A file bigger than split_mb is read in pieces cut at physical records that do not
    continue a segmented record: every event as in the whole file, segments joined."""
    cs.register(spark)
    data, cat = cdcfast.encode.generate(FMT, rows=1500, seed=5, framing="rdw",
                                        segment_bytes=200, control=True, tables=2)
    p = tmp_path / "big.lldf"
    p.write_bytes(data)
    reader = spark.read.format("cdcfast").option("format", FMT) \
        .option("catalog", json.dumps(cat.to_dict())).option("table", TABLE) \
        .option("framing", "rdw").option("split_mb", "0.2")
    df = reader.load(str(p))
    from cdcfast import _lldf_frame
    cuts = _lldf_frame.record_starts(data, "rdw", int(0.2 * (1 << 20)))
    assert len(cuts) - 1 >= 3 and df.rdd.getNumPartitions() == len(cuts) - 1
    got = df.toArrow()
    want = cdcfast.decode(data, format=FMT, catalog=cat, table=TABLE, framing="rdw")
    assert got.num_rows == want.num_rows > 500
    assert got.column("_error").null_count == got.num_rows
    assert max(r["totalsegs"] for r in got.column("source").to_pylist()) > 1   # joined
    cols = ["op", "source_op", "txid", "commit_ts", "change_pos", "before", "after", "changed",
            "source"]
    key = lambda r: (r["change_pos"], r["source"]["logrba"])     # noqa: E731
    assert sorted(got.select(cols).cast(spark_types(want).select(cols).schema).to_pylist(),
                  key=key) == sorted(spark_types(want).select(cols).to_pylist(), key=key)


def test_map_in_arrow_over_messages_and_decode_tables(spark):
    """Each row one message of raw-framed records; `keep` columns follow every event; a
    broken message gives an unattributable record under the key None."""
    msgs, cat = cdcfast.encode.generate(FMT, rows=300, seed=6, tables=2, messages=True)
    msgs = list(msgs) + [msgs[0][:300]]                  # a record cut short
    rows = [(m, 1000 + i) for i, m in enumerate(msgs)]
    df = spark.createDataFrame(rows, "value binary, offset long").repartition(2)
    got = cs.decode(df, format=FMT, catalog=cat, table=TABLE, keep=["offset"]).toArrow()
    want = cdcfast.decode(msgs, format=FMT, catalog=cat, table=TABLE)
    bad = [r for r in got.to_pylist() if r["_corrupt_record"] is not None]
    assert [(r["offset"], r["_corrupt_record"]) for r in bad] == [(1000 + len(msgs) - 1,
                                                                     msgs[-1])]
    assert bad[0]["_error"] == ("SEGLEN: record of 523 bytes overruns the input (300 bytes "
                                "left) (message 0, byte 182)")   # each row its own input
    assert got.num_rows == want.num_rows
    cols = ["op", "txid", "change_pos", "after", "before"]
    ours = sorted(got.select(cols).to_pylist(), key=lambda r: (r["change_pos"] or b""))
    theirs = sorted(spark_types(want.select(cols)).to_pylist(),
                    key=lambda r: (r["change_pos"] or b""))
    assert ours == theirs
    per = cs.decode_tables(df, format=FMT, catalog=cat)
    assert set(per) == {"SALES.ORDERS_0", "SALES.ORDERS_1", None}
    counts = {k: v.count() for k, v in per.items()}
    py = cdcfast.decode_tables(msgs, format=FMT, catalog=cat)
    assert counts == {k: t.num_rows for k, t in py.items()}
    assert counts[None] == 1
