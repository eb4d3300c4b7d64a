"""`qlik`: Qlik Replicate JSON data messages, Kafka envelope or Pub/Sub form (SPEC §5.5).

Decisions SPEC leaves open are in docs/qlik.md. This module holds what every decoder of the
format shares: the `source` struct, the operation codes, and table *layouts* — a table's
columns in the order its masks count them, from the catalog, else from a metadata message of
the input, else (`derived`) from the data's keys as they are met, all strings — and the
reading of metadata messages (`qlik_metadata`), which the decoders and `catalog_from` (behind
Catalog.from_qlik) share. The reference twin is cdcfast/reference/qlik.py.
"""
from __future__ import annotations

from dataclasses import dataclass, replace

import pyarrow as pa

from ..catalog import STRING, Catalog, Column, ColumnType, Frozen, Table, parse_type
from ..errors import show_value
from ._jsonmessages import (LCol, Layout, documents, int_or_none, record_start,
                             utf8_text)
from .base import Format

SOURCE = pa.struct([
    pa.field("change_sequence", pa.string()), pa.field("stream_position", pa.string()),
    pa.field("change_mask", pa.string()), pa.field("column_mask", pa.string()),
    pa.field("transaction_last_event", pa.bool_()), pa.field("operation", pa.string()),
])

# headers.operation -> op (seed "Data message"); anything else is an error on the row
OPS = {"INSERT": "c", "UPDATE": "u", "DELETE": "d", "REFRESH": "r"}

# what the error texts of both decoders say (docs/qlik.md)
OPERATIONS = ", ".join(OPS)
TIMESTAMP_FORM = "is not a timestamp (YYYY-MM-DD HH:MM:SS[.f])"
# a messageSchemaId that names no metadata message before it and no catalog table
LACKS_METADATA = ("names metadata this input lacks: no metadata message before it and no "
                  "catalog table has that schemaId; give a catalog built with "
                  "cdcfast.Catalog.from_qlik over the metadata (MD) messages")


def shown(raw: bytes) -> str:
    """How a value is quoted in an error text (docs/qlik.md): a JSON string by its text
    between the quotes, escapes as sent; any other value by its JSON text."""
    if raw[:1] == b'"' and len(raw) >= 2:
        raw = raw[1:-1]
    return show_value(raw)


# a column of a table known only from its data: Replicate's own name for text
DERIVED = ColumnType("STRING", "STRING", STRING, is_char=True)


@dataclass(frozen=True)
class QlikCol(LCol):
    """One column of a layout (its position: its bit in the masks)."""
    lob: bool               # left out of changeMask by Qlik: null in `changed`


def derived_column(name: str) -> QlikCol:
    """The column of a key met in the data of a table known only from its data."""
    return QlikCol(name, DERIVED, True, False)


def table_layout(name: str, table: Table) -> Layout:
    """The layout of a described table: its columns, types and LOB flags."""
    return Layout.of(name, table, [QlikCol(c.name, c.type, c.nullable, c.type.is_lob)
                                   for c in table.columns])


class Qlik(Format):
    name = "qlik"
    RUNNER = "cdcfast.formats._qlik_run:native_batches"
    REFERENCE = "cdcfast.reference.qlik:reference_batches"
    # threads: pieces cut where a line opens an object (the kernel's own cut); seq counts
    # the call's records (transactionEventCounter, the vendor's, is kept)
    THREADED = True
    SEQ_SCOPE = "call"
    FIRST_PIECE_ALONE = True        # its metadata messages name the later pieces' tables
    SUMMARY = "Qlik Replicate data messages, Kafka envelope or Pub/Sub form"
    DEFAULTS: dict = {}
    source_type = SOURCE
    TITLE = "Qlik Replicate JSON (Kafka)"
    EXTENSION = "json"
    NATIVE = ("_qlik", "_walk", "_rows", "_arrow")
    ENCODER = "qlik"
    # Qlik's metadata messages describe a table, but they are messages of the input too
    CATALOG_ADVICE = (": build one from Qlik Replicate's metadata messages (type MD) with "
                      "cdcfast.Catalog.from_qlik(messages), and pass it as catalog=…; for the "
                      "data source, write it with Catalog.save(path) and give "
                      ".option(\"catalog\", path)")

    @classmethod
    def catalog_from(cls, messages) -> Catalog:
        """The tables Qlik Replicate's metadata messages describe, each with the schemaIds of
        its metadata messages (Catalog.from_qlik, whose docstring gives the rules)."""
        tables: dict[str, Table] = {}   # by Table.name, in order of first definition
        owner: dict[str, str] = {}      # schemaId -> Table.name, in order of first meeting
        for where, body, prefix in _qlik_bodies(messages):
            try:
                meta = qlik_metadata(body)
            except QlikBadMetadata as e:
                path = ".".join(prefix + e.path)
                shown = "missing" if e.value is None else f"{e.value!r} {e.reason}"
                raise ValueError(f"{where}: {path}: {shown}") from None
            if meta.definition is not None:
                tables[meta.definition.name] = meta.definition
            if meta.schema_id is not None:
                owner[meta.schema_id] = f"{meta.schema}.{meta.table}" if meta.schema \
                    else meta.table
        return Catalog([replace(t, qlik_schema_ids=tuple(s for s, n in owner.items()
                                                         if n == t.name))
                        for t in tables.values()])

    def __init__(self, catalog, **options):
        super().__init__(catalog, **options)
        self._catalog_layouts = {}

    # -- the envelope ----------------------------------------------------------------------
    def columns(self, table, ncols=0):
        if table is None:
            return []
        return [(c.name, c.type.arrow_type) for c in table.columns]

    # -- layouts ---------------------------------------------------------------------------
    def catalog_layout(self, table: Table) -> Layout:
        lay = self._catalog_layouts.get(table.name)
        if lay is None:
            lay = self._catalog_layouts[table.name] = table_layout(table.name, table)
        return lay

    @staticmethod
    def derived_layout(name: str) -> Layout:
        """A fresh layout of a table known only from its data (one per call: it grows)."""
        return Layout.of(name, None, [], grow=derived_column)

    # -- decoding --------------------------------------------------------------------------
    def table_of(self, batches: list) -> pa.Table:
        """One output's batches as a table: a derived layout may have grown between them, and
        an earlier batch then gets the later columns as nulls (docs/qlik.md)."""
        if all(b.schema == batches[0].schema for b in batches):
            return pa.Table.from_batches(batches)
        return pa.concat_tables([pa.Table.from_batches([b]) for b in batches],
                                promote_options="permissive")

    def can_split(self, native: bool) -> bool:
        return True                 # a byte search: no kernel needed

    def find_record_start(self, data, offset: int, native: bool, known: int) -> int:
        return record_start(data, offset)



# -- Qlik Replicate metadata messages (SPEC §5.5) -------------------------------------------
# Replicate data type → catalog type name; sized ones take the column's `length`.
_QLIK_PLAIN = {
    "INT1": "TINYINT", "INT2": "SMALLINT", "UINT1": "SMALLINT", "INT4": "INTEGER",
    "UINT2": "INTEGER", "INT8": "BIGINT", "UINT4": "BIGINT", "UINT8": "DECIMAL(20,0)",
    "REAL4": "REAL", "REAL8": "DOUBLE", "CLOB": "CLOB", "NCLOB": "NCLOB", "BLOB": "BLOB",
    "DATE": "DATE", "BOOLEAN": "BOOLEAN",
}
_QLIK_SIZED = {"STRING": "VARCHAR", "WSTRING": "NVARCHAR2", "BYTES": "VARBINARY"}
_QLIK_FRACTION = {"TIME": "TIME", "DATETIME": "TIMESTAMP"}


class QlikBadMetadata(ValueError):
    """A metadata message that cannot be read: the field's key path under the message body,
    and what is wrong with its value (`value` None: the field is missing or null)."""

    def __init__(self, path: tuple, reason: str, value=None):
        super().__init__(f"{'.'.join(path)}: {reason}")
        self.path, self.reason, self.value = path, reason, value


@dataclass(frozen=True)
class QlikMetadata(Frozen):
    """What one metadata message says: its schemaId (None when it has none), the table it
    describes, and that table's definition (None without a tableStructure)."""
    schema_id: str | None
    schema: str | None
    table: str
    definition: Table | None


def qlik_metadata(body: dict) -> QlikMetadata:
    """Read one metadata message body (the Kafka envelope's ``message``, or the Pub/Sub
    document itself); raises QlikBadMetadata. Shared by Catalog.from_qlik and the decoders,
    so that a metadata message met in a data stream types its table as the catalog would."""
    lineage = body.get("lineage")
    if not isinstance(lineage, dict):
        raise QlikBadMetadata(("lineage",), "is not an object", lineage)
    table = lineage.get("table")
    if type(table) is not str or not table or not utf8_text(table):   # a JSON string's text
        raise QlikBadMetadata(("lineage", "table"), "is not a table name", table or None)
    schema = lineage.get("schema")
    schema = schema if type(schema) is str and schema and utf8_text(schema) else None
    sid = body.get("schemaId")
    if sid is not None:
        if isinstance(sid, bool) or not isinstance(sid, (str, int)):
            raise QlikBadMetadata(("schemaId",), "is not a string", sid)
        sid = str(sid)
    structure = body.get("tableStructure")
    if structure is None:
        return QlikMetadata(sid, schema, table, None)
    if not isinstance(structure, dict):
        raise QlikBadMetadata(("tableStructure",), "is not an object", structure)
    columns = structure.get("tableColumns")
    if not isinstance(columns, dict):
        raise QlikBadMetadata(("tableStructure", "tableColumns"), "is not an object", columns)
    return QlikMetadata(sid, schema, table, _qlik_table(schema, table, columns))


def _qlik_table(schema, table, columns: dict) -> Table:
    items = list(columns.items())
    for name, cd in items:
        if not isinstance(cd, dict):
            raise QlikBadMetadata(("tableStructure", "tableColumns", name), "is not an object",
                                  cd)
        if not name or not utf8_text(name):       # (a lone surrogate names no Arrow field)
            raise QlikBadMetadata(("tableStructure", "tableColumns"),
                                  "has a column without a name", columns)
    ordinals = [int_or_none(cd.get("ordinal")) for _, cd in items]
    if all(o is not None for o in ordinals):
        order = sorted(range(len(items)), key=ordinals.__getitem__)   # stable: ties as sent
        items = [items[i] for i in order]
    cols = tuple(Column(name, parse_type(_qlik_type_name(cd))) for name, cd in items)
    keyed = [(p, name) for name, cd in items
             if (p := int_or_none(cd.get("primaryKeyPosition"))) is not None and p > 0]
    key = tuple(name for _, name in sorted(keyed, key=lambda pk: pk[0]))
    return Table(schema, table, cols, key)


def _qlik_type_name(column: dict) -> str:
    """The catalog type name of one ``tableColumns`` entry (Catalog.from_qlik)."""
    t = column.get("type")
    t = t.strip().upper() if isinstance(t, str) else ""
    if t in _QLIK_PLAIN:
        return _QLIK_PLAIN[t]
    if t in _QLIK_SIZED:
        n = int_or_none(column.get("length"))
        return f"{_QLIK_SIZED[t]}({n})" if n is not None and n > 0 else _QLIK_SIZED[t]
    if t == "NUMERIC":
        p = int_or_none(column.get("precision"))
        s = int_or_none(column.get("scale")) or 0
        if p is None or not 1 <= p <= 38 or not 0 <= s <= p:
            return "DECFLOAT"                 # beyond decimal128: kept as exact text
        return f"DECIMAL({p},{s})"
    if t in _QLIK_FRACTION:
        s = int_or_none(column.get("scale"))
        return f"{_QLIK_FRACTION[t]}({s})" if s is not None and 0 <= s <= 12 \
            else _QLIK_FRACTION[t]
    return "VARCHAR"                          # a type the list lacks: the value's text


def _qlik_bodies(messages):
    """Yield (where, body, key path of the body) for each metadata message."""
    for where, doc in documents(messages):
        if not isinstance(doc, dict):
            continue
        body, prefix = doc, ()
        if "message" in doc:
            body, prefix = doc["message"], ("message",)
            if not isinstance(body, dict):
                continue
        if doc.get("type") == "MD" or "tableStructure" in body:
            yield where, body, prefix
