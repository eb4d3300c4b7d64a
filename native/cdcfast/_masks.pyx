# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True, initializedcheck=False
"""Qlik hex masks (changeMask, columnMask) over a whole Arrow string column: the kernel of
_hexmask.h, exposed for its tests and benchmark and for callers that hold the masks as a
column. It reads the column's offsets and data buffers in place and writes the struct's
bitmaps directly: no Python object per row."""
import numpy as np
import pyarrow as pa

from libc.stdint cimport uint8_t, int32_t, int64_t
from libc.stdlib cimport malloc, free
from libc.string cimport memset

cdef extern from "cdcfast/_hexmask.h":
    int64_t HEXMASK_OK "CDC_HEXMASK_OK"
    int64_t hexmask_nbytes "cdc_hexmask_nbytes"(int64_t ncols) noexcept nogil
    int64_t hexmask_read "cdc_hexmask_read"(const uint8_t* p, int64_t n, uint8_t* bits,
                                             int64_t nbytes) noexcept nogil
    void hexmask_flush8 "cdc_hexmask_flush8"(const uint8_t* block, int64_t nbytes,
                                              int64_t ncols, uint8_t rows_valid,
                                              const uint8_t* nulled, uint8_t** values,
                                              uint8_t** validity, int64_t at) noexcept nogil


ctypedef fused offset_t:
    int32_t
    int64_t


cdef Py_ssize_t _scan(const offset_t* offs, const uint8_t* base, const uint8_t* present,
                      int64_t start, Py_ssize_t n, Py_ssize_t ncols, const uint8_t* nulled,
                      uint8_t* block, uint8_t** vals, uint8_t** valid, uint8_t* parent,
                      int64_t* bad) noexcept nogil:
    """Rows start…start+n-1 of the column into the bitmaps; the number of bad rows (their
    indexes in bad). present: the column's validity bitmap, or NULL when it has none."""
    cdef int64_t nbytes = hexmask_nbytes(ncols)
    cdef Py_ssize_t i, nbad = 0
    cdef int64_t a, b, k, r
    cdef uint8_t rows_valid = 0
    for i in range(n):
        r = i & 7
        k = start + i
        a = offs[k]
        b = offs[k + 1]
        if b > a and (present == NULL or (present[k >> 3] >> (k & 7)) & 1):
            if hexmask_read(base + a, b - a, block + r * nbytes, nbytes) == HEXMASK_OK:
                rows_valid |= <uint8_t>(1 << r)
            else:
                memset(block + r * nbytes, 0, nbytes)
                bad[nbad] = i
                nbad += 1
        else:
            memset(block + r * nbytes, 0, nbytes)
        if r == 7:
            hexmask_flush8(block, nbytes, ncols, rows_valid, nulled, vals, valid, i >> 3)
            parent[i >> 3] = rows_valid
            rows_valid = 0
    if n & 7:
        memset(block + (n & 7) * nbytes, 0, (8 - (n & 7)) * nbytes)
        hexmask_flush8(block, nbytes, ncols, rows_valid, nulled, vals, valid, n >> 3)
        parent[n >> 3] = rows_valid
    return nbad


def _view(buf):
    """A flat unsigned-byte view of an Arrow buffer (exported as signed chars)."""
    return memoryview(buf).cast("B") if buf is not None else memoryview(b"\0")


def decode_masks(strings, Py_ssize_t ncols, lob=None, names=None):
    """(struct<bool per column>, int64 numpy array of the rows whose mask is not hex) of a
    pyarrow StringArray / LargeStringArray (binary ones too) of mask texts.

    Row r's child i is bit i of int(mask, 16) (docs/qlik.md, "Masks"); children are named
    `names`, else c0…c{ncols-1}. A column flagged in `lob` (a sequence of ncols bools) is null
    in every row. A null or empty text, or one that is not hex, makes the struct row null."""
    if ncols < 1:
        raise ValueError("ncols must be at least 1")
    if names is None:
        names = [f"c{i}" for i in range(ncols)]
    elif len(names) != ncols:
        raise ValueError(f"{len(names)} names for {ncols} columns")
    if lob is not None and len(lob) != ncols:
        raise ValueError(f"{len(lob)} LOB flags for {ncols} columns")
    t = strings.type
    if pa.types.is_string(t) or pa.types.is_binary(t):
        odt = np.int32
    elif pa.types.is_large_string(t) or pa.types.is_large_binary(t):
        odt = np.int64
    else:
        raise TypeError(f"masks must be a string or binary array, not {t}")
    cdef Py_ssize_t n = len(strings)
    bufs = strings.buffers()
    offs_np = np.frombuffer(bufs[1], dtype=odt) if n else np.zeros(1, odt)
    cdef const int32_t[::1] offs32
    cdef const int64_t[::1] offs64
    cdef const uint8_t[::1] present = _view(bufs[0])
    cdef const uint8_t[::1] data = _view(bufs[2])
    cdef Py_ssize_t nb = max((n + 7) // 8, 1)
    vals_np = np.zeros((ncols, nb), dtype=np.uint8)
    valid_np = np.zeros((ncols, nb), dtype=np.uint8)
    parent_np = np.zeros(nb, dtype=np.uint8)
    bad_np = np.empty(max(n, 1), dtype=np.int64)
    nulled_np = np.zeros(ncols, dtype=np.uint8)
    if lob is not None:
        nulled_np[:] = [1 if f else 0 for f in lob]
    cdef uint8_t[:, ::1] vals = vals_np
    cdef uint8_t[:, ::1] valid = valid_np
    cdef uint8_t[::1] parent = parent_np
    cdef int64_t[::1] bad = bad_np
    cdef const uint8_t[::1] nulled = nulled_np
    cdef const uint8_t* bitmap = &present[0] if bufs[0] is not None else NULL
    cdef int64_t start = strings.offset
    cdef uint8_t* block = <uint8_t*>malloc(8 * hexmask_nbytes(ncols))
    cdef uint8_t** vp = <uint8_t**>malloc(ncols * sizeof(uint8_t*))
    cdef uint8_t** lp = <uint8_t**>malloc(ncols * sizeof(uint8_t*))
    if block == NULL or vp == NULL or lp == NULL:
        free(block)
        free(vp)
        free(lp)
        raise MemoryError()
    cdef Py_ssize_t i, nbad
    for i in range(ncols):
        vp[i] = &vals[i, 0]
        lp[i] = &valid[i, 0]
    if odt is np.int32:
        offs32 = offs_np
        with nogil:
            nbad = _scan(&offs32[0], &data[0], bitmap, start, n, ncols, &nulled[0], block,
                         vp, lp, &parent[0], &bad[0])
    else:
        offs64 = offs_np
        with nogil:
            nbad = _scan(&offs64[0], &data[0], bitmap, start, n, ncols, &nulled[0], block,
                         vp, lp, &parent[0], &bad[0])
    free(block)
    free(vp)
    free(lp)
    children = [pa.Array.from_buffers(pa.bool_(), n, [pa.py_buffer(valid_np[i]),
                                                      pa.py_buffer(vals_np[i])])
                for i in range(ncols)]
    struct_t = pa.struct([pa.field(name, pa.bool_()) for name in names])
    out = pa.Array.from_buffers(struct_t, n, [pa.py_buffer(parent_np)], children=children)
    return out, bad_np[:nbad].copy()
