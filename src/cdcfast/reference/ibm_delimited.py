"""The reference decoder of `ibm-delimited` (SPEC §5.1, docs/ibm-delimited.md), in plain Python.

This is the slow per-record parser that the native kernel replaces, and the oracle the kernel
is tested against: it is written from docs/ibm-delimited.md alone, for clarity — a character
loop splits records into fields, `int()`, `decimal.Decimal`, `float()` and `datetime` convert
the values, `codepages.decode_bytes` decodes text — and it yields the same batches as the
native path (`_NativeRun` in cdcfast/formats/_ibm_run.py): same output keys, schemas, row
order, values, `_error` texts, `_corrupt_record` bytes and statistics.

Each `Part` of the source is decoded on its own: record ordinals (`seq`), message indexes and
byte offsets count within it (an error's message index is ``part.base`` + the index).
"""
from __future__ import annotations

import datetime as dt
import decimal
import math
import re
import struct

import pyarrow as pa

from .. import codepages, envelope
from ..catalog import (BINARY, BOOL, DATE32, DECIMAL, DECTEXT, FLOAT32, FLOAT64, INT8, INT16,
                       INT32, INT64, STRING, TIME64, TIMESTAMP, TIMESTAMP_TZ)
from ..errors import DecodeError
from ..formats.base import ALL, MESSAGE, apply_mode, full_name
from ..formats.ibm_delimited import (E_AFTER_CLOSE, E_COUNT, E_DELETE_AFTER, E_HEX,
                                     E_INSERT_BEFORE, E_NOT_NULL, E_ODD, E_STRAY_QUOTE,
                                     E_TEXT, E_TOO_FEW, E_UNTERMINATED, E_VALUE, SOURCE)
from ._values import (DATE, EPOCH_ORDINAL, TIME, US_PER_DAY, US_PER_SEC, TextTimes, clock_us,
                      date_days, is_leap)

RECORD = -1                 # the field number of record-level errors ("record")
HEADER_FIELDS = 12
INT_RANGE = {INT8: (-2 ** 7, 2 ** 7 - 1), INT16: (-2 ** 15, 2 ** 15 - 1),
             INT32: (-2 ** 31, 2 ** 31 - 1), INT64: (-2 ** 63, 2 ** 63 - 1)}
OPS = {"ISRT": "c", "REPL": "u", "DLET": "d"}
HEX_MODE, NULL_MODE = "HEX", "NULL"
DECFLOAT_SPECIALS = ("nan", "snan", "infinity")     # any case, optional sign
MAX_NUMBER_TEXT = 319       # float / DECFLOAT / NUMBER text longer than this is an error

_INTEGER = re.compile(r"[+-]?[0-9]+")
_DIGITS = re.compile(r"[0-9]+")
_LSN = re.compile(r"[0-9A-Fa-f]{4}(?::[0-9A-Fa-f]{4})*")
_HEX = re.compile(r"(?:[0-9A-Fa-f]{2})*")
_INVALID = re.compile(r"([0-9]{1,4})-?([AB])-(HEX|NULL)")
_INVALID_PREFIX = "IBM-INVALID-COLUMN-"


# -- splitting ----------------------------------------------------------------------------

class Field:
    """One field of a record: its bytes in the message (quotes included) and its content."""
    __slots__ = ("start", "end", "quoted", "content")

    def __init__(self, start, end, quoted, content):
        self.start, self.end, self.quoted, self.content = start, end, quoted, content

    @property
    def is_null(self) -> bool:
        """Only an empty unquoted field is NULL."""
        return not self.quoted and self.start == self.end


class Record:
    """One record of a message, as split (fields) or not (error)."""

    def __init__(self, msg, seq, start, end, fields, error):
        self.msg = msg              # message index within the part
        self.seq = seq              # ordinal within the message
        self.start = start          # the record's bytes: data[start:end] (no delimiter)
        self.end = end
        self.fields = fields        # list of Field, or None when it could not be split
        self.error = error          # (code, field number, byte offset) of a record error
        self.table = None           # catalog Table
        self.key = None             # output key (from Want.resolve)
        self.ident = None           # table identity: catalog name, else the name as sent

    @property
    def nfields(self) -> int:
        return len(self.fields) if self.fields is not None else 0

    @property
    def attributable(self) -> bool:
        """Split into at least the 12 header fields (so it names a table)."""
        return self.fields is not None and len(self.fields) >= HEADER_FIELDS

    def data_fields(self) -> int:
        """Fields after the header, without a trailing empty unquoted field when odd."""
        d = len(self.fields) - HEADER_FIELDS
        if d % 2 == 1 and self.fields[-1].is_null:
            d -= 1
        return d


def split_message(data: bytes, cd: int, rd: int, sd: int, msg: int = 0) -> list:
    """Split one message into records and fields (docs/ibm-delimited.md, "Splitting")."""
    records = []
    n = len(data)
    pos = 0
    seq = 0
    while pos < n:
        if data[pos] == rd:                 # an empty record: skipped, not counted
            pos += 1
            continue
        start = pos
        fields = []
        error = None
        p = start
        while True:
            field_start = p
            if p < n and data[p] == sd:
                # a string: ends at a string delimiter that is not doubled
                content = bytearray()
                q = p + 1
                closed = False
                while q < n:
                    if data[q] == sd:
                        if q + 1 < n and data[q + 1] == sd:
                            content.append(sd)
                            q += 2
                            continue
                        closed = True
                        break
                    content.append(data[q])
                    q += 1
                if not closed:
                    error = (E_UNTERMINATED, len(fields), field_start)
                    break
                p = q + 1
                if p < n and data[p] != cd and data[p] != rd:
                    error = (E_AFTER_CLOSE, len(fields), p)
                    break
                fields.append(Field(field_start, p, True, bytes(content)))
            else:
                while p < n and data[p] != cd and data[p] != rd and data[p] != sd:
                    p += 1
                if p < n and data[p] == sd:
                    error = (E_STRAY_QUOTE, len(fields), p)
                    break
                fields.append(Field(field_start, p, False, data[field_start:p]))
            if p >= n or data[p] == rd:
                break
            p += 1                          # past the column delimiter
        if error is not None:
            # the record is unsplittable: it runs to the next record delimiter found by a
            # plain byte scan from the point of failure
            end = data.find(bytes([rd]), error[2])
            if end < 0:
                end = n
            records.append(Record(msg, seq, start, end, None, error))
        else:
            end = p
            if len(fields) < HEADER_FIELDS:
                records.append(Record(msg, seq, start, end, fields,
                                      (E_TOO_FEW, RECORD, start)))
            else:
                records.append(Record(msg, seq, start, end, fields, None))
        seq += 1
        pos = end + 1
    return records


# -- values -------------------------------------------------------------------------------

class Converter(TextTimes):
    """Text → Python values, one function per catalog type (docs/ibm-delimited.md, "Values").

    Every function takes a field's unescaped content (bytes in the message's code page) and
    returns ``(True, value)`` or ``(False, None)``.
    """

    def __init__(self, fmt):
        super().__init__(fmt.encoding, fmt.options["source_tz"])
        self.hex_encoding = fmt.options["hex_encoding"]
        dc = re.escape(fmt.options["decimal_char"])
        self.dc = fmt.options["decimal_char"]
        self.decimal_re = re.compile(r"([+-]?)([0-9]*)(?:" + dc + r"([0-9]*))?")
        self.float_re = re.compile(r"([+-]?)([0-9]*)(?:" + dc + r"([0-9]*))?(?:[eE]([+-]?[0-9]+))?")

    # header pieces
    def integer(self, raw, lo, hi):
        s = self.text(raw)
        if s is None or not _INTEGER.fullmatch(s):
            return False, None
        v = int(s)
        return (True, v) if lo <= v <= hi else (False, None)

    def put_ts(self, date_raw, time_raw):
        """(date ok, time ok, local µs) of ``YYYYnnn`` + ``HHMMSSmmmmmm``."""
        d, t = self.text(date_raw), self.text(time_raw)
        date_ok = d is not None and len(d) == 7 and bool(_DIGITS.fullmatch(d))
        if date_ok:
            year, doy = int(d[:4]), int(d[4:])
            days_in_year = 366 if is_leap(year) else 365
            date_ok = year >= 1 and 1 <= doy <= days_in_year
        time_ok = t is not None and len(t) == 12 and bool(_DIGITS.fullmatch(t))
        if time_ok:
            h, mi, s, us = int(t[0:2]), int(t[2:4]), int(t[4:6]), int(t[6:12])
            time_ok = h <= 23 and mi <= 59 and s <= 59
        if not (date_ok and time_ok):
            return date_ok, time_ok, None
        days = dt.date(year, 1, 1).toordinal() + doy - 1 - EPOCH_ORDINAL
        return True, True, days * US_PER_DAY + ((h * 60 + mi) * 60 + s) * US_PER_SEC + us

    def lsn(self, raw):
        s = self.text(raw)
        if s is None or not _LSN.fullmatch(s):
            return False, None
        return True, bytes.fromhex(s.replace(":", ""))

    # values by catalog type
    def value(self, ctype, raw, hex_row=False):
        kind = ctype.kind
        if kind == STRING:
            if hex_row and ctype.is_char and self.hex_encoding is not None:
                return self.hex_string(raw)
            s = self.text(raw)
            return (s is not None), s
        s = self.text(raw)
        if s is None:
            return False, None
        if kind in INT_RANGE:
            lo, hi = INT_RANGE[kind]
            if not _INTEGER.fullmatch(s):
                return False, None
            v = int(s)
            return (True, v) if lo <= v <= hi else (False, None)
        if kind == DECIMAL:
            return self.decimal(s, ctype.precision, ctype.scale)
        if kind in (FLOAT32, FLOAT64):
            return self.floating(s, kind == FLOAT32)
        if kind == DECTEXT:
            return self.dectext(s, ctype.base == "DECFLOAT")
        if kind == BINARY:
            if not _HEX.fullmatch(s):               # "" is the empty binary value
                return False, None
            return True, bytes.fromhex(s)
        if kind == BOOL:
            if s in ("1", "0"):
                return True, s == "1"
            if s.isascii() and s.lower() in ("true", "false"):
                return True, s.lower() == "true"
            return False, None
        if kind == DATE32:
            days = date_days(DATE.fullmatch(s))
            return (days is not None), (None if days is None else
                                       dt.date.fromordinal(days + EPOCH_ORDINAL))
        if kind == TIME64:
            m = TIME.fullmatch(s)
            clock = clock_us(m.group(1), m.group(2), m.group(3), m.group(4)) if m else None
            if clock is None or clock >= US_PER_DAY:      # 24.00.00 is not a TIME
                return False, None
            return True, clock
        if kind == TIMESTAMP:
            v = self.timestamp(s)
            return (v is not None), v
        if kind == TIMESTAMP_TZ:
            v = self.timestamp(s, with_zone=True)
            return (v is not None), v
        return False, None

    def hex_string(self, raw):
        """A HEX row's character column, decoded from hex and then from `hex_encoding`
        (None: the text is not hex; (False, None): the bytes are not text there)."""
        s = self.text(raw)
        if s is None or not _HEX.fullmatch(s):
            return None
        try:
            return True, codepages.decode_bytes(bytes.fromhex(s), self.hex_encoding)
        except (UnicodeError, ValueError):
            return False, None

    def decimal(self, s, precision, scale):
        m = self.decimal_re.fullmatch(s)
        if not m:
            return False, None
        sign, whole, frac = m.group(1), m.group(2), m.group(3) or ""
        if not whole and not frac:
            return False, None                          # at least one digit
        if len(whole.lstrip("0")) > precision - scale:
            return False, None                          # at most p - s integer digits
        if frac[scale:].strip("0"):
            return False, None                          # digits past s must be zeros
        text = f"{sign}{whole or '0'}.{frac[:scale].ljust(scale, '0')}"
        return True, decimal.Decimal(text)

    def floating(self, s, single):
        if len(s) > MAX_NUMBER_TEXT:
            return False, None
        m = self.float_re.fullmatch(s)
        if not m or not (m.group(2) or m.group(3)):
            return False, None
        text = f"{m.group(1)}{m.group(2) or '0'}.{m.group(3) or '0'}"
        if m.group(4) is not None:
            text += "e" + m.group(4)
        x = float(text)                                 # correctly rounded
        if not math.isfinite(x):
            return False, None
        if single:
            try:
                x = struct.unpack("<f", struct.pack("<f", x))[0]   # "<f" checks the range
            except OverflowError:                       # beyond float32's range
                return False, None
        return True, x

    def dectext(self, s, decfloat):
        """DECFLOAT / NUMBER without precision: the text itself, checked to be a number of
        the float syntax (or NaN, sNaN, Infinity in any case, with an optional sign),
        `decimal_char` as '.'."""
        bare = s[1:] if s[:1] in ("+", "-") else s
        if bare.lower() in DECFLOAT_SPECIALS:
            return True, s
        if len(s) > MAX_NUMBER_TEXT:
            return False, None
        m = self.float_re.fullmatch(s)
        if not m or not (m.group(2) or m.group(3)):
            return False, None
        return True, s.replace(self.dc, ".")



# -- outputs ------------------------------------------------------------------------------

class Output:
    """The rows of one output key, waiting to be flushed as a batch."""

    def __init__(self, key, columns, images, messages=False):
        self.key = key
        self.columns = columns      # catalog Columns (or C1…CN); [] for headers / unattributed
        self.images = images
        self.messages = messages    # a MESSAGE column (each row's message index)
        self.rows = []
        self.errors = []            # DecodeError or None, per row

    def schema(self) -> pa.Schema:
        if not self.images:
            s = envelope.headers_schema(SOURCE)
        else:
            s = envelope.schema([(c.name, c.type.arrow_type) for c in self.columns], SOURCE)
        return s.append(pa.field(MESSAGE, pa.int64())) if self.messages else s

    def flush(self, mode, stats) -> pa.RecordBatch:
        batch = pa.RecordBatch.from_pylist(self.rows, schema=self.schema())
        first = next((e for e in self.errors if e is not None), None)
        self.rows, self.errors = [], []
        return apply_mode(batch, mode, stats, first)


# -- one part -----------------------------------------------------------------------------

class PartDecoder:
    """Decode one Part: split every message, attribute records to tables, convert, batch."""

    def __init__(self, fmt, part, want, images, batch_rows, mode, stats):
        self.fmt, self.part, self.want, self.images = fmt, part, want, images
        self.batch_rows, self.mode, self.stats = batch_rows, mode, stats
        self.cd, self.rd, self.sd = fmt.delims[0], fmt.delims[1], fmt.delims[2]
        self.conv = Converter(fmt)
        self.messages = {}          # message index → its bytes
        self.outputs = {}           # output key → Output, in creation order
        # no-catalog table (see group) → (N, name that fixed it), for the whole call
        self.ncols = want.carried.setdefault("ibm_ncols", {})

    # -- stage 1: records of the part -------------------------------------------------------
    def records(self) -> list:
        part = self.part
        out = []
        for i in range(part.count):
            if part.valid is not None and not part.valid[i]:
                self.stats["tombstones"] += 1       # a null message: a Kafka tombstone
                continue
            data = part.message(i)
            self.messages[i] = data
            out.extend(split_message(data, self.cd, self.rd, self.sd, i))
        for rec in out:
            if not rec.attributable:
                continue
            owner, name = rec.fields[4].content, rec.fields[5].content
            shown = full_name(self.fmt.text(owner), self.fmt.text(name))
            rec.key, rec.table = self.want.resolve(shown)
            rec.ident = rec.table.name if rec.table is not None else shown
            if rec.table is None:
                # a table the catalog lacks: its first record with an even number of data
                # fields fixes N. The names this call reads as one table (decode(table=…)
                # matches case-insensitively) are one table here, so that a record is never
                # read with another spelling's N.
                group = self.group(rec)
                if group not in self.ncols and rec.data_fields() % 2 == 0:
                    # errors name the table as the call does: X for the names it merges
                    self.ncols[group] = (rec.data_fields() // 2,
                                         group[0] if isinstance(group, tuple) else rec.ident)
        for rec in out:             # field counts, now that every table knows its N
            if rec.attributable:
                d = rec.data_fields()
                if rec.table is not None:
                    if d != 2 * len(rec.table.columns):
                        rec.error = (E_COUNT, RECORD, rec.start)
                elif d % 2 == 1:
                    rec.error = (E_ODD, RECORD, rec.start)
                elif d != 2 * self.ncols[self.group(rec)][0]:
                    rec.error = (E_COUNT, RECORD, rec.start)
        return out

    def group(self, rec):
        """Which no-catalog table a record belongs to, as this call reads table names."""
        if self.want.requested is not None and rec.key == self.want.requested:
            return (self.want.requested,)
        return rec.ident

    def table_n(self, rec):
        """(identity, N) of a record's table, as a field-count error names them."""
        if rec.table is not None:
            return rec.ident, len(rec.table.columns)
        return self.ncols.get(self.group(rec), (0, rec.ident))[::-1]

    # -- outputs ----------------------------------------------------------------------------
    def output(self, key, recs, table=None):
        o = self.outputs.get(key)
        if o is None:
            if not self.images or key is None:
                cols = []
            elif table is not None:
                cols = self.fmt.table_columns(table)
            else:
                # a table the catalog lacks: C1…CN, N fixed by its first record
                first = next((r for r in recs if r.attributable and r.key == key), None)
                if first is not None and first.table is not None:
                    cols = self.fmt.table_columns(first.table)
                else:
                    # (no record of it in this part: the requested table, whose N an earlier
                    # part of a chunked source may have fixed)
                    group = self.group(first) if first is not None else \
                        (key,) if key == self.want.requested else key
                    cols = self.fmt.table_columns(None, self.ncols.get(group, (0,))[0])
            o = self.outputs[key] = Output(key, cols, self.images, self.want.messages)
        return o

    # -- the loop ---------------------------------------------------------------------------
    def run(self):
        want, fmt, stats = self.want, self.fmt, self.stats
        recs = self.records()
        if want.requested is not None and want.table is not None:
            t = fmt.catalog.get(want.requested) if fmt.catalog is not None else None
            if t is not None:       # the requested table exists even if the input lacks it
                self.output(want.requested, recs, t)
        ckey = want.corrupt_key
        for rec in recs:
            stats["records"] += 1
            if not rec.attributable:
                if ckey is None and want.table is not ALL:
                    continue
                key = ckey
                t = fmt.catalog.get(ckey) if fmt.catalog is not None and ckey else None
            else:
                if rec.table is None:
                    stats["unknown_tables"] += 1
                key, t = rec.key, rec.table
                if key is None:
                    continue        # a table this call does not want
            o = self.output(key, recs, t)
            row, err = self.convert(rec, o)
            if err is not None and self.mode == "FAILFAST":
                raise err           # the first error, in input order, of a wanted record
            o.rows.append(row)
            o.errors.append(err)
            if len(o.rows) >= self.batch_rows:
                yield key, o.flush(self.mode, stats)
        for o in self.outputs.values():
            if o.rows or (o.key is not None and o.key == want.requested):
                yield o.key, o.flush(self.mode, stats)

    # -- one record ---------------------------------------------------------------------------
    def convert(self, rec, o):
        """(row dict of the output's schema, DecodeError or None) of one record."""
        errors = []                 # (field number, code, byte, raw field bytes)
        data = self.messages[rec.msg]
        row = {"seq": rec.seq}
        if rec.error is not None:
            code, field, pos = rec.error
            errors.append((field, code, pos, b""))
        if not rec.attributable:
            for name in ("op", "source_op", "schema", "table", "txid", "commit_ts",
                         "change_ts", "commit_pos", "change_pos", "source"):
                row[name] = None
            op, mode = None, None
        else:
            op, mode = self.header(rec, data, row, errors)
            if rec.error is not None:
                op = None           # a field-count mismatch has no images
        if self.images:
            self.images_of(rec, data, o.columns, op, mode, row, errors)
        err = None
        if errors:
            field, code, pos, raw = min(errors, key=lambda e: e[0])
            err = self.error(rec, o, field, code, pos, raw)
        row["_error"] = str(err) if err is not None else None
        row["_corrupt_record"] = data[rec.start:rec.end] if rec.error is not None else None
        if self.want.messages:
            row[MESSAGE] = self.part.base + rec.msg
        return row, err

    def error(self, rec, o, field, code, pos, raw) -> DecodeError:
        kw = {}
        if code in (E_TOO_FEW, E_COUNT, E_ODD):
            kw["nfields"] = rec.nfields
            if code == E_COUNT:
                kw["table"], kw["ncols"] = self.table_n(rec)
        else:
            kw["raw"] = raw
        fname, reason = self.fmt.describe(code, field, o.columns, **kw)
        return DecodeError(reason, 0 if self.want.messages else self.part.base + rec.msg, pos,
                           fname)

    def header(self, rec, data, row, errors):
        """The 12 header fields → row; returns (op or None, invalid mode or None)."""
        conv = self.conv
        f = rec.fields

        def fail(i):
            errors.append((i, E_VALUE, f[i].start, data[f[i].start:f[i].end]))

        def text(i):
            if f[i].is_null:
                return None
            s = conv.text(f[i].content)
            if s is None:           # not text in the message's encoding
                errors.append((i, E_TEXT, f[i].start, data[f[i].start:f[i].end]))
            return s

        def integer(i):
            if f[i].is_null:
                return None
            ok, v = conv.integer(f[i].content, *INT_RANGE[INT32])
            if not ok:
                fail(i)
            return v

        source = {"type": integer(0)}
        # 2 identifier, and the invalid-column marker in it
        ident = text(1)
        source["identifier"] = ident
        inv = None
        if ident is not None and ident.startswith(_INVALID_PREFIX):
            inv = _INVALID.fullmatch(ident[len(_INVALID_PREFIX):])
            if inv is None:
                fail(1)
        source["invalid_column"] = int(inv.group(1)) if inv else None
        source["invalid_image"] = inv.group(2) if inv else None
        source["invalid_mode"] = inv.group(3) if inv else None
        # 3 date + 4 time
        put = None
        if not f[2].is_null and not f[3].is_null:
            date_ok, time_ok, local = conv.put_ts(f[2].content, f[3].content)
            if not date_ok:
                fail(2)
            elif not time_ok:
                fail(3)
            else:
                put = conv.to_utc(local)
        source["put_ts"] = put
        # 5 owner, 6 name
        row["schema"] = text(4)
        row["table"] = text(5)
        # 7 operation
        row["source_op"] = text(6)
        op = OPS.get(conv.text(f[6].content))
        if op is None:
            fail(6)
        row["op"] = op
        # 8 transaction id
        row["txid"] = text(7)
        # 9 commit_lsn
        pos = None
        if not f[8].is_null:
            ok, pos = conv.lsn(f[8].content)
            if not ok:
                fail(8)
        row["commit_pos"] = row["change_pos"] = pos
        # 10 commit_time
        ts = None
        if not f[9].is_null:
            s = conv.text(f[9].content)
            local = conv.timestamp(s) if s is not None else None
            if local is None:
                fail(9)
            else:
                ts = conv.to_utc(local)
        row["commit_ts"] = row["change_ts"] = ts
        # 11 plan name, 12 segment number
        source["plan_name"] = text(10)
        source["segment"] = integer(11)
        row["source"] = source
        return op, (inv.group(3) if inv else None)

    def images_of(self, rec, data, columns, op, mode, row, errors):
        """before, after, changed, present of a record with a known op (else all null)."""
        if op is None:
            row["before"] = row["after"] = row["changed"] = row["present"] = None
            return
        n = len(columns)
        f = rec.fields
        images = {"before": {}, "after": {}}
        sent_null = {"before": {}, "after": {}}
        for img, base in (("before", HEADER_FIELDS), ("after", HEADER_FIELDS + n)):
            has = op == "u" or (op == "d" and img == "before") or (op == "c" and img == "after")
            for j, col in enumerate(columns):
                fi = base + j
                fld = f[fi]
                raw = data[fld.start:fld.end]
                sent_null[img][col.name] = fld.is_null
                if img == "before" and not self.want.before:
                    images[img][col.name] = None    # not read (SPEC §1): nothing checked
                    continue
                if not has:
                    if not fld.is_null:     # an insert's before / a delete's after: empty
                        errors.append((fi, E_INSERT_BEFORE if op == "c" else E_DELETE_AFTER,
                                       fld.start, raw))
                    continue
                exempt = mode is not None and (col.type.is_lob or
                                               (mode == NULL_MODE and col.type.is_char))
                if fld.is_null:
                    images[img][col.name] = None
                    if not col.nullable and not exempt:
                        errors.append((fi, E_NOT_NULL, fld.start, raw))
                    continue
                res = self.conv.value(col.type, fld.content, hex_row=mode == HEX_MODE)
                if res is None:                     # a HEX row's value that is not hex
                    images[img][col.name] = None
                    errors.append((fi, E_HEX, fld.start, raw))
                    continue
                ok, v = res
                images[img][col.name] = v if ok else None
                if not ok:
                    errors.append((fi, E_VALUE, fld.start, raw))
        before = images["before"] if op in ("u", "d") else None
        after = images["after"] if op in ("c", "u") else None
        changed, present = {}, {}
        shown = "before" if op == "d" else "after"
        for col in columns:
            c = col.name
            if op == "c":
                changed[c] = True
            elif op == "d":
                changed[c] = False
            else:
                b, a = before[c], after[c]
                changed[c] = (b is None) != (a is None) or (b is not None and b != a)
            not_sent = mode is not None and (col.type.is_lob or
                                             (mode == NULL_MODE and col.type.is_char)) \
                and sent_null[shown][c]
            present[c] = not not_sent
        row["before"], row["after"] = before, after
        row["changed"], row["present"] = changed, present


def reference_batches(fmt, parts, want, images, batch_rows, mode, stats):
    """Yield ``(output key, RecordBatch)`` for every Part of the source, as the native path
    does (see the module docstring)."""
    for part in parts:
        yield from PartDecoder(fmt, part, want, images, batch_rows, mode, stats).run()
