/* Values of JSON change events, as the reference decoders read them (cdcfast/reference/
 * debezium.py: `integer`, `number_parts`/`rescale`, `unscaled_of`, `scaled_text`, `iso_us`,
 * `lsn_bytes`). Each takes the bytes of one token or string content, (p, n), reads nothing
 * outside them, and returns 1 (or a length) on success, 0 (or -1) when the text is not such a
 * value. */
#ifndef CDCFAST_JSONVAL_H
#define CDCFAST_JSONVAL_H

#include <stdint.h>
#include <string.h>

#include "cdcfast/_num.h"
#include "cdcfast/_bytes.h"

/* a[0:n] == b[0:n]: _bytes.h's overlapping word loads, so a key of any length up to 32
 * bytes ends without a loop of bytes or a call to memcmp (longer ones call it) */
static inline int cdc_jv_same(const uint8_t* a, const uint8_t* b, int64_t n)
{
    return cdc_eq_exact(a, b, n);
}

/* -?(0|[1-9][0-9]*) within [lo, hi] */
static inline int cdc_jv_int(const uint8_t* p, int64_t n, int64_t lo, int64_t hi, int64_t* out)
{
    const int neg = n > 0 && p[0] == '-';
    uint64_t acc;
    if (neg >= n || (p[neg] == '0' && n - neg > 1) || !cdc_digits_u64(p + neg, n - neg, &acc))
        return 0;
    return cdc_int_range(acc, neg, lo, hi, out);
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

/* The exponent of a JSON number's text (grammar already checked) whose 'e' or 'E' is at
 * p[i]; magnitudes past 100000 stop growing (beyond any decimal's reach either way). */
static inline int64_t cdc_jv_exponent(const uint8_t* p, int64_t n, int64_t i)
{
    int64_t e = 0;
    int neg = 0;
    i++;
    if (p[i] == '+' || p[i] == '-')
        neg = p[i++] == '-';
    for (; i < n; i++)
        if (e < 100000)
            e = e * 10 + (p[i] - '0');
    return neg ? -e : e;
}

/* u × 10^-from as the unscaled integer at scale `to`, |result| < 10^prec; 0 when digits
 * would be lost or the precision exceeded. */
static inline int cdc_jv_rescale(cdc_i128 u, int64_t from, int64_t to, int prec,
                                 cdc_i128* out)
{
    const int64_t k = to - from;
    if (u == 0) {
        *out = 0;
        return 1;
    }
    /* the common case in 64 bits: a value of up to 19 digits scaled up by up to 19 */
    if (k >= 0 && k <= 19 && u > -(cdc_i128)UINT64_MAX && u < (cdc_i128)UINT64_MAX) {
        const uint64_t a = (uint64_t)(u < 0 ? -u : u);
        if (a <= UINT64_MAX / cdc_pow10_u64[k]) {
            const uint64_t r = a * cdc_pow10_u64[k];
            if (prec <= 19 && r >= cdc_pow10_u64[prec])
                return 0;
            *out = u < 0 ? -(cdc_i128)r : (cdc_i128)r;
            return 1;
        }
    }
    const cdc_i128 lim = cdc_pow10_i128(prec);
    if (k > 0) {
        if (k > 38)
            return 0;
        const cdc_i128 m = cdc_pow10_i128((int)k);
        const cdc_i128 a = u < 0 ? -u : u;
        if (a >= lim / m + 1)       /* a * m >= lim, without overflow */
            return 0;
        u *= m;
    } else if (k < 0) {
        if (-k > 39)
            return 0;               /* |u| < 2^127 < 10^39: digits would be lost */
        if (-k == 39)
            return 0;
        const cdc_i128 m = cdc_pow10_i128((int)-k);
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
                                 cdc_i128* out)
{
    int64_t i = 0, e10 = 0;
    int neg = 0, nd = 0, zeros = 0;
    cdc_i128 d = 0;
    uint64_t d64 = 0;               /* the digits while they fit 19 (64-bit steps are cheap) */
    {   /* the common case first: -?I(.F)? of 19 digits at most, read eight at a time; the
         * same value to rescale as below (zeros and all: rescaling is exact or fails) */
        const int64_t a = p[0] == '-', ie = cdc_digit_run(p, a, n);
        const int64_t fe = ie < n && p[ie] == '.' ? cdc_digit_run(p, ie + 1, n) : ie;
        const int64_t nf = fe > ie ? fe - ie - 1 : 0;
        uint64_t iv, fv = 0;
        if (fe == n && ie > a && (fe == ie || nf > 0) && (ie - a) + nf <= 19
                && cdc_digits_u64(p + a, ie - a, &iv)
                && (nf == 0 || cdc_digits_u64(p + ie + 1, nf, &fv))) {
            const uint64_t u = iv * cdc_pow10_u64[nf] + fv;
            return cdc_jv_rescale(a ? -(cdc_i128)u : (cdc_i128)u, nf, scale, prec, out);
        }
    }
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
                    d = (cdc_i128)d64;
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
                d = (cdc_i128)d64;
            d = d * 10 + (c - '0');
        }
        nd++;
    }
    if (nd <= 19)
        d = (cdc_i128)d64;
    if (i < n)
        e10 = cdc_jv_exponent(p, n, i);
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
static inline int cdc_jv_twos(const uint8_t* raw, int64_t n, cdc_i128* out)
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
    *out = (cdc_i128)v;
    return 1;
}

/* Plain decimal text of u × 10^-scale, exactly `scale` fraction digits (scale ≤ 0: an
 * integer with -scale zeros); dst has room for 44 + |scale| bytes. -1 when |scale| > 1000. */
static inline int64_t cdc_jv_scaled_text(cdc_i128 u, int64_t scale, uint8_t* dst)
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

static inline int cdc_jv_dd(const uint8_t* p, int64_t* v)
{
    const unsigned a = (unsigned)(p[0] - '0'), b = (unsigned)(p[1] - '0');
    if (a > 9 || b > 9)
        return 0;
    *v = a * 10 + b;
    return 1;
}

/* YYYY-MM-DD (the whole of p[0:n]) as days since the epoch (years from 0000) */
static inline int cdc_jv_date(const uint8_t* p, int64_t n, int64_t* days)
{
    int64_t y1, y2, mo, d;
    if (n != 10 || p[4] != '-' || p[7] != '-' || !cdc_jv_dd(p, &y1) || !cdc_jv_dd(p + 2, &y2)
        || !cdc_jv_dd(p + 5, &mo) || !cdc_jv_dd(p + 8, &d))
        return 0;
    return cdc_civil_days_from(y1 * 100 + y2, mo, d, 0, days);
}

/* HH:MM:SS[.f…] at the start of p[0:n] as µs since midnight (fraction digits past µs
 * floored): the bytes it takes, 0 when there is no such time */
static inline int64_t cdc_jv_clock(const uint8_t* p, int64_t n, int64_t* us)
{
    int64_t h, mi, s, f = 0, fd = 0, i = 8;
    if (n < 8 || p[2] != ':' || p[5] != ':' || !cdc_jv_dd(p, &h) || !cdc_jv_dd(p + 3, &mi)
        || !cdc_jv_dd(p + 6, &s) || h > 23 || mi > 59 || s > 59)
        return 0;
    if (i < n && p[i] == '.') {
        for (i++; i < n && (unsigned)(p[i] - '0') <= 9; i++)
            if (fd < 6) {
                f = f * 10 + (p[i] - '0');
                fd++;
            }
        if (fd == 0)
            return 0;
        for (; fd < 6; fd++)
            f *= 10;
    }
    *us = ((h * 60 + mi) * 60 + s) * CDC_US_PER_SEC + f;
    return i;
}

/* HH:MM:SS[.f…] (the whole of p[0:n]) as µs since midnight */
static inline int cdc_jv_time(const uint8_t* p, int64_t n, int64_t* us)
{
    return cdc_jv_clock(p, n, us) == n;
}

/* YYYY-MM-DDTHH:MM:SS[.f…][Z|±HH:MM] as µs since the epoch (UTC without a zone); fraction
 * digits past µs are dropped (floor). */
static inline int cdc_jv_iso_us(const uint8_t* p, int64_t n, int64_t* us)
{
    int64_t days, clock, i;
    if (n < 19 || p[10] != 'T' || !cdc_jv_date(p, 10, &days)
        || !(i = cdc_jv_clock(p + 11, n - 11, &clock)))
        return 0;
    i += 11;
    int64_t r = days * CDC_US_PER_DAY + clock;
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
            const int v = cdc_hexv(p[k++]);
            if (v < 0)
                return -1;
            dst[o++] = (uint8_t)v;
        }
        for (; k < g; k += 2) {
            const int a = cdc_hexv(p[k]), b = cdc_hexv(p[k + 1]);
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
