"""`ibm-delimited` value conversions and header rules, table-driven, exactly as
docs/ibm-delimited.md states them — on both decoders (the native kernel and the pure-Python
reference), asserting exact values and exact `_error` texts.

Records are built by hand: :class:`Rec` makes one record from the 12 header fields (defaults
below, any of them overridden by its name in the seed: ``operation='"REPL"'``) and lists of
before/after field texts written exactly as they appear in the message (quotes included), and
knows the byte offset of every field, so error texts can be checked to the byte.

A case that a decoder gets wrong today ends in a ``Known`` reason, ``NativeBug`` or
``ReferenceBug`` (the decoders disagree; the doc says which is right): it is a strict xfail on
that decoder, so it turns into a failure as soon as the code is fixed — remove the mark then.
"""
import datetime as dt
import json
import pathlib
import struct
import subprocess
import sys
from decimal import Decimal, getcontext
from zoneinfo import ZoneInfo

import pyarrow as pa
import pytest

import cdcfast
from cdcfast import reference
from cdcfast.codepages import encode_text

UTC = dt.timezone.utc
BAD = "<conversion error>"          # expected value of a field that must fail


class Known(str):
    """Why a case fails today on the decoders in ``wrong`` (see the module docstring)."""
    wrong = ()


class NativeBug(Known):
    wrong = ("native",)


class ReferenceBug(Known):
    wrong = ("reference",)


def both(cases):
    """Parametrize (api, *case) over the native and the reference decoder; a case ending in a
    Known reason is a strict xfail on the decoders it names."""
    out = []
    for case in cases:
        case = tuple(case)
        bug = None
        if case and isinstance(case[-1], Known):
            bug, case = case[-1], case[:-1]
        cid = "-".join(_short(c) for c in case)
        for name, mod in (("native", cdcfast), ("reference", reference)):
            marks = [pytest.mark.xfail(strict=True, reason=f"{type(bug).__name__}: {bug}")] \
                if bug and name in bug.wrong else []
            out.append(pytest.param(mod, *case, id=f"{name}-{cid}", marks=marks))
    return out


def _short(v):
    s = v if isinstance(v, str) else repr(v)
    return s if len(s) <= 30 else s[:27] + "..."


@pytest.fixture(params=["native", "reference"])
def api(request):
    return cdcfast if request.param == "native" else reference


# -- building records -------------------------------------------------------------------------

HEADER_NAMES = ("type", "identifier", "date", "time", "table_owner", "table_name", "operation",
                "transaction_identifier", "commit_lsn", "commit_time", "plan_name",
                "segment_number")
HEADER = {"type": "10", "identifier": '"IBM"', "date": '"2006030"', "time": '"182318000005"',
          "table_owner": '"S"', "table_name": '"T"', "operation": '"ISRT"',
          "transaction_identifier": '"0000:0000:0388:4642:0000"',
          "commit_lsn": '"0000:0000:0000:0271:000c:0000:0000:0000"',
          "commit_time": '"2006-06-30-18.00.52"', "plan_name": '"ASNQCAP"',
          "segment_number": "0000"}


class Rec:
    """One record: header fields (overridable by name), then before and after field texts."""

    def __init__(self, before=(), after=(), cd=",", trailing="", **header):
        unknown = set(header) - set(HEADER)
        assert not unknown, unknown
        h = {**HEADER, **header}
        self.fields = [h[n] for n in HEADER_NAMES] + list(before) + list(after)
        self.cd = cd
        self.trailing = trailing

    @property
    def text(self) -> str:
        return self.cd.join(self.fields) + self.trailing

    def bytes(self, encoding="utf-8") -> bytes:
        return encode_text(self.text, encoding)

    def at(self, k: int) -> int:
        """Byte offset (UTF-8) of field k (0-based) within the record."""
        return sum(len(f.encode()) + len(self.cd.encode()) for f in self.fields[:k])


def catalog(*columns, schema="S", table="T"):
    """columns: (name, type) or (name, type, nullable)."""
    cols = []
    for c in columns:
        d = {"name": c[0], "type": c[1]}
        if len(c) > 2:
            d["nullable"] = c[2]
        cols.append(d)
    return {"tables": [{"schema": schema, "table": table, "columns": cols}]}


def decode(api, data, cat, **options) -> pa.Table:
    return api.decode(data, format="ibm-delimited", catalog=cat,
                      table="S.T" if cat is not None else None, **options)


def one(api, rec, cat, encoding="utf-8", **options) -> dict:
    """The single row of one record, as Python values."""
    t = decode(api, rec.bytes(encoding), cat, encoding=encoding, **options)
    assert t.num_rows == 1
    return t.to_pylist()[0]


def err(field, reason, byte, message=0):
    return f"{field}: {reason} (message {message}, byte {byte})"


def shown(field_text: str) -> str:
    """How an error quotes a field: its unescaped content, repr-quoted, cut at 40."""
    s = field_text
    if s.startswith('"') and len(s) >= 2:
        s = s[1:-1].replace('""', '"')
    return repr(s[:40]) + ("…" if len(s) > 40 else "")


def f32(x: float) -> float:
    """A double rounded to float32 (round to nearest even), back as a Python float."""
    return struct.unpack("<f", struct.pack("<f", x))[0]      # "<f" raises past float32


def same(got, expected):
    """Exact equality: same type, and for decimals the same digits and exponent, for floats
    the same bits (so -0.0 is not 0.0)."""
    assert type(got) is type(expected), (got, expected)
    if isinstance(expected, Decimal):
        assert got.as_tuple() == expected.as_tuple(), (got, expected)
    elif isinstance(expected, float):
        assert struct.pack("d", got) == struct.pack("d", expected), (got, expected)
    else:
        assert got == expected, (got, expected)


# -- values by catalog type ---------------------------------------------------------------------

getcontext().prec = 100
# 1 + 2**-24 + 2**-54: straight to float32 it rounds up to 1 + 2**-23, but the doc reads a REAL
# through a double first (1 + 2**-24, a tie between float32s, which goes to even: 1.0)
DOUBLE_ROUNDING = str(Decimal(1) + Decimal(2) ** -24 + Decimal(2) ** -54)
LONG_FLOAT = "0." + "1" * 317         # 319 characters: the longest number text read
TOO_LONG = "0." + "1" * 318           # 320: an error (docs: "longer than 319 characters")
VALUES = [
    # integers: each width at its limits and one past, signs, leading zeros, quoting
    ("TINYINT", "127", 127), ("TINYINT", "-128", -128),
    ("TINYINT", "128", BAD), ("TINYINT", "-129", BAD),
    ("SMALLINT", "32767", 32767), ("SMALLINT", "-32768", -32768),
    ("SMALLINT", "32768", BAD), ("SMALLINT", "-32769", BAD),
    ("INTEGER", "2147483647", 2147483647), ("INTEGER", "-2147483648", -2147483648),
    ("INTEGER", "2147483648", BAD), ("INTEGER", "-2147483649", BAD),
    ("INT", "+2147483647", 2147483647), ("INT", "-02147483648", -2147483648),
    ("BIGINT", "9223372036854775807", 9223372036854775807),
    ("BIGINT", "-9223372036854775808", -9223372036854775808),
    ("BIGINT", "9223372036854775808", BAD), ("BIGINT", "-9223372036854775809", BAD),
    ("BIGINT", "18446744073709551616", BAD), ("BIGINT", "99999999999999999999999999", BAD),
    ("BIGINT", "0000000000000000000000000042", 42),
    ("INTEGER", "+42", 42), ("INTEGER", "-0", 0), ("INTEGER", "007", 7),
    ("INTEGER", '"42"', 42), ("INTEGER", '"-42"', -42),
    ("INTEGER", "4 2", BAD), ("INTEGER", " 42", BAD), ("INTEGER", '"42 "', BAD),
    ("INTEGER", "4.0", BAD), ("INTEGER", "1E3", BAD), ("INTEGER", "+", BAD),
    ("INTEGER", "-", BAD), ("INTEGER", "--1", BAD), ("INTEGER", "+-1", BAD),
    ("INTEGER", '""', BAD), ("INTEGER", "0x1F", BAD), ("INTEGER", "abc", BAD),
    ("INTEGER", "١٢", BAD), ("INTEGER", "４２", BAD),
    # DECIMAL: full precision, scale padding, zeros past the scale, limits of p - s
    ("DECIMAL(31,8)", "12345678901234567890123.12345678",
     Decimal("12345678901234567890123.12345678")),
    ("DECIMAL(31,8)", "-99999999999999999999999.99999999",
     Decimal("-99999999999999999999999.99999999")),
    ("DECIMAL(31,8)", "0.00000001", Decimal("0.00000001")),
    ("DECIMAL(31,8)", "1.123456780000", Decimal("1.12345678")),
    ("DECIMAL(31,8)", "7", Decimal("7.00000000")),
    ("DECIMAL(31,8)", "000000000099999999999999999999999", Decimal("99999999999999999999999.00000000")),
    ("DECIMAL(31,8)", "123456789012345678901234", BAD),
    ("DECIMAL(31,8)", "0.000000001", BAD),
    ("DECIMAL(31,8)", "1.123456785", BAD),
    ("DECIMAL(38,0)", "9" * 38, Decimal("9" * 38)),
    ("DECIMAL(38,0)", "-" + "9" * 38, Decimal("-" + "9" * 38)),
    ("DECIMAL(38,0)", "12345678901234567890123456789012345678",
     Decimal("12345678901234567890123456789012345678")),
    ("DECIMAL(38,0)", "0" * 10 + "9" * 38, Decimal("9" * 38)),
    ("DECIMAL(38,0)", "12.000", Decimal("12")),
    ("DECIMAL(38,0)", "1" + "0" * 38, BAD),
    ("DECIMAL(38,0)", "12.5", BAD),
    ("DECIMAL(9,2)", "5", Decimal("5.00")), ("DECIMAL(9,2)", "5.1", Decimal("5.10")),
    ("DECIMAL(9,2)", ".5", Decimal("0.50")), ("DECIMAL(9,2)", "5.", Decimal("5.00")),
    ("DECIMAL(9,2)", "-5.25", Decimal("-5.25")), ("DECIMAL(9,2)", "+5.25", Decimal("5.25")),
    ("DECIMAL(9,2)", '"5.25"', Decimal("5.25")), ("DECIMAL(9,2)", "-0", Decimal("0.00")),
    ("DECIMAL(9,2)", "1234567.89", Decimal("1234567.89")),
    ("DECIMAL(9,2)", "5.25000", Decimal("5.25")),
    ("DECIMAL(9,2)", "12345678", BAD), ("DECIMAL(9,2)", "5.251", BAD),
    ("DECIMAL(9,2)", "1E2", BAD), ("DECIMAL(9,2)", '"1,5"', BAD), ("DECIMAL(9,2)", "abc", BAD),
    ("DECIMAL(9,2)", '""', BAD), ("DECIMAL(9,2)", ".", BAD), ("DECIMAL(9,2)", "-", BAD),
    ("DECIMAL(9,2)", "--1", BAD), ("DECIMAL(9,2)", "5.2.1", BAD), ("DECIMAL(9,2)", "5 ", BAD),
    ("DECIMAL(5,5)", ".12345", Decimal("0.12345")), ("DECIMAL(5,5)", "0", Decimal("0.00000")),
    ("DECIMAL(5,5)", "1", BAD),
    ("DECIMAL", "99999", Decimal("99999")), ("DECIMAL", "100000", BAD),
    ("DEC(5)", "-12345", Decimal("-12345")), ("NUMERIC(7,3)", "1.5", Decimal("1.500")),
    ("NUMBER(10,2)", "-1.5", Decimal("-1.50")),
    # REAL / DOUBLE: correct rounding, E-notation, range, no inf/nan text
    ("DOUBLE", "1.5", 1.5), ("DOUBLE", "-2.5E-3", -0.0025), ("DOUBLE", "+1E+10", 1e10),
    ("DOUBLE", "1E10", 1e10), ("DOUBLE", "5.", 5.0), ("DOUBLE", ".5", 0.5),
    ("DOUBLE", "0", 0.0), ("DOUBLE", "-0", -0.0), ("DOUBLE", '"1.25"', 1.25),
    ("DOUBLE", "0.1", 0.1), ("DOUBLE", "9007199254740993", 9007199254740992.0),
    ("DOUBLE", "2.2250738585072011E-308", float("2.2250738585072011e-308")),
    ("DOUBLE", "4.9E-324", 5e-324), ("DOUBLE", "1E-400", 0.0),
    ("DOUBLE", "1.7976931348623157E308", 1.7976931348623157e308),
    ("DOUBLE", "123456789012345678901234567890E-20", float("123456789012345678901234567890e-20")),
    ("DOUBLE", "1.8E308", BAD), ("DOUBLE", "1E400", BAD), ("DOUBLE", "-1E400", BAD),
    ("DOUBLE", "inf", BAD), ("DOUBLE", "Infinity", BAD), ("DOUBLE", "-inf", BAD),
    ("DOUBLE", "nan", BAD), ("DOUBLE", "NaN", BAD), ("DOUBLE", "E5", BAD),
    ("DOUBLE", "1E", BAD), ("DOUBLE", "1E+", BAD), ("DOUBLE", ".", BAD), ("DOUBLE", '""', BAD),
    ("DOUBLE", "1.5F", BAD), ("DOUBLE", "0x1p3", BAD), ("DOUBLE", " 1", BAD),
    ("DOUBLE", "1_000", BAD), ("DOUBLE", "1.5E3.0", BAD), ("DOUBLE", '"1,5"', BAD),
    ("DOUBLE", "1e5", 1e5), ("DOUBLE", "-2.5e-3", -0.0025), ("DOUBLE", "1e", BAD),
    ("DOUBLE", LONG_FLOAT, float(LONG_FLOAT)), ("DOUBLE", TOO_LONG, BAD),
    ("DOUBLE", "1" * 300 + "E-300", float("1" * 300 + "e-300")),
    ("DOUBLE PRECISION", "3.25", 3.25), ("FLOAT", "3.25", 3.25), ("FLOAT(22)", "0.1", 0.1),
    ("REAL", "0.1", f32(0.1)), ("REAL", "1.5", 1.5), ("REAL", "-2.5E-3", f32(-0.0025)),
    ("REAL", "3.4028235E38", f32(3.4028235e38)), ("REAL", "-3.4028235E38", f32(-3.4028235e38)),
    ("REAL", "16777217", 16777216.0), ("REAL", "1.4E-45", f32(1.4e-45)),
    ("REAL", "1E-50", 0.0), ("REAL", DOUBLE_ROUNDING, 1.0),
    ("REAL", "3.4028236E38", BAD), ("REAL", "-3.5E38", BAD), ("REAL", "1E39", BAD),
    ("REAL", "1.8E308", BAD), ("REAL", "inf", BAD), ("REAL", "nan", BAD),
    ("FLOAT(21)", "0.1", f32(0.1)), ("BINARY_FLOAT", "0.1", f32(0.1)),
    ("REAL", "0." + "3" * 317, f32(float("0." + "3" * 317))), ("REAL", "0." + "3" * 318, BAD),
    ("REAL", "2.5e-1", 0.25),
    # DECFLOAT / NUMBER: the exact text, checked
    ("DECFLOAT", "123.4500", "123.4500"), ("DECFLOAT", "-1.5E+10", "-1.5E+10"),
    ("DECFLOAT", "+7", "+7"), ("DECFLOAT", ".5", ".5"), ("DECFLOAT", '"42"', "42"),
    ("DECFLOAT(16)", "1E-400", "1E-400"), ("DECFLOAT(34)", "9.999E+6144", "9.999E+6144"),
    ("DECFLOAT", "NaN", "NaN"), ("DECFLOAT", "sNaN", "sNaN"),
    ("DECFLOAT", "Infinity", "Infinity"), ("DECFLOAT", "-Infinity", "-Infinity"),
    ("DECFLOAT", "Inf", BAD), ("DECFLOAT", "abc", BAD), ("DECFLOAT", '""', BAD),
    ("DECFLOAT", "1.5.5", BAD), ("DECFLOAT", "E5", BAD),
    ("DECFLOAT", "nan", "nan"), ("DECFLOAT", "INFINITY", "INFINITY"),
    ("DECFLOAT", "+Infinity", "+Infinity"), ("DECFLOAT", "-NaN", "-NaN"),
    ("DECFLOAT", "-sNaN", "-sNaN"), ("DECFLOAT", "1e5", "1e5"),
    ("DECFLOAT", "NaNx", BAD), ("DECFLOAT", "+-NaN", BAD), ("DECFLOAT", "Infinit", BAD),
    ("DECFLOAT", " NaN", BAD), ("DECFLOAT", "1" * 319, "1" * 319), ("DECFLOAT", "1" * 320, BAD),
    ("NUMBER", "-0.000123", "-0.000123"),
    ("NUMBER", "12345678901234567890123456789012345678901234567890",
     "12345678901234567890123456789012345678901234567890"),
    ("NUMBER", "1.5E-3", "1.5E-3"), ("NUMBER", "1.5.5", BAD), ("NUMBER", "Inf", BAD),
    ("NUMBER", "NaN", "NaN"), ("NUMBER", "-infinity", "-infinity"), ("NUMBER", TOO_LONG, BAD),
    # DATE
    ("DATE", '"2024-02-29"', dt.date(2024, 2, 29)), ("DATE", '"2000-02-29"', dt.date(2000, 2, 29)),
    ("DATE", "2024-02-29", dt.date(2024, 2, 29)),
    ("DATE", '"0001-01-01"', dt.date(1, 1, 1)), ("DATE", '"9999-12-31"', dt.date(9999, 12, 31)),
    ("DATE", '"1970-01-01"', dt.date(1970, 1, 1)), ("DATE", '"1969-12-31"', dt.date(1969, 12, 31)),
    ("DATE", '"2023-02-29"', BAD), ("DATE", '"1900-02-29"', BAD), ("DATE", '"2100-02-29"', BAD),
    ("DATE", '"0000-01-01"', BAD), ("DATE", '"2024-13-01"', BAD), ("DATE", '"2024-00-10"', BAD),
    ("DATE", '"2024-04-31"', BAD), ("DATE", '"2024-01-00"', BAD), ("DATE", '"2024-1-01"', BAD),
    ("DATE", '"2024/01/01"', BAD), ("DATE", '"2024-01-01-00.00.00"', BAD),
    ("DATE", '"20240101"', BAD), ("DATE", '""', BAD), ("DATE", '"2024-01-01 "', BAD),
    # TIME: both separators, fractions truncated, no 24.00.00
    ("TIME", '"12.34.56"', dt.time(12, 34, 56)), ("TIME", '"12:34:56"', dt.time(12, 34, 56)),
    ("TIME", '"12.34:56"', dt.time(12, 34, 56)), ("TIME", '"12:34.56"', dt.time(12, 34, 56)),
    ("TIME", '"00.00.00"', dt.time(0)), ("TIME", '"23.59.59"', dt.time(23, 59, 59)),
    ("TIME", '"12.00.00.5"', dt.time(12, 0, 0, 500000)),
    ("TIME(6)", '"23.59.59.999999"', dt.time(23, 59, 59, 999999)),
    ("TIME", '"23.59.59.999999999999"', dt.time(23, 59, 59, 999999)),
    ("TIME", '"23.59.59.0000009"', dt.time(23, 59, 59)),
    ("TIME", '"12.00.00.1234567890123"', BAD), ("TIME", '"24.00.00"', BAD),
    ("TIME", '"24.00.00.000000"', BAD), ("TIME", '"25.00.00"', BAD), ("TIME", '"23.60.00"', BAD),
    ("TIME", '"23.59.60"', BAD), ("TIME", '"12.00"', BAD), ("TIME", '"12-00-00"', BAD),
    ("TIME", '"1.02.03"', BAD), ("TIME", '"12.00.00."', BAD), ("TIME", '"12.00.00,5"', BAD),
    ("TIME", '"12.00.00:5"', BAD), ("TIME", '""', BAD),
    # TIMESTAMP: 0/6/12 fraction digits truncated (never rounded), separators, 24.00.00
    ("TIMESTAMP", '"2024-02-29-23.59.59"', dt.datetime(2024, 2, 29, 23, 59, 59)),
    ("TIMESTAMP", '"2024-02-29-23.59.59.123456"', dt.datetime(2024, 2, 29, 23, 59, 59, 123456)),
    ("TIMESTAMP(12)", '"2024-02-29-23.59.59.123456789999"',
     dt.datetime(2024, 2, 29, 23, 59, 59, 123456)),
    ("TIMESTAMP", '"2024-02-29-23.59.59.9999999"', dt.datetime(2024, 2, 29, 23, 59, 59, 999999)),
    ("TIMESTAMP(0)", '"2024-02-29-23.59.59"', dt.datetime(2024, 2, 29, 23, 59, 59)),
    ("TIMESTAMP", '"2024-02-29-23.59.59.5"', dt.datetime(2024, 2, 29, 23, 59, 59, 500000)),
    ("TIMESTAMP", '"2024-02-29 23.59.59"', dt.datetime(2024, 2, 29, 23, 59, 59)),
    ("TIMESTAMP", '"2024-02-29T23:59:59.5"', dt.datetime(2024, 2, 29, 23, 59, 59, 500000)),
    ("TIMESTAMP", '"2024-02-29-23:59.59"', dt.datetime(2024, 2, 29, 23, 59, 59)),
    ("TIMESTAMP", '"2024-12-31-24.00.00"', dt.datetime(2025, 1, 1)),
    ("TIMESTAMP", '"2024-02-28-24.00.00.000000000000"', dt.datetime(2024, 2, 29)),
    ("TIMESTAMP", '"2023-02-28-24.00.00"', dt.datetime(2023, 3, 1)),
    ("TIMESTAMP", '"0001-01-01-00.00.00"', dt.datetime(1, 1, 1)),
    ("TIMESTAMP", '"9999-12-31-23.59.59.999999"', dt.datetime(9999, 12, 31, 23, 59, 59, 999999)),
    ("TIMESTAMP", '"1969-12-31-23.59.59.999999"', dt.datetime(1969, 12, 31, 23, 59, 59, 999999)),
    ("TIMESTAMP", '"2024-12-31-24.00.00.000001"', BAD),
    ("TIMESTAMP", '"2024-12-31-24.00.00.0000001"', BAD),
    ("TIMESTAMP", '"2024-12-31-24.01.00"', BAD), ("TIMESTAMP", '"2024-12-31-25.00.00"', BAD),
    ("TIMESTAMP", '"2024-02-29-23.59.59.1234567890123"', BAD),
    ("TIMESTAMP", '"2023-02-29-00.00.00"', BAD), ("TIMESTAMP", '"2024-01-01"', BAD),
    ("TIMESTAMP", '"2024-01-01-12.00.00Z"', BAD),
    ("TIMESTAMP", '"2024-01-01-12.00.00+01:00"', BAD),
    ("TIMESTAMP", '"2024-01-01_12.00.00"', BAD), ("TIMESTAMP", '"2024-01-01-12.00"', BAD),
    ("TIMESTAMP", '"2024-01-01-12.00.60"', BAD), ("TIMESTAMP", '"0000-01-01-00.00.00"', BAD),
    ("TIMESTAMP", '"2024-01-01-12.00.00."', BAD), ("TIMESTAMP", '""', BAD),
    # TIMESTAMP WITH TIME ZONE: ±HH:MM, Z or nothing (UTC)
    ("TIMESTAMP WITH TIME ZONE", '"2024-01-01-12.00.00+05:30"',
     dt.datetime(2024, 1, 1, 6, 30, tzinfo=UTC)),
    ("TIMESTAMP WITH TIME ZONE", '"2024-01-01-12.00.00-08:00"',
     dt.datetime(2024, 1, 1, 20, 0, tzinfo=UTC)),
    ("TIMESTAMP WITH TIME ZONE", '"2024-01-01-12.00.00Z"', dt.datetime(2024, 1, 1, 12, tzinfo=UTC)),
    ("TIMESTAMP WITH TIME ZONE", '"2024-01-01-12.00.00"', dt.datetime(2024, 1, 1, 12, tzinfo=UTC)),
    ("TIMESTAMP WITH TIME ZONE", '"2024-01-01-12.00.00.123456789-08:00"',
     dt.datetime(2024, 1, 1, 20, 0, 0, 123456, tzinfo=UTC)),
    ("TIMESTAMP WITH TIME ZONE", '"2024-01-01T00:30:00+01:00"',
     dt.datetime(2023, 12, 31, 23, 30, tzinfo=UTC)),
    ("TIMESTAMP(12) WITH TIME ZONE", '"2024-12-31-24.00.00-01:00"',
     dt.datetime(2025, 1, 1, 1, 0, tzinfo=UTC)),
    ("TIMESTAMP WITH TIME ZONE", '"2024-01-01-12.00.00+24:00"', BAD),
    ("TIMESTAMP WITH TIME ZONE", '"2024-01-01-12.00.00+05:60"', BAD),
    ("TIMESTAMP WITH TIME ZONE", '"2024-01-01-12.00.00+0530"', BAD),
    ("TIMESTAMP WITH TIME ZONE", '"2024-01-01-12.00.00+05"', BAD),
    ("TIMESTAMP WITH TIME ZONE", '"2024-01-01-12.00.00z"', BAD),
    ("TIMESTAMP WITH TIME ZONE", '"2024-01-01-12.00.00 +05:30"', BAD),
    ("TIMESTAMP WITH TIME ZONE", '"2024-01-01-12.00.00+05:30Z"', BAD),
    # BOOLEAN
    ("BOOLEAN", "1", True), ("BOOLEAN", "0", False), ("BOOLEAN", '"1"', True),
    ("BOOLEAN", "true", True), ("BOOLEAN", "false", False), ("BOOLEAN", "TRUE", True),
    ("BOOLEAN", '"False"', False), ("BOOLEAN", "tRuE", True),
    ("BOOLEAN", "yes", BAD), ("BOOLEAN", "2", BAD), ("BOOLEAN", "t", BAD),
    ("BOOLEAN", "01", BAD), ("BOOLEAN", '""', BAD), ("BOOLEAN", '"true "', BAD),
    # binary types: hex text, either case, even length
    ("VARBINARY(8)", '"DEADbeef"', b"\xde\xad\xbe\xef"), ("BINARY(2)", '"00ff"', b"\x00\xff"),
    ("BLOB", '"0A0b"', b"\x0a\x0b"), ("CHAR(4) FOR BIT DATA", '"C1C2C3C4"', b"\xc1\xc2\xc3\xc4"),
    ("VARCHAR(4) FOR BIT DATA", "ABCD", b"\xab\xcd"), ("ROWID", '"0001"', b"\x00\x01"),
    ("RAW(2)", '"FFFF"', b"\xff\xff"),
    ("VARBINARY(8)", '"ABC"', BAD), ("VARBINARY(8)", '"0G"', BAD),
    ("VARBINARY(8)", '"AB CD"', BAD), ("VARBINARY(8)", '"0xAB"', BAD),
    ("VARBINARY(8)", '""', b""), ("BLOB", '""', b""), ("ROWID", '""', b""),
    # strings: quoting rules, delimiters inside, UTF-8, padding kept
    ("VARCHAR(20)", '"a""b"', 'a"b'), ("VARCHAR(20)", '""""', '"'),
    ("VARCHAR(20)", '"a,b\nc"', "a,b\nc"), ("VARCHAR(20)", '"中文€ß"', "中文€ß"),
    ("VARCHAR(20)", '""', ""), ("VARCHAR(20)", "abc", "abc"), ("VARCHAR(20)", "42", "42"),
    ("VARCHAR(20)", '"  x  "', "  x  "), ("CHAR(5)", '"AB   "', "AB   "),
    ("CLOB", '"<long>"', "<long>"), ("XML", '"<a b=""1""/>"', '<a b="1"/>'),
    ("GRAPHIC(2)", '"日本"', "日本"), ("VARCHAR2(10)", '"x"', "x"),
    ("LONG VARCHAR", '"\t\r"', "\t\r"),
]


@pytest.mark.parametrize("api,ctype,text,expected", both(VALUES))
def test_value(api, ctype, text, expected):
    rec = Rec(before=[""], after=[text])
    row = one(api, rec, catalog(("V", ctype)))
    if expected is BAD:
        assert row["after"] == {"V": None}
        assert row["_error"] == err("after.V", f"{shown(text)} is not {ctype}", rec.at(13))
    else:
        assert row["_error"] is None
        same(row["after"]["V"], expected)
    assert row["before"] is None


@pytest.mark.parametrize("api,ctype,text,expected", both([
    ("INTEGER", "-7", -7), ("DECIMAL(31,8)", "1.5", Decimal("1.50000000")),
    ("DATE", '"2024-02-29"', dt.date(2024, 2, 29)), ("VARCHAR(5)", '"a""b"', 'a"b'),
    ("DOUBLE", "x", BAD), ("TIMESTAMP", '"2024-12-31-24.00.00.000001"', BAD),
]))
def test_value_in_before_image(api, ctype, text, expected):
    """A delete's before values convert as after values do (and errors name `before.`)."""
    rec = Rec(before=[text], after=[""], operation='"DLET"')
    row = one(api, rec, catalog(("V", ctype)))
    assert row["after"] is None
    if expected is BAD:
        assert row["before"] == {"V": None}
        assert row["_error"] == err("before.V", f"{shown(text)} is not {ctype}", rec.at(12))
    else:
        assert row["_error"] is None
        same(row["before"]["V"], expected)


ARROW_TYPES = [
    ("TINYINT", pa.int8()), ("SMALLINT", pa.int16()), ("INTEGER", pa.int32()),
    ("BIGINT", pa.int64()), ("DECIMAL(31,8)", pa.decimal128(31, 8)),
    ("DECIMAL(38,0)", pa.decimal128(38, 0)), ("DECIMAL", pa.decimal128(5, 0)),
    ("REAL", pa.float32()), ("DOUBLE", pa.float64()), ("DECFLOAT", pa.string()),
    ("NUMBER", pa.string()), ("DATE", pa.date32()), ("TIME", pa.time64("us")),
    ("TIMESTAMP(12)", pa.timestamp("us")),
    ("TIMESTAMP WITH TIME ZONE", pa.timestamp("us", tz="UTC")), ("BOOLEAN", pa.bool_()),
    ("VARBINARY(8)", pa.binary()), ("CHAR(4) FOR BIT DATA", pa.binary()),
    ("VARCHAR(8)", pa.string()), ("CLOB", pa.string()),
]


@pytest.mark.parametrize("ctype,arrow", ARROW_TYPES)
def test_arrow_types(api, ctype, arrow):
    t = decode(api, Rec(before=[""], after=[""]).bytes(), catalog(("V", ctype)))
    assert t.schema.field("after").type == pa.struct([pa.field("V", arrow)])
    assert t.schema.field("before").type == pa.struct([pa.field("V", arrow)])
    assert t.schema.field("changed").type == pa.struct([pa.field("V", pa.bool_())])


TYPES = [c for c, _ in ARROW_TYPES]


@pytest.mark.parametrize("ctype", TYPES)
def test_empty_unquoted_is_null(api, ctype):
    rec = Rec(before=["", ""], after=["", "1"])
    row = one(api, rec, catalog(("V", ctype), ("K", "INTEGER")))
    assert row["_error"] is None
    assert row["after"] == {"V": None, "K": 1}
    assert row["present"] == {"V": True, "K": True}


@pytest.mark.parametrize("ctype", TYPES)
def test_null_in_not_null_column(api, ctype):
    rec = Rec(before=["", ""], after=["1", ""])
    row = one(api, rec, catalog(("K", "INTEGER"), ("V", ctype, False)))
    assert row["after"] == {"K": 1, "V": None}
    assert row["_error"] == err("after.V", "null in NOT NULL column", rec.at(15))


def test_empty_quoted_string_in_not_null_column(api):
    rec = Rec(before=[""], after=['""'])
    row = one(api, rec, catalog(("V", "VARCHAR(5)", False)))
    assert row["_error"] is None and row["after"] == {"V": ""}


def test_invalid_utf8_string(api):
    rec = Rec(before=[""], after=['"aXXb"'])
    data = rec.bytes().replace(b"XX", b"\xff\xfe")
    t = decode(api, data, catalog(("V", "VARCHAR(20)")))
    assert t.column("after").to_pylist() == [{"V": None}]
    assert t.column("_error").to_pylist() == [
        err("after.V", "'a\ufffd\ufffdb' is not VARCHAR(20)", rec.at(13))]


@pytest.mark.parametrize("api,raw,expected", both([(b"\xe9t\xe9", BAD), (b"plain", "plain")]))
def test_ascii_encoding_refuses_other_bytes(api, raw, expected):
    rec = Rec(before=[""], after=['"XX"'])
    data = rec.bytes().replace(b"XX", raw)
    t = decode(api, data, catalog(("V", "VARCHAR(20)")), encoding="ascii")
    if expected is BAD:
        assert t.column("after").to_pylist() == [{"V": None}]
        assert t.column("_error").to_pylist() == [
            err("after.V", f"{raw.decode('latin-1')!r} is not VARCHAR(20)", rec.at(13))]
    else:
        assert t.column("after").to_pylist() == [{"V": expected}]


def test_long_value_is_cut_at_40_characters_in_errors(api):
    text = "x" * 45
    rec = Rec(before=[""], after=[f'"{text}"'])
    row = one(api, rec, catalog(("V", "INTEGER")))
    assert row["_error"] == err("after.V", f"'{'x' * 40}'… is not INTEGER", rec.at(13))


def test_first_error_in_field_order(api):
    rec = Rec(before=["x", "1"], after=["2", "y"], operation='"REPL"')
    row = one(api, rec, catalog(("A", "INTEGER"), ("B", "INTEGER")))
    assert row["_error"] == err("before.A", "'x' is not INTEGER", rec.at(12))
    assert row["before"] == {"A": None, "B": 1} and row["after"] == {"A": 2, "B": None}
    # a header error comes before any value error
    rec = Rec(before=["x", "1"], after=["2", "y"], operation='"REPL"', type="t")
    row = one(api, rec, catalog(("A", "INTEGER"), ("B", "INTEGER")))
    assert row["_error"] == err("type", "'t' is not an INTEGER", 0)


def test_temporal_extremes_as_integers(api):
    """9999-12-31-24.00.00 is year 10000's first instant: past Python's datetime, not Arrow's."""
    cat = catalog(("TS", "TIMESTAMP"), ("TZ", "TIMESTAMP WITH TIME ZONE"))
    rec = Rec(before=["", ""], after=['"9999-12-31-24.00.00"', '"0001-01-01-00.00.00+00:01"'])
    t = decode(api, rec.bytes(), cat)
    assert t.column("_error").to_pylist() == [None]
    after = t.column("after").combine_chunks()
    first_us = (dt.datetime(1, 1, 1) - dt.datetime(1970, 1, 1)) // dt.timedelta(microseconds=1)
    end_us = (dt.datetime(9999, 12, 31) - dt.datetime(1970, 1, 1)) // dt.timedelta(
        microseconds=1) + 86_400_000_000
    assert after.field("TS").cast(pa.int64()).to_pylist() == [end_us]
    assert after.field("TZ").cast(pa.int64()).to_pylist() == [first_us - 60_000_000]


# -- decimal_char ----------------------------------------------------------------------------

@pytest.mark.parametrize("api,ctype,text,expected", both([
    ("DECIMAL(9,2)", "5,25", Decimal("5.25")), ("DECIMAL(9,2)", "-,5", Decimal("-0.50")),
    ("DECIMAL(9,2)", '"5,25"', Decimal("5.25")), ("DECIMAL(9,2)", "5.25", BAD),
    ("DOUBLE", "1,5E3", 1500.0), ("DOUBLE", "-0,25", -0.25), ("DOUBLE", "1.5", BAD),
    ("REAL", "0,1", f32(0.1)), ("DECFLOAT", "1,50", "1.50"), ("DECFLOAT", "1.50", BAD),
    ("NUMBER", "-1,5E-3", "-1.5E-3"), ("INTEGER", "1,0", BAD),
    ("VARCHAR(9)", '"a,b;c"', "a,b;c"), ("VARCHAR(9)", "1,5", "1,5"),
]))
def test_decimal_char_comma(api, ctype, text, expected):
    rec = Rec(before=[""], after=[text], cd=";")
    row = one(api, rec, catalog(("V", ctype)), decimal_char=",", column_delimiter=";")
    if expected is BAD:
        assert row["after"] == {"V": None}
        assert row["_error"] == err("after.V", f"{shown(text)} is not {ctype}", rec.at(13))
    else:
        assert row["_error"] is None
        same(row["after"]["V"], expected)


# -- header fields ---------------------------------------------------------------------------

def _get(row, path):
    v = row
    for p in path:
        v = v[p] if v is not None else None
    return v


def _pos(hexgroups):
    return bytes.fromhex(hexgroups.replace(":", ""))


HEADERS = [
    # (field, text, path into the row, expected; BAD for an error with the given reason text)
    ("type", "10", ("source", "type"), 10), ("type", "-5", ("source", "type"), -5),
    ("type", '"10"', ("source", "type"), 10), ("type", "", ("source", "type"), None),
    ("type", "2147483648", ("source", "type"), (BAD, "an INTEGER")),
    ("type", "x", ("source", "type"), (BAD, "an INTEGER")),
    ("type", '""', ("source", "type"), (BAD, "an INTEGER")),
    ("identifier", '"IBM"', ("source", "identifier"), "IBM"),
    ("identifier", "", ("source", "identifier"), None),
    ("date", '"2024366"', ("source", "put_ts"), dt.datetime(2024, 12, 31, 18, 23, 18, 5, tzinfo=UTC)),
    ("date", '"2023365"', ("source", "put_ts"), dt.datetime(2023, 12, 31, 18, 23, 18, 5, tzinfo=UTC)),
    ("date", '"2024060"', ("source", "put_ts"), dt.datetime(2024, 2, 29, 18, 23, 18, 5, tzinfo=UTC)),
    ("date", '"2023060"', ("source", "put_ts"), dt.datetime(2023, 3, 1, 18, 23, 18, 5, tzinfo=UTC)),
    ("date", '"2000366"', ("source", "put_ts"), dt.datetime(2000, 12, 31, 18, 23, 18, 5, tzinfo=UTC)),
    ("date", "2006030", ("source", "put_ts"), dt.datetime(2006, 1, 30, 18, 23, 18, 5, tzinfo=UTC)),
    ("date", '"0001001"', ("source", "put_ts"), dt.datetime(1, 1, 1, 18, 23, 18, 5, tzinfo=UTC)),
    ("date", "", ("source", "put_ts"), None),
    ("date", '"2023366"', ("source", "put_ts"), (BAD, "a YYYYnnn date")),
    ("date", '"1900366"', ("source", "put_ts"), (BAD, "a YYYYnnn date")),
    ("date", '"2024367"', ("source", "put_ts"), (BAD, "a YYYYnnn date")),
    ("date", '"2024000"', ("source", "put_ts"), (BAD, "a YYYYnnn date")),
    ("date", '"0000001"', ("source", "put_ts"), (BAD, "a YYYYnnn date")),
    ("date", '"202436"', ("source", "put_ts"), (BAD, "a YYYYnnn date")),
    ("date", '"20243660"', ("source", "put_ts"), (BAD, "a YYYYnnn date")),
    ("date", '"2024-01"', ("source", "put_ts"), (BAD, "a YYYYnnn date")),
    ("date", '""', ("source", "put_ts"), (BAD, "a YYYYnnn date")),
    ("time", '"000000000000"', ("source", "put_ts"), dt.datetime(2006, 1, 30, tzinfo=UTC)),
    ("time", '"235959999999"', ("source", "put_ts"),
     dt.datetime(2006, 1, 30, 23, 59, 59, 999999, tzinfo=UTC)),
    ("time", "", ("source", "put_ts"), None),
    ("time", '"240000000000"', ("source", "put_ts"), (BAD, "an HHMMSSmmmmmm time")),
    ("time", '"236000000000"', ("source", "put_ts"), (BAD, "an HHMMSSmmmmmm time")),
    ("time", '"235960000000"', ("source", "put_ts"), (BAD, "an HHMMSSmmmmmm time")),
    ("time", '"18231800000"', ("source", "put_ts"), (BAD, "an HHMMSSmmmmmm time")),
    ("time", '"1823180000050"', ("source", "put_ts"), (BAD, "an HHMMSSmmmmmm time")),
    ("time", '"18:23:18.000"', ("source", "put_ts"), (BAD, "an HHMMSSmmmmmm time")),
    ("operation", '"ISRT"', ("op",), "c"), ("operation", "ISRT", ("source_op",), "ISRT"),
    ("transaction_identifier", '"0000:0000:0388:4642:0000"', ("txid",),
     "0000:0000:0388:4642:0000"),
    ("transaction_identifier", '"a""b"', ("txid",), 'a"b'),
    ("transaction_identifier", "", ("txid",), None),
    ("commit_lsn", '"0000:0000:0388:4642:0000"', ("commit_pos",), _pos("0000:0000:0388:4642:0000")),
    ("commit_lsn", '"0000:0000:0388:4642:0000"', ("change_pos",), _pos("0000:0000:0388:4642:0000")),
    ("commit_lsn", '"0000:0000:0000:0271:000c:0000:0000:0000"', ("commit_pos",),
     b"\x00\x00\x00\x00\x00\x00\x02\x71\x00\x0c\x00\x00\x00\x00\x00\x00"),
    ("commit_lsn", '"0000:0000:0000:0271:000c:0000:0000:0000"', ("change_pos",),
     b"\x00\x00\x00\x00\x00\x00\x02\x71\x00\x0c\x00\x00\x00\x00\x00\x00"),
    ("commit_lsn", '"ABCD"', ("commit_pos",), b"\xab\xcd"),
    ("commit_lsn", '"abcd:EF01"', ("commit_pos",), b"\xab\xcd\xef\x01"),
    ("commit_lsn", "0000:0271", ("commit_pos",), b"\x00\x00\x02\x71"),
    ("commit_lsn", "", ("commit_pos",), None), ("commit_lsn", "", ("change_pos",), None),
    ("commit_lsn", '"0000:000"', ("commit_pos",), (BAD, "an LSN")),
    ("commit_lsn", '"0000:00G0"', ("commit_pos",), (BAD, "an LSN")),
    ("commit_lsn", '"0000::0000"', ("commit_pos",), (BAD, "an LSN")),
    ("commit_lsn", '"0000:0000:"', ("commit_pos",), (BAD, "an LSN")),
    ("commit_lsn", '":0000"', ("commit_pos",), (BAD, "an LSN")),
    ("commit_lsn", '"00000"', ("change_pos",), (BAD, "an LSN")),
    ("commit_lsn", '"0000 0000"', ("commit_pos",), (BAD, "an LSN")),
    ("commit_lsn", '"0000-0000"', ("commit_pos",), (BAD, "an LSN")),
    ("commit_lsn", '"00000:000"', ("commit_pos",), (BAD, "an LSN")),
    ("commit_lsn", '""', ("commit_pos",), (BAD, "an LSN")),
    ("commit_time", '"2006-06-30-18.00.52"', ("commit_ts",), dt.datetime(2006, 6, 30, 18, 0, 52, tzinfo=UTC)),
    ("commit_time", '"2006-06-30-18.00.52"', ("change_ts",), dt.datetime(2006, 6, 30, 18, 0, 52, tzinfo=UTC)),
    ("commit_time", '"2006-06-30 18:00:52.123456789"', ("commit_ts",),
     dt.datetime(2006, 6, 30, 18, 0, 52, 123456, tzinfo=UTC)),
    ("commit_time", '"2006-06-30T18.00.52.9999999"', ("change_ts",),
     dt.datetime(2006, 6, 30, 18, 0, 52, 999999, tzinfo=UTC)),
    ("commit_time", '"2006-06-30-24.00.00"', ("commit_ts",), dt.datetime(2006, 7, 1, tzinfo=UTC)),
    ("commit_time", "2006-06-30-18.00.52", ("commit_ts",), dt.datetime(2006, 6, 30, 18, 0, 52, tzinfo=UTC)),
    ("commit_time", "", ("commit_ts",), None), ("commit_time", "", ("change_ts",), None),
    ("commit_time", '"2006-06-30-18.00.67"', ("commit_ts",), (BAD, "a TIMESTAMP")),
    ("commit_time", '"2006-06-31-00.00.00"', ("commit_ts",), (BAD, "a TIMESTAMP")),
    ("commit_time", '"2006-06-30"', ("change_ts",), (BAD, "a TIMESTAMP")),
    ("commit_time", '"2006-06-30-18.00.52+01:00"', ("commit_ts",), (BAD, "a TIMESTAMP")),
    ("commit_time", '"2006-06-30-18.00.52Z"', ("commit_ts",), (BAD, "a TIMESTAMP")),
    ("commit_time", '"2006-06-30-24.00.00.000001"', ("commit_ts",), (BAD, "a TIMESTAMP")),
    ("commit_time", '""', ("commit_ts",), (BAD, "a TIMESTAMP")),
    ("plan_name", '"ASNQC910"', ("source", "plan_name"), "ASNQC910"),
    ("plan_name", "", ("source", "plan_name"), None),
    ("plan_name", '""', ("source", "plan_name"), ""),
    ("segment_number", "0000", ("source", "segment"), 0),
    ("segment_number", "0001", ("source", "segment"), 1),
    ("segment_number", '"3"', ("source", "segment"), 3),
    ("segment_number", "-1", ("source", "segment"), -1),
    ("segment_number", "", ("source", "segment"), None),
    ("segment_number", "x", ("source", "segment"), (BAD, "an INTEGER")),
    ("segment_number", "99999999999", ("source", "segment"), (BAD, "an INTEGER")),
    ("segment_number", "1.0", ("source", "segment"), (BAD, "an INTEGER")),
]


@pytest.mark.parametrize("api,field,text,path,expected", both(HEADERS))
def test_header_field(api, field, text, path, expected):
    rec = Rec(before=[""], after=["1"], **{field: text})
    row = one(api, rec, catalog(("V", "INTEGER")))
    if isinstance(expected, tuple) and expected[0] is BAD:
        assert _get(row, path) is None
        k = HEADER_NAMES.index(field)
        assert row["_error"] == err(field, f"{shown(text)} is not {expected[1]}", rec.at(k))
    else:
        assert row["_error"] is None
        got = _get(row, path)
        if isinstance(expected, dt.datetime):
            assert got == expected and got.utcoffset() == dt.timedelta(0)
        else:
            assert got == expected and type(got) is type(expected)
    # a header problem never costs the row its values
    assert row["after"] == {"V": 1}


def test_header_dates_both_bad_names_date(api):
    rec = Rec(before=[""], after=["1"], date='"2023366"', time='"250000000000"')
    row = one(api, rec, catalog(("V", "INTEGER")))
    assert row["_error"] == err("date", "'2023366' is not a YYYYnnn date", rec.at(2))
    assert row["source"]["put_ts"] is None


@pytest.mark.parametrize("api,ident,expected", both([
    ("IBM-INVALID-COLUMN-0002-A-HEX", (2, "A", "HEX")),
    ("IBM-INVALID-COLUMN-002A-HEX", (2, "A", "HEX")),
    ("IBM-INVALID-COLUMN-0003-B-NULL", (3, "B", "NULL")),
    ("IBM-INVALID-COLUMN-7B-NULL", (7, "B", "NULL")),
    ("IBM-INVALID-COLUMN-9999-A-HEX", (9999, "A", "HEX")),
    ("IBM-INVALID-COLUMN-1A-NULL", (1, "A", "NULL")),
    ("IBM", (None, None, None)), ("ibm-invalid-column-0002-A-HEX", (None, None, None)),
    ("IBM-INVALID-COLUMN", (None, None, None)),
    ("IBM-INVALID-COLUMN-", BAD), ("IBM-INVALID-COLUMN-12345-A-HEX", BAD),
    ("IBM-INVALID-COLUMN-0002-C-HEX", BAD), ("IBM-INVALID-COLUMN-0002-A-hex", BAD),
    ("IBM-INVALID-COLUMN-0002-a-HEX", BAD), ("IBM-INVALID-COLUMN-0002-A-HEXX", BAD),
    ("IBM-INVALID-COLUMN-0002--A-HEX", BAD), ("IBM-INVALID-COLUMN-A-HEX", BAD),
    ("IBM-INVALID-COLUMN-0002-A", BAD), ("IBM-INVALID-COLUMN-0002A-", BAD),
    ("IBM-INVALID-COLUMN-0002A_HEX", BAD), ("IBM-INVALID-COLUMN-0002AHEX", BAD),
    ("IBM-INVALID-COLUMN-0002-A-NUL", BAD), ("IBM-INVALID-COLUMN- 2-A-HEX", BAD),
]))
def test_identifier(api, ident, expected):
    rec = Rec(before=[""], after=["1"], identifier=f'"{ident}"')
    row = one(api, rec, catalog(("V", "INTEGER")))
    s = row["source"]
    assert s["identifier"] == ident            # the field itself is text, kept as sent
    got = (s["invalid_column"], s["invalid_image"], s["invalid_mode"])
    if expected is BAD:
        assert got == (None, None, None)
        assert row["_error"] == err("identifier",
                                    f"{ident!r} is not an IBM-INVALID-COLUMN identifier",
                                    rec.at(1))
    else:
        assert got == expected
        assert row["_error"] is None           # an invalid-column row is not an error
    assert row["after"] == {"V": 1}


@pytest.mark.parametrize("api,field,what", both([
    ("transaction_identifier", "utf-8 text"), ("plan_name", "utf-8 text"),
    ("identifier", "utf-8 text"),
]))
def test_header_text_not_utf8(api, field, what):
    rec = Rec(before=[""], after=["1"], **{field: '"XX"'})
    data = rec.bytes().replace(b"XX", b"\xc3")
    t = decode(api, data, catalog(("V", "INTEGER")))
    assert t.column("_error").to_pylist() == [
        err(field, f"'\ufffd' is not {what}", rec.at(HEADER_NAMES.index(field)))]


@pytest.mark.parametrize("api,op,before,after,expected", both([
    ('"ISRT"', ["", ""], ["1", '"a"'], ("c", "ISRT", None, {"A": 1, "B": "a"},
                                         {"A": True, "B": True})),
    ('"REPL"', ["1", '"a"'], ["1", '"b"'], ("u", "REPL", {"A": 1, "B": "a"},
                                            {"A": 1, "B": "b"}, {"A": False, "B": True})),
    ('"DLET"', ["1", '"a"'], ["", ""], ("d", "DLET", {"A": 1, "B": "a"}, None,
                                        {"A": False, "B": False})),
    ("DLET", ["1", '"a"'], ["", ""], ("d", "DLET", {"A": 1, "B": "a"}, None,
                                      {"A": False, "B": False})),
]))
def test_operation(api, op, before, after, expected):
    rec = Rec(before=before, after=after, operation=op)
    row = one(api, rec, catalog(("A", "INTEGER"), ("B", "VARCHAR(5)")))
    assert row["_error"] is None
    assert (row["op"], row["source_op"], row["before"], row["after"], row["changed"]) == expected
    assert row["present"] == {"A": True, "B": True}


@pytest.mark.parametrize("api,op,source_op", both([
    ('"UPSR"', "UPSR"), ('"isrt"', "isrt"), ('"ISRT "', "ISRT "), ('""', ""), ("", None),
    ("REP", "REP"),
]))
def test_unknown_operation(api, op, source_op):
    rec = Rec(before=["1"], after=["2"], operation=op)
    row = one(api, rec, catalog(("A", "INTEGER")))
    assert row["op"] is None and row["source_op"] == source_op
    assert row["before"] is None and row["after"] is None
    assert row["changed"] is None and row["present"] is None
    assert row["_error"] == err("operation", f"{shown(op)} is not ISRT, REPL or DLET", rec.at(6))
    # the rest of the header is kept
    assert row["txid"] == "0000:0000:0388:4642:0000" and row["source"]["type"] == 10


# -- images of the operations ----------------------------------------------------------------

def test_insert_carrying_a_before_value(api):
    rec = Rec(before=["", "5"], after=["1", "2"])
    row = one(api, rec, catalog(("A", "INTEGER"), ("B", "INTEGER")))
    assert row["_error"] == err("before.B", "an insert carries a before value", rec.at(13))
    assert row["before"] is None and row["after"] == {"A": 1, "B": 2}


def test_insert_carrying_an_empty_quoted_before_value(api):
    rec = Rec(before=['""'], after=["1"])
    row = one(api, rec, catalog(("A", "INTEGER")))
    assert row["_error"] == err("before.A", "an insert carries a before value", rec.at(12))
    assert row["before"] is None


def test_delete_carrying_an_after_value(api):
    rec = Rec(before=["1", "2"], after=["", "x"], operation='"DLET"')
    row = one(api, rec, catalog(("A", "INTEGER"), ("B", "INTEGER")))
    assert row["_error"] == err("after.B", "a delete carries an after value", rec.at(15))
    assert row["after"] is None and row["before"] == {"A": 1, "B": 2}


# -- changed / present -------------------------------------------------------------------------

CHANGED_CAT = catalog(("A", "INTEGER"), ("B", "VARCHAR(5)"), ("C", "DECIMAL(5,2)"),
                      ("D", "DOUBLE"), ("E", "TIMESTAMP"), ("F", "DECFLOAT"))


@pytest.mark.parametrize("api,before,after,expected", both([
    (["1", '"x"', "1.0", "1.5", '"2024-01-01-00.00.00"', "1.0"],
     ["1", '"y"', "1.00", "15E-1", '"2024-01-01 00:00:00.000000"', "1.00"],
     {"A": False, "B": True, "C": False, "D": False, "E": False, "F": True}),
    (["", '"x"', "", "0", '"2024-01-01-00.00.00"', ""],
     ["", "", "1", "-0", '"2024-01-01-00.00.00.000001"', ""],
     {"A": False, "B": True, "C": True, "D": False, "E": True, "F": False}),
    (["1", '""', "2", "", "", "1"], ["2", "", "2.000", "1", "", "1"],
     {"A": True, "B": True, "C": False, "D": True, "E": False, "F": False}),
]))
def test_changed_on_update(api, before, after, expected):
    rec = Rec(before=before, after=after, operation='"REPL"')
    row = one(api, rec, CHANGED_CAT)
    assert row["_error"] is None
    assert row["changed"] == expected
    assert row["present"] == dict.fromkeys(expected, True)


def test_changed_counts_a_failed_value_as_null(api):
    rec = Rec(before=["abc", "1"], after=["", "x"], operation='"REPL"')
    row = one(api, rec, catalog(("A", "INTEGER"), ("B", "INTEGER")))
    assert row["changed"] == {"A": False, "B": True}
    assert row["_error"] == err("before.A", "'abc' is not INTEGER", rec.at(12))


def test_changed_for_inserts_and_deletes(api):
    cat = catalog(("A", "INTEGER"), ("B", "VARCHAR(5)"))
    ins = one(api, Rec(before=["", ""], after=["", ""]), cat)
    assert ins["changed"] == {"A": True, "B": True}
    assert ins["present"] == {"A": True, "B": True}
    dele = one(api, Rec(before=["", ""], after=["", ""], operation='"DLET"'), cat)
    assert dele["changed"] == {"A": False, "B": False}
    assert dele["present"] == {"A": True, "B": True}
    assert dele["before"] == {"A": None, "B": None} and dele["after"] is None


# -- invalid-column rows -----------------------------------------------------------------------

HEX_CAT = catalog(("ID", "INTEGER"), ("NAME", "VARCHAR(10)"), ("CODE", "CHAR(3)"),
                  ("NOTE", "CLOB"), ("BIN", "VARCHAR(4) FOR BIT DATA"), ("X", "XML"))
HEX_ID = '"IBM-INVALID-COLUMN-0002-A-HEX"'
NULL_ID = '"IBM-INVALID-COLUMN-0002-A-NULL"'


def test_hex_row_decoded_with_hex_encoding(api):
    rec = Rec(before=[""] * 6, after=["12", '"C1C2C3"', '"f1f2f3"', "", '"ABCD"', ""],
              identifier=HEX_ID)
    row = one(api, rec, HEX_CAT, hex_encoding="cp037")
    assert row["_error"] is None
    assert row["after"] == {"ID": 12, "NAME": "ABC", "CODE": "123", "NOTE": None,
                            "BIN": b"\xab\xcd", "X": None}
    # LOB and XML columns that are NULL in a HEX row were not sent
    assert row["present"] == {"ID": True, "NAME": True, "CODE": True, "NOTE": False,
                              "BIN": True, "X": False}
    assert (row["source"]["invalid_column"], row["source"]["invalid_image"],
            row["source"]["invalid_mode"]) == (2, "A", "HEX")


def test_hex_row_kept_as_text_without_hex_encoding(api):
    rec = Rec(before=[""] * 6, after=["12", '"C1C2C3"', '"F1F2F3"', "", '"ABCD"', ""],
              identifier=HEX_ID)
    row = one(api, rec, HEX_CAT)
    assert row["_error"] is None
    assert row["after"] == {"ID": 12, "NAME": "C1C2C3", "CODE": "F1F2F3", "NOTE": None,
                            "BIN": b"\xab\xcd", "X": None}


@pytest.mark.parametrize("api,hex_encoding,text,expected", both([
    ("cp1140", '"9F"', "€"), ("cp037", '"4A"', "¢"), ("cp500", '"4A"', "["),
    ("cp1047", '"AD"', "["), ("utf-8", '"E282AC"', "€"), ("latin-1", '"E9"', "é"),
    ("cp037", '"C1C"', (BAD, "is not hex text")), ("cp037", '"ZZ"', (BAD, "is not hex text")),
    ("utf-8", '"FF"', (BAD, "is not VARCHAR(10)")),
]))
def test_hex_encodings(api, hex_encoding, text, expected):
    rec = Rec(before=[""] * 6, after=["1", text, "", "", "", ""], identifier=HEX_ID)
    row = one(api, rec, HEX_CAT, hex_encoding=hex_encoding)
    if isinstance(expected, tuple):
        assert row["after"]["NAME"] is None
        assert row["_error"] == err("after.NAME", f"{shown(text)} {expected[1]}", rec.at(19))
    else:
        assert row["_error"] is None and row["after"]["NAME"] == expected


@pytest.mark.parametrize("api,hex_encoding", both([
    ("cp037",), ("utf-8",)]))
def test_hex_row_empty_value_with_hex_encoding(api, hex_encoding):
    """Run in a child process: the native decoder crashed the interpreter on this input."""
    rec = Rec(before=[""], after=['""'], identifier=HEX_ID)
    code = (f"import json, cdcfast, cdcfast.reference as r\n"
            f"t = {api.__name__}.decode({rec.bytes()!r}, format='ibm-delimited', "
            f"catalog={catalog(('V', 'VARCHAR(10)'))!r}, table='S.T', "
            f"hex_encoding={hex_encoding!r})\n"
            f"print(json.dumps([t.column('after').to_pylist(), t.column('_error').to_pylist()]))")
    res = subprocess.run([sys.executable, "-c", code.replace("cdcfast.reference.", "r.")],
                         capture_output=True, text=True, timeout=120)
    assert res.returncode == 0, res.stderr[-2000:]
    assert json.loads(res.stdout) == [[{"V": ""}], [None]]


def test_hex_row_leaves_other_types_alone(api):
    rec = Rec(before=[""] * 6, after=["C1", '"C1"', "", "", "", ""], identifier=HEX_ID)
    row = one(api, rec, HEX_CAT, hex_encoding="cp037")
    assert row["after"]["ID"] is None and row["after"]["NAME"] == "A"
    assert row["_error"] == err("after.ID", "'C1' is not INTEGER", rec.at(18))


def test_hex_row_not_null_rules(api):
    cat = catalog(("NAME", "VARCHAR(10)", False), ("NOTE", "CLOB", False))
    rec = Rec(before=["", ""], after=["", ""], identifier=HEX_ID)
    row = one(api, rec, cat, hex_encoding="cp037")
    # only LOB/XML columns are exempt in a HEX row: a NULL character column is still an error
    assert row["_error"] == err("after.NAME", "null in NOT NULL column", rec.at(14))
    assert row["present"] == {"NAME": True, "NOTE": False}


def test_null_row(api):
    cat = catalog(("ID", "INTEGER", False), ("NAME", "VARCHAR(10)", False), ("CODE", "CHAR(3)"),
                  ("NOTE", "CLOB", False), ("X", "XML"), ("N", "INTEGER"))
    rec = Rec(before=[""] * 6, after=["1", "", "", "", "", ""], identifier=NULL_ID)
    row = one(api, rec, cat)
    assert row["_error"] is None              # nulled character/LOB columns are not errors
    assert row["after"] == dict.fromkeys(["ID", "NAME", "CODE", "NOTE", "X", "N"]) | {"ID": 1}
    assert row["present"] == {"ID": True, "NAME": False, "CODE": False, "NOTE": False,
                              "X": False, "N": True}
    # a non-character column keeps its NOT NULL check
    rec = Rec(before=[""] * 6, after=["", "", "", "", "", ""], identifier=NULL_ID)
    assert one(api, rec, cat)["_error"] == err("after.ID", "null in NOT NULL column", rec.at(18))


def test_null_row_delete_and_update(api):
    cat = catalog(("ID", "INTEGER"), ("NAME", "VARCHAR(10)", False))
    rec = Rec(before=["1", ""], after=["", ""], identifier=NULL_ID, operation='"DLET"')
    row = one(api, rec, cat)
    assert row["_error"] is None
    assert row["present"] == {"ID": True, "NAME": False}     # delete: the before image
    rec = Rec(before=["1", ""], after=["2", '"b"'], identifier=NULL_ID, operation='"REPL"')
    row = one(api, rec, cat)
    assert row["_error"] is None
    assert row["present"] == {"ID": True, "NAME": True}      # update: the after image
    assert row["changed"] == {"ID": True, "NAME": True}
    rec = Rec(before=["1", '"a"'], after=["2", ""], identifier=NULL_ID, operation='"REPL"')
    row = one(api, rec, cat)
    assert row["_error"] is None and row["present"] == {"ID": True, "NAME": False}


@pytest.mark.parametrize("api,ident,ctype", both([(NULL_ID, "VARCHAR(4)"), (HEX_ID, "CLOB")]))
def test_present_only_false_for_null_fields(api, ident, ctype):
    rec = Rec(before=[""], after=['"XX"'], identifier=ident)
    data = rec.bytes().replace(b"XX", b"\xff")
    t = decode(api, data, catalog(("V", ctype)))
    assert t.column("_error").to_pylist() == [
        err("after.V", f"'\ufffd' is not {ctype}", rec.at(13))]
    assert t.column("present").to_pylist() == [{"V": True}]


# -- time zones ------------------------------------------------------------------------------

NY = ZoneInfo("America/New_York")

DST_TIMES = [  # wall-clock times around both 2021 changes in New York (gap and overlap)
    dt.datetime(2021, 3, 14, 1, 59, 59), dt.datetime(2021, 3, 14, 2, 0, 0),
    dt.datetime(2021, 3, 14, 2, 30, 0), dt.datetime(2021, 3, 14, 2, 59, 59),
    dt.datetime(2021, 3, 14, 3, 0, 0), dt.datetime(2021, 11, 7, 0, 59, 59),
    dt.datetime(2021, 11, 7, 1, 0, 0), dt.datetime(2021, 11, 7, 1, 30, 0),
    dt.datetime(2021, 11, 7, 1, 59, 59), dt.datetime(2021, 11, 7, 2, 0, 0),
    dt.datetime(2021, 7, 1, 12, 0, 0), dt.datetime(2021, 1, 1, 12, 0, 0),
]


def test_source_tz_across_dst_changes(api):
    recs = []
    for w in DST_TIMES:
        recs.append(Rec(before=[""], after=['"2021-03-14-02.30.00"'],
                        commit_time=f'"{w:%Y-%m-%d-%H.%M.%S}"',
                        date=f'"{w.year}{w.timetuple().tm_yday:03d}"',
                        time=f'"{w:%H%M%S}000007"').bytes())
    t = decode(api, b"\n".join(recs), catalog(("TS", "TIMESTAMP")),
               source_tz="America/New_York")
    assert t.column("_error").null_count == len(DST_TIMES)
    # an ambiguous or skipped wall time reads as the earlier instant it can mean (SPEC §3):
    # the first pass of a repeated hour, the new offset in a skipped hour
    expected = [min(w.replace(tzinfo=NY, fold=0).astimezone(UTC),
                    w.replace(tzinfo=NY, fold=1).astimezone(UTC)) for w in DST_TIMES]
    skipped = dt.datetime(2021, 3, 14, 2, 30)
    if skipped in DST_TIMES:                    # 02:30 EST does not exist: 02:30 EDT, 06:30Z
        assert expected[DST_TIMES.index(skipped)] == dt.datetime(2021, 3, 14, 6, 30,
                                                                 tzinfo=UTC)
    assert t.column("commit_ts").to_pylist() == expected
    assert t.column("change_ts").to_pylist() == expected
    assert [s["put_ts"] for s in t.column("source").to_pylist()] == \
        [e + dt.timedelta(microseconds=7) for e in expected]
    # column values keep the table's own (zone-less) type: not shifted
    assert {a["TS"] for a in t.column("after").to_pylist()} == {dt.datetime(2021, 3, 14, 2, 30)}


def test_source_tz_fixed_offset(api):
    rec = Rec(before=["", ""], after=['"2024-01-01-12.00.00"', '"2024-01-01-12.00.00"'])
    row = one(api, rec, catalog(("TS", "TIMESTAMP"), ("TZ", "TIMESTAMP WITH TIME ZONE")),
              source_tz="+05:30")
    assert row["commit_ts"] == dt.datetime(2006, 6, 30, 12, 30, 52, tzinfo=UTC)
    assert row["source"]["put_ts"] == dt.datetime(2006, 1, 30, 12, 53, 18, 5, tzinfo=UTC)
    # a TIMESTAMP column is zone-less; a TIMESTAMP WITH TIME ZONE without suffix is UTC
    assert row["after"] == {"TS": dt.datetime(2024, 1, 1, 12),
                            "TZ": dt.datetime(2024, 1, 1, 12, tzinfo=UTC)}


def test_source_tz_does_not_touch_zone_suffixes(api):
    rec = Rec(before=[""], after=['"2024-07-01-12.00.00-08:00"'])
    row = one(api, rec, catalog(("TZ", "TIMESTAMP WITH TIME ZONE")),
              source_tz="America/New_York")
    assert row["after"] == {"TZ": dt.datetime(2024, 7, 1, 20, tzinfo=UTC)}


@pytest.mark.parametrize("api,commit,expected_us", both([
    ("9999-12-31-23.59.59", (dt.datetime(9999, 12, 31, 23, 59, 59) - dt.datetime(1970, 1, 1))
     // dt.timedelta(microseconds=1) + 5 * 3600 * 10 ** 6),
    ("0001-01-01-00.00.00", (dt.datetime(1, 1, 1, tzinfo=NY).astimezone(UTC)
                             - dt.datetime(1970, 1, 1, tzinfo=UTC))
     // dt.timedelta(microseconds=1)),
    ("2024-06-01-00.00.00", (dt.datetime(2024, 6, 1, 4) - dt.datetime(1970, 1, 1))
     // dt.timedelta(microseconds=1)),
]))
def test_source_tz_at_the_ends_of_time(api, commit, expected_us):
    rec = Rec(before=[""], after=["1"], commit_time=f'"{commit}"')
    t = decode(api, rec.bytes(), catalog(("V", "INTEGER")), source_tz="America/New_York")
    assert t.column("commit_ts").cast(pa.int64()).to_pylist() == [expected_us]


# -- code pages ------------------------------------------------------------------------------

EBCDIC_CAT = catalog(("ID", "INTEGER"), ("AMOUNT", "DECIMAL(9,2)"), ("RATE", "DOUBLE"),
                     ("W", "REAL"), ("D", "DATE"), ("T", "TIME"), ("TS", "TIMESTAMP"),
                     ("TZ", "TIMESTAMP WITH TIME ZONE"), ("OK", "BOOLEAN"),
                     ("BIN", "VARCHAR(8) FOR BIT DATA"), ("NAME", "VARCHAR(40)"),
                     ("NOTE", "CHAR(6)"), ("F", "DECFLOAT"))


def ebcdic_records(text):
    before = ["7", "-1.5", "2.5E-3", "0.1", '"2024-02-29"', '"23.59.59"',
              '"2024-02-29-23.59.59.123456789"', '"2024-02-29-12.00.00-08:00"', "0",
              '"00ff"', '"old"', '"abc   "', "1.5E+3"]
    after = ["-8", "12345.67", "-1E+10", "3.5", '"1999-12-31"', '"00:00:01"',
             '"2024-12-31-24.00.00"', '"2024-02-29-12.00.00Z"', "true", '"C1c2"',
             f'"{text}"', '"[x]^ "', "NaN"]
    return [Rec(before=before, after=after, operation='"REPL"', plan_name='"PLAN ÉÜ"'),
            Rec(before=[""] * 13, after=after),
            Rec(before=after, after=[""] * 13, operation='"DLET"')]


@pytest.mark.parametrize("encoding,text", [
    ("cp037", 'é, "ü" ß ñ'), ("cp500", 'é, "ü" ß ñ'), ("cp1047", 'é, "ü" ß ñ [¬]'),
    ("cp1140", 'é, "ü" ß ñ €'),
])
def test_ebcdic_same_values_as_utf8(api, encoding, text):
    recs = ebcdic_records(text.replace('"', '""'))
    utf8 = b"\n".join(r.bytes() for r in recs) + b"\n"
    ebcdic = encode_text("\n".join(r.text for r in recs) + "\n", encoding)
    assert ebcdic.endswith(b"\x25") and ebcdic.count(b"\x25") == 3     # X'25' ends records
    a = decode(api, utf8, EBCDIC_CAT)
    b = decode(api, ebcdic, EBCDIC_CAT, encoding=encoding)
    assert a.column("_error").to_pylist() == [None] * 3
    assert b.equals(a)
    assert a.column("after").to_pylist()[0]["NAME"] == text
    assert a.column("after").to_pylist()[0]["NOTE"] == "[x]^ "
    assert a.column("source").to_pylist()[0]["plan_name"] == "PLAN ÉÜ"


def test_ebcdic_error_texts(api):
    rec = Rec(before=[""], after=['"12a"'])
    t = decode(api, rec.bytes("cp037"), catalog(("V", "INTEGER")), encoding="cp037")
    assert t.column("_error").to_pylist() == [err("after.V", "'12a' is not INTEGER", rec.at(13))]


@pytest.mark.parametrize("kwargs", [
    {"column_delimiter": ",,"}, {"column_delimiter": ""}, {"column_delimiter": "a"},
    {"string_delimiter": "1"}, {"decimal_char": ","}, {"record_delimiter": '"'},
    {"column_delimiter": "é"}, {"column_delimiter": "€", "encoding": "cp037"},
    {"decimal_char": "¢", "encoding": "cp037"}, {"encoding": "utf-16"}, {"hex_encoding": "klingon"}, {"source_tz": "Mars/Olympus"},
])
def test_bad_options(api, kwargs):
    with pytest.raises(ValueError):
        api.Decoder("ibm-delimited", **kwargs)


# -- record structure --------------------------------------------------------------------------

def test_trailing_column_delimiter(api):
    cat = catalog(("A", "INTEGER"), ("B", "VARCHAR(5)"))
    plain = Rec(before=["", ""], after=["1", '"x"'])
    trailing = Rec(before=["", ""], after=["1", '"x"'], trailing=",")
    a = decode(api, plain.bytes() + b"\n", cat)
    b = decode(api, trailing.bytes() + b"\n", cat)
    assert b.column("_error").to_pylist() == [None]
    assert b.equals(a)
    # the same without a catalog (an odd count whose last field is empty)
    a = decode(api, plain.bytes(), None)
    b = decode(api, trailing.bytes(), None)
    assert b.column("_error").to_pylist() == [None]
    assert b.equals(a)
    assert a.column("after").to_pylist() == [{"C1": "1", "C2": "x"}]


def test_trailing_value_that_is_not_empty(api):
    rec = Rec(before=["", ""], after=["1", '"x"'], trailing=',""')
    row = one(api, rec, catalog(("A", "INTEGER"), ("B", "VARCHAR(5)")))
    assert row["_error"] == err("record", "record has 17 fields, table S.T needs 16", 0)


def test_field_count_mismatch(api):
    cat = catalog(("A", "INTEGER"), ("B", "VARCHAR(5)"))
    good = Rec(before=["", ""], after=["1", '"x"'])
    bad = Rec(before=["", ""], after=["2"], operation='"ISRT"', transaction_identifier='"T2"')
    data = good.bytes() + b"\n" + bad.bytes() + b"\n"
    t = decode(api, data, cat)
    rows = t.to_pylist()
    assert [r["_error"] for r in rows] == [
        None, err("record", "record has 15 fields, table S.T needs 16", len(good.bytes()) + 1)]
    r = rows[1]
    # the header is kept; the images are not
    assert (r["op"], r["source_op"], r["txid"], r["seq"]) == ("c", "ISRT", "T2", 1)
    assert r["source"]["type"] == 10
    assert r["before"] is None and r["after"] is None
    assert r["changed"] is None and r["present"] is None
    assert r["_corrupt_record"] == bad.bytes()
    assert rows[0]["_corrupt_record"] is None


def test_fewer_than_12_fields(api):
    data = b'1,"2",3\n' + Rec(before=[""], after=["5"]).bytes()
    t = decode(api, data, catalog(("V", "INTEGER")))
    rows = t.to_pylist()
    assert rows[0]["_error"] == err("record", "record has 3 fields, fewer than the 12 of the "
                                    "header", 0)
    assert rows[0]["_corrupt_record"] == b'1,"2",3'
    assert (rows[0]["op"], rows[0]["schema"], rows[0]["table"], rows[0]["seq"]) == \
        (None, None, None, 0)
    assert rows[1]["_error"] is None and rows[1]["after"] == {"V": 5} and rows[1]["seq"] == 1


@pytest.mark.parametrize("api,data,reason,byte,corrupt", both([
    (b'10,"IBM,1\n', "identifier: unterminated string", 3, b'10,"IBM,1'),
    (b'10,"IBM"x,1\n', "identifier: text after closing string delimiter", 8, b'10,"IBM"x,1'),
    (b'10,IB"M,1\n', "identifier: string delimiter inside an unquoted field", 5, b'10,IB"M,1'),
    (b'10,"a\nb,1', "identifier: unterminated string", 3, b'10,"a'),
    (b'10,"IBM","2006030","182318000005","S","T","ISRT","TX","0000","2006-06-30-18.00.52",'
     b'"P",0,,"x', "field 14: unterminated string", 90, b'10,"IBM","2006030","182318000005",'
     b'"S","T","ISRT","TX","0000","2006-06-30-18.00.52","P",0,,"x'),
]))
def test_unsplittable_records(api, data, reason, byte, corrupt):
    t = decode(api, data, catalog(("V", "INTEGER")))
    rows = t.to_pylist()
    assert rows[0]["_error"] == f"{reason} (message 0, byte {byte})"
    assert rows[0]["_corrupt_record"] == corrupt
    assert rows[0]["op"] is None and rows[0]["after"] is None


def test_no_catalog(api):
    recs = [Rec(before=["", "", ""], after=["1", '"a""b"', ""]),
            Rec(before=["1", '"a""b"', ""], after=["2", "x y", '""'], operation='"REPL"')]
    t = decode(api, b"\n".join(r.bytes() for r in recs), None)
    assert t.schema.field("after").type == pa.struct([pa.field(f"C{i}", pa.string())
                                                      for i in (1, 2, 3)])
    rows = t.to_pylist()
    assert [r["_error"] for r in rows] == [None, None]
    assert rows[0]["after"] == {"C1": "1", "C2": 'a"b', "C3": None}
    assert rows[1]["before"] == {"C1": "1", "C2": 'a"b', "C3": None}
    assert rows[1]["after"] == {"C1": "2", "C2": "x y", "C3": ""}
    assert rows[1]["changed"] == {"C1": True, "C2": True, "C3": True}


def test_no_catalog_odd_count_and_mismatch(api):
    first = Rec(before=["", ""], after=["1", "2"])
    odd = Rec(before=["", ""], after=["1", "2", "3"])
    other = Rec(before=["", "", ""], after=["1", "2", "3"])
    data = b"\n".join([first.bytes(), odd.bytes(), other.bytes()])
    t = decode(api, data, None)
    o1 = len(first.bytes()) + 1
    o2 = o1 + len(odd.bytes()) + 1
    assert t.column("_error").to_pylist() == [
        None, err("record", "record has 17 fields: an odd number of data fields", o1),
        err("record", "record has 18 fields, table S.T needs 16", o2)]
    assert t.column("_corrupt_record").to_pylist() == [None, odd.bytes(), other.bytes()]


def test_no_catalog_first_even_record_fixes_n(api):
    odd = Rec(before=["", ""], after=["1", "2", "3"])
    even = Rec(before=["", "", ""], after=["1", "2", "3"])
    t = decode(api, odd.bytes() + b"\n" + even.bytes(), None)
    assert t.schema.field("after").type.num_fields == 3
    assert t.column("_error").to_pylist() == [
        err("record", "record has 17 fields: an odd number of data fields", 0), None]


def test_table_names_case_insensitive(api):
    """docs "Tables": a catalog name matches exact, else case-insensitively (rows keep the
    names as sent); without a catalog entry, the names decode(table=X) matches
    case-insensitively are all X — one table, whose first well-formed record fixes N."""
    recs = [Rec(before=[""], after=["1"], table_owner='"s"'),
            Rec(before=[""], after=["2"], table_name='"t"')]
    data = b"\n".join(r.bytes() for r in recs)
    t = decode(api, data, catalog(("V", "INTEGER")))
    assert t.column("after").to_pylist() == [{"V": 1}, {"V": 2}]
    assert t.column("schema").to_pylist() == ["s", "S"]
    assert t.column("table").to_pylist() == ["T", "t"]
    t = api.decode(data, format="ibm-delimited", table="S.T")
    assert t.column("after").to_pylist() == [{"C1": "1"}, {"C1": "2"}]


@pytest.mark.parametrize("api,first_owner,requested", both([
    ('"s"', "S.T"), ('"S"', "s.t"), ('"s"', "s.T"),
]))
def test_case_merged_table_in_count_errors(api, first_owner, requested):
    first = Rec(before=[""], after=["1"], table_owner=first_owner)
    other = Rec(before=["", ""], after=["3", "4"])
    data = first.bytes() + b"\n" + other.bytes()
    t = api.decode(data, format="ibm-delimited", table=requested)
    assert t.column("_error").to_pylist() == [None, err(
        "record", f"record has 16 fields, table {requested} needs 14", len(first.bytes()) + 1)]


def test_blank_lines_are_skipped(api):
    rec = Rec(before=[""], after=["1"]).bytes()
    dec = api.Decoder("ibm-delimited", catalog=catalog(("V", "INTEGER")))
    t = dec.decode(b"\n\n" + rec + b"\n\n\n" + rec + b"\n\n", table="S.T")
    assert t.column("seq").to_pylist() == [0, 1]
    assert t.column("_error").to_pylist() == [None, None]
    assert dec.last_stats["records"] == 2
    assert dec.decode(b"\n\n\n", table="S.T").num_rows == 0


def test_seq_and_tombstones_with_a_list_source(api):
    good = Rec(before=[""], after=["1"]).bytes()
    bad = Rec(before=[""], after=["x"])
    dec = api.Decoder("ibm-delimited", catalog=catalog(("V", "INTEGER")))
    t = dec.decode([good + b"\n" + good + b"\n", None, good, None, None,
                    good.decode() + "\n" + bad.text], table="S.T")
    assert t.column("seq").to_pylist() == [0, 1, 0, 0, 1]
    assert t.column("_error").to_pylist() == [None] * 4 + [
        err("after.V", "'x' is not INTEGER", len(good) + 1 + bad.at(13), message=5)]
    assert dec.last_stats["tombstones"] == 3
    assert dec.last_stats["records"] == 5


def test_headers_do_not_convert_values(api):
    cat = catalog(("V", "INTEGER"))
    recs = [Rec(before=[""], after=["x"]), Rec(before=[""], after=["1"], type="t"),
            Rec(before=[""], after=["1", "2"])]
    t = api.headers(b"\n".join(r.bytes() for r in recs), format="ibm-delimited", catalog=cat)
    assert "after" not in t.column_names
    off = len(recs[0].bytes()) + 1
    assert t.column("_error").to_pylist() == [
        None, err("type", "'t' is not an INTEGER", off),
        err("record", "record has 15 fields, table S.T needs 14",
            off + len(recs[1].bytes()) + 1)]


def test_decoders_agree_on_a_generated_stream():
    """Sanity: the reference is the oracle of the native path on a realistic stream."""
    data, cat = cdcfast.encode.generate("ibm-delimited", rows=200, seed=3)
    a = cdcfast.decode(data, format="ibm-delimited", catalog=cat, table="SALES.ORDERS_0")
    b = reference.decode(data, format="ibm-delimited", catalog=cat, table="SALES.ORDERS_0")
    assert a.equals(b) and a.column("_error").null_count == a.num_rows


# -- correctly rounded floats in bulk (the Eisel-Lemire path of native/cdcfast/_text.h) ----------

def _float_texts(seed: int, n: int) -> list[str]:
    """Texts that stress float rounding: shortest reprs of random doubles, 16-19 digit
    significands with any exponent (Eisel-Lemire's range), and exact binary midpoints (ties,
    which it must hand to strtod)."""
    import random
    import struct
    from decimal import Decimal, localcontext
    rng = random.Random(seed)
    out = []
    while len(out) < n:
        k = len(out) % 4
        if k == 0:
            x = struct.unpack("<d", struct.pack("<Q", rng.getrandbits(64)))[0]
            if x == x and abs(x) != float("inf"):
                out.append(repr(x).upper())
        elif k == 1:
            digits = str(rng.randint(10 ** 15, 10 ** 19 - 1))
            out.append(f"{digits}E{rng.randint(-345, 300)}")
        elif k == 2:
            digits = str(rng.randint(10 ** 14, 10 ** 19 - 1))
            at = rng.randint(0, len(digits))
            out.append(rng.choice(["", "-"]) + digits[:at] + "." + digits[at:])
        else:
            with localcontext() as ctx:
                ctx.prec = 60
                mid = Decimal(2 * (rng.getrandbits(53) | 1 << 52) + 1) \
                    * Decimal(2) ** rng.randint(-80, 60)
                text = format(mid.normalize(), "E")
            if len(text.split("E")[0].replace(".", "").lstrip("-")) <= 19:
                out.append(text)
    return out


def test_doubles_round_like_python_in_bulk():
    import struct
    texts = _float_texts(7, 40000)
    cat = catalog(("V", "DOUBLE"))
    data = b"\n".join(Rec(before=[""], after=[t]).bytes() for t in texts)
    got = decode(cdcfast, data, cat).column("after").combine_chunks().field(0).to_pylist()
    bad = [(t, g) for t, g in zip(texts, got)
           if (g is not None or abs(float(t)) != float("inf"))    # overflow: an error row
           and (g is None or struct.pack("<d", g) != struct.pack("<d", float(t)))]
    assert not bad, bad[:5]
    assert sum(g is None for g in got) < len(texts) // 50


def test_pow10_table_is_the_generators():
    import importlib.util
    root = pathlib.Path(__file__).resolve().parents[1]
    spec = importlib.util.spec_from_file_location("gen_pow10", root / "native/tools/gen_pow10.py")
    gen = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(gen)
    assert (root / "native/cdcfast/_pow10.h").read_text() == gen.render()
    assert gen.mantissa(-1) == int("CC" * 16, 16) and gen.mantissa(0) == 1 << 127


def test_dates_times_and_timestamps_in_bulk():
    """Every calendar day's shape and random clocks, right and slightly wrong, through the
    8-bytes-at-once paths (native/cdcfast/_text.h) and the reference: the same values and
    the same errors. Valid values also equal Python's own datetime arithmetic."""
    import random
    rng = random.Random(5)
    texts = []
    for _ in range(3000):
        y, m, d = rng.randint(1, 9999), rng.randint(1, 12), rng.randint(1, 31)
        h, mi, s = rng.randint(0, 24), rng.randint(0, 60), rng.randint(0, 60)
        frac = "".join(rng.choice("0123456789") for _ in range(rng.choice([0, 1, 3, 6, 9, 12, 13])))
        sep = rng.choice(["..", "::", ".:", "/."])
        date = f"{y:04d}-{m:02d}-{d:02d}"
        clock = f"{h:02d}{sep[0]}{mi:02d}{sep[1]}{s:02d}" + (f".{frac}" if frac else "")
        texts.append((date, clock, f"{date}-{clock}"))
    cat = catalog(("D", "DATE"), ("T", "TIME"), ("TS", "TIMESTAMP(12)"))
    data = b"\n".join(Rec(before=["", "", ""], after=list(t)).bytes() for t in texts)
    got = decode(cdcfast, data, cat)
    want = decode(reference, data, cat)
    assert got.equals(want)
    after = got.column("after").combine_chunks()
    ok = 0
    for (date, clock, _), v in zip(texts, after.field("D").to_pylist()):
        try:
            expected = dt.date.fromisoformat(date)
        except ValueError:
            expected = None
        assert v == expected, date
        ok += v is not None
    assert ok > 2000
    assert after.field("T").null_count < len(texts)


def test_timestamps_every_shape_in_bulk():
    """The fused timestamp path (cdc_timestamp_fast) against the reference on every fraction
    length (0-13 digits), each separator, zone suffixes right and wrong, the value cut at
    every length and a stray byte at every position: the same values and the same errors.
    Valid ones also equal Python's datetime arithmetic."""
    import random
    rng = random.Random(11)
    zones = ["", "Z", "+05:30", "-08:00", "+00:00", "+23:59", "+24:00", "-05:60", "+0530",
             "+05", "z", " +05:30", "+05:3x", "Zx", "+5:30"]
    texts = []
    for i in range(4000):
        y, m, d = rng.randint(1, 9999), rng.randint(1, 12), rng.randint(1, 28)
        h, mi, s = rng.randint(0, 23), rng.randint(0, 59), rng.randint(0, 59)
        nf = i % 14
        frac = "".join(rng.choice("0123456789") for _ in range(nf))
        sep = rng.choice(["-", " ", "T"]) + rng.choice(".:") + rng.choice(".:")
        text = f"{y:04d}-{m:02d}-{d:02d}{sep[0]}{h:02d}{sep[1]}{mi:02d}{sep[2]}{s:02d}" \
            + (f".{frac}" if nf else rng.choice(["", "."])) \
            + (rng.choice(zones) if i % 2 else "")
        k = rng.random()
        if k < 0.15:
            text = text[:rng.randint(0, len(text))]
        elif k < 0.3:
            at = rng.randrange(len(text))
            text = text[:at] + rng.choice("0/:.-+ aZ\xe9") + text[at + 1:]
        texts.append(text)
    cat = catalog(("TS", "TIMESTAMP(12)"), ("TZ", "TIMESTAMP(12) WITH TIME ZONE"))
    data = b"\n".join(Rec(before=["", ""], after=[t, t]).bytes() for t in texts)
    got = decode(cdcfast, data, cat)
    assert got.equals(decode(reference, data, cat))
    after = got.column("after").combine_chunks()
    ok = 0
    for t, ts, tz in zip(texts, after.field("TS").to_pylist(), after.field("TZ").to_pylist()):
        if ts is not None:
            ok += 1
            frac = t[20:].ljust(6, "0")[:6] if len(t) > 19 else "0"
            assert ts == dt.datetime(int(t[:4]), int(t[5:7]), int(t[8:10]), int(t[11:13]),
                                     int(t[14:16]), int(t[17:19]), int(frac or 0)), t
            assert tz == ts.replace(tzinfo=UTC), t
    assert ok > 1000
    assert after.field("TZ").null_count < after.field("TS").null_count


def test_timestamps_with_each_parser():
    """The two tests above in child processes, with the SSSE3 timestamp parser this CPU has
    and with CDCFAST_NO_AVX2=1 (the scalar one): each run compares with the reference, so
    both parsers give the reference's values and errors for every shape. Values near the
    input's end (fewer than 32 readable bytes) take the scalar one in either run."""
    from conftest import scalar_and_simd
    here = str(pathlib.Path(__file__).parent)
    code = (f"import sys; sys.path.insert(0, {here!r}); import test_ibm_values as t; "
            "t.test_timestamps_every_shape_in_bulk(); t.test_dates_times_and_timestamps_in_bulk(); "
            "from cdcfast import _ibm; print(_ibm.ts_level())")
    out = scalar_and_simd(code)
    assert out["1"].split()[-1] == "1"
    assert out[""].split()[-1] in ("1", "2")       # 2 where the CPU has SSSE3


@pytest.mark.parametrize("sd", ['"', "'", "-", "|"])
def test_every_kind_with_a_doubled_string_delimiter(sd):
    """Values of every kind sent quoted, plain and with the string delimiter doubled inside
    them, for four delimiters: native equals the reference. A doubled quote makes a number,
    date, time, timestamp or boolean wrong however it is read; with "-" for the delimiter
    the unescaped value parses ("-2024--01--02-" is 2024-01-02), so a kernel that skipped
    the unescaping (reading a value's span without its field flags) fails here."""
    def q(text):
        return sd + text.replace(sd, sd + sd) + sd
    header = {k: (q(v[1:-1]) if v.startswith('"') else v) for k, v in HEADER.items()}
    cols = [("I", "INTEGER"), ("D", "DECIMAL(9,2)"), ("F", "DOUBLE"), ("DT", "DATE"),
            ("TM", "TIME"), ("TS", "TIMESTAMP"), ("B", "BOOLEAN"), ("S", "VARCHAR(30)")]
    plain = ["12", "-3.50", "1.5e3", "2024-01-02", "10.20.30", "2024-01-02-10.20.30.123456",
             "true", "a-b'c|d"]
    variants = [
        [q(v) for v in plain],                                  # quoted
        [v if sd not in v else q(v) for v in plain],            # unquoted where it can be
        [q(v[:1] + sd + v[1:]) for v in plain],                 # a doubled delimiter inside
        [q(v + sd) for v in plain],                             # ... at the end
        [q(sd + v) for v in plain],                             # ... at the start
    ]
    recs = [Rec(before=[""] * len(cols), after=row, **header) for row in variants]
    data = b"\n".join(r.bytes() for r in recs)
    cat = catalog(*cols)
    got = decode(cdcfast, data, cat, string_delimiter=sd)
    assert got.equals(decode(reference, data, cat, string_delimiter=sd))
    after = got.column("after").to_pylist()
    assert after[0]["I"] == 12 and after[0]["S"] == "a-b'c|d"
    assert after[0]["DT"] == dt.date(2024, 1, 2)
    assert after[2]["I"] is None and after[2]["S"] == plain[7][:1] + sd + plain[7][1:]
    errors = got.column("_error").to_pylist()
    assert errors[0] is None and errors[2] is not None


@pytest.mark.parametrize("ctype", ["INTEGER", "BIGINT", "DECIMAL(31,8)", "DECIMAL(5,0)"])
def test_numbers_at_the_end_of_the_input(ctype):
    """A number read 8 bytes at a time needs 8 readable bytes past it: the input's last value,
    followed by 0-9 bytes, takes the digit loop until it has them. Raw bytes follow the
    digits too, 0xFA-0xFF among them (they carry into the next byte in the digit test).
    Native equals the reference in every case."""
    texts = [b"7", b"-12", b"123456789", b"12345678", b"-1234567890123456789", b"0.5",
             b"1234567890123456789012.12345678", b"99999", b"-0", b"+8", b"", b"-", b"1.",
             b".5", b"00000000000000000042"]
    for tail in (b"", b"\xfa", b"\xff7", b"7\xfb", b"/", b":"):
        texts += [t + tail for t in texts[:6]]
    cat = catalog(("V", ctype))
    for text in texts:
        rec = Rec(before=[""], after=["X"]).bytes().replace(b",X", b"," + text)
        for k in range(10):
            data = rec + b"\n" * k
            got, want = decode(cdcfast, data, cat), decode(reference, data, cat)
            assert got.equals(want), (text, k)


def test_decimals_in_bulk():
    """Random decimal texts — signs, leading zeros, fraction lengths around the scale, too
    many digits — through the fast and careful paths: native equals the reference, and
    every accepted value equals Python's Decimal of the text."""
    import random
    rng = random.Random(9)
    types = [("DECIMAL(31,8)", 31, 8), ("DECIMAL(11,2)", 11, 2), ("DECIMAL(5,0)", 5, 0),
             ("DECIMAL(38,10)", 38, 10)]
    texts = []
    for _ in range(4000):
        row = []
        for _, p, s in types:
            ni = rng.randint(0, p - s + 1)
            nf = rng.choice([0, rng.randint(0, s + 2)])
            txt = rng.choice(["", "-", "+", ""]) + "0" * rng.choice([0, 0, 2]) \
                + "".join(rng.choice("0123456789") for _ in range(ni))
            if nf or rng.random() < .1:
                txt += "." + "".join(rng.choice("0123456789") for _ in range(nf))
            row.append(txt)
        texts.append(row)
    cat = catalog(*[(f"C{i}", t) for i, (t, _, _) in enumerate(types)])
    data = b"\n".join(Rec(before=[""] * 4, after=r).bytes() for r in texts)
    got = decode(cdcfast, data, cat)
    assert got.equals(decode(reference, data, cat))
    after = got.column("after").combine_chunks()
    seen = 0
    for i, (_, _, s) in enumerate(types):
        for row, v in zip(texts, after.field(i).to_pylist()):
            if v is not None:
                assert v == Decimal(row[i]).quantize(Decimal(1).scaleb(-s)), row[i]
                seen += 1
    assert seen > 8000


def test_integers_in_bulk():
    """Integers of every length 0-20, signed, at and past each type's range, and with a stray
    byte, through the 8-digits-at-once path and the digit loop: native equals the
    reference, and every accepted value is Python's int of the text."""
    import random
    rng = random.Random(11)
    types = [("SMALLINT", 15), ("INTEGER", 31), ("BIGINT", 63)]
    rows = []
    for _ in range(4000):
        row = []
        for _, bits in types:
            k = rng.random()
            if k < 0.2:
                v = rng.choice([1, -1]) * (1 << bits) + rng.randint(-2, 1)
                txt = str(v)
            else:
                nd = rng.randint(0, 20)
                txt = rng.choice(["", "", "-", "+"]) + "".join(
                    rng.choice("0123456789") for _ in range(nd))
                if rng.random() < 0.05 and txt:
                    at = rng.randrange(len(txt))
                    txt = txt[:at] + rng.choice(":/ .e") + txt[at + 1:]
            row.append(txt)
        rows.append(row)
    cat = catalog(*[(f"C{i}", t) for i, (t, _) in enumerate(types)])
    data = b"\n".join(Rec(before=[""] * 3, after=r).bytes() for r in rows)
    got = decode(cdcfast, data, cat)
    assert got.equals(decode(reference, data, cat))
    after = got.column("after").combine_chunks()
    seen = 0
    for i, (_, bits) in enumerate(types):
        for row, v in zip(rows, after.field(i).to_pylist()):
            if v is not None:
                assert v == int(row[i]) and -(1 << bits) <= v < (1 << bits), row[i]
                seen += 1
    assert seen > 5000
