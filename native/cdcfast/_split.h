/* Splitting one delimited record into fields, 64 bytes at a time.
 *
 * simdjson's stage 1 applied to delimited text: compare a 64-byte block against the string,
 * column and record delimiters at once, giving three 64-bit masks; the string delimiters'
 * prefix XOR marks the bytes inside strings (a doubled delimiter closes and reopens the string,
 * so it needs no special case); the column and record delimiters outside strings are the field
 * ends, walked one set bit at a time. The quoting rules are checked on the masks too: an
 * opening delimiter only at a field start (or right after a closing one: a doubled pair), a
 * closing one only before a field end (or an opening one). A record that breaks any rule, or
 * whose string runs to the end of its message, is handed back (CDC_SPLIT_SLOW) to the
 * byte-by-byte splitter in _ibm.pyx, which finds the exact error and its position; so this
 * path only ever accepts what that one accepts, with the same fields and flags.
 */
#ifndef CDCFAST_SPLIT_H
#define CDCFAST_SPLIT_H

#include <stdint.h>
#include <string.h>
#if defined(__SSE2__)
#include <emmintrin.h>
#endif
#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#define CDC_HAVE_AVX2_PATH 1
#endif

#define CDC_SPLIT_ROOM (-1)      /* more fields than room: grow the index and split again */
#define CDC_SPLIT_SLOW (-2)      /* not a clean record: split it byte by byte */

/* field flags, as _ibm.pyx declares them */
#define CDC_F_QUOTED 1
#define CDC_F_ESCAPED 2
#define CDC_F_NULL 4

/* Bit i of *a, *b, *c: p[i] equals a, b, c. */
static inline __attribute__((always_inline)) void cdc_eq3(const uint8_t* p, uint8_t a, uint8_t b, uint8_t c,
                           uint64_t* ma, uint64_t* mb, uint64_t* mc)
{
#if defined(__SSE2__)
    const __m128i va = _mm_set1_epi8((char)a), vb = _mm_set1_epi8((char)b),
                  vc = _mm_set1_epi8((char)c);
    uint64_t ra = 0, rb = 0, rc = 0;
    for (int i = 0; i < 4; i++) {
        __m128i x = _mm_loadu_si128((const __m128i*)(p + 16 * i));
        ra |= (uint64_t)(uint32_t)_mm_movemask_epi8(_mm_cmpeq_epi8(x, va)) << (16 * i);
        rb |= (uint64_t)(uint32_t)_mm_movemask_epi8(_mm_cmpeq_epi8(x, vb)) << (16 * i);
        rc |= (uint64_t)(uint32_t)_mm_movemask_epi8(_mm_cmpeq_epi8(x, vc)) << (16 * i);
    }
    *ma = ra; *mb = rb; *mc = rc;
#else
    uint64_t ra = 0, rb = 0, rc = 0;
    for (int i = 0; i < 64; i++) {
        ra |= (uint64_t)(p[i] == a) << i;
        rb |= (uint64_t)(p[i] == b) << i;
        rc |= (uint64_t)(p[i] == c) << i;
    }
    *ma = ra; *mb = rb; *mc = rc;
#endif
}

/* Bit i of the result: the XOR of bits 0..i of x (1 from an opening delimiter on, 0 from the
 * closing one on). */
static inline uint64_t cdc_prefix_xor(uint64_t x)
{
    x ^= x << 1;
    x ^= x << 2;
    x ^= x << 4;
    x ^= x << 8;
    x ^= x << 16;
    x ^= x << 32;
    return x;
}

#ifdef CDC_HAVE_AVX2_PATH
/* The same with 32-byte compares, and the prefix XOR as one carry-less multiply. */
__attribute__((target("avx2,pclmul"))) static inline void cdc_eq3_avx2(
    const uint8_t* p, uint8_t a, uint8_t b, uint8_t c, uint64_t* ma, uint64_t* mb,
    uint64_t* mc)
{
    const __m256i va = _mm256_set1_epi8((char)a), vb = _mm256_set1_epi8((char)b),
                  vc = _mm256_set1_epi8((char)c);
    __m256i lo = _mm256_loadu_si256((const __m256i*)p);
    __m256i hi = _mm256_loadu_si256((const __m256i*)(p + 32));
    *ma = (uint64_t)(uint32_t)_mm256_movemask_epi8(_mm256_cmpeq_epi8(lo, va))
        | (uint64_t)(uint32_t)_mm256_movemask_epi8(_mm256_cmpeq_epi8(hi, va)) << 32;
    *mb = (uint64_t)(uint32_t)_mm256_movemask_epi8(_mm256_cmpeq_epi8(lo, vb))
        | (uint64_t)(uint32_t)_mm256_movemask_epi8(_mm256_cmpeq_epi8(hi, vb)) << 32;
    *mc = (uint64_t)(uint32_t)_mm256_movemask_epi8(_mm256_cmpeq_epi8(lo, vc))
        | (uint64_t)(uint32_t)_mm256_movemask_epi8(_mm256_cmpeq_epi8(hi, vc)) << 32;
}

__attribute__((target("avx2,pclmul"))) static inline uint64_t cdc_prefix_xor_clmul(uint64_t x)
{
    __m128i all = _mm_set1_epi8((char)0xFF);
    return (uint64_t)_mm_cvtsi128_si64(
        _mm_clmulepi64_si128(_mm_set_epi64x(0, (long long)x), all, 0));
}
#endif

typedef void (*cdc_eq3_fn)(const uint8_t*, uint8_t, uint8_t, uint8_t, uint64_t*, uint64_t*,
                           uint64_t*);
typedef uint64_t (*cdc_pxor_fn)(uint64_t);

/* Split the record starting at p (p < end) into fields: their starts, ends and flags, at
 * most `room` of them (wanting room for 64 more at each block). `end` is the message end (a record ends there without a delimiter);
 * `limit` is the end of the readable buffer (blocks near it are copied, never read past it).
 * Returns the record delimiter's position (or `end`), CDC_SPLIT_ROOM or CDC_SPLIT_SLOW;
 * *esc gets the longest escaped field's span (room to unescape it). */
static inline __attribute__((always_inline)) int64_t cdc_split_body(
    const uint8_t* d, int64_t p, int64_t end, int64_t limit, uint8_t sd, uint8_t cd,
    uint8_t rd, int64_t* fs, int64_t* fe, uint8_t* ffl, int64_t room, int64_t* nf_out,
    int64_t* esc, cdc_eq3_fn eq3, cdc_pxor_fn pxor)
{
    uint8_t buf[64];
    int64_t nf = 0, fstart = p, b = p, maxesc = 0;
    uint64_t in = 0;            /* all ones: the block starts inside a string */
    uint64_t start_ok = 1;      /* bit 0: the byte before the block ends a field (or none) */
    uint64_t close_due = 0;     /* the block before ended on a closing delimiter */
    int esc_open = 0;           /* the field still open holds a doubled delimiter */
    for (;;) {
        const uint8_t* blk = d + b;
        int64_t n = end - b;
        if (b + 64 > limit) {
            memset(buf, 0, 64);
            memcpy(buf, d + b, (size_t)(limit - b));
            blk = buf;
        }
        uint64_t Q, C, R;
        eq3(blk, sd, cd, rd, &Q, &C, &R);
        uint64_t live = n >= 64 ? ~0ULL : ((1ULL << n) - 1);
        Q &= live;
        uint64_t inside = (Q ? pxor(Q) : 0) ^ in;
        uint64_t S = (C | R) & live & ~inside;
        uint64_t RR = R & S;
        uint64_t keep = live;
        if (RR) {                               /* the record ends here: drop what follows */
            uint64_t first = RR & (0 - RR);
            keep = first | (first - 1);
            S &= keep;
            RR = first;
        }
        Q &= keep;
        uint64_t open = Q & inside, close = Q & ~inside;
        /* an opening delimiter follows a field end, a closing delimiter or the record start */
        if (open & ~((S << 1) | (close << 1) | start_ok))
            return CDC_SPLIT_SLOW;
        /* a closing delimiter precedes a field end, an opening delimiter or the message end */
        if (close_due) {
            if (!((S | open) & 1))
                return CDC_SPLIT_SLOW;
            esc_open |= (int)(open & 1);        /* a doubled pair across the block edge */
        }
        uint64_t follows = (S >> 1) | (open >> 1) | (1ULL << 63);
        if (n <= 64 && !RR)
            follows |= 1ULL << (n - 1);
        if (close & ~follows)
            return CDC_SPLIT_SLOW;
        uint64_t dq = close & (open >> 1);      /* the first of each doubled pair */
        uint64_t last_ends = (S | close) >> 63; /* the block's last byte ends a field */
        if (nf + 64 > room)                     /* room for any block's fields */
            return CDC_SPLIT_ROOM;
        if (!(dq | (uint64_t)esc_open)) {
            /* no doubled delimiter: the common case, without a branch on the data */
            while (S) {
                int64_t pos = b + __builtin_ctzll(S);
                fs[2 * nf] = fstart;
                fe[2 * nf] = pos;
                /* an empty field's first byte is its delimiter, never the string delimiter */
                ffl[nf] = (uint8_t)((pos == fstart) * CDC_F_NULL
                                    | (d[fstart] == sd) * CDC_F_QUOTED);
                nf++;
                fstart = pos + 1;
                S &= S - 1;
            }
        }
        while (S) {
            int k = __builtin_ctzll(S);
            int64_t pos = b + k;
            uint64_t below = (1ULL << k) - 1;
            uint8_t fl = (uint8_t)((pos == fstart) * CDC_F_NULL
                                   | (d[fstart] == sd) * CDC_F_QUOTED);
            if (esc_open | ((dq & below) != 0)) {
                fl |= CDC_F_ESCAPED;
                if (pos - fstart > maxesc)
                    maxesc = pos - fstart;
            }
            dq &= ~below;
            esc_open = 0;
            fs[2 * nf] = fstart;
            fe[2 * nf] = pos;
            ffl[nf] = fl;
            nf++;
            fstart = pos + 1;
            S &= S - 1;
        }
        if (RR) {
            *nf_out = nf;
            *esc = maxesc;
            return fstart - 1;
        }
        esc_open |= dq != 0;
        if (n <= 64) {                          /* the message ends the record */
            if (inside >> (n - 1) & 1)
                return CDC_SPLIT_SLOW;          /* unterminated string */
            if (nf >= room)
                return CDC_SPLIT_ROOM;
            uint8_t fl = end == fstart ? CDC_F_NULL : (d[fstart] == sd ? CDC_F_QUOTED : 0);
            if (esc_open) {
                fl |= CDC_F_ESCAPED;
                if (end - fstart > maxesc)
                    maxesc = end - fstart;
            }
            fs[2 * nf] = fstart;
            fe[2 * nf] = end;
            ffl[nf] = fl;
            *nf_out = nf + 1;
            *esc = maxesc;
            return end;
        }
        in = 0 - (inside >> 63);
        start_ok = last_ends;
        close_due = close >> 63;
        b += 64;
    }
}

static int64_t cdc_split_base(const uint8_t* d, int64_t p, int64_t end, int64_t limit,
                              uint8_t sd, uint8_t cd, uint8_t rd, int64_t* fs, int64_t* fe,
                              uint8_t* ffl, int64_t room, int64_t* nf_out, int64_t* esc)
{
    return cdc_split_body(d, p, end, limit, sd, cd, rd, fs, fe, ffl, room, nf_out, esc,
                          cdc_eq3, cdc_prefix_xor);
}

#ifdef CDC_HAVE_AVX2_PATH
__attribute__((target("avx2,pclmul")))
static int64_t cdc_split_avx2(const uint8_t* d, int64_t p, int64_t end, int64_t limit,
                              uint8_t sd, uint8_t cd, uint8_t rd, int64_t* fs, int64_t* fe,
                              uint8_t* ffl, int64_t room, int64_t* nf_out, int64_t* esc)
{
    return cdc_split_body(d, p, end, limit, sd, cd, rd, fs, fe, ffl, room, nf_out, esc,
                          cdc_eq3_avx2, cdc_prefix_xor_clmul);
}
#endif

typedef int64_t (*cdc_split_fn)(const uint8_t*, int64_t, int64_t, int64_t, uint8_t, uint8_t,
                                uint8_t, int64_t*, int64_t*, uint8_t*, int64_t, int64_t*,
                                int64_t*);

/* The splitter for this CPU: AVX2 where it has it (checked once, at import). */
static cdc_split_fn cdc_split_choose(int allow_avx2)
{
#ifdef CDC_HAVE_AVX2_PATH
    if (allow_avx2 && __builtin_cpu_supports("avx2") && __builtin_cpu_supports("pclmul"))
        return cdc_split_avx2;
#endif
    (void)allow_avx2;
    return cdc_split_base;
}

/* Which splitter cdc_split_choose picked: 2 AVX2, 1 the portable one. */
static int cdc_split_level(cdc_split_fn f)
{
#ifdef CDC_HAVE_AVX2_PATH
    if (f == cdc_split_avx2)
        return 2;
#endif
    (void)f;
    return 1;
}

#endif
