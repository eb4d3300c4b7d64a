# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True, initializedcheck=False
"""`lldf` converter (SPEC §5.2, docs/lldf.md): stage 2 of the kernel.

Stage 1, the framer (_lldf_frame.pyx), cuts a chunk of logical records out of the input.
Here `TableOut.convert` writes one output table's records of the chunk into Arrow buffers:
the header field by field over all the chunk's rows (each field's loop has one kind and one
offset), then the row images in blocks of BLOCK records: each image walked column by column
(its columns are back to back, each starting where the one before ends) to learn where every
value lies, then each column converted over the block in one tight loop of its kind, while
the block's bytes are still in the core's caches. The C it runs besides the shared value
kernels is in _lldf.h.
Errors never raise here: each problem is an entry (code, field, position, two numbers and the
bytes to show) that the Python layer turns into `_error` text.
"""
from libc.stdint cimport uint8_t, int16_t, int32_t, int64_t, uint32_t, uint64_t
from libc.string cimport memcpy, memcmp, memset
from libc.stdlib cimport free
cimport cython

from cdcfast._mem cimport grow
from cdcfast._arrow cimport (Column, FIXED, VAR, BITS, VALIDITY, col_valid, bits_set, bits_get,
                             offsets_to)
from cdcfast._values cimport (A, parse_date10, parse_time, parse_timestamp,
                              utf8_valid, cp_to_utf8, cp_ascii8)
from cdcfast._binary cimport (be16, be32, be64, bcd_timestamp17, packed_decimal, hfp32, hfp64,
                              dec_column_fn, dec_column_choose, utf16be_to_utf8)
# HEADER_MIN, the header's offsets OFF_* and widths LEN_*, the header kinds H_*, the image
# kinds K_*, the error codes E_*, fields F_* and entry words ERR_* (their spec:
# cdcfast/formats/_lldf_codes.py, which cdcfast.formats.lldf reads too)
from cdcfast._lldf_codes cimport *
from cdcfast._lldf_frame cimport Framer, OP_NONE, OP_C, OP_U, OP_D, OP_T, OP_DDL, OP_MSG

import os

import numpy as np

from cdcfast._arrow import presize as _presize

cdef extern from "cdcfast/_lldf.h":
    void hex10 "cdc_hex10"(const uint8_t* p, char* out) nogil
    enum: CHAR_SEEN "CDC_LLDF_SEEN"
    ctypedef struct cdc_lldf_value:
        uint64_t a1, a2, t1, t2
        int64_t pn, pos, mode
    ctypedef struct cdc_lldf_charf:
        int64_t off1, off2
        uint64_t m1, m2
        int64_t framed, nseen, nxt
        cdc_lldf_value seen[CHAR_SEEN]
        uint8_t* data
        int64_t dlen
        int32_t* offs
    int64_t char_rows "cdc_lldf_char_rows"(const uint8_t** hp, int64_t i, int64_t k,
                                           cdc_lldf_charf* f) noexcept nogil

cdef extern from "cdcfast/_bytes.h":
    bint eq_exact "cdc_eq_exact"(const uint8_t* a, const uint8_t* b, int64_t n) nogil
    bint text_differs "cdc_text_differs"(const uint8_t* a, const uint8_t* b, int64_t n,
                                         int64_t room_a, int64_t room_b) nogil
    void copy_exact "cdc_copy_exact"(uint8_t* dst, const uint8_t* src, int64_t n) nogil
    void copy_slack "cdc_copy_slack"(uint8_t* dst, const uint8_t* src, int64_t n,
                                     int64_t readable) nogil
    void copy_16s "cdc_copy_16s"(uint8_t* dst, const uint8_t* src, int64_t n) nogil
    int _ctz "cdc_ctz"(uint64_t x) nogil
    uint64_t load_le64 "cdc_load_le64"(const uint8_t* p) nogil
    void _set_bits "cdc_set_bits"(uint8_t* bm, int64_t i0, int64_t n) nogil
    void valid_nonempty "cdc_valid_nonempty"(const int32_t* offs, int64_t row0, int64_t k,
                                             uint8_t* valid) nogil

# the timestamp parser and code page conversion for this CPU; CDCFAST_NO_AVX2=1 keeps the
# scalar ones (tests run both)
cdef ts_fn _ts_fast = _ts_choose(not os.environ.get("CDCFAST_NO_AVX2"))
cdef tscol_fn _ts_column = _tscol_choose(not os.environ.get("CDCFAST_NO_AVX2"))
cdef cpu8_fn _cpu8_fast = _cpu8_choose(not os.environ.get("CDCFAST_NO_AVX2"))
cdef cprun_fn _cprun_fast = _cprun_choose(not os.environ.get("CDCFAST_NO_AVX2"))
cdef dec_column_fn _dec_column = dec_column_choose(not os.environ.get("CDCFAST_NO_AVX2"))


cdef Kernels kernels() noexcept:
    """The text kernels chosen above (for the test hooks, _lldf_testing.pyx)."""
    cdef Kernels k
    k.ts = _ts_fast
    k.ts_column = _ts_column
    k.cpu8 = _cpu8_fast
    k.cprun = _cprun_fast
    k.dec_column = _dec_column
    k.ts_simd = _ts_column != _tscol_choose(0)
    k.dec_simd = _dec_column != dec_column_choose(0)
    return k


cdef enum:
    RAW_SHOWN = 41    # bytes kept to show a bad value (describe() shows 40, then …)
    BLOCK = 128       # _images walks this many records, then converts their values column by
                      # column (their data stays in the core's caches; 32 and 64 were slower,
                      # 256 no faster)

# an op's text (8 bytes each, zero-padded) and its length; the header of a record that could
# not be framed, HEADER_MIN zero bytes (its BIN fields read zero where null)
cdef char OPTEXT[OP_MSG + 1][8]
cdef int64_t OPLEN[OP_MSG + 1]
cdef uint8_t ZERO_HEADER[HEADER_MIN]


cdef void _op_texts():
    cdef int op
    cdef bytes text
    for op, text in ((OP_C, b"c"), (OP_U, b"u"), (OP_D, b"d"), (OP_T, b"t"), (OP_DDL, b"ddl"),
                     (OP_MSG, b"message")):
        memcpy(OPTEXT[op], <const char*>text, len(text))
        OPLEN[op] = len(text)


_op_texts()


@cython.final
cdef class TableOut:
    """Stage 2: the Arrow columns of one output table, appended chunk by chunk."""
    cdef readonly int64_t ncols
    cdef readonly bint images
    cdef public bint want_flags     # changed / present wanted (see _ibm.TableOut.want_flags)
    cdef public bint want_before    # the before image's values read (_ibm.TableOut.want_before)
    cdef int64_t* kind
    cdef int64_t* width
    cdef int64_t* prec
    cdef uint8_t* nullable
    cdef uint8_t* tz
    cdef const uint8_t* asc
    cdef const uint8_t* u8
    cdef const uint8_t* u8len
    cdef uint8_t space
    cdef cdc_cp cpage           # the code page's digits and separators, for the SWAR parsers
    cdef uint8_t cprows[512]    # its Latin-1 table as the rows of cdc_cp_utf8_avx2
    cdef bint hfp, ascii_only
    cdef object keep
    cdef int64_t nhead
    cdef int64_t* h_kind
    cdef int64_t* h_off
    cdef int64_t* h_width
    # envelope columns
    cdef public Column op, source_op, schema, table, txid, commit_ts, change_ts, commit_pos
    cdef public Column change_pos, seq, msg, source_v, owner_trunc, name_trunc
    cdef readonly list source
    cdef void** src                     # the same Columns, reachable without the GIL
    # images
    cdef public list before, after, changed, present
    cdef public Column before_v, after_v, changed_v, present_v
    # errors: ERR_WORDS int64 per problem; the bytes they show, back to back
    cdef int64_t* errs
    cdef int64_t nerr, errcap
    cdef uint8_t* raw
    cdef int64_t nraw, rawcap
    # per chunk: the rows' record indexes and header pointers (NULL: a record that could not
    # be framed); the value columns as C structs
    cdef int64_t* rows
    cdef const uint8_t** hp
    cdef const uint8_t** hpz        # the same, NULL replaced by ZERO_HEADER (BIN fields)
    cdef int64_t nunframed          # the chunk's rows without a header
    cdef int64_t rowcap
    cdef Col* cb
    cdef Col* ca
    cdef Col* cc
    cdef Col* cp
    cdef int64_t ccap
    cdef uint8_t* lsz               # per column: the bytes of its length (0: fixed width)
    cdef WCol* wcol                 # per column: where _walk finds it
    cdef const uint8_t** vp         # per side, column and block row i, at
                                    # (side * ncols + column) * BLOCK + i: where its value lies
    cdef int32_t* vl                # and its length (both from _walk)
    cdef const uint8_t** ip         # per side and chunk row: the image, where it ends, and
    cdef const uint8_t** iend       # its offset in its record's data, and where the bytes
    cdef const uint8_t** rend       # that may be read from it end (its buffer's end)
    cdef int64_t* ibase
    cdef int64_t* todo              # one column's block rows with a value
    cdef int64_t* todoimg           # per side: the block rows with that image
    cdef int64_t* hard              # block rows a fast parser left to the careful one
    cdef int64_t nimg[2]
    cdef int64_t row0, i0
    cdef uint8_t* okbm              # per chunk: rows whose images were read (changed and
    cdef uint8_t* insbm             # present valid), rows all changed (inserts), as bitmaps
    cdef uint8_t* updbm             # per chunk: update rows whose two images were read
    cdef uint8_t* imgbm             # per chunk and side: rows whose image was read
    cdef uint8_t* nulbm             # per chunk, side and column: its nulls (and bad values)
    cdef int64_t bmcap, nbstride, bm0
    cdef uint8_t* framedbm          # per chunk: rows whose record was framed (header fields
    cdef int64_t fbcap              # that are never null are valid exactly there)
    cdef TextRun trun               # a text column's values of a block, back to back
    cdef uint8_t* latin             # per side and column: its last block had many Latin-1
                                    # letters (cdc_cp_run_avx2's mixed)

    def __cinit__(self, kinds, widths, precs, nullables, tzs, bint images, header,
                  bytes asc, bytes u8, bytes u8len, int space, bint hfp, bint ascii_only,
                  bytes cpchars):
        cdef int64_t j, k, n = len(kinds)
        self.ncols = n
        self.images = images
        self.want_flags = True
        self.want_before = True
        self.kind = <int64_t*>grow(NULL, (n + 1) * 8)
        self.width = <int64_t*>grow(NULL, (n + 1) * 8)
        self.prec = <int64_t*>grow(NULL, (n + 1) * 8)
        self.nullable = <uint8_t*>grow(NULL, n + 1)
        self.tz = <uint8_t*>grow(NULL, n + 1)
        for j in range(n):
            self.kind[j] = kinds[j]
            self.width[j] = widths[j]
            self.prec[j] = precs[j]
            self.nullable[j] = nullables[j]
            self.tz[j] = tzs[j]
        self.nhead = len(header)
        self.h_kind = <int64_t*>grow(NULL, self.nhead * 8)
        self.h_off = <int64_t*>grow(NULL, self.nhead * 8)
        self.h_width = <int64_t*>grow(NULL, self.nhead * 8)
        for j in range(self.nhead):
            self.h_off[j], self.h_width[j], self.h_kind[j] = header[j]
            if self.h_kind[j] == H_CHAR and not (1 <= self.h_width[j] <= 16
                                                 and self.h_off[j] + self.h_width[j] <= HEADER_MIN):
                raise ValueError("a CHAR header field is read as words: 1-16 bytes within "
                                 f"the first {HEADER_MIN}")
        self.keep = (asc, u8, u8len)
        self.asc = asc
        self.u8 = u8
        self.u8len = u8len
        self.space = space
        cp_rows(self.u8, self.u8len, self.cprows)
        # "0-.: T+Z" in the code page
        self.cpage.zone = cpchars[0] & 0xF0
        self.cpage.minus, self.cpage.dot, self.cpage.colon = cpchars[1], cpchars[2], cpchars[3]
        self.cpage.space, self.cpage.t = cpchars[4], cpchars[5]
        self.cpage.plus, self.cpage.z = cpchars[6], cpchars[7]
        self.hfp = hfp
        self.ascii_only = ascii_only
        for name in ("op", "source_op", "schema", "table", "txid", "commit_pos", "change_pos"):
            setattr(self, name, Column(VAR))
        for name in ("commit_ts", "change_ts", "seq", "msg"):
            setattr(self, name, Column(FIXED, 8))
        self.source_v = Column(VALIDITY)
        self.owner_trunc = Column(BITS)
        self.name_trunc = Column(BITS)
        self.source = [self._head_column(self.h_kind[j]) for j in range(self.nhead)]
        self.src = <void**>grow(NULL, (self.nhead + 1) * sizeof(void*))
        for j in range(self.nhead):
            self.src[j] = <void*>self.source[j]    # borrowed: the list keeps them
        self.before = [self._value_column(j) for j in range(n)] if images else []
        self.after = [self._value_column(j) for j in range(n)] if images else []
        self.changed = [Column(BITS) for j in range(n)] if images else []
        self.present = [Column(BITS) for j in range(n)] if images else []
        self.before_v = Column(VALIDITY)
        self.after_v = Column(VALIDITY)
        self.changed_v = Column(VALIDITY)
        self.present_v = Column(VALIDITY)
        self.lsz = <uint8_t*>grow(NULL, n + 1)
        self.wcol = <WCol*>grow(NULL, (n + 1) * sizeof(WCol))
        self.vp = <const uint8_t**>grow(NULL, 2 * BLOCK * (n + 1) * sizeof(uint8_t*))
        self.vl = <int32_t*>grow(NULL, 2 * BLOCK * (n + 1) * 4)
        self.ip = <const uint8_t**>grow(NULL, 2 * BLOCK * sizeof(uint8_t*))
        self.iend = <const uint8_t**>grow(NULL, 2 * BLOCK * sizeof(uint8_t*))
        self.rend = <const uint8_t**>grow(NULL, 2 * BLOCK * sizeof(uint8_t*))
        self.ibase = <int64_t*>grow(NULL, 2 * BLOCK * 8)
        self.todo = <int64_t*>grow(NULL, BLOCK * 8)
        self.todoimg = <int64_t*>grow(NULL, 2 * BLOCK * 8)
        self.hard = <int64_t*>grow(NULL, BLOCK * 8)
        self.latin = <uint8_t*>grow(NULL, 2 * (n + 1))
        memset(self.latin, 0, 2 * (n + 1))
        for j in range(n):
            k = self.kind[j]
            self.lsz[j] = 0 if self.width[j] else (
                4 if k == K_CLOB or k == K_DBCLOB or k == K_BLOB or k == K_XML else 2)
        self._runs()

    def __dealloc__(self):
        free(self.kind); free(self.width); free(self.prec); free(self.nullable); free(self.tz)
        free(self.h_kind); free(self.h_off); free(self.h_width); free(self.src)
        free(self.errs); free(self.raw); free(self.rows); free(self.hp); free(self.hpz)
        free(self.cb); free(self.ca); free(self.cc); free(self.cp)
        free(self.lsz); free(self.wcol); free(self.vp); free(self.vl); free(self.ip)
        free(self.iend); free(self.rend); free(self.ibase); free(self.todo); free(self.todoimg)
        free(self.hard)
        free(self.okbm); free(self.insbm); free(self.updbm); free(self.imgbm)
        free(self.nulbm); free(self.framedbm); free(self.latin)
        text_run_free(&self.trun)

    cdef void _runs(self) noexcept nogil:
        """The columns' WCol entries: runs of fixed-width columns with their offsets."""
        cdef int64_t j = 0, t, off
        cdef WCol* c
        while j < self.ncols:
            c = &self.wcol[j]
            c.width = <int32_t>self.width[j]
            c.lsz = self.lsz[j]
            c.runlen = c.runend = c.voff = 0
            c.run0 = <int32_t>j
            if c.width == 0:
                c.noff = 0 if self.nullable[j] else -1
                j += 1
                continue
            t = j
            off = 0
            while t < self.ncols and self.width[t] > 0:
                self.wcol[t].width = <int32_t>self.width[t]
                self.wcol[t].lsz = 0
                self.wcol[t].runlen = self.wcol[t].runend = 0
                self.wcol[t].run0 = <int32_t>j
                self.wcol[t].noff = <int32_t>off if self.nullable[t] else -1
                off += self.nullable[t]
                self.wcol[t].voff = <int32_t>off
                off += self.width[t]
                t += 1
            c.runlen = <int32_t>off
            c.runend = <int32_t>t
            j = t

    cdef Column _head_column(self, int64_t k):
        if k == H_BIN1:
            return Column(FIXED, 2)
        if k == H_BIN2:
            return Column(FIXED, 4)
        if k == H_BIN4 or k == H_TS:
            return Column(FIXED, 8)
        if k == H_YN:
            return Column(BITS)
        return Column(VAR)

    cdef Column _value_column(self, int64_t j):
        cdef int64_t k = self.kind[j]
        if k == K_I16:
            return Column(FIXED, 2)
        if k == K_I32 or k == K_F32 or k == K_DATE:
            return Column(FIXED, 4)
        if k == K_I64 or k == K_F64 or k == K_TIME or k == K_TS or k == K_TSZ:
            return Column(FIXED, 8)
        if k == K_DEC:
            return Column(FIXED, 16)
        if k == K_BOOL:
            return Column(BITS)
        return Column(VAR)

    @property
    def length(self):
        return self.seq.length

    def presize(self, int64_t rows):
        """Reserve room for `rows` rows in all (see _arrow.presize)."""
        if self.seq.length == 0 or rows <= self.seq.length:
            return
        _presize([self.op, self.source_op, self.schema, self.table, self.txid, self.commit_ts,
                  self.change_ts, self.commit_pos, self.change_pos, self.seq, self.msg,
                  self.source_v, self.owner_trunc, self.name_trunc, self.before_v,
                  self.after_v, self.changed_v, self.present_v] + self.source + self.before
                 + self.after + self.changed + self.present, rows)

    def errors(self, int64_t first=0):
        """Error entries from `first` on: an (n, ERR_WORDS) int64 array."""
        out = np.empty((max(self.nerr - first, 0), ERR_WORDS), dtype=np.int64)
        cdef int64_t[:, ::1] o = out
        cdef int64_t i, w
        for i in range(first, self.nerr):
            for w in range(ERR_WORDS):
                o[i - first, w] = self.errs[i * ERR_WORDS + w]
        return out

    def raw_bytes(self, int64_t at, int64_t n):
        return bytes((<uint8_t[:n]>(self.raw + at)) if n else b"")

    @property
    def error_count(self):
        return self.nerr

    def clear_errors(self):
        self.nerr = 0
        self.nraw = 0

    cdef int _err(self, int64_t row, int32_t code, int32_t field, int64_t pos, int64_t a,
                  int64_t b, int64_t c, int64_t msg, const uint8_t* raw,
                  int64_t rawlen) except -1 nogil:
        cdef int64_t* e
        cdef int64_t keep = rawlen if rawlen < RAW_SHOWN else RAW_SHOWN
        if self.nerr >= self.errcap:
            self.errcap = max(64, 2 * self.errcap)
            self.errs = <int64_t*>grow(self.errs, self.errcap * ERR_WORDS * 8)
        if self.nraw + keep > self.rawcap:
            self.rawcap = max(1024, 2 * self.rawcap, self.nraw + keep)
            self.raw = <uint8_t*>grow(self.raw, self.rawcap)
        e = self.errs + self.nerr * ERR_WORDS
        e[ERR_ROW] = row; e[ERR_CODE] = code; e[ERR_FIELD] = field; e[ERR_POS] = pos
        e[ERR_A] = a; e[ERR_B] = b; e[ERR_C] = c; e[ERR_MSG] = msg
        e[ERR_RAW_AT] = self.nraw; e[ERR_RAW_LEN] = keep; e[ERR_SPAN_START] = 0; e[ERR_SPAN_END] = 0
        if keep:
            memcpy(self.raw + self.nraw, raw, keep)
        self.nraw += keep
        self.nerr += 1
        return 0

    # -- one chunk -------------------------------------------------------------------------
    def convert(self, Framer fr, const int32_t[::1] slots, int slot, bint with_corrupt,
                bint skip_control):
        """Append the chunk's records that go to this output (their table's slot, corrupt
        ones when with_corrupt; control records not when skip_control). Returns the count."""
        cdef int64_t r, k = 0, t, nslots = slots.shape[0]
        cdef uint8_t op
        if self.rowcap < fr.nrec:
            self.rowcap = max(fr.nrec, 2 * self.rowcap)
            self.rows = <int64_t*>grow(self.rows, self.rowcap * 8)
            self.hp = <const uint8_t**>grow(self.hp, self.rowcap * sizeof(uint8_t*))
            self.hpz = <const uint8_t**>grow(self.hpz, self.rowcap * sizeof(uint8_t*))
        for r in range(fr.nrec):
            t = fr.r_tab[r]
            if t < 0:
                if with_corrupt:
                    self.rows[k] = r
                    k += 1
                continue
            if t >= nslots or slots[t] != slot:
                continue
            op = fr.r_op[r]
            if skip_control and (op == OP_DDL or op == OP_MSG):
                continue
            self.rows[k] = r
            k += 1
        if k == 0:
            return 0
        # the rows' headers, and which rows have one, as a bitmap of the chunk's rows from
        # byte row0 >> 3 on (the columns valid exactly there take it whole)
        cdef int64_t row0 = self.seq.length
        cdef int64_t b0 = row0 >> 3, nb = ((row0 + k + 7) >> 3) - b0
        if nb > self.fbcap:
            self.fbcap = max(nb, 2 * self.fbcap)
            self.framedbm = <uint8_t*>grow(self.framedbm, self.fbcap)
        memset(self.framedbm, 0, nb)
        self.nunframed = 0
        for r in range(k):
            t = fr.r_tab[self.rows[r]]
            self.hp[r] = (fr.data + fr.r_h[self.rows[r]]) if t >= 0 else NULL
            self.hpz[r] = self.hp[r] if t >= 0 else ZERO_HEADER
            self.nunframed += t < 0
            if t >= 0:
                bits_set(self.framedbm - b0, row0 + r)
        self._reserve(k)
        self.schema.reserve_data(k * fr.maxname + 8)
        self.table.reserve_data(k * fr.maxname + 8)
        self._header_reserve(k)
        if self.images:
            self._images_load()
        with nogil:         # every column has room for the chunk: written without the GIL
            self._envelope(fr, k, row0)
            self._header(fr, k, row0)
            if self.images:
                self._images(fr, k, row0)
        return k

    cdef int _reserve(self, int64_t k) except -1:
        cdef Column c
        for c in (self.op, self.source_op, self.schema, self.table, self.txid,
                  self.commit_ts, self.change_ts, self.commit_pos, self.change_pos, self.seq,
                  self.msg, self.source_v, self.owner_trunc, self.name_trunc,
                  self.before_v, self.after_v, self.changed_v, self.present_v):
            c.reserve(k)
        for lst in (self.source, self.before, self.after, self.changed, self.present):
            for c in lst:
                c.reserve(k)
        # fixed-size strings: op ≤ 7, source_op ≤ 6 (2 code points of ≤ 3 bytes), txid 20,
        # positions 10
        self.op.reserve_data(8 * k)
        self.source_op.reserve_data(6 * k)
        self.txid.reserve_data(20 * k)
        self.commit_pos.reserve_data(10 * k)
        self.change_pos.reserve_data(10 * k)
        return 0

    cdef void _names(self, Framer fr, Column c, const int64_t* noff, const int64_t* nlen,
                     int64_t k, int64_t row0) noexcept nogil:
        """schema or table: the names the framer read (the table's, or null)."""
        cdef uint8_t* out = c.data
        cdef int32_t* offs = c.offs
        cdef uint8_t* valid = c.valid
        cdef int64_t dlen = c.dlen, i, row, t
        for i in range(k):
            row = row0 + i
            t = fr.r_tab[self.rows[i]]
            if t >= 0 and nlen[t] >= 0:
                copy_exact(out + dlen, fr.nbuf + noff[t], nlen[t])
                dlen += nlen[t]
                bits_set(valid, row)
            offs[row + 1] = <int32_t>dlen
        c.dlen = dlen

    cdef void _lrsn(self, Column c, int64_t j, int64_t k, int64_t row0) noexcept nogil:
        """commit_pos or change_pos: the 10-byte LRSN at header offset j (null unframed)."""
        cdef uint8_t* out = c.data
        cdef int32_t* offs = c.offs
        cdef int64_t dlen = c.dlen, i, row
        cdef int64_t b0 = row0 >> 3, nb = ((row0 + k + 7) >> 3) - b0
        for i in range(k):
            row = row0 + i
            if self.hp[i] != NULL:
                memcpy(out + dlen, self.hp[i] + j, LEN_LRSN)
                dlen += LEN_LRSN
            offs[row + 1] = <int32_t>dlen
        c.dlen = dlen
        _or_bits(c.valid + b0, self.framedbm, nb)

    cdef int _envelope(self, Framer fr, int64_t k, int64_t row0) except -1 nogil:
        """The envelope's columns over the chunk's k rows, one column a loop (its buffers in
        locals: a store through a byte pointer would otherwise reload every Column field)."""
        cdef int64_t i, r, h, j, v, t, row
        cdef const uint8_t* d = fr.data
        cdef const uint8_t* p
        cdef int rc
        cdef uint8_t op, c0, c1
        cdef int64_t* seq = <int64_t*>self.seq.data
        cdef int64_t* msg = <int64_t*>self.msg.data
        cdef int64_t* cts = <int64_t*>self.commit_ts.data
        cdef int64_t* xts = <int64_t*>self.change_ts.data
        cdef const uint8_t* u8 = self.u8
        cdef const uint8_t* u8len = self.u8len
        cdef const int64_t* rows = self.rows
        cdef const int32_t* rtab = fr.r_tab
        cdef const uint8_t** hp = self.hp
        cdef uint8_t* out
        cdef int32_t* offs
        cdef uint8_t* valid
        cdef int64_t dlen
        cdef char txt[32]
        cdef int64_t b0 = row0 >> 3, nb = ((row0 + k + 7) >> 3) - b0
        cdef const uint8_t* prev_uor = NULL
        for i in range(k):
            r = rows[i]
            seq[row0 + i] = fr.r_seq[r]
            msg[row0 + i] = fr.r_msg[r]
        _set_bits(self.seq.valid, row0, k)
        _set_bits(self.msg.valid, row0, k)
        # op (OPTEXT: at most 7 bytes, room for 8 a row)
        out, offs, valid, dlen = self.op.data, self.op.offs, self.op.valid, self.op.dlen
        for i in range(k):
            row = row0 + i
            op = fr.r_op[rows[i]]
            if hp[i] != NULL and op != OP_NONE:
                memcpy(out + dlen, OPTEXT[op], 8)
                dlen += OPLEN[op]
                bits_set(valid, row)
            offs[row + 1] = <int32_t>dlen
        self.op.dlen = dlen
        # source_op: the two characters as sent (null where the code page lacks one)
        out, offs, valid, dlen = (self.source_op.data, self.source_op.offs, self.source_op.valid,
                                  self.source_op.dlen)
        for i in range(k):
            row = row0 + i
            if hp[i] != NULL:
                c0 = hp[i][OFF_CHANGE_TYPE]
                c1 = hp[i][OFF_CHANGE_TYPE + 1]
                if u8len[c0] and u8len[c1]:
                    memcpy(out + dlen, u8 + 4 * c0, 4)
                    dlen += u8len[c0]
                    memcpy(out + dlen, u8 + 4 * c1, 4)
                    dlen += u8len[c1]
                    bits_set(valid, row)
            offs[row + 1] = <int32_t>dlen
        self.source_op.dlen = dlen
        # schema and table: the names the framer read (the table's, or null)
        self._names(fr, self.schema, fr.t_sch, fr.t_schlen, k, row0)
        self._names(fr, self.table, fr.t_tab, fr.t_tablen, k, row0)
        # txid: UORID in hex (a transaction's repeats: converted when it changes)
        out, offs, valid, dlen = self.txid.data, self.txid.offs, self.txid.valid, self.txid.dlen
        for i in range(k):
            row = row0 + i
            if hp[i] != NULL:
                p = hp[i] + OFF_UORID
                # (the 10 bytes as two words: the header's HEADER_MIN reach past them)
                if prev_uor == NULL or load_le64(p) != load_le64(prev_uor) \
                        or load_le64(p + 2) != load_le64(prev_uor + 2):
                    hex10(p, txt)
                    prev_uor = p
                memcpy(out + dlen, txt, 20)
                dlen += 20
            offs[row + 1] = <int32_t>dlen
        self.txid.dlen = dlen
        _or_bits(valid + b0, self.framedbm, nb)     # (valid where framed)
        # commit_pos (UORCOMMITLRSN) and change_pos (LOGLRSN), 10 bytes each
        self._lrsn(self.commit_pos, OFF_COMMITLRSN, k, row0)
        self._lrsn(self.change_pos, OFF_LOGLRSN, k, row0)
        self.op.length = row0 + k
        self.source_op.length = row0 + k
        self.schema.length = row0 + k
        self.table.length = row0 + k
        self.txid.length = row0 + k
        self.commit_pos.length = row0 + k
        self.change_pos.length = row0 + k
        # the timestamps (a transaction's commit time repeats: converted when it changes)
        cdef const uint8_t* prev_commit = NULL
        cdef int64_t cv = 0
        cdef int crc = 0
        for i in range(k):
            r = self.rows[i]
            if fr.r_tab[r] < 0:
                continue
            h = fr.r_h[r]
            p = d + h + OFF_COMMIT_TS
            if prev_commit == NULL or load_le64(p) != load_le64(prev_commit) \
                    or load_le64(p + 8) != load_le64(prev_commit + 8) \
                    or load_le64(p + 9) != load_le64(prev_commit + 9):
                crc = bcd_timestamp17(p, &cv)
                prev_commit = p if crc != 0 else NULL
            rc = crc
            v = cv
            if rc == 1:
                cts[row0 + i] = v
                col_valid(self.commit_ts, row0 + i)
            elif rc == 0:
                self._err(row0 + i, E_HEADER_VALUE, F_COMMIT_TS, h + OFF_COMMIT_TS, 0, 0, 0,
                          fr.r_msg[r], d + h + OFF_COMMIT_TS, LEN_TS)
            rc = bcd_timestamp17(d + h + OFF_TIMESTAMP, &v)
            if rc == 1:
                xts[row0 + i] = v
                col_valid(self.change_ts, row0 + i)
            elif rc == 0:
                self._err(row0 + i, E_HEADER_VALUE, F_TIMESTAMP, h + OFF_TIMESTAMP, 0, 0, 0,
                          fr.r_msg[r], d + h + OFF_TIMESTAMP, LEN_TS)
        self.seq.length = row0 + k
        self.msg.length = row0 + k
        self.commit_ts.length = row0 + k
        self.change_ts.length = row0 + k
        # record-level problems found by the framer, and unknown change types
        for i in range(k):
            r = self.rows[i]
            if fr.r_tab[r] >= 0 and fr.r_op[r] == OP_NONE:
                h = fr.r_h[r]
                self._err(row0 + i, E_CHANGE_TYPE, F_CHANGE_TYPE, h + OFF_CHANGE_TYPE, 0, 0, 0,
                          fr.r_msg[r], d + h + OFF_CHANGE_TYPE, LEN_CHANGE_TYPE)
            if fr.r_err[r]:
                self._err(row0 + i, fr.r_err[r], fr.r_efield[r], fr.r_epos[r], fr.r_ea[r],
                          fr.r_eb[r], fr.r_ec[r], fr.r_msg[r], d + fr.r_rawpos[r],
                          fr.r_rawlen[r])
                if fr.r_tab[r] < 0 or fr.r_err[r] == E_SEG_MISSING \
                        or fr.r_err[r] == E_SEG_ALONE:
                    self.errs[(self.nerr - 1) * ERR_WORDS + ERR_SPAN_START] = fr.r_p[r]
                    self.errs[(self.nerr - 1) * ERR_WORDS + ERR_SPAN_END] = fr.r_end[r]
        return 0

    cdef int _header_reserve(self, int64_t k) except -1:
        """Room for k rows of the header fields' text."""
        cdef int64_t f, kind, w
        for f in range(self.nhead):
            kind = self.h_kind[f]
            w = self.h_width[f]
            if kind == H_CHAR:
                (<Column>self.src[f]).reserve_data(3 * w * k + 16)  # ≤ 3 UTF-8 bytes a byte;
            elif kind == H_BINX:                                    # 16-byte copies
                (<Column>self.src[f]).reserve_data(w * k + 8)
        return 0

    cdef int _header(self, Framer fr, int64_t k, int64_t row0) except -1 nogil:
        """The source struct, one header field at a time over all k rows."""
        cdef int64_t i, f
        cdef const uint8_t** hp = self.hp
        cdef int64_t b0 = row0 >> 3, nb = ((row0 + k + 7) >> 3) - b0
        cdef uint8_t* otr = self.owner_trunc.data
        cdef uint8_t* ntr = self.name_trunc.data
        _or_bits(self.source_v.valid + b0, self.framedbm, nb)      # valid where framed
        _or_bits(self.owner_trunc.valid + b0, self.framedbm, nb)
        _or_bits(self.name_trunc.valid + b0, self.framedbm, nb)
        for i in range(k):
            if hp[i] != NULL:
                if be16(hp[i] + OFF_OWNERLEN) > LEN_OWNER:
                    bits_set(otr, row0 + i)
                if be16(hp[i] + OFF_NAMELEN) > LEN_NAME:
                    bits_set(ntr, row0 + i)
        self.source_v.length = row0 + k
        self.owner_trunc.length = row0 + k
        self.name_trunc.length = row0 + k
        for f in range(self.nhead):
            self._field(fr, <Column>self.src[f], f, k, row0)
        return 0

    cdef int _field(self, Framer fr, Column c, int64_t f, int64_t k, int64_t row0) except -1 nogil:
        """One header field over the chunk's k rows: a loop per kind. Fields repeat from
        record to record (a transaction's, a connection's), so text and timestamps are
        converted only when their bytes differ from the previous row's."""
        cdef int64_t kind = self.h_kind[f], off = self.h_off[f], w = self.h_width[f]
        cdef int64_t i, v = 0, row
        cdef const uint8_t* d = fr.data
        cdef const uint8_t* p
        cdef const uint8_t* prev = NULL
        cdef const uint8_t** hp = self.hp
        cdef const uint8_t** hpz = self.hpz
        cdef uint64_t x0, x1
        cdef uint8_t* data
        cdef uint8_t* valid = c.valid
        cdef int32_t* offs
        cdef int64_t dlen
        cdef uint8_t ch
        cdef bint pvalid = 0
        cdef int rc
        data = c.data
        offs = c.offs
        dlen = c.dlen
        # BIN fields are null only where the record could not be framed
        if kind == H_BIN1 or kind == H_BIN2 or kind == H_BIN4 or kind == H_BINX:
            _or_bits(valid + (row0 >> 3), self.framedbm, ((row0 + k + 7) >> 3) - (row0 >> 3))
        # (their values: zero where null, from hpz, a loop without a branch)
        if kind == H_BIN2:
            for i in range(k):
                (<int32_t*>data)[row0 + i] = <int32_t>be16(hpz[i] + off)
        elif kind == H_BIN1:
            for i in range(k):
                (<int16_t*>data)[row0 + i] = hpz[i][off]
        elif kind == H_BIN4:
            for i in range(k):
                (<int64_t*>data)[row0 + i] = <int64_t>be32(hpz[i] + off)
        elif kind == H_BINX and self.nunframed == 0 and 8 <= w <= 16:
            for i in range(k):                      # (LRSNs, RBAs: two overlapping words)
                memcpy(&x0, hpz[i] + off, 8)
                memcpy(&x1, hpz[i] + off + w - 8, 8)
                memcpy(data + dlen, &x0, 8)
                memcpy(data + dlen + w - 8, &x1, 8)
                dlen += w
                offs[row0 + i + 1] = <int32_t>dlen
        elif kind == H_BINX and self.nunframed == 0:
            for i in range(k):
                copy_exact(data + dlen, hpz[i] + off, w)
                dlen += w
                offs[row0 + i + 1] = <int32_t>dlen
        elif kind == H_BINX:
            for i in range(k):
                row = row0 + i
                if hp[i] != NULL:
                    copy_exact(data + dlen, hp[i] + off, w)
                    dlen += w
                offs[row + 1] = <int32_t>dlen
        elif kind == H_YN:
            for i in range(k):
                if hp[i] == NULL:
                    continue
                row = row0 + i
                ch = A(self.asc, hp[i][off])
                if ch == 89:
                    bits_set(data, row)
                    bits_set(valid, row)
                elif ch == 78:
                    bits_set(valid, row)
                elif ch != 32:
                    self._err(row, E_HEADER_VALUE, <int32_t>f, hp[i] + off - d, 0, 0, 0,
                              fr.r_msg[self.rows[i]], hp[i] + off, 1)
        elif kind == H_TS:
            for i in range(k):
                if hp[i] == NULL:
                    continue
                p = hp[i] + off
                if prev == NULL or not eq_exact(p, prev, 17):
                    rc = bcd_timestamp17(p, &v)
                    prev = p
                    pvalid = rc == 1
                    if rc == 0:
                        prev = NULL
                        self._err(row0 + i, E_HEADER_VALUE, <int32_t>f, p - d, 0, 0, 0,
                                  fr.r_msg[self.rows[i]], p, 17)
                if pvalid:
                    (<int64_t*>data)[row0 + i] = v
                    bits_set(valid, row0 + i)
        else:                                       # H_CHAR: see _char_field
            dlen = self._char_field(fr, f, k, row0, data, offs + row0 + 1, valid, dlen)
        c.dlen = dlen
        c.length = row0 + k
        return 0

    cdef int64_t _char_field(self, Framer fr, int64_t f, int64_t k, int64_t row0,
                             uint8_t* data, int32_t* offs, uint8_t* valid,
                             int64_t dlen) except -1 nogil:
        """A CHAR header field (at most 16 bytes) over the chunk's k rows into data from
        dlen on (chunk row i's end: offs[i]): its text without trailing blanks, null when
        blank (so valid exactly where its text is not empty). Returns the data's new
        length. The rows that hold a value seen before take its text in C
        (cdc_lldf_char_rows: most repeat the row before, a transaction's or a connection's
        values); the others come back here to be converted, and their value joins the
        CHAR_SEEN remembered. A bad value is not remembered: each of its rows reports it."""
        cdef int64_t off = self.h_off[f], w = self.h_width[f]
        cdef int64_t i = 0, n, o, j
        cdef cdc_lldf_charf cf
        cdef cdc_lldf_value* v
        cdef const uint8_t** hp = self.hp
        cdef const uint8_t* p
        cdef uint8_t sp = self.space, ch
        cdef const uint8_t* u8 = self.u8
        cdef const uint8_t* u8len = self.u8len
        cdef bint bad
        if w < 8 and off + w >= 8:                  # the word ending where the field ends
            cf.off1 = cf.off2 = off + w - 8
            cf.m1 = cf.m2 = ~<uint64_t>0 << (8 * (8 - w))
        elif w < 8:                                 # (near the start: the one starting there)
            cf.off1 = cf.off2 = off
            cf.m1 = cf.m2 = ~<uint64_t>0 >> (8 * (8 - w))
        else:
            cf.off1, cf.off2 = off, off + w - 8
            cf.m1 = cf.m2 = ~<uint64_t>0
        cf.framed = self.nunframed == 0
        cf.nseen = cf.nxt = 0
        cf.data = data
        cf.dlen = dlen
        cf.offs = offs
        while True:
            i = char_rows(hp, i, k, &cf)
            if i >= k:
                break
            p = hp[i] + off                         # a value not seen: converted
            n = w
            while n > 0 and p[n - 1] == sp:
                n -= 1
            o = cf.dlen
            bad = 0
            for j in range(n):
                ch = p[j]
                bad |= u8len[ch] == 0
                memcpy(data + o, u8 + 4 * ch, 4)
                o += u8len[ch]
            if bad:
                self._err(row0 + i, E_HEADER_VALUE, <int32_t>f, p - fr.data, 0, 0, 0,
                          fr.r_msg[self.rows[i]], p, w)
                offs[i] = <int32_t>cf.dlen
                i += 1
                continue
            v = &cf.seen[cf.nxt]
            cf.nxt = (cf.nxt + 1) % CHAR_SEEN
            cf.nseen = min(cf.nseen + 1, CHAR_SEEN)
            v.a1 = load_le64(hp[i] + cf.off1) & cf.m1
            v.a2 = load_le64(hp[i] + cf.off2) & cf.m2
            v.pn = o - cf.dlen
            v.pos = cf.dlen
            v.mode = 0 if n == 0 else 1 if v.pn <= 16 else 2
            memcpy(&v.t1, data + cf.dlen, 8)        # (16 bytes of slack)
            memcpy(&v.t2, data + cf.dlen + 8, 8)
            if v.mode:
                cf.dlen = o
            offs[i] = <int32_t>cf.dlen
            i += 1
        valid_nonempty(offs - 1 - row0, row0, k, valid)   # (null: blank, bad or no header)
        return cf.dlen

    # -- images ----------------------------------------------------------------------------
    # The value columns are written through `Col` structs loaded once per chunk (after every
    # column has room for the chunk's rows): no Python object is touched per value. Variable-
    # length data may still grow mid-chunk (_grow_var), which reloads its pointer.
    cdef int _load(self, list cols, Col* out) except -1:
        cdef int64_t j
        cdef Column c
        for j in range(self.ncols):
            c = <Column>cols[j]
            out[j].valid = c.valid
            out[j].data = c.data
            out[j].offs = c.offs
            out[j].dlen = c.dlen
            out[j].dcap = c.dcap
            out[j].width = c.width
            out[j].layout = c.layout
        return 0

    cdef void _store(self, list cols, Col* cs, int64_t length) noexcept:
        cdef int64_t j
        cdef Column c
        for j in range(self.ncols):
            c = <Column>cols[j]
            c.dlen = cs[j].dlen
            c.length = length

    cdef int _grow_var(self, list cols, Col* cs, int64_t j, int64_t need) except -1:
        cdef Column c = <Column>cols[j]
        c.dlen = cs[j].dlen
        c.reserve_data(need)
        cs[j].data = c.data
        cs[j].dcap = c.dcap
        return 0

    cdef int _images_load(self) except -1:
        """The value columns' Col structs, loaded once the columns have room for the chunk
        (with the GIL: they are reached through Python lists)."""
        cdef int64_t n = self.ncols
        if self.ccap < n:
            self.ccap = n
            self.cb = <Col*>grow(self.cb, n * sizeof(Col))
            self.ca = <Col*>grow(self.ca, n * sizeof(Col))
            self.cc = <Col*>grow(self.cc, n * sizeof(Col))
            self.cp = <Col*>grow(self.cp, n * sizeof(Col))
        self._load(self.before, self.cb)
        self._load(self.after, self.ca)
        self._load(self.changed, self.cc)
        self._load(self.present, self.cp)
        return 0

    cdef int _images(self, Framer fr, int64_t k, int64_t row0) except -1 nogil:
        """The row images of the chunk's k records, in two passes. First record by record:
        each image's columns are walked (null bytes, lengths; a column starts where the one
        before it ends), which decides whether the image matches the catalog and where each
        value lies. Then column by column (`_column`): one tight loop of one kind over the
        values the first pass found."""
        cdef int64_t i, r, row, m, q, ilen, used, e0, n = self.ncols
        cdef uint8_t op
        cdef const uint8_t* dat
        cdef bint bad, has_b, has_a, ok_b, ok_a
        cdef int side
        cdef int64_t raw0, e_rec, raw_rec
        # bitmaps of the chunk's rows from byte b0 on, each padded to whole words (nbs bytes)
        cdef int64_t b0 = row0 >> 3, nb = ((row0 + k + 7) >> 3) - b0, j
        cdef int64_t nbs = (nb + 7) & ~7
        cdef int64_t nupd = 0, t, tb0, tb1      # nupd: the block's updates
        cdef Col* cs
        cdef uint8_t* img
        cdef uint8_t* nul
        cdef uint8_t* vd
        if nbs > self.bmcap:
            self.bmcap = max(nbs, 2 * self.bmcap)
            self.okbm = <uint8_t*>grow(self.okbm, self.bmcap)
            self.insbm = <uint8_t*>grow(self.insbm, self.bmcap)
            self.updbm = <uint8_t*>grow(self.updbm, self.bmcap)
            self.imgbm = <uint8_t*>grow(self.imgbm, 2 * self.bmcap)
            self.nulbm = <uint8_t*>grow(self.nulbm, 2 * (n + 1) * self.bmcap)
        self.nbstride = nbs
        self.bm0 = b0
        self.row0 = row0
        memset(self.okbm, 0, nbs)
        memset(self.insbm, 0, nbs)
        memset(self.updbm, 0, nbs)
        memset(self.imgbm, 0, 2 * nbs)
        memset(self.nulbm, 0, 2 * n * nbs)
        cdef int64_t i0, i1
        # the bitmaps as locals, bit `row` (a store through them would otherwise reload self)
        cdef uint8_t* imgb = self.imgbm - b0
        cdef uint8_t* imga = self.imgbm + nbs - b0
        cdef uint8_t* okbm = self.okbm - b0
        cdef uint8_t* insbm = self.insbm - b0
        cdef uint8_t* updbm = self.updbm - b0
        cdef int64_t ib
        for ib in range((k + BLOCK - 1) // BLOCK):     # blocks of BLOCK rows
            i0 = ib * BLOCK
            i1 = min(k, i0 + BLOCK)
            self.i0 = i0
            for i in range(i0, i1):
                r = self.rows[i]
                row = row0 + i
                op = fr.r_op[r]
                has_b = op == OP_U or op == OP_D
                has_a = op == OP_U or op == OP_C
                ok_b = ok_a = 0
                if fr.r_tab[r] < 0 or not (has_a or has_b) or fr.r_err[r] != 0:
                    continue                        # changed / present null
                dat = fr.dat(r)
                m = fr.r_dlen[r]
                q = 2
                bad = 0
                e_rec = self.nerr
                raw_rec = self.nraw
                for side in range(2):
                    if (side == 0 and not has_b) or (side == 1 and not has_a):
                        continue
                    if m - q < 2 or q + 2 + <int64_t>be16(dat + q) > m:
                        bad = 1
                        self.nerr = e_rec           # no image at all: their values' errors go too
                        self.nraw = raw_rec
                        self._err(row, E_IMAGE_CUT, F_BEFORE if side == 0 else F_AFTER,
                                  fr.dpos(r, q),
                                  2 if m - q < 2 else 2 + <int64_t>be16(dat + q), m - q, 0,
                                  fr.r_msg[r], NULL, 0)
                        break
                    ilen = be16(dat + q)
                    e0 = self.nerr
                    raw0 = self.nraw
                    used = self._walk(fr, r, dat + q + 2, ilen, q + 2, side, i)
                    if used != ilen:
                        self.nerr = e0              # a wrong catalog: its value errors are noise
                        self.nraw = raw0
                        self._err(row, E_IMAGE_SHORT if used < 0 else E_IMAGE_LONG,
                                  F_BEFORE if side == 0 else F_AFTER, fr.dpos(r, q), ilen,
                                  used, 0, fr.r_msg[r], NULL, 0)
                    elif side == 0:
                        ok_b = 1
                    else:
                        ok_a = 1
                    q += 2 + ilen
                if bad:                             # the DATA is cut: no image at all
                    ok_a = ok_b = 0
                elif q < m:
                    self._err(row, E_DATA_REST, F_DATA, fr.dpos(r, q), m - q, 0, 0, fr.r_msg[r],
                              NULL, 0)
                if ok_b:
                    bits_set(imgb, row)
                if ok_a:
                    bits_set(imga, row)
                if (ok_b or not has_b) and (ok_a or not has_a):    # every image it carries
                    bits_set(okbm, row)
                    if op == OP_C:
                        bits_set(insbm, row)
                    elif op == OP_U:
                        bits_set(updbm, row)
                        nupd += 1
            for side in range(2):
                # the block's rows with this side's image: every column's rows, less its nulls
                t = row0 - 8 * b0 + i0
                self.nimg[side] = _rows(self.imgbm + side * nbs, NULL, t, t + i1 - i0, t,
                                        self.todoimg + side * BLOCK)
                if side == 0 and not self.want_before:
                    continue                        # not read: null, nothing checked
                for j in range(n):
                    self._column(fr, side, j, i0, i1, row0)
            # the block's validity: where their image was read, less their nulls; then its
            # updates' changed bits, where before and after differ, while the values are in
            # cache. (A byte the block shares with the one before or after is done twice:
            # the bits are or-ed, the rows not yet walked have none.)
            tb0 = ((row0 + i0) >> 3) - b0
            tb1 = ((row0 + i1 - 1) >> 3) - b0 + 1
            for side in range(0 if self.want_before else 1, 2):
                cs = self.cb if side == 0 else self.ca
                img = self.imgbm + side * nbs
                for j in range(n):
                    nul = self.nulbm + (side * n + j) * nbs
                    vd = cs[j].valid + b0
                    for t in range(tb0, tb1):
                        vd[t] |= img[t] & ~nul[t]
            if nupd and self.want_flags and self.want_before:
                for j in range(n):
                    _changed(self.cb + j, self.ca + j, self.cc[j].data, self.updbm + tb0,
                             b0 + tb0, tb1 - tb0)
                nupd = 0
        _or_bits(self.before_v.valid + b0, self.imgbm, nb)
        _or_bits(self.after_v.valid + b0, self.imgbm + nbs, nb)
        # changed / present of the chunk's rows: valid where the images were read, present
        # all true there, changed all true for inserts (updates' bits are set above)
        if self.want_flags:
            _or_bits(self.changed_v.valid + b0, self.okbm, nb)
            _or_bits(self.present_v.valid + b0, self.okbm, nb)
        for j in range(n if self.want_flags else 0):
            _or_bits(self.cc[j].valid + b0, self.okbm, nb)
            _or_bits(self.cp[j].valid + b0, self.okbm, nb)
            _or_bits(self.cp[j].data + b0, self.okbm, nb)
            _or_bits(self.cc[j].data + b0, self.insbm, nb)
        with gil:
            if not self.want_before:
                for j in range(n):
                    if self.cb[j].layout == VAR:
                        offsets_to(self.cb[j].offs, (<Column>self.before[j]).length, row0 + k,
                                   self.cb[j].dlen)
            self._store(self.before, self.cb, row0 + k)
            self._store(self.after, self.ca, row0 + k)
            self._store(self.changed, self.cc, row0 + k)
            self._store(self.present, self.cp, row0 + k)
        self.before_v.length = row0 + k
        self.after_v.length = row0 + k
        self.changed_v.length = row0 + k
        self.present_v.length = row0 + k
        return 0

    cdef inline int64_t _walk(self, Framer fr, int64_t r, const uint8_t* p, int64_t n,
                              int64_t base, int side, int64_t i) except -2 nogil:
        """Where the columns of one image (n bytes at p; base: its offset in the record's
        data; i: the row in the chunk) lie: into vp, where each run of fixed-width columns
        starts (its columns lie at fixed offsets from there, see WCol; `_column` reads their
        null bytes) and where each length-prefixed value lies, with its length into vl and
        its null into the chunk's bitmaps. Returns the bytes the columns use, -1 when they
        need more. Null bytes of length-prefixed columns that are neither X'00' nor X'FF'
        are reported after the walk (rare)."""
        cdef int64_t ncols = self.ncols, nbs = self.nbstride, ii = side * BLOCK + i - self.i0
        # column j of this row: vp[j * BLOCK] (see _column)
        cdef const uint8_t** vp = self.vp + side * ncols * BLOCK + i - self.i0
        cdef int32_t* vl = self.vl + side * ncols * BLOCK + i - self.i0
        cdef const WCol* wc = self.wcol
        cdef const WCol* c
        cdef int64_t j = 0, q = 0, ln, s
        cdef uint8_t nb, odd = 0
        cdef int64_t row = self.row0 + i
        cdef uint8_t bit = <uint8_t>(1 << (row & 7))
        cdef uint8_t* nulls = self.nulbm + side * ncols * nbs - self.bm0 + (row >> 3)
        self.ip[ii] = p
        self.iend[ii] = p + n
        self.rend[ii] = fr.rend(r)
        self.ibase[ii] = base
        while j < ncols:
            c = wc + j
            if c.runlen:                            # fixed-width columns
                if c.runlen > n - q:
                    return -1
                vp[j * BLOCK] = p + q
                q += c.runlen
                j = c.runend
                continue
            nb = 0                                  # a column with a length field
            if c.noff >= 0:
                if q >= n:
                    return -1
                nb = p[q]
                q += 1
            if c.lsz == 4:
                if q + 4 > n:
                    return -1
                ln = be32(p + q)
                s = q + 4
            else:
                if q + 2 > n:
                    return -1
                ln = be16(p + q)
                s = q + 2
            if ln > n - s:
                return -1
            q = s + ln
            vp[j * BLOCK] = p + s
            vl[j * BLOCK] = <int32_t>ln
            if nb:
                nulls[j * nbs] |= bit
                odd |= nb != 0xFF
            j += 1
        if odd and (side or self.want_before):     # (a before image not read: unchecked)
            for j in range(ncols):
                if self.nullable[j] and wc[j].width == 0:
                    s = (vp[j * BLOCK] - p) - self.lsz[j] - 1   # the null byte's offset
                    nb = p[s]
                    if nb != 0 and nb != 0xFF:
                        self._err(row, E_NULL_BYTE,
                                  (F_BEFORE_COL if side == 0 else F_AFTER_COL) + <int32_t>j,
                                  fr.dpos(r, base + s), nb, 0, 0, fr.r_msg[r], NULL, 0)
        return q

    cdef int _column(self, Framer fr, int side, int64_t j, int64_t i0, int64_t i1,
                     int64_t row0) except -1 nogil:
        """Column j of one side's images over the block of chunk rows i0 … i1 - 1: the rows
        that have a value (their image read, the value not null), then one tight loop of the
        column's kind over them. Pointers live in locals: stores through byte pointers would
        otherwise make the compiler load every field of self again after each of them.
        A fixed-width column's value lies at voff from where its run starts (vp); its null
        byte just before it is read here, in one loop over the block."""
        cdef int64_t n = self.ncols, nbs = self.nbstride
        cdef const WCol* c = self.wcol + j
        cdef int64_t voff = c.voff, width = c.width
        cdef const uint8_t** vp = self.vp + (side * n + c.run0) * BLOCK  # block row i: vp[i]
        cdef const int32_t* vl = self.vl + (side * n + j) * BLOCK
        cdef const uint8_t* img = self.imgbm + side * nbs
        cdef uint8_t* nul = self.nulbm + (side * n + j) * nbs
        cdef const uint8_t** iend = self.iend + side * BLOCK
        cdef const int64_t* todo = self.todoimg + side * BLOCK
        cdef int64_t rb = row0 + i0                # the block's first row
        # bit u of the bitmaps is block row u - shift
        cdef int64_t shift = row0 - 8 * self.bm0 + i0, u0 = shift, u1 = shift + i1 - i0
        cdef int64_t nval = self.nimg[side], w, i, row, nh, u
        cdef int64_t* hard = self.hard
        cdef int64_t* td = self.todo
        cdef uint64_t any_null = 0
        cdef uint8_t nb, odd = 0
        if width and c.noff >= 0:                   # the rows whose null byte is X'00'
            nval = 0
            for w in range(self.nimg[side]):
                i = todo[w]
                nb = vp[i][voff - 1]
                td[nval] = i
                nval += nb == 0
                if nb:
                    u = shift + i
                    nul[u >> 3] |= <uint8_t>(1 << (u & 7))
                    odd |= nb ^ 0xFF
            if odd:
                self._null_bytes(fr, side, j, todo, self.nimg[side])
            todo = td
        elif not width:                             # nulls: as _walk found them
            for w in range(u0 >> 6, (u1 + 63) >> 6):
                any_null |= load_le64(nul + 8 * w) & _word_mask(w, u0, u1)
            if any_null:                            # (else: every row with the image)
                nval = _rows(img, nul, u0, u1, shift, td)
                todo = td
        cdef int64_t kind = self.kind[j]
        cdef Col* x = (self.cb if side == 0 else self.ca) + j
        if x.layout == VAR:
            return self._var_column(fr, side, j, i0, i1, row0, todo, nval)
        cdef uint8_t* data = x.data
        cdef const uint8_t* v
        cdef const uint8_t* a = self.asc
        cdef const cdc_cp* cpage = &self.cpage
        cdef bint ok, tsz = kind == K_TSZ
        cdef int64_t iv, us
        cdef double xd
        cdef float fx
        cdef uint64_t bits
        cdef int prec = <int>self.prec[j]
        if kind == K_I16:
            for w in range(nval):
                i = todo[w]
                (<int16_t*>data)[rb + i] = <int16_t>be16(vp[i] + voff)
        elif kind == K_I32:
            for w in range(nval):
                i = todo[w]
                (<int32_t*>data)[rb + i] = <int32_t>be32(vp[i] + voff)
        elif kind == K_I64:
            for w in range(nval):
                i = todo[w]
                (<int64_t*>data)[rb + i] = <int64_t>be64(vp[i] + voff)
        elif kind == K_DEC:                         # the column kernel, then the careful
            nh = _dec_column(vp, voff, width, prec, iend, todo, nval, data + 16 * rb, hard)
            for w in range(nh):                     # one for what it leaves
                i = hard[w]
                v = vp[i] + voff
                if not packed_decimal(v, width, prec, data + 16 * (rb + i), iend[i] - v):
                    self._bad(fr, side, j, i)
        elif kind == K_F32 and self.hfp:
            for w in range(nval):
                i = todo[w]
                xd = hfp32(vp[i] + voff)
                (<float*>data)[rb + i] = <float>xd
                if xd > 3.4028234663852886e38 or xd < -3.4028234663852886e38:
                    self._bad(fr, side, j, i)
        elif kind == K_F32:
            for w in range(nval):
                i = todo[w]
                bits = be32(vp[i] + voff)
                memcpy(&fx, &bits, 4)
                (<float*>data)[rb + i] = fx
        elif kind == K_F64 and self.hfp:
            for w in range(nval):
                i = todo[w]
                (<double*>data)[rb + i] = hfp64(vp[i] + voff)
        elif kind == K_F64:
            for w in range(nval):
                i = todo[w]
                bits = be64(vp[i] + voff)
                memcpy(&xd, &bits, 8)
                (<double*>data)[rb + i] = xd
        elif kind == K_BOOL:
            for w in range(nval):
                i = todo[w]
                row = rb + i
                v = vp[i] + voff
                if v[0] == 1:
                    data[row >> 3] |= <uint8_t>(1 << (row & 7))
                elif v[0] != 0:
                    self._bad(fr, side, j, i)
        elif kind == K_DATE:                        # the SWAR parsers in place, else the
            for w in range(nval):                   # careful ones decide
                i = todo[w]
                v = vp[i] + voff
                if date10_cp(v, 10, cpage, &iv) != 1:
                    if not (parse_date10(v, 10, a, &iv) and iv == <int32_t>iv):
                        self._bad(fr, side, j, i)
                (<int32_t*>data)[rb + i] = <int32_t>iv
        elif kind == K_TIME:
            for w in range(nval):
                i = todo[w]
                v = vp[i] + voff
                if clock_cp(v, 8, cpage, &us, &iv) != 1 or iv != 8:
                    if not parse_time(v, 8, a, &us):
                        self._bad(fr, side, j, i)
                (<int64_t*>data)[rb + i] = us
        else:                                       # TIMESTAMP, with or without zone
            nh = _ts_column(vp, voff, width, iend, todo, nval, tsz, cpage, <int64_t*>data + rb,
                             hard)
            for w in range(nh):                     # what the fast parsers leave
                i = hard[w]
                v = vp[i] + voff
                if not parse_timestamp(v, width, a, tsz, &us):
                    us = 0
                    self._bad(fr, side, j, i)
                (<int64_t*>data)[rb + i] = us
        return 0

    cdef int _var_column(self, Framer fr, int side, int64_t j, int64_t i0, int64_t i1,
                         int64_t row0, const int64_t* todo, int64_t nval) except -1 nogil:
        """`_column` for the kinds with offsets (the nval rows of todo have values): the
        room for the block reserved once, every row's offset written (nulls and rows without
        this image keep the one before). A fixed-width column's (CHAR, GRAPHIC, BINARY)
        values are width bytes at voff from where its run starts."""
        cdef int64_t n = self.ncols, rb = row0 + i0
        cdef const WCol* c = self.wcol + j
        cdef int64_t voff = c.voff, width = c.width
        cdef const uint8_t** vp = self.vp + (side * n + c.run0) * BLOCK  # block row i: vp[i]
        cdef const int32_t* vl = self.vl + (side * n + j) * BLOCK
        cdef const uint8_t** iend = self.iend + side * BLOCK
        cdef Col* cs = self.cb if side == 0 else self.ca
        cdef int64_t kind = self.kind[j]
        cdef int64_t w, i, row, ln, o, need = 0, nxt = rb, dlen
        cdef const uint8_t* v
        cdef const uint8_t* a = self.asc
        cdef const uint8_t* u8 = self.u8
        cdef const uint8_t* u8len = self.u8len
        cdef int what                           # 0 bytes, 1 UTF-16BE, 2 UTF-8 (XML), 3 code page
        cdef cpu8_fn cpu8 = _cpu8_fast
        cdef const uint8_t* rows = self.cprows
        if kind == K_BINARY or kind == K_VARBIN or kind == K_BLOB:
            what = 0
        elif kind == K_GRAPHIC or kind == K_VARGRAPHIC or kind == K_DBCLOB:
            what = 1
        elif kind == K_XML:
            what = 2
        else:
            what = 3
        cdef int64_t text, vmax = width
        if width:
            need = nval * width
        else:
            for w in range(nval):
                ln = vl[todo[w]]
                need += ln
                vmax = max(vmax, ln)
        text = need
        need = 3 * need + 40 if what == 3 else (2 * need if what == 1 else need)
        if cs[j].dlen + need > cs[j].dcap:
            with gil:       # (rare: string data past what the chunk reserved)
                self._grow_var(self.before if side == 0 else self.after, cs, j, need)
        cdef uint8_t* data = cs[j].data
        cdef int32_t* offs = cs[j].offs
        dlen = cs[j].dlen
        if what == 3 and _cprun_fast != NULL and nval and text_run(
                &self.trun, rows, offs, data, dlen, todo, nval, vp, voff, width, vl, iend,
                self.rend + side * BLOCK, vmax, rb, i1 - i0, text, self.latin + side * n + j,
                &o):
            cs[j].dlen = dlen + o
            return 0
        for w in range(nval):
            i = todo[w]
            row = rb + i
            offsets_to(offs, nxt, row, dlen)        # the rows before it without a value
            v = vp[i] + voff
            ln = width if width else vl[i]
            if what == 3 and ln <= 8 and iend[i] - v >= 8 and cp_ascii8(v, ln, a, data + dlen):
                o = ln                              # a code, a flag, a short name
            elif what == 3 and cpu8 != NULL and ln > 8:
                o = cpu8(v, ln, rows, u8, u8len, data + dlen, iend[i] - v)
            elif what == 3:
                o = cp_to_utf8(v, ln, a, u8, u8len, data + dlen, iend[i] - v)
            elif what == 0:
                copy_exact(data + dlen, v, ln)      # (short ones without a libc call)
                o = ln
            elif what == 1:
                o = utf16be_to_utf8(v, ln, data + dlen)
            else:
                o = ln if utf8_valid(v, ln) else -1
                if o >= 0:
                    memcpy(data + dlen, v, ln)
            if o >= 0:
                dlen += o
            else:
                self._bad(fr, side, j, i)
            offs[row + 1] = <int32_t>dlen
            nxt = row + 1
        offsets_to(offs, nxt, row0 + i1, dlen)
        cs[j].dlen = dlen
        return 0

    cdef int _null_bytes(self, Framer fr, int side, int64_t j, const int64_t* todo,
                         int64_t nimg) except -1 nogil:
        """Fixed-width column j's null bytes that are neither X'00' nor X'FF' in side's
        images at the nimg block rows of todo (rare): an error each (the value is null)."""
        cdef int64_t n = self.ncols, w, i, ii, r
        cdef const WCol* c = self.wcol + j
        cdef const uint8_t* p
        for w in range(nimg):
            i = todo[w]
            ii = side * BLOCK + i
            p = self.vp[(side * n + c.run0) * BLOCK + i] + c.voff - 1
            if p[0] != 0 and p[0] != 0xFF:
                r = self.rows[self.i0 + i]
                self._err(self.row0 + self.i0 + i, E_NULL_BYTE,
                          (F_BEFORE_COL if side == 0 else F_AFTER_COL) + <int32_t>j,
                          fr.dpos(r, self.ibase[ii] + (p - self.ip[ii])), p[0], 0, 0,
                          fr.r_msg[r], NULL, 0)
        return 0

    cdef int _bad(self, Framer fr, int side, int64_t j, int64_t i) except -1 nogil:
        """Column j of side's image at block row i holds no valid value of its type: null,
        and an error that shows its bytes."""
        cdef int64_t n = self.ncols, ii = side * BLOCK + i
        cdef int64_t row = self.row0 + self.i0 + i, r = self.rows[self.i0 + i]
        cdef const WCol* c = self.wcol + j
        cdef const uint8_t* v = self.vp[(side * n + c.run0) * BLOCK + i] + c.voff
        cdef int64_t ln = c.width if c.width else self.vl[(side * n + j) * BLOCK + i]
        # the column's entry starts at its null byte, then its length
        cdef int64_t vpos = (v - self.ip[ii]) - self.lsz[j] - self.nullable[j]
        bits_set(self.nulbm + (side * n + j) * self.nbstride - self.bm0, row)
        return self._err(row, E_VALUE, (F_BEFORE_COL if side == 0 else F_AFTER_COL) + <int32_t>j,
                         fr.dpos(r, self.ibase[ii] + vpos), 0, 0, 0, fr.r_msg[r], v, ln)


cdef void text_run_free(TextRun* t) noexcept:
    free(t.scr); free(t.high); free(t.cum)
    t.scr = NULL; t.high = NULL; t.cum = NULL; t.cap = 0


cdef bint text_run(TextRun* t, const uint8_t* rows, int32_t* offs, uint8_t* data, int64_t dlen,
                   const int64_t* todo, int64_t nval, const uint8_t** vp, int64_t voff,
                   int64_t width, const int32_t* vl, const uint8_t** iend,
                   const uint8_t** rend, int64_t vmax, int64_t rb, int64_t nrows, int64_t text,
                   uint8_t* mixed, int64_t* out) except -1 nogil:
    """A code-page text column of a block in one run (where the CPU runs cdc_cp_run_avx2;
    `TableOut._var_column`'s arguments; rows: the code page as cdc_cp_rows; text: the
    values' bytes, vmax the longest value's, room for 3 × text + 40 at data + dlen; rend:
    where the bytes readable from each block row's image end): the values gathered back to
    back, converted at once, their ends then moved on by the Latin-1 letters before them. A
    value is gathered as vmax bytes rounded up to 16 where that many can be read (a loop of
    the same length for each: its exit is not mispredicted), else exactly. The
    nrows rows from rb get their offsets, those without a value the one before. mixed: the
    column's last run had a Latin-1 letter to every four blocks or more, taken as this run's
    guess (cdc_cp_block_avx2) and set here for the next. Returns 1 with the UTF-8 bytes in
    out; 0, with nothing done that counts, when a byte is not a Latin-1 character (or is
    NUL): then the values convert one by one, and their errors name them."""
    cdef int64_t w, i, row, ln, s = 0, nxt = rb, o
    cdef int64_t cap = (vmax + 15) & ~15 if vmax <= 256 else 0
    cdef const uint8_t* v
    if text + cap + 32 > t.cap:
        t.cap = max(text + cap + 32, 2 * t.cap)
        t.scr = <uint8_t*>grow(t.scr, t.cap)
        t.high = <uint32_t*>grow(t.high, (t.cap // 32 + 2) * 4)
        t.cum = <int32_t*>grow(t.cum, (t.cap // 32 + 2) * 4)
    cdef uint8_t* scr = t.scr
    for w in range(nval):
        i = todo[w]
        row = rb + i
        offsets_to(offs, nxt, row, dlen + s)        # the rows before it without a value
        v = vp[i] + voff
        ln = width if width else vl[i]
        if cap and rend[i] - v >= cap:
            copy_16s(scr + s, v, cap)
        else:
            copy_slack(scr + s, v, ln, iend[i] - v)
        s += ln
        offs[row + 1] = <int32_t>(dlen + s)
        nxt = row + 1
    o = _cprun_fast(scr, s, rows, data + dlen, t.high, t.cum, mixed[0])
    if o < 0:
        return 0
    mixed[0] = 4 * (o - s) > (s >> 5)
    offsets_to(offs, nxt, rb + nrows, dlen + s)
    if o != s:
        latin_ends(offs + rb + 1, nrows, dlen, t.high, t.cum)
    out[0] = o
    return 1




cdef struct WCol:
    # one column as _walk finds it. Fixed-width columns in a row (null bytes included) lie at
    # fixed offsets from where their run starts: the run is checked once, its columns need
    # no arithmetic on lengths.
    int32_t width           # fixed width, or 0: a length field of lsz bytes comes first
    int32_t lsz
    int32_t voff            # fixed: the value's offset in its run
    int32_t noff            # the null byte's offset in the run (fixed) or 0 (length field);
                            # -1: not nullable
    int32_t runlen          # on a run's first column: the run's bytes (else 0) and the
    int32_t runend          # column after it
    int32_t run0            # the first column of its run (itself for a length field): _walk
                            # keeps only where a run starts, vp of that column


cdef struct Col:
    # one value column while a chunk is written (see TableOut._load)
    uint8_t* valid
    uint8_t* data
    int32_t* offs
    int64_t dlen, dcap, width
    int layout


cdef inline uint64_t _word_mask(int64_t w, int64_t u0, int64_t u1) noexcept nogil:
    """The bits of bitmap word w that lie in [u0, u1)."""
    cdef uint64_t m = ~<uint64_t>0
    if 64 * w < u0:
        m &= ~<uint64_t>0 << (u0 - 64 * w)
    if 64 * w + 64 > u1:
        m &= ~(~<uint64_t>0 << (u1 - 64 * w))
    return m


cdef inline int64_t _rows(const uint8_t* img, const uint8_t* nul, int64_t u0, int64_t u1,
                          int64_t shift, int64_t* todo) noexcept nogil:
    """Into todo, the bits in [u0, u1) set in img and not in nul (NULL: none), each as
    bit - shift; returns their count."""
    cdef int64_t w, nval = 0
    cdef uint64_t sel
    for w in range(u0 >> 6, (u1 + 63) >> 6):
        sel = load_le64(img + 8 * w) & _word_mask(w, u0, u1)
        if nul != NULL:
            sel &= ~load_le64(nul + 8 * w)
        while sel:
            todo[nval] = 64 * w + _ctz(sel) - shift
            nval += 1
            sel &= sel - 1
    return nval


cdef inline void _or_bits(uint8_t* dst, const uint8_t* src, int64_t n) noexcept nogil:
    cdef int64_t i
    for i in range(n):
        dst[i] |= src[i]


cdef void _changed(const Col* b, const Col* a, uint8_t* chg, const uint8_t* upd, int64_t b0,
                   int64_t nb) noexcept nogil:
    """Into the bitmap chg, the update rows (upd: a bitmap of the chunk's, nb bytes from byte
    b0) where one column's before and after values differ: where one of the two is null, 8
    rows at a time, then where both are valid and their bytes differ (no branch on whether
    they do: about one in ten does)."""
    cdef int64_t t, row, w = b.width, n, ob, oa
    cdef uint8_t m, x, y
    cdef bint diff
    cdef const uint8_t* bv = b.valid + b0
    cdef const uint8_t* av = a.valid + b0
    cdef uint8_t* cg = chg + b0
    cdef const uint8_t* bd = b.data
    cdef const uint8_t* ad = a.data
    # 0: 8 bytes, 1: 4 bytes, 2: other fixed widths, 3: bits, 4: offsets
    cdef int lay = (0 if w == 8 else 1 if w == 4 else 2) if b.layout == FIXED else (
        3 if b.layout == BITS else 4)
    for t in range(nb):
        m = upd[t]
        if not m:
            continue
        x = bv[t]
        y = av[t]
        cg[t] |= m & (x ^ y)
        m &= x & y
        while m:
            row = 8 * (b0 + t) + _ctz(m)
            if lay == 0:
                diff = load_le64(bd + 8 * row) != load_le64(ad + 8 * row)
            elif lay == 1:
                diff = memcmp(bd + 4 * row, ad + 4 * row, 4) != 0    # (one load each)
            elif lay == 2:
                diff = not eq_exact(bd + row * w, ad + row * w, w)
            elif lay == 3:
                diff = ((bd[row >> 3] ^ ad[row >> 3]) >> (row & 7)) & 1
            else:
                ob = b.offs[row]
                oa = a.offs[row]
                n = b.offs[row + 1] - ob
                # the bytes only when the lengths agree: a's value may be shorter than n and
                # end its buffer (ASan: a read past the block, the suite under the sanitizer
                # build, test_lldf_fuzz::test_round_trip_messages)
                diff = n != a.offs[row + 1] - oa or text_differs(bd + ob, ad + oa, n,
                                                                 b.dcap - ob, a.dcap - oa)
            cg[t] |= m & -m & -<uint8_t>diff        # (the lowest bit of m: this row's)
            m &= m - 1
