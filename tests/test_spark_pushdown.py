"""Filter pushdown in the data source (issue 22): where the session enables
spark.sql.python.filterPushdown.enabled, equality and IN on `table`, `schema`, `op` and ranges
of `commit_ts` are applied by the data source's read (Spark trusts them and evaluates them no
more); without it Spark filters. Both ways give the rows a plain Python filter of
cdcfast.decode gives."""
from __future__ import annotations

import datetime as dt

import pyarrow as pa
import pytest

import cdcfast
from cdcfast import spark as cs

pytest.importorskip("pyspark")

FMT = "ibm-delimited"
CONF = "spark.sql.python.filterPushdown.enabled"


@pytest.fixture(scope="module")
def data(tmp_path_factory):
    folder = tmp_path_factory.mktemp("push")
    raw, cat = cdcfast.encode.generate(FMT, 1500, table_width=5, seed=12)
    path = folder / "in.del"
    path.write_bytes(raw)
    catalog = folder / "catalog.json"
    cat.save(str(catalog))
    full = cdcfast.decode(raw, FMT, catalog=cat)
    return path, catalog, cat, full


@pytest.fixture
def pushing(spark):
    """The session with filter pushdown on and the data source registered so; restored
    (off, re-registered) after."""
    before = spark.conf.get(CONF, "false")
    spark.conf.set(CONF, "true")
    cs.register(spark)
    try:
        yield spark
    finally:
        spark.conf.set(CONF, before)
        cs.register(spark)


def frame(spark, data, columns=None):
    path, catalog, _, _ = data
    r = spark.read.format("cdcfast").option("format", FMT).option("catalog", str(catalog))
    if columns:
        r = r.option("columns", columns)
    return r.load(str(path))


def spark_filters(df) -> str:
    """The conditions Spark itself still evaluates (its Filter nodes), null checks aside."""
    import re
    text = df._jdf.queryExecution().executedPlan().toString()
    conds = " ".join(line.split("Filter", 1)[1] for line in text.splitlines()
                     if "Filter" in line and "RuntimeFilters" not in line)
    return re.sub(r"isnotnull\(\w+#\d+L?\)", "", conds)


def cases(full: pa.Table):
    stamps = sorted(t for t in full.column("commit_ts").to_pylist() if t is not None)
    lo, hi = stamps[len(stamps) // 4], stamps[3 * len(stamps) // 4]
    table = full.column("table").to_pylist()[0]
    owner = full.column("schema").to_pylist()[0]
    return [
        ("op = 'u'", lambda r: r["op"] == "u"),
        ("op in ('c', 'd')", lambda r: r["op"] in ("c", "d")),
        (f"commit_ts >= '{lo.isoformat()}' and commit_ts < '{hi.isoformat()}'",
         lambda r: r["commit_ts"] is not None and lo <= r["commit_ts"] < hi),
        (f"commit_ts > '{lo.isoformat()}' and op = 'u' and commit_ts <= '{hi.isoformat()}'",
         lambda r: r["commit_ts"] is not None and lo < r["commit_ts"] <= hi and r["op"] == "u"),
        (f"commit_ts = '{lo.isoformat()}'", lambda r: r["commit_ts"] == lo),
        (f"`table` = '{table}' and schema = '{owner}'",
         lambda r: r["table"] == table and r["schema"] == owner),
        ("`table` = 'NOT_THIS_ONE'", lambda r: False),
        ("schema in ('X', 'Y') and seq < 50", lambda r: False),
        ("op = 'u' and seq % 2 = 0", lambda r: r["op"] == "u" and r["seq"] % 2 == 0),
    ]


def test_pushed_filters_are_applied_by_the_read(pushing, data):
    full = data[3]
    rows = full.to_pylist()
    for where, keep in cases(full):
        df = frame(pushing, data).where(where)
        got = sorted(df.select("seq").toArrow().column("seq").to_pylist())
        assert got == sorted(r["seq"] for r in rows if keep(r)), where
        # Spark keeps only what the source did not take (here `seq`, and null checks)
        left = spark_filters(df)
        for col in ("op#", "commit_ts#", "table#", "schema#"):
            assert col not in left, (where, left)
    assert sum(1 for r in rows if r["op"] == "u") > 0


def test_a_projection_and_pushed_filters(pushing, data):
    full = data[3]
    df = frame(pushing, data, "op,seq,after").where("op = 'd'")
    got = df.toArrow()
    assert got.column_names == ["op", "seq", "after", "_error"]
    want = [r["seq"] for r in full.to_pylist() if r["op"] == "d"]
    assert sorted(got.column("seq").to_pylist()) == sorted(want) and want
    # a table no row can be of: no file is read (Spark runs one empty task)
    none = frame(pushing, data).where("`table` = 'OTHER'")
    assert none.rdd.getNumPartitions() <= 1 and none.count() == 0


def test_without_pushdown_spark_filters(spark, data):
    assert str(spark.conf.get(CONF, "false")).lower() != "true"
    cs.register(spark)
    full = data[3]
    rows = full.to_pylist()
    for where, keep in cases(full):
        got = sorted(frame(spark, data).where(where).select("seq").toArrow()
                     .column("seq").to_pylist())
        assert got == sorted(r["seq"] for r in rows if keep(r)), where


def test_a_task_reads_the_columns_a_filter_needs(data):
    """A filter on a column the projection leaves out: read with it, then dropped."""
    import types
    path, catalog, cat, full = data
    opts = cs.DataSourceOptions({"format": FMT, "catalog": str(catalog), "columns": "seq",
                                 "path": str(path)})
    lo = dt.datetime(2024, 6, 1, tzinfo=dt.timezone.utc)
    micros = (lo - dt.datetime(1970, 1, 1, tzinfo=dt.timezone.utc)) // dt.timedelta(
        microseconds=1)
    size = path.stat().st_size
    partition = types.SimpleNamespace(pieces=[(str(path), 0, size, size)])
    got = pa.Table.from_batches(list(cs._read_pieces(
        opts, partition, (("op", "in", ("u", "d")), ("commit_ts", ">=", micros)))))
    assert got.column_names == ["seq", "_error"]
    assert got.column("seq").to_pylist() == [
        r["seq"] for r in full.to_pylist() if r["op"] in ("u", "d")
        and r["commit_ts"] is not None and r["commit_ts"] >= lo]
