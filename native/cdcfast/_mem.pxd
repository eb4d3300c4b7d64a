# cython: language_level=3
"""Buffer growth shared by every kernel: one place that turns a failed allocation into
MemoryError (never a NULL written through)."""
from libc.stdint cimport int64_t
from libc.stdlib cimport realloc


cdef inline void* grow(void* p, int64_t n) except NULL:
    """realloc(p, n) (at least one byte), or MemoryError; p stays valid when it raises."""
    cdef void* q = realloc(p, n if n > 0 else 1)
    if q == NULL:
        raise MemoryError()
    return q
