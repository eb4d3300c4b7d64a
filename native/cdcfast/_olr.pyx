# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True, initializedcheck=False
"""The `olr` kernel: OpenLogReplicator messages straight into Arrow buffers.

Each document (one OLR message) is checked once by the strict scanner of _json.h — a document
that is not well-formed is a corrupt record with the code and byte its pure-Python twin gives —
and then walked trusting its syntax: the message's fields are read once (xid, scn, tm, the
positions; scn and tm carried forward within a transaction, docs/olr.md), then every element
of its `payload` array is one row, its images converted straight into the output's columns by
the column kinds of the table's layout (cdcfast/formats/olr.py), keys matched against the names
the previous row used.

The kernel stops for Python when it needs an answer: a table it has no id for (STOP_TABLE), a
column a layout typed by JSON kinds has not met yet (STOP_COLUMN), a full batch. It stops
before writing anything of the element at hand, and reads that element again afterwards.

Problems of a row are kept as one entry, the first in document order (the reference's rule);
Python writes their texts (cdcfast/formats/_olr_run.py).
"""
cimport cython
from libc.stdint cimport uint8_t, int32_t, uint32_t, int64_t, uint64_t
from libc.stdlib cimport free
from libc.string cimport memcpy, memcmp, memset, memchr
from libc.math cimport isinf

from cdcfast._mem cimport grow
from cdcfast._arrow cimport (Column, FIXED, VAR, BITS, VALIDITY, col_valid, bits_set, bits_get,
                             kind_column)
from cdcfast._kinds cimport *
from cdcfast._values cimport parse_float
from cdcfast._jsonrow cimport *
# problem codes (their spec: cdcfast/formats/_olr_codes.py; _olr_run turns them into texts)
from cdcfast._olr_codes cimport *
from cdcfast._rows cimport Out
from cdcfast._walk cimport (Walker, padded, header_key, MAX_FIELDS, STOP_END, STOP_BATCH, STOP_TABLE, STOP_COLUMN,
                            STOP_PAUSE, BAD, IMG_BEFORE, IMG_AFTER)

assert NF <= MAX_FIELDS, "the walk's field table is too small for this format"

import numpy as np

cdef extern from "cdcfast/_olrval.h":
    int64_t olr_hex "cdc_olr_hex"(const uint8_t* p, int64_t n, uint8_t* dst) noexcept nogil
    int olr_time_text "cdc_olr_time_text"(const uint8_t* p, int64_t n, int unit,
                                          int64_t* us) noexcept nogil
    int olr_epoch "cdc_olr_epoch"(const uint8_t* p, int64_t n, int unit,
                                  int64_t* us) noexcept nogil
    int olr_xid "cdc_olr_xid"(const uint8_t* p, int64_t n, uint64_t* xid) noexcept nogil
    int64_t olr_xid_text "cdc_olr_xid_text"(uint64_t xid, uint8_t* dst) noexcept nogil
    int olr_scns "cdc_olr_scns"(const uint8_t* p, int64_t n, int64_t* out) noexcept nogil
    int olr_uint "cdc_olr_uint"(const uint8_t* p, int64_t n, uint64_t* out) noexcept nogil
    int olr_int "cdc_olr_int"(const uint8_t* p, int64_t n, int64_t lo, int64_t hi,
                              int64_t* out) noexcept nogil


cdef extern from *:
    """
    static inline void cdc_be64(uint8_t* p, uint64_t x) {
        for (int i = 7; i >= 0; i--) { p[i] = (uint8_t)x; x >>= 8; }
    }
    static inline void cdc_be32(uint8_t* p, uint32_t x) {
        for (int i = 3; i >= 0; i--) { p[i] = (uint8_t)x; x >>= 8; }
    }
    """
    void be64 "cdc_be64"(uint8_t* p, uint64_t x) noexcept nogil
    void be32 "cdc_be32"(uint8_t* p, uint32_t x) noexcept nogil


# fields: the message's, then an element's (their names: _olr_run.FIELDS)
cdef enum:
    M_SCN = 0
    M_SCNS = 1
    M_TM = 2
    M_TMS = 3
    M_XID = 4
    M_XIDN = 5
    M_C_SCN = 6
    M_C_IDX = 7
    M_DB = 8
    M_NUM = 9
    M_PAYLOAD = 10
    E_OP = 11
    E_SCHEMA = 12
    E_RID = 13
    E_NUM = 14
    E_SQL = 15
    E_DDL = 16
    E_SEQ = 17
    E_OFFSET = 18
    E_REDO = 19
    E_BEFORE = 20
    E_AFTER = 21
    ES_OWNER = 22
    ES_TABLE = 23
    ES_OBJ = 24
    ES_COLUMNS = 25
    NF = 26

# the source struct's fields (cdcfast/formats/olr.py SOURCE), in Out.src
cdef enum:
    S_DB = 0
    S_SCN = 1
    S_C_SCN = 2
    S_C_IDX = 3
    S_OBJ = 4
    S_NUM = 5
    S_XID = 6
    S_RID = 7
    S_DDL = 8
    S_CSEQ = 9
    S_COFF = 10
    S_CREDO = 11

# element ops (c, u, d as the rows of cdcfast/_rows.pxd name them)
cdef enum:
    OP_NONE = 0          # missing, or none of the below
    OP_BEGIN = 1
    OP_COMMIT = 2
    OP_C = 3
    OP_U = 4
    OP_D = 5
    OP_DDL = 6
    OP_CHKPT = 7


cdef enum:
    NE = NF - E_OP       # an element's fields, kept per element of the document
    NOT_READ = -4        # (pre_image) the image is left to the element's turn

FIELDS = NF


cdef struct Carry:
    uint64_t xid
    int64_t scn
    int64_t tm
    uint8_t has_scn
    uint8_t has_tm
    uint8_t flags           # C_*: what a run that notes (a piece, cdcfast/pieces.py) did


CARRY_BYTES = sizeof(Carry)     # (cdcfast/formats/olr.py reads the entries: CARRY)


# a carry entry's flags, kept when the run notes what it relied on (`note_carry`)
cdef enum:
    C_GIVEN = 1             # it came with the state the run started from (set_carry)
    C_SEEN = 2              # its xid is in the log of the transactions the run touched
    C_OWN_SCN = 4           # its scn was written by the run
    C_OWN_TM = 8            # its tm likewise
    C_DEP_SCN = 16          # the run read its scn before writing it (logged)
    C_DEP_TM = 32           # its tm likewise


cdef inline void* log_room(void* p, int64_t n, int64_t* cap, int64_t width) except NULL nogil:
    """A log with room for entry n."""
    if n < cap[0]:
        return p
    cap[0] = max(64, 2 * cap[0])
    return grow(p, cap[0] * width)


@cython.final
cdef class Scanner(Walker):
    """Walks the documents of one Part (see the module docstring)."""
    cdef int epoch_unit
    # the document in hand, and where its walk is (an element index)
    cdef bint indoc
    cdef int64_t ei, ne             # the element in hand, and the document's element count
    cdef bint saw_commit
    # per element of the document: its span and fields (as hp/hk/he/hn from E_OP on)
    cdef int64_t* el_span
    cdef int64_t* el_hp
    cdef int64_t* el_hk
    cdef int64_t* el_he
    cdef int32_t* el_hn
    cdef int64_t elcap
    # the message's values, read once per document
    cdef bint m_has_scn, m_has_tm, m_has_xid, m_has_cscn, m_has_cidx, m_has_num
    cdef int64_t m_scn, m_tm, m_cscn, m_cidx, m_num
    cdef uint64_t m_xid
    cdef uint8_t m_xtext[24]
    cdef int64_t m_xlen
    cdef uint8_t m_pos[16]          # commit position (8) + c_idx (8)
    cdef bint m_has_pos
    cdef int64_t mp[NF * 5]         # the message's problems: (field, code, pos, a, b)
    cdef int64_t nmp
    # carried scn / tm of open transactions
    cdef Carry* carry
    cdef int64_t ncarry, carrycap
    # what a run that notes relied on (cdcfast/pieces.py): the carried fields it read before
    # writing them (as it found them: a given entry's value, else none), the transactions
    # it touched
    cdef bint noting
    cdef Carry* deps
    cdef int64_t ndeps, depcap
    cdef uint64_t* touched
    cdef int64_t ntouched, touchcap
    cdef readonly bytes pending_columns # STOP_TABLE: the element's schema.columns text, or None
    cdef readonly bint pending_data     # STOP_TABLE: the element is a data event
    cdef uint8_t* scratch           # a value's text unescaped
    cdef int64_t scap
    # the first element's images, read as the walk meets them (checked) into the row its
    # table's output will give it: which output (-1: none), row and op; which images
    cdef int64_t pre_slot, pre_row
    cdef int pre_op
    cdef bint pre_b, pre_a
    cdef readonly int64_t read_as_met   # rows whose images were (tests/test_olr_images_once.py)

    def __cinit__(self, data, offsets, valid, bint images, int epoch_unit=0):
        self.epoch_unit = epoch_unit
        self.indoc = False
        self.carry = NULL
        self.ncarry = self.carrycap = 0
        self.noting = False
        self.deps = NULL
        self.ndeps = self.depcap = 0
        self.touched = NULL
        self.ntouched = self.touchcap = 0
        self.el_span = self.el_hp = self.el_hk = self.el_he = NULL
        self.el_hn = NULL
        self.elcap = 0
        self.scratch = NULL
        self.scap = 0
        self.pre_slot = -1
        self.pre_b = self.pre_a = False
        self.read_as_met = 0

    def __dealloc__(self):
        free(self.carry)
        free(self.deps)
        free(self.touched)
        free(self.scratch)
        free(self.el_span)
        free(self.el_hp)
        free(self.el_hk)
        free(self.el_he)
        free(self.el_hn)

    cdef bint busy(self) noexcept nogil:
        return self.indoc

    def carry_state(self):
        """The carried scn/tm of the transactions still open (for the next part of the same
        call: carry-forward lasts the whole call, SPEC §6)."""
        return bytes((<char*>self.carry)[:self.ncarry * sizeof(Carry)]) if self.ncarry else b""

    def set_carry(self, bytes state):
        cdef int64_t n = len(state) // sizeof(Carry), i
        if n > self.carrycap:
            self.carrycap = n
            self.carry = <Carry*>grow(self.carry, self.carrycap * sizeof(Carry))
        if n:
            memcpy(self.carry, <const char*>state, n * sizeof(Carry))
        for i in range(n):
            self.carry[i].flags = C_GIVEN
        self.ncarry = n

    def note_carry(self):
        """Note what the run relies on of the state it starts from (carry_notes)."""
        self.noting = True

    def carry_notes(self):
        """(the reads before writes, as carry entries whose flags say which field and whether
        the entry was given; the xids of the transactions touched, as uint64 bytes)."""
        return (bytes((<char*>self.deps)[:self.ndeps * sizeof(Carry)]) if self.ndeps else b"",
                bytes((<char*>self.touched)[:self.ntouched * 8]) if self.ntouched else b"")

    cdef int document(self) except -1 nogil:
        """The document at self.pos (or the rest of the one in hand): 0 when done with it,
        else a STOP_ code (the walk then resumes at the element it stopped at).

        The message is walked once, each step checked (`checking`), its elements' fields
        kept as they are met; at the first thing that is not well-formed JSON the strict
        scanner reads the document from its start, for the code and byte its twin gives (and,
        should the walk have been wrong, the document is walked again, trusting the
        scanner)."""
        cdef const uint8_t* b = self.buf
        cdef int64_t start, stop, doc_end, err_pos, v, top
        cdef int code, r
        if not self.indoc:
            start = self.pos
            stop = self.content_end()
            self.dstart = start
            top = BAD
            if b[start] == 123:
                self.checking = True
                self.high = 0
                self.dend = stop
                top = self.message_walk(start)
                if top != BAD and not self.utf8_ok(start, top):
                    top = BAD
            if top == BAD:
                self.undo_pre()
                if json_document(b, start, stop, &doc_end, &code, &err_pos) != 0:
                    r = self.corrupt(start, stop, P_JSON, code, err_pos)
                    if r == 0:
                        self.pos = self.piece_end    # the rest of the piece is that record
                    return r
                self.dend = doc_end
                if b[start] == 110:               # null: a tombstone
                    self.tombstones += 1
                    self.pos = doc_end
                    return 0
                if b[start] != 123:
                    r = self.corrupt(start, doc_end, P_NOT_DOC, 0, start)
                    if r == 0:
                        self.pos = doc_end
                    return r
                self.checking = False
                top = self.message_walk(start)
            self.dend = top
            if self.hn[M_PAYLOAD] != 1 or b[self.hp[M_PAYLOAD]] != 91:
                self.undo_pre()             # (a corrupt record: no row of its elements)
            self.checking = False           # (the walk has checked the whole document)
            v = self.hp[M_PAYLOAD]
            if self.hn[M_PAYLOAD] == 0 or b[v] == 110:
                r = self.corrupt(start, top, P_PAYLOAD, 0, start)
            elif self.hn[M_PAYLOAD] > 1:
                r = self.corrupt(start, top, P_PAYLOAD, 1, self.hk[M_PAYLOAD])
            elif b[v] != 91:
                r = self.corrupt(start, top, P_PAYLOAD, 2, v)
            else:
                self.message()
                self.indoc = True
                self.ei = 0
                self.saw_commit = False
                r = -1
            if r >= 0:
                if r == 0:
                    self.pos = top
                return r
        while self.ei < self.ne:
            r = self.element()
            if r != 0:
                return r
            self.ei += 1
        if self.saw_commit and self.m_has_xid:
            self.forget(self.m_xid)
        self.indoc = False
        self.pos = self.dend
        return 0

    # -- fields ------------------------------------------------------------------------------
    cdef int64_t key_field(self, const uint8_t* b, int64_t k, int64_t n, int level) noexcept nogil:
        """The field a key names at a level (0 the message, 1 an element, 2 its schema)."""
        if level == 0:
            if n == 3 and memcmp(b + k, b"scn", 3) == 0:
                return M_SCN
            if n == 4 and memcmp(b + k, b"scns", 4) == 0:
                return M_SCNS
            if n == 2 and memcmp(b + k, b"tm", 2) == 0:
                return M_TM
            if n == 3 and memcmp(b + k, b"tms", 3) == 0:
                return M_TMS
            if n == 3 and memcmp(b + k, b"xid", 3) == 0:
                return M_XID
            if n == 4 and memcmp(b + k, b"xidn", 4) == 0:
                return M_XIDN
            if n == 5 and memcmp(b + k, b"c_scn", 5) == 0:
                return M_C_SCN
            if n == 5 and memcmp(b + k, b"c_idx", 5) == 0:
                return M_C_IDX
            if n == 2 and memcmp(b + k, b"db", 2) == 0:
                return M_DB
            if n == 3 and memcmp(b + k, b"num", 3) == 0:
                return M_NUM
            if n == 7 and memcmp(b + k, b"payload", 7) == 0:
                return M_PAYLOAD
            return -1
        if level == 1:
            if n == 2 and memcmp(b + k, b"op", 2) == 0:
                return E_OP
            if n == 6 and memcmp(b + k, b"schema", 6) == 0:
                return E_SCHEMA
            if n == 5 and memcmp(b + k, b"after", 5) == 0:
                return E_AFTER
            if n == 6 and memcmp(b + k, b"before", 6) == 0:
                return E_BEFORE
            if n == 3 and memcmp(b + k, b"rid", 3) == 0:
                return E_RID
            if n == 3 and memcmp(b + k, b"num", 3) == 0:
                return E_NUM
            if n == 3 and memcmp(b + k, b"sql", 3) == 0:
                return E_SQL
            if n == 3 and memcmp(b + k, b"ddl", 3) == 0:
                return E_DDL
            if n == 3 and memcmp(b + k, b"seq", 3) == 0:
                return E_SEQ
            if n == 6 and memcmp(b + k, b"offset", 6) == 0:
                return E_OFFSET
            if n == 4 and memcmp(b + k, b"redo", 4) == 0:
                return E_REDO
            return -1
        if n == 5 and memcmp(b + k, b"owner", 5) == 0:
            return ES_OWNER
        if n == 5 and memcmp(b + k, b"table", 5) == 0:
            return ES_TABLE
        if n == 3 and memcmp(b + k, b"obj", 3) == 0:
            return ES_OBJ
        if n == 7 and memcmp(b + k, b"columns", 7) == 0:
            return ES_COLUMNS
        return -1

    cdef int64_t message_walk(self, int64_t start) except -2 nogil:
        """The message's fields and its elements' (kept per element); returns the message's
        end, or BAD."""
        self.reset_fields(0, NF)
        self.ne = 0
        self.undo_pre()
        return self.walk(start, 0, 1)

    cdef int64_t walk(self, int64_t i, int level, int depth) except -2 nogil:
        """Record the fields of the object at i (level 0 the message, 1 an element, 2 its
        schema; `depth`: its nesting, 1 at the top); returns its end, or BAD. A key with
        escapes is the key it spells (`header_key`)."""
        cdef const uint8_t* b = self.buf
        cdef int64_t end = self.dend, k, e, v, f, at = 0
        cdef int esc, done
        i = ws(b, i + 1, end)
        if i >= end:
            return BAD
        if b[i] == 125:
            return i + 1
        while True:
            v = header_key(self, i, level, depth, at, &k, &e, &esc, &f)
            if v == BAD:
                return BAD
            at += 1
            if f >= 0:
                self.hn[f] += 1
                if self.hn[f] == 1:
                    self.hp[f] = v
                elif self.hn[f] == 2:
                    self.hk[f] = i
            e = NOT_READ
            if f == E_SCHEMA and b[v] == 123 and self.hn[f] == 1:
                e = self.walk(v, 2, depth + 1)
            elif f == M_PAYLOAD and b[v] == 91 and self.hn[f] == 1:
                e = self.elements(v, depth + 1)
            elif (f == E_AFTER or f == E_BEFORE) and b[v] == 123 and self.hn[f] == 1 \
                    and self.ne == 0 and self.images:
                e = self.pre_image(v, f == E_AFTER, depth + 1)
            if e == NOT_READ:
                e = self.skip(v, 512 - depth)
            if e == BAD:
                return BAD
            if f >= 0 and self.hn[f] == 1:
                self.he[f] = e
            i = self.after_value(e, 125, &done)
            if i == BAD or done:
                return i

    cdef int64_t elements(self, int64_t v, int depth) except -2 nogil:
        """The payload array at v (nested `depth` deep): each element's fields walked and
        kept; returns the array's end, or BAD."""
        cdef const uint8_t* b = self.buf
        cdef int64_t i = ws(b, v + 1, self.dend), e, n
        cdef int done
        if i >= self.dend:
            return BAD
        if b[i] == 93:
            return i + 1
        while True:
            n = self.ne
            if n >= self.elcap:
                self.elcap = max(16, 2 * self.elcap)
                self.el_span = <int64_t*>grow(self.el_span, self.elcap * 16)
                self.el_hp = <int64_t*>grow(self.el_hp, self.elcap * NE * 8)
                self.el_hk = <int64_t*>grow(self.el_hk, self.elcap * NE * 8)
                self.el_he = <int64_t*>grow(self.el_he, self.elcap * NE * 8)
                self.el_hn = <int32_t*>grow(self.el_hn, self.elcap * NE * 4)
            if b[i] == 123:
                self.reset_fields(E_OP, NF)
                e = self.walk(i, 1, depth + 1)
                if e == BAD:
                    return BAD
                memcpy(self.el_hp + n * NE, &self.hp[E_OP], NE * 8)
                memcpy(self.el_hk + n * NE, &self.hk[E_OP], NE * 8)
                memcpy(self.el_he + n * NE, &self.he[E_OP], NE * 8)
                memcpy(self.el_hn + n * NE, &self.hn[E_OP], NE * 4)
            else:
                e = self.skip(i, 512 - depth)
                if e == BAD:
                    return BAD
            self.el_span[2 * n] = i
            self.el_span[2 * n + 1] = e
            self.ne = n + 1
            i = self.after_value(e, 93, &done)
            if i == BAD or done:
                return i

    cdef void mproblem(self, int64_t f, int64_t code, int64_t pos, int64_t a, int64_t z) noexcept nogil:
        cdef int64_t* p = self.mp + self.nmp * 5
        if self.nmp >= NF:
            return
        p[0] = f
        p[1] = code
        p[2] = pos
        p[3] = a
        p[4] = z
        self.nmp += 1

    cdef bint mint(self, int64_t f, int64_t code, int64_t* out) noexcept nogil:
        """Message field f as an int64 (a JSON integer or a string holding one; SCNs and
        c_idx: 0 up to 2^63 - 1): 1, else 0 (absent, null, or a problem `code` noted)."""
        cdef const uint8_t* b = self.buf
        cdef int64_t v = self.hp[f], e
        if self.hn[f] == 0 or (self.hn[f] == 1 and b[v] == 110):
            return False
        if self.hn[f] > 1:
            self.mproblem(f, P_TWICE, self.hk[f], self.hk[f], self.hk[f])
            return False
        e = self.he[f]
        if (cdc_jv_int(b + v + 1, e - v - 2, I64_MIN, I64_MAX, out) if b[v] == 34
                else cdc_jv_int(b + v, e - v, I64_MIN, I64_MAX, out)) \
                and not (code != P_NOT_INT and out[0] < 0):
            return True
        self.mproblem(f, code, v, v, e)
        return False

    cdef int64_t unescaped(self, int64_t v, int64_t e, const uint8_t** p) except -2 nogil:
        """The text of the string b[v:e] (quotes included) in (p, length): in place without
        escapes, else unescaped into the scratch buffer; -1 for a lone surrogate."""
        cdef const uint8_t* b = self.buf
        cdef int esc = 0
        str_end(b, v + 1, self.dend, &esc)
        if not esc:
            p[0] = b + v + 1
            return e - v - 2
        p[0] = self.room(e - v)
        return json_unescape(b + v + 1, e - v - 2, self.room(e - v))

    cdef int message(self) except -1 nogil:
        """The message's own fields, once per document: xid, scn and tm (carried forward),
        the positions; their problems are every row's (docs/olr.md, "Message fields")."""
        cdef const uint8_t* b = self.buf
        cdef const uint8_t* p
        cdef int64_t v, e, x, k
        cdef uint64_t xid
        cdef bint scn_sent, tm_sent
        cdef Carry* c
        self.nmp = 0
        self.m_has_xid = False
        self.m_xlen = 0
        # txid: xid (a string), else xidn (a number or a string holding one)
        if self.hn[M_XID] > 0 and not (self.hn[M_XID] == 1 and b[self.hp[M_XID]] == 110):
            v = self.hp[M_XID]
            e = self.he[M_XID]
            if self.hn[M_XID] > 1:
                self.mproblem(M_XID, P_TWICE, self.hk[M_XID], self.hk[M_XID], self.hk[M_XID])
            elif b[v] == 34:
                k = self.unescaped(v, e, &p)
                if k < 0:
                    self.mproblem(M_XID, P_SURROGATE, v, v, e)
                elif olr_xid(p, k, &xid):
                    self.m_has_xid = True
                    self.m_xid = xid
                else:
                    self.mproblem(M_XID, P_XID, v, v, e)
            else:
                self.mproblem(M_XID, P_XID, v, v, e)
        elif self.hn[M_XIDN] > 0 and not (self.hn[M_XIDN] == 1 and b[self.hp[M_XIDN]] == 110):
            v = self.hp[M_XIDN]
            e = self.he[M_XIDN]
            if self.hn[M_XIDN] > 1:
                self.mproblem(M_XIDN, P_TWICE, self.hk[M_XIDN], self.hk[M_XIDN], self.hk[M_XIDN])
            elif (b[v] == 34 and olr_uint(b + v + 1, e - v - 2, &xid)) \
                    or (b[v] != 34 and olr_uint(b + v, e - v, &xid)):
                self.m_has_xid = True
                self.m_xid = xid
            else:
                self.mproblem(M_XIDN, P_XID, v, v, e)
        if self.m_has_xid:
            self.m_xlen = olr_xid_text(self.m_xid, self.m_xtext)
        # scn: scn, else scns (sent: given, even when bad)
        self.m_has_scn = False
        scn_sent = True
        if self.present(M_SCN):
            self.m_has_scn = self.mint(M_SCN, P_SCN_INT, &self.m_scn)
        elif self.present(M_SCNS):
            v = self.hp[M_SCNS]
            e = self.he[M_SCNS]
            if self.hn[M_SCNS] > 1:
                self.mproblem(M_SCNS, P_TWICE, self.hk[M_SCNS], self.hk[M_SCNS], self.hk[M_SCNS])
            elif b[v] == 34 and olr_scns(b + v + 1, e - v - 2, &self.m_scn):
                self.m_has_scn = True
            else:
                self.mproblem(M_SCNS, P_SCN, v, v, e)
        else:
            scn_sent = False
        # tm: tm, else tms (read alike)
        self.m_has_tm = False
        tm_sent = True
        if self.present(M_TM):
            self.m_has_tm = self.mtime(M_TM)
        elif self.present(M_TMS):
            self.m_has_tm = self.mtime(M_TMS)
        else:
            tm_sent = False
        # carry-forward within the transaction: a field not sent takes the remembered value;
        # one sent (a bad one is null) is remembered when good
        if self.m_has_xid:
            c = self.carried(self.m_xid)
            if self.noting and not (c.flags & C_SEEN):
                c.flags |= C_SEEN
                self.touched = <uint64_t*>log_room(self.touched, self.ntouched,
                                                   &self.touchcap, 8)
                self.touched[self.ntouched] = c.xid
                self.ntouched += 1
            if scn_sent:
                if self.m_has_scn:
                    c.scn = self.m_scn
                    c.has_scn = 1
                    c.flags |= C_OWN_SCN
            else:
                if self.noting and not (c.flags & (C_OWN_SCN | C_DEP_SCN)):
                    self.depend(c, C_DEP_SCN)
                if c.has_scn:
                    self.m_scn = c.scn
                    self.m_has_scn = True
            if tm_sent:
                if self.m_has_tm:
                    c.tm = self.m_tm
                    c.has_tm = 1
                    c.flags |= C_OWN_TM
            else:
                if self.noting and not (c.flags & (C_OWN_TM | C_DEP_TM)):
                    self.depend(c, C_DEP_TM)
                if c.has_tm:
                    self.m_tm = c.tm
                    self.m_has_tm = True
        self.m_has_cscn = self.mint(M_C_SCN, P_SCN_INT, &self.m_cscn)
        self.m_has_cidx = self.mint(M_C_IDX, P_UNSIGNED, &self.m_cidx)
        self.m_has_num = self.mint(M_NUM, P_NOT_INT, &self.m_num)
        # positions: c_scn (else scn), c_idx
        self.m_has_pos = self.m_has_cscn or self.m_has_scn
        if self.m_has_pos:
            x = self.m_cscn if self.m_has_cscn else self.m_scn
            be64(self.m_pos, <uint64_t>x)
            be64(self.m_pos + 8, <uint64_t>(self.m_cidx if self.m_has_cidx else 0))
        return 0

    cdef bint present(self, int64_t f) noexcept nogil:
        """Field f is sent: given (even twice), and not a single null."""
        return self.hn[f] > 1 or (self.hn[f] == 1 and self.buf[self.hp[f]] != 110)

    cdef bint mtime(self, int64_t f) noexcept nogil:
        """tm / tms: an epoch (a JSON integer, or digits as text) or ISO-8601 text, either
        optionally followed by ",<zone>"."""
        cdef const uint8_t* b = self.buf
        cdef int64_t v = self.hp[f], e = self.he[f], x
        if self.hn[f] > 1:
            self.mproblem(f, P_TWICE, self.hk[f], self.hk[f], self.hk[f])
            return False
        if b[v] == 34:
            if olr_time_text(b + v + 1, e - v - 2, self.epoch_unit, &self.m_tm):
                return True
        elif olr_epoch(b + v, e - v, self.epoch_unit, &self.m_tm) > 0:
            return True
        self.mproblem(f, P_TIME, v, v, e)
        return False

    cdef int depend(self, Carry* c, uint8_t which) except -1 nogil:
        """Log a read of a carried field the run did not write (as the entry holds it)."""
        c.flags |= which
        self.deps = <Carry*>log_room(self.deps, self.ndeps, &self.depcap, sizeof(Carry))
        self.deps[self.ndeps] = c[0]
        self.deps[self.ndeps].flags = which | (c.flags & C_GIVEN)
        self.ndeps += 1
        return 0

    cdef Carry* carried(self, uint64_t xid) except NULL nogil:
        """The carry entry of a transaction (made when new)."""
        cdef int64_t i
        for i in range(self.ncarry - 1, -1, -1):
            if self.carry[i].xid == xid:
                return &self.carry[i]
        if self.ncarry >= self.carrycap:
            self.carrycap = max(16, 2 * self.carrycap)
            self.carry = <Carry*>grow(self.carry, self.carrycap * sizeof(Carry))
        i = self.ncarry
        self.ncarry += 1
        self.carry[i].xid = xid
        self.carry[i].has_scn = self.carry[i].has_tm = 0
        self.carry[i].flags = 0
        return &self.carry[i]

    cdef void forget(self, uint64_t xid) noexcept nogil:
        cdef int64_t i
        for i in range(self.ncarry):
            if self.carry[i].xid == xid:
                self.carry[i] = self.carry[self.ncarry - 1]
                self.ncarry -= 1
                return

    # -- one element -------------------------------------------------------------------------
    cdef int element_op(self) noexcept nogil:
        cdef const uint8_t* b = self.buf
        cdef int64_t v = self.hp[E_OP], n
        if self.hn[E_OP] != 1 or b[v] != 34:
            return OP_NONE
        n = self.he[E_OP] - v - 2
        v += 1
        if n == 1:
            if b[v] == 99:
                return OP_C
            if b[v] == 117:
                return OP_U
            if b[v] == 100:
                return OP_D
        elif n == 5 and memcmp(b + v, b"begin", 5) == 0:
            return OP_BEGIN
        elif n == 6 and memcmp(b + v, b"commit", 6) == 0:
            return OP_COMMIT
        elif n == 3 and memcmp(b + v, b"ddl", 3) == 0:
            return OP_DDL
        elif n == 5 and memcmp(b + v, b"chkpt", 5) == 0:
            return OP_CHKPT
        return OP_NONE

    cdef bint is_text(self, int64_t f) noexcept nogil:
        """Field f holds a non-empty JSON string."""
        cdef int64_t v = self.hp[f]
        return v >= 0 and self.hn[f] == 1 and self.buf[v] == 34 and self.buf[v + 1] != 34

    cdef int element(self) except -1 nogil:
        """The document's element `ei`: one row (or a stop, nothing written)."""
        cdef const uint8_t* b = self.buf
        cdef int64_t n = self.ei, start = self.el_span[2 * n], end = self.el_span[2 * n + 1]
        cdef int64_t tid, slot, row
        cdef int op
        cdef bint data, control
        if b[start] != 123:
            self.undo_pre()
            return self.corrupt(start, end, P_ELEMENT, n, start)
        memcpy(&self.hp[E_OP], self.el_hp + n * NE, NE * 8)
        memcpy(&self.hk[E_OP], self.el_hk + n * NE, NE * 8)
        memcpy(&self.he[E_OP], self.el_he + n * NE, NE * 8)
        memcpy(&self.hn[E_OP], self.el_hn + n * NE, NE * 4)
        if self.hn[E_SCHEMA] != 1 or b[self.hp[E_SCHEMA]] != 123:
            self.reset_fields(ES_OWNER, NF)
        op = self.element_op()
        control = op == OP_BEGIN or op == OP_COMMIT or op == OP_DDL or op == OP_CHKPT
        data = not control
        if op == OP_COMMIT:
            self.saw_commit = True
        if self.pre_slot >= 0 and (n != 0 or op != self.pre_op or not data
                                   or self.hn[E_BEFORE] > 1 or self.hn[E_AFTER] > 1):
            self.undo_pre()                 # not this element's images after all
        if control and self.images:             # control events: headers() only
            return self.counted(True, False)
        if data and not self.is_text(ES_TABLE):
            self.undo_pre()
            if op != OP_NONE:
                return self.corrupt(start, end, P_TABLE, n, start)
            if self.hn[E_OP] > 1:           # nothing tells what it is: its op's problem
                return self.corrupt(start, end, P_OP_CORRUPT, 1, self.hk[E_OP])
            if self.hn[E_OP] == 0 or b[self.hp[E_OP]] == 110:
                return self.corrupt(start, end, P_OP_CORRUPT, 0, start)
            return self.corrupt(start, end, P_OP_CORRUPT, 2, self.hp[E_OP])
        tid = self.element_table(0 if data else 1)
        if tid < 0:
            self.undo_pre()
            self.pending_data = data
            with gil:
                self.pending_columns = None
                if self.hn[ES_COLUMNS] == 1 and b[self.hp[ES_COLUMNS]] == 91:
                    self.pending_columns = bytes(b[self.hp[ES_COLUMNS]:self.he[ES_COLUMNS]])
            return STOP_TABLE
        self.cur_tid = tid
        slot = self.tslot[tid]
        if self.pre_slot >= 0 and self.pre_slot != slot:
            self.undo_pre()
        if slot <= -2:                      # a table name with a lone surrogate: none
            return self.corrupt(start, end, P_TABLE, n, start)
        self.unknown += self.tunk[tid]
        if slot < 0:
            return self.counted(control, False)
        return self.write_row(<Out>self.outp[slot], slot, tid, op, data, control, start, end)

    cdef int write_row(self, Out o, int64_t slot, int64_t tid, int op, bint data, bint control,
                       int64_t start, int64_t end) except -1 nogil:
        """The element's row, into its output o (at `slot`)."""
        cdef int64_t row
        cdef int r
        if self.pre_slot >= 0 and o.length != self.pre_row:
            self.undo_pre()
        if o.length >= self.batch_rows:
            self.undo_pre()
            self.unknown -= self.tunk[tid]
            self.full_slot = slot
            return STOP_BATCH
        if self.pre_slot < 0:
            o.reserve_row()
            o.null_row(o.length)
        row = o.length
        self.header(o, row, op, start, end)
        if data and o.images and op != OP_NONE:
            r = self.images_of(o, row, op)
            if r != 0:
                o.clear_row(row)
                self.unknown -= self.tunk[tid]
                return r
            self.extra += self.nx
        if self.pre_slot >= 0:              # its images are the row's now
            self.read_as_met += 1
        self.pre_slot = -1
        self.pre_a = self.pre_b = False
        if control:
            self.control += 1
        o.finish_row(row, self.msg, start, end, op)
        self.records += 1
        self.seq += 1
        return 0

    # -- the first element's images, read as the walk meets them -----------------------------
    cdef int64_t pre_image(self, int64_t v, bint after, int depth) except -2 nogil:
        """The image object at v of the document's first element, read now (checked) into
        the row its table's output will give it, when the element's op (it reads this image)
        and table (an output of a layout not typed by the data, with room) are known already;
        returns its end, BAD, or NOT_READ (then `skip`ped as before, and read with the rest
        of the element)."""
        cdef int op
        cdef int64_t tid, slot
        if self.hn[E_OP] != 1:
            return NOT_READ
        op = self.element_op()
        if not ((after and (op == OP_C or op == OP_U))
                or (not after and (op == OP_D or op == OP_U))):
            return NOT_READ
        if self.pre_slot < 0:
            if self.hn[E_SCHEMA] != 1 or not self.is_text(ES_TABLE):
                return NOT_READ
            tid = self.known_table()
            if tid < 0:
                return NOT_READ
            slot = self.tslot[tid]
            if slot < 0 or self.tunk[tid] or not self.pre_row_in(<Out>self.outp[slot], slot):
                return NOT_READ
            self.pre_op = op
        elif op != self.pre_op:
            return NOT_READ
        if after:
            self.pre_a = True
        else:
            self.pre_b = True
        return self.walk_image(<Out>self.outp[self.pre_slot], self.pre_row, v, after, depth)

    cdef bint pre_row_in(self, Out o, int64_t slot) except -1 nogil:
        """A row reserved in the output at `slot` for the element's images (images_row)."""
        if not self.images_row(o):
            return False
        self.pre_slot = slot
        self.pre_row = o.length
        return True

    cdef int64_t known_table(self) noexcept nogil:
        """The id of the element's (schema.owner, schema.table) when it has one already,
        else -1 (nothing asked of Python: that waits for the element's turn)."""
        cdef const uint8_t* b = self.buf
        cdef const char* p
        cdef int64_t t, sa = 0, sn = 0, ta = self.hp[ES_TABLE], tn = self.he[ES_TABLE] - ta
        if self.is_text(ES_OWNER):
            sa = self.hp[ES_OWNER]
            sn = self.he[ES_OWNER] - sa
        t = self.last_tid
        if t >= 0:
            p = self.tname[t]
            if self.tname_n[t] == 2 + sn + tn and p[0] == 0 \
                    and memcmp(p + 1, b + sa, sn) == 0 and memcmp(p + 2 + sn, b + ta, tn) == 0:
                return t
        for t in range(self.ntid):
            p = self.tname[t]
            if self.tname_n[t] == 2 + sn + tn and p[0] == 0 \
                    and memcmp(p + 1, b + sa, sn) == 0 and memcmp(p + 2 + sn, b + ta, tn) == 0:
                return t
        return -1

    cdef void undo_pre(self) noexcept nogil:
        """Take back the images read as the walk met them (the element turned out to be
        another table's, a control event, a corrupt record, or not the first)."""
        if self.pre_slot >= 0:
            (<Out>self.outp[self.pre_slot]).clear_row(self.pre_row)
        self.pre_slot = -1
        self.pre_a = self.pre_b = False

    cdef uint8_t* room(self, int64_t n) except NULL nogil:
        if n > self.scap:
            self.scap = max(n, 2 * self.scap, 256)
            self.scratch = <uint8_t*>grow(self.scratch, self.scap)
        return self.scratch

    cdef int64_t element_table(self, uint8_t tag) except -2 nogil:
        """The table id of the element's (schema.owner, schema.table) texts, or -1 (tag 0:
        a data event's, 1: a control event's, whose first record fixes no layout)."""
        cdef int64_t sa = 0, sn = 0, ta = 0, tn = 0
        if self.is_text(ES_TABLE):
            ta = self.hp[ES_TABLE]
            tn = self.he[ES_TABLE] - ta
            if self.is_text(ES_OWNER):
                sa = self.hp[ES_OWNER]
                sn = self.he[ES_OWNER] - sa
        return self.table_id(tag, sa, sn, ta, tn)

    # -- the header --------------------------------------------------------------------------
    cdef int twice(self, Out o, int64_t row, int64_t f) except -1 nogil:
        if self.hn[f] > 1:
            o.add_problem(row, f, P_TWICE, self.hk[f], self.hk[f], self.hk[f])
            return 1
        return 0

    cdef int text(self, Out o, int64_t row, int64_t f, Column c) except -1 nogil:
        """Field f as text: a string's text, any other value its JSON text; null stays null.
        1 when written."""
        cdef const uint8_t* b = self.buf
        cdef int64_t v = self.hp[f], e
        if v < 0 or self.twice(o, row, f) or b[v] == 110:
            return 0
        e = self.he[f]
        if b[v] == 34:
            if put_string(c, row, b, v, self.dend):
                o.add_problem(row, f, P_SURROGATE, v, v, e)
                return 0
            return 1
        put_bytes(c, row, b + v, e - v)     # a number, true, false; a container's JSON text
        return 1

    cdef int eint(self, Out o, int64_t row, int64_t f, Column c) except -1 nogil:
        """Element field f as an int64 into c."""
        cdef const uint8_t* b = self.buf
        cdef int64_t v = self.hp[f], e, x
        if v < 0 or self.twice(o, row, f) or b[v] == 110:
            return 0
        e = self.he[f]
        if cdc_jv_int(b + v + 1, e - v - 2, I64_MIN, I64_MAX, &x) if b[v] == 34 \
                else cdc_jv_int(b + v, e - v, I64_MIN, I64_MAX, &x):
            put_fixed(c, row, &x, 8)
            return 1
        o.add_problem(row, f, P_NOT_INT, v, v, e)
        return 0

    cdef int header(self, Out o, int64_t row, int op, int64_t start, int64_t end) except -1 nogil:
        cdef const uint8_t* b = self.buf
        cdef int64_t v, e, k
        cdef uint8_t* p
        col_valid(o.source_v, row)
        for k in range(self.nmp):
            o.add_problem(row, self.mp[k * 5], self.mp[k * 5 + 1], self.mp[k * 5 + 2],
                          self.mp[k * 5 + 3], self.mp[k * 5 + 4])
        # op / source_op
        if self.hn[E_OP] == 0 or (self.hn[E_OP] == 1 and b[self.hp[E_OP]] == 110):
            o.add_problem(row, E_OP, P_MISSING, start, start, start)
        else:
            self.text(o, row, E_OP, o.source_op)
            if self.hn[E_OP] == 1:
                if op == OP_NONE:
                    o.add_problem(row, E_OP, P_BAD_OP, self.hp[E_OP], self.hp[E_OP],
                                  self.he[E_OP])
                elif op == OP_CHKPT:
                    put_bytes(o.op, row, <const uint8_t*>b"checkpoint", 10)
                else:
                    v = self.hp[E_OP] + 1
                    put_bytes(o.op, row, b + v, self.he[E_OP] - v - 1)
        # schema / table
        self.schema_fields(o, row)
        if self.tcat_p[2 * self.cur_tid + 1] != NULL:     # the catalog's names
            if self.tcat_p[2 * self.cur_tid] != NULL:
                put_bytes(o.schema, row, self.tcat_p[2 * self.cur_tid],
                          self.tcat_n[2 * self.cur_tid])
            put_bytes(o.table, row, self.tcat_p[2 * self.cur_tid + 1],
                      self.tcat_n[2 * self.cur_tid + 1])
        else:
            if self.is_text(ES_OWNER):
                self.text(o, row, ES_OWNER, o.schema)
            if self.is_text(ES_TABLE):
                self.text(o, row, ES_TABLE, o.table)
        if self.m_has_xid and op != OP_CHKPT:
            put_bytes(o.txid, row, self.m_xtext, self.m_xlen)
        if self.m_has_tm:
            put_fixed(o.commit_ts, row, &self.m_tm, 8)
            put_fixed(o.change_ts, row, &self.m_tm, 8)
        if self.m_has_pos:
            put_bytes(o.commit_pos, row, self.m_pos, 8)
            if o.change_pos.dlen + 20 > o.change_pos.dcap:
                data_room(o.change_pos, 20)
            p = o.change_pos.data + o.change_pos.dlen
            memcpy(p, self.m_pos, 16)
            be32(p + 16, <uint32_t>self.ei)
            o.change_pos.dlen += 20
            o.change_pos.offs[row + 1] = <int32_t>o.change_pos.dlen
            col_valid(o.change_pos, row)
        (<int64_t*>o.seq.data)[row] = self.seq
        col_valid(o.seq, row)
        # source
        self.text(o, row, M_DB, (<Column>o.srcp[S_DB]))
        if self.m_has_scn:
            put_fixed((<Column>o.srcp[S_SCN]), row, &self.m_scn, 8)
        if self.m_has_cscn:
            put_fixed((<Column>o.srcp[S_C_SCN]), row, &self.m_cscn, 8)
        if self.m_has_cidx:
            put_fixed((<Column>o.srcp[S_C_IDX]), row, &self.m_cidx, 8)
        if not self.eint(o, row, E_NUM, (<Column>o.srcp[S_NUM])) and self.m_has_num:
            put_fixed((<Column>o.srcp[S_NUM]), row, &self.m_num, 8)
        if self.present(M_XID):
            self.text(o, row, M_XID, (<Column>o.srcp[S_XID]))
        elif self.present(M_XIDN):
            self.text(o, row, M_XIDN, (<Column>o.srcp[S_XID]))
        self.text(o, row, E_RID, (<Column>o.srcp[S_RID]))
        if not self.text(o, row, E_SQL, (<Column>o.srcp[S_DDL])):
            self.text(o, row, E_DDL, (<Column>o.srcp[S_DDL]))
        self.eint(o, row, E_SEQ, (<Column>o.srcp[S_CSEQ]))
        self.eint(o, row, E_OFFSET, (<Column>o.srcp[S_COFF]))
        self.redo(o, row)
        return 0

    cdef int schema_fields(self, Out o, int64_t row) except -1 nogil:
        """The element's schema: an object whose owner and table are text, obj an integer,
        columns a list of columns (docs/olr.md)."""
        cdef const uint8_t* b = self.buf
        cdef int64_t v = self.hp[E_SCHEMA], f, k
        if v < 0 or self.twice(o, row, E_SCHEMA) or b[v] == 110:
            return 0
        if b[v] != 123:
            o.add_problem(row, E_SCHEMA, P_NOT_OBJECT, v, v, self.he[E_SCHEMA])
            return 0
        for k in range(2):
            f = ES_OWNER if k == 0 else ES_TABLE
            v = self.hp[f]
            if v >= 0 and not self.twice(o, row, f) and b[v] != 110 and b[v] != 34:
                o.add_problem(row, f, P_TEXT, v, v, self.he[f])
        self.eint(o, row, ES_OBJ, (<Column>o.srcp[S_OBJ]))
        v = self.hp[ES_COLUMNS]
        if v >= 0 and not self.twice(o, row, ES_COLUMNS) and b[v] != 110 \
                and not self.columns_ok(v):
            o.add_problem(row, ES_COLUMNS, P_COLUMNS, v, v, self.he[ES_COLUMNS])
        return 0

    cdef int columns_ok(self, int64_t v) except -1 nogil:
        """schema.columns at v is a list of objects, each with one text `name` (no lone
        surrogate in it)."""
        cdef const uint8_t* b = self.buf
        cdef int64_t i, k, e, w, names, we
        cdef int esc, vesc
        if b[v] != 91:
            return False
        i = ws(b, v + 1, self.dend)
        while b[i] != 93:
            if b[i] != 123:
                return False
            names = 0
            k = ws(b, i + 1, self.dend)
            while b[k] == 34:
                esc = 0
                e = str_end(b, k + 1, self.dend, &esc)
                w = ws(b, ws(b, e + 1, self.dend) + 1, self.dend)
                if not esc and e - k - 1 == 4 and memcmp(b + k + 1, b"name", 4) == 0:
                    names += 1
                    if b[w] != 34:
                        return False
                    vesc = 0
                    we = str_end(b, w + 1, self.dend, &vesc)
                    if vesc and json_unescape(b + w + 1, we - w - 1,
                                              self.room(we - w)) < 0:
                        return False
                k = ws(b, token_end(b, w, self.dend), self.dend)
                if b[k] == 44:
                    k = ws(b, k + 1, self.dend)
            if names != 1:
                return False
            i = ws(b, k + 1, self.dend)
            if b[i] == 44:
                i = ws(b, i + 1, self.dend)
        return True

    cdef int redo(self, Out o, int64_t row) except -1 nogil:
        cdef const uint8_t* b = self.buf
        cdef int64_t v = self.hp[E_REDO], e
        cdef int64_t n
        if v < 0 or self.twice(o, row, E_REDO) or b[v] == 110:
            return 0
        e = self.he[E_REDO]
        n = e - v
        if b[v] == 116 or (n == 1 and b[v] == 49) or (n == 3 and b[v] == 34 and b[v + 1] == 49):
            bits_set((<Column>o.srcp[S_CREDO]).data, row)
            col_valid((<Column>o.srcp[S_CREDO]), row)
        elif b[v] == 102 or (n == 1 and b[v] == 48) or (n == 3 and b[v] == 34 and b[v + 1] == 48):
            col_valid((<Column>o.srcp[S_CREDO]), row)
        else:
            o.add_problem(row, E_REDO, P_BOOL, v, v, e)
        return 0

    # -- row images --------------------------------------------------------------------------
    cdef int images_of(self, Out o, int64_t row, int op) except -1 nogil:
        """before, after, changed, present of a data event's row; a stop (the row is then
        taken back by the caller) when a JSON-kinds layout meets a new column."""
        cdef int64_t j, n
        cdef int r
        cdef bint has_b = False, has_a = False
        cdef bint pre = self.pre_slot >= 0
        if not pre:
            self.nx = 0
            if o.ncols:                              # no columns: no arrays (NULL)
                memset(o.sent_b, 0, o.ncols)
                memset(o.sent_a, 0, o.ncols)
        if op == OP_D or op == OP_U:
            r = self.image_of(o, row, 0, pre and self.pre_b, &has_b)
            if r != 0:
                return r
        if op == OP_C or op == OP_U:
            r = self.image_of(o, row, 1, pre and self.pre_a, &has_a)
            if r != 0:
                return r
        n = o.ncols
        cdef uint8_t*** fl = o.flags
        cdef int64_t byte = row >> 3
        cdef uint8_t bit = <uint8_t>(1 << (row & 7))
        if not o.want_flags:            # a projection without changed and present
            return 0
        if op == OP_C or op == OP_D:
            col_valid(o.changed_v, row)
            if has_a or has_b:              # present: null without the image
                col_valid(o.present_v, row)
            for j in range(n):
                if has_a or has_b:
                    fl[4 * j][0][byte] |= bit
                    fl[4 * j + 1][0][byte] |= bit
                if op == OP_C:
                    fl[4 * j + 2][0][byte] |= bit
                fl[4 * j + 3][0][byte] |= bit
        elif op == OP_U and has_a:
            col_valid(o.present_v, row)
            col_valid(o.changed_v, row)
            for j in range(n):
                fl[4 * j + 1][0][byte] |= bit
                fl[4 * j + 3][0][byte] |= bit
                if o.sent_a[j]:
                    fl[4 * j][0][byte] |= bit
                    if not o.sent_b[j] or differs(<Column>o.beforep[j], <Column>o.afterp[j], row):
                        fl[4 * j + 2][0][byte] |= bit
        return 0

    cdef int image_of(self, Out o, int64_t row, int which, bint read, bint* has) except -1 nogil:
        """The before (0) or after (1) image, unless the walk read it as it met it
        (`read`)."""
        if not read:
            return self.one_image(o, row, which, has)
        has[0] = True
        if which:
            col_valid(o.after_v, row)
        else:
            col_valid(o.before_v, row)
        return 0

    cdef int one_image(self, Out o, int64_t row, int which, bint* has) except -1 nogil:
        """The before (0) or after (1) image: an object, or an array of one-member objects."""
        cdef const uint8_t* b = self.buf
        cdef int64_t f = E_AFTER if which else E_BEFORE, v = self.hp[f], i, e, w
        cdef int r
        cdef bint values
        has[0] = False
        if v < 0 or self.twice(o, row, f) or b[v] == 110:
            return 0
        if b[v] == 91:
            i = self.bad_pair(v)
            if i >= 0:
                o.add_problem(row, f, P_PAIR, i, i, token_end(b, i, self.dend))
                return 0
        if b[v] != 123 and b[v] != 91:
            o.add_problem(row, f, P_NOT_OBJECT, v, v, self.he[f])
            return 0
        values = which or o.want_before     # (a projection without before: values skipped)
        if b[v] == 123:
            r = self.image(o, row, v, which, values)
        else:
            r = 0
            i = ws(b, v + 1, self.dend)
            while b[i] != 93:
                r = self.image(o, row, i, which, values)
                if r != 0:
                    break
                i = ws(b, value_end(b, i, self.dend), self.dend)
                if b[i] == 44:
                    i = ws(b, i + 1, self.dend)
        if r != 0:
            return r
        if which:
            col_valid(o.after_v, row)
        else:
            col_valid(o.before_v, row)
        has[0] = True
        return 0

    cdef int64_t bad_pair(self, int64_t v) noexcept nogil:
        """The first element of the array at v that is not an object of exactly one member,
        or -1."""
        cdef const uint8_t* b = self.buf
        cdef int64_t i = ws(b, v + 1, self.dend), k, e
        cdef int esc
        while b[i] != 93:
            if b[i] != 123:
                return i
            k = ws(b, i + 1, self.dend)
            if b[k] != 34:
                return i
            e = str_end(b, k + 1, self.dend, &esc)
            e = ws(b, ws(b, e + 1, self.dend) + 1, self.dend)
            e = ws(b, token_end(b, e, self.dend), self.dend)
            if b[e] != 125:
                return i
            i = ws(b, e + 1, self.dend)
            if b[i] == 44:
                i = ws(b, i + 1, self.dend)
        return -1

    # -- one value ---------------------------------------------------------------------------
    cdef int convert(self, Out o, Column c, int64_t j, int64_t row, int64_t v, int64_t e,
                     int esc) except -1 nogil:
        """1 when the value b[v:e] (not null) is one of column j's type and was written, 2 for
        a lone surrogate in a text, else 0 (docs/olr.md, "Values")."""
        cdef const uint8_t* b = self.buf
        cdef int32_t kind = o.kind[j]
        cdef uint8_t ch = b[v]
        cdef const uint8_t* p = b + v
        cdef int64_t n = e - v, x, lo, hi, us
        cdef bint quoted = ch == 34
        cdef bint number = ch == 45 or (48 <= ch <= 57)
        cdef double d
        cdef float f
        cdef cdc_jv_i128 q
        if quoted:
            p = b + v + 1
            n = e - v - 2
            if esc and kind != K_STRING:     # the text the escapes stand for
                n = json_unescape(p, n, self.room(n + 1))
                if n < 0:
                    return 0
                p = self.scratch
        if kind == K_STRING:
            if quoted:
                if not esc:
                    put_bytes(c, row, p, n)
                    return 1
                return 2 if put_escaped(c, row, b, v, e) else 1
            if ch == 123 or ch == 91:
                return 0
            put_bytes(c, row, p, n)     # a number's text, true, false
            return 1
        if not quoted and not number and kind != K_BOOL:
            return 0
        if kind == K_INT8 or kind == K_INT16 or kind == K_INT32 or kind == K_INT64:
            lo, hi = int_range(kind)
            if not cdc_jv_is_number(p, n) or not olr_int(p, n, lo, hi, &x):
                return 0
            store_int(c, row, x)
            return 1
        if kind == K_DECIMAL:
            if not cdc_jv_is_number(p, n) or not cdc_jv_decimal(p, n, o.prec[j], o.scl[j], &q):
                return 0
            put_fixed(c, row, &q, 16)
            return 1
        if kind == K_DECTEXT:
            if not cdc_jv_is_number(p, n):
                return 0
            put_bytes(c, row, p, n)
            return 1
        if kind == K_FLOAT32 or kind == K_FLOAT64:
            if not cdc_jv_is_number(p, n) or not parse_float(p, n, NULL, 46, &d, padded(self, p, n)) or isinf(d):
                return 0
            if kind == K_FLOAT32:
                f = <float>d
                if isinf(f):
                    return 0
                put_fixed(c, row, &f, 4)
            else:
                put_fixed(c, row, &d, 8)
            return 1
        if kind == K_BOOL:
            if ch == 116 or (n == 1 and p[0] == 49) or (quoted and n == 4
                                                      and memcmp(p, b"true", 4) == 0):
                bits_set(c.data, row)
            elif not (ch == 102 or (n == 1 and p[0] == 48)
                      or (quoted and n == 5 and memcmp(p, b"false", 5) == 0)):
                return 0
            col_valid(c, row)
            return 1
        if kind == K_BINARY:
            if not quoted:
                return 0
            if c.dlen + n > c.dcap:
                data_room(c, n)
            x = olr_hex(p, n, c.data + c.dlen)
            if x < 0:
                return 0
            c.dlen += x
            c.offs[row + 1] = <int32_t>c.dlen
            col_valid(c, row)
            return 1
        if kind == K_TIMESTAMP or kind == K_TIMESTAMP_TZ:
            if quoted:
                if not olr_time_text(p, n, self.epoch_unit, &us):
                    return 0
            elif olr_epoch(p, n, self.epoch_unit, &us) <= 0:
                return 0
            put_fixed(c, row, &us, 8)
            return 1
        if kind == K_TIME64:
            if not quoted or not json_time(p, n, &us):
                return 0
            put_fixed(c, row, &us, 8)
            return 1
        return 0

