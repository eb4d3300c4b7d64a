"""Value texts and conversions the encoders share: Db2 code-page text and timestamp texts
(ibm-delimited and lldf), decimals, and the numbers and times the JSON formats write (Debezium,
OLR and Qlik Replicate)."""
from __future__ import annotations

import codecs
import datetime as dt
import decimal
import math

from ._plan import float32

UTC = dt.timezone.utc
EPOCH_ORDINAL = dt.date(1970, 1, 1).toordinal()


# -- text in a code page ----------------------------------------------------------------------

def text_encoder(encoding):
    """str -> bytes in ``encoding``. Python lacks cp1047, so code pages it does not know come
    from cdcfast.codepages (imported only then: it is the decoder side's table)."""
    try:
        name = codecs.lookup(encoding).name
    except LookupError:
        from ..codepages import encode_text
        return lambda text: encode_text(text, encoding)
    return lambda text: text.encode(name)


def encodable(to_bytes, char):
    try:
        return len(to_bytes(char)) > 0
    except (UnicodeError, ValueError):
        return False


# -- times ----------------------------------------------------------------------------------

def aware(t):
    """Envelope times are UTC; a naive one is taken as UTC, as pyarrow's own tz-less view."""
    return t.replace(tzinfo=UTC) if t.tzinfo is None else t


def commit_text(t):
    # The vendor's 19-character YYYY-MM-DD-HH.mm.ss: sub-second digits are not sent.
    return f"{t.year:04d}-{t.month:02d}-{t.day:02d}-{t.hour:02d}.{t.minute:02d}.{t.second:02d}"


def timestamp_text(t, precision):
    return commit_text(t) + fraction(t.microsecond, precision)


def fraction(microsecond, precision):
    """`precision` fraction digits: microseconds padded with zeros past 6, cut below 6."""
    if precision == 0:
        return ""
    return "." + f"{microsecond:06d}".ljust(precision, "0")[:precision]


def wall_us(v):
    """A TIMESTAMP value -> µs since 1970-01-01 of its wall clock, as Debezium writes a
    zone-less timestamp (seed "Timestamp types"); an aware value is taken in UTC."""
    if v.tzinfo is not None:
        v = v.astimezone(UTC)
    return (((v.toordinal() - EPOCH_ORDINAL) * 86400 + v.hour * 3600 + v.minute * 60
             + v.second) * 1000000 + v.microsecond)


# -- numbers --------------------------------------------------------------------------------

def as_decimal(v):
    if isinstance(v, decimal.Decimal):
        return v
    return decimal.Decimal(v if isinstance(v, (int, str)) else repr(float(v)))


def unscaled(v, scale):
    """The exact unscaled integer of ``v`` at ``scale`` (digits past the scale must be zeros:
    nothing is rounded)."""
    d = as_decimal(v)
    if not d.is_finite():
        raise ValueError("a DECIMAL must be finite")
    sign, digits, exp = d.as_tuple()
    n = int("".join(map(str, digits))) if digits else 0
    shift = exp + scale
    if shift >= 0:
        n *= 10 ** shift
    else:
        n, rest = divmod(n, 10 ** -shift)
        if rest:
            raise ValueError(f"more fraction digits than the scale {scale}")
    return -n if sign else n


def scaled_text(n, scale):
    """The plain decimal text of unscaled ``n`` at ``scale`` (BigDecimal.toPlainString)."""
    if scale == 0:
        return str(n)
    digits = str(abs(n)).rjust(scale + 1, "0")
    return ("-" if n < 0 else "") + digits[:-scale] + "." + digits[-scale:]


def double_text(x):
    """Shortest round-trip text; JSON has no NaN/infinity, so those are the strings the
    decoder reads back (docs/debezium.md)."""
    if math.isfinite(x):
        return repr(x)
    return '"NaN"' if x != x else '"Infinity"' if x > 0 else '"-Infinity"'


def float32_text(x):
    """The shortest text that reads back as the same float32 (0.1f is `0.1`)."""
    try:
        f = float32(x)
    except OverflowError:
        f = math.copysign(math.inf, x)
    if not math.isfinite(f):
        return double_text(f)
    for digits in range(1, 10):     # 9 significant digits always suffice for a float32
        y = float(f"{f:.{digits}g}")
        if float32(y) == f:
            return repr(y)
    return repr(f)
