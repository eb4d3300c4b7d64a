"""The SIMD text kernels `lldf` runs where the CPU has them (native/cdcfast/_text.h
`cdc_timestamp_ssse3`, _utf8.h `cdc_cp_utf8_avx2`), against the careful scalar code they
stand in for, value by value, in every code page `lldf` reads:

1. Timestamp text: whatever the fast parser accepts, the careful one (`parse_timestamp`)
   accepts with the same µs; Db2's own form with 0-6 fraction digits is accepted by the fast
   one (so its SIMD path is what runs). Inputs: valid values of every shape (separators,
   fraction lengths 0-12, zones, the ends of every field's range), then each mutated (a byte
   set, the value cut or lengthened), with random bytes, digits among them, past the value
   (the parser may read them and must not use them).
2. Code page text to UTF-8: the SIMD conversion gives exactly the scalar one's bytes (and
   Python's codec's), or fails where it fails, for random bytes of every kind (ASCII letters,
   Latin-1 letters, undefined bytes, cp1140's euro sign), every length across the 8- and
   32-byte steps, and every amount of readable bytes after the value.
3. Packed decimals through the column kernel (`_binary.pxd` `cdc_dec_column_ssse3`): the
   careful parser's value, or left to it, for valid and mutated values of every width.
4. Code page text of a block's values as one run (cdc_cp_run_avx2): the same bytes and
   offsets as the values one by one, or no run where a byte is not a Latin-1 character.
5. A whole decode (generated data: EBCDIC text with Latin-1 letters, timestamps of every
   precision and zone) gives the same table in a child process with CDCFAST_NO_AVX2=1 (the
   scalar kernels) as here.
"""
from __future__ import annotations

import json
import random
from datetime import date

import pytest
from hypothesis import given, settings, strategies as st

from cdcfast import _lldf_testing, codepages
from conftest import scalar_and_simd

ENCODINGS = ("cp037", "cp1047", "cp500", "cp1140", "cp273", "latin-1", "ascii")


def tables(enc):
    u8, u8len = codepages.utf8_table(enc)
    return (codepages.ascii_table(enc), u8, u8len, codepages.encode_text("0-.: T+Z", enc))


def check_timestamp(text, enc, zone, tail):
    asc, _, _, cpc = tables(enc)
    value = text if isinstance(text, bytes) else codepages.encode_text(text, enc)
    rc, fast, ok, careful = _lldf_testing.timestamp_paths(value + tail, len(value), zone, asc, cpc)
    assert rc in (1, -1), (value, rc)
    if rc == 1:
        assert ok and fast == careful, (value, enc, zone, fast, careful)
    return rc, ok


def stamp(rnd, canonical):
    """A timestamp's text: Db2's own form when canonical, else any separators the parsers
    know, any fraction length and maybe a zone."""
    y, mo = rnd.choice([1, 1970, 2000, 2024, 2100, 9999, rnd.randint(1, 9999)]), rnd.randint(1, 12)
    d = rnd.choice([1, 28, 29, 30, 31, rnd.randint(1, 31)])
    h, mi, s = rnd.choice([0, 23, rnd.randint(0, 23)]), rnd.randint(0, 59), rnd.randint(0, 59)
    if canonical:
        sep, c1, c2, nf, z = "-", ".", ".", rnd.randint(0, 6), ""
    else:
        sep, c1, c2 = rnd.choice("- T"), rnd.choice(".:"), rnd.choice(".:")
        nf = rnd.choice([0, 1, 3, 6, 7, 9, 12, rnd.randint(0, 12)])
        z = rnd.choice(["", "", "Z", "+00:00", "-05:30", "+14:00", "+23:59", "+24:00", "-01:60",
                        f"{rnd.choice('+-')}{rnd.randint(0, 25):02d}:{rnd.randint(0, 61):02d}"])
    frac = "." + "".join(rnd.choice("0123456789") for _ in range(nf)) if nf else ""
    return f"{y:04d}-{mo:02d}-{d:02d}{sep}{h:02d}{c1}{mi:02d}{c2}{s:02d}{frac}{z}"


def noise(rnd, enc, n):
    """n bytes to follow a value: digits, separators and anything."""
    digits = codepages.encode_text("0123456789-.:+", enc)
    return bytes(rnd.choice(digits) if rnd.random() < 0.6 else rnd.randrange(256)
                 for _ in range(n))


@pytest.mark.parametrize("enc", ["cp037", "cp1047", "cp273", "ascii"])
def test_timestamps_valid_and_mutated(enc):
    rnd = random.Random(f"ts-{enc}")
    accepted = simd_shaped = 0
    for _ in range(4000):
        canonical = rnd.random() < 0.5
        text = stamp(rnd, canonical)
        value = codepages.encode_text(text, enc)
        tail = noise(rnd, enc, rnd.choice([0, 5, 13, 40]))
        zone = rnd.random() < 0.5
        rc, ok = check_timestamp(value, enc, zone, tail)
        if canonical and ok and len(value + tail) >= 32:
            simd_shaped += 1
            assert rc == 1, (text, enc)             # Db2's own form takes the fast path
        accepted += rc == 1
        for _ in range(3):                          # the same value mutated
            v = bytearray(value)
            what = rnd.randrange(4)
            if what == 0 and v:
                v[rnd.randrange(len(v))] = rnd.randrange(256)
            elif what == 1 and v:
                v[rnd.randrange(len(v))] = rnd.choice(codepages.encode_text("0123456789-.: ", enc))
            elif what == 2:
                v = v[:rnd.randrange(len(v) + 1)]
            else:
                v += noise(rnd, enc, rnd.randint(1, 8))
            check_timestamp(bytes(v), enc, rnd.random() < 0.5, noise(rnd, enc, rnd.choice([0, 20, 40])))
    assert accepted > 1500 and simd_shaped > 600


@given(st.binary(min_size=0, max_size=48), st.binary(min_size=0, max_size=40),
       st.sampled_from(ENCODINGS), st.booleans())
@settings(max_examples=400, deadline=None)
def test_timestamps_random_bytes(value, tail, enc, zone):
    check_timestamp(value, enc, zone, tail)


@pytest.mark.parametrize("text", ["0001-01-01-00.00.00", "9999-12-31-23.59.59.999999",
                                  "2024-02-29-12.00.00.5", "2023-02-29-12.00.00",
                                  "2024-04-31-00.00.00", "2024-13-01-00.00.00",
                                  "2024-00-10-00.00.00", "0000-01-01-00.00.00",
                                  "2024-01-01-24.00.00", "2024-01-01-23.60.00",
                                  "2024-01-01-23.00.60", "2024-01-01-23.00.00.",
                                  "2024-01-01-23.00.00.1234567", "2024-01-01-23.00.00.123456Z",
                                  "2024-01-01-23.00.00.123456+01:00"])
@pytest.mark.parametrize("enc", ["cp037", "ascii"])
def test_timestamps_edges(text, enc):
    for tail in (b"", bytes(40), codepages.encode_text("9" * 40, enc)):
        for zone in (False, True):
            rc, ok = check_timestamp(text, enc, zone, tail)
            if len(text) + len(tail) >= 32 and len(text) <= 26 and ok and "-24." not in text:
                assert rc == 1, text                # (hour 24 is left to the careful parser)


def test_civil_days_table_and_formula():
    """The days of every date of the month table's years (1900-2155), of the years around its
    ends and of the calendar's ends, against Python's calendar; impossible dates (month 0 or
    13, day 0, the 29th-32nd where the month is shorter, year 0) are None. A few years take
    every month and day two digits may read (14-15 fall inside the table's 16 entries a year,
    16-99 outside it): none of those exists."""
    epoch = date(1970, 1, 1)
    years = [0, 1, 2, 4, 100, 400, 1600, 1700, 1800, *range(1890, 2170), 2400, 9996, 9999]
    cases = [(y, 14, 33) for y in years] + [(y, 100, 100) for y in (1900, 2000, 2155, 2156, 9999)]
    for y, months, days in cases:
        for m in range(months):
            for d in range(days):
                try:
                    want = (date(y, m, d) - epoch).days
                except ValueError:
                    want = None
                assert _lldf_testing.civil_days(y, m, d) == want, (y, m, d)


@pytest.mark.parametrize("enc", ["cp037", "ascii"])
def test_timestamps_every_month_end(enc):
    """Db2's form on the last days of every month around the table's years: the fast parser
    takes exactly the dates that exist, with the careful parser's µs."""
    tail = bytes(40)
    for y in (1899, 1900, 1904, 1970, 2000, 2024, 2100, 2155, 2156):
        for m in range(1, 13):
            for d in (1, 28, 29, 30, 31, 32):
                text = f"{y:04d}-{m:02d}-{d:02d}-23.59.59.999999"
                rc, ok = check_timestamp(text, enc, False, tail)
                try:
                    date(y, m, d)
                    exists = True
                except ValueError:
                    exists = False
                assert ok == exists and rc == (1 if exists else -1), text


def check_text(value, enc, tail):
    asc, u8, u8len, _ = tables(enc)
    simd, word, scalar = _lldf_testing.codepage_paths(value + tail, len(value), asc, u8, u8len)
    try:
        expect = codepages.decode_bytes(value, enc).encode("utf-8")
    except (UnicodeDecodeError, ValueError):
        expect = None
    assert scalar == expect, (value, enc)
    if _lldf_testing.simd_level()[1]:
        assert simd == scalar, (value, enc, simd, scalar)
    # values of up to 8 bytes (8 readable) of ASCII characters, U+0000 aside, take one word
    short = len(value) <= 8 and len(value + tail) >= 8
    plain = expect is not None and expect.isascii() and b"\x00" not in expect
    assert word == (expect if short and plain else None), (value, enc, word)
    return scalar


def text_bytes(rnd, enc):
    """Code page bytes, mostly letters (ASCII and Latin-1), sometimes anything."""
    ascii_part = codepages.encode_text("abcdefghijklmnopqrstuvwxyz ABCXYZ 0123456789 .,-", enc)
    try:
        latin = codepages.encode_text("üñéßÄÖÜàçøå", enc)
    except (UnicodeEncodeError, ValueError):
        latin = b""
    n = rnd.choice([0, 1, 7, 8, 9, 15, 16, 17, 31, 32, 33, 63, 64, 65, rnd.randint(0, 200)])
    out = bytearray()
    odd = rnd.random()
    for _ in range(n):
        r = rnd.random()
        if r < odd * 0.05:
            out.append(rnd.randrange(256))
        elif r < 0.2 and latin:
            out.append(rnd.choice(latin))
        else:
            out.append(rnd.choice(ascii_part))
    return bytes(out)


@pytest.mark.parametrize("enc", ENCODINGS)
def test_codepage_text(enc):
    rnd = random.Random(f"cp-{enc}")
    ok = 0
    for _ in range(3000):
        value = text_bytes(rnd, enc)
        tail = bytes(rnd.randrange(256) for _ in range(rnd.choice([0, 3, 24, 31, 32, 40])))
        ok += check_text(value, enc, tail) is not None
    assert ok > 1500


@given(st.binary(min_size=0, max_size=120), st.binary(min_size=0, max_size=40),
       st.sampled_from(ENCODINGS))
@settings(max_examples=400, deadline=None)
def test_codepage_random_bytes(value, tail, enc):
    check_text(value, enc, tail)


def test_codepage_euro_and_nul():
    """cp1140's euro sign (three UTF-8 bytes) and U+0000 take the byte-by-byte path."""
    for enc, text in (("cp1140", "price 10€ " * 8), ("cp037", "a\x00b" * 20)):
        value = codepages.encode_text(text, enc)
        assert check_text(value, enc, bytes(40)) == text.encode("utf-8")


def check_run(values, enc, mixed, tails):
    """A block's text values as one run (how `_var_column` converts them where the CPU runs
    cdc_cp_run_avx2): Python's codec's bytes and each row's offsets exactly, when every
    character is one of U+0001 to U+00FF; else no run (the values then go one by one)."""
    _, u8, u8len, _ = tables(enc)
    got = _lldf_testing.codepage_run(values, u8, u8len, mixed, tails)
    if not _lldf_testing.simd_level()[1]:
        assert got is None
        return None
    out, offs, ends = [], [0], 0
    for v in values:
        try:
            t = codepages.decode_bytes(v or b"", enc)
        except (UnicodeDecodeError, ValueError):
            t = None
        if t is None or any(not 0 < ord(c) < 0x100 for c in t):
            assert got is None, (values, enc)
            return None
        b = t.encode("utf-8")
        out.append(b)
        ends += len(b)
        offs.append(ends)
    utf8 = b"".join(out)
    text = sum(len(v) for v in values if v is not None)
    assert got == (utf8, offs, 4 * (len(utf8) - text) > text // 32), (values, enc, mixed)
    return got


@pytest.mark.parametrize("enc", ENCODINGS)
def test_codepage_run(enc):
    """Runs of every size (to a few hundred blocks), rows without a value among them, values
    of every length, dense or sparse Latin-1 letters or none, both guesses of mixed, and
    0 to 40 readable bytes after each value (the gather's 16-byte moves or its exact copy)."""
    rnd = random.Random(f"run-{enc}")
    ascii_part = codepages.encode_text("abcdefghijklmnopqrstuvwxyz ABCXYZ 0123456789 .,-", enc)
    done = 0
    for k in range(400):
        style = k % 4
        values = []
        for _ in range(rnd.choice([1, 2, 5, 31, 32, 33, 128, rnd.randint(1, 300)])):
            if rnd.random() < 0.1:
                values.append(None)
            elif style == 0:                        # ASCII only
                values.append(bytes(rnd.choice(ascii_part)
                                    for _ in range(rnd.choice([0, 1, 8, 16, 17, 32, 33,
                                                               rnd.randint(0, 200)]))))
            else:                                   # Latin-1 letters, sometimes anything
                values.append(text_bytes(rnd, enc) if style != 3 or rnd.random() < 0.98
                              else bytes([rnd.randrange(256)]))
        tails = bytes(rnd.choice([0, 1, 15, 16, 31, 40]) for _ in range(7))
        for mixed in (False, True):
            done += check_run(values, enc, mixed, tails) is not None
    assert done > 300 or not _lldf_testing.simd_level()[1]


def test_codepage_run_refuses_what_goes_value_by_value():
    """NUL, cp1140's euro sign and an undefined byte each stop the run, wherever they are."""
    for enc, odd in (("cp037", "\x00"), ("cp1140", "€"), ("ascii", None)):
        plain = codepages.encode_text("plain text, ASCII only " * 3, enc)
        bad = (codepages.encode_text(odd, enc) if odd else b"\x80")
        for at in (0, 1, 31, 32, 33, 68):
            values = [plain, plain[:at] + bad + plain[at:], None, plain]
            _, u8, u8len, _ = tables(enc)
            assert _lldf_testing.codepage_run(values, u8, u8len, False, b"\x00") is None
            assert _lldf_testing.codepage_run(values, u8, u8len, True, b"\x00") is None
        assert check_run([plain, None, plain], enc, False, b"\x10") is not None \
            or not _lldf_testing.simd_level()[1]


def packed(rnd, width, prec):
    """A packed decimal of `width` bytes: digits, the pad nibble 0 where the precision is
    even, any valid sign (C, F, A, E plus; D, B minus)."""
    nd = 2 * width - 1
    digits = [rnd.randrange(10) if rnd.random() < 0.9 else 9 for _ in range(nd)]
    if nd > prec:
        digits[0] = 0
    nib = digits + [rnd.choice([0xC, 0xD, 0xF, 0xA, 0xB, 0xE])]
    return bytes(nib[2 * i] << 4 | nib[2 * i + 1] for i in range(width))


def check_decimal(value, prec, tail):
    fast, careful = _lldf_testing.decimal_paths(value + tail, len(value), prec)
    if fast is not None:
        assert fast == careful, (value.hex(), prec, fast, careful)
    elif careful is not None and len(value + tail) >= 16 and _lldf_testing.simd_level()[2]:
        raise AssertionError(("the kernel left a valid value", value.hex(), prec))
    return careful


def test_packed_decimal_kernel():
    """The column kernel (16 bytes a step where the CPU has SSSE3) against the careful byte
    by byte parser: every width and precision, valid values, each mutated (a nibble set to
    anything, the sign among them), random bytes, and bytes after the value that it must
    not use (fewer than 16 readable: the careful one alone)."""
    rnd = random.Random("packed")
    valid = 0
    for width in range(1, 17):
        for prec in sorted({2 * width - 1, max(1, 2 * width - 2), rnd.randint(1, 31)}):
            if prec < 2 * width - 2 or prec > 31:
                continue
            for _ in range(150):
                value = bytearray(packed(rnd, width, prec))
                tail = bytes(rnd.randrange(256) for _ in range(rnd.choice([0, 3, 15, 16, 20])))
                valid += check_decimal(bytes(value), prec, tail) is not None
                k = rnd.randrange(2 * width)
                value[k // 2] = (value[k // 2] & (0x0F if k % 2 == 0 else 0xF0)) | (
                    rnd.randrange(16) << (4 if k % 2 == 0 else 0))
                check_decimal(bytes(value), prec, tail)
                check_decimal(bytes(rnd.randrange(256) for _ in range(width)), prec, tail)
    assert valid > 5000
    # the extremes: 31 nines, either sign; zero; one digit
    for sign, mul in ((0xC, 1), (0xD, -1)):
        v = bytes([0x99] * 15 + [0x90 | sign])
        assert _lldf_testing.decimal_paths(v + bytes(4), 16, 31)[1] == mul * (10 ** 31 - 1)
        assert check_decimal(v, 31, bytes(4)) == mul * (10 ** 31 - 1)
    assert check_decimal(b"\x0c", 1, bytes(16)) == 0
    assert check_decimal(b"\x7d", 1, bytes(16)) == -7


DECODE = """
import json, sys, hashlib
import cdcfast
from cdcfast import _lldf_testing
from cdcfast.encode import generate
out = {"level": list(_lldf_testing.simd_level())}
for enc in ("cp037", "cp273", "cp1140", "latin-1"):
    data, cat = generate("lldf", rows=1500, tables=2, seed=11, encoding=enc)
    tables = cdcfast.decode_tables(data, format="lldf", catalog=cat, encoding=enc)
    out[enc] = {str(k): hashlib.sha256(repr(t.to_pylist()).encode()).hexdigest()
                for k, t in sorted(tables.items())}
print(json.dumps(out))
"""


def test_scalar_kernels_decode_the_same():
    """A whole decode with the scalar kernels (CDCFAST_NO_AVX2=1) equals the default one."""
    runs = {mode: json.loads(stdout) for mode, stdout in scalar_and_simd(DECODE).items()}
    assert runs["1"].pop("level") == [False, False, False]
    runs[""].pop("level")
    assert runs["1"] == runs[""]
    assert all(len(v) == 2 for v in runs[""].values())
