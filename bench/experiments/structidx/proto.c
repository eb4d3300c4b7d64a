/* structidx prototype: simdjson-style stage 1 (structural index) + index-driven stage 2,
 * against a one-pass walker doing the same stage-2 work, for Debezium JSONL.
 * Build: gcc -O3 -march=native -shared -fPIC -o libproto.so proto.c */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <immintrin.h>
#include "cols.h"

/* ---- loading --------------------------------------------------------------------------- */
uint8_t* px_load(const char* path, int64_t* len)
{
    FILE* f = fopen(path, "rb");
    if (!f) return NULL;
    fseek(f, 0, SEEK_END);
    int64_t n = ftell(f);
    fseek(f, 0, SEEK_SET);
    uint8_t* b = (uint8_t*)aligned_alloc(64, (n + 256 + 63) / 64 * 64);
    if (fread(b, 1, n, f) != (size_t)n) { fclose(f); return NULL; }
    fclose(f);
    memset(b + n, 0, (n + 256 + 63) / 64 * 64 - n);
    *len = n;
    return b;
}

void* px_out_new(int64_t maxrows, int64_t maxbytes)
{
    out_t* o = (out_t*)malloc(sizeof(out_t));
    out_init(o, maxrows, maxbytes);
    return o;
}

void px_sums(void* o, double* r) { out_sums((out_t*)o, r); }

/* ---- the floor: newlines -------------------------------------------------------------- */
int64_t px_memchr(const uint8_t* b, int64_t n)
{
    int64_t c = 0;
    const uint8_t* p = b;
    const uint8_t* e = b + n;
    while ((p = (const uint8_t*)memchr(p, '\n', e - p)) != NULL) { c++; p++; }
    return c;
}

/* ---- stage 1 ---------------------------------------------------------------------------- */
typedef struct {
    uint64_t prev_in_string;  /* all ones if the previous block ended inside a string */
    uint64_t prev_odd_bs;     /* 1 if the previous block ended with an odd backslash run */
    uint64_t prev_scalar;     /* 1 if the previous block ended with a non-quote scalar */
} s1_t;

static inline uint64_t odd_backslash_ends(uint64_t bs, uint64_t* prev)
{
    const uint64_t even = 0x5555555555555555ULL, odd = ~even;
    uint64_t start_edges = bs & ~(bs << 1);
    uint64_t even_start_mask = even ^ *prev;
    uint64_t even_starts = start_edges & even_start_mask;
    uint64_t odd_starts = start_edges & ~even_start_mask;
    uint64_t even_carries = bs + even_starts;
    uint64_t odd_carries;
    int ovf = __builtin_add_overflow(bs, odd_starts, &odd_carries);
    odd_carries |= *prev;
    *prev = ovf ? 1 : 0;
    uint64_t even_carry_ends = even_carries & ~bs;
    uint64_t odd_carry_ends = odd_carries & ~bs;
    return (even_carry_ends & odd) | (odd_carry_ends & even);
}

static inline uint64_t prefix_xor(uint64_t x)
{
    return (uint64_t)_mm_cvtsi128_si64(
        _mm_clmulepi64_si128(_mm_set_epi64x(0, (int64_t)x), _mm_set1_epi8((char)0xFF), 0));
}

/* the masks of one 64-byte block: quotes, backslashes, operators, whitespace */
#if defined(__AVX512BW__)
static inline void masks512(const uint8_t* p, int64_t n, uint64_t* q, uint64_t* bs,
                            uint64_t* op, uint64_t* ws)
{
    const __m512i tl = _mm512_broadcast_i32x4(_mm_setr_epi8(8, 0, 0, 0, 0, 0, 0, 0, 0, 16, 18, 4, 1, 20, 0, 0));
    const __m512i th = _mm512_broadcast_i32x4(_mm_setr_epi8(16, 0, 9, 2, 0, 4, 0, 4, 0, 0, 0, 0, 0, 0, 0, 0));
    const __m512i f = _mm512_set1_epi8(0x0F);
    __m512i x = n >= 64 ? _mm512_loadu_si512((const void*)p)
                        : _mm512_maskz_loadu_epi8(n >= 64 ? ~0ULL : ((1ULL << n) - 1), p);
    *q = _mm512_cmpeq_epi8_mask(x, _mm512_set1_epi8('"'));
    *bs = _mm512_cmpeq_epi8_mask(x, _mm512_set1_epi8('\\'));
    __m512i c = _mm512_and_si512(_mm512_shuffle_epi8(tl, _mm512_and_si512(x, f)),
                                 _mm512_shuffle_epi8(th, _mm512_and_si512(_mm512_srli_epi16(x, 4), f)));
    *op = _mm512_test_epi8_mask(c, _mm512_set1_epi8(7));
    *ws = _mm512_test_epi8_mask(c, _mm512_set1_epi8(0x18));
}
#endif

static inline void masks256(const uint8_t* p, int64_t n, uint64_t* q, uint64_t* bs,
                            uint64_t* op, uint64_t* ws)
{
    const __m256i tl = _mm256_setr_epi8(8, 0, 0, 0, 0, 0, 0, 0, 0, 16, 18, 4, 1, 20, 0, 0,
                                        8, 0, 0, 0, 0, 0, 0, 0, 0, 16, 18, 4, 1, 20, 0, 0);
    const __m256i th = _mm256_setr_epi8(16, 0, 9, 2, 0, 4, 0, 4, 0, 0, 0, 0, 0, 0, 0, 0,
                                        16, 0, 9, 2, 0, 4, 0, 4, 0, 0, 0, 0, 0, 0, 0, 0);
    const __m256i f = _mm256_set1_epi8(0x0F);
    uint8_t tmp[64];
    if (n < 64) { memset(tmp, 0, 64); memcpy(tmp, p, n); p = tmp; }
    uint64_t r[4] = {0, 0, 0, 0};
    for (int h = 0; h < 2; h++) {
        __m256i x = _mm256_loadu_si256((const __m256i*)(p + 32 * h));
        __m256i c = _mm256_and_si256(_mm256_shuffle_epi8(tl, _mm256_and_si256(x, f)),
                                     _mm256_shuffle_epi8(th, _mm256_and_si256(_mm256_srli_epi16(x, 4), f)));
        r[0] |= (uint64_t)(uint32_t)_mm256_movemask_epi8(_mm256_cmpeq_epi8(x, _mm256_set1_epi8('"'))) << (32 * h);
        r[1] |= (uint64_t)(uint32_t)_mm256_movemask_epi8(_mm256_cmpeq_epi8(x, _mm256_set1_epi8('\\'))) << (32 * h);
        r[2] |= (uint64_t)(uint32_t)_mm256_movemask_epi8(
                    _mm256_cmpgt_epi8(_mm256_and_si256(c, _mm256_set1_epi8(7)), _mm256_setzero_si256())) << (32 * h);
        r[3] |= (uint64_t)(uint32_t)_mm256_movemask_epi8(
                    _mm256_cmpgt_epi8(_mm256_and_si256(c, _mm256_set1_epi8(0x18)), _mm256_setzero_si256())) << (32 * h);
    }
    *q = r[0]; *bs = r[1]; *op = r[2]; *ws = r[3];
}

/* the structural starts of one block (simdjson's definition) */
static inline uint64_t structurals(s1_t* s, uint64_t q, uint64_t bs, uint64_t op, uint64_t ws)
{
    uint64_t escaped = (bs | s->prev_odd_bs) ? odd_backslash_ends(bs, &s->prev_odd_bs) : 0;
    uint64_t quote = q & ~escaped;
    uint64_t in_string = prefix_xor(quote) ^ s->prev_in_string;
    s->prev_in_string = (uint64_t)((int64_t)in_string >> 63);
    uint64_t string_tail = in_string ^ quote;
    uint64_t scalar = ~(op | ws);
    uint64_t nonquote_scalar = scalar & ~quote;
    uint64_t follows = (nonquote_scalar << 1) | s->prev_scalar;
    s->prev_scalar = nonquote_scalar >> 63;
    return (op | (scalar & ~follows)) & ~string_tail;
}

/* flatteners: the set bits of `bits` as base+position into out; returns the new end */
static inline uint32_t* flatten_tz(uint32_t* out, uint32_t base, uint64_t bits)
{
    int cnt = __builtin_popcountll(bits);
    for (int i = 0; i < 8; i++) { out[i] = base + (uint32_t)_tzcnt_u64(bits); bits = _blsr_u64(bits); }
    if (cnt > 8) {
        for (int i = 8; i < 16; i++) { out[i] = base + (uint32_t)_tzcnt_u64(bits); bits = _blsr_u64(bits); }
        if (cnt > 16) {
            int i = 16;
            do { out[i++] = base + (uint32_t)_tzcnt_u64(bits); bits = _blsr_u64(bits); } while (bits);
        }
    }
    return out + cnt;
}

#if defined(__AVX512F__)
static inline uint32_t* flatten_cmp(uint32_t* out, uint32_t base, uint64_t bits)
{
    const __m512i iota = _mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15);
    if (!bits) return out;
    for (int k = 0; k < 4; k++) {
        __mmask16 m = (__mmask16)(bits >> (16 * k));
        __m512i v = _mm512_add_epi32(_mm512_set1_epi32((int)(base + 16 * k)), iota);
        _mm512_storeu_si512((void*)out, _mm512_maskz_compress_epi32(m, v));
        out += __builtin_popcount(m);
    }
    return out;
}
#endif

/* Stage 1 over buf[a:b) (starts outside any string): the structural index, absolute
 * offsets; returns how many. idx needs room for (b-a) + 64 entries. variant: 0 AVX-512 masks +
 * tzcnt flatten, 1 AVX-512 masks + compress flatten, 2 AVX2 masks + tzcnt flatten. */
#define STAGE1_BODY(MASKS, FLATTEN)                                                        \
    {                                                                                      \
        s1_t s = {0, 0, 0};                                                                \
        uint32_t* out = idx;                                                               \
        for (int64_t i = a; i < b; i += 64) {                                              \
            uint64_t q, bs, op, ws;                                                        \
            int64_t n = b - i;                                                             \
            MASKS(buf + i, n, &q, &bs, &op, &ws);                                          \
            uint64_t st = structurals(&s, q, bs, op, ws);                                  \
            if (n < 64) st &= (1ULL << n) - 1;                                             \
            out = FLATTEN(out, (uint32_t)i, st);                                           \
        }                                                                                  \
        return out - idx;                                                                  \
    }

static int64_t stage1_v0(const uint8_t* buf, int64_t a, int64_t b, uint32_t* idx)
    STAGE1_BODY(masks512, flatten_tz)
static int64_t stage1_v1(const uint8_t* buf, int64_t a, int64_t b, uint32_t* idx)
    STAGE1_BODY(masks512, flatten_cmp)
static int64_t stage1_v2(const uint8_t* buf, int64_t a, int64_t b, uint32_t* idx)
    STAGE1_BODY(masks256, flatten_tz)

static inline int64_t stage1(int variant, const uint8_t* buf, int64_t a, int64_t b, uint32_t* idx)
{
    if (variant == 1) return stage1_v1(buf, a, b, idx);
    if (variant == 2) return stage1_v2(buf, a, b, idx);
    return stage1_v0(buf, a, b, idx);
}

/* a chunk of about `chunk` bytes from a, ending just past a newline (or at n) */
static inline int64_t chunk_end(const uint8_t* buf, int64_t a, int64_t n, int64_t chunk)
{
    int64_t e = a + chunk;
    if (e >= n) return n;
    const uint8_t* nl = (const uint8_t*)memchr(buf + e, '\n', n - e);
    return nl ? nl - buf + 1 : n;
}

static uint32_t* idxbuf = NULL;
static int64_t idxcap = 0;
static uint32_t* idx_room(int64_t need)
{
    if (need > idxcap) {
        free(idxbuf);
        idxcap = need;
        idxbuf = (uint32_t*)aligned_alloc(64, (need * 4 + 63) / 64 * 64);
    }
    return idxbuf;
}

/* stage 1 alone over the file, chunk by chunk; returns the number of structurals */
int64_t px_stage1(const uint8_t* buf, int64_t n, int64_t chunk, int variant)
{
    int64_t total = 0;
    for (int64_t a = 0; a < n;) {
        int64_t b = chunk_end(buf, a, n, chunk);
        uint32_t* idx = idx_room(b - a + 128);
        total += stage1(variant, buf, a, b, idx);
        a = b;
    }
    return total;
}

/* stage 1 over the whole file at once into one index (its size: for the report) */
static uint32_t* wholeidx = NULL;
int64_t px_stage1_whole(const uint8_t* buf, int64_t n, int variant)
{
    free(wholeidx);
    wholeidx = (uint32_t*)aligned_alloc(64, ((n + 128) * 4 + 63) / 64 * 64);
    return stage1(variant, buf, 0, n, wholeidx);
}

/* ---- stage 2 driven by the index ------------------------------------------------------ */
static inline int is_ws(uint8_t c) { return c == ' ' || c == '\n' || c == '\r' || c == '\t'; }

/* the entry past the value whose first structural is entry p */
static inline int64_t ix_skip(const uint8_t* b, const uint32_t* idx, int64_t p)
{
    uint8_t c = b[idx[p]];
    if (c != '{' && c != '[') return p + 1;
    int depth = 1;
    p++;
    do {
        c = b[idx[p++]];
        depth += (c == '{' || c == '[') - (c == '}' || c == ']');
    } while (depth);
    return p;
}

/* value b[v:...) of column j, the next structural at nx */
static inline void ix_value(const uint8_t* b, int64_t v, int64_t nx, out_t* o, int j)
{
    uint8_t c = b[v];
    if (c == 'n') { put_null(o, j); return; }
    switch (o->c[j].kind) {
    case K_INT:
        if (c == '-' || (uint8_t)(c - '0') < 10) { int64_t x; parse_i64(b + v, &x); put_int(o, j, x); }
        else put_null(o, j);
        return;
    case K_DBL:
        if (c == '-' || (uint8_t)(c - '0') < 10) { double d; parse_f64(b + v, &d); put_dbl(o, j, d); }
        else put_null(o, j);
        return;
    case K_BOOL:
        put_bool(o, j, c == 't');
        return;
    default: {
        int64_t e = nx - 1;
        while (is_ws(b[e])) e--;
        if (c == '"') put_str(o, j, b + v + 1, e - v - 1, -1);   /* b[e] is the closing quote */
        else put_str(o, j, b + v, e + 1 - v, 0);
        return;
    }
    }
}

/* the image object whose '{' is entry p; returns the entry past its '}' */
static inline int64_t ix_after(const uint8_t* b, const uint32_t* idx, int64_t p, out_t* o)
{
    int guess = 0;
    p++;
    if (b[idx[p]] == '}') return p + 1;
    for (;;) {
        int64_t k = idx[p] + 1, q;
        int j;
        if (guess < NCOLS && b[k + o->nlen[guess]] == '"' &&
            memcmp(b + k, COL_NAMES[guess], o->nlen[guess]) == 0)
            j = guess;
        else {
            int64_t e = idx[p + 1] - 1;
            while (is_ws(b[e])) e--;
            j = col_lookup(o, b + k, e - k);
        }
        int64_t v = idx[p + 2];
        if (j >= 0) {
            guess = j + 1;
            ix_value(b, v, idx[p + 3], o, j);
            q = p + 3;
        } else
            q = ix_skip(b, idx, p + 2);
        if (b[idx[q]] == ',') { p = q + 1; continue; }
        return q + 1;
    }
}

/* when set, "before" images are converted too, into these columns (else skipped) */
static out_t* before_out = NULL;
void px_set_before(void* o2) { before_out = (out_t*)o2; if (before_out) out_reset(before_out); }

/* the document whose '{' is entry p */
static inline int64_t ix_doc(const uint8_t* b, const uint32_t* idx, int64_t p, out_t* o)
{
    if (b[idx[p]] != '{') return ix_skip(b, idx, p);
    p++;
    if (b[idx[p]] == '}') return p + 1;
    for (;;) {
        int64_t k = idx[p] + 1, v = idx[p + 2], q;
        if (b[k] == 'a' && memcmp(b + k, "after\"", 6) == 0) {
            if (b[v] == '{') q = ix_after(b, idx, p + 2, o);
            else q = ix_skip(b, idx, p + 2);
            row_end(o);
            if (before_out) row_end(before_out);
        } else if (before_out && b[k] == 'b' && b[v] == '{' && memcmp(b + k, "before\"", 7) == 0)
            q = ix_after(b, idx, p + 2, before_out);
        else
            q = ix_skip(b, idx, p + 2);
        if (b[idx[q]] == ',') { p = q + 1; continue; }
        return q + 1;
    }
}

/* stage 1 + stage 2, chunk by chunk; returns rows */
int64_t px_index(const uint8_t* buf, int64_t n, int64_t chunk, void* vo, int variant)
{
    out_t* o = (out_t*)vo;
    out_reset(o);
    if (before_out) out_reset(before_out);
    for (int64_t a = 0; a < n;) {
        int64_t b = chunk_end(buf, a, n, chunk);
        uint32_t* idx = idx_room(b - a + 128);
        int64_t m = stage1(variant, buf, a, b, idx);
        idx[m] = (uint32_t)n;   /* a sentinel (buf[n] is 0) */
        for (int64_t p = 0; p < m;) p = ix_doc(buf, idx, p, o);
        a = b;
    }
    return o->rows;
}

/* stage 2 alone, over an index of the whole file made beforehand by px_stage1_whole */
int64_t px_stage2_only(const uint8_t* buf, int64_t n, int64_t m, void* vo)
{
    out_t* o = (out_t*)vo;
    out_reset(o);
    wholeidx[m] = (uint32_t)n;
    for (int64_t p = 0; p < m;) p = ix_doc(buf, wholeidx, p, o);
    return o->rows;
}

/* ---- one-pass walkers (no index) -------------------------------------------------------- */
/* string end scanners: the closing quote of the string whose body starts at i; *esc set if a
 * backslash is met. Three widths: bytewise, SSE2 16 B (what cdcfast's kernels use), AVX2 32 B */
static inline int64_t send_byte(const uint8_t* b, int64_t i, int* esc)
{
    for (;;) {
        uint8_t c = b[i];
        if (c == '"') return i;
        if (c == '\\') { *esc = 1; i += 2; continue; }
        i++;
    }
}
static inline int64_t send_sse(const uint8_t* b, int64_t i, int* esc)
{
    const __m128i q = _mm_set1_epi8('"'), bs = _mm_set1_epi8('\\');
    for (;;) {
        __m128i x = _mm_loadu_si128((const __m128i*)(b + i));
        unsigned m = (unsigned)_mm_movemask_epi8(_mm_or_si128(_mm_cmpeq_epi8(x, q), _mm_cmpeq_epi8(x, bs)));
        if (!m) { i += 16; continue; }
        i += __builtin_ctz(m);
        if (b[i] == '"') return i;
        *esc = 1;
        i += 2;
    }
}
static inline int64_t send_avx2(const uint8_t* b, int64_t i, int* esc)
{
    const __m256i q = _mm256_set1_epi8('"'), bs = _mm256_set1_epi8('\\');
    for (;;) {
        __m256i x = _mm256_loadu_si256((const __m256i*)(b + i));
        unsigned m = (unsigned)_mm256_movemask_epi8(_mm256_or_si256(_mm256_cmpeq_epi8(x, q), _mm256_cmpeq_epi8(x, bs)));
        if (!m) { i += 32; continue; }
        i += __builtin_ctz(m);
        if (b[i] == '"') return i;
        *esc = 1;
        i += 2;
    }
}

#define SEND send_byte
#define SFX _byte
#include "onepass.inc"
#undef SEND
#undef SFX
#define SEND send_sse
#define SFX _sse
#include "onepass.inc"
#undef SEND
#undef SFX
#define SEND send_avx2
#define SFX _avx2
#include "onepass.inc"

int64_t px_onepass(const uint8_t* buf, int64_t n, void* vo, int variant)
{
    if (variant == 0) return op_run_byte(buf, n, (out_t*)vo);
    if (variant == 2) return op_run_avx2(buf, n, (out_t*)vo);
    return op_run_sse(buf, n, (out_t*)vo);
}

/* ---- stage 1 self-check against a scalar definition ----------------------------------- */
int64_t px_check_stage1(const uint8_t* buf, int64_t n, int variant)
{
    uint32_t* idx = idx_room(n + 128);
    int64_t m = stage1(variant, buf, 0, n, idx);
    /* scalar: outside strings, every op, and the first byte of each scalar/string */
    int64_t k = 0, bad = 0;
    int in = 0, prev_scalar = 0;
    for (int64_t i = 0; i < n; i++) {
        uint8_t c = buf[i];
        if (in) {
            if (c == '\\') { i++; continue; }
            if (c == '"') in = 0;
            prev_scalar = 0;
            continue;
        }
        int st = 0;
        if (c == '{' || c == '}' || c == '[' || c == ']' || c == ':' || c == ',') { st = 1; prev_scalar = 0; }
        else if (is_ws(c)) prev_scalar = 0;
        else if (c == '"') { st = 1; in = 1; prev_scalar = 0; }
        else { st = !prev_scalar; prev_scalar = 1; }
        if (st) {
            if (k >= m || idx[k] != (uint32_t)i) { if (bad < 5) fprintf(stderr, "mismatch at entry %lld: %lld vs %u\n", (long long)k, (long long)i, k < m ? idx[k] : 0); bad++; }
            k++;
        }
    }
    if (k != m) { fprintf(stderr, "count %lld vs %lld\n", (long long)k, (long long)m); bad++; }
    return bad ? -bad : m;
}

/* ---- navigation only (no conversion): every document's end found structurally ------------ */
int64_t px_index_nav(const uint8_t* buf, int64_t n, int64_t chunk, int variant)
{
    int64_t docs = 0;
    for (int64_t a = 0; a < n;) {
        int64_t b = chunk_end(buf, a, n, chunk);
        uint32_t* idx = idx_room(b - a + 128);
        int64_t m = stage1(variant, buf, a, b, idx);
        idx[m] = (uint32_t)n;
        for (int64_t p = 0; p < m; docs++) p = ix_skip(buf, idx, p);
        a = b;
    }
    return docs;
}

int64_t px_onepass_nav(const uint8_t* b, int64_t n)
{
    int64_t i = 0, docs = 0;
    for (;;) {
        i = op_ws_sse(b, i);
        if (i >= n) break;
        i = op_skip_sse(b, i);
        docs++;
    }
    return docs;
}
