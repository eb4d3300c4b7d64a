# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True, initializedcheck=False
"""Test hooks of the `lldf` kernel, for tests only: no decoder imports this module (the
decoder runs _lldf_frame and _lldf; tests/test_lldf_kernels.py calls these). Each hook runs
values through the kernels the converter runs on this CPU, as _lldf.pyx chose them at import
(`kernels()`: CDCFAST_NO_AVX2=1 keeps the scalar ones), and through the careful code they
stand in for, so a test can compare the two value by value.
"""
from libc.stdint cimport uint8_t, int32_t, int64_t
from libc.string cimport memset
from libc.stdlib cimport free

from cdcfast._mem cimport grow
from cdcfast._values cimport parse_timestamp, cp_to_utf8, cp_ascii8
from cdcfast._binary cimport packed_decimal, civil_days as _civil_days
from cdcfast._lldf cimport Kernels, TextRun, cdc_cp, kernels, text_run, text_run_free, cp_rows

cdef Kernels K = kernels()


def simd_level():
    """The SIMD forms this CPU runs: (timestamps 16 bytes at a time, code page text 32 bytes
    at a time, packed decimals 16 bytes at a time)."""
    return K.ts_simd, K.cpu8 != NULL, K.dec_simd


def timestamp_paths(bytes buf, int64_t n, bint zone, bytes asc, bytes cpchars):
    """The timestamp text buf[:n] (all of buf readable) through the fast parser
    this CPU runs and through the careful one: (fast's 1 or -1, its µs, careful's verdict,
    its µs)."""
    cdef cdc_cp cp
    cdef int64_t fast = 0, careful = 0
    cdef const uint8_t* p = buf
    assert 0 <= n <= len(buf)
    cp.zone = cpchars[0] & 0xF0
    cp.minus, cp.dot, cp.colon, cp.space = cpchars[1], cpchars[2], cpchars[3], cpchars[4]
    cp.t, cp.plus, cp.z = cpchars[5], cpchars[6], cpchars[7]
    rc = K.ts(p, n, zone, &cp, &fast, len(buf))
    ok = parse_timestamp(p, n, asc, zone, &careful)
    return rc, fast if rc == 1 else None, bool(ok), careful if ok else None


def decimal_paths(bytes buf, int64_t n, int prec):
    """The packed decimal buf[:n] (all of buf readable) through the column kernel
    this CPU runs (None where it leaves the value to the careful one) and through the careful
    one alone (None where it is not a number)."""
    cdef const uint8_t* p = buf
    cdef const uint8_t* vp[1]
    cdef const uint8_t* ie[1]
    cdef int64_t todo[1]
    cdef int64_t hard[1]
    cdef uint8_t out[16]
    assert 1 <= n <= 16 and n <= len(buf)
    vp[0] = p
    ie[0] = p + len(buf)
    todo[0] = 0
    fast = None
    if K.dec_column(vp, 0, n, prec, ie, todo, 1, out, hard) == 0:
        fast = int.from_bytes(out[:16], "little", signed=True)
    careful = None
    if packed_decimal(p, n, prec, out, n):          # (readable n: byte by byte)
        careful = int.from_bytes(out[:16], "little", signed=True)
    return fast, careful


def civil_days(int64_t y, int64_t m, int64_t d):
    """Days since 1970-01-01 of y-m-d as every date and timestamp kernel gets them
    (a table of months, else the formula), None where the date does not exist."""
    cdef int64_t days
    return days if _civil_days(y, m, d, &days) else None


def codepage_paths(bytes buf, int64_t n, bytes asc, bytes u8, bytes u8len):
    """The code page text buf[:n] (all of buf readable) as UTF-8 through the
    SIMD conversion (None where this CPU runs none), the one-word conversion of values of
    up to 8 bytes (None where it does not take the value, as _var_column calls it) and the
    scalar one (None for -1)."""
    cdef uint8_t rows[512]
    cdef const uint8_t* p = buf
    cdef bytearray out = bytearray(3 * n + 64)
    cdef uint8_t* o = out
    cdef int64_t k
    assert 0 <= n <= len(buf)
    simd = None
    if K.cpu8 != NULL:
        cp_rows(u8, u8len, rows)
        k = K.cpu8(p, n, rows, u8, u8len, o, len(buf))
        simd = bytes(out[:k]) if k >= 0 else None
    word = None
    if n <= 8 and len(buf) >= 8 and cp_ascii8(p, n, asc, o):
        word = bytes(out[:n])
    k = cp_to_utf8(p, n, asc, u8, u8len, o, len(buf))
    return simd, word, bytes(out[:k]) if k >= 0 else None


def codepage_run(list values, bytes u8, bytes u8len, bint mixed, bytes tails):
    """The code page text values (None: a row without one) converted as one run
    (text_run), each value followed in memory by tails' next byte count of bytes (readable
    past it): (the UTF-8 bytes, the rows' offsets, mixed for the next run), or None where
    this CPU runs no run conversion or the run refuses the bytes."""
    cdef int64_t n = len(values), i, nval = 0, text = 0, o = 0, pos = 0
    cdef uint8_t rows[512]
    cdef uint8_t mix = mixed
    cdef TextRun t
    if K.cprun == NULL:
        return None
    cp_rows(u8, u8len, rows)
    memset(&t, 0, sizeof(t))
    buf = bytearray()
    starts = []
    for i in range(n):
        starts.append(len(buf))
        if values[i] is not None:
            buf += values[i]
            text += len(values[i])
        buf += bytes(tails[i % len(tails)] if tails else 0)
    cdef bytes mem = bytes(buf)
    cdef const uint8_t* base = mem
    cdef const uint8_t** vp = <const uint8_t**>grow(NULL, (n + 1) * sizeof(uint8_t*))
    cdef const uint8_t** iend = <const uint8_t**>grow(NULL, (n + 1) * sizeof(uint8_t*))
    cdef const uint8_t** rend = <const uint8_t**>grow(NULL, (n + 1) * sizeof(uint8_t*))
    cdef int64_t vmax = 0
    cdef int32_t* vl = <int32_t*>grow(NULL, (n + 1) * 4)
    cdef int64_t* todo = <int64_t*>grow(NULL, (n + 1) * 8)
    cdef int32_t* offs = <int32_t*>grow(NULL, (n + 1) * 4)
    cdef uint8_t* data = <uint8_t*>grow(NULL, 3 * text + 40)
    try:
        for i in range(n):
            vp[i] = base + <int64_t>starts[i]
            iend[i] = base + (<int64_t>starts[i + 1] if i + 1 < n else len(mem))
            rend[i] = base + len(mem)
            if values[i] is not None:
                vl[i] = len(values[i])
                vmax = max(vmax, vl[i])
                todo[nval] = i
                nval += 1
        offs[0] = 0
        if not text_run(&t, rows, offs, data, 0, todo, nval, vp, 0, 0, vl, iend, rend, vmax,
                        0, n, text, &mix, &o):
            return None
        return data[:o], [offs[i] for i in range(n + 1)], bool(mix)
    finally:
        free(vp); free(iend); free(rend); free(vl); free(todo); free(offs); free(data)
        text_run_free(&t)
