"""Table descriptions (SPEC §2): column names, source types and their Arrow types.

A catalog is plain JSON, so that the command line, the Spark data source and Spark executors
can all be handed the same file. Type names are parsed once here into a :class:`ColumnType`
whose ``kind`` the kernels dispatch on when a decoder is built — never per value.
"""
from __future__ import annotations

import json
import os
import re
from dataclasses import dataclass, field, replace

import pyarrow as pa

# Value kinds: one per conversion the kernels know. The numbers are shared with native/.
BOOL, INT8, INT16, INT32, INT64, DECIMAL, FLOAT32, FLOAT64, STRING, BINARY, DATE32, TIME64, \
    TIMESTAMP, TIMESTAMP_TZ, DECTEXT = range(15)

KIND_NAMES = ("BOOL", "INT8", "INT16", "INT32", "INT64", "DECIMAL", "FLOAT32", "FLOAT64",
              "STRING", "BINARY", "DATE32", "TIME64", "TIMESTAMP", "TIMESTAMP_TZ", "DECTEXT")

_CHAR = {"CHAR", "CHARACTER", "VARCHAR", "LONG VARCHAR", "GRAPHIC", "VARGRAPHIC",
         "LONG VARGRAPHIC", "VARCHAR2", "NVARCHAR2", "NCHAR", "CHARACTER VARYING"}
_LOB_TEXT = {"CLOB", "DBCLOB", "NCLOB", "XML"}
_BIT_DATA_OK = {"CHAR", "CHARACTER", "VARCHAR", "LONG VARCHAR", "CHARACTER VARYING"}
_SIMPLE = {
    "TINYINT": INT8, "SMALLINT": INT16, "INTEGER": INT32, "INT": INT32, "BIGINT": INT64,
    "REAL": FLOAT32, "BINARY_FLOAT": FLOAT32, "DOUBLE": FLOAT64, "DOUBLE PRECISION": FLOAT64,
    "BINARY_DOUBLE": FLOAT64, "BINARY": BINARY, "VARBINARY": BINARY, "BLOB": BINARY,
    "RAW": BINARY, "ROWID": BINARY, "DATE": DATE32, "BOOLEAN": BOOL, "DECFLOAT": DECTEXT,
}

_TYPE_RE = re.compile(
    r"^(?P<base>[A-Z][A-Z0-9_]*(?: [A-Z][A-Z0-9_]*)*?)"
    r"(?:\((?P<a>\d+)[KMG]?(?:,(?P<b>\d+))?(?: (?:BYTE|CHAR|CHARACTERS|OCTETS))?\))?"
    r"(?: (?P<suffix>FOR BIT DATA|WITH TIME ZONE))?$")


@dataclass(frozen=True)
class ColumnType:
    """A parsed source type: what the kernels convert to, and the facts they need for it."""
    name: str                 # normalized source type text, e.g. "DECIMAL(9,2)"
    base: str                 # e.g. "DECIMAL", "VARCHAR", "TIMESTAMP"
    kind: int                 # one of the kinds above
    precision: int = 0        # DECIMAL precision; TIME/TIMESTAMP fraction digits
    scale: int = 0
    length: int = 0           # CHAR(n)/VARCHAR(n)/… length when given
    is_char: bool = False     # character data (IBM's invalid-column HEX/NULL rules apply)
    is_lob: bool = False      # CLOB, DBCLOB, NCLOB, BLOB, XML

    @property
    def arrow_type(self) -> pa.DataType:
        return arrow_type_of(self.kind, self.precision, self.scale)


def arrow_type_of(kind: int, precision: int = 0, scale: int = 0) -> pa.DataType:
    if kind == DECIMAL:
        return pa.decimal128(precision, scale)
    if kind == TIMESTAMP_TZ:
        return pa.timestamp("us", tz="UTC")
    return _ARROW[kind]


_ARROW = {BOOL: pa.bool_(), INT8: pa.int8(), INT16: pa.int16(), INT32: pa.int32(),
          INT64: pa.int64(), FLOAT32: pa.float32(), FLOAT64: pa.float64(), STRING: pa.string(),
          BINARY: pa.binary(), DATE32: pa.date32(), TIME64: pa.time64("us"),
          TIMESTAMP: pa.timestamp("us"), DECTEXT: pa.string()}

STRING_TYPE = ColumnType("VARCHAR", "VARCHAR", STRING, is_char=True)


def parse_type(text: str) -> ColumnType:
    """Parse a source type name (case-insensitive) as SPEC §2's table reads it.

    Raises ``ValueError`` for a name the table does not list.
    """
    norm = re.sub(r"\s+", " ", str(text).strip().upper())
    norm = re.sub(r" ?\( ?", "(", re.sub(r" ?\)", ")", re.sub(r" ?, ?", ",", norm)))
    m = _TYPE_RE.match(norm)
    if not m:
        raise ValueError(f"unknown type {text!r}")
    base, a, b, suffix = m.group("base"), m.group("a"), m.group("b"), m.group("suffix")
    a = int(a) if a is not None else None
    b = int(b) if b is not None else None
    if suffix == "FOR BIT DATA":
        if base not in _BIT_DATA_OK or b is not None:
            raise ValueError(f"unknown type {text!r}")
        return ColumnType(norm, base, BINARY, length=a or 0)
    if suffix == "WITH TIME ZONE":
        if base != "TIMESTAMP" or b is not None:
            raise ValueError(f"unknown type {text!r}")
        p = 6 if a is None else a
        _check_fraction(text, p, 12)
        return ColumnType(norm, base, TIMESTAMP_TZ, precision=p)
    if base in ("DECIMAL", "DEC", "NUMERIC", "NUMBER"):
        if base == "NUMBER" and a is None:
            return ColumnType(norm, base, DECTEXT)
        p = 5 if a is None else a
        s = 0 if b is None else b
        if not 1 <= p <= 38 or not 0 <= s <= p:
            raise ValueError(f"unsupported precision/scale in {text!r} (precision 1..38, "
                             f"scale 0..precision)")
        return ColumnType(norm, base, DECIMAL, precision=p, scale=s)
    if b is not None:
        raise ValueError(f"unknown type {text!r}")
    if base in _CHAR:
        return ColumnType(norm, base, STRING, length=a or 0, is_char=True)
    if base in _LOB_TEXT:
        return ColumnType(norm, base, STRING, length=a or 0, is_lob=True)
    if base == "FLOAT":
        return ColumnType(norm, base, FLOAT32 if a is not None and a <= 21 else FLOAT64,
                          precision=a or 0)
    if base == "TIME":
        p = 0 if a is None else a
        _check_fraction(text, p, 12)
        return ColumnType(norm, base, TIME64, precision=p)
    if base == "TIMESTAMP":
        p = 6 if a is None else a
        _check_fraction(text, p, 12)
        return ColumnType(norm, base, TIMESTAMP, precision=p)
    if base in _SIMPLE:
        if a is not None and base not in ("BINARY", "VARBINARY", "BLOB", "RAW", "DECFLOAT"):
            raise ValueError(f"unknown type {text!r}")
        if base == "DECFLOAT" and a not in (None, 16, 34):
            raise ValueError(f"unknown type {text!r} (DECFLOAT takes 16 or 34)")
        return ColumnType(norm, base, _SIMPLE[base], length=a or 0, is_lob=base == "BLOB")
    raise ValueError(f"unknown type {text!r}")


def _check_fraction(text, p, most):
    if not 0 <= p <= most:
        raise ValueError(f"unsupported fraction precision in {text!r} (0..{most})")


@dataclass(frozen=True)
class Column:
    name: str
    type: ColumnType
    nullable: bool = True

    def to_dict(self):
        d = {"name": self.name, "type": self.type.name}
        if not self.nullable:
            d["nullable"] = False
        return d


@dataclass(frozen=True)
class Table:
    schema: str | None
    table: str
    columns: tuple[Column, ...]
    key: tuple[str, ...] = ()
    aliases: tuple[str, ...] = ()
    # Qlik Replicate: the schemaIds of its metadata messages (each tableVersion has its own),
    # so that a data message names the table by messageSchemaId without them (Catalog.from_qlik)
    qlik_schema_ids: tuple[str, ...] = ()

    @property
    def name(self) -> str:
        """``"OWNER.TABLE"`` (the bare name when the table has no schema)."""
        return f"{self.schema}.{self.table}" if self.schema else self.table

    def to_dict(self):
        d = {}
        if self.schema is not None:
            d["schema"] = self.schema
        d["table"] = self.table
        if self.key:
            d["key"] = list(self.key)
        if self.aliases:
            d["aliases"] = list(self.aliases)
        if self.qlik_schema_ids:
            d["qlik_schema_ids"] = list(self.qlik_schema_ids)
        d["columns"] = [c.to_dict() for c in self.columns]
        return d


@dataclass
class Catalog:
    """Tables by ``"OWNER.TABLE"``; look-ups are exact first, then case-insensitive."""
    tables: list[Table] = field(default_factory=list)

    def __post_init__(self):
        self._exact = {}
        self._folded = {}
        for t in self.tables:
            for name in (t.name, *t.aliases):
                if name in self._exact:
                    raise ValueError(f"catalog lists table {name!r} twice")
                self._exact[name] = t
                self._folded.setdefault(name.upper(), t)
        self._qlik_ids = {}
        for t in self.tables:
            for sid in t.qlik_schema_ids:
                other = self._qlik_ids.setdefault(sid, t)
                if other is not t:
                    raise ValueError(f"catalog lists qlik schema id {sid!r} under tables "
                                     f"{other.name} and {t.name}")

    # -- building -------------------------------------------------------------------------
    @classmethod
    def from_dict(cls, d) -> "Catalog":
        if isinstance(d, Catalog):
            return d
        if not isinstance(d, dict) or not isinstance(d.get("tables"), list):
            raise ValueError("a catalog is a dict with a list under 'tables'")
        tables = []
        for i, td in enumerate(d["tables"]):
            if not isinstance(td, dict) or not td.get("table"):
                raise ValueError(f"catalog table #{i} has no 'table' name")
            schema = td.get("schema") or None
            tname = f"{schema}.{td['table']}" if schema else td["table"]
            cols = []
            seen = set()
            for j, cd in enumerate(td.get("columns") or []):
                if not isinstance(cd, dict) or not cd.get("name") or "type" not in cd:
                    raise ValueError(f"table {tname}: column #{j} needs 'name' and 'type'")
                if cd["name"] in seen:
                    raise ValueError(f"table {tname}: column {cd['name']} is listed twice")
                seen.add(cd["name"])
                try:
                    ctype = parse_type(cd["type"])
                except ValueError as e:
                    raise ValueError(f"table {tname}, column {cd['name']}: {e}") from None
                cols.append(Column(cd["name"], ctype, bool(cd.get("nullable", True))))
            key = tuple(td.get("key") or ())
            for k in key:
                if k not in seen:
                    raise ValueError(f"table {tname}: key column {k} is not a column")
            tables.append(Table(schema, td["table"], tuple(cols), key,
                                tuple(td.get("aliases") or ()),
                                _qlik_schema_ids(td.get("qlik_schema_ids"), tname)))
        return cls(tables)

    @classmethod
    def from_debezium(cls, messages) -> "Catalog":
        """Build tables from Debezium schema-change events and from the schemas embedded in
        data change events (SPEC §5.3).

        ``messages``: an iterable of messages, each ``bytes``, ``str`` (one JSON document) or an
        already-parsed ``dict``; or a single ``bytes``/``str`` holding a stream of JSON
        documents separated by whitespace (NDJSON or pretty-printed); or a single ``dict``.
        A message is the envelope ``{"schema":…,"payload":…}`` (an object with a ``payload``
        key) or the bare payload. ``None``, empty messages, null payloads and messages that
        are neither (transaction, heartbeat, ``m`` events, data events without a schema) are
        skipped. Malformed JSON is a ``ValueError`` naming the message (its index; in a stream,
        the document's index and byte offset).

        Each ``tableChanges[]`` entry is applied in message order: ``DROP`` removes the table,
        any other type with a ``table`` object (``CREATE``, ``ALTER``) defines it, replacing an
        earlier definition of the same name — the catalog is the latest state. The table is
        named by ``id`` (``"SCHEMA"."TABLE"``; quoted parts may hold dots, ``""`` is a quote;
        unquoted ``SCHEMA.TABLE``; ``db.schema.table`` takes the last two parts; one part is a
        table with no schema), else by ``payload.source.schema``/``source.table``.

        Columns are ordered by ``position`` when every column has one (a stable sort: ties keep
        the order sent), else kept in the order sent; ``optional`` → nullable (missing: true);
        ``primaryKeyColumnNames`` → key (names that are not columns are dropped). The type
        follows ``jdbcType`` (java.sql.Types), written as a catalog type name so the result
        round-trips through ``to_dict()``/``from_dict()``: DECIMAL/NUMERIC take ``length`` as
        precision and ``scale`` (null → 0; no length → the type's default precision, 5), and
        become ``DECFLOAT`` (the exact decimal text) when the precision is outside 1..38 or the
        scale outside 0..precision; TIME/TIMESTAMP/TIMESTAMP WITH TIME ZONE take ``scale`` as
        fraction digits when given (0..12), else TIME(0)/TIMESTAMP(6); TINYINT → SMALLINT
        (int16), FLOAT → DOUBLE; CHAR/VARCHAR/NCHAR/NVARCHAR/BINARY/VARBINARY keep ``length``.
        TIME WITH TIME ZONE (2013), OTHER (1111) and every unknown or missing ``jdbcType`` (a
        connector's vendor types) are read as text: ``VARCHAR``. ``typeName`` is information
        only and is not kept.

        A data change event written with ``schemas.enable=true`` (an envelope whose payload has
        ``op`` and ``source``, ``op`` not ``m``) defines its table only when no earlier message
        has: the first embedded schema met defines a table, later embedded schemas of that
        table are ignored (as the decoder fixes a table's columns at the first schema it meets,
        docs/debezium.md), and a schema-change event still replaces the definition. The table
        is named by ``payload.source.schema``/``source.table`` (no or an empty schema: the bare
        name). Its columns are the ``fields`` of the envelope schema's ``after`` field (else
        ``before``), in order (a name given twice: the first); ``optional`` → nullable
        (missing: true); no key (the key schema travels in the Kafka key). Each type is the
        one the decoder gives the field without a catalog, written as a catalog type name, so
        decoding with this catalog gives the values decoding without one gives (an error then
        names the catalog type, ``TIME(6)``, not the schema's ``…MicroTime``):

        - Connect int8, int16, int32, int64 → TINYINT, SMALLINT, INTEGER, BIGINT; float
          (float32) → REAL; double (float64) → DOUBLE; boolean → BOOLEAN; string → VARCHAR;
          bytes → VARBINARY; struct, array, map and unknown types → VARCHAR (JSON text);
        - ``…connect.data.Date``, ``io.debezium.time.Date`` → DATE; ``…connect.data.Time``,
          ``…time.Time`` → TIME(3); ``MicroTime`` → TIME(6); ``NanoTime`` → TIME(9);
          ``…connect.data.Timestamp``, ``…time.Timestamp`` → TIMESTAMP(3);
          ``MicroTimestamp`` → TIMESTAMP(6); ``NanoTimestamp`` → TIMESTAMP(9);
          ``ZonedTimestamp`` → TIMESTAMP WITH TIME ZONE; ``io.debezium.time.Year`` → INTEGER;
          ``io.debezium.data.Bits`` → VARBINARY;
        - ``org.apache.kafka.connect.data.Decimal`` → DECIMAL(p,s): s the ``scale``
          parameter, p ``connect.decimal.precision`` (else 38) but at least s; p outside
          1..38 or s outside 0..38: DECFLOAT; ``VariableScaleDecimal`` → DECFLOAT.
        """
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
        return cls(list(tables.values()))

    @classmethod
    def from_olr(cls, messages) -> "Catalog":
        """Build tables from the ``schema.columns`` that OpenLogReplicator sends with its data
        elements (SPEC §5.4; the writer's ``schema`` option "full").

        ``messages``: an iterable of messages, each ``bytes``, ``str`` (one JSON document) or an
        already-parsed ``dict``; or a single ``bytes``/``str`` holding a stream of JSON
        documents separated by whitespace (NDJSON); or a single ``dict``. ``None``, empty
        messages and documents without a ``payload`` array are skipped. Malformed JSON is a
        ``ValueError`` naming the message.

        Every ``payload`` element whose ``schema`` names a table and carries ``columns``
        defines that table, named as the decoder names it: ``owner`` + ``table``, the bare
        ``table`` without an owner (schemaless mode, ``OBJ_<n>``). A later definition of a
        table replaces the earlier one (the catalog is the latest state; the table keeps its
        place). Columns in the order sent, a name given twice taken once (the first, as the
        decoder does); ``nullable`` false → NOT NULL; no key (the writer sends none). Types are
        the ones the decoder gives a table from its ``schema.columns`` (docs/olr.md), written
        as catalog type names so the result round-trips through ``to_dict()``/``from_dict()``:
        ``number`` → NUMBER(precision,scale), or NUMBER (the exact text) without a precision
        or beyond decimal128; ``integer`` → NUMBER(38,0); ``varchar2``, ``nvarchar2``,
        ``char``, ``nchar``, ``raw`` → the same with their ``length``; ``clob``, ``nclob``,
        ``blob``, ``date``, ``timestamp``, ``timestamp with time zone``, ``binary_float``,
        ``binary_double``, ``float``, ``boolean`` as such; every other type → VARCHAR2 (the
        value's text). ``columns`` that is not a list of objects with a text ``name`` is a
        ``ValueError`` naming the message and the table.
        """
        from .formats.olr import type_name       # late: cdcfast.formats imports this module
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
        return cls(list(tables.values()))

    @classmethod
    def from_qlik(cls, messages) -> "Catalog":
        """Build tables from Qlik Replicate metadata messages (SPEC §5.5).

        ``messages``: an iterable of messages, each ``bytes``, ``str`` (one JSON document) or an
        already-parsed ``dict``; or a single ``bytes``/``str`` holding a stream of JSON
        documents separated by whitespace; or a single ``dict``. A message is the Kafka
        envelope (an object with a ``message`` key, the metadata in ``message``) or the Pub/Sub
        form (the metadata at the top). It is a metadata message when its ``type`` is ``"MD"``
        or it has a ``tableStructure``; ``None``, empty messages and data messages are skipped.
        Malformed JSON is a ``ValueError`` naming the message, and so is a metadata message
        without ``lineage.table`` or whose ``tableStructure.tableColumns`` is not an object of
        objects (the field is named as in the document).

        The table is ``lineage.schema`` + ``lineage.table`` (no or an empty schema: the bare
        name); a later metadata message of the same table (a new ``tableVersion``) replaces the
        earlier definition, so the catalog is the latest state. A metadata message without
        ``tableStructure`` describes no columns and is skipped. Columns are ordered by
        ``ordinal`` when every column has an integer one (a stable sort), else kept in the
        order sent; all are nullable (the message does not say). Key: the columns with
        ``primaryKeyPosition`` > 0, in that order. Types, written as catalog type names so the
        result round-trips through ``to_dict()``/``from_dict()``: INT1 → TINYINT; INT2, UINT1
        → SMALLINT; INT4, UINT2 → INTEGER; INT8, UINT4 → BIGINT; UINT8 → DECIMAL(20,0);
        REAL4 → REAL; REAL8 → DOUBLE; NUMERIC → DECIMAL(precision,scale) (DECFLOAT, the exact
        text, when the precision is missing or outside 1..38 or the scale outside
        0..precision); STRING → VARCHAR(length); WSTRING → NVARCHAR2(length) (no length: the
        bare name); CLOB, NCLOB, BLOB as such; BYTES → VARBINARY(length); DATE → DATE; TIME →
        TIME(scale); DATETIME → TIMESTAMP(scale) (scale 0..12, else TIME / TIMESTAMP(6));
        BOOLEAN → BOOLEAN; any other type name (case-insensitive) → VARCHAR (the value's text).

        Each table remembers the ``schemaId`` of every metadata message of it (a new
        ``tableVersion`` has a new one; with or without ``tableStructure``), in the order met,
        as ``qlik_schema_ids`` (written by ``to_dict()``): a data message whose
        ``messageSchemaId`` is one of them is of that table even where its metadata message is
        not in the input (another Spark partition, an earlier file). A schemaId met for two
        tables belongs to the later one.
        """
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
        return cls([replace(t, qlik_schema_ids=tuple(s for s, n in owner.items()
                                                     if n == t.name))
                    for t in tables.values()])

    @classmethod
    def load(cls, path) -> "Catalog":
        """The catalog JSON file at `path`; a ValueError names the file (and for bad JSON the
        line and column)."""
        path = os.fspath(path)
        with open(path, encoding="utf-8") as f:
            try:
                d = json.load(f)
            except json.JSONDecodeError as e:
                raise ValueError(f"{path}: line {e.lineno}, column {e.colno}: {e.msg} "
                                 "(not valid JSON)") from None
            except UnicodeDecodeError:
                raise ValueError(f"{path}: not UTF-8 text (a catalog is JSON)") from None
        try:
            return cls.from_dict(d)
        except ValueError as e:
            raise ValueError(f"{path}: {e}") from None

    @classmethod
    def coerce(cls, catalog) -> "Catalog | None":
        """Accept a Catalog, a dict, a path, or None (as every API entry point does)."""
        if catalog is None or isinstance(catalog, Catalog):
            return catalog
        if isinstance(catalog, dict):
            return cls.from_dict(catalog)
        if isinstance(catalog, (str, os.PathLike)):
            return cls.load(catalog)
        raise TypeError(f"catalog must be a Catalog, dict or path, not {type(catalog).__name__}")

    # -- writing --------------------------------------------------------------------------
    def to_dict(self) -> dict:
        return {"tables": [t.to_dict() for t in self.tables]}

    def save(self, path) -> None:
        with open(os.fspath(path), "w", encoding="utf-8") as f:
            json.dump(self.to_dict(), f, indent=1)
            f.write("\n")

    # -- looking up -----------------------------------------------------------------------
    def get(self, name: str) -> Table | None:
        t = self._exact.get(name)
        if t is None:
            t = self._folded.get(name.upper())
        return t

    def qlik_table(self, schema_id: str) -> Table | None:
        """The table whose Qlik metadata messages have this schemaId (Catalog.from_qlik)."""
        return self._qlik_ids.get(schema_id)

    def __contains__(self, name):
        return self.get(name) is not None

    def __iter__(self):
        return iter(self.tables)

    def __len__(self):
        return len(self.tables)


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


def _int_or_none(v):
    """A JSON integer (or integer text); anything else (null, bool, float, junk) → None."""
    if isinstance(v, bool):
        return None
    if isinstance(v, int):
        return v
    if isinstance(v, str) and re.fullmatch(r"\s*-?\d+\s*", v):
        return int(v)
    return None


def _debezium_type_name(column: dict) -> str:
    """The catalog type name for one Debezium ``tableChanges[].table.columns[]`` entry."""
    code = _int_or_none(column.get("jdbcType"))
    length = _int_or_none(column.get("length"))
    scale = _int_or_none(column.get("scale"))
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
    for where, doc in _json_documents(messages):
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
    # the decoder's reading itself, so a catalog built here decodes the same values (the
    # import is late: cdcfast.formats imports this module)
    from .formats.debezium import MS, NS, US, field_encoding
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
    from .formats.debezium import image_fields
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


def _json_documents(messages):
    """(where, parsed document) of messages given as a stream (bytes/str), one dict, or an
    iterable of messages."""
    if isinstance(messages, (bytes, bytearray, memoryview, str)):
        return _json_stream(messages)
    if isinstance(messages, dict):
        return [("message #0", messages)]
    return _json_items(messages)


def _json_items(messages):
    for i, m in enumerate(messages):
        where = f"message #{i}"
        if m is None or isinstance(m, dict):
            yield where, m
            continue
        if isinstance(m, (bytes, bytearray, memoryview)):
            try:
                m = bytes(m).decode("utf-8")
            except UnicodeDecodeError as e:
                raise ValueError(f"{where} is not UTF-8 JSON: {e}") from None
        if not isinstance(m, str):
            raise TypeError(f"{where} is a {type(m).__name__}, not bytes, str or dict")
        if not m.strip():
            continue
        try:
            yield where, json.loads(m)
        except json.JSONDecodeError as e:
            raise ValueError(f"{where} is not valid JSON: {e}") from None


def _json_stream(data):
    """JSON documents separated by whitespace (NDJSON or pretty-printed) in one text."""
    if not isinstance(data, str):
        try:
            data = bytes(data).decode("utf-8")
        except UnicodeDecodeError as e:
            raise ValueError(f"the message stream is not UTF-8 JSON: {e}") from None
    decoder = json.JSONDecoder()
    ws = re.compile(r"\s*")
    pos, n, k = 0, len(data), 0
    last, offset = 0, 0          # byte offset of `pos`, counted incrementally (UTF-8)
    while True:
        pos = ws.match(data, pos).end()
        if pos >= n:
            return
        offset += len(data[last:pos].encode("utf-8"))
        last = pos
        where = f"document #{k} (byte {offset} of the stream)"
        try:
            doc, end = decoder.raw_decode(data, pos)
        except json.JSONDecodeError as e:
            raise ValueError(f"{where} is not valid JSON: {e}") from None
        yield where, doc
        pos, k = end, k + 1


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
    positions = [_int_or_none(c.get("position")) for c in raw]
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
class QlikMetadata:
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
    ordinals = [_int_or_none(cd.get("ordinal")) for _, cd in items]
    if all(o is not None for o in ordinals):
        order = sorted(range(len(items)), key=ordinals.__getitem__)   # stable: ties as sent
        items = [items[i] for i in order]
    cols = tuple(Column(name, parse_type(_qlik_type_name(cd))) for name, cd in items)
    keyed = [(p, name) for name, cd in items
             if (p := _int_or_none(cd.get("primaryKeyPosition"))) is not None and p > 0]
    key = tuple(name for _, name in sorted(keyed, key=lambda pk: pk[0]))
    return Table(schema, table, cols, key)


def _qlik_schema_ids(ids, tname: str) -> tuple:
    """A catalog table's `qlik_schema_ids` (absent: none)."""
    if ids is None:
        return ()
    if not isinstance(ids, list) or not all(isinstance(i, str) and i for i in ids):
        raise ValueError(f"table {tname}: 'qlik_schema_ids' is not a list of texts")
    return tuple(dict.fromkeys(ids))


def utf8_text(text: str) -> bool:
    """Text without a lone surrogate (from a JSON \\u escape): it can name a table or column."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _qlik_type_name(column: dict) -> str:
    """The catalog type name of one ``tableColumns`` entry (Catalog.from_qlik)."""
    t = column.get("type")
    t = t.strip().upper() if isinstance(t, str) else ""
    if t in _QLIK_PLAIN:
        return _QLIK_PLAIN[t]
    if t in _QLIK_SIZED:
        n = _int_or_none(column.get("length"))
        return f"{_QLIK_SIZED[t]}({n})" if n is not None and n > 0 else _QLIK_SIZED[t]
    if t == "NUMERIC":
        p = _int_or_none(column.get("precision"))
        s = _int_or_none(column.get("scale")) or 0
        if p is None or not 1 <= p <= 38 or not 0 <= s <= p:
            return "DECFLOAT"                 # beyond decimal128: kept as exact text
        return f"DECIMAL({p},{s})"
    if t in _QLIK_FRACTION:
        s = _int_or_none(column.get("scale"))
        return f"{_QLIK_FRACTION[t]}({s})" if s is not None and 0 <= s <= 12 \
            else _QLIK_FRACTION[t]
    return "VARCHAR"                          # a type the list lacks: the value's text


def _qlik_bodies(messages):
    """Yield (where, body, key path of the body) for each metadata message."""
    if isinstance(messages, (bytes, bytearray, memoryview, str)):
        docs = _json_stream(messages)
    elif isinstance(messages, dict):
        docs = [("message #0", messages)]
    else:
        docs = _json_items(messages)
    for where, doc in docs:
        if not isinstance(doc, dict):
            continue
        body, prefix = doc, ()
        if "message" in doc:
            body, prefix = doc["message"], ("message",)
            if not isinstance(body, dict):
                continue
        if doc.get("type") == "MD" or "tableStructure" in body:
            yield where, body, prefix


# -- OpenLogReplicator schema.columns (SPEC §5.4) -------------------------------------------
def _olr_definitions(messages):
    """Yield (where, element index, owner or None, table, columns as sent) for each payload
    element whose schema names a table and carries columns."""
    for where, doc in _json_documents(messages):
        payload = doc.get("payload") if isinstance(doc, dict) else None
        for j, el in enumerate(payload if isinstance(payload, list) else ()):
            schema = el.get("schema") if isinstance(el, dict) else None
            if not isinstance(schema, dict) or schema.get("columns") is None:
                continue
            tname, owner = schema.get("table"), schema.get("owner")
            if isinstance(tname, str) and tname:
                yield (where, j, owner if isinstance(owner, str) and owner else None, tname,
                       schema["columns"])
