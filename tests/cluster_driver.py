"""A Spark driver run as a child process by the cluster tests (tests/test_spark_cluster.py):
only one SparkContext can live in a process, and the test process already has its local[2]
session, so queries against the standalone cluster (or a second local session that the tests
kill) run here.

    python tests/cluster_driver.py SPEC.json

SPEC: {"master": "spark://127.0.0.1:PORT" or "local[2]", "conf": {...}, "jobs": [...]}. Each
job writes what Spark returned as an Arrow IPC file (`out`); a job that fails writes its error
text to `out` + ".error" instead, and the next job runs. The jobs:

- {"kind": "source", format, catalog, table, path, out}: spark.read.format("cdcfast")
- {"kind": "decode", format, catalog, table, messages, partitions, out}: cs.decode with
  keep=["offset"] over a Parquet file of (value binary, offset long)
- {"kind": "pandas_udf", ... as decode}: offset and cs.pandas_udf's array of events
- {"kind": "stream", format, catalog, table, folder, sink, checkpoint, out, trigger}:
  readStream.format("cdcfast") into Parquet with a checkpoint; trigger "availableNow" (then
  the sink as spark.read.parquet reads it is written to `out`) or a processing time ("200
  milliseconds": runs until the process is killed)
- {"kind": "probe", out, python}: where the executors' Python workers find cdcfast (with
  `python` set, jobs are planned with that interpreter instead of PYSPARK_PYTHON)
- {"kind": "hide", path, to}: rename path to `to` (and back with the paths swapped)
"""
from __future__ import annotations

import json
import os
import sys
import time
import traceback


def write(table, out):
    import pyarrow as pa
    tmp = out + ".tmp"
    with pa.OSFile(tmp, "wb") as f, pa.ipc.new_file(f, table.schema) as w:
        w.write_table(table)
    os.replace(tmp, out)


def probe(spark, job):
    """(partition, sys.executable, cwd, where cdcfast is or null, where pyarrow is or null)
    from the Python workers of two tasks."""
    sc = spark.sparkContext
    saved = sc.pythonExec
    if job.get("python"):
        sc.pythonExec = job["python"]

    def where(_):
        import importlib.util
        import os as o
        import sys as s
        from pyspark import TaskContext
        spec = {m: importlib.util.find_spec(m) for m in ("cdcfast", "pyarrow")}
        yield (TaskContext.get().partitionId(), s.executable, o.getcwd(),
               *[spec[m].origin if spec[m] else None for m in ("cdcfast", "pyarrow")])

    try:
        rows = sc.parallelize(range(2), 2).mapPartitions(where).collect()
    finally:
        sc.pythonExec = saved
    import pyarrow as pa
    cols = list(zip(*rows))
    return pa.table({n: pa.array(c) for n, c in
                     zip(["partition", "executable", "cwd", "cdcfast", "pyarrow"], cols)})


def messages_df(spark, job):
    """The messages (a Parquet file of value binary, offset long: read by the JVM, no Python
    on the way in), spread over `partitions`."""
    return spark.read.parquet(job["messages"]).repartition(job.get("partitions", 2))


def run_job(spark, job):
    from cdcfast import spark as cs
    kind = job["kind"]
    if kind == "hide":
        os.rename(job["path"], job["to"])
        return None
    if kind == "probe":
        return probe(spark, job)
    if kind == "source":
        cs.register(spark)
        return (spark.read.format("cdcfast").option("format", job["format"])
                .option("catalog", job["catalog"]).option("table", job["table"])
                .load(job["path"]).toArrow())
    if kind == "decode":
        return cs.decode(messages_df(spark, job), format=job["format"],
                         catalog=load_catalog(job["catalog"]), table=job["table"],
                         keep=["offset"]).toArrow()
    if kind == "pandas_udf":
        udf = cs.pandas_udf(format=job["format"], catalog=load_catalog(job["catalog"]),
                            table=job["table"])
        return messages_df(spark, job).select("offset", udf("value").alias("events")).toArrow()
    if kind == "stream":
        cs.register(spark)
        writer = (spark.readStream.format("cdcfast").option("format", job["format"])
                  .option("catalog", job["catalog"]).option("table", job["table"])
                  .load(job["folder"])
                  .writeStream.format("parquet").option("path", job["sink"])
                  .option("checkpointLocation", job["checkpoint"]))
        trigger = job.get("trigger", "availableNow")
        if trigger == "availableNow":
            q = writer.trigger(availableNow=True).start()
            q.awaitTermination()
            if q.exception() is not None:
                raise RuntimeError(str(q.exception()))
            return spark.read.parquet(job["sink"]).toArrow()
        q = writer.trigger(processingTime=trigger).start()
        q.awaitTermination()                      # until the process is killed
        return None
    raise ValueError(f"unknown job kind {kind!r}")


def load_catalog(path):
    import cdcfast
    with open(path, encoding="utf-8") as f:
        return cdcfast.Catalog.from_dict(json.load(f))


def main(spec_path):
    started = time.monotonic()
    with open(spec_path, encoding="utf-8") as f:
        spec = json.load(f)
    from pyspark.sql import SparkSession
    loopback = "127.0.0.1"
    os.environ["SPARK_LOCAL_IP"] = loopback
    builder = SparkSession.builder.master(spec["master"]).appName("cdcfast-cluster-tests")
    conf = {"spark.driver.bindAddress": loopback, "spark.driver.host": loopback,
            "spark.ui.enabled": "false", "spark.ui.showConsoleProgress": "false",
            "spark.sql.session.timeZone": "UTC", "spark.sql.shuffle.partitions": "2",
            "spark.sql.parquet.outputTimestampType": "TIMESTAMP_MICROS",
            **spec.get("conf", {})}
    for k, v in conf.items():
        builder = builder.config(k, v)
    spark = builder.getOrCreate()
    spark.sparkContext.setLogLevel("ERROR")
    failed = 0
    try:
        for job in spec["jobs"]:
            print(f"cluster_driver: {time.monotonic() - started:6.1f} s: {job['kind']} -> "
                  f"{job.get('out')}", file=sys.stderr, flush=True)
            try:
                got = run_job(spark, job)
            except Exception:                                  # noqa: BLE001 (reported)
                failed += 1
                text = traceback.format_exc()
                print(text, file=sys.stderr, flush=True)
                if job.get("out"):
                    with open(job["out"] + ".error", "w", encoding="utf-8") as f:
                        f.write(text)
                continue
            if got is not None and job.get("out"):
                write(got, job["out"])
    finally:
        print(f"cluster_driver: {time.monotonic() - started:6.1f} s: done, {failed} failed",
              file=sys.stderr, flush=True)
        spark.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
