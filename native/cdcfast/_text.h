/* Fast paths for the text value parsers of _values.pxd, for ASCII-compatible input on a
 * little-endian machine: eight bytes are checked and converted at once (SWAR). Each returns
 * 1 with the value, or -1 to say "not handled here": the byte-by-byte parser then decides,
 * so these only ever accept what it accepts, with the same value. */
#ifndef CDCFAST_TEXT_H
#define CDCFAST_TEXT_H

#include <stdint.h>
#include <string.h>
#include "cdcfast/_pow10.h"

#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
#define CDC_SWAR 1
#else
#define CDC_SWAR 0
#endif

/* The bytes of w that m selects (0xFF each) are all ASCII digits. A byte outside m may only
 * be below 0xFA (else its +6 carries into the next byte): the callers check those first. */
static inline int cdc_swar_digits(uint64_t w, uint64_t m)
{
    const uint64_t hi = 0xF0F0F0F0F0F0F0F0ULL, zero = 0x3030303030303030ULL;
    return (((w & hi) ^ zero) & m) == 0
        && ((((w + 0x0606060606060606ULL) & hi) ^ zero) & m) == 0;
}

/* The byte at index i of w (i = 0 is the first in memory). */
#define CDC_B(w, i) ((int64_t)(((w) >> (8 * (i))) & 0xFF))

/* Days since 1970-01-01 of a proleptic Gregorian date with 1 <= y <= 9999 (what a YYYY
 * field holds): H. Hinnant's algorithm (as days_from_civil in _values.pxd) in unsigned 32-bit
 * arithmetic, where divisions by constants need no sign fix-ups. */
static inline int64_t cdc_days_from_civil_u(uint32_t y, uint32_t m, uint32_t d)
{
    static const uint16_t before[12] = {0, 31, 61, 92, 122, 153, 184, 214, 245, 275, 306, 337};
    y -= m <= 2;                                /* years start in March: leap day last */
    uint32_t era = y / 400, yoe = y - era * 400;
    uint32_t doy = before[m > 2 ? m - 3 : m + 9] + d - 1;
    uint32_t doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    return (int64_t)era * 146097 + (int64_t)doe - 719468;
}

static inline int cdc_dim(int64_t y, int64_t m)
{
    static const unsigned char dim[13] = {0, 31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
    if (m == 2)
        return ((y % 4 == 0 && y % 100 != 0) || y % 400 == 0) ? 29 : 28;
    return dim[m];
}

/* YYYY-MM-DD (n >= 10) -> days since 1970-01-01. */
static inline int cdc_date10_fast(const uint8_t* p, int64_t n, int64_t* days)
{
#if CDC_SWAR
    uint64_t w;
    if (n < 10)
        return -1;
    memcpy(&w, p, 8);
    if (CDC_B(w, 4) != '-' || CDC_B(w, 7) != '-'
            || !cdc_swar_digits(w, 0x00FFFF00FFFFFFFFULL)
            || (uint8_t)(p[8] - '0') > 9 || (uint8_t)(p[9] - '0') > 9)
        return -1;
    w -= 0x3030303030303030ULL & 0x00FFFF00FFFFFFFFULL;   /* digits only: no borrow */
    int64_t y = CDC_B(w, 0) * 1000 + CDC_B(w, 1) * 100 + CDC_B(w, 2) * 10 + CDC_B(w, 3);
    int64_t m = CDC_B(w, 5) * 10 + CDC_B(w, 6);
    int64_t d = (p[8] - '0') * 10 + (p[9] - '0');
    if (y < 1 || m < 1 || m > 12 || d < 1 || d > cdc_dim(y, m))
        return -1;
    *days = cdc_days_from_civil_u((uint32_t)y, (uint32_t)m, (uint32_t)d);
    return 1;
#else
    (void)p; (void)n; (void)days;
    return -1;
#endif
}

/* HH.MM.SS[.f...] (either separator, '.' or ':', at each place; 1-12 fraction digits,
 * truncated to µs; hours 0-23 here: 24.00.00 is left to the careful parser) -> µs since
 * midnight; *used gets the bytes read (the parser stops before what is not a digit). */
static inline int cdc_clock_fast(const uint8_t* p, int64_t n, int64_t* us, int64_t* used)
{
#if CDC_SWAR
    uint64_t w;
    int64_t i = 8, nf = 0, f = 0;
    if (n < 8)
        return -1;
    memcpy(&w, p, 8);
    int64_t s2 = CDC_B(w, 2), s5 = CDC_B(w, 5);
    if ((s2 != '.' && s2 != ':') || (s5 != '.' && s5 != ':')
            || !cdc_swar_digits(w, 0xFFFF00FFFF00FFFFULL))
        return -1;
    w -= 0x3030303030303030ULL & 0xFFFF00FFFF00FFFFULL;   /* digits only: no borrow */
    int64_t h = CDC_B(w, 0) * 10 + CDC_B(w, 1);
    int64_t mi = CDC_B(w, 3) * 10 + CDC_B(w, 4);
    int64_t s = CDC_B(w, 6) * 10 + CDC_B(w, 7);
    if (h > 23 || mi > 59 || s > 59)
        return -1;
    if (n > 8 && p[8] == '.') {
        i = 9;
        while (i < n && nf < 12 && (uint8_t)(p[i] - '0') <= 9) {
            if (nf < 6)
                f = f * 10 + (p[i] - '0');
            nf++;
            i++;
        }
        if (nf == 0 || (i < n && (uint8_t)(p[i] - '0') <= 9))
            return -1;                  /* no digit, or more than 12 */
        static const int64_t scale[7] = {1000000, 100000, 10000, 1000, 100, 10, 1};
        f *= scale[nf < 6 ? nf : 6];
    }
    *us = ((h * 60 + mi) * 60 + s) * 1000000LL + f;
    *used = i;
    return 1;
#else
    (void)p; (void)n; (void)us; (void)used;
    return -1;
#endif
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

/* The value of 8 ASCII digits (checked by the caller), first digit in the first byte. */
static inline uint64_t cdc_parse8(const uint8_t* p)
{
    uint64_t v;
    memcpy(&v, p, 8);
    v -= 0x3030303030303030ULL;
    v = (v * 10) + (v >> 8);                    /* pairs */
    v = (((v & 0x000000FF000000FFULL) * (100 + (1000000ULL << 32)))
         + (((v >> 16) & 0x000000FF000000FFULL) * (1 + (10000ULL << 32)))) >> 32;
    return v;
}

/* acc * 10**len + the value of len ASCII digits at p (8 at a time where it can). */
static inline unsigned __int128 cdc_digits128(const uint8_t* p, int64_t len,
                                              unsigned __int128 acc)
{
    uint64_t lo = 0;
    int64_t k = 0;
    while (len - k >= 8) {
        acc = acc * 100000000ULL + cdc_parse8(p + k);
        k += 8;
    }
    for (; k < len; k++)
        lo = lo * 10 + (uint64_t)(p[k] - '0');
    static const uint64_t pw[8] = {1, 10, 100, 1000, 10000, 100000, 1000000, 10000000};
    return acc * pw[len & 7] + lo;
}

/* [+-]digits[<dc>digits] as the unscaled integer of DECIMAL(prec, scale): the common,
 * well-formed case only — at most `scale` fraction digits, at most prec - scale integer
 * digits after leading zeros. Anything else (trailing fraction zeros past the scale, errors)
 * goes to the careful parser. */
static inline int cdc_decimal_fast(const uint8_t* p, int64_t n, uint8_t dc, int prec,
                                   int scale, unsigned __int128* out, int* neg)
{
#if CDC_SWAR
    int64_t i = 0, s, e, f = 0, nf = 0;
    if (n <= 0 || n > 80)
        return -1;
    *neg = p[0] == '-';
    i = (p[0] == '-' || p[0] == '+');
    s = i;
    while (i < n && (uint8_t)(p[i] - '0') <= 9)
        i++;
    e = i;
    if (i < n) {
        if (p[i] != dc)
            return -1;
        f = ++i;
        while (i < n && (uint8_t)(p[i] - '0') <= 9)
            i++;
        if (i != n)
            return -1;
        nf = n - f;
    }
    if (e == s && nf == 0)
        return -1;
    while (s < e && p[s] == '0')
        s++;
    if (e - s > prec - scale || nf > scale)
        return -1;
    unsigned __int128 v = cdc_digits128(p + s, e - s, 0);
    v = cdc_digits128(p + f, nf, v);
    for (int64_t k = nf; k < scale; k++)
        v *= 10;
    *out = v;
    return 1;
#else
    (void)p; (void)n; (void)dc; (void)prec; (void)scale; (void)out; (void)neg;
    return -1;
#endif
}

#endif
