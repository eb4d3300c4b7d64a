# cython: language_level=3, boundscheck=False, wraparound=False
"""Arrow column builders: see _arrow.pxd.

Memory. A batch's buffers are written once each, so the first write into fresh pages is a
real part of a decode's cost (the kernel zeroes every page it hands out: about 0.2 s per
100 MB here, a tenth of a whole decode). Decoding is a loop — batch after batch, in Spark or
`read_batches` — and each batch's buffers die soon after the next one starts. So big blocks
go back to a small cache when Arrow releases them, and the next batch writes into pages that
are already there. The cache holds at most CDCFAST_BUFFER_CACHE_MB (default 256) MiB, drops
its oldest blocks first, and is emptied by `release_memory()`. Blocks are 64-byte aligned (as
Arrow wants them); big ones are 2 MiB aligned and asked for transparent huge pages, so a first
touch faults once per 2 MiB instead of once per 4 KiB.

Where a block starts matters too. A string column's offsets are written a row at a time in
step with every other column's, and when they started at scattered places within their
pages (as the allocator's history left them), olr ran up to a fifth slower on the same
instructions: docs/performance.md, "Threads". So offsets of 4 KiB and more start on a page
boundary, every time.
"""
import os

from cpython.ref cimport PyObject, Py_INCREF, Py_XDECREF
from libc.stdint cimport uint8_t, int32_t, int64_t, uintptr_t
from libc.stdlib cimport calloc, free
from libc.string cimport memcpy, memmove, memset
import pyarrow as pa

from cdcfast._kinds cimport *

cdef extern from "stdlib.h":
    int posix_memalign(void** memptr, size_t alignment, size_t size) nogil

cdef extern from "sys/mman.h":
    int madvise(void* addr, size_t length, int advice) nogil
    int MADV_HUGEPAGE

cdef int64_t _INT32_MAX = 2147483647
cdef int64_t _HUGE = 2097152
cdef int64_t _PAGE = 4096
cdef int64_t _CACHED = 1 << 16          # smaller blocks go straight back to malloc
cdef enum:
    _SLOTS = 1024

# -- the block cache (touched only with the GIL held: Block.__dealloc__ and Column methods) ---
cdef uint8_t* _cache_p[_SLOTS]
cdef int64_t _cache_cap[_SLOTS]
cdef int _cached = 0                     # blocks in the cache, oldest first
cdef int64_t _held = 0                   # their bytes


def _cache_limit() -> int:
    """CDCFAST_BUFFER_CACHE_MB in bytes (256 MiB when unset; a value that is not a number
    is ignored with a warning rather than breaking the import)."""
    text = os.environ.get("CDCFAST_BUFFER_CACHE_MB", "256")
    try:
        mb = float(text)
    except ValueError:
        import warnings
        warnings.warn(f"CDCFAST_BUFFER_CACHE_MB={text!r} is not a number; using 256",
                      RuntimeWarning)
        mb = 256
    return max(0, int(mb * (1 << 20)))


cdef int64_t _limit = _cache_limit()


cdef void _drop_oldest() noexcept:
    global _cached, _held
    free(_cache_p[0])
    _held -= _cache_cap[0]
    _cached -= 1
    # (the ranges overlap: memmove — memcpy there is undefined; ASan's memcpy-param-overlap)
    memmove(&_cache_p[0], &_cache_p[1], _cached * sizeof(uint8_t*))
    memmove(&_cache_cap[0], &_cache_cap[1], _cached * sizeof(int64_t))


cdef void _give(uint8_t* p, int64_t cap) noexcept:
    global _cached, _held
    if cap < _CACHED or cap > _limit:
        free(p)
        return
    while _cached and (_held + cap > _limit or _cached == _SLOTS):
        _drop_oldest()
    _cache_p[_cached] = p
    _cache_cap[_cached] = cap
    _cached += 1
    _held += cap


cdef uint8_t* _take(int64_t n, int64_t* cap, int64_t align) except NULL:
    """At least n bytes aligned to `align` (64 or 4096): the smallest cached block that fits
    without wasting more than half of it, else a new one."""
    global _cached, _held
    cdef int i, best = -1
    cdef void* p = NULL
    cdef int64_t c
    if n >= _CACHED:
        for i in range(_cached):
            c = _cache_cap[i]
            if n <= c <= 2 * n and (best < 0 or c < _cache_cap[best]) \
                    and (<uintptr_t>_cache_p[i]) % align == 0:
                best = i
        if best >= 0:
            p = _cache_p[best]
            cap[0] = _cache_cap[best]
            _held -= cap[0]
            _cached -= 1
            for i in range(best, _cached):
                _cache_p[i] = _cache_p[i + 1]
                _cache_cap[i] = _cache_cap[i + 1]
            return <uint8_t*>p
    if n >= 2 * _HUGE:
        c = (n + _HUGE - 1) & ~(_HUGE - 1)
        if posix_memalign(&p, _HUGE, c) != 0:
            raise MemoryError(f"cannot allocate {c} bytes")
        madvise(p, c, MADV_HUGEPAGE)     # only advice: where the kernel declines, nothing changes
    else:
        c = max((n + 63) & ~63, 64)
        if posix_memalign(&p, align, c) != 0:
            raise MemoryError(f"cannot allocate {c} bytes")
    cap[0] = c
    return <uint8_t*>p


def presize(cols, int64_t rows):
    """Reserve room for `rows` rows in all in every column of `cols` (columns of one table,
    equally long), string data sized on what the rows so far used: one allocation instead of
    a chain of doublings, each copying what came before."""
    cdef Column c
    for c in cols:
        if rows > c.length:
            c.reserve(rows - c.length)
            if c.layout == VAR and c.length > 0:
                c.reserve_data(<int64_t>(c.dlen * (rows / <double>c.length) * 1.1) - c.dlen + 64)


def release_memory():
    """Give every cached block back to the allocator."""
    while _cached:
        _drop_oldest()


def cache_info():
    """(blocks, bytes) held by the cache."""
    return _cached, _held


cdef class Block:
    def __dealloc__(self):
        if self.p != NULL:
            _give(self.p, self.cap)
            self.p = NULL


cdef Block _block(int64_t n, Block old, int64_t used, bint zero, int64_t align=64):
    """A block of at least n bytes that starts with old's first `used` bytes; with `zero`,
    the rest is zeroed (bitmaps: a 0 bit is a null or a false). Value bytes are not zeroed:
    they are always written before they are read."""
    if old is not None and old.cap >= n:
        return old
    cdef Block b = Block.__new__(Block)
    b.p = _take(n, &b.cap, align)
    if old is not None and used > 0:
        memcpy(b.p, old.p, used)
    if zero:
        memset(b.p + used, 0, b.cap - used)
    return b


cdef Column kind_column(int kind):
    """An empty value column for a catalog kind (the same numbers as cdcfast.catalog)."""
    if kind == K_BOOL:
        return Column(BITS)
    if kind == K_STRING or kind == K_BINARY or kind == K_DECTEXT:
        return Column(VAR)
    if kind == K_INT8:
        return Column(FIXED, 1)
    if kind == K_INT16:
        return Column(FIXED, 2)
    if kind == K_INT32 or kind == K_FLOAT32 or kind == K_DATE32:
        return Column(FIXED, 4)
    if kind == K_DECIMAL:
        return Column(FIXED, 16)
    return Column(FIXED, 8)


cdef object _buffer(Block b, int64_t nbytes):
    """An Arrow buffer over the block's first nbytes, keeping the block alive."""
    return pa.foreign_buffer(<uintptr_t>b.p, max(nbytes, 0), base=b)


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
        cdef int64_t n = self.length
        self.vbuf = _block((cap + 7) // 8, self.vbuf, (n + 7) // 8, True)
        self.valid = self.vbuf.p
        if self.layout == FIXED:
            self.dbuf = _block(cap * self.width, self.dbuf, n * self.width, False)
            self.data = self.dbuf.p
        elif self.layout == BITS:
            self.dbuf = _block((cap + 7) // 8, self.dbuf, (n + 7) // 8, True)
            self.data = self.dbuf.p
        elif self.layout == VAR:
            self.obuf = _block((cap + 1) * 4, self.obuf, (n + 1) * 4, False,
                               _PAGE if (cap + 1) * 4 >= _PAGE else 64)
            self.offs = <int32_t*>self.obuf.p
            if n == 0:
                self.offs[0] = 0
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
        self.dbuf = _block(cap, self.dbuf, self.dlen, False)
        self.data = self.dbuf.p
        self.dcap = self.dbuf.cap if self.dbuf.cap < _INT32_MAX else _INT32_MAX
        return 0

    def finish(self, type, children=None):
        """Hand the buffers to an Arrow array of `type` and start afresh."""
        cdef int64_t n = self.length
        vb = _buffer(self.vbuf, (n + 7) // 8)
        if self.layout == FIXED:
            bufs = [vb, _buffer(self.dbuf, n * self.width)]
        elif self.layout == BITS:
            bufs = [vb, _buffer(self.dbuf, (n + 7) // 8)]
        elif self.layout == VAR:
            bufs = [vb, _buffer(self.obuf, (n + 1) * 4), _buffer(self.dbuf, self.dlen)]
        else:
            bufs = [vb]
        arr = pa.Array.from_buffers(type, n, bufs, null_count=-1, children=children)
        self._fresh(64)
        return arr

    def take_validity(self):
        """The validity buffer alone (for struct parents), and start afresh."""
        vb = _buffer(self.vbuf, (self.length + 7) // 8)
        self._fresh(64)
        return vb

    def data_view(self, int64_t nbytes):
        """An Arrow buffer over the first nbytes of the data block, no copy (the buffer
        keeps the block alive; bytes written later show through it)."""
        if self.dbuf is None or not 0 <= nbytes <= self.dbuf.cap:
            raise ValueError(f"no {nbytes} data bytes to view")
        return _buffer(self.dbuf, nbytes)

    @property
    def rows(self):
        return self.length


# -- a struct of columns in one step: the Arrow C data interface ----------------------------------
# An image struct holds a table's every column (before, after, changed, present: four per
# batch). Handing each child to pyarrow.Array.from_buffers costs a few microseconds of Python
# objects (the array, its buffers) per column; exporting the whole struct as one ArrowArray tree
# (https://arrow.apache.org/docs/format/CDataInterface.html) and importing it once costs that
# once. The blocks stay ours: each exported array holds a reference to its Block objects and
# drops them when Arrow releases it (with the GIL: Block.__dealloc__ feeds the cache).

cdef struct ArrowArray:
    int64_t length
    int64_t null_count
    int64_t offset
    int64_t n_buffers
    int64_t n_children
    const void** buffers
    ArrowArray** children
    ArrowArray* dictionary
    void (*release)(ArrowArray*) noexcept nogil
    void* private_data


cdef struct _Held:
    PyObject* blocks[3]         # the Block objects behind the buffers (owned references)
    const void* bufs[3]
    ArrowArray** children
    int64_t nchildren


cdef extern from "Python.h":
    int Py_IsInitialized() nogil


cdef void _drop_blocks(_Held* h) noexcept with gil:
    cdef int i
    for i in range(3):
        Py_XDECREF(h.blocks[i])
        h.blocks[i] = NULL


cdef void _release(ArrowArray* a) noexcept nogil:
    """The release callback of every array we export: its children's, then its blocks."""
    cdef _Held* h = <_Held*>a.private_data
    cdef int64_t i
    if h != NULL:
        for i in range(h.nchildren):
            if h.children[i] != NULL:
                if h.children[i].release != NULL:
                    h.children[i].release(h.children[i])
                free(h.children[i])
        free(h.children)
        if Py_IsInitialized():      # (at the interpreter's exit the blocks are left to it)
            _drop_blocks(h)
        free(h)
    a.private_data = NULL
    a.release = NULL


cdef ArrowArray* _new_array(int64_t nchildren) except NULL:
    cdef ArrowArray* a = <ArrowArray*>calloc(1, sizeof(ArrowArray))
    cdef _Held* h = <_Held*>calloc(1, sizeof(_Held))
    if a == NULL or h == NULL:
        free(a)
        free(h)
        raise MemoryError()
    if nchildren:
        h.children = <ArrowArray**>calloc(nchildren, sizeof(ArrowArray*))
        if h.children == NULL:
            free(a)
            free(h)
            raise MemoryError()
    h.nchildren = nchildren
    a.null_count = -1
    a.buffers = h.bufs
    a.children = h.children
    a.n_children = nchildren
    a.private_data = h
    a.release = _release
    return a


cdef void _hold(ArrowArray* a, int i, Block b) noexcept:
    cdef _Held* h = <_Held*>a.private_data
    Py_INCREF(b)
    h.blocks[i] = <PyObject*>b
    h.bufs[i] = b.p


cdef ArrowArray* _export(Column c) except NULL:
    """c's rows as an ArrowArray (c starts afresh): the buffers its layout has."""
    cdef ArrowArray* a = _new_array(0)
    a.length = c.length
    _hold(a, 0, c.vbuf)
    if c.layout == FIXED or c.layout == BITS:
        _hold(a, 1, c.dbuf)
        a.n_buffers = 2
    elif c.layout == VAR:
        _hold(a, 1, c.obuf)
        _hold(a, 2, c.dbuf)
        a.n_buffers = 3
    else:
        a.n_buffers = 1
    c._fresh(64)
    return a


def finish_struct(type, int64_t n, Column validity, list children):
    """A struct array of `type` and n rows whose validity is `validity`'s and whose fields are
    `children` (Columns, in the type's field order), each finished and started afresh as
    Column.finish would: one import of an ArrowArray tree instead of a from_buffers per
    child."""
    cdef int64_t k = len(children), i
    cdef ArrowArray* a = _new_array(k)
    cdef _Held* h = <_Held*>a.private_data
    try:
        for i in range(k):
            h.children[i] = _export(<Column?>children[i])
        a.length = n
        _hold(a, 0, validity.vbuf)
        a.n_buffers = 1
        validity._fresh(64)
        return pa.Array._import_from_c(<uintptr_t>a, type)
    finally:
        # imported, the tree was moved into Arrow (release NULL); else it is ours to release
        if a.release != NULL:
            a.release(a)
        free(a)
