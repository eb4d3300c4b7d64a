"""The reference decoder of `debezium` (SPEC §5.3, docs/debezium.md), in plain Python.

This is the slow per-record parser the native kernel replaces, and the oracle it is tested
against: the `json` module parses each document (numbers kept as their text, so decimals
stay exact), and plain Python converts the values. Byte positions, which the `json` module
does not give, are found only for records with an error: a small walker over the document
(`_Walker`) locates the value an error names, and the strict scanner of `_jsonscan` names the
first byte of a document that is not well-formed.
"""
from __future__ import annotations

import decimal
import json
import re
import struct

import pyarrow as pa

from .. import envelope
from ..catalog import (BINARY, BOOL, DATE32, DECIMAL, DECTEXT, FLOAT32, FLOAT64, INT8, INT16,
                       INT32, INT64, STRING, TIME64, TIMESTAMP, TIMESTAMP_TZ)
from ..errors import DecodeError, show_value
from ..formats.base import ALL, HEADERS, apply_mode, full_name, with_messages
from ..formats.debezium import (B64DEC, MS, NS, SOURCE, US, VSD,
                                image_fields)
from . import _jsonscan

MAX_DEPTH = 512
INT_RANGE = {INT8: (-2 ** 7, 2 ** 7 - 1), INT16: (-2 ** 15, 2 ** 15 - 1),
             INT32: (-2 ** 31, 2 ** 31 - 1), INT64: (-2 ** 63, 2 ** 63 - 1)}
I64 = INT_RANGE[INT64]
US_PER_DAY = 86_400_000_000
DATA_OPS = {"c", "u", "d", "r", "t"}
CONTROL = {"begin", "commit", "ddl", "message"}
SCAN_REASONS = {
    _jsonscan.E_TRUNCATED: "truncated document", _jsonscan.E_UNEXPECTED: "unexpected {}",
    _jsonscan.E_CONTROL: "control character in string", _jsonscan.E_ESCAPE: "invalid escape",
    _jsonscan.E_UTF8: "invalid UTF-8", _jsonscan.E_NUMBER: "invalid number",
    _jsonscan.E_DEPTH: f"nesting deeper than {MAX_DEPTH}",
}

_INT = re.compile(r"-?(?:0|[1-9][0-9]*)")
_NUMBER = re.compile(r"(-?)(0|[1-9][0-9]*)(?:\.([0-9]+))?(?:[eE]([+-]?[0-9]+))?")
_ISO = re.compile(r"([0-9]{4})-([0-9]{2})-([0-9]{2})T([0-9]{2}):([0-9]{2}):([0-9]{2})"
                  r"(?:\.([0-9]+))?(Z|[+-][0-9]{2}:[0-9]{2})?")
_FLOAT_WORDS = {"NaN": float("nan"), "Infinity": float("inf"), "-Infinity": float("-inf")}


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


_DECODER = json.JSONDecoder(parse_float=Num, parse_int=Num, parse_constant=_reject,
                            object_pairs_hook=_object)


def parse_json(text: bytes):
    """A well-formed JSON text as this decoder reads it (numbers as text, keys given twice
    noted)."""
    return _DECODER.decode(text.decode("utf-8"))


def dups(obj) -> frozenset:
    return obj.dups if isinstance(obj, Obj) else frozenset()


# -- documents ----------------------------------------------------------------------------

class Doc:
    """One document of a message: its byte span and parsed value, or why it is corrupt."""
    __slots__ = ("start", "end", "value", "code", "err_pos")

    def __init__(self, start, end, value=None, code=0, err_pos=0):
        self.start, self.end, self.value = start, end, value
        self.code, self.err_pos = code, err_pos


def _ws(data: bytes, pos: int, end: int) -> int:
    while pos < end and data[pos] in b" \t\n\r":
        pos += 1
    return pos


def pieces(data: bytes):
    """(start, end) of the message's pieces: cut before every `{` that starts a line."""
    start = 0
    while True:
        at = data.find(b"\n{", start)
        if at < 0:
            yield start, len(data)
            return
        yield start, at + 1
        start = at + 1


def documents(data: bytes):
    """The documents of one message, in order (docs/debezium.md, "Inputs and framing")."""
    for a, b in pieces(data):
        pos = _ws(data, a, b)
        if pos >= b:
            continue
        chunk = data[a:b]
        try:
            text = chunk.decode("utf-8")
        except UnicodeDecodeError:
            text = None
        deep = chunk.count(b"{") + chunk.count(b"[") > MAX_DEPTH
        while pos < b:
            doc = _parse_one(data, text, a, pos, b, deep)
            yield doc
            if doc.code:
                break                           # the rest of the piece is that record
            pos = _ws(data, doc.end, b)


def _parse_one(data, text, a, pos, b, deep) -> Doc:
    if text is not None and not deep:
        ci = pos - a if len(text) == b - a else len(data[a:pos].decode("utf-8"))
        try:
            value, ce = _DECODER.raw_decode(text, ci)
        except (ValueError, RecursionError):
            pass
        else:
            end = pos + (ce - ci if len(text) == b - a
                         else len(text[ci:ce].encode("utf-8", "surrogatepass")))
            return Doc(pos, end, value)
    stop = len(data[:b].rstrip(b" \t\n\r"))     # a truncation is reported at the content's end
    doc_end, code, err_pos = _jsonscan.document(data, pos, stop)
    if code:
        return Doc(pos, stop, None, code, err_pos)
    return Doc(pos, doc_end, _DECODER.decode(data[pos:doc_end].decode("utf-8")))


def scan_reason(code: int, data: bytes, pos: int) -> str:
    reason = SCAN_REASONS.get(code, "not well-formed JSON")
    if code == _jsonscan.E_UNEXPECTED:
        reason = reason.format(show_value(data[pos:pos + 1], "latin-1"))
    return reason


# -- positions (error paths only) -----------------------------------------------------------

_STRING = re.compile(rb'"(?:[^"\\]|\\.)*"', re.S)
_SCALAR = re.compile(rb'[^ \t\n\r,}\]]+')
_STRUCTURE = re.compile(rb'"(?:[^"\\]|\\.)*"|[{}\[\]]', re.S)


class _Walker:
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
        i = _ws(d, i + 1, n)
        while i < n and d[i:i + 1] == b'"':
            m = _STRING.match(d, i)
            raw = m.group()
            key = raw[1:-1].decode("utf-8") if b"\\" not in raw \
                else json.loads(raw.decode("utf-8"))
            j = _ws(d, m.end(), n) + 1          # past ':'
            j = _ws(d, j, n)
            e = self.value_end(j)
            yield key, i, j, e
            i = _ws(d, e, n)
            if d[i:i + 1] != b",":
                return
            i = _ws(d, i + 1, n)

    def span(self, start: int, path, nth: int = 1, at_key: bool = False):
        """(start, end) of the value at `path` (its `nth` occurrence of the last key; the key
        itself with at_key) in the document at `start`; None when absent."""
        i = _ws(self.data, start, self.end)
        for depth, key in enumerate(path):
            last = depth == len(path) - 1
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
    walker = _Walker(data, doc.end)
    found = []
    for p in problems:
        sp = walker.span(doc.start, p.path, p.nth, p.at_key) if p.path else None
        pos, raw = (sp[0], data[sp[0]:sp[1]]) if sp else (doc.start, b"")
        reason = p.reason(raw) if callable(p.reason) else p.reason
        found.append((pos, p.field, reason))
    return min(found, key=lambda f: f[0])


# -- values -------------------------------------------------------------------------------

def b64(text: str):
    """Base64 text -> bytes (docs/debezium.md), or None."""
    if not isinstance(text, str) or isinstance(text, Num):
        return None
    try:
        raw = text.encode("ascii")
    except UnicodeEncodeError:
        return None
    return _jsonscan.base64_decode(raw)


def number_parts(text: str):
    """(digits as int, exponent) of a JSON number's text: value = D × 10^e; or None."""
    m = _NUMBER.fullmatch(text)
    if not m:
        return None
    sign, ip, fp, ex = m.groups()
    fp = fp or ""
    d = int(ip + fp)
    e = (int(ex) if ex else 0) - len(fp)
    return (-d if sign else d), e


def rescale(d: int, e: int, scale: int, precision: int):
    """The unscaled integer at `scale` of D × 10^e, or None when digits would be lost or the
    precision exceeded."""
    if d == 0:
        return 0
    k = e + scale
    if k >= 0:
        if k > 38:
            return None
        u = d * 10 ** k
    else:
        if -k > len(str(abs(d))):
            return None
        q, r = divmod(abs(d), 10 ** -k)
        if r:
            return None
        u = q if d > 0 else -q
    return u if abs(u) < 10 ** precision else None


def scaled_text(u: int, scale: int):
    """Plain decimal text of u × 10^-scale with exactly `scale` fraction digits."""
    if not -1000 <= scale <= 1000:
        return None
    if scale <= 0:
        return str(u * 10 ** -scale)
    digits = str(abs(u)).rjust(scale + 1, "0")
    return ("-" if u < 0 else "") + digits[:-scale] + "." + digits[-scale:]


def unscaled_of(v, enc: int, scale: int):
    """(unscaled int, its scale) of a base64 or VariableScaleDecimal value, or None."""
    if enc == VSD or isinstance(v, dict):
        if not isinstance(v, dict) or dups(v) & {"scale", "value"}:
            return None
        s = v.get("scale")
        if not isinstance(s, Num) or not _INT.fullmatch(s):
            return None
        raw = b64(v.get("value"))
        scale = int(s)
    else:
        raw = b64(v)
    if not raw:
        return None
    u = int.from_bytes(raw, "big", signed=True)
    if not -2 ** 127 <= u < 2 ** 127:
        return None                         # more than 128 bits (docs/debezium.md)
    return u, scale


def integer(v, lo, hi):
    if isinstance(v, str) and _INT.fullmatch(v):
        x = int(v)
        if lo <= x <= hi:
            return x
    return None


def iso_us(text: str, zoned: bool):
    """Microseconds since the epoch of an ISO-8601 timestamp (UTC without a zone)."""
    m = _ISO.fullmatch(text)
    if not m:
        return None
    y, mo, d, h, mi, s = (int(g) for g in m.groups()[:6])
    frac, zone = m.group(7), m.group(8)
    if not (1 <= mo <= 12 and 1 <= d <= _dim(y, mo) and h < 24 and mi < 60 and s < 60):
        return None
    days = _days(y, mo, d)
    us = ((days * 24 + h) * 60 + mi) * 60_000_000 + s * 1_000_000
    if frac:
        us += int((frac + "00000")[:6])
    if zone and zone != "Z":
        zh, zm = int(zone[1:3]), int(zone[4:6])
        if zh > 23 or zm > 59:
            return None
        off = (zh * 60 + zm) * 60_000_000
        us -= off if zone[0] == "+" else -off
    return us


def _dim(y, m):
    if m == 2:
        return 29 if y % 4 == 0 and (y % 100 != 0 or y % 400 == 0) else 28
    return 30 if m in (4, 6, 9, 11) else 31


def _days(y, m, d):
    y -= m <= 2
    era = y // 400
    yoe = y - era * 400
    doy = (153 * (m + (-3 if m > 2 else 9)) + 2) // 5 + d - 1
    doe = yoe * 365 + yoe // 4 - yoe // 100 + doy
    return era * 146097 + doe - 719468


def to_us(x: int, unit: int):
    us = x * 1000 if unit == MS else x // 1000 if unit == NS else x
    return us if I64[0] <= us <= I64[1] else None


_AS_SENT = object()     # convert(): "the value's JSON text, cut from the document"


class Bad(Exception):
    """A value that cannot be converted; its reason is the text after the quoted value."""


def convert(col, enc: int, scale: int, v):
    """The Python value (as pyarrow takes it) of JSON value `v` for layout column `col`
    written with encoding `enc`; raises Bad."""
    kind = col.type.kind
    if kind in INT_RANGE:
        x = integer(v, *INT_RANGE[kind])
        if x is None:
            raise Bad
        return x
    if kind == BOOL:
        if v is True or v is False:
            return v
        if isinstance(v, Num) and v in ("0", "1"):
            return v == "1"
        raise Bad
    if kind in (FLOAT32, FLOAT64):
        if isinstance(v, str) and (isinstance(v, Num) or _NUMBER.fullmatch(v)):
            x = float(v)
            if x in (float("inf"), float("-inf")):
                raise Bad
        elif isinstance(v, str) and v in _FLOAT_WORDS:
            x = _FLOAT_WORDS[v]
        else:
            raise Bad
        if kind == FLOAT32:
            try:
                x = struct.unpack("<f", struct.pack("<f", x))[0]
            except OverflowError:
                raise Bad from None
        return x
    if kind == DECIMAL:
        p, s = col.type.precision, col.type.scale
        if (enc in (B64DEC, VSD) and isinstance(v, str) and not isinstance(v, Num)) \
                or isinstance(v, dict):
            got = unscaled_of(v, enc, scale)
            if got is None:
                raise Bad
            u = rescale(got[0], -got[1], s, p)
        elif isinstance(v, str):
            parts = number_parts(v)
            if parts is None:
                raise Bad
            u = rescale(parts[0], parts[1], s, p)
        else:
            raise Bad
        if u is None:
            raise Bad
        return decimal.Decimal(f"{u}E-{s}")
    if kind == DECTEXT:
        if isinstance(v, Num):
            return str(v)
        if isinstance(v, dict) or enc in (B64DEC, VSD):
            got = unscaled_of(v, enc, scale)
            t = scaled_text(*got) if got is not None else None
            if t is None:
                raise Bad
            return t
        if isinstance(v, str) and _NUMBER.fullmatch(v):
            return str(v)
        raise Bad
    if kind == STRING:
        if v is True or v is False:
            return "true" if v else "false"
        if isinstance(v, (dict, list)):
            return _AS_SENT                 # the caller cuts the text from the document
        try:
            v.encode("utf-8")
        except UnicodeEncodeError:
            raise Bad("has a lone surrogate in a \\u escape") from None
        return str(v)
    if kind == BINARY:
        raw = b64(v)
        if raw is None:
            raise Bad
        return raw
    if kind == DATE32:
        x = integer(v, *INT_RANGE[INT32])
        if x is None:
            raise Bad
        return x
    if kind == TIME64:
        x = integer(v, *I64)
        unit = enc if enc in (MS, US, NS) else col.unit
        us = to_us(x, unit) if x is not None else None
        if us is None or not 0 <= us < US_PER_DAY:
            raise Bad
        return us
    if kind in (TIMESTAMP, TIMESTAMP_TZ):
        if isinstance(v, str) and not isinstance(v, Num) and not _INT.fullmatch(v):
            us = iso_us(v, kind == TIMESTAMP_TZ)
        else:
            x = integer(v, *I64)
            unit = enc if enc in (MS, US, NS) else col.unit
            us = to_us(x, unit) if x is not None else None
        if us is None or not I64[0] <= us <= I64[1]:
            raise Bad
        return us
    raise Bad


def same(a, b, kind) -> bool:
    """Null-safe equality of two converted values (floats by their bits)."""
    if a is None or b is None:
        return a is None and b is None
    if kind == FLOAT64:
        return struct.pack("<d", a) == struct.pack("<d", b)
    if kind == FLOAT32:
        return struct.pack("<f", a) == struct.pack("<f", b)
    return a == b


# -- header fields --------------------------------------------------------------------------

def lsn_bytes(text: str):
    """Position bytes of an LSN text (`:`-separated hex groups), or None."""
    out = bytearray()
    for g in text.split(":"):
        if not g or any(c not in "0123456789abcdefABCDEF" for c in g):
            return None
        out += bytes.fromhex(g if len(g) % 2 == 0 else "0" + g)
    return bytes(out)


class Header:
    """Reads the header fields of one payload into a row, collecting problems."""

    def __init__(self, prefix: tuple, problems: list):
        self.prefix = prefix                # key path of the payload in the document
        self.problems = problems

    def name(self, path) -> str:
        return ".".join(self.prefix + tuple(path))

    def get(self, obj, path):
        """The value at a key path under obj (None when absent or not an object), noting a
        key given twice."""
        for i, key in enumerate(path):
            if not isinstance(obj, dict):
                return None
            if key in dups(obj):
                self.problems.append(Problem(self.name(path[:i + 1]), self.prefix + path[:i + 1],
                                             "given twice", nth=2, at_key=True))
                return None
            obj = obj.get(key)
        return obj

    def text(self, obj, path, raw_ok=True):
        v = self.get(obj, path)
        if v is None:
            return None
        if v is True or v is False:
            return "true" if v else "false"
        if isinstance(v, (dict, list)):
            return _RawText(self.prefix + path)
        try:
            v.encode("utf-8")
        except UnicodeEncodeError:
            self.fail(path, "has a lone surrogate in a \\u escape")
            return None
        return str(v)

    def int(self, obj, path):
        v = self.get(obj, path)
        if v is None:
            return None
        x = integer(v, *I64) if isinstance(v, str) else None
        if x is None:
            self.fail(path, "is not an integer")
        return x

    def ts(self, obj, path, unit):
        x = self.int(obj, path)
        if x is None:
            return None
        us = to_us(x, unit)
        if us is None:
            self.fail(path, "is out of the timestamp range")
        return us

    def fail(self, path, reason):
        self.problems.append(Problem(self.name(path), self.prefix + tuple(path),
                                     lambda raw, r=reason: f"{show_value(raw)} {r}"))


class _RawText:
    """A header text field whose value is an object or array: its JSON text as sent, cut
    from the document once the row is done."""
    __slots__ = ("path",)

    def __init__(self, path):
        self.path = path


# -- outputs ------------------------------------------------------------------------------

HEAD_NAMES = [n for n, _ in envelope.HEAD]


class Output:
    """The rows of one output key, waiting to be flushed as a batch."""

    def __init__(self, key, layout, images, want):
        self.key = key
        self.columns = layout.columns if (layout is not None and images) else []
        self.images = images
        self.want = want
        self.rows, self.errors, self.messages = [], [], []

    def add(self, row, error, message):
        self.rows.append(row)
        self.errors.append(error)
        self.messages.append(message)

    def schema(self) -> pa.Schema:
        if not self.images:
            return envelope.headers_schema(SOURCE)
        return envelope.schema([(c.name, c.type.arrow_type) for c in self.columns], SOURCE)

    def flush(self, mode, stats) -> pa.RecordBatch:
        batch = pa.RecordBatch.from_pylist(self.rows, schema=self.schema())
        batch = with_messages(batch, self.want, self.messages)
        first = next((e for e in self.errors if e is not None), None)
        self.rows, self.errors, self.messages = [], [], []
        return apply_mode(batch, mode, stats, first)


# -- the decoder ----------------------------------------------------------------------------

class Call:
    """What lasts across the parts of one call: the record ordinal and the table layouts."""

    def __init__(self):
        self.seq = 0
        self.layouts = {}       # table identity -> Layout
        self.no_layout = set()  # tables whose first change event had no schema (no catalog)


class Event:
    """One document read as a change event (before routing)."""
    __slots__ = ("doc", "payload", "prefix", "schema", "kind", "name")

    def __init__(self, doc, payload, prefix, schema, kind, name):
        self.doc, self.payload, self.prefix, self.schema = doc, payload, prefix, schema
        self.kind, self.name = kind, name   # kind: data, control, tombstone, corrupt


def classify(doc: Doc) -> Event:
    v = doc.value
    if doc.code:
        return Event(doc, None, (), None, "corrupt", None)
    if v is None:
        return Event(doc, None, (), None, "tombstone", None)
    if not isinstance(v, dict):
        return Event(doc, None, (), None, "corrupt", None)
    prefix, schema, payload = (), None, v
    if "payload" in v:
        if "payload" in dups(v):
            return Event(doc, None, (), None, "corrupt", None)
        payload, schema, prefix = v["payload"], v.get("schema"), ("payload",)
        if payload is None:
            return Event(doc, None, prefix, None, "tombstone", None)
        if not isinstance(payload, dict):
            return Event(doc, None, prefix, None, "corrupt", None)
    if "status" in payload or "tableChanges" in payload:
        kind = "control"
    elif payload.get("op") == "m" and "op" not in dups(payload):
        kind = "control"
    else:
        kind = "data"
    src = payload.get("source") if "source" not in dups(payload) else None
    name = None
    if isinstance(src, dict):
        sch, tab = src.get("schema"), src.get("table")
        sch = None if "schema" in dups(src) else sch
        tab = None if "table" in dups(src) else tab
        sch = sch if isinstance(sch, str) and sch and not isinstance(sch, Num) else None
        tab = tab if isinstance(tab, str) and tab and not isinstance(tab, Num) else None
        if tab is not None:
            name = full_name(sch, tab)
    if kind == "data" and name is None:
        kind = "corrupt"
    return Event(doc, payload, prefix, schema, kind, name)


class PartDecoder:
    """Decode one Part: documents, routing, header and image conversion, batching."""

    def __init__(self, fmt, part, want, images, batch_rows, mode, stats, call):
        self.fmt, self.part, self.want, self.images = fmt, part, want, images
        self.batch_rows, self.mode, self.stats, self.call = batch_rows, mode, stats, call
        self.outputs = {}

    def message_index(self, i) -> int:
        return 0 if self.want.messages else self.part.base + i

    # -- layouts ------------------------------------------------------------------------------
    def identity(self, name):
        t = self.fmt.catalog.get(name) if self.fmt.catalog is not None and name else None
        return (t.name if t is not None else name), t

    def learn(self, events):
        """Fix the layout of every table met in this part that has none yet: the catalog's,
        else the embedded schema of its first change event in the call (docs/debezium.md)."""
        layouts, none = self.call.layouts, self.call.no_layout
        for ev in events:
            if ev.kind != "data":
                continue
            ident, t = self.identity(ev.name)
            if ident in layouts or ident in none:
                continue
            if t is not None:
                layouts[ident] = self.fmt.catalog_layout(t)
                continue
            fields = image_fields(ev.schema)
            if fields is not None:
                layouts[ident] = self.fmt.schema_layout(ident, fields)
            else:
                none.add(ident)

    def layout_for(self, key):
        if key is None or key == HEADERS:
            return None
        lay = self.call.layouts.get(key)
        if lay is None and self.fmt.catalog is not None:
            t = self.fmt.catalog.get(key)
            if t is not None:
                lay = self.call.layouts[t.name] = self.fmt.catalog_layout(t)
        return lay

    def output(self, key) -> Output:
        o = self.outputs.get(key)
        if o is None:
            lay = self.layout_for(key) if self.images else None
            o = self.outputs[key] = Output(key, lay, self.images, self.want)
        return o

    # -- the loop -------------------------------------------------------------------------------
    def run(self):
        part, stats, want = self.part, self.stats, self.want
        msgs = []
        for i in range(part.count):
            if part.valid is not None and not part.valid[i]:
                stats["tombstones"] += 1
                continue
            data = part.message(i)
            evs = [classify(d) for d in documents(data)]
            if not evs:
                stats["tombstones"] += 1        # an empty message
            msgs.append((i, data, evs))
        self.learn(ev for _, _, evs in msgs for ev in evs)
        for i, data, evs in msgs:
            if want.messages:
                self.call.seq = 0           # each message an input (Spark, SPEC §6)
            for ev in evs:
                if ev.kind == "tombstone":
                    stats["tombstones"] += 1
                    continue
                seq = self.call.seq
                self.call.seq += 1
                stats["records"] += 1
                routed = self.route(ev, data, seq)
                if routed is None:
                    continue
                key, row, problems = routed
                err = None
                if problems:
                    pos, field, reason = problems
                    err = DecodeError(reason, self.message_index(i), pos, field)
                row["_error"] = str(err) if err is not None else None
                if err is not None and self.mode == "FAILFAST":
                    raise err
                o = self.output(key)
                o.add(row, err, part.base + i)
                if len(o.rows) >= self.batch_rows:
                    yield key, o.flush(self.mode, stats)
        for o in self.outputs.values():
            if o.rows:
                yield o.key, o.flush(self.mode, stats)

    def empty_row(self, seq) -> dict:
        row = dict.fromkeys(HEAD_NAMES)
        row["seq"] = seq
        row.update(before=None, after=None, changed=None, present=None, source=None,
                   _corrupt_record=None)
        return row

    def route(self, ev: Event, data: bytes, seq: int):
        """(key, row, first problem or None) of one event, or None when not wanted."""
        want, stats = self.want, self.stats
        doc = ev.doc
        if ev.kind == "corrupt":
            key = want.corrupt_key
            if key is None and want.table is not ALL:
                return None
            row = self.empty_row(seq)
            row["_corrupt_record"] = data[doc.start:doc.end]
            return key, row, self.corrupt_problem(ev, data)
        key, table = want.resolve(ev.name or "")
        ident = self.identity(ev.name)[0] if ev.name else None
        if ev.kind == "control":
            stats["control"] += 1
            if self.images or key is None:
                return None
        else:
            if table is None and ident not in self.call.layouts:
                stats["unknown_tables"] += 1
                if self.images and key is not None:
                    raise ValueError(
                        f"table {ev.name!r} is neither in the catalog nor described by an "
                        "embedded schema: give a catalog, or write the messages with "
                        "schemas.enable=true")
            if key is None:
                return None
        problems = []
        row = self.empty_row(seq)
        self.header(ev, row, problems)
        if self.images and ev.kind == "data":
            self.read_images(ev, row, problems)
        self.cut_raw_texts(row, data, doc)
        return key, row, resolve(problems, data, doc) if problems else None

    def corrupt_problem(self, ev, data):
        doc = ev.doc
        if doc.code:
            return doc.err_pos, None, f"invalid JSON: {scan_reason(doc.code, data, doc.err_pos)}"
        v = doc.value
        if not isinstance(v, dict):
            return doc.start, None, "invalid JSON: the document is not an object"
        if ev.payload is None:
            if "payload" in dups(v):
                return resolve([Problem("payload", ("payload",), "given twice", 2, True)],
                               data, doc)
            return resolve([Problem("payload", ("payload",), "is not an object")],
                           data, doc)
        name = ".".join(ev.prefix + ("source", "table"))
        return doc.start, name, "missing"

    def header(self, ev: Event, row: dict, problems: list):
        p = ev.payload
        h = Header(ev.prefix, problems)
        src = h.get(p, ("source",))
        if src is not None and not isinstance(src, dict):
            h.fail(("source",), "is not an object")
            src = None
        src = src or {}
        # schema / table as sent (an empty text reads as null)
        row["schema"] = h.text(p, ("source", "schema")) or None
        row["table"] = h.text(p, ("source", "table")) or None
        if self.fmt.catalog is not None and ev.name:
            t = self.fmt.catalog.get(ev.name)
            if t is not None:
                row["schema"], row["table"] = t.schema, t.table
        source = dict.fromkeys(SOURCE.names)
        for f in ("version", "connector", "name", "db"):
            source[f] = h.text(p, ("source", f))
        source["snapshot"] = h.text(p, ("source", "snapshot"))
        source["change_lsn"] = h.text(p, ("source", "change_lsn"))
        source["commit_lsn"] = h.text(p, ("source", "commit_lsn"))
        ts_us = h.get(p, ("ts_us",))
        source["processed_ts"] = h.ts(p, ("ts_us",), US) if ts_us is not None \
            else h.ts(p, ("ts_ms",), MS)
        if "status" in p:
            status = h.text(p, ("status",))
            row["source_op"] = status
            row["op"] = {"BEGIN": "begin", "END": "commit"}.get(status)
            if row["op"] is None:
                h.fail(("status",), "is not BEGIN or END")
            row["txid"] = h.text(p, ("id",))
            row["commit_ts"] = row["change_ts"] = h.ts(p, ("ts_ms",), MS)
            source["event_count"] = h.int(p, ("event_count",))
            source["data_collections"] = h.text(p, ("data_collections",))
            source["processed_ts"] = None
            row["source"] = source
            return
        if "tableChanges" in p:
            row["op"] = "ddl"
            tc = h.get(p, ("tableChanges",))
            first = tc[0] if isinstance(tc, list) and tc and isinstance(tc[0], dict) else {}
            kind = first.get("type") if "type" not in dups(first) else None
            ok = isinstance(kind, str) and not isinstance(kind, Num)
            try:
                ok = ok and bool(kind.encode("utf-8")) is not None
            except UnicodeEncodeError:
                ok = False
            row["source_op"] = kind if ok else None
        else:
            op = h.text(p, ("op",))
            row["source_op"] = op
            row["op"] = "message" if op == "m" else op if op in DATA_OPS else None
            if row["op"] is None:
                if op is None and h.get(p, ("op",)) is None and "op" not in dups(p):
                    problems.append(Problem(h.name(("op",)), (), "missing"))
                elif "op" not in dups(p):
                    h.fail(("op",), "is not one of c, u, d, r, t, m")
        tx = h.get(p, ("transaction",))
        if tx is not None and not isinstance(tx, dict):
            h.fail(("transaction",), "is not an object")
            tx = None
        row["txid"] = h.text(p, ("transaction", "id")) if tx else None
        total = h.int(p, ("transaction", "total_order")) if tx else None
        if total is not None:
            row["seq"] = total
        source["data_collection_order"] = h.int(p, ("transaction", "data_collection_order")) \
            if tx else None
        us = h.get(p, ("source", "ts_us"))
        row["commit_ts"] = row["change_ts"] = h.ts(p, ("source", "ts_us"), US) \
            if us is not None else h.ts(p, ("source", "ts_ms"), MS)
        for f, col in (("commit_lsn", "commit_pos"), ("change_lsn", "change_pos")):
            text = source[f]
            if isinstance(text, _RawText):      # an object or array is no LSN
                h.fail(("source", f), "is not an LSN (hex groups separated by ':')")
            elif isinstance(text, str):
                pos = lsn_bytes(text)
                if pos is None:
                    h.fail(("source", f), "is not an LSN (hex groups separated by ':')")
                row[col] = pos
        row["source"] = source

    def read_images(self, ev: Event, row: dict, problems: list):
        op = row["op"]
        lay = self.call.layouts[self.identity(ev.name)[0]]
        over = {}
        fields = image_fields(ev.schema)
        if fields is not None:
            over = self.fmt.overrides(fields)
        imgs = {}
        for img in ("before", "after"):
            path = ev.prefix + (img,)
            if img in dups(ev.payload):
                problems.append(Problem(".".join(path), path, "given twice", 2, True))
                imgs[img] = None
                continue
            v = ev.payload.get(img)
            if v is None:
                imgs[img] = None
                continue
            if not isinstance(v, dict):
                problems.append(Problem(".".join(path), path,
                                        lambda raw: f"{show_value(raw)} is not an object"))
                imgs[img] = None
                continue
            imgs[img] = self.image(img, v, path, lay, over, problems)
        before, after = imgs["before"], imgs["after"]
        row["before"] = before[0] if before else None
        row["after"] = after[0] if after else None
        cols = lay.columns
        shown = before if op == "d" else after
        if op in DATA_OPS and op != "t" and shown is not None:
            row["present"] = {c.name: c.name in shown[1] for c in cols}
        if op in ("c", "r"):
            row["changed"] = {c.name: True for c in cols}
        elif op == "d":
            row["changed"] = {c.name: False for c in cols}
        elif op == "u" and before is not None and after is not None:
            row["changed"] = {c.name: not same(before[0][c.name], after[0][c.name], c.type.kind)
                              for c in cols}

    def image(self, img, obj, path, lay, over, problems):
        """(values by column, the set of columns sent) of one image object."""
        values = dict.fromkeys(lay.index)
        sent = set()
        bad = dups(obj)
        for k, v in obj.items():
            j = lay.index.get(k)
            if j is None:
                self.stats["extra_columns"] += 1
                continue
            col = lay.columns[j]
            sent.add(k)
            field = f"{img}.{k}"
            if k in bad:
                problems.append(Problem(field, path + (k,), "given twice", 2, True))
                continue
            if v is None:
                if not col.nullable:
                    problems.append(Problem(field, path + (k,), "null in NOT NULL column"))
                continue
            enc, scale = over.get(k, (col.enc, col.scale))
            try:
                x = convert(col, enc, scale, v)
            except Bad as e:
                why = e.args[0] if e.args else f"is not {col.type.name}"
                problems.append(Problem(field, path + (k,),
                                        lambda raw, w=why: f"{show_value(raw)} {w}"))
                continue
            values[k] = _RawText(path + (k,)) if x is _AS_SENT else x
        return values, sent

    def cut_raw_texts(self, row, data, doc):
        """Replace _RawText placeholders by the JSON text as sent."""
        targets = []
        for holder in (row, row.get("source"), row.get("before"), row.get("after")):
            if isinstance(holder, dict):
                targets += [(holder, k) for k, v in holder.items() if isinstance(v, _RawText)]
        if not targets:
            return
        walker = _Walker(data, doc.end)
        for holder, k in targets:
            a, b = walker.span(doc.start, holder[k].path)
            holder[k] = data[a:b].decode("utf-8")


def reference_batches(fmt, parts, want, images, batch_rows, mode, stats):
    """Yield ``(output key, RecordBatch)`` for every Part of the source."""
    call = Call()
    for part in parts:
        yield from PartDecoder(fmt, part, want, images, batch_rows, mode, stats, call).run()


__all__ = ["reference_batches", "documents", "convert", "Num"]
