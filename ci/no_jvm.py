"""A pytest plugin (`-p no_jvm`, with ci/ on PYTHONPATH) that leaves out the tests that start a
JVM — a local SparkSession, a standalone cluster, `cdcfast … --spark` or the demo in a child —
for the suite's run under the sanitizer build (ci/sanitize.sh): a JVM started with the
sanitizers' runtime preloaded never answers pyspark's gateway (docs/reliability.md)."""
from __future__ import annotations

JVM_FIXTURES = {"spark", "spark_cluster"}
JVM_FILES = {"test_demo.py", "test_spark_cluster.py"}


def _starts_a_jvm(item) -> bool:
    return (JVM_FIXTURES & set(getattr(item, "fixturenames", ()))
            or item.path.name in JVM_FILES or "spark" in item.name.lower())


def pytest_collection_modifyitems(config, items):
    kept = [i for i in items if not _starts_a_jvm(i)]
    left = [i for i in items if _starts_a_jvm(i)]
    if left:
        config.hook.pytest_deselected(items=left)
        items[:] = kept
