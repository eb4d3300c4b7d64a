/* Fast paths for the text value parsers of _values.pxd, for ASCII-compatible input on a
 * little-endian machine: eight bytes are checked and converted at once (SWAR). Each returns
 * 1 with the value, or -1 to say "not handled here": the byte-by-byte parser then decides,
 * so these only ever accept what it accepts, with the same value. Timestamps also have an
 * SSSE3 form (cdc_timestamp_ssse3), chosen at import where the CPU has it. */
#ifndef CDCFAST_TEXT_H
#define CDCFAST_TEXT_H

#include <stdint.h>
#include <string.h>
#include "cdcfast/_num.h"
#include "cdcfast/_pow10.h"

#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
#define CDC_SWAR 1
#else
#define CDC_SWAR 0
#endif

/* The characters the date and time parsers look for, in one code page: digits are `zone`
 * | 0..9 (0x30 in ASCII, 0xF0 in EBCDIC), and the separators' bytes. With it the same SWAR
 * code reads ASCII and EBCDIC text in place (a translated copy would cost a store-to-load
 * stall per value). */
typedef struct {
    uint8_t zone, minus, dot, colon, space, t, plus, z;
} cdc_cp;

static const cdc_cp CDC_ASCII = {0x30, '-', '.', ':', ' ', 'T', '+', 'Z'};
static const cdc_cp CDC_EBCDIC = {0xF0, 0x60, 0x4B, 0x7A, 0x40, 0xE3, 0x4E, 0xE9};

#define CDC_ZONES(cp) (0x0101010101010101ULL * (cp)->zone)

/* The bytes of w that m selects (0xFF each) are all digits of the code page. A byte outside
 * m may only be below 0xFA (else its +6 carries into the next byte): the callers check those
 * first. */
static inline int cdc_swar_digits_cp(uint64_t w, uint64_t m, const cdc_cp* cp)
{
    const uint64_t hi = 0xF0F0F0F0F0F0F0F0ULL, zero = CDC_ZONES(cp);
    return (((w & hi) ^ zero) & m) == 0
        && ((((w + 0x0606060606060606ULL) & hi) ^ zero) & m) == 0;
}

static inline int cdc_swar_digits(uint64_t w, uint64_t m)
{
    return cdc_swar_digits_cp(w, m, &CDC_ASCII);
}

/* a byte's digit value when it is a digit of the code page, else above 9 */
#define CDC_DIG(c, cp) ((uint8_t)((uint8_t)(c) - (cp)->zone))

/* The byte at index i of w (i = 0 is the first in memory). */
#define CDC_B(w, i) ((int64_t)(((w) >> (8 * (i))) & 0xFF))

/* YYYY-MM-DD (n >= 10) -> days since 1970-01-01. */
static inline int cdc_date10_cp(const uint8_t* p, int64_t n, const cdc_cp* cp, int64_t* days)
{
#if CDC_SWAR
    uint64_t w;
    if (n < 10)
        return -1;
    memcpy(&w, p, 8);
    if (CDC_B(w, 4) != cp->minus || CDC_B(w, 7) != cp->minus
            || !cdc_swar_digits_cp(w, 0x00FFFF00FFFFFFFFULL, cp)
            || CDC_DIG(p[8], cp) > 9 || CDC_DIG(p[9], cp) > 9)
        return -1;
    w &= 0x0F0F0F0F0F0F0F0FULL;                 /* digits' values (separators unused) */
    int64_t y = CDC_B(w, 0) * 1000 + CDC_B(w, 1) * 100 + CDC_B(w, 2) * 10 + CDC_B(w, 3);
    int64_t m = CDC_B(w, 5) * 10 + CDC_B(w, 6);
    int64_t d = CDC_DIG(p[8], cp) * 10 + CDC_DIG(p[9], cp);
    return cdc_civil_days(y, m, d, days) ? 1 : -1;
#else
    (void)p; (void)n; (void)cp; (void)days;
    return -1;
#endif
}

static inline int cdc_date10_fast(const uint8_t* p, int64_t n, int64_t* days)
{
    return cdc_date10_cp(p, n, &CDC_ASCII, days);
}

/* HH.MM.SS[.f...] (either separator, '.' or ':', at each place; 1-12 fraction digits,
 * truncated to µs; hours 0-23 here: 24.00.00 is left to the careful parser) -> µs since
 * midnight; *used gets the bytes read (the parser stops before what is not a digit). */
static inline int cdc_clock_cp(const uint8_t* p, int64_t n, const cdc_cp* cp, int64_t* us,
                               int64_t* used)
{
#if CDC_SWAR
    uint64_t w;
    int64_t i = 8, nf = 0, f = 0;
    if (n < 8)
        return -1;
    memcpy(&w, p, 8);
    int64_t s2 = CDC_B(w, 2), s5 = CDC_B(w, 5);
    if ((s2 != cp->dot && s2 != cp->colon) || (s5 != cp->dot && s5 != cp->colon)
            || !cdc_swar_digits_cp(w, 0xFFFF00FFFF00FFFFULL, cp))
        return -1;
    w &= 0x0F0F0F0F0F0F0F0FULL;                 /* digits' values (separators unused) */
    int64_t h = CDC_B(w, 0) * 10 + CDC_B(w, 1);
    int64_t mi = CDC_B(w, 3) * 10 + CDC_B(w, 4);
    int64_t s = CDC_B(w, 6) * 10 + CDC_B(w, 7);
    if (h > 23 || mi > 59 || s > 59)
        return -1;
    if (n > 8 && p[8] == cp->dot) {
        i = 9;
        while (i < n && nf < 12 && CDC_DIG(p[i], cp) <= 9) {
            if (nf < 6)
                f = f * 10 + CDC_DIG(p[i], cp);
            nf++;
            i++;
        }
        if (nf == 0 || (i < n && CDC_DIG(p[i], cp) <= 9))
            return -1;                  /* no digit, or more than 12 */
        static const int64_t scale[7] = {1000000, 100000, 10000, 1000, 100, 10, 1};
        f *= scale[nf < 6 ? nf : 6];
    }
    *us = ((h * 60 + mi) * 60 + s) * 1000000LL + f;
    *used = i;
    return 1;
#else
    (void)p; (void)n; (void)cp; (void)us; (void)used;
    return -1;
#endif
}

static inline int cdc_clock_fast(const uint8_t* p, int64_t n, int64_t* us, int64_t* used)
{
    return cdc_clock_cp(p, n, &CDC_ASCII, us, used);
}

/* 0x80 in each byte of w that is not an ASCII digit, 0 in the others. A byte of 0xFA or more
 * carries into the next, which may then read as a non-digit: callers only ask for the first
 * non-digit, or for all digits, where that cannot change the answer. */
static inline uint64_t cdc_nondigits_cp(uint64_t w, const cdc_cp* cp)
{
    const uint64_t hi = 0xF0F0F0F0F0F0F0F0ULL, zero = CDC_ZONES(cp);
    uint64_t x = ((w & hi) ^ zero) | (((w + 0x0606060606060606ULL) & hi) ^ zero);
    return (((x & 0x7F7F7F7F7F7F7F7FULL) + 0x7F7F7F7F7F7F7F7FULL) | x)
        & 0x8080808080808080ULL;
}

static inline uint64_t cdc_nondigits(uint64_t w)
{
    return cdc_nondigits_cp(w, &CDC_ASCII);
}

/* The 8-digit number whose digit values (0-9) are the bytes of v, first byte first. */
static inline uint64_t cdc_value8(uint64_t v)
{
    v = (v * 10) + (v >> 8);                    /* pairs */
    return (((v & 0x000000FF000000FFULL) * (100 + (1000000ULL << 32)))
            + (((v >> 16) & 0x000000FF000000FFULL) * (1 + (10000ULL << 32)))) >> 32;
}

/* The run of ASCII digits at p, at most 8 and none at or past p + lim: its length, and its
 * value in *v. Reads the 8 bytes at p, which the caller knows are readable (a padded value:
 * see the `pad` argument of the parsers in _values.pxd). A byte that is not a digit borrows
 * from the bytes after it only, so the digits before it convert exactly. */
static inline int cdc_digits8(const uint8_t* p, int64_t lim, uint64_t* v)
{
    uint64_t w;
    memcpy(&w, p, 8);
    uint64_t nd = cdc_nondigits(w);
    if (lim < 8)
        nd |= lim <= 0 ? ~0ULL : ~0ULL << (8 * lim);
    int k = nd ? __builtin_ctzll(nd) >> 3 : 8;
    uint64_t d = (w - 0x3030303030303030ULL) << (8 * (8 - k) & 63);
    *v = k ? cdc_value8(d) : 0;
    return k;
}

/* [+-]digits of a padded value (8 bytes readable past its end) within [lo, hi], 8 digits at a
 * time; more than 19 digits (leading zeros, overflow) are left to the careful parser. */
static inline int cdc_int_fast(const uint8_t* p, int64_t n, int64_t lo, int64_t hi,
                               int64_t* out)
{
#if CDC_SWAR
    if (n <= 0 || n > 20)
        return -1;
    int neg = p[0] == '-';
    int64_t i = neg || p[0] == '+';
    uint64_t acc, v;
    int k = cdc_digits8(p + i, n - i, &acc);
    i += k;
    if (k == 8) {
        k = cdc_digits8(p + i, n - i, &v);
        acc = acc * cdc_pow10_u64[k] + v;
        i += k;
        if (k == 8) {
            k = cdc_digits8(p + i, n - i, &v);
            if (k > 3)
                return -1;
            if (acc > (UINT64_MAX - v) / cdc_pow10_u64[k])
                return -1;
            acc = acc * cdc_pow10_u64[k] + v;
            i += k;
        }
    }
    if (i != n || i == (int64_t)(neg || p[0] == '+'))
        return -1;
    return cdc_int_range(acc, neg, lo, hi, out) ? 1 : -1;
#else
    (void)p; (void)n; (void)lo; (void)hi; (void)out;
    return -1;
#endif
}

/* Digits gathered 8 at a time into a value hi * 10**nlo + lo, lo holding at most 19 of them
 * (a 128-bit multiply only every 16 digits or so). */
typedef struct {
    unsigned __int128 hi;
    uint64_t lo;
    int nlo;
} cdc_digit_acc;

/* Append the run of digits of a padded value from p[i] (before p[n]) to acc; returns where
 * the run ends. */
static inline int64_t cdc_gather_digits(const uint8_t* p, int64_t n, int64_t i,
                                        cdc_digit_acc* acc)
{
    uint64_t v;
    int k;
    do {
        k = cdc_digits8(p + i, n - i, &v);
        if (acc->nlo + k > 19) {
            acc->hi = acc->hi * cdc_pow10_u64[acc->nlo] + acc->lo;
            acc->lo = 0;
            acc->nlo = 0;
        }
        acc->lo = acc->lo * cdc_pow10_u64[k] + v;
        acc->nlo += k;
        i += k;
    } while (k == 8);
    return i;
}

/* [+-]digits[<dc>digits] of a padded value as the unscaled integer of DECIMAL(prec, scale),
 * 8 digits at a time: at most prec - scale integer digits after leading zeros, at most
 * `scale` fraction digits (the careful parser takes trailing zeros past it, and errors). */
static inline int cdc_decimal_fast(const uint8_t* p, int64_t n, uint8_t dc, int prec,
                                    int scale, unsigned __int128* out, int* neg)
{
#if CDC_SWAR
    if (n <= 0 || n > 80)
        return -1;
    *neg = p[0] == '-';
    int64_t i = p[0] == '-' || p[0] == '+', s = i, f, nf = 0;
    while (i < n && p[i] == '0')
        i++;
    int64_t z = i;
    cdc_digit_acc acc = {0, 0, 0};
    i = cdc_gather_digits(p, n, i, &acc);
    if (i - z > prec - scale)
        return -1;
    int64_t e = i;
    if (i < n) {
        if (p[i] != dc)
            return -1;
        f = ++i;
        i = cdc_gather_digits(p, n, i, &acc);
        if (i != n)
            return -1;
        nf = n - f;
        if (nf > scale)
            return -1;
    }
    if (e == s && nf == 0)
        return -1;                                  /* no digit at all */
    unsigned __int128 r = acc.hi * cdc_pow10_u64[acc.nlo] + acc.lo;
    int64_t pad = scale - nf;
    while (pad >= 19) {
        r *= cdc_pow10_u64[19];
        pad -= 19;
    }
    *out = r * cdc_pow10_u64[pad];
    return 1;
#else
    (void)p; (void)n; (void)dc; (void)prec; (void)scale; (void)out; (void)neg;
    return -1;
#endif
}

/* [+-]digits[<dc>digits][(E|e)[+-]digits] of a padded value, correctly rounded: at most 19
 * significant digits gathered 8 at a time, then Clinger's exact case or Eisel-Lemire. More
 * digits, and what those two cannot decide, are left to the careful parser (strtod). */
static inline int cdc_float_fast(const uint8_t* p, int64_t n, uint8_t dc, double* out);

/* A ±HH:MM or Z zone at p[k:n] (k < n) applied to r, as cdc_timestamp_cp reads it: 1, or -1
 * for anything else. */
static inline int cdc_zone_cp(const uint8_t* p, int64_t k, int64_t n, const cdc_cp* cp,
                              int64_t* r)
{
    int64_t c = p[k];
    if (c == cp->z && k + 1 == n)
        return 1;                               /* UTC already */
    if ((c == cp->plus || c == cp->minus) && n - k == 6 && p[k + 3] == cp->colon
            && CDC_DIG(p[k + 1], cp) <= 9 && CDC_DIG(p[k + 2], cp) <= 9
            && CDC_DIG(p[k + 4], cp) <= 9 && CDC_DIG(p[k + 5], cp) <= 9) {
        int64_t oh = CDC_DIG(p[k + 1], cp) * 10 + CDC_DIG(p[k + 2], cp);
        int64_t om = CDC_DIG(p[k + 4], cp) * 10 + CDC_DIG(p[k + 5], cp);
        if (oh > 23 || om > 59)
            return -1;
        int64_t off = (oh * 60 + om) * 60 * 1000000LL;
        *r += c == cp->plus ? -off : off;
        return 1;
    }
    return -1;
}

/* A timestamp from its fields (the fraction f in µs): checked (hour 24 is left to the
 * careful parser), a zone at p[k:n] applied (with_zone; else nothing may follow k), into *us.
 * 1, or -1. */
static inline int cdc_ts_finish(const uint8_t* p, int64_t k, int64_t n, int with_zone,
                                const cdc_cp* cp, int64_t y, int64_t m, int64_t d, int64_t h,
                                int64_t mi, int64_t s, int64_t f, int64_t* us)
{
    int64_t days;
    if (h > 23 || mi > 59 || s > 59 || !cdc_civil_days(y, m, d, &days))
        return -1;
    int64_t r = (days * 86400 + (h * 60 + mi) * 60 + s) * 1000000LL + f;
    if (k < n && (!with_zone || cdc_zone_cp(p, k, n, cp, &r) != 1))
        return -1;
    *us = r;
    return 1;
}

/* YYYY-MM-DD?HH?MM?SS[.f...] -> µs since the epoch, the whole value checked and converted
 * in a few 8-byte words: the date and clock in three overlapping loads, the fraction (1-7
 * digits, truncated to µs) in one. With with_zone a Z or ±HH:MM suffix is applied. Anything
 * else (8 or more fraction digits, hour 24, another suffix, an error) is left to
 * parse_timestamp's careful path. */
static inline int cdc_timestamp_cp(const uint8_t* p, int64_t n, int with_zone,
                                   const cdc_cp* cp, int64_t* us)
{
#if CDC_SWAR
    uint64_t w0, w1, w2, t;
    int64_t k = 19, f = 0;
    if (n < 19)
        return -1;
    memcpy(&w0, p, 8);              /* YYYY-MM- */
    memcpy(&w1, p + 8, 8);          /* DD?HH?MM */
    memcpy(&w2, p + 11, 8);         /* HH?MM?SS */
    int64_t c10 = CDC_B(w1, 2), c13 = CDC_B(w2, 2), c16 = CDC_B(w2, 5);
    if (CDC_B(w0, 4) != cp->minus || CDC_B(w0, 7) != cp->minus
            || (c10 != cp->minus && c10 != cp->space && c10 != cp->t)
            || (c13 != cp->dot && c13 != cp->colon) || (c16 != cp->dot && c16 != cp->colon)
            || (cdc_nondigits_cp(w0, cp) & 0x0080800080808080ULL)
            || (cdc_nondigits_cp(w1, cp) & 0x0000000000008080ULL)
            || (cdc_nondigits_cp(w2, cp) & 0x8080008080008080ULL))
        return -1;
    w0 &= 0x0F0F0F0F0F0F0F0FULL;    /* digits' values (separators unused) */
    w1 &= 0x0F0F0F0F0F0F0F0FULL;
    w2 &= 0x0F0F0F0F0F0F0F0FULL;
    int64_t y = CDC_B(w0, 0) * 1000 + CDC_B(w0, 1) * 100 + CDC_B(w0, 2) * 10 + CDC_B(w0, 3);
    int64_t m = CDC_B(w0, 5) * 10 + CDC_B(w0, 6);
    int64_t d = CDC_B(w1, 0) * 10 + CDC_B(w1, 1);
    int64_t h = CDC_B(w2, 0) * 10 + CDC_B(w2, 1);
    int64_t mi = CDC_B(w2, 3) * 10 + CDC_B(w2, 4);
    int64_t s = CDC_B(w2, 6) * 10 + CDC_B(w2, 7);
    if (n > 20 && p[19] == cp->dot) {
        /* the fraction's first 8 bytes, or the value's last bytes moved down to byte 0 (the
         * bytes shifted in are zeros: non-digits) */
        if (n >= 28) {
            memcpy(&t, p + 20, 8);
        } else {
            memcpy(&t, p + n - 8, 8);
            t >>= 8 * (28 - n);
        }
        uint64_t nd = cdc_nondigits_cp(t, cp);
        if (nd == 0 || (nd & 0x80))
            return -1;                          /* 8 digits or more, or none */
        int64_t nf = __builtin_ctzll(nd) >> 3;
        int64_t keep = nf < 6 ? nf : 6;
        uint64_t v = t & 0x0F0F0F0F0F0F0F0FULL & ((1ULL << (8 * keep)) - 1);
        f = (int64_t)cdc_value8(v << 16);       /* bytes past `keep` are 0: as the last six
                                                   of eight digits, the µs */
        k = 20 + nf;
    }
    return cdc_ts_finish(p, k, n, with_zone, cp, y, m, d, h, mi, s, f, us);
#else
    (void)p; (void)n; (void)with_zone; (void)cp; (void)us;
    return -1;
#endif
}

static inline int cdc_timestamp_fast(const uint8_t* p, int64_t n, int with_zone, int64_t* us)
{
    return cdc_timestamp_cp(p, n, with_zone, &CDC_ASCII, us);
}

/* cdc_timestamp_cp with the bytes that may be read at p (the SIMD form below reads 32). */
typedef int (*cdc_timestamp_fn)(const uint8_t* p, int64_t n, int with_zone, const cdc_cp* cp,
                                int64_t* us, int64_t readable);

static inline int cdc_timestamp_scalar(const uint8_t* p, int64_t n, int with_zone, const cdc_cp* cp,
                                int64_t* us, int64_t readable)
{
    (void)readable;
    return cdc_timestamp_cp(p, n, with_zone, cp, us);
}

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>

/* The code page's characters as the SIMD form compares them: its zero in every byte, the
 * first 16 bytes' separators ('-' at 4, 7, 10; '.' at 13) and '.' in every byte. */
typedef struct {
    __m128i zone, ta, dot;
} cdc_ts_vecs;

__attribute__((target("ssse3"))) static inline cdc_ts_vecs cdc_ts_vecs_of(const cdc_cp* cp)
{
    const __m128i minus = _mm_set1_epi8((char)cp->minus), dot = _mm_set1_epi8((char)cp->dot);
    const __m128i ma = _mm_setr_epi8(0, 0, 0, 0, -1, 0, 0, -1, 0, 0, -1, 0, 0, 0, 0, 0);
    cdc_ts_vecs v = {_mm_set1_epi8((char)cp->zone),
                     _mm_or_si128(_mm_and_si128(minus, ma), _mm_andnot_si128(ma, dot)), dot};
    return v;
}

/* Db2's own form, YYYY-MM-DD-HH.MM.SS[.f] with 1-6 fraction digits (and with_zone, a zone
 * after it), in two 16-byte words (SSSE3): every byte's class (digit, separator) in two
 * compares, the twenty digits gathered by one shuffle each and paired by one multiply-add.
 * About a third of the scalar form's instructions. Anything else (other separators, 7 or more
 * fraction digits, fewer than 32 readable bytes) goes to cdc_timestamp_cp, so this accepts
 * only what that accepts, with the same value. The code page's vectors come made (cv). */
__attribute__((target("ssse3"), always_inline))
static inline int cdc_timestamp_ssse3v(const uint8_t* p, int64_t n, int with_zone,
                                       const cdc_cp* cp, int64_t* us, int64_t readable,
                                       const cdc_ts_vecs cv)
{
    if (n < 19 || readable < 32)
        return cdc_timestamp_cp(p, n, with_zone, cp, us);
    const __m128i a = _mm_loadu_si128((const __m128i*)p);
    const __m128i b = _mm_loadu_si128((const __m128i*)(p + 16));
    const __m128i zone = cv.zone, nine = _mm_set1_epi8(9), ta = cv.ta, dot = cv.dot;
    const __m128i da = _mm_sub_epi8(a, zone), db = _mm_sub_epi8(b, zone);
    uint32_t dig = (uint32_t)_mm_movemask_epi8(_mm_cmpeq_epi8(_mm_min_epu8(da, nine), da))
        | (uint32_t)_mm_movemask_epi8(_mm_cmpeq_epi8(_mm_min_epu8(db, nine), db)) << 16;
    uint32_t sep = (uint32_t)_mm_movemask_epi8(_mm_cmpeq_epi8(a, ta))
        | (uint32_t)_mm_movemask_epi8(_mm_cmpeq_epi8(b, dot)) << 16;
    if (n < 32) {                               /* nothing of the value's past n */
        dig &= (1u << n) - 1;
        sep &= (1u << n) - 1;
    }
    const uint32_t DIG = 0xF | 3u << 5 | 3u << 8 | 3u << 11 | 3u << 14 | 3u << 17;
    const uint32_t SEP = 1u << 4 | 1u << 7 | 1u << 10 | 1u << 13 | 1u << 16;
    if ((dig & DIG) != DIG || (sep & SEP) != SEP)
        return cdc_timestamp_cp(p, n, with_zone, cp, us);
    int64_t k = 19, nf = 0;
    if (n > 20 && (sep >> 19 & 1)) {
        nf = __builtin_ctz(~(dig >> 20));       /* the fraction's digits (12 at most) */
        if (nf == 0 || nf > 6)
            return cdc_timestamp_cp(p, n, with_zone, cp, us);
        k = 20 + nf;
    }
    /* the digits' values, gathered: YYYYMMDDHHMM from a; SS and the fraction from b, its
       places past nf zeroed (".12" is 120000 µs) */
    const __m128i va = _mm_shuffle_epi8(da, _mm_setr_epi8(0, 1, 2, 3, 5, 6, 8, 9, 11, 12, 14, 15,
                                                          -1, -1, -1, -1));
    const __m128i keep = _mm_cmpgt_epi8(_mm_set1_epi8((char)(nf + 2)),
                                        _mm_setr_epi8(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12,
                                                      13, 14, 15));
    const __m128i vb = _mm_and_si128(keep, _mm_shuffle_epi8(db, _mm_setr_epi8(
        1, 2, 4, 5, 6, 7, 8, 9, -1, -1, -1, -1, -1, -1, -1, -1)));
    const __m128i tens = _mm_set1_epi16(0x010A);  /* pairs: 10 * first + second */
    const __m128i pa = _mm_maddubs_epi16(va, tens), pb = _mm_maddubs_epi16(vb, tens);
    /* the fields' ranges at once: YY YY MM DD hh mm in pa, ss and the fraction's pairs in pb
       (hour 24 is left to the careful parser; a month or day of 0 fails in cdc_civil_days) */
    if (_mm_movemask_epi8(_mm_or_si128(
            _mm_cmpgt_epi16(pa, _mm_setr_epi16(99, 99, 12, 31, 23, 59, 0, 0)),
            _mm_cmpgt_epi16(pb, _mm_setr_epi16(59, 99, 99, 99, 0, 0, 0, 0)))))
        return -1;
    /* hh * 3600 + mm * 60 in pa's third 32-bit lane; the µs as f01 * 10000 and
       f23 * 100 + f45 in pb's first two */
    const __m128i hm = _mm_madd_epi16(pa, _mm_setr_epi16(0, 0, 0, 0, 3600, 60, 0, 0));
    const __m128i fu = _mm_madd_epi16(pb, _mm_setr_epi16(0, 10000, 100, 1, 0, 0, 0, 0));
    uint64_t lo = (uint64_t)_mm_cvtsi128_si64(pa), fq = (uint64_t)_mm_cvtsi128_si64(fu);
    int64_t y = (int64_t)(lo & 0xFFFF) * 100 + (int64_t)(lo >> 16 & 0xFFFF);
    int64_t m = (int64_t)(lo >> 32 & 0xFFFF), d = (int64_t)(lo >> 48), days;
    int64_t sod = _mm_cvtsi128_si32(_mm_unpackhi_epi64(hm, hm))
        + (_mm_cvtsi128_si32(pb) & 0xFFFF);
    if (!cdc_civil_days(y, m, d, &days))
        return -1;
    int64_t r = (days * 86400 + sod) * 1000000LL + (int64_t)(uint32_t)fq + (int64_t)(fq >> 32);
    if (k < n && (!with_zone || cdc_zone_cp(p, k, n, cp, &r) != 1))
        return -1;
    *us = r;
    return 1;
}

__attribute__((target("ssse3")))
static inline int cdc_timestamp_ssse3(const uint8_t* p, int64_t n, int with_zone, const cdc_cp* cp,
                               int64_t* us, int64_t readable)
{
    return cdc_timestamp_ssse3v(p, n, with_zone, cp, us, readable, cdc_ts_vecs_of(cp));
}
#endif

/* One column's timestamps over a block of rows: row todo[w] (w < nval) has its text at
 * vp[todo[w]] + voff, width bytes long, readable up to iend[todo[w]]; its µs go to
 * out[todo[w]]. The rows the fast parsers leave to the careful one are listed in hard;
 * returns how many. A loop of its own so that the parser is inlined into it, with the code
 * page's characters made into vectors once. */
typedef int64_t (*cdc_ts_column_fn)(const uint8_t* const* vp, int64_t voff, int64_t width,
                                    const uint8_t* const* iend, const int64_t* todo,
                                    int64_t nval, int with_zone, const cdc_cp* cp,
                                    int64_t* out, int64_t* hard);

static inline int64_t cdc_ts_column_scalar(const uint8_t* const* vp, int64_t voff,
                                           int64_t width, const uint8_t* const* iend,
                                           const int64_t* todo, int64_t nval, int with_zone,
                                           const cdc_cp* cp, int64_t* out, int64_t* hard)
{
    int64_t nh = 0;
    (void)iend;
    for (int64_t w = 0; w < nval; w++) {
        int64_t i = todo[w];
        if (cdc_timestamp_cp(vp[i] + voff, width, with_zone, cp, out + i) != 1)
            hard[nh++] = i;
    }
    return nh;
}

#if defined(__x86_64__) && defined(__GNUC__)
__attribute__((target("ssse3")))
static inline int64_t cdc_ts_column_ssse3(const uint8_t* const* vp, int64_t voff,
                                          int64_t width, const uint8_t* const* iend,
                                          const int64_t* todo, int64_t nval, int with_zone,
                                          const cdc_cp* cp, int64_t* out, int64_t* hard)
{
    const cdc_ts_vecs cv = cdc_ts_vecs_of(cp);
    int64_t nh = 0;
    for (int64_t w = 0; w < nval; w++) {
        int64_t i = todo[w];
        const uint8_t* v = vp[i] + voff;
        if (cdc_timestamp_ssse3v(v, width, with_zone, cp, out + i, iend[i] - v, cv) != 1)
            hard[nh++] = i;
    }
    return nh;
}
#endif

#if defined(__x86_64__) && defined(__GNUC__)
#define CDC_TS_SSSE3(allow) ((allow) && __builtin_cpu_supports("ssse3"))
#else
#define CDC_TS_SSSE3(allow) 0
#define cdc_ts_column_ssse3 cdc_ts_column_scalar
#define cdc_timestamp_ssse3 cdc_timestamp_scalar
#endif

/* The timestamp column loop and parser for this CPU (allow_simd 0: the scalar ones). */
static inline cdc_ts_column_fn cdc_ts_column_choose(int allow_simd)
{
    return CDC_TS_SSSE3(allow_simd) ? cdc_ts_column_ssse3 : cdc_ts_column_scalar;
}

static inline cdc_timestamp_fn cdc_timestamp_choose(int allow_simd)
{
    return CDC_TS_SSSE3(allow_simd) ? cdc_timestamp_ssse3 : cdc_timestamp_scalar;
}

/* man * 10**exp10 (man != 0, exact: at most 19 digits) as the nearest double, by the
 * Eisel-Lemire algorithm (D. Lemire, "Number Parsing at a Gigabyte per Second", 2021): one
 * or two 64x64-bit products with a 128-bit approximation of the power of ten. Returns 0 in
 * the rare cases it cannot decide (a product too close to a halfway point, subnormals,
 * overflow): strtod then decides. */
static inline int cdc_eisel_lemire(uint64_t man, int64_t exp10, int neg, double* out)
{
    if (exp10 < CDC_POW10_MIN || exp10 > CDC_POW10_MAX || man == 0)
        return 0;
    const uint64_t* pw = cdc_pow10_128[exp10 - CDC_POW10_MIN];
    int clz = __builtin_clzll(man);
    man <<= clz;
    uint64_t exp2 = (uint64_t)(((217706 * exp10) >> 16) + 64 + 1023) - (uint64_t)clz;
    unsigned __int128 x = (unsigned __int128)man * pw[1];
    uint64_t hi = (uint64_t)(x >> 64), lo = (uint64_t)x;
    if ((hi & 0x1FF) == 0x1FF && lo + man < man) {
        /* the truncated low half of the power may matter: take it into account */
        unsigned __int128 y = (unsigned __int128)man * pw[0];
        uint64_t yhi = (uint64_t)(y >> 64), ylo = (uint64_t)y;
        uint64_t mlo = lo + yhi, mhi = hi + (mlo < lo);
        if ((mhi & 0x1FF) == 0x1FF && mlo + 1 == 0 && ylo + man < man)
            return 0;
        hi = mhi;
        lo = mlo;
    }
    uint64_t msb = hi >> 63;
    uint64_t mant = hi >> (msb + 9);
    exp2 -= 1 ^ msb;
    if (lo == 0 && (hi & 0x1FF) == 0 && (mant & 3) == 1)
        return 0;                               /* exactly halfway: let strtod round */
    mant += mant & 1;
    mant >>= 1;
    if (mant >> 53) {
        mant >>= 1;
        exp2 += 1;
    }
    if (exp2 - 1 >= 0x7FF - 1)
        return 0;                               /* subnormal, zero or infinite */
    uint64_t bits = exp2 << 52 | (mant & 0x000FFFFFFFFFFFFFULL) | ((uint64_t)(neg != 0) << 63);
    memcpy(out, &bits, 8);
    return 1;
}


/* Append the run of digits of a padded value from p[i] (before p[n]) to the significand *m,
 * counting them in *sig; it stops once more than 19 are in (the caller then declines).
 * Returns where it stopped. */
static inline int64_t cdc_gather_sig(const uint8_t* p, int64_t n, int64_t i, uint64_t* m,
                                     int64_t* sig)
{
    uint64_t v;
    int k;
    do {
        k = cdc_digits8(p + i, n - i, &v);
        *m = *m * cdc_pow10_u64[k] + v;
        *sig += k;
        i += k;
    } while (k == 8 && *sig <= 19);
    return i;
}

static inline int cdc_float_fast(const uint8_t* p, int64_t n, uint8_t dc, double* out)
{
#if CDC_SWAR
    if (n <= 0 || n > 64)
        return -1;
    int neg = p[0] == '-';
    int64_t i = neg || p[0] == '+', nd, frac = 0, sig = 0;
    uint64_t m = 0, v;
    int k;
    nd = i;
    while (i < n && p[i] == '0')                /* leading zeros are not significant */
        i++;
    i = cdc_gather_sig(p, n, i, &m, &sig);
    nd = i - nd;                                /* digits so far */
    if (dc != 0 && i < n && p[i] == dc) {
        int64_t f = ++i;
        if (m == 0)
            while (i < n && p[i] == '0')
                i++;
        i = cdc_gather_sig(p, n, i, &m, &sig);
        frac = i - f;
        nd += frac;
    }
    if (sig > 19 || nd == 0)
        return -1;
    int64_t e10 = -frac;
    if (i < n) {
        if (p[i] != 'E' && p[i] != 'e')
            return -1;
        i++;
        int eneg = i < n && p[i] == '-';
        i += i < n && (p[i] == '-' || p[i] == '+');
        k = cdc_digits8(p + i, n - i, &v);
        if (k == 0 || k == 8 || i + k != n)
            return -1;
        e10 += eneg ? -(int64_t)v : (int64_t)v;
    }
    if (m <= 9007199254740992ULL && e10 >= -22 && e10 <= 22) {
        double d = e10 >= 0 ? (double)m * cdc_pow10_f64[e10] : (double)m / cdc_pow10_f64[-e10];
        *out = neg ? -d : d;
        return 1;
    }
    return cdc_eisel_lemire(m, e10, neg, out) ? 1 : -1;
#else
    (void)p; (void)n; (void)dc; (void)out;
    return -1;
#endif
}

#endif
