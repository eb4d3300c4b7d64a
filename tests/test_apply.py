"""Apply (SPEC §9): `net_changes` and `apply_changes(scd=1)` against an independent model —
a few lines of plain Python that apply the events one by one to a dict — on hypothesis-drawn
event sequences: shuffled, replayed, partial images, key changes, deletes then re-inserts,
truncates, error rows and null keys."""
from __future__ import annotations

import json

import pyarrow as pa
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import cdcfast
from cdcfast.apply import POSITION, parse_position, position_text
from cdcfast.encode import generate
from cdcfast.formats import names as format_names

COLUMNS = [("ID", pa.int64()), ("A", pa.string()), ("B", pa.int64())]
IMAGE = pa.struct(COLUMNS)
FLAGS = pa.struct([(n, pa.bool_()) for n, _ in COLUMNS])
SCHEMA = pa.schema([("op", pa.string()), ("commit_ts", pa.timestamp("us", "UTC")),
                    ("commit_pos", pa.binary()), ("change_pos", pa.binary()),
                    ("seq", pa.int64()), ("before", IMAGE), ("after", IMAGE),
                    ("changed", FLAGS), ("present", FLAGS), ("_error", pa.string())])
NAMES = [n for n, _ in COLUMNS]


# -- the model ----------------------------------------------------------------------------------
def pos(r):
    """The log position as a sortable tuple, nulls first."""
    return tuple(x for v in (r["commit_pos"], r["change_pos"], r["seq"])
                 for x in (v is not None, v if v is not None else 0))


def in_order(events: list, since, key):
    """The events the models apply, in log order, with their key (None for a truncate):
    error rows, rows at or below `since`, rows without a key and replays left out."""
    rows = [r for r in events if r["_error"] is None]
    if since is not None:
        s = pos(dict(zip(("commit_pos", "change_pos", "seq"), since)))
        rows = [r for r in rows if pos(r) > s]
    rows.sort(key=pos)
    applied = set()
    for r in rows:
        if r["op"] == "t":
            yield r, None
            continue
        img = r["before"] if r["op"] == "d" else r["after"]
        if r["op"] not in ("c", "r", "u", "d") or img is None or img[key] is None:
            continue
        k = img[key]
        if (k, pos(r)) not in applied:
            applied.add((k, pos(r)))
            yield r, k


def model(events: list, target: dict | None = None, since=None, key="ID", names=NAMES):
    """(state: key → row, high-water position) after applying `events` one by one (`key`:
    the one key column)."""
    state = dict(target or {})
    for r, k in in_order(events, since, key):
        if r["op"] == "t":
            state.clear()
            continue
        if r["op"] == "d":
            state.pop(k, None)
            continue
        b = r["before"]
        if r["op"] == "u" and b is not None and b[key] is not None and b[key] != k:
            state.pop(b[key], None)
        prev = state.get(k)
        sent = r["present"]
        state[k] = {c: r["after"][c] if sent is None or sent[c] is not False
                    else (prev[c] if prev else None) for c in names}
    rows = [r for r in events if r["_error"] is None and (
        since is None or pos(r) > pos(dict(zip(("commit_pos", "change_pos", "seq"), since))))]
    last = max(rows, key=pos) if rows else None
    high = (last["commit_pos"], last["change_pos"], last["seq"]) if last else since
    return state, high


def rows_of(table: pa.Table, key="ID") -> dict:
    return {r[key]: r for r in table.to_pylist()}


# -- events -------------------------------------------------------------------------------------
@st.composite
def event_lists(draw):
    n = draw(st.integers(0, 40))
    events = []
    for i in range(n):
        op = draw(st.sampled_from("ccuuuudrt" if draw(st.booleans()) else "cuud"))
        key = draw(st.one_of(st.integers(0, 5), st.none()) if draw(st.integers(0, 9)) == 0
                   else st.integers(0, 5))

        def image(k):
            return {"ID": k, "A": draw(st.one_of(st.none(), st.text("xyz", max_size=3))),
                    "B": draw(st.integers(-3, 3))}

        before = after = present = None
        if op == "t":
            key = None
        if op in "ud":
            before = image(draw(st.sampled_from([key, key, key, draw(st.integers(0, 5))])))
        if op in "cur":
            after = image(key)
            present = {c: draw(st.booleans()) if c != "ID" and draw(st.booleans()) else True
                       for c in NAMES}
            if draw(st.integers(0, 7)) == 0:
                present = None
            if draw(st.integers(0, 15)) == 0:       # no after image: no key, never applied
                after = None
        if op == "d":
            before["ID"] = key
        events.append({
            "op": op, "commit_ts": None,
            "commit_pos": bytes([draw(st.integers(0, 6))]) if draw(st.integers(0, 15))
            else None,
            "change_pos": draw(st.sampled_from([None, b"\x00", b"\x01\x02"])),
            "seq": draw(st.integers(0, 3)), "before": before, "after": after,
            "changed": None, "present": present,
            "_error": "x: bad (message 0, byte 1)" if draw(st.integers(0, 12)) == 0 else None})
    # replays: some events again, anywhere
    for e in draw(st.lists(st.sampled_from(events), max_size=5)) if events else []:
        events.insert(draw(st.integers(0, len(events))), dict(e))
    return events


def table(events: list) -> pa.Table:
    t = pa.Table.from_pylist(events, schema=SCHEMA)
    return t.replace_schema_metadata({b"cdcfast.key": b'["ID"]', b"cdcfast.table": b"T"})


def relaxed(f):
    return settings(max_examples=80, deadline=None, database=None,
                    suppress_health_check=[HealthCheck.too_slow])(f)


# -- SCD type 1 ---------------------------------------------------------------------------------
@relaxed
@given(event_lists())
def test_scd1_is_the_model(events):
    got = cdcfast.apply_changes(table(events))
    state, high = model(events)
    assert rows_of(got) == state
    assert got.column_names == NAMES
    assert got.num_rows == len(state)
    meta = got.schema.metadata
    if high is None:
        assert POSITION not in meta
    else:
        assert parse_position(meta[POSITION].decode()) == high


@relaxed
@given(event_lists(), st.integers(0, 40))
def test_two_calls_are_one(events, cut):
    """Continuing from a result skips what it holds: the first `cut` events in log order,
    then all of them again (replays across calls), equal one call."""
    ok = sorted((e for e in events if e["_error"] is None), key=pos)
    first = ok[:cut]
    a = cdcfast.apply_changes(table(first)) if first else None
    if a is None:
        return
    b = cdcfast.apply_changes(table(events), target=a)
    state, _ = model(events, *_continue(first))
    assert rows_of(b) == state
    again = cdcfast.apply_changes(table(events), target=b)
    assert rows_of(again) == rows_of(b)
    assert again.schema.metadata[POSITION] == b.schema.metadata[POSITION]


def _continue(first):
    state, high = model(first)
    return state, high


@relaxed
@given(event_lists())
def test_a_target_of_rows_is_continued(events):
    target_rows = {k: {"ID": k, "A": "old", "B": 100 + k} for k in (0, 2, 4, 9)}
    target = pa.Table.from_pylist(list(target_rows.values()), schema=pa.schema(COLUMNS))
    got = cdcfast.apply_changes(table(events), target=target)
    state, _ = model(events, target_rows)
    assert rows_of(got) == state


# -- net changes --------------------------------------------------------------------------------
@relaxed
@given(event_lists())
def test_net_changes_apply_as_the_events_do(events):
    """At most one event per key, and applying them does what applying every event does —
    to an empty table and to one that has rows."""
    net = cdcfast.net_changes(table(events))
    assert net.schema == SCHEMA
    rows = net.to_pylist()
    truncates = [r for r in rows if r["op"] == "t"]
    assert len(truncates) <= 1 and (not truncates or rows[0]["op"] == "t")
    keys = [(r["before"] if r["op"] == "d" else r["after"])["ID"] for r in rows
            if r["op"] != "t"]
    assert len(keys) == len(set(keys))
    target_rows = {k: {"ID": k, "A": "old", "B": 100 + k} for k in (0, 2, 4, 9)}
    for start in ({}, target_rows):
        assert model(net.to_pylist(), start)[0] == model(events, start)[0]


# -- counts, keys, positions ---------------------------------------------------------------------
def test_stats_count_what_was_skipped():
    ev = [dict(op="c", commit_ts=None, commit_pos=b"\x01", change_pos=None, seq=0, before=None,
               after={"ID": 1, "A": "a", "B": 1}, changed=None, present=None, _error=None)]
    ev.append(dict(ev[0]))                                              # a replay
    ev.append(dict(ev[0], seq=1, after={"ID": None, "A": "a", "B": 1}))  # no key
    ev.append(dict(ev[0], seq=2, _error="B: bad (message 0, byte 3)"))   # an error
    ev.append(dict(ev[0], op="d", seq=3, before={"ID": 1, "A": "a", "B": 1}, after=None))
    ev.append(dict(ev[0], op="t", seq=4, after=None))
    ev.append(dict(ev[0], seq=5, after={"ID": 2, "A": "b", "B": 2}))
    app = cdcfast.Applier(key="ID")
    got = app.apply(table(ev))
    assert got.to_pylist() == [{"ID": 2, "A": "b", "B": 2}]
    # events = applied + skipped_errors + skipped_no_key + replays; what the truncate
    # removed was applied first
    assert app.last_stats == {"events": 7, "applied": 4, "skipped_errors": 1,
                              "skipped_no_key": 1, "replays": 1, "deletes": 1,
                              "truncates": 1}
    got = app.apply(table(ev[:5]))
    assert got.num_rows == 0
    assert app.last_stats == {"events": 5, "applied": 2, "skipped_errors": 1,
                              "skipped_no_key": 1, "replays": 1, "deletes": 1,
                              "truncates": 0}


def test_the_key_comes_from_the_schema_or_the_call():
    t = table([])
    with pytest.raises(ValueError, match="key=…"):
        cdcfast.apply_changes(t.replace_schema_metadata(None))
    with pytest.raises(ValueError, match="NOPE"):
        cdcfast.apply_changes(t, key="NOPE")
    assert cdcfast.apply_changes(t).num_rows == 0


def test_positions_round_trip_as_text():
    for p in [(b"\x00\x01", None, 5), (None, None, None), (b"", b"\xff", -1)]:
        assert parse_position(position_text(p)) == p
    with pytest.raises(ValueError, match="not a cdcfast position"):
        parse_position("zz")


@pytest.mark.parametrize("fmt", format_names())
def test_decoded_events_name_their_key_and_apply(fmt):
    """decode and read_batches write the catalog table's key and name into the schema
    metadata (SPEC §9); apply reads the key from there, and does what the model does with
    the decoded rows."""
    data, cat = generate(fmt, 400, table_width=6, seed=9)
    t = cat.tables[0]
    events = cdcfast.decode(data, fmt, catalog=cat, table=t.name)
    meta = events.schema.metadata
    assert json.loads(meta[b"cdcfast.key"]) == list(t.key) and len(t.key) == 1
    assert meta[b"cdcfast.table"] == t.name.encode()
    for b in cdcfast.read_batches(data, fmt, catalog=cat, table=t.name, batch_size=64):
        assert b.schema.metadata == meta
    assert cdcfast.Decoder(fmt, catalog=cat).schema(t.name).metadata == meta
    got = cdcfast.apply_changes(events)
    names = [c.name for c in t.columns]
    state, _ = model(events.to_pylist(), key=t.key[0], names=names)
    assert rows_of(got, t.key[0]) == state and len(state) > 10


def test_what_cannot_be_applied_says_why():
    events = table([])
    with pytest.raises(ValueError, match="wrong or missing: after"):
        cdcfast.apply_changes(events.drop_columns(["after"]))
    bitmask = events.set_column(events.schema.get_field_index("present"), "present",
                                pa.array([], pa.int64()))
    with pytest.raises(ValueError, match="wrong or missing: present"):
        cdcfast.net_changes(bitmask)
    with pytest.raises(ValueError, match="SCD type 1 .current rows. or 2"):
        cdcfast.apply_changes(events, scd=3)
    with pytest.raises(ValueError, match="no meaning for scd=1"):
        cdcfast.apply_changes(events, track=["A"])
    with pytest.raises(ValueError, match="track=: NOPE not among the table's columns"):
        cdcfast.apply_changes(events, scd=2, track=["NOPE"])
    with pytest.raises(ValueError, match="target lacks the table's column.s. __start_at"):
        cdcfast.apply_changes(events, scd=2, target=cdcfast.apply_changes(events))
    with pytest.raises(ValueError, match="target lacks the table's column"):
        cdcfast.apply_changes(events, target=pa.table({"ID": [1]}))
    bad = pa.table({"ID": [1], "A": ["a"], "B": [1]}).replace_schema_metadata(
        {POSITION: b"zz"})
    with pytest.raises(ValueError, match="not a cdcfast position"):
        cdcfast.apply_changes(events, target=bad)


# -- SCD type 2 ---------------------------------------------------------------------------------
UTC = __import__("datetime").timezone.utc
VERSION = ("__start_at", "__end_at", "__start_pos", "__end_pos")


def timed(events: list) -> list:
    """The events with a commit time and a non-null commit position (a version's end is
    known by them), in the same log order: commit_pos None becomes b'' (still first)."""
    out = []
    for e in events:
        cp = e["commit_pos"] if e["commit_pos"] is not None else b""
        ts = __import__("datetime").datetime(2026, 1, 1 + (cp[0] if cp else 0), tzinfo=UTC)
        out.append(dict(e, commit_pos=cp, commit_ts=ts))
    return out


def model_scd2(events: list, target: list | None = None, since=None, track=None, key="ID",
               names=NAMES) -> list:
    """Every version (rows with VERSION), the events applied one by one to `target`."""
    track = [c for c in names if c != key] if track is None else track
    history = [dict(r) for r in (target or [])]
    cur = {r[key]: r for r in history if r["__end_at"] is None and r["__end_pos"] is None}

    def close(k, r):
        v = cur.pop(k)
        v["__end_at"], v["__end_pos"] = r["commit_ts"], r["commit_pos"]

    def open_(k, r, values):
        cur[k] = dict(values, __start_at=r["commit_ts"], __end_at=None,
                      __start_pos=r["commit_pos"], __end_pos=None)
        history.append(cur[k])

    for r, k in in_order(events, since, key):
        if r["op"] == "t":
            for k in list(cur):
                close(k, r)
            continue
        if r["op"] == "d":
            if k in cur:
                close(k, r)
            continue
        b = r["before"]
        if r["op"] == "u" and b is not None and b[key] is not None and b[key] != k \
                and b[key] in cur:
            close(b[key], r)
        prev = cur.get(k)
        sent = r["present"]
        new = {c: r["after"][c] if sent is None or sent[c] is not False
               else (prev[c] if prev else None) for c in names}
        if prev is None:
            open_(k, r, new)
        elif any(new[c] != prev[c] for c in track):
            close(k, r)
            open_(k, r, new)
        else:
            prev.update(new)
    return history


def canon(rows: list) -> list:
    return sorted((tuple(sorted(r.items())) for r in rows), key=repr)


@relaxed
@given(event_lists(), st.sampled_from([None, ["A"], ["B"], ["A", "B"]]))
def test_scd2_is_the_model(events, track):
    events = timed(events)
    got = cdcfast.apply_changes(table(events), scd=2, track=track)
    assert got.column_names == NAMES + list(VERSION)
    assert canon(got.to_pylist()) == canon(model_scd2(events, track=track))
    # the current versions are the SCD1 rows
    live = [{c: r[c] for c in NAMES} for r in got.to_pylist()
            if r["__end_at"] is None and r["__end_pos"] is None]
    assert canon(live) == canon(list(model(events)[0].values()))
    # a key's versions are together
    ids = got.column("ID").to_pylist()
    assert all(ids.index(i) + ids.count(i) - 1 == len(ids) - 1 - ids[::-1].index(i)
               for i in set(ids))


@relaxed
@given(event_lists(), st.integers(0, 40))
def test_scd2_continues_a_history(events, cut):
    events = timed(events)
    ok = sorted((e for e in events if e["_error"] is None), key=pos)
    first = ok[:cut]
    if not first:
        return
    a = cdcfast.apply_changes(table(first), scd=2)
    b = cdcfast.apply_changes(table(events), scd=2, target=a)
    want = model_scd2(events, target=model_scd2(first), since=model(first)[1])
    assert canon(b.to_pylist()) == canon(want)
    again = cdcfast.apply_changes(table(events), scd=2, target=b)
    assert canon(again.to_pylist()) == canon(b.to_pylist())


def worked_example():
    """The six events of docs/apply.md's worked example."""
    def ev(op, n, after=None, before=None, present=None):
        return dict(op=op, commit_ts=__import__("datetime").datetime(2026, 1, n, tzinfo=UTC),
                    commit_pos=bytes([n]), change_pos=None, seq=0, before=before,
                    after=after, changed=None, present=present, _error=None)
    return ev, [ev("c", 1, {"ID": 1, "A": "a", "B": 1}),
                ev("u", 2, {"ID": 1, "A": "b", "B": 1}, before={"ID": 1, "A": "a", "B": 1}),
                ev("u", 3, {"ID": 1, "A": "zzz", "B": 2}, before={"ID": 1, "A": "b", "B": 1},
                   present={"ID": True, "A": False, "B": True}),
                ev("d", 4, before={"ID": 1, "A": "b", "B": 2}),
                ev("c", 5, {"ID": 1, "A": "c", "B": 3}),
                ev("c", 6, {"ID": 2, "A": "x", "B": 0})]


def test_the_worked_example_of_the_docs():
    ev, evs = worked_example()
    app = cdcfast.Applier(key="ID")
    state = app.apply(table(evs))
    assert rows_of(state) == {1: {"ID": 1, "A": "c", "B": 3}, 2: {"ID": 2, "A": "x", "B": 0}}
    again = app.apply(table(evs[::-1]), target=state)
    assert again.equals(state) and app.last_stats["replays"] == 6
    t = ev("t", 7)
    assert cdcfast.apply_changes(table(evs + [t])).num_rows == 0
    net = cdcfast.net_changes(table(evs + [t])).to_pylist()
    assert [r["op"] for r in net] == ["t"]
    moved = ev("u", 7, {"ID": 9, "A": "y", "B": 5}, before={"ID": 2, "A": "x", "B": 0})
    assert rows_of(cdcfast.apply_changes(table(evs + [moved]))) == {
        1: {"ID": 1, "A": "c", "B": 3}, 9: {"ID": 9, "A": "y", "B": 5}}


def test_scd2_by_hand():
    """Insert, an update of a tracked column (new version), one of an untracked one (in
    place), a delete, a re-insert; then a truncate ends what is current."""
    def ev(op, n, after=None, before=None, present=None):
        return dict(op=op, commit_ts=__import__("datetime").datetime(2026, 1, n, tzinfo=UTC),
                    commit_pos=bytes([n]), change_pos=None, seq=0, before=before,
                    after=after, changed=None, present=present, _error=None)
    d = __import__("datetime").datetime
    evs = [ev("c", 1, {"ID": 1, "A": "a", "B": 1}),
           ev("u", 2, {"ID": 1, "A": "b", "B": 1}),
           ev("u", 3, {"ID": 1, "A": "zzz", "B": 2}, present={"ID": True, "A": False,
                                                             "B": True}),
           ev("d", 4, before={"ID": 1, "A": "b", "B": 2}),
           ev("c", 5, {"ID": 1, "A": "c", "B": 3}),
           ev("c", 6, {"ID": 2, "A": "x", "B": 0}),
           ev("t", 7)]
    got = cdcfast.apply_changes(table(evs), scd=2, track=["A"]).to_pylist()

    def at(n):
        return d(2026, 1, n, tzinfo=UTC)
    assert got == [
        {"ID": 1, "A": "a", "B": 1, "__start_at": at(1), "__end_at": at(2),
         "__start_pos": b"\x01", "__end_pos": b"\x02"},
        {"ID": 1, "A": "b", "B": 2, "__start_at": at(2), "__end_at": at(4),
         "__start_pos": b"\x02", "__end_pos": b"\x04"},
        {"ID": 1, "A": "c", "B": 3, "__start_at": at(5), "__end_at": at(7),
         "__start_pos": b"\x05", "__end_pos": b"\x07"},
        {"ID": 2, "A": "x", "B": 0, "__start_at": at(6), "__end_at": at(7),
         "__start_pos": b"\x06", "__end_pos": b"\x07"}]
