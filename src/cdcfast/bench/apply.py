"""`cdcfast bench --apply`: the apply fold (docs/apply.md) on generated events, against DuckDB
running the same semantics in SQL, one thread each, in the same run.

The events: `n` of them over `keys` keys of a table of `width` columns (an int64 key, then
int64, float64, string and timestamp columns in turn), in log order; 10 % inserts, 85 %
updates, 5 % deletes; a fifth of the upserts send only some columns (`present`); a share of
the events comes twice, right after itself (a replay). Built with numpy: no Python object
per event.
"""
from __future__ import annotations

import os
import subprocess
import sys

import numpy as np
import pyarrow as pa

from ._timing import best_times

TYPES = (pa.int64(), pa.float64(), pa.string(), pa.timestamp("us", "UTC"))


def _binary8(values: np.ndarray) -> pa.Array:
    """8-byte big-endian binary values of non-negative integers."""
    data = pa.py_buffer(values.astype(">u8").tobytes())
    offsets = pa.py_buffer((np.arange(len(values) + 1, dtype=np.int32) * 8).tobytes())
    return pa.Array.from_buffers(pa.binary(), len(values), [None, offsets, data])


def _column(t: pa.DataType, rng, n: int) -> pa.Array:
    if t == pa.int64():
        return pa.array(rng.integers(-10**9, 10**9, n))
    if t == pa.float64():
        return pa.array(rng.random(n) * 1e6)
    if t == pa.string():
        words = pa.array([f"value-{i:04d}" for i in range(1000)])
        return words.take(pa.array(rng.integers(0, 1000, n)))
    return pa.array(rng.integers(1.6e15, 1.8e15, n)).cast(t)


def events(n: int = 10_000_000, keys: int = 1_000_000, width: int = 20,
           partial: float = 0.2, replays: float = 0.05, seed: int = 7) -> pa.Table:
    """One table's envelope (op, commit_ts, positions, seq, before, after, present,
    _error): about `n` events in all (at most), replays included."""
    rng = np.random.default_rng(seed)
    base = int(round(n / (1 + replays)))
    names = ["ID"] + [f"C{i}" for i in range(1, width)]
    types = [pa.int64()] + [TYPES[(i - 1) % len(TYPES)] for i in range(1, width)]
    ids = rng.integers(0, keys, base)
    op = pa.array(["c", "u", "d"]).take(pa.array(rng.choice(3, base, p=[0.10, 0.85, 0.05])))
    image = pa.StructArray.from_arrays(
        [pa.array(ids)] + [_column(t, rng, base) for t in types[1:]], names=names)
    before = pa.StructArray.from_arrays(
        [pa.array(ids)] + [_column(t, rng, base) for t in types[1:]], names=names)
    cut = rng.random(base) < partial
    present = pa.StructArray.from_arrays(
        [pa.array(np.ones(base, bool))]
        + [pa.array(~cut | (rng.random(base) < 0.5)) for _ in names[1:]], names=names)
    d = op.to_numpy(zero_copy_only=False) == "d"
    txn = np.arange(base) // 4
    t = pa.table({
        "op": op,
        "commit_ts": pa.array(1_700_000_000_000_000 + txn * 1000).cast(TYPES[3]),
        "commit_pos": _binary8(txn), "change_pos": _binary8(np.arange(base)),
        "seq": pa.array(np.arange(base)),
        "before": pa.StructArray.from_arrays(before.flatten(), names=names,
                                             mask=pa.array(~(d | (op.to_numpy(
                                                 zero_copy_only=False) == "u")))),
        "after": pa.StructArray.from_arrays(image.flatten(), names=names, mask=pa.array(d)),
        "present": pa.StructArray.from_arrays(present.flatten(), names=names,
                                              mask=pa.array(d)),
        "_error": pa.nulls(base, pa.string()),
    })
    again = np.flatnonzero(rng.random(base) < replays)
    order = np.sort(np.concatenate([np.arange(base), again]), kind="stable")
    t = t.take(pa.array(order[:n]))
    return t.replace_schema_metadata({b"cdcfast.key": b'["ID"]', b"cdcfast.table": b"BENCH"})


def duckdb_sql(columns: list) -> str:
    """SCD type 1 in SQL: log order by a window, replays out by key and position, per key
    the last delete and per column the last value sent after it; keys whose last event is
    a delete are gone."""
    values = ",\n  ".join(
        f'arg_max(after."{c}", CASE WHEN present."{c}" AND (ld IS NULL OR lr > ld) '
        f'THEN lr END) AS "{c}"' for c in columns[1:])
    return f"""
WITH e AS (SELECT *, row_number() OVER () AS rn FROM events WHERE _error IS NULL),
o AS (SELECT *, row_number() OVER (ORDER BY commit_pos ASC NULLS FIRST,
        change_pos ASC NULLS FIRST, seq ASC NULLS FIRST, rn) AS lr,
        CASE WHEN op = 'd' THEN before."{columns[0]}" ELSE after."{columns[0]}" END AS k
      FROM e),
d AS (SELECT * FROM o WHERE k IS NOT NULL
      QUALIFY row_number() OVER (PARTITION BY k, commit_pos, change_pos, seq ORDER BY lr) = 1),
g AS (SELECT k, max(lr) AS last, max(CASE WHEN op = 'd' THEN lr END) AS ld FROM d GROUP BY k)
SELECT k AS "{columns[0]}",
  {values}
FROM d JOIN g USING (k)
GROUP BY k, ld, last
HAVING arg_max(op, lr) <> 'd'
"""


def _duckdb(t: pa.Table):
    import duckdb
    con = duckdb.connect()
    con.execute("SET threads = 1")
    con.register("events", t)
    sql = duckdb_sql([f.name for f in t.schema.field("after").type])
    return lambda: con.sql(sql).to_arrow_table()


_PEAK = """
import sys, tracemalloc, pyarrow as pa, cdcfast
from cdcfast.bench.apply import events

t = events(int(sys.argv[1]), int(sys.argv[2]))
pool = pa.proxy_memory_pool(pa.default_memory_pool())     # counts Arrow's bytes from here
pa.set_memory_pool(pool)
tracemalloc.start()                                        # counts numpy's
getattr(cdcfast, sys.argv[3])(t)
print(pool.max_memory() + tracemalloc.get_traced_memory()[1], t.nbytes)
"""


def peak_memory(n: int, keys: int, fn: str) -> tuple[int, int]:
    """(peak bytes cdcfast.<fn>(events) holds beyond the events — Arrow's allocations at
    their peak plus numpy's at theirs, so at most that much — and the events' Arrow bytes),
    in a fresh process."""
    out = subprocess.run([sys.executable, "-c", _PEAK, str(n), str(keys), fn],
                         capture_output=True, text=True, check=True)
    grew, size = out.stdout.split()
    return int(grew), int(size)


def delta_run(n: int = 1_000_000, rows: int = 1_000_000, echo=print) -> dict:
    """Wall time of cdcfast.delta.apply_changes of `n` events onto a Delta table of `rows`
    rows (the events' keys fall on twice as many keys: about half update a row), beside a
    plain deltalake MERGE of the raw events (one source row per event)."""
    import tempfile
    import time

    import pyarrow.compute as pc
    from deltalake import DeltaTable, write_deltalake

    import cdcfast
    import cdcfast.delta
    echo(f"Delta: {n:,} events onto a {rows:,}-row table ...")
    t = events(n, 2 * rows, seed=11)
    after = t.schema.field("after").type
    rng = np.random.default_rng(5)
    first = pa.table([pa.array(np.arange(rows))] + [_column(f.type, rng, rows)
                                                    for f in list(after)[1:]],
                     names=[f.name for f in after])
    res = {"delta_events": t.num_rows, "delta_rows": rows}
    with tempfile.TemporaryDirectory() as d:
        ours, plain = os.path.join(d, "ours"), os.path.join(d, "plain")
        for uri in (ours, plain):
            write_deltalake(uri, first)
        start = time.perf_counter()
        stats = cdcfast.delta.apply_changes(ours, t)
        res["delta_seconds"] = time.perf_counter() - start
        got = DeltaTable(ours).to_pyarrow_table()
        want = cdcfast.apply_changes(t, target=first)
        res["delta_equal"] = _canonical(got.cast(want.schema)).equals(_canonical(want))
        res["delta_applied"] = stats["applied"]
        raw = pa.table({"__op": t.column("op"),
                        **{f.name: pc.struct_field(t.column("after"), f.name) for f in after}})
        raw = raw.filter(pc.not_equal(raw.column("__op"), "d"))
        start = time.perf_counter()
        try:
            (DeltaTable(plain).merge(raw, predicate="target.ID = source.ID",
                                     source_alias="source", target_alias="target")
             .when_matched_update_all().when_not_matched_insert_all().execute())
            res["plain_merge"] = "finished"
        except Exception as e:          # what deltalake says of duplicate source keys
            res["plain_merge"] = f"failed: {str(e).splitlines()[0][:160]}"
        res["plain_seconds"] = time.perf_counter() - start
    return res


def _canonical(t: pa.Table) -> pa.Table:
    return t.replace_schema_metadata(None).sort_by(t.column_names[0])


def run(n: int = 10_000_000, keys: int = 1_000_000, repeat: int = 3, memory: bool = True,
        delta: bool = True, echo=print) -> dict:
    """Times apply_changes(scd=1) and net_changes against DuckDB's SQL; checks DuckDB's
    result equals ours."""
    import cdcfast
    echo(f"generating {n:,} events over {keys:,} keys ...")
    t = events(n, keys)
    res = {"events": t.num_rows, "keys": keys, "arrow_bytes": t.nbytes}
    fns = {"apply_changes(scd=1)": lambda: cdcfast.apply_changes(t),
           "net_changes": lambda: cdcfast.net_changes(t)}
    try:
        fns["DuckDB SQL (1 thread)"] = _duckdb(t)
    except ImportError:
        echo("duckdb is not installed (pip install duckdb): its contender is left out")
    ours = cdcfast.apply_changes(t)
    if "DuckDB SQL (1 thread)" in fns:
        theirs = fns["DuckDB SQL (1 thread)"]()
        theirs = pa.table(theirs) if not isinstance(theirs, pa.Table) else theirs
        res["duckdb_equal"] = _canonical(theirs.cast(ours.schema)).equals(_canonical(ours))
    res["rows"] = ours.num_rows
    res["seconds"] = best_times(fns, repeat)
    if memory:
        for fn in ("apply_changes", "net_changes"):
            grew, size = peak_memory(n, keys, fn)
            res[f"peak_{fn}"] = grew
    del t, ours, fns
    if delta:
        try:
            res.update(delta_run(min(n, 1_000_000), min(keys, 1_000_000), echo=echo))
        except ImportError:
            echo("deltalake is not installed (pip install cdcfast[delta]): Delta left out")
    return res


def report(res: dict) -> str:
    n = res["events"]
    lines = [f"apply: {n:,} events over {res['keys']:,} keys ({res['arrow_bytes'] / 1e6:,.0f} MB "
             f"of Arrow), {res['rows']:,} live rows; best of the rounds, one thread"]
    duck = res["seconds"].get("DuckDB SQL (1 thread)")
    for name, s in res["seconds"].items():
        vs = f"  {duck / s:5.2f}× DuckDB" if duck and "DuckDB" not in name else ""
        lines.append(f"  {name:24s} {s:7.2f} s  {n / s / 1e6:6.2f} M events/s{vs}")
    if "duckdb_equal" in res:
        lines.append(f"  DuckDB's rows equal ours: {res['duckdb_equal']}")
    for fn in ("apply_changes", "net_changes"):
        if f"peak_{fn}" in res:
            grew = res[f"peak_{fn}"]
            lines.append(f"  peak memory of {fn}: {grew / 1e6:,.0f} MB "
                         f"({grew / res['arrow_bytes']:.2f}× the events)")
    if "delta_seconds" in res:
        lines.append(f"Delta: {res['delta_events']:,} events onto a {res['delta_rows']:,}-row "
                     f"table (wall time)")
        lines.append(f"  cdcfast.delta.apply_changes  {res['delta_seconds']:7.2f} s  "
                     f"({res['delta_applied']:,} applied; equal to apply_changes: "
                     f"{res['delta_equal']})")
        lines.append(f"  plain deltalake MERGE        {res['plain_seconds']:7.2f} s  "
                     f"{res['plain_merge']}")
    return "\n".join(lines)


if __name__ == "__main__":  # pragma: no cover
    print(report(run(int(os.environ.get("N", 10_000_000)), int(os.environ.get("K", 1_000_000)),
                     memory=False)))
