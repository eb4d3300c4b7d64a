"""The native run of `qlik`: drives the kernel (native/cdcfast/_qlik.pyx) part by part, answers
what it stops for (a metadata message, a new table, a new column of a derived layout, a full
batch), and turns its outputs into record batches with the error texts the reference writes
(cdcfast/reference/qlik.py; the rules: docs/qlik.md)."""
from __future__ import annotations

from ._json_codes import IMG_BEFORE, STOP_BATCH, STOP_COLUMN, STOP_META, STOP_TABLE
from ._jsonmessages import utf8_text
from ._jsonrun import KernelRun, token_at
from ._jsontext import Doc, Problem, parse_json, resolve, scan_reason
from .base import ALL, HEADERS, Noted, full_name
from .qlik import (LACKS_METADATA, OPERATIONS, SOURCE, TIMESTAMP_FORM, QlikBadMetadata,
                   qlik_metadata, shown, table_layout)

# the kernel's problem codes (their one spec: _qlik_codes, which native/cdcfast/_qlik.pyx reads)
from ._qlik_codes import (P_BAD_OP, P_BOOL, P_JSON, P_MESSAGE, P_META,  # noqa: F401
                          P_MISSING, P_NOT_DOC, P_NOT_HEX, P_NOT_INT, P_NOT_NULL, P_NOT_OBJECT,
                          P_SURROGATE, P_TEXT, P_TIME, P_TWICE, P_TYPE, P_UNNAMED, P_VALUE)
CORRUPT = frozenset({P_JSON, P_NOT_DOC, P_MESSAGE, P_UNNAMED, P_META})

# the kernel's fields, by number, as errors name them
_TOP = ("type", "messageSchemaId", "message", "headers", "schema", "table", "data",
        "beforeData", "tableStructure")
_HEADERS = ("operation", "changeSequence", "timestamp", "streamPosition", "transactionId",
            "changeMask", "columnMask", "transactionEventCounter", "transactionLastEvent")
FIELDS = _TOP + tuple("message." + f for f in _TOP[3:]) + tuple(
    "headers." + f for f in _HEADERS) + tuple("message.headers." + f for f in _HEADERS)

REASONS = {
    P_SURROGATE: "{} has a lone surrogate in a \\u escape",
    P_BAD_OP: "{} is not one of " + OPERATIONS,
    P_NOT_INT: "{} is not an integer",
    P_TIME: "{} " + TIMESTAMP_FORM,
    P_NOT_HEX: "{} is not hex",
    P_NOT_OBJECT: "{} is not an object",
    P_BOOL: "{} is not a boolean",
    P_TEXT: "{} is not a string",
    P_TYPE: "{} is not DT or MD",
}
# why a data message names no table (the kernel's P_UNNAMED, by the case Python gives it):
# a messageSchemaId that resolves to nothing, a null one, no Pub/Sub table, a messageSchemaId
# that cannot name (given twice, an object or array)
UNNAMED_SCHEMA_ID, UNNAMED_NULL_ID, UNNAMED_TABLE, UNNAMED_BAD_ID = 1, 2, 3, 4
# the kernel's tags of what a record names (Scanner.record)
TAG_NAMES, TAG_SCHEMA_ID, TAG_NULL_ID, TAG_NO_TABLE, TAG_BAD_ID = range(5)


class Call:
    """What lasts across the parts of one call: the record ordinal, the table layouts and what
    the metadata messages met so far said (as the reference's Call); carried and noted: a
    piece of a call on its own thread is checked against the pieces before it."""

    def __init__(self, want):
        self.seq = 0
        # output key -> Layout, fixed at the table's first data message
        self.layouts = Noted(want, "json_layouts")
        # schemaId -> (schema, table) of its metadata message
        self.schema_ids = Noted(want, "qlik_schema_ids")
        # table name, upper case -> Table of its latest metadata message
        self.described = Noted(want, "qlik_described")


class Run(KernelRun):
    """Decode one Part with the qlik kernel."""
    source = SOURCE
    corrupt = CORRUPT

    def __init__(self, fmt, part, want, images, batch_rows, mode, stats, call):
        from .. import _qlik
        self.meta_texts = []        # (field, reason) of metadata messages that cannot be read
        super().__init__(fmt, part, want, images, batch_rows, mode, stats, call, _qlik)

    def scanner(self, images):
        return self.k.Scanner(self.part.data, self.part.offsets, self.part.valid, images)

    def layout_of_key(self, key):
        """An output's layout before its first data message: the catalog's (a requested
        table), else none yet — it is fixed at that message (`fix`)."""
        lay = self.call.layouts.get(key)
        if lay is None and self.fmt.catalog is not None:
            t = self.fmt.catalog.get(key)
            if t is not None:
                lay = self.fmt.catalog_layout(t)
        return lay

    # -- what the kernel stops for ---------------------------------------------------------------
    def answer(self, stop: int):
        if stop == STOP_META:
            yield from self.metadata()
        elif stop == STOP_TABLE:
            yield from self.new_table()
        elif stop == STOP_COLUMN:
            o = self.by_slot[self.sc.pending_slot]
            name = parse_json(b'"' + self.sc.pending_key + b'"')
            o.layout.add(name)
            o.out.add_column(name, fill=False)

    def metadata(self):
        """A metadata message (docs/qlik.md): remembered, or a corrupt record."""
        sc = self.sc
        start = sc.pending_start
        text = bytes(memoryview(self.part.data)[start:sc.pending_end])
        doc = Doc(0, len(text))             # (positions within the document, then shifted)
        v = parse_json(text)
        body, prefix = (v["message"], ("message",)) if "message" in v else (v, ())
        try:
            meta = qlik_metadata(body)
        except QlikBadMetadata as e:
            path = prefix + e.path
            reason = "missing" if e.value is None else \
                (lambda raw, r=e.reason: f"{shown(raw)} {r}")
            pos, field, why = resolve([Problem(".".join(path), path, reason)], text, doc)
            self.meta_texts.append((field, why))
            while sc.meta_corrupt(len(self.meta_texts) - 1, start + pos) == STOP_BATCH:
                yield from self.flush(self.by_slot[sc.full_slot])
            return
        if meta.schema_id is not None:
            self.call.schema_ids[meta.schema_id] = (meta.schema, meta.table)
        if meta.definition is not None:
            self.call.described[full_name(meta.schema, meta.table).upper()] = meta.definition
        sc.forget_tables()          # a schemaId may name another table from here on
        sc.meta_read()

    def new_table(self):
        """The table a record names (docs/qlik.md, "The table of a data message"): its own
        names, else its messageSchemaId's (the metadata messages met so far, else the
        catalog's schema ids), else — messageSchemaId null only — the `table` argument."""
        sc = self.sc
        tag = sc.pending_name[0]
        first, second = sc.pending_name[1:].split(b"\0", 1)
        named = None
        if tag == TAG_NAMES and _text(second) is not None:
            schema, tname = _text(first), _text(second)
            named = (full_name(schema, tname), schema, tname)
        elif tag == TAG_SCHEMA_ID or tag == TAG_BAD_ID:
            sid = _text(second) if tag == TAG_SCHEMA_ID else None
            got = self.call.schema_ids.get(sid) if sid is not None else None
            if got is not None:
                named = (full_name(*got), *got)
            elif sid is not None and self.fmt.catalog is not None:
                t = self.fmt.catalog.qlik_table(sid)
                if t is not None:
                    named = (t.name, t.schema, t.table)
            if named is None:       # it names a table, not one we can read: never `table`
                sc.add_table(sc.pending_name, -2 - (UNNAMED_SCHEMA_ID if tag == TAG_SCHEMA_ID
                                                    else UNNAMED_BAD_ID))
                return
        if named is None and self.want.table is not ALL and self.want.requested is not None:
            arg = self.want.requested
            schema, _, tname = arg.rpartition(".")
            named = (arg, schema or None, tname)
        if named is None and self.want.table is None and self.want.headers:
            # headers() lists it: its header fields, no schema/table
            sc.add_table(sc.pending_name, self.output(HEADERS).slot, (None, None))
            return
        if named is None:
            sc.add_table(sc.pending_name, -2 - (UNNAMED_NULL_ID if tag == TAG_NULL_ID
                                                else UNNAMED_TABLE))
            return
        name, schema, tname = named
        key, table = self.want.resolve(name)
        described = self.call.described.get(name.upper())
        owner = table if table is not None else described
        if owner is not None:
            schema, tname = owner.schema, owner.table
        cat = (schema.encode() if schema else None, tname.encode())
        unknown = table is None and described is None
        if key is None:
            sc.add_table(sc.pending_name, -1, cat, unknown)
        elif not self.images:
            sc.add_table(sc.pending_name, self.output(key).slot, cat, unknown)
        else:
            o = self.outputs.get(key)
            if o is not None and o.layout is None and o.out.length >= self.batch_rows:
                yield from self.flush(o)    # a full batch of the rows before the layout
            sc.add_table(sc.pending_name, self.fix(key, table).slot, cat, unknown)

    def fix(self, key, table):
        """The output of a table whose data message is met: its layout fixed now, when not
        yet (the catalog's, else the latest metadata message's, else derived)."""
        lay = self.call.layouts.get(key)
        if lay is None:
            described = self.call.described.get(key.upper())
            lay = self.fmt.catalog_layout(table) if table is not None else \
                table_layout(key, described) if described is not None else \
                self.fmt.derived_layout(key)
            self.call.layouts[key] = lay
        o = self.output(key, lay)
        if o.layout is None:        # made before the layout was known (corrupt records only)
            o.layout = lay
            for c in lay.columns:
                o.out.add_column(c.name, c.type.kind, c.type.precision, c.type.scale,
                                 c.nullable, fill=False)
            o.out.lob = bytes(bool(c.lob) for c in lay.columns)
            o.out.derived = lay.derived
        return o

    # -- error texts -----------------------------------------------------------------------------
    def describe(self, o, field, code, raw, pos, data):
        if code == P_JSON:
            return None, "invalid JSON: " + scan_reason(field, bytes(memoryview(data)[
                pos:pos + 1]), 0)
        if code == P_NOT_DOC:
            return None, "invalid JSON: the document is not an object"
        if code == P_MESSAGE:
            return "message", "given twice" if field else \
                f"{shown(token_at(data, pos))} is not an object"
        if code == P_UNNAMED:
            raw = token_at(data, pos) if field < 10 else b""    # (10 up: the field is absent)
            field %= 10
            name = "messageSchemaId" if field != UNNAMED_TABLE else "table"
            if raw[:1] in (b"{", b"["):    # a container is no name (docs/qlik.md)
                return name, f"{shown(raw)} is not a string"
            if field == UNNAMED_BAD_ID:     # (at its second key)
                return name, "given twice"
            if raw[:1] == b'"' and not utf8_text(parse_json(raw)):
                return name, f"{shown(raw)} has a lone surrogate in a \\u escape"
            if field == UNNAMED_SCHEMA_ID:
                return "messageSchemaId", f"{shown(raw)} {LACKS_METADATA}"
            if field == UNNAMED_NULL_ID:
                return "messageSchemaId", "null, and the message names no table; pass table=…"
            return "table", "missing; pass table=…"
        if code == P_META:
            return self.meta_texts[field]
        name = FIELDS[field] if field < IMG_BEFORE else None
        return self.field_problem(o, field, code, raw, name, REASONS, shown)


def _text(raw: bytes):
    """A header text field's value from its raw JSON (a string's text, a number's or a
    boolean's JSON text; "" none), as the reference's QlikHeader.text reads it."""
    if not raw:
        return None
    v = parse_json(raw) if raw[:1] == b'"' else raw.decode("utf-8")
    return str(v) if v and utf8_text(v) else None     # a lone surrogate names nothing


def native_batches(fmt, parts, want, images, batch_rows, mode, stats):
    call = Call(want)
    for part in parts:
        yield from Run(fmt, part, want, images, batch_rows, mode, stats, call).run()
