"""Apply in Spark (SPEC §9): cs.net_changes and cs.apply_changes, computed on the executors
grouped by key, equal cdcfast.net_changes and cdcfast.apply_changes of the same events
collected to the driver (and the plain-Python model of tests/test_apply.py) — truncates, key
changes, replays at shared positions, error rows and null keys included; and
cs.apply_changes_to_delta, batch and streaming (exactly once across a restart, and over a
replay from scratch), equals cdcfast.delta.apply_changes of the same events."""
from __future__ import annotations

import os
import shutil

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from deltalake import DeltaTable
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from test_apply import event_lists, model, pos, rows_of, table

import cdcfast
import cdcfast.delta
from cdcfast import spark as cs

pytest.importorskip("pyspark")
pytest.importorskip("deltalake")


def event(op, seq, before=None, after=None, present=None, commit_pos=b"\x01", **more):
    return {"op": op, "commit_ts": None, "commit_pos": commit_pos, "change_pos": None,
            "seq": seq, "before": before, "after": after, "changed": None,
            "present": present, "_error": None, **more}


def row(k, a="a", b=0):
    return {"ID": k, "A": a, "B": b}


# what crosses groups, at shared positions: a key moved by an update at the position of
# another event of the old key; a replayed moved update (the new key already has an event
# there: it moves nothing); a truncate between two events of one position
CROSSING = [
    event("c", 0, after=row(1)), event("c", 0, after=row(2)),
    event("u", 1, before=row(1), after=row(3, "m")),
    event("u", 1, before=row(1), after=row(1, "again")),       # key 1 at the same position
    event("c", 2, after=row(5, "first")),
    event("u", 2, before=row(4), after=row(5, "replay")),      # (5, 2) already: a replay
    event("c", 3, after=row(4)),
    event("t", 3),
    event("c", 3, after=row(6, "kept")),
    event("u", 4, before=row(6), after=row(7), present={"ID": True, "A": False, "B": True}),
    event("d", 5, before=row(None)),                           # no key
    event("c", 6, after=row(8), _error="x: bad (message 0, byte 1)"),
    event("c", 0, after=row(9), commit_pos=None),
]

few = settings(max_examples=1, deadline=None, database=None,
               suppress_health_check=[HealthCheck.too_slow])


def normal(rows: list) -> list:
    return sorted(rows, key=repr)


def combined(lists: list) -> list:
    """Several event lists as one table's events (a Spark job takes seconds): list i's keys
    moved to 10 i + ID and its commit positions behind the byte i, so each list has its own
    keys and stretch of the log (a truncate still empties the lists before it)."""
    out = []
    for i, events in enumerate(lists):
        def image(img):
            return None if img is None else \
                {**img, "ID": None if img["ID"] is None else 10 * i + img["ID"]}
        for e in events:
            cp = e["commit_pos"]
            out.append({**e, "before": image(e["before"]), "after": image(e["after"]),
                        "commit_pos": None if cp is None else bytes([i]) + cp})
    return out


@few
@given(st.lists(event_lists(), min_size=6, max_size=8))
def test_net_changes_and_apply_changes_equal_python(spark, lists):
    events = combined(lists + [CROSSING])
    t = table(events)
    df = spark.createDataFrame(t)
    net = cs.net_changes(df, key="ID").toArrow()
    want = cdcfast.net_changes(t)
    assert normal(net.to_pylist()) == normal(want.to_pylist())
    assert net.schema.remove_metadata() == want.schema.remove_metadata()
    # the truncate, when there is one, is the first row; applying the net events is
    # applying every event
    ops = net.column("op").to_pylist()
    assert "t" not in ops[1:]
    assert model(net.to_pylist())[0] == model(events)[0]
    state = cs.apply_changes(df, key="ID").toArrow()
    assert normal(state.to_pylist()) == normal(cdcfast.apply_changes(t).to_pylist())
    assert rows_of(state) == model(events)[0]
    hist = cs.apply_changes(df, key=["ID"], scd=2).toArrow()
    assert normal(hist.to_pylist()) == normal(cdcfast.apply_changes(t, scd=2).to_pylist())


def test_the_crossing_events_by_hand(spark):
    """What CROSSING does (the hypothesis test has it in every example): the truncate empties what came before it (key 1 moved to 3 and
    written again at the same position; the replayed move of 4 to 5, which moves nothing);
    key 6 moved to 7 is deleted, and 7, a new key, has no value for the A it did not send."""
    assert model(CROSSING)[0] == {7: {"ID": 7, "A": None, "B": 0}}   # Spark: above
    before = CROSSING[:7]
    state = cs.apply_changes(spark.createDataFrame(table(before)), key="ID").toArrow()
    assert rows_of(state) == {1: row(1, "again"), 2: row(2), 3: row(3, "m"),
                              4: row(4), 5: row(5, "first")} == model(before)[0]


# -- decoded events of a real format ------------------------------------------------------------
FMT, TABLE = "ibm-delimited", "SALES.ORDERS_0"


@pytest.fixture(scope="module")
def decoded(spark):
    msgs, cat = cdcfast.encode.generate(FMT, 400, table_width=6, seed=9, messages=True)
    df = spark.createDataFrame([(m,) for m in msgs], "value binary")
    events = cs.decode(df, format=FMT, catalog=cat, table=TABLE).cache()
    yield events, cdcfast.decode(msgs, format=FMT, catalog=cat, table=TABLE)


def test_decoded_events_through_spark_equal_python(decoded):
    """cs.decode, then cs.net_changes and cs.apply_changes with the key the decoded schema
    carries (the `after` column's metadata): what Python gives."""
    events, t = decoded
    assert events.schema["after"].metadata["cdcfast.key"] == ["ORDER_ID"]
    state = cs.apply_changes(events).toArrow()
    want = cdcfast.apply_changes(t)
    assert state.num_rows == want.num_rows > 100
    assert normal(state.to_pylist()) == normal(want.to_pylist())
    # and cs.net_changes: through test_apply_changes_to_delta_batch


def test_a_key_is_needed(spark):
    df = spark.createDataFrame(table(CROSSING[:1]))
    with pytest.raises(ValueError, match="key="):
        cs.net_changes(df)
    with pytest.raises(ValueError, match="NOPE"):
        cs.apply_changes(df, key="NOPE")
    with pytest.raises(ValueError, match="scd"):
        cs.apply_changes(df, key="ID", scd=3)


# -- Delta Lake ---------------------------------------------------------------------------------
def delta_rows(uri, key="ID") -> list:
    return normal(DeltaTable(uri).to_pyarrow_table().to_pylist())


def test_apply_changes_to_delta_batch(decoded, tmp_path):
    events, t = decoded
    got = cs.apply_changes_to_delta(events, tmp_path / "spark")
    want = cdcfast.delta.apply_changes(str(tmp_path / "python"), t)
    assert delta_rows(tmp_path / "spark") == delta_rows(tmp_path / "python")
    assert got["position"] == want["position"] == cdcfast.delta.position(tmp_path / "spark")
    assert got["version"] == 1
    again = cs.apply_changes_to_delta(events, tmp_path / "spark")      # every event a replay
    assert again["version"] is None and DeltaTable(str(tmp_path / "spark")).version() == 1


def test_apply_changes_to_delta_scd2(decoded, tmp_path):
    """SCD type 2 from Spark: the events after the table's mark, collected, are what
    cdcfast.delta applies from Python; a second run commits nothing."""
    events, t = decoded
    got = cs.apply_changes_to_delta(events, tmp_path / "spark", scd=2)
    cdcfast.delta.apply_changes(str(tmp_path / "python"), t, scd=2)
    assert delta_rows(tmp_path / "spark") == delta_rows(tmp_path / "python")
    assert got["version"] == 1 and got["applied"] > 100
    again = cs.apply_changes_to_delta(events, tmp_path / "spark", scd=2)
    assert again["version"] is None


def _after_or_at(a, b) -> bool:
    key = dict(zip(("commit_pos", "change_pos", "seq"), a)), \
        dict(zip(("commit_pos", "change_pos", "seq"), b))
    return pos(key[0]) >= pos(key[1])


def test_streaming_exactly_once(spark, tmp_path):
    """Parquet files of events arrive in a folder; the stream applies them to Delta with a
    checkpoint: run over the first files, stop, more files, restart from the checkpoint: the
    table is a one-shot apply of every event; a run from a fresh checkpoint over every file
    (a replay of everything) changes nothing."""
    events = [e for e in combined([CROSSING, CROSSING[:8], CROSSING])]
    events.sort(key=lambda e: (e["commit_pos"] is not None, e["commit_pos"] or b"",
                               e["seq"]))
    landing, uri = tmp_path / "landing", str(tmp_path / "delta")
    landing.mkdir()
    # files cut where the position changes: the mark is one position, so an event at the
    # position of one applied before is a replay, whichever its key
    files, cut = [], 0
    for i in range(1, len(events) + 1):
        if i == len(events) or (i - cut >= 10 and pos(events[i]) != pos(events[i - 1])):
            files.append(events[cut:i])
            cut = i
    schema = spark.createDataFrame(table(events[:1])).schema

    def land(part):
        for i in part:
            pq.write_table(table(files[i]), tmp_path / "f.tmp")
            os.replace(tmp_path / "f.tmp", landing / f"{i:03d}.parquet")

    def run(checkpoint):
        df = spark.readStream.schema(schema).format("parquet").load(str(landing))
        q = cs.apply_changes_to_delta(df, uri, key="ID", checkpoint=str(checkpoint),
                                      trigger={"availableNow": True})
        q.awaitTermination(120)
        assert q.exception() is None

    half = len(files) // 2
    land(range(half))
    run(tmp_path / "checkpoint")
    assert delta_rows(uri) == normal(list(model(sum(files[:half], []))[0].values()))
    land(range(half, len(files)))
    run(tmp_path / "checkpoint")
    once = str(tmp_path / "once")
    cdcfast.delta.apply_changes(once, table(events))
    assert delta_rows(uri) == delta_rows(once)
    # the mark: the last applied event's position (the one-shot's is the last event read)
    assert _after_or_at(cdcfast.delta.position(once), cdcfast.delta.position(uri))
    version = DeltaTable(uri).version()
    shutil.rmtree(tmp_path / "checkpoint")
    run(tmp_path / "checkpoint")                                       # everything again
    assert DeltaTable(uri).version() == version and delta_rows(uri) == delta_rows(once)
