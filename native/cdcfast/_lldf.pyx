# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True, initializedcheck=False
"""`lldf` kernel (SPEC §5.2, docs/lldf.md).

Two stages:
1. `Framer.scan` cuts a chunk of logical records out of the input: physical records by the
   framing (raw, RDW, VB blocks), segments joined (their data copied into a scratch buffer; an
   unsegmented record's data stays where it is), the change type and DATA length checked, the
   table found by its owner and name bytes in a small hash table. It knows nothing of columns.
2. `TableOut.convert` writes one output table's records of the chunk into Arrow buffers: the
   header field by field over all the chunk's rows (each field's loop has one kind and one
   offset), then the row images in blocks of BLOCK records: each image walked column by
   column (its columns are back to back, each starting where the one before ends) to learn
   where every value lies, then each column converted over the block in one tight loop of
   its kind, while the block's bytes are still in the core's caches.
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
                              dec_column_fn, dec_column_choose,
                              utf16be_to_utf8, civil_days as _civil_days)
# HEADER_MIN, the header's offsets OFF_* and widths LEN_*, the header kinds H_*, the image
# kinds K_*, the framing codes FR_*, the error codes E_*, fields F_* and entry words ERR_*, the
# scan's S_* (their spec: cdcfast/formats/_lldf_codes.py, which cdcfast.formats.lldf reads too)
from cdcfast._lldf_codes cimport *

import os

import numpy as np

from cdcfast._arrow import presize as _presize

cdef extern from *:
    """
    #if defined(__SSE2__)
    #include <emmintrin.h>
    #endif
    /* The 10 bytes at p (16 readable) as 20 upper-case hex digits at out (32 written). */
    static inline void cdc_hex10(const uint8_t* p, char* out)
    {
    #if defined(__SSE2__)
        const __m128i x = _mm_loadu_si128((const __m128i*)p), f = _mm_set1_epi8(0x0F);
        const __m128i hi = _mm_and_si128(_mm_srli_epi16(x, 4), f), lo = _mm_and_si128(x, f);
        const __m128i nine = _mm_set1_epi8(9), zero = _mm_set1_epi8('0'), gap = _mm_set1_epi8(7);
        __m128i a = _mm_unpacklo_epi8(hi, lo), b = _mm_unpackhi_epi8(hi, lo);
        a = _mm_add_epi8(_mm_add_epi8(a, zero), _mm_and_si128(_mm_cmpgt_epi8(a, nine), gap));
        b = _mm_add_epi8(_mm_add_epi8(b, zero), _mm_and_si128(_mm_cmpgt_epi8(b, nine), gap));
        _mm_storeu_si128((__m128i*)out, a);
        _mm_storeu_si128((__m128i*)(out + 16), b);
    #else
        static const char cdc_hex_upper[] = "0123456789ABCDEF";
        for (int j = 0; j < 10; j++) {
            out[2 * j] = cdc_hex_upper[p[j] >> 4];
            out[2 * j + 1] = cdc_hex_upper[p[j] & 15];
        }
    #endif
    }
    """
    void hex10 "cdc_hex10"(const uint8_t* p, char* out) nogil
    void prefetch "__builtin_prefetch"(const void* p) nogil

cdef extern from "cdcfast/_text.h":
    ctypedef struct cdc_cp:
        uint8_t zone, minus, dot, colon, space, t, plus, z
    int date10_cp "cdc_date10_cp"(const uint8_t* p, int64_t n, const cdc_cp* cp,
                                  int64_t* days) nogil
    int clock_cp "cdc_clock_cp"(const uint8_t* p, int64_t n, const cdc_cp* cp, int64_t* us,
                                int64_t* used) nogil
    ctypedef int (*ts_fn "cdc_timestamp_fn")(const uint8_t* p, int64_t n, int with_zone,
                                             const cdc_cp* cp, int64_t* us,
                                             int64_t readable) noexcept nogil
    ts_fn _ts_choose "cdc_timestamp_choose"(int allow_simd) noexcept nogil
    ctypedef int64_t (*tscol_fn "cdc_ts_column_fn")(const uint8_t** vp, int64_t voff,
                                                    int64_t width, const uint8_t** iend,
                                                    const int64_t* todo, int64_t nval,
                                                    int with_zone, const cdc_cp* cp,
                                                    int64_t* out, int64_t* hard) noexcept nogil
    tscol_fn _tscol_choose "cdc_ts_column_choose"(int allow_simd) noexcept nogil

cdef extern from "cdcfast/_utf8.h":
    ctypedef int64_t (*cpu8_fn "cdc_cp_utf8_fn")(const uint8_t* p, int64_t n,
                                                 const uint8_t* rows, const uint8_t* u8,
                                                 const uint8_t* u8len, uint8_t* out,
                                                 int64_t readable) noexcept nogil
    cpu8_fn _cpu8_choose "cdc_cp_utf8_choose"(int allow_simd) noexcept nogil
    void cp_rows "cdc_cp_rows"(const uint8_t* u8, const uint8_t* u8len,
                               uint8_t* rows) noexcept nogil
    ctypedef int64_t (*cprun_fn "cdc_cp_run_fn")(const uint8_t* p, int64_t n,
                                                 const uint8_t* rows, uint8_t* out,
                                                 uint32_t* high, int32_t* cum,
                                                 int mixed) noexcept nogil
    cprun_fn _cprun_choose "cdc_cp_run_choose"(int allow_simd) noexcept nogil
    void latin_ends "cdc_latin_ends"(int32_t* offs, int64_t n, int64_t base,
                                     const uint32_t* high, const int32_t* cum) noexcept nogil

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


def simd_level():
    """The SIMD forms this CPU runs: (timestamps 16 bytes at a time, code page text 32 bytes
    at a time, packed decimals 16 bytes at a time)."""
    return (_ts_column != _tscol_choose(0), _cpu8_fast != NULL,
            _dec_column != dec_column_choose(0))


def timestamp_paths(bytes buf, int64_t n, bint zone, bytes asc, bytes cpchars):
    """For tests: the timestamp text buf[:n] (all of buf readable) through the fast parser
    this CPU runs and through the careful one: (fast's 1 or -1, its µs, careful's verdict,
    its µs)."""
    cdef cdc_cp cp
    cdef int64_t fast = 0, careful = 0
    cdef const uint8_t* p = buf
    assert 0 <= n <= len(buf)
    cp.zone = cpchars[0] & 0xF0
    cp.minus, cp.dot, cp.colon, cp.space = cpchars[1], cpchars[2], cpchars[3], cpchars[4]
    cp.t, cp.plus, cp.z = cpchars[5], cpchars[6], cpchars[7]
    rc = _ts_fast(p, n, zone, &cp, &fast, len(buf))
    ok = parse_timestamp(p, n, asc, zone, &careful)
    return rc, fast if rc == 1 else None, bool(ok), careful if ok else None


def decimal_paths(bytes buf, int64_t n, int prec):
    """For tests: the packed decimal buf[:n] (all of buf readable) through the column kernel
    this CPU runs (None where it leaves the value to the careful one) and through the careful
    one alone (None where it is not a number)."""
    cdef const uint8_t* p = buf
    cdef const uint8_t* vp[1]
    cdef const uint8_t* ie[1]
    cdef int64_t todo[1]
    cdef int64_t hard[1]
    cdef uint8_t out[16]
    assert 1 <= n <= 16 and n <= len(buf)
    vp[0] = p
    ie[0] = p + len(buf)
    todo[0] = 0
    fast = None
    if _dec_column(vp, 0, n, prec, ie, todo, 1, out, hard) == 0:
        fast = int.from_bytes(out[:16], "little", signed=True)
    careful = None
    if packed_decimal(p, n, prec, out, n):          # (readable n: byte by byte)
        careful = int.from_bytes(out[:16], "little", signed=True)
    return fast, careful


def civil_days(int64_t y, int64_t m, int64_t d):
    """For tests: days since 1970-01-01 of y-m-d as every date and timestamp kernel gets them
    (a table of months, else the formula), None where the date does not exist."""
    cdef int64_t days
    return days if _civil_days(y, m, d, &days) else None


def codepage_paths(bytes buf, int64_t n, bytes asc, bytes u8, bytes u8len):
    """For tests: the code page text buf[:n] (all of buf readable) as UTF-8 through the
    SIMD conversion (None where this CPU runs none), the one-word conversion of values of
    up to 8 bytes (None where it does not take the value, as _var_column calls it) and the
    scalar one (None for -1)."""
    cdef uint8_t rows[512]
    cdef const uint8_t* p = buf
    cdef bytearray out = bytearray(3 * n + 64)
    cdef uint8_t* o = out
    cdef int64_t k
    assert 0 <= n <= len(buf)
    simd = None
    if _cpu8_fast != NULL:
        cp_rows(u8, u8len, rows)
        k = _cpu8_fast(p, n, rows, u8, u8len, o, len(buf))
        simd = bytes(out[:k]) if k >= 0 else None
    word = None
    if n <= 8 and len(buf) >= 8 and cp_ascii8(p, n, asc, o):
        word = bytes(out[:n])
    k = cp_to_utf8(p, n, asc, u8, u8len, o, len(buf))
    return simd, word, bytes(out[:k]) if k >= 0 else None

# ops
cdef enum:
    OP_NONE = 0       # unknown change type (or a corrupt record)
    OP_C = 1
    OP_U = 2
    OP_D = 3
    OP_T = 4
    OP_DDL = 5
    OP_MSG = 6

cdef enum:
    KEY = 2 + LEN_OWNER + LEN_NAME   # a table key: owner length, name length, owner, name
    RAW_SHOWN = 41    # bytes kept to show a bad value (describe() shows 40, then …)
    PREFETCH = 4096   # the framer touches the input this far ahead
    BLOCK = 128       # _images walks this many records, then converts their values column by
                      # column (their data stays in the core's caches; 32 and 64 were slower,
                      # 256 no faster)
    T_LOOKED = 1
    T_UNKNOWN = 2

cdef extern from *:
    """
    static const char cdc_lldf_optext[7][8] = {"", "c", "u", "d", "t", "ddl", "message"};
    static const long long cdc_lldf_oplen[7] = {0, 1, 1, 1, 1, 3, 7};
    #define cdc_lldf_optext8 ((const char*)cdc_lldf_optext)
    """
    const char* OPTEXT "cdc_lldf_optext8"       # op's text, 8 bytes each (zero-padded)
    const long long* OPLEN "cdc_lldf_oplen"

# the header of a record that could not be framed: HEADER_MIN zero bytes (its BIN fields read
# zero where null)
cdef uint8_t ZERO_HEADER[HEADER_MIN]

cdef extern from *:
    """
    #define CDC_LLDF_SEEN 4     /* the values a CHAR header field remembers */

    /* A value of a CHAR header field: its bytes, as the field's two words of the header
     * masked (see cdc_lldf_charf), and its text. */
    typedef struct {
        uint64_t a1, a2;
        uint64_t t1, t2;            /* its text (mode 1) */
        int64_t pn;                 /* its text's bytes */
        int64_t pos;                /* where its text was first written (mode 2) */
        int64_t mode;               /* 0: null (offsets only), 1: text of at most 16 bytes
                                       (from t1, t2), 2: longer (copied) */
    } cdc_lldf_value;

    /* A CHAR header field (at most 16 bytes) over a chunk: where its bytes lie, as two 8-byte
     * words of the header (they may overlap; a field under 8 bytes is the top of the word that
     * ends where it ends, or near the header's start the bottom of the one that starts there),
     * the last CDC_LLDF_SEEN values converted (a ring), and its output: text appended at
     * data + dlen, chunk row i's end at offs[i]. */
    typedef struct {
        int64_t off1, off2;
        uint64_t m1, m2;            /* the field's bytes in each word */
        int64_t framed;             /* every row has its header (no NULL in hp) */
        int64_t nseen, nxt;
        cdc_lldf_value seen[CDC_LLDF_SEEN];
        uint8_t* data;
        int64_t dlen;
        int32_t* offs;
    } cdc_lldf_charf;

    /* The rows from i on (below k, headers at hp[row]) that repeat v: its text appended for
     * each, the row's end written to offs[row]. Returns the first row that does not repeat it
     * (or has no header). Text of up to 16 bytes comes from registers (16 bytes written a
     * row: the output has that slack); longer text from the row before. One loop for each
     * shape (one word or two; no text, 8 bytes, 16, longer; a NULL header possible or not),
     * its values in registers. */
    static inline __attribute__((always_inline)) int64_t cdc_lldf_repeat_loop(
        const uint8_t* const* hp, int64_t i, int64_t k, const cdc_lldf_charf* f,
        const cdc_lldf_value* v, int64_t* dlen, const int two, const int copy,
        const int framed)
    {
        const int64_t off1 = f->off1, off2 = f->off2, pn = v->pn;
        const uint64_t m1 = f->m1, m2 = f->m2, a1 = v->a1, a2 = v->a2;
        const uint64_t t1 = v->t1, t2 = v->t2;
        uint8_t* const data = f->data;
        int32_t* const offs = f->offs;
        int64_t d = *dlen;
        for (; i < k; i++) {
            const uint8_t* h = hp[i];
            uint64_t x1, x2;
            if (!framed && h == NULL)
                break;
            memcpy(&x1, h + off1, 8);
            if (two) {
                memcpy(&x2, h + off2, 8);
                if (((x1 & m1) ^ a1) | ((x2 & m2) ^ a2))
                    break;
            } else if ((x1 & m1) != a1) {
                break;
            }
            if (copy == 8 || copy == 16)
                memcpy(data + d, &t1, 8);
            if (copy == 16)
                memcpy(data + d + 8, &t2, 8);
            if (copy == 17)
                cdc_copy_exact(data + d, data + d - pn, pn);
            if (copy)
                d += pn;
            offs[i] = (int32_t)d;
        }
        *dlen = d;
        return i;
    }

    /* The rows from i on whose field holds a value seen (converted before, in this chunk):
     * each takes that value's text. Returns the first row whose value was not
     * seen (the caller converts it and adds it to the ring), or k. Most rows repeat the row
     * before (a transaction's, a connection's values) and stay in one repeat loop; a value
     * that comes back (connections interleave) costs a look through the ring. */
    static int64_t cdc_lldf_char_rows(const uint8_t* const* hp, int64_t i, int64_t k,
                                      cdc_lldf_charf* f)
    {
        const int two = f->off1 != f->off2;
        int64_t d = f->dlen;
        while (i < k) {
            const uint8_t* h = hp[i];
            const cdc_lldf_value* v = NULL;
            uint64_t x1, x2;
            int64_t e;
            if (h == NULL) {
                f->offs[i++] = (int32_t)d;
                continue;
            }
            memcpy(&x1, h + f->off1, 8);
            memcpy(&x2, h + f->off2, 8);
            x1 &= f->m1;
            x2 &= f->m2;
            for (int64_t t = 0; t < f->nseen; t++)
                if (f->seen[t].a1 == x1 && f->seen[t].a2 == x2) {
                    v = &f->seen[t];
                    break;
                }
            if (v == NULL)
                break;
            /* (the repeat loop takes row i at least: it tests the words just matched) */
            if (v->mode == 2) {             /* this row's text from its first copy */
                cdc_copy_exact(f->data + d, f->data + v->pos, v->pn);
                d += v->pn;
                f->offs[i++] = (int32_t)d;
            }
            const int copy = v->mode == 0 ? 0 : v->mode == 2 ? 17 : v->pn <= 8 ? 8 : 16;
            #define CDC_REPEAT(tw, fr) \
                switch (copy) { \
                case 0: e = cdc_lldf_repeat_loop(hp, i, k, f, v, &d, tw, 0, fr); break; \
                case 8: e = cdc_lldf_repeat_loop(hp, i, k, f, v, &d, tw, 8, fr); break; \
                case 16: e = cdc_lldf_repeat_loop(hp, i, k, f, v, &d, tw, 16, fr); break; \
                default: e = cdc_lldf_repeat_loop(hp, i, k, f, v, &d, tw, 17, fr); }
            if (f->framed && two)
                CDC_REPEAT(1, 1)
            else if (f->framed)
                CDC_REPEAT(0, 1)
            else if (two)
                CDC_REPEAT(1, 0)
            else
                CDC_REPEAT(0, 0)
            #undef CDC_REPEAT
            i = e;
        }
        f->dlen = d;
        return i;
    }
    """
    int CHAR_SEEN "CDC_LLDF_SEEN"
    ctypedef struct cdc_lldf_value:
        uint64_t a1, a2, t1, t2
        int64_t pn, pos, mode
    ctypedef struct cdc_lldf_charf:
        int64_t off1, off2
        uint64_t m1, m2
        int64_t framed, nseen, nxt
        cdc_lldf_value seen[4]      # (CDC_LLDF_SEEN)
        uint8_t* data
        int64_t dlen
        int32_t* offs
    int64_t char_rows "cdc_lldf_char_rows"(const uint8_t** hp, int64_t i, int64_t k,
                                           cdc_lldf_charf* f) noexcept nogil



cdef struct Phys:
    # one physical record, or a span that cannot be framed (err != 0)
    int64_t p, end        # its bytes (p: its RDW in rdw/vb framing)
    int64_t h, L, seglen  # header start, LENGTH, SEGLEN
    int32_t err, field
    int64_t pos, a, b, c, rawpos, rawlen


cdef inline uint8_t _op_of(uint8_t c0, uint8_t c1) noexcept nogil:
    """CHANGE TYPE (as ASCII) → op (OP_NONE when unknown)."""
    if c0 == 85 and c1 == 66:                       # UB
        return OP_U
    if c0 == 73 and (c1 == 32 or c1 == 76):         # I, IL
        return OP_C
    if c0 == 68:
        if c1 == 32:                                # D
            return OP_D
        if c1 == 77 or c1 == 84 or c1 == 82:        # DM, DT, DR
            return OP_T
        return OP_NONE
    if c0 == 67 and c1 == 79:                       # CO
        return OP_DDL
    if c0 == 69 or (c0 == 67 and c1 == 77) or (c0 == 83 and c1 == 67):   # E?, CM, SC
        return OP_MSG
    return OP_NONE


@cython.final
cdef class Framer:
    """Stage 1 over one Part: logical records, chunk by chunk."""
    cdef object keep
    cdef const uint8_t* data
    cdef int64_t nmsg
    cdef const int64_t* moff
    cdef const uint8_t* mvalid
    cdef const uint8_t* asc
    cdef const uint8_t* mframing    # each message's framing code
    cdef int framing                # the current message's
    cdef readonly int64_t msg, pos, tombstones
    cdef public int64_t seq         # the next logical record's ordinal (the caller may start it)
    cdef int64_t mend, bend
    cdef int64_t pf                 # bytes before this are prefetched
    cdef bint in_msg
    cdef Phys peek
    cdef bint have_peek
    cdef bint staged
    # tables: a hash of KEY-byte keys -> table id; names to write per table id
    cdef uint8_t* keys
    cdef int32_t* key_tid
    cdef int64_t hcap, nkeys
    cdef uint8_t lastkey[KEY]
    cdef int32_t last_tid
    cdef uint8_t pend[KEY]
    # table id -> its output names in `nbuf`: schema (length -1: null) and table
    cdef int64_t* t_sch
    cdef int64_t* t_schlen
    cdef int64_t* t_tab
    cdef int64_t* t_tablen
    cdef int64_t ntid
    cdef uint8_t* t_flags             # per table id: T_LOOKED, T_UNKNOWN
    cdef public int64_t n_records, n_control, n_unknown   # since the caller last zeroed them
    cdef uint8_t* nbuf
    cdef int64_t nlen
    cdef readonly int64_t maxname
    # the chunk: logical records
    cdef readonly int64_t nrec, rcap
    cdef int64_t* r_msg
    cdef int64_t* r_seq
    cdef int64_t* r_p
    cdef int64_t* r_end
    cdef int64_t* r_h
    cdef int64_t* r_L
    cdef int64_t* r_dat
    cdef int64_t* r_dlen
    cdef int32_t* r_nseg
    cdef int64_t* r_seg0
    cdef int32_t* r_tab
    cdef uint8_t* r_op
    cdef int32_t* r_err
    cdef int32_t* r_efield
    cdef int64_t* r_epos
    cdef int64_t* r_ea
    cdef int64_t* r_eb
    cdef int64_t* r_ec
    cdef int64_t* r_rawpos
    cdef int64_t* r_rawlen
    # segments of the chunk's segmented records, and their joined data
    cdef int64_t nseg, segcap
    cdef int64_t* s_log
    cdef int64_t* s_phys
    cdef uint8_t* scratch
    cdef const uint8_t* dend        # where the input's bytes end
    cdef int64_t slen, scap

    def __cinit__(self, data, offsets, valid, framings, bytes asc):
        """`framings`: a uint8 framing code per message (formats/lldf.py message_framings)."""
        cdef const uint8_t[::1] view
        cdef const int64_t[::1] offs = offsets
        cdef const uint8_t[::1] fv = framings
        if len(fv) != len(offsets) - 1:
            raise ValueError("one framing code per message")
        self.keep = (data, offsets, valid, framings, asc)
        self.data = NULL
        self.dend = NULL
        if len(data):
            view = data
            self.data = &view[0]
            self.dend = self.data + len(view)
        self.moff = &offs[0]
        self.nmsg = len(offsets) - 1
        self.mvalid = NULL
        cdef const uint8_t[::1] vv
        if valid is not None:
            vv = valid
            self.mvalid = &vv[0]
        self.asc = asc
        self.mframing = &fv[0] if len(fv) else NULL
        self.framing = FR_RAW
        self.msg = -1
        self.in_msg = 0
        cdef int64_t i
        self.hcap = 64
        self.keys = <uint8_t*>grow(NULL, self.hcap * KEY)
        self.key_tid = <int32_t*>grow(NULL, self.hcap * 4)
        for i in range(self.hcap):
            self.key_tid[i] = -1
        self.last_tid = -1
        self._reserve(1024)

    def __dealloc__(self):
        free(self.keys); free(self.key_tid)
        free(self.r_msg); free(self.r_seq); free(self.r_p); free(self.r_end); free(self.r_h)
        free(self.r_L); free(self.r_dat); free(self.r_dlen); free(self.r_nseg)
        free(self.r_seg0); free(self.r_tab); free(self.r_op); free(self.r_err)
        free(self.r_efield); free(self.r_epos); free(self.r_ea); free(self.r_eb)
        free(self.r_ec); free(self.r_rawpos); free(self.r_rawlen)
        free(self.s_log); free(self.s_phys); free(self.scratch)
        free(self.t_sch); free(self.t_schlen); free(self.t_tab); free(self.t_tablen)
        free(self.t_flags)
        free(self.nbuf)

    cdef int _reserve(self, int64_t n) except -1:
        if n <= self.rcap:
            return 0
        cdef int64_t c = max(n, 2 * self.rcap)
        self.r_msg = <int64_t*>grow(self.r_msg, c * 8)
        self.r_seq = <int64_t*>grow(self.r_seq, c * 8)
        self.r_p = <int64_t*>grow(self.r_p, c * 8)
        self.r_end = <int64_t*>grow(self.r_end, c * 8)
        self.r_h = <int64_t*>grow(self.r_h, c * 8)
        self.r_L = <int64_t*>grow(self.r_L, c * 8)
        self.r_dat = <int64_t*>grow(self.r_dat, c * 8)
        self.r_dlen = <int64_t*>grow(self.r_dlen, c * 8)
        self.r_nseg = <int32_t*>grow(self.r_nseg, c * 4)
        self.r_seg0 = <int64_t*>grow(self.r_seg0, c * 8)
        self.r_tab = <int32_t*>grow(self.r_tab, c * 4)
        self.r_op = <uint8_t*>grow(self.r_op, c)
        self.r_err = <int32_t*>grow(self.r_err, c * 4)
        self.r_efield = <int32_t*>grow(self.r_efield, c * 4)
        self.r_epos = <int64_t*>grow(self.r_epos, c * 8)
        self.r_ea = <int64_t*>grow(self.r_ea, c * 8)
        self.r_eb = <int64_t*>grow(self.r_eb, c * 8)
        self.r_ec = <int64_t*>grow(self.r_ec, c * 8)
        self.r_rawpos = <int64_t*>grow(self.r_rawpos, c * 8)
        self.r_rawlen = <int64_t*>grow(self.r_rawlen, c * 8)
        self.rcap = c
        return 0

    # -- tables ----------------------------------------------------------------------------
    cdef inline uint64_t _hash(self, const uint8_t* k) noexcept nogil:
        cdef uint64_t h = 1469598103934665603ULL
        cdef int i
        for i in range(KEY):
            h = (h ^ k[i]) * 1099511628211ULL
        return h

    cdef int32_t _lookup(self, const uint8_t* k) noexcept nogil:
        cdef uint64_t i = self._hash(k) & (self.hcap - 1)
        while self.key_tid[i] >= 0:
            if eq_exact(self.keys + i * KEY, k, KEY):
                return self.key_tid[i]
            i = (i + 1) & (self.hcap - 1)
        return -1

    cdef int _insert(self, const uint8_t* k, int32_t tid) except -1:
        cdef int64_t old = self.hcap, j
        cdef uint8_t* okeys
        cdef int32_t* otid
        cdef uint64_t i
        if 2 * (self.nkeys + 1) > self.hcap:
            okeys, otid = self.keys, self.key_tid
            self.hcap = 2 * old
            self.keys = <uint8_t*>grow(NULL, self.hcap * KEY)
            self.key_tid = <int32_t*>grow(NULL, self.hcap * 4)
            for j in range(self.hcap):
                self.key_tid[j] = -1
            self.nkeys = 0
            for j in range(old):
                if otid[j] >= 0:
                    self._insert(okeys + j * KEY, otid[j])
            free(okeys)
            free(otid)
        i = self._hash(k) & (self.hcap - 1)
        while self.key_tid[i] >= 0:
            i = (i + 1) & (self.hcap - 1)
        memcpy(self.keys + i * KEY, k, KEY)
        self.key_tid[i] = tid
        self.nkeys += 1
        return 0

    cdef inline void _key(self, int64_t h, uint8_t* k) noexcept nogil:
        cdef const uint8_t* d = self.data
        cdef int64_t olen = be16(d + h + OFF_OWNERLEN), nlen = be16(d + h + OFF_NAMELEN)
        if olen > LEN_OWNER:
            olen = LEN_OWNER
        if nlen > LEN_NAME:
            nlen = LEN_NAME
        memset(k, 0, KEY)
        k[0] = <uint8_t>olen
        k[1] = <uint8_t>nlen
        copy_exact(k + 2, d + h + OFF_OWNER, olen)  # (short: without a libc call)
        copy_exact(k + 2 + LEN_OWNER, d + h + OFF_NAME, nlen)

    def pending_names(self):
        """(owner bytes, name bytes) of the record waiting for its table to be registered."""
        return (bytes(self.pend[2:2 + self.pend[0]]),
                bytes(self.pend[2 + LEN_OWNER:2 + LEN_OWNER + self.pend[1]]))

    def add_name(self, int32_t tid, schema, bytes table, bint looked=True,
                 bint unknown=False):
        """Register the pending key as table `tid` (its output names: schema bytes or None
        for a bare name, table bytes). `looked`: the call looks at its records (its control
        records count in n_control); `unknown`: the catalog lacks it (n_unknown)."""
        cdef int64_t i
        cdef bytes sch = schema if schema is not None else b""
        self._insert(self.pend, tid)
        if tid >= self.ntid:
            n = max(tid + 1, 2 * self.ntid, 16)
            self.t_sch = <int64_t*>grow(self.t_sch, n * 8)
            self.t_schlen = <int64_t*>grow(self.t_schlen, n * 8)
            self.t_tab = <int64_t*>grow(self.t_tab, n * 8)
            self.t_tablen = <int64_t*>grow(self.t_tablen, n * 8)
            self.t_flags = <uint8_t*>grow(self.t_flags, n)
            for i in range(self.ntid, n):
                self.t_schlen[i] = -1
                self.t_tablen[i] = 0
                self.t_flags[i] = 0
            self.ntid = n
        self.nbuf = <uint8_t*>grow(self.nbuf, self.nlen + len(sch) + len(table))
        self.t_sch[tid] = self.nlen
        self.t_schlen[tid] = len(sch) if schema is not None else -1
        memcpy(self.nbuf + self.nlen, <const char*>sch, len(sch))
        self.nlen += len(sch)
        self.t_tab[tid] = self.nlen
        self.t_tablen[tid] = len(table)
        memcpy(self.nbuf + self.nlen, <const char*>table, len(table))
        self.nlen += len(table)
        self.maxname = max(self.maxname, len(sch), len(table))
        self.t_flags[tid] = (T_LOOKED if looked else 0) | (T_UNKNOWN if unknown else 0)

    # -- framing ---------------------------------------------------------------------------
    cdef inline void _bad(self, Phys* ph, int32_t err, int32_t field, int64_t p, int64_t end,
                          int64_t pos, int64_t a, int64_t b) noexcept nogil:
        ph.err = err
        ph.field = field
        ph.p = p
        ph.end = end
        ph.pos = pos
        ph.a = a
        ph.b = b
        ph.c = 0
        ph.rawpos = pos
        ph.rawlen = 0

    cdef int _dw(self, Phys* ph, int64_t p, int64_t limit, int32_t field,
                 int64_t* length) noexcept nogil:
        """A descriptor word at p (BDW or RDW) against `limit`: 1 with its length, 0 with the
        error in ph (whose span the caller sets)."""
        cdef const uint8_t* d = self.data
        cdef int64_t left = limit - p, n
        if left < 4:
            self._bad(ph, E_DW_SHORT, field, p, limit, p, 0, left)
            return 0
        if field == F_BDW and d[p] & 0x80:
            n = be32(d + p) & 0x7FFFFFFF
        else:
            n = be16(d + p)
            if n >= 4 and (d[p + 2] or d[p + 3]):
                self._bad(ph, E_DW_RESERVED, field, p, limit, p, n, left)
                ph.rawpos = p + 2
                ph.rawlen = 2
                return 0
        if n < 4:
            self._bad(ph, E_DW_SHORT, field, p, limit, p, n, left)
            return 0
        if n > left:
            self._bad(ph, E_DW_CUT if field == F_BDW or self.framing == FR_RDW else E_BLOCK_FILL,
                      field, p, limit, p, n, left)
            return 0
        length[0] = n
        return 1

    cdef int _body(self, Phys* ph, int64_t p, int64_t n) noexcept nogil:
        """The record behind an RDW at p of n bytes: 1, or 0 with the error in ph."""
        cdef const uint8_t* d = self.data
        cdef int64_t h = p + 4, blen = n - 4
        cdef int64_t L = be16(d + h + OFF_LENGTH) if blen >= 2 else 0
        cdef int64_t seglen
        if L < HEADER_MIN:
            self._bad(ph, E_HDR_LENGTH, F_LENGTH, p, p + n, h, L, 0)
            return 0
        if L > blen:
            self._bad(ph, E_HDR_CUT, F_LENGTH, p, p + n, h, L, blen)
            return 0
        seglen = be16(d + h + OFF_SEGLEN)
        if L + seglen != blen:
            self._bad(ph, E_SEGLEN, F_SEGLEN, p, p + n, h + OFF_SEGLEN, L, seglen)
            ph.c = blen
            return 0
        ph.err = 0
        ph.p = p
        ph.end = p + n
        ph.h = h
        ph.L = L
        ph.seglen = seglen
        return 1

    cdef int _next_phys(self, Phys* ph) noexcept nogil:
        """The next physical record of the current message: 1 a record, 2 a span that cannot
        be framed (ph.err), 0 the message is over."""
        cdef const uint8_t* d = self.data
        cdef int64_t p = self.pos, left, L, seglen, n
        cdef int64_t ahead = p + PREFETCH, pf = self.pf
        if ahead > self.mend:
            ahead = self.mend
        while pf < ahead:
            prefetch(d + pf)
            pf += 64
        self.pf = pf
        if self.framing == FR_RAW:
            if p >= self.mend:
                return 0
            left = self.mend - p
            self.pos = self.mend                 # unless a record frames, the rest is lost
            if left < 2:
                self._bad(ph, E_RAW_REST, F_LENGTH, p, self.mend, p, left, 0)
                return 2
            L = be16(d + p + OFF_LENGTH)
            if L < HEADER_MIN:
                self._bad(ph, E_HDR_LENGTH, F_LENGTH, p, self.mend, p, L, 0)
                return 2
            if L > left:
                self._bad(ph, E_HDR_CUT, F_LENGTH, p, self.mend, p, L, left)
                return 2
            seglen = be16(d + p + OFF_SEGLEN)
            if L + seglen > left:
                self._bad(ph, E_REC_CUT, F_SEGLEN, p, self.mend, p + OFF_SEGLEN, L + seglen, left)
                return 2
            ph.err = 0
            ph.p = p
            ph.h = p
            ph.L = L
            ph.seglen = seglen
            ph.end = p + L + seglen
            self.pos = ph.end
            return 1
        if self.framing == FR_RDW:
            if p >= self.mend:
                return 0
            if not self._dw(ph, p, self.mend, F_RDW, &n):
                self.pos = self.mend
                return 2
            self.pos = p + n
            return 1 if self._body(ph, p, n) else 2
        while True:                               # vb
            if self.bend < 0 or p >= self.bend:
                if p >= self.mend:
                    return 0
                if not self._dw(ph, p, self.mend, F_BDW, &n):
                    self.pos = self.mend
                    return 2
                self.bend = p + n
                p += 4
                self.pos = p
                continue
            if not self._dw(ph, p, self.bend, F_RDW, &n):
                self.pos = self.bend
                return 2
            self.pos = p + n
            return 1 if self._body(ph, p, n) else 2

    cdef bint _next_message(self) noexcept nogil:
        """Open the next message that is not a tombstone; 0 when there is none."""
        while True:
            self.msg += 1
            if self.msg >= self.nmsg:
                self.msg = self.nmsg
                return 0
            if self.mvalid != NULL and not self.mvalid[self.msg]:
                self.tombstones += 1
                continue
            self.pos = self.moff[self.msg]
            self.mend = self.moff[self.msg + 1]
            self.framing = self.mframing[self.msg]
            self.bend = -1
            self.pf = self.pos
            return 1

    # -- logical records -------------------------------------------------------------------
    cdef int _seg(self, int64_t r, int64_t log, int64_t phys) except -1:
        if self.nseg >= self.segcap:
            self.segcap = max(64, 2 * self.segcap)
            self.s_log = <int64_t*>grow(self.s_log, self.segcap * 8)
            self.s_phys = <int64_t*>grow(self.s_phys, self.segcap * 8)
        self.s_log[self.nseg] = log
        self.s_phys[self.nseg] = phys
        self.nseg += 1
        return 0

    cdef int _append(self, const uint8_t* p, int64_t n) except -1:
        if self.slen + n > self.scap:
            self.scap = max(self.slen + n, 2 * self.scap, 4096)
            self.scratch = <uint8_t*>grow(self.scratch, self.scap)
        memcpy(self.scratch + self.slen, p, n)
        self.slen += n
        return 0

    cdef inline void _error(self, int64_t r, int32_t err, int32_t field, int64_t pos,
                            int64_t a, int64_t b) noexcept nogil:
        self.r_err[r] = err
        self.r_efield[r] = field
        self.r_epos[r] = pos
        self.r_ea[r] = a
        self.r_eb[r] = b
        self.r_ec[r] = 0
        self.r_rawpos[r] = pos
        self.r_rawlen[r] = 0

    cdef void _corrupt(self, int64_t r, Phys* ph) noexcept nogil:
        self.r_tab[r] = -1
        self.r_op[r] = OP_NONE
        self.r_p[r] = ph.p
        self.r_end[r] = ph.end
        self.r_nseg[r] = 0
        self._error(r, ph.err, ph.field, ph.pos, ph.a, ph.b)
        self.r_ec[r] = ph.c
        self.r_rawpos[r] = ph.rawpos
        self.r_rawlen[r] = ph.rawlen

    cdef int _logical(self, int64_t r, Phys* first) except -1:
        """Record r from the physical record `first`, joined with its segments."""
        cdef const uint8_t* d = self.data
        cdef int64_t h = first.h
        cdef int64_t T = be16(d + h + OFF_TOTALSEGS), k = be16(d + h + OFF_SEGNUM), expect
        cdef Phys nx
        cdef int st
        self.r_p[r] = first.p
        self.r_end[r] = first.end
        self.r_h[r] = h
        self.r_L[r] = first.L
        self.r_dat[r] = h + first.L
        self.r_dlen[r] = first.seglen
        self.r_nseg[r] = 0
        self.r_err[r] = 0
        if T > 1 and k != 1:
            self._error(r, E_SEG_ALONE, F_SEGNUM, h + OFF_SEGNUM, k, T)
        elif T > 1:
            self.r_nseg[r] = 1
            self.r_seg0[r] = self.nseg
            self.r_dat[r] = self.slen
            self._seg(r, 0, h + first.L)
            self._append(d + h + first.L, first.seglen)
            expect = 2
            while expect <= T:
                st = self._next_phys(&nx)
                if st == 1 and be16(d + nx.h + OFF_TOTALSEGS) == T \
                        and be16(d + nx.h + OFF_SEGNUM) == expect \
                        and memcmp(d + nx.h + OFF_LOGLRSN, d + h + OFF_LOGLRSN, LEN_LRSN) == 0:
                    self._seg(r, self.slen - self.r_dat[r], nx.h + nx.L)
                    self._append(d + nx.h + nx.L, nx.seglen)
                    self.r_nseg[r] += 1
                    self.r_end[r] = nx.end
                    expect += 1
                    continue
                self.peek = nx                   # not ours: it starts afresh
                self.have_peek = 1
                if st == 0:
                    self.peek.err = -1           # the message ended
                self._error(r, E_SEG_MISSING, F_SEGNUM, h + OFF_SEGNUM, expect, T)
                break
            self.r_dlen[r] = self.slen - self.r_dat[r]
        return 0

    cdef void _check(self, int64_t r) noexcept nogil:
        """Change type and DATA length of a logical record whose header framed."""
        cdef const uint8_t* d = self.data
        cdef int64_t h = self.r_h[r], m, tl
        cdef const uint8_t* dat
        cdef uint8_t op = _op_of(A(self.asc, d[h + OFF_CHANGE_TYPE]),
                                 A(self.asc, d[h + OFF_CHANGE_TYPE + 1]))
        self.r_op[r] = op
        if self.r_err[r] or op == OP_NONE:      # an unknown change type: TableOut reports it
            return
        m = self.r_dlen[r]
        if m == 0:
            if op == OP_C or op == OP_U or op == OP_D:
                self._error(r, E_NO_DATA, F_DATA, h + self.r_L[r], 0, 0)
            return
        dat = (self.scratch + self.r_dat[r]) if self.r_nseg[r] else (d + self.r_dat[r])
        tl = be16(dat) if m >= 2 else 0
        if tl != m:
            self._error(r, E_DATA_LEN, F_DATA, h + self.r_L[r], tl, m)

    def scan(self, int64_t max_records):
        """Frame up to max_records logical records into the chunk (after reset()). Returns
        S_DONE (input over), S_FULL, or S_NEW_TABLE: a record names a table not registered
        yet (pending_names / add_name, then scan again)."""
        cdef Phys ph
        cdef int st
        cdef int64_t r
        cdef int32_t tid
        cdef uint8_t k[KEY]
        self._reserve(max_records)
        if self.staged:                          # the record that waited for its table
            r = self.nrec
            tid = self._lookup(self.pend)
            if tid < 0:
                raise RuntimeError("scan() resumed before the pending table was registered")
            self.r_tab[r] = tid
            self._count(r, tid)
            memcpy(self.lastkey, self.pend, KEY)
            self.last_tid = tid
            self.staged = 0
            self.nrec += 1
        while self.nrec < max_records:
            if not self.in_msg:
                if not self._next_message():
                    return S_DONE
                self.in_msg = 1
            if self.have_peek:
                ph = self.peek
                self.have_peek = 0
                st = 0 if ph.err == -1 else (2 if ph.err else 1)
            else:
                st = self._next_phys(&ph)
            if st == 0:
                self.in_msg = 0
                continue
            r = self.nrec
            self.r_msg[r] = self.msg
            self.r_seq[r] = self.seq
            self.seq += 1
            if st == 2:
                self._corrupt(r, &ph)
                self.n_records += 1
                self.nrec += 1
                continue
            self._logical(r, &ph)
            self._check(r)
            self._key(self.r_h[r], k)
            if self.last_tid >= 0 and eq_exact(k, self.lastkey, KEY):
                tid = self.last_tid
            else:
                tid = self._lookup(k)
                if tid < 0:
                    memcpy(self.pend, k, KEY)
                    self.staged = 1
                    return S_NEW_TABLE
                memcpy(self.lastkey, k, KEY)
                self.last_tid = tid
            self.r_tab[r] = tid
            self._count(r, tid)
            self.nrec += 1
        return S_FULL

    cdef inline void _count(self, int64_t r, int32_t tid) noexcept nogil:
        cdef uint8_t fl = self.t_flags[tid], op = self.r_op[r]
        self.n_records += 1
        if fl & T_UNKNOWN:
            self.n_unknown += 1
        if (fl & T_LOOKED) and (op == OP_DDL or op == OP_MSG):
            self.n_control += 1

    def reset(self):
        """Start the next chunk (a staged record stays)."""
        cdef int64_t r
        if self.staged:                  # move it to the front, with its segments
            r = self.nrec
            self._move(r, 0)
        self.nrec = 0
        if not self.staged:
            self.nseg = 0
            self.slen = 0

    cdef void _move(self, int64_t r, int64_t to) noexcept:
        self.r_msg[to] = self.r_msg[r]; self.r_seq[to] = self.r_seq[r]
        self.r_p[to] = self.r_p[r]; self.r_end[to] = self.r_end[r]; self.r_h[to] = self.r_h[r]
        self.r_L[to] = self.r_L[r]; self.r_dat[to] = self.r_dat[r]
        self.r_dlen[to] = self.r_dlen[r]; self.r_nseg[to] = self.r_nseg[r]
        self.r_seg0[to] = self.r_seg0[r]; self.r_op[to] = self.r_op[r]
        self.r_err[to] = self.r_err[r]; self.r_efield[to] = self.r_efield[r]
        self.r_epos[to] = self.r_epos[r]; self.r_ea[to] = self.r_ea[r]
        self.r_eb[to] = self.r_eb[r]; self.r_ec[to] = self.r_ec[r]
        self.r_rawpos[to] = self.r_rawpos[r]; self.r_rawlen[to] = self.r_rawlen[r]

    # -- what the Python layer reads ---------------------------------------------------------
    def corrupt_count(self):
        """Records of the chunk that could not be framed."""
        cdef int64_t i, n = 0
        for i in range(self.nrec):
            n += self.r_tab[i] < 0
        return n

    cdef inline const uint8_t* dat(self, int64_t r) noexcept nogil:
        return (self.scratch + self.r_dat[r]) if self.r_nseg[r] else (self.data + self.r_dat[r])

    cdef inline const uint8_t* rend(self, int64_t r) noexcept nogil:
        """Where the bytes that may be read from record r's data on end (its buffer's end)."""
        return (self.scratch + self.scap) if self.r_nseg[r] else self.dend

    cdef int64_t dpos(self, int64_t r, int64_t q) noexcept nogil:
        """Offset q in record r's data → its position in the part's bytes."""
        cdef int64_t s, s0
        if not self.r_nseg[r]:
            return self.r_dat[r] + q
        s0 = self.r_seg0[r]
        s = s0 + self.r_nseg[r] - 1
        while s > s0 and self.s_log[s] > q:
            s -= 1
        return self.s_phys[s] + q - self.s_log[s]


cdef struct TextRun:
    # one code-page text column's values of a block, back to back (cap bytes, 32 of them
    # slack), and per 32 of them the bytes past U+007F and their count before (cdc_cp_run_avx2)
    uint8_t* scr
    int64_t cap
    uint32_t* high
    int32_t* cum


@cython.final
cdef class TableOut:
    """Stage 2: the Arrow columns of one output table, appended chunk by chunk."""
    cdef readonly int64_t ncols
    cdef readonly bint images
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
    cdef public list source
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
        free(self.h_kind); free(self.h_off); free(self.h_width)
        free(self.errs); free(self.raw); free(self.rows); free(self.hp); free(self.hpz)
        free(self.cb); free(self.ca); free(self.cc); free(self.cp)
        free(self.lsz); free(self.wcol); free(self.vp); free(self.vl); free(self.ip)
        free(self.iend); free(self.rend); free(self.ibase); free(self.todo); free(self.todoimg)
        free(self.hard)
        free(self.okbm); free(self.insbm); free(self.updbm); free(self.imgbm)
        free(self.nulbm); free(self.framedbm); free(self.latin)
        text_run_free(&self.trun)

    cdef void _runs(self) noexcept:
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
                  int64_t rawlen) except -1:
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

    cdef int _envelope(self, Framer fr, int64_t k, int64_t row0) except -1:
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
        cdef Column c
        cdef char txt[32]
        cdef int64_t b0 = row0 >> 3, nb = ((row0 + k + 7) >> 3) - b0
        cdef const uint8_t* prev_uor = NULL
        self.schema.reserve_data(k * fr.maxname + 8)
        self.table.reserve_data(k * fr.maxname + 8)
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
                memcpy(out + dlen, OPTEXT + 8 * op, 8)
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
        cdef const int64_t* noff
        cdef const int64_t* nlen
        for h in range(2):
            c = self.schema if h == 0 else self.table
            noff = fr.t_sch if h == 0 else fr.t_tab
            nlen = fr.t_schlen if h == 0 else fr.t_tablen
            out, offs, valid, dlen = c.data, c.offs, c.valid, c.dlen
            for i in range(k):
                row = row0 + i
                t = rtab[rows[i]]
                if t >= 0 and nlen[t] >= 0:
                    copy_exact(out + dlen, fr.nbuf + noff[t], nlen[t])
                    dlen += nlen[t]
                    bits_set(valid, row)
                offs[row + 1] = <int32_t>dlen
            c.dlen = dlen
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
        for h in range(2):
            c = self.commit_pos if h == 0 else self.change_pos
            j = OFF_COMMITLRSN if h == 0 else OFF_LOGLRSN
            out, offs, valid, dlen = c.data, c.offs, c.valid, c.dlen
            for i in range(k):
                row = row0 + i
                if hp[i] != NULL:
                    memcpy(out + dlen, hp[i] + j, LEN_LRSN)
                    dlen += LEN_LRSN
                offs[row + 1] = <int32_t>dlen
            c.dlen = dlen
            _or_bits(valid + b0, self.framedbm, nb)
        for c in (self.op, self.source_op, self.schema, self.table, self.txid, self.commit_pos,
                  self.change_pos):
            c.length = row0 + k
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

    cdef int _header(self, Framer fr, int64_t k, int64_t row0) except -1:
        """The source struct, one header field at a time over all k rows."""
        cdef int64_t i, f
        cdef const uint8_t** hp = self.hp
        cdef int64_t b0 = row0 >> 3, nb = ((row0 + k + 7) >> 3) - b0
        cdef uint8_t* otr = self.owner_trunc.data
        cdef uint8_t* ntr = self.name_trunc.data
        for c in (self.source_v, self.owner_trunc, self.name_trunc):   # valid where framed
            _or_bits((<Column>c).valid + b0, self.framedbm, nb)
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
            self._field(fr, <Column>self.source[f], f, k, row0)
        return 0

    cdef int _field(self, Framer fr, Column c, int64_t f, int64_t k, int64_t row0) except -1:
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
        if kind == H_CHAR:
            c.reserve_data(3 * w * k + 16)          # ≤ 3 UTF-8 bytes a byte; 16-byte copies
        elif kind == H_BINX:
            c.reserve_data(w * k + 8)
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
                             int64_t dlen) except -1:
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

    cdef int _images(self, Framer fr, int64_t k, int64_t row0) except -1:
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
        for i0 in range(0, k, BLOCK):
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
                for j in range(n):
                    self._column(fr, side, j, i0, i1, row0)
            # the block's validity: where their image was read, less their nulls; then its
            # updates' changed bits, where before and after differ, while the values are in
            # cache. (A byte the block shares with the one before or after is done twice:
            # the bits are or-ed, the rows not yet walked have none.)
            tb0 = ((row0 + i0) >> 3) - b0
            tb1 = ((row0 + i1 - 1) >> 3) - b0 + 1
            for side in range(2):
                cs = self.cb if side == 0 else self.ca
                img = self.imgbm + side * nbs
                for j in range(n):
                    nul = self.nulbm + (side * n + j) * nbs
                    vd = cs[j].valid + b0
                    for t in range(tb0, tb1):
                        vd[t] |= img[t] & ~nul[t]
            if nupd:
                for j in range(n):
                    _changed(self.cb + j, self.ca + j, self.cc[j].data, self.updbm + tb0,
                             b0 + tb0, tb1 - tb0)
                nupd = 0
        for side in range(2):
            _or_bits((self.before_v if side == 0 else self.after_v).valid + b0,
                     self.imgbm + side * nbs, nb)
        # changed / present of the chunk's rows: valid where the images were read, present
        # all true there, changed all true for inserts (updates' bits are set above)
        _or_bits(self.changed_v.valid + b0, self.okbm, nb)
        _or_bits(self.present_v.valid + b0, self.okbm, nb)
        for j in range(n):
            _or_bits(self.cc[j].valid + b0, self.okbm, nb)
            _or_bits(self.cp[j].valid + b0, self.okbm, nb)
            _or_bits(self.cp[j].data + b0, self.okbm, nb)
            _or_bits(self.cc[j].data + b0, self.insbm, nb)
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
                              int64_t base, int side, int64_t i) except -2:
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
        if odd:
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
                     int64_t row0) except -1:
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
                         int64_t row0, const int64_t* todo, int64_t nval) except -1:
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
        cdef list cols = self.before if side == 0 else self.after
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
            self._grow_var(cols, cs, j, need)
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
                         int64_t nimg) except -1:
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

    cdef int _bad(self, Framer fr, int side, int64_t j, int64_t i) except -1:
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
                   uint8_t* mixed, int64_t* out) except -1:
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


def codepage_run(list values, bytes u8, bytes u8len, bint mixed, bytes tails):
    """For tests: the code page text values (None: a row without one) converted as one run
    (text_run), each value followed in memory by tails' next byte count of bytes (readable
    past it): (the UTF-8 bytes, the rows' offsets, mixed for the next run), or None where
    this CPU runs no run conversion or the run refuses the bytes."""
    cdef int64_t n = len(values), i, nval = 0, text = 0, o = 0, pos = 0
    cdef uint8_t rows[512]
    cdef uint8_t mix = mixed
    cdef TextRun t
    if _cprun_fast == NULL:
        return None
    cp_rows(u8, u8len, rows)
    memset(&t, 0, sizeof(t))
    buf = bytearray()
    starts = []
    for i in range(n):
        starts.append(len(buf))
        if values[i] is not None:
            buf += values[i]
            text += len(values[i])
        buf += bytes(tails[i % len(tails)] if tails else 0)
    cdef bytes mem = bytes(buf)
    cdef const uint8_t* base = mem
    cdef const uint8_t** vp = <const uint8_t**>grow(NULL, (n + 1) * sizeof(uint8_t*))
    cdef const uint8_t** iend = <const uint8_t**>grow(NULL, (n + 1) * sizeof(uint8_t*))
    cdef const uint8_t** rend = <const uint8_t**>grow(NULL, (n + 1) * sizeof(uint8_t*))
    cdef int64_t vmax = 0
    cdef int32_t* vl = <int32_t*>grow(NULL, (n + 1) * 4)
    cdef int64_t* todo = <int64_t*>grow(NULL, (n + 1) * 8)
    cdef int32_t* offs = <int32_t*>grow(NULL, (n + 1) * 4)
    cdef uint8_t* data = <uint8_t*>grow(NULL, 3 * text + 40)
    try:
        for i in range(n):
            vp[i] = base + <int64_t>starts[i]
            iend[i] = base + (<int64_t>starts[i + 1] if i + 1 < n else len(mem))
            rend[i] = base + len(mem)
            if values[i] is not None:
                vl[i] = len(values[i])
                vmax = max(vmax, vl[i])
                todo[nval] = i
                nval += 1
        offs[0] = 0
        if not text_run(&t, rows, offs, data, 0, todo, nval, vp, 0, 0, vl, iend, rend, vmax,
                        0, n, text, &mix, &o):
            return None
        return data[:o], [offs[i] for i in range(n + 1)], bool(mix)
    finally:
        free(vp); free(iend); free(rend); free(vl); free(todo); free(offs); free(data)
        text_run_free(&t)


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
                diff = (n != a.offs[row + 1] - oa) | text_differs(bd + ob, ad + oa, n,
                                                                 b.dcap - ob, a.dcap - oa)
            cg[t] |= m & -m & -<uint8_t>diff        # (the lowest bit of m: this row's)
            m &= m - 1


def record_starts(data, str framing, int64_t step):
    """Offsets where a stream can be cut into inputs of their own, 0 and len(data) included:
    after each multiple of `step`, the first physical record start (vb: block start) that
    does not continue a segmented record. The walk stops cutting at the first span it cannot
    frame. `framing` is "raw", "rdw" or "vb" (formats/lldf.py resolves "auto")."""
    cdef int64_t n = len(data)
    offsets = np.array([0, n], dtype=np.int64)
    code = {"raw": FR_RAW, "rdw": FR_RDW, "vb": FR_VB}[framing]
    cdef Framer fr = Framer(data, offsets, None, np.array([code], dtype=np.uint8), bytes(256))
    cdef Phys ph
    cdef int st
    cdef int64_t target = step, start, bstart, last = 0
    cdef const uint8_t* d
    out = [0]
    if n == 0:
        return [0, 0]
    d = fr.data
    fr._next_message()
    while True:
        bstart = fr.bend
        start = fr.pos
        st = fr._next_phys(&ph)
        if st != 1:
            break
        if fr.framing == FR_VB:
            if fr.bend == bstart:        # not the first record of a block
                continue
            start = ph.p - 4
        else:
            start = ph.p
        if start >= target and start > last and (be16(d + ph.h + OFF_TOTALSEGS) <= 1
                                                  or be16(d + ph.h + OFF_SEGNUM) == 1):
            out.append(start)
            last = start
            target = (start // step + 1) * step
    out.append(n)
    return out
