# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True, initializedcheck=False
"""JSON change events (Debezium, OpenLogReplicator, Qlik): the well-formedness scanner and
string helpers of _json.h, whose errors match the pure-Python twin
cdcfast.reference._jsonscan (code and byte offset)."""
from libc.stdint cimport uint8_t, int64_t
from libc.stdlib cimport malloc, free
from libc.string cimport memcpy

# -- test entry points of _json.h ----------------------------------------------------------
# Each copies its input into a block of exactly its size, so that valgrind sees a read past
# the end (a bytes object has a NUL and its allocator's rounding after its data).

cdef extern from "cdcfast/_json.h":
    int JSON_E_TRUNCATED "CDC_JSON_E_TRUNCATED"
    int JSON_E_UNEXPECTED "CDC_JSON_E_UNEXPECTED"
    int JSON_E_CONTROL "CDC_JSON_E_CONTROL"
    int JSON_E_ESCAPE "CDC_JSON_E_ESCAPE"
    int JSON_E_UTF8 "CDC_JSON_E_UTF8"
    int JSON_E_NUMBER "CDC_JSON_E_NUMBER"
    int JSON_E_DEPTH "CDC_JSON_E_DEPTH"
    int JSON_E_TRAILING "CDC_JSON_E_TRAILING"
    int JSON_MAX_DEPTH "CDC_JSON_MAX_DEPTH"
    int64_t json_string_end "cdc_json_string_end"(const uint8_t* buf, int64_t pos, int64_t end,
                                                   int* has_escape, int* code,
                                                   int64_t* err_pos) noexcept nogil
    int json_document "cdc_json_document"(const uint8_t* buf, int64_t start, int64_t end,
                                          int64_t* doc_end, int* code,
                                          int64_t* err_pos) noexcept nogil
    int json_document_whole "cdc_json_document_whole"(const uint8_t* buf, int64_t start,
                                                      int64_t end, int64_t* doc_end, int* code,
                                                      int64_t* err_pos) noexcept nogil
    int64_t utf8_first_invalid_c "cdc_utf8_first_invalid"(const uint8_t* p,
                                                           int64_t n) noexcept nogil
    int64_t json_unescape "cdc_json_unescape"(const uint8_t* src, int64_t n,
                                              uint8_t* dst) noexcept nogil
    int64_t base64_decode_c "cdc_base64_decode"(const uint8_t* src, int64_t n,
                                                uint8_t* dst) noexcept nogil

cdef extern from "cdcfast/_jsonval.h":
    ctypedef struct i128 "cdc_i128":
        pass
    int jv_int "cdc_jv_int"(const uint8_t* p, int64_t n, int64_t lo, int64_t hi,
                            int64_t* out) noexcept nogil
    int jv_decimal "cdc_jv_decimal"(const uint8_t* p, int64_t n, int prec, int scale,
                                    i128* out) noexcept nogil
    int jv_same "cdc_jv_same"(const uint8_t* a, const uint8_t* b, int64_t n) noexcept nogil

CODES = {"E_TRUNCATED": JSON_E_TRUNCATED, "E_UNEXPECTED": JSON_E_UNEXPECTED,
         "E_CONTROL": JSON_E_CONTROL, "E_ESCAPE": JSON_E_ESCAPE, "E_UTF8": JSON_E_UTF8,
         "E_NUMBER": JSON_E_NUMBER, "E_DEPTH": JSON_E_DEPTH, "E_TRAILING": JSON_E_TRAILING,
         "MAX_DEPTH": JSON_MAX_DEPTH}


cdef uint8_t* _exact(const uint8_t[::1] data) except NULL:
    cdef Py_ssize_t n = data.shape[0]
    cdef uint8_t* p = <uint8_t*>malloc(n if n else 1)
    if p == NULL:
        raise MemoryError()
    if n:
        memcpy(p, &data[0], n)
    return p


def document(const uint8_t[::1] data, Py_ssize_t start=0, bint whole=False):
    """(doc_end, 0, -1) for the document at start, or (-1, code, err_pos)."""
    cdef int64_t doc_end = -1, err_pos = -1
    cdef int code = 0
    cdef uint8_t* p = _exact(data)
    if whole:
        json_document_whole(p, start, data.shape[0], &doc_end, &code, &err_pos)
    else:
        json_document(p, start, data.shape[0], &doc_end, &code, &err_pos)
    free(p)
    return doc_end, code, err_pos


def string_end(const uint8_t[::1] data, Py_ssize_t pos):
    """(offset of the closing quote or -1, has_escape, code, err_pos) for the string whose
    first byte is at pos."""
    cdef int64_t err_pos = -1, r
    cdef int code = 0, esc = 0
    cdef uint8_t* p = _exact(data)
    r = json_string_end(p, pos, data.shape[0], &esc, &code, &err_pos)
    free(p)
    return r, esc, code, err_pos


def utf8_first_invalid(const uint8_t[::1] data):
    """-1 if data is UTF-8, else the offset UnicodeDecodeError.start names."""
    cdef uint8_t* p = _exact(data)
    cdef int64_t r = utf8_first_invalid_c(p, data.shape[0])
    free(p)
    return r


def unescape(const uint8_t[::1] data):
    """The bytes between a string's quotes unescaped (UTF-8), or -1 - (offset of the
    backslash of a lone surrogate)."""
    cdef uint8_t* p = _exact(data)
    cdef uint8_t* out = <uint8_t*>malloc(data.shape[0] if data.shape[0] else 1)
    cdef int64_t r = json_unescape(p, data.shape[0], out)
    free(p)
    try:
        return out[:r] if r >= 0 else r
    finally:
        free(out)


def base64_decode(const uint8_t[::1] data):
    """The decoded bytes, or None."""
    cdef int64_t n = data.shape[0]
    cdef uint8_t* p = _exact(data)
    cdef uint8_t* out = <uint8_t*>malloc(n * 3 // 4 if n >= 4 else 3)
    cdef int64_t r = base64_decode_c(p, n, out)
    free(p)
    try:
        return out[:r] if r >= 0 else None
    finally:
        free(out)


def integer(const uint8_t[::1] data, int64_t lo=-9223372036854775807 - 1,
            int64_t hi=9223372036854775807):
    """The JSON integer text data (-?(0|[1-9][0-9]*)) as an int within [lo, hi], or None
    (cdc_jv_int: the JSON kernels' integer parser)."""
    cdef int64_t out = 0
    cdef uint8_t* p = _exact(data)
    cdef int ok = jv_int(p, data.shape[0], lo, hi, &out)
    free(p)
    return out if ok else None


def same(const uint8_t[::1] a, const uint8_t[::1] b):
    """a == b for two texts of one length (cdc_jv_same: how the JSON kernels match a key
    against the name they expect), each read from an exact-size copy."""
    if a.shape[0] != b.shape[0]:
        raise ValueError("same() compares texts of one length")
    cdef uint8_t* p = _exact(a)
    cdef uint8_t* q = _exact(b)
    cdef int r = jv_same(p, q, a.shape[0])
    free(p)
    free(q)
    return bool(r)


def decimal(const uint8_t[::1] data, int prec, int scale):
    """The JSON number text data (its grammar already checked) as the unscaled integer of
    DECIMAL(prec, scale), or None where it is not exact there or too big (cdc_jv_decimal)."""
    cdef i128 out
    cdef uint8_t* p = _exact(data)
    cdef int ok = jv_decimal(p, data.shape[0], prec, scale, &out)
    free(p)
    if not ok:
        return None
    return int.from_bytes((<char*>&out)[:16], "little", signed=True)

