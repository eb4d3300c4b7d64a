"""Apply to Delta Lake (SPEC §9): `cdcfast.delta.apply_changes` against the plain-Python model
of tests/test_apply.py and against `cdcfast.apply_changes`, on real Delta tables (deltalake,
delta-rs): one call, several calls, every event replayed, a writer killed mid-run and started
over, partial images, truncates, key changes, column names that need quoting, and decoded
events of every format."""
from __future__ import annotations

import datetime
import os
import pathlib
import signal
import subprocess
import sys
import tempfile
import time

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
import pytest
from deltalake import DeltaTable, write_deltalake
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from test_apply import (COLUMNS, NAMES, UTC, VERSION, canon, event_lists, model, model_scd2,
                        pos, rows_of, table, timed)

import cdcfast
import cdcfast.delta
from cdcfast.apply import LOG
from cdcfast.delta import apply_changes, position
from cdcfast.encode import generate
from cdcfast.formats import names as format_names

SRC = str(pathlib.Path(cdcfast.__file__).resolve().parents[1])


def delta_rows(uri, key="ID") -> dict:
    return rows_of(DeltaTable(uri).to_pyarrow_table(), key)


# Delta commits take milliseconds each: fewer examples than test_apply's
few = settings(max_examples=30, deadline=None, database=None,
               suppress_health_check=[HealthCheck.too_slow])


def event(op, seq, key=None, before=None, after=None, present=None, commit_pos=b"\x01",
          **more):
    """One event of test_apply's table (columns ID, A, B)."""
    return {"op": op, "commit_ts": None, "commit_pos": commit_pos, "change_pos": None,
            "seq": seq, "before": before, "after": after, "changed": None,
            "present": present, "_error": None, **more}


def row(k, a, b):
    return {"ID": k, "A": a, "B": b}


# -- against the model ---------------------------------------------------------------------
@few
@given(event_lists())
def test_one_call_is_the_model(events):
    with tempfile.TemporaryDirectory() as d:
        uri = os.path.join(d, "t")
        stats = apply_changes(uri, table(events))
        state, high = model(events)
        assert delta_rows(uri) == state
        assert delta_rows(uri) == rows_of(cdcfast.apply_changes(table(events)))
        assert DeltaTable(uri).to_pyarrow_table().column_names == [n for n, _ in COLUMNS]
        # a commit iff something was applied, and it carries the mark
        assert (stats["version"] is None) == (stats["applied"] == 0)
        assert position(uri) == (None if stats["version"] is None else high)
        assert stats["position"] == position(uri)


@few
@given(event_lists(), st.lists(st.integers(0, 40), max_size=4), st.randoms())
def test_several_calls_then_every_event_again(events, cuts, rnd):
    """The events cut into calls at random points of log order (each call's events in any
    order), then all of them again: the model of the same calls, where each call skips what
    is at or below the mark of the last commit (a call with nothing to apply commits
    nothing and leaves the mark)."""
    ok = sorted((e for e in events if e["_error"] is None), key=pos)
    bounds = sorted(set(cuts))
    calls = [ok[a:b] for a, b in zip([0] + bounds, bounds + [len(ok)])] + [events]
    with tempfile.TemporaryDirectory() as d:
        uri = os.path.join(d, "t")
        state, since, arrow = {}, None, None
        for call in calls:
            call = list(call)
            rnd.shuffle(call)
            stats = apply_changes(uri, table(call))
            state, high = model(call, state, since)
            arrow = cdcfast.apply_changes(table(call), target=arrow, since=since)
            if stats["version"] is not None:
                since = high
            assert stats["position"] == since == position(uri)
            assert delta_rows(uri) == state == rows_of(arrow)
        versions = DeltaTable(uri).version()
        assert apply_changes(uri, table(events))["version"] is None      # all replays
        assert DeltaTable(uri).version() == versions


# -- replays, crashes ----------------------------------------------------------------------------
def test_the_same_events_twice_change_nothing(tmp_path):
    uri = str(tmp_path / "t")
    events = [event("c", 0, after=row(1, "a", 1)), event("c", 1, after=row(2, "b", 2)),
              event("u", 2, before=row(1, "a", 1), after=row(1, "x", 5)),
              event("d", 3, before=row(2, "b", 2))]
    first = apply_changes(uri, table(events))
    assert first["applied"] == 4 and first["version"] == 1 and first["deletes"] == 1
    assert delta_rows(uri) == {1: row(1, "x", 5)}
    assert position(uri) == (b"\x01", None, 3) == first["position"]
    again = apply_changes(uri, table(events))
    assert again["replays"] == 4 and again["applied"] == 0 and again["version"] is None
    assert again["position"] == (b"\x01", None, 3)
    dt = DeltaTable(uri)
    assert dt.version() == 1 and [h["operation"] for h in dt.history()] == ["MERGE",
                                                                         "CREATE TABLE"]
    assert delta_rows(uri) == {1: row(1, "x", 5)}


def test_the_mark_is_found_behind_other_writers_commits(tmp_path, monkeypatch):
    uri = str(tmp_path / "t")
    apply_changes(uri, table([event("c", 7, after=row(1, "a", 1))]))
    for _ in range(3):                          # commits that carry no mark
        DeltaTable(uri).optimize.compact()
        write_deltalake(uri, pa.table({"ID": [9], "A": ["w"], "B": [9]}), mode="append")
    assert position(uri) == (b"\x01", None, 7)
    monkeypatch.setattr(cdcfast.delta, "HISTORY_FIRST", 2)   # not among the newest two
    assert position(uri) == (b"\x01", None, 7)
    assert position(str(tmp_path / "none")) is None
    got = apply_changes(uri, table([event("c", 7, after=row(1, "b", 2)),
                                    event("u", 8, after=row(9, "x", 0),
                                          present={"ID": True, "A": True, "B": False})]))
    assert got["replays"] == 1 and got["applied"] == 1
    assert delta_rows(uri)[9] == row(9, "x", 9) and delta_rows(uri)[1] == row(1, "a", 1)


CHILD = """
import sys, pyarrow.parquet as pq, cdcfast.delta
events = pq.read_table(sys.argv[1])
uri, n, scd = sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
for i in range(0, events.num_rows, n):
    cdcfast.delta.apply_changes(uri, events.slice(i, n), scd=scd)
print("done", flush=True)
"""


def held(uri, key, scd) -> object:
    """What the Delta table holds, comparable with `expected`."""
    if scd == 1:
        return delta_rows(uri, key)
    return canon(versions(uri))


def expected(events, key, scd) -> object:
    got = cdcfast.apply_changes(events, scd=scd)
    return rows_of(got, key) if scd == 1 else canon(scd2_rows(got))


@pytest.mark.parametrize("scd", [1, 2])
def test_a_writer_killed_mid_run_and_started_over(tmp_path, scd):
    """A child applies a decoded log batch by batch and is killed (SIGKILL) after its first
    MERGE has committed, maybe in the middle of another; the whole run again gives what one
    call of every event gives, and the table only ever held a prefix of the log (SCD type 1:
    its live rows; type 2: every version)."""
    data, cat = generate("ibm-delimited", 30000, table_width=6, seed=4)
    events = cdcfast.decode(data, "ibm-delimited", catalog=cat, table=cat.tables[0].name)
    key = cat.tables[0].key[0]
    events = events.take(pc.sort_indices(events, sort_keys=[(n, "ascending", "at_start")
                                                            for n in LOG]))
    path, uri, n = str(tmp_path / "events.parquet"), str(tmp_path / "t"), 1000
    pq.write_table(events, path)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([SRC, os.environ.get("PYTHONPATH",
                                                                            "")])}
    child = subprocess.Popen([sys.executable, "-c", CHILD, path, uri, str(n), str(scd)],
                             env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    first = tmp_path / "t" / "_delta_log" / f"{1:020d}.json"
    try:
        deadline = time.monotonic() + 120
        while not first.exists() and child.poll() is None and time.monotonic() < deadline:
            time.sleep(0.005)
        assert first.exists(), child.communicate()[1][-3000:]
        time.sleep(0.05)                        # somewhere inside a later batch
        child.send_signal(signal.SIGKILL)
        out, err = child.communicate(timeout=60)
    finally:
        if child.poll() is None:
            child.kill()
            child.wait()
    assert child.returncode == -signal.SIGKILL and b"done" not in out, err[-3000:]
    mark = position(uri)
    done = DeltaTable(uri).version()            # MERGEs committed before the kill
    assert 1 <= done < events.num_rows // n and mark is not None
    # what the table holds is the fold of the log up to its mark: nothing half applied
    assert held(uri, key, scd) == expected(events.slice(0, done * n), key, scd)
    assert mark == tuple(events.slice(done * n - 1, 1).to_pylist()[0][c]
                         for c in ("commit_pos", "change_pos", "seq"))
    for i in range(0, events.num_rows, n):      # the whole run again
        apply_changes(uri, events.slice(i, n), scd=scd)
    want = expected(events, key, scd)
    assert held(uri, key, scd) == want and len(want) > 1000
    assert DeltaTable(uri).version() == events.num_rows // n     # one MERGE per batch, once


# -- the rules, one by one -----------------------------------------------------------------------
def test_a_partial_image_keeps_the_columns_it_does_not_send(tmp_path):
    """A Qlik-like update that sends B only: A keeps the row's value in Delta."""
    uri = str(tmp_path / "t")
    apply_changes(uri, table([event("c", 0, after=row(1, "a", 1)),
                              event("c", 1, after=row(2, "b", 2))]))
    only_b = {"ID": True, "A": False, "B": True}
    apply_changes(uri, table([event("u", 2, after=row(1, None, 10), present=only_b),
                              event("u", 3, after=row(3, None, 30), present=only_b)]))
    assert delta_rows(uri) == {1: row(1, "a", 10), 2: row(2, "b", 2), 3: row(3, None, 30)}
    only_a = {"ID": True, "A": True, "B": False}
    apply_changes(uri, table([event("u", 4, after=row(2, "B", None), present=only_a),
                              event("u", 5, after=row(1, None, None), present=only_a)]))
    assert delta_rows(uri) == {1: row(1, None, 10), 2: row(2, "B", 2), 3: row(3, None, 30)}


def test_a_truncate_in_a_batch(tmp_path):
    uri = str(tmp_path / "t")
    apply_changes(uri, table([event("c", i, after=row(i, "a", i)) for i in range(1, 4)]))
    only_b = {"ID": True, "A": False, "B": True}
    later = [event("u", 10, after=row(1, None, 11), present=only_b),   # gone with the rest
             event("t", 11),
             event("u", 12, after=row(2, None, 22), present=only_b),   # from nulls
             event("c", 13, after=row(4, "d", 4))]
    stats = apply_changes(uri, table(later))
    assert stats["truncates"] == 1
    assert delta_rows(uri) == {2: row(2, None, 22), 4: row(4, "d", 4)}
    state, _ = model(later, {i: row(i, "a", i) for i in range(1, 4)})
    assert delta_rows(uri) == state
    apply_changes(uri, table([event("t", 20)]))     # a truncate alone
    assert delta_rows(uri) == {} and position(uri) == (b"\x01", None, 20)


def test_an_update_that_changes_the_key(tmp_path):
    uri = str(tmp_path / "t")
    apply_changes(uri, table([event("c", 0, after=row(1, "a", 1)),
                              event("c", 1, after=row(2, "b", 2))]))
    apply_changes(uri, table([event("u", 2, before=row(1, "a", 1), after=row(7, "a", 9)),
                              event("u", 3, before=row(2, "b", 2), after=row(8, None, 3),
                                    present={"ID": True, "A": False, "B": True})]))
    assert delta_rows(uri) == {7: row(7, "a", 9), 8: row(8, None, 3)}


def test_column_names_that_need_quoting(tmp_path):
    """Mixed case, a space, quotes and a backtick in the names, the key among them."""
    cols = [("Id", pa.int64()), ("first name", pa.string()), ('say "hi"', pa.int64()),
            ("a`b", pa.string())]
    image = pa.struct(cols)
    flags = pa.struct([(n, pa.bool_()) for n, _ in cols])
    schema = pa.schema([("op", pa.string()), ("commit_pos", pa.binary()),
                        ("change_pos", pa.binary()), ("seq", pa.int64()), ("before", image),
                        ("after", image), ("present", flags), ("_error", pa.string())])

    def ev(op, seq, after, present=None, before=None):
        return {"op": op, "commit_pos": b"\x01", "change_pos": None, "seq": seq,
                "before": before, "after": after, "present": present, "_error": None}

    full = {"Id": 1, "first name": "Ann", 'say "hi"': 1, "a`b": "x"}
    events = [ev("c", 0, full), ev("c", 1, dict(full, Id=2))]
    uri = str(tmp_path / "t")
    apply_changes(uri, pa.Table.from_pylist(events, schema=schema), key="Id")
    part = {"Id": True, "first name": False, 'say "hi"': True, "a`b": False}
    more = [ev("u", 2, {"Id": 1, "first name": None, 'say "hi"': 5, "a`b": None}, part),
            ev("d", 3, None, before=dict(full, Id=2))]
    apply_changes(uri, pa.Table.from_pylist(more, schema=schema), key=["Id"])
    got = DeltaTable(uri).to_pyarrow_table()
    assert got.column_names == [n for n, _ in cols]
    assert got.to_pylist() == [dict(full, **{'say "hi"': 5})]


# -- decoded events of every format ---------------------------------------------------------------
@pytest.mark.parametrize("fmt", format_names())
def test_decoded_events_of_every_format(fmt, tmp_path):
    """A generated log of each format, decoded and applied in one call and in batches of 64
    (read_batches: the key from the schema metadata), is what cdcfast.apply_changes gives,
    column types included."""
    data, cat = generate(fmt, 400, table_width=6, seed=9)
    t = cat.tables[0]
    events = cdcfast.decode(data, fmt, catalog=cat, table=t.name)
    want = cdcfast.apply_changes(events)
    one, many = str(tmp_path / "one"), str(tmp_path / "many")
    stats = apply_changes(one, events)
    assert stats["applied"] > 300 and stats["deletes"] > 0
    for batch in cdcfast.read_batches(data, fmt, catalog=cat, table=t.name, batch_size=64):
        apply_changes(many, batch)
    for uri in (one, many):
        got = DeltaTable(uri).to_pyarrow_table().sort_by([(k, "ascending") for k in t.key])
        assert got.schema == want.schema.remove_metadata()
        assert got.equals(want.replace_schema_metadata(None).sort_by(
            [(k, "ascending") for k in t.key])) and got.num_rows > 10
    assert position(one) == position(many) == \
        cdcfast.apply.parse_position(want.schema.metadata[b"cdcfast.position"].decode())


@pytest.mark.parametrize("fmt", format_names())
def test_decoded_events_of_every_format_scd2(fmt, tmp_path):
    """The same with scd=2: in one call and in batches of 64, every version
    `cdcfast.apply_changes(scd=2)` gives, nothing more."""
    data, cat = generate(fmt, 400, table_width=6, seed=9)
    t = cat.tables[0]
    events = cdcfast.decode(data, fmt, catalog=cat, table=t.name)
    want = canon(scd2_rows(cdcfast.apply_changes(events, scd=2)))
    one, many = str(tmp_path / "one"), str(tmp_path / "many")
    apply_changes(one, events, scd=2)
    for batch in cdcfast.read_batches(data, fmt, catalog=cat, table=t.name, batch_size=64):
        apply_changes(many, batch, scd=2)
    assert canon(versions(one)) == want == canon(versions(many)) and len(want) > 300
    assert position(one) == position(many)


def test_a_time_column_is_stored_as_its_text(tmp_path):
    """Delta Lake has no TIME type: SHIP_TIME (time64[us]) goes in as HH:MM:SS.ffffff."""
    data, cat = generate("ibm-delimited", 300, table_width=10, seed=1)
    t = cat.tables[0]
    events = cdcfast.decode(data, "ibm-delimited", catalog=cat, table=t.name)
    assert events.schema.field("after").type.field("SHIP_TIME").type == pa.time64("us")
    uri = str(tmp_path / "t")
    apply_changes(uri, events)
    got = DeltaTable(uri).to_pyarrow_table().sort_by(t.key[0])
    want = cdcfast.apply_changes(events).sort_by(t.key[0])
    assert got.schema.field("SHIP_TIME").type == pa.string()
    times = want.column("SHIP_TIME").to_pylist()
    assert got.column("SHIP_TIME").to_pylist() == \
        [None if v is None else v.strftime("%H:%M:%S.%f") for v in times]
    assert got.drop_columns(["SHIP_TIME"]).equals(
        want.drop_columns(["SHIP_TIME"]).replace_schema_metadata(None))
    assert sum(v is not None for v in times) > 10


# -- SCD type 2 -----------------------------------------------------------------------------------
def versions(uri) -> list:
    """Every row of the Delta table, its timestamps in the `datetime.timezone.utc` the model
    writes (Arrow reads `UTC` as a ZoneInfo)."""
    return [{c: v.astimezone(UTC) if isinstance(v, datetime.datetime) else v
             for c, v in r.items()} for r in DeltaTable(uri).to_pyarrow_table().to_pylist()]


def scd2_rows(t: pa.Table) -> list:
    return [{c: v.astimezone(UTC) if isinstance(v, datetime.datetime) else v
             for c, v in r.items()} for r in t.to_pylist()]


TRACKS = st.sampled_from([None, ["A"], ["B"]])


@few
@given(event_lists(), TRACKS)
def test_scd2_one_call_is_the_model(events, track):
    events = timed(events)
    with tempfile.TemporaryDirectory() as d:
        uri = os.path.join(d, "t")
        stats = apply_changes(uri, table(events), scd=2, track=track)
        got = canon(versions(uri))
        assert got == canon(model_scd2(events, track=track))
        assert got == canon(scd2_rows(cdcfast.apply_changes(table(events), scd=2,
                                                            track=track)))
        assert DeltaTable(uri).to_pyarrow_table().column_names == NAMES + list(VERSION)
        assert (stats["version"] is None) == (stats["applied"] == 0)
        assert position(uri) == (None if stats["version"] is None else model(events)[1])


@settings(max_examples=25, deadline=None, database=None,
          suppress_health_check=[HealthCheck.too_slow])
@given(event_lists(), st.lists(st.integers(0, 40), max_size=4), st.randoms(), TRACKS)
def test_scd2_several_calls_then_every_event_again(events, cuts, rnd, track):
    """As for SCD1: the events cut into calls at random points of log order, then all of
    them again; after each call the table holds every version the model of the same calls
    holds, and what `cdcfast.apply_changes(scd=2)` continuing its own result holds."""
    events = timed(events)
    ok = sorted((e for e in events if e["_error"] is None), key=pos)
    bounds = sorted(set(cuts))
    calls = [ok[a:b] for a, b in zip([0] + bounds, bounds + [len(ok)])] + [events]
    with tempfile.TemporaryDirectory() as d:
        uri = os.path.join(d, "t")
        history, since, arrow = [], None, None
        for call in calls:
            call = list(call)
            rnd.shuffle(call)
            stats = apply_changes(uri, table(call), scd=2, track=track)
            history = model_scd2(call, target=history, since=since, track=track)
            arrow = cdcfast.apply_changes(table(call), scd=2, track=track, target=arrow,
                                          since=since)
            if stats["version"] is not None:
                since = model(call, since=since)[1]
            assert stats["position"] == since == position(uri)
            assert canon(versions(uri)) == canon(history) == canon(scd2_rows(arrow))
        done = DeltaTable(uri).version()
        assert apply_changes(uri, table(events), scd=2, track=track)["version"] is None
        assert DeltaTable(uri).version() == done


def ts(n):
    return datetime.datetime(2026, 1, n, tzinfo=UTC)


def timed_event(op, n, after=None, before=None, present=None, seq=0):
    """An event committed at position n, on 2026-01-n."""
    return event(op, seq, after=after, before=before, present=present,
                 commit_pos=bytes([n]), commit_ts=ts(n))


def version(k, a, b, start, end=None):
    return {**row(k, a, b), "__start_at": ts(start), "__end_at": end and ts(end),
            "__start_pos": bytes([start]), "__end_pos": end and bytes([end])}


def test_scd2_by_hand(tmp_path):
    """One call per event, B not tracked: an insert; an update of A (a new version); one of
    B only (in place); a delete (ends the version); a re-insert; a second key; a truncate
    (ends every current version). Each call reads back exactly the versions so far."""
    uri, e = str(tmp_path / "t"), timed_event
    steps = [
        (e("c", 1, row(1, "a", 1)), [version(1, "a", 1, 1)]),
        (e("u", 2, row(1, "b", 1)), [version(1, "a", 1, 1, 2), version(1, "b", 1, 2)]),
        (e("u", 3, row(1, None, 2), present={"ID": True, "A": False, "B": True}),
         [version(1, "a", 1, 1, 2), version(1, "b", 2, 2)]),
        (e("d", 4, before=row(1, "b", 2)),
         [version(1, "a", 1, 1, 2), version(1, "b", 2, 2, 4)]),
        (e("c", 5, row(1, "c", 3)),
         [version(1, "a", 1, 1, 2), version(1, "b", 2, 2, 4), version(1, "c", 3, 5)]),
        (e("c", 6, row(2, "x", 0)),
         [version(1, "a", 1, 1, 2), version(1, "b", 2, 2, 4), version(1, "c", 3, 5),
          version(2, "x", 0, 6)]),
        (e("t", 7),
         [version(1, "a", 1, 1, 2), version(1, "b", 2, 2, 4), version(1, "c", 3, 5, 7),
          version(2, "x", 0, 6, 7)])]
    for i, (ev, want) in enumerate(steps, start=1):
        stats = apply_changes(uri, table([ev]), scd=2, track=["A"])
        assert stats["version"] == i and position(uri) == (bytes([i]), None, 0)
        assert canon(versions(uri)) == canon(want), ev
    # the same events in one call give the same versions
    one = str(tmp_path / "one")
    apply_changes(one, table([ev for ev, _ in steps]), scd=2, track=["A"])
    assert canon(versions(one)) == canon(steps[-1][1])
    ops = [h["operation"] for h in DeltaTable(uri).history()]
    assert ops == ["MERGE"] * 7 + ["CREATE TABLE"]


def test_scd2_the_same_batch_twice_changes_nothing(tmp_path):
    uri, e = str(tmp_path / "t"), timed_event
    batch = [e("c", 1, row(1, "a", 1)), e("c", 2, row(2, "b", 2)),
             e("u", 3, row(1, "x", 1)), e("d", 4, before=row(2, "b", 2))]
    first = apply_changes(uri, table(batch), scd=2)
    want = [version(1, "a", 1, 1, 3), version(1, "x", 1, 3), version(2, "b", 2, 2, 4)]
    assert canon(versions(uri)) == canon(want) and first["version"] == 1
    again = apply_changes(uri, table(batch), scd=2)
    assert again["replays"] == 4 and again["applied"] == 0 and again["version"] is None
    assert canon(versions(uri)) == canon(want) and DeltaTable(uri).version() == 1
    # replays mixed with a new event: only the new one is applied
    more = apply_changes(uri, table(batch + [e("u", 5, row(1, "y", 1))]), scd=2)
    assert more["replays"] == 4 and more["applied"] == 1
    assert canon(versions(uri)) == canon(want[:1] + [version(1, "x", 1, 3, 5),
                                                      version(1, "y", 1, 5), want[2]])


def test_scd2_reads_only_the_current_versions_of_the_keys_it_touches(tmp_path, monkeypatch):
    uri, e = str(tmp_path / "t"), timed_event
    apply_changes(uri, table([e("c", 1, row(k, "a", k)) for k in range(10)]), scd=2)
    apply_changes(uri, table([e("u", 2, row(k, "b", k)) for k in range(5)]), scd=2)
    seen = []
    real = cdcfast.Applier.apply

    def spy(self, events, target=None, since=None):
        seen.append(target)
        return real(self, events, target=target, since=since)
    monkeypatch.setattr(cdcfast.Applier, "apply", spy)
    # an update of 1, a key change 3 -> 12, a delete of 7, a new key 20, a replay of 9
    apply_changes(uri, table([e("u", 3, row(1, "c", 1)),
                              e("u", 3, before=row(3, "b", 3), after=row(12, "b", 3), seq=1),
                              e("d", 3, before=row(7, "a", 7), seq=2),
                              e("c", 3, row(20, "n", 0), seq=3),
                              e("c", 1, row(9, "zzz", 0))]), scd=2)
    target = seen[-1]
    assert sorted(target.column("ID").to_pylist()) == [1, 3, 7]
    assert target.column("__end_at").null_count == 3 == target.num_rows
    assert sorted(zip(target.column("ID").to_pylist(), target.column("A").to_pylist())) \
        == [(1, "b"), (3, "b"), (7, "a")]
    assert position(uri) == (b"\x03", None, 3)
    live = sorted((r["ID"], r["A"]) for r in versions(uri) if r["__end_pos"] is None)
    assert live == [(0, "b"), (1, "c"), (2, "b"), (4, "b"), (5, "a"), (6, "a"), (8, "a"),
                    (9, "a"), (12, "b"), (20, "n")]
    assert len(versions(uri)) == 10 + 5 + 1 + 1 + 1
    # a truncate touches every key: every current version is read, and ended
    apply_changes(uri, table([e("t", 4)]), scd=2)
    assert seen[-1].num_rows == 10
    assert all(r["__end_pos"] is not None for r in versions(uri))
    assert sum(r["__end_pos"] == b"\x04" for r in versions(uri)) == 10


def test_scd2_versions_without_a_commit_position(tmp_path):
    """Events with a null commit_pos open versions with a null __start_pos: the next call
    still finds the current one (key and __start_pos IS NOT DISTINCT FROM) and ends or
    updates it, never adding a second current version."""
    uri = str(tmp_path / "t")

    def ev(op, seq, **kw):
        return event(op, seq, commit_pos=None, commit_ts=None, **kw)
    apply_changes(uri, table([ev("c", 0, after=row(1, "a", 1)),
                              ev("c", 1, after=row(2, "b", 2))]), scd=2, track=["A"])
    apply_changes(uri, table([ev("u", 2, after=row(1, "a", 5))]), scd=2, track=["A"])
    apply_changes(uri, table([ev("u", 3, after=row(2, "c", 2))]), scd=2, track=["A"])
    got = canon(versions(uri))
    nothing = {"__start_at": None, "__end_at": None, "__start_pos": None, "__end_pos": None}
    assert got == canon([{**row(1, "a", 5), **nothing}, {**row(2, "b", 2), **nothing},
                         {**row(2, "c", 2), **nothing}])
    assert position(uri) == (None, None, 3)


def test_scd2_a_composite_key_and_a_time_column(tmp_path):
    """Key (K1, K2); a TIME column stored as its text, its versions compared as text."""
    cols = [("K1", pa.int64()), ("K2", pa.string()), ("T", pa.time64("us")),
            ("V", pa.int64())]
    image = pa.struct(cols)
    flags = pa.struct([(n, pa.bool_()) for n, _ in cols])
    schema = pa.schema([("op", pa.string()), ("commit_ts", pa.timestamp("us", "UTC")),
                        ("commit_pos", pa.binary()), ("change_pos", pa.binary()),
                        ("seq", pa.int64()), ("before", image), ("after", image),
                        ("present", flags), ("_error", pa.string())])

    def ev(op, n, after=None, before=None):
        return {"op": op, "commit_ts": ts(n), "commit_pos": bytes([n]), "change_pos": None,
                "seq": 0, "before": before, "after": after, "present": None, "_error": None}

    def r(k1, k2, t, v):
        return {"K1": k1, "K2": k2, "T": datetime.time(t), "V": v}
    uri = str(tmp_path / "t")
    evs = [ev("c", 1, r(1, "a", 1, 0)), ev("c", 1, r(1, "b", 1, 0)),
           ev("c", 1, r(2, "a", 1, 0))]
    apply_changes(uri, pa.Table.from_pylist(evs, schema=schema), key=["K1", "K2"], scd=2)
    more = [ev("u", 2, r(1, "b", 2, 0)), ev("u", 3, r(2, "a", 1, 9)),
            ev("u", 3, before=r(1, "a", 1, 0), after=r(2, "b", 1, 0))]
    apply_changes(uri, pa.Table.from_pylist(more, schema=schema), key=["K1", "K2"],
                  scd=2, track=["T"])
    got = DeltaTable(uri).to_pyarrow_table()
    assert got.schema.field("T").type == pa.string()

    def v(k1, k2, t, val, start, end=None):
        return {"K1": k1, "K2": k2, "T": f"{t:02d}:00:00.000000", "V": val,
                "__start_at": ts(start), "__end_at": end and ts(end),
                "__start_pos": bytes([start]), "__end_pos": end and bytes([end])}
    assert canon(versions(uri)) == canon([
        v(1, "a", 1, 0, 1, 3), v(1, "b", 1, 0, 1, 2), v(1, "b", 2, 0, 2),
        v(2, "a", 1, 9, 1), v(2, "b", 1, 0, 3)])


# -- what cannot be applied says why --------------------------------------------------------------
def test_what_cannot_be_applied_says_why(tmp_path):
    uri = str(tmp_path / "t")
    events = table([event("c", 0, after=row(1, "a", 1))])
    with pytest.raises(ValueError, match="no meaning for scd=1"):
        apply_changes(uri, events, track=["A"])
    with pytest.raises(ValueError, match="key=…"):
        apply_changes(uri, events.replace_schema_metadata(None), scd=2)
    with pytest.raises(ValueError, match="track=: NOPE not among"):
        apply_changes(uri, events, scd=2, track=["NOPE"])
    with pytest.raises(ValueError, match="SCD type 1 .current rows. or 2"):
        apply_changes(uri, events, scd=3)
    with pytest.raises(ValueError, match="key=…"):
        apply_changes(uri, events.replace_schema_metadata(None))
    assert not os.path.exists(uri)                  # nothing created by a call refused
    image = pa.struct([("ID", pa.int64()), ("D", pa.duration("s"))])
    odd = pa.Table.from_pylist([], schema=pa.schema(
        [(f.name, image if f.name in ("before", "after") else f.type) for f in table([]).schema]))
    with pytest.raises(ValueError, match=r"Delta Lake has no type for column\(s\) D "
                                         r"\(duration\[s\]\)"):
        apply_changes(uri, odd, key="ID")
    write_deltalake(uri, pa.table({"ID": [1], "A": ["a"]}))
    with pytest.raises(ValueError, match=r"lacks the table's column\(s\) B"):
        apply_changes(uri, events)
    scd1 = str(tmp_path / "scd1")
    apply_changes(scd1, events)
    with pytest.raises(ValueError, match=r"lacks the table's column\(s\) __start_at, "
                                         r"__end_at, __start_pos, __end_pos"):
        apply_changes(scd1, events, scd=2)
    scd2 = str(tmp_path / "scd2")
    apply_changes(scd2, events, scd=2)
    with pytest.raises(ValueError, match=r"holds versions .* apply to it with scd=2"):
        apply_changes(scd2, events)


def test_import_cdcfast_does_not_import_deltalake():
    code = ("import sys, cdcfast; assert 'deltalake' not in sys.modules; "
            "delta = cdcfast.delta; assert 'deltalake' not in sys.modules; "
            "import cdcfast.delta; assert cdcfast.delta is delta; "
            "assert cdcfast.delta.position('/nonexistent') is None; "
            "assert 'deltalake' in sys.modules")
    subprocess.run([sys.executable, "-c", code], check=True,
                   env={**os.environ, "PYTHONPATH": SRC})


def test_without_deltalake_the_error_says_what_to_install(tmp_path):
    code = ("import sys; sys.modules['deltalake'] = None; import cdcfast.delta\n"
            "try:\n    cdcfast.delta.position('x')\n"
            "except ImportError as e:\n    print(e)\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True, env={**os.environ, "PYTHONPATH": SRC}).stdout
    assert "pip install cdcfast[delta]" in out
