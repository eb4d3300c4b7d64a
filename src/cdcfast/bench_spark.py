"""`cdcfast bench --spark` (SPEC §8, issue "Spark layer"): the same generated input through
local Spark (local[2]), in one run:

- Spark's own way: ``spark.read.text`` + ``from_csv`` (every field a string, ``"`` doubled
  inside strings) + casts to the catalog's types (``try_cast``, ``try_to_timestamp`` /
  ``try_to_date`` with Db2's patterns, ``unhex`` for FOR BIT DATA: a bad value becomes null,
  as PERMISSIVE keeps the row);
- cdcfast through ``mapInArrow`` over the same text lines (each line one message);
- cdcfast through its data source (the files read by the Python workers, one partition each);
- the identity ``mapInArrow`` over the same lines: what moving the rows from the JVM to Python
  and back costs, before any decoding (the transfer floor).

Every contender ends in Spark's ``noop`` sink, so each is fully computed and nothing is
written. The input is written as several files (split between messages) so both cores work.
The data has no record delimiter inside strings (read.text splits lines at every one); the
figures are MB/s of input; speed is reported, never asserted.
"""
from __future__ import annotations

import os
import tempfile
import time

from .catalog import (BINARY, BOOL, DATE32, DECIMAL, FLOAT32, FLOAT64, INT8, INT16, INT32,
                      INT64, TIMESTAMP, TIMESTAMP_TZ)

FILES = 8


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


def run(case, repeat: int = 3, cores: int = 2, echo=print) -> dict:
    """The four contenders on `case` (bench.Case) through local[`cores`] Spark."""
    from pyspark.sql import functions as F
    from pyspark.sql import SparkSession

    from . import spark as cs
    from .bench import best_times
    from .encode import generate

    active = SparkSession.getActiveSession()
    spark = active or (SparkSession.builder.master(f"local[{cores}]").appName("cdcfast-bench")
                       .config("spark.ui.showConsoleProgress", "false")
                       .config("spark.sql.session.timeZone", "UTC").getOrCreate())
    spark.sparkContext.setLogLevel("ERROR")
    cs.register(spark)
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

        lines = spark.read.text(folder)
        ddl, exprs = spark_sql_plan(case.catalog, case.table)
        # Db2 doubles a quote inside a string; a malformed value becomes null (try_…), as
        # cdcfast's PERMISSIVE mode keeps the row
        from_csv = lines.select(F.from_csv("value", ddl, {"escape": '"'}).alias("r")) \
            .selectExpr(*exprs)
        mapped = cs.decode(lines, format=case.format, catalog=case.catalog, table=case.table)
        source = spark.read.format("cdcfast").option("format", case.format) \
            .option("catalog", cat_file).option("table", case.table).load(folder)

        def identity(batches):
            yield from batches

        floor = lines.mapInArrow(identity, lines.schema)

        def noop(df):
            return lambda: df.write.format("noop").mode("overwrite").save()

        tools = {"Spark read.text + from_csv + casts": noop(from_csv),
                 "cdcfast mapInArrow": noop(mapped),
                 "cdcfast data source": noop(source),
                 "mapInArrow identity (transfer floor)": noop(floor)}
        times = best_times(tools, repeat)
        rows = source.count()
    if active is None:
        spark.stop()
    out = {"input_mb": round(size / 1e6, 1), "files": FILES, "cores": cores, "rows": rows,
           "tools": {k: {"mb_s": size / 1e6 / t, "rows_s": rows / t} for k, t in times.items()}}
    echo(report(out))
    return out


def report(res: dict) -> str:
    t = res["tools"]
    base = t["Spark read.text + from_csv + casts"]["mb_s"]
    lines = [f"Spark (local[{res['cores']}], {res['input_mb']} MB in {res['files']} files, "
             f"{res['rows']:,} rows, best of interleaved runs)",
             f"{'tool':<38}{'MB/s':>10}{'rows/s':>14}{'vs from_csv':>13}", "-" * 75]
    for name, r in t.items():
        lines.append(f"{name:<38}{r['mb_s']:>10.1f}{r['rows_s']:>14,.0f}"
                     f"{r['mb_s'] / base:>12.2f}x")
    ident = t["mapInArrow identity (transfer floor)"]["mb_s"]
    lines.append(f"cdcfast mapInArrow / identity mapInArrow: "
                 f"{t['cdcfast mapInArrow']['mb_s'] / ident:.2f}x; cdcfast data source / "
                 f"from_csv: {t['cdcfast data source']['mb_s'] / base:.2f}x")
    return "\n".join(lines)
