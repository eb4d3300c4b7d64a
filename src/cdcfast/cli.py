"""`cdcfast` on the command line (SPEC §7): decode, inspect, generate, bench, demo."""
from __future__ import annotations

import argparse
import sys


def _options(pairs) -> dict:
    """--option KEY=VALUE … → format options (text, as Spark's .option passes them)."""
    out = {}
    for p in pairs or ():
        key, sep, value = p.partition("=")
        if not sep or not key:
            raise SystemExit(f"--option takes KEY=VALUE, not {p!r}")
        out[key] = value
    return out


def _decoder(args):
    import cdcfast
    from .formats import get as format_class
    catalog = cdcfast.Catalog.load(args.catalog) if args.catalog else None
    return cdcfast.Decoder(args.format, catalog=catalog, mode=args.mode,
                           **format_class(args.format).options_from_text(_options(args.option)))


PROGRESS_BYTES = 64 << 20       # inputs from this size on show a progress bar


def _decode(args) -> int:
    """Decode files into Parquet: one file for one table, else a folder of one per table."""
    import os
    import time

    import pyarrow.parquet as pq
    if args.spark:
        return _decode_spark(args)
    dec = _decoder(args)
    total = sum(os.path.getsize(f) for f in args.inputs)
    t0 = time.perf_counter()
    bar = None
    if total >= PROGRESS_BYTES and not args.quiet:
        from tqdm import tqdm
        bar = tqdm(unit=" events", unit_scale=True, desc="decoding", file=sys.stderr)
    writers, rows = {}, {}
    try:
        for i, path in enumerate(args.inputs):
            if bar is not None:
                bar.set_postfix_str(f"file {i + 1}/{len(args.inputs)}")
            batches = ((args.table, b) for b in dec.read_batches(path, table=args.table)) \
                if args.table else dec.read_tables(path)
            for key, batch in batches:        # batch by batch: memory bounded by the batch
                batch = _parquet_ready(batch)
                if key not in writers:
                    writers[key] = pq.ParquetWriter(_out_path(args, key), batch.schema)
                    rows[key] = 0
                writers[key].write_batch(batch)
                rows[key] += batch.num_rows
                if bar is not None:
                    bar.update(batch.num_rows)
    finally:
        for w in writers.values():
            w.close()
        if bar is not None:
            bar.close()
    secs = time.perf_counter() - t0
    for key, n in rows.items():
        print(f"{key or '(unattributable records)'}: {n:,} events → {_out_path(args, key)}")
    print(f"decoded {total / 1e6:,.1f} MB in {secs:.2f} s ({total / 1e6 / max(secs, 1e-9):,.0f}"
          " MB/s)")
    return 0


def _parquet_ready(batch):
    """The batch without struct columns that have no fields, which Parquet cannot write (the
    images of unattributable records: no table, so no columns)."""
    import pyarrow as pa
    empty = [f.name for f in batch.schema
             if pa.types.is_struct(f.type) and f.type.num_fields == 0]
    return batch.drop_columns(empty) if empty else batch


def _out_path(args, key):
    import os
    if args.table:
        return args.output
    os.makedirs(args.output, exist_ok=True)
    return os.path.join(args.output, f"{key or '_corrupt'}.parquet")


def _decode_spark(args) -> int:
    """The same through local Spark: the cdcfast data source reads, Spark writes Parquet."""
    import json
    import time
    spark = _local_spark()
    from . import spark as cs
    cs.register(spark)
    dec = _decoder(args)
    tables = [args.table] if args.table else [t.name for t in dec.catalog.tables] \
        if dec.catalog is not None else []
    if not tables:
        raise SystemExit("--spark needs --catalog (Spark must know each table's columns)")
    t0 = time.perf_counter()
    for table in tables:
        reader = spark.read.format("cdcfast").option("format", args.format) \
            .option("catalog", args.catalog).option("table", table).option("mode", args.mode)
        for k, v in _options(args.option).items():
            reader = reader.option(k, v)
        out = args.output if args.table else f"{args.output.rstrip('/')}/{table}"
        reader.option("paths", json.dumps(list(args.inputs))).load() \
            .write.mode("overwrite").parquet(out)
        print(f"{table}: {spark.read.parquet(out).count():,} events → {out}")
    print(f"decoded through Spark in {time.perf_counter() - t0:.1f} s")
    return 0


def _local_spark(cores: str = "*"):
    """A local Spark session for the command line (quiet)."""
    import os
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    from pyspark.sql import SparkSession
    spark = (SparkSession.builder.master(f"local[{cores}]").appName("cdcfast")
             .config("spark.ui.showConsoleProgress", "false")
             .config("spark.sql.session.timeZone", "UTC").getOrCreate())
    spark.sparkContext.setLogLevel("ERROR")
    return spark


# every `op` of SPEC §3 in the order `inspect` counts them; the last five are control events
_OPS = ("c", "u", "d", "r", "t", "begin", "commit", "ddl", "checkpoint", "message")
_CONTROL = _OPS[5:]


def _inspect(args) -> int:
    """Tables, op counts, time range and errors of the inputs (headers only: fast)."""
    import pyarrow as pa
    import pyarrow.compute as pc
    dec = _decoder(args)
    heads = pa.concat_tables([dec.headers(p) for p in args.inputs])
    n = heads.num_rows
    print(f"{n:,} records in {len(args.inputs)} input(s), format {args.format}")
    if n == 0:
        return 0
    op = pc.fill_null(heads.column("op"), "-")
    names = pc.binary_join_element_wise(pc.fill_null(heads.column("schema"), ""),
                                        pc.fill_null(heads.column("table"), ""), ".")
    # a record without a table is a control event of no table (Debezium's transaction
    # BEGIN/END, say), else one that could not be attributed (SPEC §1)
    control = pc.is_in(op, value_set=pa.array(_CONTROL))
    names = pc.if_else(pc.is_null(heads.column("table")),
                       pc.if_else(control, "(control events)", "(unattributable)"), names)
    keyed = pa.table({"table": names, "op": op,
                      "error": pc.is_valid(heads.column("_error"))})
    g = keyed.group_by(["table", "op"]).aggregate([([], "count_all"), ("error", "sum")])
    per = {}
    for row in g.to_pylist():
        per.setdefault(row["table"], {})[row["op"]] = (row["count_all"], row["error_sum"])
    print(f"{'table':32s} {'events':>10s}   c / u / d / other   errors")
    for table in sorted(per):
        ops = per[table]
        count = sum(v[0] for v in ops.values())
        errors = sum(v[1] for v in ops.values())
        mix = " / ".join(f"{ops.get(o, (0, 0))[0]:,}" for o in ("c", "u", "d")) \
            + f" / {sum(v[0] for o, v in ops.items() if o not in 'cud'):,}"
        print(f"{table:32s} {count:10,d}   {mix}   {errors:,}")
    counts = {r["values"]: r["counts"] for r in pc.value_counts(op).to_pylist()}
    order = [o for o in _OPS if o in counts] + sorted(o for o in counts if o not in _OPS)
    print("ops: " + ", ".join(f"{'(none)' if o == '-' else o} {counts[o]:,}" for o in order))
    ts = heads.column("commit_ts")
    lo, hi = pc.min(ts).as_py(), pc.max(ts).as_py()
    print(f"commit time: {lo} … {hi}")
    nerr = n - heads.column("_error").null_count
    print(f"errors: {nerr:,}" + (f" (first: {pc.drop_null(heads.column('_error'))[0]})"
                                  if nerr else ""))
    return 0


def _generator_options(pairs) -> dict:
    """--option KEY=VALUE for the generator: numbers and true/false as such."""
    out = {}
    for k, v in _options(pairs).items():
        low = v.lower()
        out[k] = True if low == "true" else False if low == "false" else \
            int(v) if v.isdigit() else v
    return out


def _generate(args) -> int:
    from .encode import generate
    data, catalog = generate(args.format, rows=args.rows, table_width=args.table_width,
                             tables=args.tables, seed=args.seed,
                             **_generator_options(args.option))
    with open(args.output, "wb") as f:
        f.write(data)
    catalog.save(args.output + ".catalog.json")
    print(f"wrote {args.rows:,} records ({len(data) / 1e6:.1f} MB) of {args.format} to "
          f"{args.output}, catalog {args.output}.catalog.json")
    return 0


def _bench(args) -> int:
    from . import bench
    results = bench.run(args.format, size_mb=args.size, repeat=args.repeat,
                        reference_mb=args.reference_size, table_width=args.table_width,
                        extras=not args.quick, spark=args.spark)
    if args.json:
        with open(args.json, "w") as f:
            f.write(bench.dumps(results))
    return 0


# the demo's formats: (format, what it is, file suffix)
DEMO = (("ibm-delimited", "IBM Q Replication delimited", "del"),
        ("lldf", "BMC Log Master LLDF (EBCDIC, binary)", "lldf"),
        ("debezium", "Debezium JSON (Db2 connector)", "json"),
        ("olr", "OpenLogReplicator JSON (Oracle)", "json"),
        ("qlik", "Qlik Replicate JSON (Kafka)", "json"))


def _demo(args) -> int:
    """Generate a sample of every format, decode each in this process and on local Spark
    (the cdcfast data source), show a few events and the throughput."""
    import cdcfast
    print(f"cdcfast {cdcfast.__version__} (native kernels: {cdcfast.native_available()})")
    try:
        import pyspark  # noqa: F401
    except ImportError:
        print("(pyspark is not installed: `pip install -e \".[spark]\"` for the Spark part)")
        pyspark = None
    spark = ours = None
    if pyspark is not None:
        import time
        from pyspark.sql import SparkSession
        from . import spark as cs
        t = time.perf_counter()
        ours = SparkSession.getActiveSession() is None      # else a caller's: leave it running
        spark = _local_spark(args.cores)
        print(f"local Spark {spark.version} on local[{args.cores}] started in "
              f"{time.perf_counter() - t:.1f} s")
        cs.register(spark)
    try:
        for fmt, what, suffix in DEMO:
            _demo_format(fmt, what, suffix, args.rows, spark)
    finally:
        if ours:
            spark.stop()
    return 0


def _demo_format(fmt, what, suffix, rows, spark):
    import os
    import tempfile
    import time

    import cdcfast
    from .encode import generate
    data, catalog = generate(fmt, rows=rows, table_width=20, seed=1)
    table = catalog.tables[0].name
    print(f"\n== {fmt}: generated {rows:,} {what} records ({len(data) / 1e6:.1f} MB) of {table}")
    dec = cdcfast.Decoder(fmt, catalog=catalog)
    dec.headers(data[:100000])                      # warm up
    t = time.perf_counter()
    events = dec.decode(data, table=table)
    secs = time.perf_counter() - t
    print(f"in this process: {events.num_rows:,} events in {secs:.2f} s, "
          f"{len(data) / 1e6 / secs:,.0f} MB/s, {events.num_rows / secs:,.0f} rows/s "
          f"(stats: {dec.last_stats})")
    if spark is None:
        _show(events.slice(0, 2).to_pylist())
        return
    with tempfile.TemporaryDirectory() as tmp:
        # the sample as 4 files: the data source reads one partition per file
        path = os.path.join(tmp, "landing")
        os.makedirs(path)
        size = 0
        for i in range(4):
            part, _ = generate(fmt, rows=rows // 4, table_width=20, seed=1 + i)
            with open(os.path.join(path, f"part-{i}.{suffix}"), "wb") as f:
                f.write(part)
            size += len(part)
        catalog.save(path + ".catalog.json")
        df = spark.read.format("cdcfast").option("format", fmt) \
            .option("catalog", path + ".catalog.json").option("table", table).load(path)
        df.write.format("noop").mode("overwrite").save()     # warm up the Python workers
        t = time.perf_counter()
        df.write.format("noop").mode("overwrite").save()
        secs = time.perf_counter() - t
        _show([r.asDict(recursive=True) for r in df.orderBy("seq").limit(2).collect()])
        n = df.count()
        print(f"on Spark (the cdcfast data source, 4 files): {n:,} events in {secs:.2f} s, "
              f"{size / 1e6 / secs:,.0f} MB/s, {n / secs:,.0f} rows/s")


def _show(rows):
    for row in rows:
        after = row.get("after") or {}
        head = {k: row[k] for k in ("op", "schema", "table", "txid", "commit_ts", "seq")}
        print(" ", head, "after:", dict(list(after.items())[:4]), "…")


def main(argv=None) -> int:
    from .formats import names
    p = argparse.ArgumentParser(prog="cdcfast", description="Decode CDC messages into Arrow.")
    sub = p.add_subparsers(dest="command", required=True)

    def decoding(q):
        q.add_argument("inputs", nargs="+", metavar="INPUT", help="files to read")
        q.add_argument("--format", required=True, choices=names())
        q.add_argument("--catalog", help="catalog JSON file")
        q.add_argument("--mode", default="PERMISSIVE",
                       choices=["PERMISSIVE", "DROPMALFORMED", "FAILFAST"])
        q.add_argument("--option", action="append", metavar="KEY=VALUE",
                       help="a format option (SPEC §5), as many as needed")

    dc = sub.add_parser("decode", help="decode files into Parquet")
    decoding(dc)
    dc.add_argument("--table", help="OWNER.TABLE: one table into one Parquet file")
    dc.add_argument("-o", "--output", required=True,
                    help="a Parquet file with --table, else a folder of one file per table")
    dc.add_argument("--spark", action="store_true", help="run through local Spark")
    dc.add_argument("--quiet", action="store_true", help="no progress bar")
    dc.set_defaults(run=_decode)

    ins = sub.add_parser("inspect", help="tables, op counts, time range and errors")
    decoding(ins)
    ins.set_defaults(run=_inspect)

    g = sub.add_parser("generate", help="write synthetic data and its catalog")
    g.add_argument("--format", required=True, choices=names())
    g.add_argument("--rows", type=int, required=True)
    g.add_argument("--table-width", type=int, default=20)
    g.add_argument("--tables", type=int, default=1)
    g.add_argument("--seed", type=int, default=0)
    g.add_argument("-o", "--output", required=True)
    g.add_argument("--option", action="append", metavar="KEY=VALUE",
                   help="generator option, e.g. framing=rdw, segment_bytes=4000, "
                        "encoding=cp1047, control=true (repeatable)")
    g.set_defaults(run=_generate)

    b = sub.add_parser("bench", help="throughput against the reference and pyarrow (SPEC §8)")
    b.add_argument("--format", default="ibm-delimited", choices=names())
    b.add_argument("--size", type=float, default=100, help="input MB (default 100)")
    b.add_argument("--repeat", type=int, default=5,
                   help="interleaved timing rounds; each tool's best is kept")
    b.add_argument("--reference-size", type=float, default=5,
                   help="MB given to the slow reference decoder (the start of the same data)")
    b.add_argument("--table-width", type=int, default=20)
    b.add_argument("--quick", action="store_true", help="skip cold start and peak memory")
    b.add_argument("--json", help="also write the figures to this file")
    b.add_argument("--spark", action="store_true",
                   help="add Spark on local[2]: from_csv + casts, cdcfast via mapInArrow and "
                   "its data source, and the identity mapInArrow (the transfer floor)")
    b.set_defaults(run=_bench)

    d = sub.add_parser("demo", help="generate a sample, decode it on local Spark, print a few "
                       "events and the throughput")
    d.add_argument("--rows", type=int, default=200000)
    d.add_argument("--cores", default="*", help="local Spark cores (default: all)")
    d.set_defaults(run=_demo)

    args = p.parse_args(argv)
    return args.run(args)


if __name__ == "__main__":
    sys.exit(main())
