"""Change events applied to the tables they describe (SPEC §9): `net_changes` and
`apply_changes` (SCD type 1) over one table's envelope, as `decode` returns it.

The fold runs over whole Arrow columns, with numpy for the per-key bookkeeping; no Python
object is made per event:

1. rows with `_error`, rows at or below `since` (replays of an earlier call) and rows whose
   key cannot be read are set aside (counted);
2. everything before the last truncate is gone (and so is the target);
3. an update whose before-image key differs from its after-image key becomes a delete of the
   old key and an upsert of the new one;
4. the events are sorted by key, then log order (`commit_pos`, `change_pos`, `seq`, bytewise,
   nulls first, ties in input order); an event equal to the one before it in key and position
   is a replay;
5. per key: the last delete, and per column the last upsert after it whose `present` is true
   — that column's value; a column no such upsert sent keeps the target's value when the key
   was not deleted in the batch, else is null.
"""
from __future__ import annotations

import json

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

POSITION = b"cdcfast.position"
KEY = b"cdcfast.key"
TABLE = b"cdcfast.table"
LOG = ("commit_pos", "change_pos", "seq")
STATS = ("events", "applied", "skipped_errors", "skipped_no_key", "replays", "deletes",
         "truncates")


# -- positions ------------------------------------------------------------------------------
def position_text(pos) -> str:
    """The high-water mark as schema metadata holds it: hex of commit_pos, change_pos and
    seq (8 bytes, big-endian), joined by ':'; a null part is '-'."""
    cp, chp, seq = pos
    return ":".join(["-" if cp is None else bytes(cp).hex(),
                     "-" if chp is None else bytes(chp).hex(),
                     "-" if seq is None else int(seq).to_bytes(8, "big", signed=True).hex()])


def parse_position(text: str):
    """The (commit_pos, change_pos, seq) of position_text's text."""
    parts = text.split(":")
    if len(parts) != 3:
        raise ValueError(f"not a cdcfast position: {text!r}")
    try:
        cp = None if parts[0] == "-" else bytes.fromhex(parts[0])
        chp = None if parts[1] == "-" else bytes.fromhex(parts[1])
        seq = None if parts[2] == "-" else int.from_bytes(bytes.fromhex(parts[2]), "big",
                                                          signed=True)
    except ValueError:
        raise ValueError(f"not a cdcfast position: {text!r}") from None
    return cp, chp, seq


def _later(table: pa.Table, since) -> np.ndarray:
    """Per row: its position is after `since` (nulls sort first)."""
    gt = np.zeros(table.num_rows, dtype=bool)
    eq = np.ones(table.num_rows, dtype=bool)
    for name, value in zip(LOG, since):
        col = table.column(name)
        if value is None:
            g = col.is_valid()
            e = col.is_null()
        else:
            s = pa.scalar(value, col.type)
            g = pc.fill_null(pc.greater(col, s), False)
            e = pc.fill_null(pc.equal(col, s), False)
        g = np.asarray(g.to_numpy(zero_copy_only=False), dtype=bool)
        gt |= eq & g
        eq &= np.asarray(e.to_numpy(zero_copy_only=False), dtype=bool)
    return gt


def _position_of(table: pa.Table, row: int):
    return tuple(table.column(n)[row].as_py() for n in LOG)


def _same(col, rows_a: np.ndarray, rows_b: np.ndarray) -> np.ndarray:
    """Per pair: col[rows_a] equals col[rows_b], nulls equal to nulls."""
    a, b = col.take(pa.array(rows_a)), col.take(pa.array(rows_b))
    eq = pc.fill_null(pc.equal(a, b), False)
    both = pc.and_(a.is_null(), b.is_null())
    return np.asarray(pc.or_(eq, both).to_numpy(zero_copy_only=False), dtype=bool)


def _bools(arr) -> np.ndarray:
    return np.asarray(pc.fill_null(arr, False).to_numpy(zero_copy_only=False), dtype=bool)


# -- the fold -------------------------------------------------------------------------------
class Applier:
    """Applies one table's change events (SPEC §9); `last_stats` after each call."""

    def __init__(self, key=None, scd: int = 1, track=None):
        if scd != 1:
            raise ValueError(f"scd={scd!r}: only SCD type 1 is built so far (docs/apply.md)")
        if track is not None:
            raise ValueError("track=… chooses the columns that open an SCD type 2 version; "
                             "it has no meaning for scd=1")
        self.key = None if key is None else ([key] if isinstance(key, str) else list(key))
        self.scd = scd
        self.track = track
        self.last_stats = dict.fromkeys(STATS, 0)

    def _key_of(self, events: pa.Table) -> list:
        if self.key:
            return self.key
        meta = events.schema.metadata or {}
        if KEY in meta:
            return list(json.loads(meta[KEY]))
        raise ValueError("key=… names the table's key columns (the events carry no "
                         "cdcfast.key: their catalog table names none)")

    def _fold(self, events, since):
        """(the folded changes, the table's columns) — see the module docstring."""
        t = _table(events)
        _check_events(t)
        key = self._key_of(t)
        after_type = t.schema.field("after").type
        columns = [f.name for f in after_type]
        missing = [k for k in key if k not in columns]
        if missing:
            raise ValueError(f"key column(s) {', '.join(missing)} not among the table's "
                             f"columns ({', '.join(columns)})")
        stats = dict.fromkeys(STATS, 0)
        stats["events"] = t.num_rows
        ok = np.asarray(t.column("_error").is_null().to_numpy(zero_copy_only=False), bool)
        stats["skipped_errors"] = int((~ok).sum())
        if since is not None:
            later = _later(t, since)
            stats["replays"] += int((ok & ~later).sum())
            ok &= later
        # what the fold reads, taken in log order (the images' values: at the end, once)
        full = t
        before_full, after_full = full.column("before"), full.column("after")
        lean = {"op": full.column("op"), **{n: full.column(n) for n in LOG},
                "present": full.column("present"), "row": pa.array(np.arange(full.num_rows))}
        for i, k in enumerate(key):
            lean[f"b{i}"] = pc.struct_field(before_full, k)
            lean[f"a{i}"] = pc.struct_field(after_full, k)
        t = pa.table(lean).filter(pa.array(ok))
        order = pc.sort_indices(t, sort_keys=[(n, "ascending", "at_start") for n in LOG])
        t = t.take(order)
        orig = t.column("row").to_numpy()          # row of `full` of each row of t
        high = _position_of(t, t.num_rows - 1) if t.num_rows else since
        op = t.column("op")
        is_t = _bools(pc.equal(op, "t"))
        truncated = None
        n = t.num_rows
        pre = np.zeros(n, dtype=bool)       # before the last truncate: applied, then gone
        if is_t.any():
            last_t = int(np.flatnonzero(is_t)[-1])
            truncated = full.slice(int(orig[last_t]), 1)   # the last one: net_changes says it
            stats["truncates"] = int(is_t.sum())
            stats["applied"] += int(is_t.sum())
            pre = np.arange(n) < last_t
        is_d = _bools(pc.equal(op, "d"))
        is_up = _bools(pc.is_in(op, pa.array(["c", "r", "u"])))
        # the key: after's, before's for a delete
        keys = [pc.if_else(pa.array(is_d), t.column(f"b{i}"), t.column(f"a{i}"))
                for i in range(len(key))]
        has_key = np.ones(n, dtype=bool)
        for k in keys:
            has_key &= np.asarray(k.is_valid().to_numpy(zero_copy_only=False), bool)
        known = is_d | is_up
        stats["skipped_no_key"] = int((known & ~has_key).sum())
        live = known & has_key
        # an update that moves its key: a delete of the old key first
        is_u = _bools(pc.equal(op, "u")) & live
        moved = np.zeros(n, dtype=bool)
        old = [t.column(f"b{i}") for i in range(len(key))]
        if is_u.any():
            old_valid = np.ones(n, dtype=bool)
            for o in old:
                old_valid &= np.asarray(o.is_valid().to_numpy(zero_copy_only=False), bool)
            differ = np.zeros(n, dtype=bool)
            for o, k in zip(old, keys):
                differ |= ~_bools(pc.equal(o, k))
            moved = is_u & old_valid & differ
        ev = np.flatnonzero(live)                  # event rows of t (upserts and deletes)
        extra = np.flatnonzero(moved)              # the deletes of moved keys
        src = np.concatenate([ev, extra])
        dele = np.concatenate([is_d[ev], np.ones(len(extra), dtype=bool)])
        synthetic = np.concatenate([np.zeros(len(ev), bool), np.ones(len(extra), bool)])
        rank = np.concatenate([ev, extra]).astype(np.int64) * 2 \
            + np.concatenate([np.ones(len(ev), np.int64), np.zeros(len(extra), np.int64)])
        key_cols = [pa.concat_arrays([_chunk(k).take(pa.array(ev)),
                                      _chunk(o).take(pa.array(extra))])
                    for k, o in zip(keys, old)]
        kt = pa.table(key_cols + [pa.array(rank)], names=[f"k{i}" for i in range(len(key))]
                      + ["rank"])
        by = pc.sort_indices(kt, sort_keys=[(f"k{i}", "ascending") for i in range(len(key))]
                             + [("rank", "ascending")]).to_numpy()
        src, dele, synthetic = src[by], dele[by], synthetic[by]
        early = pre[src]
        key_cols = [c.take(pa.array(by)) for c in key_cols]
        m = len(src)
        start = np.zeros(m, dtype=bool)
        if m:
            start[0] = True
            for c in key_cols:
                start[1:] |= ~_same(c, np.arange(1, m), np.arange(0, m - 1))
        # replays: the same key and position as the event before
        if m > 1:
            rep = ~start[1:]
            for name in LOG:
                rep &= _same(_chunk(t.column(name)), src[1:], src[:-1])
            rep &= synthetic[1:] == synthetic[:-1]
            keep = np.concatenate([[True], ~rep])
            stats["replays"] += int((~keep & ~synthetic).sum())
        else:
            keep = np.ones(m, dtype=bool)
        # a moved key's delete goes with its update when that is a replay
        kept = np.zeros(n, dtype=bool)
        kept[src[keep & ~synthetic]] = True
        keep &= ~synthetic | kept[src]
        stats["applied"] += int((keep & ~synthetic).sum())
        stats["deletes"] = int((keep & dele & ~synthetic).sum())
        # the events before the truncate go, once they have told the replays
        keep &= ~early
        # key groups, renumbered over what is kept
        grp = np.cumsum(start) - 1 if m else start.astype(np.int64)
        src, dele, synthetic = src[keep], dele[keep], synthetic[keep]
        key_cols = [c.filter(pa.array(keep)) for c in key_cols]
        grp = grp[keep]
        start = np.ones(len(grp), dtype=bool)
        if len(grp):
            start[1:] = grp[1:] != grp[:-1]
        m = len(src)
        gstart = np.flatnonzero(start)
        gend = np.append(gstart[1:] - 1, m - 1) if m else gstart
        ar = np.arange(m)
        lastdel = np.maximum.accumulate(np.where(dele, ar, -1)) if m else ar
        ld = lastdel[gend] if m else gend
        ld = np.where(ld >= gstart, ld, -1)
        present = t.column("present")
        upsert = ~dele
        values, sent = {}, {}
        for c in columns:
            p = pc.struct_field(present, c)
            pr = np.asarray(pc.fill_null(p, True).to_numpy(zero_copy_only=False), bool) \
                if p.null_count < len(p) else np.ones(len(p), bool)
            mask = upsert & pr[src] if m else upsert
            lp = np.maximum.accumulate(np.where(mask, ar, -1)) if m else ar
            cand = lp[gend] if m else gend
            ok_c = cand >= np.maximum(gstart, ld + 1)
            rows_c = np.where(ok_c, orig[src[np.where(ok_c, cand, 0)]] if m else cand, -1)
            values[c] = rows_c
            sent[c] = ok_c
        return Folded(full, key, columns, key_cols, gstart, gend, orig[src], dele, synthetic,
                      ld, values, sent, truncated, after_type, stats, high)

    def net_changes(self, events, since=None) -> pa.Table:
        """Per key, one event from where the key was before the batch to where it is after
        it (images merged, `op` the last event's), in the envelope's schema; after the
        batch's last truncate, which comes first when there is one (it empties the target,
        and the keys' events are those after it)."""
        f = self._fold(events, since)
        self.last_stats = f.stats
        return f.net_events()

    def apply(self, events, target: pa.Table | None = None, since=None) -> pa.Table:
        """The table's live rows after the events (SCD type 1), continuing from `target`
        (a result of this method), skipping what it already holds (`since`: its position
        unless given)."""
        if since is None and target is not None:
            meta = target.schema.metadata or {}
            if POSITION in meta:
                since = parse_position(meta[POSITION].decode())
        f = self._fold(events, since)
        if target is not None:
            lacks = [c for c in f.columns if c not in target.schema.names]
            if lacks:
                raise ValueError(f"the target lacks the table's column(s) "
                                 f"{', '.join(lacks)}: give a result of apply_changes")
        self.last_stats = f.stats
        return f.scd1(target)


# what the fold reads of the envelope (SPEC §3), and the types it reads them as
NEEDS = {"op": pa.types.is_string, "commit_pos": pa.types.is_binary,
         "change_pos": pa.types.is_binary, "seq": pa.types.is_integer,
         "before": pa.types.is_struct, "after": pa.types.is_struct,
         "present": pa.types.is_struct, "_error": pa.types.is_string}


def _check_events(t: pa.Table) -> None:
    """A ValueError unless `t` holds what the fold reads, as the envelope types it."""
    bad = [n for n, ok in NEEDS.items()
           if n not in t.schema.names or not ok(t.schema.field(n).type)]
    if bad:
        raise ValueError(f"events must be one table's envelope as decode returns it, with "
                         f"{', '.join(NEEDS)} (present as a struct: flags='struct'); "
                         f"wrong or missing: {', '.join(bad)}")


def _table(events) -> pa.Table:
    if isinstance(events, pa.Table):
        return events
    if isinstance(events, pa.RecordBatch):
        return pa.Table.from_batches([events])
    batches = list(events)
    if not batches:
        raise ValueError("no events: an empty iterable of batches has no schema")
    return pa.Table.from_batches(batches)


def _chunk(col) -> pa.Array:
    return col.combine_chunks() if isinstance(col, pa.ChunkedArray) else col


class Folded:
    """The outcome of a fold: per key group g (events src[gstart[g]:gend[g] + 1], rows of the
    events table t, in key and log order), its last delete ld[g] (-1: none) and per column
    the row of t whose after value it takes (-1: none)."""

    def __init__(self, t, key, columns, key_cols, gstart, gend, src, dele, synthetic, ld,
                 values, sent, truncated, after_type, stats, high):
        self.t, self.key, self.columns = t, key, columns
        self.key_cols = key_cols
        self.gstart, self.gend, self.src, self.dele = gstart, gend, src, dele
        self.synthetic, self.ld = synthetic, ld
        self.values, self.sent = values, sent
        self.truncated, self.after_type, self.stats = truncated, after_type, stats
        self.high = high            # the position of the last event read (None: none)

    @property
    def exists(self) -> np.ndarray:
        """Per group: the key holds a row after the batch."""
        return ~self.dele[self.gend] if len(self.src) else np.zeros(0, bool)

    def _merged(self, groups: np.ndarray, fallback: pa.Table | None) -> dict:
        """Per column, the merged values of `groups` (fallback: the target's rows of those
        groups, aligned, used where the batch sent nothing and did not delete the key)."""
        after = _chunk(self.t.column("after"))
        out = {}
        for c in self.columns:
            rows = self.values[c][groups]
            vals = pc.struct_field(after, c).take(pa.array(np.where(rows >= 0, rows, 0)))
            none = pa.array(rows < 0)
            if fallback is not None:
                keep = pa.array((rows < 0) & (self.ld[groups] < 0))
                vals = pc.if_else(keep, fallback.column(c).combine_chunks(), vals)
                none = pa.array((rows < 0) & (self.ld[groups] >= 0))
            out[c] = pc.if_else(none, pa.nulls(len(rows), vals.type), vals)
        return out

    def _target_rows(self, target: pa.Table, groups: np.ndarray) -> pa.Table:
        """The target's rows of the keys of `groups`, aligned (null rows where absent)."""
        probe = pa.table([c.take(pa.array(self.gstart[groups])) for c in self.key_cols]
                         + [pa.array(np.arange(len(groups)))], names=self.key + ["__i"])
        got = probe.join(target.select(self.columns), keys=self.key, join_type="left outer",
                         use_threads=False)
        return got.sort_by("__i")

    def scd1(self, target: pa.Table | None) -> pa.Table:
        schema = pa.schema([pa.field(f.name, f.type) for f in self.after_type])
        groups = np.flatnonzero(self.exists)
        keep_target = None
        if target is not None and self.truncated is None:
            touched = pa.table([c.take(pa.array(self.gstart)) for c in self.key_cols],
                               names=self.key)
            keep_target = target.select(self.columns).join(
                touched, keys=self.key, join_type="left anti", use_threads=False)
        fallback = self._target_rows(target.select(self.columns), groups) \
            if target is not None and self.truncated is None and len(groups) else None
        merged = pa.table(self._merged(groups, fallback), schema=schema)
        parts = [merged] + ([keep_target.cast(schema)] if keep_target is not None else [])
        out = pa.concat_tables(parts)
        out = out.sort_by([(k, "ascending") for k in self.key]) if out.num_rows else out
        meta = {KEY: json.dumps(self.key).encode()}
        if self.high is not None:
            meta[POSITION] = position_text(self.high).encode()
        return out.replace_schema_metadata(meta)

    def net_events(self) -> pa.Table:
        t, g = self.t, np.arange(len(self.gstart))
        last = self.src[self.gend] if len(self.src) else self.gend
        out = t.take(pa.array(last))
        deleted = self.dele[self.gend] if len(self.src) else np.zeros(0, bool)
        merged = self._merged(g, None)
        after = pa.StructArray.from_arrays(list(merged.values()), fields=list(self.after_type),
                                           mask=pa.array(deleted))
        sent = {c: self.sent[c] | (self.ld >= 0) for c in self.columns}
        present_type = t.schema.field("present").type
        present = pa.StructArray.from_arrays(
            [pa.array(sent[f.name]) for f in present_type], fields=list(present_type),
            mask=pa.array(deleted))
        op = pc.if_else(pa.array(deleted), "d", out.column("op").combine_chunks())
        cols = {"op": op, "after": after, "present": present}
        net = pa.table([cols.get(f.name, out.column(f.name)) for f in t.schema],
                       schema=t.schema)
        # a truncate in the batch comes first: the target's rows go, then the keys' events
        return net if self.truncated is None else pa.concat_tables([self.truncated, net])


def net_changes(events, key=None, since=None) -> pa.Table:
    """Per key, the one event that takes it across the batch (SPEC §9)."""
    return Applier(key=key).net_changes(events, since=since)


def apply_changes(events, key=None, scd: int = 1, track=None, target=None, since=None):
    """The table the events describe (SCD type 1: its live rows), from `target` on."""
    return Applier(key=key, scd=scd, track=track).apply(events, target=target, since=since)
