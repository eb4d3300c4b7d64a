# cython: language_level=3
"""Binary value kernels shared by every format: big-endian integers, BCD digits, packed
decimal, IBM hexadecimal floating point, UTF-16BE text. Each is decoded in exactly one place,
here (the text kernels are in _values.pxd).

They never read past ``p + n`` (unless the caller passes more as ``readable``) and return 1
on success, 0 on malformed input (or a byte count, -1 on malformed input, for the text ones).
"""
from libc.stdint cimport uint8_t, uint16_t, uint32_t, int64_t, uint64_t
from libc.string cimport memcpy

from cdcfast._values cimport (cdc_i128, US_PER_SEC, US_PER_DAY, _IPOW10, civil_days)

cdef extern from *:
    """
    /* byte -> its two BCD digits as 0..99, or 255 when a nibble is above 9 */
    static const unsigned char cdc_bcd[256] = {
          0,  1,  2,  3,  4,  5,  6,  7,  8,  9,255,255,255,255,255,255,
         10, 11, 12, 13, 14, 15, 16, 17, 18, 19,255,255,255,255,255,255,
         20, 21, 22, 23, 24, 25, 26, 27, 28, 29,255,255,255,255,255,255,
         30, 31, 32, 33, 34, 35, 36, 37, 38, 39,255,255,255,255,255,255,
         40, 41, 42, 43, 44, 45, 46, 47, 48, 49,255,255,255,255,255,255,
         50, 51, 52, 53, 54, 55, 56, 57, 58, 59,255,255,255,255,255,255,
         60, 61, 62, 63, 64, 65, 66, 67, 68, 69,255,255,255,255,255,255,
         70, 71, 72, 73, 74, 75, 76, 77, 78, 79,255,255,255,255,255,255,
         80, 81, 82, 83, 84, 85, 86, 87, 88, 89,255,255,255,255,255,255,
         90, 91, 92, 93, 94, 95, 96, 97, 98, 99,255,255,255,255,255,255,
        255,255,255,255,255,255,255,255,255,255,255,255,255,255,255,255,
        255,255,255,255,255,255,255,255,255,255,255,255,255,255,255,255,
        255,255,255,255,255,255,255,255,255,255,255,255,255,255,255,255,
        255,255,255,255,255,255,255,255,255,255,255,255,255,255,255,255,
        255,255,255,255,255,255,255,255,255,255,255,255,255,255,255,255,
        255,255,255,255,255,255,255,255,255,255,255,255,255,255,255,255};
    /* 16 BCD digits, the first in the top nibble -> their value: pairs, fours, eights */
    static inline uint64_t cdc_nibbles16(uint64_t x) {
        x = ((x >> 4) & 0x0F0F0F0F0F0F0F0FULL) * 10 + (x & 0x0F0F0F0F0F0F0F0FULL);
        x = ((x >> 8) & 0x00FF00FF00FF00FFULL) * 100 + (x & 0x00FF00FF00FF00FFULL);
        x = ((x >> 16) & 0x0000FFFF0000FFFFULL) * 10000 + (x & 0x0000FFFF0000FFFFULL);
        return (x >> 32) * 100000000ULL + (x & 0xFFFFFFFFULL);
    }
    /* non-zero when a nibble of x is above 9 (its top bit and one of the two below it) */
    static inline uint64_t cdc_nibbles_bad(uint64_t x) {
        return x & ((x << 1) | (x << 2)) & 0x8888888888888888ULL;
    }
    /* A 128-bit value as Arrow stores it, low half first: two 8-byte stores (a 128-bit
       store, or a value built in memory and read back whole, stalls the store forwarding) */
    static inline void cdc_store128(uint8_t* dst, uint64_t lo, uint64_t hi) {
        memcpy(dst, &lo, 8);
        memcpy(dst + 8, &hi, 8);
    }
    /* packed_decimal for n <= 16 bytes with 16 readable at p: the field as one 128-bit
       number, the sign nibble shifted out, the digits checked and combined 16 at a time;
       the value built and negated in two 64-bit halves */
    static inline int cdc_packed16(const uint8_t* p, int n, int prec, uint8_t* dst) {
        uint64_t w0, w1;
        memcpy(&w0, p, 8);
        memcpy(&w1, p + 8, 8);
        unsigned __int128 x = (((unsigned __int128)__builtin_bswap64(w0) << 64)
                               | __builtin_bswap64(w1)) >> (8 * (16 - n));
        unsigned sign = (unsigned)x & 15;
        x >>= 4;
        uint64_t lo = (uint64_t)x, hi = (uint64_t)(x >> 64);
        if (sign < 10 || cdc_nibbles_bad(lo) || cdc_nibbles_bad(hi))
            return 0;
        if (2 * n - 1 > prec && (p[0] >> 4) != 0)
            return 0;
        /* no branch on the digits or the sign: both vary from value to value */
        unsigned __int128 t = (unsigned __int128)cdc_nibbles16(hi) * 10000000000000000ULL
                              + cdc_nibbles16(lo);
        const uint64_t neg = -(uint64_t)((sign == 0xD) | (sign == 0xB));
        const unsigned __int128 m = (unsigned __int128)neg << 64 | neg;
        t = (t ^ m) - m;                        /* negated where the sign is minus */
        cdc_store128(dst, (uint64_t)t, (uint64_t)(t >> 64));
        return 1;
    }

    /* One DECIMAL column over a block: row todo[w] (w < nval) has its n-byte packed decimal
       (prec digits) at vp[todo[w]] + voff, readable up to iend[todo[w]]; its value to
       out + 16 * todo[w]. The rows with fewer than 16 readable bytes, or whose bytes are not
       such a number, are listed in hard for packed_decimal (which reports them), and all of
       them where n is over 16 (a catalog may declare more than Db2's 31 digits); returns how
       many. A loop of its own so that the kernel is inlined into it. */
    static inline int64_t cdc_dec_all_hard(const int64_t* todo, int64_t nval, int64_t* hard) {
        memcpy(hard, todo, (size_t)nval * sizeof(int64_t));
        return nval;
    }
    typedef int64_t (*cdc_dec_column_fn)(const uint8_t* const* vp, int64_t voff, int64_t n,
                                         int prec, const uint8_t* const* iend,
                                         const int64_t* todo, int64_t nval, uint8_t* out,
                                         int64_t* hard);

    static int64_t cdc_dec_column_scalar(const uint8_t* const* vp, int64_t voff, int64_t n,
                                         int prec, const uint8_t* const* iend,
                                         const int64_t* todo, int64_t nval, uint8_t* out,
                                         int64_t* hard) {
        int64_t nh = 0;
        if (n > 16)
            return cdc_dec_all_hard(todo, nval, hard);
        for (int64_t w = 0; w < nval; w++) {
            const int64_t i = todo[w];
            const uint8_t* v = vp[i] + voff;
            if (iend[i] - v < 16 || !cdc_packed16(v, (int)n, prec, out + 16 * i))
                hard[nh++] = i;
        }
        return nh;
    }

    #if defined(__x86_64__) && defined(__GNUC__)
    #include <immintrin.h>
    /* cdc_packed16 in 16-byte words (SSSE3): the field's bytes moved to the word's end by one
       shuffle (shuf: made once per column), its nibbles split and interleaved into 32 digits,
       the sign's lane replaced by a leading 0, then pairs, fours and eights of digits by
       multiply-adds: two 16-digit halves, one 128-bit multiply. The same checks (a digit or
       the sign out of range, the pad nibble of an even precision) and the same value. */
    __attribute__((target("ssse3"), always_inline)) static inline int cdc_packed_ssse3(
        const uint8_t* p, const __m128i shuf, const int pad, uint8_t* dst) {
        const __m128i f = _mm_set1_epi8(0x0F), nine = _mm_set1_epi8(9);
        const __m128i y = _mm_shuffle_epi8(_mm_loadu_si128((const __m128i*)p), shuf);
        const __m128i hi = _mm_and_si128(_mm_srli_epi16(y, 4), f), lo = _mm_and_si128(y, f);
        const unsigned bad = (unsigned)_mm_movemask_epi8(_mm_cmpgt_epi8(hi, nine))
            | ((unsigned)_mm_movemask_epi8(_mm_cmpgt_epi8(lo, nine)) & 0x7FFF);
        const unsigned sign = (unsigned)_mm_extract_epi16(lo, 7) >> 8;
        if (bad | (sign < 10) | (pad & ((p[0] >> 4) != 0)))
            return 0;
        const __m128i a = _mm_unpacklo_epi8(hi, lo), b = _mm_unpackhi_epi8(hi, lo);
        const __m128i e0 = _mm_slli_si128(a, 1), e1 = _mm_alignr_epi8(b, a, 15);
        const __m128i t10 = _mm_set1_epi16(0x010A);               /* 10 * first + second */
        const __m128i t100 = _mm_set1_epi32(0x00010064), t1e4 = _mm_set1_epi32(0x00012710);
        const __m128i r = _mm_packs_epi32(_mm_madd_epi16(_mm_maddubs_epi16(e0, t10), t100),
                                          _mm_madd_epi16(_mm_maddubs_epi16(e1, t10), t100));
        const __m128i s = _mm_madd_epi16(r, t1e4);                /* four eights of digits */
        const uint64_t s01 = (uint64_t)_mm_cvtsi128_si64(s);
        const uint64_t s23 = (uint64_t)_mm_cvtsi128_si64(_mm_unpackhi_epi64(s, s));
        unsigned __int128 t = (unsigned __int128)((s01 & 0xFFFFFFFFULL) * 100000000ULL
                                                  + (s01 >> 32)) * 10000000000000000ULL
                              + ((s23 & 0xFFFFFFFFULL) * 100000000ULL + (s23 >> 32));
        const uint64_t neg = -(uint64_t)((sign == 0xD) | (sign == 0xB));
        const unsigned __int128 m = (unsigned __int128)neg << 64 | neg;
        t = (t ^ m) - m;
        cdc_store128(dst, (uint64_t)t, (uint64_t)(t >> 64));
        return 1;
    }

    __attribute__((target("ssse3"))) static int64_t cdc_dec_column_ssse3(
        const uint8_t* const* vp, int64_t voff, int64_t n, int prec,
        const uint8_t* const* iend, const int64_t* todo, int64_t nval, uint8_t* out,
        int64_t* hard) {
        int8_t sh[16];
        if (n > 16)
            return cdc_dec_all_hard(todo, nval, hard);
        for (int j = 0; j < 16; j++)                /* byte j of the word: field byte j-16+n */
            sh[j] = (int8_t)(j >= 16 - n ? j - (16 - n) : -1);
        const __m128i shuf = _mm_loadu_si128((const __m128i*)sh);
        const int pad = 2 * n - 1 > prec;
        int64_t nh = 0;
        for (int64_t w = 0; w < nval; w++) {
            const int64_t i = todo[w];
            const uint8_t* v = vp[i] + voff;
            if (iend[i] - v < 16 || !cdc_packed_ssse3(v, shuf, pad, out + 16 * i))
                hard[nh++] = i;
        }
        return nh;
    }
    #define CDC_DEC_SSSE3(allow) ((allow) && __builtin_cpu_supports("ssse3"))
    #else
    #define cdc_dec_column_ssse3 cdc_dec_column_scalar
    #define CDC_DEC_SSSE3(allow) 0
    #endif

    /* The column kernel for this CPU (the scalar one where SSSE3 is missing or not allowed) */
    static inline cdc_dec_column_fn cdc_dec_column_choose(int allow_simd) {
        return CDC_DEC_SSSE3(allow_simd) ? cdc_dec_column_ssse3 : cdc_dec_column_scalar;
    }
    """
    const uint8_t* BCD "cdc_bcd"
    int packed16 "cdc_packed16"(const uint8_t* p, int n, int prec, uint8_t* dst) nogil
    ctypedef int64_t (*dec_column_fn "cdc_dec_column_fn")(
        const uint8_t** vp, int64_t voff, int64_t n, int prec, const uint8_t** iend,
        const int64_t* todo, int64_t nval, uint8_t* out, int64_t* hard) noexcept nogil
    dec_column_fn dec_column_choose "cdc_dec_column_choose"(int allow_simd) noexcept nogil
    void store128 "cdc_store128"(uint8_t* dst, uint64_t lo, uint64_t hi) nogil
    uint32_t __builtin_bswap32(uint32_t) nogil
    uint64_t __builtin_bswap64(uint64_t) nogil


cdef inline uint64_t be16(const uint8_t* p) noexcept nogil:
    return (<uint64_t>p[0] << 8) | p[1]


cdef inline uint64_t be32(const uint8_t* p) noexcept nogil:
    cdef uint32_t v
    memcpy(&v, p, 4)
    return __builtin_bswap32(v)


cdef inline uint64_t be64(const uint8_t* p) noexcept nogil:
    cdef uint64_t v
    memcpy(&v, p, 8)
    return __builtin_bswap64(v)



cdef inline uint64_t _bcd8(uint64_t w, uint64_t* bad) noexcept nogil:
    """Eight BCD bytes (two digits each) as their values 0..99, a byte each; `bad` gets a
    non-zero bit for a nibble above 9. Byte lanes never carry: 15 + 6 and 9 * 10 + 9 fit."""
    cdef uint64_t hi = (w >> 4) & 0x0F0F0F0F0F0F0F0FULL, lo = w & 0x0F0F0F0F0F0F0F0FULL
    bad[0] |= ((hi + 0x0606060606060606ULL) | (lo + 0x0606060606060606ULL)) \
        & 0x1010101010101010ULL
    return (hi << 3) + (hi << 1) + lo


cdef inline int bcd_timestamp17(const uint8_t* p, int64_t* us) noexcept nogil:
    """A BIN(17) timestamp: 34 BCD digits YYYYMMDDHHMMSS, 15 fraction digits (femtoseconds,
    truncated to µs), 5 pad digits → µs since the epoch (wall clock). Returns 1, 0 when a
    nibble is above 9 or the date/time is impossible, 2 when all 17 bytes are zero (null).
    The digits are checked and paired eight bytes at a time."""
    cdef uint64_t w0, w1, bad = 0
    memcpy(&w0, p, 8)
    memcpy(&w1, p + 8, 8)
    if not (w0 | w1 | p[16]):
        return 2
    cdef uint64_t v0 = _bcd8(w0, &bad), v1 = _bcd8(w1, &bad)
    _bcd8(p[16], &bad)
    if bad:
        return 0
    cdef int64_t y = (v0 & 0xFF) * 100 + ((v0 >> 8) & 0xFF), m = (v0 >> 16) & 0xFF
    cdef int64_t d = (v0 >> 24) & 0xFF, hh = (v0 >> 32) & 0xFF, mi = (v0 >> 40) & 0xFF
    cdef int64_t ss = (v0 >> 48) & 0xFF
    cdef int64_t f = (((v0 >> 56) & 0xFF) * 100 + (v1 & 0xFF)) * 100 + ((v1 >> 8) & 0xFF)
    cdef int64_t days
    if hh > 23 or mi > 59 or ss > 59 or not civil_days(y, m, d, &days):
        return 0
    us[0] = days * US_PER_DAY + ((hh * 60 + mi) * 60 + ss) * US_PER_SEC + f
    return 1


cdef inline int packed_decimal(const uint8_t* p, int64_t n, int prec, uint8_t* dst,
                               int64_t readable=0) noexcept nogil:
    """Packed decimal of n bytes (2n - 1 digits, then the sign nibble: C/A/E/F plus, D/B
    minus) holding at most `prec` digits: when 2n - 1 > prec the leading nibble must be 0.
    Its value goes to dst as Arrow's decimal128 (16 bytes, low half first); 0 (dst as it
    was or not) when the bytes are not such a number. With 16 bytes `readable` at p
    (n <= 16) in a few word operations (cdc_packed16); else the digits gather two a byte
    through the BCD table, 18 at a time in a 64-bit word."""
    if readable >= 16 and n <= 16:
        return packed16(p, <int>n, prec, dst)
    cdef int64_t i
    cdef uint64_t lo = 0
    cdef int nlo = 0
    cdef cdc_i128 acc = 0
    cdef uint8_t b, v, sign = p[n - 1] & 15
    if sign < 10:
        return 0
    if 2 * n - 1 > prec and (p[0] >> 4) != 0:
        return 0
    for i in range(n - 1):
        v = BCD[p[i]]
        if v == 0xFF:
            return 0
        lo = lo * 100 + v
        nlo += 2
        if nlo >= 18:
            acc = acc * <cdc_i128>1000000000000000000ULL + lo
            lo = 0
            nlo = 0
    b = p[n - 1] >> 4
    if b > 9:
        return 0
    lo = lo * 10 + b
    nlo += 1
    if acc != 0:
        acc = acc * <cdc_i128>_IPOW10[nlo]
    acc += lo
    if sign == 0xD or sign == 0xB:
        acc = -acc
    store128(dst, <uint64_t>acc, <uint64_t>(acc >> 64))
    return 1


cdef inline double hfp_value(uint64_t frac, int expo, int neg, int bits) noexcept nogil:
    """fraction × 16^(expo − 64) / 2^bits: the fraction rounds once into a double (ties to
    even, by the hardware conversion), the scaling by a power of two is then exact. The
    power is built from its bits (no libm call): 2^(4 (expo − 64) − bits) lies between
    2^-312 and 2^228, always a normal double, and so is every product."""
    cdef uint64_t e = <uint64_t>(4 * (expo - 64) - bits + 1023) << 52
    cdef double scale
    memcpy(&scale, &e, 8)
    cdef double v = <double>frac * scale
    return -v if neg else v


cdef inline double hfp32(const uint8_t* p) noexcept nogil:
    """A 4-byte IBM hexadecimal float as a double (exact: 24 bits fit)."""
    cdef uint64_t w = be32(p)
    return hfp_value(w & 0xFFFFFF, (w >> 24) & 0x7F, w >> 31, 24)


cdef inline double hfp64(const uint8_t* p) noexcept nogil:
    """An 8-byte IBM hexadecimal float, rounded once to the nearest double."""
    cdef uint64_t w = be64(p)
    return hfp_value(w & 0xFFFFFFFFFFFFFFULL, (w >> 56) & 0x7F, w >> 63, 56)


cdef inline int64_t utf16be_to_utf8(const uint8_t* p, int64_t n, uint8_t* out) noexcept nogil:
    """UTF-16BE → UTF-8 (at most 3 output bytes per 2 input bytes); -1 for an odd length
    or an unpaired surrogate. Returns the bytes written."""
    cdef int64_t i = 0, o = 0
    cdef uint32_t c, c2
    if n & 1:
        return -1
    while i < n:
        c = (<uint32_t>p[i] << 8) | p[i + 1]
        i += 2
        if c < 0x80:
            out[o] = <uint8_t>c
            o += 1
        elif c < 0x800:
            out[o] = <uint8_t>(0xC0 | (c >> 6))
            out[o + 1] = <uint8_t>(0x80 | (c & 0x3F))
            o += 2
        elif c < 0xD800 or c > 0xDFFF:
            out[o] = <uint8_t>(0xE0 | (c >> 12))
            out[o + 1] = <uint8_t>(0x80 | ((c >> 6) & 0x3F))
            out[o + 2] = <uint8_t>(0x80 | (c & 0x3F))
            o += 3
        else:
            if c > 0xDBFF or i + 2 > n:
                return -1
            c2 = (<uint32_t>p[i] << 8) | p[i + 1]
            if c2 < 0xDC00 or c2 > 0xDFFF:
                return -1
            i += 2
            c = 0x10000 + ((c - 0xD800) << 10) + (c2 - 0xDC00)
            out[o] = <uint8_t>(0xF0 | (c >> 18))
            out[o + 1] = <uint8_t>(0x80 | ((c >> 12) & 0x3F))
            out[o + 2] = <uint8_t>(0x80 | ((c >> 6) & 0x3F))
            out[o + 3] = <uint8_t>(0x80 | (c & 0x3F))
            o += 4
    return o
