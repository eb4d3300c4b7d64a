"""`cdcfast` on the command line: decode, apply, inspect, report, generate, formats, bench,
demo.

Ordinary mistakes (a missing file, bad catalog JSON, an unknown option, a record FAILFAST
refuses) are one line on stderr and an exit code of `EXIT` (docs/cli.md); ``--debug`` shows
the traceback instead. Outputs are all or nothing: every file is written under a temporary
name beside its target and renamed when the run succeeds. A table name from the input becomes
a file name only through `cdcfast.filenames.safe_name`.
"""
from __future__ import annotations

import argparse
import json
import os
import re
import sys
import time

# exit codes (docs/cli.md; `cdcfast --help` lists them)
OK, FAILED_RECORD, USAGE, BAD_INPUT, NOTHING_DECODED, SPARK_FAILED, DELTA_FAILED, INTERNAL = \
    0, 1, 2, 3, 4, 5, 6, 70
EXIT = {OK: "done",
        FAILED_RECORD: "a record could not be decoded (FAILFAST)",
        USAGE: "a bad command line: flag, option or value",
        BAD_INPUT: "an input or catalog that cannot be read (missing, a folder, bad JSON, an "
                   "unknown type)",
        NOTHING_DECODED: "records were read but none could be decoded (is --format right?)",
        SPARK_FAILED: "Spark failed (the log: --debug)",
        DELTA_FAILED: "the Delta table could not be read or written (deltalake's error)",
        INTERNAL: "a bug in cdcfast: please report it with the --debug output"}

PROGRESS_BYTES = 64 << 20       # inputs from this size on show a progress bar
CORRUPT = "_corrupt"            # the file of unattributable records (no table name starts so)


class Failure(Exception):
    """An ordinary failure: one line for stderr and an exit code."""

    def __init__(self, code: int, line: str):
        super().__init__(line)
        self.code = code


# -- arguments ---------------------------------------------------------------------------------
class _Parser(argparse.ArgumentParser):
    """argparse, with its errors on one line."""

    def error(self, message):
        self.exit(USAGE, f"{self.prog}: error: {message} (see {self.prog} --help)\n")


def _options(pairs) -> dict:
    """--option KEY=VALUE … → {KEY: VALUE} (text, as Spark's .option passes them)."""
    out = {}
    for p in pairs or ():
        key, sep, value = p.partition("=")
        key = key.strip()
        if not sep or not key:
            raise Failure(USAGE, f"--option takes KEY=VALUE, not {p!r}")
        out[key] = value
    return out


def _positive_number(kind):
    """An argparse type: text -> a positive `kind` (int or float), else a one-line error."""
    def convert(text: str):
        try:
            x = kind(text)
        except ValueError:
            raise argparse.ArgumentTypeError(
                f"not a {'whole number' if kind is int else 'number'}: {text!r}") from None
        if not x > 0:
            raise argparse.ArgumentTypeError(f"must be positive, not {text}")
        return x
    return convert


_positive = _positive_number(int)
_positive_float = _positive_number(float)


# -- inputs --------------------------------------------------------------------------------------
def _check_inputs(paths) -> int:
    """Each input an existing, readable file; their total size."""
    total = 0
    for p in paths:
        if not os.path.exists(p):
            raise Failure(BAD_INPUT, f"{p}: no such file")
        if os.path.isdir(p):
            raise Failure(BAD_INPUT, f"{p}: is a folder, not a file (give its files, e.g. "
                                     f"{os.path.join(p, '*')})")
        if not os.access(p, os.R_OK):
            raise Failure(BAD_INPUT, f"{p}: not readable")
        total += os.path.getsize(p)
    return total


def _load_catalog(path):
    """(Catalog or None, the format options recorded by `cdcfast generate`: {format: {...}})."""
    if path is None:
        return None, {}
    import cdcfast
    if not os.path.exists(path):
        raise Failure(BAD_INPUT, f"catalog {path}: no such file")
    if os.path.isdir(path):
        raise Failure(BAD_INPUT, f"catalog {path}: is a folder, not a file")
    try:
        catalog = cdcfast.Catalog.load(path)
    except ValueError as e:
        raise Failure(BAD_INPUT, f"catalog {e}") from None
    with open(path, encoding="utf-8") as f:
        generated = json.load(f).get("generated")
    recorded = {}
    if isinstance(generated, dict) and isinstance(generated.get("options"), dict):
        recorded[generated.get("format")] = generated["options"]
    return catalog, recorded


def _decoder(args):
    """The Decoder the arguments describe: the catalog, the options `generate` recorded in it
    for this format (the ones the decoder takes), then --option on top."""
    import cdcfast
    from .formats import get as format_class
    catalog, recorded = _load_catalog(args.catalog)
    fmt = format_class(args.format)
    given = _options(args.option)
    unknown = sorted(set(given) - set(fmt.DEFAULTS))
    if unknown:
        known = ", ".join(fmt.DEFAULTS) or "none"
        raise Failure(USAGE, f"unknown option {', '.join(unknown)} for {args.format} "
                             f"(its options: {known}; see cdcfast formats)")
    from_catalog = {k: v for k, v in recorded.get(args.format, {}).items()
                    if k in fmt.DEFAULTS and k not in given}
    if from_catalog:
        print("options recorded in the catalog: "
              + ", ".join(f"{k}={v}" for k, v in from_catalog.items()))
    try:
        options = {**from_catalog, **fmt.options_from_text(given)}
        return cdcfast.Decoder(args.format, catalog=catalog, mode=args.mode,
                               columns=_columns(args), threads=args.threads, **options)
    except (ValueError, TypeError) as e:    # (TypeError: a catalog's recorded option of
        raise Failure(USAGE, str(e)) from None  # the wrong JSON kind)


def _columns(args):
    """--columns as the Decoder's projection, with `table` added (the counts of the summary
    line need it; `_written` drops it again when it was not asked for)."""
    text = getattr(args, "columns", None)
    if text is None:
        return None
    names = [c.strip() for c in text.split(",")]
    return names if "table" in names else names + ["table"]


def _written(args, batch):
    """A decoded batch as --columns asked for it (without the `table` _columns added)."""
    text = getattr(args, "columns", None)
    if text is None or "table" in [c.strip() for c in text.split(",")]:
        return batch
    return batch.drop_columns(["table"])


# -- outputs -------------------------------------------------------------------------------------
def _out_file(folder: str, table) -> str:
    from .filenames import safe_name
    return os.path.join(folder, (CORRUPT if table is None else safe_name(table)) + ".parquet")


def _check_output(args) -> None:
    out = args.output
    if args.table and args.spark:       # Spark writes a folder for the one table
        if os.path.exists(out) and not os.path.isdir(out):
            raise Failure(USAGE, f"-o {out} is a file: with --spark, -o names the folder "
                                 "Spark writes the table's Parquet files into")
    elif args.table:
        if os.path.isdir(out) or out.endswith(("/", os.sep)):
            raise Failure(USAGE, f"-o {out} is a folder: with --table, -o names the Parquet "
                                 "file to write")
    elif os.path.exists(out) and not os.path.isdir(out):
        raise Failure(USAGE, f"-o {out} is a file: without --table, -o names a folder (one "
                             "Parquet file per table)")
    parent = os.path.dirname(os.path.abspath(out))
    if os.path.exists(parent) and not os.path.isdir(parent):
        raise Failure(USAGE, f"-o {out}: {parent} is a file, not a folder")
    os.makedirs(parent, exist_ok=True)          # as Spark does for its outputs


class _Staging:
    """Outputs written under temporary names beside their targets, renamed into place by
    `commit`; `discard` (a failed run) removes them and leaves the targets as they were."""

    def __init__(self, target: str):
        import tempfile
        parent = os.path.dirname(os.path.abspath(target))
        self.dir = tempfile.mkdtemp(prefix=f".{os.path.basename(target.rstrip(os.sep))}.tmp-",
                                    dir=parent)
        self.moves = []             # (staged path, target path)

    def path(self, target: str) -> str:
        staged = os.path.join(self.dir, str(len(self.moves)))
        self.moves.append((staged, target))
        return staged

    def commit(self, stale=()) -> None:
        import shutil
        for staged, target in self.moves:
            if not os.path.exists(staged):
                continue
            if os.path.isdir(target) and not os.path.islink(target):
                shutil.rmtree(target)
            os.makedirs(os.path.dirname(os.path.abspath(target)), exist_ok=True)
            os.replace(staged, target)
        for path in stale:          # outputs of an earlier run this one did not write
            if os.path.isdir(path):
                shutil.rmtree(path)
            elif os.path.exists(path):
                os.remove(path)
        shutil.rmtree(self.dir, ignore_errors=True)

    def discard(self) -> None:
        import shutil
        shutil.rmtree(self.dir, ignore_errors=True)


def _parquet_ready(batch):
    """The batch without struct columns that have no fields, which Parquet cannot write (the
    images of unattributable records: no table, so no columns)."""
    import pyarrow as pa
    empty = [f.name for f in batch.schema
             if pa.types.is_struct(f.type) and f.type.num_fields == 0]
    return batch.drop_columns(empty) if empty else batch


def _counts(batch) -> tuple:
    """(events, of them with errors, unattributable records) in a decoded batch."""
    import pyarrow.compute as pc
    n = batch.num_rows
    table = batch.column(batch.schema.get_field_index("table"))
    corrupt = table.null_count
    err = batch.column(batch.schema.get_field_index("_error"))
    errors = int(pc.sum(pc.and_(pc.is_valid(err), pc.is_valid(table))).as_py() or 0)
    return n - corrupt, errors, corrupt


class _Tally:
    def __init__(self):
        self.records = self.events = self.errors = self.corrupt = self.dropped = 0
        self.unknown = 0
        self.first = None           # the first problem met, for NOTHING_DECODED's line

    def add_batch(self, batch):
        e, err, c = _counts(batch)
        self.events += e
        self.errors += err
        self.corrupt += c
        if self.first is None and (err or c):
            import pyarrow.compute as pc
            self.first = pc.drop_null(batch.column(batch.schema.get_field_index("_error")))[0] \
                .as_py()

    def add_stats(self, stats):
        self.records += stats.get("records", 0)
        self.dropped += stats.get("dropped", 0)
        self.unknown += stats.get("unknown_tables", 0)

    def line(self) -> str:
        return (f"{self.records:,} records: {self.events:,} events ({self.errors:,} with "
                f"errors), {self.corrupt:,} corrupt records, {self.dropped:,} dropped")

    def check(self, fmt: str) -> None:
        """NOTHING_DECODED when records were read but not one decoded cleanly."""
        read = max(self.records, self.events + self.corrupt + self.dropped)
        if read and self.events - self.errors == 0:
            hint = (f"; {self.unknown:,} records are of tables the catalog lacks: is --catalog "
                    "right?") if self.unknown else ""
            if self.first:
                hint += f" (the first problem: {self.first})"
            raise Failure(NOTHING_DECODED,
                          f"nothing could be decoded as {fmt}: is --format right?{hint}")


# -- decode --------------------------------------------------------------------------------------
def _read_failure(path, e: ValueError) -> Failure:
    """What reading an input that failed says: a FAILFAST DecodeError, or a bad request."""
    from .errors import DecodeError
    return Failure(FAILED_RECORD if isinstance(e, DecodeError) else USAGE, f"{path}: {e}")


def _decode(args) -> int:
    """Decode files into Parquet: one file for one table, else a folder of one per table."""
    total = _check_inputs(args.inputs)
    _check_output(args)
    dec = _decoder(args)
    if args.spark:
        return _decode_spark(args, dec)
    import pyarrow.parquet as pq
    t0 = time.perf_counter()
    bar = None
    if total >= PROGRESS_BYTES and not args.quiet:
        from tqdm import tqdm
        bar = tqdm(unit=" events", unit_scale=True, desc="decoding", file=sys.stderr)
    stage = _Staging(args.output)
    writers, rows, tally = {}, {}, _Tally()

    def target(key):
        return args.output if args.table else _out_file(args.output, key)

    def write(key, batch):
        batch = _parquet_ready(_written(args, batch))
        if key not in writers:
            meta = {b"cdcfast.table": (key or "").encode("utf-8", "surrogatepass")}
            schema = batch.schema.with_metadata({**(batch.schema.metadata or {}), **meta})
            writers[key] = pq.ParquetWriter(stage.path(target(key)), schema)
            rows[key] = 0
        writers[key].write_batch(batch)
        rows[key] += batch.num_rows

    try:
        for i, path in enumerate(args.inputs):
            if bar is not None:
                bar.set_postfix_str(f"file {i + 1}/{len(args.inputs)}")
            try:
                batches = ((args.table, b) for b in dec.read_batches(path, table=args.table)) \
                    if args.table else dec.read_tables(path)
                for key, batch in batches:        # batch by batch: memory bounded by the batch
                    tally.add_batch(batch)
                    write(key, batch)
                    if bar is not None:
                        bar.update(batch.num_rows)
            except ValueError as e:       # DecodeError (FAILFAST) and bad requests alike
                if args.debug:
                    raise
                raise _read_failure(path, e) from None
            tally.add_stats(dec.last_stats)
        # every table asked for has its file, with the full schema, events or not
        wanted = [args.table] if args.table else \
            [t.name for t in dec.catalog.tables] if dec.catalog is not None else []
        for name in wanted:
            t = dec.catalog.get(name) if dec.catalog is not None else None
            key = name if args.table else t.name if t is not None else None
            if t is not None and key not in writers:
                write(key, _empty_batch(dec.schema(t.name, strict=False)))
        for w in writers.values():
            w.close()
        writers.clear()
        stale = [] if args.table or None in rows else [_out_file(args.output, None)]
        stage.commit(stale)
    except BaseException:
        for w in writers.values():
            w.close()
        stage.discard()
        raise
    finally:
        if bar is not None:
            bar.close()
    secs = time.perf_counter() - t0
    for key, n in rows.items():
        _wrote(key, n, target(key))
    print(tally.line())
    print(f"decoded {total / 1e6:,.1f} MB in {secs:.2f} s ({total / 1e6 / max(secs, 1e-9):,.0f}"
          " MB/s)")
    tally.check(args.format)
    return OK


# -- apply ---------------------------------------------------------------------------------------
def _apply(args) -> int:
    """Decode one table's events and apply them to a Delta table: one MERGE, exactly once."""
    import importlib.util
    if importlib.util.find_spec("deltalake") is None:
        raise Failure(USAGE, "--delta needs deltalake: pip install \"cdcfast[delta]\"")
    key = [k.strip() for k in args.key.split(",")] if args.key else None
    if key is not None and not all(key):
        raise Failure(USAGE, f"--key takes column names separated by commas, not {args.key!r}")
    if "://" not in args.delta and os.path.exists(args.delta) and not os.path.isdir(args.delta):
        raise Failure(USAGE, f"--delta {args.delta} is a file: name the Delta table's folder")
    total = _check_inputs(args.inputs)
    dec = _decoder(args)
    t0 = time.perf_counter()
    bar = None
    if total >= PROGRESS_BYTES and not args.quiet:
        from tqdm import tqdm
        bar = tqdm(unit=" events", unit_scale=True, desc="decoding", file=sys.stderr)
    batches, tally = [], _Tally()
    try:
        for i, path in enumerate(args.inputs):
            if bar is not None:
                bar.set_postfix_str(f"file {i + 1}/{len(args.inputs)}")
            try:
                for batch in dec.read_batches(path, table=args.table):    # bounded per batch
                    tally.add_batch(batch)
                    batches.append(batch)
                    if bar is not None:
                        bar.update(batch.num_rows)
            except ValueError as e:       # DecodeError (FAILFAST) and bad requests alike
                if args.debug:
                    raise
                raise _read_failure(path, e) from None
            tally.add_stats(dec.last_stats)
    finally:
        if bar is not None:
            bar.close()
    print(tally.line())
    tally.check(args.format)
    events = _events(dec, args.table, batches)
    from . import delta
    from .apply import KEY, position_text
    if key is None and KEY not in (events.schema.metadata or {}):
        raise Failure(USAGE, f"--key names the key columns of {args.table}: the catalog names "
                             "none")
    t1 = time.perf_counter()
    from deltalake.exceptions import DeltaError
    try:
        stats = delta.apply_changes(args.delta, events, key=key, scd=args.scd)
    except Exception as e:
        # deltalake's own errors (storage, commit conflicts, …): DeltaError, OSError, or a
        # bare Exception from delta-rs
        if args.debug or not isinstance(e, (DeltaError, OSError)) and type(e) is not Exception:
            raise
        first = (str(e).strip().splitlines() or [type(e).__name__])[0]
        raise Failure(DELTA_FAILED, f"{args.delta}: {first[:300]}") from None
    skipped = stats["skipped_errors"] + stats["skipped_no_key"] + stats["replays"]
    mark = "(none)" if stats["position"] is None else position_text(stats["position"])
    print(f"applied {stats['applied']:,} of {stats['events']:,} events ({stats['deletes']:,} "
          f"deletes, {stats['truncates']:,} truncates); skipped {skipped:,} "
          f"({stats['skipped_errors']:,} with errors, {stats['skipped_no_key']:,} without a "
          f"key, {stats['replays']:,} replays); high-water mark {mark}")
    done = "nothing to apply: no commit" if stats["version"] is None else \
        f"version {stats['version']} (one MERGE)"
    print(f"{args.delta}: {done}; decoded in {t1 - t0:.2f} s, applied in "
          f"{time.perf_counter() - t1:.2f} s")
    return OK


def _events(dec, table: str, batches):
    """The batches as one table (the table's empty envelope when the input has none of its
    events)."""
    import pyarrow as pa
    if not batches:
        return dec.schema(table).empty_table()
    try:
        return pa.Table.from_batches(batches)
    except pa.ArrowInvalid:         # layouts that grew with the data (embedded schemas)
        meta = batches[0].schema.metadata
        return pa.concat_tables([pa.Table.from_batches([b]) for b in batches],
                                promote_options="permissive").replace_schema_metadata(meta)


def _wrote(table, n, path):
    from .errors import printable
    if table is None:
        print(f"unattributable records: {n:,} → {path}")
    else:
        print(f"{printable(table)}: {n:,} events → {path}")


def _empty_batch(schema):
    import pyarrow as pa
    return pa.RecordBatch.from_pylist([], schema=schema)


def _decode_spark(args, dec) -> int:
    """The same through local Spark: the cdcfast data source reads, Spark writes Parquet in
    the schema the local path writes (timestamps in µs, UTC where the envelope has a zone,
    TIME as TIME); unattributable records once, to _corrupt."""
    if dec.catalog is None:
        raise Failure(USAGE, "--spark needs --catalog (Spark must know each table's columns "
                             "before it reads)")
    tables = [dec.catalog.get(args.table).name] if args.table and dec.catalog.get(args.table) \
        else [args.table] if args.table else [t.name for t in dec.catalog.tables]
    if args.table and dec.catalog.get(args.table) is None:
        raise Failure(USAGE, f"--table {args.table} is not in the catalog (--spark needs its "
                             "columns)")
    t0 = time.perf_counter()
    spark = _spark(args)
    from . import spark as cs
    cs.register(spark)
    stage = _Staging(args.output)
    counts = {}
    # TIME columns as TIME, as the local path writes them (restored after: the session may
    # be a caller's)
    time_conf = spark.conf.get("spark.sql.timeType.enabled", None)
    spark.conf.set("spark.sql.timeType.enabled", "true")
    try:
        def reader(table):
            r = spark.read.format("cdcfast").option("format", args.format) \
                .option("catalog", json.dumps(dec.catalog.to_dict())).option("table", table) \
                .option("mode", args.mode).option("time_type", "true")
            for k, v in dec.options.items():
                if v is not None:
                    r = r.option(k, str(v))
            if dec.columns is not None:
                r = r.option("columns", ",".join(dec.columns))
            return r.option("paths", json.dumps([os.path.abspath(p) for p in args.inputs])) \
                .load()

        written = []
        for table in tables:
            df = reader(table)
            if not args.table:          # unattributable records go to _corrupt, once
                df = df.where(df["table"].isNotNull())
            if getattr(args, "columns", None) is not None and "table" not in \
                    [c.strip() for c in args.columns.split(",")]:
                df = df.drop("table")
            out = args.output if args.table else _out_file(args.output, table)[:-8]
            staged = stage.path(out)
            df.write.mode("overwrite").parquet(staged)
            written.append((table, staged, out))
        if not args.table and dec.mode == "PERMISSIVE":
            corrupt = reader(tables[0])
            drop = [c for c in ("before", "after", "changed", "present") if c in corrupt.columns]
            corrupt = corrupt.where(corrupt["table"].isNull()).drop(*drop)
            if getattr(args, "columns", None) is not None and "table" not in \
                    [c.strip() for c in args.columns.split(",")]:
                corrupt = corrupt.drop("table")
            staged = stage.path(_out_file(args.output, None)[:-8])
            corrupt.write.mode("overwrite").parquet(staged)
            written.append((None, staged, _out_file(args.output, None)[:-8]))
        tally = _Tally()
        for table, staged, out in written:
            got = spark.read.parquet(staged)
            row = got.selectExpr("count(*) AS n", "count(_error) AS e").first()
            counts[table] = (row["n"], out)
            if table is None:
                tally.corrupt += row["n"]
            else:
                tally.events += row["n"]
                tally.errors += row["e"]
        stale = [] if args.table or counts.get(None, (0,))[0] else \
            [_out_file(args.output, None)[:-8]]
        if None in counts and counts[None][0] == 0:
            stage.moves = [m for m in stage.moves if m[1] != counts[None][1]]
            del counts[None]
        stage.commit(stale)
    except BaseException:
        stage.discard()
        raise
    finally:
        if time_conf is None:
            spark.conf.unset("spark.sql.timeType.enabled")
        else:
            spark.conf.set("spark.sql.timeType.enabled", time_conf)
    tally.records = tally.events + tally.corrupt
    for table, (n, out) in counts.items():
        _wrote(table, n, out)
    print(tally.line().replace(", 0 dropped", "") if dec.mode != "DROPMALFORMED"
          else tally.line())
    print(f"decoded through Spark in {time.perf_counter() - t0:.1f} s")
    tally.check(args.format)
    return OK


def _spark(args):
    """The local Spark session of a `--spark` run (loopback only; the JVM's output goes to a
    log file unless --debug)."""
    try:
        from .spark import local_session
        return local_session(quiet=not args.debug)
    except ImportError:
        raise Failure(USAGE, "--spark needs pyspark: pip install \"cdcfast[spark]\"") from None


_PY_ERROR = re.compile(r"^(?:[\w.]+\.)?(\w+(?:Error|Exception)): (.+)$", re.M)


def _spark_failure(e) -> Failure:
    """One line for an error that came back through Spark: the Python exception a worker
    raised (FAILFAST's DecodeError, say), found in the JVM's text, else its first line."""
    text = str(e)
    found = [m for m in _PY_ERROR.finditer(text)
             if m.group(1) not in ("PythonException", "Py4JJavaError", "SparkException",
                                   "AnalysisException")]
    if found:
        kind, line = found[-1].group(1), found[-1].group(2).strip()
        code = FAILED_RECORD if kind == "DecodeError" else \
            BAD_INPUT if kind in ("FileNotFoundError", "IsADirectoryError", "PermissionError") \
            else SPARK_FAILED
        return Failure(code, line if code == FAILED_RECORD else f"{kind}: {line}")
    first = next((s.strip() for s in text.splitlines() if s.strip()), type(e).__name__)
    return Failure(SPARK_FAILED, f"Spark failed: {first[:300]}")


# -- inspect -------------------------------------------------------------------------------------
# every `op` of the envelope in the order `inspect` counts them; the last five are control events
_OPS = ("c", "u", "d", "r", "t", "begin", "commit", "ddl", "checkpoint", "message")
_CONTROL = _OPS[5:]


def _inspect(args) -> int:
    """Tables, op counts, time range and errors of the inputs (headers only: fast)."""
    import pyarrow as pa
    import pyarrow.compute as pc
    _check_inputs(args.inputs)
    dec = _decoder(args)
    parts, first_error = [], None
    for path in args.inputs:
        try:
            h = dec.headers(path)
        except ValueError as e:
            from .errors import DecodeError
            if args.debug:
                raise
            code = FAILED_RECORD if isinstance(e, DecodeError) else USAGE
            raise Failure(code, f"{path}: {e}") from None
        err = h.column("_error")
        if first_error is None and err.null_count < len(err):
            first_error = (path, pc.drop_null(err)[0].as_py())
        parts.append(h)
        if len(args.inputs) > 1:
            print(f"{path}: {h.num_rows:,} records")
    heads = pa.concat_tables(parts) if parts else dec.headers_schema().empty_table()
    n = heads.num_rows
    print(f"{n:,} records in {len(args.inputs)} input(s), format {args.format}")
    if n == 0:
        return OK
    op = pc.fill_null(heads.column("op"), "-")
    names = pc.binary_join_element_wise(pc.fill_null(heads.column("schema"), ""),
                                        pc.fill_null(heads.column("table"), ""), ".")
    names = pc.utf8_ltrim(names, ".")
    # a record without a table is a control event of no table (Debezium's transaction
    # BEGIN/END, say), else one that could not be attributed
    # (a Qlik message with a null messageSchemaId names none, and is fine), else one that
    # could not be attributed
    control = pc.is_in(op, value_set=pa.array(_CONTROL))
    no_table = pc.is_null(heads.column("table"))
    has_error = pc.is_valid(heads.column("_error"))
    unattributable = pc.and_(pc.and_(no_table, pc.invert(control)), has_error)
    names = pc.if_else(no_table,
                       pc.if_else(control, "(control events)",
                                  pc.if_else(has_error, "(unattributable)", "(no table named)")),
                       names)
    keyed = pa.table({"table": names, "op": op,
                      "error": pc.is_valid(heads.column("_error"))})
    g = keyed.group_by(["table", "op"]).aggregate([([], "count_all"), ("error", "sum")])
    per = {}
    for row in g.to_pylist():
        per.setdefault(row["table"], {})[row["op"]] = (row["count_all"], row["error_sum"])
    lines = []
    for table in sorted(per):
        ops = per[table]
        count = sum(v[0] for v in ops.values())
        errors = sum(v[1] for v in ops.values())
        mix = " / ".join(f"{ops.get(o, (0, 0))[0]:,}" for o in ("c", "u", "d")) \
            + f" / {sum(v[0] for o, v in ops.items() if o not in ('c', 'u', 'd')):,}"
        lines.append((table, f"{count:,}", mix, f"{errors:,}"))
    heads_row = ("table", "records", "c / u / d / other", "errors")
    widths = [max(len(r[i]) for r in lines + [heads_row]) for i in range(4)]
    for r in [heads_row] + lines:
        print(f"{r[0]:<{widths[0]}}  {r[1]:>{widths[1]}}  {r[2]:>{widths[2]}}  "
              f"{r[3]:>{widths[3]}}")
    counts = {r["values"]: r["counts"] for r in pc.value_counts(op).to_pylist()}
    order = [o for o in _OPS if o in counts] + sorted(o for o in counts if o not in _OPS)
    print("ops: " + ", ".join(f"{'(none)' if o == '-' else o} {counts[o]:,}" for o in order))
    ts = heads.column("commit_ts")
    if ts.null_count == len(ts):
        print("commit time: (none)")
    else:
        print(f"commit time: {pc.min(ts).as_py()} … {pc.max(ts).as_py()}")
    nerr = n - heads.column("_error").null_count
    corrupt = int(pc.sum(unattributable).as_py() or 0)
    tally = _Tally()
    tally.records, tally.corrupt = n, corrupt
    tally.events = n - corrupt
    tally.errors = int(pc.sum(pc.and_(pc.is_valid(heads.column("_error")),
                                      pc.invert(unattributable))).as_py() or 0)
    tally.unknown = dec.last_stats.get("unknown_tables", 0)
    tally.first = first_error[1] if first_error else None
    print(f"{n:,} records: {n - corrupt:,} decoded ({tally.errors:,} with errors), "
          f"{corrupt:,} corrupt records")
    if nerr:
        where = f" in {first_error[0]}" if len(args.inputs) > 1 else ""
        print(f"errors: {nerr:,} (first{where}: {first_error[1]})")
    else:
        print("errors: 0")
    tally.check(args.format)
    return OK


# -- report ------------------------------------------------------------------------------------
def _check_page_output(out: str, flag: str = "--html") -> None:
    """An HTML file to write: not a folder, in a folder (made when missing)."""
    if os.path.isdir(out) or out.endswith(("/", os.sep)):
        raise Failure(USAGE, f"{flag} {out} is a folder: {flag} names the HTML file to write")
    parent = os.path.dirname(os.path.abspath(out))
    if os.path.exists(parent) and not os.path.isdir(parent):
        raise Failure(USAGE, f"{flag} {out}: {parent} is a file, not a folder")


def _write_page(out: str, page: str) -> None:
    """Write a page under a temporary name beside `out`, then rename it into place."""
    os.makedirs(os.path.dirname(os.path.abspath(out)), exist_ok=True)
    stage = _Staging(out)
    try:
        with open(stage.path(out), "w", encoding="utf-8") as f:
            f.write(page)
        stage.commit()
    except BaseException:
        stage.discard()
        raise


def _report(args) -> int:
    """One HTML page of the inputs: tables, ops over time, transactions, lag, log order,
    errors, columns (docs/report.md)."""
    import cdcfast
    total = _check_inputs(args.inputs)
    out = args.output
    _check_page_output(out, "-o")
    dec = _decoder(args)        # (the catalog read and the options checked as decode does)
    t0 = time.perf_counter()
    try:
        page = cdcfast.report(*args.inputs, format=args.format, catalog=dec.catalog,
                              mode=args.mode, title=args.title, threads=args.threads,
                              progress=total >= PROGRESS_BYTES and not args.quiet,
                              **dec.options)
    except ImportError as e:                # (matplotlib missing)
        raise Failure(USAGE, str(e)) from None
    except ValueError as e:
        if args.debug:
            raise
        raise _read_failure(", ".join(args.inputs), e) from None
    _write_page(out, page)
    print(f"wrote {out} ({len(page.encode()) / 1e3:,.0f} KB) from {total / 1e6:,.1f} MB in "
          f"{time.perf_counter() - t0:.1f} s")
    return OK


# -- generate, formats, bench, demo -------------------------------------------------------------
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
    options = _generator_options(args.option)
    try:
        data, catalog = generate(args.format, rows=args.rows, table_width=args.table_width,
                                 tables=args.tables, seed=args.seed, **options)
    except TypeError as e:          # an option the generator does not take
        raise Failure(USAGE, f"generate --format {args.format}: {e}") from None
    except ValueError as e:
        raise Failure(USAGE, f"generate --format {args.format}: {e}") from None
    if os.path.isdir(args.output):
        raise Failure(USAGE, f"-o {args.output} is a folder: name the file to write")
    stage = _Staging(args.output)
    try:
        with open(stage.path(args.output), "wb") as f:
            f.write(data)
        # the catalog, and the options the data was written with (decode and inspect take
        # the ones they know: framing, encoding, delimiters, …)
        d = {**catalog.to_dict(), "generated": {"format": args.format, "options": options}}
        with open(stage.path(args.output + ".catalog.json"), "w", encoding="utf-8") as f:
            json.dump(d, f, indent=1)
            f.write("\n")
        stage.commit()
    except BaseException:
        stage.discard()
        raise
    print(f"wrote {args.rows:,} records ({len(data) / 1e6:.1f} MB) of {args.format} to "
          f"{args.output}, catalog {args.output}.catalog.json")
    return OK


def _formats(args) -> int:
    """Each format, what it is, and its options with type, default and meaning."""
    from .formats import get, names
    for name in names():
        cls = get(name)
        print(f"{name}: {cls.SUMMARY}")
        docs = cls.option_docs()
        if not docs:
            print("  (no options)")
        for opt, kind, default, meaning in docs:
            shown = "(none)" if default is None else json.dumps(default)
            print(f"  {opt:18s} {kind:10s} default {shown:10s} {meaning}")
        print()
    return OK


def _bench(args) -> int:
    from . import bench
    if args.apply:
        from .bench import apply
        res = apply.run(n=args.events, keys=args.keys, repeat=args.repeat,
                        memory=not args.quick)
        print(apply.report(res))
        if args.json:
            with open(args.json, "w") as f:
                json.dump(res, f, indent=1)
        return OK
    from .formats import names
    formats = []
    for f in args.format or ["ibm-delimited"]:
        for name in (names() if f == "all" else [f]):
            if name not in formats:
                formats.append(name)
    if args.html:
        _check_page_output(args.html)
        from ._report import need_matplotlib
        try:
            need_matplotlib()
        except ImportError as e:
            raise Failure(USAGE, str(e)) from None
    runs, printed = [], []

    def echo(text):
        print(text)
        printed.append(text)
    for name in formats:
        runs.append(bench.run(name, size_mb=args.size, repeat=args.repeat,
                              reference_mb=args.reference_size, table_width=args.table_width,
                              extras=not args.quick, spark=args.spark or args.spark_cluster,
                              spark_cluster=args.spark_cluster, threads=args.threads or 0,
                              echo=echo))
    if args.json:
        with open(args.json, "w") as f:
            f.write(bench.dumps(runs[0]) if len(runs) == 1 else json.dumps(runs, indent=1))
    if args.html:
        from .bench.html import page
        _write_page(args.html, page(runs, "\n".join(
            t for t in printed if not t.startswith("generating "))))
        print(f"wrote {args.html}")
    return OK


def _demo(args) -> int:
    from . import demo
    return demo.main(rows=args.rows, cores=args.cores)


# -- the parser ----------------------------------------------------------------------------------
def parser() -> argparse.ArgumentParser:
    import cdcfast
    from .formats import names
    epilog = "exit codes:\n" + "\n".join(f"  {k:3d}  {v}" for k, v in EXIT.items())
    p = _Parser(prog="cdcfast", description="Decode change-data-capture messages into Apache "
                "Arrow and Parquet (docs: docs/cli.md).", epilog=epilog,
                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--version", action="version", version=f"cdcfast {cdcfast.__version__}")
    common = _Parser(add_help=False)
    common.add_argument("--debug", action="store_true",
                        help="show the traceback of an error (and Spark's own output)")
    sub = p.add_subparsers(dest="command", required=True, metavar="COMMAND",
                           parser_class=_Parser)

    def decoding(q):
        q.add_argument("inputs", nargs="+", metavar="INPUT",
                       help="files to read (each one input: seq and byte offsets count "
                            "within it)")
        q.add_argument("--format", required=True, choices=names(),
                       help="the format of the inputs (cdcfast formats lists them)")
        q.add_argument("--catalog", metavar="FILE",
                       help="catalog JSON: each table's columns and types (needed for lldf "
                            "and for --spark; a catalog from cdcfast generate also carries "
                            "the options the data was written with)")
        q.add_argument("--mode", default="PERMISSIVE",
                       choices=["PERMISSIVE", "DROPMALFORMED", "FAILFAST"],
                       help="bad records: keep them with _error set (PERMISSIVE, the "
                            "default), leave them out (DROPMALFORMED) or stop at the first "
                            "(FAILFAST, exit code 1)")
        q.add_argument("--option", action="append", metavar="KEY=VALUE",
                       help="a format option, as many as needed (cdcfast formats lists "
                            "them with their defaults)")
        q.add_argument("--threads", type=_positive, metavar="N",
                       help="decode each input on N threads (default: every core this "
                            "process may use; 1: one thread)")

    dc = sub.add_parser("decode", parents=[common], help="decode files into Parquet",
                        description="Decode files into Parquet: with --table one file of that "
                        "table's events, else a folder of one file per table (file names are "
                        "the table names, percent-encoded outside A-Z a-z 0-9 _ . -) and "
                        "_corrupt.parquet for records that name no table. Files are written "
                        "under temporary names and renamed when the run succeeds.")
    decoding(dc)
    dc.add_argument("--table", metavar="OWNER.TABLE",
                    help="decode this table only (and the records that name no table) into "
                         "the one Parquet file -o names")
    dc.add_argument("-o", "--output", required=True, metavar="OUT",
                    help="a Parquet file with --table, else a folder of one file per table")
    dc.add_argument("--columns", metavar="NAMES",
                    help="only these envelope columns, comma-separated: top-level names (op, "
                         "commit_ts, after, …) and before.COL / after.COL / changed.COL / "
                         "present.COL for some of a table's columns; _error always comes "
                         "(SPEC §1)")
    dc.add_argument("--spark", action="store_true",
                    help="run through local Spark and the cdcfast data source (needs "
                         "--catalog; Spark writes a folder per table)")
    dc.add_argument("--quiet", action="store_true", help="no progress bar")
    dc.set_defaults(run=_decode)

    ap = sub.add_parser("apply", parents=[common],
                        help="apply one table's events to a Delta Lake table",
                        description="Decode one table's events and apply them to a Delta "
                        "Lake table (created when missing) with one MERGE whose commit "
                        "carries the high-water mark: events at or below the mark the table "
                        "holds are skipped, so running it again changes nothing "
                        "(docs/apply.md).")
    decoding(ap)
    ap.add_argument("--table", required=True, metavar="OWNER.TABLE",
                    help="the table whose events are applied")
    ap.add_argument("--key", metavar="COLS",
                    help="the key columns, comma-separated (default: the catalog table's "
                         "key)")
    ap.add_argument("--scd", type=int, choices=[1, 2], default=1,
                    help="1: the table's current rows (the default); 2: one row per "
                         "version, with __start_at, __end_at, __start_pos, __end_pos")
    ap.add_argument("--delta", required=True, metavar="URI",
                    help="the Delta table: a folder, or a URI deltalake knows (s3://, …)")
    ap.add_argument("--quiet", action="store_true", help="no progress bar")
    ap.set_defaults(run=_apply)

    ins = sub.add_parser("inspect", parents=[common],
                         help="tables, op counts, time range and errors",
                         description="Read the records' headers (fast: no row images) and "
                         "print the tables, op counts, commit time range and errors.")
    decoding(ins)
    ins.set_defaults(run=_inspect)

    rp = sub.add_parser("report", parents=[common],
                        help="one HTML page: tables, ops over time, transactions, lag, log "
                             "order, errors, columns",
                        description="Read the inputs once and write one self-contained HTML "
                        "page (no network: its charts are inline SVG) that shows, per input "
                        "and per table, the events over commit time by op, the transaction "
                        "sizes, the capture lag, the log order (positions that go backwards, "
                        "replayed positions), the errors by field and reason with examples, "
                        "and each column's nulls and changes (docs/report.md).")
    decoding(rp)
    rp.add_argument("-o", "--output", required=True, metavar="FILE",
                    help="the HTML file to write")
    rp.add_argument("--title", help="the page's title (default: Change stream report)")
    rp.add_argument("--quiet", action="store_true", help="no progress bar")
    rp.set_defaults(run=_report)

    g = sub.add_parser("generate", parents=[common], help="write synthetic data and its catalog",
                       description="Write a realistic, deterministic sample of a format and "
                       "its catalog (FILE.catalog.json, which records the options too).")
    g.add_argument("--format", required=True, choices=names(), help="the format to write")
    g.add_argument("--rows", type=_positive, required=True, help="records to write")
    g.add_argument("--table-width", type=_positive, default=20,
                   help="columns per table (default 20)")
    g.add_argument("--tables", type=_positive, default=1, help="tables (default 1)")
    g.add_argument("--seed", type=int, default=0, help="random seed (default 0)")
    g.add_argument("-o", "--output", required=True, metavar="FILE", help="the file to write")
    g.add_argument("--option", action="append", metavar="KEY=VALUE",
                   help="a generator option, e.g. framing=rdw, segment_bytes=4000, "
                        "encoding=cp1047, control=true (repeatable)")
    g.set_defaults(run=_generate)

    f = sub.add_parser("formats", parents=[common],
                       help="the formats, and each one's options with type, default and meaning")
    f.set_defaults(run=_formats)

    b = sub.add_parser("bench", parents=[common],
                       help="throughput against the reference and pyarrow")
    b.add_argument("--format", action="append", choices=names() + ["all"],
                   help="the format to measure (default ibm-delimited); give it again for "
                        "more, or all for every format")
    b.add_argument("--size", type=_positive_float, default=100, help="input MB (default 100)")
    b.add_argument("--repeat", type=_positive, default=5,
                   help="interleaved timing rounds; each tool's best is kept (default 5)")
    b.add_argument("--reference-size", type=_positive_float, default=5,
                   help="MB given to the slow reference decoder (the start of the same data)")
    b.add_argument("--table-width", type=_positive, default=20,
                   help="columns of the generated table (default 20)")
    b.add_argument("--quick", action="store_true", help="skip cold start and peak memory")
    b.add_argument("--threads", type=_positive, metavar="N",
                   help="also cdcfast on N threads beside one, and the format's pyarrow "
                        "reader with its default threading (every core)")
    b.add_argument("--json", metavar="FILE", help="also write the figures to this file (a "
                   "list of them for several formats)")
    b.add_argument("--html", metavar="FILE",
                   help="also write the figures as a page: a bar per tool and format, the "
                        "ratio written on each bar (one file, no network)")
    b.add_argument("--spark", action="store_true",
                   help="add Spark on local[2]: from_csv + casts, cdcfast via mapInArrow and "
                   "its data source, and the identity mapInArrow (the transfer floor)")
    b.add_argument("--spark-cluster", action="store_true",
                   help="--spark, then the same on a standalone cluster of two 1-core workers "
                   "started on loopback, with and without the executors' Arrow checks")
    b.add_argument("--apply", action="store_true",
                   help="measure apply_changes and net_changes on generated events instead, "
                   "against DuckDB's SQL of the same semantics (pip install duckdb)")
    b.add_argument("--events", type=_positive, default=10_000_000,
                   help="--apply: events generated (default 10,000,000)")
    b.add_argument("--keys", type=_positive, default=1_000_000,
                   help="--apply: keys they fall on (default 1,000,000)")
    b.set_defaults(run=_bench)

    d = sub.add_parser("demo", parents=[common],
                       help="generate a sample of every format, decode it here and on local "
                       "Spark, print a few events and the throughput")
    d.add_argument("--rows", type=_positive, default=None,
                   help="records per format (default: a few tens of MB of each)")
    d.add_argument("--cores", default="*", help="local Spark cores (default: all)")
    d.set_defaults(run=_demo)
    return p


def main(argv=None) -> int:
    args = parser().parse_args(argv)
    try:
        return args.run(args)
    except KeyboardInterrupt:
        print("cdcfast: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:         # `cdcfast formats | head`: the reader has enough
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return OK
    except Exception as e:          # an ordinary mistake is one line, a bug says so
        if args.debug:
            raise
        failure = _failure(e)
        print(f"cdcfast {args.command}: error: {failure}", file=sys.stderr)
        return failure.code


def _failure(e) -> Failure:
    from .errors import DecodeError
    if isinstance(e, Failure):
        return e
    if isinstance(e, DecodeError):
        return Failure(FAILED_RECORD, str(e))
    if isinstance(e, (FileNotFoundError, IsADirectoryError, PermissionError)):
        what = {FileNotFoundError: "no such file", IsADirectoryError: "is a folder",
                PermissionError: "not allowed"}[type(e)]
        return Failure(BAD_INPUT, f"{e.filename}: {what}")
    if _from_spark(e):
        return _spark_failure(e)
    if isinstance(e, OSError):
        return Failure(BAD_INPUT, str(e))
    if isinstance(e, ValueError):
        return Failure(USAGE, str(e))
    return Failure(INTERNAL, f"{type(e).__name__}: {e} (a bug in cdcfast: run again with "
                             "--debug and report the traceback)")


def _from_spark(e) -> bool:
    return type(e).__module__.startswith(("pyspark", "py4j"))


if __name__ == "__main__":
    sys.exit(main())
