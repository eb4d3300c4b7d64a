"""Value readers the reference decoders of the two IBM text-valued formats share.

ibm-delimited writes every value as text; lldf writes DATE, TIME and TIMESTAMP [WITH TIME
ZONE] columns (and its header's timestamp) as the same text, so both references read them
with these: the DATE / TIME / TIMESTAMP patterns, `date_days` and `clock_us`, and
:class:`TextTimes` (a code page's text, the TIMESTAMP rules, and a wall clock in `source_tz`
→ UTC) — docs/ibm-delimited.md, "Values", and docs/lldf.md, "Data and row images".
"""
from __future__ import annotations

import datetime as dt
import re

from .. import _tz, codepages

US_PER_SEC = 1_000_000
US_PER_DAY = 86_400 * US_PER_SEC
EPOCH_ORDINAL = dt.date(1970, 1, 1).toordinal()

DATE = re.compile(r"([0-9]{4})-([0-9]{2})-([0-9]{2})")
CLOCK = r"([0-9]{2})[.:]([0-9]{2})[.:]([0-9]{2})(?:\.([0-9]+))?"
TIME = re.compile(CLOCK)
TIMESTAMP = re.compile(r"([0-9]{4})-([0-9]{2})-([0-9]{2})[- T]" + CLOCK)
TIMESTAMP_TZ = re.compile(r"([0-9]{4})-([0-9]{2})-([0-9]{2})[- T]" + CLOCK
                          + r"(Z|[+-][0-9]{2}:[0-9]{2})?")


def is_leap(y):
    return (y % 4 == 0 and y % 100 != 0) or y % 400 == 0


def date_days(m):
    """Days since 1970-01-01 of a YYYY-MM-DD match (years 0001-9999), or None."""
    if not m:
        return None
    try:
        return dt.date(int(m.group(1)), int(m.group(2)), int(m.group(3))).toordinal() \
            - EPOCH_ORDINAL
    except ValueError:
        return None


def clock_us(hh, mm, ss, frac, allow_24=False):
    """µs of the day of HH, MM, SS and an optional fraction (1-12 digits, truncated); 24.00.00
    (fraction all zeros) is the end of the day when `allow_24`. None if invalid."""
    h, mi, s = int(hh), int(mm), int(ss)
    us = 0
    if frac is not None:
        if len(frac) > 12:
            return None
        us = int(frac[:6].ljust(6, "0"))
    if mi > 59 or s > 59:
        return None
    if h == 24:
        if mi or s or (frac is not None and frac.strip("0")):
            return None
        # a TIME refuses it (>= one day); a TIMESTAMP reads the next day's midnight
        return US_PER_DAY
    if h > 23:
        return None
    return ((h * 60 + mi) * 60 + s) * US_PER_SEC + us


class TextTimes:
    """Text in a code page, and TIMESTAMP texts and wall clocks in `source_tz` as UTC µs."""

    def __init__(self, encoding: str, tz: str):
        self.encoding = encoding
        self.tz = tz

    def text(self, raw: bytes):
        """The content as str in the message's code page; None if it is not text there."""
        try:
            return codepages.decode_bytes(raw, self.encoding)
        except (UnicodeError, ValueError):
            return None

    def to_utc(self, local_us):
        """A wall-clock time in `source_tz` → UTC µs (earlier instant when ambiguous)."""
        if _tz.is_utc(self.tz):
            return local_us
        try:
            return _tz.local_to_utc_us(local_us, self.tz)
        except OverflowError:       # 24.00.00 of 9999-12-31, or a zone pushing past year 9999
            zone = _tz.zone(self.tz)
            clamp = dt.datetime.max if local_us > 0 else dt.datetime.min
            offset = zone.utcoffset(clamp.replace(fold=0))
            return local_us - (offset.days * 86400 + offset.seconds) * US_PER_SEC

    def timestamp(self, s, with_zone=False):
        """µs since the epoch (wall clock; UTC with a zone suffix) or None."""
        m = (TIMESTAMP_TZ if with_zone else TIMESTAMP).fullmatch(s)
        if not m:
            return None
        days = date_days(m)
        clock = clock_us(m.group(4), m.group(5), m.group(6), m.group(7), allow_24=True)
        if days is None or clock is None:
            return None
        us = days * US_PER_DAY + clock
        zone = m.group(8) if with_zone else None
        if zone and zone != "Z":
            oh, om = int(zone[1:3]), int(zone[4:6])
            if oh > 23 or om > 59:
                return None
            off = (oh * 60 + om) * 60 * US_PER_SEC
            us = us - off if zone[0] == "+" else us + off
        return us
