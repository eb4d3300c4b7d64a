/* Values of OpenLogReplicator messages, as the reference decoder reads them (cdcfast/reference/
 * olr.py; the rules: docs/olr.md). Each takes the bytes of one token or string content,
 * (p, n), reads nothing outside them, and returns 1 (or a length) on success, 0 (or -1) when
 * the text is not such a value. */
#ifndef CDCFAST_OLRVAL_H
#define CDCFAST_OLRVAL_H

#include <stdint.h>
#include <string.h>

#include "cdcfast/_jsonval.h"

enum { CDC_EPOCH_AUTO = 0, CDC_EPOCH_S = 1, CDC_EPOCH_MS = 2, CDC_EPOCH_US = 3,
       CDC_EPOCH_NS = 4 };

/* hex text (either case, even length) as bytes into dst (room for n / 2); -1 otherwise */
static inline int64_t cdc_olr_hex(const uint8_t* p, int64_t n, uint8_t* dst)
{
    if (n & 1)
        return -1;
    for (int64_t i = 0; i < n; i += 2) {
        const int hi = cdc_hexv(p[i]), lo = cdc_hexv(p[i + 1]);
        if ((hi | lo) < 0)
            return -1;
        dst[i >> 1] = (uint8_t)(hi << 4 | lo);
    }
    return n >> 1;
}

/* YYYY-MM-DD[T| ]HH:MM:SS[.f…][Z|±HH:MM] as µs since the epoch (UTC; a zone applied) */
static inline int cdc_olr_iso_us(const uint8_t* p, int64_t n, int64_t* us)
{
    uint8_t tmp[64];
    if (n < 19 || n > 64 || (p[10] != 'T' && p[10] != ' '))
        return 0;
    if (p[10] == 'T')
        return cdc_jv_iso_us(p, n, us);
    memcpy(tmp, p, (size_t)n);
    tmp[10] = 'T';
    return cdc_jv_iso_us(tmp, n, us);
}

/* -?[0-9]+ read as an epoch in `unit` (AUTO: by the digits of its absolute value) to us,
 * digits below a microsecond floored: 1, or 0 when p[0:n] is no such text, or -1 when its
 * microseconds pass int64 (nanoseconds beyond int64 can still be in range) */
static inline int cdc_olr_epoch(const uint8_t* p, int64_t n, int unit, int64_t* us)
{
    int64_t i = 0;
    int neg = 0;
    unsigned __int128 a = 0;
    if (n > 0 && p[0] == '-') {
        neg = 1;
        i = 1;
    }
    if (i >= n)
        return 0;
    for (int64_t j = i; j < n; j++)
        if ((unsigned)(p[j] - '0') > 9)
            return 0;
    if (n > 40)
        return -1;                  /* (the reference's limit on an epoch's text) */
    while (i < n - 1 && p[i] == '0')
        i++;
    if (n - i > 38)
        return -1;                  /* past any unit's range */
    for (; i < n; i++)
        a = a * 10 + (unsigned)(p[i] - '0');
    if (unit == CDC_EPOCH_AUTO) {
        unit = a < 100000000000ULL ? CDC_EPOCH_S : a < 100000000000000ULL ? CDC_EPOCH_MS
             : a < 100000000000000000ULL ? CDC_EPOCH_US : CDC_EPOCH_NS;
    }
    const __int128 x = neg ? -(__int128)a : (__int128)a;
    __int128 r;
    switch (unit) {
    case CDC_EPOCH_S:
        r = x * 1000000;
        break;
    case CDC_EPOCH_MS:
        r = x * 1000;
        break;
    case CDC_EPOCH_US:
        r = x;
        break;
    default:
        r = x / 1000;
        if (x % 1000 < 0)
            r -= 1;                 /* floor */
    }
    if (r > INT64_MAX || r < INT64_MIN)
        return -1;
    *us = (int64_t)r;
    return 1;
}

/* a timestamp value's text: epoch digits or ISO-8601, optionally followed by ",<zone>" (the
 * zone part ignored) */
static inline int cdc_olr_time_text(const uint8_t* p, int64_t n, int unit, int64_t* us)
{
    const uint8_t* comma = (const uint8_t*)memchr(p, ',', (size_t)n);
    if (comma)
        n = comma - p;
    const int r = cdc_olr_epoch(p, n, unit, us);
    if (r)
        return r > 0;
    return cdc_olr_iso_us(p, n, us);
}

/* unsigned digits of base 10 or 16 within max; 0 for none, an other byte, or too big */
static inline int cdc_olr_group(const uint8_t* p, int64_t n, int hex, uint64_t max, uint64_t* out)
{
    uint64_t acc = 0;
    if (n <= 0 || n > 20)
        return 0;
    for (int64_t i = 0; i < n; i++) {
        const int d = hex ? cdc_hexv(p[i]) : ((unsigned)(p[i] - '0') <= 9 ? p[i] - '0' : -1);
        if (d < 0)
            return 0;
        const uint64_t base = hex ? 16 : 10;
        if (acc > (max - (uint64_t)d) / base)
            return 0;
        acc = acc * base + (uint64_t)d;
    }
    *out = acc;
    return 1;
}

/* an xid text: "0x" + three '.'-separated hex groups, or three decimal groups (usn.slot.sqn:
 * 16, 16 and 32 bits) as usn << 48 | slot << 32 | sqn */
static inline int cdc_olr_xid(const uint8_t* p, int64_t n, uint64_t* xid)
{
    int hex = 0;
    uint64_t g[3];
    int64_t i = 0;
    if (n >= 2 && p[0] == '0' && p[1] == 'x') {
        hex = 1;
        i = 2;
    }
    for (int k = 0; k < 3; k++) {
        int64_t j = i;
        while (j < n && p[j] != '.')
            j++;
        if ((k < 2) != (j < n) || j - i > (hex ? 8 : 10))
            return 0;               /* exactly two dots; groups of up to 8 / 10 digits */
        if (!cdc_olr_group(p + i, j - i, hex, k < 2 ? 0xffffULL : 0xffffffffULL, &g[k]))
            return 0;
        i = j + 1;
    }
    *xid = g[0] << 48 | g[1] << 32 | g[2];
    return 1;
}

/* the normalized text of an xid, 0xuuuu.sss.qqqqqqqq (lower case; a slot over 0xfff takes 4
 * digits); returns its length (dst: room for 24) */
static inline int64_t cdc_olr_xid_text(uint64_t xid, uint8_t* dst)
{
    static const char H[] = "0123456789abcdef";
    const unsigned usn = (unsigned)(xid >> 48), slot = (unsigned)(xid >> 32) & 0xffff;
    const uint32_t sqn = (uint32_t)xid;
    int64_t k = 0;
    dst[k++] = '0';
    dst[k++] = 'x';
    for (int s = 12; s >= 0; s -= 4)
        dst[k++] = (uint8_t)H[(usn >> s) & 15];
    dst[k++] = '.';
    if (slot > 0xfff)
        dst[k++] = (uint8_t)H[slot >> 12];
    for (int s = 8; s >= 0; s -= 4)
        dst[k++] = (uint8_t)H[(slot >> s) & 15];
    dst[k++] = '.';
    for (int s = 28; s >= 0; s -= 4)
        dst[k++] = (uint8_t)H[(sqn >> s) & 15];
    return k;
}

/* an unsigned integer in JSON's grammar (no sign, no leading zero) within uint64 */
static inline int cdc_olr_uint(const uint8_t* p, int64_t n, uint64_t* out)
{
    if (n <= 0 || (p[0] == '0' && n > 1))
        return 0;
    return cdc_olr_group(p, n, 0, UINT64_MAX, out);
}

/* "0x" + 1–16 hex digits as an SCN within int64 */
static inline int cdc_olr_scns(const uint8_t* p, int64_t n, int64_t* out)
{
    uint64_t x;
    if (n < 3 || n > 18 || p[0] != '0' || p[1] != 'x')
        return 0;
    if (!cdc_olr_group(p + 2, n - 2, 1, (uint64_t)INT64_MAX, &x))
        return 0;
    *out = (int64_t)x;
    return 1;
}

/* A JSON number's text (grammar already checked) as an integer: its digits D and exponent e
 * (value = D x 10^e, as reference/olr.py's number_parts gives them) with 0 <= e <= 20, within
 * [lo, hi]. */
static inline int cdc_olr_int(const uint8_t* p, int64_t n, int64_t lo, int64_t hi, int64_t* out)
{
    int64_t i = 0, e = 0, frac = 0;
    int neg = 0, dot = 0;
    uint64_t d = 0;
    if (n > 0 && p[0] == '-') {
        neg = 1;
        i = 1;
    }
    for (; i < n && (p[i] | 0x20) != 'e'; i++) {
        if (p[i] == '.') {
            dot = 1;
            continue;
        }
        const unsigned c = (unsigned)(p[i] - '0');
        if (d > (UINT64_MAX - c) / 10)
            return 0;               /* beyond 64 bits: beyond any integer column */
        d = d * 10 + c;
        frac += dot;
    }
    if (i < n)
        e = cdc_jv_exponent(p, n, i);
    e -= frac;
    if (e < 0 || e > 20)
        return 0;
    for (; e > 0; e--) {
        if (d > UINT64_MAX / 10)
            return 0;
        d *= 10;
    }
    return cdc_int_range(d, neg, lo, hi, out);
}

#endif
