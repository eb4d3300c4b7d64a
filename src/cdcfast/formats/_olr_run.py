"""The native run of `olr`: drives the kernel (native/cdcfast/_olr.pyx) part by part, answers
what it stops for (a new table, a new column of a JSON-kinds layout, a full batch), and turns
its outputs into record batches with the error texts the reference writes
(cdcfast/reference/olr.py)."""
from __future__ import annotations

import json

from ..errors import show_value
from ._json_codes import IMG_BEFORE, STOP_COLUMN, STOP_END, STOP_PAUSE, STOP_TABLE
from ._jsonmessages import utf8_text
from ._jsonrun import KernelRun, token_at
from ._jsontext import Num, dups, parse_json, scan_reason
from .base import HEADERS, Noted, full_name
from .olr import EPOCH_UNITS, SOURCE

# the kernel's problem codes (their one spec: _olr_codes, which native/cdcfast/_olr.pyx reads)
from ._olr_codes import (P_BAD_OP, P_BOOL, P_COLUMNS, P_ELEMENT, P_JSON,  # noqa: F401
                         P_MISSING, P_NOT_DOC, P_NOT_INT, P_NOT_NULL, P_NOT_OBJECT,
                         P_OP_CORRUPT, P_PAIR, P_PAYLOAD, P_SCN, P_SCN_INT, P_SURROGATE,
                         P_TABLE, P_TEXT, P_TIME, P_TWICE, P_UNSIGNED, P_VALUE, P_XID)
CORRUPT = {P_JSON, P_NOT_DOC, P_PAYLOAD, P_ELEMENT, P_TABLE, P_OP_CORRUPT}

# the kernel's fields, by number, as errors name them
FIELDS = ("scn", "scns", "tm", "tms", "xid", "xidn", "c_scn", "c_idx", "db", "num", "payload",
          "payload.op", "payload.schema", "payload.rid", "payload.num", "payload.sql",
          "payload.ddl", "payload.seq", "payload.offset", "payload.redo", "payload.before",
          "payload.after", "payload.schema.owner", "payload.schema.table",
          "payload.schema.obj", "payload.schema.columns")

REASONS = {
    P_SURROGATE: "{} has a lone surrogate in a \\u escape",
    P_BAD_OP: "{} is not one of begin, commit, c, u, d, ddl, chkpt",
    P_NOT_INT: "{} is not an integer",
    P_SCN: "{} is not an SCN",
    P_SCN_INT: "{} is not an SCN",
    P_UNSIGNED: "{} is not a non-negative integer",
    P_TIME: "{} is not a time",
    P_XID: "{} is not a transaction id",
    P_NOT_OBJECT: "{} is not an object",
    P_BOOL: "{} is not a boolean",
    P_TEXT: "{} is not text",
    P_COLUMNS: "{} is not a list of columns",
    P_PAIR: "{} is not an object of one column",
}


class Call:
    """What lasts across the parts of one call: the ordinal, the layouts (carried and noted:
    a piece of a call on its own thread is checked against the pieces before it) and the
    carried scn/tm of open transactions (Want.carried["olr_carry"], the kernel's bytes; a
    piece notes what it read of them: Olr.carried_agrees)."""

    def __init__(self, want):
        self.seq = 0
        self.layouts = Noted(want, "json_layouts")      # table identity -> Layout
        self.want = want

    @property
    def carry(self) -> bytes:
        return self.want.carried.get("olr_carry", b"")

    @carry.setter
    def carry(self, state: bytes) -> None:
        self.want.carried["olr_carry"] = state


class Run(KernelRun):
    """Decode one Part with the olr kernel."""
    source = SOURCE
    corrupt = CORRUPT

    def __init__(self, fmt, part, want, images, batch_rows, mode, stats, call):
        from .. import _olr
        super().__init__(fmt, part, want, images, batch_rows, mode, stats, call, _olr)

    def scanner(self, images):
        unit = EPOCH_UNITS.index(self.fmt.options["epoch_unit"])
        sc = self.k.Scanner(self.part.data, self.part.offsets, self.part.valid, images, unit)
        sc.set_carry(self.call.carry)       # carry-forward lasts the call (SPEC §6)
        if self.want.piece:
            sc.note_carry()
        return sc

    def run(self):
        try:
            yield from super().run()
        finally:
            self.call.carry = self.sc.carry_state()
            if self.want.piece:
                self.want.carry_notes = self.sc.carry_notes()

    def layout_of_key(self, key):
        """The layout of an output table, known before its first row (decode(table=…) of a
        table the catalog lacks: its first data event in the part says, found by a probe of
        the kernel that writes nothing and stops at each new table)."""
        lay = self.call.layouts.get(key)
        if lay is not None:
            return lay
        t = self.fmt.catalog.get(key) if self.fmt.catalog is not None else None
        if t is not None:
            lay = self.call.layouts[t.name] = self.fmt.catalog_layout(t)
            return lay
        probe = self.k.Scanner(self.part.data, self.part.offsets, self.part.valid, True, 0)
        while True:
            r = probe.run()
            if r == STOP_END:
                return self.fmt.kinds_layout(key)     # (no row of it here: never written)
            if r == STOP_PAUSE:
                continue
            name = self.table_name(probe.pending_name)
            if probe.pending_data and self.want.resolve(name)[0] == key:
                return self.new_layout(key, probe.pending_columns)
            probe.add_table(probe.pending_name, -1)

    def new_layout(self, ident, columns_text):
        """A table's layout at its first data event: schema.columns when sent (and usable),
        else JSON kinds."""
        cols = _columns(columns_text)
        lay = self.fmt.schema_layout(ident, cols) if cols else self.fmt.kinds_layout(ident)
        self.call.layouts[ident] = lay
        return lay

    # -- what the kernel stops for ---------------------------------------------------------------
    def answer(self, stop: int):
        if stop == STOP_TABLE:
            self.new_table()
        elif stop == STOP_COLUMN:
            self.new_column()
        return ()

    @staticmethod
    def table_name(pending: bytes) -> str:
        """The table a STOP_TABLE names (a tag byte, then the raw JSON texts of schema.owner
        and schema.table, checked), as the calls name tables."""
        raw_schema, raw_table = pending[1:].split(b"\0", 1)
        sch = json.loads(raw_schema) if raw_schema else None
        tab = json.loads(raw_table) if raw_table else None
        sch = sch if sch and utf8_text(sch) else None   # a lone surrogate names nothing
        return full_name(sch, tab) if tab and utf8_text(tab) else ""

    def new_table(self):
        sc = self.sc
        name = self.table_name(sc.pending_name)
        if not name and sc.pending_data:    # a table name with a lone surrogate: none
            sc.add_table(sc.pending_name, -2)
            return
        key, table = self.want.resolve(name)
        # the spellings a call merges into one output are one table (the reference's identity)
        ident = table.name if table is not None else \
            key if key is not None and key != HEADERS else name
        cat = None
        if table is not None:
            cat = (table.schema.encode() if table.schema is not None else None,
                   table.table.encode())
        lay = None
        if sc.pending_data:             # a data event fixes its table's layout
            lay = self.call.layouts.get(ident)
            if lay is None:
                lay = self.fmt.catalog_layout(table) if table is not None \
                    else self.new_layout(ident, sc.pending_columns)
                self.call.layouts[ident] = lay
        unknown = lay is not None and lay.derived     # docs/olr.md: unknown_tables
        if key is None:
            sc.add_table(sc.pending_name, -1, cat, unknown)
        elif not self.images or lay is None:          # headers(), or a control event
            sc.add_table(sc.pending_name, -1 if self.images else self.output(key).slot, cat,
                         unknown)
        else:
            sc.add_table(sc.pending_name, self.output(key, lay).slot, cat, unknown)

    def new_column(self):
        o = self.by_slot[self.sc.pending_slot]
        name = json.loads(b'"' + self.sc.pending_key + b'"')
        o.layout.add(name)
        o.out.add_column(name)

    def describe(self, o, field, code, raw, pos, data):
        if code == P_JSON:
            return None, "invalid JSON: " + scan_reason(field, bytes(memoryview(data)[
                pos:pos + 1]), 0)
        if code == P_NOT_DOC:
            return None, "invalid JSON: the document is not an object"
        if code == P_PAYLOAD:
            return "payload", ("missing", "given twice",
                               f"{show_value(token_at(data, pos))} is not an array")[field]
        if code == P_ELEMENT:
            return f"payload[{field}]", f"{show_value(token_at(data, pos))} is not an object"
        if code == P_TABLE:
            return "payload.schema.table", "missing"
        if code == P_OP_CORRUPT:
            return "payload.op", ("missing", "given twice", REASONS[P_BAD_OP].format(
                show_value(token_at(data, pos))))[field]
        name = FIELDS[field] if field < IMG_BEFORE else None
        if field in (20, 21):               # an image: named as the envelope names it
            name = name[len("payload."):]
        return self.field_problem(o, field, code, raw, name, REASONS, show_value)


def _columns(text):
    """The entries of a schema.columns text when it is a list of objects each with one text
    `name` (the reference's `column_list`), else None."""
    if text is None:
        return None
    cols = parse_json(text)
    if not isinstance(cols, list) or not all(
            isinstance(c, dict) and isinstance(c.get("name"), str)
            and not isinstance(c.get("name"), Num) and "name" not in dups(c)
            and utf8_text(c["name"]) for c in cols):
        return None
    return cols or None


def native_batches(fmt, parts, want, images, batch_rows, mode, stats):
    call = Call(want)
    for part in parts:
        yield from Run(fmt, part, want, images, batch_rows, mode, stats, call).run()
