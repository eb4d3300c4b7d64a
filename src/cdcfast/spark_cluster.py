"""A standalone Spark cluster on this machine, on loopback: a master and workers started from
pyspark's own jars (``bin/spark-class``), for tests and benchmarks that need a real cluster
rather than ``local[N]`` (executors in JVMs and Python workers of their own).

    with standalone_cluster(workers=2) as cluster:
        spark = SparkSession.builder.master(cluster.master)…

Every process binds to 127.0.0.1 (``SPARK_LOCAL_IP``, ``--host``; the web UIs bind to
SPARK_LOCAL_IP too), ports are chosen free at start, logs and work dirs go under `root`, and
each process runs in a process group of its own that is ended on exit. No pyspark import:
only its folder is looked up.
"""
from __future__ import annotations

import contextlib
import json
import os
import pathlib
import signal
import socket
import subprocess
import tempfile
import time
import urllib.request

LOOPBACK = "127.0.0.1"
# small JVMs on a small machine: the client compiler only and one GC thread
ECONOMICAL_JVM = "-XX:TieredStopAtLevel=1 -XX:+UseSerialGC"


def free_port() -> int:
    with socket.socket() as s:
        s.bind((LOOPBACK, 0))
        return s.getsockname()[1]


def spark_home() -> pathlib.Path:
    """The pyspark package's folder (its bin/ and jars/)."""
    import importlib.util
    spec = importlib.util.find_spec("pyspark")
    if spec is None or spec.origin is None:
        raise RuntimeError("a standalone cluster needs pyspark: pip install \"cdcfast[spark]\"")
    return pathlib.Path(spec.origin).resolve().parent


class Cluster:
    """A running cluster: its master URL, folder (logs, work dirs) and web UI ports."""

    def __init__(self, master: str, root: pathlib.Path, ui_ports: list, procs: list):
        self.master = master
        self.root = root
        self.ui_ports = ui_ports
        self.procs = procs

    def status(self) -> dict:
        """The master's JSON status (its web UI, on loopback)."""
        with urllib.request.urlopen(f"http://{LOOPBACK}:{self.ui_ports[0]}/json/",
                                    timeout=10) as r:
            return json.loads(r.read())

    def alive_workers(self) -> int:
        return len([w for w in self.status()["workers"] if w["state"] == "ALIVE"])


def stop_group(proc, grace: float = 10) -> None:
    """End a process started with start_new_session, and everything in its group."""
    for sig in (signal.SIGTERM, signal.SIGKILL):
        try:
            os.killpg(proc.pid, sig)
        except ProcessLookupError:
            break
        try:
            proc.wait(grace)
        except subprocess.TimeoutExpired:
            continue
        try:                    # the leader is gone; what is left of its group is not
            os.killpg(proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        break


def wait_for(ready, procs, what: str, limit: float = 120) -> None:
    """Poll `ready()` until true; a RuntimeError if a process died or after `limit` s."""
    deadline = time.monotonic() + limit
    while True:
        for p in procs:
            if p.poll() is not None:
                raise RuntimeError(f"a cluster process exited ({p.returncode}) waiting for "
                                   f"{what}: {' '.join(map(str, p.args))}")
        try:
            if ready():
                return
        except OSError:
            pass
        if time.monotonic() > deadline:
            raise RuntimeError(f"the cluster did not show {what} within {limit} s")
        time.sleep(0.2)


@contextlib.contextmanager
def standalone_cluster(workers: int = 2, cores: int = 1, memory: str = "1g",
                       root=None, env: dict | None = None, jvm_options: str = ECONOMICAL_JVM):
    """Start a master and `workers` workers (`cores` cores and `memory` each) on loopback;
    yield the Cluster; end them all. `env`: more environment for the cluster's processes
    (e.g. a PATH whose first python is what the workers run by default); `root`: the folder
    for logs and work dirs (default: a temporary one, removed after)."""
    home = spark_home()
    tmp = None
    if root is None:
        tmp = tempfile.TemporaryDirectory(prefix="cdcfast-cluster-")
        root = tmp.name
    root = pathlib.Path(root)
    base = {k: v for k, v in os.environ.items()
            if not k.startswith(("PYSPARK_", "SPARK_", "PYTHON"))}
    base.update({"SPARK_HOME": str(home), "SPARK_LOCAL_IP": LOOPBACK,
                 "SPARK_LOG_DIR": str(root / "logs"), "SPARK_DAEMON_MEMORY": "256m",
                 "SPARK_NO_DAEMONIZE": "1",
                 # no REST submission server (it would listen on 6066)
                 "SPARK_MASTER_OPTS": "-Dspark.master.rest.enabled=false",
                 "SPARK_DAEMON_JAVA_OPTS": jvm_options, **(env or {})})
    port, ui = free_port(), [free_port() for _ in range(workers + 1)]
    master = f"spark://{LOOPBACK}:{port}"
    spark_class = str(home / "bin" / "spark-class")
    commands = [[spark_class, "org.apache.spark.deploy.master.Master", "--host", LOOPBACK,
                 "--port", str(port), "--webui-port", str(ui[0])]]
    for i in range(1, workers + 1):
        work = root / f"worker{i}"
        work.mkdir(parents=True, exist_ok=True)
        commands.append([spark_class, "org.apache.spark.deploy.worker.Worker", master,
                         "--host", LOOPBACK, "--port", "0", "--webui-port", str(ui[i]),
                         "--cores", str(cores), "--memory", memory, "--work-dir", str(work)])
    procs = []
    cluster = Cluster(master, root, ui, procs)
    try:
        for i, cmd in enumerate(commands):
            name = "master" if i == 0 else f"worker{i}"
            with open(root / f"{name}.log", "w") as out:
                procs.append(subprocess.Popen(cmd, env=base, cwd=root,
                                              stdin=subprocess.DEVNULL, stdout=out,
                                              stderr=subprocess.STDOUT,
                                              start_new_session=True))
            if i == 0:
                wait_for(cluster.status, procs, "the master's web UI")
        wait_for(lambda: cluster.alive_workers() == workers, procs, f"{workers} workers")
        yield cluster
    finally:
        for p in reversed(procs):
            stop_group(p)
        if tmp is not None:
            tmp.cleanup()
