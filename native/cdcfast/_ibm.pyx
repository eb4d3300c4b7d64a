# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True, initializedcheck=False
"""`ibm-delimited` kernel (SPEC §5.1, docs/ibm-delimited.md).

Two stages, as Arrow's CSV reader does it:
1. `Scanner.scan` tokenizes a chunk of records into an index (record spans, field spans with a
   quoted / escaped flag), attributing each record to a registered table and checking its field
   count. It knows nothing of types.
2. `TableOut.convert` turns the chunk's records of one table into Arrow buffers: the header
   fields row by row, then the images column by column, each column with the conversion chosen
   when the decoder was built.
Errors never raise here: each row keeps the first error (lowest field) as a code, a field number,
a byte position and the raw span; the Python layer turns those into `_error` text.
"""
from libc.stdint cimport uint8_t, int8_t, int16_t, int32_t, int64_t, uint32_t, uint64_t, uintptr_t
from libc.string cimport memchr, memcpy, memcmp, memset
from libc.stdlib cimport malloc, realloc, free
from cpython.bytes cimport PyBytes_FromStringAndSize
cimport cython

from cdcfast._mem cimport grow
from cdcfast._arrow cimport (Column, FIXED, VAR, BITS, VALIDITY, col_valid, col_null, offsets_to,
                             bits_set, bits_get, var_commit, kind_column)
from cdcfast._kinds cimport *
# error codes (their spec: cdcfast/formats/_ibm_codes.py; ibm_delimited formats them)
from cdcfast._ibm_codes cimport *
from cdcfast._values cimport (A, cdc_i128, parse_int, parse_decimal, parse_float, parse_date10,
                              parse_time, parse_timestamp, digits, days_from_civil, is_leap,
                              hexval, unhex, utf8_valid, utf8_copy, to_utf8, US_PER_SEC, US_PER_DAY,
                              ASCII_CP, ts_fn, _ts_choose)

import os

import numpy as np

from cdcfast._arrow import presize as _presize


# scan status
cdef enum:
    S_DONE = 0        # input exhausted
    S_FULL = 1        # chunk full (records or bytes)
    S_NEW_TABLE = 2   # a record names a table not registered yet

# field flags
cdef enum:
    F_QUOTED = 1
    F_ESCAPED = 2
    F_NULL = 4          # empty and unquoted: SQL NULL (one load to test, not three)

cdef enum:
    ERR_WORDS = 9       # an error entry: row, field, code, pos, a, b, message, start, end
cdef int64_t INT8_MIN = -128, INT8_MAX = 127, INT16_MIN = -32768, INT16_MAX = 32767
cdef int64_t INT32_MIN = -2147483648, INT32_MAX = 2147483647
cdef int64_t I64_MIN = -9223372036854775807 - 1, I64_MAX = 9223372036854775807




@cython.final
cdef class Scanner:
    """Stage 1: records and fields of one input part (a buffer + message offsets)."""
    cdef object keep
    cdef const uint8_t* data
    cdef int64_t size           # readable bytes at data
    cdef int64_t nmsg
    cdef const int64_t* moff
    cdef const uint8_t* mvalid
    cdef uint8_t cls[256]
    cdef uint8_t cd, rd, sd
    cdef readonly int64_t msg, pos, seq, tombstones
    cdef readonly int64_t careful   # records split byte by byte (quoting errors, cut strings)
    cdef readonly int64_t unterminated  # records whose string the message's end cut off
    cdef bint in_msg
    # registered tables: raw owner/name bytes as they appear unescaped in the message
    cdef uint8_t* tn_buf        # owner and name bytes of every table, back to back
    cdef int64_t tn_len
    cdef int64_t* tn_at         # per name: owner start, owner length, name start, name length
    cdef int32_t* tn_tid        # per name: its table id (several spellings may share one)
    cdef int64_t nname
    cdef int64_t ntab
    cdef int64_t* tncols        # columns (-1: not fixed yet, no catalog)
    cdef uint8_t* tcatalog      # 1: N comes from the catalog
    cdef int64_t last_t
    cdef public bint no_tables   # records only (their ends), no table lookup: next_record_start
    # the chunk index
    cdef readonly int64_t nrec, nfld, rcap, fcap
    cdef int64_t* r_msg
    cdef int64_t* r_seq
    cdef int64_t* r_start
    cdef int64_t* r_end
    cdef int64_t* r_f0
    cdef int32_t* r_nf
    cdef int32_t* r_tab
    cdef int32_t* r_err
    cdef int64_t* r_errpos
    cdef int32_t* r_errfld
    cdef int64_t* f_s          # field starts and ends interleaved (one cache line for both):
    cdef int64_t* f_e          # field i spans f_s[2 * i] .. f_e[2 * i]; f_e = f_s + 1
    cdef uint8_t* f_fl
    cdef uint8_t* scratch
    cdef int64_t scap

    def __cinit__(self, data, offsets, valid, bytes delims):
        cdef const uint8_t[::1] dv = data
        cdef const int64_t[::1] ov = offsets
        cdef const uint8_t[::1] vv
        self.keep = (data, offsets, valid, dv, ov)
        self.data = &dv[0] if dv.shape[0] > 0 else <const uint8_t*>b""
        self.size = dv.shape[0]
        self.nmsg = ov.shape[0] - 1
        self.moff = &ov[0]
        self.mvalid = NULL
        if valid is not None:
            vv = valid
            self.keep = self.keep + (vv,)
            self.mvalid = &vv[0]
        self.cd, self.rd, self.sd = delims[0], delims[1], delims[2]
        memset(self.cls, 0, 256)
        self.cls[self.cd] = 1
        self.cls[self.rd] = 2
        self.cls[self.sd] = 3
        self.msg = 0
        self.pos = self.moff[0] if self.nmsg > 0 else 0
        self.seq = 0
        self.in_msg = 0
        self.tombstones = 0
        self.careful = 0
        self.unterminated = 0
        self.tn_buf = NULL
        self.tn_len = 0
        self.tn_at = NULL
        self.tn_tid = NULL
        self.nname = 0
        self.ntab = 0
        self.tncols = <int64_t*>grow(NULL, 8 * 8)
        self.tcatalog = <uint8_t*>grow(NULL, 8)
        self.last_t = -1
        self.no_tables = 0
        self.rcap = 0
        self.fcap = 0
        self.scap = 0
        self.nrec = self.nfld = 0

    def __dealloc__(self):
        free(self.r_msg); free(self.r_seq); free(self.r_start); free(self.r_end)
        free(self.r_f0); free(self.r_nf); free(self.r_tab); free(self.r_err)
        free(self.r_errpos); free(self.r_errfld); free(self.f_s)
        free(self.f_fl); free(self.scratch); free(self.tncols); free(self.tcatalog)
        free(self.tn_buf); free(self.tn_at); free(self.tn_tid)

    def new_table(self, int64_t ncols, bint from_catalog):
        """A new table id; `ncols` -1 lets its first record fix N (no catalog)."""
        cdef int64_t t = self.ntab
        if t % 8 == 0:
            self.tncols = <int64_t*>grow(self.tncols, (t + 8) * 8)
            self.tcatalog = <uint8_t*>grow(self.tcatalog, t + 8)
        self.tncols[t] = ncols
        self.tcatalog[t] = from_catalog
        self.ntab += 1
        return t

    def add_name(self, bytes owner, bytes name, int table_id):
        """Records naming owner.name (raw unescaped bytes) belong to `table_id`."""
        cdef int64_t k = self.nname
        if k % 8 == 0:
            self.tn_at = <int64_t*>grow(self.tn_at, (k + 8) * 4 * 8)
            self.tn_tid = <int32_t*>grow(self.tn_tid, (k + 8) * 4)
        self.tn_buf = <uint8_t*>grow(self.tn_buf, self.tn_len + len(owner) + len(name))
        memcpy(self.tn_buf + self.tn_len, <const char*>owner, len(owner))
        self.tn_at[4 * k] = self.tn_len
        self.tn_at[4 * k + 1] = len(owner)
        self.tn_len += len(owner)
        memcpy(self.tn_buf + self.tn_len, <const char*>name, len(name))
        self.tn_at[4 * k + 2] = self.tn_len
        self.tn_at[4 * k + 3] = len(name)
        self.tn_len += len(name)
        self.tn_tid[k] = table_id
        self.nname += 1

    def ncols(self, int64_t t):
        return self.tncols[t]

    def corrupt_count(self):
        """Records of the chunk that could not be attributed to a table."""
        cdef int64_t i, k = 0
        for i in range(self.nrec):
            k += self.r_tab[i] < 0
        return k

    cdef int _reserve_rec(self, int64_t n) except -1 nogil:
        if n <= self.rcap:
            return 0
        cdef int64_t c = max(n, 2 * self.rcap, 1024)
        self.r_msg = <int64_t*>grow(self.r_msg, c * 8)
        self.r_seq = <int64_t*>grow(self.r_seq, c * 8)
        self.r_start = <int64_t*>grow(self.r_start, c * 8)
        self.r_end = <int64_t*>grow(self.r_end, c * 8)
        self.r_f0 = <int64_t*>grow(self.r_f0, c * 8)
        self.r_nf = <int32_t*>grow(self.r_nf, c * 4)
        self.r_tab = <int32_t*>grow(self.r_tab, c * 4)
        self.r_err = <int32_t*>grow(self.r_err, c * 4)
        self.r_errpos = <int64_t*>grow(self.r_errpos, c * 8)
        self.r_errfld = <int32_t*>grow(self.r_errfld, c * 4)
        self.rcap = c
        return 0

    cdef int _reserve_fld(self, int64_t n) except -1 nogil:
        if n <= self.fcap:
            return 0
        cdef int64_t c = max(n, 2 * self.fcap, 16384)
        self.f_s = <int64_t*>grow(self.f_s, c * 16)
        self.f_e = self.f_s + 1
        self.f_fl = <uint8_t*>grow(self.f_fl, c)
        self.fcap = c
        return 0

    cdef uint8_t* _scratch(self, int64_t n) except NULL nogil:
        if n > self.scap or self.scratch == NULL:      # never NULL, even for n == 0
            self.scap = max(n, 2 * self.scap, 4096)
            self.scratch = <uint8_t*>grow(self.scratch, self.scap + 16)   # + 16: see _column
        return self.scratch

    def reset(self):
        """Start a new chunk (the cursor stays)."""
        self.nrec = 0
        self.nfld = 0

    cdef inline const uint8_t* content(self, int64_t fi, int64_t* n) noexcept nogil:
        """The unescaped content of field fi (a pointer into the input, or into scratch,
        which the scan sized for every escaped field)."""
        cdef int64_t s = self.f_s[2 * fi], e = self.f_e[2 * fi]
        cdef uint8_t fl = self.f_fl[fi]
        cdef uint8_t* out
        cdef int64_t i, o
        if fl & F_QUOTED:
            s += 1
            e -= 1
        if not (fl & F_ESCAPED):
            n[0] = e - s
            return self.data + s
        # copy the runs between doubled delimiters (each doubled pair becomes one)
        cdef const uint8_t* d = self.data
        cdef const uint8_t* hit
        out = self.scratch
        o = 0
        i = s
        while i < e:
            hit = <const uint8_t*>memchr(d + i, self.sd, e - i)
            if hit == NULL:
                memcpy(out + o, d + i, e - i)
                o += e - i
                break
            memcpy(out + o, d + i, hit - d - i + 1)
            o += hit - d - i + 1
            i = hit - d + 2
        n[0] = o
        return out

    cdef int _table_of(self, int64_t f0) except -2 nogil:
        """Table id of the record whose fields start at f0, or -1 if not registered."""
        cdef int64_t on, nn, t, k
        cdef const uint8_t* op = self.content(f0 + 4, &on)
        cdef const uint8_t* np_
        cdef uint8_t* saved = NULL
        if self.f_fl[f0 + 4] & F_ESCAPED:       # the owner sits in scratch: keep it aside
            saved = <uint8_t*>grow(NULL, on)
            memcpy(saved, op, on)
            op = saved
        np_ = self.content(f0 + 5, &nn)
        cdef int res = -1
        if self.last_t >= 0 and self.tn_at[4 * self.last_t + 1] == on \
                and self.tn_at[4 * self.last_t + 3] == nn \
                and _eq(self.tn_buf + self.tn_at[4 * self.last_t], op, on) \
                and _eq(self.tn_buf + self.tn_at[4 * self.last_t + 2], np_, nn):
            free(saved)
            return self.tn_tid[self.last_t]       # records of one table come in runs
        for k in range(self.nname):
            # try the last name hit first: records of one table tend to come in runs
            t = (self.last_t + k) % self.nname if self.last_t >= 0 else k
            if self.tn_at[4 * t + 1] == on and self.tn_at[4 * t + 3] == nn \
                    and memcmp(self.tn_buf + self.tn_at[4 * t], op, on) == 0 \
                    and memcmp(self.tn_buf + self.tn_at[4 * t + 2], np_, nn) == 0:
                self.last_t = t
                res = self.tn_tid[t]
                break
        free(saved)
        return res

    def pending_names(self):
        """Owner and name (raw unescaped bytes) of the record that stopped the scan."""
        cdef int64_t on, nn
        cdef int64_t f0 = self.nfld
        cdef const uint8_t* p = self.content(f0 + 4, &on)
        ob = PyBytes_FromStringAndSize(<const char*>p, on)
        p = self.content(f0 + 5, &nn)
        return ob, PyBytes_FromStringAndSize(<const char*>p, nn)

    def scan(self, int64_t max_records, int64_t max_bytes):
        """Tokenize records into the chunk until `max_records` are in it, about `max_bytes` of
        input were read, the input ends (S_DONE) or a record names an unregistered table
        (S_NEW_TABLE: the cursor stays on that record; register it and scan again). Runs
        without the GIL."""
        cdef int st
        with nogil:
            st = self._scan(max_records, max_bytes)
        return st

    cdef int _scan(self, int64_t max_records, int64_t max_bytes) except -1 nogil:
        cdef const uint8_t* d = self.data
        cdef int64_t start, end, p, q, fs, f0, nf, r, t, nc, dd, budget_end
        cdef const uint8_t* hit
        cdef uint8_t c, fl
        cdef int32_t err
        cdef int64_t errpos, errfld, esc
        cdef int64_t first_pos = self.pos
        self._reserve_rec(self.nrec + max_records + 1)
        self._reserve_fld(self.nfld + 1024)
        while True:
            # -- find the next record start ------------------------------------------------
            if self.msg >= self.nmsg:
                return S_DONE
            if not self.in_msg:
                if self.mvalid != NULL and not self.mvalid[self.msg]:
                    self.tombstones += 1
                    self.msg += 1
                    continue
                self.pos = self.moff[self.msg]
                self.seq = 0
                self.in_msg = 1
            end = self.moff[self.msg + 1]
            start = self.pos
            if start >= end:
                self.msg += 1
                self.in_msg = 0
                continue
            if d[start] == self.rd:          # an empty record: nothing to decode
                self.pos = start + 1
                continue
            if self.nrec >= max_records or self.pos - first_pos >= max_bytes:
                return S_FULL
            # -- split it into fields ---------------------------------------------------------
            r = self.nrec
            f0 = self.nfld
            if self.fcap - f0 < 1024:
                self._reserve_fld(f0 + 1024)
            errfld = 0
            while True:
                err = 0
                p = _split_fast(d, start, end, self.size, self.sd, self.cd, self.rd,
                                self.f_s + 2 * f0, self.f_e + 2 * f0, self.f_fl + f0, self.fcap - f0,
                                &nf, &esc)
                if p == SPLIT_SLOW:     # a quoting error, or a string the message cuts off
                    self.careful += 1
                    p = _split(d, start, end, self.cls, self.sd, self.cd, self.rd,
                               self.f_s + 2 * f0, self.f_e + 2 * f0, self.f_fl + f0, self.fcap - f0,
                               &nf, &err, &errpos, &esc)
                if p >= 0:
                    break
                self._reserve_fld(2 * self.fcap)     # more fields than room: grow, split again
            if err:
                errfld = nf
                self.unterminated += err == E_UNTERMINATED
            if esc > 0:
                self._scratch(esc)                  # room to unescape those fields later
            # -- the record ends at the record delimiter (p) or the message end ----------------
            if err:
                hit = <const uint8_t*>memchr(d + errpos, self.rd, end - errpos)
                p = (hit - d) if hit != NULL else end
                nf = 0
                t = -1
            elif nf < 12:
                err = E_TOO_FEW
                errpos = start
                errfld = -1
                t = -1
            elif self.no_tables:
                t = -1
            else:
                t = self._table_of(f0)
                if t < 0:
                    self.r_nf[r] = <int32_t>nf
                    return S_NEW_TABLE
                nc = self.tncols[t]
                dd = nf - 12
                if dd & 1 and self.f_fl[f0 + nf - 1] & F_NULL:
                    dd -= 1                 # a trailing column delimiter
                if self.tcatalog[t]:
                    if dd != 2 * nc:
                        err = E_COUNT
                else:
                    if dd & 1:
                        err = E_ODD
                    elif nc < 0:
                        self.tncols[t] = dd // 2
                    elif dd != 2 * nc:
                        err = E_COUNT
                if err:
                    errpos = start
                    errfld = -1
            self.r_msg[r] = self.msg
            self.r_seq[r] = self.seq
            self.r_start[r] = start
            self.r_end[r] = p
            self.r_f0[r] = f0
            self.r_nf[r] = <int32_t>nf
            self.r_tab[r] = <int32_t>t
            self.r_err[r] = err
            self.r_errpos[r] = errpos
            self.r_errfld[r] = <int32_t>errfld
            self.nrec += 1
            self.nfld = f0 + nf
            self.seq += 1
            self.pos = p + 1 if p < end else end

    def chunk_tables(self):
        """Per record of the chunk: its table id (-1: unattributable), as a numpy array."""
        out = np.empty(self.nrec, dtype=np.int32)
        cdef int32_t[::1] o = out
        cdef int64_t i
        for i in range(self.nrec):
            o[i] = self.r_tab[i]
        return out


@cython.final
cdef class TableOut:
    """Stage 2: the Arrow columns of one output table, appended chunk by chunk."""
    cdef readonly int64_t ncols
    cdef readonly bint images
    # changed / present wanted (a projection without them, SPEC §1: neither is computed; their
    # columns stay false and null, and the projection drops them)
    cdef public bint want_flags
    # the before image's values read (a projection naming neither before nor changed, SPEC
    # §1: not; its columns stay null and the projection drops them)
    cdef public bint want_before
    cdef int64_t* kind
    cdef int64_t* prec
    cdef int64_t* scale
    cdef uint8_t* nullable
    cdef uint8_t* is_char
    cdef uint8_t* is_lob
    cdef const uint8_t* asc
    cdef const uint8_t* u8
    cdef const uint8_t* u8len
    cdef const uint8_t* hasc
    cdef const uint8_t* hu8
    cdef const uint8_t* hu8len
    cdef bint utf8, hex_utf8, hex_decode
    cdef uint8_t dc
    cdef object keep
    # header columns
    cdef public Column op, source_op, schema, table, txid, commit_ts, commit_pos, seq, msg
    cdef public Column s_type, s_ident, s_put, s_plan, s_seg, s_invcol, s_invimg, s_invmode
    # bookkeeping per row
    # errors, sparse: one entry of ERR_WORDS int64 per problem (rows without any cost nothing)
    cdef int64_t* errs
    cdef int64_t nerr, errcap
    cdef Scanner cur_sc
    cdef int64_t cur_row0
    # images
    cdef readonly list before, after, changed, present
    # the same Columns, borrowed (the lists keep them): before, after, changed, present, n
    # each, reachable without the GIL
    cdef void** img
    cdef public Column before_v, after_v, changed_v, present_v
    # the previous row's header groups, for _same_span
    cdef const uint8_t* ca_ptr
    cdef const uint8_t* cb_ptr
    cdef const uint8_t* cc_ptr
    cdef int64_t ca_len, cb_len, cc_len, crow
    cdef bint ca_ok, cb_ok, cc_ok, herr
    cdef uint8_t ca_mode
    cdef uint8_t* rowop       # per chunk row: 0 none, 1 c, 2 u, 3 d
    cdef uint8_t* rowmode     # per chunk row: 0, 1 HEX, 2 NULL
    cdef int64_t* rowrec
    cdef int64_t* rowf0       # per chunk row: its record's first field (one load, not two)
    cdef int64_t rowcap

    def __cinit__(self, kinds, precs, scales, nullables, chars, lobs, bint images,
                  bytes asc, bytes u8, bytes u8len, bint utf8, int dc,
                  bytes hasc, bytes hu8, bytes hu8len, bint hex_utf8, bint hex_decode):
        cdef int64_t j, n = len(kinds)
        self.ncols = n
        self.images = images
        self.want_flags = True
        self.want_before = True
        self.kind = <int64_t*>grow(NULL, (n + 1) * 8)
        self.prec = <int64_t*>grow(NULL, (n + 1) * 8)
        self.scale = <int64_t*>grow(NULL, (n + 1) * 8)
        self.nullable = <uint8_t*>grow(NULL, n + 1)
        self.is_char = <uint8_t*>grow(NULL, n + 1)
        self.is_lob = <uint8_t*>grow(NULL, n + 1)
        for j in range(n):
            self.kind[j] = kinds[j]
            self.prec[j] = precs[j]
            self.scale[j] = scales[j]
            self.nullable[j] = nullables[j]
            self.is_char[j] = chars[j]
            self.is_lob[j] = lobs[j]
        self.keep = (asc, u8, u8len, hasc, hu8, hu8len)
        self.asc = NULL                          # NULL: ASCII-compatible, no table
        if len(asc):
            self.asc = asc
        self.u8 = u8
        self.u8len = u8len
        self.utf8 = utf8
        self.dc = dc
        self.hasc = NULL
        if len(hasc):
            self.hasc = hasc
        self.hu8 = hu8
        self.hu8len = hu8len
        self.hex_utf8 = hex_utf8
        self.hex_decode = hex_decode
        self.rowcap = 0
        self.crow = -2
        for name in ("op", "source_op", "schema", "table", "txid", "commit_pos", "s_ident",
                     "s_plan", "s_invimg", "s_invmode"):
            setattr(self, name, Column(VAR))
        for name in ("commit_ts", "seq", "s_put", "msg"):
            setattr(self, name, Column(FIXED, 8))
        for name in ("s_type", "s_seg", "s_invcol"):
            setattr(self, name, Column(FIXED, 4))
        self.before = [self._value_column(j) for j in range(n)]
        self.after = [self._value_column(j) for j in range(n)]
        self.changed = [Column(BITS) for j in range(n)]
        self.present = [Column(BITS) for j in range(n)]
        self.img = <void**>grow(NULL, (4 * n + 1) * sizeof(void*))
        for j in range(n):
            self.img[j] = <void*>self.before[j]
            self.img[n + j] = <void*>self.after[j]
            self.img[2 * n + j] = <void*>self.changed[j]
            self.img[3 * n + j] = <void*>self.present[j]
        self.before_v = Column(VALIDITY)
        self.after_v = Column(VALIDITY)
        self.changed_v = Column(VALIDITY)
        self.present_v = Column(VALIDITY)

    def __dealloc__(self):
        free(self.kind); free(self.prec); free(self.scale); free(self.nullable)
        free(self.is_char); free(self.is_lob); free(self.rowop); free(self.rowmode)
        free(self.errs)
        free(self.rowrec); free(self.rowf0); free(self.img)

    cdef Column _value_column(self, int64_t j):
        return kind_column(<int>self.kind[j])

    @property
    def length(self):
        return self.seq.length

    def presize(self, int64_t rows):
        """Reserve room for `rows` rows in all, string data sized on what the rows so far
        used: one allocation instead of a chain of doublings, each copying what came before."""
        if self.seq.length == 0 or rows <= self.seq.length:
            return
        _presize(self._all_header() + [self.before_v, self.after_v, self.changed_v,
                                       self.present_v] + self.before + self.after
                 + self.changed + self.present, rows)

    def errors(self, int64_t first=0):
        """The error entries from entry `first` on, as an int64 array of rows (row, field,
        code, pos, a, b, message, record start, record end); `error_count` tells how many."""
        cdef int64_t n = self.nerr - first
        out = np.empty((max(n, 0), ERR_WORDS), dtype=np.int64)
        cdef int64_t[:, ::1] o = out
        if n > 0:
            memcpy(&o[0, 0], self.errs + first * ERR_WORDS, n * ERR_WORDS * 8)
        return out

    @property
    def error_count(self):
        return self.nerr

    def clear_errors(self):
        self.nerr = 0

    cdef list _all_header(self):
        return [self.op, self.source_op, self.schema, self.table, self.txid, self.commit_ts,
                self.commit_pos, self.seq, self.msg, self.s_type, self.s_ident, self.s_put,
                self.s_plan,
                self.s_seg, self.s_invcol, self.s_invimg, self.s_invmode]

    # -- small writers ---------------------------------------------------------------------
    cdef void _err(self, int64_t row, int32_t field, int32_t code, int64_t pos,
                   int64_t a, int64_t b) noexcept nogil:
        """Note a problem of row `row` (of the chunk being converted); the Python layer keeps
        each row's first in field order."""
        cdef int64_t rix = self.rowrec[row - self.cur_row0]
        cdef int64_t* e
        if self.nerr == self.errcap:
            self.errcap = max(64, 2 * self.errcap)
            e = <int64_t*>realloc(self.errs, self.errcap * ERR_WORDS * 8)
            if e == NULL:
                return                  # out of memory for error notes: keep the earlier ones
            self.errs = e
        e = self.errs + self.nerr * ERR_WORDS
        e[0] = row
        e[1] = field
        e[2] = code
        e[3] = pos
        e[4] = a
        e[5] = b
        e[6] = self.cur_sc.r_msg[rix]
        e[7] = self.cur_sc.r_start[rix]
        e[8] = self.cur_sc.r_end[rix]
        self.nerr += 1

    cdef inline bint _text(self, Column c, const uint8_t* p, int64_t n) noexcept nogil:
        """Append text in the message's code page as UTF-8; 0 (nothing appended) if it is
        not valid text there."""
        cdef int64_t k
        if self.utf8:
            if not utf8_valid(p, n):
                return 0
            memcpy(c.data + c.dlen, p, n)
            c.dlen += n
        else:
            k = to_utf8(p, n, self.u8, self.u8len, c.data + c.dlen)
            if k < 0:
                return 0
            c.dlen += k
        var_commit(c)
        return 1

    cdef bint _hstr(self, Scanner sc, Column c, int64_t f0, int fld, int64_t row) noexcept nogil:
        """Header string field fld → c (null when empty unquoted; error if not text)."""
        cdef int64_t n
        cdef const uint8_t* p
        if _null(sc, f0 + fld):
            col_null(c)
            return 0
        p = sc.content(f0 + fld, &n)
        if self._text(c, p, n):
            return 1
        col_null(c)
        self._herr(row, fld, E_TEXT, sc.f_s[2 * (f0 + fld)], sc.f_s[2 * (f0 + fld)], sc.f_e[2 * (f0 + fld)])
        return 0

    cdef inline void _lit(self, Column c, const char* s, int64_t n) noexcept nogil:
        memcpy(c.data + c.dlen, s, n)
        c.dlen += n
        var_commit(c)

    cdef int _ensure_rows(self, int64_t k) except -1:
        if k > self.rowcap:
            self.rowcap = max(k, 2 * self.rowcap, 1024)
            self.rowop = <uint8_t*>grow(self.rowop, self.rowcap)
            self.rowmode = <uint8_t*>grow(self.rowmode, self.rowcap)
            self.rowrec = <int64_t*>grow(self.rowrec, self.rowcap * 8)
            self.rowf0 = <int64_t*>grow(self.rowf0, self.rowcap * 8)
        return 0

    # -- stage 2 ---------------------------------------------------------------------------
    def convert(self, Scanner sc, const int32_t[::1] slots, int slot, bint with_corrupt):
        """Append the chunk's records whose table id maps to `slot` in `slots` (and, with
        `with_corrupt`, the records that could not be attributed) as rows, in input order.
        Returns the number of rows appended."""
        cdef Column c
        cdef int64_t i, k = 0, row0, rix, t
        cdef int64_t nslots = slots.shape[0]
        self._ensure_rows(sc.nrec)
        for i in range(sc.nrec):
            t = sc.r_tab[i]
            if (t >= 0 and t < nslots and slots[t] == slot) or (with_corrupt and t < 0):
                self.rowrec[k] = i
                self.rowf0[k] = sc.r_f0[i]
                k += 1
        if k == 0:
            return 0
        row0 = self.seq.length
        if row0 == 0:
            self.crow = -2          # a new batch: nothing to repeat
        self.cur_sc = sc
        self.cur_row0 = row0
        self._reserve(sc, k)
        with nogil:         # every buffer is sized: the rows are written without the GIL
            self._rows(sc, k, row0)
        return k

    cdef int _rows(self, Scanner sc, int64_t k, int64_t row0) except -1 nogil:
        cdef int64_t i
        for i in range(k):
            self._header_row(sc, self.rowrec[i], row0 + i, i)
        if self.images:
            self._images(sc, k, row0)
        return 0

    cdef int _reserve(self, Scanner sc, int64_t k) except -1:
        cdef Column c
        cdef int64_t i, j, rix, tot = 0, f0, n = self.ncols, nb, fi, img
        # UTF-8 out of a single-byte code page: at most 3 bytes a byte (cp1140's €)
        cdef int64_t expand = 1 if self.utf8 and not (self.hex_decode and not self.hex_utf8) else 3
        for c in self._all_header():
            c.reserve(k)
        cdef int64_t hl[12]
        memset(hl, 0, sizeof(hl))
        for i in range(k):
            rix = self.rowrec[i]
            if sc.r_tab[rix] >= 0:
                f0 = sc.r_f0[rix]
                for j in range(12):
                    hl[j] += sc.f_e[2 * (f0 + j)] - sc.f_s[2 * (f0 + j)]
        # (+ 32: a repeated value is copied in 16-byte moves, see _again_var)
        self.s_ident.reserve_data(hl[1] * expand + 32)
        self.schema.reserve_data(hl[4] * expand + 32)
        self.table.reserve_data(hl[5] * expand + 32)
        self.source_op.reserve_data(hl[6] * expand + 32)
        self.txid.reserve_data(hl[7] * expand + 32)
        self.commit_pos.reserve_data(hl[8] + 32)
        self.s_plan.reserve_data(hl[10] * expand + 32)
        self.op.reserve_data(k)
        self.s_invimg.reserve_data(k + 32)
        self.s_invmode.reserve_data(4 * k + 32)
        if not self.images:
            return 0
        for i in range(k):
            rix = self.rowrec[i]
            tot += sc.r_end[rix] - sc.r_start[rix]
        tot = tot * expand + 16
        for c in (self.before_v, self.after_v, self.changed_v, self.present_v):
            c.reserve(k)
        for j in range(n):
            (<Column>self.changed[j]).reserve(k)
            (<Column>self.present[j]).reserve(k)
            for img in range(2):
                c = <Column>(self.before[j] if img == 0 else self.after[j])
                c.reserve(k)
                if c.layout == VAR and c.dcap - c.dlen < tot and (img or self.want_before):
                    # not surely enough room (the chunk's whole bytes): count this column's
                    nb = 0
                    for i in range(k):
                        rix = self.rowrec[i]
                        if sc.r_tab[rix] >= 0 and sc.r_err[rix] == 0:
                            fi = sc.r_f0[rix] + 12 + img * n + j
                            nb += sc.f_e[2 * fi] - sc.f_s[2 * fi]
                    c.reserve_data(nb * expand + 16)
        return 0

    cdef int _header_row(self, Scanner sc, int64_t rix, int64_t row, int64_t i) except -1 nogil:
        cdef int64_t f0 = sc.r_f0[rix], n, v, days, clock, fi
        cdef const uint8_t* p
        cdef const uint8_t* a = self.asc
        cdef int64_t kind = 0 if sc.r_err[rix] == 0 else (1 if sc.r_tab[rix] < 0 else 2)
        cdef int64_t j, g, ndig, inv
        cdef uint8_t ch
        (<int64_t*>self.seq.data)[row] = sc.r_seq[rix]
        col_valid(self.seq, row)
        self.seq.length += 1
        (<int64_t*>self.msg.data)[row] = sc.r_msg[rix]     # the row's message (Spark's keep)
        col_valid(self.msg, row)
        self.msg.length += 1
        self.rowop[i] = 0
        self.rowmode[i] = 0
        if sc.r_err[rix]:
            # record-level errors keep the field count and table id for the message
            self._err(row, sc.r_errfld[rix], sc.r_err[rix], sc.r_errpos[rix],
                      sc.r_nf[rix], sc.r_tab[rix])
        if kind == 1:
            col_null(self.op); col_null(self.source_op); col_null(self.schema)
            col_null(self.table); col_null(self.txid); col_null(self.commit_ts)
            col_null(self.commit_pos); col_null(self.s_type); col_null(self.s_ident)
            col_null(self.s_put); col_null(self.s_plan); col_null(self.s_seg)
            col_null(self.s_invcol); col_null(self.s_invimg); col_null(self.s_invmode)
            self.crow = -2
            return 0
        # fields 1-4 and 8-12 repeat from record to record within a transaction (and
        # a message): when their bytes equal the previous row's, copy its results
        if not self._same_span(sc, f0, 0, 3, row, &self.ca_ptr, &self.ca_len, self.ca_ok):
            self.herr = 0
            self._group_a(sc, f0, row, i)
            self.ca_ok = not self.herr
            self.ca_mode = self.rowmode[i]
        else:
            self._copy_prev(row, i, 0)
        # 5 owner, 6 name (records of one table repeat them: copy when the bytes match)
        if not self._same_span(sc, f0, 4, 5, row, &self.cc_ptr, &self.cc_len, self.cc_ok):
            self.herr = 0
            self._hstr(sc, self.schema, f0, 4, row)
            self._hstr(sc, self.table, f0, 5, row)
            self.cc_ok = not self.herr
        else:
            _again_var(self.schema, row)
            _again_var(self.table, row)
        # 7 operation (source_op keeps its text: a known one is written as a literal)
        p = sc.content(f0 + 6, &n)
        if n == 4 and _ascii_eq(p, a, b"ISRT", 4):
            self.rowop[i] = 1
            self._lit(self.source_op, b"ISRT", 4)
            self._lit(self.op, b"c", 1)
        elif n == 4 and _ascii_eq(p, a, b"REPL", 4):
            self.rowop[i] = 2
            self._lit(self.source_op, b"REPL", 4)
            self._lit(self.op, b"u", 1)
        elif n == 4 and _ascii_eq(p, a, b"DLET", 4):
            self.rowop[i] = 3
            self._lit(self.source_op, b"DLET", 4)
            self._lit(self.op, b"d", 1)
        else:
            self._hstr(sc, self.source_op, f0, 6, row)
            col_null(self.op)
            self._err(row, 6, E_VALUE, sc.f_s[2 * (f0 + 6)], sc.f_s[2 * (f0 + 6)], sc.f_e[2 * (f0 + 6)])
        if not self._same_span(sc, f0, 7, 11, row, &self.cb_ptr, &self.cb_len, self.cb_ok):
            self.herr = 0
            self._group_b(sc, f0, row)
            self.cb_ok = not self.herr
        else:
            self._copy_prev(row, i, 1)
        self.crow = row
        if kind == 2:
            self.rowop[i] = 0           # a field-count mismatch has no images
        return 0


    cdef inline bint _same_span(self, Scanner sc, int64_t f0, int64_t fa, int64_t fb,
                                int64_t row, const uint8_t** ptr, int64_t* ln,
                                bint ok) noexcept nogil:
        """Whether fields fa..fb equal the previous row's (then they need no conversion);
        remembers this row's span either way."""
        cdef const uint8_t* p = sc.data + sc.f_s[2 * (f0 + fa)]
        cdef int64_t n = sc.f_e[2 * (f0 + fb)] - sc.f_s[2 * (f0 + fa)]
        cdef bint same = ok and self.crow == row - 1 and n == ln[0] \
            and (same_bytes(p, ptr[0], n) if p - sc.data + n + 16 <= sc.size
                 else memcmp(p, ptr[0], n) == 0)
        ptr[0] = p
        ln[0] = n
        return same

    cdef inline void _herr(self, int64_t row, int32_t field, int32_t code, int64_t pos,
                           int64_t a, int64_t b) noexcept nogil:
        self.herr = 1
        self._err(row, field, code, pos, a, b)

    cdef void _copy_prev(self, int64_t row, int64_t i, int group) noexcept nogil:
        """Copy the previous row's results of header group 0 (fields 1-4) or 1 (8-12)."""
        if group == 0:
            _again_fixed(self.s_type, row)
            _again_var(self.s_ident, row)
            _again_fixed(self.s_invcol, row)
            _again_var(self.s_invimg, row)
            _again_var(self.s_invmode, row)
            _again_fixed(self.s_put, row)
            self.rowmode[i] = self.ca_mode
        else:
            _again_var(self.txid, row)
            _again_var(self.commit_pos, row)
            _again_fixed(self.commit_ts, row)
            _again_var(self.s_plan, row)
            _again_fixed(self.s_seg, row)

    cdef int _group_a(self, Scanner sc, int64_t f0, int64_t row, int64_t i) except -1 nogil:
        """Header fields 1-4: type, identifier (and its invalid-column marker), put time."""
        cdef int64_t n, v, inv
        cdef const uint8_t* p
        cdef const uint8_t* a = self.asc
        # 1 type
        p = sc.content(f0, &n)
        if _null(sc, f0):
            col_null(self.s_type)
        elif parse_int(p, n, a, INT32_MIN, INT32_MAX, &v, 0):
            (<int32_t*>self.s_type.data)[row] = <int32_t>v
            col_valid(self.s_type, row)
            self.s_type.length += 1
        else:
            col_null(self.s_type)
            self._herr(row, 0, E_VALUE, sc.f_s[2 * f0], sc.f_s[2 * f0], sc.f_e[2 * f0])
        # 2 identifier, and the invalid-column marker in it
        inv = 0
        if self._hstr(sc, self.s_ident, f0, 1, row):
            p = sc.content(f0 + 1, &n)
            if n >= 19 and _ascii_eq(p, a, b"IBM-INVALID-COLUMN-", 19):
                inv = self._invalid(p + 19, n - 19, row, i)
                if inv < 0:
                    self._herr(row, 1, E_VALUE, sc.f_s[2 * (f0 + 1)], sc.f_s[2 * (f0 + 1)], sc.f_e[2 * (f0 + 1)])
        if inv <= 0:
            col_null(self.s_invcol)
            col_null(self.s_invimg)
            col_null(self.s_invmode)
        # 3 date + 4 time
        self._put_ts(sc, f0, row)
        return 0

    cdef int _group_b(self, Scanner sc, int64_t f0, int64_t row) except -1 nogil:
        """Header fields 8-12: transaction id, commit LSN, commit time, plan, segment."""
        cdef int64_t n, v
        cdef const uint8_t* p
        cdef const uint8_t* a = self.asc
        # 8 transaction id
        self._hstr(sc, self.txid, f0, 7, row)
        # 9 commit_lsn: 4-hex-digit groups joined by ':' → bytes
        p = sc.content(f0 + 8, &n)
        self._lsn(sc, self.commit_pos, p, n, f0, row)
        # 10 commit_time
        p = sc.content(f0 + 9, &n)
        if _null(sc, f0 + 9):
            col_null(self.commit_ts)
        elif _timestamp(p, n, a, 0, &v, sc.data, sc.size):
            (<int64_t*>self.commit_ts.data)[row] = v
            col_valid(self.commit_ts, row)
            self.commit_ts.length += 1
        else:
            col_null(self.commit_ts)
            self._herr(row, 9, E_VALUE, sc.f_s[2 * (f0 + 9)], sc.f_s[2 * (f0 + 9)], sc.f_e[2 * (f0 + 9)])
        # 11 plan name
        self._hstr(sc, self.s_plan, f0, 10, row)
        # 12 segment number
        p = sc.content(f0 + 11, &n)
        if _null(sc, f0 + 11):
            col_null(self.s_seg)
        elif parse_int(p, n, a, INT32_MIN, INT32_MAX, &v, 0):
            (<int32_t*>self.s_seg.data)[row] = <int32_t>v
            col_valid(self.s_seg, row)
            self.s_seg.length += 1
        else:
            col_null(self.s_seg)
            self._herr(row, 11, E_VALUE, sc.f_s[2 * (f0 + 11)], sc.f_s[2 * (f0 + 11)], sc.f_e[2 * (f0 + 11)])
        return 0

    cdef void _lsn(self, Scanner sc, Column c, const uint8_t* p, int64_t n, int64_t f0,
                   int64_t row) noexcept nogil:
        """commit_lsn: 4-hex-digit groups joined by ':' → bytes."""
        cdef const uint8_t* a = self.asc
        cdef int64_t g, ndig
        if _null(sc, f0 + 8):
            col_null(c)
        elif (n + 1) % 5 != 0:
            col_null(c)
            self._herr(row, 8, E_VALUE, sc.f_s[2 * (f0 + 8)], sc.f_s[2 * (f0 + 8)], sc.f_e[2 * (f0 + 8)])
        else:
            g = 0
            ndig = c.dlen
            while g < n:
                if unhex(p + g, 4, a, c.data + c.dlen) != 2 or (g + 4 < n and A(a, p[g + 4]) != 58):
                    break
                c.dlen += 2
                g += 5
            if g < n:
                c.dlen = ndig
                col_null(c)
                self._herr(row, 8, E_VALUE, sc.f_s[2 * (f0 + 8)], sc.f_s[2 * (f0 + 8)], sc.f_e[2 * (f0 + 8)])
            else:
                var_commit(c)

    cdef int _invalid(self, const uint8_t* p, int64_t n, int64_t row, int64_t i) noexcept nogil:
        """The tail of ``IBM-INVALID-COLUMN-`` : 1–4 digits, optional '-', A|B, '-', HEX|NULL.
        Returns 1 and writes source.invalid_* on success, -1 if malformed."""
        cdef const uint8_t* a = self.asc
        cdef int64_t k = 0, col = 0, m
        cdef uint8_t img
        while k < n and k < 4 and 48 <= A(a, p[k]) <= 57:
            col = col * 10 + A(a, p[k]) - 48
            k += 1
        if k == 0:
            return -1
        if k < n and A(a, p[k]) == 45:
            k += 1
        if k >= n or (A(a, p[k]) != 65 and A(a, p[k]) != 66):
            return -1
        img = A(a, p[k])
        k += 1
        if k >= n or A(a, p[k]) != 45:
            return -1
        k += 1
        m = n - k
        if m == 3 and _ascii_eq(p + k, a, b"HEX", 3):
            self.rowmode[i] = 1
            self._lit(self.s_invmode, b"HEX", 3)
        elif m == 4 and _ascii_eq(p + k, a, b"NULL", 4):
            self.rowmode[i] = 2
            self._lit(self.s_invmode, b"NULL", 4)
        else:
            return -1
        (<int32_t*>self.s_invcol.data)[row] = <int32_t>col
        col_valid(self.s_invcol, row)
        self.s_invcol.length += 1
        self._lit(self.s_invimg, b"A" if img == 65 else b"B", 1)
        return 1

    cdef void _put_ts(self, Scanner sc, int64_t f0, int64_t row) noexcept nogil:
        """date ``YYYYnnn`` + time ``HHMMSSmmmmmm`` → source.put_ts (wall clock µs)."""
        cdef const uint8_t* a = self.asc
        cdef const uint8_t* p
        cdef int64_t n, y, doy, h, mi, s, us
        cdef bint bad_date = 0, bad_time = 0
        if _null(sc, f0 + 2) or _null(sc, f0 + 3):
            col_null(self.s_put)
            return
        p = sc.content(f0 + 2, &n)
        if n != 7 or not digits(p, 4, a, &y) or not digits(p + 4, 3, a, &doy) or y < 1 \
                or doy < 1 or doy > (366 if is_leap(y) else 365):
            bad_date = 1
        p = sc.content(f0 + 3, &n)
        if n != 12 or not digits(p, 2, a, &h) or not digits(p + 2, 2, a, &mi) \
                or not digits(p + 4, 2, a, &s) or not digits(p + 6, 6, a, &us) \
                or h > 23 or mi > 59 or s > 59:
            bad_time = 1
        if bad_date or bad_time:
            col_null(self.s_put)
            if bad_date:
                self._herr(row, 2, E_VALUE, sc.f_s[2 * (f0 + 2)], sc.f_s[2 * (f0 + 2)], sc.f_e[2 * (f0 + 2)])
            else:
                self._herr(row, 3, E_VALUE, sc.f_s[2 * (f0 + 3)], sc.f_s[2 * (f0 + 3)], sc.f_e[2 * (f0 + 3)])
            return
        (<int64_t*>self.s_put.data)[row] = (days_from_civil(y, 1, 1) + doy - 1) * US_PER_DAY \
            + ((h * 60 + mi) * 60 + s) * US_PER_SEC + us
        col_valid(self.s_put, row)
        self.s_put.length += 1

    cdef int _images(self, Scanner sc, int64_t k, int64_t row0) except -1 nogil:
        cdef int64_t n = self.ncols, i, j, nupd = 0, nodd = 0
        cdef int64_t nb = ((k + 63) >> 6) << 3      # bitmap bytes, whole 64-bit words
        cdef uint8_t op, bit
        cdef uint8_t* nl
        # per chunk, once, in one pass over the rows: rows by op as bitmaps (bit i = row
        # row0 + i), and which image fields are NULL, one bitmap per field — so that the
        # per-column work is a few word operations instead of a strided load per row
        cdef int64_t* todo = <int64_t*>grow(NULL, 4 * k * 8)
        cdef int64_t* upd = todo + 2 * k
        cdef int64_t* odd = todo + 3 * k
        cdef uint8_t* bm = <uint8_t*>grow(NULL, (5 + 2 * n) * nb + 2 * n)
        cdef uint8_t* zero = bm + (5 + 2 * n) * nb
        cdef const uint8_t* fp[8]
        cdef int64_t g, r
        cdef uint8_t* known = bm
        cdef uint8_t* ins = bm + nb
        cdef uint8_t* hasb = bm + 2 * nb
        cdef uint8_t* hasa = bm + 3 * nb
        cdef uint8_t* nulls = bm + 5 * nb
        memset(bm, 0, (5 + 2 * n) * nb + 2 * n)
        try:
            for i in range(k):
                op = self.rowop[i]
                bit = <uint8_t>(1 << (i & 7))
                known[i >> 3] |= bit * (op != 0)
                ins[i >> 3] |= bit * (op == 1)
                hasb[i >> 3] |= bit * ((op == 2) | (op == 3))
                hasa[i >> 3] |= bit * ((op == 1) | (op == 2))
                upd[nupd] = i
                nupd += op == 2
                odd[nodd] = i
                nodd += (op != 0) & (self.rowmode[i] != 0)
            # the NULL bitmaps, a byte (8 rows) at a time; a record without a known op may
            # lack fields, so it reads as zeros (F_NULL is bit 2 of a field flag)
            for g in range(0, k, 8):
                for r in range(8):
                    fp[r] = sc.f_fl + self.rowf0[g + r] + 12 \
                        if g + r < k and self.rowop[g + r] else zero
                nl = nulls + (g >> 3)
                for j in range(2 * n):
                    nl[j * nb] = <uint8_t>(
                        ((fp[0][j] >> 2) & 1) | (((fp[1][j] >> 2) & 1) << 1)
                        | (((fp[2][j] >> 2) & 1) << 2) | (((fp[3][j] >> 2) & 1) << 3)
                        | (((fp[4][j] >> 2) & 1) << 4) | (((fp[5][j] >> 2) & 1) << 5)
                        | (((fp[6][j] >> 2) & 1) << 6) | (((fp[7][j] >> 2) & 1) << 7))
            _bits_or(self.before_v.valid, row0, hasb, k)
            _bits_or(self.after_v.valid, row0, hasa, k)
            if self.want_flags:
                _bits_or(self.changed_v.valid, row0, known, k)
                _bits_or(self.present_v.valid, row0, known, k)
            self.before_v.length += k
            self.after_v.length += k
            self.changed_v.length += k
            self.present_v.length += k
            for j in range(n):
                if self.want_before:
                    self._column(sc, <Column>self.img[j], k, row0, j, 0, todo, known,
                                 hasb, nulls + j * nb)
                else:
                    _nulls_to(<Column>self.img[j], row0 + k)
                self._column(sc, <Column>self.img[n + j], k, row0, j, 1, todo, known, hasa,
                             nulls + (n + j) * nb)
                if self.want_flags:
                    self._flags(sc, <Column>self.img[j], <Column>self.img[n + j],
                                <Column>self.img[2 * n + j], <Column>self.img[3 * n + j],
                                k, row0, j, known, ins, bm + 4 * nb, upd, nupd, odd, nodd)
                else:
                    _set_length(<Column>self.img[2 * n + j], row0 + k)
                    _set_length(<Column>self.img[3 * n + j], row0 + k)
        finally:
            free(todo)
            free(bm)
        return 0

    cdef int _column(self, Scanner sc, Column c, int64_t k, int64_t row0, int64_t j,
                     int64_t img, int64_t* todo, const uint8_t* known, const uint8_t* has,
                     const uint8_t* isnull) except -1 nogil:
        """Column j of one image for the chunk's k rows: first which rows carry a value
        (from the chunk's bitmaps: rows whose op has this image, minus NULL fields), then one
        tight loop for the column's kind. Pointers live in locals: stores through byte
        pointers would otherwise force the compiler to reload every field of every object
        after each byte written."""
        cdef const int64_t* fs = sc.f_s
        cdef const int64_t* fe = sc.f_e
        cdef const uint8_t* ffl = sc.f_fl
        cdef const int64_t* rowf0 = self.rowf0
        cdef const uint8_t* rowop = self.rowop
        cdef const uint8_t* rowmode = self.rowmode
        cdef const uint8_t* d = sc.data
        cdef const uint8_t* a = self.asc
        cdef uint8_t dc = self.dc
        cdef int64_t off = 12 + img * self.ncols + j
        cdef int32_t field = <int32_t>off
        cdef int64_t kind = self.kind[j]
        cdef bint nullable = self.nullable[j], lob = self.is_lob[j], chr_ = self.is_char[j]
        cdef int64_t i, fi, row, s, n, v, w
        cdef uint8_t op, mode, fl
        cdef bint ok
        cdef const uint8_t* p
        cdef uint8_t* valid = c.valid
        cdef uint8_t* data = c.data
        cdef int32_t* offs = c.offs
        cdef int64_t dlen = c.dlen
        cdef int64_t nval = 0
        cdef cdc_i128 dv
        cdef double dbl
        cdef float flt
        # -- which rows carry a value, 64 rows a word ----------------------------------------
        cdef uint64_t wk, wh, wn, sel, bad
        cdef uint64_t strict = 0 if nullable else ~<uint64_t>0
        for w in range(0, (k + 63) >> 6):
            wk = load_le64(known + 8 * w)
            wh = load_le64(has + 8 * w)
            wn = load_le64(isnull + 8 * w)
            sel = wh & ~wn
            while sel:
                todo[nval] = 64 * w + _ctz(sel)
                nval += 1
                sel &= sel - 1
            # worth a second look (rare): a value where the image is absent, or a null in a
            # NOT NULL column
            bad = wk & ((wh & wn & strict) | (~wh & ~wn))
            while bad:
                i = 64 * w + _ctz(bad)
                bad &= bad - 1
                op = rowop[i]
                fi = rowf0[i] + off
                if not (wh >> (i & 63)) & 1:
                    self._err(row0 + i, field, E_INSERT_BEFORE if op == 1 else E_DELETE_AFTER,
                              fs[2 * fi], fs[2 * fi], fe[2 * fi])
                else:
                    mode = rowmode[i]
                    if not (mode != 0 and (lob or (mode == 2 and chr_))):
                        self._err(row0 + i, field, E_NOT_NULL, fs[2 * fi], fs[2 * fi], fe[2 * fi])
        # -- convert them -----------------------------------------------------------------
        cdef int64_t nxt = row0
        cdef int64_t size = sc.size
        cdef int64_t q
        cdef uint8_t sd = sc.sd
        cdef int ascii
        if kind == K_STRING and self.utf8 and not (chr_ and self.hex_decode):
            # text as is: values are copied in 16-byte moves (escaped ones dropping the second
            # of each doubled delimiter), checked for non-ASCII on the way (only those are
            # checked as UTF-8, 16 bytes at a time); the input's last bytes take the careful
            # path
            for w in range(nval):
                _ahead(d, fs, ffl, rowf0, todo, off, w, nval)
                i = todo[w]
                row = row0 + i
                offsets_to(offs, nxt, row, dlen)   # the null rows before this one
                fi = rowf0[i] + off
                s = fs[2 * fi]
                fl = ffl[fi]
                q = fl & F_QUOTED
                n = fe[2 * fi] - s - 2 * q
                p = d + s + q
                if s + n + 32 <= size:
                    if fl & F_ESCAPED:
                        n = unescape(p, n, sd, data + dlen, &ascii)
                        ok = ascii or _utf8_ok(data + dlen, n)
                    else:
                        q = copy_ascii(p, n, data + dlen)
                        ok = q == n or _utf8_ok(p + q, n - q)
                else:
                    p = sc.content(fi, &n)
                    ok = utf8_copy(p, n, data + dlen)
                if ok:
                    dlen += n
                    valid[row >> 3] |= <uint8_t>(1 << (row & 7))
                else:
                    self._err(row, field, E_VALUE, s, s, fe[2 * fi])
                offs[row + 1] = <int32_t>dlen
                nxt = row + 1
            offsets_to(offs, nxt, row0 + k, dlen)
            c.dlen = dlen
            c.length = row0 + k
            return 0
        if c.layout == VAR:
            for w in range(nval):
                _ahead(d, fs, ffl, rowf0, todo, off, w, nval)
                i = todo[w]
                row = row0 + i
                offsets_to(offs, nxt, row, dlen)   # the null rows before this one
                fi = rowf0[i] + off
                p = sc.content(fi, &n)
                if kind == K_STRING:
                    if rowmode[i] == 1 and chr_ and self.hex_decode:
                        v = self._hex_text(sc, p, n, data + dlen)
                    elif self.utf8:
                        v = n if utf8_copy(p, n, data + dlen) else -1
                    else:
                        v = to_utf8(p, n, self.u8, self.u8len, data + dlen)
                elif kind == K_BINARY:
                    v = unhex(p, n, a, data + dlen)
                else:
                    v = n if _dectext(p, n, a, dc, data + dlen) else -1
                if v >= 0:
                    dlen += v
                    valid[row >> 3] |= <uint8_t>(1 << (row & 7))
                else:
                    self._err(row, field, E_HEX if v == -2 else E_VALUE,
                              fs[2 * fi], fs[2 * fi], fe[2 * fi])
                offs[row + 1] = <int32_t>dlen
                nxt = row + 1
            offsets_to(offs, nxt, row0 + k, dlen)
            c.dlen = dlen
            c.length = row0 + k
            return 0
        # fixed-width kinds: one loop per kind, with no test of the kind per value
        cdef int64_t* badw = todo + k
        cdef int64_t nbad = 0
        # values with 8 readable bytes past them (all but the input's last few; scratch, where
        # an escaped value is unescaped, keeps 16 spare bytes) are read 8 bytes at a time
        cdef const uint8_t* dend = d + size
        if kind == K_INT32:
            for w in range(nval):
                _ahead(d, fs, ffl, rowf0, todo, off, w, nval)
                p = _value(sc, d, fs, fe, ffl, rowf0[todo[w]] + off, &n)
                row = row0 + todo[w]
                ok = parse_int(p, n, a, INT32_MIN, INT32_MAX, &v, p + n + 8 <= dend)
                (<int32_t*>data)[row] = <int32_t>v
                nbad = _mark(valid, row, ok, badw, nbad, w)
        elif kind == K_INT64:
            for w in range(nval):
                _ahead(d, fs, ffl, rowf0, todo, off, w, nval)
                p = _value(sc, d, fs, fe, ffl, rowf0[todo[w]] + off, &n)
                row = row0 + todo[w]
                ok = parse_int(p, n, a, I64_MIN, I64_MAX, &v, p + n + 8 <= dend)
                (<int64_t*>data)[row] = v
                nbad = _mark(valid, row, ok, badw, nbad, w)
        elif kind == K_INT16:
            for w in range(nval):
                _ahead(d, fs, ffl, rowf0, todo, off, w, nval)
                p = _value(sc, d, fs, fe, ffl, rowf0[todo[w]] + off, &n)
                row = row0 + todo[w]
                ok = parse_int(p, n, a, INT16_MIN, INT16_MAX, &v, p + n + 8 <= dend)
                (<int16_t*>data)[row] = <int16_t>v
                nbad = _mark(valid, row, ok, badw, nbad, w)
        elif kind == K_INT8:
            for w in range(nval):
                _ahead(d, fs, ffl, rowf0, todo, off, w, nval)
                p = _value(sc, d, fs, fe, ffl, rowf0[todo[w]] + off, &n)
                row = row0 + todo[w]
                ok = parse_int(p, n, a, INT8_MIN, INT8_MAX, &v, p + n + 8 <= dend)
                (<int8_t*>data)[row] = <int8_t>v
                nbad = _mark(valid, row, ok, badw, nbad, w)
        elif kind == K_DECIMAL:
            for w in range(nval):
                _ahead(d, fs, ffl, rowf0, todo, off, w, nval)
                p = _value(sc, d, fs, fe, ffl, rowf0[todo[w]] + off, &n)
                row = row0 + todo[w]
                ok = parse_decimal(p, n, a, dc, <int>self.prec[j], <int>self.scale[j], &dv,
                                   p + n + 8 <= dend)
                memcpy(data + 16 * row, &dv, 16)
                nbad = _mark(valid, row, ok, badw, nbad, w)
        elif kind == K_DATE32:
            for w in range(nval):
                _ahead(d, fs, ffl, rowf0, todo, off, w, nval)
                p = _value(sc, d, fs, fe, ffl, rowf0[todo[w]] + off, &n)
                row = row0 + todo[w]
                ok = n == 10 and parse_date10(p, n, a, &v)
                (<int32_t*>data)[row] = <int32_t>v
                nbad = _mark(valid, row, ok, badw, nbad, w)
        elif kind == K_TIMESTAMP or kind == K_TIMESTAMP_TZ:
            for w in range(nval):
                _ahead(d, fs, ffl, rowf0, todo, off, w, nval)
                p = _value(sc, d, fs, fe, ffl, rowf0[todo[w]] + off, &n)
                row = row0 + todo[w]
                ok = _timestamp(p, n, a, kind == K_TIMESTAMP_TZ, &v, d, size)
                (<int64_t*>data)[row] = v
                nbad = _mark(valid, row, ok, badw, nbad, w)
        elif kind == K_TIME64:
            for w in range(nval):
                _ahead(d, fs, ffl, rowf0, todo, off, w, nval)
                p = _value(sc, d, fs, fe, ffl, rowf0[todo[w]] + off, &n)
                row = row0 + todo[w]
                ok = parse_time(p, n, a, &v)
                (<int64_t*>data)[row] = v
                nbad = _mark(valid, row, ok, badw, nbad, w)
        elif kind == K_FLOAT64:
            for w in range(nval):
                _ahead(d, fs, ffl, rowf0, todo, off, w, nval)
                p = _value(sc, d, fs, fe, ffl, rowf0[todo[w]] + off, &n)
                row = row0 + todo[w]
                ok = parse_float(p, n, a, dc, &dbl, p + n + 8 <= dend) and dbl - dbl == 0      # finite
                (<double*>data)[row] = dbl
                nbad = _mark(valid, row, ok, badw, nbad, w)
        elif kind == K_FLOAT32:
            for w in range(nval):
                _ahead(d, fs, ffl, rowf0, todo, off, w, nval)
                p = _value(sc, d, fs, fe, ffl, rowf0[todo[w]] + off, &n)
                row = row0 + todo[w]
                ok = parse_float(p, n, a, dc, &dbl, p + n + 8 <= dend) and dbl - dbl == 0
                flt = <float>dbl
                ok = ok and flt - flt == 0                                   # fits float32
                (<float*>data)[row] = flt
                nbad = _mark(valid, row, ok, badw, nbad, w)
        elif kind == K_BOOL:
            for w in range(nval):
                _ahead(d, fs, ffl, rowf0, todo, off, w, nval)
                p = _value(sc, d, fs, fe, ffl, rowf0[todo[w]] + off, &n)
                row = row0 + todo[w]
                ok = 1
                if n == 1 and (A(a, p[0]) == 49 or A(a, p[0]) == 48):
                    if A(a, p[0]) == 49:
                        data[row >> 3] |= <uint8_t>(1 << (row & 7))
                elif n == 4 and _ascii_ieq(p, a, b"true", 4):
                    data[row >> 3] |= <uint8_t>(1 << (row & 7))
                elif not (n == 5 and _ascii_ieq(p, a, b"false", 5)):
                    ok = 0
                nbad = _mark(valid, row, ok, badw, nbad, w)
        else:
            for w in range(nval):
                badw[w] = w
            nbad = nval
        for w in range(nbad):
            i = todo[badw[w]]
            fi = rowf0[i] + off
            self._err(row0 + i, field, E_VALUE, fs[2 * fi], fs[2 * fi], fe[2 * fi])
        c.length = row0 + k
        return 0

    cdef int64_t _hex_text(self, Scanner sc, const uint8_t* p, int64_t n,
                           uint8_t* out) except -3 nogil:
        """A HEX row's character value decoded with hex_encoding: -2 bad hex, -1 bad text."""
        cdef uint8_t* tmp = sc._scratch(n)
        cdef int64_t w = unhex(p, n, self.asc, tmp)     # may run in place: it writes behind
        if w < 0:
            return -2
        if self.hex_utf8:
            if not utf8_valid(tmp, w):
                return -1
            memcpy(out, tmp, w)
            return w
        return to_utf8(tmp, w, self.hu8, self.hu8len, out)

    cdef int _flags(self, Scanner sc, Column cb, Column ca, Column cch, Column cpr,
                    int64_t k, int64_t row0, int64_t j,
                    const uint8_t* known, const uint8_t* ins, uint8_t* tmp,
                    const int64_t* upd, int64_t nupd, const int64_t* odd,
                    int64_t nodd) except -1 nogil:
        """changed / present of column j (SPEC §3, docs/ibm-delimited.md): validity is the
        rows with a known op; changed is inserts plus updates whose values differ; present is
        every such row but the columns an invalid-column row did not send."""
        cdef int64_t nb = (k + 7) >> 3, i, w, kind = self.kind[j]
        cdef bint notsent = self.is_lob[j] or self.is_char[j]
        cdef bint lob = self.is_lob[j]
        cdef uint8_t op, mode
        _bits_or(cch.valid, row0, known, k)
        _bits_or(cpr.valid, row0, known, k)
        memcpy(tmp, ins, nb)
        for w in range(nupd):
            i = upd[w]
            if not _same(cb, ca, row0 + i, kind):
                tmp[i >> 3] |= <uint8_t>(1 << (i & 7))
        _bits_or(cch.data, row0, tmp, k)
        memcpy(tmp, known, nb)
        if notsent:
            for w in range(nodd):               # rare: invalid-column rows
                i = odd[w]
                op = self.rowop[i]
                mode = self.rowmode[i]
                # absent when the vendor sent it as NULL (a value that failed conversion was
                # sent, so it stays present)
                if (lob or mode == 2) and _null(sc, sc.r_f0[self.rowrec[i]] + 12
                                                 + (0 if op == 3 else self.ncols) + j):
                    tmp[i >> 3] &= <uint8_t>~(1 << (i & 7))
        _bits_or(cpr.data, row0, tmp, k)
        cch.length = row0 + k
        cpr.length = row0 + k
        return 0


cdef inline void _set_length(Column c, int64_t length) noexcept nogil:
    c.length = length


cdef inline void _nulls_to(Column c, int64_t length) noexcept nogil:
    """Rows up to `length` of a column not read are null (validity bits are zero already)."""
    if c.layout == VAR:
        offsets_to(c.offs, c.length, length, c.dlen)
    c.length = length


cdef inline void _bits_or(uint8_t* dst, int64_t at, const uint8_t* src, int64_t n) noexcept nogil:
    """OR the n bits of src (from bit 0) into dst from bit `at` on."""
    cdef int64_t nb = (n + 7) >> 3, i
    cdef int sh = at & 7
    cdef uint8_t* d = dst + (at >> 3)
    cdef uint8_t last = <uint8_t>((1 << (n & 7)) - 1) if n & 7 else 0xFF
    cdef uint8_t b
    if nb == 0:
        return
    if sh == 0:                             # byte-aligned (a whole chunk of one table)
        for i in range(nb - 1):
            d[i] |= src[i]
        d[nb - 1] |= src[nb - 1] & last     # bits past n are not ours to set
        return
    for i in range(nb):
        b = src[i]
        if i == nb - 1:
            b &= last
        d[i] |= <uint8_t>(b << sh)
        if b >> (8 - sh):
            d[i + 1] |= <uint8_t>(b >> (8 - sh))


cdef extern from *:
    """
    #ifndef CDC_AHEAD_INDEX
    #define CDC_AHEAD_INDEX 16
    #endif
    #ifndef CDC_AHEAD_BYTES
    #define CDC_AHEAD_BYTES 8
    #endif
    /* Prefetch the index entry and flag of the value CDC_AHEAD_INDEX ahead of w (two lines:
       the flags are an array of their own) and the bytes of the one CDC_AHEAD_BYTES ahead: a
       column's values lie one record apart, too far for the hardware to guess. Written in C
       and always inlined: GCC takes a small function whose only effect is a prefetch for a
       const one and drops every call to it. */
    static inline __attribute__((always_inline)) void cdc_ahead(
            const uint8_t* d, const int64_t* fs, const uint8_t* ffl, const int64_t* rowf0,
            const int64_t* todo, int64_t off, int64_t w, int64_t nval) {
        if (w + CDC_AHEAD_INDEX < nval) {
            int64_t fi = rowf0[todo[w + CDC_AHEAD_INDEX]] + off;
            __builtin_prefetch(fs + 2 * fi);
            __builtin_prefetch(ffl + fi);
            __builtin_prefetch(d + fs[2 * (rowf0[todo[w + CDC_AHEAD_BYTES]] + off)]);
        }
    }
    """
    void _ahead "cdc_ahead"(const uint8_t* d, const int64_t* fs, const uint8_t* ffl,
                            const int64_t* rowf0, const int64_t* todo, int64_t off, int64_t w,
                            int64_t nval) nogil


cdef extern from "cdcfast/_bytes.h":
    int64_t copy_ascii "cdc_copy_ascii"(const uint8_t* src, int64_t n, uint8_t* dst) noexcept nogil
    bint same_bytes "cdc_same_bytes"(const uint8_t* a, const uint8_t* b, int64_t n) noexcept nogil
    void repeat_prev "cdc_repeat_prev"(uint8_t* dst, int64_t n) noexcept nogil
    int _ctz "cdc_ctz"(uint64_t x) noexcept nogil
    uint64_t load_le64 "cdc_load_le64"(const uint8_t* p) noexcept nogil


cdef extern from "cdcfast/_split.h":
    int64_t SPLIT_ROOM "CDC_SPLIT_ROOM"
    int64_t SPLIT_SLOW "CDC_SPLIT_SLOW"
    ctypedef int64_t (*split_fn "cdc_split_fn")(const uint8_t* d, int64_t p, int64_t end,
                                               int64_t limit, uint8_t sd, uint8_t cd,
                                               uint8_t rd, int64_t* fs, int64_t* fe,
                                               uint8_t* ffl, int64_t room, int64_t* nf_out,
                                               int64_t* esc) noexcept nogil
    split_fn _split_choose "cdc_split_choose"(int allow_avx2) noexcept nogil
    int _split_level "cdc_split_level"(split_fn f) noexcept nogil


# the splitter for this CPU; CDCFAST_NO_AVX2=1 keeps the portable one (tests run both)
cdef split_fn _split_fast = _split_choose(not os.environ.get("CDCFAST_NO_AVX2"))
# the timestamp parser likewise (SSSE3: the two 16-byte words of Db2's form at once)
cdef ts_fn _ts_fast = _ts_choose(not os.environ.get("CDCFAST_NO_AVX2"))


def split_level():
    """2: the record splitter uses AVX2; 1: the portable (SSE2 or plain C) one."""
    return _split_level(_split_fast)


def ts_level():
    """2: timestamps are read with the SSSE3 parser first; 1: with the scalar one."""
    return 1 if _ts_fast == _ts_choose(0) else 2


def next_record_start(data, bytes delims, int64_t offset):
    """The first record start at or after `offset` (> 0) in a stream that begins with a
    record, len(data) when there is none: records split from the stream's start as the
    decoder splits them (so a record delimiter inside a string is data), and the walk stops
    at the first start it reaches at or past `offset` (an empty record starts nothing)."""
    cdef int64_t n = len(data)
    cdef Scanner sc = Scanner(data, np.array([0, n], dtype=np.int64), None, delims)
    sc.no_tables = 1
    while True:
        # stops at the first record start once offset - pos bytes are read, or 1,024 records
        # on (then on from there: room for more would cost more than it saves on a short walk)
        if sc.scan(1024, offset - sc.pos) == S_DONE:
            return n
        if sc.pos >= offset:
            return sc.pos
        sc.reset()


def guess_record_start(data, bytes delims, int64_t offset, int checks=2):
    """A likely record start at or after `offset`: just past a record delimiter, where the
    next `checks` records split cleanly into at least 12 fields each, each ended by a record
    delimiter (or the stream's end); len(data) when there is none. A guess — a delimiter
    inside a string is data, which only a walk from the stream's start tells — that the
    decoder checks (formats/_pieces.py): this only makes a wrong guess rare."""
    cdef const uint8_t[::1] dv = data
    cdef int64_t n = dv.shape[0]
    if n == 0 or offset >= n:
        return n
    cdef const uint8_t* d = &dv[0]
    cdef uint8_t cls[256]
    cdef uint8_t cd = delims[0], rd = delims[1], sd = delims[2]
    memset(cls, 0, 256)
    cls[cd] = 1
    cls[rd] = 2
    cls[sd] = 3
    cdef int64_t room = 4096
    cdef int64_t* fs = <int64_t*>grow(NULL, room * 16)
    cdef uint8_t* ffl = <uint8_t*>grow(NULL, room)
    cdef int64_t at = offset, cand, p, nf, errpos, esc
    cdef int32_t err
    cdef const uint8_t* hit
    cdef int k
    cdef bint ok
    try:
        with nogil:
            while True:
                hit = <const uint8_t*>memchr(d + at, rd, n - at)
                if hit == NULL or hit - d + 1 >= n:
                    at = n
                    break
                cand = hit - d + 1
                p = cand
                ok = 1
                for k in range(checks):
                    if p >= n:
                        break
                    p = _split(d, p, n, cls, sd, cd, rd, fs, fs + 1, ffl, room, &nf, &err,
                               &errpos, &esc)
                    if p < 0 or err or nf < 12:
                        ok = 0
                        break
                    p += 1
                if ok:
                    at = cand
                    break
                at = cand
    finally:
        free(fs)
        free(ffl)
    return at


cdef extern from "cdcfast/_utf8.h":
    ctypedef int (*utf8_fn "cdc_utf8_fn")(const uint8_t* p, int64_t n) noexcept nogil
    utf8_fn _utf8_choose "cdc_utf8_choose"(int allow_simd) noexcept nogil
    int64_t unescape "cdc_unescape"(const uint8_t* src, int64_t n, uint8_t sd, uint8_t* dst,
                                    int* ascii) noexcept nogil


# the UTF-8 check 16 bytes at a time where the CPU has SSSE3 (CDCFAST_NO_AVX2=1: the scalar one)
cdef utf8_fn _utf8_simd = _utf8_choose(not os.environ.get("CDCFAST_NO_AVX2"))


def utf8_level():
    """1: text values are checked as UTF-8 16 bytes at a time (SSSE3); 0: byte by byte."""
    return _utf8_simd != NULL


cdef inline bint _utf8_ok(const uint8_t* p, int64_t n) noexcept nogil:
    """Whether p[0:n] is strict UTF-8; may read 15 bytes past n (the callers have them)."""
    if _utf8_simd != NULL:
        return _utf8_simd(p, n)
    return utf8_valid(p, n)


cdef inline uint64_t _zero_byte(uint64_t v) noexcept nogil:
    """Marks (0x80) the zero bytes of v; the lowest mark is exact, so ctz finds the first."""
    return (v - 0x0101010101010101ULL) & ~v & 0x8080808080808080ULL


cdef inline int64_t _split(const uint8_t* d, int64_t p, int64_t end, const uint8_t* cls,
                           uint8_t sd, uint8_t cd, uint8_t rd, int64_t* fs, int64_t* fe, uint8_t* ffl, int64_t room,
                           int64_t* nf_out, int32_t* err, int64_t* errpos,
                           int64_t* esc) noexcept nogil:
    """Split one record starting at p into fields (start, end, flags); stop at the record
    delimiter or `end`. Returns the position of the record delimiter (or `end`), or -1 when
    the record has more than `room` fields. A failure sets err/errpos and returns where the
    scan stopped; the caller then resynchronizes at the next record delimiter."""
    cdef int64_t nf = 0, fstart, q, k
    cdef uint8_t fl, c
    cdef const uint8_t* hit
    cdef uint64_t w, m, mc, mr, ms
    cdef uint8_t at
    cdef uint64_t ones = 0x0101010101010101ULL
    cdef uint64_t bs = sd * ones, bc = cd * ones, br = rd * ones
    err[0] = 0
    esc[0] = 0
    while True:
        if nf >= room:
            return -1
        fstart = p
        fl = 0
        if p < end and cls[d[p]] == 3:
            fl = F_QUOTED
            q = p + 1
            while True:
                # short strings are the rule: look 16 bytes ahead, 8 at a time, before
                # calling memchr
                k = q + 16 if q + 16 < end else end
                while q + 8 <= k:
                    memcpy(&w, d + q, 8)
                    m = _zero_byte(w ^ bs)
                    if m:
                        q += _ctz(m) >> 3
                        break
                    q += 8
                else:
                    while q < k and d[q] != sd:
                        q += 1
                if q == k:
                    hit = <const uint8_t*>memchr(d + q, sd, end - q)
                    if hit == NULL:
                        err[0] = E_UNTERMINATED
                        errpos[0] = fstart
                        nf_out[0] = nf
                        return fstart
                    q = hit - d
                if q + 1 < end and d[q + 1] == sd:
                    fl = F_QUOTED | F_ESCAPED
                    q += 2
                    continue
                break
            p = q + 1
            if fl & F_ESCAPED and p - fstart > esc[0]:
                esc[0] = p - fstart
            at = cls[d[p]] if p < end else 2
            if at != 1 and at != 2:
                err[0] = E_AFTER_CLOSE
                errpos[0] = p
                nf_out[0] = nf
                return p
        else:
            # the next column, record or string delimiter, 8 bytes at a time; which one it is
            # comes from the masks (no reload of the byte just found)
            at = 0
            while p + 8 <= end:
                memcpy(&w, d + p, 8)
                mc = _zero_byte(w ^ bc)
                mr = _zero_byte(w ^ br)
                ms = _zero_byte(w ^ bs)
                m = mc | mr | ms
                if m:
                    m &= -m                     # the first hit (the lowest mark is exact)
                    p += _ctz(m) >> 3
                    at = 1 if mc & m else (2 if mr & m else 3)
                    break
                p += 8
            else:
                while p < end and cls[d[p]] == 0:
                    p += 1
                at = cls[d[p]] if p < end else 2
            if at == 3:
                err[0] = E_STRAY_QUOTE
                errpos[0] = p
                nf_out[0] = nf
                return p
        fs[2 * nf] = fstart
        fe[2 * nf] = p
        ffl[nf] = fl | (F_NULL if p == fstart else 0)
        nf += 1
        if at == 2:                             # the record delimiter, or the message end
            nf_out[0] = nf
            return p
        p += 1                                  # past the column delimiter


cdef inline const uint8_t* _value(Scanner sc, const uint8_t* d, const int64_t* fs,
                                 const int64_t* fe, const uint8_t* ffl, int64_t fi,
                                 int64_t* n) noexcept nogil:
    """The bytes of field fi's value: quotes off, in the input (an escaped value, rare in a
    number, is unescaped now, into scratch)."""
    cdef int64_t s = fs[2 * fi]
    cdef uint8_t fl = ffl[fi]
    cdef int64_t q = fl & F_QUOTED
    if fl & F_ESCAPED:
        return sc.content(fi, n)
    n[0] = fe[2 * fi] - s - 2 * q
    return d + s + q


cdef inline bint _timestamp(const uint8_t* p, int64_t n, const uint8_t* a, bint with_zone,
                            int64_t* us, const uint8_t* d, int64_t size) noexcept nogil:
    """parse_timestamp, with this CPU's fast parser first for ASCII text; p lies in the input
    d[0:size] (which it may read ahead in) or in scratch (which it does not)."""
    cdef int64_t readable = d + size - p if d <= p < d + size else 0
    if a == NULL and _ts_fast(p, n, with_zone, &ASCII_CP, us, readable) == 1:
        return 1
    return parse_timestamp(p, n, a, with_zone, us)


cdef inline int64_t _mark(uint8_t* valid, int64_t row, bint ok, int64_t* bad, int64_t nbad,
                          int64_t w) noexcept nogil:
    """Row valid if ok; else value w joins the bad ones. Returns the new bad count."""
    valid[row >> 3] |= <uint8_t>(ok << (row & 7))
    bad[nbad] = w
    return nbad + (not ok)


cdef inline bint _eq(const uint8_t* a, const uint8_t* b, int64_t n) noexcept nogil:
    """Byte equality, inline: table names are short, a libc call costs more than the loop."""
    cdef int64_t i
    for i in range(n):
        if a[i] != b[i]:
            return 0
    return 1


cdef inline void _again_fixed(Column c, int64_t row) noexcept nogil:
    """Row `row` of a fixed-width column repeats row - 1."""
    if c.width == 8:
        (<int64_t*>c.data)[row] = (<int64_t*>c.data)[row - 1]
    elif c.width == 4:
        (<int32_t*>c.data)[row] = (<int32_t*>c.data)[row - 1]
    else:
        memcpy(c.data + row * c.width, c.data + (row - 1) * c.width, c.width)
    c.valid[row >> 3] |= <uint8_t>(((c.valid[(row - 1) >> 3] >> ((row - 1) & 7)) & 1)
                                   << (row & 7))
    c.length += 1


cdef inline void _again_var(Column c, int64_t row) noexcept nogil:
    """Row `row` of a string/binary column repeats row - 1 (its bytes end where the next
    value starts: the column reserves 32 bytes of slack for the 16-byte moves)."""
    cdef int64_t n
    if bits_get(c.valid, row - 1):
        n = c.offs[row] - c.offs[row - 1]
        repeat_prev(c.data + c.dlen, n)
        c.dlen += n
        var_commit(c)
    else:
        col_null(c)


cdef inline bint _null(Scanner sc, int64_t fi) noexcept nogil:
    """An empty unquoted field is NULL (SPEC §5.1)."""
    return sc.f_fl[fi] & F_NULL


cdef inline bint _ascii_eq(const uint8_t* p, const uint8_t* a, const char* s,
                           int64_t n) noexcept nogil:
    cdef int64_t i
    for i in range(n):
        if A(a, p[i]) != <uint8_t>s[i]:
            return 0
    return 1


cdef inline bint _ascii_ieq(const uint8_t* p, const uint8_t* a, const char* s,
                            int64_t n) noexcept nogil:
    cdef int64_t i
    cdef uint8_t c
    for i in range(n):
        c = A(a, p[i])
        if 65 <= c <= 90:
            c += 32
        if c != <uint8_t>s[i]:
            return 0
    return 1


cdef bint _dectext(const uint8_t* p, int64_t n, const uint8_t* a, uint8_t dc,
                   uint8_t* out) noexcept nogil:
    """An exact number's text (DECFLOAT, NUMBER): checked, copied as ASCII with '.' for dc."""
    cdef double ignored
    cdef int64_t i, s = 0
    cdef uint8_t c
    if not parse_float(p, n, a, dc, &ignored, 0):
        if n > 0 and (A(a, p[0]) == 45 or A(a, p[0]) == 43):
            s = 1
        if not ((n - s == 3 and _ascii_ieq(p + s, a, b"nan", 3))
                or (n - s == 4 and _ascii_ieq(p + s, a, b"snan", 4))
                or (n - s == 8 and _ascii_ieq(p + s, a, b"infinity", 8))):
            return 0
    for i in range(n):
        c = A(a, p[i])
        out[i] = 46 if c == dc else c
    return 1


cdef inline bint _same(Column b, Column a, int64_t row, int64_t kind) noexcept nogil:
    """Null-safe equality of row `row` in two columns of one type."""
    cdef bint vb = bits_get(b.valid, row), va = bits_get(a.valid, row)
    cdef int64_t sb, eb, sa, ea
    if not vb or not va:
        return vb == va
    if b.layout == VAR:
        sb = b.offs[row]
        eb = b.offs[row + 1]
        sa = a.offs[row]
        ea = a.offs[row + 1]
        return eb - sb == ea - sa and memcmp(b.data + sb, a.data + sa, eb - sb) == 0
    if b.layout == BITS:
        return bits_get(b.data, row) == bits_get(a.data, row)
    if kind == K_FLOAT64:
        return (<double*>b.data)[row] == (<double*>a.data)[row]
    if kind == K_FLOAT32:
        return (<float*>b.data)[row] == (<float*>a.data)[row]
    if b.width == 16:
        return (<uint64_t*>b.data)[2 * row] == (<uint64_t*>a.data)[2 * row] \
            and (<uint64_t*>b.data)[2 * row + 1] == (<uint64_t*>a.data)[2 * row + 1]
    if b.width == 8:
        return (<uint64_t*>b.data)[row] == (<uint64_t*>a.data)[row]
    if b.width == 4:
        return (<uint32_t*>b.data)[row] == (<uint32_t*>a.data)[row]
    return memcmp(b.data + row * b.width, a.data + row * a.width, b.width) == 0
