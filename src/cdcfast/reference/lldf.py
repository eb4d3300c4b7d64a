"""The reference decoder of `lldf` (SPEC §5.2, docs/lldf.md), in plain Python.

This is the slow per-record parser that the native kernel (native/cdcfast/_lldf.pyx, driven by
cdcfast/formats/_lldf_run.py) replaces, and the oracle that kernel is tested against. It is
written from docs/lldf.md alone, for clarity: `struct` reads the big-endian binary fields and
the integer and IEEE float values, nibble loops read packed decimals and BIN(17) timestamps,
integer arithmetic reads IBM hexadecimal floating point, `codepages.decode_bytes` decodes text,
and the ibm-delimited reference's text parsers read DATE / TIME / TIMESTAMP columns. It yields
the same batches as the native path: same output keys, schemas, row order, values, `_error`
texts, `_corrupt_record` bytes and statistics.

The decoding runs in four stages, one class each:

1. `Framer` cuts a message into physical records (`Physical`) and the spans it cannot cut
   (`Broken`: framing errors, each one corrupt record);
2. `assemble` joins the segments of segmented records into logical records (`Logical`);
3. `HeaderReader` decodes a logical record's header, `ImageReader` (with `ValueReader`) its
   DATA and row images;
4. `PartDecoder` routes every logical record to its output (`Output`) and batches the rows.

Byte offsets in errors are within the message; `seq` counts logical records across the whole
call (every part, every message).
"""
from __future__ import annotations

import calendar
import datetime as dt
import decimal
import math
import struct

import numpy as np
import pyarrow as pa

from .. import codepages, envelope
from ..catalog import FLOAT32, FLOAT64
from ..errors import DecodeError
from ..formats.base import ALL, apply_mode, full_name, with_messages
from ..formats._lldf_codes import (E_BLOCK_FILL, E_CHANGE_TYPE, E_DATA_LEN, E_DATA_REST, E_DW_CUT,
                                   E_DW_RESERVED, E_DW_SHORT, E_HDR_CUT, E_HDR_LENGTH,
                                   E_HEADER_VALUE, E_IMAGE_CUT, E_IMAGE_LONG, E_IMAGE_SHORT,
                                   E_NO_DATA, E_NULL_BYTE, E_RAW_REST, E_REC_CUT, E_SEG_ALONE,
                                   E_SEG_MISSING, E_SEGLEN, E_VALUE, H_BIN1, H_BIN2, H_BIN4, H_BINX,
                                   H_CHAR, H_TS, H_YN, HEADER_MIN, K_BINARY, K_BLOB, K_BOOL, K_CHAR,
                                   K_CLOB, K_DATE, K_DBCLOB, K_DEC, K_F32, K_F64, K_GRAPHIC, K_I16,
                                   K_I32, K_I64, K_TIME, K_TS, K_TSZ, K_VARBIN, K_VARCHAR,
                                   K_VARGRAPHIC, K_XML, LEN_LRSN, LEN_NAME, LEN_OWNER,
                                   OFF_CHANGE_TYPE, OFF_COMMIT_TS, OFF_COMMITLRSN, OFF_LENGTH,
                                   OFF_LOGLRSN, OFF_NAME, OFF_NAMELEN, OFF_OWNER, OFF_OWNERLEN,
                                   OFF_SEGLEN, OFF_SEGNUM, OFF_TIMESTAMP, OFF_TOTALSEGS, OFF_UORID)
from ..formats.lldf import FRAMINGS, HEADER, IMAGES, OPS, SOURCE, header_what
from ._values import (DATE, EPOCH_ORDINAL, TIME, US_PER_DAY, US_PER_SEC, TextTimes, clock_us,
                      date_days)

OWNER_MAX, NAME_MAX = LEN_OWNER, LEN_NAME   # TABLEOWNER / TABLENAME widths in the header
LRSN_WIDTH = LEN_LRSN
CONTROL_OPS = ("ddl", "message")    # CO, E?, CM, SC: headers() only
HEAD_NAMES = [name for name, _ in envelope.HEAD]
LENGTH_U16 = (K_VARCHAR, K_VARGRAPHIC, K_VARBIN)    # u16 length + bytes


def u16(data, pos: int) -> int:
    return struct.unpack_from(">H", data, pos)[0]


def u32(data, pos: int) -> int:
    return struct.unpack_from(">I", data, pos)[0]


# -- problems -----------------------------------------------------------------------------

class Problem:
    """One error of a record, before it becomes a DecodeError: where (byte offset in the
    message), which code, and describe()'s field, numbers, bytes and text."""
    __slots__ = ("pos", "code", "field", "a", "b", "raw", "what")

    def __init__(self, pos, code, field, a=0, b=0, raw=b"", what=""):
        self.pos, self.code, self.field = pos, code, field
        self.a, self.b, self.raw, self.what = a, b, bytes(raw), what

    def error(self, fmt, message: int) -> DecodeError:
        return fmt.error(self.code, self.field, self.a, self.b, self.raw, self.what, message,
                         self.pos)


def first_problem(problems):
    """The row's error: the problem at the lowest byte offset (the first found on a tie)."""
    if not problems:
        return None
    return min(enumerate(problems), key=lambda ip: (ip[1].pos, ip[0]))[1]


# -- stage 1: framing ---------------------------------------------------------------------

class Physical:
    """One physical record that framing could cut: its bytes are data[p:end], its header
    starts at h (p, or p + 4 behind an RDW), its DATA segment is data[h + length:end]."""
    __slots__ = ("p", "h", "end", "length", "seglen")

    def __init__(self, p, h, end, length, seglen):
        self.p, self.h, self.end, self.length, self.seglen = p, h, end, length, seglen

    @property
    def data_start(self) -> int:
        return self.h + self.length

    def totalsegs(self, data) -> int:
        return u16(data, self.h + OFF_TOTALSEGS)

    def segnum(self, data) -> int:
        return u16(data, self.h + OFF_SEGNUM)

    def loglrsn(self, data) -> bytes:
        return bytes(data[self.h + OFF_LOGLRSN:self.h + OFF_LOGLRSN + LRSN_WIDTH])

    def continues_segmented(self, data) -> bool:
        """A segment after the first: a cut before it would separate it from segment 1."""
        return self.totalsegs(data) > 1 and self.segnum(data) > 1


class Broken:
    """Bytes framing could not cut into records: one corrupt record (data[start:end])."""
    __slots__ = ("start", "end", "problem")

    def __init__(self, start, end, problem):
        self.start, self.end, self.problem = start, end, problem


class Framer:
    """Cut one message into Physical records and Broken spans (docs/lldf.md, "Framing").

    Every check is made against the bytes that remain. A failure that leaves the framing lost
    makes the rest of the message (or of the vb block) one Broken span; a failure inside an
    RDW spoils that record alone, since the RDW still says where the next one starts.
    """

    def __init__(self, framing: str):
        self.framing = framing

    def records(self, data):
        n = len(data)
        if self.framing == "raw":
            yield from self.raw(data, n)
        elif self.framing == "rdw":
            yield from self.rdw(data, 0, n)
        else:
            yield from self.vb(data, n)

    # raw: LENGTH + SEGLEN bytes per record, back to back
    def raw(self, data, n):
        p = 0
        while p < n:
            left = n - p
            if left < 2:
                yield Broken(p, n, Problem(p, E_RAW_REST, "LENGTH", left))
                return
            length = u16(data, p + OFF_LENGTH)
            if length < HEADER_MIN:
                yield Broken(p, n, Problem(p, E_HDR_LENGTH, "LENGTH", length))
                return
            if length > left:
                yield Broken(p, n, Problem(p, E_HDR_CUT, "LENGTH", length, left))
                return
            seglen = u16(data, p + OFF_SEGLEN)
            if length + seglen > left:
                yield Broken(p, n, Problem(p + OFF_SEGLEN, E_REC_CUT, "SEGLEN",
                                           length + seglen, left))
                return
            yield Physical(p, p, p + length + seglen, length, seglen)
            p += length + seglen

    # rdw: records behind RDWs, from `start` to `end` (a whole message)
    def rdw(self, data, start, end):
        p = start
        while p < end:
            length, problem = descriptor(data, p, end, "RDW", extended=False, overrun=E_DW_CUT)
            if problem is not None:
                yield Broken(p, end, problem)
                return
            yield rdw_record(data, p, length)
            p += length

    # vb: blocks behind BDWs, each holding RDW records that fill it exactly
    def vb(self, data, n):
        p = 0
        while p < n:
            blen, problem = descriptor(data, p, n, "BDW", extended=True, overrun=E_DW_CUT)
            if problem is not None:
                yield Broken(p, n, problem)
                return
            block_end = p + blen
            q = p + 4
            while q < block_end:
                length, problem = descriptor(data, q, block_end, "RDW", extended=False,
                                             overrun=E_BLOCK_FILL)
                if problem is not None:
                    yield Broken(q, block_end, problem)     # the rest of the block
                    break
                yield rdw_record(data, q, length)
                q += length
            p = block_end


def descriptor(data, p, end, field, extended, overrun):
    """(length, None) of the descriptor word at p, or (0, Problem): 4 bytes, a big-endian u16
    length of at least 4 then two zero bytes — or, for a BDW (`extended`), with its high bit
    set, a 31-bit length — that fits in the bytes left before `end`."""
    left = end - p
    if left < 4:
        return 0, Problem(p, E_DW_SHORT, field, 0, left)
    word = bytes(data[p:p + 4])
    is_extended = extended and word[0] & 0x80
    length = u32(word, 0) & 0x7FFFFFFF if is_extended else u16(word, 0)
    if length < 4:
        return 0, Problem(p, E_DW_SHORT, field, length, left)
    if not is_extended and word[2:4] != b"\0\0":
        return 0, Problem(p, E_DW_RESERVED, field, raw=word[2:4])
    if length > left:
        return 0, Problem(p, overrun, field, length, left)
    return length, None


def rdw_record(data, p, length):
    """The record inside an RDW at p of `length` bytes (RDW included): a Physical, or a
    Broken record when its header does not agree with the RDW."""
    h = p + 4
    body = length - 4
    hlen = u16(data, h) if body >= 2 else 0
    if hlen < HEADER_MIN:
        return Broken(p, p + length, Problem(h, E_HDR_LENGTH, "LENGTH", hlen))
    if hlen > body:
        return Broken(p, p + length, Problem(h, E_HDR_CUT, "LENGTH", hlen, body))
    seglen = u16(data, h + OFF_SEGLEN)
    if hlen + seglen != body:
        return Broken(p, p + length, Problem(h + OFF_SEGLEN, E_SEGLEN, "SEGLEN", hlen,
                                             seglen, what=str(body)))
    return Physical(p, h, p + length, hlen, seglen)


# -- stage 2: segments --------------------------------------------------------------------

class Logical:
    """One logical record: one or more consecutive physical records (its segments). It
    reports its first segment's header; its DATA is the segments' data, concatenated."""

    def __init__(self, data, segments, problem=None):
        self.segments = segments
        self.problem = problem      # E_SEG_MISSING / E_SEG_ALONE, or None
        self.first = segments[0]
        self.start = self.first.p
        self.end = segments[-1].end
        self.header = bytes(data[self.first.h:self.first.h + HEADER_MIN])
        self.h = self.first.h
        self.length = self.first.length
        self.data = b"".join(bytes(data[s.data_start:s.end]) for s in segments)

    def where(self, d: int) -> int:
        """The message offset of byte d of the (reassembled) DATA: in the segment that holds
        it. Past the last byte, the end of the last segment's data; with no DATA at all, the
        first segment's data start (h + LENGTH)."""
        if not self.data:
            return self.first.data_start
        at = 0
        for s in self.segments:
            if at <= d < at + s.seglen:
                return s.data_start + (d - at)
            at += s.seglen
        last = self.segments[-1]
        return last.end + (d - at)


def assemble(data, items):
    """Logical records (and the Broken spans between them) of one message's framing output
    (docs/lldf.md, "Segments")."""
    segments = []                   # the open segmented record: its segments so far

    def missing():
        first = segments[0]
        return Logical(data, list(segments), Problem(first.h + OFF_SEGNUM, E_SEG_MISSING,
                                                     "SEGNUM", len(segments) + 1,
                                                     first.totalsegs(data)))

    for item in items:
        if segments:
            first = segments[0]
            total = first.totalsegs(data)
            if (isinstance(item, Physical) and item.totalsegs(data) == total
                    and item.segnum(data) == len(segments) + 1
                    and item.loglrsn(data) == first.loglrsn(data)):
                segments.append(item)
                if len(segments) == total:
                    yield Logical(data, segments)
                    segments = []
                continue
            yield missing()         # the next record starts afresh
            segments = []
        if isinstance(item, Broken):
            yield item
            continue
        total, num = item.totalsegs(data), item.segnum(data)
        if total <= 1:
            yield Logical(data, [item])
        elif num == 1:
            segments = [item]
        else:
            yield Logical(data, [item], Problem(item.h + OFF_SEGNUM, E_SEG_ALONE, "SEGNUM",
                                                num, total))
    if segments:
        yield missing()


# -- stage 3a: the header -----------------------------------------------------------------

class Header:
    """What a logical record's header says, decoded (docs/lldf.md, "Header")."""

    def __init__(self):
        self.owner = ""             # TABLEOWNER as text, cut and trimmed
        self.name = ""              # TABLENAME
        self.op = None              # u, c, d, t, ddl, message, or None (unknown CHANGE TYPE)
        self.known = False          # the CHANGE TYPE is one of the known ones
        self.fields = {}            # envelope fields from the header (op … change_pos)
        self.source = {}            # the `source` struct
        self.problems = []


class HeaderReader:
    """Decode the fixed 288-byte header at the seed's offsets."""

    def __init__(self, fmt):
        self.fmt = fmt
        self.encoding = fmt.encoding
        self.space = fmt.space
        self.times = TextTimes(fmt.encoding, fmt.options["source_tz"])

    def read(self, rec: Logical) -> Header:
        hdr, h = rec.header, rec.h
        out = Header()
        # names: cut to their lengths, lenient text (they only name things)
        owner_len, name_len = u16(hdr, OFF_OWNERLEN), u16(hdr, OFF_NAMELEN)
        owner = hdr[OFF_OWNER:OFF_OWNER + min(owner_len, OWNER_MAX)]
        name = hdr[OFF_NAME:OFF_NAME + min(name_len, NAME_MAX)]
        out.owner = self.fmt.text(self.trim(owner))
        out.name = self.fmt.text(self.trim(name))
        # source: every field of HEADER
        for field, vendor, off, width, kind in HEADER:
            ok, value = self.field(kind, hdr[off:off + width])
            if not ok:
                out.problems.append(Problem(h + off, E_HEADER_VALUE, vendor,
                                            raw=hdr[off:off + width],
                                            what=header_what(kind, self.encoding)))
            out.source[field] = value
        out.source["owner_truncated"] = owner_len > OWNER_MAX
        out.source["name_truncated"] = name_len > NAME_MAX
        # the envelope's own fields
        f = out.fields
        self.change_type(hdr, h, out)
        f["txid"] = hdr[OFF_UORID:OFF_UORID + 10].hex().upper()
        for target, vendor, off in (("commit_ts", "UORCOMMITTIMESTAMP", OFF_COMMIT_TS),
                                    ("change_ts", "TIMESTAMP", OFF_TIMESTAMP)):
            ok, value = self.timestamp(hdr[off:off + 17])
            if not ok:
                out.problems.append(Problem(h + off, E_HEADER_VALUE, vendor,
                                            raw=hdr[off:off + 17],
                                            what=header_what(H_TS, self.encoding)))
            f[target] = value
        f["commit_pos"] = hdr[OFF_COMMITLRSN:OFF_COMMITLRSN + LRSN_WIDTH]
        f["change_pos"] = hdr[OFF_LOGLRSN:OFF_LOGLRSN + LRSN_WIDTH]
        return out

    def change_type(self, hdr, h, out: Header):
        """CHANGE TYPE → op and source_op: `E` + any byte is a message; an unknown code is an
        error that leaves op null (source_op the characters, null if not text)."""
        raw = hdr[OFF_CHANGE_TYPE:OFF_CHANGE_TYPE + 2]
        text = self.text(raw)
        out.fields["source_op"] = text
        if text is not None and text in OPS:
            out.op = OPS[text]
        elif self.text(raw[:1]) == "E":
            out.op = "message"
        else:
            out.problems.append(Problem(h + OFF_CHANGE_TYPE, E_CHANGE_TYPE, "CHANGE TYPE",
                                        raw=raw))
        out.known = out.op is not None
        out.fields["op"] = out.op

    # field kinds
    def field(self, kind, raw):
        """(ok, value) of one header field."""
        if kind == H_BIN1:
            return True, raw[0]
        if kind == H_BIN2:
            return True, u16(raw, 0)
        if kind == H_BIN4:
            return True, u32(raw, 0)
        if kind == H_BINX:
            return True, bytes(raw)
        if kind == H_CHAR:
            return self.char(raw)
        if kind == H_YN:
            return self.flag(raw)
        if kind == H_TS:
            return self.timestamp(raw)
        raise AssertionError(f"unknown header kind {kind}")

    def text(self, raw):
        """The bytes as text in `encoding`, None where a byte is not defined there."""
        try:
            return codepages.decode_bytes(raw, self.encoding)
        except (UnicodeError, ValueError):
            return None

    def trim(self, raw) -> bytes:
        """Without trailing blanks (the code page's space)."""
        raw = bytes(raw)
        end = len(raw)
        while end and raw[end - 1] == self.space:
            end -= 1
        return raw[:end]

    def char(self, raw):
        """CHAR: trailing blanks trimmed, all blanks null; an undefined byte an error."""
        text = self.text(raw)
        if text is None:
            return False, None
        trimmed = self.trim(raw)
        return True, (self.text(trimmed) if trimmed else None)

    def flag(self, raw):
        """Y/N: Y true, N false, blank null, anything else an error."""
        if raw[0] == self.space:
            return True, None
        text = self.text(raw)
        if text == "Y":
            return True, True
        if text == "N":
            return True, False
        return False, None

    def timestamp(self, raw):
        """BIN(17): 34 BCD digits YYYYMMDDHHMMSS + 15 fraction digits (to µs, truncated) + 5
        pad digits; all zero bytes null; read as a wall clock in `source_tz` → UTC µs."""
        if not any(raw):
            return True, None
        digits = []
        for b in raw:
            for nibble in (b >> 4, b & 0x0F):
                if nibble > 9:
                    return False, None
                digits.append(str(nibble))
        s = "".join(digits)
        year, month, day = int(s[0:4]), int(s[4:6]), int(s[6:8])
        hour, minute, second = int(s[8:10]), int(s[10:12]), int(s[12:14])
        micros = int(s[14:20])          # the first 6 of the 15 fraction digits
        if year == 0 or not 1 <= month <= 12 or hour > 23 or minute > 59 or second > 59:
            return False, None
        if not 1 <= day <= calendar.monthrange(year, month)[1]:
            return False, None
        days = dt.date(year, month, day).toordinal() - EPOCH_ORDINAL
        local = days * US_PER_DAY + ((hour * 60 + minute) * 60 + second) * US_PER_SEC + micros
        return True, self.times.to_utc(local)


# -- stage 3b: values and row images ------------------------------------------------------

class ValueReader:
    """One column value's bytes → its Python value (docs/lldf.md, "Data and row images").

    `value(kind, ctype, raw)` returns (ok, value). Floats are kept as their IEEE big-endian
    bytes (4 or 8), so that they compare by bits and reach Arrow bit for bit (NaN payloads
    included, which a trip through a Python float would change for float32)."""

    def __init__(self, fmt):
        self.encoding = fmt.encoding
        self.hfp = fmt.options["float_format"] == "hfp"
        self.times = TextTimes(fmt.encoding, fmt.options["source_tz"])

    def value(self, kind, ctype, raw):
        raw = bytes(raw)
        if kind == K_I16:
            return True, struct.unpack(">h", raw)[0]
        if kind == K_I32:
            return True, struct.unpack(">i", raw)[0]
        if kind == K_I64:
            return True, struct.unpack(">q", raw)[0]
        if kind == K_DEC:
            return self.packed(raw, ctype.precision, ctype.scale)
        if kind == K_F32:
            return self.hfp_real(raw) if self.hfp else (True, raw)
        if kind == K_F64:
            return self.hfp_double(raw) if self.hfp else (True, raw)
        if kind in (K_CHAR, K_VARCHAR, K_CLOB):
            return self.decoded(raw, self.encoding)
        if kind in (K_GRAPHIC, K_VARGRAPHIC, K_DBCLOB):
            return self.decoded(raw, "utf-16-be")
        if kind == K_XML:
            return self.decoded(raw, "utf-8")
        if kind in (K_BINARY, K_VARBIN, K_BLOB):
            return True, raw
        if kind == K_BOOL:
            return (True, raw[0] == 1) if raw[0] in (0, 1) else (False, None)
        if kind in (K_DATE, K_TIME, K_TS, K_TSZ):
            text = self.times.text(raw)
            if text is None:
                return False, None
            return self.clock_text(kind, text)
        raise AssertionError(f"unknown image kind {kind}")

    @staticmethod
    def decoded(raw, encoding):
        try:
            if encoding in ("utf-16-be", "utf-8"):
                return True, raw.decode(encoding)           # strict
            return True, codepages.decode_bytes(raw, encoding)
        except (UnicodeError, ValueError):
            return False, None

    @staticmethod
    def packed(raw, precision, scale):
        """Packed decimal: digit nibbles 0-9, a sign nibble A-F (D, B minus), the pad nibble
        0 when the precision is even; -0 is 0."""
        nibbles = []
        for b in raw:
            nibbles += [b >> 4, b & 0x0F]
        sign, digits = nibbles[-1], nibbles[:-1]
        if sign < 0xA or any(d > 9 for d in digits):
            return False, None
        if len(digits) > precision:             # even precision: one pad nibble
            if digits[0] != 0:
                return False, None
            digits = digits[1:]
        negative = sign in (0xB, 0xD) and any(digits)
        return True, decimal.Decimal((1 if negative else 0, tuple(digits), -scale))

    @staticmethod
    def hfp_parts(raw, fraction_bits):
        """(negative, the exact value as fraction × 2^exponent): HFP's 7-bit excess-64
        base-16 exponent and its fraction of `fraction_bits` bits."""
        first = raw[0]
        negative = bool(first & 0x80)
        exponent = first & 0x7F
        fraction = int.from_bytes(raw[1:], "big")
        return negative, fraction, 4 * (exponent - 64) - fraction_bits

    def hfp_real(self, raw):
        """HFP short → float32: exact in a double, then IEEE round-to-nearest to float32;
        beyond float32's range an error."""
        negative, fraction, exp2 = self.hfp_parts(raw, 24)
        x = math.ldexp(float(fraction), exp2)         # exact: 24 bits, exponent in range
        x = -x if negative else x
        try:
            return True, struct.pack(">f", x)
        except OverflowError:
            return False, None

    def hfp_double(self, raw):
        """HFP long → float64: the 56-bit fraction rounded once to 53 bits (ties to even),
        then scaled exactly."""
        negative, fraction, exp2 = self.hfp_parts(raw, 56)
        x = math.ldexp(float(fraction), exp2)
        return True, struct.pack(">d", -x if negative else x)

    def clock_text(self, kind, text):
        """DATE / TIME / TIMESTAMP [WITH TIME ZONE] text, read as ibm-delimited reads it."""
        if kind == K_DATE:
            days = date_days(DATE.fullmatch(text))
            if days is None:
                return False, None
            return True, dt.date.fromordinal(days + EPOCH_ORDINAL)
        if kind == K_TIME:
            m = TIME.fullmatch(text)
            clock = clock_us(m.group(1), m.group(2), m.group(3), m.group(4)) if m else None
            if clock is None or clock >= US_PER_DAY:     # 24.00.00 is not a TIME
                return False, None
            return True, clock
        value = self.times.timestamp(text, with_zone=kind == K_TSZ)
        return (value is not None), value


class Images:
    """The outcome of reading a record's DATA: the images (None where absent or failed),
    whether every image the op carries was read, and the problems found."""

    def __init__(self):
        self.before = None
        self.after = None
        self.read = False           # the images the op carries were all read
        self.problems = []


class ImageReader:
    """DATA → the row images of a catalog table (docs/lldf.md, "Data and row images")."""

    def __init__(self, fmt):
        self.fmt = fmt
        self.values = ValueReader(fmt)

    @staticmethod
    def check_data(rec: Logical, op) -> Problem | None:
        """The DATA checks of every record with a known change type (headers() too)."""
        data = rec.data
        if not data:
            if op in IMAGES:
                return Problem(rec.where(0), E_NO_DATA, "DATA")
            return None
        total = u16(data, 0) if len(data) >= 2 else 0
        if total != len(data):
            return Problem(rec.where(0), E_DATA_LEN, "DATA", total, len(data))
        return None

    def read(self, rec: Logical, op, table, before: bool = True) -> Images:
        """The images of a u / c / d record whose DATA passed check_data; `before` False:
        the before image's values are not read (SPEC §1), only where its columns lie."""
        out = Images()
        data = rec.data
        wants = IMAGES[op]
        spans = {}
        d = 2
        # the structure first: each image's length must fit, then DATA must be used up
        for name, wanted in zip(("before", "after"), wants):
            if not wanted:
                continue
            left = len(data) - d
            if left < 2:
                out.problems.append(Problem(rec.where(d), E_IMAGE_CUT, name, 2, left))
                return out
            ilen = u16(data, d)
            if 2 + ilen > left:
                out.problems.append(Problem(rec.where(d), E_IMAGE_CUT, name, 2 + ilen, left))
                return out
            spans[name] = (d, ilen)
            d += 2 + ilen
        if d < len(data):
            out.problems.append(Problem(rec.where(d), E_DATA_REST, "DATA", len(data) - d))
        # then the values of each image
        layout = self.fmt.layouts[table.name]
        read_all = True
        for name, (start, ilen) in spans.items():
            image, problems = self.image(rec, name, start, ilen, table, layout,
                                         before or name != "before")
            setattr(out, name, image)
            out.problems += problems
            read_all = read_all and image is not None
        out.read = read_all
        return out

    def image(self, rec, name, start, ilen, table, layout, values_too: bool = True):
        """(values by column name or None, problems) of one image: its u16 length at
        `start`, then its columns in catalog order. An image whose columns do not use
        exactly its length is null, and that error replaces its value errors. Without
        `values_too`, only where the columns lie: every value null, none checked."""
        data = rec.data
        pos = start + 2
        end = pos + ilen
        values = {}
        problems = []

        def short():
            return None, [Problem(rec.where(start), E_IMAGE_SHORT, name, ilen,
                                  pos - start - 2, what=table.name)]

        for col, (kind, width) in zip(table.columns, layout):
            first = pos
            null = False
            field = f"{name}.{col.name}"
            if col.nullable:
                if pos + 1 > end:
                    return short()
                flag = data[pos]
                if flag == 0xFF or not values_too:
                    null = True
                elif flag != 0x00:
                    problems.append(Problem(rec.where(pos), E_NULL_BYTE, field, flag))
                    null = True
                pos += 1
            if width:
                if pos + width > end:
                    return short()
                raw = data[pos:pos + width]
                pos += width
            else:
                size = 2 if kind in LENGTH_U16 else 4
                if pos + size > end:
                    return short()
                n = int.from_bytes(data[pos:pos + size], "big")
                pos += size
                if pos + n > end:
                    return short()
                raw = data[pos:pos + n]
                pos += n
            if null or not values_too:
                values[col.name] = None
                continue
            ok, value = self.values.value(kind, col.type, raw)
            if not ok:
                problems.append(Problem(rec.where(first), E_VALUE, field, raw=raw,
                                        what=col.type.name))
            values[col.name] = value if ok else None
        if pos != end:
            return None, [Problem(rec.where(start), E_IMAGE_LONG, name, ilen, pos - start - 2,
                                  what=table.name)]
        return values, problems


def changed_flags(op, columns, before, after):
    """`changed`: c all true, d all false, u before ≠ after (null-safe; floats are held as
    their bytes, so they compare by bits)."""
    if op == "c":
        return {c.name: True for c in columns}
    if op == "d":
        return {c.name: False for c in columns}
    out = {}
    for c in columns:
        b, a = before[c.name], after[c.name]
        out[c.name] = (b is None) != (a is None) or (b is not None and b != a)
    return out


# -- outputs ------------------------------------------------------------------------------

def column_array(values, ctype) -> pa.Array:
    """One column of an image struct; floats from their IEEE big-endian bytes."""
    t = ctype.arrow_type
    if ctype.kind in (FLOAT32, FLOAT64):
        width = 4 if ctype.kind == FLOAT32 else 8
        raw = b"".join(v if v is not None else bytes(width) for v in values)
        be = np.frombuffer(raw, dtype=">u4" if width == 4 else ">u8")
        native = be.astype("<u4" if width == 4 else "<u8").view("<f4" if width == 4 else "<f8")
        return pa.array(native, type=t, mask=np.array([v is None for v in values], dtype=bool))
    return pa.array(values, type=t)


def image_array(images, columns, struct_type) -> pa.Array:
    """A struct column of row images (None: the image is null)."""
    if not columns:
        return pa.array([None if img is None else {} for img in images], type=struct_type)
    children = [column_array([None if img is None else img[c.name] for img in images], c.type)
                for c in columns]
    mask = pa.array([img is None for img in images], type=pa.bool_())
    return pa.StructArray.from_arrays(children, fields=list(struct_type), mask=mask)


class Output:
    """The rows of one output key, waiting to be flushed as a batch."""

    def __init__(self, key, columns, images, want):
        self.key = key
        self.columns = columns      # catalog Columns; [] for headers or without a table
        self.images = images
        self.want = want
        self.rows = []
        self.errors = []            # DecodeError or None, per row
        self.messages = []          # message index per row (for MESSAGE)

    def add(self, row, error, message):
        self.rows.append(row)
        self.errors.append(error)
        self.messages.append(message)

    def schema(self) -> pa.Schema:
        if not self.images:
            return envelope.headers_schema(SOURCE)
        return envelope.schema([(c.name, c.type.arrow_type) for c in self.columns], SOURCE)

    def batch(self) -> pa.RecordBatch:
        schema = self.schema()
        rows = self.rows
        arrays = []
        for f in schema:
            if f.name in ("before", "after"):
                arrays.append(image_array([r[f.name] for r in rows], self.columns, f.type))
            else:
                arrays.append(pa.array([r[f.name] for r in rows], type=f.type))
        return pa.RecordBatch.from_arrays(arrays, schema=schema)

    def flush(self, mode, stats) -> pa.RecordBatch:
        batch = with_messages(self.batch(), self.want, self.messages)
        first = next((e for e in self.errors if e is not None), None)
        self.rows, self.errors, self.messages = [], [], []
        return apply_mode(batch, mode, stats, first)


# -- stage 4: one part --------------------------------------------------------------------

class Call:
    """What lasts across the parts of one call: the logical record ordinal (`seq`)."""

    def __init__(self):
        self.seq = 0

    def next_seq(self) -> int:
        seq = self.seq
        self.seq += 1
        return seq


class PartDecoder:
    """Decode one Part: frame every message, assemble segments, route, convert, batch."""

    def __init__(self, fmt, part, want, images, batch_rows, mode, stats, call):
        self.fmt, self.part, self.want, self.images = fmt, part, want, images
        self.batch_rows, self.mode, self.stats, self.call = batch_rows, mode, stats, call
        # each message's framing: the option's, or with "auto" its own, detected
        self.framers = [Framer(f) for f in FRAMINGS]
        self.framings = fmt.framings(part)
        self.headers = HeaderReader(fmt)
        self.reader = ImageReader(fmt)
        self.outputs = {}           # output key → Output, in creation order

    def output(self, key) -> Output:
        o = self.outputs.get(key)
        if o is None:
            table = None
            if self.images and key is not None and self.fmt.catalog is not None:
                table = self.fmt.catalog.get(key)
            columns = list(table.columns) if table is not None else []
            o = self.outputs[key] = Output(key, columns, self.images, self.want)
        return o

    def run(self):
        part, stats = self.part, self.stats
        for i in range(part.count):
            if part.valid is not None and not part.valid[i]:
                stats["tombstones"] += 1        # a null message: a Kafka tombstone
                continue
            data = part.message(i)
            framer = self.framers[self.framings[i]]
            for rec in assemble(data, framer.records(data)):
                seq = self.call.next_seq()
                stats["records"] += 1
                if isinstance(rec, Broken):
                    routed = self.corrupt(rec, data, seq, i)
                else:
                    routed = self.logical(rec, data, seq, i)
                if routed is None:
                    continue
                key, row, problem = routed
                err = problem.error(self.fmt, self.message_index(i)) if problem else None
                row["_error"] = str(err) if err is not None else None
                if err is not None and self.mode == "FAILFAST":
                    raise err       # the first error, in input order, of a wanted record
                o = self.output(key)
                o.add(row, err, part.base + i)
                if len(o.rows) >= self.batch_rows:
                    yield key, o.flush(self.mode, stats)
        for o in self.outputs.values():
            if o.rows:
                yield o.key, o.flush(self.mode, stats)

    def message_index(self, i) -> int:
        return 0 if self.want.messages else self.part.base + i

    def empty_row(self, seq) -> dict:
        row = dict.fromkeys(HEAD_NAMES)
        row["seq"] = seq
        row.update(before=None, after=None, changed=None, present=None, source=None,
                   _corrupt_record=None)
        return row

    def corrupt(self, rec: Broken, data, seq, i):
        """A span framing could not cut: only seq, _error and _corrupt_record."""
        want = self.want
        key = want.corrupt_key
        if key is None and want.table is not ALL:
            return None
        row = self.empty_row(seq)
        row["_corrupt_record"] = bytes(data[rec.start:rec.end])
        return key, row, rec.problem

    def logical(self, rec: Logical, data, seq, i):
        """A logical record: (key, row, its first problem), or None when skipped."""
        want, stats = self.want, self.stats
        head = self.headers.read(rec)
        key, table = want.resolve(full_name(head.owner, head.name))
        if table is None:
            stats["unknown_tables"] += 1
        if key is None:
            return None             # a table this call does not want
        op = head.op
        if op in CONTROL_OPS:
            stats["control"] += 1
            if self.images:
                return None         # control events: headers() only
        if self.images and table is None:
            return None             # no column definitions, no images
        row = self.empty_row(seq)
        row.update(head.fields)
        if table is not None:
            row["schema"], row["table"] = table.schema, table.table
        else:
            row["schema"], row["table"] = head.owner or None, head.name
        row["source"] = head.source
        problems = list(head.problems)
        if rec.problem is not None:     # a segment error: header kept, images null
            problems.append(rec.problem)
            row["_corrupt_record"] = bytes(data[rec.start:rec.end])
        elif head.known:
            bad_data = ImageReader.check_data(rec, op)
            if bad_data is not None:
                problems.append(bad_data)
            elif self.images and op in IMAGES:
                imgs = self.reader.read(rec, op, table, self.want.before)
                problems += imgs.problems
                row["before"], row["after"] = imgs.before, imgs.after
                if imgs.read:
                    row["changed"] = changed_flags(op, table.columns, imgs.before, imgs.after)
                    row["present"] = {c.name: True for c in table.columns}
        return key, row, first_problem(problems)


def reference_batches(fmt, parts, want, images, batch_rows, mode, stats):
    """Yield ``(output key, RecordBatch)`` for every Part of the source, as the native path
    does (see the module docstring)."""
    if images and want.requested is not None:
        if fmt.catalog is None or fmt.catalog.get(want.requested) is None:
            raise ValueError(f"table {want.requested!r} is not in the catalog: lldf row "
                             "images need its column definitions")
    call = Call()
    for part in parts:
        yield from PartDecoder(fmt, part, want, images, batch_rows, mode, stats, call).run()


# -- splitting ----------------------------------------------------------------------------

def record_starts(data, framing: str, step: int) -> list:
    """Offsets where a stream can be cut into inputs of their own, about `step` bytes apart,
    0 and len(data) included (docs/lldf.md, "Splitting").

    The walk follows the framing: every physical record start for `raw` and `rdw`, block
    starts for `vb` (a block qualifies when its first record does not continue a segmented
    record; an empty block does not). A cut goes at the first qualifying start at or past each
    multiple of `step`. The walk stops at the first framing error: its rest is one input."""
    n = len(data)
    step = max(1, int(step))
    cuts = [0]
    target = step
    for start in cut_candidates(data, framing):
        if start >= target:
            cuts.append(start)
            target = (start // step + 1) * step
    if len(cuts) == 1 or cuts[-1] != n:
        cuts.append(n)
    return cuts


def cut_candidates(data, framing: str):
    """Record (vb: block) starts that do not continue a segmented record, in order, up to
    the first framing error."""
    n = len(data)
    if framing in ("raw", "rdw"):
        for item in Framer(framing).records(data):
            if isinstance(item, Broken):
                return
            if not item.continues_segmented(data):
                yield item.p
        return
    p = 0
    while p < n:
        blen, problem = descriptor(data, p, n, "BDW", extended=True, overrun=E_DW_CUT)
        if problem is not None:
            return
        block_end = p + blen
        q = p + 4
        first = None
        while q < block_end:
            length, problem = descriptor(data, q, block_end, "RDW", extended=False,
                                         overrun=E_BLOCK_FILL)
            if problem is not None:
                return
            item = rdw_record(data, q, length)
            if isinstance(item, Broken):
                return
            if first is None:
                first = item
            q += length
        if first is not None and not first.continues_segmented(data):
            yield p
        p = block_end
