"""`cdcfast bench --spark` (SPEC §8, issue "Spark layer"): the same generated input through
local Spark (local[2]), in one run:

- Spark's own way: ``spark.read.text`` + ``from_csv`` (every field a string, ``"`` doubled
  inside strings) + casts to the catalog's types (``try_cast``, ``try_to_timestamp`` /
  ``try_to_date`` with Db2's patterns, ``unhex`` for FOR BIT DATA: a bad value becomes null,
  as PERMISSIVE keeps the row);
- cdcfast through ``mapInArrow`` over the same text lines (each line one message);
- cdcfast through its data source (the files read by the Python workers, one partition each);
- the identity ``mapInArrow`` over the same lines: what moving the rows from the JVM to Python
  and back costs, before any decoding (the transfer floor);
- and floors of the envelope itself, with no decoding at all: a ``mapInArrow`` that answers
  each batch of lines with events decoded beforehand (whole, and projected), and a Python
  data source that yields each file's events decoded beforehand (what Spark's receiving of
  the envelope costs).

Every contender ends in Spark's ``noop`` sink, so each is fully computed and nothing is
written. The input is written as several files (split between messages) so both cores work.
The data has no record delimiter inside strings (read.text splits lines at every one); the
figures are MB/s of input; speed is reported, never asserted.
"""
from __future__ import annotations

import os
import tempfile
import time

from ..catalog import (BINARY, BOOL, DATE32, DECIMAL, FLOAT32, FLOAT64, INT8, INT16, INT32,
                       INT64, TIMESTAMP, TIMESTAMP_TZ)

FILES = 8
# what a job that applies changes reads (issue 22's projection)
PROJECTION = "op,commit_ts,commit_pos,seq,after"
SOURCE = "cdcfast data source"
SOURCE_P = "cdcfast data source, columns=" + PROJECTION
MAPPED = "cdcfast mapInArrow"
MAPPED_P = "cdcfast mapInArrow, columns=" + PROJECTION
FROM_CSV = "Spark read.text + from_csv + casts"
IDENTITY = "mapInArrow identity (transfer floor)"
SOURCE_B = "cdcfast data source, flags=bitmask"
CANNED = "mapInArrow answering pre-decoded events"
CANNED_P = "mapInArrow answering pre-decoded events, columns=" + PROJECTION
PREDECODED = "data source of pre-decoded events"


def _cast(col: str, t) -> str:
    """A Spark SQL expression converting Db2 text column `col` (of the struct `r`) to the
    catalog type `t`."""
    c = f"r.`{col}`"
    ints = {INT8: "tinyint", INT16: "smallint", INT32: "int", INT64: "bigint"}
    if t.kind in ints:
        return f"try_cast({c} as {ints[t.kind]})"
    if t.kind == DECIMAL:
        return f"try_cast({c} as decimal({t.precision},{t.scale}))"
    if t.kind in (FLOAT32, FLOAT64):
        return f"try_cast({c} as {'float' if t.kind == FLOAT32 else 'double'})"
    if t.kind == BOOL:
        return f"try_cast({c} as boolean)"
    if t.kind == DATE32:
        return f"try_to_date({c}, 'yyyy-MM-dd')"
    if t.kind in (TIMESTAMP, TIMESTAMP_TZ):
        frac = "." + "S" * t.precision if t.precision else ""
        zone = "XXX" if t.kind == TIMESTAMP_TZ else ""
        return f"try_to_timestamp({c}, 'yyyy-MM-dd-HH.mm.ss{frac}{zone}')"
    if t.kind == BINARY:
        return f"unhex({c})"
    return c                                        # text, TIME: as read


def spark_sql_plan(catalog, table: str):
    """(from_csv schema DDL, select expressions) of Spark's own decoding of the table."""
    cols = catalog.get(table).columns
    names = [f"h{i}" for i in range(12)] + [f"b_{c.name}" for c in cols] \
        + [f"a_{c.name}" for c in cols]
    ddl = ", ".join(f"`{n}` string" for n in names)
    exprs = [f"r.`h{i}` as h{i}" for i in range(12) if i != 9] \
        + ["try_to_timestamp(r.h9, 'yyyy-MM-dd-HH.mm.ss') as commit_ts"]
    for img in "ba":
        exprs += [f"{_cast(f'{img}_{c.name}', c.type)} as `{img}_{c.name}`" for c in cols]
    return ddl, exprs


def _predecoded_source():
    """A Python data source yielding the Arrow IPC files of option `paths` (a JSON list), one
    partition each: the envelope's own cost in Spark, with no decoding."""
    from pyspark.sql.datasource import DataSource, DataSourceReader, InputPartition

    class Reader(DataSourceReader):
        def __init__(self, paths, options):
            self.paths = paths
            self.options = options

        def partitions(self):
            # as many partitions as the cdcfast data source packs the same files into
            n = max(1, int(self.options.get("partitions", len(self.paths))))
            return [InputPartition(self.paths[i::n]) for i in range(min(n, len(self.paths)))]

        def read(self, partition):
            import pyarrow as pa
            for path in partition.value:
                r = pa.ipc.open_file(path)
                for i in range(r.num_record_batches):
                    yield r.get_batch(i)

    class PreDecoded(DataSource):
        @classmethod
        def name(cls):
            return "cdcfast_predecoded"

        def schema(self):
            import json

            import pyarrow as pa

            from cdcfast import spark as cs
            return cs._struct_type(pa.ipc.open_file(json.loads(self.options["paths"])[0]).schema)

        def reader(self, schema):
            import json
            return Reader(json.loads(self.options["paths"]), dict(self.options))

    return PreDecoded


def _canned(path):
    """A mapInArrow function answering each batch of lines with as many events of the Arrow
    file at `path` (decoded beforehand): Spark's cost of the events, without decoding."""

    def canned(batches):
        import pyarrow as pa
        t = pa.ipc.open_file(path).read_all().combine_chunks()
        for b in batches:
            n, at = b.num_rows, 0
            while at < n:
                k = min(n - at, t.num_rows)
                yield from t.slice(0, k).to_batches()
                at += k

    return canned


def _write_ipc(path, table):
    import pyarrow as pa
    with pa.OSFile(path, "wb") as f:
        with pa.ipc.new_file(f, table.schema) as w:
            for b in table.to_batches(65536):
                w.write_batch(b)


# the Arrow checks Spark's JVM makes on every value it reads (docs/spark.md, "JVM options")
ARROW_UNCHECKED = ("-Darrow.enable_unsafe_memory_access=true "
                   "-Darrow.enable_null_check_for_get=false")


def run(case, repeat: int = 3, cores: int = 2, echo=print, cluster: bool = False) -> dict:
    """The contenders on `case` (bench.Case) through local[`cores`] Spark; with `cluster`,
    again on a standalone cluster of two 1-core workers on loopback (cdcfast.spark_cluster),
    with Spark's defaults and with the executors' Arrow checks off (ARROW_UNCHECKED)."""
    from pyspark.sql import SparkSession

    from .. import spark as cs
    from ..encode import generate

    active = SparkSession.getActiveSession()
    # the same table and rows, but no record delimiter inside a string: read.text (the first
    # two contenders' input) splits lines at every one
    msgs, _ = generate(case.format, rows=case.rows, table_width=len(case.catalog.get(
        case.table).columns), messages=True, line_per_record=True)
    with tempfile.TemporaryDirectory() as tmp:
        folder = os.path.join(tmp, "in")
        os.makedirs(folder)
        per = -(-len(msgs) // FILES)
        for i in range(FILES):
            with open(os.path.join(folder, f"part-{i:02d}.del"), "wb") as f:
                f.write(b"".join(msgs[i * per:(i + 1) * per]))
        cat_file = os.path.join(tmp, "catalog.json")
        case.catalog.save(cat_file)
        size = sum(os.path.getsize(os.path.join(folder, f)) for f in os.listdir(folder))
        spark = cs.local_session(str(cores), app="cdcfast-bench")   # loopback only, quiet
        times, rows = _measure(spark, case, folder, cat_file, tmp, repeat)
        out = _result(times, size, rows, f"local[{cores}]", cores)
        echo(report(out))
        if cluster:
            out["cluster"] = []
            if active is None:
                spark.stop()
            from ..spark_cluster import standalone_cluster
            with standalone_cluster(workers=2, cores=1, memory="2g") as c:
                for label, opts in (("standalone, 2 workers x 1 core", ""),
                                    ("standalone, 2 workers x 1 core, Arrow checks off",
                                     ARROW_UNCHECKED)):
                    s = _cluster_session(c.master, opts)
                    try:
                        t, n = _measure(s, case, folder, cat_file, tmp, repeat)
                    finally:
                        s.stop()
                    got = _result(t, size, n, label, 2)
                    echo(report(got))
                    out["cluster"].append(got)
    if active is None and not cluster:
        spark.stop()
    return out


def _result(times, size, rows, where, cores) -> dict:
    return {"input_mb": round(size / 1e6, 1), "files": FILES, "cores": cores, "rows": rows,
            "where": where,
            "tools": {k: {"mb_s": size / 1e6 / t, "rows_s": rows / t} for k, t in times.items()}}


def _cluster_session(master: str, executor_java: str):
    """A session on the standalone cluster (driver on loopback, one 1-core executor per
    worker)."""
    import sys

    from pyspark.sql import SparkSession

    from ..spark import LOOPBACK
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    b = SparkSession.builder.master(master).appName("cdcfast-bench-cluster")
    conf = {"spark.driver.bindAddress": LOOPBACK, "spark.driver.host": LOOPBACK,
            "spark.ui.enabled": "false", "spark.ui.showConsoleProgress": "false",
            "spark.sql.session.timeZone": "UTC", "spark.executor.cores": "1",
            "spark.executor.memory": "1500m", "spark.cores.max": "2"}
    if executor_java:
        conf["spark.executor.extraJavaOptions"] = executor_java
    for k, v in conf.items():
        b = b.config(k, v)
    spark = b.getOrCreate()
    spark.sparkContext.setLogLevel("ERROR")
    return spark


def _measure(spark, case, folder, cat_file, tmp, repeat):
    """Best times of every contender on `spark` over the files of `folder`, and the rows."""
    import json

    from pyspark.sql import functions as F

    import cdcfast

    from .. import spark as cs
    from ._timing import best_times

    cs.register(spark)
    lines = spark.read.text(folder)
    ddl, exprs = spark_sql_plan(case.catalog, case.table)
    # Db2 doubles a quote inside a string; a malformed value becomes null (try_…), as
    # cdcfast's PERMISSIVE mode keeps the row
    from_csv = lines.select(F.from_csv("value", ddl, {"escape": '"'}).alias("r")) \
        .selectExpr(*exprs)
    mapped = cs.decode(lines, format=case.format, catalog=case.catalog, table=case.table)
    source = spark.read.format("cdcfast").option("format", case.format) \
        .option("catalog", cat_file).option("table", case.table).load(folder)
    # the same, projected (SPEC §1 columns=): Spark converts a fifth of the leaves
    mapped_p = cs.decode(lines, format=case.format, catalog=case.catalog,
                         table=case.table, columns=PROJECTION)
    source_p = spark.read.format("cdcfast").option("format", case.format) \
        .option("catalog", cat_file).option("table", case.table) \
        .option("columns", PROJECTION).load(folder)
    # the whole envelope with changed / present as int64 bitmasks (2 leaves instead of 40)
    source_b = spark.read.format("cdcfast").option("format", case.format) \
        .option("catalog", cat_file).option("table", case.table) \
        .option("flags", "bitmask").load(folder)

    def identity(batches):
        yield from batches

    floor = lines.mapInArrow(identity, lines.schema)

    # the envelope decoded beforehand, in Spark's exchange types: per file, and one batch
    # to answer any batch of lines with (whole and projected)
    def predecode(name, columns, frame):
        ipc = os.path.join(tmp, name + (".p" if columns else "") + ".arrow")
        if not os.path.exists(ipc):
            events = cdcfast.decode(os.path.join(folder, name), format=case.format,
                                    catalog=case.catalog, table=case.table, columns=columns)
            _write_ipc(ipc, events.cast(cs._exchange_schema(frame.schema)))
        return ipc

    names = sorted(os.listdir(folder))
    ipcs = [predecode(name, None, source) for name in names]
    spark.dataSource.register(_predecoded_source())
    predecoded = spark.read.format("cdcfast_predecoded").option("paths", json.dumps(ipcs)) \
        .option("partitions", source.rdd.getNumPartitions()).load()
    canned_frame = lines.mapInArrow(_canned(ipcs[0]), source.schema)
    canned_p = lines.mapInArrow(_canned(predecode(names[0], PROJECTION, source_p)),
                                source_p.schema)

    def noop(df):
        return lambda: df.write.format("noop").mode("overwrite").save()

    tools = {FROM_CSV: noop(from_csv),
             MAPPED: noop(mapped),
             SOURCE: noop(source),
             MAPPED_P: noop(mapped_p),
             SOURCE_P: noop(source_p),
             SOURCE_B: noop(source_b),
             IDENTITY: noop(floor),
             CANNED: noop(canned_frame),
             CANNED_P: noop(canned_p),
             PREDECODED: noop(predecoded)}
    return best_times(tools, repeat), source.count()


def report(res: dict) -> str:
    t = res["tools"]
    W = max(38, max(len(k) for k in t) + 2)
    base = t[FROM_CSV]["mb_s"]
    where = res.get("where", f"local[{res['cores']}]")
    lines = [f"Spark ({where}, {res['input_mb']} MB in {res['files']} files, "
             f"{res['rows']:,} rows, best of interleaved runs)",
             f"{'tool':<{W}}{'MB/s':>10}{'rows/s':>14}{'vs from_csv':>13}", "-" * (W + 37)]
    for name, r in t.items():
        lines.append(f"{name:<{W}}{r['mb_s']:>10.1f}{r['rows_s']:>14,.0f}"
                     f"{r['mb_s'] / base:>12.2f}x")
    ident = t[IDENTITY]["mb_s"]
    lines.append(f"cdcfast mapInArrow / identity mapInArrow: "
                 f"{t[MAPPED]['mb_s'] / ident:.2f}x; cdcfast data source / "
                 f"from_csv: {t[SOURCE]['mb_s'] / base:.2f}x")
    if SOURCE_P in t:
        lines.append(f"columns={PROJECTION}: data source / from_csv "
                     f"{t[SOURCE_P]['mb_s'] / base:.2f}x (goal 3), / identity mapInArrow "
                     f"{t[SOURCE_P]['mb_s'] / ident:.2f}x (goal 0.8); mapInArrow / identity "
                     f"{t[MAPPED_P]['mb_s'] / ident:.2f}x (goal 0.8); whole envelope: data "
                     f"source / from_csv {t[SOURCE]['mb_s'] / base:.2f}x (goal 1.6)")
    if SOURCE_B in t:
        bm = t[SOURCE_B]["mb_s"]
        lines.append(f"flags as bitmasks: data source {bm / t[SOURCE]['mb_s']:.2f}x the struct "
                     f"flags ({bm / base:.2f}x from_csv)")
    if CANNED in t:
        lines.append(
            "against the envelope's own cost (no decoding): cdcfast mapInArrow "
            f"{t[MAPPED]['mb_s'] / t[CANNED]['mb_s']:.2f}x, cdcfast data source "
            f"{t[SOURCE]['mb_s'] / t[PREDECODED]['mb_s']:.2f}x")
    if CANNED_P in t:
        lines.append(
            f"columns=…, no decoding: mapInArrow answering pre-decoded events "
            f"{t[CANNED_P]['mb_s'] / ident:.2f}x identity (the ceiling of mapInArrow / "
            f"identity); decoding in it: {t[MAPPED_P]['mb_s'] / t[CANNED_P]['mb_s']:.2f}x that")
    return "\n".join(lines)
