"""Writer and synthetic-stream generator for `ibm-delimited` (IBM Q Replication event
publishing, delimited messages): the inverse of the decoder, as docs/ibm-delimited.md reads it.

``encode`` turns envelope-shaped events (dicts, or a decoded ``pyarrow.Table``) back into
records; ``generate`` makes realistic streams for tests and benchmarks, and ``events`` returns
the Python values behind a generated stream so tests can compare decoded values with them.
"""
from __future__ import annotations

import datetime as dt
import math
import random
import struct
from zoneinfo import ZoneInfo

from ._plan import DB2_COLUMNS, DB2_INTL, STATUS, WORDS, decimal_maker, double_maker, \
    integer_maker, message_range, nullable_maker, plan, truncate_us
from ._text import UTC, aware, as_decimal, commit_text, encodable, fraction, text_encoder, \
    timestamp_text
from ..catalog import (BINARY, BOOL, DATE32, DECIMAL, DECTEXT, FLOAT32, FLOAT64, INT8, INT16,
                       INT32, INT64, STRING, TIME64, TIMESTAMP, TIMESTAMP_TZ, Catalog, Column,
                       Table, parse_type)

_SOURCE_OP = {"c": "ISRT", "u": "REPL", "d": "DLET"}


# -- encoding ------------------------------------------------------------------------------

def encode(events, catalog=None, column_delimiter=",", record_delimiter="\n",
           string_delimiter='"', decimal_char=".", encoding="utf-8", source_tz="UTC",
           trailing_delimiter=False) -> bytes:
    """Write one record per event and return the message bytes.

    ``events``: dicts in the envelope shape (SPEC §3; keys the format does not carry, such as
    ``seq`` or ``change_ts``, are ignored) or a ``pyarrow.Table``/``RecordBatch`` in envelope
    form. With a catalog, values are written by their column's type; a table the catalog lacks
    is written as a catalog-less table is read: every value a string, columns in dict order.
    """
    writer = _Writer(catalog, column_delimiter, record_delimiter, string_delimiter,
                     decimal_char, encoding, source_tz, trailing_delimiter)
    if hasattr(events, "to_pylist"):
        events = events.to_pylist()
    return writer.to_bytes("".join(map(writer.record, events)))


class _Writer:
    """Builds record text; value formatters are chosen once per table column, not per value."""

    def __init__(self, catalog, column_delimiter, record_delimiter, string_delimiter,
                 decimal_char, encoding, source_tz, trailing_delimiter):
        delims = (column_delimiter, record_delimiter, string_delimiter, decimal_char)
        if any(not isinstance(d, str) or len(d) != 1 for d in delims):
            raise ValueError("delimiters and decimal_char must be single characters")
        if len(set(delims)) != 4:
            raise ValueError("the four delimiters must all differ (the reader could not split)")
        self.cd, self.q, self.dc = column_delimiter, string_delimiter, decimal_char
        self.end = (column_delimiter if trailing_delimiter else "") + record_delimiter
        self.tz = UTC if source_tz.upper() == "UTC" else ZoneInfo(source_tz)
        self.catalog = Catalog.coerce(catalog)
        self.to_bytes = text_encoder(encoding)
        self._layouts = {}   # table name -> (column names, formatters), from the catalog

    def quote(self, value) -> str:
        q = self.q
        return q + str(value).replace(q, q + q) + q

    def record(self, ev) -> str:
        op = ev.get("op")
        source_op = ev.get("source_op") or _SOURCE_OP.get(op)
        if source_op is None:
            raise ValueError(f"event has op {op!r} and no source_op; expected c, u or d")
        src = ev.get("source") or {}
        quote = self.quote

        def opt(value, fmt):     # None is an empty unquoted field (NULL) in every position
            return "" if value is None else fmt(value)

        put = src.get("put_ts")
        if put is not None:
            put = aware(put).astimezone(self.tz)
        fields = [
            opt(src.get("type", 10), str),
            opt(src.get("identifier", "IBM"), quote),
            opt(put, lambda t: quote(f"{t.year:04d}{t.timetuple().tm_yday:03d}")),
            opt(put, lambda t: quote(f"{t.hour:02d}{t.minute:02d}{t.second:02d}"
                                     f"{t.microsecond:06d}")),
            opt(ev.get("schema"), quote),
            opt(ev.get("table"), quote),
            quote(source_op),
            opt(ev.get("txid"), quote),
            opt(ev.get("commit_pos"), lambda p: quote(_lsn_text(p))),
            opt(ev.get("commit_ts"), lambda t: quote(commit_text(aware(t).astimezone(self.tz)))),
            opt(src.get("plan_name"), quote),
            opt(src.get("segment", 0), lambda s: f"{int(s):04d}"),
        ]
        before, after = ev.get("before"), ev.get("after")
        columns, formats = self._layout(ev, before, after)
        for image, name in ((before, "before"), (after, "after")):
            if image is None:
                fields.extend([""] * len(columns))
                continue
            extra = image.keys() - set(columns)
            if extra:
                raise ValueError(f"{name} image has columns the table lacks: {sorted(extra)}")
            for col, fmt in zip(columns, formats):
                value = image.get(col)
                fields.append("" if value is None else fmt(value))
        return self.cd.join(fields) + self.end

    def _layout(self, ev, before, after):
        schema, table = ev.get("schema"), ev.get("table")
        name = f"{schema}.{table}" if schema else table
        t = self.catalog.get(name) if self.catalog is not None and name else None
        if t is None:
            columns = list(dict.fromkeys([*(before or ()), *(after or ())]))
            return columns, [self.quote] * len(columns)
        if name not in self._layouts:
            self._layouts[name] = ([c.name for c in t.columns],
                                   [self._formatter(c.type) for c in t.columns])
        return self._layouts[name]

    def _formatter(self, ctype):
        """value -> field text for one column type (the value is never None here)."""
        kind, p, quote, dc = ctype.kind, ctype.precision, self.quote, self.dc
        if kind == STRING:
            return quote
        if kind in (INT8, INT16, INT32, INT64):
            return lambda v: str(int(v))
        if kind == BOOL:
            return lambda v: "1" if v else "0"
        if kind == DECIMAL:      # exactly `scale` digits, never through a float
            fmt = f".{ctype.scale}f"
            return lambda v: format(as_decimal(v), fmt).replace(".", dc)
        if kind == DECTEXT:      # DECFLOAT is numeric, so unquoted like every number (vendor)
            return lambda v: str(v).replace(".", dc)
        if kind == FLOAT64:
            return lambda v: _float_text(float(v)).replace(".", dc)
        if kind == FLOAT32:
            return lambda v: _float32_text(float(v)).replace(".", dc)
        if kind == BINARY:
            return lambda v: quote(bytes(v).hex().upper())
        if kind == DATE32:
            return lambda v: quote(f"{v.year:04d}-{v.month:02d}-{v.day:02d}")
        if kind == TIME64:       # Db2 TIME has no fraction; others write one only when set
            return lambda v: quote(f"{v.hour:02d}.{v.minute:02d}.{v.second:02d}"
                                   + (fraction(v.microsecond, p) if v.microsecond else ""))
        if kind == TIMESTAMP:
            return lambda v: quote(timestamp_text(v, p))
        if kind == TIMESTAMP_TZ:
            return lambda v: quote(timestamp_text(aware(v).astimezone(UTC), p) + "+00:00")
        raise ValueError(f"cannot write type {ctype.name}")


def _lsn_text(pos):
    """commit_pos bytes -> the vendor's `0000:0271:000c` groups (a str is taken as written)."""
    if isinstance(pos, str):
        return pos
    pos = bytes(pos)
    if len(pos) % 2:
        raise ValueError(f"commit_pos has {len(pos)} bytes; the text form needs 2 per group")
    return ":".join(pos[i:i + 2].hex() for i in range(0, len(pos), 2))


def _float_text(x):
    if not math.isfinite(x):     # Db2 floats hold no NaN or infinity, and the reader refuses them
        raise ValueError(f"cannot write {x!r} in a delimited message")
    return repr(x).upper()       # shortest round-trip text; exponent as E


def _float32_text(x):
    """The shortest text that reads back (through a double, as the reader does) as the same
    float32 — so 0.1f is written `0.1`, not `0.10000000149011612`."""
    f32 = struct.unpack("f", struct.pack("f", x))[0]
    if not math.isfinite(f32):
        raise ValueError(f"cannot write {x!r} as REAL")
    for digits in range(1, 10):     # 9 significant digits always suffice for a float32
        y = float(f"{f32:.{digits}g}")
        if struct.unpack("f", struct.pack("f", y))[0] == f32:
            return _float_text(y)
    return _float_text(f32)


# -- generating ----------------------------------------------------------------------------


def generate(rows, table_width=20, tables=1, seed=0, messages=False, records_per_message=(1, 4),
             line_per_record=False, **options):
    """A realistic, deterministic stream of ``rows`` records -> ``(data, catalog)``.

    ``data`` is one ``bytes`` stream (every record ended by the record delimiter), or with
    ``messages=True`` a list of ``bytes`` messages of ``records_per_message`` (an inclusive
    range, or an int) records each. The records and their order are the same either way.
    ``options`` are :func:`encode`'s. Beyond ``FRESH_ROWS`` rows, whole pooled transactions
    repeat (txids and LSNs then repeat and stop increasing) so 100 MB takes seconds. With
    ``line_per_record`` no string holds the record delimiter (for line-based readers such as
    Spark's read.text, in the Spark benchmark).
    """
    catalog, plan = _plan(rows, table_width, tables, seed, records_per_message, options,
                          line_per_record)
    writer = _Writer(catalog, **_writer_options(options))
    encoded = {}    # id(message) -> bytes: a pooled message is encoded once, however often used
    out = []
    for msg in plan:
        data = encoded.get(id(msg))
        if data is None:
            data = encoded[id(msg)] = writer.to_bytes("".join(map(writer.record, msg)))
        out.append(data)
    return (out if messages else b"".join(out)), catalog


def events(rows, table_width=20, tables=1, seed=0, records_per_message=(1, 4), **options):
    """The event dicts that :func:`generate` with the same arguments encodes, in order, and the
    catalog -> ``(list of dicts, catalog)``. Pooled rows repeat the same dict objects. Events
    also carry ``change_ts``/``change_pos`` (= commit's) as the decoded envelope does."""
    options.pop("messages", None)
    catalog, plan = _plan(rows, table_width, tables, seed, records_per_message, options)
    return [ev for msg in plan for ev in msg], catalog


def _writer_options(options):
    defaults = dict(column_delimiter=",", record_delimiter="\n", string_delimiter='"',
                    decimal_char=".", encoding="utf-8", source_tz="UTC",
                    trailing_delimiter=False)
    unknown = options.keys() - defaults.keys()
    if unknown:
        raise TypeError(f"unknown ibm-delimited options: {sorted(unknown)}")
    return {**defaults, **options}


def _catalog(table_width, tables):
    if table_width < 1 or tables < 1:
        raise ValueError("table_width and tables must be at least 1")
    cols = [Column("ORDER_ID", parse_type("INTEGER"), nullable=False)]
    for i in range(table_width - 1):
        name, type_text, nullable = DB2_COLUMNS[i % len(DB2_COLUMNS)]
        lap = i // len(DB2_COLUMNS)
        cols.append(Column(f"{name}_{lap + 1}" if lap else name, parse_type(type_text), nullable))
    return Catalog([Table("SALES", f"ORDERS_{t}", tuple(cols), ("ORDER_ID",))
                    for t in range(tables)])


def _plan(rows, table_width, tables, seed, records_per_message, options,
          line_per_record=False):
    """-> (catalog, messages in output order, each a list of event dicts)."""
    opts = _writer_options(options)
    lo, hi = message_range(records_per_message)
    catalog = _catalog(table_width, tables)
    rng = random.Random(seed)
    gen = _Generator(catalog, rng, opts, line_per_record)
    return catalog, plan(gen.transaction, rows, lo, hi, rng)


class _Generator:
    """Keeps each table's live rows, so updates and deletes act on rows that exist."""

    def __init__(self, catalog, rng, opts, line_per_record=False):
        self.rng = rng
        self.tables = list(catalog)
        to_bytes = text_encoder(opts["encoding"])
        # Data that stresses the splitter: the delimiters themselves inside strings.
        self.specials = (opts["column_delimiter"], opts["string_delimiter"],
                         " " if line_per_record else opts["record_delimiter"])
        self.intl = [c for c in DB2_INTL if encodable(to_bytes, c)]
        self.makers = {t.name: [self._maker(c) for c in t.columns] for t in self.tables}
        self.live = {t.name: ([], {}) for t in self.tables}   # keys in a list, key -> row
        self.next_key = {t.name: 1 for t in self.tables}
        self.txid = 0x03884642
        self.lsn = 0x0271000c
        self.clock = dt.datetime(2024, 6, 12, 8, 0, 0, tzinfo=UTC)

    def transaction(self, left, lo, hi):
        """One transaction of at most ``left`` records: a list of messages (lists of events)
        sharing txid, commit LSN and time; segments 0001, 0002, … and 0000 for the last."""
        r = self.rng
        n_msgs = 1 if r.random() < 0.8 else r.randint(2, 3)
        sizes = []
        for _ in range(n_msgs):
            if left <= 0:
                break
            sizes.append(min(r.randint(lo, hi), left))
            left -= sizes[-1]
        self.txid += r.randint(0x10, 0x400)
        self.lsn += r.randint(0x10, 0x2000)
        self.clock += dt.timedelta(seconds=r.randint(0, 2))
        txid = f"0000:0000:{self.txid >> 16 & 0xffff:04x}:{self.txid & 0xffff:04x}:0000:0000"
        pos = (self.lsn << 48).to_bytes(16, "big")
        plan_name = "ASNQCAP" if r.random() < 0.9 else None
        put = self.clock + dt.timedelta(microseconds=r.randint(1000, 500000))
        txn = []
        for i, size in enumerate(sizes):
            put += dt.timedelta(microseconds=r.randint(1, 20000))
            source = {"type": 10, "identifier": "IBM", "put_ts": put, "plan_name": plan_name,
                      "segment": i + 1 if i < len(sizes) - 1 else 0}
            txn.append([{**self._change(), "txid": txid, "commit_ts": self.clock,
                         "change_ts": self.clock, "commit_pos": pos, "change_pos": pos,
                         "source": source} for _ in range(size)])
        return txn

    def _change(self):
        r = self.rng
        t = r.choice(self.tables)
        keys, rows = self.live[t.name]
        x = r.random()
        if x < 0.6 or not keys:
            op, before, after = "c", None, self._row(t)
            keys.append(after["ORDER_ID"])
            rows[after["ORDER_ID"]] = after
        elif x < 0.9:
            key = r.choice(keys)
            before = rows[key]
            after = dict(before)
            makers = self.makers[t.name]
            k = min(r.randint(1, 3), len(t.columns) - 1)     # a few columns, never the key
            for i in r.sample(range(1, len(t.columns)), k):
                after[t.columns[i].name] = makers[i]()
            rows[key] = after
            op = "u"
        else:
            i = r.randrange(len(keys))
            keys[i], keys[-1] = keys[-1], keys[i]      # swap-pop: O(1) removal
            op, before, after = "d", rows.pop(keys.pop()), None
        return {"op": op, "source_op": _SOURCE_OP[op], "schema": t.schema, "table": t.table,
                "before": before, "after": after}

    def _row(self, t):
        key = self.next_key[t.name]
        self.next_key[t.name] += self.rng.randint(1, 3)
        row = {c.name: m() for c, m in zip(t.columns, self.makers[t.name])}
        row["ORDER_ID"] = key
        return row

    def _maker(self, col):
        """() -> a random value of the column's type: ~5% null when nullable."""
        return nullable_maker(self.rng, self._values(col.type), col.nullable, 0.05)

    def _values(self, ctype):
        r, kind, p = self.rng, ctype.kind, ctype.precision
        if kind == STRING and ctype.base in ("CHAR", "CHARACTER"):
            n = ctype.length or 1     # CHAR is blank-padded to its length
            if n <= 2:
                return lambda: r.choice("YNABCX").ljust(n)
            return lambda: r.choice(STATUS).ljust(n)[:n]
        if kind == STRING:
            return lambda: self._text(ctype.length or 40)
        if kind in (INT8, INT16, INT32, INT64):
            return integer_maker(r, {INT8: 8, INT16: 16, INT32: 32, INT64: 64}[kind])
        if kind == DECIMAL:
            return decimal_maker(r, ctype.precision, ctype.scale)
        if kind == FLOAT64:
            return double_maker(r)
        if kind == FLOAT32:
            return lambda: struct.unpack("f", struct.pack("f", round(r.uniform(0, 1000), 3)))[0]
        if kind == BOOL:
            return lambda: r.random() < 0.5
        if kind == BINARY:
            return lambda: r.randbytes(r.randint(1, ctype.length or 16))
        if kind == DATE32:
            return lambda: dt.date(1990, 1, 1) + dt.timedelta(days=r.randint(0, 15000))
        if kind == TIME64:
            return lambda: dt.time(r.randint(0, 23), r.randint(0, 59), r.randint(0, 59),
                                   truncate_us(r.randint(0, 999999), p))
        if kind in (TIMESTAMP, TIMESTAMP_TZ):
            tz = UTC if kind == TIMESTAMP_TZ else None
            base = dt.datetime(2000, 1, 1, tzinfo=tz)
            return lambda: base + dt.timedelta(
                seconds=r.randint(0, 10 ** 9), microseconds=truncate_us(r.randint(0, 999999), p))
        raise ValueError(f"no generator for {ctype.name}")

    def _text(self, length):
        r = self.rng
        if r.random() < 0.03:
            return ""
        target = r.randint(1, length)
        parts, size = [], 0
        while size < target:
            x = r.random()
            if x < 0.06:
                piece = self.specials[0]           # column delimiter: data inside a string
            elif x < 0.09:
                piece = self.specials[1]           # string delimiter: written doubled
            elif x < 0.10:
                piece = self.specials[2]           # record delimiter: data inside a string
            elif x < 0.16 and self.intl:
                piece = r.choice(self.intl)
            else:
                piece = r.choice(WORDS) + " "
            parts.append(piece)
            size += len(piece)
        return "".join(parts)[:target]
