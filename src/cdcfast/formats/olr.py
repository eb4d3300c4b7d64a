"""`olr`: OpenLogReplicator JSON output, Oracle redo (SPEC §5.4).

Decisions SPEC leaves open are in docs/olr.md. This module validates the options, maps the
writer's `schema.columns` and the catalog onto table layouts, builds catalogs from those
`schema.columns` (`catalog_from`, behind Catalog.from_olr), and is what the kernel codes
against; the reference twin is cdcfast/reference/olr.py.

A *layout* is what a decoder needs for one table: its columns (name, type, nullable), fixed
at the table's first data event in a call — from the catalog, else from that event's
`schema.columns`, else from the JSON kinds of the values, the one case whose columns come
from the data and grow as new keys are met (`derived`).
"""
from __future__ import annotations

import re

import numpy as np
import pyarrow as pa

from ..catalog import DATE32, STRING, TIMESTAMP, Catalog, Column, ColumnType, Table, parse_type
from ._json_codes import STOP_PAUSE, STOP_TABLE
from ._jsonmessages import LCol, Layout, documents, record_start
from .base import Format, grown_table

SOURCE = pa.struct([
    pa.field("db", pa.string()), pa.field("scn", pa.int64()), pa.field("c_scn", pa.int64()),
    pa.field("c_idx", pa.int64()), pa.field("obj", pa.int64()), pa.field("num", pa.int64()),
    pa.field("xid", pa.string()), pa.field("rid", pa.string()), pa.field("ddl", pa.string()),
    pa.field("checkpoint_seq", pa.int64()), pa.field("checkpoint_offset", pa.int64()),
    pa.field("checkpoint_redo", pa.bool_()),
])

EPOCH_UNITS = ("auto", "s", "ms", "us", "ns")

# a column of a JSON-kinds layout: the value's text (docs/olr.md, "JSON kinds")
KINDS_TYPE = ColumnType("STRING", "STRING", STRING)

# schema.columns type names (lower case, as the writer sends them) -> catalog base names;
# the sized ones take `length`, `number` its precision and scale
_SIZED = {"varchar2": "VARCHAR2", "nvarchar2": "NVARCHAR2", "char": "CHAR", "nchar": "NCHAR",
          "raw": "RAW"}
_PLAIN = {"clob": "CLOB", "nclob": "NCLOB", "blob": "BLOB", "date": "DATE",
          "timestamp": "TIMESTAMP", "timestamp with time zone": "TIMESTAMP WITH TIME ZONE",
          "binary_float": "BINARY_FLOAT", "binary_double": "BINARY_DOUBLE", "float": "FLOAT",
          "boolean": "BOOLEAN", "integer": "NUMBER(38,0)"}
# every other type (long, rowid, urowid, xmltype, interval …, unknown) is text as sent
_AS_TEXT = "VARCHAR2"
_XID_HEX = re.compile(r"0x([0-9a-fA-F]{1,8})\.([0-9a-fA-F]{1,8})\.([0-9a-fA-F]{1,8})")
_XID_DEC = re.compile(r"([0-9]{1,10})\.([0-9]{1,10})\.([0-9]{1,10})")


def normal_xid(text):
    """The normalized form `0xuuuu.sss.qqqqqqqq` of an xid text (hex `0xu.s.q` or dotted
    decimal `u.s.q`, docs/olr.md), or None."""
    if not isinstance(text, str):
        return None
    m = _XID_HEX.fullmatch(text)
    base = 16
    if m is None:
        m, base = _XID_DEC.fullmatch(text), 10
    if m is None:
        return None
    usn, slot, sqn = (int(g, base) for g in m.groups())
    if usn > 0xFFFF or slot > 0xFFFF or sqn > 0xFFFFFFFF:
        return None
    return f"0x{usn:04x}.{slot:03x}.{sqn:08x}"


def olr_type(ctype: ColumnType) -> ColumnType:
    """The type a catalog column has in an `olr` table: DATE is Oracle's, with a time of day
    (timestamp[us], SPEC §2); every other type as the catalog says."""
    if ctype.kind == DATE32:
        return ColumnType(ctype.name, ctype.base, TIMESTAMP, length=ctype.length)
    return ctype


def _whole(v):
    """A JSON integer (or its text); anything else → None."""
    if isinstance(v, bool):
        return None
    if isinstance(v, int):
        return v
    if isinstance(v, str) and re.fullmatch(r"-?[0-9]+", v):
        return int(v)
    return None


def type_name(col: dict) -> str:
    """The catalog type name of one `schema.columns` entry (docs/olr.md, "Columns and their
    types"), so a catalog built from them round-trips through Catalog.to_dict()."""
    t = col.get("type")
    t = re.sub(r"\s+", " ", t.strip().lower()) if isinstance(t, str) else ""
    if t == "number":
        p, s = _whole(col.get("precision")), _whole(col.get("scale"))
        s = 0 if s is None else s
        if p is None or not 1 <= p <= 38 or not 0 <= s <= p:
            return "NUMBER"         # no precision, or beyond decimal128: the exact text
        return f"NUMBER({p},{s})"
    if t in _SIZED:
        n = _whole(col.get("length"))
        return f"{_SIZED[t]}({n})" if n is not None and n > 0 else _SIZED[t]
    return _PLAIN.get(t, _AS_TEXT)


def column_type(col: dict) -> ColumnType:
    """The catalog type of one `schema.columns` entry (a DATE stays DATE here: olr_type makes
    it a timestamp when a layout is built)."""
    return parse_type(type_name(col))


def kinds_column(name: str) -> LCol:
    """The column of a key met in the images of a JSON-kinds layout."""
    return LCol(name, KINDS_TYPE, True)


class Olr(Format):
    name = "olr"
    RUNNER = "cdcfast.formats._olr_run:native_batches"
    REFERENCE = "cdcfast.reference.olr:reference_batches"
    # threads: pieces cut where a line opens an object (the kernel's own cut); seq counts
    # the call's records; the carried scn/tm of open transactions are guessed for a piece
    # from the bytes before it (speculate) and checked at the join (carried_agrees)
    THREADED = True
    SEQ_SCOPE = "call"
    CARRIED_OWN = frozenset({"olr_carry"})
    SUMMARY = "OpenLogReplicator JSON output (Oracle redo log)"
    HELP = {
        "epoch_unit": "the unit of epoch times (tm and DATE/TIMESTAMP values): s, ms, us, ns, "
                      "or auto (by the number of digits)",
    }
    DEFAULTS = {"epoch_unit": "auto"}
    source_type = SOURCE
    TITLE = "OpenLogReplicator JSON (Oracle)"
    EXTENSION = "json"
    NATIVE = ("_olr", "_walk", "_rows", "_arrow")
    ENCODER = "olr"
    # OLR's schema.columns describe a table only once one of its messages is read
    CATALOG_ADVICE = (": build one from a sample of messages written with schema.columns (the "
                      "writer's schema format \"full\") with cdcfast.Catalog.from_olr(messages), "
                      "or write one from the tables' DDL, and pass it as catalog=…; for the data "
                      "source, write it with Catalog.save(path) and give "
                      ".option(\"catalog\", path)")

    @property
    def FIRST_PIECE_ALONE(self) -> bool:
        """Without a catalog, the layouts its first piece types from the data (or fixes from
        schema.columns) are the later pieces' (cdcfast/pieces.py)."""
        return not self.catalog

    @classmethod
    def catalog_from(cls, messages) -> Catalog:
        """The tables the `schema.columns` of data elements describe (Catalog.from_olr, whose
        docstring gives the rules)."""
        tables: dict[str, Table] = {}
        for where, j, owner, tname, columns in _olr_definitions(messages):
            name = f"{owner}.{tname}" if owner else tname
            if not isinstance(columns, list) or not all(
                    isinstance(c, dict) and isinstance(c.get("name"), str) for c in columns):
                raise ValueError(f"{where}, payload[{j}]: table {name}: 'columns' is not a "
                                 "list of objects with a name")
            cols, seen = [], set()
            for c in columns:
                if c["name"] not in seen:
                    seen.add(c["name"])
                    cols.append(Column(c["name"], parse_type(type_name(c)),
                                       c.get("nullable") is not False))
            tables[name] = Table(owner, tname, tuple(cols))
        return Catalog(list(tables.values()))

    def __init__(self, catalog, **options):
        super().__init__(catalog, **options)
        unit = str(self.options["epoch_unit"]).lower()
        if unit not in EPOCH_UNITS:
            raise ValueError(f"epoch_unit must be one of {', '.join(EPOCH_UNITS)}, "
                             f"not {self.options['epoch_unit']!r}")
        self.options["epoch_unit"] = unit
        self._catalog_layouts = {}

    # -- the envelope ----------------------------------------------------------------------
    def columns(self, table, ncols=0):
        if table is None:
            return []
        return [(c.name, olr_type(c.type).arrow_type) for c in table.columns]

    # -- layouts ---------------------------------------------------------------------------
    def catalog_layout(self, table: Table) -> Layout:
        """A catalog table's layout (its DATE columns timestamps)."""
        lay = self._catalog_layouts.get(table.name)
        if lay is None:
            cols = [LCol(c.name, olr_type(c.type), c.nullable) for c in table.columns]
            lay = self._catalog_layouts[table.name] = Layout.of(table.name, table, cols)
        return lay

    def schema_layout(self, name: str, columns_json: list) -> Layout:
        """The layout of a table the catalog lacks, from the `schema.columns` of its first
        data event: entries in order, a name given twice taken once (the first)."""
        cols, seen = [], set()
        for col in columns_json:
            cname = col["name"]
            if cname in seen:
                continue
            seen.add(cname)
            cols.append(LCol(cname, olr_type(column_type(col)), col.get("nullable") is not False))
        return Layout.of(name, None, cols)

    def kinds_layout(self, name: str) -> Layout:
        """An empty layout that grows by the keys met in the table's images (JSON kinds)."""
        return Layout.of(name, None, [], grow=kinds_column)

    # -- decoding --------------------------------------------------------------------------
    def table_of(self, batches):
        return grown_table(batches)

    def can_split(self, native: bool) -> bool:
        return True                 # a byte search: no kernel needed

    def find_record_start(self, data, offset: int, native: bool, known: int) -> int:
        return record_start(data, offset)

    # -- threads: the carried scn / tm across pieces (cdcfast/pieces.py) ------------------
    def carried_agrees(self, carried: dict, want) -> bool:
        """The carried fields a piece read before it wrote them are what the pieces before
        it left: a given entry's value, or none where none is (one comparison of arrays:
        a piece may have read as many as it met transactions)."""
        notes = getattr(want, "carry_notes", None)
        if not notes or not notes[0]:
            return True
        d = np.frombuffer(notes[0], CARRY)
        now = np.frombuffer(carried.get("olr_carry", b""), CARRY)
        scn = (d["flags"] & C_DEP_SCN) != 0
        given = (d["flags"] & C_GIVEN) != 0
        used_has = np.where(scn, d["has_scn"], d["has_tm"]).astype(bool) & given
        used = np.where(used_has, np.where(scn, d["scn"], d["tm"]), 0)
        order = np.argsort(now["xid"], kind="stable")
        at = np.searchsorted(now["xid"], d["xid"], sorter=order)
        at = order[np.minimum(at, max(len(now) - 1, 0))] if len(now) else at
        found = (now["xid"][at] == d["xid"]) if len(now) else np.zeros(len(d), bool)
        e = now[at] if len(now) else np.zeros(len(d), CARRY)
        real_has = np.where(scn, e["has_scn"], e["has_tm"]).astype(bool) & found
        real = np.where(real_has, np.where(scn, e["scn"], e["tm"]), 0)
        return bool(np.array_equal(used_has, real_has) and np.array_equal(used, real))

    def carried_merge(self, carried: dict, want) -> None:
        """The open transactions a piece touched as it left them (a field it never wrote of
        one it was given: as the pieces before it left it), the others as they were."""
        notes = getattr(want, "carry_notes", None)
        if notes is None:
            return
        now = _carry_entries(carried.get("olr_carry", b""))
        touched = np.frombuffer(notes[1], np.uint64)
        xs = np.fromiter(now, np.uint64, len(now))
        out = {int(x): now[int(x)] for x in xs[~np.isin(xs, touched)]}
        final = np.frombuffer(want.carried.get("olr_carry", b""), CARRY).copy()
        for e in final[np.isin(final["xid"], touched)]:
            x = int(e["xid"])
            base = now.get(x)
            if e["flags"] & C_GIVEN:
                for f, own in (("scn", C_OWN_SCN), ("tm", C_OWN_TM)):
                    if not e["flags"] & own:
                        e["has_" + f] = base["has_" + f] if base is not None else 0
                        e[f] = base[f] if base is not None else 0
            out[x] = e
        carried["olr_carry"] = _carry_bytes(out)

    def speculate(self, part, piece, carried: dict) -> None:
        """The transactions open at a piece's start, most likely: the kernel run over the
        SPECULATE_BYTES before it (a transaction begun earlier is missed; the join then finds
        the piece relied on other values, and decodes it again)."""
        from .. import _olr
        if piece.count == 1 and part.count == 1:
            p, lo = int(piece.offsets[0]), int(part.offsets[0])
            a = max(lo, record_start(part.data, max(lo, p - SPECULATE_BYTES)))
            offsets, valid = np.array([a, p], dtype=np.int64), None
        else:
            i = piece.base - part.base
            j = max(0, int(np.searchsorted(part.offsets, part.offsets[i] - SPECULATE_BYTES)))
            offsets = part.offsets[j:i + 1]
            valid = None if part.valid is None else part.valid[j:i]
        if len(offsets) < 2 or offsets[-1] <= offsets[0]:
            return
        sc = _olr.Scanner(part.data, offsets, valid, False,
                          EPOCH_UNITS.index(self.options["epoch_unit"]))
        while True:
            r = sc.run()
            if r == STOP_TABLE:
                sc.add_table(sc.pending_name, -1)
            elif r != STOP_PAUSE:           # the end (nothing else stops without outputs)
                break
        got = _carry_entries(sc.carry_state())
        if got:
            now = _carry_entries(carried.get("olr_carry", b""))
            now.update(got)
            carried["olr_carry"] = _carry_bytes(now)



# the kernel's carry entries (native/cdcfast/_olr.pyx, Carry) and their flags
CARRY = np.dtype([("xid", "<u8"), ("scn", "<i8"), ("tm", "<i8"), ("has_scn", "u1"),
                  ("has_tm", "u1"), ("flags", "u1")], align=True)
C_GIVEN, C_SEEN, C_OWN_SCN, C_OWN_TM, C_DEP_SCN, C_DEP_TM = 1, 2, 4, 8, 16, 32
SPECULATE_BYTES = 1 << 18       # the bytes before a piece its carried state is guessed from


def _carry_entries(state: bytes) -> dict:
    return {int(e["xid"]): e for e in np.frombuffer(state, CARRY).copy()}


def _carry_bytes(entries: dict) -> bytes:
    a = np.array(list(entries.values()), dtype=CARRY) if entries else np.zeros(0, CARRY)
    return a.tobytes()


# -- OpenLogReplicator schema.columns (SPEC §5.4) -------------------------------------------
def _olr_definitions(messages):
    """Yield (where, element index, owner or None, table, columns as sent) for each payload
    element whose schema names a table and carries columns."""
    for where, doc in documents(messages):
        payload = doc.get("payload") if isinstance(doc, dict) else None
        for j, el in enumerate(payload if isinstance(payload, list) else ()):
            schema = el.get("schema") if isinstance(el, dict) else None
            if not isinstance(schema, dict) or schema.get("columns") is None:
                continue
            tname, owner = schema.get("table"), schema.get("owner")
            if isinstance(tname, str) and tname:
                yield (where, j, owner if isinstance(owner, str) and owner else None, tname,
                       schema["columns"])
