"""The strict JSON scanner of native/cdcfast/_json.h against its pure-Python twin
(cdcfast/reference/_jsonscan.py), and both against Python:

1. hand-written documents, one or more per error code, with their exact (code, offset);
2. mutated documents (json.dumps of random values, bytes inserted, deleted, replaced; every
   prefix of a few): the native and the Python scanner give the same (doc_end, code,
   err_pos), from any start, as one document or the whole buffer; and the whole-buffer scan
   accepts exactly what json.loads accepts (valid UTF-8, no NaN/Infinity, depth <= 512);
3. cdc_json_string_end over every length 0-100 with a quote, backslash or control byte at
   every place, its buffer ending right at the string's end or later (the hooks copy their
   input into a block of its exact size: run under valgrind, a read past the end shows);
4. cdc_utf8_first_invalid, cdc_json_unescape and cdc_base64_decode against bytes.decode,
   json.loads and base64.b64decode;
5. numbers, whose digits are read eight at a time while eight are there: every length
   to 40 digits with a non-digit at every place, ending the buffer or not, against the
   Python scanner; cdc_jv_int (the kernels' integer parser) against int(), and
   cdc_jv_decimal against Python's decimal.

CDCFAST_FUZZ_SCALE scales the example counts (e.g. 0.1 under valgrind).
"""
from __future__ import annotations

import base64
import binascii
import json
import os
import random
import sys

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from cdcfast import _json as native
from cdcfast.reference import _jsonscan as ref
from cdcfast.reference._jsonscan import (E_CONTROL, E_DEPTH, E_ESCAPE, E_NUMBER, E_TRAILING,
                                         E_TRUNCATED, E_UNEXPECTED, E_UTF8)

_SCALE = float(os.environ.get("CDCFAST_FUZZ_SCALE", "1"))


def budget(n):
    return settings(max_examples=max(5, round(n * _SCALE)), deadline=None,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])


def both(data, start=0, whole=False):
    """The native scan, after checking that the Python one gives the same."""
    got = native.document(data, start, whole)
    assert got == ref.document(data, start, whole=whole), (data, start, whole)
    return got


def test_codes_are_the_same_numbers():
    assert native.CODES == {name: getattr(ref, name) for name in native.CODES}


# -- 1. hand-written ------------------------------------------------------------------------

CASES = [
    # (document, whole-buffer code, offset); code 0: offset is doc_end
    (b'{"a":1}', 0, 7),
    (b' \t\r\n[1, 2.5e-3, -0, "x", true, false, null, {}] \n', 0, 47),
    (b'"\\ud800"', 0, 8),                                    # a lone surrogate is syntax
    (b'"\\uDBFF\\uDFFF \\" \\\\ \\/ \\b \\f \\n \\r \\t \\u00e9"', 0, 45),
    (b'"\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80\xf4\x8f\xbf\xbf"', 0, 15),
    (b'"\x7f"', 0, 3),
    # E_TRUNCATED: at the end
    (b'', E_TRUNCATED, 0), (b'  ', E_TRUNCATED, 2),
    (b'tr', E_TRUNCATED, 2), (b'fals', E_TRUNCATED, 4), (b'n', E_TRUNCATED, 1),
    (b'{"a":', E_TRUNCATED, 5), (b'{"a":1', E_TRUNCATED, 6), (b'[1,', E_TRUNCATED, 3),
    (b'[1, ', E_TRUNCATED, 4), (b'{', E_TRUNCATED, 1), (b'{"a"', E_TRUNCATED, 4),
    (b'{"a":1,', E_TRUNCATED, 7), (b'"abc', E_TRUNCATED, 4), (b'"\\', E_TRUNCATED, 2),
    (b'"\\u', E_TRUNCATED, 3), (b'"\\u12', E_TRUNCATED, 5), (b'"\\u123', E_TRUNCATED, 6),
    (b'[[[]]', E_TRUNCATED, 5),
    # E_UNEXPECTED: at the byte (a literal: its first byte)
    (b'{"a":1,}', E_UNEXPECTED, 7), (b'[1 2]', E_UNEXPECTED, 3), (b'{"a" 1}', E_UNEXPECTED, 5),
    (b'{"a":tru}', E_UNEXPECTED, 5), (b'[1,]', E_UNEXPECTED, 3), (b',', E_UNEXPECTED, 0),
    (b'x', E_UNEXPECTED, 0), (b'{,}', E_UNEXPECTED, 1), (b'{1:2}', E_UNEXPECTED, 1),
    (b"['a']", E_UNEXPECTED, 1), (b'[1}', E_UNEXPECTED, 2), (b'{"a":1]', E_UNEXPECTED, 6),
    (b'[\x80]', E_UNEXPECTED, 1), (b'\xef\xbb\xbf{}', E_UNEXPECTED, 0),
    (b'NaN', E_UNEXPECTED, 0), (b'Infinity', E_UNEXPECTED, 0), (b'[truex]', E_UNEXPECTED, 5),
    (b'truex', E_UNEXPECTED, 4), (b'1x', E_UNEXPECTED, 1), (b'[1x]', E_UNEXPECTED, 2),
    (b'tRue', E_UNEXPECTED, 0), (b'nulL', E_UNEXPECTED, 0), (b'[tr', E_TRUNCATED, 3),
    (b'[1]\x00', E_TRAILING, 3), (b'/*c*/1', E_UNEXPECTED, 0), (b'\x0c1', E_UNEXPECTED, 0),
    (b'{"a"::1}', E_UNEXPECTED, 5),
    # E_CONTROL
    (b'{"a":"\x01"}', E_CONTROL, 6), (b'"\t"', E_CONTROL, 1), (b'"ab\n', E_CONTROL, 3),
    (b'{"\x00":1}', E_CONTROL, 2),
    # E_ESCAPE: at the backslash
    (b'"\\u12g4"', E_ESCAPE, 1), (b'"\\x"', E_ESCAPE, 1), (b'["a\\\'"]', E_ESCAPE, 3),
    (b'"\\U0041"', E_ESCAPE, 1), (b'"\\u12"', E_ESCAPE, 1), (b'"\\\x01"', E_ESCAPE, 1),
    (b'"\\u1', E_TRUNCATED, 4), (b'"\\u1x', E_ESCAPE, 1),
    # E_NUMBER: at the run's first byte, also at the end of the input
    (b'01', E_NUMBER, 0), (b'1.', E_NUMBER, 0), (b'-', E_NUMBER, 0), (b'1e5.3', E_NUMBER, 0),
    (b'1.2.3', E_NUMBER, 0), (b'--1', E_NUMBER, 0), (b'1e', E_NUMBER, 0), (b'[1e]', E_NUMBER, 1),
    (b'[1, -]', E_NUMBER, 4), (b'+1', E_UNEXPECTED, 0), (b'.5', E_UNEXPECTED, 0),
    (b'-Infinity', E_NUMBER, 0), (b'1.e3', E_NUMBER, 0), (b'1e+', E_NUMBER, 0),
    (b'{"a":-01}', E_NUMBER, 5), (b'1-2', E_NUMBER, 0), (b'0x1F', E_UNEXPECTED, 1),
    (b'-0.0e-0', 0, 7), (b'1E+2', 0, 4),
    # E_TRAILING
    (b'{} x', E_TRAILING, 3), (b'1 2', E_TRAILING, 2), (b'"a"b', E_TRAILING, 3),
    (b'{}{}', E_TRAILING, 2), (b'1,', E_TRAILING, 1),
    # E_UTF8: where bytes.decode says
    (b'"\xc0\x80"', E_UTF8, 1), (b'"\xed\xa0\x80"', E_UTF8, 1), (b'"\xf4\x90\x80\x80"', E_UTF8, 1),
    (b'"\x80"', E_UTF8, 1), (b'"ab\xe2\x82', E_UTF8, 3), (b'"\xe2\x82"', E_UTF8, 1),
    (b'"\xff"', E_UTF8, 1), (b'"\xe0\x9f\x80"', E_UTF8, 1), (b'"\xf0\x8f\xbf\xbf"', E_UTF8, 1),
    (b'"a\xc3"x', E_UTF8, 2), (b'["\xc1\xbf", 1 2]', E_UTF8, 2),
    (b'["\xc3\xa9", \xc3\xa9]', E_UNEXPECTED, 7),                # not in a string: grammar
    (b'"\xc3\xa9\x01"', E_CONTROL, 3), (b'"\xc3\x01"', E_UTF8, 1),   # the earlier wins
    (b'[1, "\xe2\x82\xac', E_TRUNCATED, 8), (b'[1, "\xe2\x82', E_UTF8, 5),
    (b'{} \xff', E_TRAILING, 3),
]


@pytest.mark.parametrize("data, code, pos", CASES)
def test_cases(data, code, pos):
    got = both(data, whole=True)
    assert got == ((pos, 0, -1) if code == 0 else (-1, code, pos))


@pytest.mark.parametrize("data, code, pos", [
    (b'1 x', 0, 1), (b'{}x', 0, 2), (b'"a"b', 0, 3), (b'[] ]', 0, 2), (b'1,', 0, 1),
    (b'1x', E_UNEXPECTED, 1), (b' nullnull', E_UNEXPECTED, 5), (b'{"a":1}\n{"b":2}\n', 0, 7)])
def test_one_document_of_many(data, code, pos):
    assert both(data) == ((pos, 0, -1) if code == 0 else (-1, code, pos))


def test_start_and_ndjson():
    lines = b'{"a":1}\n  [2, "\xc3\xa9"]\n"x"\n'
    pos, ends = 0, []
    while pos < len(lines):
        end, code, _ = both(lines, pos)
        assert code == 0
        ends.append(end)
        pos = end + 1
    assert ends == [7, 19, 23]
    assert both(lines, 8, whole=True) == (-1, E_TRAILING, 20)


@pytest.mark.parametrize("open_, close", [(b"[", b"]"), (b'{"k":', b"}")])
def test_depth(open_, close):
    ok = open_ * 512 + b"0" + close * 512
    assert both(ok, whole=True) == (len(ok), 0, -1)
    deep = open_ * 513 + b"0" + close * 513
    assert both(deep, whole=True) == (-1, E_DEPTH, 512 * len(open_))
    # the error is the bracket, even with the rest of the input gone or bad
    assert both(open_ * 600, whole=True)[1:] == (E_DEPTH, 512 * len(open_))
    assert both(b"[" * 511 + b"{}" + b"]" * 511)[1] == 0


# -- 2. mutated documents -------------------------------------------------------------------

JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers(-10**20, 10**20)
    | st.floats(allow_nan=False, allow_infinity=False) | st.text(max_size=40),
    lambda inner: st.lists(inner, max_size=5) | st.dictionaries(st.text(max_size=8), inner,
                                                                max_size=5),
    max_leaves=25)
NOISE = (b'{}[]:,"\\ \t\n\r0123456789-+.eEtrufalsn/bu' + b"\x00\x01\x1f\x7f\x80\xbf\xc0\xc1"
         + b"\xc3\xa9\xe2\x82\xac\xed\xa0\xf0\x9f\xf4\x90\xf5\xff")


def dumps(value, rnd):
    """value as JSON text of one of several layouts, as UTF-8 (a lone surrogate escaped)"""
    layout = rnd.randrange(4)
    options = dict(indent=2 if layout == 2 else None,
                   separators=(",", ":") if layout == 1 else None)
    try:
        return json.dumps(value, ensure_ascii=rnd.random() < 0.5, **options).encode()
    except UnicodeEncodeError:
        return json.dumps(value, **options).encode()


def mutate(data, rnd):
    b = bytearray(data)
    for _ in range(rnd.choice((1, 1, 1, 2, 3))):
        op, at = rnd.randrange(3), rnd.randint(0, len(b))
        byte = rnd.choice(NOISE)
        if op == 0 or not b:
            b[at:at] = bytes([byte])
        elif op == 1:
            del b[min(at, len(b) - 1)]
        else:
            b[min(at, len(b) - 1)] = byte
    return bytes(b)


class _Constant(Exception):
    pass


def _no_constant(name):
    raise _Constant(name)


def python_accepts(data):
    """Whether data is one strict JSON document by json.loads (UTF-8, no NaN/Infinity)."""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        return False
    try:
        json.loads(text, parse_constant=_no_constant)
    except (ValueError, _Constant, RecursionError):
        return False
    return True


def check_doc(data, rnd=None):
    whole = both(data, whole=True)
    assert (whole[1] == 0) == python_accepts(data), (data, whole)
    one = both(data)
    if whole[1] == 0:
        assert one == whole
    if rnd is not None and data:
        both(data, rnd.randrange(len(data) + 1), whole=rnd.random() < 0.5)
    return whole[1]


@budget(300)
@given(JSON_VALUES, st.randoms(use_true_random=False))
def test_mutated_documents(value, rnd):
    data = dumps(value, rnd)
    assert check_doc(data) == 0
    for _ in range(8):
        check_doc(mutate(data, rnd), rnd)


def test_mutated_corpus():
    """Many more mutants than hypothesis makes in the time, from a fixed seed."""
    rnd = random.Random(20240611)
    codes = set()
    for _ in range(max(5, round(400 * _SCALE))):
        data = dumps(_random_value(rnd, 3), rnd)
        assert check_doc(data) == 0
        for _ in range(10):
            codes.add(check_doc(mutate(data, rnd), rnd))
    if _SCALE >= 0.1:       # (the seed is fixed: these many mutants reach every code)
        assert codes >= {0, E_TRUNCATED, E_UNEXPECTED, E_CONTROL, E_ESCAPE, E_UTF8, E_NUMBER,
                         E_TRAILING}


def _random_value(rnd, depth):
    """A value for json.dumps: strings across the 16-byte steps, with escapes, control
    characters, non-ASCII and a lone surrogate; containers to depth levels."""
    k = rnd.randrange(9 if depth else 6)
    if k == 0:
        return None
    if k == 1:
        return rnd.random() < 0.5
    if k == 2:
        return rnd.choice([0, -1, 7, 10**18, -(10**30), rnd.randint(-999, 999)])
    if k == 3:
        return rnd.choice([0.5, -1e-7, 1.5e300, rnd.uniform(-1e6, 1e6)])
    if k in (4, 5):
        pool = 'ab "\\/\n\t\x01é€😀\ud800xyz0123456789'
        return "".join(rnd.choice(pool) for _ in range(rnd.choice((0, 3, 15, 16, 17, 40))))
    if k in (6, 7):
        return [_random_value(rnd, depth - 1) for _ in range(rnd.randrange(5))]
    return {str(rnd.randrange(100)): _random_value(rnd, depth - 1) for _ in range(rnd.randrange(5))}


@pytest.mark.parametrize("seed", range(4))
def test_every_prefix(seed):
    rnd = random.Random(seed)
    data = dumps(_random_value(rnd, 4), rnd)
    data = b' {"before": ' + data + b', "s": "a\\u00e9\\ud83d\\ude00\xe2\x82\xac", "n": -12.5e+3}'
    assert check_doc(data) == 0
    for cut in range(len(data)):
        code = check_doc(data[:cut])
        assert code in (E_TRUNCATED, E_NUMBER, E_UTF8), (data[:cut], code)


# -- 3. string_end --------------------------------------------------------------------------

def string_expect(data, pos):
    """(close, has_escape, code, err_pos) by the Python scanner"""
    try:
        close = ref._string_end(data, pos, len(data))
    except ref._Error as e:
        return -1, None, e.code, e.pos
    return close, int(b"\\" in data[pos:close]), 0, -1


def check_string(data, pos):
    got = native.string_end(data, pos)
    want = string_expect(data, pos)
    if want[1] is None:
        got = got[:1] + (None,) + got[2:]
    assert got == want, (data, pos)


@pytest.mark.parametrize("special", [b'"', b"\\", b"\\n", b"\\u00e9", b"\\u00", b"\\q", b"\x00",
                                     b"\x1f", b" ", b"\x7f", b"\xc3\xa9"])
def test_string_end_every_place(special):
    for n in range(101):
        body = bytes(0x61 + (i % 26) for i in range(n))
        for k in range(n + 1):
            s = body[:k] + special + body[k:]
            for pre, post in ((b"", b""), (b'"', b""), (b'"', b'"'), (b"[\"", b'"]' + b"x" * 20)):
                check_string(pre + s + post, len(pre))


def test_string_end_ends():
    assert native.string_end(b'"abc"', 1) == (4, 0, 0, -1)
    assert native.string_end(b'"a\\"c"', 1) == (5, 1, 0, -1)
    assert native.string_end(b'"abc', 1)[2:] == (E_TRUNCATED, 4)
    assert native.string_end(b'"', 1)[2:] == (E_TRUNCATED, 1)
    assert native.string_end(b'"' + b"a" * 40 + b"\\", 1)[2:] == (E_TRUNCATED, 42)
    assert native.string_end(b'"' + b"\xe2" * 40 + b'"', 1) == (41, 0, 0, -1)  # no UTF-8 here


@budget(300)
@given(st.binary(max_size=80), st.integers(0, 3))
def test_string_end_random(body, pre):
    data = b'"' * pre + body
    check_string(data, min(pre, len(data)))


# -- 4. UTF-8, unescape, base64 -------------------------------------------------------------

UTF8_BYTES = st.lists(st.sampled_from([b"a", b"\x00", b"\x7f", b"\x80", b"\xbf", b"\xc0", b"\xc1",
                                       b"\xc2", b"\xdf", b"\xe0", b"\xe0\xa0", b"\xed", b"\xed\x9f",
                                       b"\xed\xa0", b"\xef", b"\xf0", b"\xf0\x90", b"\xf4",
                                       b"\xf4\x8f", b"\xf4\x90", b"\xf5", b"\xff", b"\xc3\xa9",
                                       b"\xe2\x82\xac", b"\xf0\x9f\x98\x80", b"0123456789abcdef"]),
                      max_size=30).map(b"".join)


@budget(400)
@given(UTF8_BYTES | st.binary(max_size=60))
def test_utf8_first_invalid(data):
    assert native.utf8_first_invalid(data) == ref.utf8_first_invalid(data)
    for k in (0, 15, 16, 17, 33):
        padded = b"a" * k + data
        assert native.utf8_first_invalid(padded) == ref.utf8_first_invalid(padded)


@pytest.mark.parametrize("data, pos", [(b"\xc0\x80", 0), (b"a\xed\xa0\x80", 1),
                                       (b"ab\xf4\x90\x80\x80", 2), (b"\x80", 0),
                                       (b"xyz\xe2\x82", 3), (b"\xe2\x82\xac", -1), (b"", -1),
                                       (b"a" * 31 + b"\xf0\x9f\x98", 31)])
def test_utf8_cases(data, pos):
    assert native.utf8_first_invalid(data) == pos == ref.utf8_first_invalid(data)


PIECES = st.one_of(
    st.text(st.characters(blacklist_categories=("Cs",), blacklist_characters='"\\',
                          min_codepoint=0x20), max_size=20),
    st.sampled_from(['\\"', "\\\\", "\\/", "\\b", "\\f", "\\n", "\\r", "\\t"]),
    st.tuples(st.integers(0, 0xFFFF), st.booleans()).map(
        lambda t: "\\u%04x" % t[0] if t[1] else "\\u%04X" % t[0]),
    st.sampled_from(["\\ud800", "\\udbff", "\\udc00", "\\udfff", "\\ud83d\\ude00"]))


def lone_surrogate_at(pieces):
    """The byte offset of the first \\u escape that is a lone surrogate, or None."""
    text = "".join(pieces)
    i = 0
    while i < len(text):
        if text.startswith("\\u", i):
            cp = int(text[i + 2:i + 6], 16)
            if 0xD800 <= cp <= 0xDBFF and text.startswith("\\u", i + 6) \
                    and 0xDC00 <= int(text[i + 8:i + 12], 16) <= 0xDFFF:
                i += 12
                continue
            if 0xD800 <= cp <= 0xDFFF:
                return len(text[:i].encode("utf-8"))
            i += 6
        elif text[i] == "\\":
            i += 2
        else:
            i += 1
    return None


@budget(400)
@given(st.lists(PIECES, max_size=12))
def test_unescape(pieces):
    text = "".join(pieces)
    src = text.encode("utf-8")
    assert native.string_end(src + b'"', 0)[2] == 0       # what the scan passes
    value = json.loads('"' + text + '"')
    try:
        want = value.encode("utf-8")
    except UnicodeEncodeError:
        at = lone_surrogate_at(pieces)
        assert at is not None
        assert native.unescape(src) == -1 - at
        assert src[at:at + 2] == b"\\u"
    else:
        assert lone_surrogate_at(pieces) is None
        assert native.unescape(src) == want


def test_unescape_cases():
    assert native.unescape(b"") == b""
    assert native.unescape(b"a" * 40 + b"\\n" + b"b" * 20) == b"a" * 40 + b"\n" + b"b" * 20
    assert native.unescape(b"\\u0000\\u00e9\\u20AC\\uD83D\\uDE00") == "\x00é€😀".encode()
    assert native.unescape(b"x\\ud800") == -2
    assert native.unescape(b"x\\ud800\\u0041") == -2
    assert native.unescape(b"ab\\udc00\\ud800") == -3
    assert native.unescape(b"\\ud800\\ud800\\udc00") == -1
    assert native.unescape(b"\\ud800\\n") == -1


PY_PADDING_QUIRK = sys.version_info[:2] in ((3, 11), (3, 12))


def python_b64(data):
    """base64.b64decode(validate=True) of data, the missing '=' added when it has none"""
    if b"=" not in data:
        data += b"=" * (-len(data) % 4)
    try:
        return base64.b64decode(data, validate=True)
    except binascii.Error:
        return None


def excess_padding(data):
    d = len(data.rstrip(b"="))
    return d % 4 == 0 and d < len(data)


@budget(400)
@given(st.one_of(
    st.binary(max_size=40).map(base64.b64encode),
    st.binary(max_size=40).map(lambda b: base64.b64encode(b).rstrip(b"=")),
    st.text("AQgz09+/=", max_size=12).map(str.encode),
    st.text("AQ=-_ \n*\x00\xff", max_size=9).map(lambda s: s.encode("latin-1"))))
def test_base64(data):
    got = native.base64_decode(data)
    assert got == ref.base64_decode(data)
    if PY_PADDING_QUIRK or not excess_padding(data):
        assert got == python_b64(data), data


def test_base64_cases():
    assert native.base64_decode(b"") == b""
    assert native.base64_decode(b"AQ==") == native.base64_decode(b"AQ") == b"\x01"
    assert native.base64_decode(b"AR==") == b"\x01"              # unused bits: ignored
    assert native.base64_decode(b"AAB=") == native.base64_decode(b"AAB") == b"\x00\x00"
    assert native.base64_decode(b"AAAA=") == b"\x00\x00\x00"      # as Python 3.11
    for bad in (b"A", b"AAAAA", b"=", b"==", b"AQ=", b"AQ===", b"AAB==", b"AA=A", b"A=AA",
                b"AAAA AAAA", b"AAA\n", b"AA-_", b"AAAA=A"):
        assert native.base64_decode(bad) is None, bad


def _python_integer(text: bytes, lo=-(1 << 63), hi=(1 << 63) - 1):
    """cdc_jv_int's answer by Python: -?(0|[1-9][0-9]*) within [lo, hi] (ASCII digits)."""
    t = text[1:] if text[:1] == b"-" else text
    if not t or not all(48 <= c <= 57 for c in t) or (t[0] == 48 and len(t) > 1):
        return None
    v = int(text)
    return v if lo <= v <= hi else None


@pytest.mark.parametrize("n", range(1, 41))
def test_numbers_every_length_and_place(n):
    """Digit runs of every length, a non-digit (or none) at every place, at the buffer's end
    or followed by more: the native scanner (eight digits a test) agrees with Python's."""
    rnd = random.Random(n)
    for place in [None] + list(range(n)):
        digits = bytearray(str(rnd.randrange(1, 10)).encode()
                           + bytes(rnd.choice(b"0123456789") for _ in range(n - 1)))
        for bad in (b"a", b".", b"e", b" ", b"\xff", b"/", b":"):
            d = bytearray(digits)
            if place is not None:
                d[place] = bad[0]
            for sign in (b"", b"-"):
                for after in (b"", b" ", b"]", b"123"):
                    doc = b"[" + sign + bytes(d) + after + (b"]" if after != b"]" else b"")
                    assert native.document(doc) == ref.document(doc), doc
                    num = sign + bytes(d)
                    assert native.document(num, whole=True) == ref.document(num, whole=True), num
            if place is None:
                break


def test_key_compare_finds_a_difference_at_every_place():
    """cdc_jv_same (a key against the name the kernels expect there) reads whole words, the
    last overlapping the one before: every length to 40, a difference at every place (and
    in every bit of it) or none."""
    rnd = random.Random(11)
    for n in range(41):
        a = bytes(rnd.randrange(256) for _ in range(n))
        assert native.same(a, a)
        for place in range(n):
            for bit in range(8):
                b = bytearray(a)
                b[place] ^= 1 << bit
                assert not native.same(a, bytes(b)), (n, place, bit)


@given(st.integers(min_value=-(10 ** 21), max_value=10 ** 21))
@budget(2000)
def test_integer_parser(v):
    text = str(v).encode()
    assert native.integer(text) == _python_integer(text)
    assert native.integer(text, -1000, 10 ** 12) == _python_integer(text, -1000, 10 ** 12)


def test_integer_parser_cases():
    cases = [b"0", b"-0", b"00", b"01", b"1" * 19, b"9" * 19, b"1" * 20, b"9223372036854775807",
             b"9223372036854775808", b"-9223372036854775808", b"-9223372036854775809",
             b"18446744073709551615", b"18446744073709551616", b"", b"-", b"12345678",
             b"123456789", b"1234567a", b"a2345678", b"12345678901234567a", b"1234567\x80",
             b"12345678/", b"12345678:", b"1234\x0056", b"+1", b"1.0", b"1e3", b" 1"]
    for text in cases:
        assert native.integer(text) == _python_integer(text), text
    rnd = random.Random(5)
    for _ in range(20000):
        n = rnd.randrange(1, 21)
        text = bytearray(rnd.choice(b"0123456789") for _ in range(n))
        if rnd.random() < 0.3:
            text[rnd.randrange(n)] = rnd.randrange(256)
        if rnd.random() < 0.5:
            text = b"-" + text
        assert native.integer(bytes(text)) == _python_integer(bytes(text)), bytes(text)


def _python_decimal(text: bytes, prec: int, scale: int):
    """cdc_jv_decimal's answer by Python: the unscaled integer of DECIMAL(prec, scale) when
    the number is exact at that scale and below 10**prec in magnitude, else None."""
    import decimal
    with decimal.localcontext() as ctx:
        ctx.prec = 200
        ctx.Emax, ctx.Emin = 999999, -999999
        v = decimal.Decimal(text.decode()).scaleb(scale)
        if v != v.to_integral_value():
            return None
        u = int(v)
    return u if abs(u) < 10 ** prec else None


_json_numbers = st.builds(
    lambda sign, i, f, e: (sign + i + (("." + f) if f else "") + e).encode(),
    st.sampled_from(["", "-"]),
    st.one_of(st.just("0"), st.from_regex(r"[1-9][0-9]{0,24}", fullmatch=True)),
    st.one_of(st.just(""), st.from_regex(r"[0-9]{1,24}", fullmatch=True)),
    st.one_of(st.just(""), st.from_regex(r"[eE][+-]?[0-9]{1,2}", fullmatch=True)))


@given(_json_numbers, st.integers(1, 38), st.integers(0, 12))
@budget(3000)
def test_decimal_parser(text, prec, scale):
    """Every JSON number the grammar allows, short and long (the 19-digit fast path and the
    rest), at precisions and scales from the catalogs' range."""
    scale = min(scale, prec)
    assert native.decimal(text, prec, scale) == _python_decimal(text, prec, scale), text


def test_decimal_parser_cases():
    for text in (b"0", b"-0", b"-0.0", b"0.87", b"1.50", b"-9835415.86", b"9999999999999999999",
                 b"1234567890123456789", b"123456789012.3456789", b"12345678901234567890",
                 b"0.0000000000000000001", b"739067097571516368999.47374038", b"1e2", b"1.5E-1",
                 b"99999999999.99", b"999999999.995"):
        for prec, scale in ((11, 2), (31, 8), (20, 0), (38, 10), (5, 0), (19, 0), (19, 19)):
            assert native.decimal(text, prec, scale) == _python_decimal(text, prec, scale), \
                (text, prec, scale)

