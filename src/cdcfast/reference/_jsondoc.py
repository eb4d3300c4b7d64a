"""The JSON groundwork every reference decoder of a JSON format shares (debezium, olr, qlik).

The `json` module parses each document as cdcfast.formats._jsontext reads JSON (numbers kept as
their text, keys given twice noted; what the native runs read with too); byte positions, which
it does not give, are found only for records with an error, and the strict scanner of
`_jsonscan` names the first byte of a document that is not well-formed. Framing
(`documents`), the plain readers of numbers and times, and the placeholders of problems and raw
texts live here, and what every JSON twin builds and delivers its rows with (`Header`,
`Output`, `RoutedRows`, `empty_row`, `cut_raw_texts`); what a format reads from the documents
lives in its own module.
"""
from __future__ import annotations

import re

import pyarrow as pa

from .. import envelope
from ..catalog import INT8, INT16, INT32, INT64
from ..errors import DecodeError, show_value
from ..formats._json_codes import MAX_DEPTH
from ..formats._jsontext import DECODER, Doc, Num, Problem, Spans, dups, ws
from ..formats.base import apply_mode, same, with_messages  # noqa: F401 (same: for the JSON references)
from . import _jsonscan

INT_RANGE = {INT8: (-2 ** 7, 2 ** 7 - 1), INT16: (-2 ** 15, 2 ** 15 - 1),
             INT32: (-2 ** 31, 2 ** 31 - 1), INT64: (-2 ** 63, 2 ** 63 - 1)}
I64 = INT_RANGE[INT64]
US_PER_DAY = 86_400_000_000

_INT = re.compile(r"-?(?:0|[1-9][0-9]*)")
_NUMBER = re.compile(r"(-?)(0|[1-9][0-9]*)(?:\.([0-9]+))?(?:[eE]([+-]?[0-9]+))?")
_ISO = re.compile(r"([0-9]{4})-([0-9]{2})-([0-9]{2})T([0-9]{2}):([0-9]{2}):([0-9]{2})"
                  r"(?:\.([0-9]+))?(Z|[+-][0-9]{2}:[0-9]{2})?")
_FLOAT_WORDS = {"NaN": float("nan"), "Infinity": float("inf"), "-Infinity": float("-inf")}


# -- documents ----------------------------------------------------------------------------

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
        pos = ws(data, a, b)
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
            pos = ws(data, doc.end, b)


def _parse_one(data, text, a, pos, b, deep) -> Doc:
    if text is not None and not deep:
        ci = pos - a if len(text) == b - a else len(data[a:pos].decode("utf-8"))
        try:
            value, ce = DECODER.raw_decode(text, ci)
        except (ValueError, RecursionError):
            pass
        else:
            # a top-level number or literal must end where the grammar does (`1a`, `truex`
            # are one bad document, as the strict scanner reads them, not two)
            run_on = (value is None or isinstance(value, (Num, bool))) and ce < len(text) \
                and text[ce] not in " \t\n\r"
            if not run_on:
                end = pos + (ce - ci if len(text) == b - a
                             else len(text[ci:ce].encode("utf-8", "surrogatepass")))
                return Doc(pos, end, value)
    stop = len(data[:b].rstrip(b" \t\n\r"))     # a truncation is reported at the content's end
    doc_end, code, err_pos = _jsonscan.document(data, pos, stop)
    if code:
        return Doc(pos, stop, None, code, err_pos)
    return Doc(pos, doc_end, DECODER.decode(data[pos:doc_end].decode("utf-8")))


def number_parts(text: str):
    """(digits as int, exponent) of a JSON number's text: value = D × 10^e, D without trailing
    zeros; or None. A number of more than 1000 significant digits or an exponent of more than
    15 digits is None too: no column holds it, and Python refuses such texts as ints."""
    m = _NUMBER.fullmatch(text)
    if not m:
        return None
    sign, ip, fp, ex = m.groups()
    fp = fp or ""
    digits = (ip + fp).lstrip("0")
    if not digits:
        return 0, 0
    stripped = digits.rstrip("0")
    if len(stripped) > 1000 or (ex and len(ex.lstrip("+-").lstrip("0")) > 15):
        return None
    d = int(stripped)
    e = (int(ex) if ex else 0) - len(fp) + len(digits) - len(stripped)
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


def integer(v, lo, hi):
    """The integer a JSON integer (or a string holding one) stands for, when lo..hi holds it;
    else None (also for texts too long to be in any such range, which Python refuses)."""
    if isinstance(v, str) and len(v) <= 40 and _INT.fullmatch(v):
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


class Bad(Exception):
    """A value that cannot be converted; its reason is the text after the quoted value."""


class _RawText:
    """A header text field whose value is an object or array: its JSON text as sent, cut
    from the document once the row is done."""
    __slots__ = ("path",)

    def __init__(self, path):
        self.path = path


# -- rows -----------------------------------------------------------------------------------

class Header:
    """Reads the header fields of one JSON object into a row, collecting problems: `prefix` is
    the object's key path in the document, `label` what error texts name its fields by (the
    same path unless given: an OLR payload element is `payload.op`, not `payload.0.op`)."""

    def __init__(self, prefix: tuple, problems: list, label: tuple | None = None):
        self.prefix = prefix
        self.label = prefix if label is None else label
        self.problems = problems

    def name(self, path) -> str:
        return ".".join(self.label + tuple(path))

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

    def text(self, obj, path):
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

    def fail(self, path, reason):
        self.problems.append(Problem(self.name(path), self.prefix + tuple(path),
                                     lambda raw, r=reason: f"{show_value(raw)} {r}"))


HEAD_NAMES = [n for n, _ in envelope.HEAD]


def empty_row(seq: int) -> dict:
    """A row of the envelope with every field null but `seq`."""
    row = dict.fromkeys(HEAD_NAMES)
    row["seq"] = seq
    row.update(before=None, after=None, changed=None, present=None, source=None,
               _corrupt_record=None)
    return row


def cut_raw_texts(row: dict, data: bytes, doc: Doc) -> None:
    """Replace the row's _RawText placeholders by the JSON text as sent."""
    targets = []
    for holder in (row, row.get("source"), row.get("before"), row.get("after")):
        if isinstance(holder, dict):
            targets += [(holder, k) for k, v in holder.items() if isinstance(v, _RawText)]
    if not targets:
        return
    spans = Spans(data, doc.end)
    for holder, k in targets:
        a, b = spans.span(doc.start, holder[k].path)
        holder[k] = data[a:b].decode("utf-8")


class Output:
    """The rows of one output key, waiting to be flushed as a batch."""

    def __init__(self, key, layout, images, want, source_type):
        self.key = key
        self.columns = layout.columns if (layout is not None and images) else []
        self.images = images
        self.want = want
        self.source_type = source_type
        self.rows, self.errors, self.messages = [], [], []

    def add(self, row, error, message):
        self.rows.append(row)
        self.errors.append(error)
        self.messages.append(message)

    def schema(self) -> pa.Schema:
        if not self.images:
            return envelope.headers_schema(self.source_type)
        return envelope.schema([(c.name, c.type.arrow_type) for c in self.columns],
                               self.source_type)

    def flush(self, mode, stats) -> pa.RecordBatch:
        batch = pa.RecordBatch.from_pylist(self.rows, schema=self.schema())
        batch = with_messages(batch, self.want, self.messages)
        first = next((e for e in self.errors if e is not None), None)
        self.rows, self.errors, self.messages = [], [], []
        return apply_mode(batch, mode, stats, first)


class RoutedRows:
    """What the reference part decoders share once a record is routed: its error becomes a
    DecodeError (FAILFAST raises it) and `_error` text, the row joins its output, a full
    output becomes a batch. A subclass has `part`, `want`, `batch_rows`, `mode`, `stats`,
    `outputs` (key -> Output) and `output(key)`."""

    def message_index(self, i) -> int:
        return 0 if self.want.messages else self.part.base + i

    def deliver(self, i: int, key, row: dict, problem):
        """Put the row of message i into output `key`; (key, batch) when that output is
        full, else None. `problem`: (byte, field, reason) or None."""
        err = None
        if problem:
            pos, field, reason = problem
            err = DecodeError(reason, self.message_index(i), pos, field)
        row["_error"] = str(err) if err is not None else None
        if err is not None and self.mode == "FAILFAST":
            raise err
        o = self.output(key)
        o.add(row, err, self.part.base + i)
        if len(o.rows) >= self.batch_rows:
            return key, o.flush(self.mode, self.stats)
        return None

    def rest(self):
        """(key, batch) of every output's remaining rows."""
        for o in self.outputs.values():
            if o.rows:
                yield o.key, o.flush(self.mode, self.stats)
