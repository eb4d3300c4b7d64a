/* The distinct keys of one JSON image that its table lacks, so that each counts once in
 * `last_stats["extra_columns"]` ("once per key and image": docs/qlik.md, docs/debezium.md),
 * exactly as the reference counts the keys of the dict json.loads gives. Keys are compared by
 * their code points: escapes decoded, an escaped surrogate pair joined, a lone surrogate kept
 * as its own code point (as Python's json keeps it), so "A" and "\u0041" are one key.
 *
 * Open addressing over 64-bit FNV-1a hashes; a generation number per slot makes clearing
 * (once per image) O(1). Memory grows with the distinct keys of an image (no bound to guess:
 * a hostile image of thousands of keys is counted exactly), freed by cdc_ks_free. A failed
 * allocation makes a key count as new (never a crash).
 */
#ifndef CDCFAST_KEYSET_H
#define CDCFAST_KEYSET_H

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
    uint8_t* arena;         /* the normalized keys, back to back */
    int64_t alen, acap;
    int64_t* off;           /* per slot: the key's offset in the arena */
    int64_t* len;           /* per slot: its length */
    uint64_t* hash;
    uint32_t* gen;          /* a slot is taken when gen[i] == cur */
    int64_t nslot, count;
    uint32_t cur;
    uint8_t* tmp;           /* a key's normalized bytes */
    int64_t tcap;
} cdc_keyset;

static inline void cdc_ks_clear(cdc_keyset* s) {
    s->count = 0;
    s->alen = 0;
    s->cur += 1;
    if (s->cur == 0) {      /* wrapped: every slot's generation is stale again */
        if (s->gen) memset(s->gen, 0, (size_t)s->nslot * sizeof(uint32_t));
        s->cur = 1;
    }
}

static inline void cdc_ks_free(cdc_keyset* s) {
    free(s->arena); free(s->off); free(s->len); free(s->hash); free(s->gen); free(s->tmp);
    memset(s, 0, sizeof(*s));
}

static inline int cdc_ks_hex(uint8_t c) {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
}

/* The code point of the \uXXXX escape at p[0..6) (p[0] the backslash), or -1. */
static inline int32_t cdc_ks_u4(const uint8_t* p, int64_t n) {
    int32_t v = 0;
    if (n < 6 || p[0] != '\\' || p[1] != 'u') return -1;
    for (int i = 2; i < 6; i++) {
        int h = cdc_ks_hex(p[i]);
        if (h < 0) return -1;
        v = v * 16 + h;
    }
    return v;
}

/* UTF-8 of a code point (surrogates too, as 3 bytes: they only need to compare equal). */
static inline int64_t cdc_ks_utf8(int32_t cp, uint8_t* d) {
    if (cp < 0x80) { d[0] = (uint8_t)cp; return 1; }
    if (cp < 0x800) { d[0] = 0xC0 | (cp >> 6); d[1] = 0x80 | (cp & 63); return 2; }
    if (cp < 0x10000) {
        d[0] = 0xE0 | (cp >> 12); d[1] = 0x80 | ((cp >> 6) & 63); d[2] = 0x80 | (cp & 63);
        return 3;
    }
    d[0] = 0xF0 | (cp >> 18); d[1] = 0x80 | ((cp >> 12) & 63);
    d[2] = 0x80 | ((cp >> 6) & 63); d[3] = 0x80 | (cp & 63);
    return 4;
}

/* The key's bytes with its escapes decoded into s->tmp (at most n bytes: an escape is never
 * shorter than what it stands for); returns their length, or -1 without memory. */
static inline int64_t cdc_ks_normalize(cdc_keyset* s, const uint8_t* p, int64_t n) {
    int64_t i = 0, o = 0;
    if (n + 4 > s->tcap) {
        uint8_t* t = (uint8_t*)realloc(s->tmp, (size_t)(n + 4));
        if (t == NULL) return -1;
        s->tmp = t;
        s->tcap = n + 4;
    }
    while (i < n) {
        uint8_t c = p[i];
        if (c != '\\' || i + 1 >= n) {
            s->tmp[o++] = c;
            i++;
            continue;
        }
        uint8_t e = p[i + 1];
        if (e != 'u') {
            static const uint8_t from[] = "\"\\/bfnrt", to[] = "\"\\/\b\f\n\r\t";
            const uint8_t* hit = (const uint8_t*)memchr(from, e, 8);
            s->tmp[o++] = hit ? to[hit - from] : e;
            i += 2;
            continue;
        }
        int32_t cp = cdc_ks_u4(p + i, n - i);
        if (cp < 0) {                           /* not an escape the scan would pass: as is */
            s->tmp[o++] = c;
            i++;
            continue;
        }
        i += 6;
        if (cp >= 0xD800 && cp <= 0xDBFF) {
            int32_t lo = cdc_ks_u4(p + i, n - i);
            if (lo >= 0xDC00 && lo <= 0xDFFF) {
                cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
                i += 6;
            }
        }
        o += cdc_ks_utf8(cp, s->tmp + o);
    }
    return o;
}

static inline int cdc_ks_grow(cdc_keyset* s) {
    int64_t n = s->nslot ? s->nslot * 2 : 64, i;
    int64_t* off = (int64_t*)malloc((size_t)n * sizeof(int64_t));
    int64_t* len = (int64_t*)malloc((size_t)n * sizeof(int64_t));
    uint64_t* hash = (uint64_t*)malloc((size_t)n * sizeof(uint64_t));
    uint32_t* gen = (uint32_t*)calloc((size_t)n, sizeof(uint32_t));
    if (!off || !len || !hash || !gen) {
        free(off); free(len); free(hash); free(gen);
        return -1;
    }
    for (i = 0; i < s->nslot; i++) {
        if (s->gen[i] != s->cur) continue;
        int64_t j = (int64_t)(s->hash[i] & (uint64_t)(n - 1));
        while (gen[j] == s->cur) j = (j + 1) & (n - 1);
        gen[j] = s->cur; off[j] = s->off[i]; len[j] = s->len[i]; hash[j] = s->hash[i];
    }
    free(s->off); free(s->len); free(s->hash); free(s->gen);
    s->off = off; s->len = len; s->hash = hash; s->gen = gen;
    s->nslot = n;
    return 0;
}

/* 1 when the key p[0..n) (between its quotes; `esc`: it holds a backslash) was not in the set
 * (now it is), 0 when it was. */
static inline int cdc_ks_add(cdc_keyset* s, const uint8_t* p, int64_t n, int esc) {
    const uint8_t* k = p;
    uint64_t h = 1469598103934665603ULL;
    int64_t i;
    if (s->cur == 0) s->cur = 1;
    if (esc) {
        n = cdc_ks_normalize(s, p, n);
        if (n < 0) return 1;
        k = s->tmp;
    }
    for (i = 0; i < n; i++) h = (h ^ k[i]) * 1099511628211ULL;
    if ((s->count + 1) * 2 > s->nslot && cdc_ks_grow(s) < 0) return 1;
    int64_t j = (int64_t)(h & (uint64_t)(s->nslot - 1));
    while (s->gen[j] == s->cur) {
        if (s->hash[j] == h && s->len[j] == n
                && (n == 0 || memcmp(s->arena + s->off[j], k, (size_t)n) == 0))
            return 0;                           /* (an empty key: no arena yet, NULL) */
        j = (j + 1) & (s->nslot - 1);
    }
    if (s->alen + n > s->acap) {
        int64_t cap = (s->alen + n) * 2 + 64;
        uint8_t* a = (uint8_t*)realloc(s->arena, (size_t)cap);
        if (a == NULL) return 1;
        s->arena = a;
        s->acap = cap;
    }
    if (n) memcpy(s->arena + s->alen, k, (size_t)n);
    s->gen[j] = s->cur; s->off[j] = s->alen; s->len[j] = n; s->hash[j] = h;
    s->alen += n;
    s->count += 1;
    return 1;
}

#endif
