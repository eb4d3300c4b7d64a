# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True, initializedcheck=False
"""`lldf` framer (SPEC §5.2, docs/lldf.md): stage 1 of the kernel, the converter (_lldf.pyx)
being stage 2.

`Framer.scan` cuts a chunk of logical records out of the input: physical records by the
framing (raw, RDW, VB blocks; each message's code from cdcfast.formats.lldf, which detects
"auto"), segments joined (their data copied into a scratch buffer; an unsegmented record's
data stays where it is), the change type and DATA length checked, the table found by its
owner and name bytes in a small hash table. It knows nothing of columns. What it leaves for
the converter is declared in _lldf_frame.pxd. `record_starts` walks the same physical records
to find where a big input can be cut.
Errors never raise here: a record that cannot be framed or joined keeps its problem (code,
field, position, numbers, the bytes to show) for the converter's error entries.
"""
from libc.stdint cimport uint8_t, int32_t, int64_t, uint64_t
from libc.string cimport memcpy, memcmp, memset
from libc.stdlib cimport free

from cdcfast._mem cimport grow
from cdcfast._values cimport A
from cdcfast._binary cimport be16, be32
# HEADER_MIN, the header's offsets OFF_* and widths LEN_*, the error codes E_* and fields F_*,
# the framing codes FR_*, the scan's S_* (their spec: cdcfast/formats/_lldf_codes.py, which
# cdcfast.formats.lldf reads too)
from cdcfast._lldf_codes cimport *

import numpy as np

cdef extern from *:
    void prefetch "__builtin_prefetch"(const void* p) nogil

cdef extern from "cdcfast/_bytes.h":
    bint eq_exact "cdc_eq_exact"(const uint8_t* a, const uint8_t* b, int64_t n) nogil
    void copy_exact "cdc_copy_exact"(uint8_t* dst, const uint8_t* src, int64_t n) nogil

cdef enum:
    PREFETCH = 4096   # the framer touches the input this far ahead
    T_LOOKED = 1      # a table's flags (t_flags)
    T_UNKNOWN = 2


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


cdef class Framer:
    """Stage 1 over one Part: logical records, chunk by chunk."""

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

    cdef int _reserve(self, int64_t n) except -1 nogil:
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
    cdef uint64_t _hash(self, const uint8_t* k) noexcept nogil:
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

    cdef void _key(self, int64_t h, uint8_t* k) noexcept nogil:
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
    cdef void _bad(self, Phys* ph, int32_t err, int32_t field, int64_t p, int64_t end,
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
    cdef int _seg(self, int64_t r, int64_t log, int64_t phys) except -1 nogil:
        if self.nseg >= self.segcap:
            self.segcap = max(64, 2 * self.segcap)
            self.s_log = <int64_t*>grow(self.s_log, self.segcap * 8)
            self.s_phys = <int64_t*>grow(self.s_phys, self.segcap * 8)
        self.s_log[self.nseg] = log
        self.s_phys[self.nseg] = phys
        self.nseg += 1
        return 0

    cdef int _append(self, const uint8_t* p, int64_t n) except -1 nogil:
        if n == 0:          # (an empty segment: no scratch yet, and memcpy(NULL, p, 0) is UB)
            return 0
        if self.slen + n > self.scap:
            self.scap = max(self.slen + n, 2 * self.scap, 4096)
            self.scratch = <uint8_t*>grow(self.scratch, self.scap)
        memcpy(self.scratch + self.slen, p, n)
        self.slen += n
        return 0

    cdef void _error(self, int64_t r, int32_t err, int32_t field, int64_t pos,
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

    cdef int _logical(self, int64_t r, Phys* first) except -1 nogil:
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
        with nogil:
            st = self._frame(max_records)
        return st

    cdef int _frame(self, int64_t max_records) except -1 nogil:
        cdef Phys ph
        cdef int st
        cdef int64_t r
        cdef int32_t tid
        cdef uint8_t k[KEY]
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
                self.n_unframed += 1
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

    cdef void _count(self, int64_t r, int32_t tid) noexcept nogil:
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


def record_starts(data, str framing, int64_t step):
    """Offsets where a stream can be cut into inputs of their own, 0 and len(data) included:
    after each multiple of `step`, the first physical record start (vb: block start) that
    does not continue a segmented record. The walk stops cutting at the first span it cannot
    frame. `framing` is "raw", "rdw" or "vb" (formats/lldf.py resolves "auto")."""
    return list(iter_record_starts(data, framing, step))


def iter_record_starts(data, str framing, int64_t step):
    """record_starts, each cut yielded as the walk finds it (one walk of the stream: threads
    decode the pieces before it while it goes on)."""
    cdef int64_t n = len(data)
    offsets = np.array([0, n], dtype=np.int64)
    code = {"raw": FR_RAW, "rdw": FR_RDW, "vb": FR_VB}[framing]
    cdef Framer fr = Framer(data, offsets, None, np.array([code], dtype=np.uint8), bytes(256))
    cdef int64_t target = step, start, last = 0
    yield 0
    if n == 0:
        yield 0
        return
    fr._next_message()
    while True:
        with nogil:         # (other threads decode meanwhile: the walk needs no Python)
            start = _next_cut(fr, target, last)
        if start < 0:
            break
        yield start
        last = start
        target = (start // step + 1) * step
    yield n


def guess_record_start(data, str framing, bytes asc, int64_t offset, int checks=4):
    """A likely record start (vb: block start) at or after `offset` of a stream: where
    `checks` physical records chain from it (or all the rest, at least one), each framing
    whole with a known CHANGE TYPE (`asc`: the code page's ASCII table) and SEGNUM ≤
    TOTALSEGS, the first not continuing a segmented record; len(data) when there is none.
    Found near `offset`, without the walk from the stream's start; a guess, which the decode
    of the piece before it checks (a piece from a record start frames exactly to a record
    start; one cut elsewhere meets a span it cannot frame: cdcfast/pieces.py)."""
    cdef int64_t n = len(data)
    if offset >= n:
        return n
    code = {"raw": FR_RAW, "rdw": FR_RDW, "vb": FR_VB}[framing]
    cdef Framer fr = Framer(data, np.array([0, n], dtype=np.int64), None,
                            np.array([code], dtype=np.uint8), asc)
    cdef int64_t at
    fr._next_message()
    with nogil:
        at = _guess(fr, max(offset, 0), checks)
    return at


cdef int64_t _guess(Framer fr, int64_t p0, int checks) noexcept nogil:
    cdef Phys ph
    cdef int64_t p, T, k
    cdef int i, st
    cdef bint ok
    cdef const uint8_t* d = fr.data
    for p in range(p0, fr.mend):
        fr.pos = p
        fr.bend = -1
        fr.pf = fr.mend     # no prefetch per candidate: a guess over garbage stays linear
        ok = 1
        for i in range(checks):
            st = fr._next_phys(&ph)
            if st == 0:
                ok = i > 0
                break
            if st != 1:
                ok = 0
                break
            T = be16(d + ph.h + OFF_TOTALSEGS)
            k = be16(d + ph.h + OFF_SEGNUM)
            if k > T or _op_of(A(fr.asc, d[ph.h + OFF_CHANGE_TYPE]),
                               A(fr.asc, d[ph.h + OFF_CHANGE_TYPE + 1])) == OP_NONE \
                    or (i == 0 and T > 1 and k > 1):
                ok = 0
                break
        if ok:
            return p
    return fr.mend


cdef int64_t _next_cut(Framer fr, int64_t target, int64_t last) noexcept nogil:
    """record_starts' walk to its next cut: the first record (vb: block) start at or past
    `target` and past `last` that does not continue a segmented record; -1 at the end of what
    can be framed."""
    cdef Phys ph
    cdef int st
    cdef int64_t start, bstart
    cdef const uint8_t* d = fr.data
    while True:
        bstart = fr.bend
        start = fr.pos
        st = fr._next_phys(&ph)
        if st != 1:
            return -1
        if fr.framing == FR_VB:
            if fr.bend == bstart:        # not the first record of a block
                continue
            start = ph.p - 4
        else:
            start = ph.p
        # (a segment numbered 0 never continues a record either: it is an error alone,
        # docs/lldf.md "Segments", so a cut may go before it, as the reference's walk has it)
        if start >= target and start > last and (be16(d + ph.h + OFF_TOTALSEGS) <= 1
                                                  or be16(d + ph.h + OFF_SEGNUM) <= 1):
            return start
