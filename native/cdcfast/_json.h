/* Strict JSON (RFC 8259) well-formedness for the JSON change events (Debezium,
 * OpenLogReplicator, Qlik): one document scanned left to right, iteratively (a bit per open
 * bracket, 512 levels), its first problem reported as a code and a byte offset, the same ones
 * the pure-Python twin (cdcfast/reference/_jsonscan.py) reports, so that native and reference
 * decoders name the same error. Also the string helpers the decoder needs once a document is
 * known good: unescaping, and base64 (binary columns).
 *
 * Every function gets its buffer as (buf, pos, end) offsets, or (p, n), and reads nothing at
 * or past end: a document may be the last bytes of a mapped file.
 *
 * Which error is reported: the grammar scan runs first and stops at its first problem, at g
 * (E_TRUNCATED: g = end). Then the bytes [start, g) are checked as UTF-8 (on success the bytes
 * [start, doc_end)); if they hold an invalid sequence, E_UTF8 at its first byte u wins (so
 * u < g always). A byte past 0x7F outside a string is itself a grammar error (E_UNEXPECTED at
 * it) and is not in [start, g): it stays E_UNEXPECTED. Since the grammar never stops inside a
 * multi-byte sequence (it stops only at ASCII bytes, at such a byte outside strings, or at
 * end), the first invalid sequence of [start, g) is the first one of the whole buffer that
 * starts before g, and a sequence cut by the end of the input is E_UTF8 at its lead byte.
 */
#ifndef CDCFAST_JSON_H
#define CDCFAST_JSON_H

#include <stdint.h>
#include <string.h>

#include "cdcfast/_num.h"
#if defined(__SSE2__)
#include <emmintrin.h>
#endif

/* the same numbers as in cdcfast/reference/_jsonscan.py */
enum {
    CDC_JSON_OK = 0,
    CDC_JSON_E_TRUNCATED = 1,   /* the input ends inside a value; at end */
    CDC_JSON_E_UNEXPECTED = 2,  /* a byte that cannot come here; at it (a literal: its first) */
    CDC_JSON_E_CONTROL = 3,     /* a raw byte below 0x20 in a string; at it */
    CDC_JSON_E_ESCAPE = 4,      /* a bad escape; at its backslash */
    CDC_JSON_E_UTF8 = 5,        /* invalid UTF-8; where Python's decode reports it */
    CDC_JSON_E_NUMBER = 6,      /* a run of number bytes that is no number; at its first */
    CDC_JSON_E_DEPTH = 7,       /* the bracket that opens level 513; at it */
    CDC_JSON_E_TRAILING = 8,    /* more than whitespace after the document; at it */
};

#define CDC_JSON_MAX_DEPTH 512

static inline int cdc_json_is_ws(uint8_t c)
{
    /* one test for the common case, a byte above the space (compact JSON has no whitespace) */
    return c <= ' ' && (c == ' ' || c == '\n' || c == '\r' || c == '\t');
}

static inline int cdc_json_is_digit(uint8_t c)
{
    return (uint8_t)(c - '0') < 10;
}

/* the bytes a number token runs over (E_NUMBER takes the whole run, as "1.2.3" or "1e5.3") */
static inline int cdc_json_is_numch(uint8_t c)
{
    return cdc_json_is_digit(c) || c == '-' || c == '+' || c == '.' || c == 'e' || c == 'E';
}

/* what may follow a number or a literal: without it "truex" or "1x" would be a word */
static inline int cdc_json_is_delim(uint8_t c)
{
    return cdc_json_is_ws(c) || c == ',' || c == '}' || c == ']';
}

static inline int64_t cdc_json_ws(const uint8_t* buf, int64_t pos, int64_t end)
{
    while (pos < end && cdc_json_is_ws(buf[pos]))
        pos++;
    return pos;
}

/* The offset of the first '"', '\\' or byte below 0x20 in buf[i:end), or end; 16 bytes a
 * test, the last ones as the 16 before end when there are that many from buf on (buf[0:end]
 * is the caller's, all of it readable), else byte by byte. *high gets a bit set if a byte
 * past 0x7F lies before it (or after it in its 16 bytes: the flag only spares a UTF-8 check,
 * one check too many is no error). */
static inline int64_t cdc_json_stop(const uint8_t* buf, int64_t i, int64_t end, unsigned* high)
{
#if defined(__SSE2__)
    const __m128i q = _mm_set1_epi8('"'), bs = _mm_set1_epi8('\\'), ctl = _mm_set1_epi8(0x1F);
    __m128i hi = _mm_setzero_si128(), x;
    unsigned m;
    for (; end - i >= 16; i += 16) {
        x = _mm_loadu_si128((const __m128i*)(buf + i));
        hi = _mm_or_si128(hi, x);
        /* min(x, 0x1F) == x: x <= 0x1F unsigned (SSE2 has only signed compares) */
        m = (unsigned)_mm_movemask_epi8(_mm_or_si128(
            _mm_or_si128(_mm_cmpeq_epi8(x, q), _mm_cmpeq_epi8(x, bs)),
            _mm_cmpeq_epi8(_mm_min_epu8(x, ctl), x)));
        if (m) {
            *high |= (unsigned)_mm_movemask_epi8(hi);
            return i + __builtin_ctz(m);
        }
    }
    *high |= (unsigned)_mm_movemask_epi8(hi);
    if (i < end && end >= 16) {
        /* the buffer's last 16 bytes, those before i shifted out: no read past end */
        const int s = (int)(16 - (end - i));
        x = _mm_loadu_si128((const __m128i*)(buf + end - 16));
        m = (unsigned)_mm_movemask_epi8(_mm_or_si128(
            _mm_or_si128(_mm_cmpeq_epi8(x, q), _mm_cmpeq_epi8(x, bs)),
            _mm_cmpeq_epi8(_mm_min_epu8(x, ctl), x))) >> s;
        *high |= (unsigned)_mm_movemask_epi8(x) >> s;
        return m ? i + __builtin_ctz(m) : end;
    }
#endif
    for (; i < end; i++) {
        const uint8_t c = buf[i];
        if (c == '"' || c == '\\' || c < 0x20)
            return i;
        *high |= c >> 7;
    }
    return end;
}

/* cdc_json_string_end, with *high as in cdc_json_stop. *has_escape is only ever set. */
static inline int64_t cdc_json_string_scan(const uint8_t* buf, int64_t pos, int64_t end,
                                           int* has_escape, unsigned* high, int* code,
                                           int64_t* err_pos)
{
    int64_t i = pos;
    for (;;) {
        i = cdc_json_stop(buf, i, end, high);
        if (i >= end)
            break;
        const uint8_t c = buf[i];
        if (c == '"')
            return i;
        if (c < 0x20) {
            *code = CDC_JSON_E_CONTROL;
            *err_pos = i;
            return -1;
        }
        *has_escape = 1;
        if (i + 1 >= end)
            break;
        switch (buf[i + 1]) {
        case '"': case '\\': case '/': case 'b': case 'f': case 'n': case 'r': case 't':
            i += 2;
            continue;
        case 'u':
            for (int k = 2; k < 6; k++) {
                if (i + k >= end)
                    goto truncated;
                if (cdc_hexv(buf[i + k]) < 0)
                    goto bad_escape;
            }
            i += 6;     /* a lone surrogate passes: RFC 8259 allows it, its use may not */
            continue;
        default:
            goto bad_escape;
        }
    }
truncated:
    *code = CDC_JSON_E_TRUNCATED;
    *err_pos = end;
    return -1;
bad_escape:
    *code = CDC_JSON_E_ESCAPE;
    *err_pos = i;
    return -1;
}

/* The offset of the quote that closes the string whose first byte (after its opening quote)
 * is at pos, its escapes checked (not its UTF-8: cdc_utf8_first_invalid); *has_escape: 1 if
 * it has a backslash. -1 with *code and *err_pos on a raw byte below 0x20, a bad escape, or
 * the end of the input first. */
static inline int64_t cdc_json_string_end(const uint8_t* buf, int64_t pos, int64_t end,
                                          int* has_escape, int* code, int64_t* err_pos)
{
    unsigned high = 0;
    *has_escape = 0;
    return cdc_json_string_scan(buf, pos, end, has_escape, &high, code, err_pos);
}

static inline int64_t cdc_json_digits(const uint8_t* buf, int64_t i, int64_t end)
{
    return cdc_digit_run(buf, i, end);
}

/* The end of the number at pos (a '-' or a digit there), or -1 when the run of number bytes
 * from pos is not -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)? as a whole: each step of
 * that grammar is forced, so the run matches it exactly when the steps take all of it. */
static inline int64_t cdc_json_number_end(const uint8_t* buf, int64_t pos, int64_t end)
{
    int64_t i = pos + (buf[pos] == '-');
    if (i >= end || !cdc_json_is_digit(buf[i]))
        return -1;
    if (buf[i++] != '0')
        i = cdc_json_digits(buf, i, end);
    if (i < end && buf[i] == '.') {
        if (++i >= end || !cdc_json_is_digit(buf[i]))
            return -1;
        i = cdc_json_digits(buf, i + 1, end);
    }
    if (i < end && (buf[i] | 0x20) == 'e') {
        i++;
        if (i < end && (buf[i] == '+' || buf[i] == '-'))
            i++;
        if (i >= end || !cdc_json_is_digit(buf[i]))
            return -1;
        i = cdc_json_digits(buf, i + 1, end);
    }
    return i < end && cdc_json_is_numch(buf[i]) ? -1 : i;
}

/* cdc_json_value_end, with *high as in cdc_json_stop (for the UTF-8 rule of the document),
 * for a value nested so that at most max_depth (<= CDC_JSON_MAX_DEPTH) brackets may open in
 * it. The open brackets as bits, 1 for an object, in 8 words: no recursion, so a deep
 * document cannot take the stack. */
static inline int64_t cdc_json_value_scan_d(const uint8_t* buf, int64_t pos, int64_t end,
                                            int max_depth, unsigned* high, int* code,
                                            int64_t* err_pos)
{
    uint64_t is_obj[CDC_JSON_MAX_DEPTH / 64];
    int depth = 0, esc = 0;
    int64_t i = pos, r;
    uint8_t c;

value:  /* a value starts at i */
    if (i >= end)
        goto truncated;
    c = buf[i];
    switch (c) {
    case '{':
    case '[':
        if (depth == max_depth) {
            *code = CDC_JSON_E_DEPTH;
            *err_pos = i;
            return -1;
        }
        if (c == '{')
            is_obj[depth >> 6] |= 1ULL << (depth & 63);
        else
            is_obj[depth >> 6] &= ~(1ULL << (depth & 63));
        depth++;
        i = cdc_json_ws(buf, i + 1, end);
        if (i >= end)
            goto truncated;
        if (buf[i] == c + 2) {      /* '{' + 2 == '}', '[' + 2 == ']' */
            i++;
            depth--;
            goto after;
        }
        if (c == '{')
            goto key;
        goto value;
    case '"':
        r = cdc_json_string_scan(buf, i + 1, end, &esc, high, code, err_pos);
        if (r < 0)
            return -1;
        i = r + 1;
        goto after;
    case 't': case 'f': case 'n': {
        const char* lit = c == 't' ? "true" : c == 'f' ? "false" : "null";
        const int len = c == 'f' ? 5 : 4;
        if (end - i >= 5) {     /* the last 4 bytes as one word, the first is c */
            uint32_t have, want;
            memcpy(&have, buf + i + len - 4, 4);
            memcpy(&want, lit + len - 4, 4);
            if (have != want)
                goto unexpected;
            i += len;
            goto scalar;
        }
        for (int k = 1; k < len; k++) {
            if (i + k >= end)
                goto truncated;
            if (buf[i + k] != (uint8_t)lit[k])
                goto unexpected;    /* at the literal's first byte */
        }
        i += len;
        goto scalar;
    }
    default:
        if (c != '-' && !cdc_json_is_digit(c))
            goto unexpected;
        r = cdc_json_number_end(buf, i, end);
        if (r < 0) {
            *code = CDC_JSON_E_NUMBER;
            *err_pos = i;
            return -1;
        }
        i = r;
        goto scalar;
    }

scalar: /* a number or literal ended at i */
    if (i < end && !cdc_json_is_delim(buf[i]))
        goto unexpected;
after:  /* a value ended at i */
    if (depth == 0)
        return i;
    i = cdc_json_ws(buf, i, end);
    if (i >= end)
        goto truncated;
    c = buf[i];
    if (c == ',') {
        i = cdc_json_ws(buf, i + 1, end);
        if (is_obj[(depth - 1) >> 6] >> ((depth - 1) & 63) & 1) {
            if (i >= end)
                goto truncated;
            goto key;
        }
        goto value;
    }
    if (c == ((is_obj[(depth - 1) >> 6] >> ((depth - 1) & 63) & 1) ? '}' : ']')) {
        i++;
        depth--;
        goto after;
    }
    goto unexpected;

key:    /* a member's name starts at i (< end) */
    if (buf[i] != '"')
        goto unexpected;
    r = cdc_json_string_scan(buf, i + 1, end, &esc, high, code, err_pos);
    if (r < 0)
        return -1;
    i = cdc_json_ws(buf, r + 1, end);
    if (i >= end)
        goto truncated;
    if (buf[i] != ':')
        goto unexpected;
    i = cdc_json_ws(buf, i + 1, end);
    goto value;

truncated:
    *code = CDC_JSON_E_TRUNCATED;
    *err_pos = end;
    return -1;
unexpected:
    *code = CDC_JSON_E_UNEXPECTED;
    *err_pos = i;
    return -1;
}

static inline int64_t cdc_json_value_scan(const uint8_t* buf, int64_t pos, int64_t end,
                                          unsigned* high, int* code, int64_t* err_pos)
{
    return cdc_json_value_scan_d(buf, pos, end, CDC_JSON_MAX_DEPTH, high, code, err_pos);
}

/* The offset just past the one value at pos (its first byte: no whitespace before it), or
 * -1 with *code and *err_pos at its first grammar error. Its UTF-8 is not checked (see
 * cdc_json_document). */
static inline int64_t cdc_json_value_end(const uint8_t* buf, int64_t pos, int64_t end,
                                         int* code, int64_t* err_pos)
{
    unsigned high = 0;
    return cdc_json_value_scan(buf, pos, end, &high, code, err_pos);
}

/* The length of the valid UTF-8 sequence at p (p[0] > 0x7F, n >= 1 bytes there), or 0: the
 * ranges of Unicode's table 3-7, which Python's decoder applies (no overlongs, no
 * surrogates, nothing past U+10FFFF). */
static inline int cdc_utf8_seq(const uint8_t* p, int64_t n)
{
    const uint8_t b = p[0];
    uint8_t lo = 0x80, hi = 0xBF;
    int k;
    if (b < 0xC2)
        return 0;               /* a continuation, or C0/C1 (overlong) */
    if (b < 0xE0)
        k = 2;
    else if (b < 0xF0) {
        k = 3;
        if (b == 0xE0)
            lo = 0xA0;
        else if (b == 0xED)
            hi = 0x9F;
    } else if (b < 0xF5) {
        k = 4;
        if (b == 0xF0)
            lo = 0x90;
        else if (b == 0xF4)
            hi = 0x8F;
    } else
        return 0;
    if (n < k || p[1] < lo || p[1] > hi)
        return 0;
    for (int j = 2; j < k; j++)
        if ((p[j] & 0xC0) != 0x80)
            return 0;
    return k;
}

/* -1 if p[0:n] is strict UTF-8, else the offset of the first invalid sequence: the
 * UnicodeDecodeError.start of Python's bytes.decode("utf-8") (a sequence cut by n: its lead
 * byte). ASCII 16 bytes at a test. */
static inline int64_t cdc_utf8_first_invalid(const uint8_t* p, int64_t n)
{
    int64_t i = 0;
    while (i < n) {
#if defined(__SSE2__)
        if (n - i >= 16) {
            const unsigned m = (unsigned)_mm_movemask_epi8(
                _mm_loadu_si128((const __m128i*)(p + i)));
            if (!m) {
                i += 16;
                continue;
            }
            i += __builtin_ctz(m);
        }
#endif
        if (p[i] < 0x80) {
            i++;
            continue;
        }
        const int k = cdc_utf8_seq(p + i, n - i);
        if (!k)
            return i;
        i += k;
    }
    return -1;
}

/* One JSON document in buf[start:end]: whitespace, one value; whole: then only whitespace up
 * to end (else E_TRAILING at the first other byte). 0 with *doc_end just past the value, or
 * the error code with *err_pos, by the rule at the top of this file. */
static inline int cdc_json_doc(const uint8_t* buf, int64_t start, int64_t end, int whole,
                               int64_t* doc_end, int* code, int64_t* err_pos)
{
    unsigned high = 0;
    int64_t stop, u;
    const int64_t r = cdc_json_value_scan(buf, cdc_json_ws(buf, start, end), end, &high,
                                          code, err_pos);
    if (r < 0)
        stop = *err_pos;
    else if (whole && (stop = cdc_json_ws(buf, r, end)) < end) {
        *code = CDC_JSON_E_TRAILING;
        *err_pos = stop;
    } else {
        *code = CDC_JSON_OK;
        stop = r;
        if (!high)      /* all strings ASCII, and outside them nothing else passed */
            goto done;
    }
    u = cdc_utf8_first_invalid(buf + start, stop - start);
    if (u >= 0) {
        *code = CDC_JSON_E_UTF8;
        *err_pos = start + u;
    }
done:
    if (*code != CDC_JSON_OK) {
        *doc_end = -1;
        return *code;
    }
    *doc_end = r;
    *err_pos = -1;
    return CDC_JSON_OK;
}

/* One document from start (whitespace, then a value): 0 with *doc_end just past it, or the
 * error code with *err_pos. What follows it is not looked at (NDJSON: the next one), but
 * for the byte after a top-level number or literal, which must end it ("1x", "truex"). */
static inline int cdc_json_document(const uint8_t* buf, int64_t start, int64_t end,
                                    int64_t* doc_end, int* code, int64_t* err_pos)
{
    return cdc_json_doc(buf, start, end, 0, doc_end, code, err_pos);
}

/* cdc_json_document where buf[start:end] must be the document alone (with whitespace). */
static inline int cdc_json_document_whole(const uint8_t* buf, int64_t start, int64_t end,
                                          int64_t* doc_end, int* code, int64_t* err_pos)
{
    return cdc_json_doc(buf, start, end, 1, doc_end, code, err_pos);
}

/* The code unit of the 4 hex digits at p, or -1 */
static inline int32_t cdc_json_hex4(const uint8_t* p)
{
    const int a = cdc_hexv(p[0]), b = cdc_hexv(p[1]), c = cdc_hexv(p[2]),
              d = cdc_hexv(p[3]);
    return (a | b | c | d) < 0 ? -1 : a << 12 | b << 8 | c << 4 | d;
}

/* The n bytes between a string's quotes (cdc_json_string_end passed them) unescaped to UTF-8
 * at dst (n bytes of room: no escape is longer than what it writes); returns the length, or
 * -1 - (offset of its backslash) for a \u escape that is a lone surrogate (a high one without
 * \uDC00-\uDFFF right after it, or a low one alone), which has no UTF-8 (and, never after
 * the scan, for an escape that is cut short or bad). Up to the first backslash 16 bytes a
 * move (none past n in src or dst). */
static inline int64_t cdc_json_unescape(const uint8_t* src, int64_t n, uint8_t* dst)
{
    int64_t i = 0, o = 0;
    while (i < n) {
#if defined(__SSE2__)
        if (n - i >= 16) {      /* o <= i, so dst has the 16 bytes too */
            const __m128i x = _mm_loadu_si128((const __m128i*)(src + i));
            _mm_storeu_si128((__m128i*)(dst + o), x);
            const unsigned m = (unsigned)_mm_movemask_epi8(
                _mm_cmpeq_epi8(x, _mm_set1_epi8('\\')));
            if (!m) {
                i += 16;
                o += 16;
                continue;
            }
            i += __builtin_ctz(m);
            o += __builtin_ctz(m);
        }
#endif
        if (src[i] != '\\') {
            dst[o++] = src[i++];
            continue;
        }
        uint8_t e = n - i >= 2 ? src[i + 1] : 0;
        switch (e) {
        case 'b': e = '\b'; break;
        case 'f': e = '\f'; break;
        case 'n': e = '\n'; break;
        case 'r': e = '\r'; break;
        case 't': e = '\t'; break;
        case '"': case '\\': case '/': break;
        case 'u': e = 0; break;
        default: return -1 - i;
        }
        if (e) {
            dst[o++] = e;
            i += 2;
            continue;
        }
        int32_t cp = n - i >= 6 ? cdc_json_hex4(src + i + 2) : -1, lo;
        if (cp < 0)
            return -1 - i;
        if (cp >= 0xD800 && cp <= 0xDFFF) {
            if (cp >= 0xDC00 || n - i < 12 || src[i + 6] != '\\' || src[i + 7] != 'u'
                || (lo = cdc_json_hex4(src + i + 8)) < 0xDC00 || lo > 0xDFFF)
                return -1 - i;
            cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
            i += 6;
        }
        i += 6;
        if (cp < 0x80)
            dst[o++] = (uint8_t)cp;
        else if (cp < 0x800) {
            dst[o++] = (uint8_t)(0xC0 | cp >> 6);
            dst[o++] = (uint8_t)(0x80 | (cp & 0x3F));
        } else if (cp < 0x10000) {
            dst[o++] = (uint8_t)(0xE0 | cp >> 12);
            dst[o++] = (uint8_t)(0x80 | (cp >> 6 & 0x3F));
            dst[o++] = (uint8_t)(0x80 | (cp & 0x3F));
        } else {
            dst[o++] = (uint8_t)(0xF0 | cp >> 18);
            dst[o++] = (uint8_t)(0x80 | (cp >> 12 & 0x3F));
            dst[o++] = (uint8_t)(0x80 | (cp >> 6 & 0x3F));
            dst[o++] = (uint8_t)(0x80 | (cp & 0x3F));
        }
    }
    return o;
}

/* base64 digit values; X: not a digit (nor is '=') */
#define X 0xFF
static const uint8_t cdc_b64_value[256] = {
    X, X, X, X, X, X, X, X, X, X, X, X, X, X, X, X,
    X, X, X, X, X, X, X, X, X, X, X, X, X, X, X, X,
    X, X, X, X, X, X, X, X, X, X, X, 62, X, X, X, 63,
    52, 53, 54, 55, 56, 57, 58, 59, 60, 61, X, X, X, X, X, X,
    X, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14,
    15, 16, 17, 18, 19, 20, 21, 22, 23, 24, 25, X, X, X, X, X,
    X, 26, 27, 28, 29, 30, 31, 32, 33, 34, 35, 36, 37, 38, 39, 40,
    41, 42, 43, 44, 45, 46, 47, 48, 49, 50, 51, X, X, X, X, X,
    X, X, X, X, X, X, X, X, X, X, X, X, X, X, X, X,
    X, X, X, X, X, X, X, X, X, X, X, X, X, X, X, X,
    X, X, X, X, X, X, X, X, X, X, X, X, X, X, X, X,
    X, X, X, X, X, X, X, X, X, X, X, X, X, X, X, X,
    X, X, X, X, X, X, X, X, X, X, X, X, X, X, X, X,
    X, X, X, X, X, X, X, X, X, X, X, X, X, X, X, X,
    X, X, X, X, X, X, X, X, X, X, X, X, X, X, X, X,
    X, X, X, X, X, X, X, X, X, X, X, X, X, X, X, X,
};
#undef X

/* The n base64 characters at src (standard alphabet) decoded at dst (room for n * 3 / 4
 * bytes); returns the length, or -1. What Python 3.11's base64.b64decode(s, validate=True)
 * accepts when s has '=' padding: data characters, then only '='; with d data characters,
 * d % 4 == 2 needs exactly "==", d % 4 == 3 exactly "=", d % 4 == 0 (d > 0) takes any number
 * of '=' (Python 3.11 and 3.12 do, 3.13 accepts none), d % 4 == 1 never. Without padding,
 * as if the missing '=' were there: d % 4 == 2 or 3 is accepted, 1 is not. The unused low
 * bits of the last character need not be 0: Python ignores them too ("AR==" is b"\x01"). */
static inline int64_t cdc_base64_decode(const uint8_t* src, int64_t n, uint8_t* dst)
{
    const uint8_t* T = cdc_b64_value;
    int64_t d = n, i, o = 0;
    while (d > 0 && src[d - 1] == '=')
        d--;
    const int q = (int)(d & 3);
    if (q == 1 || (d < n && (d == 0 || (q == 2 && n - d != 2) || (q == 3 && n - d != 1))))
        return -1;
    for (i = 0; i + 4 <= d; i += 4) {
        const uint8_t a = T[src[i]], b = T[src[i + 1]], c = T[src[i + 2]], e = T[src[i + 3]];
        if ((a | b | c | e) & 0x80)
            return -1;      /* also a '=' before the padding */
        const uint32_t v = (uint32_t)a << 18 | (uint32_t)b << 12 | (uint32_t)c << 6 | e;
        dst[o] = (uint8_t)(v >> 16);
        dst[o + 1] = (uint8_t)(v >> 8);
        dst[o + 2] = (uint8_t)v;
        o += 3;
    }
    if (q) {
        const uint8_t a = T[src[i]], b = T[src[i + 1]], c = q == 3 ? T[src[i + 2]] : 0;
        if ((a | b | c) & 0x80)
            return -1;
        dst[o++] = (uint8_t)(a << 2 | b >> 4);
        if (q == 3)
            dst[o++] = (uint8_t)(b << 4 | c >> 2);
    }
    return o;
}

#endif
