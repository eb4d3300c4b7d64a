# cython: language_level=3
"""Buffer growth shared by every kernel: one place that turns a failed allocation into
MemoryError (never a NULL written through)."""
from libc.stdint cimport int64_t
from libc.stdlib cimport realloc


cdef inline void* grow(void* p, int64_t n) except NULL nogil:
    """realloc(p, n) (at least one byte), or MemoryError; p stays valid when it raises.
    Callable without the GIL (a kernel's nogil section takes it back only to raise)."""
    cdef void* q = realloc(p, n if n > 0 else 1)
    if q == NULL:
        with gil:
            raise MemoryError()
    return q
