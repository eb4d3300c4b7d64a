/* The C of the lldf converter (native/cdcfast/_lldf.pyx, TableOut): the transaction id's hex
 * digits, and the CHAR header fields over a chunk, where most rows repeat a value seen a
 * row or a few rows before. The header's offsets and the other numbers the Python side knows
 * are not here: they come from the spec (_lldf_codes.pxd), and the callers pass them in.
 */
#ifndef CDCFAST_LLDF_H
#define CDCFAST_LLDF_H

#include <stdint.h>
#include <string.h>
#if defined(__SSE2__)
#include <emmintrin.h>
#endif
#include "cdcfast/_bytes.h"

/* The 10 bytes at p (16 readable) as 20 upper-case hex digits at out (32 written): UORID as
 * the transaction id, sixteen digits at a time. */
static inline void cdc_hex10(const uint8_t* p, char* out)
{
#if defined(__SSE2__)
    const __m128i x = _mm_loadu_si128((const __m128i*)p), f = _mm_set1_epi8(0x0F);
    const __m128i hi = _mm_and_si128(_mm_srli_epi16(x, 4), f), lo = _mm_and_si128(x, f);
    const __m128i nine = _mm_set1_epi8(9), zero = _mm_set1_epi8('0'), gap = _mm_set1_epi8(7);
    __m128i a = _mm_unpacklo_epi8(hi, lo), b = _mm_unpackhi_epi8(hi, lo);
    a = _mm_add_epi8(_mm_add_epi8(a, zero), _mm_and_si128(_mm_cmpgt_epi8(a, nine), gap));
    b = _mm_add_epi8(_mm_add_epi8(b, zero), _mm_and_si128(_mm_cmpgt_epi8(b, nine), gap));
    _mm_storeu_si128((__m128i*)out, a);
    _mm_storeu_si128((__m128i*)(out + 16), b);
#else
    static const char cdc_hex_upper[] = "0123456789ABCDEF";
    for (int j = 0; j < 10; j++) {
        out[2 * j] = cdc_hex_upper[p[j] >> 4];
        out[2 * j + 1] = cdc_hex_upper[p[j] & 15];
    }
#endif
}

#define CDC_LLDF_SEEN 4     /* the values a CHAR header field remembers */

/* A value of a CHAR header field: its bytes, as the field's two words of the header
 * masked (see cdc_lldf_charf), and its text. */
typedef struct {
    uint64_t a1, a2;
    uint64_t t1, t2;            /* its text (mode 1) */
    int64_t pn;                 /* its text's bytes */
    int64_t pos;                /* where its text was first written (mode 2) */
    int64_t mode;               /* 0: null (offsets only), 1: text of at most 16 bytes
                                   (from t1, t2), 2: longer (copied) */
} cdc_lldf_value;

/* A CHAR header field (at most 16 bytes) over a chunk: where its bytes lie, as two 8-byte
 * words of the header (they may overlap; a field under 8 bytes is the top of the word that
 * ends where it ends, or near the header's start the bottom of the one that starts there),
 * the last CDC_LLDF_SEEN values converted (a ring), and its output: text appended at
 * data + dlen, chunk row i's end at offs[i]. */
typedef struct {
    int64_t off1, off2;
    uint64_t m1, m2;            /* the field's bytes in each word */
    int64_t framed;             /* every row has its header (no NULL in hp) */
    int64_t nseen, nxt;
    cdc_lldf_value seen[CDC_LLDF_SEEN];
    uint8_t* data;
    int64_t dlen;
    int32_t* offs;
} cdc_lldf_charf;

/* The rows from i on (below k, headers at hp[row]) that repeat v: its text appended for
 * each, the row's end written to offs[row]. Returns the first row that does not repeat it
 * (or has no header). Text of up to 16 bytes comes from registers (16 bytes written a
 * row: the output has that slack); longer text from the row before. One loop for each
 * shape (one word or two; no text, 8 bytes, 16, longer; a NULL header possible or not),
 * its values in registers. */
static inline __attribute__((always_inline)) int64_t cdc_lldf_repeat_loop(
    const uint8_t* const* hp, int64_t i, int64_t k, const cdc_lldf_charf* f,
    const cdc_lldf_value* v, int64_t* dlen, const int two, const int copy,
    const int framed)
{
    const int64_t off1 = f->off1, off2 = f->off2, pn = v->pn;
    const uint64_t m1 = f->m1, m2 = f->m2, a1 = v->a1, a2 = v->a2;
    const uint64_t t1 = v->t1, t2 = v->t2;
    uint8_t* const data = f->data;
    int32_t* const offs = f->offs;
    int64_t d = *dlen;
    for (; i < k; i++) {
        const uint8_t* h = hp[i];
        uint64_t x1, x2;
        if (!framed && h == NULL)
            break;
        memcpy(&x1, h + off1, 8);
        if (two) {
            memcpy(&x2, h + off2, 8);
            if (((x1 & m1) ^ a1) | ((x2 & m2) ^ a2))
                break;
        } else if ((x1 & m1) != a1) {
            break;
        }
        if (copy == 8 || copy == 16)
            memcpy(data + d, &t1, 8);
        if (copy == 16)
            memcpy(data + d + 8, &t2, 8);
        if (copy == 17)
            cdc_copy_exact(data + d, data + d - pn, pn);
        if (copy)
            d += pn;
        offs[i] = (int32_t)d;
    }
    *dlen = d;
    return i;
}

/* The rows from i on whose field holds a value seen (converted before, in this chunk):
 * each takes that value's text. Returns the first row whose value was not
 * seen (the caller converts it and adds it to the ring), or k. Most rows repeat the row
 * before (a transaction's, a connection's values) and stay in one repeat loop; a value
 * that comes back (connections interleave) costs a look through the ring. */
static int64_t cdc_lldf_char_rows(const uint8_t* const* hp, int64_t i, int64_t k,
                                  cdc_lldf_charf* f)
{
    const int two = f->off1 != f->off2;
    int64_t d = f->dlen;
    while (i < k) {
        const uint8_t* h = hp[i];
        const cdc_lldf_value* v = NULL;
        uint64_t x1, x2;
        int64_t e;
        if (h == NULL) {
            f->offs[i++] = (int32_t)d;
            continue;
        }
        memcpy(&x1, h + f->off1, 8);
        memcpy(&x2, h + f->off2, 8);
        x1 &= f->m1;
        x2 &= f->m2;
        for (int64_t t = 0; t < f->nseen; t++)
            if (f->seen[t].a1 == x1 && f->seen[t].a2 == x2) {
                v = &f->seen[t];
                break;
            }
        if (v == NULL)
            break;
        /* (the repeat loop takes row i at least: it tests the words just matched) */
        if (v->mode == 2) {             /* this row's text from its first copy */
            cdc_copy_exact(f->data + d, f->data + v->pos, v->pn);
            d += v->pn;
            f->offs[i++] = (int32_t)d;
        }
        const int copy = v->mode == 0 ? 0 : v->mode == 2 ? 17 : v->pn <= 8 ? 8 : 16;
        #define CDC_REPEAT(tw, fr) \
            switch (copy) { \
            case 0: e = cdc_lldf_repeat_loop(hp, i, k, f, v, &d, tw, 0, fr); break; \
            case 8: e = cdc_lldf_repeat_loop(hp, i, k, f, v, &d, tw, 8, fr); break; \
            case 16: e = cdc_lldf_repeat_loop(hp, i, k, f, v, &d, tw, 16, fr); break; \
            default: e = cdc_lldf_repeat_loop(hp, i, k, f, v, &d, tw, 17, fr); }
        if (f->framed && two)
            CDC_REPEAT(1, 1)
        else if (f->framed)
            CDC_REPEAT(0, 1)
        else if (two)
            CDC_REPEAT(1, 0)
        else
            CDC_REPEAT(0, 0)
        #undef CDC_REPEAT
        i = e;
    }
    f->dlen = d;
    return i;
}

#endif
