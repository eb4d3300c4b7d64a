"""`lldf`: BMC AMI Log Master logical log data files, Data Change Records (SPEC §5.2).

Decisions SPEC leaves open are in docs/lldf.md. This module validates options, maps catalog
columns onto image layouts, names errors and detects the framing; its runner (_lldf_run.py)
drives the kernel (native/cdcfast/_lldf_frame.pyx, the framer, and _lldf.pyx, the converter)
chunk by chunk, with no per-record loop. The reference twin is cdcfast/reference/lldf.py.
"""
from __future__ import annotations

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from .. import _tz, codepages
from ..catalog import (BINARY, BOOL, DATE32, DECIMAL, FLOAT32, FLOAT64, INT16, INT32, INT64,
                       STRING, TIME64, TIMESTAMP, TIMESTAMP_TZ, Table)
from ..envelope import UTC_US
from ..errors import DecodeError, printable
from ._lldf_codes import (E_BLOCK_FILL, E_CHANGE_TYPE, E_DATA_LEN,  # noqa: F401
                          E_DATA_REST, E_DW_CUT, E_DW_RESERVED, E_DW_SHORT, E_HDR_CUT,
                          E_HDR_LENGTH, E_HEADER_VALUE, E_IMAGE_CUT, E_IMAGE_LONG,
                          E_IMAGE_SHORT, E_NO_DATA, E_NULL_BYTE, E_RAW_REST, E_REC_CUT,
                          E_SEG_ALONE, E_SEG_MISSING, E_SEGLEN, E_VALUE, FR_RAW, FR_RDW, FR_VB,
                          H_BIN1, H_BIN2, H_BIN4, H_BINX, H_CHAR, H_TS, H_YN, HEADER_MIN,
                          K_BINARY, K_BLOB, K_BOOL, K_CHAR, K_CLOB, K_DATE, K_DBCLOB, K_DEC,
                          K_F32, K_F64, K_GRAPHIC, K_I16, K_I32, K_I64, K_TIME, K_TS, K_TSZ,
                          K_VARBIN, K_VARCHAR, K_VARGRAPHIC, K_XML, LEN_CHANGE_TYPE, LEN_LRSN,
                          LEN_NAME, LEN_OWNER, LEN_TS, OFF_CHANGE_TYPE, OFF_COMMIT_TS,
                          OFF_COMMITLRSN, OFF_LENGTH, OFF_LOGLRSN, OFF_NAME, OFF_NAMELEN,
                          OFF_OWNER, OFF_OWNERLEN, OFF_SEGLEN, OFF_SEGNUM, OFF_TIMESTAMP,
                          OFF_TOTALSEGS, OFF_UORID)
from .base import Format, Want, resolve

# The numbers shared with the kernel (native/cdcfast/_lldf_frame.pyx, _lldf.pyx) -- HEADER_MIN,
# the header offsets OFF_* and widths LEN_*, the header kinds H_*, the image kinds K_*, the
# framing codes FR_*, the error codes E_* -- have their one spec in _lldf_codes.

# -- header fields: (source field or None, vendor name, offset, width, header kind) ----------
_ARROW_H = {H_BIN1: pa.int16(), H_BIN2: pa.int32(), H_BIN4: pa.int64(), H_BINX: pa.binary(),
            H_CHAR: pa.string(), H_YN: pa.bool_(), H_TS: UTC_US}

# The source struct's fields, in SPEC order (owner_truncated / name_truncated come last and
# are computed from TBOWNERLEN / TBNAMELEN).
HEADER = (
    ("systemid", "SYSTEMID", 2, 4, H_CHAR),
    ("dbid", "DBID", 6, 2, H_BIN2),
    ("psid", "PSID", 8, 2, H_BIN2),
    ("obid", "TBOBID", 10, 2, H_BIN2),
    ("dbname", "DBNAME", 16, 8, H_CHAR),
    ("tsname", "TSNAME", 24, 8, H_CHAR),
    ("partnum", "PARTNUM", 58, 2, H_BIN2),
    ("logrba", "LOGRBA", 87, 10, H_BINX),
    ("memberid", "MEMBERID", 97, 2, H_BIN2),
    ("rid_page", "RID", 99, 4, H_BIN4),
    ("rid_id", "RID", 103, 1, H_BIN1),
    ("sqltype", "SQLTYPE", 106, 1, H_CHAR),
    ("logrecdisp", "LOGRECDISP", 107, 1, H_CHAR),
    ("sqlsrctype", "SQLSRCTYPE", 108, 1, H_CHAR),
    ("logbytes", "LOGBYTES", 109, 4, H_BIN4),
    ("logdelta", "LOGDELTA", 113, 2, H_BIN2),
    ("anomaly_rowid", "ANOMALYROWID", 115, 1, H_BIN1),
    ("anomaly_type", "ANOMALYTYPE", 116, 1, H_CHAR),
    ("anomaly_rba", "ANOMALYRBA", 117, 10, H_BINX),
    ("uor_ts", "UORTIMESTAMP", 127, 17, H_TS),
    ("uordisp", "UORDISP", 161, 1, H_CHAR),
    ("uoridlrsn", "UORIDLRSN", 162, 10, H_BINX),
    ("uorid", "UORID", 172, 10, H_BINX),
    ("totalsegs", "TOTALSEGS", 184, 2, H_BIN2),
    ("uorcommitpoint", "UORCOMMITPOINT", 202, 10, H_BINX),
    ("connection_type", "CONNECTIONTYPE", 212, 2, H_CHAR),
    ("connect_id", "CONNECTID", 214, 8, H_CHAR),
    ("correlation_id", "CORRELATIONID", 222, 12, H_CHAR),
    ("authid", "AUTHID", 234, 8, H_CHAR),
    ("plan", "PLAN", 242, 8, H_CHAR),
    ("luw_network_id", "LUWNETWORKID", 250, 8, H_CHAR),
    ("luw_name", "LUWNAME", 258, 8, H_CHAR),
    ("luw_instance", "LUWINSTANCENO", 266, 6, H_BINX),
    ("luw_seqno", "LUWSEQUENCENO", 272, 2, H_BIN2),
    ("incomplete_trans", "INCOMPLETETRANS", 274, 1, H_YN),
    ("incomplete_dep", "INCOMPLETEDEP", 275, 1, H_YN),
    ("uor_has_comp", "UORHASCOMP", 276, 1, H_YN),
    ("sqlrirba", "SQLRIRBA", 277, 10, H_BINX),
    ("pagenum_fmt", "PAGENUMFMT", 287, 1, H_CHAR),
)
# (the fields the envelope takes, not in `source`: _lldf_codes' OFF_*)

SOURCE = pa.struct([pa.field(name, _ARROW_H[kind]) for name, _, _, _, kind in HEADER]
                   + [pa.field("owner_truncated", pa.bool_()),
                      pa.field("name_truncated", pa.bool_())])

# CHANGE TYPE (as ASCII text) -> op; "E" + any byte is "message"
OPS = {"UB": "u", "I ": "c", "IL": "c", "D ": "d", "DM": "t", "DT": "t", "DR": "t",
       "CO": "ddl", "CM": "message", "SC": "message"}
# which images a change type carries: (before, after)
IMAGES = {"u": (True, True), "c": (False, True), "d": (True, False)}

# -- image layouts: one per catalog column, chosen when the Decoder is made -----------------
# (the image kinds: _lldf_codes' K_*)


def layout(column) -> tuple[int, int]:
    """(image kind, fixed width in bytes or 0 for length-prefixed) of a catalog column;
    ValueError for a type LLDF images cannot hold."""
    t = column.type
    base, kind = t.base, t.kind
    if kind == INT16:
        return K_I16, 2
    if kind == INT32:
        return K_I32, 4
    if kind == INT64:
        return K_I64, 8
    if kind == DECIMAL:
        return K_DEC, (t.precision + 2) // 2
    if kind == FLOAT32:
        return K_F32, 4
    if kind == FLOAT64:
        return K_F64, 8
    if kind == BOOL:
        return K_BOOL, 1
    if kind == DATE32:
        return K_DATE, 10
    if kind == TIME64:
        return K_TIME, 8
    if kind == TIMESTAMP:
        return K_TS, 19 if t.precision == 0 else 20 + t.precision
    if kind == TIMESTAMP_TZ:
        return K_TSZ, (19 if t.precision == 0 else 20 + t.precision) + 6
    if kind == STRING:
        if base in ("CHAR", "CHARACTER"):
            return K_CHAR, t.length or 1
        if base == "GRAPHIC":
            return K_GRAPHIC, 2 * (t.length or 1)
        if base in ("VARCHAR", "LONG VARCHAR", "CHARACTER VARYING"):
            return K_VARCHAR, 0
        if base in ("VARGRAPHIC", "LONG VARGRAPHIC"):
            return K_VARGRAPHIC, 0
        if base == "CLOB":
            return K_CLOB, 0
        if base == "DBCLOB":
            return K_DBCLOB, 0
        if base == "XML":
            return K_XML, 0
    if kind == BINARY:
        if base in ("BINARY", "CHAR", "CHARACTER"):
            return K_BINARY, t.length or 1
        if base in ("VARBINARY", "VARCHAR", "LONG VARCHAR", "CHARACTER VARYING", "ROWID"):
            return K_VARBIN, 0
        if base == "BLOB":
            return K_BLOB, 0
    raise ValueError(f"type {t.name} has no layout in LLDF row images")


def table_layout(table: Table) -> list[tuple[int, int]]:
    out = []
    for c in table.columns:
        try:
            out.append(layout(c))
        except ValueError as e:
            raise ValueError(f"table {table.name}, column {c.name}: {e}") from None
    return out


# -- errors: codes shared with the kernel (_lldf_codes' E_*); each is (field, reason) through
# describe() ------------------------------------------------------------------------------


def hex_bytes(raw: bytes, limit: int = 40) -> str:
    """X'…' of up to `limit` bytes, then … when there are more."""
    raw = bytes(raw)
    return f"X'{raw[:limit].hex().upper()}'" + ("…" if len(raw) > limit else "")


_HEADER_WHAT = {H_TS: "a BIN(17) timestamp", H_YN: "Y, N or blank"}


def describe(code: int, field: str, a: int, b: int, raw: bytes, what: str) -> str:
    """The reason text of an error (the same for the kernel and the reference). `field` is
    what the error names (DecodeError.field), `a`, `b` the code's numbers, `raw` the bytes
    shown, `what` the type or table text it needs."""
    if code == E_RAW_REST:
        return f"{a} bytes left, fewer than a {HEADER_MIN}-byte header"
    if code == E_HDR_LENGTH:
        return f"header length {a} is below {HEADER_MIN}"
    if code == E_HDR_CUT:
        return f"header of {a} bytes overruns the record ({b} bytes left)"
    if code == E_REC_CUT:
        return f"record of {a} bytes overruns the input ({b} bytes left)"
    if code == E_DW_SHORT:
        return f"{field} length {a} is below 4" if b >= 4 else \
            f"{field} needs 4 bytes, {b} left"
    if code == E_DW_RESERVED:
        return f"{field} bytes 2-3 are {hex_bytes(raw)}, not zero"
    if code == E_DW_CUT:
        return f"{field} length {a} overruns the input ({b} bytes left)"
    if code == E_SEGLEN:
        return f"header length {a} + SEGLEN {b} disagrees with the record ({what} bytes)"
    if code == E_BLOCK_FILL:
        return f"RDW length {a} overruns its block ({b} bytes left)"
    if code == E_SEG_MISSING:
        return f"segment {a} of {b} is missing"
    if code == E_SEG_ALONE:
        return f"segment {a} of {b} arrives without segment 1"
    if code == E_NO_DATA:
        return "no row image"
    if code == E_DATA_LEN:
        return f"total length {a} disagrees with the {b} data bytes"
    if code == E_IMAGE_CUT:
        return f"row image of {a} bytes overruns the DATA ({b} bytes left)"
    if code == E_DATA_REST:
        return f"{a} bytes follow the row images"
    if code == E_CHANGE_TYPE:
        return f"{hex_bytes(raw)} is not a known change type"
    if code == E_HEADER_VALUE:
        return f"{hex_bytes(raw)} is not {what}"
    if code == E_IMAGE_SHORT:
        return f"row image of {a} bytes does not match table {printable(what)} " \
               f"(its columns need more)"
    if code == E_IMAGE_LONG:
        return f"row image of {a} bytes does not match table {printable(what)} " \
               f"(its columns use {b})"
    if code == E_NULL_BYTE:
        return f"null byte X'{a:02X}' is not X'00' or X'FF'"
    if code == E_VALUE:
        return f"{hex_bytes(raw)} is not {what}"
    raise AssertionError(f"unknown error code {code}")


def header_what(kind: int, encoding: str) -> str:
    return _HEADER_WHAT.get(kind, f"{encoding} text")


# -- framing: the option's value, or with "auto" each message's own (docs/lldf.md) ---------
FRAMING_CODES = {"raw": FR_RAW, "rdw": FR_RDW, "vb": FR_VB}     # the option's -> its code
FRAMINGS = tuple(sorted(FRAMING_CODES, key=FRAMING_CODES.get))  # the names, by code
DETECT_RECORDS = 16                 # records (and vb blocks) a message's framing is judged on


def message_framings(framing: str, data, offsets) -> np.ndarray:
    """The framing code (uint8) of each message data[offsets[i]:offsets[i + 1]]: the option's
    for all, or with "auto" each message's detected one (`detect_framing`)."""
    if framing == "auto":
        return detect_framing(data, offsets)
    return np.full(len(offsets) - 1, FRAMING_CODES[framing], dtype=np.uint8)


def framing_of(data) -> str:
    """The detected framing ("raw", "rdw" or "vb") of one stream (bytes-like)."""
    return FRAMINGS[int(detect_framing(data, [0, len(data)])[0])]


def detect_framing(data, offsets) -> np.ndarray:
    """framing="auto": the framing code of each message data[offsets[i]:offsets[i + 1]], from
    its first bytes (docs/lldf.md, "Framing detection"). `vb` when its first records chain as
    RDW records in BDW blocks that they fill exactly, `rdw` when they chain as RDW records
    (`_chains`), `raw` otherwise: when neither holds (random bytes, a chain that breaks within
    the records looked at, an empty message) and when both would. Both decoders, and the
    splitting of big files, take their framing from here. The walk is vectorized over the
    messages (no Python step per message or record) and reads a few bytes of each of at most
    DETECT_RECORDS records (and blocks) a message."""
    offsets = np.asarray(offsets, dtype=np.int64)
    starts, ends = offsets[:-1], offsets[1:]
    out = np.full(len(starts), FR_RAW, dtype=np.uint8)
    size = len(data)
    if size < 4 + HEADER_MIN or not len(starts):     # not even one record
        return out
    # the big-endian u32 and u16 starting at each byte (overlapping views, nothing copied)
    be32 = np.ndarray((size - 3,), dtype=">u4", buffer=data, strides=(1,))
    be16 = np.ndarray((size - 1,), dtype=">u2", buffer=data, strides=(1,))
    rdw = _chains(be32, be16, starts, ends, blocks=False)
    vb = _chains(be32, be16, starts, ends, blocks=True)
    out[rdw & ~vb] = FR_RDW
    out[vb & ~rdw] = FR_VB
    return out


def _bdws(be32, p, limit):
    """(length, valid) of the BDWs at positions p (docs/lldf.md, "Framing"): a u16 length
    then two zero bytes, or with the high bit set a 31-bit length; at least 4 and within
    `limit`."""
    w = be32[np.minimum(p, len(be32) - 1)].astype(np.int64)   # (p past it: n > limit - p)
    ext = w >= 0x80000000
    n = np.where(ext, w & 0x7FFFFFFF, w >> 16)
    return n, (ext | ((w & 0xFFFF) == 0)) & (n >= 4) & (n <= limit - p)


def _rdws(be32, be16, p, limit):
    """(length, valid) of the RDWs at positions p: a u16 length then two zero bytes, within
    `limit`, holding an LLDF record — header LENGTH ≥ 288 and LENGTH + SEGLEN = the RDW's
    length − 4. Nothing behind an RDW is read before its length is known to fit."""
    w = be32[np.minimum(p, len(be32) - 1)].astype(np.int64)
    n = w >> 16
    good = ((w & 0xFFFF) == 0) & (n >= 4 + HEADER_MIN) & (n <= limit - p)
    h = np.where(good, p + 4, 0)            # the header, all 288 bytes of it in the record
    length = be16[h + OFF_LENGTH].astype(np.int64)
    return n, good & (length >= HEADER_MIN) & (length + be16[h + OFF_SEGLEN] == n - 4)


def _chains(be32, be16, starts, ends, blocks: bool) -> np.ndarray:
    """Per message: whether its first DETECT_RECORDS records, or all of them when it has
    fewer (then at least one), are valid RDWs (`_rdws`) back to back from its start, ending
    at its last byte — with `blocks`, inside valid BDW blocks (`_bdws`; at most
    DETECT_RECORDS of them looked at) that the RDWs fill exactly."""
    n = len(starts)
    ok = np.zeros(n, dtype=bool)
    stop = np.zeros(n, dtype=bool)
    pos = starts.copy()
    bend = starts.copy() if blocks else ends      # where the current block ends
    records = np.zeros(n, dtype=np.int64)
    nblocks = np.zeros(n, dtype=np.int64)
    live = np.flatnonzero(starts < ends)
    while live.size:
        # a round reads one descriptor word of each message still walking: a BDW where its
        # block ends (only with `blocks`; rdw's one block is the message), else an RDW
        if blocks:
            at_block = pos[live] == bend[live]
            m, r = live[at_block], live[~at_block]
            if m.size:
                p = pos[m]
                length, good = _bdws(be32, p, ends[m])
                bend[m] = p + length
                pos[m] = p = p + 4
                k = nblocks[m] = nblocks[m] + 1
                fin = good & ((p == ends[m]) | (k > DETECT_RECORDS))
                ok[m[fin]] = records[m[fin]] > 0
                stop[m[~good | fin]] = True
        else:
            r = live
        if r.size:
            p = pos[r]
            length, good = _rdws(be32, be16, p, bend[r])
            pos[r] = p = p + length
            k = records[r] = records[r] + 1
            fin = good & ((p == ends[r]) | (k >= DETECT_RECORDS))
            ok[r[fin]] = True
            stop[r[~good | fin]] = True
        live = live[~stop[live]]
    return ok


class Lldf(Format):
    name = "lldf"
    RUNNER = "cdcfast.formats._lldf_run:native_batches"
    REFERENCE = "cdcfast.reference.lldf:reference_batches"
    SUMMARY = "BMC AMI Log Master for Db2 logical log data files, LLDF (EBCDIC, binary)"
    HELP = {
        "framing": "auto (found from the first records), raw (records back to back), rdw "
                   "(each behind a record descriptor word) or vb (blocks of RDW records)",
        "encoding": "the code page of header and character column text: cp037, cp1047, "
                    "cp500, cp1140, cp273, latin-1, ascii",
        "float_format": "hfp (IBM hexadecimal floating point, as Db2 for z/OS stores FLOAT) "
                        "or ieee",
        "order": "input, or commit (sorted by commit LRSN, then log LRSN, within a batch)",
        "source_tz": "the time zone of the zone-less header times (an IANA name)",
    }
    DEFAULTS = {"framing": "auto", "encoding": "cp037", "float_format": "hfp",
                "order": "input", "source_tz": "UTC"}
    TEXT = False                # EBCDIC and binary fields: a report shows its bytes in hex
    source_type = SOURCE
    TITLE = "BMC Log Master LLDF (EBCDIC, binary)"
    EXTENSION = "lldf"
    NATIVE = ("_lldf_frame", "_lldf", "_arrow")
    ENCODER = "lldf"
    ENCODINGS = ("cp037", "cp1047", "cp500", "cp1140", "cp273", "latin-1", "ascii")

    def __init__(self, catalog, **options):
        super().__init__(catalog, **options)
        o = self.options
        for name, allowed in (("framing", ("auto", *FRAMINGS)),
                              ("float_format", ("hfp", "ieee")),
                              ("order", ("input", "commit"))):
            o[name] = str(o[name]).lower()
            if o[name] not in allowed:
                raise ValueError(f"{name} must be one of {', '.join(allowed)}, "
                                 f"not {options[name]!r}")
        enc = codepages.canonical(o["encoding"])
        if enc not in self.ENCODINGS:
            raise ValueError(f"encoding {o['encoding']!r} is not a single-byte code page "
                             f"LLDF can use ({', '.join(self.ENCODINGS)})")
        self.encoding = o["encoding"] = enc
        _tz.check_zone(o["source_tz"])
        self.layouts = {t.name: table_layout(t) for t in (catalog or ())}
        self.u8, self.u8len = codepages.utf8_table(enc)
        self.asc = codepages.ascii_table(enc)
        self.space = codepages.encode_text(" ", enc)[0]
        self.cpchars = codepages.encode_text("0-.: T+Z", enc)    # for the date/time parsers

    # -- the envelope ----------------------------------------------------------------------
    def columns(self, table, ncols=0):
        if table is None:
            return []
        return [(c.name, c.type.arrow_type) for c in table.columns]

    def text(self, raw: bytes) -> str:
        """Names as text (lenient: they only name things)."""
        try:
            return codepages.decode_bytes(raw, self.encoding)
        except UnicodeError:
            return bytes(raw).decode("latin-1")

    def error(self, code, field, a, b, raw, what, message, offset) -> DecodeError:
        return DecodeError(describe(code, field, a, b, raw, what), message, offset, field)

    # -- order -----------------------------------------------------------------------------
    def order_batch(self, batch):
        """`order="commit"`: a stable sort by commit_pos, then change_pos (nulls last)."""
        if self.options["order"] != "commit" or batch.num_rows < 2:
            return batch
        idx = pc.sort_indices(batch, sort_keys=[("commit_pos", "ascending"),
                                                ("change_pos", "ascending")])   # nulls last
        return batch.take(idx)

    def finish_table(self, table: pa.Table) -> pa.Table:
        """The whole result of decode / decode_tables / headers, ordered as asked."""
        if self.options["order"] != "commit" or table.num_rows < 2:
            return table
        return self.order_batch(table.combine_chunks())

    # -- decoding --------------------------------------------------------------------------
    def batches(self, parts, want: Want, images: bool, batch_rows: int, mode: str,
                stats: dict, native: bool, threads: int = 1):
        for key, batch in super().batches(parts, want, images, batch_rows, mode, stats,
                                          native, threads):
            yield key, self.order_batch(batch)

    def streaming_threads(self, threads: int) -> int:
        # order="commit" sorts each streamed batch: which rows share a batch depends on
        # where the input is cut, so a stream of batches is decoded on one thread
        return 1 if self.options["order"] == "commit" else threads

    def framings(self, part) -> np.ndarray:
        """The framing code of each message of a Part (`message_framings`; a piece of a
        message keeps the framing found on the whole message)."""
        if part.whole is not None:
            return part.whole
        return message_framings(self.options["framing"], part.data, part.offsets)

    THREADED = True
    SEQ_SCOPE = "call"              # seq counts every record of the call

    def piece_state(self, part):
        return self.framings(part)

    def piece_cuts(self, data, step: int, first: int = 0):
        """Guessed record starts near each multiple of `step` (`guess_record_start`: where
        four records chain, found without walking the framing from the stream's start — a
        pointer chase of about a tenth of a decode, which would hold up every piece). The
        piece before a cut checks it: a piece that begins at a record start and meets a span
        it cannot frame (Want.open_end) is decoded again joined to the next."""
        from .. import _lldf_frame
        n = len(data)
        framing = self._framing(data)
        yield 0
        target = first or step
        while target < n:
            at = _lldf_frame.guess_record_start(data, framing, self.asc, target)
            if at >= n:
                break
            yield at
            target = (at // step + 1) * step
        yield n

    def split_points(self, data, step: int, native: bool) -> list:
        if len(data) <= step:
            return [0, len(data)]
        return self._record_starts(native)(data, self._framing(data), step)

    def _framing(self, data) -> str:
        """The framing of a whole stream ("auto" resolved on the stream's start)."""
        return FRAMINGS[int(message_framings(self.options["framing"], data,
                                             [0, len(data)])[0])]

    @staticmethod
    def _record_starts(native: bool):
        if native:
            from .. import _lldf_frame
            return _lldf_frame.record_starts
        return resolve("cdcfast.reference.lldf:record_starts")

    def can_split(self, native: bool) -> bool:
        return True                 # the reference walks the framing too, only slower

    def find_record_start(self, data, offset: int, native: bool, known: int) -> int:
        """The first cut of record_starts(step=offset): the first record (vb: block) start
        at or past `offset` that does not continue a segmented record, found by walking the
        length-chained framing from the stream's start or the cut `known` (a length field
        cannot be told from data without it) over a window past `offset`, widened until a
        cut is found; len(data) when there is none (also past a span the framing cannot
        frame)."""
        n = len(data)
        framing = self._framing(data)
        walk = self._record_starts(native)
        mv = memoryview(data)
        width = 1 << 16
        while True:
            end = min(n, offset + width)
            # from `known` (a cut: the walk from it is the same chain): [0, cut, …, end] or
            # [0, end]; cuts before `end` are those of the whole stream
            cuts = walk(mv[known:end], framing, offset - known)
            if len(cuts) > 2 and cuts[1] < end - known:
                return known + cuts[1]
            if end >= n:
                return n
            width *= 4
