"""`cdcfast bench --apply`: its generated events are what it says (replays, partial images,
deletes, log order), and its DuckDB contender computes the same table as apply_changes."""
from __future__ import annotations

import pyarrow.compute as pc
import pytest

import cdcfast
from cdcfast.bench import apply as B


def test_the_generated_events_are_as_described():
    t = B.events(20_000, 2_000, width=6, seed=1)
    assert 19_000 < t.num_rows <= 20_000 and t.schema.field("after").type.num_fields == 6
    ops = pc.value_counts(t.column("op")).to_pylist()
    share = {d["values"]: d["counts"] / t.num_rows for d in ops}
    assert set(share) == {"c", "u", "d"} and 0.03 < share["d"] < 0.07
    # replays: an event again right after itself
    seq = t.column("seq").to_numpy()
    assert 0.03 < (seq[1:] == seq[:-1]).mean() < 0.07
    assert (seq[1:] >= seq[:-1]).all()                       # log order
    sent = pc.struct_field(t.column("present"), "C1").to_numpy(zero_copy_only=False)
    assert 0.05 < (sent == False).mean() < 0.2              # noqa: E712 (partial images)
    assert cdcfast.Applier().net_changes(t).num_rows <= 2_000


def test_duckdb_computes_what_apply_changes_does():
    pytest.importorskip("duckdb", reason="the bench's SQL contender needs duckdb "
                        "(pip install -e '.[test]')")
    t = B.events(30_000, 3_000, width=5, seed=2)
    ours = cdcfast.apply_changes(t)
    theirs = B._duckdb(t)()
    assert ours.num_rows > 1000
    assert B._canonical(theirs.cast(ours.schema)).equals(B._canonical(ours))


def test_the_report_says_events_per_second_and_the_ratio():
    res = {"events": 10, "keys": 2, "arrow_bytes": 1000, "rows": 2, "duckdb_equal": True,
           "seconds": {"apply_changes(scd=1)": 0.5, "DuckDB SQL (1 thread)": 1.0},
           "peak_apply_changes": 1500}
    text = B.report(res)
    assert "apply_changes(scd=1)        0.50 s    0.00 M events/s   2.00× DuckDB" in text
    assert "DuckDB's rows equal ours: True" in text and "(1.50× the events)" in text


def test_the_delta_part_applies_what_apply_changes_does_and_the_plain_merge_fails():
    pytest.importorskip("deltalake", reason="cdcfast.delta needs deltalake "
                        "(pip install -e '.[test]')")
    res = B.delta_run(20_000, 5_000, echo=lambda *a: None)
    assert res["delta_equal"] is True and res["delta_applied"] > 15_000
    assert res["plain_merge"].startswith("failed") and "multiple source rows" in \
        res["plain_merge"]
