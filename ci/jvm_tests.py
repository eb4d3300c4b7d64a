"""A pytest plugin (`-p jvm_tests`, with ci/ on PYTHONPATH) that splits the suite by whether a
test starts a JVM — a local SparkSession, a standalone cluster, `cdcfast … --spark` or the demo
in a child: `--jvm-tests=only` runs those alone, `--jvm-tests=none` the others. For the suite's
run under the sanitizer build (ci/sanitize.sh) in two halves, each of which stops at its first
report (docs/reliability.md)."""
from __future__ import annotations

JVM_FIXTURES = {"spark", "spark_cluster"}
JVM_FILES = {"test_demo.py", "test_spark_cluster.py"}


def pytest_addoption(parser):
    parser.addoption("--jvm-tests", choices=("all", "only", "none"), default="all",
                     help="run only the tests that start a JVM, none of them, or all")


def _starts_a_jvm(item) -> bool:
    return bool(JVM_FIXTURES & set(getattr(item, "fixturenames", ()))
                or item.path.name in JVM_FILES or "spark" in item.name.lower())


def pytest_collection_modifyitems(config, items):
    which = config.getoption("--jvm-tests")
    if which == "all":
        return
    keep = [i for i in items if _starts_a_jvm(i) == (which == "only")]
    left = [i for i in items if _starts_a_jvm(i) != (which == "only")]
    if left:
        config.hook.pytest_deselected(items=left)
        items[:] = keep
