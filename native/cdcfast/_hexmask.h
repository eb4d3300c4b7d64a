/* Qlik Replicate's hex masks (changeMask, columnMask; SPEC §5.5, docs/qlik.md "Masks"),
 * written straight into the bitmaps of an Arrow struct<bool per column>.
 *
 * A mask's text is one unsigned integer, most significant hex digit first; bit i (value
 * 1 << i) stands for the column at 0-based position i of the table. So the last digit holds
 * columns 0..3, the one before it 4..7: digit k counted from the end covers columns 4k..4k+3,
 * and the text is read from its end backwards. Missing high digits are zeros; digits past
 * the columns are only checked for being hex.
 *
 * Two steps, so that the scatter of bits into per-column bitmaps works on whole bytes:
 *   1. cdc_hexmask_read: one row's text -> its bits as little-endian bytes (byte g holds
 *      columns 8g..8g+7, bit j column 8g+j), no branch per digit.
 *   2. cdc_hexmask_flush8: a block of 8 consecutive rows (rows 8b..8b+7) -> byte b of every
 *      column's values bitmap and validity bitmap, by one 8x8 bit transpose per 8 columns.
 *
 * A caller keeps a block of 8 row masks (8 x nbytes bytes, row r at block + r * nbytes),
 * reads each row's text into its slot (a row without a mask -- null, empty, not hex -- gets a
 * zeroed slot and a 0 in its `rows_valid` bit), and flushes every 8 rows and once at the end
 * (slots past the last row zeroed). Nothing here allocates or reads past (p, n).
 */
#ifndef CDCFAST_HEXMASK_H
#define CDCFAST_HEXMASK_H

#include <stdint.h>
#include <string.h>

#define CDC_HEXMASK_OK (-1)

/* 0x10 | value for a hex digit (either case), 0 for any other byte */
static const uint8_t cdc_hexmask_digit[256] = {
    ['0'] = 0x10, ['1'] = 0x11, ['2'] = 0x12, ['3'] = 0x13, ['4'] = 0x14,
    ['5'] = 0x15, ['6'] = 0x16, ['7'] = 0x17, ['8'] = 0x18, ['9'] = 0x19,
    ['A'] = 0x1A, ['B'] = 0x1B, ['C'] = 0x1C, ['D'] = 0x1D, ['E'] = 0x1E, ['F'] = 0x1F,
    ['a'] = 0x1A, ['b'] = 0x1B, ['c'] = 0x1C, ['d'] = 0x1D, ['e'] = 0x1E, ['f'] = 0x1F,
};

/* The bytes one row's mask takes for ncols columns. */
static inline int64_t cdc_hexmask_nbytes(int64_t ncols)
{
    return (ncols + 7) >> 3;
}

/* Read the mask text p[0:n) into bits[0:nbytes) (bit i of the integer: byte i >> 3, bit
 * i & 7; bytes past the text are zeroed). Returns CDC_HEXMASK_OK, or the offset of the first
 * byte that is not a hex digit (bits then hold junk: the caller zeroes the slot). An empty
 * text is OK and all zeros; whether it counts as "no mask" is the caller's decision. */
static inline int64_t cdc_hexmask_read(const uint8_t* p, int64_t n, uint8_t* bits,
                                       int64_t nbytes)
{
    const uint8_t* t = cdc_hexmask_digit;
    const int64_t use = n < 2 * nbytes ? n : 2 * nbytes;     /* digits that land on columns */
    uint8_t ok = 0x10;
    int64_t k = 0, g = 0, j;
    for (; k + 1 < use; k += 2, g++) {
        const uint8_t lo = t[p[n - 1 - k]], hi = t[p[n - 2 - k]];
        ok &= lo & hi;
        bits[g] = (uint8_t)((lo & 15) | ((hi & 15) << 4));
    }
    if (k < use) {
        const uint8_t lo = t[p[n - 1 - k]];
        ok &= lo;
        bits[g++] = lo & 15;
    }
    if (g < nbytes)
        memset(bits + g, 0, (size_t)(nbytes - g));
    for (j = 0; j < n - use; j++)               /* high digits past the columns */
        ok &= t[p[j]];
    if (ok & 0x10)
        return CDC_HEXMASK_OK;
    for (j = 0; j < n; j++)
        if (!(t[p[j]] & 0x10))
            return j;
    return CDC_HEXMASK_OK;                      /* not reached */
}

/* Transpose the 8x8 bit matrix held in x: bit 8r + c goes to bit 8c + r (Hacker's Delight,
 * 7-3). With byte r = row r's mask byte (bit j: column j), byte j of the result holds
 * column j's bits of the 8 rows (bit r: row r). */
static inline uint64_t cdc_hexmask_transpose8(uint64_t x)
{
    uint64_t t;
    t = (x ^ (x >> 7)) & 0x00AA00AA00AA00AAULL;
    x ^= t ^ (t << 7);
    t = (x ^ (x >> 14)) & 0x0000CCCC0000CCCCULL;
    x ^= t ^ (t << 14);
    t = (x ^ (x >> 28)) & 0x00000000F0F0F0F0ULL;
    x ^= t ^ (t << 28);
    return x;
}

/* Write byte `at` of every column's bitmaps from a block of 8 row masks (see above).
 * rows_valid: bit r set when row r has a mask (the struct's validity byte, which the caller
 * stores itself). For column c: values[c][at] = the 8 rows' bit c, validity[c][at] =
 * rows_valid -- or 0 for both where nulled[c] is nonzero (columns a mask never speaks for,
 * such as LOBs in changeMask; nulled may be NULL). */
static inline void cdc_hexmask_flush8(const uint8_t* block, int64_t nbytes, int64_t ncols,
                                      uint8_t rows_valid, const uint8_t* nulled,
                                      uint8_t* const* values, uint8_t* const* validity,
                                      int64_t at)
{
    int64_t g, c;
    int r, j, m;
    for (g = 0; g < nbytes; g++) {
        uint64_t x = 0;
        for (r = 0; r < 8; r++)
            x |= (uint64_t)block[r * nbytes + g] << (8 * r);
        x = cdc_hexmask_transpose8(x);
        m = ncols - 8 * g < 8 ? (int)(ncols - 8 * g) : 8;
        for (j = 0; j < m; j++) {
            c = 8 * g + j;
            const uint8_t keep = (nulled != NULL && nulled[c]) ? 0 : rows_valid;
            values[c][at] = (uint8_t)(x >> (8 * j)) & keep;
            validity[c][at] = keep;
        }
    }
}

#endif
