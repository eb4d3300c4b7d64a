/* Text values 16 or 32 bytes at a time: strict UTF-8 validation, the unescaping of doubled
 * string delimiters, and single-byte code pages (EBCDIC) to UTF-8 (cdc_cp_utf8_avx2, below).
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
__attribute__((target("ssse3"))) static inline int cdc_utf8_valid_ssse3(const uint8_t* p, int64_t n)
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

/* Single-byte code page -> UTF-8, as to_utf8 in _values.pxd: through a table of 4 bytes a
 * slot and its length (0 marks a byte the code page does not define). Returns bytes written,
 * or -1. */
static inline int64_t cdc_to_utf8(const uint8_t* p, int64_t n, const uint8_t* u8,
                                  const uint8_t* u8len, uint8_t* out)
{
    int64_t o = 0;
    for (int64_t i = 0; i < n; i++) {
        uint8_t b = p[i], k = u8len[b];
        if (k == 0)
            return -1;
        memcpy(out + o, u8 + 4 * b, 4);         /* (the caller's output has 3 bytes of slack) */
        o += k;
    }
    return o;
}

/* The same conversion given the code page's Latin-1 table as the 16 rows a 16-entry shuffle
 * looks up (see cdc_cp_rows; 512 bytes), and the bytes that may be read at p. */
typedef int64_t (*cdc_cp_utf8_fn)(const uint8_t* p, int64_t n, const uint8_t* rows,
                                  const uint8_t* u8, const uint8_t* u8len, uint8_t* out,
                                  int64_t readable);

/* rows from the UTF-8 table: a byte's code point where it is one of U+0001 to U+00FF (one or
 * two UTF-8 bytes), else 0 (undefined, U+0000, or past U+00FF, as cp1140's euro sign: those
 * take the byte-by-byte path). Row h holds bytes 16h to 16h + 15, twice (one copy per 128-bit
 * lane). */
static inline void cdc_cp_rows(const uint8_t* u8, const uint8_t* u8len, uint8_t* rows)
{
    for (int b = 0; b < 256; b++) {
        unsigned cp = 0;
        if (u8len[b] == 1)
            cp = u8[4 * b];
        else if (u8len[b] == 2)
            cp = (unsigned)(u8[4 * b] & 0x1F) << 6 | (u8[4 * b + 1] & 0x3F);
        uint8_t v = cp < 0x100 ? (uint8_t)cp : 0;
        rows[32 * (b >> 4) + (b & 15)] = v;
        rows[32 * (b >> 4) + 16 + (b & 15)] = v;
    }
}

#ifdef CDC_HAVE_SSSE3_PATH
/* For each mask of 8 lanes (bit j: lane j is two UTF-8 bytes), the shuffle that keeps lane j's
 * first byte and, where its bit is set, its second (cdc_latin32). Filled by cdc_cp_utf8_choose. */
static uint8_t cdc_latin_shuf[256 * 16];

static inline void cdc_latin_init(void)
{
    for (int m = 0; m < 256; m++) {
        int o = 0;
        for (int j = 0; j < 8; j++) {
            cdc_latin_shuf[16 * m + o++] = (uint8_t)(2 * j);
            if (m >> j & 1)
                cdc_latin_shuf[16 * m + o++] = (uint8_t)(2 * j + 1);
        }
        while (o < 16)
            cdc_latin_shuf[16 * m + o++] = 0x80;
    }
}

/* 32 code-page bytes through a 256-entry table: the 16 rows looked up by the low nibble,
 * then halved by the high nibble's bits, 4 to 7, each at a byte's top bit (where a blend
 * looks) after a shift. 16 shuffles and 15 blends for 32 bytes. */
__attribute__((target("avx2"))) static inline __m256i cdc_lut256_avx2(__m256i x,
                                                                       const uint8_t* rows)
{
    const __m256i* t = (const __m256i*)rows;
    const __m256i lo = _mm256_and_si256(x, _mm256_set1_epi8(0x0F));
    __m256i r[8];
    __m256i m = _mm256_slli_epi16(x, 3);
    for (int h = 0; h < 8; h++)
        r[h] = _mm256_blendv_epi8(_mm256_shuffle_epi8(_mm256_loadu_si256(t + 2 * h), lo),
                                  _mm256_shuffle_epi8(_mm256_loadu_si256(t + 2 * h + 1), lo), m);
    m = _mm256_slli_epi16(x, 2);
    for (int h = 0; h < 4; h++)
        r[h] = _mm256_blendv_epi8(r[2 * h], r[2 * h + 1], m);
    m = _mm256_slli_epi16(x, 1);
    r[0] = _mm256_blendv_epi8(r[0], r[1], m);
    r[1] = _mm256_blendv_epi8(r[2], r[3], m);
    return _mm256_blendv_epi8(r[0], r[1], x);
}

/* The 32 Latin-1 code points in a (none 0; high: the mask of those past U+007F) as UTF-8 at
 * out; returns the bytes of the first nv (high has no bit past them). A code point past
 * U+007F is 110000xx 10xxxxxx: its lead C2 or C3, its trail the byte less bit 6. Leads and
 * trails interleaved (each code point in 16 bits, 8 to a 128-bit lane), then each lane's
 * unused trails squeezed out by one shuffle, from cdc_latin_shuf. Writes up to 40 bytes past
 * what it returns, no branch. */
__attribute__((target("avx2,popcnt"), always_inline)) static inline int64_t cdc_latin32(
    __m256i a, uint32_t high, int64_t nv, uint8_t* out)
{
    const __m256i c3 = _mm256_cmpgt_epi8(a, _mm256_set1_epi8((char)0xBF));  /* (or ASCII) */
    const __m256i lead = _mm256_blendv_epi8(
        a, _mm256_sub_epi8(_mm256_set1_epi8((char)0xC2), c3), a);
    const __m256i trail = _mm256_and_si256(a, _mm256_set1_epi8((char)0xBF));
    /* code points 0-7 and 16-23 (lo), 8-15 and 24-31 (hi), by lane */
    const __m256i lo = _mm256_unpacklo_epi8(lead, trail), hi = _mm256_unpackhi_epi8(lead, trail);
    const unsigned m0 = high & 0xFF, m1 = high >> 8 & 0xFF, m2 = high >> 16 & 0xFF,
                   m3 = high >> 24;
    const __m256i sl = _mm256_inserti128_si256(
        _mm256_castsi128_si256(_mm_loadu_si128((const __m128i*)(cdc_latin_shuf + 16 * m0))),
        _mm_loadu_si128((const __m128i*)(cdc_latin_shuf + 16 * m2)), 1);
    const __m256i sh = _mm256_inserti128_si256(
        _mm256_castsi128_si256(_mm_loadu_si128((const __m128i*)(cdc_latin_shuf + 16 * m1))),
        _mm_loadu_si128((const __m128i*)(cdc_latin_shuf + 16 * m3)), 1);
    const __m256i vl = _mm256_shuffle_epi8(lo, sl), vh = _mm256_shuffle_epi8(hi, sh);
    int64_t o = 8 + __builtin_popcount(m0);
    _mm_storeu_si128((__m128i*)out, _mm256_castsi256_si128(vl));
    _mm_storeu_si128((__m128i*)(out + o), _mm256_castsi256_si128(vh));
    o += 8 + __builtin_popcount(m1);
    _mm_storeu_si128((__m128i*)(out + o), _mm256_extracti128_si256(vl, 1));
    o += 8 + __builtin_popcount(m2);
    _mm_storeu_si128((__m128i*)(out + o), _mm256_extracti128_si256(vh, 1));
    return nv + __builtin_popcount(high);
}

/* One block of nv (1 to 32) code-page bytes at p (32 readable) as UTF-8 at out, when all
 * are Latin-1 characters other than NUL: their code points looked up at once, then written
 * by cdc_latin32; with mixed 0, a block of ASCII only (names, codes, English text) is
 * stored as it is, which is quicker where Latin-1 letters (ü, ñ, é, ß) are rare and dearer
 * (a mispredicted branch) where they are frequent. Returns the bytes written (up to 40 more
 * are), or -1 (nothing useful written) when one is not; *high gets the mask of bytes past
 * U+007F. */
__attribute__((target("avx2,popcnt"), always_inline)) static inline int64_t cdc_cp_block_avx2(
    const uint8_t* p, int64_t nv, const uint8_t* rows, uint8_t* out, uint32_t* high,
    const int mixed)
{
    const __m256i a = cdc_lut256_avx2(_mm256_loadu_si256((const __m256i*)p), rows);
    const uint32_t vm = nv < 32 ? (1u << nv) - 1 : 0xFFFFFFFFu;
    const uint32_t hm = (uint32_t)_mm256_movemask_epi8(a) & vm;
    *high = hm;
    if ((uint32_t)_mm256_movemask_epi8(_mm256_cmpeq_epi8(a, _mm256_setzero_si256())) & vm)
        return -1;                              /* not all Latin-1 (or a NUL) */
    if (!mixed && !hm) {
        _mm256_storeu_si256((__m256i*)out, a);
        return nv;
    }
    return cdc_latin32(a, hm, nv, out);
}

/* cdc_cp_utf8_fn 32 bytes at a time (cdc_cp_block_avx2); a block with a byte that is not a
 * Latin-1 character, and a tail that cannot be read as a whole block, byte by byte
 * (cdc_to_utf8). Writes up to 40 bytes past what it returns (the caller's output has that
 * slack); reads past n only within readable. */
__attribute__((target("avx2,popcnt"))) static inline int64_t cdc_cp_utf8_avx2(
    const uint8_t* p, int64_t n, const uint8_t* rows, const uint8_t* u8, const uint8_t* u8len,
    uint8_t* out, int64_t readable)
{
    int64_t i = 0, o = 0, k;
    uint32_t hm;
    while (i < n) {
        int64_t nv = n - i < 32 ? n - i : 32;
        if (nv < 32 && readable - i < 32)
            break;
        k = cdc_cp_block_avx2(p + i, nv, rows, out + o, &hm, 0);
        if (k < 0)
            break;
        o += k;
        i += nv;
    }
    if (i == n)
        return o;
    k = cdc_to_utf8(p + i, n - i, u8, u8len, out + o);
    return k < 0 ? -1 : o + k;
}

__attribute__((target("avx2,popcnt"), always_inline)) static inline int64_t cdc_cp_run_blocks(
    const uint8_t* p, int64_t n, const uint8_t* rows, uint8_t* out, uint32_t* high,
    int32_t* cum, const int mixed)
{
    int64_t i, o = 0, k, b = 0;
    int32_t highs = 0;
    for (i = 0; i < n; i += 32, b++) {
        k = cdc_cp_block_avx2(p + i, n - i < 32 ? n - i : 32, rows, out + o, high + b, mixed);
        if (k < 0)
            return -1;
        cum[b] = highs;
        highs += __builtin_popcount(high[b]);
        o += k;
    }
    high[b] = 0;
    cum[b] = highs;
    return o;
}

/* n code-page bytes at p (the text of many values back to back, 32 readable past n) as
 * UTF-8 at out (40 bytes of slack), when every one is a Latin-1 character other than NUL:
 * one run of whole blocks, no tail per value; mixed: as cdc_cp_block_avx2 (the caller
 * chooses it where the run before had many Latin-1 letters). Returns the bytes written, or
 * -1 when a byte is not (then the caller converts value by value). For the values' ends:
 * block b (bytes 32b to 32b + 31) has the bytes past U+007F in the bits of high[b] and
 * cum[b] of them before it (n / 32 + 1 entries of each), see cdc_latin_ends. */
__attribute__((target("avx2,popcnt"))) static inline int64_t cdc_cp_run_avx2(
    const uint8_t* p, int64_t n, const uint8_t* rows, uint8_t* out, uint32_t* high,
    int32_t* cum, int mixed)
{
    return mixed ? cdc_cp_run_blocks(p, n, rows, out, high, cum, 1)
                 : cdc_cp_run_blocks(p, n, rows, out, high, cum, 0);
}
#endif

/* Whether the AVX2 code page conversions run here (allowed, and the CPU has AVX2); their
 * shuffle table made on the way. */
static inline int cdc_cp_avx2_ok(int allow_simd)
{
#ifdef CDC_HAVE_SSSE3_PATH
    if (allow_simd && __builtin_cpu_supports("avx2")) {
        cdc_latin_init();
        return 1;
    }
#endif
    (void)allow_simd;
    return 0;
}

/* The 32-bytes-at-a-time code page conversion for this CPU, or NULL (then the scalar one in
 * _values.pxd runs). */
static inline cdc_cp_utf8_fn cdc_cp_utf8_choose(int allow_simd)
{
#ifdef CDC_HAVE_SSSE3_PATH
    return cdc_cp_avx2_ok(allow_simd) ? cdc_cp_utf8_avx2 : NULL;
#else
    (void)allow_simd;
    return NULL;
#endif
}

typedef int64_t (*cdc_cp_run_fn)(const uint8_t* p, int64_t n, const uint8_t* rows,
                                 uint8_t* out, uint32_t* high, int32_t* cum, int mixed);

/* The run conversion for this CPU, or NULL (then values convert one by one). */
static inline cdc_cp_run_fn cdc_cp_run_choose(int allow_simd)
{
#ifdef CDC_HAVE_SSSE3_PATH
    return cdc_cp_avx2_ok(allow_simd) ? cdc_cp_run_avx2 : NULL;
#else
    (void)allow_simd;
    return NULL;
#endif
}

/* The n offsets at offs into a run's UTF-8 that starts at base, given as offsets into its
 * code-page text (which cdc_cp_run_avx2 converted, from base too): each moved on by one for
 * every byte past U+007F before it. Only where that conversion runs, so with POPCNT. */
#ifdef CDC_HAVE_SSSE3_PATH
__attribute__((target("popcnt"))) static inline void cdc_latin_ends(
    int32_t* offs, int64_t n, int64_t base, const uint32_t* high, const int32_t* cum)
{
    for (int64_t i = 0; i < n; i++) {
        const int64_t e = offs[i] - base;
        offs[i] = (int32_t)(offs[i] + cum[e >> 5]
                            + __builtin_popcount(high[e >> 5] & ((1u << (e & 31)) - 1)));
    }
}
#else
static inline void cdc_latin_ends(int32_t* offs, int64_t n, int64_t base,
                                  const uint32_t* high, const int32_t* cum)
{
    (void)offs; (void)n; (void)base; (void)high; (void)cum;     /* (no run conversion) */
}
#endif

typedef int (*cdc_utf8_fn)(const uint8_t*, int64_t);

/* The 16-bytes-at-a-time validator for this CPU, or NULL (then the scalar one runs). */
static inline cdc_utf8_fn cdc_utf8_choose(int allow_simd)
{
#ifdef CDC_HAVE_SSSE3_PATH
    if (allow_simd && __builtin_cpu_supports("ssse3"))
        return cdc_utf8_valid_ssse3;
#endif
    (void)allow_simd;
    return NULL;
}

#endif
