"""Fixtures shared by the test modules: one real local SparkSession per test run."""
from __future__ import annotations

import os
import sys

import pytest


@pytest.fixture(scope="session")
def spark(tmp_path_factory):
    """A local[2] SparkSession, started once (about 6 s) and stopped at the end of the run."""
    pyspark = pytest.importorskip("pyspark", reason="the spark extra is not installed")
    from pyspark.sql import SparkSession
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    os.environ.setdefault("PYSPARK_DRIVER_PYTHON", sys.executable)
    warehouse = tmp_path_factory.mktemp("spark-warehouse")
    session = (SparkSession.builder.master("local[2]").appName("cdcfast-tests")
               .config("spark.ui.enabled", "false")
               .config("spark.sql.shuffle.partitions", "2")
               .config("spark.sql.session.timeZone", "UTC")
               .config("spark.sql.warehouse.dir", str(warehouse))
               .config("spark.driver.memory", "2g")
               .config("spark.ui.showConsoleProgress", "false")
               .getOrCreate())
    session.sparkContext.setLogLevel("ERROR")
    assert pyspark.__version__
    yield session
    session.stop()
