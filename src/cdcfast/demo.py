"""`cdcfast demo`: a sample of every format, decoded in this process and on local Spark.

Each format's sample (about 12 MB by default) is generated once, under one progress bar, and
cut into 4 files at message boundaries (at a transaction's start for the formats whose events
take values from their transaction's begin message); the in-process decode reads the 4 files'
bytes joined, Spark (the cdcfast data source) the 4 files, one partition each. A Spark the
demo starts itself starts, and warms up on a tiny sample, while the samples are generated.
Per format Spark runs one warm-up scan that also collects the two events shown, then one timed
noop write that counts the events as it goes (an Observation): no other scan.
"""
from __future__ import annotations

import os
import sys
import tempfile
import threading
import time

# rows of each format's sample by default: about 12 MB at table_width 20
ROWS = {"ibm-delimited": 20_000, "lldf": 18_000, "debezium": 8_000, "olr": 21_000,
        "qlik": 7_500}


def _formats():
    from .formats import get, names
    return tuple((name, get(name).TITLE, get(name).EXTENSION, ROWS[name]) for name in names())


# (format, what it is, file suffix, rows by default), every registered format in registry order
FORMATS = _formats()
FILES = 4               # the Spark input: four files (packed into about one partition per core)
TABLE_WIDTH = 20
SEED = 1
# formats whose generate(messages=True) documents lack the newline that ends each in a stream
LINES = frozenset({"debezium", "olr", "qlik"})
# where a transaction starts, for formats whose events take commit values from their
# transaction's begin message (olr: commit time, source): a file must not start mid-way
BEGINS = {"olr": b'"payload":[{"op":"begin"}', "debezium": b'{"status":"BEGIN"'}
# the JVM of a Spark the demo starts: C1 only (no C2 JIT), which starts the JVM and runs its
# first, short jobs sooner on a small machine (on 2 busy cores: its start ~40% sooner)
JVM = {"spark.driver.extraJavaOptions": "-XX:TieredStopAtLevel=1"}
SPARK_HINT = 'pyspark is not installed: `python -m pip install -e ".[spark]"` for the Spark part'


class Sample:
    """One format's generated sample: its FILES parts (bytes), their catalog and table."""

    def __init__(self, fmt, what, suffix, rows, seed=SEED):
        from .encode import generate
        self.fmt, self.what, self.suffix, self.rows = fmt, what, suffix, rows
        msgs, self.catalog = generate(fmt, rows=rows, table_width=TABLE_WIDTH, seed=seed,
                                      messages=True)
        if fmt in LINES:
            msgs = [m + b"\n" for m in msgs]
        cuts = _cuts(msgs, BEGINS.get(fmt), FILES)
        self.parts = [b"".join(msgs[a:b]) for a, b in zip(cuts, cuts[1:])]
        self.table = self.catalog.tables[0].name
        self.size = sum(map(len, self.parts))


def _cuts(msgs, begin, n):
    """n + 1 message indexes cutting msgs into n runs of about equal count, each cut moved on
    to the next message that holds `begin` (when given)."""
    cuts = [0]
    for i in range(1, n):
        at = max(len(msgs) * i // n, cuts[-1])
        if begin is not None:
            while at < len(msgs) and begin not in msgs[at]:
                at += 1
        cuts.append(at)
    return cuts + [len(msgs)]


def _generate(formats, rows, bar_file):
    """Every format's Sample, under one progress bar counting rows."""
    from tqdm import tqdm
    counts = [rows or default for *_, default in formats]
    samples = []
    with tqdm(total=sum(counts), unit=" rows", unit_scale=True, desc="generating samples",
              file=bar_file, leave=False) as bar:
        for (fmt, what, suffix, _), n in zip(formats, counts):
            bar.set_postfix_str(fmt)
            samples.append(Sample(fmt, what, suffix, n))
            bar.update(n)
    return samples


class _SparkStart(threading.Thread):
    """Starts local Spark (`local_session`) and warms it up on a tiny sample, while the main
    thread generates the samples: the JVM's start, its first job's class loading and JIT and
    the Python workers' start overlap the generation."""

    def __init__(self, cores):
        super().__init__(name="cdcfast-demo-spark", daemon=True)
        self.cores = cores
        self.spark = self.error = None
        self.secs = self.warm_secs = 0.0

    def run(self):
        from .spark import local_session, register
        try:
            warm = Sample(*FORMATS[0][:3], rows=200)    # before the JVM takes the CPU
            t = time.perf_counter()
            self.spark = local_session(self.cores, **JVM)
            register(self.spark)
        except BaseException as e:          # reported by the main thread
            self.error = e
            return
        self.secs = time.perf_counter() - t
        t = time.perf_counter()
        try:
            with tempfile.TemporaryDirectory(prefix="cdcfast-demo-warmup-") as tmp:
                _spark_run(warm, self.spark, tmp)
        except Exception:                   # the demo's own runs will show what is wrong
            pass
        self.warm_secs = time.perf_counter() - t


def _stderr_copy():
    """A file on a copy of file descriptor 2 when sys.stderr writes there, else sys.stderr:
    the progress bar's, as a quiet Spark start points descriptor 2 to its log for a while."""
    try:
        if sys.stderr.fileno() == 2:
            return os.fdopen(os.dup(2), "w", buffering=1), True
    except (AttributeError, OSError, ValueError):
        pass
    return sys.stderr, False


def main(rows: int | None = None, cores: str = "*", out=sys.stdout) -> int:
    """Generate a sample of every format (`rows` records each, else about 12 MB each), decode
    each in this process and on local Spark (`cores`: local[cores]; an active session is
    used instead and left running), print a few events and the throughput. -> exit code."""
    import cdcfast
    t0 = time.perf_counter()
    print(f"cdcfast {cdcfast.__version__} (native kernels: {cdcfast.native_available()})",
          file=out, flush=True)
    spark, starter, code = None, None, 0
    try:
        import pyspark  # noqa: F401
    except ImportError:
        print(f"({SPARK_HINT})", file=out, flush=True)
        pyspark = None
    if pyspark is not None:
        from pyspark import SparkContext
        from pyspark.sql import SparkSession
        if SparkSession.getActiveSession() is not None or \
                SparkContext._active_spark_context is not None:   # a caller's: left running
            from .spark import local_session, register
            spark = local_session(cores)
            register(spark)
            print(f"Spark {spark.version} on {spark.sparkContext.master}: the active session",
                  file=out, flush=True)
    bar_file, own_file = _stderr_copy()
    try:
        if pyspark is not None and spark is None:
            starter = _SparkStart(cores)
            starter.start()
        t = time.perf_counter()
        samples = _generate(FORMATS, rows, bar_file)
    finally:
        if own_file:
            bar_file.close()
    generated = (f"generated {len(samples)} samples ({sum(s.size for s in samples) / 1e6:.0f} "
                 f"MB) in {time.perf_counter() - t:.1f} s")
    ours = False
    if starter is not None:
        waited = time.perf_counter()
        starter.join()
        waited = time.perf_counter() - waited
        if starter.error is not None:
            from .spark import spark_log
            e = starter.error
            print(f"(local Spark could not start: {type(e).__name__}: "
                  f"{str(e).strip()[:300]}; its log: {spark_log()})", file=out)
            code = 1
        else:
            spark, ours = starter.spark, True
            print(f"local Spark {spark.version} on {spark.sparkContext.master}: started in "
                  f"{starter.secs:.1f} s and warmed up in {starter.warm_secs:.1f} s alongside "
                  f"the generation (waited for: {waited:.1f} s)", file=out)
    print(generated, file=out)
    results = []
    try:
        for s in samples:
            with tempfile.TemporaryDirectory(prefix="cdcfast-demo-") as tmp:
                results.append(_run(s, spark, tmp, out))
    finally:
        if ours:
            spark.stop()
    _summary(results, spark is not None, time.perf_counter() - t0, out)
    return code


def _run(s: Sample, spark, tmp, out):
    """One format: in this process (the best of 3 decodes), then on Spark. -> (format, MB,
    in-process MB/s, Spark MB/s or None)."""
    import cdcfast
    mb = s.size / 1e6
    print(f"\n== {s.fmt}: generated {s.rows:,} {s.what} records ({mb:.1f} MB) of {s.table}",
          file=out)
    data = b"".join(s.parts)
    dec = cdcfast.Decoder(s.fmt, catalog=s.catalog)
    dec.headers(data[:100_000])                     # warm up
    secs = float("inf")
    for _ in range(3):                              # the best of 3
        t = time.perf_counter()
        events = dec.decode(data, table=s.table)
        secs = min(secs, time.perf_counter() - t)
    del data
    print(f"in this process: {events.num_rows:,} events in {secs:.2f} s, {mb / secs:,.0f} MB/s, "
          f"{events.num_rows / secs:,.0f} rows/s", file=out)
    if spark is None:
        _show(events.slice(0, 2).to_pylist(), out)
        out.flush()
        return s.fmt, mb, mb / secs, None
    del events
    n, spark_secs, shown = _spark_run(s, spark, tmp)
    _show(shown, out)
    print(f"on Spark (the cdcfast data source, {len(s.parts)} files): {n:,} events in "
          f"{spark_secs:.2f} s, {mb / spark_secs:,.0f} MB/s, {n / spark_secs:,.0f} rows/s",
          file=out)
    out.flush()
    return s.fmt, mb, mb / secs, mb / spark_secs


def _spark_run(s: Sample, spark, tmp):
    """The sample as FILES files through the cdcfast data source -> (events, seconds of the
    timed noop write, the first two events as dicts)."""
    from pyspark.sql import Observation
    from pyspark.sql import functions as F
    folder = os.path.join(tmp, s.fmt)
    os.makedirs(folder)
    for i, part in enumerate(s.parts):
        with open(os.path.join(folder, f"part-{i}.{s.suffix}"), "wb") as f:
            f.write(part)
    catalog = os.path.join(tmp, f"{s.fmt}.catalog.json")
    s.catalog.save(catalog)
    df = spark.read.format("cdcfast").option("format", s.fmt).option("catalog", catalog) \
        .option("table", s.table).load(folder)
    # the warm-up, a full scan (the schema's generated code, the format's kernels loaded in
    # every Python worker), keeps the first file's first two events to show: the first rows
    # of the first partition, which reads its files in order
    first = df.withColumn("_part", F.spark_partition_id()) \
        .withColumn("_row", F.monotonically_increasing_id()).orderBy("_part", "_row").limit(2)
    shown = [r.asDict(recursive=True) for r in first.drop("_part", "_row").collect()]
    seen = Observation(f"demo-{s.fmt}")
    t = time.perf_counter()
    df.observe(seen, F.count(F.lit(1)).alias("events")).write.format("noop") \
        .mode("overwrite").save()
    secs = time.perf_counter() - t
    return seen.get["events"], secs, shown


def _show(rows, out):
    for row in rows:
        after = row.get("after") or {}
        head = {k: row.get(k) for k in ("op", "schema", "table", "txid", "commit_ts", "seq")}
        print(" ", head, "after:", dict(list(after.items())[:4]), "…", file=out)


def _summary(results, with_spark, secs, out):
    print(f"\n  {'format':<14} {'input':>7}  {'in this process':>15}"
          + (f"  {'on Spark':>10}" if with_spark else ""), file=out)
    for fmt, mb, local, on_spark in results:
        line = f"  {fmt:<14} {mb:4.1f} MB  {local:10,.0f} MB/s"
        if with_spark:
            line += f"  {on_spark:5,.0f} MB/s"
        print(line, file=out)
    if with_spark:
        print("(on Spark a sample this small is mostly a job's fixed start-up cost; "
              "`cdcfast bench --format F --spark` measures its throughput on 100 MB)", file=out)
    print(f"the demo took {secs:.1f} s", file=out, flush=True)
