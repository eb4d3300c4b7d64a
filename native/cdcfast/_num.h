/* The numbers and the calendar every kernel shares — mainframe text (_text.h, _values.pxd),
 * mainframe binary (_binary.pxd) and JSON (_jsonval.h, _olrval.h) alike: 128-bit integers,
 * powers of ten, hex digits, the range check that ends every integer parser, and days since
 * 1970-01-01 of a proleptic Gregorian date. Each is written here once. */
#ifndef CDCFAST_NUM_H
#define CDCFAST_NUM_H

#include <stdint.h>
#include <string.h>

/* For the small helpers the hot loops call: GCC stops inlining into a function as large as a
 * kernel's column loop (its growth limits), and a call per value costs more than the helper. */
#if defined(__GNUC__)
#define CDC_INLINE static inline __attribute__((always_inline))
#else
#define CDC_INLINE static inline
#endif

typedef __int128 cdc_i128;
typedef unsigned __int128 cdc_u128;

#define CDC_US_PER_SEC 1000000LL
#define CDC_US_PER_DAY 86400000000LL

/* 10**k, k = 0..19 (10**19 is the largest that fits 64 unsigned bits) */
static const uint64_t cdc_pow10_u64[20] = {1ULL, 10ULL, 100ULL, 1000ULL, 10000ULL,
    100000ULL, 1000000ULL, 10000000ULL, 100000000ULL, 1000000000ULL, 10000000000ULL,
    100000000000ULL, 1000000000000ULL, 10000000000000ULL, 100000000000000ULL,
    1000000000000000ULL, 10000000000000000ULL, 100000000000000000ULL,
    1000000000000000000ULL, 10000000000000000000ULL};

/* 10**k, k = 0..22: the powers of ten a double holds exactly (Clinger's fast path) */
static const double cdc_pow10_f64[23] = {1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9,
    1e10, 1e11, 1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22};

/* 10**k, k = 0..38 (DECIMAL(38)'s bound) */
static inline cdc_i128 cdc_pow10_i128(int k)
{
    cdc_i128 r = 1;
    while (k >= 19) {
        r *= (cdc_i128)cdc_pow10_u64[19];
        k -= 19;
    }
    return r * (cdc_i128)cdc_pow10_u64[k];
}

/* the value of a hex digit (either case), -1 for any other byte */
static const signed char cdc_hexval[256] = {
    -1,-1,-1,-1,-1,-1,-1,-1,-1,-1,-1,-1,-1,-1,-1,-1,-1,-1,-1,-1,-1,-1,-1,-1,-1,-1,-1,-1,-1,-1,-1,-1,
    -1,-1,-1,-1,-1,-1,-1,-1,-1,-1,-1,-1,-1,-1,-1,-1, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9,-1,-1,-1,-1,-1,-1,
    -1,10,11,12,13,14,15,-1,-1,-1,-1,-1,-1,-1,-1,-1,-1,-1,-1,-1,-1,-1,-1,-1,-1,-1,-1,-1,-1,-1,-1,-1,
    -1,10,11,12,13,14,15,-1,-1,-1,-1,-1,-1,-1,-1,-1,-1,-1,-1,-1,-1,-1,-1,-1,-1,-1,-1,-1,-1,-1,-1,-1,
    -1,-1,-1,-1,-1,-1,-1,-1,-1,-1,-1,-1,-1,-1,-1,-1,-1,-1,-1,-1,-1,-1,-1,-1,-1,-1,-1,-1,-1,-1,-1,-1,
    -1,-1,-1,-1,-1,-1,-1,-1,-1,-1,-1,-1,-1,-1,-1,-1,-1,-1,-1,-1,-1,-1,-1,-1,-1,-1,-1,-1,-1,-1,-1,-1,
    -1,-1,-1,-1,-1,-1,-1,-1,-1,-1,-1,-1,-1,-1,-1,-1,-1,-1,-1,-1,-1,-1,-1,-1,-1,-1,-1,-1,-1,-1,-1,-1,
    -1,-1,-1,-1,-1,-1,-1,-1,-1,-1,-1,-1,-1,-1,-1,-1,-1,-1,-1,-1,-1,-1,-1,-1,-1,-1,-1,-1,-1,-1,-1,-1};

CDC_INLINE int cdc_hexv(uint8_t c)
{
    return cdc_hexval[c];
}

/* The 8 ASCII digits of x (p[0] the first, little-endian) as a number: pairs, then fours,
 * then the eight, in three multiplications (simdjson's parse_eight_digits_unrolled). */
CDC_INLINE uint32_t cdc_eight_digits(uint64_t x)
{
    x -= 0x3030303030303030ULL;
    x = x * 10 + (x >> 8);
    x = (((x & 0x000000FF000000FFULL) * (100 + (1000000ULL << 32)))
         + (((x >> 16) & 0x000000FF000000FFULL) * (1 + (10000ULL << 32)))) >> 32;
    return (uint32_t)x;
}

/* The top bit of each of x's 8 bytes that is not an ASCII digit: x ^ '0' is 0..9 in a digit's
 * byte, so ((t & 0x7F) + 0x76) | t has its top bit set exactly in the others (no carry
 * between bytes: 0x7F + 0x76 < 0x100). */
CDC_INLINE uint64_t cdc_non_digits8(uint64_t x)
{
    const uint64_t t = x ^ 0x3030303030303030ULL;
    return (((t & 0x7F7F7F7F7F7F7F7FULL) + 0x7676767676767676ULL) | t) & 0x8080808080808080ULL;
}

/* The end of the run of ASCII digits from p[i] (at most to end): eight bytes a test while
 * eight are there, the first that is not a digit (little-endian: the lowest top bit) ending
 * it. */
CDC_INLINE int64_t cdc_digit_run(const uint8_t* p, int64_t i, int64_t end)
{
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    while (end - i >= 8) {
        uint64_t x;
        memcpy(&x, p + i, 8);
        const uint64_t other = cdc_non_digits8(x);
        if (other)
            return i + (__builtin_ctzll(other) >> 3);
        i += 8;
    }
#endif
    while (i < end && (unsigned)(p[i] - '0') <= 9)
        i++;
    return i;
}

/* The digits p[0:n] (1 to 19 of them: no overflow is possible) as a number: 1, or 0 when a
 * byte is not an ASCII digit. Eight digits a step while eight are there, then no branch per
 * digit. */
CDC_INLINE int cdc_digits_u64(const uint8_t* p, int64_t n, uint64_t* out)
{
    uint64_t acc = 0;
    unsigned bad = n <= 0 || n > 19;
    int64_t i = 0;
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    if (!bad) {
        for (; n - i >= 8; i += 8) {
            uint64_t x;
            memcpy(&x, p + i, 8);
            if (cdc_non_digits8(x)) {
                *out = 0;
                return 0;
            }
            acc = acc * 100000000u + cdc_eight_digits(x);
        }
    }
#endif
    for (; i < n && i < 19; i++) {
        const unsigned d = (unsigned)(p[i] - '0');
        bad |= d > 9;
        acc = acc * 10 + d;
    }
    *out = acc;
    return !bad;
}

/* The integer of sign `neg` and magnitude `mag` when it lies in [lo, hi]: 1, else 0. The end
 * of every integer parser, whatever its grammar. */
CDC_INLINE int cdc_int_range(uint64_t mag, int neg, int64_t lo, int64_t hi, int64_t* out)
{
    int64_t v;
    if (neg) {
        if (mag > (uint64_t)1 << 63)
            return 0;
        v = (int64_t)((uint64_t)0 - mag);       /* 2**63 -> INT64_MIN */
    } else {
        if (mag > (uint64_t)INT64_MAX)
            return 0;
        v = (int64_t)mag;
    }
    if (v < lo || v > hi)
        return 0;
    *out = v;
    return 1;
}

CDC_INLINE int cdc_is_leap(int64_t y)
{
    return (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
}

/* days in month m (1-12) of year y */
CDC_INLINE int cdc_dim(int64_t y, int64_t m)
{
    static const unsigned char dim[13] = {0, 31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
    return m == 2 ? 28 + cdc_is_leap(y) : dim[m];
}

/* Days since 1970-01-01 of a proleptic Gregorian date, any year (0 is 1 BC): H. Hinnant's
 * algorithm. */
static inline int64_t cdc_days_from_civil(int64_t y, int64_t m, int64_t d)
{
    y -= m <= 2;                                /* years start in March: leap day last */
    const int64_t era = (y >= 0 ? y : y - 399) / 400;
    const int64_t yoe = y - era * 400;
    const int64_t doy = (153 * (m > 2 ? m - 3 : m + 9) + 2) / 5 + d - 1;
    const int64_t doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    return era * 146097 + doe - 719468;
}

/* The first day of each month of the years CDC_YM_Y0 ... CDC_YM_Y0 + 255 (where change
 * data's dates lie) as days since 1970-01-01, 16 entries a year: entry 0 is January's (and
 * 13-15 the next January's), so that a month's length is the difference of its entry and the
 * next, and months 0 and 13-15 have none. A date's check and conversion in two loads.
 * Filled when the module loads (a GCC constructor); elsewhere every date takes the formula. */
#define CDC_YM_Y0 1900
#if defined(__GNUC__)
static int32_t cdc_ym_days[256 * 16 + 1];

__attribute__((constructor)) static void cdc_ym_init(void)
{
    for (int64_t y = 0; y < 256; y++)
        for (int64_t m = 0; m < 16; m++)
            cdc_ym_days[16 * y + m] = (int32_t)(
                m == 0 ? cdc_days_from_civil(CDC_YM_Y0 + y, 1, 1)
                : m <= 12 ? cdc_days_from_civil(CDC_YM_Y0 + y, m, 1)
                : cdc_days_from_civil(CDC_YM_Y0 + y + 1, 1, 1));
    cdc_ym_days[256 * 16] = (int32_t)cdc_days_from_civil(CDC_YM_Y0 + 256, 1, 1);
}
#endif

/* y-m-d (as read from digits: y, m, d >= 0) -> days since 1970-01-01 when the date exists in
 * the proleptic Gregorian calendar and y >= ymin: 1, else 0. SQL dates start at year 1
 * (cdc_civil_days); ISO-8601 texts in JSON at year 0. */
CDC_INLINE int cdc_civil_days_from(int64_t y, int64_t m, int64_t d, int64_t ymin,
                                      int64_t* days)
{
#if defined(__GNUC__)
    uint64_t yy = (uint64_t)(y - CDC_YM_Y0);
    if (((yy | (uint64_t)m << 4) >> 8) == 0) {  /* a year of the table, a month below 16 */
        const int32_t* e = cdc_ym_days + 16 * yy + m;
        if ((uint64_t)(d - 1) >= (uint64_t)(int64_t)(e[1] - e[0]))
            return 0;
        *days = e[0] + d - 1;
        return 1;
    }
#endif
    if (y < ymin || m < 1 || m > 12 || d < 1 || d > cdc_dim(y, m))
        return 0;
    *days = cdc_days_from_civil(y, m, d);
    return 1;
}

CDC_INLINE int cdc_civil_days(int64_t y, int64_t m, int64_t d, int64_t* days)
{
    return cdc_civil_days_from(y, m, d, 1, days);
}

#endif
