"""Wall-clock times in a named zone → UTC, vectorized (SPEC §3: `source_tz`).

An ambiguous local time (clocks turned back) is read as the earlier instant, and a skipped one
(clocks turned forward) with the offset in force before the change — exactly what Python's
``datetime(..., tzinfo=ZoneInfo(z), fold=0)`` does, which is what the reference decoders use.
The zone's transitions in the data's range are found once per array (sampling daily, then
bisecting to the second), never per value.
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
    """One value, the reference way (fold=0)."""
    z = zone(name)
    wall = dt.datetime(1970, 1, 1) + dt.timedelta(microseconds=local_us)
    aware = wall.replace(tzinfo=z, fold=0)
    delta = aware.astimezone(_UTC) - _EPOCH
    return (delta.days * 86400 + delta.seconds) * 1_000_000 + delta.microseconds


def _offset_us(z, utc_s: int) -> int:
    t = _EPOCH + dt.timedelta(seconds=int(utc_s))
    return int(t.astimezone(z).utcoffset().total_seconds()) * 1_000_000


_MIN_S = -62135596800 + 3 * 86400      # 0001-01-04: room for any zone's offset
_MAX_S = 253402300799 - 3 * 86400       # 9999-12-28


def _transitions(z, lo_s: int, hi_s: int):
    """UTC seconds at which the offset changes in [lo_s, hi_s], with offsets before/after
    (clamped to the years datetime can hold; zones are fixed that far out)."""
    step = 86400
    lo_s = min(max(lo_s, _MIN_S), _MAX_S - 2 * step)
    hi_s = max(min(hi_s, _MAX_S - 2 * step), lo_s)
    points = np.arange(lo_s - step, hi_s + 2 * step, step, dtype=np.int64)
    offs = np.array([_offset_us(z, p) for p in points], dtype=np.int64)
    out = []
    for i in np.nonzero(offs[1:] != offs[:-1])[0]:
        a, b = int(points[i]), int(points[i + 1])
        oa = int(offs[i])
        while b - a > 1:                      # bisect to the second
            mid = (a + b) // 2
            if _offset_us(z, mid) == oa:
                a = mid
            else:
                b = mid
        out.append((b, oa, int(offs[i + 1])))
    return out, int(offs[0])


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
    lo = int(local[valid].min() // 1_000_000) - 2 * 86400
    hi = int(local[valid].max() // 1_000_000) + 2 * 86400
    trans, first_off = _transitions(z, lo, hi)
    # the wall clock from which each offset applies: transition + the larger of the two
    # offsets (so an ambiguous hour keeps the earlier offset, and a skipped hour too)
    bounds = np.array([t * 1_000_000 + max(a, b) for t, a, b in trans], dtype=np.int64)
    offsets = np.array([first_off] + [b for _, _, b in trans], dtype=np.int64)
    idx = np.searchsorted(bounds, local, side="right")
    return _with_validity(arr, local - offsets[idx], target)


def _with_validity(arr: pa.Array, vals: np.ndarray, target) -> pa.Array:
    out = pa.array(vals.astype(np.int64), type=pa.int64())
    if arr.null_count:
        out = pa.Array.from_buffers(pa.int64(), len(out), [arr.is_valid().buffers()[1],
                                                           out.buffers()[1]])
    return out.view(target)
