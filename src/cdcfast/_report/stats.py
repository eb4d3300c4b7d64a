"""What a report shows, gathered in one pass over the decoded batches of an input.

Every figure is computed with pyarrow compute and numpy a batch at a time. State that grows
with the data is bounded: counts keyed by time or lag keep at most CAP distinct keys (past
it, the keys are rounded to a coarser unit, and the report says so). Transactions and
positions keep one row per distinct txid or position, compacted as they come. So a
multi-GB input, read through `Decoder.read_tables`, stays in bounded memory.
"""
from __future__ import annotations

import re

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from ..errors import PLACE

OPS = ("c", "u", "d", "r", "t")         # the change ops, in the charts' order
SECOND = 1_000_000                      # µs
CAP = 1 << 17                           # distinct keys a CountMap keeps exactly
COMPACT = 1 << 18                       # rows a Groups holds before it first folds them
LIMIT = 1 << 21                         # distinct keys a Groups keeps: past them, it stops
EXAMPLES = 3                            # examples kept per error kind, per table
KINDS = 1000                            # error kinds kept per table: the rest, one kind
OTHER_KINDS = "(other kinds)"
ORDER_EXAMPLES = 5                      # backward positions shown per table

# source fields that say when the change was captured (a later time than its commit):
# IBM's MQ put time and Debezium's processing time (its envelope ts_ms)
CAPTURE_TIMES = {"put_ts": "put on the queue (source.put_ts) − commit_ts",
                 "processed_ts": "processed by the connector (source.processed_ts) − commit_ts"}

# an error text's value (quoted by errors.show_value, or X'…' hex)
_VALUE = r"(?:\bX)?'(?:[^'\\]|\\.)*'…?|\"(?:[^\"\\]|\\.)*\"…?"


class CountMap:
    """Counts of int64 keys. Exact up to CAP distinct keys; past that the keys are divided
    by ten (floored) until they fit, and `scale` says by how much they were."""

    def __init__(self, cap: int | None = None):
        self.cap = CAP if cap is None else cap
        self.scale = 1
        self.keys = np.empty(0, np.int64)
        self.counts = np.empty(0, np.int64)
        self._pending = []
        self._n = 0

    def add(self, keys: np.ndarray) -> None:
        if not len(keys):
            return
        self._pending.append(np.floor_divide(keys, self.scale) if self.scale > 1 else keys)
        self._n += len(keys)
        if self._n > self.cap:
            self._fold()

    def _fold(self) -> None:
        keys = np.concatenate([self.keys] + self._pending)
        counts = np.concatenate([self.counts] + [np.ones(len(p), np.int64)
                                                 for p in self._pending])
        self._pending, self._n = [], 0
        self.keys, self.counts = _summed(keys, counts)
        while len(self.keys) > self.cap:
            self.scale *= 10
            self.keys, self.counts = _summed(np.floor_divide(self.keys, 10), self.counts)

    def items(self) -> tuple[np.ndarray, np.ndarray]:
        """(keys, counts), keys ascending, in units of `scale`."""
        if self._pending:
            self._fold()
        return self.keys, self.counts

    @property
    def total(self) -> int:
        return int(self.items()[1].sum())

    def merged(self, other: "CountMap") -> "CountMap":
        out = CountMap(self.cap)
        scale = max(self.scale, other.scale)
        parts = [(k * s // scale if s != scale else k, c)
                 for (k, c), s in ((self.items(), self.scale), (other.items(), other.scale))]
        out.scale = scale
        out.keys, out.counts = _summed(np.concatenate([p[0] for p in parts]),
                                       np.concatenate([p[1] for p in parts]))
        return out

    def quantile(self, q: float) -> int | None:
        """The value at rank floor(q × (n − 1)) of the sorted values (pyarrow's quantile
        with interpolation="lower"), in the keys' unit × scale; None when empty."""
        keys, counts = self.items()
        n = int(counts.sum())
        if n == 0:
            return None
        rank = int(q * (n - 1))
        return int(keys[np.searchsorted(np.cumsum(counts), rank + 1)]) * self.scale


def _summed(keys: np.ndarray, counts: np.ndarray):
    """Equal keys' counts added: (unique keys ascending, their counts)."""
    if not len(keys):
        return keys.astype(np.int64), counts.astype(np.int64)
    order = np.argsort(keys, kind="stable")
    k, c = keys[order], counts[order]
    starts = np.flatnonzero(np.concatenate([[True], k[1:] != k[:-1]]))
    return k[starts], np.add.reduceat(c, starts)


class Groups:
    """Rows counted by key columns (txid; a position pair), with the earliest of a time
    column. The batches' partial counts are folded together once they hold COMPACT rows,
    then each time they double. Past LIMIT distinct keys no more rows are counted (`full`;
    `rows`: the rows that were), so memory stays bounded."""

    def __init__(self, keys: list[str], time: str | None = None):
        self.keys = keys
        self.time = time
        self._parts = []
        self._n = 0
        self._fold_at = COMPACT
        self.rows = 0
        self.full = False

    def _aggs(self, count: str):
        aggs = [(count, "sum")]
        if self.time:
            aggs.append((self.time, "min"))
        return aggs

    def add(self, table: pa.Table) -> None:
        if self.full or not table.num_rows:
            return
        g = table.group_by(self.keys, use_threads=False).aggregate(
            [([], "count_all")] + ([(self.time, "min")] if self.time else []))
        g = g.rename_columns([_plain(n) for n in g.column_names])
        self._parts.append(g)
        self._n += g.num_rows
        self.rows += table.num_rows
        if self._n > self._fold_at:
            self._fold()
            self._fold_at = max(COMPACT, 2 * self._n)
            self.full = self._n > LIMIT

    def _fold(self) -> None:
        if len(self._parts) <= 1:
            return
        t = pa.concat_tables(self._parts)
        g = t.group_by(self.keys, use_threads=False).aggregate(self._aggs("count_all"))
        g = g.rename_columns([_plain(n) for n in g.column_names])
        self._parts = [g]
        self._n = g.num_rows

    def table(self) -> pa.Table | None:
        """One row per key: the keys, `count_all`, and the earliest time; None when no row
        came."""
        self._fold()
        return self._parts[0] if self._parts else None

    def merged(self, other: "Groups") -> "Groups":
        out = Groups(self.keys, self.time)
        out._parts = [p for g in (self, other) for p in ([g.table()] if g.table() else [])]
        out._n = sum(p.num_rows for p in out._parts)
        out._fold()
        out.rows = self.rows + other.rows
        out.full = self.full or other.full
        return out


def _plain(name: str) -> str:
    """An aggregate's column name without its function's suffix."""
    for suffix in ("_sum", "_min"):
        if name.endswith(suffix):
            return name[:-len(suffix)]
    return name


class TableStats:
    """What one table (or the records that name none: key None) of one input gave."""

    def __init__(self, name, per_change: bool = True):
        self.name = name
        self.per_change = per_change                    # (Format.POSITION_PER_CHANGE)
        self.events = 0
        self.ops = dict.fromkeys(OPS, 0)
        self.other_ops = {}
        self.times = {op: CountMap() for op in OPS}     # commit second -> events
        self.no_time = 0
        self.first_ts = self.last_ts = None             # µs since the epoch
        self.txns = Groups(["txid"], "ts")
        self.lags = {}                                  # label -> CountMap of µs
        self.errors = 0
        self.corrupt = 0
        self.error_kinds = {}                           # kind -> count
        self.error_examples = {}                        # kind -> [(text, message, byte, raw)]
        self.backwards = 0
        self.backward_examples = []                     # (seq, previous pos, pos, commit_ts)
        self._last_pos = None
        self.positions = Groups(["commit_pos", "change_pos"])
        self.columns = []                               # names, in the table's order
        self.nulls = None                               # per column: null values
        self.values = None                              # per column: values carried
        self.updates = 0
        self.changed = None                             # per column: updates that changed it

    # -- one batch ---------------------------------------------------------------------------
    def add(self, batch: pa.RecordBatch) -> None:
        n = batch.num_rows
        if not n:
            return
        self.events += n
        op = batch.column("op")
        for row in pc.value_counts(op).to_pylist():
            o = row["values"]
            if o in self.ops:
                self.ops[o] += row["counts"]
            else:
                self.other_ops[o] = self.other_ops.get(o, 0) + row["counts"]
        ts = batch.column("commit_ts")
        self._times(op, ts)
        txid = batch.column("txid")
        if txid.null_count < n:
            t = pa.table({"txid": txid, "ts": ts.cast(pa.int64())})
            self.txns.add(t.filter(pc.is_valid(txid)))
        self._lags(batch, ts)
        self._errors(batch)
        self._order(batch)
        self._images(batch, op)

    def _times(self, op, ts) -> None:
        us = ts.cast(pa.int64())
        self.no_time += us.null_count
        if us.null_count < len(us):
            lo, hi = pc.min_max(us).values()
            lo, hi = lo.as_py(), hi.as_py()
            self.first_ts = lo if self.first_ts is None else min(self.first_ts, lo)
            self.last_ts = hi if self.last_ts is None else max(self.last_ts, hi)
        seconds = _floor_div(us, SECOND)
        for o in OPS:
            sel = pc.and_(pc.equal(op, o), pc.is_valid(us))
            if pc.any(sel).as_py():
                self.times[o].add(np.asarray(seconds.filter(sel)))

    def _lags(self, batch, ts) -> None:
        change = batch.column("change_ts")
        pairs = [("commit_ts − change_ts", ts, change)]
        src = batch.column("source")
        if isinstance(src.type, pa.StructType):
            for name, label in CAPTURE_TIMES.items():
                if src.type.get_field_index(name) >= 0:
                    pairs.append((label, src.field(name), ts))
        for label, later, earlier in pairs:
            d = pc.subtract(later.cast(pa.int64()), earlier.cast(pa.int64()))
            if d.null_count == len(d):
                continue
            self.lags.setdefault(label, CountMap()).add(np.asarray(d.drop_null()))

    def _errors(self, batch) -> None:
        err = batch.column("_error")
        if err.null_count == len(err):
            return
        has = pc.is_valid(err)
        self.errors += int(pc.sum(has).as_py())
        raw = batch.column("_corrupt_record")
        self.corrupt += len(raw) - raw.null_count
        texts = err.filter(has)
        kinds = error_kinds(texts)
        rows = np.flatnonzero(np.asarray(has))
        for row in pc.value_counts(kinds).to_pylist():
            k = row["values"]
            if k not in self.error_kinds and len(self.error_kinds) >= KINDS:
                self.error_kinds[OTHER_KINDS] = \
                    self.error_kinds.get(OTHER_KINDS, 0) + row["counts"]
                continue
            self.error_kinds[k] = self.error_kinds.get(k, 0) + row["counts"]
            have = self.error_examples.setdefault(k, [])
            if len(have) >= EXAMPLES:
                continue
            at = np.flatnonzero(np.asarray(pc.equal(kinds, k)))[:EXAMPLES - len(have)]
            for i in at:
                text = texts[int(i)].as_py()
                message, byte = error_place(text)
                have.append((text, message, byte, raw[int(rows[i])].as_py()))

    def _order(self, batch) -> None:
        pos = batch.column("commit_pos")
        n = len(pos)
        if pos.null_count < n:
            # each position against the last one before it (a null one skipped)
            pos = pos.cast(pa.binary())
            prev = pc.fill_null_forward(pa.concat_arrays(
                [pa.array([self._last_pos], pa.binary()), pos])).slice(0, n)
            back = pc.fill_null(pc.less(pos, prev), False)
            nb = int(pc.sum(back).as_py() or 0)
            if nb:
                self.backwards += nb
                if len(self.backward_examples) < ORDER_EXAMPLES:
                    seq = batch.column("seq")
                    ts = batch.column("commit_ts")
                    for i in np.flatnonzero(np.asarray(back))[:ORDER_EXAMPLES]:
                        i = int(i)
                        self.backward_examples.append(
                            (seq[i].as_py(), prev[i].as_py(), pos[i].as_py(), ts[i].as_py()))
                    del self.backward_examples[ORDER_EXAMPLES:]
            valid = pos.drop_null()
            if len(valid):
                self._last_pos = valid[len(valid) - 1].as_py()
        change = batch.column("change_pos")
        if self.per_change and change.null_count < n:
            t = pa.table({"commit_pos": pos, "change_pos": change.cast(pa.binary())})
            self.positions.add(t.filter(pc.is_valid(change)))

    def _images(self, batch, op) -> None:
        after = batch.column("after")
        if not isinstance(after.type, pa.StructType) or after.type.num_fields == 0:
            return
        if self.nulls is None:
            self.columns = [f.name for f in after.type]
            k = len(self.columns)
            self.nulls, self.values, self.changed = (np.zeros(k, np.int64) for _ in range(3))
        before, present, changed = (batch.column(c) for c in ("before", "present", "changed"))
        is_d = pc.equal(op, "d")
        carries = pc.is_in(op, value_set=pa.array(["c", "u", "r"]))
        is_u = pc.equal(op, "u")
        self.updates += int(pc.sum(is_u).as_py() or 0)
        for j, name in enumerate(self.columns):
            if after.type.get_field_index(name) < 0:
                continue
            pres = pc.fill_null(present.field(name), False) \
                if isinstance(present.type, pa.StructType) else None
            for img, sel in ((after, carries), (before, is_d)):
                if not isinstance(img.type, pa.StructType):
                    continue
                mask = pc.fill_null(sel, False) if pres is None else \
                    pc.and_(pc.fill_null(sel, False), pres)
                self.values[j] += int(pc.sum(mask).as_py() or 0)
                self.nulls[j] += int(pc.sum(pc.and_(mask, pc.is_null(img.field(name))))
                                     .as_py() or 0)
            if isinstance(changed.type, pa.StructType):
                self.changed[j] += int(pc.sum(pc.and_(pc.fill_null(is_u, False),
                                                      pc.fill_null(changed.field(name),
                                                                   False))).as_py() or 0)

    # -- what the page reads -----------------------------------------------------------------
    def transactions(self) -> pa.Table | None:
        return self.txns.table()

    def duplicates(self) -> pa.Table | None:
        """Positions (commit_pos, change_pos) met more than once, most often first."""
        t = self.positions.table() if self.per_change else None
        if t is None:
            return None
        d = t.filter(pc.greater(t.column("count_all"), 1))
        return d.sort_by([("count_all", "descending")])

    def merged(self, other: "TableStats", name) -> "TableStats":
        """Two tables' figures as one (an input's all-tables view): counts, times, lags,
        transactions and errors add up; log order and columns stay per table."""
        out = TableStats(name, self.per_change)
        out.events = self.events + other.events
        out.ops = {o: self.ops[o] + other.ops[o] for o in OPS}
        out.other_ops = dict(self.other_ops)
        for o, c in other.other_ops.items():
            out.other_ops[o] = out.other_ops.get(o, 0) + c
        out.times = {o: self.times[o].merged(other.times[o]) for o in OPS}
        out.no_time = self.no_time + other.no_time
        firsts = [t for t in (self.first_ts, other.first_ts) if t is not None]
        lasts = [t for t in (self.last_ts, other.last_ts) if t is not None]
        out.first_ts = min(firsts) if firsts else None
        out.last_ts = max(lasts) if lasts else None
        out.txns = self.txns.merged(other.txns)
        for label in set(self.lags) | set(other.lags):
            a, b = self.lags.get(label), other.lags.get(label)
            out.lags[label] = a.merged(b) if a and b else (a or b)
        out.errors = self.errors + other.errors
        out.corrupt = self.corrupt + other.corrupt
        for src in (self, other):
            for k, c in src.error_kinds.items():
                out.error_kinds[k] = out.error_kinds.get(k, 0) + c
                have = out.error_examples.setdefault(k, [])
                have.extend(src.error_examples.get(k, [])[:EXAMPLES - len(have)])
        out.backwards = self.backwards + other.backwards
        return out


def _floor_div(us: pa.Array, unit: int) -> pa.Array:
    """µs (int64, nulls kept) floored to whole `unit`s, as numpy would."""
    q = pc.divide(us, unit)                 # truncates toward zero
    neg = pc.and_(pc.less(us, 0), pc.not_equal(pc.multiply(q, unit), us))
    return pc.if_else(neg, pc.subtract(q, 1), q)


def error_kinds(texts: pa.Array) -> pa.Array:
    """Each error text without its place and its value (the first quoted text or X'…'):
    ``after.SALARY: … is not DECIMAL(9,2)``, the same for every record that fails the same
    way."""
    t = pc.replace_substring_regex(texts, pattern=PLACE, replacement="")
    return pc.replace_substring_regex(t, pattern=_VALUE, replacement="…", max_replacements=1)


def split_kind(kind: str) -> tuple[str, str]:
    """(field, reason) of an error kind: the field before the first ': ' (none: '')."""
    field, sep, reason = kind.partition(": ")
    return (field, reason) if sep else ("", kind)


def error_place(text: str) -> tuple[int | None, int | None]:
    """(message index, byte offset) an error text ends with, or (None, None)."""
    m = re.search(PLACE, text)
    return (int(m.group(1)), int(m.group(2))) if m else (None, None)
