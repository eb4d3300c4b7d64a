"""JSON text as the decoders of the JSON formats read it (debezium, olr, qlik), the native runs
and the reference twins alike: a document parsed with numbers kept as their text (`Num`, so
decimals stay exact) and keys given twice noted (`Obj`, `dups`); why the strict scanner
refused a document (`scan_reason`); and, for records with an error only, the byte span of the
value an error names (`Spans`, `Problem`, `resolve`), which the `json` module does not give.

Apart from `_jsonmessages` (the catalog builders' plain reading of messages) because these are
the decoders' exact rules: a native run writes its error texts with them as its reference does.
"""
from __future__ import annotations

import json
import re

from ..errors import show_value
from ._json_codes import (E_CONTROL, E_DEPTH, E_ESCAPE, E_NUMBER, E_TRUNCATED, E_UNEXPECTED,
                          E_UTF8, MAX_DEPTH)


class Num(str):
    """A JSON number, kept as the text it was sent as."""


class Obj(dict):
    """A JSON object with a key given twice: ``dups`` names such keys (the dict holds the
    last value)."""
    dups = frozenset()


def _object(pairs):
    d = dict(pairs)
    if len(d) != len(pairs):
        d = Obj(d)
        seen = set()
        d.dups = frozenset(k for k, _ in pairs if k in seen or seen.add(k))
    return d


def _reject(name):
    raise ValueError(f"{name} is not JSON")


DECODER = json.JSONDecoder(parse_float=Num, parse_int=Num, parse_constant=_reject,
                           object_pairs_hook=_object)


def parse_json(text: bytes):
    """A well-formed JSON text as this decoder reads it (numbers as text, keys given twice
    noted)."""
    return DECODER.decode(text.decode("utf-8"))


def dups(obj) -> frozenset:
    return obj.dups if isinstance(obj, Obj) else frozenset()


class Doc:
    """One document of a message: its byte span and parsed value, or why it is corrupt."""
    __slots__ = ("start", "end", "value", "code", "err_pos")

    def __init__(self, start, end, value=None, code=0, err_pos=0):
        self.start, self.end, self.value = start, end, value
        self.code, self.err_pos = code, err_pos


def ws(data: bytes, pos: int, end: int) -> int:
    """The first byte at or after pos that is not JSON whitespace (end at most)."""
    while pos < end and data[pos] in b" \t\n\r":
        pos += 1
    return pos


# -- why a document is not well-formed ------------------------------------------------------

SCAN_REASONS = {
    E_TRUNCATED: "truncated document", E_UNEXPECTED: "unexpected {}",
    E_CONTROL: "control character in string", E_ESCAPE: "invalid escape",
    E_UTF8: "invalid UTF-8", E_NUMBER: "invalid number",
    E_DEPTH: f"nesting deeper than {MAX_DEPTH}",
}


def scan_reason(code: int, data: bytes, pos: int) -> str:
    """The text of the strict scanner's `code`, which met the byte at pos of data."""
    reason = SCAN_REASONS.get(code, "not well-formed JSON")
    if code == E_UNEXPECTED:
        reason = reason.format(show_value(data[pos:pos + 1], "latin-1"))
    return reason


# -- positions (error paths only) -----------------------------------------------------------

_STRING = re.compile(rb'"(?:[^"\\]|\\.)*"', re.S)
_SCALAR = re.compile(rb'[^ \t\n\r,}\]]+')
_STRUCTURE = re.compile(rb'"(?:[^"\\]|\\.)*"|[{}\[\]]', re.S)


class Spans:
    """Finds the byte span of a value in a well-formed document, by key path (the document
    ends at `end`; the buffer is not copied)."""

    def __init__(self, data: bytes, end: int):
        self.data = data
        self.end = end

    def value_end(self, i: int) -> int:
        c = self.data[i:i + 1]
        if c == b'"':
            return _STRING.match(self.data, i).end()
        if c in (b"{", b"["):
            depth = 0
            for m in _STRUCTURE.finditer(self.data, i):
                t = m.group()
                if t in (b"{", b"["):
                    depth += 1
                elif t in (b"}", b"]"):
                    depth -= 1
                    if depth == 0:
                        return m.end()
            return self.end
        return _SCALAR.match(self.data, i).end()

    def members(self, i: int):
        """(key, key position, value start, value end) of the object at i."""
        d, n = self.data, self.end
        i = ws(d, i + 1, n)
        while i < n and d[i:i + 1] == b'"':
            m = _STRING.match(d, i)
            raw = m.group()
            key = raw[1:-1].decode("utf-8") if b"\\" not in raw \
                else json.loads(raw.decode("utf-8"))
            j = ws(d, m.end(), n) + 1           # past ':'
            j = ws(d, j, n)
            e = self.value_end(j)
            yield key, i, j, e
            i = ws(d, e, n)
            if d[i:i + 1] != b",":
                return
            i = ws(d, i + 1, n)

    def elements(self, i: int):
        """(value start, value end) of each element of the array at i."""
        d, n = self.data, self.end
        i = ws(d, i + 1, n)
        if d[i:i + 1] == b"]":
            return
        while i < n:
            e = self.value_end(i)
            yield i, e
            i = ws(d, e, n)
            if d[i:i + 1] != b",":
                return
            i = ws(d, i + 1, n)

    def span(self, start: int, path, nth: int = 1, at_key: bool = False):
        """(start, end) of the value at `path` (its `nth` occurrence of the last key; the key
        itself with at_key) in the document at `start`; None when absent. An int in `path`
        steps into an array: that element."""
        i = ws(self.data, start, self.end)
        for depth, key in enumerate(path):
            last = depth == len(path) - 1
            if isinstance(key, int):
                for k, (vs, ve) in enumerate(self.elements(i)):
                    if k == key:
                        if last:
                            return vs, ve
                        i = vs
                        break
                else:
                    return None
                continue
            count = 0
            for k, kpos, vs, ve in self.members(i):
                if k == key:
                    count += 1
                    if not last or count == nth:
                        if last:
                            return (kpos, vs) if at_key else (vs, ve)
                        i = vs
                        break
            else:
                return None
        return None


class Problem:
    """An error waiting for its position: the field it names, the key path of the value, a
    reason (a function of the value's JSON text), and which occurrence."""
    __slots__ = ("field", "path", "reason", "nth", "at_key")

    def __init__(self, field, path, reason, nth=1, at_key=False):
        self.field, self.path, self.reason, self.nth, self.at_key = \
            field, path, reason, nth, at_key


def resolve(problems, data: bytes, doc: Doc):
    """(byte, field, reason) of the first problem in document order."""
    spans = Spans(data, doc.end)
    found = []
    for p in problems:
        sp = spans.span(doc.start, p.path, p.nth, p.at_key) if p.path else None
        pos, raw = (sp[0], data[sp[0]:sp[1]]) if sp else (doc.start, b"")
        reason = p.reason(raw) if callable(p.reason) else p.reason
        found.append((pos, p.field, reason))
    return min(found, key=lambda f: f[0])
