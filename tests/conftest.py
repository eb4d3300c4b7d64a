"""Fixtures shared by the test modules: one real local SparkSession per test run, and the
way to ../shared (`shared_path`)."""
from __future__ import annotations

import json
import os
import pathlib
import sys

import pytest


@pytest.fixture(scope="session")
def spark(tmp_path_factory):
    """A local[2] SparkSession, started once (about 6 s) and stopped at the end of the run."""
    pyspark = pytest.importorskip("pyspark", reason="the spark extra is not installed")
    from cdcfast.spark import local_session
    warehouse = tmp_path_factory.mktemp("spark-warehouse")
    # loopback only (SPARK_LOCAL_IP, spark.driver.bindAddress/host), no web UI
    session = local_session("2", app="cdcfast-tests", quiet=False,
                            **{"spark.sql.shuffle.partitions": "2",
                               "spark.sql.warehouse.dir": str(warehouse),
                               "spark.driver.memory": "2g"})
    assert pyspark.__version__
    yield session
    session.stop()


# -- a standalone Spark cluster on loopback ------------------------------------------------------
# A master and two workers (1 core, 1 GB each) started from pyspark's own jars, every process
# bound to 127.0.0.1. Only one SparkContext can live in a process and the `spark` fixture's is
# in this one, so the cluster is driven by child drivers (tests/cluster_driver.py).
from cdcfast.spark_cluster import (ECONOMICAL_JVM, LOOPBACK, standalone_cluster,  # noqa: E402
                                   stop_group)

TESTS = pathlib.Path(__file__).resolve().parent


class SparkCluster:
    """What the `spark_cluster` fixture gives: the master's URL, the folder of the cluster's
    logs and work dirs, the workers' own default Python (`worker_python`: a bare venv first
    on the workers' PATH, so a job planned without PYSPARK_PYTHON gets a Python without
    cdcfast), and `run_driver` for the child drivers."""

    def __init__(self, cluster, worker_python):
        self.cluster = cluster
        self.master = cluster.master
        self.root = cluster.root
        self.ui_ports = cluster.ui_ports
        self.worker_python = worker_python

    def status(self) -> dict:
        """The master's JSON status (its web UI, on loopback)."""
        return self.cluster.status()

    def run_driver(self, jobs, name, conf=None, env=None, cwd=None, master=None,
                   timeout=600):
        """Run tests/cluster_driver.py over `jobs` against this cluster (or `master`); the
        driver's output goes to <root>/<name>.log, which a failure shows."""
        return run_driver(jobs, self.root / name, master or self.master, conf, env, cwd,
                          timeout)


def driver_env(extra=None) -> dict:
    """The environment of a child driver: this one's, with the cdcfast under test first on
    PYTHONPATH and loopback only."""
    import cdcfast
    env = dict(os.environ)
    src = str(pathlib.Path(cdcfast.__file__).resolve().parents[1])
    env["PYTHONPATH"] = os.pathsep.join([src] + [p for p in
                                                 env.get("PYTHONPATH", "").split(os.pathsep)
                                                 if p and p != src])
    env["SPARK_LOCAL_IP"] = LOOPBACK
    env.setdefault("PYSPARK_PYTHON", sys.executable)
    env.update(extra or {})
    return env


def start_driver(jobs, base, master, conf=None, env=None, cwd=None):
    """Start tests/cluster_driver.py in its own process group: (Popen, log path)."""
    import subprocess
    spec = pathlib.Path(f"{base}.json")
    conf = {"spark.driver.extraJavaOptions": ECONOMICAL_JVM,
            "spark.executor.extraJavaOptions": ECONOMICAL_JVM, **(conf or {})}
    spec.write_text(json.dumps({"master": master, "conf": conf, "jobs": jobs}))
    log = pathlib.Path(f"{base}.log")
    with open(log, "w") as out:
        proc = subprocess.Popen([sys.executable, str(TESTS / "cluster_driver.py"), str(spec)],
                                stdin=subprocess.DEVNULL, stdout=out, stderr=subprocess.STDOUT,
                                env=driver_env(env), cwd=cwd or spec.parent,
                                start_new_session=True)
    return proc, log


def run_driver(jobs, base, master, conf=None, env=None, cwd=None, timeout=600):
    proc, log = start_driver(jobs, base, master, conf, env, cwd)
    try:
        code = proc.wait(timeout)
    finally:
        stop_group(proc)
    if code != 0:
        pytest.fail(f"the child driver exited {code}:\n{log.read_text()[-5000:]}")
    return log


@pytest.fixture(scope="session")
def spark_cluster(tmp_path_factory):
    """A standalone cluster (cdcfast.spark_cluster): a master and two workers of 1 core
    each, from pyspark's jars, every process on 127.0.0.1, work dirs and logs under pytest's
    tmp, ended at the end of the session. The workers' own Python is a bare venv first on
    their PATH, without cdcfast (nor pyarrow)."""
    import venv
    pytest.importorskip("pyspark", reason="the spark extra is not installed")
    root = tmp_path_factory.mktemp("spark-cluster")
    bare = root / "worker-python"
    venv.EnvBuilder(with_pip=False, symlinks=True).create(bare)
    path = os.pathsep.join([str(bare / "bin"), os.environ.get("PATH", "")])
    try:
        with standalone_cluster(workers=2, cores=1, memory="1g", root=root,
                                env={"PATH": path}) as cluster:
            yield SparkCluster(cluster, bare / "bin" / "python")
    except RuntimeError as e:           # a cluster that cannot start: a failure, not a skip
        pytest.fail(str(e))


# -- cdcfast shipped to executors that lack it: a wheel in a venv packed by venv-pack ------------
ROOT = TESTS.parent


def build_wheel(out: pathlib.Path) -> pathlib.Path:
    """The cdcfast wheel of this checkout, built in a copy of it (`pip wheel --no-deps`) with
    the kernels compiled here reused: the compiled modules of src/cdcfast are laid in the
    copy's build/lib.* and the generated C beside the .pyx keep their times, so setuptools
    finds every extension up to date and compiles nothing (seconds, not minutes). Without
    them (no compiled kernels in this checkout) the wheel compiles everything."""
    import glob
    import importlib.util
    import shutil
    import sysconfig
    import time
    copy = out / "src-copy"
    ignore = shutil.ignore_patterns("__pycache__", "*.egg-info", "*.html")
    copy.mkdir(parents=True)
    for name in ("setup.py", "pyproject.toml", "MANIFEST.in", "README.md"):
        shutil.copy2(ROOT / name, copy / name)
    shutil.copytree(ROOT / "native", copy / "native", ignore=ignore)
    shutil.copytree(ROOT / "src", copy / "src", ignore=ignore)
    lib = copy / "build" / f"lib.{sysconfig.get_platform()}-{sys.implementation.cache_tag}" \
        / "cdcfast"
    lib.mkdir(parents=True)
    # newer than every source, even C that Cython writes during the build (a checkout where
    # the generated C is gone): the wheel holds exactly the kernels these tests import
    later = time.time() + 86400
    for so in glob.glob(str(ROOT / "src" / "cdcfast" / "*.so")):
        target = lib / os.path.basename(so)
        shutil.copy2(so, target)
        os.utime(target, (later, later))
    cmd = [sys.executable, "-m", "pip", "wheel", "--no-deps", "--disable-pip-version-check",
           "-w", str(out / "dist"), str(copy)]
    if importlib.util.find_spec("Cython") is not None:    # else an isolated build env
        cmd.insert(4, "--no-build-isolation")
    run_step(cmd)
    wheels = sorted((out / "dist").glob("cdcfast-*.whl"))
    assert len(wheels) == 1, wheels
    return wheels[0]


def run_step(cmd) -> None:
    """Run a build step; fail with its output when it fails."""
    import subprocess
    res = subprocess.run(cmd, capture_output=True, text=True, stdin=subprocess.DEVNULL)
    if res.returncode != 0:
        pytest.fail(f"{' '.join(cmd)} exited {res.returncode}:\n{res.stdout[-3000:]}\n"
                    f"{res.stderr[-3000:]}", pytrace=False)


class ShippedEnv:
    """What `shipped_env` gives: the archive, and how long each step took (seconds)."""

    def __init__(self, archive, wheel, timings):
        self.archive = archive
        self.wheel = wheel
        self.timings = timings


@pytest.fixture(scope="session")
def shipped_env(tmp_path_factory):
    """env.tar.gz: a venv with the cdcfast wheel and its runtime dependencies (pyarrow,
    numpy, pandas at this environment's versions, from PyPI or pip's cache), packed by
    venv-pack, as a user ships cdcfast to executors that lack it (docs/spark.md)."""
    import importlib.util
    import time
    import venv
    from importlib.metadata import version
    pytest.importorskip("pyspark", reason="the spark extra is not installed")
    if importlib.util.find_spec("venv_pack") is None:     # the test extra has it: no skip
        pytest.fail("venv-pack is not installed: pip install -e '.[test]'", pytrace=False)
    out = tmp_path_factory.mktemp("shipped-env")
    timings = {}
    t = time.monotonic()
    wheel = build_wheel(out)
    timings["wheel"] = time.monotonic() - t
    t = time.monotonic()
    env = out / "venv"
    venv.EnvBuilder(with_pip=False, symlinks=True).create(env)
    pins = [f"{p}=={version(p)}" for p in ("pyarrow", "numpy", "pandas")]
    run_step([sys.executable, "-m", "pip", "--python", str(env / "bin" / "python"),
              "install", "--no-compile", "--disable-pip-version-check", "-q", str(wheel), *pins])
    timings["venv"] = time.monotonic() - t
    t = time.monotonic()
    archive = out / "env.tar.gz"
    run_step([sys.executable, "-m", "venv_pack", "-p", str(env), "-o", str(archive),
              "--compress-level", "1", "-q"])
    timings["pack"] = time.monotonic() - t
    return ShippedEnv(archive, wheel, timings)


def survive_corpus(child: str, tmp_path, default_count: str, what: str) -> None:
    """Run `child` (a fuzz loop over many random inputs through the native decoder) in a
    child process with (tests folder, file for the input in hand, seed, count); fail,
    naming that input and the seed, when the child dies (a segfault takes no Python
    traceback with it). CDCFAST_FUZZ_CORPUS sets the count."""
    import pathlib
    import random
    import subprocess
    last = tmp_path / "last_input.txt"
    seed = random.randrange(1 << 30)
    res = subprocess.run([sys.executable, "-c", child, str(pathlib.Path(__file__).parent),
                          str(last), str(seed),
                          os.environ.get("CDCFAST_FUZZ_CORPUS", default_count)],
                         capture_output=True, text=True, timeout=600)
    if res.returncode != 0:
        got = last.read_text() if last.exists() else "(no input recorded)"
        pytest.fail(f"native decoder died (exit {res.returncode}, seed {seed}) on "
                    f"{what} = {got}\n{res.stderr[-3000:]}")


def scalar_and_simd(code: str) -> dict:
    """stdout of `code` run in two child processes: with the SIMD kernels this CPU has ("")
    and with CDCFAST_NO_AVX2=1, the portable ones ("1")."""
    import subprocess
    out = {}
    for no_simd in ("", "1"):
        env = {k: v for k, v in os.environ.items() if k != "CDCFAST_NO_AVX2"}
        if no_simd:
            env["CDCFAST_NO_AVX2"] = no_simd
        out[no_simd] = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True,
                                      text=True, check=True).stdout
    return out


# -- ../shared: the project's shared folder ---------------------------------------------------
# The contract's vendor documents (seeds/) and real vendor output (peer-data/) live in a folder
# `shared` beside the repository, which CI has and a fresh clone does not. A test that needs a
# file from it asks shared_path(); without the folder the test skips and says why (pytest -rs).
# CI sets CDCFAST_REQUIRE_SHARED=1 (ci/test.sh), which turns that skip into a failure, so a
# missing file cannot hide behind a skip there.
SHARED = pathlib.Path(__file__).resolve().parents[2] / "shared"


def shared_path(*parts: str):
    """The path of ../shared/<parts> (a file or folder); skip the calling test when it is not
    there — fail instead under CDCFAST_REQUIRE_SHARED=1."""
    path = SHARED.joinpath(*parts)
    if path.exists():
        return path
    shown = "/".join(("..", "shared") + parts)
    if SHARED.is_dir():
        reason = f"needs {shown}: the shared folder beside this clone lacks it"
    else:
        reason = (f"needs {shown} (the project's shared folder, present in CI): not beside "
                  "this clone")
    if os.environ.get("CDCFAST_REQUIRE_SHARED", "") not in ("", "0"):
        pytest.fail(f"{reason} (CDCFAST_REQUIRE_SHARED is set)", pytrace=False)
    pytest.skip(reason)


@pytest.fixture
def pages_given_back(monkeypatch):
    """A spy on the giving back of a mapped file's pages (sources.release), the release step
    made 4 KB: `spy(module)` puts it where `module` calls release and returns the list of
    the new high-water marks it gave back to, in call order."""
    from cdcfast import sources
    real = sources.release
    monkeypatch.setattr(sources, "RELEASE_STEP", 4096)

    def spy(module):
        released = []

        def release(buf, upto, done):
            got = real(buf, upto, done)
            if got != done:
                released.append(got)
            return got
        monkeypatch.setattr(module, "release", release)
        return released
    return spy
