"""Fixtures shared by the test modules: one real local SparkSession per test run, and the
way to ../shared (`shared_path`)."""
from __future__ import annotations

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
