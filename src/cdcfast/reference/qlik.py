"""The reference decoder of `qlik` (SPEC §5.5, docs/qlik.md), in plain Python.

This is the slow per-record parser the native kernel replaces, and the oracle it is tested
against: the `json` module parses each document (numbers kept as their text, so decimals stay
exact; cdcfast.formats._jsontext), plain Python reads the headers, the masks (`int(text, 16)`) and
converts the values. Byte positions are found only for records with an error.

Metadata messages are read in input order as they come: they are no records, but they name the
table of later data messages (`schemaId`) and type the tables the catalog lacks. A table's
layout is fixed at its first data message; a derived one (no catalog, no metadata) grows as
new keys are met, and a batch has the columns known when it is flushed.
"""
from __future__ import annotations

import decimal
import re
import struct

from ..catalog import (BINARY, BOOL, DATE32, DECIMAL, DECTEXT, FLOAT32, FLOAT64, STRING,
                       TIME64, TIMESTAMP, TIMESTAMP_TZ)
from ..errors import DecodeError
from ..formats._jsonmessages import utf8_text as encodable
from ..formats._jsontext import Num, Problem, dups, resolve, scan_reason
from ..formats.base import ALL, full_name
from ..formats.qlik import (LACKS_METADATA, OPERATIONS, OPS, SOURCE, TIMESTAMP_FORM,
                            QlikBadMetadata, qlik_metadata, shown, table_layout)
from ._jsondoc import (_FLOAT_WORDS, _NUMBER, US_PER_DAY, I64, INT_RANGE, Bad, Header, Output,
                       _days, _dim, _RawText, documents, empty_row, integer, number_parts,
                       rescale, same)

_HEX = re.compile(r"[0-9A-Fa-f]*")
_DATE = re.compile(r"([0-9]{4})-([0-9]{2})-([0-9]{2})")
_TIME = re.compile(r"([0-9]{2}):([0-9]{2}):([0-9]{2})(?:\.([0-9]+))?")
_STAMP = re.compile(r"([0-9]{4})-([0-9]{2})-([0-9]{2})[T ]([0-9]{2}):([0-9]{2}):([0-9]{2})"
                    r"(?:\.([0-9]+))?")
NOT_HEX = object()      # a mask whose text is not hex: its struct is null

NAMELESS = ("", None, None)     # a data message that names no table, in headers()


# -- values -------------------------------------------------------------------------------

def _fraction_us(frac) -> int:
    """Microseconds of a fraction's digits, those past the sixth dropped (floor)."""
    return int((frac + "00000")[:6]) if frac else 0


def date_days(text: str):
    """Days since 1970-01-01 of `YYYY-MM-DD`, or None."""
    m = _DATE.fullmatch(text)
    if not m:
        return None
    y, mo, d = (int(g) for g in m.groups())
    if not (1 <= mo <= 12 and 1 <= d <= _dim(y, mo)):
        return None
    return _days(y, mo, d)


def time_us(text: str):
    """Microseconds since midnight of `HH:MM:SS[.f…]`, or None."""
    m = _TIME.fullmatch(text)
    if not m:
        return None
    h, mi, s = (int(g) for g in m.groups()[:3])
    if not (h < 24 and mi < 60 and s < 60):
        return None
    return (h * 3600 + mi * 60 + s) * 1_000_000 + _fraction_us(m.group(4))


def stamp_us(text: str):
    """Microseconds since the epoch of `YYYY-MM-DD[T| ]HH:MM:SS[.f…]` (no zone), or None."""
    m = _STAMP.fullmatch(text)
    if not m:
        return None
    day = date_days(text[:10])
    clock = time_us(text[11:])
    if day is None or clock is None:
        return None
    us = day * US_PER_DAY + clock
    return us if I64[0] <= us <= I64[1] else None


def mask_bits(text: str):
    """The integer of a mask's hex text (most significant digit first), or NOT_HEX."""
    return int(text, 16) if _HEX.fullmatch(text) else NOT_HEX


def convert(col, v):
    """The Python value (as pyarrow takes it) of JSON value `v` (never null) for layout column
    `col`; raises Bad."""
    kind = col.type.kind
    if isinstance(v, (dict, list)):
        raise Bad
    if kind == STRING:
        if v is True or v is False:
            return "true" if v else "false"
        try:
            v.encode("utf-8")
        except UnicodeEncodeError:
            raise Bad("has a lone surrogate in a \\u escape") from None
        return str(v)
    if kind == BOOL:
        if v is True or v is False:
            return v
        word = v.lower()
        if word in ("true", "1"):
            return True
        if word in ("false", "0"):
            return False
        raise Bad
    if v is True or v is False:
        raise Bad
    # from here on, v is a JSON string or a JSON number's text (Num)
    if kind in INT_RANGE:
        x = integer(v, *INT_RANGE[kind])
        if x is None:
            raise Bad
        return x
    if kind == DECIMAL:
        parts = number_parts(v)
        p, s = col.type.precision, col.type.scale
        u = rescale(parts[0], parts[1], s, p) if parts is not None else None
        if u is None:
            raise Bad
        return decimal.Decimal(f"{u}E-{s}")
    if kind == DECTEXT:
        if not _NUMBER.fullmatch(v):
            raise Bad
        return str(v)
    if kind in (FLOAT32, FLOAT64):
        if _NUMBER.fullmatch(v):
            x = float(v)
            if x in (float("inf"), float("-inf")):
                raise Bad
        elif v in _FLOAT_WORDS and not isinstance(v, Num):
            x = _FLOAT_WORDS[v]
        else:
            raise Bad
        if kind == FLOAT32:
            try:
                x = struct.unpack("<f", struct.pack("<f", x))[0]
            except OverflowError:
                raise Bad from None
        return x
    if kind == BINARY:
        if isinstance(v, Num) or len(v) % 2 or not _HEX.fullmatch(v):
            raise Bad
        return bytes.fromhex(v)
    if kind == DATE32:
        x = date_days(v)
    elif kind == TIME64:
        x = time_us(v)
    elif kind in (TIMESTAMP, TIMESTAMP_TZ):
        x = stamp_us(v)
    else:
        x = None
    if x is None:
        raise Bad
    return x


# -- header fields --------------------------------------------------------------------------

class QlikHeader(Header):
    """Header fields as Qlik writes them: "" is null (REFRESH messages send it for the fields
    "applicable to CDC operations only"), an object or array is no text, and a bad value is
    quoted as `shown` quotes it."""

    def get(self, obj, path):
        v = super().get(obj, path)
        return None if v == "" else v

    def text(self, obj, path):
        t = super().text(obj, path)
        if isinstance(t, _RawText):
            self.fail(path, "is not a string")
            return None
        return t

    def boolean(self, obj, path):
        v = self.get(obj, path)
        if v is None or v is True or v is False:
            return v
        if isinstance(v, str) and not isinstance(v, Num) and v.lower() in ("true", "false"):
            return v.lower() == "true"
        self.fail(path, "is not a boolean")
        return None

    def mask(self, obj, path):
        """(text, bits) of a mask field: bits an int, None when absent, or NOT_HEX."""
        text = self.text(obj, path)
        if text is None:
            return None, None
        bits = mask_bits(text)
        if bits is NOT_HEX:
            self.fail(path, "is not hex")
        return text, bits

    def fail(self, path, reason):
        self.problems.append(Problem(self.name(path), self.prefix + tuple(path),
                                     lambda raw, r=reason: f"{shown(raw)} {r}"))


# -- outputs ------------------------------------------------------------------------------

def flags(row: dict, op: str, before, after, change, column, cols) -> None:
    """Set the row's images, `changed` and `present` over the layout's columns as they are
    now (a derived column met later is null in all four: nothing is known of it here).
    before/after: (values, keys sent) or None; change/column: mask bits, None or NOT_HEX."""
    row["before"] = before[0] if before else None
    row["after"] = after[0] if after else None
    image = before if op == "d" else after
    if column is None:
        if image is not None:
            row["present"] = {c.name: c.name in image[1] for c in cols}
    elif column is not NOT_HEX:
        row["present"] = {c.name: bool(column >> i & 1) for i, c in enumerate(cols)}
    if change is None:
        row["changed"] = computed_changed(op, before, after, cols)
    elif change is not NOT_HEX:
        row["changed"] = {c.name: None if c.lob else bool(change >> i & 1)
                          for i, c in enumerate(cols)}


def computed_changed(op: str, before, after, cols):
    """`changed` without a changeMask (SPEC §3): null for an UPDATE without a before image."""
    if op in ("c", "r"):
        return {c.name: True for c in cols}
    if op == "d":
        return {c.name: False for c in cols}
    if before is None or after is None:
        return None
    b, a = before[0], after[0]
    return {c.name: not same(b.get(c.name), a.get(c.name), c.type.kind) for c in cols}


class QlikOutput(Output):
    """An output whose columns are its table's layout's when the batch is flushed (a derived
    layout may have grown; its first record may have come before the layout was fixed)."""

    def __init__(self, key, images, want, layout_of):
        super().__init__(key, None, images, want, SOURCE)
        self.layout_of = layout_of

    def flush(self, mode, stats):
        lay = self.layout_of(self.key) if self.images else None
        self.columns = lay.columns if lay is not None else []
        return super().flush(mode, stats)


# -- the decoder ----------------------------------------------------------------------------

class Call:
    """What lasts across the parts of one call: the record ordinal, the table layouts and what
    the metadata messages met so far said."""

    def __init__(self):
        self.seq = 0
        self.layouts = {}       # output key -> Layout, fixed at the table's first data message
        self.schema_ids = {}    # schemaId -> (schema, table) of its metadata message
        self.described = {}     # table name, upper case -> Table of its latest metadata message


class Event:
    """One document: its kind (data, metadata, tombstone, corrupt), the object holding the
    message (the Kafka envelope's `message`, else the document) and that object's key path."""
    __slots__ = ("doc", "body", "prefix", "kind")

    def __init__(self, doc, body, prefix, kind):
        self.doc, self.body, self.prefix, self.kind = doc, body, prefix, kind


def classify(doc) -> Event:
    v = doc.value
    if doc.code or (v is not None and not isinstance(v, dict)):
        return Event(doc, None, (), "corrupt")
    if v is None:
        return Event(doc, None, (), "tombstone")
    body, prefix = v, ()
    if "message" in v:
        if "message" in dups(v) or not isinstance(v["message"], dict):
            return Event(doc, None, ("message",), "corrupt")
        body, prefix = v["message"], ("message",)
    md = (v.get("type") == "MD" and "type" not in dups(v)) or "tableStructure" in body
    return Event(doc, body, prefix, "metadata" if md else "data")


class PartDecoder:
    """Decode one Part: documents, metadata, routing, headers, images, batching."""

    def __init__(self, fmt, part, want, images, batch_rows, mode, stats, call):
        self.fmt, self.part, self.want, self.images = fmt, part, want, images
        self.batch_rows, self.mode, self.stats, self.call = batch_rows, mode, stats, call
        self.outputs = {}

    def run(self):
        part, stats, want, call = self.part, self.stats, self.want, self.call
        for i in range(part.count):
            if part.valid is not None and not part.valid[i]:
                stats["tombstones"] += 1
                continue
            data = part.message(i)
            if want.messages:
                call.seq = 0            # each message an input (Spark, SPEC §6)
            seen = False
            for doc in documents(data):
                seen = True
                ev = classify(doc)
                if ev.kind == "tombstone":
                    stats["tombstones"] += 1
                    continue
                problem = None
                if ev.kind == "metadata":
                    problem = self.metadata(ev, data)
                    if problem is None:
                        stats["control"] += 1
                        continue
                seq = call.seq
                call.seq += 1
                stats["records"] += 1
                routed = self.route(ev, data, seq, problem)
                if routed is None:
                    continue
                key, row, found = routed
                err = None
                if found is not None:
                    pos, field, reason = found
                    err = DecodeError(reason, 0 if want.messages else part.base + i, pos,
                                      field)
                row["_error"] = str(err) if err is not None else None
                if err is not None and self.mode == "FAILFAST":
                    raise err
                o = self.output(key)
                o.add(row, err, part.base + i)
                if len(o.rows) >= self.batch_rows:
                    yield key, o.flush(self.mode, stats)
            if not seen:
                stats["tombstones"] += 1        # an empty message
        for o in self.outputs.values():
            if o.rows:
                yield o.key, o.flush(self.mode, stats)

    # -- metadata messages and layouts --------------------------------------------------------
    def metadata(self, ev, data):
        """Remember what a metadata message says; (byte, field, reason) when it cannot be
        read (it is then a corrupt record), else None."""
        try:
            meta = qlik_metadata(ev.body)
        except QlikBadMetadata as e:
            path = ev.prefix + e.path
            reason = "missing" if e.value is None else \
                (lambda raw, r=e.reason: f"{shown(raw)} {r}")
            return resolve([Problem(".".join(path), path, reason)], data, ev.doc)
        if meta.schema_id is not None:
            self.call.schema_ids[meta.schema_id] = (meta.schema, meta.table)
        if meta.definition is not None:
            self.call.described[full_name(meta.schema, meta.table).upper()] = meta.definition
        return None

    def layout(self, key, table):
        """The layout of an output's table, fixed here at its first data message."""
        lay = self.call.layouts.get(key)
        if lay is None:
            described = self.call.described.get(key.upper())
            lay = self.fmt.catalog_layout(table) if table is not None else \
                table_layout(key, described) if described is not None else \
                self.fmt.derived_layout(key)
            self.call.layouts[key] = lay
        return lay

    def layout_of(self, key):
        """An output's layout when its batch is flushed (a requested catalog table's, also
        before any of its data messages)."""
        lay = self.call.layouts.get(key)
        if lay is None and key is not None and self.fmt.catalog is not None:
            t = self.fmt.catalog.get(key)
            if t is not None:
                lay = self.fmt.catalog_layout(t)
        return lay

    def output(self, key) -> QlikOutput:
        o = self.outputs.get(key)
        if o is None:
            o = self.outputs[key] = QlikOutput(key, self.images, self.want, self.layout_of)
        return o

    # -- records ------------------------------------------------------------------------------
    def route(self, ev, data, seq, problem):
        """(key, row, first problem or None) of one record, or None when it is not wanted."""
        want, stats = self.want, self.stats
        doc = ev.doc
        problems = []
        top = QlikHeader((), problems)
        body = QlikHeader(ev.prefix, problems)
        named = None
        if ev.kind == "data":
            named, problem = self.table_of(ev, top, body, data)
        if named is None:
            key = want.corrupt_key
            if key is None and want.table is not ALL:
                return None
            row = empty_row(seq)
            row["_corrupt_record"] = data[doc.start:doc.end]
            return key, row, problem or self.corrupt_problem(ev, data)
        if named is NAMELESS:           # headers(): its header fields, no schema/table
            row = empty_row(seq)
            self.header(ev, row, top, body, problems)
            return want.corrupt_key, row, resolve(problems, data, doc) if problems else None
        name, schema, tname = named
        key, table = want.resolve(name)
        described = self.call.described.get(name.upper())
        if table is None and described is None:
            stats["unknown_tables"] += 1
        if key is None:
            return None
        row = empty_row(seq)
        owner = table if table is not None else described
        row["schema"], row["table"] = (owner.schema, owner.table) if owner is not None \
            else (schema, tname)
        lay = self.layout(key, table) if self.images else None
        masks = self.header(ev, row, top, body, problems)
        if lay is not None and row["op"] is not None:
            self.read_images(ev, row, problems, masks, lay)
        return key, row, resolve(problems, data, doc) if problems else None

    def table_of(self, ev, top, body, data):
        """((name, schema, table), None) of a data message's table, or (None, the problem
        of a message that names none), or (NAMELESS, None) in headers() without a table: its
        own `schema`/`table`, else (Kafka) the table of its messageSchemaId — by the metadata
        message met earlier in the call, else by the catalog's schema ids — else, only when
        messageSchemaId is null, the call's `table` argument (docs/qlik.md)."""
        schema = body.text(ev.body, ("schema",))
        tname = body.text(ev.body, ("table",))
        if tname is not None:
            return (full_name(schema, tname), schema, tname), None
        doc = ev.doc.value
        set_id = bool(ev.prefix) and ("messageSchemaId" in dups(doc) or doc.get(
            "messageSchemaId") not in (None, ""))
        sid = top.text(doc, ("messageSchemaId",)) if ev.prefix else None
        if set_id:      # it names a table: found, or unattributable (never the argument)
            if sid is not None and sid in self.call.schema_ids:
                schema, tname = self.call.schema_ids[sid]
                return (full_name(schema, tname), schema, tname), None
            t = self.fmt.catalog.qlik_table(sid) if sid is not None and \
                self.fmt.catalog is not None else None
            if t is not None:
                return (t.name, t.schema, t.table), None
            p = Problem("messageSchemaId", ("messageSchemaId",), lambda raw: f"{shown(raw)} "
                        + LACKS_METADATA) if sid is not None else None
            return None, resolve(top.problems + [p] if p else top.problems, data, ev.doc)
        arg = self.want.requested if self.want.table is not ALL else None
        if arg is not None:
            schema, _, tname = arg.rpartition(".")
            return (arg, schema or None, tname), None
        if self.want.table is None and self.want.headers:
            return NAMELESS, None       # headers() lists it, with no schema/table
        if not ev.prefix:
            p = Problem("table", ("table",), "missing; pass table=…")
        else:
            p = Problem("messageSchemaId", ("messageSchemaId",),
                        "null, and the message names no table; pass table=…")
        return None, resolve(top.problems + [p], data, ev.doc)

    def corrupt_problem(self, ev, data):
        doc = ev.doc
        if doc.code:
            return doc.err_pos, None, f"invalid JSON: {scan_reason(doc.code, data, doc.err_pos)}"
        if not isinstance(doc.value, dict):
            return doc.start, None, "invalid JSON: the document is not an object"
        if "message" in dups(doc.value):
            return resolve([Problem("message", ("message",), "given twice", 2, True)], data,
                           doc)
        return resolve([Problem("message", ("message",),
                                lambda raw: f"{shown(raw)} is not an object")], data, doc)

    def header(self, ev, row, top, body, problems):
        """Fill the row's header fields; the bits of its changeMask and columnMask."""
        kind = top.text(ev.doc.value, ("type",))
        if kind is not None and kind not in ("DT", "MD"):
            top.fail(("type",), "is not DT or MD")
        hv = body.get(ev.body, ("headers",))
        readable = "headers" not in dups(ev.body)    # else "given twice" says it all
        if hv is not None and not isinstance(hv, dict):
            body.fail(("headers",), "is not an object")
            hv, readable = None, False
        h = QlikHeader(ev.prefix + ("headers",), problems)
        fields = hv or {}
        operation = h.text(fields, ("operation",))
        op = OPS.get(operation)
        row["source_op"], row["op"] = operation, op
        if op is None and readable and "operation" not in dups(fields):
            if operation is None:
                problems.append(Problem(h.name(("operation",)), (), "missing"))
            else:
                h.fail(("operation",), f"is not one of {OPERATIONS}")
        stamp = h.text(fields, ("timestamp",))
        if stamp is not None:
            row["commit_ts"] = row["change_ts"] = stamp_us(stamp)
            if row["commit_ts"] is None:
                h.fail(("timestamp",), TIMESTAMP_FORM)
        sequence = h.text(fields, ("changeSequence",))
        if sequence is not None:
            row["commit_pos"] = row["change_pos"] = sequence.encode("utf-8")
        row["txid"] = h.text(fields, ("transactionId",))
        counter = h.int(fields, ("transactionEventCounter",))
        if counter is not None:
            row["seq"] = counter
        change_text, change = h.mask(fields, ("changeMask",))
        column_text, column = h.mask(fields, ("columnMask",))
        row["source"] = {
            "change_sequence": sequence,
            "stream_position": h.text(fields, ("streamPosition",)),
            "change_mask": change_text, "column_mask": column_text,
            "transaction_last_event": h.boolean(fields, ("transactionLastEvent",)),
            "operation": operation,
        }
        return change, column

    def read_images(self, ev, row, problems, masks, lay):
        """Read `data` and `beforeData` (in document order: a derived layout adds columns in
        the order they are met) as the operation says: DELETE's `data` is the before image,
        UPDATE's `beforeData` the before image, INSERT's and REFRESH's `data` the after one.
        Not called for an unknown operation: which image `data` is cannot be told."""
        op = row["op"]
        roles = {"data": "before" if op == "d" else "after",
                 "beforeData": "before" if op == "u" else None}
        read = {"before": None, "after": None}
        for k in ev.body:
            img = roles.get(k)
            if img is None:
                continue
            path = ev.prefix + (k,)
            if k in dups(ev.body):
                problems.append(Problem(".".join(path), path, "given twice", 2, True))
                continue
            v = ev.body[k]
            if v is None:
                continue
            if not isinstance(v, dict):
                problems.append(Problem(".".join(path), path,
                                        lambda raw: f"{shown(raw)} is not an object"))
                continue
            # a projection without before skips beforeData's values (SPEC §1), never data's:
            # a DELETE's data is its before image but the record's only one
            read[img] = self.image(img, v, path, lay, problems,
                                   read_values=k == "data" or self.want.before)
        flags(row, op, read["before"], read["after"], *masks, lay.columns)

    def image(self, img, obj, path, lay, problems, read_values=True):
        """(values by column, the set of columns sent) of one image object (without
        `read_values`, only its keys: every value null)."""
        values, sent = {}, set()
        twice = dups(obj)
        for k, v in obj.items():
            j = lay.index.get(k)
            if j is None:
                if not lay.derived or not encodable(k):     # (no Arrow field can be named so)
                    self.stats["extra_columns"] += 1
                    continue
                j = lay.add(k)
            col = lay.columns[j]
            sent.add(k)
            field = f"{img}.{k}"
            if k in twice:
                problems.append(Problem(field, path + (k,), "given twice", 2, True))
                continue
            if not read_values:
                continue
            if v is None:
                if not col.nullable:
                    problems.append(Problem(field, path + (k,), "null in NOT NULL column"))
                continue
            try:
                values[k] = convert(col, v)
            except Bad as e:
                why = e.args[0] if e.args else f"is not {col.type.name}"
                problems.append(Problem(field, path + (k,),
                                        lambda raw, w=why: f"{shown(raw)} {w}"))
        return values, sent


def reference_batches(fmt, parts, want, images, batch_rows, mode, stats):
    """Yield ``(output key, RecordBatch)`` for every Part of the source."""
    call = Call()
    for part in parts:
        yield from PartDecoder(fmt, part, want, images, batch_rows, mode, stats, call).run()


__all__ = ["reference_batches", "convert", "mask_bits", "stamp_us"]
