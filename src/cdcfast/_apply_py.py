"""The apply kernels (native/cdcfast/_apply.pyx) in plain Python: the fallback when the
extension is not built, and the twin its tests compare it with. Same functions, same
arguments, same results; one Python step per event."""
from __future__ import annotations

import numpy as np
import pyarrow as pa

STATS = ("applied", "replays", "skipped_no_key", "deletes", "truncates", "last_truncate")
UPSERT, DELETE, TRUNCATE = 0, 1, 2
EXISTS, DELETED = 1, 2
HEAD = 8                     # a key's head: lastpos, last, ver, epoch, flags, base, 2 unused
PART = 4                     # flags: the values are the key's row of vals (the twin: always)


def empty(shape, dtype, fill=None):
    """See _apply.empty."""
    return np.empty(shape, dtype) if fill is None else np.full(shape, fill, dtype)


def group_ids(arrays: list, alt=None, use_alt=None, ranked=False):
    """Per row, its key's group in order of first appearance (-1: a null key column), and
    the number of groups; with alt and use_alt, row i of alt where use_alt[i]."""
    n = len(arrays[0]) if arrays else 0
    columns = [a.to_pylist() for a in arrays]
    if alt is not None:
        columns = [[o if use_alt[i] else v for i, (v, o) in enumerate(zip(c, a.to_pylist()))]
                   for c, a in zip(columns, alt)]
    seen: dict = {}
    gid = np.empty(n, np.int32)
    for i in range(n):
        key = tuple(c[i] for c in columns)
        if any(v is None for v in key):
            gid[i] = -1
            continue
        gid[i] = seen.setdefault(key, len(seen))
    return gid, len(seen)


def present_masks(present, columns: list, orig=None, m=-1):
    """See _apply.present_masks."""
    if all(f < 0 for f in columns):
        return None
    orig = np.arange(m) if orig is None else orig
    rows = present.to_pylist()
    names = [f.name for f in present.type]
    out = np.zeros((len(orig), max(1, (len(columns) + 63) // 64)), np.uint64)
    for k, r in enumerate(orig):
        row = rows[int(r)]
        for c, f in enumerate(columns):
            if f < 0 or row is None or row[names[f]] is not False:
                out[k, c // 64] |= np.uint64(1 << (c % 64))
    return out


def _nulls_first(v):
    return (v is not None, v if v is not None else 0)


def log_steps(commit_pos, change_pos, seq):
    """See _apply.log_steps."""
    pos = [tuple(_nulls_first(v) for v in p)
           for p in zip(commit_pos.to_pylist(), change_pos.to_pylist(), seq.to_pylist())]
    step = np.ones(len(pos), np.uint8)
    ordered = True
    for i in range(1, len(pos)):
        step[i] = pos[i] != pos[i - 1]
        ordered &= pos[i] >= pos[i - 1]
    return step, bool(ordered)


def take_validity(arr, idx, mask=None):
    """See _apply.take_validity."""
    arr = arr.chunk(0) if isinstance(arr, pa.ChunkedArray) else arr
    n = len(idx)
    if len(idx) and not (0 <= min(idx) and max(idx) < len(arr)):
        raise IndexError("take_validity: a row out of range")
    valid = np.array([arr[int(i)].is_valid for i in idx], bool)
    if mask is not None:
        valid &= np.unpackbits(np.asarray(mask, np.uint8), count=n, bitorder="little") == 1
    return np.packbits(valid, bitorder="little"), int(n - valid.sum())


def op_codes(op, kinds=None):
    """See _apply.op_codes."""
    codes = {"c": 0, "r": 1, "u": 2, "d": 3, "t": 4}
    code = np.array([codes.get(v, 5) for v in op.to_pylist()], np.uint8)
    return code if kinds is None else (code, np.asarray(kinds, np.uint8)[code])


def moved_keys(code, old: list, new: list):
    """See _apply.moved_keys."""
    olds = list(zip(*[o.to_pylist() for o in old])) if old else [()] * len(code)
    news = list(zip(*[a.to_pylist() for a in new])) if new else [()] * len(code)
    return np.array([i for i, (c, o, a) in enumerate(zip(code, olds, news))
                     if c == 2 and None not in o and o != a], np.int64)


def value_rows(head, vals, groups, orig, target: bool, reset=None):
    """See _apply.value_rows."""
    orig = np.arange(max(0, int(vals.max(initial=-1)), int(head[:, 5].max(initial=-1))) + 1) \
        if orig is None else orig
    out = []
    for c in range(vals.shape[1]):
        v = [int(vals[g, c]) if head[g, 4] & PART else int(head[g, 5]) for g in groups]
        ev = np.array([int(orig[x]) if x >= 0 else 0 for x in v], np.int32)
        there = [x >= 0 for x in v]
        ok = np.packbits(np.array(there, bool), bitorder="little")
        tg = pa.array([-2 - x if x <= -2 else None for x in v], pa.int32()) if target else None
        sent = None if reset is None else \
            pa.array([x >= 0 or bool(r) for x, r in zip(v, reset)], pa.bool_())
        out.append((ev, None if all(there) else ok, tg, sent))
    return out


def by_last(gid, ogid, head, live: bool):
    """See _apply.by_last."""
    last, flags = head[:, 1], head[:, 4]
    first = [g for g in range(len(head)) if live and flags[g] & EXISTS and last[g] < 0]
    reached = [g for g in range(len(head)) if last[g] >= 0
               and (not live or flags[g] & EXISTS)]
    return np.array(first + sorted(reached, key=lambda g: (int(last[g]), g)), np.int64)


def walk(gid, ogid, kind, newpos, present, groups, target_group, head, vals, stats, track=None,
         prev=None, newrow=None, changed=None, ver_group=None, ver_start=None, ver_end=None,
         ver_values=None):
    """See _apply.walk."""
    m, ncols = len(gid), vals.shape[1]
    second = ver_group is not None
    state = [{"lastpos": -1, "last": -1, "epoch": 0, "ver": -1, "flags": 0}
             for _ in range(groups)]
    vals[:] = -1
    nver = 0

    def open_(st, g, k):
        nonlocal nver
        ver_group[nver], ver_start[nver], ver_end[nver] = g, k, -1
        st["ver"] = nver
        nver += 1

    def close(v, k, row):
        ver_end[v] = k
        ver_values[v] = row

    def wipe(st, g, epoch):
        st.update(flags=0, last=-1, ver=-1, epoch=epoch)
        vals[g] = -1

    def delete(st, g, k):
        if second and st["ver"] >= 0:
            close(st["ver"], k, vals[g])
        st["ver"] = -1
        st["flags"] = DELETED
        vals[g] = -1

    for i, g in enumerate(target_group):
        if g < 0:
            continue
        if state[g]["flags"] & EXISTS:
            raise ValueError("the target holds a key twice")
        state[g]["flags"] = EXISTS
        vals[g] = -2 - i
        if second:
            open_(state[g], g, -2 - i)
    epoch, posid, since_t = 0, -1, 0
    applied = replays = nokey = deletes = truncates = 0
    last_t = -1
    for k in range(m):
        if newpos[k]:
            posid += 1
        kd = kind[k]
        if kd == TRUNCATE:
            truncates += 1
            applied += 1
            epoch += 1
            last_t = k
            if second:
                for v in range(since_t, nver):
                    if ver_end[v] == -1:
                        close(v, k, vals[ver_group[v]])
                since_t = nver
            continue
        if kd not in (UPSERT, DELETE):
            continue
        g = gid[k]
        if g < 0:
            nokey += 1
            continue
        st = state[g]
        if st["lastpos"] == posid:
            replays += 1
            continue
        st["lastpos"] = posid
        applied += 1
        if st["epoch"] != epoch:
            wipe(st, g, epoch)
        if kd == DELETE:
            deletes += 1
            delete(st, g, k)
            st["last"] = k
            continue
        og = ogid[k] if ogid is not None else -1
        if og >= 0:
            ost = state[og]
            if ost["epoch"] != epoch:
                wipe(ost, og, epoch)
            delete(ost, og, k)
            ost["last"] = k
        if track is not None:
            newrow[k] = 0 if st["flags"] & EXISTS else 1
            for j, c in enumerate(track):
                prev[j, k] = vals[g, c]
        if second:
            if not st["flags"] & EXISTS:
                open_(st, g, k)
            elif changed[k]:
                close(st["ver"], k, vals[g])
                open_(st, g, k)
        for c in range(ncols):
            if present is None or int(present[k, c // 64]) >> (c % 64) & 1:
                vals[g, c] = k
        st["flags"] |= EXISTS
        st["last"] = k
    for g, st in enumerate(state):
        current = st["epoch"] == epoch
        head[g] = [st["lastpos"], st["last"] if current else -1, st["ver"], st["epoch"],
                   (st["flags"] if current else 0) | PART, -1, 0, 0]
    if second:
        for v in range(since_t, nver):
            if ver_end[v] == -1:
                close(v, -1, vals[ver_group[v]])
    stats[:] = [applied, replays, nokey, deletes, truncates, last_t]
    return nver if second else 0
