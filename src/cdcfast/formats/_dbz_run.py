"""The native run of `debezium`: drives the kernel (native/cdcfast/_debezium.pyx) part by part,
answers what it stops for (a new table, a new embedded schema, a plan, a full batch), and turns
its outputs into record batches with the error texts the reference writes
(cdcfast/reference/debezium.py)."""
from __future__ import annotations

import json

from ..errors import show_value
from . import _jsontext as ref
from ._debezium_codes import (H_AFTER, H_BEFORE, H_DATA_COLLECTIONS, H_EVENT_COUNT, H_ID, H_OP,
                              H_SOURCE, H_STATUS, H_TABLE_CHANGES, H_TRANSACTION, H_TS_MS,
                              H_TS_US, HS_CHANGE_LSN, HS_COMMIT_LSN, HS_CONNECTOR, HS_DB,
                              HS_NAME, HS_SCHEMA, HS_SNAPSHOT, HS_TABLE, HS_TS_MS, HS_TS_US,
                              HS_VERSION, HT_DATA_COLLECTION_ORDER, HT_ID, HT_TOTAL_ORDER, NH,
                              P_BAD_OP, P_BAD_STATUS, P_JSON, P_LSN, P_NOT_DOC, P_NOT_INT,
                              P_NOT_OBJECT, P_PAYLOAD, P_SOURCE_TABLE, P_SURROGATE, P_TS_RANGE)
from ._json_codes import IMG_BEFORE, STOP_END, STOP_PAUSE, STOP_PLAN, STOP_SCHEMA, STOP_TABLE
from ._jsonrun import KernelRun
from .base import HEADERS, Noted, full_name
from .debezium import SOURCE, image_fields

CORRUPT = frozenset({P_SOURCE_TABLE, P_JSON, P_NOT_DOC, P_PAYLOAD})

# the header fields of the kernel, by number: their paths under the payload
HEADER_PATHS = {
    H_BEFORE: ("before",), H_AFTER: ("after",), H_SOURCE: ("source",), H_OP: ("op",),
    H_TS_MS: ("ts_ms",), H_TS_US: ("ts_us",), H_TRANSACTION: ("transaction",),
    H_STATUS: ("status",), H_ID: ("id",), H_EVENT_COUNT: ("event_count",),
    H_DATA_COLLECTIONS: ("data_collections",), H_TABLE_CHANGES: ("tableChanges",),
    HS_VERSION: ("source", "version"), HS_CONNECTOR: ("source", "connector"),
    HS_NAME: ("source", "name"), HS_DB: ("source", "db"), HS_SNAPSHOT: ("source", "snapshot"),
    HS_SCHEMA: ("source", "schema"), HS_TABLE: ("source", "table"),
    HS_TS_MS: ("source", "ts_ms"), HS_TS_US: ("source", "ts_us"),
    HS_CHANGE_LSN: ("source", "change_lsn"), HS_COMMIT_LSN: ("source", "commit_lsn"),
    HT_ID: ("transaction", "id"), HT_TOTAL_ORDER: ("transaction", "total_order"),
    HT_DATA_COLLECTION_ORDER: ("transaction", "data_collection_order"),
}

REASONS = {
    P_SURROGATE: "{} has a lone surrogate in a \\u escape",
    P_BAD_OP: "{} is not one of c, u, d, r, t, m",
    P_BAD_STATUS: "{} is not BEGIN or END",
    P_NOT_INT: "{} is not an integer",
    P_TS_RANGE: "{} is out of the timestamp range",
    P_LSN: "{} is not an LSN (hex groups separated by ':')",
    P_NOT_OBJECT: "{} is not an object",
}


class Call:
    """What lasts across the parts of one call: the ordinal, the layouts (carried and noted:
    a piece of a call on its own thread is checked against the pieces before it)."""

    def __init__(self, want):
        self.seq = 0
        self.layouts = Noted(want, "json_layouts")      # table identity -> Layout
        self.no_layout = Noted(want, "dbz_no_layout")   # tables whose first change event
        #                                                 had no schema (a set)


class Run(KernelRun):
    """Decode one Part with the debezium kernel."""
    source = SOURCE
    corrupt = CORRUPT

    def __init__(self, fmt, part, want, images, batch_rows, mode, stats, call):
        from .. import _debezium
        self.schemas = []           # schema id -> (parsed schema, its image field schemas)
        self.plans = {}             # (output slot, schema id) -> (encodings, scales, units)
        super().__init__(fmt, part, want, images, batch_rows, mode, stats, call, _debezium)

    def scanner(self, images):
        return self.k.Scanner(self.part.data, self.part.offsets, self.part.valid, images)

    def layout_of_key(self, key):
        """The layout of an output table, known before its first row (decode(table=…) of a
        table the catalog lacks: its first change event in the part says)."""
        layouts = self.call.layouts
        if key in layouts:
            return layouts[key]
        t = self.fmt.catalog.get(key) if self.fmt.catalog is not None else None
        if t is not None:
            lay = layouts[t.name] = self.fmt.catalog_layout(t)
            return lay
        # the first change event of the table in the part says (the reference's rule), found
        # by a probe of the kernel that writes nothing and stops at each new table
        probe = self.k.Scanner(self.part.data, self.part.offsets, self.part.valid, True)
        schemas = []
        while True:
            r = probe.run()
            if r == STOP_END:
                return None
            if r == STOP_PAUSE:
                continue
            if r == STOP_SCHEMA:
                schemas.append(image_fields(ref.parse_json(probe.pending_schema)))
                probe.add_schema(probe.pending_schema)
                continue
            assert r == STOP_TABLE, r                       # (no output: nothing else stops)
            name = self.table_name(probe.pending_name)     # a change event's table
            if self.want.resolve(name)[0] == key:
                fields = schemas[probe.doc_sid] if probe.doc_sid >= 0 else None
                if fields is None:
                    self.call.no_layout.add(key)
                    return None
                lay = layouts[key] = self.fmt.schema_layout(key, fields)
                return lay
            probe.add_table(probe.pending_name, -1)

    # -- what the kernel stops for ---------------------------------------------------------------
    def answer(self, stop: int):
        if stop == STOP_TABLE:
            self.new_table()
        elif stop == STOP_SCHEMA:
            self.new_schema()
        elif stop == STOP_PLAN:
            self.set_plan()
        return ()

    @staticmethod
    def table_name(pending: bytes) -> str:
        """The table a kernel's STOP_TABLE names (a tag byte, then the raw JSON texts of
        source.schema and source.table, checked), as the calls name tables."""
        raw_schema, raw_table = pending[1:].split(b"\0", 1)
        sch = json.loads(raw_schema) if raw_schema else None
        tab = json.loads(raw_table) if raw_table else None
        return full_name(sch or None, tab) if tab else ""

    def new_table(self):
        sc = self.sc
        name = self.table_name(sc.pending_name)
        key, table = self.want.resolve(name)
        # the spellings a call merges into one output are one table (the reference's identity)
        ident = table.name if table is not None else \
            key if key is not None and key != HEADERS else name
        cat = None
        if table is not None:
            cat = (table.schema.encode() if table.schema is not None else None,
                   table.table.encode())
        # a change event (control events never stop here when images are read)
        layouts = self.call.layouts
        if ident not in layouts and ident not in self.call.no_layout:
            if table is not None:
                layouts[ident] = self.fmt.catalog_layout(table)
            else:
                fields = image_fields(self.current_schema())
                if fields is not None:
                    layouts[ident] = self.fmt.schema_layout(ident, fields)
                else:
                    self.call.no_layout.add(ident)
        if not self.images:     # headers: a table no layout describes counts as unknown
            sc.add_table(sc.pending_name, -1 if key is None else self.output(key).slot, cat,
                         ident not in layouts)
            return
        if ident not in layouts:
            if key is not None:
                self.raise_pending()
                raise ValueError(
                    f"table {name!r} is neither in the catalog nor described by an embedded "
                    "schema: give a catalog, or write the messages with schemas.enable=true")
            sc.add_table(sc.pending_name, -1, cat, True)    # its records: unknown_tables
            return
        sc.add_table(sc.pending_name, -1 if key is None else self.output(key).slot, cat)

    def current_schema(self):
        sid = self.sc.doc_sid
        return self.schemas[sid][0] if sid >= 0 else None

    def new_schema(self):
        text = self.sc.pending_schema
        parsed = ref.parse_json(text)       # as the reference reads it (known well-formed)
        self.schemas.append((parsed, image_fields(parsed)))
        self.sc.add_schema(text)

    def set_plan(self):
        """The encodings of an output's columns in the documents of one embedded schema: the
        layout's, where the schema does not say otherwise."""
        slot, sid = self.sc.pending_slot, self.sc.pending_sid
        plan = self.plans.get((slot, sid))
        if plan is None:
            cols = self.by_slot[slot].layout.columns
            over = {}
            if sid >= 0 and self.schemas[sid][1] is not None:
                over = self.fmt.overrides(self.schemas[sid][1])
            encs, scales = [], []
            for c in cols:
                e, s = over.get(c.name, (c.enc, c.scale))
                encs.append(e)
                scales.append(s)
            plan = self.plans[slot, sid] = (encs, scales, [c.unit for c in cols])
        self.sc.set_plan(slot, sid, *plan)

    # -- error texts -----------------------------------------------------------------------------
    def describe(self, o, field, code, raw, pos, data):
        if code == P_JSON:
            return None, "invalid JSON: " + ref.scan_reason(field, bytes(memoryview(data)[
                pos:pos + 1]), 0)
        if code == P_NOT_DOC:
            return None, "invalid JSON: the document is not an object"
        if code == P_PAYLOAD:
            return "payload", "given twice" if field else "is not an object"
        if code == P_SOURCE_TABLE:
            return ("payload.source.table" if field else "source.table"), "missing"
        name = None
        if field < IMG_BEFORE:
            envl = field >= NH
            path = HEADER_PATHS[field - NH if envl else field]
            name = ".".join((("payload",) if envl else ()) + path)
        return self.field_problem(o, field, code, raw, name, REASONS, show_value)


def native_batches(fmt, parts, want, images, batch_rows, mode, stats):
    call = Call(want)
    for part in parts:
        yield from Run(fmt, part, want, images, batch_rows, mode, stats, call).run()
