"""`cdcfast demo` (cdcfast.demo.main): its samples, and its printed counts in this process and on
the test run's Spark session, which it must use and leave running."""
from __future__ import annotations

import io
import re
import sys

import pytest

from cdcfast import demo
from cdcfast.encode import generate

NAMES = [f[0] for f in demo.FORMATS]


def _count(pattern, text):
    m = re.search(pattern, text)
    assert m, f"no {pattern!r} in:\n{text}"
    return int(m.group(1).replace(",", ""))


def _blocks(text):
    """{format: its block of the output}, in output order."""
    blocks = text.split("\n== ")[1:]
    return {b.split(":", 1)[0]: b for b in blocks}


@pytest.mark.parametrize("fmt", NAMES)
@pytest.mark.parametrize("rows", [1, 7, 300])
def test_sample_files_join_into_the_generated_stream(fmt, rows):
    what, suffix = next(f[1:3] for f in demo.FORMATS if f[0] == fmt)
    s = demo.Sample(fmt, what, suffix, rows, seed=3)
    data, catalog = generate(fmt, rows=rows, table_width=demo.TABLE_WIDTH, seed=3)
    assert len(s.parts) == demo.FILES
    assert b"".join(s.parts) == data and s.size == len(data)
    assert catalog.to_dict() == s.catalog.to_dict()
    if rows == 300:
        assert all(s.parts)
        begin = demo.BEGINS.get(fmt)
        if begin is not None:           # every file after the first starts a transaction
            assert all(begin in p.split(b"\n", 1)[0] for p in s.parts[1:])


def test_demo_uses_the_active_session_and_leaves_it_running(spark):
    from pyspark.sql import SparkSession
    rows = 400
    out = io.StringIO()
    assert demo.main(rows=rows, out=out) == 0
    text = out.getvalue()
    assert text.startswith("cdcfast ")
    assert "the active session" in text and "started in" not in text
    blocks = _blocks(text)
    assert list(blocks) == NAMES
    for fmt, block in blocks.items():
        assert _count(r"^\S+: generated ([\d,]+) ", block) == rows, fmt
        assert _count(r"in this process: ([\d,]+) events", block) == rows, fmt
        assert _count(r"on Spark \(the cdcfast data source, 4 files\): ([\d,]+) events",
                      block) == rows, fmt
        # two events shown: the first file's first two
        seqs = [int(x) for x in re.findall(r"^  \{'op': .*?'seq': (\d+)\}", block, re.M)]
        assert len(seqs) == 2 and seqs[0] < seqs[1] <= 3, (fmt, seqs)
    summary = text.rsplit("\n  format ", 1)[1]
    assert all(re.search(rf"^  {re.escape(f)} ", summary, re.M) for f in NAMES)
    assert re.search(r"the demo took [\d.]+ s", summary)
    # the session is the caller's: still active, still working
    assert SparkSession.getActiveSession() is not None
    assert spark.range(5).count() == 5


def test_demo_without_pyspark_runs_in_process(monkeypatch):
    monkeypatch.setitem(sys.modules, "pyspark", None)      # import pyspark -> ImportError
    out = io.StringIO()
    assert demo.main(rows=50, out=out) == 0
    text = out.getvalue()
    assert 'pip install -e ".[spark]"' in text
    assert "on Spark" not in text
    blocks = _blocks(text)
    assert list(blocks) == NAMES
    for fmt, block in blocks.items():
        assert _count(r"in this process: ([\d,]+) events", block) == 50, fmt
        assert len(re.findall(r"^  \{'op': ", block, re.M)) == 2, fmt
