"""Writer and synthetic-stream generator for `debezium` (Debezium change events, JSON
converter, Db2 connector): the inverse of the decoder, as SPEC §5.3 and docs/debezium.md read it.

``encode`` turns envelope-shaped events (dicts, or a decoded ``pyarrow.Table``) into JSON
documents — the bare payload, or with ``schemas=True`` the ``{"schema": …, "payload": …}`` form
with a Kafka Connect envelope schema shaped like the real Db2 2.6.2 connector's
(peer-data/debezium/db2/db2_cdc-customers-insert.json); ``generate`` makes realistic streams
for tests and benchmarks, and ``events`` returns the Python values behind a generated stream, as
a decoder gives them back, so tests can compare the two.

Values are written as the connector writes them under its ``decimal.handling.mode`` and
``time.precision.mode`` (seed "Data type mappings"; the options keep the connector's names and
defaults). Where the seed and we part ways, deliberately:
- DECFLOAT is written as a ``string`` holding its exact text (the seed says Decimal bytes, but
  a DECFLOAT has no fixed scale to put in the schema; SPEC §2 reads it as exact text);
- ``connect`` TIME is ``int32`` ``org.apache.kafka.connect.data.Time``, as Kafka defines that
  logical type (the seed's table says INT64);
- the envelope schema is version 2 and ``source`` carries ``sequence``/``ts_us``/``ts_ns`` in the
  order the real 2.6.2 connector writes them.
"""
from __future__ import annotations

import base64
import datetime as dt
import json
import random
from json.encoder import encode_basestring as _jstr   # the C escaper, non-ASCII kept as is

from ._plan import LiveRows, char_maker, decimal_maker, double_maker, float32, integer_maker, \
    message_range, nullable_maker, plan, random_change, text_maker, truncate_us
from ._tables import DATA_OPS, infer_tables
from ._text import EPOCH_ORDINAL, UTC, double_text, float32_text, scaled_text, unscaled, wall_us
from ..catalog import (BINARY, BOOL, DATE32, DECIMAL, DECTEXT, FLOAT32, FLOAT64, INT8, INT16,
                       INT32, INT64, STRING, TIME64, TIMESTAMP, TIMESTAMP_TZ, Catalog, Column,
                       Table, parse_type)

_COUNTED_OPS = ("c", "u", "d", "r", "t")        # what an END's event_count counts
_DECIMAL_HANDLING = ("precise", "string", "double")
_TIME_PRECISION = ("adaptive", "adaptive_time_microseconds", "connect")
_ABSENT = object()
_SNAPSHOT_ALLOWED = "true,last,false,incremental"   # the real 2.6.2 Source schema's enum


class _Raw(str):
    """JSON text already rendered (a row image, a cached schema): written as it is."""
    __slots__ = ()


# -- encoding ------------------------------------------------------------------------------

def encode(events, catalog=None, schemas=False, decimal_handling="precise",
           time_precision="adaptive", transaction=True, pretty=False, connector="db2",
           messages=False):
    """Write one JSON document per event -> ``bytes`` (each document followed by ``\\n``), or
    with ``messages=True`` a list of ``bytes`` messages (one per event, no newline).

    ``events``: dicts in the envelope shape (SPEC §3) or a ``pyarrow.Table``/``RecordBatch`` in
    envelope form. ``op`` is ``c u d r t m`` (a change event) or ``begin``/``commit`` (a
    transaction metadata event, ``"status": "BEGIN"``/``"END"``). With a catalog, values are
    written by their column's type; a table the catalog lacks gets column types from the Python
    types of its values (the first non-null value of each column; a Decimal column the largest
    scale seen). ``transaction`` writes the ``transaction`` block (``id`` = txid); ``connector``
    is ``source.connector`` where the event gives none and names the Source schema.
    Tombstones are never written (``generate(tombstones=True)`` adds them).
    """
    events = events.to_pylist() if hasattr(events, "to_pylist") else list(events)
    writer = _Writer(catalog, schemas, decimal_handling, time_precision, transaction, pretty,
                     connector)
    writer.add_tables(infer_tables(events, writer.catalog))
    docs = list(map(writer.document, events))
    if messages:
        return [d.encode("utf-8") for d in docs]
    return "".join(d + "\n" for d in docs).encode("utf-8")


class _Writer:
    """Builds JSON documents. Value formatters are chosen once per table column, and each
    table's schema text is rendered once and reused for every message of that table."""

    def __init__(self, catalog, schemas, decimal_handling, time_precision, transaction, pretty,
                 connector):
        if decimal_handling not in _DECIMAL_HANDLING:
            raise ValueError(f"decimal_handling must be one of {', '.join(_DECIMAL_HANDLING)}, "
                             f"not {decimal_handling!r}")
        if time_precision not in _TIME_PRECISION:
            raise ValueError(f"time_precision must be one of {', '.join(_TIME_PRECISION)}, "
                             f"not {time_precision!r}")
        self.catalog = Catalog.coerce(catalog)
        self.schemas, self.pretty, self.transaction = bool(schemas), bool(pretty), transaction
        self.decimal_handling, self.time_precision = decimal_handling, time_precision
        self.connector = connector
        self.payload_level = 1 if self.schemas else 0    # nesting depth of the payload object
        self._extra = {}          # table name -> Table inferred from the values
        self._layouts = {}        # table name -> _Layout
        self._schema_text = {}    # (table name, server, connector) -> rendered envelope schema
        self._txn_schema = None
        self._txns = {}           # txid -> [events so far, {data collection: events}]

    def add_tables(self, tables):
        self._extra.update(tables)

    # -- documents ------------------------------------------------------------------------
    def document(self, ev) -> str:
        op = ev.get("op")
        if op == "message":      # a decoded `m` event (SPEC §5.3)
            op = "m"
        if op in DATA_OPS:
            return self._change(ev, op)
        if op in ("begin", "commit"):
            return self._control(ev, op)
        raise ValueError(f"cannot write an event with op {op!r}; expected one of "
                         f"{', '.join(DATA_OPS)}, begin, commit")

    def _change(self, ev, op):
        schema, table = ev.get("schema"), ev.get("table")
        if not table and op != "m":
            raise ValueError("a change event needs a table")
        name = f"{schema}.{table}" if schema else table
        src = ev.get("source") or {}
        level = self.payload_level
        if op in ("t", "m"):
            before = after = None
        else:
            layout = self._layout(name)
            before = layout.image(ev.get("before"), "before")
            after = layout.image(ev.get("after"), "after")
        commit_us = _epoch_us_utc(_first(ev.get("commit_ts"), ev.get("change_ts")))
        processed_us = _epoch_us_utc(src.get("processed_ts"))
        snapshot = src.get("snapshot")
        if isinstance(snapshot, bool):
            snapshot = "true" if snapshot else "false"
        connector = src.get("connector") or self.connector
        source = {"version": src.get("version"), "connector": connector,
                  "name": src.get("name"), "ts_ms": _ms(commit_us),
                  "snapshot": "false" if snapshot is None else str(snapshot),
                  "db": src.get("db"), "sequence": src.get("sequence"), "ts_us": commit_us,
                  "ts_ns": _ns(commit_us)}
        if schema is not None:     # MySQL style without it: the decoder keys the bare name
            source["schema"] = schema
        source["table"] = "" if table is None else table
        source["change_lsn"] = _first(src.get("change_lsn"), _lsn_text(ev.get("change_pos")))
        source["commit_lsn"] = _first(src.get("commit_lsn"), _lsn_text(ev.get("commit_pos")))
        payload = {"before": before, "after": after, "source": source, "op": op,
                   "ts_ms": _ms(processed_us), "ts_us": processed_us,
                   "ts_ns": _ns(processed_us),
                   "transaction": self._block(ev, op, name, src)}
        if not self.schemas:
            return self.render(payload, level)
        server = src.get("name") or "cdcfast"
        key = (name, server, connector, schema is not None)
        text = self._schema_text.get(key)
        if text is None:
            text = self._schema_text[key] = _Raw(self.render(
                self._envelope_schema(name, schema, table, server, connector), 1))
        return self.render({"schema": text, "payload": payload}, 0)

    def _block(self, ev, op, name, src):
        """The `transaction` block (seed "Data change event enrichment"): total_order is the
        event's seq when given, else its count within the txid; data_collection_order the
        source's when given, else its count within the txid and table."""
        txid = ev.get("txid")
        if txid is None or op not in _COUNTED_OPS:
            return None
        counts = self._txns.setdefault(txid, [0, {}])
        counts[0] += 1
        counts[1][name] = n = counts[1].get(name, 0) + 1
        if not self.transaction:
            return None
        return {"id": txid, "total_order": _first(ev.get("seq"), counts[0]),
                "data_collection_order": _first(src.get("data_collection_order"), n)}

    def _control(self, ev, op):
        """A transaction metadata event (seed "Transaction metadata"); END carries the
        source's counts, else those of the txid's events written since its BEGIN."""
        txid = ev.get("txid")
        src = ev.get("source") or {}
        if op == "begin":
            self._txns[txid] = [0, {}]
            count = collections = None
        else:
            seen = self._txns.pop(txid, [0, {}])
            count = _first(src.get("event_count"), seen[0])
            collections = src.get("data_collections")
            if isinstance(collections, str):      # the decoded form: the array's JSON text
                collections = json.loads(collections)
            elif collections is None:
                collections = [{"data_collection": k, "event_count": n}
                               for k, n in seen[1].items()]
        payload = {"status": "BEGIN" if op == "begin" else "END", "id": txid,
                   "ts_ms": _ms(_epoch_us_utc(_first(ev.get("commit_ts"), ev.get("change_ts")))),
                   "event_count": count, "data_collections": collections}
        if not self.schemas:
            return self.render(payload, 0)
        if self._txn_schema is None:
            self._txn_schema = _Raw(self.render(_TXN_SCHEMA, 1))
        return self.render({"schema": self._txn_schema, "payload": payload}, 0)

    # -- JSON text ------------------------------------------------------------------------
    def render(self, value, level=0) -> str:
        """JSON text of a Python value (dicts keep their key order); with ``pretty``, indented
        by 2 spaces as an object at nesting depth ``level``."""
        if value is None:
            return "null"
        t = type(value)
        if t is _Raw:
            return value
        if t is str:
            return _jstr(value)
        if t is bool:
            return "true" if value else "false"
        if t is int:
            return str(value)
        if t is float:
            return double_text(value)
        if t is dict:
            items = [(_jstr(str(k)), v) for k, v in value.items()]
            if not items:
                return "{}"
            if not self.pretty:
                return "{" + ",".join(f"{k}:{self.render(v)}" for k, v in items) + "}"
            pad = "\n" + "  " * (level + 1)
            return ("{" + ",".join(f"{pad}{k}: {self.render(v, level + 1)}" for k, v in items)
                    + "\n" + "  " * level + "}")
        if t in (list, tuple):
            if not value:
                return "[]"
            if not self.pretty:
                return "[" + ",".join(self.render(v) for v in value) + "]"
            pad = "\n" + "  " * (level + 1)
            return ("[" + ",".join(pad + self.render(v, level + 1) for v in value)
                    + "\n" + "  " * level + "]")
        if isinstance(value, str):
            return _jstr(str(value))
        if isinstance(value, int):
            return str(int(value))
        raise TypeError(f"cannot write {t.__name__} in a header field")

    # -- tables ---------------------------------------------------------------------------
    def _table(self, name):
        t = self.catalog.get(name) if self.catalog is not None else None
        if t is None:
            t = self._extra.get(name)
        if t is None:
            raise ValueError(f"no columns known for table {name!r}")
        return t

    def _layout(self, name):
        layout = self._layouts.get(name)
        if layout is None:
            t = self._table(name)
            image_level = self.payload_level + 1
            layout = self._layouts[name] = _Layout(
                [c.name for c in t.columns],
                [_formatter(c.type, self.decimal_handling, self.time_precision, c.name)
                 for c in t.columns],
                self.pretty, image_level)
        return layout

    def _envelope_schema(self, name, schema, table, server, connector):
        """The Kafka Connect schema of the table's change events, as the Db2 connector
        builds it (seed "Change event values"; real 2.6.2 output for its exact shape)."""
        t = self._table(name)
        fields = [_field_schema(c, self.decimal_handling, self.time_precision)
                  for c in t.columns]
        prefix = f"{server}.{schema}.{table}" if schema is not None else f"{server}.{table}"

        def image(field):
            return {"type": "struct", "fields": fields, "optional": True,
                    "name": f"{prefix}.Value", "field": field}

        source = [_f("string", False, "version"), _f("string", False, "connector"),
                  _f("string", False, "name"), _f("int64", False, "ts_ms"),
                  {"type": "string", "optional": True, "name": "io.debezium.data.Enum",
                   "version": 1, "parameters": {"allowed": _SNAPSHOT_ALLOWED},
                   "default": "false", "field": "snapshot"},
                  _f("string", False, "db"), _f("string", True, "sequence"),
                  _f("int64", True, "ts_us"), _f("int64", True, "ts_ns")]
        if schema is not None:
            source.append(_f("string", False, "schema"))
        source += [_f("string", False, "table"), _f("string", True, "change_lsn"),
                   _f("string", True, "commit_lsn")]
        return {"type": "struct", "fields": [
            image("before"), image("after"),
            {"type": "struct", "fields": source, "optional": False,
             "name": f"io.debezium.connector.{connector}.Source", "field": "source"},
            _f("string", False, "op"), _f("int64", True, "ts_ms"), _f("int64", True, "ts_us"),
            _f("int64", True, "ts_ns"),
            {"type": "struct", "fields": [_f("string", False, "id"),
                                          _f("int64", False, "total_order"),
                                          _f("int64", False, "data_collection_order")],
             "optional": True, "name": "event.block", "version": 1, "field": "transaction"},
        ], "optional": False, "name": f"{prefix}.Envelope", "version": 2}


def _f(type_, optional, field):
    return {"type": type_, "optional": optional, "field": field}


# Debezium's TransactionMetadataValue schema (io.debezium.schema.SchemaFactory), its fields in
# the order the seed's example writes them.
_TXN_SCHEMA = {"type": "struct", "fields": [
    _f("string", False, "status"), _f("string", False, "id"), _f("int64", False, "ts_ms"),
    _f("int64", True, "event_count"),
    {"type": "array", "items": {
        "type": "struct", "fields": [_f("string", False, "data_collection"),
                                     _f("int64", False, "event_count")],
        "optional": True, "name": "event.collection", "version": 1},
     "optional": True, "field": "data_collections"},
], "optional": False, "name": "io.debezium.connector.common.TransactionMetadataValue",
    "version": 1}


class _Layout:
    """One table's row image writer: column keys pre-rendered, one formatter per column."""

    def __init__(self, names, formats, pretty, level):
        self.names = names
        self.known = frozenset(names)
        if pretty:
            pad = "\n" + "  " * (level + 1)
            self.open, self.sep, self.close = "{" + pad, "," + pad, "\n" + "  " * level + "}"
            self.cols = [(n, _jstr(n) + ": ", f) for n, f in zip(names, formats)]
        else:
            self.open, self.sep, self.close = "{", ",", "}"
            self.cols = [(n, _jstr(n) + ":", f) for n, f in zip(names, formats)]

    def image(self, image, what):
        if image is None:
            return None
        parts = []
        for name, key, fmt in self.cols:
            v = image.get(name, _ABSENT)
            if v is _ABSENT:          # not sent: the decoder's `present` false
                continue
            try:
                parts.append(key + ("null" if v is None else fmt(v)))
            except (ValueError, TypeError, AttributeError, OverflowError) as e:
                raise ValueError(f"{what}.{name}: cannot write {v!r}: {e}") from None
        if len(parts) < len(image):
            extra = image.keys() - self.known
            if extra:
                raise ValueError(f"{what} image has columns the table lacks: {sorted(extra)}")
        if not parts:
            return _Raw("{}")
        return _Raw(self.open + self.sep.join(parts) + self.close)


def _field_schema(col, decimal_handling, time_precision) -> dict:
    """A column's Connect field schema (seed "Data type mappings", SPEC §5.3)."""
    ctype, kind, p = col.type, col.type.kind, col.type.precision
    name = params = None
    if kind == BOOL:
        type_ = "boolean"
    elif kind in (INT8, INT16):      # JDBC TINYINT is INT16 in Debezium too
        type_ = "int16"
    elif kind == INT32:
        type_ = "int32"
    elif kind == INT64:
        type_ = "int64"
    elif kind == DECIMAL:
        if decimal_handling == "precise":
            type_, name = "bytes", "org.apache.kafka.connect.data.Decimal"
            params = {"scale": str(ctype.scale), "connect.decimal.precision": str(p)}
        else:
            type_ = "string" if decimal_handling == "string" else "double"
    elif kind == DECTEXT:
        type_ = "string"
    elif kind == FLOAT32:
        type_ = "float"
    elif kind == FLOAT64:
        type_ = "double"
    elif kind == STRING:
        type_ = "string"
        if ctype.base == "XML":
            name = "io.debezium.data.Xml"
    elif kind == BINARY:
        type_ = "bytes"
    elif kind == DATE32:
        type_ = "int32"
        name = ("org.apache.kafka.connect.data.Date" if time_precision == "connect"
                else "io.debezium.time.Date")
    elif kind == TIME64:
        unit = _time_unit(p, time_precision)
        type_ = "int32" if unit == "ms" else "int64"
        name = ("org.apache.kafka.connect.data.Time" if time_precision == "connect" else
                {"ms": "io.debezium.time.Time", "us": "io.debezium.time.MicroTime",
                 "ns": "io.debezium.time.NanoTime"}[unit])
    elif kind == TIMESTAMP:
        unit = _timestamp_unit(p, time_precision)
        type_ = "int64"
        name = ("org.apache.kafka.connect.data.Timestamp" if time_precision == "connect" else
                {"ms": "io.debezium.time.Timestamp", "us": "io.debezium.time.MicroTimestamp",
                 "ns": "io.debezium.time.NanoTimestamp"}[unit])
    elif kind == TIMESTAMP_TZ:
        type_, name = "string", "io.debezium.time.ZonedTimestamp"
    else:
        raise ValueError(f"cannot write type {ctype.name}")
    d = {"type": type_, "optional": col.nullable}
    if name is not None:
        d["name"] = name
        d["version"] = 1
    if params is not None:
        d["parameters"] = params
    d["field"] = col.name
    return d


def _time_unit(p, time_precision):
    if time_precision == "connect":
        return "ms"
    if time_precision == "adaptive_time_microseconds":
        return "us"
    return "ms" if p <= 3 else "us" if p <= 6 else "ns"


def _timestamp_unit(p, time_precision):
    if time_precision == "connect":
        return "ms"
    return "ms" if p <= 3 else "us" if p <= 6 else "ns"


_UNIT_DIGITS = {"ms": 3, "us": 6, "ns": 9}


def _formatter(ctype, decimal_handling, time_precision, column):
    """value -> JSON text for one column type (the value is never None here)."""
    kind, p = ctype.kind, ctype.precision
    if kind == STRING:
        return _jstr
    if kind in (INT8, INT16, INT32, INT64):
        return lambda v: str(int(v))
    if kind == BOOL:
        return lambda v: "true" if v else "false"
    if kind == DECIMAL:
        s = ctype.scale
        if decimal_handling == "precise":
            return lambda v: '"' + _decimal_base64(unscaled(v, s)) + '"'
        if decimal_handling == "string":
            return lambda v: '"' + scaled_text(unscaled(v, s), s) + '"'
        return lambda v: scaled_text(unscaled(v, s), s)    # exact text, never a float
    if kind == DECTEXT:
        return lambda v: _jstr(str(v))
    if kind == FLOAT64:
        return lambda v: double_text(float(v))
    if kind == FLOAT32:
        return lambda v: float32_text(float(v))
    if kind == BINARY:
        return lambda v: '"' + base64.b64encode(bytes(v)).decode("ascii") + '"'
    if kind == DATE32:
        return lambda v: str(v.toordinal() - EPOCH_ORDINAL)
    if kind == TIME64:
        unit = _time_unit(p, time_precision)
        if unit == "ms":
            return lambda v: str(_day_us(v) // 1000)
        if unit == "us":
            return lambda v: str(_day_us(v))
        return lambda v: str(_day_us(v) * 1000 + getattr(v, "nanosecond", 0))
    if kind == TIMESTAMP:
        unit = _timestamp_unit(p, time_precision)
        if unit == "ms":
            return lambda v: str(wall_us(v) // 1000)
        if unit == "us":
            return lambda v: str(wall_us(v))
        return lambda v: str(wall_us(v) * 1000 + getattr(v, "nanosecond", 0))
    if kind == TIMESTAMP_TZ:
        return _zoned_text
    raise ValueError(f"column {column}: cannot write type {ctype.name}")


# -- values --------------------------------------------------------------------------------

def _first(a, b):
    return b if a is None else a


def _ms(us):
    return None if us is None else us // 1000        # floor, also before 1970


def _ns(us):
    return None if us is None else us * 1000


def _epoch_us_utc(t):
    """An envelope time (aware; a naive one is taken as UTC) -> µs since the epoch."""
    if t is None:
        return None
    if t.tzinfo is not None:
        t = t.astimezone(UTC).replace(tzinfo=None)
    return wall_us(t)


def _day_us(v):
    return (v.hour * 3600 + v.minute * 60 + v.second) * 1000000 + v.microsecond


def _zoned_text(v):
    """ZonedTimestamp text: ISO-8601 in UTC with `Z`, fraction digits only as needed
    (Debezium's ISO_OFFSET_DATE_TIME: `2023-11-30T12:34:56Z`, `…56.1Z`)."""
    if v.tzinfo is not None:
        v = v.astimezone(UTC)
    ns = v.microsecond * 1000 + getattr(v, "nanosecond", 0)
    frac = "." + f"{ns:09d}".rstrip("0") if ns else ""
    return (f'"{v.year:04d}-{v.month:02d}-{v.day:02d}T{v.hour:02d}:{v.minute:02d}:'
            f'{v.second:02d}{frac}Z"')


def _decimal_base64(n):
    """Connect Decimal bytes: big-endian two's complement of the shortest length that keeps
    the sign, as Java's BigInteger.toByteArray (at least 1 byte)."""
    size = (n if n >= 0 else ~n).bit_length() // 8 + 1
    return base64.b64encode(n.to_bytes(size, "big", signed=True)).decode("ascii")


def _lsn_text(pos):
    """A position's bytes -> Db2 LSN text: hex groups of 8, 8 and the rest
    (`00000000:00001e36:000000000004a1b4`); read back (docs/debezium.md: the groups' digits
    concatenated) it gives the same bytes. A str is taken as written."""
    if pos is None or isinstance(pos, str):
        return pos
    h = bytes(pos).hex()
    if not h:
        raise ValueError("an empty position has no LSN text")
    return ":".join(g for g in (h[:8], h[8:16], h[16:]) if g)


# -- generating ----------------------------------------------------------------------------

class _Nanos(dt.datetime):
    """A TIMESTAMP(9) value: the datetime (to the µs, what a decoder gives back, and equal to
    it) plus the ``nanosecond`` digits below, which the writer puts in a NanoTimestamp."""
    nanosecond = 0


# Columns after the INTEGER key ID, cycled to reach table_width: (name, Db2 type, nullable).
# The first 19 cover every kind the brief asks for.
_COLUMNS = (
    ("NAME", "VARCHAR(40)", True), ("AMOUNT", "DECIMAL(11,2)", True),
    ("ORDER_DATE", "DATE", True), ("CREATED_TS", "TIMESTAMP", False),
    ("STATUS", "CHAR(8)", True), ("QTY", "SMALLINT", True), ("LINE_SEQ", "BIGINT", True),
    ("RATE", "DOUBLE", True), ("SHIP_TIME", "TIME", True), ("NOTES", "VARCHAR(120)", True),
    ("BALANCE", "DECIMAL(31,8)", True), ("WEIGHT", "REAL", True),
    ("TRACKING", "VARBINARY(16)", True), ("UPDATED_TS", "TIMESTAMP(3)", True),
    ("EVENT_TSZ", "TIMESTAMP WITH TIME ZONE", True), ("GIFT_WRAP", "BOOLEAN", True),
    ("EXACT_TS", "TIMESTAMP(9)", True), ("COMMENTS", "CLOB", True),
    ("BIRTH_DATE", "DATE", True), ("TOTAL", "DECIMAL(18,4)", True),
    ("CUSTOMER_ID", "INTEGER", True), ("REGION", "DECIMAL(5,0)", True),
    ("PRIORITY", "CHAR(1)", True), ("CODE", "VARCHAR(12)", True),
)
_SERVER = {"version": "2.6.2.Final", "connector": "db2", "name": "db2server", "db": "TESTDB"}


def generate(rows, table_width=20, tables=1, seed=0, messages=False, schemas=False,
             decimal_handling="precise", time_precision="adaptive", transactions=True,
             pretty=False, tombstones=False, records_per_txn=(1, 4)):
    """A realistic, deterministic stream of ``rows`` change events -> ``(data, catalog)``.

    ``data`` is one ``bytes`` stream (newline-terminated documents), or with ``messages=True``
    a list of ``bytes`` messages, one per document. Tables ``GEN.TABLE_1…`` of
    ``table_width`` columns; a short snapshot (``op`` r) first, then transactions of
    ``records_per_txn`` (an inclusive range, or an int) events, mostly updates. With
    ``transactions``, each transaction is framed by BEGIN/END metadata events (not counted in
    ``rows``) and its events carry the ``transaction`` block. ``tombstones`` puts a tombstone
    after each delete: a ``None`` message, or the document ``null`` in a stream. Beyond
    ``FRESH_ROWS`` rows, whole pooled transactions repeat with their text encoded once (txids,
    LSNs and times then repeat and stop increasing) so 100 MB takes seconds.
    """
    catalog, writer, records = _stream(rows, table_width, tables, seed, schemas,
                                       decimal_handling, time_precision, transactions, pretty,
                                       records_per_txn)
    encoded = {}    # id(event) -> its document: a pooled event is encoded once
    out = []
    for ev in records:
        text = encoded.get(id(ev))
        if text is None:
            text = encoded[id(ev)] = writer.document(ev).encode("utf-8") + (
                b"" if messages else b"\n")
        out.append(text)
        if tombstones and ev["op"] == "d":
            out.append(None if messages else b"null\n")
    return (out if messages else b"".join(out)), catalog


def events(rows, table_width=20, tables=1, seed=0, schemas=False, decimal_handling="precise",
           time_precision="adaptive", transactions=True, pretty=False, tombstones=False,
           records_per_txn=(1, 4), messages=False):
    """The event dicts that :func:`generate` with the same arguments encodes, in order, and the
    catalog -> ``(list of dicts, catalog)``: data events and ``begin``/``commit`` control
    events, with the values a decoder returns (``seq`` = total_order, else the record's
    ordinal; control events' times to the ms, their ``data_collections`` the array's JSON text
    as written). Pooled events repeat the same dict objects where nothing differs."""
    catalog, _, records = _stream(rows, table_width, tables, seed, schemas, decimal_handling,
                                  time_precision, transactions, pretty, records_per_txn)
    out = []
    for i, ev in enumerate(records):
        if ev["seq"] is None:
            ev = {**ev, "seq": i}
        out.append(ev)
    return out, catalog


def _stream(rows, table_width, tables, seed, schemas, decimal_handling, time_precision,
            transactions, pretty, records_per_txn):
    """-> (catalog, writer, every record in output order). A transaction cut short by the
    end of the stream gets an END counting the events that made it in."""
    lo, hi = message_range(records_per_txn)
    catalog = _catalog(table_width, tables)
    writer = _Writer(catalog, schemas, decimal_handling, time_precision, transactions, pretty,
                     "db2")
    rng = random.Random(seed)
    gen = _Generator(catalog, rng, writer, transactions, rows)
    records, open_txn = [], None
    for msg in plan(gen.transaction, rows, lo, hi, rng):
        begin = gen.begin.get(id(msg))
        if begin is not None:
            records.append(begin)
            open_txn = []
        records.extend(msg)
        if open_txn is not None:
            open_txn.extend(msg)
        end = gen.end.get(id(msg))
        if end is not None:
            records.append(end)
            open_txn = None
    if open_txn:
        records.append(gen.end_event(open_txn[-1], open_txn))
    return catalog, writer, records


def _catalog(table_width, tables):
    if table_width < 1 or tables < 1:
        raise ValueError("table_width and tables must be at least 1")
    cols = [Column("ID", parse_type("INTEGER"), nullable=False)]
    for i in range(table_width - 1):
        name, type_text, nullable = _COLUMNS[i % len(_COLUMNS)]
        lap = i // len(_COLUMNS)
        cols.append(Column(f"{name}_{lap + 1}" if lap else name, parse_type(type_text), nullable))
    return Catalog([Table("GEN", f"TABLE_{t + 1}", tuple(cols), ("ID",))
                    for t in range(tables)])


class _Generator:
    """Keeps each table's live rows (so updates and deletes act on rows that exist), the
    log's LSN and the clock (so positions and times only move forward)."""

    def __init__(self, catalog, rng, writer, transactions, rows):
        self.rng = rng
        self.writer = writer
        self.transactions = transactions
        self.tables = list(catalog)
        self.makers = {t.name: [self._maker(c) for c in t.columns] for t in self.tables}
        self.rows = LiveRows(rng, self.makers)
        self.lsn = (0x1E36 << 64) | 0x4A1B4         # 16 bytes, as the real 2.6.2 sample's
        self.clock = dt.datetime(2025, 1, 14, 23, 46, 21, 548533, tzinfo=UTC)
        self.processed = self.clock                 # the connector's processing time
        self.snapshot_left = min(100, rows // 50)    # a few snapshot reads open the stream
        self.snapshot_lsn = None
        self.begin, self.end = {}, {}                # id(first/last message) -> BEGIN/END

    def transaction(self, left, lo, hi):
        """One transaction of at most ``left`` events: a list of one-event messages."""
        if self.snapshot_left > 0:
            return [[self._snapshot_read()]]
        r = self.rng
        n = min(r.randint(lo, hi), left)
        self.clock += dt.timedelta(milliseconds=r.randint(0, 1500), microseconds=r.randint(0, 999))
        changes = [(random_change(self.rng, self.tables, self.rows), self._lsn()) for _ in range(n)]
        commit_lsn = self._lsn()
        commit = _lsn_text(commit_lsn)
        txid = commit if self.transactions else None       # the Db2 connector's id: commit LSN
        commit_ts = self.clock
        processed = max(commit_ts + dt.timedelta(microseconds=r.randint(800, 400000)),
                        self.processed)        # the connector's clock only moves forward
        per_table = {}
        evs = []
        for i, ((op, t, before, after), change_lsn) in enumerate(changes):
            per_table[t.name] = k = per_table.get(t.name, 0) + 1
            processed += dt.timedelta(microseconds=r.randint(5, 3000))
            evs.append({
                "op": op, "source_op": op, "schema": t.schema, "table": t.table,
                "txid": txid, "commit_ts": commit_ts, "change_ts": commit_ts,
                "commit_pos": commit_lsn, "change_pos": change_lsn,
                "seq": i + 1 if self.transactions else None,
                "before": before, "after": after,
                "source": {**_SERVER, "snapshot": "false", "processed_ts": processed,
                           "change_lsn": _lsn_text(change_lsn), "commit_lsn": commit,
                           "data_collection_order": k if self.transactions else None,
                           "event_count": None, "data_collections": None}})
        self.processed = processed
        msgs = [[ev] for ev in evs]
        if self.transactions:
            self.begin[id(msgs[0])] = self._control("begin", evs[0], None, None)
            self.end[id(msgs[-1])] = self.end_event(evs[-1], evs)
        return msgs

    def end_event(self, last, evs):
        """The END of the transaction of ``evs`` (its events that are in the stream)."""
        counts = {}
        for ev in evs:
            key = f"{ev['schema']}.{ev['table']}"
            counts[key] = counts.get(key, 0) + 1
        collections = [{"data_collection": k, "event_count": n} for k, n in counts.items()]
        level = self.writer.payload_level + 1
        return self._control("commit", last, len(evs), self.writer.render(collections, level))

    @staticmethod
    def _control(op, ev, count, collections):
        """A BEGIN/END event as the decoder gives it back: ts_ms is all the message has."""
        ts = ev["commit_ts"]
        ts = ts.replace(microsecond=ts.microsecond - ts.microsecond % 1000)
        return {"op": op, "source_op": "BEGIN" if op == "begin" else "END", "schema": None,
                "table": None, "txid": ev["txid"], "commit_ts": ts, "change_ts": ts,
                "commit_pos": None, "change_pos": None, "seq": None, "before": None,
                "after": None,
                "source": {"version": None, "connector": None, "name": None, "db": None,
                           "snapshot": None, "processed_ts": None, "change_lsn": None,
                           "commit_lsn": None, "data_collection_order": None,
                           "event_count": count, "data_collections": collections}}

    def _snapshot_read(self):
        """A snapshot row (`op` r): no transaction and no change LSN; the commit LSN is the
        one the snapshot started at (the 1.3.0 Db2 sample in peer-data)."""
        r = self.rng
        if self.snapshot_lsn is None:
            self.snapshot_lsn = self._lsn()
        self.snapshot_left -= 1
        t = r.choice(self.tables)
        after = self.rows.insert(t)
        self.clock += dt.timedelta(microseconds=r.randint(50, 3000))
        self.processed = max(self.processed, self.clock) + dt.timedelta(
            microseconds=r.randint(100, 5000))
        return {"op": "r", "source_op": "r", "schema": t.schema, "table": t.table,
                "txid": None, "commit_ts": self.clock, "change_ts": self.clock,
                "commit_pos": self.snapshot_lsn, "change_pos": None, "seq": None,
                "before": None, "after": after,
                "source": {**_SERVER, "snapshot": "last" if self.snapshot_left == 0 else "true",
                           "processed_ts": self.processed,
                           "change_lsn": None, "commit_lsn": _lsn_text(self.snapshot_lsn),
                           "data_collection_order": None, "event_count": None,
                           "data_collections": None}}

    def _lsn(self):
        self.lsn += self.rng.randint(0x20, 0x900)
        return self.lsn.to_bytes(16, "big")

    def _maker(self, col):
        """() -> a random value of the column's type: ~10% null when nullable."""
        return nullable_maker(self.rng, self._values(col), col.nullable, 0.1)

    def _values(self, col):
        """Random values, each one exactly what a decoder gives back (REAL values float32,
        TIMESTAMP(p)/TIME at their precision or the coarser one the time_precision mode
        writes — `connect` keeps ms; TIMESTAMP(9) carries nanoseconds beside)."""
        r, ctype = self.rng, col.type
        kind, p = ctype.kind, ctype.precision
        mode = self.writer.time_precision
        if kind == TIME64:
            p = min(p, _UNIT_DIGITS[_time_unit(p, mode)])
        elif kind == TIMESTAMP:
            p = min(p, _UNIT_DIGITS[_timestamp_unit(p, mode)])
        if kind == STRING and ctype.base in ("CHAR", "CHARACTER"):
            return char_maker(r, ctype.length or 1)
        if kind == STRING:
            return text_maker(r, ctype.length or 160)
        if kind in (INT16, INT32, INT64):
            return integer_maker(r, {INT16: 16, INT32: 32, INT64: 64}[kind])
        if kind == DECIMAL:
            return decimal_maker(r, ctype.precision, ctype.scale)
        if kind == FLOAT64:
            return double_maker(r)
        if kind == FLOAT32:
            return lambda: float32(round(r.uniform(0, 1000), 3) if r.random() < 0.8
                                else r.uniform(-1, 1) * 10.0 ** r.randint(-30, 30))
        if kind == BOOL:
            return lambda: r.random() < 0.5
        if kind == BINARY:
            return lambda: r.randbytes(r.randint(1, ctype.length or 16))
        if kind == DATE32:       # 1940..2035: a third before 1970
            return lambda: dt.date(1940, 1, 1) + dt.timedelta(days=r.randint(0, 34698))
        if kind == TIME64:
            return lambda: dt.time(r.randint(0, 23), r.randint(0, 59), r.randint(0, 59),
                                   truncate_us(r.randint(0, 999999), p))
        if kind == TIMESTAMP_TZ:
            base = dt.datetime(2000, 1, 1, tzinfo=UTC)
            return lambda: base + dt.timedelta(
                seconds=r.randint(0, 10 ** 9), microseconds=truncate_us(r.randint(0, 999999), p))
        if kind == TIMESTAMP:    # from 1965: a few before the epoch
            base = dt.datetime(1965, 1, 1)
            if p > 6:
                def nanos():
                    v = base + dt.timedelta(seconds=r.randint(0, 2 * 10 ** 9),
                                            microseconds=r.randint(0, 999999))
                    v = _Nanos(v.year, v.month, v.day, v.hour, v.minute, v.second,
                               v.microsecond)
                    ns = r.randint(0, 999)
                    v.nanosecond = ns - ns % 10 ** (9 - p)
                    return v
                return nanos
            return lambda: base + dt.timedelta(
                seconds=r.randint(0, 2 * 10 ** 9),
                microseconds=truncate_us(r.randint(0, 999999), p))
        raise ValueError(f"no generator for {ctype.name}")
