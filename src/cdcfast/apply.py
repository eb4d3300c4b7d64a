"""Change events applied to the tables they describe (SPEC §9): `net_changes` and
`apply_changes` (SCD type 1 and 2) over one table's envelope, as `decode` returns it.

The fold is the kernel native/cdcfast/_apply.pyx (its plain-Python twin, _apply_py, when the
extension is missing); no Python object is made per event:

1. rows with `_error` and rows at or below `since` (replays of an earlier call) are set
   aside (counted);
2. the rest are taken in log order (`commit_pos`, `change_pos`, `seq`, bytewise, nulls first,
   ties in input order) — sorted only when they are not in it already;
3. their keys (after's, before's for a delete, and the old key of an update that moves it)
   and the target's are numbered (`group_ids`);
4. one walk in log order keeps, per key, whether a row exists and per column which value it
   holds: an event skips as a replay when its key's last applied event is at its position; a
   delete empties the key; an upsert writes the columns `present` says it sent; a moved key
   is deleted first; a truncate empties every key (a new epoch);
5. the values are read at the end, one Arrow take per column (`row_values`).

SCD type 2 walks twice: the first walk records what each update's tracked columns held, Arrow
compares that with what it sends, the second opens a version where one changed.
"""
from __future__ import annotations

import importlib
import json
import os

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

try:    # by name: the compiled module is no module the import graph (lint-imports) can see
    _kernel = importlib.import_module(f"{__package__}._apply")
except ImportError as _missing:  # pragma: no cover - the fallback test swaps the twin in
    if os.environ.get("CDCFAST_REQUIRE_NATIVE", "") not in ("", "0"):
        raise ImportError("cdcfast's apply kernel is not built; CDCFAST_REQUIRE_NATIVE "
                          "is set") from _missing
    from . import _apply_py as _kernel

POSITION = b"cdcfast.position"
KEY = b"cdcfast.key"
TABLE = b"cdcfast.table"
LOG = ("commit_pos", "change_pos", "seq")
STATS = ("events", "applied", "skipped_errors", "skipped_no_key", "replays", "deletes",
         "truncates")
SCD2 = ("__start_at", "__end_at", "__start_pos", "__end_pos")
# per op code of _apply.op_codes (c r u d t, anything else): UPSERT, DELETE, TRUNCATE, other
KINDS = np.array([0, 0, 0, 1, 2, 3], np.uint8)
EXISTS, DELETED = 1, 2                               # a key's flags after the walk


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


def _bools(arr) -> np.ndarray:
    if arr.null_count:
        arr = pc.fill_null(arr, False)
    return np.asarray(arr.to_numpy(zero_copy_only=False), dtype=bool)


def _chunk(col) -> pa.Array:
    """One array of a column (a copy only when it has several chunks)."""
    if not isinstance(col, pa.ChunkedArray):
        return col
    return col.chunk(0) if col.num_chunks == 1 else col.combine_chunks()


def _bare(t: pa.DataType) -> bool:
    """A type whose values Arrow takes from its buffers after the validity (fixed width or
    offsets and data, no children)."""
    return (pa.types.is_integer(t) or pa.types.is_floating(t) or pa.types.is_boolean(t)
            or pa.types.is_temporal(t) or pa.types.is_decimal(t)
            or pa.types.is_fixed_size_binary(t) or pa.types.is_string(t)
            or pa.types.is_binary(t) or pa.types.is_large_string(t)
            or pa.types.is_large_binary(t))


def _take(arr, idx: np.ndarray, mask: np.ndarray | None = None) -> pa.Array:
    """arr.take(idx) — idx: rows of arr (int32 or int64), none null — null where `mask` (a
    bitmap over idx) has a 0. Arrow's take is several times slower on values with nulls
    than on values without: the values are taken bare and their validity gathered by the
    kernel (take_validity); a struct is its validity and its children, each so taken."""
    arr = _chunk(arr)
    t, n = arr.type, len(idx)
    if mask is not None and len(arr) == 0:       # rows of nothing: every one masked
        return pa.nulls(n, t)
    if arr.null_count == 0 and mask is None and not pa.types.is_struct(t):
        return arr.take(idx)
    if pa.types.is_struct(t) or _bare(t):
        valid, nulls = _kernel.take_validity(arr, idx, mask)
        bitmap = pa.py_buffer(valid) if nulls else None
        if pa.types.is_struct(t):
            children = [_take(arr.field(i), idx) for i in range(t.num_fields)]
            return pa.Array.from_buffers(t, n, [bitmap], null_count=nulls, children=children)
        bufs = arr.buffers()
        bare = pa.Array.from_buffers(t, len(arr), [None] + bufs[1:], null_count=0,
                                     offset=arr.offset)
        out = bare.take(idx)
        return pa.Array.from_buffers(t, n, [bitmap] + out.buffers()[1:], null_count=nulls,
                                     offset=out.offset)
    if mask is None:
        return arr.take(idx)
    absent = np.unpackbits(mask, count=n, bitorder="little") == 0
    return arr.take(pa.array(idx, mask=absent))


def _keyable(arr: pa.Array) -> pa.Array:
    """The key column as group_ids reads it: whole-byte fixed width, or offsets and data."""
    t = arr.type
    if pa.types.is_dictionary(t):
        return _keyable(arr.dictionary_decode())
    if pa.types.is_boolean(t):
        return pc.cast(arr, pa.int8())
    if pa.types.is_string_view(t):
        return pc.cast(arr, pa.large_string())
    if pa.types.is_binary_view(t):
        return pc.cast(arr, pa.large_binary())
    if pa.types.is_string(t) or pa.types.is_binary(t) or pa.types.is_large_string(t) \
            or pa.types.is_large_binary(t):
        return arr
    try:
        width = t.bit_width
    except ValueError:
        width = 0
    if width and width % 8 == 0:
        return arr
    raise ValueError(f"a key column of type {t} cannot be a key")


def _group_ids(parts: list) -> tuple:
    """Per row of the concatenated parts (each a list of key columns), its key's group (in
    order of first appearance; -1: a null key column), and the number of groups."""
    if len(parts) == 1:
        cols = [_keyable(_chunk(c)) for c in parts[0]]
    else:
        cols = [_keyable(pa.concat_arrays([_keyable(_chunk(q[i])) for q in parts]))
                for i in range(len(parts[0]))]
    return _kernel.group_ids(cols)


# -- the fold -------------------------------------------------------------------------------
class Applier:
    """Applies one table's change events (SPEC §9); `last_stats` after each call."""

    def __init__(self, key=None, scd: int = 1, track=None):
        if scd not in (1, 2):
            raise ValueError(f"scd={scd!r}: SCD type 1 (current rows) or 2 (every version)")
        if track is not None and scd != 2:
            raise ValueError("track=… chooses the columns that open an SCD type 2 version; "
                             "it has no meaning for scd=1")
        self.key = None if key is None else ([key] if isinstance(key, str) else list(key))
        self.scd = scd
        self.track = None if track is None else ([track] if isinstance(track, str)
                                                 else list(track))
        self.last_stats = dict.fromkeys(STATS, 0)

    def _key_of(self, events: pa.Table) -> list:
        if self.key:
            return self.key
        meta = events.schema.metadata or {}
        if KEY in meta:
            return list(json.loads(meta[KEY]))
        raise ValueError("key=… names the table's key columns (the events carry no "
                         "cdcfast.key: their catalog table names none)")

    def net_changes(self, events, since=None) -> pa.Table:
        """Per key, one event from where the key was before the batch to where it is after
        it (images merged, `op` the last event's), in the envelope's schema; after the
        batch's last truncate, which comes first when there is one (it empties the target,
        and the keys' events are those after it)."""
        f = _Fold(_table(events), self._key_of, since)
        f.walk()
        f._count()
        self.last_stats = f.stats
        return f.net_events()

    def apply(self, events, target: pa.Table | None = None, since=None) -> pa.Table:
        """The table's rows after the events, continuing from `target` (a result of this
        method), skipping what it already holds (`since`: its position unless given).
        SCD type 1: the live rows; type 2: every version of every key."""
        if since is None and target is not None:
            meta = target.schema.metadata or {}
            if POSITION in meta:
                since = parse_position(meta[POSITION].decode())
        f = _Fold(_table(events), self._key_of, since)
        if target is not None:
            need = f.columns + (list(SCD2) if self.scd == 2 else [])
            lacks = [c for c in need if c not in target.schema.names]
            if lacks:
                raise ValueError(f"the target lacks the table's column(s) "
                                 f"{', '.join(lacks)}: give a result of apply_changes"
                                 + (f"(scd={self.scd})" if self.scd == 2 else ""))
        if self.scd == 2:
            out = f.scd2(target, self.track)
        else:
            f.walk(target)
            f._count()
            out = f.scd1(target)
        self.last_stats = f.stats
        return out


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


class _Fold:
    """One table's events read for the walk (native/cdcfast/_apply.pyx): the ones that can
    be applied, in log order — per event its row of the table (`orig`), kind, whether its
    position is new, and its key columns."""

    def __init__(self, t: pa.Table, key_of, since):
        _check_events(t)
        self.t, self.key = t, key_of(t)
        self.after_type = t.schema.field("after").type
        self.columns = [f.name for f in self.after_type]
        missing = [k for k in self.key if k not in self.columns]
        if missing:
            raise ValueError(f"key column(s) {', '.join(missing)} not among the table's "
                             f"columns ({', '.join(self.columns)})")
        self.stats = stats = dict.fromkeys(STATS, 0)
        stats["events"] = t.num_rows
        ok = _bools(t.column("_error").is_null())
        stats["skipped_errors"] = int((~ok).sum())
        if since is not None:
            later = _later(t, since)
            stats["replays"] += int((ok & ~later).sum())
            ok &= later
        rows = None if ok.all() else np.flatnonzero(ok)
        pos = [_chunk(t.column(n)) for n in LOG]
        if rows is not None:
            pos = [p.take(pa.array(rows)) for p in pos]
        m = self.m = len(pos[0])
        if m >= (1 << 31) - 2:
            raise ValueError("at most 2**31 - 3 events in one call: apply them in batches")
        if not pa.types.is_int64(pos[2].type):
            pos[2] = pos[2].cast(pa.int64())
        order = None
        newpos = np.ones(m, np.uint8)
        if m > 1:
            newpos, ordered = _kernel.log_steps(*pos)
            if not ordered:
                order = pc.sort_indices(pa.table(pos, names=list(LOG)),
                                        sort_keys=[(n, "ascending", "at_start")
                                                   for n in LOG])
                pos = [p.take(order) for p in pos]
                newpos, _ = _kernel.log_steps(*pos)
        self.newpos = newpos
        # None when the events are the table's rows as they are (the common case: no copy)
        orig = None if rows is None else rows.astype(np.int64)
        if order is not None:
            at = order.to_numpy().astype(np.int64)
            orig = orig[at] if orig is not None else at
        self.orig = orig
        self.high = tuple(p[m - 1].as_py() for p in pos) if m else since

        def ordered(col):
            col = _chunk(col)
            return col.take(pa.array(orig)) if orig is not None else col

        code, self.kind = _kernel.op_codes(ordered(t.column("op")), KINDS)
        before, after = _chunk(t.column("before")), _chunk(t.column("after"))
        # an event's key: its before image's for a delete, else its after image's
        self.old_keys = [_keyable(ordered(pc.struct_field(before, k))) for k in self.key]
        self.new_keys = [_keyable(ordered(pc.struct_field(after, k))) for k in self.key]
        self.is_d = (self.kind == 1).view(np.uint8)
        # an update that moves its key deletes the old one first
        self.moved = _kernel.moved_keys(code, self.old_keys, self.new_keys)
        self.after = after

    def _groups(self, target: pa.Table | None, current: np.ndarray | None = None,
                ranked: bool = False):
        """Numbers the keys of the target's rows, the events and the moved keys' old values
        (once per fold); the target rows' groups are -1 where `current` is false. ranked:
        the keys may be numbered in any order (SCD type 2 orders its versions by group)."""
        m = self.m
        same = all(o.type == a.type for o, a in zip(self.old_keys, self.new_keys))
        if target is None and not len(self.moved) and same:
            # the keys read in place, each row from before or after: no column made
            gids, self.groups = _kernel.group_ids(self.new_keys, self.old_keys, self.is_d,
                                                  ranked=ranked)
        else:
            use = pa.array(self.is_d.view(bool))
            keys = [pc.if_else(use, o, a) for o, a in zip(self.old_keys, self.new_keys)]
            old = [o.take(pa.array(self.moved)) for o in self.old_keys]
            parts = ([[target.column(k) for k in self.key]] if target is not None else []) \
                + [keys] + ([old] if len(self.moved) else [])
            gids, self.groups = _group_ids(parts)
        T = target.num_rows if target is not None else 0
        self.target_all = gids[:T]
        self.target_group = gids[:T] if current is None else np.where(current, gids[:T], -1)
        self.gid = gids[T:T + m]
        self.ogid = None
        if len(self.moved):
            self.ogid = _kernel.empty(m, np.int32, -1)
            self.ogid[self.moved] = gids[T + m:]
        self.masks = _kernel.present_masks(*self._present_columns())

    def walk(self, target: pa.Table | None = None, **scd2):
        """Runs the walk from the target's rows (see _apply.walk for the SCD2 arguments);
        leaves its per-key outcome on self, and returns the number of versions."""
        if not hasattr(self, "gid"):                 # SCD type 1, net: any numbering
            self._groups(target, ranked=True)
        # from Arrow's pool: a cache line holds two keys' heads; only the keys a partial
        # image reaches write their row of vals
        head = _kernel.empty((self.groups, _kernel.HEAD), np.int32)
        vals = _kernel.empty((self.groups, len(self.columns)), np.int32)
        counts = np.zeros(len(_kernel.STATS), np.int64)
        nver = _kernel.walk(self.gid, self.ogid, self.kind, self.newpos, self.masks,
                            self.groups, self.target_group, head, vals, counts, **scd2)
        self.head, self.vals = head, vals
        self.last, self.flags = head[:, 1], head[:, 4]
        got = dict(zip(_kernel.STATS, counts.tolist()))
        self.last_truncate = got.pop("last_truncate")
        self.counts = got
        return nver

    def _count(self):
        for name, n in self.counts.items():
            self.stats[name] += n

    def row(self, k):
        """The events' table row(s) of event(s) k."""
        return k if self.orig is None else self.orig[k]

    def _present_columns(self) -> tuple:
        """present_masks's arguments: the `present` struct, per column its field index (-1
        where every event sent it), the events' rows and their number."""
        present = _chunk(self.t.column("present"))
        fields = [present.type.get_field_index(c) for c in self.columns]
        out = []
        for c, i in zip(self.columns, fields):
            f = present.field(i) if i >= 0 else None
            out.append(-1 if f is None or f.null_count == len(f) or f.false_count == 0 else i)
        return present, out, self.orig, self.m

    def values(self, c: int, idx: np.ndarray, target: pa.Table | None = None) -> pa.Array:
        """Column c's values of the walk's value indexes `idx` (k >= 0: event k's after
        value; -2 - i: the target's row i; -1: null)."""
        ev = idx >= 0
        field = self.after_type.field(c)
        if ev.any():
            rows = pa.array(self.row(np.where(ev, idx, 0)), mask=~ev)
            out = pc.struct_field(self.after, self.columns[c]).take(rows)
        else:
            out = pa.nulls(len(idx), field.type)
        if target is not None:
            tr = idx <= -2
            if tr.any():
                got = target.column(self.columns[c]).take(
                    pa.array(np.where(tr, -2 - idx, 0), mask=~tr))
                out = pc.if_else(pa.array(tr), _chunk(got).cast(out.type), out)
        return out

    def row_values(self, groups: np.ndarray, target: pa.Table | None = None,
                   reset: np.ndarray | None = None, sent: list | None = None) -> list:
        """Every column's values of the keys `groups` after the walk (as `values`, read
        from the keys' records at once); with `reset` (per group, its row started from
        nulls), `sent` gets per column the net event's `present` flags."""
        rows = _kernel.value_rows(self.head, self.vals, groups.astype(np.int64), self.orig,
                                  target is not None,
                                  None if reset is None else reset.astype(np.uint8))
        if sent is not None:
            sent.extend(f for *_, f in rows)
        out = []
        for c, (ev, ev_ok, tg, _) in enumerate(rows):
            name, typ = self.columns[c], self.after_type.field(c).type
            # the struct's child as it is: an event whose after image is null has no key,
            # so it holds no key's value
            vals = _take(self.after.field(c), ev, ev_ok)
            if tg is not None and tg.null_count < len(tg):
                got = _chunk(target.column(name)).take(tg).cast(typ)
                vals = pc.if_else(tg.is_valid(), got, vals)
            out.append(vals)
        return out

    def _metadata(self) -> dict:
        meta = {KEY: json.dumps(self.key).encode()}
        if self.high is not None:
            meta[POSITION] = position_text(self.high).encode()
        return meta

    def _by_last(self, live: bool) -> np.ndarray:
        """The groups ordered by their last event (_apply.by_last): live, those whose row
        exists, the target's untouched ones first; else those an event reached. The
        values then come from the events' columns in ascending rows, not at random."""
        return _kernel.by_last(self.gid, self.ogid, self.head, live)

    def scd1(self, target: pa.Table | None = None) -> pa.Table:
        """The live rows: the target's rows no event touched, in the target's order, then
        the others in the order of their last event."""
        live = self._by_last(True)
        schema = pa.schema([pa.field(f.name, f.type) for f in self.after_type])
        cols = self.row_values(live, target)
        return pa.table(cols, schema=schema).replace_schema_metadata(self._metadata())

    def _sent(self, c: int) -> np.ndarray:
        """Per event: it sent column c."""
        if self.masks is None:
            return np.ones(self.m, bool)
        return ((self.masks[:, c // 64] >> np.uint64(c % 64)) & np.uint64(1)).astype(bool)

    def _at(self, name: str, idx: np.ndarray, target, target_name: str, typ) -> pa.Array:
        """The envelope column `name` at events idx (k >= 0), the target's `target_name` at
        rows -2 - idx (idx <= -2), null at -1."""
        ev = idx >= 0
        col = _chunk(self.t.column(name))
        out = col.take(pa.array(self.row(np.where(ev, idx, 0)) if self.m else
                                np.zeros(len(idx), np.int64), mask=~ev)) \
            if ev.any() else pa.nulls(len(idx), col.type)
        out = out.cast(typ)
        tr = idx <= -2
        if target is not None and tr.any():
            got = _chunk(target.column(target_name)).take(
                pa.array(np.where(tr, -2 - idx, 0), mask=~tr)).cast(typ)
            out = pc.if_else(pa.array(tr), got, out)
        return out

    def scd2(self, target: pa.Table | None, track) -> pa.Table:
        """Every version of every key (SPEC §9): two walks — the first records, for each
        upsert, the values its tracked columns had before it; between them Arrow compares
        those with the values it sends; the second opens a version where one changed."""
        columns = self.columns
        track = [c for c in columns if c not in self.key] if track is None else track
        bad = [c for c in track if c not in columns]
        if bad:
            raise ValueError(f"track=: {', '.join(bad)} not among the table's columns "
                             f"({', '.join(columns)})")
        current = None
        if target is not None:
            current = _bools(pc.and_(target.column("__end_at").is_null(),
                                     target.column("__end_pos").is_null()))
        self._groups(target, current)
        m, cols = self.m, np.array([columns.index(c) for c in track], np.int64)
        prev = np.full((len(cols), m), -1, np.int32)
        newrow = np.ones(m, np.uint8)
        self.walk(target, track=cols, prev=prev, newrow=newrow)
        changed = np.zeros(m, bool)
        upsert = (self.kind == 0) & (newrow == 0)
        k = np.flatnonzero(upsert)
        for j, c in enumerate(cols):
            sent = self._sent(int(c))[k]
            now = self.values(int(c), k.astype(np.int32))
            was = self.values(int(c), prev[j, k], target)
            same = pc.or_(pc.fill_null(pc.equal(now, was), False),
                          pc.and_(now.is_null(), was.is_null()))
            changed[k] |= sent & ~_bools(same)
        T = target.num_rows if target is not None else 0
        size = T + m
        ver = {"ver_group": np.empty(size, np.int64), "ver_start": np.empty(size, np.int64),
               "ver_end": np.empty(size, np.int64),
               "ver_values": np.empty((size, len(columns)), np.int32)}
        n = self.walk(target, changed=changed.astype(np.uint8), **ver)
        self._count()
        group = ver["ver_group"][:n]
        order = np.argsort(group, kind="stable")
        start, end = ver["ver_start"][:n][order], ver["ver_end"][:n][order]
        values = ver["ver_values"][:n][order]
        ts, posb = pa.timestamp("us", "UTC"), pa.binary()
        out = [self.values(c, np.ascontiguousarray(values[:, c]), target)
               for c in range(len(columns))]
        out += [self._at("commit_ts", start, target, "__start_at", ts),
                self._at("commit_ts", end, target, "__end_at", ts),
                self._at("commit_pos", start, target, "__start_pos", posb),
                self._at("commit_pos", end, target, "__end_pos", posb)]
        schema = pa.schema([pa.field(f.name, f.type) for f in self.after_type]
                           + [pa.field("__start_at", ts), pa.field("__end_at", ts),
                              pa.field("__start_pos", posb), pa.field("__end_pos", posb)])
        versions = pa.table(out, schema=schema)
        if target is not None and not current.all():
            # the target's closed versions stay as they are, before their key's new ones
            closed = np.flatnonzero(~current)
            old = target.select(schema.names).take(pa.array(closed)).cast(schema)
            both = pa.concat_tables([old, versions])
            keys = np.concatenate([self.target_all[closed], group[order]])
            versions = both.take(pa.array(np.argsort(keys, kind="stable")))
        return versions.replace_schema_metadata(self._metadata())

    def net_events(self) -> pa.Table:
        t = self.t
        g = self._by_last(False)
        rebuilt = ("after", "present")
        rows = np.asarray(self.row(self.last[g]))
        out = {n: _take(t.column(n), rows) for n in t.column_names if n not in rebuilt}
        ops = out["op"]
        deleted = (self.flags[g] & EXISTS) == 0
        reset = (self.flags[g] & DELETED) != 0
        mask = pa.array(deleted)
        given = []
        after = pa.StructArray.from_arrays(self.row_values(g, reset=reset, sent=given),
                                           fields=list(self.after_type), mask=mask)
        present_type = t.schema.field("present").type
        sent = dict(zip(self.columns, given))
        present = pa.StructArray.from_arrays([sent[f.name] for f in present_type],
                                             fields=list(present_type), mask=mask)
        op = pc.if_else(mask, "d", ops)
        cols = {"op": op, "after": after, "present": present}
        net = pa.table([cols[f.name] if f.name in cols else out[f.name]
                        for f in t.schema], schema=t.schema)
        if self.last_truncate < 0:
            return net
        # the batch's last truncate comes first: the target's rows go, then the keys' events
        return pa.concat_tables([t.slice(int(self.row(self.last_truncate)), 1), net])


def net_changes(events, key=None, since=None) -> pa.Table:
    """Per key, the one event that takes it across the batch (SPEC §9)."""
    return Applier(key=key).net_changes(events, since=since)


def apply_changes(events, key=None, scd: int = 1, track=None, target=None, since=None):
    """The table the events describe (SCD type 1: its live rows), from `target` on."""
    return Applier(key=key, scd=scd, track=track).apply(events, target=target, since=since)
