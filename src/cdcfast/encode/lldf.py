"""Writer and synthetic-stream generator for `lldf` (BMC AMI Log Master logical log data file,
Data Change Records): the inverse of the decoder, as SPEC §5.2 and docs/lldf.md read it.

``encode`` turns envelope-shaped events (dicts, or a decoded ``pyarrow.Table``) back into
binary records — EBCDIC text, big-endian numbers, a 288-byte header at the seed's offsets, row
images, optional segments and z/OS framing; ``generate`` makes realistic streams for tests and
benchmarks, and ``events`` returns the Python values behind a generated stream, exactly as a
decoder gives them back, so tests can compare the two.

Header fields are written from ``cdcfast.formats.lldf.HEADER`` and image layouts come from
``cdcfast.formats.lldf.layout``: the decoders read through the same tables, so writer and
readers cannot disagree about an offset or a width.
"""
from __future__ import annotations

import datetime as dt
import itertools
import math
import random
import struct

from .. import _tz, codepages
from ..catalog import Catalog, Column, Table, parse_type
from ..formats.lldf import (H_BIN1, H_BIN2, H_BIN4, H_BINX, H_CHAR, H_TS, H_YN, HEADER,
                            HEADER_MIN, IMAGES, K_BINARY, K_BLOB, K_BOOL, K_CHAR, K_CLOB, K_DATE,
                            K_DBCLOB, K_DEC, K_F32, K_F64, K_GRAPHIC, K_I16, K_I32, K_I64,
                            K_TIME, K_TS, K_TSZ, K_VARBIN, K_VARCHAR, K_VARGRAPHIC, K_XML,
                            OFF_CHANGE_TYPE, OFF_COMMIT_TS, OFF_COMMITLRSN, OFF_LENGTH,
                            OFF_LOGLRSN, OFF_NAME, OFF_NAMELEN, OFF_OWNER, OFF_OWNERLEN,
                            OFF_SEGLEN, OFF_TIMESTAMP, OFF_UORID, OPS, SOURCE, Lldf, layout)
from ._plan import DB2_COLUMNS, DB2_INTL, STATUS, WORDS, decimal_maker, double_maker, \
    integer_maker, message_range, nullable_maker, plan, truncate_us
from ._text import aware, encodable, text_encoder, timestamp_text, unscaled

_UTC = dt.timezone.utc
_CHANGE_TYPE = {"c": "I ", "u": "UB", "d": "D ", "t": "DM", "ddl": "CO", "message": "CM"}
_U16, _U32 = struct.Struct(">H"), struct.Struct(">I")
_LOB_KINDS = (K_CLOB, K_DBCLOB, K_BLOB, K_XML)            # u32 length
_FLOAT32_MAX = 3.4028234663852886e38


# -- encoding ------------------------------------------------------------------------------

def encode(events, catalog=None, framing="raw", encoding="cp037", float_format="hfp",
           source_tz="UTC", segment_bytes=None, header_length=HEADER_MIN,
           block_bytes=32760) -> bytes:
    """Write one logical record per event and return the stream's bytes.

    ``events``: dicts in the envelope shape (SPEC §3; ``seq``, ``changed``, ``present``,
    ``_error`` and ``_corrupt_record`` are ignored) or a ``pyarrow.Table``/``RecordBatch`` in
    envelope form. Row images need the catalog (column order and types); an event of a table
    the catalog lacks may only be a record without images. ``segment_bytes`` splits records
    whose DATA is longer into segments; ``header_length`` above 288 pads the header with X'00'
    (decoders must start the data at LENGTH); ``block_bytes`` is the `vb` block size.
    """
    writer = _Writer(catalog, framing, encoding, float_format, source_tz, segment_bytes,
                     header_length, block_bytes)
    if hasattr(events, "to_pylist"):
        events = events.to_pylist()
    return writer.join([rec for ev in events for rec in writer.records(ev)])


class _Writer:
    """Builds physical records; value writers are chosen once per table column, not per value."""

    def __init__(self, catalog, framing, encoding, float_format, source_tz, segment_bytes,
                 header_length, block_bytes):
        self.framing = str(framing).lower()
        if self.framing not in ("raw", "rdw", "vb"):
            raise ValueError(f"framing must be raw, rdw or vb, not {framing!r}")
        float_format = str(float_format).lower()
        if float_format not in ("hfp", "ieee"):
            raise ValueError(f"float_format must be hfp or ieee, not {float_format!r}")
        enc = codepages.canonical(encoding)
        if enc not in Lldf.ENCODINGS:
            raise ValueError(f"encoding {encoding!r} is not a single-byte code page LLDF can "
                             f"use ({', '.join(Lldf.ENCODINGS)})")
        if not HEADER_MIN <= header_length <= 0xFFFF:
            raise ValueError(f"header_length must be 288..65535, not {header_length}")
        if segment_bytes is not None and segment_bytes < 1:
            raise ValueError(f"segment_bytes must be at least 1, not {segment_bytes}")
        if block_bytes < 8:
            raise ValueError(f"block_bytes must hold a BDW and an RDW (8), not {block_bytes}")
        self.catalog = Catalog.coerce(catalog)
        self.to_bytes = text_encoder(enc)
        self.blank = self.to_bytes(" ")
        self.tz = _tz.zone(source_tz)
        self.segment_bytes = segment_bytes
        self.header_length = header_length
        self.block_bytes = block_bytes
        self.real, self.double = ((_hfp_short, _hfp_long) if float_format == "hfp"
                                  else (_ieee_real, struct.Struct(">d").pack))
        self._put = {H_BIN1: self._bin, H_BIN2: self._bin, H_BIN4: self._bin,
                     H_BINX: self._binx, H_CHAR: self._char, H_YN: self._yn, H_TS: self._ts}
        self._source_fields = [f for f in HEADER if f[0] not in ("uorid", "totalsegs")]
        self._tables = {}    # catalog table name -> [(column, nullable, writer, null bytes)]

    # -- records -------------------------------------------------------------------------
    def records(self, ev) -> list:
        """The physical records of one event (several when it is segmented), framed as the
        framing needs them one by one: raw bare, rdw and vb behind an RDW."""
        change_type, op = self._change_type(ev)
        table = self._table(ev)
        data = self.data(ev, change_type, op, table)
        header = self._header(ev, change_type, table)
        src = ev.get("source") or {}
        n = self.segment_bytes
        if n and len(data) > n:
            total = -(-len(data) // n)
            chunks = [data[i:i + n] for i in range(0, len(data), n)]
        else:   # unsegmented: TOTALSEGS 0 or 1 as the source says (decoders treat both alike)
            total = 1 if src.get("totalsegs") == 1 else 0
            chunks = [data]
        out = []
        for i, chunk in enumerate(chunks):
            struct.pack_into(">HHH", header, OFF_SEGLEN, len(chunk), total,
                             i + 1 if total else 0)
            out.append(bytes(header) + chunk)
        if self.framing != "raw":
            out = [_rdw(rec) for rec in out]
        return out

    def join(self, records) -> bytes:
        """Framed records -> the stream: back to back, or for `vb` packed into blocks."""
        if self.framing != "vb":
            return b"".join(records)
        out, block, size = [], [], 4
        for rec in records:
            if block and size + len(rec) > self.block_bytes:
                out.append(_bdw(size))
                out.extend(block)
                block, size = [], 4
            block.append(rec)       # a record larger than a block gets a block of its own
            size += len(rec)
        if block:
            out.append(_bdw(size))
            out.extend(block)
        return b"".join(out)

    def _change_type(self, ev):
        op, source_op = ev.get("op"), ev.get("source_op")
        if source_op is None:
            if op not in _CHANGE_TYPE:
                raise ValueError(f"event has op {op!r} and no source_op; expected one of "
                                 f"{', '.join(_CHANGE_TYPE)}")
            source_op = _CHANGE_TYPE[op]
        if not 1 <= len(source_op) <= 2:
            raise ValueError(f"source_op {source_op!r} is not a 2-character CHANGE TYPE")
        change_type = source_op.ljust(2)
        known = OPS.get(change_type) or ("message" if change_type[0] == "E" else None)
        if op is not None and known is not None and op != known:
            raise ValueError(f"op {op!r} disagrees with CHANGE TYPE {change_type!r} ({known})")
        return change_type, known

    def _table(self, ev):
        schema, table = ev.get("schema"), ev.get("table")
        name = f"{schema}.{table}" if schema else table
        return self.catalog.get(name) if self.catalog is not None and name else None

    # -- DATA ------------------------------------------------------------------------------
    def data(self, ev, change_type=None, op=None, table=None) -> bytes:
        """The logical record's DATA (b"" when it has no images: SEGLEN 0, no DATA at all)."""
        if change_type is None:
            change_type, op = self._change_type(ev)
            table = self._table(ev)
        wants = IMAGES.get(op, (False, False))
        images = []
        for name, want in zip(("before", "after"), wants):
            image = ev.get(name)
            if not want:
                if image is not None:
                    raise ValueError(f"a {change_type!r} record carries no {name} image")
                continue
            if image is None:
                raise ValueError(f"a {change_type!r} record needs a {name} image")
            if table is None:
                raise ValueError(f"table {ev.get('schema')}.{ev.get('table')} is not in the "
                                 f"catalog: its row images cannot be written without columns")
            images.append(self._image(name, image, table))
        if not images:
            return b""
        total = 2 + sum(2 + len(i) for i in images)
        if total > 0xFFFF:
            raise ValueError(f"DATA of {total} bytes exceeds its u16 length field")
        return _U16.pack(total) + b"".join(_U16.pack(len(i)) + i for i in images)

    def _image(self, image_name, image, table):
        columns = self._columns(table)
        extra = image.keys() - {c[0] for c in columns}
        if extra:
            raise ValueError(f"{image_name} image has columns table {table.name} lacks: "
                             f"{sorted(extra)}")
        parts = []
        for name, nullable, write, null in columns:
            value = image.get(name)
            if value is None:
                if not nullable:
                    raise ValueError(f"{image_name}.{name}: null in a NOT NULL column")
                parts.append(null)
                continue
            try:
                parts.append(b"\x00" + write(value) if nullable else write(value))
            except (ValueError, TypeError, OverflowError, struct.error) as e:
                raise ValueError(f"{image_name}.{name}: {e}") from None
        out = b"".join(parts)
        if len(out) > 0xFFFF:
            raise ValueError(f"{image_name} image of {len(out)} bytes exceeds its u16 length")
        return out

    def _columns(self, table):
        got = self._tables.get(table.name)
        if got is None:
            got = self._tables[table.name] = []
            for c in table.columns:
                try:
                    kind, width = layout(c)
                except ValueError as e:
                    raise ValueError(f"table {table.name}, column {c.name}: {e}") from None
                null = b"\xff" + bytes(width or (4 if kind in _LOB_KINDS else 2))
                got.append((c.name, c.nullable, self._writer(c.type, kind, width), null))
        return got

    def _writer(self, ctype, kind, width):
        """value -> the column's bytes (without null byte); the value is never None here."""
        text = self.to_bytes
        if kind in (K_I16, K_I32, K_I64):
            return struct.Struct({2: ">h", 4: ">i", 8: ">q"}[width]).pack
        if kind == K_DEC:
            p, s = ctype.precision, ctype.scale
            return lambda v: _packed(v, p, s, width)
        if kind == K_F32:
            return self.real
        if kind == K_F64:
            return self.double
        if kind == K_BOOL:
            return lambda v: b"\x01" if v else b"\x00"
        if kind == K_CHAR:
            return lambda v: _fixed(text(v), width, self.blank, ctype.name)
        if kind == K_GRAPHIC:
            return lambda v: _fixed(v.encode("utf-16-be"), width, b"\x00\x20", ctype.name)
        if kind == K_BINARY:
            return lambda v: _fixed(bytes(v), width, b"\x00", ctype.name)
        if kind == K_VARCHAR:
            return lambda v: _u16(text(v))
        if kind == K_VARGRAPHIC:
            return lambda v: _u16(v.encode("utf-16-be"))
        if kind == K_VARBIN:
            return lambda v: _u16(bytes(v))
        if kind == K_CLOB:
            return lambda v: _U32.pack(len(b := text(v))) + b
        if kind == K_DBCLOB:
            return lambda v: _U32.pack(len(b := v.encode("utf-16-be"))) + b
        if kind == K_BLOB:
            return lambda v: _U32.pack(len(b := bytes(v))) + b
        if kind == K_XML:
            return lambda v: _U32.pack(len(b := v.encode("utf-8"))) + b
        if kind == K_DATE:
            return lambda v: text(f"{v.year:04d}-{v.month:02d}-{v.day:02d}")
        if kind == K_TIME:      # 8 characters whatever TIME(p) says: a fraction is not carried
            return lambda v: text(f"{v.hour:02d}.{v.minute:02d}.{v.second:02d}")
        p = ctype.precision
        if kind == K_TS:
            return lambda v: text(timestamp_text(v, p))
        if kind == K_TSZ:
            return lambda v: text(_tsz_text(v, p))
        raise AssertionError(f"no writer for layout {kind}")

    # -- header ----------------------------------------------------------------------------
    def _header(self, ev, change_type, table) -> bytearray:
        """The header with every field but SEGLEN/TOTALSEGS/SEGNUM (set per segment)."""
        h = bytearray(self.header_length)
        _U16.pack_into(h, OFF_LENGTH, self.header_length)
        src = ev.get("source") or {}
        for name, vendor, off, width, kind in self._source_fields:
            h[off:off + width] = self._put[kind](src.get(name), width, vendor)
        uorid = src.get("uorid")
        if uorid is None and ev.get("txid") is not None:
            try:
                uorid = bytes.fromhex(ev["txid"])
            except ValueError:
                raise ValueError(f"txid {ev['txid']!r} is not UORID's 20 hex digits") from None
        h[OFF_UORID:OFF_UORID + 10] = self._binx(uorid, 10, "UORID")
        owner, short_owner, name, short_name = self._names(ev, table)
        _U16.pack_into(h, OFF_OWNERLEN, len(owner))
        _U16.pack_into(h, OFF_NAMELEN, len(name))
        h[OFF_OWNER:OFF_OWNER + 8] = short_owner.ljust(8, self.blank)
        h[OFF_NAME:OFF_NAME + 18] = short_name.ljust(18, self.blank)
        h[OFF_TIMESTAMP:OFF_TIMESTAMP + 17] = self._ts(ev.get("change_ts"), 17, "TIMESTAMP")
        h[OFF_LOGLRSN:OFF_LOGLRSN + 10] = self._binx(ev.get("change_pos"), 10, "LOGLRSN")
        h[OFF_CHANGE_TYPE:OFF_CHANGE_TYPE + 2] = self._char(change_type, 2, "CHANGE TYPE")
        h[OFF_COMMIT_TS:OFF_COMMIT_TS + 17] = self._ts(ev.get("commit_ts"), 17,
                                                       "UORCOMMITTIMESTAMP")
        h[OFF_COMMITLRSN:OFF_COMMITLRSN + 10] = self._binx(ev.get("commit_pos"), 10,
                                                           "UORCOMMITLRSN")
        return h

    def _names(self, ev, table):
        """(owner, its ≤ 8 header bytes, name, its ≤ 18 header bytes), encoded. Log Master
        writes an owner's first 8 bytes and a long name's unique SHORTNAME; the catalog's
        aliases (`SHORTOWN.SHORTNAME`) are where that short name is known."""
        owner = self.to_bytes(ev.get("schema") or "")
        name = self.to_bytes(ev.get("table") or "")
        short_owner, short_name = owner[:8], name
        if len(name) > 18:
            found = []
            for alias in (table.aliases if table is not None else ()):
                a_owner, _, a_name = alias.rpartition(".")
                a_owner, a_name = self.to_bytes(a_owner), self.to_bytes(a_name)
                if len(a_name) <= 18:
                    found.append((a_owner != short_owner, a_name))
            # an alias under the written owner first; without one, the name's first 18 bytes
            short_name = min(found)[1] if found else name[:18]
        return owner, short_owner, name, short_name

    def _bin(self, value, width, field):
        try:
            return (value or 0).to_bytes(width, "big")
        except (OverflowError, AttributeError) as e:
            raise ValueError(f"{field}: {value!r} is not an unsigned {width}-byte number "
                             f"({e})") from None

    def _binx(self, value, width, field):
        if value is None:
            return bytes(width)
        value = bytes(value)
        if len(value) != width:
            raise ValueError(f"{field}: {len(value)} bytes given, BIN({width}) needs {width}")
        return value

    def _char(self, value, width, field):
        if value is None:
            return self.blank * width
        raw = self.to_bytes(value)
        if len(raw) > width:
            raise ValueError(f"{field}: {value!r} is longer than CHAR({width})")
        return raw.ljust(width, self.blank)

    def _yn(self, value, width, field):
        return self.blank if value is None else self.to_bytes("Y" if value else "N")

    def _ts(self, value, width, field):
        """BIN(17): 34 BCD digits, YYYYMMDDHHMMSS + 15 fraction digits + 5 pad digits, of the
        wall clock in `source_tz` (None: all zeros, which decoders read as null)."""
        if value is None:
            return bytes(17)
        t = aware(value).astimezone(self.tz)
        return bytes.fromhex(f"{t.year:04d}{t.month:02d}{t.day:02d}{t.hour:02d}"
                             f"{t.minute:02d}{t.second:02d}{t.microsecond:06d}" + "0" * 14)


def _rdw(record):
    n = len(record) + 4
    if n > 0xFFFF:
        raise ValueError(f"a physical record of {n} bytes does not fit an RDW's u16 length; "
                         f"pass segment_bytes to split it into segments")
    return _U16.pack(n) + b"\x00\x00" + record


def _bdw(n):
    """A block descriptor word: u16 + 2 zero bytes, or the extended u32 form (high bit set)
    for blocks over 32767 bytes."""
    return _U32.pack(0x80000000 | n) if n > 0x7FFF else _U16.pack(n) + b"\x00\x00"


def _u16(raw):
    if len(raw) > 0xFFFF:
        raise ValueError(f"{len(raw)} bytes exceed a u16 length field")
    return _U16.pack(len(raw)) + raw


def _fixed(raw, width, pad, type_name):
    if len(raw) > width:
        raise ValueError(f"{len(raw)} bytes do not fit {type_name} ({width} bytes)")
    return raw + pad * ((width - len(raw)) // len(pad))


def _tsz_text(v, p):
    """`YYYY-MM-DD-HH.MM.SS.f…±HH:MM` in the value's own offset (UTC, the decoded form, is
    `+00:00`); an offset with seconds has no text form, so that value is written in UTC."""
    v = aware(v)
    off = v.utcoffset()
    if off % dt.timedelta(minutes=1):
        v, off = v.astimezone(_UTC), dt.timedelta(0)
    minutes = int(off.total_seconds()) // 60
    sign = "-" if minutes < 0 else "+"
    hh, mm = divmod(abs(minutes), 60)
    return f"{timestamp_text(v, p)}{sign}{hh:02d}:{mm:02d}"


def _packed(v, precision, scale, width):
    """Packed decimal, exactly (never through a float): digits, then sign nibble C or D."""
    n = unscaled(v, scale)
    text = str(abs(n))
    if len(text) > precision:
        raise ValueError(f"{v} has more than {precision} digits")
    return bytes.fromhex(text.rjust(2 * width - 1, "0") + ("D" if n < 0 else "C"))


def _hfp_long(x):
    """IBM hexadecimal floating point, 8 bytes: sign, excess-64 base-16 exponent, 56-bit
    normalized fraction. A double's 53 bits always fit, so this is exact."""
    x = float(x)
    if x == 0.0:
        return (b"\x80" if math.copysign(1.0, x) < 0 else b"\x00") + bytes(7)
    if not math.isfinite(x):
        raise ValueError(f"{x!r} has no IBM HFP form")
    m, e = math.frexp(abs(x))
    k = (e - 53) // 4 * 4                        # 2**k is the fraction's unit, k = 4(E-64)-56
    fraction = int(m * (1 << 53)) << (e - 53 - k)
    exp = k // 4 + 78
    if not 0 <= exp <= 127:
        raise ValueError(f"{x!r} is outside IBM HFP's range")
    return ((x < 0) << 63 | exp << 56 | fraction).to_bytes(8, "big")


def _hfp_short(x):
    """IBM HFP, 4 bytes (REAL): as _hfp_long with a 24-bit fraction, rounded to nearest (ties
    to even) — a normalized fraction may have up to 3 leading zero bits, so not every float32
    is exact; the generator makes only values that are."""
    x = float(x)
    if x == 0.0:
        return b"\x80\x00\x00\x00" if math.copysign(1.0, x) < 0 else bytes(4)
    if not math.isfinite(x) or abs(x) > _FLOAT32_MAX:
        raise ValueError(f"{x!r} is not a REAL value")
    m, e = math.frexp(abs(x))
    k = (e - 21) // 4 * 4                        # k = 4(E-64)-24
    shift = 53 - e + k                           # 29..32 bits of the 53 are rounded off
    fraction, rest = divmod(int(m * (1 << 53)), 1 << shift)
    half = 1 << (shift - 1)
    if rest > half or (rest == half and fraction & 1):
        fraction += 1
        if fraction == 1 << 24:
            fraction, k = 1 << 20, k + 4
    exp = k // 4 + 70
    if exp < 0:
        raise ValueError(f"{x!r} is outside IBM HFP's range")
    return ((x < 0) << 31 | exp << 24 | fraction).to_bytes(4, "big")


def _ieee_real(x):
    try:
        return struct.pack(">f", x)
    except OverflowError:
        raise ValueError(f"{x!r} is beyond float32's range") from None


# -- generating ----------------------------------------------------------------------------

# With all_types: the types the 20-column benchmark table lacks (each also NOT NULL).
_MORE_COLUMNS = (
    ("LABEL_G", "GRAPHIC(6)", True), ("NOTE_VG", "VARGRAPHIC(20)", True),
    ("REMARKS", "CLOB", True), ("REMARKS_DB", "DBCLOB", True), ("PHOTO", "BLOB", True),
    ("DOC", "XML", True), ("HASH8", "BINARY(8)", True), ("CODE4", "CHAR(4) FOR BIT DATA", True),
    ("ROW_ID", "ROWID", True), ("RATIO", "FLOAT(21)", True),
    ("BIG_AMOUNT", "DECIMAL(31,0)", True), ("FEE", "DECIMAL(10,3)", True),
    ("TS0", "TIMESTAMP(0)", True), ("TS9", "TIMESTAMP(9)", True),
    ("TS12", "TIMESTAMP(12)", True), ("TSZ0", "TIMESTAMP(0) WITH TIME ZONE", True),
    ("TSZ12", "TIMESTAMP(12) WITH TIME ZONE", True), ("MEMO", "LONG VARCHAR", True),
    ("DIGEST", "VARBINARY(32)", True),
)
# GRAPHIC data may hold any character: some BMP ones and a few that need surrogate pairs
_GRAPHIC = "ABCDEFXYZ abcxyz 0123 中文日本語한국어éßñ€Ωж" + "𝄞😀𠜎"
# (connection type, connect id, correlation id, authid, plan, LUW network id, LUW name)
_CONNECTIONS = (
    ("TS", "TSO", "ORDUSR1", "ORDUSR1", "DSNESPCS", "NETA", "DB2PLU"),
    ("TS", "TSO", "ORDUSR2", "ORDUSR2", "ORDPLAN", "NETA", "DB2PLU"),
    ("BA", "BATCH", "ORDLOAD1", "BATCHID", "ORDPLAN", "NETA", "DB2PLU"),
    ("DR", "SERVER", "db2jcc_appli", "APPUSER", "DISTSERV", "NETB", "JDBCLU"),
)


def generate(rows, table_width=20, tables=1, seed=0, messages=False, records_per_message=(1, 4),
             control=False, all_types=False, long_names=False, **options):
    """A realistic, deterministic stream of ``rows`` logical records -> ``(data, catalog)``.

    ``data`` is one ``bytes`` stream, or with ``messages=True`` a list of ``bytes`` messages of
    ``records_per_message`` (an inclusive range, or an int) records each, every one framed on
    its own. ``options`` are :func:`encode`'s. ``control`` adds a few DM, CO and CM records;
    ``all_types`` gives the tables every type LLDF images hold (nullable and NOT NULL);
    ``long_names`` gives owners over 8 and names over 18 characters, the records carrying the
    catalog's short aliases. Beyond ``FRESH_ROWS`` rows, whole pooled transactions repeat with
    their bytes encoded once (UORIDs and LRSNs then repeat) so 100 MB takes seconds.
    """
    catalog, plan, writer = _plan(rows, table_width, tables, seed, records_per_message,
                                  control, all_types, long_names, options)
    encoded = {}    # id(message) -> its framed records: a pooled message is encoded once
    joined = {}

    def records(msg):
        got = encoded.get(id(msg))
        if got is None:
            got = encoded[id(msg)] = [rec for ev in msg for rec in writer.records(ev)]
        return got

    if not messages:
        return writer.join(list(itertools.chain.from_iterable(map(records, plan)))), catalog
    out = []
    for msg in plan:
        data = joined.get(id(msg))
        if data is None:
            data = joined[id(msg)] = writer.join(records(msg))
        out.append(data)
    return out, catalog


def events(rows, table_width=20, tables=1, seed=0, records_per_message=(1, 4), control=False,
           all_types=False, long_names=False, **options):
    """The event dicts that :func:`generate` with the same arguments encodes, in order, and the
    catalog -> ``(list of dicts, catalog)``, with the values a decoder returns (``source``
    complete, header text trimmed). Pooled rows repeat the same dict objects."""
    options.pop("messages", None)
    catalog, plan, _ = _plan(rows, table_width, tables, seed, records_per_message, control,
                             all_types, long_names, options)
    return [ev for msg in plan for ev in msg], catalog


def _writer_options(options):
    defaults = dict(framing="raw", encoding="cp037", float_format="hfp", source_tz="UTC",
                    segment_bytes=None, header_length=HEADER_MIN, block_bytes=32760)
    unknown = options.keys() - defaults.keys()
    if unknown:
        raise TypeError(f"unknown lldf options: {sorted(unknown)}")
    return {**defaults, **options}


def _catalog(table_width, tables, all_types, long_names):
    if table_width < 1 or tables < 1:
        raise ValueError("table_width and tables must be at least 1")
    kinds = DB2_COLUMNS
    if all_types:
        kinds = (*DB2_COLUMNS, *_MORE_COLUMNS)
        kinds = (*kinds, *((f"{n}_NN", t, False) for n, t, _ in kinds))
        table_width = max(table_width, 1 + len(kinds))
    cols = [Column("ORDER_ID", parse_type("INTEGER"), nullable=False)]
    for i in range(table_width - 1):
        name, type_text, nullable = kinds[i % len(kinds)]
        lap = i // len(kinds)
        cols.append(Column(f"{name}_{lap + 1}" if lap else name, parse_type(type_text), nullable))
    out = []
    for t in range(tables):
        if long_names:   # Log Master's SHORTNAME: unique, 18 characters
            schema, name = "SALES_ANALYTICS", f"CUSTOMER_ORDER_HISTORY_{t}"
            aliases = (f"{schema[:8]}.{name[:13]}{t:05d}",)
        else:
            schema, name, aliases = "SALES", f"ORDERS_{t}", ()
        out.append(Table(schema, name, tuple(cols), ("ORDER_ID",), aliases))
    return Catalog(out)


def _plan(rows, table_width, tables, seed, records_per_message, control, all_types,
          long_names, options):
    """-> (catalog, messages in output order, each a list of event dicts, the writer)."""
    lo, hi = message_range(records_per_message)
    catalog = _catalog(table_width, tables, all_types, long_names)
    writer = _Writer(catalog, **_writer_options(options))
    rng = random.Random(seed)
    gen = _Generator(catalog, rng, writer, control)
    return catalog, plan(gen.transaction, rows, lo, hi, rng), writer


class _Generator:
    """Keeps each table's live rows (and their RIDs), so updates and deletes act on rows that
    exist, and the log's clock, RBA and LRSN, so positions and times only move forward."""

    def __init__(self, catalog, rng, writer, control):
        self.rng = rng
        self.writer = writer
        self.control = control
        self.tables = list(catalog)
        self.intl = [c for c in DB2_INTL if encodable(writer.to_bytes, c)]
        self.makers = {t.name: [self._maker(c) for c in t.columns] for t in self.tables}
        self.live = {t.name: ([], {}, {}) for t in self.tables}   # keys, key -> row, key -> RID
        self.next_key = {t.name: 1 for t in self.tables}
        self.objects = {t.name: self._object(i, t) for i, t in enumerate(self.tables)}
        self.rba = 0x00000000_0017_A3C4_1000                       # extended 10-byte RBA
        self.lrsn = 0x00_DC2F_8A41_7B30_0000_00                    # extended 10-byte LRSN
        self.clock = dt.datetime(2024, 6, 12, 8, 0, 0, tzinfo=_UTC)

    @staticmethod
    def _object(i, t):
        """The Db2 objects a table lives in, and how its names arrive in the header."""
        return {"dbid": 284, "psid": 2 + 2 * i, "obid": 3 + 2 * i, "dbname": "SALESDB",
                "tsname": f"TSORD{i % 1000:03d}", "owner_truncated": len(t.schema) > 8,
                "name_truncated": len(t.table) > 18}

    def transaction(self, left, lo, hi):
        """One unit of recovery of at most ``left`` records: a list of messages (lists of
        events) sharing UORID, UORTIMESTAMP, commit timestamp, commit LRSN and connection."""
        r = self.rng
        n_msgs = 1 if r.random() < 0.8 else r.randint(2, 3)
        sizes = []
        for _ in range(n_msgs):
            if left <= 0:
                break
            sizes.append(min(r.randint(lo, hi), left))
            left -= sizes[-1]
        self.clock += dt.timedelta(seconds=r.randint(0, 2), microseconds=r.randint(0, 999999))
        uor = {"uor_ts": self.clock, "uordisp": "C", "uoridlrsn": self._lrsn(),
               "uorid": self._rba()}
        conn = dict(zip(("connection_type", "connect_id", "correlation_id", "authid", "plan",
                         "luw_network_id", "luw_name"), r.choice(_CONNECTIONS)))
        member = r.choice((1, 2))
        luw_instance = r.randbytes(6)
        txn = [[self._change(member) for _ in range(size)] for size in sizes]
        self.clock += dt.timedelta(microseconds=r.randint(50, 20000))
        commit = {"commit_ts": self.clock, "commit_pos": self._lrsn()}
        uor["uorcommitpoint"] = self._rba()
        txid = uor["uorid"].hex().upper()
        for ev in itertools.chain.from_iterable(txn):
            ev.update(commit, txid=txid)
            src = ev["source"]
            src.update(uor, **conn, luw_instance=luw_instance, luw_seqno=1)
            ev["source"] = {name: src[name] for name in SOURCE.names}   # in SOURCE's order
            if self.writer.segment_bytes:     # the decoder reports the first segment's count
                n = len(self.writer.data(ev))
                if n > self.writer.segment_bytes:
                    ev["source"]["totalsegs"] = -(-n // self.writer.segment_bytes)
        return txn

    def _rba(self):
        self.rba += self.rng.randint(0x60, 0x900)
        return self.rba.to_bytes(10, "big")

    def _lrsn(self):
        self.lrsn += self.rng.randint(0x100, 0x40000)
        return self.lrsn.to_bytes(10, "big")

    def _change(self, member):
        """One record: the event with its per-record header fields (the unit of recovery's
        are added by `transaction`)."""
        r = self.rng
        t = r.choice(self.tables)
        keys, rows, rids = self.live[t.name]
        if self.control and r.random() < 0.02:
            source_op = r.choice(("DM", "DM", "CO", "CO", "CM"))
            op, before, after, rid = OPS[source_op], None, None, (0, 0)
            if source_op == "DM":      # a mass delete empties the table
                keys.clear()
                rows.clear()
                rids.clear()
        else:
            x = r.random()
            if x < 0.6 or not keys:
                op, before, after = "c", None, self._row(t)
                key = after["ORDER_ID"]
                keys.append(key)
                rows[key] = after
                rids[key] = (r.randint(2, 60000), r.randint(1, 255))
                source_op = "IL" if r.random() < 0.05 else "I "
            elif x < 0.9:
                key = r.choice(keys)
                before = rows[key]
                after = dict(before)
                makers = self.makers[t.name]
                k = min(r.randint(1, 3), len(t.columns) - 1)     # a few columns, never the key
                for i in r.sample(range(1, len(t.columns)), k):
                    after[t.columns[i].name] = makers[i]()
                rows[key] = after
                op, source_op = "u", "UB"
            else:
                i = r.randrange(len(keys))
                keys[i], keys[-1] = keys[-1], keys[i]      # swap-pop: O(1) removal
                key = keys.pop()
                op, source_op, before, after = "d", "D ", rows.pop(key), None
            rid = rids.pop(key) if op == "d" else rids[key]
        self.clock += dt.timedelta(microseconds=r.randint(1, 5000))
        logrba = self._rba()
        x = r.random()
        source = {
            **self.objects[t.name], "systemid": "DB2P", "partnum": 1 + (rid[0] % 4),
            "logrba": logrba, "memberid": member, "rid_page": rid[0], "rid_id": rid[1],
            "sqltype": None, "logrecdisp": "C",
            "sqlsrctype": "R" if x < 0.03 else "T" if x < 0.05 else None,
            "logbytes": r.randint(80, 900), "logdelta": r.randint(0, 64), "anomaly_rowid": 0,
            "anomaly_type": "N", "anomaly_rba": bytes(10),
            "totalsegs": 1 if r.random() < 0.5 else 0, "incomplete_trans": False,
            "incomplete_dep": False, "uor_has_comp": False, "sqlrirba": logrba,
            "pagenum_fmt": "R"}
        return {"op": op, "source_op": source_op, "schema": t.schema, "table": t.table,
                "txid": None, "commit_ts": None, "change_ts": self.clock, "commit_pos": None,
                "change_pos": self._lrsn(), "before": before, "after": after, "source": source}

    def _row(self, t):
        key = self.next_key[t.name]
        self.next_key[t.name] += self.rng.randint(1, 3)
        row = {c.name: m() for c, m in zip(t.columns, self.makers[t.name])}
        row["ORDER_ID"] = key
        return row

    def _maker(self, col):
        """() -> a random value of the column's type: ~5% null when nullable."""
        return nullable_maker(self.rng, self._values(col), col.nullable, 0.05)

    def _values(self, col):
        """Values as ibm-delimited's generator makes them, each one the format carries exactly
        (CHAR and BINARY at full width, TIME whole seconds, REAL exact in HFP)."""
        r, ctype = self.rng, col.type
        kind, width = layout(col)
        p = ctype.precision
        if kind == K_CHAR:
            if width <= 2:
                return lambda: r.choice("YNABCX").ljust(width)
            return lambda: r.choice(STATUS).ljust(width)[:width]
        if kind == K_VARCHAR:
            return lambda: self._text(ctype.length or 100)
        if kind == K_CLOB:
            return lambda: self._text(300)
        if kind == K_GRAPHIC:
            return lambda: self._graphic(width // 2, pad=True)
        if kind == K_VARGRAPHIC:
            return lambda: self._graphic(ctype.length or 20)
        if kind == K_DBCLOB:
            return lambda: self._graphic(200)
        if kind == K_XML:      # Db2 keeps XML in UTF-8: any character
            return lambda: f'<order status="{r.choice(STATUS)}"><note>' \
                           f'{self._graphic(40)}</note></order>'
        if kind in (K_I16, K_I32, K_I64):
            return integer_maker(r, 8 * width)
        if kind == K_DEC:
            return decimal_maker(r, ctype.precision, ctype.scale)
        if kind == K_F64:
            return double_maker(r)
        if kind == K_F32:      # multiples of 1/64 below 2**16: exact in HFP's 24-bit fraction
            return lambda: (r.randint(0, 64000) / 64 if r.random() < 0.8
                            else r.randint(-(1 << 22) + 1, (1 << 22) - 1) / 64)
        if kind == K_BOOL:
            return lambda: r.random() < 0.5
        if kind == K_BINARY:
            return lambda: r.randbytes(width)
        if kind == K_VARBIN:   # a ROWID is 17 bytes
            n = ctype.length or 17
            return lambda: r.randbytes(n if ctype.base == "ROWID" else r.randint(1, n))
        if kind == K_BLOB:
            return lambda: r.randbytes(r.randint(0, 300))
        if kind == K_DATE:
            return lambda: dt.date(1990, 1, 1) + dt.timedelta(days=r.randint(0, 15000))
        if kind == K_TIME:
            return lambda: dt.time(r.randint(0, 23), r.randint(0, 59), r.randint(0, 59))
        if kind in (K_TS, K_TSZ):
            base = dt.datetime(2000, 1, 1, tzinfo=_UTC if kind == K_TSZ else None)
            return lambda: base + dt.timedelta(
                seconds=r.randint(0, 10 ** 9), microseconds=truncate_us(r.randint(0, 999999), p))
        raise AssertionError(f"no generator for {ctype.name}")

    def _text(self, length):
        """Words, blanks (trailing ones too) and the code page's international characters."""
        r = self.rng
        if r.random() < 0.03:
            return ""
        target = r.randint(1, length)
        parts, size = [], 0
        while size < target:
            if r.random() < 0.06 and self.intl:
                piece = r.choice(self.intl)
            else:
                piece = r.choice(WORDS) + " "
            parts.append(piece)
            size += len(piece)
        return "".join(parts)[:target]

    def _graphic(self, units, pad=False):
        """UTF-16 text of at most ``units`` code units (a non-BMP character takes two); with
        ``pad``, blank-padded to exactly ``units`` as a GRAPHIC(n) column holds it."""
        r = self.rng
        target = r.randint(1 if pad else 0, units)
        out, used = [], 0
        while True:
            c = r.choice(_GRAPHIC)
            size = 2 if ord(c) > 0xFFFF else 1
            if used + size > target:
                break
            out.append(c)
            used += size
        return "".join(out) + (" " * (units - used) if pad else "")

