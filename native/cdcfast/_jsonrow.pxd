# cython: language_level=3
"""What every JSON kernel shares (`_debezium`, `_olr`): the scanner and value readers of
_json.h / _jsonval.h, and the inline writers of one value into an Arrow Column at a row —
rows are written at an index, so a value can be taken back (`undo_value`) when the row turns
out to belong elsewhere."""
from libc.stdint cimport uint8_t, int8_t, int16_t, int32_t, int64_t
from libc.string cimport memcpy, memcmp

from cdcfast._arrow cimport Column, VAR, BITS, col_valid, col_unset, bits_get
from cdcfast._kinds cimport *

cdef extern from "cdcfast/_json.h":
    int json_document "cdc_json_document"(const uint8_t* buf, int64_t start, int64_t end,
                                          int64_t* doc_end, int* code,
                                          int64_t* err_pos) noexcept nogil
    int64_t json_string_end "cdc_json_string_end"(const uint8_t* buf, int64_t pos, int64_t end,
                                                   int* has_escape, int* code,
                                                   int64_t* err_pos) noexcept nogil
    int64_t json_value_end "cdc_json_value_end"(const uint8_t* buf, int64_t pos, int64_t end,
                                                int* code, int64_t* err_pos) noexcept nogil
    int64_t json_number_end "cdc_json_number_end"(const uint8_t* buf, int64_t pos,
                                                  int64_t end) noexcept nogil
    int64_t json_string_scan "cdc_json_string_scan"(const uint8_t* buf, int64_t pos,
                                                     int64_t end, int* has_escape,
                                                     unsigned* high, int* code,
                                                     int64_t* err_pos) noexcept nogil
    int64_t json_value_scan_d "cdc_json_value_scan_d"(const uint8_t* buf, int64_t pos,
                                                       int64_t end, int max_depth,
                                                       unsigned* high, int* code,
                                                       int64_t* err_pos) noexcept nogil
    int64_t cdc_utf8_first_invalid(const uint8_t* p, int64_t n) noexcept nogil
    int64_t json_unescape "cdc_json_unescape"(const uint8_t* src, int64_t n,
                                              uint8_t* dst) noexcept nogil
    int64_t base64_decode "cdc_base64_decode"(const uint8_t* src, int64_t n,
                                              uint8_t* dst) noexcept nogil

cdef extern from "cdcfast/_jsonval.h":
    int cdc_jv_same(const uint8_t* a, const uint8_t* b, int64_t n) noexcept nogil
    ctypedef long long cdc_jv_i128 "cdc_i128"   # __int128 in C (_num.h); Cython only moves it
    int cdc_jv_int(const uint8_t* p, int64_t n, int64_t lo, int64_t hi,
                   int64_t* out) noexcept nogil
    int cdc_jv_is_number(const uint8_t* p, int64_t n) noexcept nogil
    int cdc_jv_decimal(const uint8_t* p, int64_t n, int prec, int scale,
                       cdc_jv_i128* out) noexcept nogil
    int cdc_jv_rescale(cdc_jv_i128 u, int64_t frm, int64_t to, int prec,
                       cdc_jv_i128* out) noexcept nogil
    int cdc_jv_twos(const uint8_t* raw, int64_t n, cdc_jv_i128* out) noexcept nogil
    int64_t cdc_jv_scaled_text(cdc_jv_i128 u, int64_t scale, uint8_t* dst) noexcept nogil
    int cdc_jv_iso_us(const uint8_t* p, int64_t n, int64_t* us) noexcept nogil
    int json_date "cdc_jv_date"(const uint8_t* p, int64_t n, int64_t* days) noexcept nogil
    int json_time "cdc_jv_time"(const uint8_t* p, int64_t n, int64_t* us) noexcept nogil
    int64_t cdc_jv_lsn(const uint8_t* p, int64_t n, uint8_t* dst) noexcept nogil


cdef extern from "<stdint.h>":
    int64_t I64_MIN "INT64_MIN"
    int64_t I64_MAX "INT64_MAX"



cdef inline int64_t ws(const uint8_t* b, int64_t i, int64_t end) noexcept nogil:
    # one test for the common case, a byte above the space (compact JSON has no whitespace)
    while i < end and b[i] <= 32 and (b[i] == 32 or b[i] == 10 or b[i] == 13 or b[i] == 9):
        i += 1
    return i


cdef inline int64_t str_end(const uint8_t* b, int64_t i, int64_t end, int* esc) noexcept nogil:
    """The closing quote of the (known-good) string whose first byte is at i."""
    cdef int code
    cdef int64_t ep
    return json_string_end(b, i, end, esc, &code, &ep)


cdef inline int64_t value_end(const uint8_t* b, int64_t i, int64_t end) noexcept nogil:
    cdef int code
    cdef int64_t ep
    return json_value_end(b, i, end, &code, &ep)


cdef inline int64_t token_end(const uint8_t* b, int64_t i, int64_t end) noexcept nogil:
    """The end of the (known-good) value at i, read by its kind: a string to its quote, a
    number to its last digit, a literal by its length; containers by a scan."""
    cdef uint8_t c = b[i]
    cdef int esc
    if c == 34:
        return str_end(b, i + 1, end, &esc) + 1
    if c == 45 or (48 <= c <= 57):
        return json_number_end(b, i, end)
    if c == 116 or c == 110:
        return i + 4
    if c == 102:
        return i + 5
    return value_end(b, i, end)


cdef inline bint key_is(const uint8_t* b, int64_t k, int64_t n, const char* name,
                        int64_t ln) noexcept nogil:
    return n == ln and memcmp(b + k, name, ln) == 0


# -- writing one value --------------------------------------------------------------------

cdef inline (int64_t, int64_t) int_range(int32_t kind) noexcept nogil:
    if kind == K_INT8:
        return -128, 127
    if kind == K_INT16:
        return -32768, 32767
    if kind == K_INT32:
        return -2147483648, 2147483647
    return I64_MIN, I64_MAX


cdef inline void store_int(Column c, int64_t row, int64_t x) noexcept nogil:
    cdef int8_t x1
    cdef int16_t x2
    cdef int32_t x4
    if c.width == 1:
        x1 = <int8_t>x
        put_fixed(c, row, &x1, 1)
    elif c.width == 2:
        x2 = <int16_t>x
        put_fixed(c, row, &x2, 2)
    elif c.width == 4:
        x4 = <int32_t>x
        put_fixed(c, row, &x4, 4)
    else:
        put_fixed(c, row, &x, 8)


cdef inline void undo_value(Column c, int64_t row) noexcept nogil:
    """Row `row` of c back to null (its value, if any, dropped)."""
    col_unset(c, row)
    if c.layout == VAR:
        c.dlen = c.offs[row]
        c.offs[row + 1] = <int32_t>c.dlen
    elif c.layout == BITS:
        c.data[row >> 3] &= <uint8_t>~(1 << (row & 7))


cdef inline bint differs(Column a, Column b, int64_t row) noexcept nogil:
    """Row `row` of a and b differ (null-safe; floats by their bits)."""
    cdef bint va = bits_get(a.valid, row), vb = bits_get(b.valid, row)
    cdef int64_t la, lb
    if va != vb:
        return True
    if not va:
        return False
    if a.layout == BITS:
        return bits_get(a.data, row) != bits_get(b.data, row)
    if a.layout == VAR:
        la = a.offs[row + 1] - a.offs[row]
        lb = b.offs[row + 1] - b.offs[row]
        return la != lb or not cdc_jv_same(a.data + a.offs[row], b.data + b.offs[row], la)
    # (in words, inline: a call to memcmp for 4 to 16 bytes cost more than the compare)
    return not cdc_jv_same(a.data + row * a.width, b.data + row * a.width, a.width)

cdef inline int data_room(Column c, int64_t n) except -1 nogil:
    """Room for n more data bytes in a VAR column (rare: the GIL taken back for it)."""
    with gil:
        c.reserve_data(n)
    return 0


cdef inline void put_null(Column c, int64_t row) noexcept nogil:
    col_unset(c, row)
    if c.layout == VAR:
        c.offs[row + 1] = <int32_t>c.dlen


cdef inline void put_fixed(Column c, int64_t row, const void* v, int width) noexcept nogil:
    memcpy(c.data + row * width, v, width)
    col_valid(c, row)


cdef inline int put_bytes(Column c, int64_t row, const uint8_t* p, int64_t n) except -1 nogil:
    if c.dlen + n > c.dcap:
        data_room(c, n)
    memcpy(c.data + c.dlen, p, n)
    c.dlen += n
    c.offs[row + 1] = <int32_t>c.dlen
    col_valid(c, row)
    return 0


cdef inline int copy_value(Column src, Column dst, int64_t row) except -1 nogil:
    """Row `row` of src, when not null, into dst (of the same layout)."""
    if not bits_get(src.valid, row):
        return 0
    if src.layout == VAR:
        return put_bytes(dst, row, src.data + src.offs[row], src.offs[row + 1] - src.offs[row])
    if src.layout == BITS:
        if bits_get(src.data, row):
            dst.data[row >> 3] |= <uint8_t>(1 << (row & 7))
        col_valid(dst, row)
        return 0
    put_fixed(dst, row, src.data + row * src.width, src.width)
    return 0


cdef inline int put_string(Column c, int64_t row, const uint8_t* b, int64_t q,
                           int64_t end) except -1 nogil:
    """The JSON string whose opening quote is at q, unescaped; 0, or 1 for a lone
    surrogate (then null)."""
    cdef int esc = 0
    cdef int64_t e = str_end(b, q + 1, end, &esc)
    if not esc:
        return put_bytes(c, row, b + q + 1, e - q - 1)
    return put_escaped(c, row, b, q, e + 1)


cdef inline int put_escaped(Column c, int64_t row, const uint8_t* b, int64_t q,
                            int64_t e) except -1 nogil:
    """The JSON string b[q:e] (its quotes included: the walk has found its end), unescaped;
    0, or 1 for a lone surrogate (then null)."""
    cdef int64_t n = e - q - 2, k
    if c.dlen + n > c.dcap:
        data_room(c, n)
    k = json_unescape(b + q + 1, n, c.data + c.dlen)
    if k < 0:
        put_null(c, row)
        return 1
    c.dlen += k
    c.offs[row + 1] = <int32_t>c.dlen
    col_valid(c, row)
    return 0
