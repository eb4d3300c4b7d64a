/* Text values 16 bytes at a time: strict UTF-8 validation and the unescaping of doubled
 * string delimiters.
 *
 * The validator is the "lookup" algorithm of J. Keiser and D. Lemire ("Validating UTF-8 In
 * Less Than One Instruction Per Byte", 2021), as simdjson and simdutf use it: three 16-entry
 * table lookups classify each byte with the one before it (too short, too long, overlong,
 * surrogate, above U+10FFFF, two continuations), and the bytes two and three after a 3- and
 * 4-byte lead must be continuations. It accepts exactly what the scalar utf8_valid of
 * _values.pxd accepts (no overlongs, no surrogates, nothing past U+10FFFF). It needs SSSE3
 * (pshufb), chosen at import where the CPU has it; otherwise the scalar check runs.
 */
#ifndef CDCFAST_UTF8_H
#define CDCFAST_UTF8_H

#include <stdint.h>
#include <string.h>
#if defined(__SSE2__)
#include <emmintrin.h>
#endif
#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#define CDC_HAVE_SSSE3_PATH 1
#endif

/* Copy the n bytes of an escaped string value from src to dst, each doubled string delimiter
 * sd written once; returns the bytes written. The value is well formed (the splitter checked
 * that its delimiters come in pairs). *ascii gets 1 if the bytes are surely all ASCII (then
 * they need no UTF-8 check). 16-byte moves: src may be read, and dst written, up to 15 bytes
 * past n. */
static inline int64_t cdc_unescape(const uint8_t* src, int64_t n, uint8_t sd, uint8_t* dst,
                                   int* ascii)
{
#if defined(__SSE2__)
    const __m128i q = _mm_set1_epi8((char)sd);
    __m128i high = _mm_setzero_si128();
    int64_t i = 0, o = 0;
    while (i < n) {
        __m128i x = _mm_loadu_si128((const __m128i*)(src + i));
        _mm_storeu_si128((__m128i*)(dst + o), x);
        high = _mm_or_si128(high, x);           /* (bytes past n too: then a check too many) */
        uint32_t m = (uint32_t)_mm_movemask_epi8(_mm_cmpeq_epi8(x, q));
        if (n - i < 16)
            m &= (1u << (n - i)) - 1;           /* not past the value */
        if (!m) {
            int64_t k = n - i < 16 ? n - i : 16;
            i += k;
            o += k;
            continue;
        }
        int k = __builtin_ctz(m);               /* the first of a pair: keep it, skip the second */
        i += k + 2;
        o += k + 1;
    }
    *ascii = _mm_movemask_epi8(high) == 0;
    return o;
#else
    int64_t i = 0, o = 0;
    while (i < n) {
        dst[o++] = src[i];
        i += src[i] == sd ? 2 : 1;
    }
    *ascii = 0;
    return o;
#endif
}

#ifdef CDC_HAVE_SSSE3_PATH
#define CDC_U8_TOO_SHORT (1 << 0)       /* a lead byte or ASCII, then a lead byte or ASCII */
#define CDC_U8_TOO_LONG (1 << 1)        /* ASCII, then a continuation */
#define CDC_U8_OVERLONG_3 (1 << 2)      /* 11100000 100_____ */
#define CDC_U8_TOO_LARGE (1 << 3)       /* past U+10FFFF */
#define CDC_U8_SURROGATE (1 << 4)       /* 11101101 101_____ */
#define CDC_U8_OVERLONG_2 (1 << 5)      /* 1100000_ 10______ */
#define CDC_U8_TOO_LARGE_1000 (1 << 6)  /* past U+10FFFF, 1000____ after the lead */
#define CDC_U8_OVERLONG_4 (1 << 6)      /* 11110000 1000____ */
#define CDC_U8_TWO_CONTS (1 << 7)       /* a continuation after a continuation, unasked */
#define CDC_U8_CARRY (CDC_U8_TOO_SHORT | CDC_U8_TOO_LONG | CDC_U8_TWO_CONTS)

/* Whether p[0:n] is strict UTF-8. Reads up to 15 bytes past n (masked off): the caller
 * guarantees they are readable. */
__attribute__((target("ssse3"))) static int cdc_utf8_valid_ssse3(const uint8_t* p, int64_t n)
{
    /* by the first byte's high nibble */
    const __m128i hi1 = _mm_setr_epi8(
        CDC_U8_TOO_LONG, CDC_U8_TOO_LONG, CDC_U8_TOO_LONG, CDC_U8_TOO_LONG,
        CDC_U8_TOO_LONG, CDC_U8_TOO_LONG, CDC_U8_TOO_LONG, CDC_U8_TOO_LONG,
        (char)CDC_U8_TWO_CONTS, (char)CDC_U8_TWO_CONTS, (char)CDC_U8_TWO_CONTS,
        (char)CDC_U8_TWO_CONTS,
        CDC_U8_TOO_SHORT | CDC_U8_OVERLONG_2,
        CDC_U8_TOO_SHORT,
        CDC_U8_TOO_SHORT | CDC_U8_OVERLONG_3 | CDC_U8_SURROGATE,
        CDC_U8_TOO_SHORT | CDC_U8_TOO_LARGE | CDC_U8_TOO_LARGE_1000 | CDC_U8_OVERLONG_4);
    /* by the first byte's low nibble */
    const char big = (char)(CDC_U8_CARRY | CDC_U8_TOO_LARGE | CDC_U8_TOO_LARGE_1000);
    const __m128i lo1 = _mm_setr_epi8(
        (char)(CDC_U8_CARRY | CDC_U8_OVERLONG_3 | CDC_U8_OVERLONG_2 | CDC_U8_OVERLONG_4),
        (char)(CDC_U8_CARRY | CDC_U8_OVERLONG_2),
        (char)CDC_U8_CARRY, (char)CDC_U8_CARRY,
        (char)(CDC_U8_CARRY | CDC_U8_TOO_LARGE),
        big, big, big, big, big, big, big, big,
        (char)(CDC_U8_CARRY | CDC_U8_TOO_LARGE | CDC_U8_TOO_LARGE_1000 | CDC_U8_SURROGATE),
        big, big);
    /* by the second byte's high nibble */
    const __m128i hi2 = _mm_setr_epi8(
        CDC_U8_TOO_SHORT, CDC_U8_TOO_SHORT, CDC_U8_TOO_SHORT, CDC_U8_TOO_SHORT,
        CDC_U8_TOO_SHORT, CDC_U8_TOO_SHORT, CDC_U8_TOO_SHORT, CDC_U8_TOO_SHORT,
        (char)(CDC_U8_TOO_LONG | CDC_U8_OVERLONG_2 | CDC_U8_TWO_CONTS | CDC_U8_OVERLONG_3
               | CDC_U8_TOO_LARGE_1000 | CDC_U8_OVERLONG_4),
        (char)(CDC_U8_TOO_LONG | CDC_U8_OVERLONG_2 | CDC_U8_TWO_CONTS | CDC_U8_OVERLONG_3
               | CDC_U8_TOO_LARGE),
        (char)(CDC_U8_TOO_LONG | CDC_U8_OVERLONG_2 | CDC_U8_TWO_CONTS | CDC_U8_SURROGATE
               | CDC_U8_TOO_LARGE),
        (char)(CDC_U8_TOO_LONG | CDC_U8_OVERLONG_2 | CDC_U8_TWO_CONTS | CDC_U8_SURROGATE
               | CDC_U8_TOO_LARGE),
        CDC_U8_TOO_SHORT, CDC_U8_TOO_SHORT, CDC_U8_TOO_SHORT, CDC_U8_TOO_SHORT);
    const __m128i nib = _mm_set1_epi8(0x0F);
    const __m128i iota = _mm_setr_epi8(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15);
    __m128i prev = _mm_setzero_si128(), err = _mm_setzero_si128();
    int64_t i = 0;
    for (;;) {
        __m128i x = _mm_setzero_si128();    /* past the end: a sequence cut short shows */
        if (i < n) {
            x = _mm_loadu_si128((const __m128i*)(p + i));
            if (n - i < 16)
                x = _mm_and_si128(x, _mm_cmpgt_epi8(_mm_set1_epi8((char)(n - i)), iota));
        }
        __m128i p1 = _mm_alignr_epi8(x, prev, 15);
        __m128i p2 = _mm_alignr_epi8(x, prev, 14);
        __m128i p3 = _mm_alignr_epi8(x, prev, 13);
        __m128i sc = _mm_and_si128(
            _mm_and_si128(_mm_shuffle_epi8(hi1, _mm_and_si128(_mm_srli_epi16(p1, 4), nib)),
                          _mm_shuffle_epi8(lo1, _mm_and_si128(p1, nib))),
            _mm_shuffle_epi8(hi2, _mm_and_si128(_mm_srli_epi16(x, 4), nib)));
        /* the 3rd byte of a 3- or 4-byte sequence and the 4th of a 4-byte one */
        __m128i must = _mm_or_si128(_mm_subs_epu8(p2, _mm_set1_epi8((char)(0xE0 - 0x80))),
                                    _mm_subs_epu8(p3, _mm_set1_epi8((char)(0xF0 - 0x80))));
        err = _mm_or_si128(err, _mm_xor_si128(_mm_and_si128(must, _mm_set1_epi8((char)0x80)), sc));
        if (i >= n)
            break;
        prev = x;
        i += 16;
    }
    return _mm_movemask_epi8(_mm_cmpeq_epi8(err, _mm_setzero_si128())) == 0xFFFF;
}
#endif

typedef int (*cdc_utf8_fn)(const uint8_t*, int64_t);

/* The 16-bytes-at-a-time validator for this CPU, or NULL (then the scalar one runs). */
static cdc_utf8_fn cdc_utf8_choose(int allow_simd)
{
#ifdef CDC_HAVE_SSSE3_PATH
    if (allow_simd && __builtin_cpu_supports("ssse3"))
        return cdc_utf8_valid_ssse3;
#endif
    (void)allow_simd;
    return NULL;
}

#endif
