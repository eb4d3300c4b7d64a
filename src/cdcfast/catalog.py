"""Table descriptions (SPEC §2): column names, source types and their Arrow types.

A catalog is plain JSON, so that the command line, the Spark data source and Spark executors
can all be handed the same file. Type names are parsed once here into a :class:`ColumnType`
whose ``kind`` the kernels dispatch on when a decoder is built — never per value.
"""
from __future__ import annotations

import json
import os
import re
from dataclasses import dataclass, field

import pyarrow as pa

# Value kinds: one per conversion the kernels know. The numbers are shared with native/.
BOOL, INT8, INT16, INT32, INT64, DECIMAL, FLOAT32, FLOAT64, STRING, BINARY, DATE32, TIME64, \
    TIMESTAMP, TIMESTAMP_TZ, DECTEXT = range(15)

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


class Frozen:
    """A value that never changes (a frozen dataclass of strings, numbers and tuples of such
    values): a copy, deep or not, is the value itself, as for a str or a tuple. A call on
    several threads deep-copies the state each piece starts from (cdcfast/pieces.py); the
    catalog tables and layouts in it are then shared, not rebuilt."""
    __slots__ = ()

    def __copy__(self):
        return self

    def __deepcopy__(self, memo):
        return self


@dataclass(frozen=True)
class ColumnType(Frozen):
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
class Column(Frozen):
    name: str
    type: ColumnType
    nullable: bool = True

    def to_dict(self):
        d = {"name": self.name, "type": self.type.name}
        if not self.nullable:
            d["nullable"] = False
        return d


@dataclass(frozen=True)
class Table(Frozen):
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
            for j, c in enumerate(t.columns):
                if not c.name:      # (what to_dict would write, from_dict could not read)
                    raise ValueError(f"table {t.name}: column #{j} has no name")
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
        return cls._from_format("debezium", messages)

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
        return cls._from_format("olr", messages)

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
        return cls._from_format("qlik", messages)

    @classmethod
    def _from_format(cls, name: str, messages) -> "Catalog":
        """The catalog the format registered as `name` builds from its messages (its
        `catalog_from`): reached through the registry, as this module imports no format."""
        from .formats import get
        built = get(name).catalog_from(messages)
        return built if type(built) is cls else cls(built.tables)

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
        """The table of that name (exactly, else ignoring case); None for none, and for
        anything that is not a name (an output key such as headers' own)."""
        if not isinstance(name, str):
            return None
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


def _qlik_schema_ids(ids, tname: str) -> tuple:
    """A catalog table's `qlik_schema_ids` (absent: none)."""
    if ids is None:
        return ()
    if not isinstance(ids, list) or not all(isinstance(i, str) and i for i in ids):
        raise ValueError(f"table {tname}: 'qlik_schema_ids' is not a list of texts")
    return tuple(dict.fromkeys(ids))
