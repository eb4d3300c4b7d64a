"""Strict JSON (RFC 8259) well-formedness, in plain Python: the twin of native/cdcfast/_json.h.

The JSON change events (Debezium, OpenLogReplicator, Qlik) are parsed with ``json.loads``
here; when it rejects a document, this scanner names the first problem as the native decoder
does: a code and a byte offset into the buffer, the same for both (tests/test_json_scan.py
compares them on mutated documents). It runs only on rejected documents, so it is written
for clarity: regular expressions find the ends of strings, numbers and whitespace, a list is
the stack of open brackets.

Which error is reported: the grammar scan runs first and stops at its first problem, at g
(E_TRUNCATED: g = end). Then the bytes [start, g) are checked as UTF-8 (on success the bytes
[start, doc_end)); if they hold an invalid sequence, E_UTF8 at its first byte u wins (so
u < g always). A byte past 0x7F outside a string is itself a grammar error (E_UNEXPECTED at
it) and is not in [start, g): it stays E_UNEXPECTED. Since the grammar never stops inside a
multi-byte sequence (it stops only at ASCII bytes, at such a byte outside strings, or at
end), the first invalid sequence of [start, g) is the first one of the whole buffer that
starts before g, and a sequence cut by the end of the input is E_UTF8 at its lead byte.
"""
from __future__ import annotations

import base64
import binascii
import re

# the scanner's codes, the same numbers as native/cdcfast/_json.h's (their one spec:
# formats/_json_codes.py)
from ..formats._json_codes import (E_CONTROL, E_DEPTH, E_ESCAPE, E_NUMBER, E_TRAILING,
                                   E_TRUNCATED, E_UNEXPECTED, E_UTF8, MAX_DEPTH)

_WS = re.compile(rb"[ \t\n\r]*")
_STRING_STOP = re.compile(rb'["\\\x00-\x1f]')
_HEX4 = re.compile(rb"[0-9A-Fa-f]{4}")
_NUMBER_RUN = re.compile(rb"[0-9+\-.eE]+")      # E_NUMBER takes the whole run: "1.2.3"
_NUMBER = re.compile(rb"-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?")
_ESCAPES = b'"\\/bfnrt'
_LITERALS = {ord("t"): b"true", ord("f"): b"false", ord("n"): b"null"}
_AFTER_SCALAR = b" \t\n\r,}]"     # without it "truex" or "1x" would be a word
_OPEN, _CLOSE = b"{[", {ord("{"): ord("}"), ord("["): ord("]")}
_B64_DATA = re.compile(rb"[A-Za-z0-9+/]*")


class _Error(Exception):
    def __init__(self, code: int, pos: int):
        super().__init__(code, pos)
        self.code, self.pos = code, pos


def _ws(data: bytes, i: int, end: int) -> int:
    return _WS.match(data, i, end).end()


def _string_end(data: bytes, i: int, end: int) -> int:
    """The offset of the quote closing the string whose first byte is at i."""
    while True:
        m = _STRING_STOP.search(data, i, end)
        if m is None:
            raise _Error(E_TRUNCATED, end)
        i = m.start()
        c = data[i]
        if c == ord('"'):
            return i
        if c < 0x20:
            raise _Error(E_CONTROL, i)
        if i + 1 >= end:                                # a backslash, the last byte
            raise _Error(E_TRUNCATED, end)
        e = data[i + 1]
        if e in _ESCAPES:
            i += 2
        elif e == ord("u"):
            digits = data[i + 2:min(i + 6, end)]
            if _HEX4.match(digits.ljust(4, b"0")) is None:
                raise _Error(E_ESCAPE, i)               # a bad digit before the end
            if len(digits) < 4:
                raise _Error(E_TRUNCATED, end)
            i += 6                                      # a lone surrogate passes (RFC 8259)
        else:
            raise _Error(E_ESCAPE, i)


def _value_end(data: bytes, i: int, end: int) -> int:
    """The offset just past the value starting at i (no whitespace before it)."""
    stack: list[int] = []       # the closing byte of each open bracket
    while True:
        # a value starts at i
        if i >= end:
            raise _Error(E_TRUNCATED, end)
        c = data[i]
        if c in _OPEN:
            if len(stack) == MAX_DEPTH:
                raise _Error(E_DEPTH, i)
            stack.append(_CLOSE[c])
            i = _ws(data, i + 1, end)
            if i >= end:
                raise _Error(E_TRUNCATED, end)
            if data[i] == stack[-1]:                    # empty
                stack.pop()
                i += 1
            elif c == ord("{"):
                i = _member_value(data, i, end)
                continue
            else:
                continue
        elif c == ord('"'):
            i = _string_end(data, i + 1, end) + 1
        elif c in _LITERALS:
            word = _LITERALS[c]
            have = data[i:min(i + len(word), end)]
            if not word.startswith(have):
                raise _Error(E_UNEXPECTED, i)           # at the literal's first byte
            if len(have) < len(word):
                raise _Error(E_TRUNCATED, end)
            i = _scalar_end(data, i + len(word), end)
        elif c == ord("-") or ord("0") <= c <= ord("9"):
            run = _NUMBER_RUN.match(data, i, end).end()
            if _NUMBER.fullmatch(data, i, run) is None:
                raise _Error(E_NUMBER, i)
            i = _scalar_end(data, run, end)
        else:
            raise _Error(E_UNEXPECTED, i)

        # a value ended at i: close brackets until one wants another value
        while stack:
            i = _ws(data, i, end)
            if i >= end:
                raise _Error(E_TRUNCATED, end)
            c = data[i]
            if c == stack[-1]:
                stack.pop()
                i += 1
            elif c == ord(","):
                i = _ws(data, i + 1, end)
                if stack[-1] == ord("}"):
                    if i >= end:
                        raise _Error(E_TRUNCATED, end)
                    i = _member_value(data, i, end)
                break
            else:
                raise _Error(E_UNEXPECTED, i)
        else:
            return i


def _member_value(data: bytes, i: int, end: int) -> int:
    """Past a member's name (at i, i < end) and its colon: where its value starts."""
    if data[i] != ord('"'):
        raise _Error(E_UNEXPECTED, i)
    i = _ws(data, _string_end(data, i + 1, end) + 1, end)
    if i >= end:
        raise _Error(E_TRUNCATED, end)
    if data[i] != ord(":"):
        raise _Error(E_UNEXPECTED, i)
    return _ws(data, i + 1, end)


def _scalar_end(data: bytes, i: int, end: int) -> int:
    if i < end and data[i] not in _AFTER_SCALAR:
        raise _Error(E_UNEXPECTED, i)
    return i


def utf8_first_invalid(data: bytes, start: int = 0, stop: int | None = None) -> int:
    """-1 if data[start:stop] is UTF-8, else the offset (in data) of its first invalid
    sequence, as ``UnicodeDecodeError.start`` gives it."""
    try:
        bytes(data[start:stop]).decode("utf-8")
    except UnicodeDecodeError as e:
        return start + e.start
    return -1


def document(data: bytes, start: int = 0, end: int | None = None,
             whole: bool = False) -> tuple[int, int, int]:
    """The JSON document in data[start:end]: whitespace, then one value; with whole, then
    only whitespace up to end. Returns (doc_end, 0, -1), doc_end just past the value, or
    (-1, code, err_pos) for the first problem by the rule in this module's docstring."""
    end = len(data) if end is None else end
    code = 0
    try:
        stop = doc_end = _value_end(data, _ws(data, start, end), end)
        if whole and (stop := _ws(data, doc_end, end)) < end:
            code = E_TRAILING
    except _Error as e:
        code, stop = e.code, e.pos
    u = utf8_first_invalid(data, start, stop if code else doc_end)
    if u >= 0:
        code, stop = E_UTF8, u
    return (-1, code, stop) if code else (doc_end, 0, -1)


def base64_decode(data: bytes) -> bytes | None:
    """The standard-alphabet base64 text data decoded, or None: what Python 3.11's
    ``base64.b64decode(s, validate=True)`` accepts when s has '=' padding (data characters,
    then only '='; with d data characters, d % 4 == 2 needs exactly "==", d % 4 == 3 exactly
    "=", d % 4 == 0 takes any number of '=' as Python 3.11 and 3.12 do, 3.13 none), and
    unpadded text as if the missing '=' were there. The rule is spelled out here, not left to
    the running Python, whose acceptance of extra padding changed (3.10, 3.13)."""
    data = bytes(data)
    d = _B64_DATA.match(data).end()
    pads = len(data) - d
    if data[d:] != b"=" * pads or d % 4 == 1:
        return None
    if pads and (d == 0 or (d % 4 == 2 and pads != 2) or (d % 4 == 3 and pads != 1)):
        return None
    try:
        return base64.b64decode(data[:d] + b"=" * (-d % 4), validate=True)
    except binascii.Error:          # (never: the shape is checked above)
        return None
