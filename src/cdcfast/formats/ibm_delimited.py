"""`ibm-delimited`: IBM Q Replication event-publishing delimited messages (SPEC §5.1).

Decisions SPEC leaves open are in docs/ibm-delimited.md. This module validates options, maps
the header onto the envelope and writes error texts; its native run, which drives the kernel
(native/cdcfast/_ibm.pyx) chunk by chunk, is in _ibm_run.py. Neither has a per-record loop.
The reference twin is cdcfast/reference/ibm_delimited.py.
"""
from __future__ import annotations

import pyarrow as pa

from .. import _tz, codepages
from ..catalog import STRING_TYPE, Column, Table
from ..envelope import UTC_US
from ..errors import printable, show_value
# error codes, shared with the kernel (native/cdcfast/_ibm.pyx): their one spec is _ibm_codes
from ._ibm_codes import (E_AFTER_CLOSE, E_COUNT, E_DELETE_AFTER, E_HEX,  # noqa: F401
                         E_INSERT_BEFORE, E_NOT_NULL, E_ODD, E_STRAY_QUOTE, E_TEXT, E_TOO_FEW,
                         E_UNTERMINATED, E_VALUE)
from .base import Format, grown_table

# the seed's names for the 12 header fields, as errors name them
HEADER_FIELDS = ("type", "identifier", "date", "time", "table_owner", "table_name",
                 "operation", "transaction_identifier", "commit_lsn", "commit_time",
                 "plan_name", "segment_number")
_HEADER_WHAT = {0: "an INTEGER", 1: "an IBM-INVALID-COLUMN identifier", 2: "a YYYYnnn date",
                3: "an HHMMSSmmmmmm time", 6: "ISRT, REPL or DLET", 8: "an LSN",
                9: "a TIMESTAMP", 11: "an INTEGER"}

_REASONS = {E_UNTERMINATED: "unterminated string",
            E_AFTER_CLOSE: "text after closing string delimiter",
            E_STRAY_QUOTE: "string delimiter inside an unquoted field",
            E_NOT_NULL: "null in NOT NULL column",
            E_INSERT_BEFORE: "an insert carries a before value",
            E_DELETE_AFTER: "a delete carries an after value"}

SOURCE = pa.struct([
    pa.field("type", pa.int32()), pa.field("identifier", pa.string()),
    pa.field("put_ts", UTC_US), pa.field("plan_name", pa.string()),
    pa.field("segment", pa.int32()), pa.field("invalid_column", pa.int32()),
    pa.field("invalid_image", pa.string()), pa.field("invalid_mode", pa.string()),
])

class IbmDelimited(Format):
    name = "ibm-delimited"
    RUNNER = "cdcfast.formats._ibm_run:native_batches"
    REFERENCE = "cdcfast.reference.ibm_delimited:reference_batches"
    SUMMARY = "IBM InfoSphere Q Replication event publishing, delimited messages"
    HELP = {
        "column_delimiter": "the character between fields (not alphanumeric)",
        "record_delimiter": "the character that ends a record (X'25' in EBCDIC code pages)",
        "string_delimiter": "the character around string values (doubled inside them)",
        "decimal_char": "the decimal point of numbers",
        "encoding": "utf-8, or an EBCDIC code page: cp037, cp1047, cp500, cp1140",
        "hex_encoding": "the code page of character columns of HEX invalid-column rows "
                        "(default: kept as the hex text)",
        "source_tz": "the time zone of the zone-less header times (an IANA name)",
    }
    DEFAULTS = {"column_delimiter": ",", "record_delimiter": "\n", "string_delimiter": '"',
                "decimal_char": ".", "encoding": "utf-8", "hex_encoding": None,
                "source_tz": "UTC"}
    source_type = SOURCE
    TITLE = "IBM Q Replication delimited"
    EXTENSION = "del"
    NATIVE = ("_ibm", "_arrow")
    ENCODER = "ibm_delimited"

    def __init__(self, catalog, **options):
        super().__init__(catalog, **options)
        o = self.options
        self.encoding = o["encoding"] = codepages.canonical(o["encoding"])
        if o["hex_encoding"] is not None:
            o["hex_encoding"] = codepages.canonical(o["hex_encoding"])
        _tz.check_zone(o["source_tz"])
        names = ("column_delimiter", "record_delimiter", "string_delimiter", "decimal_char")
        raw = []
        for n in names:
            ch = o[n]
            if not isinstance(ch, str) or len(ch) != 1:
                raise ValueError(f"{n} must be one character, not {ch!r}")
            if ch.isalnum():
                raise ValueError(f"{n} {ch!r} is alphanumeric, which IBM does not allow")
            try:
                b = codepages.encode_text(ch, self.encoding)
            except (UnicodeError, ValueError):
                b = b""
            if len(b) != 1 or (self.encoding == "utf-8" and b[0] > 127):
                raise ValueError(f"{n} {ch!r} is not one byte in {self.encoding}")
            raw.append(b)
        if len(set(raw)) != 4:
            raise ValueError("the column, record and string delimiters and the decimal "
                             "character must all differ")
        self.delims = b"".join(raw)           # in the message's code page
        self.dc = codepages.ascii_table(self.encoding)[raw[3][0]]
        # the kernels read numbers through this table; none for ASCII-compatible encodings
        self.asc = b"" if self.encoding in codepages.ASCII_COMPATIBLE \
            else codepages.ascii_table(self.encoding)
        if self.dc == 0:
            raise ValueError(f"decimal_char {o['decimal_char']!r} must be an ASCII character")
        if self.encoding == "utf-8":
            self.u8, self.u8len = bytes(1024), bytes(256)
        else:
            self.u8, self.u8len = codepages.utf8_table(self.encoding)
        hx = o["hex_encoding"] or "utf-8"
        self.hasc = b"" if hx in codepages.ASCII_COMPATIBLE else codepages.ascii_table(hx)
        self.hu8, self.hu8len = (bytes(1024), bytes(256)) if hx == "utf-8" \
            else codepages.utf8_table(hx)

    # -- the envelope ----------------------------------------------------------------------
    def table_columns(self, table: Table | None, ncols: int = 0):
        """Catalog columns, or ``C1…CN`` strings for a table the catalog lacks."""
        if table is not None:
            return list(table.columns)
        return [Column(f"C{i + 1}", STRING_TYPE) for i in range(max(ncols, 0))]

    def columns(self, table, ncols=0):
        return [(c.name, c.type.arrow_type) for c in self.table_columns(table, ncols)]

    # -- errors ----------------------------------------------------------------------------
    def show(self, raw: bytes) -> str:
        """A field's raw bytes (quotes included) as an error quotes them."""
        sd = self.delims[2:3]
        if raw[:1] == sd and len(raw) >= 2:
            raw = raw[1:-1].replace(sd + sd, sd)
        return show_value(raw, "latin-1" if self.encoding == "ascii" else self.encoding) \
            if self.encoding != "cp1047" else repr(codepages.decode_bytes(raw, "cp1047")[:40])

    def describe(self, code, field, columns, raw=b"", nfields=0, table="", ncols=0):
        """(field name, reason) of an error, the same for the kernel and the reference."""
        n = len(columns)
        if field < 0:
            fname = "record"
        elif field < 12:
            fname = HEADER_FIELDS[field]
        elif code in (E_UNTERMINATED, E_AFTER_CLOSE, E_STRAY_QUOTE):
            fname = f"field {field + 1}"
        else:
            j = field - 12
            fname = f"before.{columns[j].name}" if j < n else f"after.{columns[j - n].name}"
        if code in _REASONS:
            return fname, _REASONS[code]
        if code == E_TOO_FEW:
            return fname, f"record has {nfields} fields, fewer than the 12 of the header"
        if code == E_COUNT:
            return fname, (f"record has {nfields} fields, table {printable(table)} needs "
                           f"{12 + 2 * ncols}")
        if code == E_ODD:
            return fname, f"record has {nfields} fields: an odd number of data fields"
        if code == E_TEXT:
            return fname, f"{self.show(raw)} is not {self.encoding} text"
        if code == E_HEX:
            return fname, f"{self.show(raw)} is not hex text"
        if field < 12:
            what = _HEADER_WHAT.get(field, f"{self.encoding} text")
        else:
            what = columns[(field - 12) % n].type.name
        return fname, f"{self.show(raw)} is not {what}"

    # -- decoding --------------------------------------------------------------------------
    def table_of(self, batches: list) -> pa.Table:
        """One output's batches as a table: rows written before a table the catalog lacks had
        its N (an earlier part of a chunked source) get its columns as nulls (grown_table)."""
        return grown_table(batches)

    THREADED = True             # seq restarts per message (SEQ_SCOPE "message")
    POSITION_PER_CHANGE = False  # change_pos is the commit LSN, as commit_pos

    def can_split(self, native: bool) -> bool:
        return native               # only the kernel splits records fast enough

    def piece_cuts(self, data, step: int, first: int = 0):
        """Cuts at a likely record start at or after each multiple of `step`
        (`_ibm.guess_record_start`: just past a record delimiter that two clean records
        follow), found without reading the stream between. A guess — a delimiter inside a
        string is data — that the piece before the cut checks: a piece cut inside a string
        ends in a string its end cuts off (Want.open_end), and is then decoded again joined
        to the next piece."""
        from .. import _ibm
        n = len(data)
        yield 0
        target = first or step
        while target < n:
            at = _ibm.guess_record_start(data, self.delims, target)
            if at >= n:
                break
            yield at
            target = (at // step + 1) * step
        yield n

    def find_record_start(self, data, offset: int, native: bool, known: int) -> int:
        # records are split from a known record start on, as the decoder splits them (a
        # record delimiter inside a string is data): no offset can be resynced on its own
        from .. import _ibm
        return known + _ibm.next_record_start(memoryview(data)[known:], self.delims,
                                              offset - known)

    def text(self, raw: bytes) -> str:
        """Owner/table names as text (lenient: they only name things)."""
        return codepages.decode_bytes(raw, self.encoding) if self.encoding != "utf-8" \
            else raw.decode("utf-8", errors="replace")
