/* Values of JSON change events, as the reference decoders read them (cdcfast/reference/
 * debezium.py: `integer`, `number_parts`/`rescale`, `unscaled_of`, `scaled_text`, `iso_us`,
 * `lsn_bytes`). Each takes the bytes of one token or string content, (p, n), reads nothing
 * outside them, and returns 1 (or a length) on success, 0 (or -1) when the text is not such a
 * value. */
#ifndef CDCFAST_JSONVAL_H
#define CDCFAST_JSONVAL_H

#include <stdint.h>
#include <string.h>

typedef __int128 cdc_jv_i128;

static const cdc_jv_i128 CDC_JV_P19 = (cdc_jv_i128)10000000000000000000ULL;

/* 10**k for k in 0..38 */
static inline cdc_jv_i128 cdc_jv_pow10(int k)
{
    cdc_jv_i128 r = 1;
    while (k >= 19) {
        r *= CDC_JV_P19;
        k -= 19;
    }
    static const uint64_t p[19] = {1ULL, 10ULL, 100ULL, 1000ULL, 10000ULL, 100000ULL,
        1000000ULL, 10000000ULL, 100000000ULL, 1000000000ULL, 10000000000ULL,
        100000000000ULL, 1000000000000ULL, 10000000000000ULL, 100000000000000ULL,
        1000000000000000ULL, 10000000000000000ULL, 100000000000000000ULL,
        1000000000000000000ULL};
    return r * (cdc_jv_i128)p[k];
}

/* a[0:n] == b[0:n], for short keys without a call to memcmp */
static inline int cdc_jv_same(const uint8_t* a, const uint8_t* b, int64_t n)
{
    uint64_t x, y;
    for (; n >= 8; a += 8, b += 8, n -= 8) {
        memcpy(&x, a, 8);
        memcpy(&y, b, 8);
        if (x != y)
            return 0;
    }
    for (; n > 0; n--)
        if (*a++ != *b++)
            return 0;
    return 1;
}

/* -?(0|[1-9][0-9]*) within [lo, hi] */
static inline int cdc_jv_int(const uint8_t* p, int64_t n, int64_t lo, int64_t hi, int64_t* out)
{
    int64_t i = 0;
    int neg = 0;
    uint64_t acc = 0;
    if (n > 0 && p[0] == '-') {
        neg = 1;
        i = 1;
    }
    if (i >= n || (p[i] == '0' && n - i > 1) || n - i > 19)
        return 0;
    for (; i < n; i++) {
        const unsigned d = (unsigned)(p[i] - '0');
        if (d > 9)
            return 0;
        acc = acc * 10 + d;         /* 19 digits fit in 64 unsigned bits */
    }
    if (neg) {
        if (acc > (uint64_t)0 - (uint64_t)lo)
            return 0;
        *out = (int64_t)((uint64_t)0 - acc);
    } else {
        if (acc > (uint64_t)hi)
            return 0;
        *out = (int64_t)acc;
    }
    return 1;
}

/* the whole of p[0:n] is a JSON number */
static inline int cdc_jv_is_number(const uint8_t* p, int64_t n)
{
    int64_t i = 0;
    if (i < n && p[i] == '-')
        i++;
    if (i >= n || (unsigned)(p[i] - '0') > 9)
        return 0;
    if (p[i++] != '0')
        while (i < n && (unsigned)(p[i] - '0') <= 9)
            i++;
    if (i < n && p[i] == '.') {
        if (++i >= n || (unsigned)(p[i] - '0') > 9)
            return 0;
        while (i < n && (unsigned)(p[i] - '0') <= 9)
            i++;
    }
    if (i < n && (p[i] | 0x20) == 'e') {
        i++;
        if (i < n && (p[i] == '+' || p[i] == '-'))
            i++;
        if (i >= n || (unsigned)(p[i] - '0') > 9)
            return 0;
        while (i < n && (unsigned)(p[i] - '0') <= 9)
            i++;
    }
    return i == n;
}

/* u × 10^-from as the unscaled integer at scale `to`, |result| < 10^prec; 0 when digits
 * would be lost or the precision exceeded. */
static inline int cdc_jv_rescale(cdc_jv_i128 u, int64_t from, int64_t to, int prec,
                                 cdc_jv_i128* out)
{
    static const uint64_t P10[20] = {1ULL, 10ULL, 100ULL, 1000ULL, 10000ULL, 100000ULL,
        1000000ULL, 10000000ULL, 100000000ULL, 1000000000ULL, 10000000000ULL,
        100000000000ULL, 1000000000000ULL, 10000000000000ULL, 100000000000000ULL,
        1000000000000000ULL, 10000000000000000ULL, 100000000000000000ULL,
        1000000000000000000ULL, 10000000000000000000ULL};
    const int64_t k = to - from;
    if (u == 0) {
        *out = 0;
        return 1;
    }
    /* the common case in 64 bits: a value of up to 19 digits scaled up by up to 19 */
    if (k >= 0 && k <= 19 && u > -(cdc_jv_i128)UINT64_MAX && u < (cdc_jv_i128)UINT64_MAX) {
        const uint64_t a = (uint64_t)(u < 0 ? -u : u);
        if (a <= UINT64_MAX / P10[k]) {
            const uint64_t r = a * P10[k];
            if (prec <= 19 && r >= P10[prec])
                return 0;
            *out = u < 0 ? -(cdc_jv_i128)r : (cdc_jv_i128)r;
            return 1;
        }
    }
    const cdc_jv_i128 lim = cdc_jv_pow10(prec);
    if (k > 0) {
        if (k > 38)
            return 0;
        const cdc_jv_i128 m = cdc_jv_pow10((int)k);
        const cdc_jv_i128 a = u < 0 ? -u : u;
        if (a >= lim / m + 1)       /* a * m >= lim, without overflow */
            return 0;
        u *= m;
    } else if (k < 0) {
        if (-k > 39)
            return 0;               /* |u| < 2^127 < 10^39: digits would be lost */
        if (-k == 39)
            return 0;
        const cdc_jv_i128 m = cdc_jv_pow10((int)-k);
        if (u % m)
            return 0;
        u /= m;
    }
    if ((u < 0 ? -u : u) >= lim)
        return 0;
    *out = u;
    return 1;
}

/* A JSON number's text (grammar already checked) as the unscaled integer of
 * DECIMAL(prec, scale): exact or 0. */
static inline int cdc_jv_decimal(const uint8_t* p, int64_t n, int prec, int scale,
                                 cdc_jv_i128* out)
{
    int64_t i = 0, e10 = 0;
    int neg = 0, nd = 0, zeros = 0;
    cdc_jv_i128 d = 0;
    uint64_t d64 = 0;               /* the digits while they fit 19 (64-bit steps are cheap) */
    if (p[0] == '-') {
        neg = 1;
        i = 1;
    }
    /* digits, skipping leading zeros, holding back trailing zeros */
    int frac = 0, seen_dot = 0;
    for (; i < n; i++) {
        const uint8_t c = p[i];
        if (c == '.') {
            seen_dot = 1;
            continue;
        }
        if ((c | 0x20) == 'e')
            break;
        if (seen_dot)
            frac++;
        if (c == '0') {
            if (nd)
                zeros++;
            continue;
        }
        while (zeros) {             /* zeros between significant digits are digits */
            if (nd >= 38)
                return 0;
            if (nd < 19)
                d64 *= 10;
            else {
                if (nd == 19)
                    d = (cdc_jv_i128)d64;
                d *= 10;
            }
            nd++;
            zeros--;
        }
        if (nd >= 38)
            return 0;
        if (nd < 19)
            d64 = d64 * 10 + (uint64_t)(c - '0');
        else {
            if (nd == 19)
                d = (cdc_jv_i128)d64;
            d = d * 10 + (c - '0');
        }
        nd++;
    }
    if (nd <= 19)
        d = (cdc_jv_i128)d64;
    if (i < n) {                    /* the exponent */
        i++;
        int eneg = 0;
        if (p[i] == '+' || p[i] == '-')
            eneg = p[i++] == '-';
        for (; i < n; i++)
            if (e10 < 100000)
                e10 = e10 * 10 + (p[i] - '0');
        if (eneg)
            e10 = -e10;
    }
    /* value = d × 10^(zeros + e10 - frac) */
    const int64_t e = zeros + e10 - frac;
    if (neg)
        d = -d;
    if (d == 0) {
        *out = 0;
        return 1;
    }
    return cdc_jv_rescale(d, -e, scale, prec, out);
}

/* Big-endian two's complement bytes (at least one) as a 128-bit integer; 0 when they hold
 * more than 128 significant bits. */
static inline int cdc_jv_twos(const uint8_t* raw, int64_t n, cdc_jv_i128* out)
{
    if (n <= 0)
        return 0;
    const int neg = raw[0] >= 0x80;
    const uint8_t fill = neg ? 0xFF : 0x00;
    int64_t i = 0;
    while (n - i > 16 && raw[i] == fill)
        i++;
    if (n - i > 16 || (n - i == 16 && (raw[i] >= 0x80) != neg))
        return 0;
    unsigned __int128 v = neg ? ~(unsigned __int128)0 : 0;
    for (; i < n; i++)
        v = v << 8 | raw[i];
    *out = (cdc_jv_i128)v;
    return 1;
}

/* Plain decimal text of u × 10^-scale, exactly `scale` fraction digits (scale ≤ 0: an
 * integer with -scale zeros); dst has room for 44 + |scale| bytes. -1 when |scale| > 1000. */
static inline int64_t cdc_jv_scaled_text(cdc_jv_i128 u, int64_t scale, uint8_t* dst)
{
    uint8_t dig[48];
    int nd = 0;
    int64_t o = 0;
    if (scale < -1000 || scale > 1000)
        return -1;
    unsigned __int128 a = u < 0 ? -(unsigned __int128)u : (unsigned __int128)u;
    do {
        dig[nd++] = (uint8_t)('0' + (int)(a % 10));
        a /= 10;
    } while (a);
    if (u < 0)
        dst[o++] = '-';
    if (scale <= 0) {
        while (nd)
            dst[o++] = dig[--nd];
        if (u != 0)
            for (int64_t k = 0; k < -scale; k++)
                dst[o++] = '0';
        return o;
    }
    /* at least scale + 1 digits: zeros in front */
    int64_t total = nd > scale ? nd : scale + 1;
    for (int64_t k = total; k > 0; k--) {
        if (k == scale)
            dst[o++] = '.';
        dst[o++] = k - 1 < nd ? dig[k - 1] : '0';
    }
    return o;
}

static inline int cdc_jv_dim(int64_t y, int64_t m)
{
    if (m == 2)
        return (y % 4 == 0 && (y % 100 != 0 || y % 400 == 0)) ? 29 : 28;
    return (m == 4 || m == 6 || m == 9 || m == 11) ? 30 : 31;
}

static inline int64_t cdc_jv_days(int64_t y, int64_t m, int64_t d)
{
    y -= m <= 2;
    const int64_t era = (y >= 0 ? y : y - 399) / 400;
    const int64_t yoe = y - era * 400;
    const int64_t doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
    const int64_t doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    return era * 146097 + doe - 719468;
}

static inline int cdc_jv_dd(const uint8_t* p, int64_t* v)
{
    const unsigned a = (unsigned)(p[0] - '0'), b = (unsigned)(p[1] - '0');
    if (a > 9 || b > 9)
        return 0;
    *v = a * 10 + b;
    return 1;
}

/* YYYY-MM-DDTHH:MM:SS[.f…][Z|±HH:MM] as µs since the epoch (UTC without a zone); fraction
 * digits past µs are dropped (floor). */
static inline int cdc_jv_iso_us(const uint8_t* p, int64_t n, int64_t* us)
{
    int64_t y1, y2, mo, d, h, mi, s, i = 19, f = 0, fd = 0;
    if (n < 19 || p[4] != '-' || p[7] != '-' || p[10] != 'T' || p[13] != ':' || p[16] != ':')
        return 0;
    if (!cdc_jv_dd(p, &y1) || !cdc_jv_dd(p + 2, &y2) || !cdc_jv_dd(p + 5, &mo)
        || !cdc_jv_dd(p + 8, &d) || !cdc_jv_dd(p + 11, &h) || !cdc_jv_dd(p + 14, &mi)
        || !cdc_jv_dd(p + 17, &s))
        return 0;
    const int64_t y = y1 * 100 + y2;
    if (mo < 1 || mo > 12 || d < 1 || d > cdc_jv_dim(y, mo) || h > 23 || mi > 59 || s > 59)
        return 0;
    if (i < n && p[i] == '.') {
        i++;
        const int64_t f0 = i;
        while (i < n && (unsigned)(p[i] - '0') <= 9) {
            if (fd < 6) {
                f = f * 10 + (p[i] - '0');
                fd++;
            }
            i++;
        }
        if (i == f0)
            return 0;
        while (fd < 6) {
            f *= 10;
            fd++;
        }
    }
    int64_t r = ((cdc_jv_days(y, mo, d) * 24 + h) * 60 + mi) * 60000000LL + s * 1000000LL + f;
    if (i < n) {
        if (p[i] == 'Z' && i + 1 == n) {
            i++;
        } else if ((p[i] == '+' || p[i] == '-') && n - i == 6 && p[i + 3] == ':') {
            int64_t zh, zm;
            if (!cdc_jv_dd(p + i + 1, &zh) || !cdc_jv_dd(p + i + 4, &zm) || zh > 23 || zm > 59)
                return 0;
            const int64_t off = (zh * 60 + zm) * 60000000LL;
            r -= p[i] == '+' ? off : -off;
            i = n;
        } else {
            return 0;
        }
    }
    if (i != n)
        return 0;
    *us = r;
    return 1;
}

static inline int cdc_jv_hexv(uint8_t c)
{
    if ((unsigned)(c - '0') <= 9)
        return c - '0';
    c |= 0x20;
    return (unsigned)(c - 'a') < 6 ? c - 'a' + 10 : -1;
}

/* An LSN's text, ':'-separated groups of hex digits, as bytes (a group of an odd number of
 * digits gets a leading 0); dst has room for n bytes. -1 for an empty group or a non-hex
 * character. */
static inline int64_t cdc_jv_lsn(const uint8_t* p, int64_t n, uint8_t* dst)
{
    int64_t i = 0, o = 0;
    for (;;) {
        int64_t g = i;
        while (g < n && p[g] != ':')
            g++;
        if (g == i)
            return -1;
        int64_t k = i;
        if ((g - i) & 1) {
            const int v = cdc_jv_hexv(p[k++]);
            if (v < 0)
                return -1;
            dst[o++] = (uint8_t)v;
        }
        for (; k < g; k += 2) {
            const int a = cdc_jv_hexv(p[k]), b = cdc_jv_hexv(p[k + 1]);
            if (a < 0 || b < 0)
                return -1;
            dst[o++] = (uint8_t)(a << 4 | b);
        }
        if (g == n)
            return o;
        i = g + 1;
    }
}

#endif
