# cython: language_level=3
"""Value-kind kernels shared by every format: text numbers, decimals, dates, times,
timestamps, hex, UTF-8 checks. Each is decoded in exactly one place, here.

All text parsers read through ``asc``, a 256-byte table from the message's code page to ASCII
(0 for bytes that are not ASCII there), so one parser serves UTF-8 and EBCDIC alike; NULL
means the bytes are ASCII-compatible already. They return
1 on success and 0 on any malformed or out-of-range input; they never read past ``p + n``.
"""
from libc.stdint cimport uint8_t, int32_t, int64_t, uint64_t
from libc.stdlib cimport strtod
from libc.string cimport memcmp, memcpy

cdef extern from "cdcfast/_num.h":
    ctypedef long long cdc_i128     # a 128-bit integer in C; Cython only needs it to be integral
    ctypedef unsigned long long cdc_u128
    const int64_t US_PER_SEC "CDC_US_PER_SEC"
    const int64_t US_PER_DAY "CDC_US_PER_DAY"
    const double* _POW10 "cdc_pow10_f64"
    const uint64_t* _IPOW10 "cdc_pow10_u64"
    int hexval "cdc_hexv"(uint8_t c) nogil
    bint is_leap "cdc_is_leap"(int64_t y) nogil
    int64_t days_from_civil "cdc_days_from_civil"(int64_t y, int64_t m, int64_t d) nogil
    # days since 1970-01-01 of y-m-d read from digits: 1 when the date exists, else 0
    int civil_days "cdc_civil_days"(int64_t y, int64_t m, int64_t d, int64_t* days) nogil
    int int_range "cdc_int_range"(uint64_t mag, int neg, int64_t lo, int64_t hi,
                                  int64_t* out) nogil


cdef extern from "cdcfast/_text.h":
    # a code page's digits and separators, as the SWAR and SIMD parsers compare them
    ctypedef struct cdc_cp:
        uint8_t zone, minus, dot, colon, space, t, plus, z
    const cdc_cp ASCII_CP "CDC_ASCII"
    # the timestamp parser for this CPU (allow_simd 0: the scalar one); it may read up to
    # `readable` bytes at p, and returns 1, or -1 for what parse_timestamp must decide
    ctypedef int (*ts_fn "cdc_timestamp_fn")(const uint8_t* p, int64_t n, int with_zone,
                                             const cdc_cp* cp, int64_t* us,
                                             int64_t readable) noexcept nogil
    ts_fn _ts_choose "cdc_timestamp_choose"(int allow_simd) noexcept nogil
    int date10_fast "cdc_date10_fast"(const uint8_t* p, int64_t n, int64_t* days) nogil
    int clock_fast "cdc_clock_fast"(const uint8_t* p, int64_t n, int64_t* us,
                                    int64_t* used) nogil
    int timestamp_fast "cdc_timestamp_fast"(const uint8_t* p, int64_t n, int with_zone,
                                            int64_t* us) nogil
    int int_fast "cdc_int_fast"(const uint8_t* p, int64_t n, int64_t lo, int64_t hi,
                                int64_t* out) nogil
    int decimal_fast "cdc_decimal_fast"(const uint8_t* p, int64_t n, uint8_t dc, int prec,
                                        int scale, cdc_u128* out, int* neg) nogil
    int float_fast "cdc_float_fast"(const uint8_t* p, int64_t n, uint8_t dc, double* out) nogil
    int eisel_lemire "cdc_eisel_lemire"(uint64_t man, int64_t exp10, int neg, double* out) nogil


cdef inline uint8_t A(const uint8_t* asc, uint8_t b) noexcept nogil:
    """A byte as ASCII: through the code page's table, or as is when there is none (NULL: an
    ASCII-compatible encoding — the common case, so no table load per byte)."""
    return b if asc == NULL else asc[b]


cdef inline int digits(const uint8_t* p, Py_ssize_t n, const uint8_t* asc,
                       int64_t* out) noexcept nogil:
    """Exactly n ASCII digits → out; 1/0. No branch per digit: dates and times call it with a
    constant n, and the compiler unrolls it into straight-line code with one test at the end."""
    cdef int64_t v = 0
    cdef Py_ssize_t i
    cdef uint8_t c
    cdef bint bad = 0
    for i in range(n):
        c = <uint8_t>(A(asc, p[i]) - 48)        # wraps below '0': one unsigned test
        bad |= c > 9
        v = v * 10 + c
    out[0] = v
    return not bad


cdef inline bint parse_int(const uint8_t* p, Py_ssize_t n, const uint8_t* asc,
                           int64_t lo, int64_t hi, int64_t* out, bint pad) noexcept nogil:
    """``[+-]digits`` within [lo, hi]. `pad`: 8 bytes past the value are readable (then
    ASCII digits are read 8 at a time)."""
    cdef Py_ssize_t i = 0
    cdef bint neg = 0
    cdef uint64_t acc = 0
    cdef uint8_t c
    if pad and asc == NULL and int_fast(p, n, lo, hi, out) == 1:
        return 1
    if n <= 0:
        return 0
    c = A(asc, p[0])
    if c == 45 or c == 43:
        neg = c == 45
        i = 1
        if n == 1:
            return 0
    cdef bint bad = 0
    if n - i <= 18:                         # cannot overflow: no test per digit
        while i < n:
            c = <uint8_t>(A(asc, p[i]) - 48)
            bad |= c > 9
            acc = acc * 10 + c
            i += 1
        if bad:
            return 0
    while i < n:
        c = A(asc, p[i])
        if c < 48 or c > 57:
            return 0
        if acc > 922337203685477580ULL:     # would pass 2**63 after *10
            return 0
        acc = acc * 10 + (c - 48)
        i += 1
    return int_range(acc, neg, lo, hi, out)


cdef inline bint parse_decimal(const uint8_t* p, Py_ssize_t n, const uint8_t* asc,
                               uint8_t dc, int prec, int scale, cdc_i128* out,
                               bint pad) noexcept nogil:
    """``[+-]digits[<dc>digits]`` into an unscaled 128-bit integer of DECIMAL(prec, scale).

    At most prec - scale integer digits (leading zeros free); fraction digits past `scale` must
    be zeros (a value is never silently rounded); no exponent. Digits gather in a 64-bit
    word, folded into the 128-bit value every 18 digits (a 128-bit multiply per digit costs
    several times more). `pad`: 8 bytes past the value are readable (then ASCII digits are
    read 8 at a time, cdc_decimal_fast).
    """
    cdef Py_ssize_t i = 0
    cdef bint neg = 0, started = 0
    cdef cdc_i128 acc = 0
    cdef uint64_t lo = 0
    cdef int nlo = 0, nint = 0, nfrac = 0, ndig = 0
    cdef uint8_t c
    cdef cdc_u128 fast
    cdef int fneg
    if pad and asc == NULL and decimal_fast(p, n, dc, prec, scale, &fast, &fneg) == 1:
        out[0] = -<cdc_i128>fast if fneg else <cdc_i128>fast
        return 1
    if n <= 0:
        return 0
    c = A(asc, p[0])
    if c == 45 or c == 43:
        neg = c == 45
        i = 1
    while i < n:
        c = A(asc, p[i])
        if c < 48 or c > 57:
            break
        ndig += 1
        if started or c != 48:
            started = 1
            nint += 1
            if nint > prec - scale:
                return 0
            lo = lo * 10 + (c - 48)
            nlo += 1
            if nlo == 18:
                acc = acc * <cdc_i128>1000000000000000000ULL + lo
                lo = 0
                nlo = 0
        i += 1
    if i < n:
        if A(asc, p[i]) != dc or dc == 0:
            return 0
        i += 1
        while i < n:
            c = A(asc, p[i])
            if c < 48 or c > 57:
                return 0
            ndig += 1
            if nfrac < scale:
                lo = lo * 10 + (c - 48)
                nlo += 1
                nfrac += 1
                if nlo == 18:
                    acc = acc * <cdc_i128>1000000000000000000ULL + lo
                    lo = 0
                    nlo = 0
            elif c != 48:
                return 0
            i += 1
    if ndig == 0:
        return 0
    while nfrac < scale:                    # pad the fraction to the scale
        lo *= 10
        nlo += 1
        nfrac += 1
        if nlo == 18:
            acc = acc * <cdc_i128>1000000000000000000ULL + lo
            lo = 0
            nlo = 0
    if acc != 0:                            # fold what is left: acc * 10**nlo + lo
        acc = acc * <cdc_i128>_IPOW10[nlo]
    acc += lo
    out[0] = -acc if neg else acc
    return 1




cdef inline bint parse_float(const uint8_t* p, Py_ssize_t n, const uint8_t* asc,
                             uint8_t dc, double* out, bint pad) noexcept nogil:
    """``[+-]digits[<dc>digits][(E|e)[+-]digits]``, correctly rounded.

    Up to 19 significant digits are gathered exactly in a 64-bit word. Clinger's fast path
    when they fit a double exactly (≤ 2**53) and the power of ten is ≤ 22: one IEEE multiply
    or divide of two exact values rounds correctly. Otherwise Eisel-Lemire (_text.h), which
    rounds correctly or declines. What is left (more digits, subnormals, the rare undecided
    case) goes through strtod. `pad`: 8 bytes past the value are readable (then ASCII digits
    are read 8 at a time, cdc_float_fast)."""
    cdef char buf[320]
    cdef Py_ssize_t i = 0
    cdef int nd = 0, sig = 0, frac = 0, ex = 0, e10
    cdef bint neg = 0, eneg = 0, exact = 1
    cdef uint64_t m = 0
    cdef uint8_t c
    cdef char* end
    if pad and asc == NULL and float_fast(p, n, dc, out) == 1:
        return 1
    if n <= 0 or n >= 320:
        return 0
    c = A(asc, p[0])
    if c == 45 or c == 43:
        buf[0] = <char>c
        neg = c == 45
        i = 1
    while i < n:
        c = A(asc, p[i])
        if c < 48 or c > 57:
            break
        buf[i] = <char>c
        nd += 1
        if m != 0 or c != 48:
            sig += 1
            if sig <= 19:
                m = m * 10 + (c - 48)
            else:
                exact = 0
        i += 1
    if i < n and A(asc, p[i]) == dc and dc != 0:
        buf[i] = 46
        i += 1
        while i < n:
            c = A(asc, p[i])
            if c < 48 or c > 57:
                break
            buf[i] = <char>c
            nd += 1
            if m != 0 or c != 48:
                sig += 1
                if sig <= 19:
                    m = m * 10 + (c - 48)
                    frac += 1
                else:
                    exact = 0
            else:
                frac += 1
            i += 1
    if nd == 0:
        return 0
    if i < n:
        c = A(asc, p[i])
        if c != 69 and c != 101:
            return 0
        buf[i] = 101
        i += 1
        if i < n and (A(asc, p[i]) == 45 or A(asc, p[i]) == 43):
            buf[i] = <char>A(asc, p[i])
            eneg = A(asc, p[i]) == 45
            i += 1
        if i >= n:
            return 0
        while i < n:
            c = A(asc, p[i])
            if c < 48 or c > 57:
                return 0
            buf[i] = <char>c
            if ex < 100000:
                ex = ex * 10 + (c - 48)
            i += 1
    e10 = (-ex if eneg else ex) - frac
    if exact and m <= 9007199254740992ULL and -22 <= e10 <= 22:
        out[0] = (<double>m) * _POW10[e10] if e10 >= 0 else (<double>m) / _POW10[-e10]
        if neg:
            out[0] = -out[0]
        return 1
    if exact and eisel_lemire(m, e10, neg, out):
        return 1
    buf[n] = 0
    out[0] = strtod(buf, &end)
    return end == buf + n


cdef inline bint parse_date10(const uint8_t* p, Py_ssize_t n, const uint8_t* asc,
                              int64_t* days) noexcept nogil:
    """``YYYY-MM-DD`` → days since 1970-01-01."""
    cdef int64_t y, m, d
    if asc == NULL and date10_fast(p, n, days) == 1:
        return 1
    if n < 10:
        return 0
    if not digits(p, 4, asc, &y) or A(asc, p[4]) != 45 or not digits(p + 5, 2, asc, &m) \
            or A(asc, p[7]) != 45 or not digits(p + 8, 2, asc, &d):
        return 0
    return civil_days(y, m, d, days)        # (the date kernels' own check and table)


cdef inline Py_ssize_t parse_clock(const uint8_t* p, Py_ssize_t n, const uint8_t* asc,
                                   int64_t* us) noexcept nogil:
    """``HH.MM.SS`` or ``HH:MM:SS`` (either separator at each place), optional ``.f…`` (1–12
    digits, truncated to µs). ``24.00.00`` with a zero fraction gives 86400 s. Returns the
    number of bytes read (stopping before anything that is not part of the time), 0 if bad."""
    cdef int64_t h, mi, s, f = 0, used
    cdef Py_ssize_t i = 8, nf = 0
    cdef uint8_t c
    if asc == NULL and clock_fast(p, n, us, &used) == 1:
        return used
    if n < 8:
        return 0
    if not digits(p, 2, asc, &h) or not digits(p + 3, 2, asc, &mi) \
            or not digits(p + 6, 2, asc, &s):
        return 0
    c = A(asc, p[2])
    if c != 46 and c != 58:
        return 0
    c = A(asc, p[5])
    if c != 46 and c != 58:
        return 0
    if i < n and A(asc, p[i]) == 46:
        i += 1
        while i < n:
            c = A(asc, p[i])
            if c < 48 or c > 57:
                break
            if nf < 6:
                f = f * 10 + (c - 48)
            elif c != 48 and h == 24:
                return 0
            nf += 1
            i += 1
        if nf == 0 or nf > 12:
            return 0
        while nf < 6:
            f *= 10
            nf += 1
    if mi > 59 or s > 59:
        return 0
    if h == 24:
        if mi != 0 or s != 0 or f != 0:
            return 0
    elif h > 23:
        return 0
    us[0] = ((h * 60 + mi) * 60 + s) * US_PER_SEC + f
    return i


cdef inline bint parse_time(const uint8_t* p, Py_ssize_t n, const uint8_t* asc,
                            int64_t* us) noexcept nogil:
    """A TIME value: a clock that uses all n bytes; 24.00.00 is an error."""
    cdef Py_ssize_t k = parse_clock(p, n, asc, us)
    return k > 0 and k == n and us[0] < US_PER_DAY


cdef inline bint parse_timestamp(const uint8_t* p, Py_ssize_t n, const uint8_t* asc,
                                 bint with_zone, int64_t* us) noexcept nogil:
    """``YYYY-MM-DD[-| |T]HH.MM.SS[.f…]`` → µs since the epoch (wall clock). With
    `with_zone`, an optional ``Z`` or ``±HH:MM`` suffix is applied (the result is then UTC)."""
    cdef int64_t days, clock, oh, om
    cdef Py_ssize_t k
    cdef uint8_t c
    if asc == NULL and timestamp_fast(p, n, with_zone, us) == 1:
        return 1
    if n < 19 or not parse_date10(p, n, asc, &days):
        return 0
    c = A(asc, p[10])
    if c != 45 and c != 32 and c != 84:
        return 0
    k = parse_clock(p + 11, n - 11, asc, &clock)
    if k == 0:
        return 0
    k += 11
    us[0] = days * US_PER_DAY + clock
    if k == n:
        return 1
    if not with_zone:
        return 0
    c = A(asc, p[k])
    if c == 90 and k + 1 == n:
        return 1
    if (c != 43 and c != 45) or n - k != 6 or A(asc, p[k + 3]) != 58:
        return 0
    if not digits(p + k + 1, 2, asc, &oh) or not digits(p + k + 4, 2, asc, &om) \
            or oh > 23 or om > 59:
        return 0
    if c == 43:
        us[0] -= (oh * 60 + om) * 60 * US_PER_SEC
    else:
        us[0] += (oh * 60 + om) * 60 * US_PER_SEC
    return 1


cdef inline Py_ssize_t unhex(const uint8_t* p, Py_ssize_t n, const uint8_t* asc,
                             uint8_t* out) noexcept nogil:
    """Hex text (either case, even length) → bytes; returns the byte count or -1."""
    cdef Py_ssize_t i
    cdef int a, b
    if n & 1:
        return -1
    for i in range(0, n, 2):
        a = hexval(A(asc, p[i]))
        b = hexval(A(asc, p[i + 1]))
        if a < 0 or b < 0:
            return -1
        out[i >> 1] = <uint8_t>((a << 4) | b)
    return n >> 1


cdef inline bint utf8_valid(const uint8_t* p, Py_ssize_t n) noexcept nogil:
    """Strict UTF-8 (no overlongs, no surrogates, ≤ U+10FFFF); ASCII runs checked 8 at a time."""
    cdef Py_ssize_t i = 0
    cdef uint8_t c, c1
    cdef uint64_t w
    while i < n:
        if i + 8 <= n:
            memcpy(&w, p + i, 8)                # one unaligned load
            if (w & 0x8080808080808080ULL) == 0:
                i += 8
                continue
        c = p[i]
        if c < 0x80:
            i += 1
        elif c < 0xC2:
            return 0
        elif c < 0xE0:
            if i + 1 >= n or (p[i+1] & 0xC0) != 0x80:
                return 0
            i += 2
        elif c < 0xF0:
            if i + 2 >= n or (p[i+1] & 0xC0) != 0x80 or (p[i+2] & 0xC0) != 0x80:
                return 0
            c1 = p[i+1]
            if (c == 0xE0 and c1 < 0xA0) or (c == 0xED and c1 >= 0xA0):
                return 0
            i += 3
        elif c < 0xF5:
            if i + 3 >= n or (p[i+1] & 0xC0) != 0x80 or (p[i+2] & 0xC0) != 0x80 \
                    or (p[i+3] & 0xC0) != 0x80:
                return 0
            c1 = p[i+1]
            if (c == 0xF0 and c1 < 0x90) or (c == 0xF4 and c1 >= 0x90):
                return 0
            i += 4
        else:
            return 0
    return 1


cdef inline bint utf8_copy(const uint8_t* p, Py_ssize_t n, uint8_t* out) noexcept nogil:
    """Copy n bytes that must be strict UTF-8 (see utf8_valid): ASCII runs are checked and
    copied 8 bytes at a time in one pass; the rest is checked, then copied."""
    cdef Py_ssize_t i = 0
    cdef uint64_t w
    while i + 8 <= n:
        memcpy(&w, p + i, 8)
        if w & 0x8080808080808080ULL:
            break
        memcpy(out + i, &w, 8)
        i += 8
    if not utf8_valid(p + i, n - i):
        return 0
    memcpy(out + i, p + i, n - i)
    return 1


cdef inline Py_ssize_t to_utf8(const uint8_t* p, Py_ssize_t n, const uint8_t* u8,
                               const uint8_t* u8len, uint8_t* out) noexcept nogil:
    """Single-byte code page → UTF-8 through a table (4 bytes a slot + its length; length 0
    marks a byte the code page does not define). Returns bytes written, or -1."""
    cdef Py_ssize_t i, o = 0
    cdef uint8_t b, k
    for i in range(n):
        b = p[i]
        k = u8len[b]
        if k == 1:
            out[o] = u8[b * 4]
            o += 1
        elif k == 0:
            return -1
        else:
            out[o] = u8[b * 4]
            out[o + 1] = u8[b * 4 + 1]
            if k > 2:
                out[o + 2] = u8[b * 4 + 2]
            o += k
    return o


cdef inline uint64_t _ascii8(const uint8_t* p, const uint8_t* asc) noexcept nogil:
    """Eight code-page bytes as their ASCII bytes, in one word (a 0 byte where a byte is not
    ASCII in the code page)."""
    return (<uint64_t>asc[p[0]] | (<uint64_t>asc[p[1]] << 8) | (<uint64_t>asc[p[2]] << 16)
            | (<uint64_t>asc[p[3]] << 24) | (<uint64_t>asc[p[4]] << 32)
            | (<uint64_t>asc[p[5]] << 40) | (<uint64_t>asc[p[6]] << 48)
            | (<uint64_t>asc[p[7]] << 56))


cdef inline bint cp_ascii8(const uint8_t* p, Py_ssize_t n, const uint8_t* asc,
                           uint8_t* out) noexcept nogil:
    """A value of at most 8 code-page bytes, all ASCII characters, written to out as one word
    (8 bytes may be read at p and written at out); 0 when one is not (then nothing is
    written): cp_to_utf8's first step, small enough to inline where short values abound."""
    cdef uint64_t w = _ascii8(p, asc)
    if ((w - 0x0101010101010101ULL) & ~w & 0x8080808080808080ULL) & ((<uint64_t>1 << (8 * n)) - 1
                                                                     if n < 8 else ~<uint64_t>0):
        return 0
    memcpy(out, &w, 8)
    return 1


cdef inline Py_ssize_t cp_to_utf8(const uint8_t* p, Py_ssize_t n, const uint8_t* asc,
                                  const uint8_t* u8, const uint8_t* u8len, uint8_t* out,
                                  Py_ssize_t readable=0) noexcept nogil:
    """Single-byte code page → UTF-8 (see to_utf8), eight bytes a step while they are all
    ASCII characters (the common case: names, codes, English text), through the code page's
    ASCII table `asc`; other bytes through the UTF-8 table. Returns bytes written, or -1.
    `readable` ≥ 8: that many bytes may be read from p, and 8 written at out (a short value
    inside a bigger buffer, an output with slack): then a value under 8 bytes is one word too."""
    cdef Py_ssize_t i = 0, o = 0, k
    cdef uint64_t w, z
    if n < 8 and readable >= 8:
        w = _ascii8(p, asc)
        z = (w - 0x0101010101010101ULL) & ~w & 0x8080808080808080ULL   # zero bytes
        if not (z & ((<uint64_t>1 << (8 * n)) - 1)):
            memcpy(out, &w, 8)
            return n
    cdef bint ascii = 0                 # the last 8-byte block was all ASCII (copied 1:1)
    while i + 8 <= n:
        w = _ascii8(p + i, asc)
        if (w - 0x0101010101010101ULL) & ~w & 0x8080808080808080ULL:   # a zero byte
            k = to_utf8(p + i, 8, u8, u8len, out + o)
            if k < 0:
                return -1
            o += k
            ascii = 0
        else:
            memcpy(out + o, &w, 8)
            o += 8
            ascii = 1
        i += 8
    if ascii and i < n:
        # the tail as the last 8 bytes, overlapping the block before (written 1:1, so the
        # overlap is written again with the same bytes)
        w = _ascii8(p + n - 8, asc)
        if not ((w - 0x0101010101010101ULL) & ~w & 0x8080808080808080ULL):
            memcpy(out + o - (8 - (n - i)), &w, 8)
            return o + (n - i)
    k = to_utf8(p + i, n - i, u8, u8len, out + o)
    if k < 0:
        return -1
    return o + k
