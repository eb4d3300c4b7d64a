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
                                tuple(td.get("aliases") or ())))
        return cls(tables)

    @classmethod
    def load(cls, path) -> "Catalog":
        with open(os.fspath(path), encoding="utf-8") as f:
            return cls.from_dict(json.load(f))

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

    def __contains__(self, name):
        return self.get(name) is not None

    def __iter__(self):
        return iter(self.tables)

    def __len__(self):
        return len(self.tables)
