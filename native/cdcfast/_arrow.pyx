# cython: language_level=3, boundscheck=False, wraparound=False
"""Arrow column builders: see _arrow.pxd."""
from libc.stdint cimport uint8_t, int32_t, int64_t, uintptr_t
from libc.string cimport memset
import pyarrow as pa

cdef extern from "sys/mman.h":
    int madvise(void* addr, size_t length, int advice) nogil
    int MADV_HUGEPAGE

cdef int64_t _INT32_MAX = 2147483647
cdef int64_t _HUGE = 2097152


cdef inline void _huge_pages(object buf):
    """Ask for transparent huge pages on a big buffer: the first write into fresh memory then
    faults once per 2 MiB instead of once per 4 KiB (about 4x less time in the kernel here).
    Only advice: where the kernel declines, nothing changes."""
    cdef int64_t n = buf.size
    if n < 2 * _HUGE:
        return
    cdef uintptr_t p = <uintptr_t>buf.address
    cdef uintptr_t a = (p + _HUGE - 1) & ~(<uintptr_t>(_HUGE - 1))
    cdef uintptr_t e = (p + n) & ~(<uintptr_t>(_HUGE - 1))
    if e > a:
        madvise(<void*>a, e - a, MADV_HUGEPAGE)


cdef inline object _alloc(int64_t nbytes, bint zero=True):
    buf = pa.allocate_buffer(max(nbytes, 64), resizable=True)
    _huge_pages(buf)
    if zero:
        memset(<void*><uintptr_t>buf.address, 0, buf.size)
    return buf


cdef inline uint8_t* _addr(object buf):
    return <uint8_t*><uintptr_t>buf.address


cdef inline void _grow(object buf, int64_t nbytes, bint zero=True):
    """Grow in place where the allocator can; bitmaps are zeroed (a 0 bit is a null or a
    false), value bytes are not (they are always written before they are read)."""
    cdef int64_t old = buf.size
    if nbytes <= old:
        return
    buf.resize(nbytes)
    _huge_pages(buf)
    if zero:
        memset(_addr(buf) + old, 0, nbytes - old)


cdef class Column:
    """One Arrow array under construction (see _arrow.pxd for the layouts)."""

    def __cinit__(self, int layout, int width=0, int64_t rows=1024):
        self.layout = layout
        self.width = width
        self._fresh(rows)

    cdef _fresh(self, int64_t rows):
        self.length = 0
        self.dlen = 0
        self.cap = 0
        self.dcap = 0
        self.vbuf = self.dbuf = self.obuf = None
        self.valid = self.data = NULL
        self.offs = NULL
        self.reserve(rows)
        if self.layout == VAR:
            self.reserve_data(256)

    cdef int reserve(self, int64_t rows) except -1:
        """Make room for `rows` more rows (data bytes too for FIXED and BITS)."""
        cdef int64_t need = self.length + rows
        if need <= self.cap:
            return 0
        cdef int64_t cap = max(need, self.cap * 2, 64)
        if self.vbuf is None:
            self.vbuf = _alloc((cap + 7) // 8)
        else:
            _grow(self.vbuf, (cap + 7) // 8)
        self.valid = _addr(self.vbuf)
        if self.layout == FIXED:
            if self.dbuf is None:
                self.dbuf = _alloc(cap * self.width, False)
            else:
                _grow(self.dbuf, cap * self.width, False)
            self.data = _addr(self.dbuf)
        elif self.layout == BITS:
            if self.dbuf is None:
                self.dbuf = _alloc((cap + 7) // 8)
            else:
                _grow(self.dbuf, (cap + 7) // 8)
            self.data = _addr(self.dbuf)
        elif self.layout == VAR:
            if self.obuf is None:
                self.obuf = _alloc((cap + 1) * 4)
            else:
                _grow(self.obuf, (cap + 1) * 4, False)
            self.offs = <int32_t*>_addr(self.obuf)
        self.cap = cap
        return 0

    cdef int reserve_data(self, int64_t nbytes) except -1:
        """VAR: make room for `nbytes` more data bytes."""
        cdef int64_t need = self.dlen + nbytes
        if need <= self.dcap:
            return 0
        if need > _INT32_MAX:
            raise OverflowError("a string column of one batch would pass 2 GiB; "
                                "use a smaller batch_size")
        cdef int64_t cap = min(max(need, self.dcap * 2, 256), _INT32_MAX)
        if self.dbuf is None:
            self.dbuf = _alloc(cap, False)
        else:
            _grow(self.dbuf, cap, False)
        self.data = _addr(self.dbuf)
        self.dcap = cap
        return 0

    def finish(self, type, children=None):
        """Hand the buffers to an Arrow array of `type` and start afresh."""
        cdef int64_t n = self.length
        vb = self.vbuf
        # give back what the doubling over-reserved (realloc shrinks in place)
        vb.resize(max((n + 7) // 8, 1))
        if self.layout == FIXED:
            self.dbuf.resize(max(n * self.width, 1))
        elif self.layout == BITS:
            self.dbuf.resize(max((n + 7) // 8, 1))
        elif self.layout == VAR:
            self.obuf.resize((n + 1) * 4)
            self.dbuf.resize(max(self.dlen, 1))
        if self.layout == VAR:
            bufs = [vb, self.obuf, self.dbuf]
        elif self.layout == VALIDITY:
            bufs = [vb]
        else:
            bufs = [vb, self.dbuf]
        arr = pa.Array.from_buffers(type, n, bufs, null_count=-1, children=children)
        self._fresh(64)
        return arr

    def take_validity(self):
        """The validity buffer alone (for struct parents), and start afresh."""
        vb = self.vbuf
        self._fresh(64)
        return vb

    @property
    def rows(self):
        return self.length
