"""Writer and synthetic-stream generator for `olr` (OpenLogReplicator JSON): the inverse of the
decoder, as SPEC §5.4 and docs/olr.md read it.

``encode`` turns envelope-shaped events (dicts, or a decoded ``pyarrow.Table``) into OLR
messages in any of the writer's variants (the options below carry OpenLogReplicator's
format-option names in our words); ``generate`` makes realistic streams shaped like the real
output in peer-data/olr (OpenLogReplicator 1.9 over Oracle 23ai), and ``events`` returns the
events behind a generated stream as a decoder gives them back, so tests can compare the two.

What the writer does as OpenLogReplicator does: NUMBER values are JSON numbers in Oracle's
plain decimal text (no exponent, no trailing zeros); BINARY_FLOAT/BINARY_DOUBLE are JSON
numbers (the shortest text that reads back as the same value, written without a `.0`); RAW
and BLOB are lower-case hex; BOOLEAN is `1`/`0`; DATE/TIMESTAMP values are epochs in
``epoch_unit``, finer digits rounded to the nearest unit (half up), or ISO-8601 text.
"""
from __future__ import annotations

import datetime as dt
import decimal
import math
import random
import re
from json.encoder import encode_basestring as _jstr   # the C escaper, non-ASCII kept as is

from ._plan import LiveRows, char_maker, decimal_maker, float32, kind_maker, message_range, \
    nullable_maker, plan, random_change, text_maker
from ._tables import infer_tables
from ._text import float32_text, scaled_text, wall_us
from ..catalog import (BINARY, BOOL, DECIMAL, DECTEXT, FLOAT32, FLOAT64, INT8, INT16, INT32,
                       INT64, STRING, TIME64, TIMESTAMP, TIMESTAMP_TZ, Catalog, Column, Table,
                       parse_type)
from ..formats.base import same
from ..formats.olr import normal_xid, olr_type

_UTC = dt.timezone.utc
_OP_TEXT = {"begin": "begin", "commit": "commit", "c": "c", "u": "u", "d": "d", "ddl": "ddl",
            "checkpoint": "chkpt"}
_SCN = ("scn", "scns")
_TM = ("tm", "tms", "iso", "zone")
_XID = ("hex", "dec", "xidn")
_IMAGES = ("object", "array")
_UNITS = {"s": 1_000_000, "ms": 1000, "us": 1, "ns": 0}     # µs per unit (ns: finer)
_ZONE = "+00:00"            # the zone a "zone" writer adds to epochs (the db's, as in peer-data)
_NUMBER = re.compile(r"-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?")


# -- encoding ------------------------------------------------------------------------------

def encode(events, catalog=None, scn="scn", tm="tm", xid="hex", images="object",
           columns=False, compact=True, first_only=True, epoch_unit="s", full=False,
           messages=False):
    """Write events as OLR messages -> ``bytes`` (one message per line, each ended by
    ``\\n``), or with ``messages=True`` a list of ``bytes`` messages.

    ``events``: dicts in the envelope shape (SPEC §3) or a ``pyarrow.Table``/``RecordBatch`` in
    envelope form; ``op`` is ``c u d`` or a control event (``begin``, ``commit``, ``ddl``,
    ``checkpoint``). Message fields come from ``source`` (``scn``, ``c_scn``, ``c_idx``, ``db``,
    ``obj``, ``num``, ``rid``, ``ddl``, ``checkpoint_*``), ``commit_ts`` and ``txid`` (any form
    the decoder reads). With a catalog, values are written by their column's type; a table the
    catalog lacks gets types from its values' Python types.

    Options (defaults: the writer's plain forms): ``scn`` — ``"scn"`` (a number) or ``"scns"``
    (hex text); ``tm`` — ``"tm"`` (a number), ``"tms"`` (digits as text), ``"iso"`` (ISO-8601
    text) or ``"zone"`` (``"<epoch>,+00:00"``), also the form of DATE/TIMESTAMP values (as the
    writer has one timestamp format for both); ``xid`` — ``"hex"`` (``0x0002.012.00004162``),
    ``"dec"`` (``2.18.16738``) or ``"xidn"`` (a number); ``images`` — ``"object"`` or
    ``"array"`` (of one-column objects, as the seed describes them); ``columns`` — send
    ``schema.columns`` (and ``obj``) with every data element; ``compact`` — inserts and
    deletes leave out null columns, updates carry the columns ``present`` marks (else the key
    and the changed ones); ``first_only`` — scn and tm only on a transaction's first message;
    ``epoch_unit`` — ``s ms us ns``; ``full`` — one message per transaction, its elements in
    one ``payload`` array (OpenLogReplicator's full message format has no begin/commit
    elements, so those events are not written).
    """
    events = events.to_pylist() if hasattr(events, "to_pylist") else list(events)
    writer = _Writer(catalog, scn, tm, xid, images, columns, compact, first_only, epoch_unit,
                     full)
    writer.add_tables(infer_tables(events, writer.catalog))
    groups = _transactions(events) if full else [[ev] for ev in events]
    docs = [writer.render(g, writer.advance(g)) for g in groups if g]
    if messages:
        return [d.encode("utf-8") for d in docs]
    return "".join(d + "\n" for d in docs).encode("utf-8")


def _transactions(events) -> list:
    """Events grouped into full-format messages: each transaction's data and ddl events (its
    begin and commit frame the message); an event without a txid is a message of its own."""
    groups, current, txid = [], [], None
    for ev in events:
        op = ev.get("op")
        if ev.get("txid") is None or op == "checkpoint":
            groups += [current, [ev]]
            current, txid = [], None
            continue
        if ev["txid"] != txid:
            groups.append(current)
            current, txid = [], ev["txid"]
        if op == "commit":
            groups.append(current)
            current, txid = [], None
        elif op != "begin":
            current.append(ev)
    groups.append(current)
    return groups


def xid_parts(txid: str) -> tuple:
    """(usn, slot, sqn) of a transaction id in any form the decoder reads."""
    norm = normal_xid(txid)
    if norm is None:
        raise ValueError(f"{txid!r} is not a transaction id (usn.slot.sqn)")
    return tuple(int(g, 16) for g in norm[2:].split("."))


def xid_text(txid: str, form: str):
    """The `xid` field of a transaction in the writer's form: hex or dotted decimal text, or
    the xidn number."""
    usn, slot, sqn = xid_parts(txid)
    if form == "hex":
        return f"0x{usn:04x}.{slot:03x}.{sqn:08x}"
    if form == "dec":
        return f"{usn}.{slot}.{sqn}"
    return usn << 48 | slot << 32 | sqn


class _Writer:
    """Builds OLR messages; value formatters are chosen once per table column."""

    def __init__(self, catalog, scn, tm, xid, images, columns, compact, first_only,
                 epoch_unit, full):
        for name, value, allowed in (("scn", scn, _SCN), ("tm", tm, _TM), ("xid", xid, _XID),
                                     ("images", images, _IMAGES),
                                     ("epoch_unit", epoch_unit, tuple(_UNITS))):
            if value not in allowed:
                raise ValueError(f"{name} must be one of {', '.join(allowed)}, not {value!r}")
        self.catalog = Catalog.coerce(catalog)
        self.scn, self.tm, self.xid, self.images = scn, tm, xid, images
        self.columns, self.compact, self.first_only = columns, compact, first_only
        self.unit, self.full = epoch_unit, full
        self._extra = {}          # table name -> Table inferred from the values
        self._layouts = {}        # table name -> (Table, [(name, key text, formatter, kind)])
        self._open = set()        # txids whose first message is written and commit is not

    def add_tables(self, tables):
        self._extra.update(tables)

    # -- messages -------------------------------------------------------------------------
    def advance(self, events) -> bool:
        """Whether the message of `events` carries scn and tm (not with ``first_only`` on a
        transaction's later messages), keeping count of the open transactions: a message
        opens its transaction, a commit (or a full-format message) closes it."""
        txid = _txid(events[0])
        first = txid is None or txid not in self._open or not self.first_only
        if txid is not None:
            self._open.add(txid)
            if self.full or any(e.get("op") == "commit" for e in events):
                self._open.discard(txid)
        return first

    def render(self, events, first: bool) -> str:
        """One message: the first event's message fields, a payload element per event."""
        ev = events[0]
        src = ev.get("source") or {}
        txid = _txid(ev)
        head = []
        if first:
            if src.get("scn") is not None:
                head.append(f'"scn":{int(src["scn"])}' if self.scn == "scn"
                            else f'"scns":"0x{int(src["scn"]):016x}"')
            t = ev.get("commit_ts") if ev.get("commit_ts") is not None else ev.get("change_ts")
            if t is not None:
                head.append(('"tm":' if self.tm == "tm" else '"tms":')
                            + self.time(t, self.tm != "tm", True))
        for key in ("c_scn", "c_idx"):
            if src.get(key) is not None and ev.get("op") != "checkpoint":
                head.append(f'"{key}":{int(src[key])}')
        if txid is not None:
            x = xid_text(txid, self.xid)
            head.append(f'"xidn":{x}' if self.xid == "xidn" else f'"xid":"{x}"')
        if src.get("db") is not None:
            head.append('"db":' + _jstr(src["db"]))
        payload = ",".join(self.element(e) for e in events)
        return "{" + ",".join(head + [f'"payload":[{payload}]']) + "}"

    def element(self, ev) -> str:
        op = ev.get("op")
        if op not in _OP_TEXT:
            raise ValueError(f"cannot write an event with op {op!r}; expected one of "
                             f"{', '.join(_OP_TEXT)}")
        src = ev.get("source") or {}
        sent = ev.get("source_op")
        parts = ['"op":' + _jstr(sent if sent in (_OP_TEXT[op], op) else _OP_TEXT[op])]
        if ev.get("table"):
            parts.append('"schema":' + self.schema(ev, src))
        elif op in ("c", "u", "d"):
            raise ValueError("a change event needs a table")
        for key in ("rid", "num"):
            if src.get(key) is not None:
                parts.append(f'"{key}":' + (_jstr(src[key]) if key == "rid"
                                            else str(int(src[key]))))
        if op in ("c", "u", "d"):
            parts += self.images_of(ev, op)
        elif op == "ddl" and src.get("ddl") is not None:
            parts.append('"sql":' + _jstr(src["ddl"]))
        elif op == "checkpoint":
            for key, name in (("checkpoint_seq", "seq"), ("checkpoint_offset", "offset")):
                if src.get(key) is not None:
                    parts.append(f'"{name}":{int(src[key])}')
            if src.get("checkpoint_redo") is not None:
                parts.append('"redo":' + ("true" if src["checkpoint_redo"] else "false"))
        return "{" + ",".join(parts) + "}"

    def schema(self, ev, src) -> str:
        parts = []
        if ev.get("schema"):
            parts.append('"owner":' + _jstr(ev["schema"]))
        parts.append('"table":' + _jstr(ev["table"]))
        if src.get("obj") is not None:
            parts.append(f'"obj":{int(src["obj"])}')
        if self.columns and ev.get("op") in ("c", "u", "d"):
            table = self.layout(ev)[0]
            parts.append('"columns":[' + ",".join(map(_column_json, table.columns)) + "]")
        return "{" + ",".join(parts) + "}"

    # -- images ---------------------------------------------------------------------------
    def layout(self, ev):
        name = f"{ev['schema']}.{ev['table']}" if ev.get("schema") else ev["table"]
        lay = self._layouts.get(name)
        if lay is None:
            t = self.catalog.get(name) if self.catalog is not None else None
            t = t or self._extra.get(name)
            if t is None:
                raise ValueError(f"no columns known for table {name!r}")
            cols = []
            for c in t.columns:
                ctype = olr_type(c.type)
                cols.append((c.name, _jstr(c.name) + ":", self.formatter(ctype, c.name),
                             ctype.kind))
            lay = self._layouts[name] = (t, cols)
        return lay

    def images_of(self, ev, op) -> list:
        table, cols = self.layout(ev)
        before, after = ev.get("before"), ev.get("after")
        names = {n for n, _, _, _ in cols}
        for what, image in (("before", before), ("after", after)):
            extra = set(image or ()) - names
            if extra:
                raise ValueError(f"{what} image has columns the table lacks: {sorted(extra)}")
        if op in ("c", "d"):
            image = after if op == "c" else before
            if image is None:
                return []
            keep = [n for n, _, _, _ in cols
                    if not self.compact or image.get(n) is not None]
            return [self.image("after" if op == "c" else "before", image, cols, keep)]
        keep = [n for n, _, _, _ in cols]
        if self.compact:
            present = ev.get("present")
            if present is not None:
                keep = [n for n in keep if present.get(n)]
            else:
                kinds = {n: k for n, _, _, k in cols}
                keep = [n for n in keep if n in table.key or not same(
                    (before or {}).get(n), (after or {}).get(n), kinds[n])]
        return [self.image(what, image, cols, keep)
                for what, image in (("before", before), ("after", after)) if image is not None]

    def image(self, what, image, cols, keep) -> str:
        keep = set(keep)
        parts = []
        for name, key, fmt, _ in cols:
            if name not in keep:
                continue
            v = image.get(name)
            try:
                text = "null" if v is None else fmt(v)
            except (ValueError, TypeError, AttributeError, OverflowError) as e:
                raise ValueError(f"{what}.{name}: cannot write {v!r}: {e}") from None
            parts.append("{" + key + text + "}" if self.images == "array" else key + text)
        if self.images == "array":
            return f'"{what}":[' + ",".join(parts) + "]"
        return f'"{what}":{{' + ",".join(parts) + "}"

    # -- values ---------------------------------------------------------------------------
    def time(self, v, quoted: bool, zoned: bool) -> str:
        """A time (aware; naive read as UTC) as the writer's `tm` form writes it: an epoch
        in the unit, rounded half up as OpenLogReplicator rounds, or ISO-8601 text."""
        us = wall_us(v)
        if self.tm == "iso":
            return _iso(v, us, zoned)
        if self.unit == "ns":
            text = str(us * 1000 + getattr(v, "nanosecond", 0))
        else:
            step = _UNITS[self.unit]
            text = str((us + step // 2) // step)
        if self.tm == "zone" and zoned:
            return f'"{text},{_ZONE}"'
        return f'"{text}"' if quoted else text

    def formatter(self, ctype, column):
        """value -> JSON text for one column type (the value is never None here)."""
        kind = ctype.kind
        if kind == STRING:
            return _jstr
        if kind in (INT8, INT16, INT32, INT64):
            return lambda v: str(int(v))
        if kind == BOOL:
            return lambda v: "1" if v else "0"
        if kind in (DECIMAL, DECTEXT):
            return number_text
        if kind in (FLOAT32, FLOAT64):
            return lambda v: float_text(float(v), kind == FLOAT32)
        if kind == BINARY:
            return lambda v: '"' + bytes(v).hex() + '"'
        if kind in (TIMESTAMP, TIMESTAMP_TZ):
            return lambda v: self.time(_as_datetime(v), self.tm != "tm", kind == TIMESTAMP_TZ)
        if kind == TIME64:
            return lambda v: '"' + v.isoformat() + '"'
        raise ValueError(f"column {column}: cannot write type {ctype.name}")


def number_text(v) -> str:
    """A NUMBER as Oracle prints it: plain decimal text, no exponent, no trailing zeros; a
    str is written as given (it must be a JSON number)."""
    if isinstance(v, str):
        if not _NUMBER.fullmatch(v):
            raise ValueError("not a number's text")
        return v
    d = v if isinstance(v, decimal.Decimal) else decimal.Decimal(
        v if isinstance(v, int) else repr(float(v)))
    if not d.is_finite():
        raise ValueError("a NUMBER must be finite")
    sign, digits, exp = d.as_tuple()
    n = int("".join(map(str, digits)) or "0")
    if n == 0:
        return "0"
    while exp < 0 and n % 10 == 0:
        n, exp = n // 10, exp + 1
    text = str(n * 10 ** exp) if exp >= 0 else scaled_text(n, -exp)
    return "-" + text if sign else text


def float_text(x: float, single: bool) -> str:
    """A BINARY_FLOAT (`single`) or BINARY_DOUBLE as OpenLogReplicator prints it — C++'s
    default 6 significant digits (`2.71828`, `1e+100`, `256`) — when that reads back as the
    same value; else the shortest text that does (no `.0`). NaN and infinities have no JSON
    form."""
    if not math.isfinite(x):
        raise ValueError("no JSON number for a NaN or an infinity")
    six = f"{x:g}"
    back = float(six)
    if (float32(back) == float32(x)) if single else back == x:
        return six
    text = float32_text(x) if single else repr(x)
    return text[:-2] if text.endswith(".0") else text


def _as_datetime(v):
    if isinstance(v, dt.datetime):
        return v
    if isinstance(v, dt.date):       # a DATE column's value given as a date: midnight
        return dt.datetime(v.year, v.month, v.day)
    raise TypeError("not a datetime")


def _iso(v, us: int, zoned: bool) -> str:
    """ISO-8601 text of a time, in UTC for a zoned one (`Z`), its fraction as needed."""
    t = dt.datetime(1970, 1, 1) + dt.timedelta(microseconds=us)
    frac = f".{t.microsecond:06d}" if t.microsecond else ""
    zone = "Z" if zoned or v.tzinfo is not None else ""
    return f'"{t:%Y-%m-%dT%H:%M:%S}{frac}{zone}"'


_NUMBER_DIGITS = {INT8: 3, INT16: 5, INT32: 10, INT64: 19}


def _column_json(col) -> str:
    """One `schema.columns` entry as the writer sends it: the Oracle type of a catalog
    column (docs/olr.md maps it back)."""
    t = olr_type(col.type)
    kind, base = t.kind, t.base
    extra = ""
    if kind == DECIMAL:
        name, extra = "number", f',"precision":{t.precision},"scale":{t.scale}'
    elif kind in _NUMBER_DIGITS:
        name, extra = "number", f',"precision":{_NUMBER_DIGITS[kind]},"scale":0'
    elif kind == DECTEXT:
        name, extra = "number", ',"precision":-1,"scale":-1'
    elif kind == STRING:
        name = base.lower() if base in ("CHAR", "NCHAR", "NVARCHAR2", "CLOB", "NCLOB") \
            else "varchar2"
        if name not in ("clob", "nclob"):
            extra = f',"length":{t.length or 4000}'
    elif kind == BINARY:
        name = "blob" if base == "BLOB" else "raw"
        if name == "raw":
            extra = f',"length":{t.length or 2000}'
    elif kind == FLOAT32:
        name = "binary_float"
    elif kind == FLOAT64:
        name = "float" if base == "FLOAT" else "binary_double"
    elif kind == TIMESTAMP:
        name = "date" if base == "DATE" else "timestamp"
        if name == "timestamp":
            extra = ',"length":11'
    elif kind == TIMESTAMP_TZ:
        name, extra = "timestamp with time zone", ',"length":13'
    elif kind == BOOL:
        name = "boolean"
    else:
        raise ValueError(f"column {col.name}: no OpenLogReplicator type for {t.name}")
    return ('{"name":' + _jstr(col.name) + f',"type":"{name}"' + extra
            + ',"nullable":' + ("true" if col.nullable else "false") + "}")


# -- generating ----------------------------------------------------------------------------

# Columns after the NUMBER(10) key ID, cycled to reach table_width: (name, Oracle type,
# nullable), the types of peer-data/olr's tables.
_COLUMNS = (
    ("NAME", "VARCHAR2(40)", True), ("AMOUNT", "NUMBER(11,2)", True),
    ("ORDER_DATE", "DATE", True), ("CREATED_TS", "TIMESTAMP(6)", False),
    ("STATUS", "CHAR(8)", True), ("QTY", "NUMBER(5)", True), ("LINE_SEQ", "NUMBER", True),
    ("RATE", "BINARY_DOUBLE", True), ("NOTES", "VARCHAR2(120)", True),
    ("BALANCE", "NUMBER(31,8)", True), ("WEIGHT", "BINARY_FLOAT", True),
    ("TRACKING", "RAW(16)", True), ("UPDATED_TS", "TIMESTAMP(3)", True),
    ("EVENT_TSZ", "TIMESTAMP WITH TIME ZONE", True), ("ACTIVE", "BOOLEAN", True),
    ("COMMENTS", "CLOB", True), ("BIRTH_DATE", "DATE", True), ("TOTAL", "NUMBER(18,4)", True),
    ("CODE", "NVARCHAR2(12)", True), ("PRIORITY", "CHAR(1)", True), ("DOC", "BLOB", True),
    ("REGION", "NUMBER(5,0)", True),
)
# the peer-data writer's configuration (peer-data/README.md §2): hex scns, epoch seconds as
# text, dotted decimal xids
PEER = {"scn": "scns", "tm": "tms", "xid": "dec", "epoch_unit": "s"}


def generate(rows, table_width=20, tables=1, seed=0, messages=False, records_per_txn=(1, 4),
             checkpoints=False, **options):
    """A realistic, deterministic stream of ``rows`` change events -> ``(data, catalog)``.

    ``data`` is one ``bytes`` stream (one message per line), or with ``messages=True`` a list
    of ``bytes`` messages. Tables ``OLR_TEST.TABLE_1…`` of ``table_width`` columns (an
    ``ID NUMBER(10)`` key, then NUMBER with and without precision, VARCHAR2, blank-padded CHAR,
    DATE and TIMESTAMP, RAW, BINARY_FLOAT/DOUBLE printed with 6 significant digits as
    OpenLogReplicator prints them, …); transactions of ``records_per_txn`` (an inclusive range,
    or an int) changes, mostly updates, each framed by begin and commit messages (not counted
    in ``rows``), their ``c_scn``/``c_idx`` as the writer counts them (now and then two
    transactions share a ``c_scn``, ``c_idx`` running on); ``checkpoints`` adds a checkpoint
    message every 40 transactions or so. ``options`` are :func:`encode`'s, the defaults those
    of peer-data's writer (``scns``, ``tms`` epoch seconds, dotted decimal ``xid``). Beyond
    ``FRESH_ROWS`` rows, whole pooled transactions repeat with their text encoded once, so
    100 MB takes seconds.
    """
    catalog, writer, msgs = _stream(rows, table_width, tables, seed, records_per_txn,
                                    checkpoints, options)
    encoded = {}    # (id(message), with scn/tm): a pooled message is encoded once
    out = []
    for msg in msgs:
        first = writer.advance(msg)
        key = (id(msg), first)
        text = encoded.get(key)
        if text is None:
            text = encoded[key] = writer.render(msg, first).encode("utf-8") + (
                b"" if messages else b"\n")
        out.append(text)
    return (out if messages else b"".join(out)), catalog


def events(rows, table_width=20, tables=1, seed=0, records_per_txn=(1, 4), checkpoints=False,
           **options):
    """The events that :func:`generate` with the same arguments encodes, in order, as a
    decoder gives them back, and the catalog -> ``(list of dicts, catalog)``: data events and
    the begin/commit/checkpoint control events (``seq`` the record's ordinal; ``present`` and
    ``changed`` as decoded). Pooled events repeat as copies that differ in ``seq``."""
    _, _, msgs = _stream(rows, table_width, tables, seed, records_per_txn, checkpoints,
                         options)
    out = []
    for msg in msgs:
        for ev in msg:
            out.append({**ev, "seq": len(out)})
    return out, _catalog(table_width, tables)


def _stream(rows, table_width, tables, seed, records_per_txn, checkpoints, options):
    """-> (catalog, writer, every message in output order: a list of its events)."""
    opts = {"images": "object", "columns": False, "compact": True, "first_only": True,
            "full": False, **PEER, **options}
    lo, hi = message_range(records_per_txn)
    catalog = _catalog(table_width, tables)
    writer = _Writer(catalog, **opts)
    full = writer.full
    rng = random.Random(seed)
    gen = _Generator(catalog, rng, writer, full, checkpoints)
    msgs = []
    for msg in plan(gen.transaction, rows, lo, hi, rng):
        msgs.extend(gen.framed(msg))
    return catalog, writer, msgs


def _catalog(table_width, tables):
    if table_width < 1 or tables < 1:
        raise ValueError("table_width and tables must be at least 1")
    cols = [Column("ID", parse_type("NUMBER(10)"), nullable=False)]
    for i in range(table_width - 1):
        name, type_text, nullable = _COLUMNS[i % len(_COLUMNS)]
        lap = i // len(_COLUMNS)
        cols.append(Column(f"{name}_{lap + 1}" if lap else name, parse_type(type_text), nullable))
    return Catalog([Table("OLR_TEST", f"TABLE_{t + 1}", tuple(cols), ("ID",))
                    for t in range(tables)])


class _Generator:
    """Keeps each table's live rows (so updates and deletes act on rows that exist), the
    redo's SCN, the transaction ids and the clock (so positions and times move forward)."""

    def __init__(self, catalog, rng, writer, full, checkpoints):
        self.rng, self.writer, self.full, self.checkpoints = rng, writer, full, checkpoints
        self.tables = list(catalog)
        self.makers = {t.name: [self._maker(c) for c in t.columns] for t in self.tables}
        self.rows = LiveRows(rng, self.makers, decimal.Decimal)
        self.kinds = {t.name: [olr_type(c.type).kind for c in t.columns] for t in self.tables}
        self.scn, self.c_idx = 3762392, 0           # as in peer-data/olr/basic-crud
        self.sqn = 740
        self.clock = 1772311432                     # epoch seconds of the writer's tm
        self.redo_seq, self.redo_offset = 1187, 0
        self.txns = 0
        self.frames = {}            # id(message) -> (messages before it, messages after it)

    # -- transactions ---------------------------------------------------------------------
    def transaction(self, left, lo, hi):
        """One transaction of at most ``left`` changes: its messages of data events (framed
        by begin/commit messages in `framed`)."""
        r = self.rng
        n = min(r.randint(lo, hi), left)
        if self.c_idx and r.random() < 0.1:
            self.c_idx += 1             # another transaction of the same c_scn: c_idx runs on
        else:
            self.scn += r.randint(3, 20)
            self.c_idx = 1
        self.clock += r.choice((0, 0, 0, 1, 2))
        self.sqn += r.randint(1, 3)
        txid = f"0x{r.randint(1, 10):04x}.{r.randint(0, 31):03x}.{self.sqn:08x}"
        base = self._event("begin", txid, self.c_idx, 0)
        begin_idx = self.c_idx
        changes = []
        for k in range(n):
            op, t, before, after = random_change(self.rng, self.tables, self.rows)
            if not self.full:
                self.c_idx += 1
            ev = self._event(op, txid, begin_idx if self.full else self.c_idx,
                             k if self.full else 0, t)
            ev.update(self._images(op, t, before, after))
            changes.append(ev)
        self.c_idx += 1
        commit = self._event("commit", txid, self.c_idx, 0)
        msgs = [changes] if self.full else [[ev] for ev in changes]
        before_msgs, after_msgs = ([], []) if self.full else ([[base]], [[commit]])
        self.txns += 1
        if self.checkpoints and self.txns % 40 == 0:
            after_msgs = after_msgs + [[self._checkpoint()]]
        self.frames[id(msgs[0])] = (before_msgs, [])
        last = self.frames.get(id(msgs[-1]), ([], []))
        self.frames[id(msgs[-1])] = (last[0], after_msgs)
        return msgs

    def framed(self, msg) -> list:
        """A planned message with the begin/commit/checkpoint messages around it."""
        before, after = self.frames.get(id(msg), ([], []))
        return before + [msg] + after

    def _event(self, op, txid, c_idx, index, table=None) -> dict:
        """A decoded event's head: the message fields and positions (docs/olr.md)."""
        commit = self.scn.to_bytes(8, "big")
        ts = dt.datetime.fromtimestamp(self.clock, _UTC)
        return {"op": op, "source_op": _OP_TEXT[op],
                "schema": table.schema if table else None, "table": table.table if table else None,
                "txid": txid, "commit_ts": ts, "change_ts": ts, "commit_pos": commit,
                "change_pos": commit + c_idx.to_bytes(8, "big") + index.to_bytes(4, "big"),
                "seq": None, "before": None, "after": None, "changed": None, "present": None,
                "source": self._source(scn=self.scn, c_scn=self.scn, c_idx=c_idx,
                                       xid=_sent_xid(txid, self.writer.xid),
                                       obj=self._obj(table))}

    def _checkpoint(self) -> dict:
        self.redo_offset += self.rng.randint(512, 1 << 20)
        ts = dt.datetime.fromtimestamp(self.clock, _UTC)
        scn = self.scn.to_bytes(8, "big")
        redo = True if self.rng.random() < 0.2 else None
        if redo:
            self.redo_seq, self.redo_offset = self.redo_seq + 1, 0
        return {"op": "checkpoint", "source_op": "chkpt", "schema": None, "table": None,
                "txid": None, "commit_ts": ts, "change_ts": ts, "commit_pos": scn,
                "change_pos": scn + bytes(12), "seq": None, "before": None, "after": None,
                "changed": None, "present": None,
                "source": self._source(scn=self.scn, checkpoint_seq=self.redo_seq,
                                       checkpoint_offset=self.redo_offset,
                                       checkpoint_redo=redo)}

    @staticmethod
    def _source(**fields) -> dict:
        out = dict.fromkeys(("db", "scn", "c_scn", "c_idx", "obj", "num", "xid", "rid", "ddl",
                             "checkpoint_seq", "checkpoint_offset", "checkpoint_redo"))
        out.update(fields)
        return out

    def _obj(self, table):
        if table is None or not self.writer.columns:
            return None
        return 73001 + self.tables.index(table)

    def _images(self, op, t, before, after) -> dict:
        """before/after/changed/present of a change as the decoder gives them back from what
        the writer sends (compact: updates carry the key and the changed columns)."""
        names = [c.name for c in t.columns]
        if op == "c":
            return {"after": after, "changed": dict.fromkeys(names, True),
                    "present": dict.fromkeys(names, True)}
        if op == "d":
            return {"before": before, "changed": dict.fromkeys(names, False),
                    "present": dict.fromkeys(names, True)}
        kinds = self.kinds[t.name]
        differs = {n: not same(before[n], after[n], k) for n, k in zip(names, kinds)}
        if not self.writer.compact:
            return {"before": before, "after": after, "changed": differs,
                    "present": dict.fromkeys(names, True)}
        sent = {n: n in t.key or differs[n] for n in names}
        return {"before": {n: before[n] if sent[n] else None for n in names},
                "after": {n: after[n] if sent[n] else None for n in names},
                "changed": differs, "present": sent}

    # -- rows -----------------------------------------------------------------------------
    def _maker(self, col):
        """() -> a random value of the column's type: ~10% null when nullable."""
        return nullable_maker(self.rng, self._values(col), col.nullable, 0.1)

    def _values(self, col):
        """Random values, each one exactly what a decoder gives back: NUMBER without
        precision as its text, binary floats at OpenLogReplicator's 6 significant digits,
        times at the precision the column and the writer's epoch unit keep (Oracle's DATE:
        seconds)."""
        r, ctype = self.rng, olr_type(col.type)
        kind = ctype.kind
        if kind == STRING and ctype.base in ("CHAR", "NCHAR"):
            return char_maker(r, ctype.length or 1)
        if kind == STRING:
            return text_maker(r, ctype.length or 400)
        if kind == DECTEXT:
            wide = decimal_maker(r, 38, 0)
            return lambda: number_text(wide().scaleb(-r.randint(0, 40)))
        if kind in (TIMESTAMP, TIMESTAMP_TZ):
            digits = 0 if ctype.base == "DATE" else min(ctype.precision, 6)
            if self.writer.tm != "iso":
                digits = min(digits, {"s": 0, "ms": 3, "us": 6, "ns": 6}[self.writer.unit])
            return kind_maker(r, ctype, digits)
        make = kind_maker(r, ctype)
        if kind == FLOAT64:
            return lambda: float(f"{make():.6g}")
        if kind == FLOAT32:
            return lambda: float32(float(f"{make():.6g}"))
        if make is None:
            raise ValueError(f"no generator for {ctype.name}")
        return make


def _sent_xid(txid, form) -> str:
    """`source.xid` as the decoder gives it back: the text the writer sent, or xidn's
    decimal text."""
    return str(xid_text(txid, form))


def _txid(ev):
    """The transaction of an event's message (a checkpoint has none)."""
    return ev.get("txid") if ev.get("op") != "checkpoint" else None
