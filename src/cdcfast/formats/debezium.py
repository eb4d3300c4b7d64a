"""`debezium`: Debezium change events, JSON converter (SPEC §5.3).

Decisions SPEC leaves open are in docs/debezium.md. This module validates options, reads the
embedded Kafka Connect schemas into table layouts (once per distinct schema, never per
value), builds catalogs from schema-change events and embedded schemas (`catalog_from`,
behind Catalog.from_debezium) and describes errors; the reference twin is
cdcfast/reference/debezium.py.

A *layout* is what a decoder needs for one table: its columns (name, Arrow type, the type an
error names) and, per column, how the connector wrote the value (its *encoding*): from the
message's embedded schema when there is one, else from the catalog type and the options.
"""
from __future__ import annotations

from dataclasses import dataclass

import pyarrow as pa

from ..catalog import (BINARY, BOOL, DATE32, DECIMAL, DECTEXT, FLOAT32, FLOAT64, INT8, INT16,
                       INT32, INT64, STRING, TIME64, TIMESTAMP, TIMESTAMP_TZ, Catalog, Column,
                       ColumnType, Table, parse_type)
from ..envelope import UTC_US
from ._debezium_codes import (EN_B64 as B64, EN_B64DEC as B64DEC, EN_DAYS as DAYS,
                              EN_JSONTEXT as JSONTEXT, EN_MS as MS, EN_NS as NS,
                              EN_PLAIN as PLAIN, EN_US as US, EN_VSD as VSD,
                              EN_ZONED as ZONED)
from ._jsonmessages import LCol, Layout, documents, int_or_none, record_start
from .base import Format, grown_table

SOURCE = pa.struct([
    pa.field("version", pa.string()), pa.field("connector", pa.string()),
    pa.field("name", pa.string()), pa.field("db", pa.string()),
    pa.field("snapshot", pa.string()), pa.field("processed_ts", UTC_US),
    pa.field("change_lsn", pa.string()), pa.field("commit_lsn", pa.string()),
    pa.field("data_collection_order", pa.int64()), pa.field("event_count", pa.int64()),
    pa.field("data_collections", pa.string()),
])

# Encodings: how the connector wrote a value (docs/debezium.md, "Columns and their types").
# PLAIN is a value as its JSON kind says; a temporal column then uses its default unit.

DECIMAL_HANDLING = ("precise", "string", "double")
TIME_PRECISION = ("adaptive", "adaptive_time_microseconds", "connect")

KAFKA = "org.apache.kafka.connect.data."
DBZ_TIME = "io.debezium.time."
# semantic name -> (encoding, kind) for integer fields
_INT_NAMED = {
    KAFKA + "Date": (DAYS, DATE32), DBZ_TIME + "Date": (DAYS, DATE32),
    KAFKA + "Time": (MS, TIME64), DBZ_TIME + "Time": (MS, TIME64),
    DBZ_TIME + "MicroTime": (US, TIME64), DBZ_TIME + "NanoTime": (NS, TIME64),
    KAFKA + "Timestamp": (MS, TIMESTAMP), DBZ_TIME + "Timestamp": (MS, TIMESTAMP),
    DBZ_TIME + "MicroTimestamp": (US, TIMESTAMP), DBZ_TIME + "NanoTimestamp": (NS, TIMESTAMP),
}
_INT_TYPES = {"int8": INT8, "int16": INT16, "int32": INT32, "int64": INT64}
_FLOAT_TYPES = {"float": FLOAT32, "float32": FLOAT32, "double": FLOAT64, "float64": FLOAT64}


@dataclass(frozen=True)
class DbzCol(LCol):
    """One column of a layout, with how the connector writes its values by default."""
    enc: int                # the default encoding (PLAIN, DAYS, B64DEC, …)
    scale: int = 0          # B64DEC: the scale of the unscaled integer
    unit: int = US          # TIME64/TIMESTAMP columns: the unit of a PLAIN integer


def _type(label: str, kind: int, precision: int = 0, scale: int = 0) -> ColumnType:
    return ColumnType(label, label, kind, precision=precision, scale=scale)


def field_encoding(fs: dict) -> tuple[int, int, ColumnType]:
    """(encoding, scale, ColumnType) of one Kafka Connect field schema, as SPEC §5.3 and
    docs/debezium.md map it when no catalog says otherwise."""
    t = fs.get("type")
    t = t if isinstance(t, str) else ""
    name = fs.get("name")
    name = name if isinstance(name, str) else ""
    params = fs.get("parameters")
    params = params if isinstance(params, dict) else {}
    if t in _INT_TYPES:
        if name in _INT_NAMED:
            enc, kind = _INT_NAMED[name]
            return enc, 0, _type(name, kind)
        return PLAIN, 0, _type(t, _INT_TYPES[t])
    if t in _FLOAT_TYPES:
        return PLAIN, 0, _type(t, _FLOAT_TYPES[t])
    if t == "boolean":
        return PLAIN, 0, _type(t, BOOL)
    if t == "string":
        if name == DBZ_TIME + "ZonedTimestamp":
            return ZONED, 0, _type(name, TIMESTAMP_TZ)
        return PLAIN, 0, _type(name or t, STRING)
    if t == "bytes":
        if name == KAFKA + "Decimal":
            scale = _int_param(params.get("scale"), 0)
            prec = _int_param(params.get("connect.decimal.precision"), 38)
            label = f"{name}(scale={scale})"
            if not 1 <= prec <= 38 or not 0 <= scale <= 38:
                return B64DEC, scale, _type(label, DECTEXT)
            return B64DEC, scale, _type(label, DECIMAL, max(prec, scale), scale)
        return B64, 0, _type(name or t, BINARY)
    if t == "struct" and name == "io.debezium.data.VariableScaleDecimal":
        return VSD, 0, _type(name, DECTEXT)
    return JSONTEXT, 0, _type(name or t or "unknown", STRING)


def _int_param(v, default: int) -> int:
    try:
        return int(v)
    except (TypeError, ValueError):
        return default


def image_fields(schema) -> list | None:
    """The column field schemas of an envelope schema (its `after` field, else `before`), or
    None when the schema does not describe row images."""
    if not isinstance(schema, dict) or not isinstance(schema.get("fields"), list):
        return None
    found = {}
    for f in schema["fields"]:
        if isinstance(f, dict) and f.get("field") in ("after", "before") \
                and isinstance(f.get("fields"), list):
            found.setdefault(f["field"], f["fields"])
    fields = found.get("after", found.get("before"))
    if fields is None:
        return None
    return [f for f in fields if isinstance(f, dict) and type(f.get("field")) is str]


class Debezium(Format):
    name = "debezium"
    RUNNER = "cdcfast.formats._dbz_run:native_batches"
    REFERENCE = "cdcfast.reference.debezium:reference_batches"
    # threads: pieces cut where a line opens an object (the kernel's own cut); seq counts
    # the call's records (transaction.total_order, the vendor's, is kept)
    THREADED = True
    SEQ_SCOPE = "call"
    SUMMARY = "Debezium change events, JSON converter (the Db2 connector documented)"
    HELP = {
        "decimal_handling": "without embedded schemas, how the connector wrote DECIMAL: "
                            "precise (base64 unscaled), string or double",
        "time_precision": "without embedded schemas, how it wrote times: adaptive, "
                          "adaptive_time_microseconds or connect",
    }
    DEFAULTS = {"decimal_handling": "precise", "time_precision": "adaptive"}
    source_type = SOURCE
    TITLE = "Debezium JSON (Db2 connector)"
    EXTENSION = "json"
    NATIVE = ("_debezium", "_arrow")
    ENCODER = "debezium"
    # Debezium's embedded schemas (schemas.enable=true) do describe a table, but only once a
    # message of it has been read, and Spark must know the schema before it reads anything
    CATALOG_ADVICE = (" (a Debezium table's embedded schema is only known once one of its "
                      "messages is read): build one from a sample of messages, schema-change "
                      "events or messages written with schemas.enable=true, with "
                      "cdcfast.Catalog.from_debezium(messages), and pass it as catalog=…; for "
                      "the data source, write it with Catalog.save(path) and give "
                      ".option(\"catalog\", path)")

    @classmethod
    def catalog_from(cls, messages) -> Catalog:
        """The tables of Debezium schema-change events and of the schemas embedded in data
        change events (Catalog.from_debezium, whose docstring gives the rules)."""
        tables: dict[str, Table] = {}   # by Table.name, in order of first definition
        for where, payload, schema in _debezium_payloads(messages):
            changes = payload.get("tableChanges")
            if changes is None:
                t = _debezium_embedded_table(payload, schema)
                if t is not None and t.name not in tables:
                    tables[t.name] = t
                continue
            if not isinstance(changes, list):
                raise ValueError(f"{where}: 'tableChanges' is not a list")
            source = payload.get("source") if isinstance(payload.get("source"), dict) else {}
            for j, change in enumerate(changes):
                at = f"{where}, tableChanges[{j}]"
                if not isinstance(change, dict):
                    raise ValueError(f"{at} is not an object")
                schema, tname = _debezium_table_id(change.get("id"), source, at)
                name = f"{schema}.{tname}" if schema else tname
                if str(change.get("type") or "").upper() == "DROP":
                    tables.pop(name, None)
                    continue
                tdef = change.get("table")
                if not isinstance(tdef, dict):
                    continue
                # An ALTER replaces the definition in place (dict order: first definition).
                tables[name] = _debezium_table(schema, tname, tdef, at)
        return Catalog(list(tables.values()))

    def __init__(self, catalog, **options):
        super().__init__(catalog, **options)
        o = self.options
        for key, allowed in (("decimal_handling", DECIMAL_HANDLING),
                             ("time_precision", TIME_PRECISION)):
            o[key] = str(o[key]).lower()
            if o[key] not in allowed:
                raise ValueError(f"{key} must be one of {', '.join(allowed)}, not {o[key]!r}")
        self._catalog_layouts = {}
        self._schema_cache = {}     # id of a parsed schema's text -> field encodings

    # -- the envelope ----------------------------------------------------------------------
    def columns(self, table, ncols=0):
        if table is None:
            return []
        return [(c.name, c.type.arrow_type) for c in table.columns]

    # -- layouts ---------------------------------------------------------------------------
    def catalog_layout(self, table: Table) -> Layout:
        """A catalog table's layout: its types, encodings from the options."""
        lay = self._catalog_layouts.get(table.name)
        if lay is None:
            cols = [self.catalog_column(c) for c in table.columns]
            lay = self._catalog_layouts[table.name] = Layout.of(table.name, table, cols)
        return lay

    def catalog_column(self, col) -> DbzCol:
        t = col.type
        o = self.options
        enc, scale, unit = PLAIN, 0, US
        if t.kind == DECIMAL and o["decimal_handling"] == "precise":
            enc, scale = B64DEC, t.scale
        elif t.kind == BINARY:
            enc = B64
        elif t.kind == DATE32:
            enc = DAYS
        elif t.kind == TIME64:
            unit = MS if o["time_precision"] == "connect" else \
                US if o["time_precision"] == "adaptive_time_microseconds" else \
                _adaptive_unit(t.precision)
        elif t.kind == TIMESTAMP:
            unit = MS if o["time_precision"] == "connect" else _adaptive_unit(t.precision)
        elif t.kind == TIMESTAMP_TZ:
            enc = ZONED
        return DbzCol(col.name, t, col.nullable, enc, scale, unit)

    def schema_layout(self, name: str, fields: list) -> Layout:
        """The layout of a table the catalog lacks, from its first embedded schema."""
        cols, seen = [], set()
        for fs in fields:
            if fs["field"] in seen:
                continue
            seen.add(fs["field"])
            enc, scale, ctype = field_encoding(fs)
            cols.append(DbzCol(fs["field"], ctype, fs.get("optional", True) is not False,
                               enc, scale))
        return Layout.of(name, None, cols)

    def overrides(self, fields: list) -> dict:
        """column name -> (encoding, scale) of one message's embedded schema."""
        return {fs["field"]: field_encoding(fs)[:2] for fs in fields}

    # -- decoding --------------------------------------------------------------------------
    def table_of(self, batches: list) -> pa.Table:
        """One output's batches as a table: rows met before their table's embedded schema
        (unattributable ones in decode(table=None), an earlier part of a chunked source) were
        written without its columns, and get them as nulls (grown_table)."""
        return grown_table(batches)

    def can_split(self, native: bool) -> bool:
        return True                 # a byte search: no kernel needed

    def find_record_start(self, data, offset: int, native: bool, known: int) -> int:
        return record_start(data, offset)



def _adaptive_unit(p: int) -> int:
    return MS if p <= 3 else US if p <= 6 else NS



# -- Debezium schema-change events (SPEC §5.3, seed "Schema change topic") ----------------
# java.sql.Types code → catalog type name. Sized types take the column's `length`.
_JDBC_PLAIN = {
    4: "INTEGER", -5: "BIGINT", 5: "SMALLINT", -6: "SMALLINT",   # TINYINT → int16 (SPEC §5.3)
    8: "DOUBLE", 7: "REAL", 6: "DOUBLE",                          # FLOAT → float64
    -1: "LONG VARCHAR", -16: "NVARCHAR2", 2005: "CLOB", 2011: "NCLOB", 2009: "XML",
    91: "DATE", 2013: "VARCHAR",                                  # TIME WITH TIME ZONE: text
    16: "BOOLEAN", -7: "BOOLEAN", -4: "VARBINARY", 2004: "BLOB",
}
_JDBC_SIZED = {1: "CHAR", 12: "VARCHAR", -15: "NCHAR", -9: "NVARCHAR2", -2: "BINARY",
               -3: "VARBINARY"}
_JDBC_DECIMAL = {3: "DECIMAL", 2: "NUMERIC"}
_JDBC_FRACTION = {92: "TIME", 93: "TIMESTAMP", 2014: "TIMESTAMP"}


def _debezium_type_name(column: dict) -> str:
    """The catalog type name for one Debezium ``tableChanges[].table.columns[]`` entry."""
    code = int_or_none(column.get("jdbcType"))
    length = int_or_none(column.get("length"))
    scale = int_or_none(column.get("scale"))
    if code in _JDBC_PLAIN:
        return _JDBC_PLAIN[code]
    if code in _JDBC_SIZED:
        base = _JDBC_SIZED[code]
        return f"{base}({length})" if length is not None and length > 0 else base
    if code in _JDBC_DECIMAL:
        base = _JDBC_DECIMAL[code]
        if length is None and not scale:
            return base                       # the type's default, DECIMAL(5,0)
        p = 5 if length is None else length
        s = scale or 0
        if not 1 <= p <= 38 or not 0 <= s <= p:
            return "DECFLOAT"                 # beyond decimal128: kept as exact text
        return f"{base}({p},{s})"
    if code in _JDBC_FRACTION:
        base = _JDBC_FRACTION[code]
        frac = f"({scale})" if scale is not None and 0 <= scale <= 12 else ""
        return f"{base}{frac} WITH TIME ZONE" if code == 2014 else f"{base}{frac}"
    return "VARCHAR"                          # OTHER (1111), vendor and unknown types: text


def _debezium_payloads(messages):
    """Yield (where, payload dict, envelope schema or None) for each message that is an
    object."""
    for where, doc in documents(messages):
        schema = None
        if isinstance(doc, dict) and "payload" in doc:
            schema = doc.get("schema")        # the envelope form (schemas.enable=true)
            doc = doc["payload"]
        if isinstance(doc, dict):
            yield where, doc, schema


# Kinds of the decoder's own reading of an embedded field → catalog type names (TIME64 and
# TIMESTAMP take their fraction digits from the unit, DECIMAL its precision and scale).
_KIND_TYPE_NAME = {BOOL: "BOOLEAN", INT8: "TINYINT", INT16: "SMALLINT", INT32: "INTEGER",
                   INT64: "BIGINT", FLOAT32: "REAL", FLOAT64: "DOUBLE", STRING: "VARCHAR",
                   BINARY: "VARBINARY", DATE32: "DATE", TIMESTAMP_TZ: "TIMESTAMP WITH TIME ZONE",
                   DECTEXT: "DECFLOAT"}


def _connect_type_name(field_schema: dict) -> str:
    """The catalog type name of one Kafka Connect field schema of an embedded envelope
    schema: the type the decoder gives the field when no catalog has its table."""
    # the decoder's reading itself, so a catalog built here decodes the same values
    enc, _, ctype = field_encoding(field_schema)
    if ctype.kind == DECIMAL:
        return f"DECIMAL({ctype.precision},{ctype.scale})"
    if ctype.kind in (TIME64, TIMESTAMP):
        digits = {MS: 3, US: 6, NS: 9}[enc]
        return f"{'TIME' if ctype.kind == TIME64 else 'TIMESTAMP'}({digits})"
    return _KIND_TYPE_NAME[ctype.kind]


def _debezium_embedded_table(payload: dict, schema) -> Table | None:
    """The table a data change event's embedded schema describes, or None when the message
    is no such event or carries no row schema."""
    if "status" in payload or payload.get("op") in (None, "m"):
        return None
    source = payload.get("source")
    if not isinstance(source, dict):
        return None
    tname, sname = source.get("table"), source.get("schema")
    if not isinstance(tname, str) or not tname:
        return None                           # the decoder's corrupt record, not a table
    sname = sname if isinstance(sname, str) and sname else None
    fields = image_fields(schema)
    if fields is None:
        return None
    cols, seen = [], set()
    for fs in fields:
        if fs["field"] in seen:
            continue                          # the decoder reads the first one
        seen.add(fs["field"])
        cols.append(Column(fs["field"], parse_type(_connect_type_name(fs)),
                           fs.get("optional", True) is not False))
    return Table(sname, tname, tuple(cols))


def _split_table_id(text: str) -> list[str]:
    """``"A"."B.C"`` → ["A", "B.C"]; ``A.B`` → ["A", "B"]; ``""`` inside quotes is a quote."""
    parts, i, n = [], 0, len(text)
    while True:
        if i < n and text[i] == '"':
            buf, i = [], i + 1
            while i < n:
                if text[i] == '"':
                    if i + 1 < n and text[i + 1] == '"':
                        buf.append('"')
                        i += 2
                        continue
                    i += 1
                    break
                buf.append(text[i])
                i += 1
            else:
                raise ValueError(f"unterminated quote in table id {text!r}")
            parts.append("".join(buf))
            if i < n and text[i] != ".":
                raise ValueError(f"unexpected {text[i]!r} after a quoted part of table id "
                                 f"{text!r}")
        else:
            j = text.find(".", i)
            j = n if j < 0 else j
            parts.append(text[i:j])
            i = j
        if i >= n:
            return parts
        i += 1   # past the dot


def _debezium_table_id(tid, source, at):
    if isinstance(tid, str) and tid.strip():
        try:
            parts = _split_table_id(tid.strip())
        except ValueError as e:
            raise ValueError(f"{at}: {e}") from None
        if not parts[-1]:
            raise ValueError(f"{at}: table id {tid!r} names no table")
        schema = parts[-2] if len(parts) >= 2 else None
        return schema or None, parts[-1]
    table = source.get("table")
    if not isinstance(table, str) or not table:
        raise ValueError(f"{at} names no table (no 'id', no source.table)")
    schema = source.get("schema")
    return (schema if isinstance(schema, str) and schema else None), table


def _debezium_table(schema, tname, tdef, at) -> Table:
    name = f"{schema}.{tname}" if schema else tname
    raw = tdef.get("columns") or []
    if not isinstance(raw, list) or not all(isinstance(c, dict) for c in raw):
        raise ValueError(f"{at}: table {name}: 'columns' is not a list of objects")
    positions = [int_or_none(c.get("position")) for c in raw]
    if all(p is not None for p in positions):
        order = sorted(range(len(raw)), key=positions.__getitem__)   # stable: ties as sent
        raw = [raw[i] for i in order]
    cols, seen = [], set()
    for cd in raw:
        cname = cd.get("name")
        if not isinstance(cname, str) or not cname:
            raise ValueError(f"{at}: table {name}: a column has no name")
        if cname in seen:
            raise ValueError(f"{at}: table {name}: column {cname} is listed twice")
        seen.add(cname)
        optional = cd.get("optional")
        cols.append(Column(cname, parse_type(_debezium_type_name(cd)),
                           True if optional is None else bool(optional)))
    key = []
    pk = tdef.get("primaryKeyColumnNames")
    for k in pk if isinstance(pk, list) else ():
        if isinstance(k, str) and k in seen and k not in key:
            key.append(k)
    return Table(schema, tname, tuple(cols), tuple(key))
