/* Shared by every C/C++ contender: the output columns of the "after" image and the value
 * conversions (so that the contenders differ only in how they find the values). */
#ifndef STRUCTIDX_COLS_H
#define STRUCTIDX_COLS_H
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <immintrin.h>

enum { K_INT = 0, K_DBL = 1, K_STR = 2, K_BOOL = 3 };
#define NCOLS 20

static const char* COL_NAMES[NCOLS] = {
    "ID", "NAME", "AMOUNT", "ORDER_DATE", "CREATED_TS", "STATUS", "QTY", "LINE_SEQ", "RATE",
    "SHIP_TIME", "NOTES", "BALANCE", "WEIGHT", "TRACKING", "UPDATED_TS", "EVENT_TSZ",
    "GIFT_WRAP", "EXACT_TS", "COMMENTS", "BIRTH_DATE"};
static const int COL_KIND[NCOLS] = {
    K_INT, K_STR, K_STR, K_INT, K_INT, K_STR, K_INT, K_INT, K_DBL, K_INT,
    K_STR, K_STR, K_DBL, K_STR, K_INT, K_STR, K_BOOL, K_INT, K_STR, K_INT};

typedef struct {
    int kind;
    int64_t* i64;    /* K_INT */
    double* f64;     /* K_DBL */
    uint8_t* b8;     /* K_BOOL */
    int32_t* off;    /* K_STR: rows+1 offsets */
    uint8_t* data;   /* K_STR bytes */
    int64_t dlen;
    uint8_t* valid;  /* a byte per row */
} col_t;

typedef struct {
    col_t c[NCOLS];
    int64_t rows, cap;
    uint32_t sent;   /* columns written in the row in hand */
    int nlen[NCOLS];
} out_t;

static inline void out_init(out_t* o, int64_t maxrows, int64_t maxbytes)
{
    memset(o, 0, sizeof *o);
    o->cap = maxrows;
    for (int j = 0; j < NCOLS; j++) {
        col_t* c = &o->c[j];
        c->kind = COL_KIND[j];
        o->nlen[j] = (int)strlen(COL_NAMES[j]);
        c->valid = (uint8_t*)calloc(maxrows, 1);
        if (c->kind == K_INT) c->i64 = (int64_t*)calloc(maxrows, 8);
        if (c->kind == K_DBL) c->f64 = (double*)calloc(maxrows, 8);
        if (c->kind == K_BOOL) c->b8 = (uint8_t*)calloc(maxrows, 1);
        if (c->kind == K_STR) {
            c->off = (int32_t*)calloc(maxrows + 1, 4);
            c->data = (uint8_t*)malloc(maxbytes + 64);
        }
    }
}

static inline void out_reset(out_t* o)
{
    o->rows = 0;
    o->sent = 0;
    for (int j = 0; j < NCOLS; j++) o->c[j].dlen = 0;
}

/* the row in hand is complete: columns not written are null */
static inline void row_end(out_t* o)
{
    int64_t r = o->rows;
    uint32_t miss = ~o->sent & ((1u << NCOLS) - 1);
    while (miss) {
        int j = __builtin_ctz(miss);
        miss &= miss - 1;
        col_t* c = &o->c[j];
        c->valid[r] = 0;
        if (c->kind == K_STR) c->off[r + 1] = (int32_t)c->dlen;
    }
    o->sent = 0;
    o->rows = r + 1;
}

static inline int col_lookup(const out_t* o, const uint8_t* k, int64_t n)
{
    for (int j = 0; j < NCOLS; j++)
        if (o->nlen[j] == n && memcmp(k, COL_NAMES[j], n) == 0) return j;
    return -1;
}

/* ---- numbers ------------------------------------------------------------------------------ */
static inline const uint8_t* parse_i64(const uint8_t* p, int64_t* out)
{
    int neg = *p == '-';
    p += neg;
    uint64_t x = 0;
    while ((uint8_t)(*p - '0') < 10) x = x * 10 + (uint64_t)(*p++ - '0');
    *out = neg ? -(int64_t)x : (int64_t)x;
    return p;
}

static const double POW10[23] = {1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11,
                                 1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22};

/* Clinger's fast path, strtod otherwise */
static inline const uint8_t* parse_f64(const uint8_t* p, double* out)
{
    const uint8_t* s = p;
    int neg = *p == '-';
    p += neg;
    uint64_t m = 0;
    int nd = 0, e10 = 0;
    while ((uint8_t)(*p - '0') < 10) { m = m * 10 + (uint64_t)(*p++ - '0'); nd++; }
    if (*p == '.') {
        p++;
        while ((uint8_t)(*p - '0') < 10) { m = m * 10 + (uint64_t)(*p++ - '0'); nd++; e10--; }
    }
    if ((*p | 0x20) == 'e') {
        p++;
        int en = 0, eneg = *p == '-';
        if (*p == '-' || *p == '+') p++;
        while ((uint8_t)(*p - '0') < 10) en = en * 10 + (*p++ - '0');
        e10 += eneg ? -en : en;
    }
    if (nd <= 19 && m <= (1ull << 53) && e10 >= -22 && e10 <= 22) {
        double d = (double)m;
        d = e10 < 0 ? d / POW10[-e10] : d * POW10[e10];
        *out = neg ? -d : d;
        return p;
    }
    *out = strtod((const char*)s, NULL);
    return p;
}

static inline void put_int(out_t* o, int j, int64_t x)
{
    o->c[j].i64[o->rows] = x;
    o->c[j].valid[o->rows] = 1;
    o->sent |= 1u << j;
}
static inline void put_dbl(out_t* o, int j, double x)
{
    o->c[j].f64[o->rows] = x;
    o->c[j].valid[o->rows] = 1;
    o->sent |= 1u << j;
}
static inline void put_bool(out_t* o, int j, int x)
{
    o->c[j].b8[o->rows] = (uint8_t)x;
    o->c[j].valid[o->rows] = 1;
    o->sent |= 1u << j;
}
static inline void put_null(out_t* o, int j)
{
    col_t* c = &o->c[j];
    c->valid[o->rows] = 0;
    if (c->kind == K_STR) c->off[o->rows + 1] = (int32_t)c->dlen;
    o->sent |= 1u << j;
}

/* ---- strings ------------------------------------------------------------------------------ */
static inline int hexv(uint8_t c)
{
    if ((uint8_t)(c - '0') < 10) return c - '0';
    c |= 0x20;
    if ((uint8_t)(c - 'a') < 6) return c - 'a' + 10;
    return -1;
}

/* JSON string body src[0:n) (between its quotes) unescaped to dst; returns the length */
static inline int64_t unescape(const uint8_t* src, int64_t n, uint8_t* dst)
{
    uint8_t* d = dst;
    const uint8_t* e = src + n;
    while (src < e) {
        const uint8_t* bs = (const uint8_t*)memchr(src, '\\', e - src);
        if (!bs) bs = e;
        memcpy(d, src, bs - src);
        d += bs - src;
        src = bs;
        if (src >= e) break;
        uint8_t c = src[1];
        src += 2;
        switch (c) {
        case 'n': *d++ = '\n'; break;
        case 't': *d++ = '\t'; break;
        case 'r': *d++ = '\r'; break;
        case 'b': *d++ = '\b'; break;
        case 'f': *d++ = '\f'; break;
        case 'u': {
            uint32_t u = (hexv(src[0]) << 12) | (hexv(src[1]) << 8) | (hexv(src[2]) << 4) | hexv(src[3]);
            src += 4;
            if (u >= 0xD800 && u < 0xDC00 && src + 6 <= e && src[0] == '\\' && src[1] == 'u') {
                uint32_t l = (hexv(src[2]) << 12) | (hexv(src[3]) << 8) | (hexv(src[4]) << 4) | hexv(src[5]);
                if (l >= 0xDC00 && l < 0xE000) { u = 0x10000 + ((u - 0xD800) << 10) + (l - 0xDC00); src += 6; }
            }
            if (u < 0x80) *d++ = (uint8_t)u;
            else if (u < 0x800) { *d++ = 0xC0 | (u >> 6); *d++ = 0x80 | (u & 63); }
            else if (u < 0x10000) { *d++ = 0xE0 | (u >> 12); *d++ = 0x80 | ((u >> 6) & 63); *d++ = 0x80 | (u & 63); }
            else { *d++ = 0xF0 | (u >> 18); *d++ = 0x80 | ((u >> 12) & 63); *d++ = 0x80 | ((u >> 6) & 63); *d++ = 0x80 | (u & 63); }
            break;
        }
        default: *d++ = c; break;   /* " \ / */
        }
    }
    return d - dst;
}

/* the string body s[0:n) into column j; esc: -1 unknown (copy and look for a backslash while
 * copying), 0 none, 1 has escapes */
static inline void put_str(out_t* o, int j, const uint8_t* s, int64_t n, int esc)
{
    col_t* c = &o->c[j];
    uint8_t* d = c->data + c->dlen;
    if (esc < 0) {
        /* copy 32 bytes at a time (the column has 64 bytes slack; the input is padded) */
        const __m256i bsl = _mm256_set1_epi8('\\');
        uint32_t found = 0;
        int64_t i = 0;
        for (; i < n; i += 32) {
            __m256i x = _mm256_loadu_si256((const __m256i*)(s + i));
            _mm256_storeu_si256((__m256i*)(d + i), x);
            uint32_t m = (uint32_t)_mm256_movemask_epi8(_mm256_cmpeq_epi8(x, bsl));
            if (n - i < 32) m &= (1u << (n - i)) - 1;
            found |= m;
        }
        esc = found != 0;
        if (!esc) { c->dlen += n; goto done; }
    } else if (!esc) {
        memcpy(d, s, n);
        c->dlen += n;
        goto done;
    }
    c->dlen += unescape(s, n, d);
done:
    c->off[o->rows + 1] = (int32_t)c->dlen;
    c->valid[o->rows] = 1;
    o->sent |= 1u << j;
}

/* a checksum of the columns, to compare contenders */
static inline void out_sums(const out_t* o, double* r)
{
    double si = 0, sd = 0, sb = 0, nn = 0, sh = 0;
    for (int j = 0; j < NCOLS; j++) {
        const col_t* c = &o->c[j];
        for (int64_t i = 0; i < o->rows; i++) {
            if (!c->valid[i]) { nn++; continue; }
            if (c->kind == K_INT) si += (double)c->i64[i];
            if (c->kind == K_DBL) sd += c->f64[i];
            if (c->kind == K_BOOL) sb += c->b8[i];
        }
        if (c->kind == K_STR) {
            sb += (double)c->dlen;
            for (int64_t i = 0; i < c->dlen; i++) sh += c->data[i] * (double)((i % 7) + 1);
        }
    }
    r[0] = (double)o->rows; r[1] = si; r[2] = sd; r[3] = sb; r[4] = nn; r[5] = sh;
}
#endif
