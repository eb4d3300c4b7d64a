"""The native run of `debezium`: drives the kernel (native/cdcfast/_debezium.pyx) part by part,
answers what it stops for (a new table, a new embedded schema, a plan, a full batch), and turns
its outputs into record batches with the error texts the reference writes
(cdcfast/reference/debezium.py)."""
from __future__ import annotations

import json

import pyarrow as pa

from .. import envelope
from ..errors import DecodeError, show_value
from ..reference import _jsondoc as ref
from ..sources import release
from .base import (ALL, HEADERS, MESSAGE, apply_mode, binary_column, errors_column, full_name,
                   image_structs)
from .debezium import SOURCE, image_fields

STOP_END, STOP_BATCH, STOP_TABLE, STOP_SCHEMA, STOP_PLAN, _, STOP_PAUSE = range(7)
(P_VALUE, P_TWICE, P_NOT_NULL, P_SURROGATE, P_MISSING, P_BAD_OP, P_BAD_STATUS, P_NOT_INT,
 P_TS_RANGE, P_LSN, P_NOT_OBJECT, P_SOURCE_TABLE, P_JSON, P_NOT_DOC, P_PAYLOAD) = range(1, 16)
CORRUPT = {P_SOURCE_TABLE, P_JSON, P_NOT_DOC, P_PAYLOAD}
IMG_BEFORE, IMG_AFTER = 1 << 20, 2 << 20

# the header fields of the kernel, by number: their paths under the payload
HEADER_PATHS = (
    ("before",), ("after",), ("source",), ("op",), ("ts_ms",), ("ts_us",), ("transaction",),
    ("status",), ("id",), ("event_count",), ("data_collections",), ("tableChanges",),
    ("source", "version"), ("source", "connector"), ("source", "name"), ("source", "db"),
    ("source", "snapshot"), ("source", "schema"), ("source", "table"), ("source", "ts_ms"),
    ("source", "ts_us"), ("source", "change_lsn"), ("source", "commit_lsn"),
    ("transaction", "id"), ("transaction", "total_order"),
    ("transaction", "data_collection_order"),
)
NH = len(HEADER_PATHS)

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
    """What lasts across the parts of one call: the ordinal, the layouts, parsed schemas."""

    def __init__(self):
        self.seq = 0
        self.layouts = {}           # table identity -> Layout
        self.no_layout = set()      # tables whose first change event had no schema


class _Output:
    def __init__(self, key, layout, images, slot, out):
        self.key, self.layout, self.images, self.slot, self.out = key, layout, images, slot, out
        self.plans = {}             # schema id -> (encodings, scales, units)


class Run:
    """Decode one Part with the kernel."""

    def __init__(self, fmt, part, want, images, batch_rows, mode, stats, call):
        from .. import _debezium
        self.k = _debezium
        self.fmt, self.part, self.want, self.images = fmt, part, want, images
        self.batch_rows, self.mode, self.stats, self.call = batch_rows, mode, stats, call
        self.sc = _debezium.Scanner(part.data, part.offsets, part.valid, images)
        self.sc.batch_rows = batch_rows
        self.sc.seq_start(call.seq)
        self.sc.messages = want.messages
        self.outputs = {}           # key -> _Output
        self.by_slot = []
        self.schemas = []           # schema id -> image field schemas (or None)
        self.released = 0           # the mapped input before this is given back
        if not images:
            if want.table is None:
                self.sc.headers_slot = self.output(HEADERS).slot
        ckey = want.corrupt_key
        if ckey is not None or want.table is ALL:
            self.sc.corrupt_slot = self.output(ckey).slot

    # -- outputs ---------------------------------------------------------------------------------
    def output(self, key) -> _Output:
        o = self.outputs.get(key)
        if o is not None:
            return o
        layout = None
        if self.images and key is not None and key != HEADERS:
            layout = self.layout_of_key(key)
        cols = layout.columns if layout is not None else []
        out = self.k.Out([c.type.kind for c in cols], [c.type.precision for c in cols],
                         [c.type.scale for c in cols], [c.nullable for c in cols],
                         [c.name for c in cols], self.images and key != HEADERS)
        slot = self.sc.add_output(out)
        o = self.outputs[key] = _Output(key, layout, self.images, slot, out)
        self.by_slot.append(o)
        return o

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
    @staticmethod
    def table_name(pending: bytes) -> str:
        """The table a kernel's STOP_TABLE names (its raw JSON texts of source.schema and
        source.table, checked), as the calls name tables."""
        raw_schema, raw_table = pending.split(b"\0", 1)
        sch = json.loads(raw_schema) if raw_schema else None
        tab = json.loads(raw_table) if raw_table else None
        return full_name(sch or None, tab) if tab else ""

    def new_table(self):
        name = self.table_name(self.sc.pending_name)
        key, table = self.want.resolve(name)
        # the spellings a call merges into one output are one table (the reference's identity)
        ident = table.name if table is not None else \
            key if key is not None and key != HEADERS else name
        cat = None
        if table is not None:
            cat = (table.schema.encode() if table.schema is not None else None,
                   table.table.encode())
        if not self.images:
            slot = -1 if key is None else self.output(key).slot
            self.sc.add_table(self.sc.pending_name, slot, False, cat)
            return
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
        if ident not in layouts:
            if key is not None:
                self.raise_pending()
                raise ValueError(
                    f"table {name!r} is neither in the catalog nor described by an embedded "
                    "schema: give a catalog, or write the messages with schemas.enable=true")
            self.sc.add_table(self.sc.pending_name, -1, True, cat)
            return
        if key is None:
            self.sc.add_table(self.sc.pending_name, -1, False, cat)
            return
        o = self.output(key)
        self.sc.add_table(self.sc.pending_name, o.slot, False, cat)

    def current_schema(self):
        sid = self.sc.doc_sid
        return self.schemas[sid][0] if sid >= 0 else None

    def new_schema(self):
        text = self.sc.pending_schema
        parsed = ref.parse_json(text)       # as the reference reads it (known well-formed)
        self.schemas.append((parsed, image_fields(parsed)))
        self.sc.add_schema(text)

    def set_plan(self):
        o = self.by_slot[self.sc.pending_slot]
        sid = self.sc.pending_sid
        plan = o.plans.get(sid)
        if plan is None:
            cols = o.layout.columns
            over = {}
            if sid >= 0 and self.schemas[sid][1] is not None:
                over = self.fmt.overrides(self.schemas[sid][1])
            encs, scales = [], []
            for c in cols:
                e, s = over.get(c.name, (c.enc, c.scale))
                encs.append(e)
                scales.append(s)
            plan = o.plans[sid] = (encs, scales, [c.unit for c in cols])
        o.out.set_plan(sid, *plan)

    # -- the loop --------------------------------------------------------------------------------
    def run(self):
        sc = self.sc
        try:
            while True:
                r = sc.run()
                if r == STOP_END:
                    break
                if r == STOP_BATCH:
                    yield from self.flush(self.by_slot[sc.full_slot])
                    self.released = release(self.part.data, sc.pos, self.released)
                elif r == STOP_PAUSE:
                    # rows keep input positions only for errors, read again at the flush
                    # (a mapped file's pages come back from the file)
                    self.released = release(self.part.data, sc.pos, self.released)
                elif r == STOP_TABLE:
                    self.new_table()
                elif r == STOP_SCHEMA:
                    self.new_schema()
                elif r == STOP_PLAN:
                    self.set_plan()
            for o in self.by_slot:
                if o.out.length:
                    yield from self.flush(o)
        finally:
            st = self.stats
            st["records"] += sc.records
            st["tombstones"] += sc.tombstones
            st["control"] += sc.control
            st["unknown_tables"] += sc.unknown
            st["extra_columns"] += sc.extra
            self.call.seq = sc.seq

    def raise_pending(self):
        """FAILFAST: the first error met so far, in input order, before anything else."""
        if self.mode != "FAILFAST":
            return
        first = None
        for o in self.by_slot:
            for p in o.out.peek_problems():
                err = self.error(o, p)
                key = (p[6], p[3])
                if first is None or key < first[0]:
                    first = (key, err)
                break
        if first is not None:
            raise first[1]

    def flush(self, o: _Output):
        self.raise_pending()
        batch, first = self.batch(o)
        yield o.key, apply_mode(batch, self.mode, self.stats, first)

    # -- batches ---------------------------------------------------------------------------------
    def message_of(self, msg: int) -> int:
        return 0 if self.want.messages else self.part.base + msg

    def error(self, o: _Output, p) -> DecodeError:
        row, field, code, pos, a, b, msg = p
        data = self.part.data
        base = int(self.part.offsets[msg])
        raw = bytes(memoryview(data)[a:b])
        name, reason = self.describe(o, field, code, raw, pos, data)
        return DecodeError(reason, self.message_of(msg), pos - base, name)

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
        if field >= IMG_BEFORE:
            img = "after" if field >= IMG_AFTER else "before"
            col = o.layout.columns[field - (IMG_AFTER if field >= IMG_AFTER else IMG_BEFORE)]
            name = f"{img}.{col.name}"
            if code == P_VALUE:
                return name, f"{show_value(raw)} is not {col.type.name}"
        else:
            envl = field >= NH
            path = HEADER_PATHS[field - NH if envl else field]
            name = ".".join((("payload",) if envl else ()) + path)
        if code == P_TWICE:
            return name, "given twice"
        if code == P_NOT_NULL:
            return name, "null in NOT NULL column"
        if code == P_MISSING:
            return name, "missing"
        return name, REASONS[code].format(show_value(raw))

    def batch(self, o: _Output):
        """(record batch, its first DecodeError or None) of an output's rows so far."""
        out = o.out
        n = out.length
        out.sync_lengths()
        msgs, starts, ends = out.rows_info()
        problems = out.problems()
        data = self.part.data
        rows, texts, crows, cvals = [], [], [], []
        first = None
        for p in problems:                  # rows with a problem only
            row, code = p[0], p[2]
            err = self.error(o, p + (int(msgs[row]),))
            first = first or err
            rows.append(row)
            texts.append(str(err))
            if code in CORRUPT:
                crows.append(row)
                cvals.append(bytes(memoryview(data)[starts[row]:ends[row]]))
        images = o.images and o.key != HEADERS
        cols = o.layout.columns if (images and o.layout is not None) else []
        head = [out.op.finish(pa.string()), out.source_op.finish(pa.string()),
                out.schema.finish(pa.string()), out.table.finish(pa.string()),
                out.txid.finish(pa.string()), out.commit_ts.finish(envelope.UTC_US),
                out.change_ts.finish(envelope.UTC_US), out.commit_pos.finish(pa.binary()),
                out.change_pos.finish(pa.binary()), out.seq.finish(pa.int64())]
        src_children = [out.s_version.finish(pa.string()), out.s_connector.finish(pa.string()),
                        out.s_name.finish(pa.string()), out.s_db.finish(pa.string()),
                        out.s_snapshot.finish(pa.string()),
                        out.s_processed.finish(envelope.UTC_US),
                        out.s_change_lsn.finish(pa.string()),
                        out.s_commit_lsn.finish(pa.string()), out.s_dco.finish(pa.int64()),
                        out.s_event_count.finish(pa.int64()),
                        out.s_collections.finish(pa.string())]
        source = pa.Array.from_buffers(SOURCE, n, [out.source_v.take_validity()],
                                       children=src_children)
        arrays = head
        if images:
            arrays += image_structs(out, cols, n)
            schema = envelope.schema([(c.name, c.type.arrow_type) for c in cols], SOURCE)
        else:
            for c in (out.before_v, out.after_v, out.changed_v, out.present_v):
                c.take_validity()
            schema = envelope.headers_schema(SOURCE)
        arrays += [source, errors_column(n, rows, texts), binary_column(n, crows, cvals)]
        out.finished()
        batch = pa.RecordBatch.from_arrays(arrays, schema=schema)
        if self.want.messages:
            batch = batch.append_column(pa.field(MESSAGE, pa.int64()),
                                        pa.array(msgs + self.part.base, pa.int64()))
        return batch, first


def native_batches(fmt, parts, want, images, batch_rows, mode, stats):
    call = Call()
    for part in parts:
        yield from Run(fmt, part, want, images, batch_rows, mode, stats, call).run()
