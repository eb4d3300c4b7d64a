# cython: language_level=3
"""The `lldf` framer (native/cdcfast/_lldf_frame.pyx) as the converter (_lldf.pyx, `TableOut`)
reads it: a chunk of logical records, each with its message, header, data, table and op, and
the problems that kept it from being framed. `dat` and `rend` are here, not in the .pyx, so
the converter's loops over records get them inlined across the two modules.
"""
cimport cython
from libc.stdint cimport uint8_t, int32_t, int64_t, uint64_t

from cdcfast._lldf_codes cimport LEN_OWNER, LEN_NAME

# a logical record's op, from its CHANGE TYPE (the converter writes it as text)
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


cdef struct Phys:
    # one physical record, or a span that cannot be framed (err != 0)
    int64_t p, end        # its bytes (p: its RDW in rdw/vb framing)
    int64_t h, L, seglen  # header start, LENGTH, SEGLEN
    int32_t err, field
    int64_t pos, a, b, c, rawpos, rawlen


@cython.final
cdef class Framer:
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
    cdef readonly int64_t n_unframed    # spans that could not be framed (never zeroed)
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

    cdef int _reserve(self, int64_t n) except -1 nogil
    cdef uint64_t _hash(self, const uint8_t* k) noexcept nogil
    cdef int32_t _lookup(self, const uint8_t* k) noexcept nogil
    cdef int _insert(self, const uint8_t* k, int32_t tid) except -1
    cdef void _key(self, int64_t h, uint8_t* k) noexcept nogil
    cdef void _bad(self, Phys* ph, int32_t err, int32_t field, int64_t p, int64_t end,
                   int64_t pos, int64_t a, int64_t b) noexcept nogil
    cdef int _dw(self, Phys* ph, int64_t p, int64_t limit, int32_t field,
                 int64_t* length) noexcept nogil
    cdef int _body(self, Phys* ph, int64_t p, int64_t n) noexcept nogil
    cdef int _next_phys(self, Phys* ph) noexcept nogil
    cdef bint _next_message(self) noexcept nogil
    cdef int _seg(self, int64_t r, int64_t log, int64_t phys) except -1 nogil
    cdef int _append(self, const uint8_t* p, int64_t n) except -1 nogil
    cdef void _error(self, int64_t r, int32_t err, int32_t field, int64_t pos,
                     int64_t a, int64_t b) noexcept nogil
    cdef void _corrupt(self, int64_t r, Phys* ph) noexcept nogil
    cdef int _logical(self, int64_t r, Phys* first) except -1 nogil
    cdef void _check(self, int64_t r) noexcept nogil
    cdef void _count(self, int64_t r, int32_t tid) noexcept nogil
    cdef void _move(self, int64_t r, int64_t to) noexcept
    cdef int _frame(self, int64_t max_records) except -1 nogil
    cdef int64_t dpos(self, int64_t r, int64_t q) noexcept nogil

    cdef inline const uint8_t* dat(self, int64_t r) noexcept nogil:
        """Record r's data (in the input, or joined from its segments in the scratch)."""
        return (self.scratch + self.r_dat[r]) if self.r_nseg[r] else (self.data + self.r_dat[r])

    cdef inline const uint8_t* rend(self, int64_t r) noexcept nogil:
        """Where the bytes that may be read from record r's data on end (its buffer's end)."""
        return (self.scratch + self.scap) if self.r_nseg[r] else self.dend
