# cython: language_level=3
"""Arrow column builders shared by every format's kernel.

A Column owns growable blocks of memory (see _arrow.pyx: big ones are recycled from one batch
to the next) and hands them to ``pyarrow.Array.from_buffers`` as foreign buffers when
finished: values are written once, in place, and never copied again. Kernels reserve room for a whole chunk of rows up front and then
write through the raw pointers below, so the per-value path has no capacity checks and no
Python objects.
"""
from libc.stdint cimport uint8_t, int32_t, int64_t

# layouts
cdef enum:
    FIXED = 0      # validity + width-byte values
    VAR = 1        # validity + int32 offsets + data
    BITS = 2       # validity + bit-packed values (bool)
    VALIDITY = 3   # validity only (struct parents)


cdef class Block:
    """One allocation; given back (to the cache or the allocator) when the last Arrow buffer
    over it is gone."""
    cdef uint8_t* p
    cdef int64_t cap


cdef class Column:
    cdef readonly int layout
    cdef readonly int width
    cdef readonly int64_t length     # rows written
    cdef readonly int64_t cap        # rows reserved
    cdef readonly int64_t dlen       # VAR: data bytes written
    cdef readonly int64_t dcap       # VAR: data bytes reserved
    cdef Block vbuf, dbuf, obuf
    cdef uint8_t* valid
    cdef uint8_t* data
    cdef int32_t* offs

    cdef _fresh(self, int64_t rows)
    cdef int reserve(self, int64_t rows) except -1
    cdef int reserve_data(self, int64_t nbytes) except -1


cdef Column kind_column(int kind)
# a value column for a catalog kind (cdcfast/_kinds.pxd): its layout and width


cdef inline void col_null(Column c) noexcept nogil:
    """Append a null (its bit is already 0: buffers are zeroed as they grow)."""
    if c.layout == VAR:
        c.offs[c.length + 1] = <int32_t>c.dlen
    c.length += 1


cdef inline void col_valid(Column c, int64_t i) noexcept nogil:
    c.valid[i >> 3] |= <uint8_t>(1 << (i & 7))


cdef inline void col_unset(Column c, int64_t i) noexcept nogil:
    c.valid[i >> 3] &= <uint8_t>~(1 << (i & 7))


cdef inline void bits_set(uint8_t* bm, int64_t i) noexcept nogil:
    bm[i >> 3] |= <uint8_t>(1 << (i & 7))


cdef inline bint bits_get(const uint8_t* bm, int64_t i) noexcept nogil:
    return (bm[i >> 3] >> (i & 7)) & 1


cdef inline void var_commit(Column c) noexcept nogil:
    """Close the value written at data[dlen_before:dlen] as row `length` (valid)."""
    col_valid(c, c.length)
    c.offs[c.length + 1] = <int32_t>c.dlen
    c.length += 1


cdef inline void offsets_to(int32_t* offs, int64_t nxt, int64_t row, int64_t dlen) noexcept nogil:
    """Rows nxt … row - 1 of a VAR column are null: their offsets all stay at dlen."""
    while nxt < row:
        offs[nxt + 1] = <int32_t>dlen
        nxt += 1
