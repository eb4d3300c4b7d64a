"""Writer and synthetic-stream generator for `qlik` (Qlik Replicate JSON data messages): the
inverse of the decoder, as SPEC §5.5 and docs/qlik.md read it.

``encode`` turns envelope-shaped events (dicts, or a decoded ``pyarrow.Table``) into Replicate
messages — the Kafka envelope (``{"magic":"atMSG","type":"DT",…}``) or the Pub/Sub form —
shaped like the real UPDATE message in peer-data/qlik: every value a JSON string, masks in
whole bytes with one byte to spare (16 columns: ``00FFFF``), a metadata message before each
table's first data message. ``generate`` makes realistic streams for tests and benchmarks, and
``events`` returns the Python values behind a generated stream, as a decoder gives them back,
so tests can compare the two.
"""
from __future__ import annotations

import datetime as dt
import hashlib
import random
from dataclasses import replace
from json.encoder import encode_basestring as _jstr   # the C escaper, non-ASCII kept as is

from ._plan import STATUS, LiveRows, kind_maker, message_range, nullable_maker, plan, \
    text_maker
from ._tables import infer_tables
from ._text import double_text, float32_text, scaled_text, unscaled
from ..catalog import (BINARY, BOOL, DATE32, DECIMAL, DECTEXT, FLOAT32, FLOAT64, INT8, INT16,
                       INT32, INT64, STRING, TIME64, TIMESTAMP, TIMESTAMP_TZ, Catalog, Column,
                       Table, parse_type)

_UTC = dt.timezone.utc
_OPERATION = {"c": "INSERT", "u": "UPDATE", "d": "DELETE", "r": "REFRESH"}
_FORMS = ("kafka", "pubsub")
_ABSENT = object()


class _Raw(str):
    """JSON text already rendered (a row image, a number): written as it is."""
    __slots__ = ()


# -- encoding ------------------------------------------------------------------------------

def encode(events, catalog=None, form="kafka", md=True, all_strings=True, pretty=False,
           masks=True, messages=False):
    """Write one Replicate message per event -> ``bytes`` (each document followed by ``\\n``),
    or with ``messages=True`` a list of ``bytes`` messages (one per document, no newline).

    ``events``: dicts in the envelope shape (SPEC §3) or a ``pyarrow.Table``/``RecordBatch`` in
    envelope form, with ``op`` ``c u d r`` (INSERT, UPDATE, DELETE, REFRESH: ``data`` is the
    after image, the before image for a DELETE; an UPDATE's before image is ``beforeData``).
    ``form``: ``"kafka"`` (the ``atMSG`` envelope) or ``"pubsub"`` (``schema``/``table``, then
    ``headers``, ``data``, ``beforeData`` at the top). ``md`` writes a metadata message before
    each table's first data message (in the Kafka form its ``schemaId`` is then every data
    message's ``messageSchemaId``; without, a Kafka stream names no table and is decoded with
    ``table=…``). With a catalog, values are written by their column's type; a table the
    catalog lacks gets column types from the Python types of its values.

    ``all_strings``: every value a JSON string, as Replicate writes them; else numbers and
    booleans as JSON numbers and ``true``/``false``. ``masks``: changeMask from ``changed``
    (true bits set; null, as for a LOB, clear) and columnMask from ``present``, as hex in
    ``ncols // 8 + 1`` bytes; without masks neither is written and a column whose ``present``
    is false is left out of the image (the decoder then finds ``present`` by the keys).
    Header fields the event lacks are written as ``""`` (texts) or ``null`` (counter, last
    event), as Replicate writes a REFRESH; ``transactionEventCounter`` is ``seq`` for CDC
    operations (REFRESH has none: its ``seq`` is the decoder's ordinal).
    """
    events = events.to_pylist() if hasattr(events, "to_pylist") else list(events)
    writer = _Writer(catalog, form, md, all_strings, pretty, masks)
    writer.add_tables(infer_tables(events, writer.catalog))
    docs = [d for ev in events for d in writer.documents(ev)]
    if messages:
        return [d.encode("utf-8") for d in docs]
    return "".join(d + "\n" for d in docs).encode("utf-8")


class _Writer:
    """Builds the JSON documents; one value formatter per table column, chosen once."""

    def __init__(self, catalog, form, md, all_strings, pretty, masks):
        if form not in _FORMS:
            raise ValueError(f"form must be one of {', '.join(_FORMS)}, not {form!r}")
        self.catalog = Catalog.coerce(catalog)
        self.form, self.md, self.pretty, self.masks = form, bool(md), bool(pretty), bool(masks)
        self.all_strings = bool(all_strings)
        self._extra = {}          # table name -> Table inferred from the values
        self._layouts = {}        # table name -> (Table, [(column, formatter)])
        self._announced = set()   # tables whose metadata message is written

    def add_tables(self, tables):
        self._extra.update(tables)

    def documents(self, ev) -> list:
        """The JSON documents of one event: its data message, after its table's metadata
        message when that is the table's first."""
        op = ev.get("op")
        if op not in _OPERATION:
            raise ValueError(f"cannot write an event with op {op!r}; expected one of "
                             f"{', '.join(_OPERATION)}")
        schema, table = ev.get("schema"), ev.get("table")
        if not table:
            raise ValueError("a data message needs a table")
        name = f"{schema}.{table}" if schema else table
        t, cols = self._layout(name)
        out = []
        if self.md and name not in self._announced:
            self._announced.add(name)
            out.append(self.render(self.metadata(t)))
        images = [self._image(cols, ev.get("before" if op == "d" else "after"),
                              ev.get("present")),
                  self._image(cols, ev.get("before"), ev.get("present")) if op == "u" else None]
        headers = self._headers(ev, op, cols)
        if self.form == "kafka":
            doc = {"magic": "atMSG", "type": "DT", "headers": None,
                   "messageSchemaId": schema_id(t) if self.md else None, "messageSchema": None,
                   "message": {"data": images[0], "beforeData": images[1], "headers": headers}}
        else:
            doc = {"schema": schema, "table": table, "headers": headers, "data": images[0],
                   "beforeData": images[1]}
        out.append(self.render(doc))
        return out

    def metadata(self, t: Table) -> dict:
        """A table's metadata message (seed "Metadata message" of the Kafka target): its
        columns with Replicate's types, as Catalog.from_qlik reads them back."""
        columns = {}
        for i, c in enumerate(t.columns):
            qtype, length, precision, scale = replicate_type(c.type)
            columns[c.name] = {"ordinal": i + 1, "type": qtype, "length": length,
                               "precision": precision, "scale": scale,
                               "primaryKeyPosition": (t.key.index(c.name) + 1
                                                      if c.name in t.key else 0)}
        body = {"schemaId": schema_id(t),
                "lineage": {"server": "qlik-replicate", "task": "cdcfast", "schema": t.schema,
                            "table": t.table, "tableVersion": 1,
                            "timestamp": "2023-03-21T21:30:00.000"},
                "tableStructure": {"tableColumns": columns}}
        if self.form == "pubsub":
            return body
        return {"magic": "atMSG", "type": "MD", "headers": None, "messageSchemaId": None,
                "messageSchema": None, "message": body}

    def _headers(self, ev, op, cols) -> dict:
        src = ev.get("source") or {}
        pos = ev.get("change_pos") if ev.get("change_pos") is not None else ev.get("commit_pos")
        sequence = src.get("change_sequence")
        if sequence is None and pos is not None:
            sequence = bytes(pos).decode("utf-8")
        stamp = ev.get("change_ts") if ev.get("change_ts") is not None else ev.get("commit_ts")
        h = {"operation": src.get("operation") or _OPERATION[op],
             "changeSequence": sequence or "",
             "timestamp": _header_time(stamp) if stamp is not None else "",
             "streamPosition": src.get("stream_position") or "",
             "transactionId": ev.get("txid") or ""}
        if self.masks:
            h["changeMask"] = mask_text(ev.get("changed"), cols)
            h["columnMask"] = mask_text(ev.get("present"), cols)
        h["transactionEventCounter"] = ev.get("seq") if op != "r" else None
        h["transactionLastEvent"] = src.get("transaction_last_event")
        return h

    def _image(self, cols, image, present):
        if image is None:
            return None
        parts = []
        for c, fmt in cols:
            v = image.get(c.name, _ABSENT)
            if v is _ABSENT or (not self.masks and present and present.get(c.name) is False):
                continue
            try:
                parts.append((c.name, "null" if v is None else fmt(v)))
            except (ValueError, TypeError, AttributeError, OverflowError) as e:
                raise ValueError(f"{c.name}: cannot write {v!r}: {e}") from None
        return {k: _Raw(v) for k, v in parts}

    # -- JSON text ------------------------------------------------------------------------
    def render(self, value, level=0) -> str:
        """JSON text of a document (dicts keep their key order); with ``pretty``, indented by
        4 spaces as in the peer-data sample."""
        if isinstance(value, _Raw):
            return value
        if isinstance(value, dict):
            if not value:
                return "{}"
            if not self.pretty:
                return "{" + ",".join(f"{_jstr(k)}:{self.render(v)}"
                                      for k, v in value.items()) + "}"
            pad = "\n" + "    " * (level + 1)
            return ("{" + ",".join(f"{pad}{_jstr(k)}: {self.render(v, level + 1)}"
                                   for k, v in value.items()) + "\n" + "    " * level + "}")
        if value is None:
            return "null"
        if value is True or value is False:
            return "true" if value else "false"
        if isinstance(value, int):
            return str(value)
        return _jstr(str(value))

    # -- tables ---------------------------------------------------------------------------
    def _layout(self, name):
        got = self._layouts.get(name)
        if got is None:
            t = self.catalog.get(name) if self.catalog is not None else None
            t = t or self._extra.get(name)
            if t is None:
                raise ValueError(f"no columns known for table {name!r}")
            got = self._layouts[name] = (t, [(c, _formatter(c.type, self.all_strings))
                                             for c in t.columns])
        return got


def schema_id(t: Table) -> str:
    """A table's schemaId: 32 hex digits, fixed for its name (tableVersion 1)."""
    return hashlib.md5(f"{t.name}:1".encode("utf-8")).hexdigest()


def mask_text(flags, cols) -> str:
    """The hex mask of a `changed`/`present` struct: bit i set where column i is true, in
    ``ncols // 8 + 1`` bytes (Replicate's padding: 16 columns give ``00FFFF``); "" for none."""
    if flags is None:
        return ""
    bits = 0
    for i, (c, _) in enumerate(cols):
        if flags.get(c.name) is True:
            bits |= 1 << i
    return f"{bits:0{2 * (len(cols) // 8 + 1)}X}"


def replicate_type(ctype) -> tuple:
    """(Replicate type, length, precision, scale) of a catalog type, as a metadata message
    lists a column; Catalog.from_qlik maps it back to the same Arrow type."""
    kind, base = ctype.kind, ctype.base
    if kind == STRING:
        if base in ("CLOB", "XML"):
            return "CLOB", 0, 0, 0
        if base in ("NCLOB", "DBCLOB"):
            return "NCLOB", 0, 0, 0
        wide = base in ("NCHAR", "NVARCHAR2", "GRAPHIC", "VARGRAPHIC", "LONG VARGRAPHIC")
        return ("WSTRING" if wide else "STRING"), ctype.length, 0, 0
    if kind == BINARY:
        return ("BLOB", 0, 0, 0) if base == "BLOB" else ("BYTES", ctype.length, 0, 0)
    if kind == DECIMAL:
        return "NUMERIC", 0, ctype.precision, ctype.scale
    if kind == DECTEXT:
        return "NUMERIC", 0, 0, 0
    if kind in (TIME64, TIMESTAMP, TIMESTAMP_TZ):
        return ("TIME" if kind == TIME64 else "DATETIME"), 0, 0, ctype.precision
    return {BOOL: "BOOLEAN", INT8: "INT1", INT16: "INT2", INT32: "INT4", INT64: "INT8",
            FLOAT32: "REAL4", FLOAT64: "REAL8", DATE32: "DATE"}[kind], 0, 0, 0


# -- values --------------------------------------------------------------------------------

def _formatter(ctype, all_strings):
    """value -> JSON text for one column type (the value is never None here)."""
    kind, p = ctype.kind, ctype.precision

    def quoted(f):
        return (lambda v: '"' + f(v) + '"') if all_strings else f

    if kind == STRING:
        return _jstr
    if kind in (INT8, INT16, INT32, INT64):
        return quoted(lambda v: str(int(v)))
    if kind == BOOL:
        return quoted(lambda v: "true" if v else "false")
    if kind == DECIMAL:
        s = ctype.scale
        return quoted(lambda v: scaled_text(unscaled(v, s), s))     # exact, never a float
    if kind == DECTEXT:
        return quoted(str)
    if kind in (FLOAT32, FLOAT64):
        text = float32_text if kind == FLOAT32 else double_text

        def real(v):
            t = text(float(v))
            if t.startswith('"') or not all_strings:     # NaN and infinities: strings anyway
                return t
            return '"' + t + '"'
        return real
    if kind == BINARY:
        return lambda v: '"' + bytes(v).hex().upper() + '"'
    if kind == DATE32:
        return lambda v: f'"{v.year:04d}-{v.month:02d}-{v.day:02d}"'
    if kind == TIME64:
        return lambda v: '"' + _clock(v, p) + '"'
    if kind in (TIMESTAMP, TIMESTAMP_TZ):
        return lambda v: '"' + _stamp(v, p, " ") + '"'
    raise ValueError(f"cannot write type {ctype.name}")


def _clock(v, p) -> str:
    """`HH:MM:SS` with the column's p fraction digits (6 when the value has finer ones)."""
    text = f"{v.hour:02d}:{v.minute:02d}:{v.second:02d}"
    us = v.microsecond
    digits = p if p > 6 or us % 10 ** (6 - p) == 0 else 6
    if digits == 0:
        return text
    return text + "." + f"{us:06d}{'0' * max(0, digits - 6)}"[:digits]


def _stamp(v, p, sep) -> str:
    """`YYYY-MM-DD HH:MM:SS[.f]` (sep between date and time); an aware value in UTC."""
    if v.tzinfo is not None:
        v = v.astimezone(_UTC)
    return f"{v.year:04d}-{v.month:02d}-{v.day:02d}{sep}{_clock(v, p)}"


def _header_time(t) -> str:
    """headers.timestamp: UTC, `T`, milliseconds as Replicate writes it (`…T21:34:19.511`),
    microseconds when the time has them."""
    return _stamp(t, 3, "T")


# -- generating ----------------------------------------------------------------------------

# Columns after the INTEGER key ID, cycled to reach table_width: (name, catalog type). Every
# type is one Catalog.from_qlik gives for the type the metadata message writes, so a stream's
# metadata messages describe exactly its catalog. All nullable: Replicate's metadata does not
# say, and a catalog built from it makes every column nullable.
_COLUMNS = (
    ("ITEM_NO", "VARCHAR(20)"), ("ITEM_DESC", "VARCHAR(60)"), ("QTY", "SMALLINT"),
    ("AMOUNT", "DECIMAL(11,2)"), ("ORDER_DATE", "DATE"), ("LOAD_DATE_TIME", "TIMESTAMP(6)"),
    ("STATUS", "VARCHAR(8)"), ("LINE_SEQ", "BIGINT"), ("RATE", "DOUBLE"),
    ("SHIP_TIME", "TIME(0)"), ("NOTES", "NVARCHAR2(120)"), ("BALANCE", "DECIMAL(31,8)"),
    ("WEIGHT", "REAL"), ("TRACKING", "VARBINARY(16)"), ("UPDATED_TS", "TIMESTAMP(3)"),
    ("GIFT_WRAP", "BOOLEAN"), ("COMMENTS", "CLOB"), ("PRIORITY", "TINYINT"),
    ("SERIAL_NO", "DECIMAL(20,0)"), ("USE_UM_CD", "VARCHAR(2)"),
)
_ABSENT_SHARE = 0.05      # updates with a column Replicate could not capture (columnMask bit 0)


def generate(rows, table_width=20, tables=1, seed=0, messages=False, form="kafka", md=True,
             all_strings=True, pretty=False, masks=True, records_per_txn=(1, 4)):
    """A realistic, deterministic stream of ``rows`` data messages -> ``(data, catalog)``.

    ``data`` is one ``bytes`` stream (newline-terminated documents), or with ``messages=True``
    a list of ``bytes`` messages, one per document; metadata messages (``md``) are extra
    documents, not counted in ``rows``. Tables ``GEN.TABLE_1…`` of ``table_width`` columns (key
    ``ID``); a short full load (REFRESH, CDC header fields ``""``) first, then transactions of
    ``records_per_txn`` (an inclusive range, or an int) changes — mostly UPDATEs with
    ``beforeData``, some INSERTs and DELETEs — numbered by ``transactionEventCounter``, the last
    one with ``transactionLastEvent`` true; a 35-digit ``changeSequence``, a 32-digit
    ``transactionId``, a Db2-style ``streamPosition``. Now and then an UPDATE has a column
    Replicate could not capture (null, its columnMask bit clear). The other options are
    :func:`encode`'s. A Kafka stream of several tables needs ``md`` (or it names none); with
    ``md`` the catalog lists each table's schemaId (``qlik_schema_ids``), as
    ``Catalog.from_qlik`` over the stream does, so it names the tables of data messages cut
    off from their metadata message (another Spark partition).
    Beyond ``FRESH_ROWS`` rows whole pooled transactions repeat, their text encoded once.
    """
    catalog, writer, records = _stream(rows, table_width, tables, seed, form, md, all_strings,
                                       pretty, masks, records_per_txn)
    encoded = {}    # id(event) -> its documents: a pooled event is encoded once
    out = []
    for ev in records:
        docs = encoded.get(id(ev))
        if docs is None:
            end = b"" if messages else b"\n"
            docs = encoded[id(ev)] = [d.encode("utf-8") + end for d in writer.documents(ev)]
            if len(docs) > 1:                   # the table's metadata message: once
                encoded[id(ev)] = docs[1:]
        out.extend(docs)
    return (out if messages else b"".join(out)), catalog


def events(rows, table_width=20, tables=1, seed=0, form="kafka", md=True, all_strings=True,
           pretty=False, masks=True, records_per_txn=(1, 4), messages=False):
    """The event dicts that :func:`generate` with the same arguments encodes, in order, and the
    catalog -> ``(list of dicts, catalog)``, with the values a decoder returns (a REFRESH's
    ``seq`` its ordinal among the data messages)."""
    catalog, _, records = _stream(rows, table_width, tables, seed, form, md, all_strings,
                                  pretty, masks, records_per_txn)
    return [ev if ev["seq"] is not None else {**ev, "seq": i}
            for i, ev in enumerate(records)], catalog


def _stream(rows, table_width, tables, seed, form, md, all_strings, pretty, masks,
            records_per_txn):
    """-> (catalog, writer, every data event in output order)."""
    if form == "kafka" and not md and tables > 1:
        raise ValueError("a Kafka stream without metadata messages names no table: "
                         "use tables=1, md=True or form='pubsub'")
    lo, hi = message_range(records_per_txn)
    catalog = _catalog(table_width, tables)
    if md:          # the schemaIds of the metadata messages, as Catalog.from_qlik keeps them
        catalog = Catalog([replace(t, qlik_schema_ids=(schema_id(t),)) for t in catalog])
    writer = _Writer(catalog, form, md, all_strings, pretty, masks)
    rng = random.Random(seed)
    gen = _Generator(catalog, rng, masks, rows)
    records = [ev for msg in plan(gen.transaction, rows, lo, hi, rng) for ev in msg]
    return catalog, writer, records


def _catalog(table_width, tables):
    if table_width < 1 or tables < 1:
        raise ValueError("table_width and tables must be at least 1")
    cols = [Column("ID", parse_type("INTEGER"))]
    for i in range(table_width - 1):
        name, type_text = _COLUMNS[i % len(_COLUMNS)]
        lap = i // len(_COLUMNS)
        cols.append(Column(f"{name}_{lap + 1}" if lap else name, parse_type(type_text)))
    return Catalog([Table("GEN", f"TABLE_{t + 1}", tuple(cols), ("ID",))
                    for t in range(tables)])


_TICKS_1970 = 621355968000000000        # .NET ticks (100 ns since 0001-01-01) at the epoch


class _Generator:
    """Keeps each table's live rows (so updates and deletes act on rows that exist), the
    change counter and the clock (so sequences and times only move forward)."""

    def __init__(self, catalog, rng, masks, rows):
        self.rng = rng
        self.masks = masks
        self.tables = list(catalog)
        self.live = LiveRows(rng, {t.name: [self._maker(c) for c in t.columns]
                                   for t in self.tables})
        self.change = 17                            # the peer-data sample's change number
        self.lrsn = 0x3A90202DB790001
        self.clock = dt.datetime(2023, 3, 21, 21, 34, 16, 580000, tzinfo=_UTC)
        self.refresh_left = min(100, rows // 50)    # a short full load opens the stream

    def transaction(self, left, lo, hi):
        """One transaction of at most ``left`` changes: a list of one-event messages."""
        r = self.rng
        if self.refresh_left > 0:
            self.refresh_left -= 1
            t = r.choice(self.tables)
            return [[self._event("r", t, None, self.live.insert(t), set(), None, None, None,
                                 None)]]
        n = min(r.randint(lo, hi), left)
        self.clock += dt.timedelta(milliseconds=r.randint(1, 1500))
        txid = f"00000000{r.getrandbits(48):012X}000000000000"
        latency = dt.timedelta(milliseconds=r.randint(100, 3000))   # the sample's: ~3 s
        evs = []
        for i in range(n):
            op, t, before, after, absent = self._change()
            self.clock += dt.timedelta(microseconds=r.randint(0, 20000))
            self.change += r.randint(1, 40)
            self.lrsn += r.randint(0x20, 0x900)
            # YYYYMMDDHHmmSShh + a 19-digit change number: bytewise order is change order
            seq_text = (self.clock.strftime("%Y%m%d%H%M%S")
                        + f"{self.clock.microsecond // 10000:02d}{self.change:019d}")
            ticks = _TICKS_1970 + int(self.clock.timestamp()) * 10_000_000 \
                + self.clock.microsecond * 10
            position = f"1015;{ticks};20221211140008252023B|{self.lrsn:024X}"
            stamp = self.clock + latency
            stamp = stamp.replace(microsecond=stamp.microsecond - stamp.microsecond % 1000)
            evs.append(self._event(op, t, before, after, absent, txid, stamp, seq_text,
                                   position, counter=i + 1, last=i == n - 1))
        return [[ev] for ev in evs]

    def _event(self, op, t, before, after, absent, txid, stamp, seq_text, position,
               counter=None, last=None):
        """The event as a decoder gives it back."""
        cols = [(c, None) for c in t.columns]
        if absent:
            before = {k: (None if k in absent else v) for k, v in before.items()}
            after = {k: (None if k in absent else v) for k, v in after.items()}
        present = {c.name: c.name not in absent for c in t.columns}
        changed = self._changed(op, t, before, after, absent)
        pos = seq_text.encode("ascii") if seq_text else None
        return {
            "op": op, "source_op": _OPERATION[op], "schema": t.schema, "table": t.table,
            "txid": txid, "commit_ts": stamp, "change_ts": stamp, "commit_pos": pos,
            "change_pos": pos, "seq": counter,
            "before": before if op in ("u", "d") else None,
            "after": after if op in ("c", "u", "r") else None,
            "changed": changed, "present": present,
            "source": {"change_sequence": seq_text, "stream_position": position,
                       "change_mask": mask_text(changed, cols) if self.masks else None,
                       "column_mask": mask_text(present, cols) if self.masks else None,
                       "transaction_last_event": last, "operation": _OPERATION[op]}}

    def _changed(self, op, t, before, after, absent):
        """`changed` as the decoder finds it: from Replicate's changeMask (INSERT and REFRESH
        all columns, DELETE the key, UPDATE the changed ones; LOBs never), else (no masks)
        as SPEC §3 computes it."""
        if self.masks:
            def bit(c):
                if c.type.is_lob:
                    return None
                if op in ("c", "r"):
                    return True
                if op == "d":
                    return c.name in t.key
                return c.name not in absent and before[c.name] != after[c.name]
            return {c.name: bit(c) for c in t.columns}
        if op in ("c", "r"):
            return {c.name: True for c in t.columns}
        if op == "d":
            return {c.name: False for c in t.columns}
        return {c.name: before[c.name] != after[c.name] for c in t.columns}

    def _change(self):
        """(op, table, before, after, columns Replicate could not capture) of one change:
        a quarter inserts, mostly updates of about two columns, some deletes."""
        r = self.rng
        t = r.choice(self.tables)
        x = r.random()
        if x < 0.25 or not self.live.count(t):
            return "c", t, None, self.live.insert(t), set()
        if x < 0.85:
            before, after = self.live.update(t, 4)
            absent = set()
            if len(t.columns) > 1 and r.random() < _ABSENT_SHARE:
                absent.add(t.columns[r.randrange(1, len(t.columns))].name)
            return "u", t, before, after, absent
        return "d", t, self.live.delete(t), None, set()

    def _maker(self, col):
        """() -> a random value of the column's type: ~10% null."""
        r, ctype = self.rng, col.type
        if ctype.kind == STRING and ctype.base == "VARCHAR" and 0 < ctype.length <= 8:
            def make():                     # codes and states
                return r.choice(STATUS)[:ctype.length]
        elif ctype.kind == STRING:
            make = text_maker(r, ctype.length or 400)
        else:
            make = kind_maker(r, ctype)
        return nullable_maker(r, make, col.nullable, 0.1)


__all__ = ["encode", "generate", "events", "mask_text", "replicate_type", "schema_id"]
