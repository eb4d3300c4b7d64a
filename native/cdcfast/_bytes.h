/* Byte moves for the kernels' hot loops. */
#ifndef CDCFAST_BYTES_H
#define CDCFAST_BYTES_H

#include <stdint.h>
#include <string.h>
#if defined(__SSE2__)
#include <emmintrin.h>
#endif

/* Copy n bytes from src to dst in 16-byte moves; returns how many of them, from the start,
 * are surely ASCII (n when all are; otherwise a point before the first byte that is not,
 * from which a UTF-8 check need only start). Moves past n: the caller guarantees that src
 * may be read, and dst written, up to 15 bytes beyond n (a value's text inside a bigger
 * input; an output buffer reserved with slack). A libc memcpy call costs more than the
 * whole copy of a short field. */
static inline int64_t cdc_copy_ascii(const uint8_t* src, int64_t n, uint8_t* dst)
{
#if defined(__SSE2__)
    int64_t i = 0, ascii = n;
    for (; i + 16 <= n; i += 16) {
        __m128i x = _mm_loadu_si128((const __m128i*)(src + i));
        _mm_storeu_si128((__m128i*)(dst + i), x);
        if (_mm_movemask_epi8(x) && ascii == n)
            ascii = i;
    }
    if (i < n) {
        __m128i x = _mm_loadu_si128((const __m128i*)(src + i));
        _mm_storeu_si128((__m128i*)(dst + i), x);
        if ((_mm_movemask_epi8(x) & ((1 << (n - i)) - 1)) && ascii == n)
            ascii = i;
    }
    return ascii;
#else
    int64_t i = 0;
    memcpy(dst, src, (size_t)n);
    while (i < n && src[i] < 0x80)
        i++;
    return i;
#endif
}

/* a[0:n] == b[0:n], 16 bytes at a time; both may be read up to 15 bytes past n (the caller
 * checks they lie inside their buffer). Short spans are the rule: a libc call costs more. */
static inline int cdc_same_bytes(const uint8_t* a, const uint8_t* b, int64_t n)
{
#if defined(__SSE2__)
    int64_t i = 0;
    for (; i + 16 <= n; i += 16) {
        __m128i x = _mm_loadu_si128((const __m128i*)(a + i));
        __m128i y = _mm_loadu_si128((const __m128i*)(b + i));
        if (_mm_movemask_epi8(_mm_cmpeq_epi8(x, y)) != 0xFFFF)
            return 0;
    }
    if (i < n) {
        __m128i x = _mm_loadu_si128((const __m128i*)(a + i));
        __m128i y = _mm_loadu_si128((const __m128i*)(b + i));
        int m = (1 << (n - i)) - 1;
        return (_mm_movemask_epi8(_mm_cmpeq_epi8(x, y)) & m) == m;
    }
    return 1;
#else
    return memcmp(a, b, (size_t)n) == 0;
#endif
}

/* Append a copy of the n bytes just before dst (the previous value of a string column) at
 * dst: 16-byte moves, all loads before the stores where the two may meet. dst may be written
 * up to 31 bytes past n (the column reserves that slack). */
static inline void cdc_repeat_prev(uint8_t* dst, int64_t n)
{
    const uint8_t* src = dst - n;
#if defined(__SSE2__)
    if (n <= 16) {
        __m128i x = _mm_loadu_si128((const __m128i*)src);
        _mm_storeu_si128((__m128i*)dst, x);
        return;
    }
    if (n <= 32) {
        __m128i x = _mm_loadu_si128((const __m128i*)src);
        __m128i y = _mm_loadu_si128((const __m128i*)(src + 16));
        _mm_storeu_si128((__m128i*)dst, x);
        _mm_storeu_si128((__m128i*)(dst + 16), y);
        return;
    }
#endif
    memcpy(dst, src, (size_t)n);            /* apart: [src, dst) and [dst, dst + n) */
}

/* a[0:n] == b[0:n] reading exactly n bytes of each (fields at the end of a buffer): two to
 * four overlapping word loads for n <= 32, memcmp beyond. */
static inline int cdc_eq_exact(const uint8_t* a, const uint8_t* b, int64_t n)
{
    uint64_t x0, x1, y0, y1;
    uint32_t u0, u1, v0, v1;
    if (n >= 8) {
        if (n > 32)
            return memcmp(a, b, (size_t)n) == 0;
        memcpy(&x0, a, 8); memcpy(&y0, b, 8);
        memcpy(&x1, a + n - 8, 8); memcpy(&y1, b + n - 8, 8);
        if ((x0 ^ y0) | (x1 ^ y1))
            return 0;
        if (n <= 16)
            return 1;
        memcpy(&x0, a + 8, 8); memcpy(&y0, b + 8, 8);
        memcpy(&x1, a + n - 16, 8); memcpy(&y1, b + n - 16, 8);
        return ((x0 ^ y0) | (x1 ^ y1)) == 0;
    }
    if (n >= 4) {
        memcpy(&u0, a, 4); memcpy(&v0, b, 4);
        memcpy(&u1, a + n - 4, 4); memcpy(&v1, b + n - 4, 4);
        return ((u0 ^ v0) | (u1 ^ v1)) == 0;
    }
    if (n >= 2)
        return a[0] == b[0] && a[1] == b[1] && a[n - 1] == b[n - 1];
    return n == 0 || a[0] == b[0];
}

/* Whether a[0:n] and b[0:n] differ, where room_a and room_b bytes may be read from a and b:
 * up to 64 bytes with 64 readable in each, one compare of 64 bytes masked to n, with no
 * branch on the bytes or their length (which vary from value to value); else cdc_eq_exact. */
static inline int cdc_text_differs(const uint8_t* a, const uint8_t* b, int64_t n,
                                   int64_t room_a, int64_t room_b)
{
#if defined(__SSE2__)
    if (n <= 64 && room_a >= 64 && room_b >= 64) {
        uint64_t eq = 0;
        for (int q = 0; q < 4; q++)
            eq |= (uint64_t)(uint16_t)_mm_movemask_epi8(_mm_cmpeq_epi8(
                      _mm_loadu_si128((const __m128i*)(a + 16 * q)),
                      _mm_loadu_si128((const __m128i*)(b + 16 * q)))) << (16 * q);
        const uint64_t used = n == 64 ? ~0ULL : (1ULL << n) - 1;
        return (~eq & used) != 0;
    }
#endif
    (void)room_a; (void)room_b;
    return !cdc_eq_exact(a, b, n);
}

/* dst[0:n] = src[0:n] touching exactly those bytes (no slack needed): overlapping word
 * moves, which cost less than a libc call for the short names and codes of headers. */
static inline void cdc_copy_exact(uint8_t* dst, const uint8_t* src, int64_t n)
{
    uint64_t x0, x1;
    uint32_t u0, u1;
    if (n >= 8) {
        if (n > 16) {
            memcpy(dst, src, (size_t)n);
            return;
        }
        memcpy(&x0, src, 8);
        memcpy(&x1, src + n - 8, 8);
        memcpy(dst, &x0, 8);
        memcpy(dst + n - 8, &x1, 8);
    } else if (n >= 4) {
        memcpy(&u0, src, 4);
        memcpy(&u1, src + n - 4, 4);
        memcpy(dst, &u0, 4);
        memcpy(dst + n - 4, &u1, 4);
    } else if (n > 0) {
        dst[0] = src[0];
        dst[n >> 1] = src[n >> 1];
        dst[n - 1] = src[n - 1];
    }
}

/* dst[0:n] = src[0:n], n a multiple of 16, in 16-byte moves */
static inline void cdc_copy_16s(uint8_t* dst, const uint8_t* src, int64_t n)
{
    for (int64_t i = 0; i < n; i += 16)
        memcpy(dst + i, src + i, 16);
}

/* dst[0:n] = src[0:n] in 16-byte moves where src has the bytes (readable of them from src
 * on), else exactly: dst may be written up to 15 bytes past n. For gathering the many short
 * values of a column into one run. */
static inline void cdc_copy_slack(uint8_t* dst, const uint8_t* src, int64_t n, int64_t readable)
{
    if (readable < ((n + 15) & ~(int64_t)15)) {
        cdc_copy_exact(dst, src, n);
        return;
    }
    cdc_copy_16s(dst, src, (n + 15) & ~(int64_t)15);
}

/* bits i0 … i0 + n - 1 of the bitmap bm set (bit i: bit i & 7 of byte i >> 3) */
static inline void cdc_set_bits(uint8_t* bm, int64_t i0, int64_t n)
{
    int64_t i = i0, e = i0 + n;
    while (i < e && (i & 7)) {
        bm[i >> 3] |= (uint8_t)(1 << (i & 7));
        i++;
    }
    if (e - i >= 8) {
        memset(bm + (i >> 3), 0xFF, (size_t)((e - i) >> 3));
        i += (e - i) & ~(int64_t)7;
    }
    while (i < e) {
        bm[i >> 3] |= (uint8_t)(1 << (i & 7));
        i++;
    }
}

/* Validity bits row0 … row0 + k - 1 set (OR) where the value is not empty: offs[r + 1] >
 * offs[r] (Arrow offsets). Columns whose values are null exactly where they are empty (blank
 * text) take their validity from their offsets, 8 rows a compare. */
static inline void cdc_valid_nonempty(const int32_t* offs, int64_t row0, int64_t k,
                                      uint8_t* valid)
{
    int64_t r = row0, e = row0 + k;
    for (; r < e && (r & 7); r++)
        valid[r >> 3] |= (uint8_t)((offs[r + 1] > offs[r]) << (r & 7));
#if defined(__SSE2__)
    for (; r + 8 <= e; r += 8) {
        const __m128i a0 = _mm_loadu_si128((const __m128i*)(offs + r));
        const __m128i a1 = _mm_loadu_si128((const __m128i*)(offs + r + 4));
        const __m128i b0 = _mm_loadu_si128((const __m128i*)(offs + r + 1));
        const __m128i b1 = _mm_loadu_si128((const __m128i*)(offs + r + 5));
        const __m128i g = _mm_packs_epi32(_mm_cmpgt_epi32(b0, a0), _mm_cmpgt_epi32(b1, a1));
        valid[r >> 3] |= (uint8_t)_mm_movemask_epi8(_mm_packs_epi16(g, g));
    }
#endif
    for (; r < e; r++)
        valid[r >> 3] |= (uint8_t)((offs[r + 1] > offs[r]) << (r & 7));
}

/* the lowest set bit's index (x != 0) */
#define cdc_ctz(x) __builtin_ctzll(x)

/* 8 bytes of a bitmap as one word, bit i = bit (i & 7) of byte i >> 3 */
static inline uint64_t cdc_load_le64(const uint8_t* p)
{
    uint64_t w;
    memcpy(&w, p, 8);
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
    w = __builtin_bswap64(w);
#endif
    return w;
}

#endif
