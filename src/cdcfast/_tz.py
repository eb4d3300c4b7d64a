"""Wall-clock times in a named zone → UTC, vectorized (SPEC §3: `source_tz`).

An ambiguous local time (clocks turned back) and a skipped one (clocks turned forward) are both
read as the earlier of the instants they can mean (SPEC §3): for a repeated hour the first
pass, for a skipped hour the new offset. The reference decoders take the earlier of Python's
fold=0 and fold=1. The zone's transitions near the data's days are found once per array
(sampling, then bisecting to the second), never per value.
"""
from __future__ import annotations

import datetime as dt
import re
from functools import lru_cache
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

import numpy as np
import pyarrow as pa

_UTC = dt.timezone.utc
_EPOCH = dt.datetime(1970, 1, 1, tzinfo=_UTC)
_FIXED = re.compile(r"^([+-])(\d\d):?(\d\d)$")


def check_zone(name: str) -> str:
    """Validate a `source_tz` value (an IANA name, "UTC" or a fixed "+HH:MM")."""
    zone(name)
    return name


@lru_cache(maxsize=None)
def zone(name: str) -> dt.tzinfo:
    if name in ("UTC", "utc", "Z"):
        return _UTC
    m = _FIXED.match(name)
    if m:
        sign = -1 if m.group(1) == "-" else 1
        return dt.timezone(sign * dt.timedelta(hours=int(m.group(2)), minutes=int(m.group(3))))
    try:
        return ZoneInfo(name)
    except (ZoneInfoNotFoundError, ValueError):
        raise ValueError(f"unknown time zone {name!r} for source_tz") from None


def is_utc(name: str) -> bool:
    z = zone(name)
    return isinstance(z, dt.timezone) and z.utcoffset(None) == dt.timedelta(0)


def local_to_utc_us(local_us: int, name: str) -> int:
    """One value, the reference way: the earlier of the instants the wall clock can mean
    (fold=0 and fold=1 differ only at a change: both real when clocks go back, neither when
    they skip forward)."""
    z = zone(name)
    wall = dt.datetime(1970, 1, 1) + dt.timedelta(microseconds=local_us)

    def utc_us(fold):
        delta = wall.replace(tzinfo=z, fold=fold).astimezone(_UTC) - _EPOCH
        return (delta.days * 86400 + delta.seconds) * 1_000_000 + delta.microseconds
    return min(utc_us(0), utc_us(1))


def _offset_us(z, utc_s: int) -> int:
    t = _EPOCH + dt.timedelta(seconds=int(utc_s))
    return int(t.astimezone(z).utcoffset().total_seconds()) * 1_000_000


_MIN_S = -62135596800 + 2 * 86400      # 0001-01-03: room for any zone's offset
_MAX_S = 253402300799 - 2 * 86400       # 9999-12-29


def _transitions(z, days):
    """Offset changes near the given local days: (UTC second, offset before, after) found by
    sampling each day's neighbourhood (an instant's local day is within a day of its UTC
    day) and bisecting to the second; and the offset before the first sample."""
    step = 86400
    pts = np.unique(np.clip(np.concatenate([(days + k) * step for k in (-1, 0, 1, 2)]),
                            _MIN_S, _MAX_S))
    offs = [_offset_us(z, p) for p in pts.tolist()]
    out = []
    for i in range(len(pts) - 1):
        if offs[i] == offs[i + 1]:
            continue
        a, b, oa = int(pts[i]), int(pts[i + 1]), offs[i]
        while b - a > 1:
            mid = (a + b) // 2
            if _offset_us(z, mid) == oa:
                a = mid
            else:
                b = mid
        out.append((b, oa, offs[i + 1]))
    return out, offs[0]


def local_to_utc(arr: pa.Array, name: str) -> pa.Array:
    """A timestamp[us] array of wall-clock values in zone `name` → timestamp[us, UTC]."""
    target = pa.timestamp("us", tz="UTC")
    z = zone(name)
    if isinstance(z, dt.timezone):
        off = int(z.utcoffset(None).total_seconds()) * 1_000_000
        if off == 0:
            return arr.view(target)
        return _with_validity(arr, np.asarray(arr.cast(pa.int64()).fill_null(0)) - off, target)
    if len(arr) == 0 or arr.null_count == len(arr):
        return arr.view(target)
    local = np.asarray(arr.cast(pa.int64()).fill_null(0))
    valid = np.asarray(arr.is_valid())
    trans, first_off = _transitions(z, np.unique(local[valid] // 86_400_000_000))
    # each offset applies from the wall clock `transition + offset before` on: a wall clock
    # in the hour clocks repeat or skip then takes the larger offset, the earlier instant
    bounds = np.array([t * 1_000_000 + a for t, a, _ in trans], dtype=np.int64)
    offsets = np.array([first_off] + [b for _, _, b in trans], dtype=np.int64)
    idx = np.searchsorted(bounds, local, side="right")
    return _with_validity(arr, local - offsets[idx], target)


def _with_validity(arr: pa.Array, vals: np.ndarray, target) -> pa.Array:
    out = pa.array(vals.astype(np.int64), type=pa.int64())
    if arr.null_count:
        out = pa.Array.from_buffers(pa.int64(), len(out), [arr.is_valid().buffers()[1],
                                                           out.buffers()[1]])
    return out.view(target)
