/* Byte moves for the kernels' hot loops. */
#ifndef CDCFAST_BYTES_H
#define CDCFAST_BYTES_H

#include <stdint.h>
#include <string.h>
#if defined(__SSE2__)
#include <emmintrin.h>
#endif

/* Copy n bytes from src to dst in 16-byte moves and tell whether they are all ASCII (1/0).
 * Moves past n: the caller guarantees that src may be read, and dst written, up to 15 bytes
 * beyond n (a value's text inside a bigger input; an output buffer reserved with slack).
 * A libc memcpy call costs more than the whole copy of a short field. */
static inline int cdc_copy_ascii(const uint8_t* src, int64_t n, uint8_t* dst)
{
#if defined(__SSE2__)
    int64_t i = 0;
    int high = 0;
    for (; i + 16 <= n; i += 16) {
        __m128i x = _mm_loadu_si128((const __m128i*)(src + i));
        _mm_storeu_si128((__m128i*)(dst + i), x);
        high |= _mm_movemask_epi8(x);
    }
    if (i < n) {
        __m128i x = _mm_loadu_si128((const __m128i*)(src + i));
        _mm_storeu_si128((__m128i*)(dst + i), x);
        high |= _mm_movemask_epi8(x) & ((1 << (n - i)) - 1);
    }
    return high == 0;
#else
    uint8_t high = 0;
    memcpy(dst, src, (size_t)n);
    for (int64_t i = 0; i < n; i++)
        high |= src[i];
    return high < 0x80;
#endif
}

#endif
