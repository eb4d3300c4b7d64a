# cython: language_level=3
"""What the `lldf` converter (native/cdcfast/_lldf.pyx) offers other Cython modules: the text
kernels it runs (chosen once at import for this CPU) and its text run of a block's values.
Its test hooks (_lldf_testing.pyx) take them from here, so they test the code the decoder
runs, not a second choice of it.
"""
from libc.stdint cimport uint8_t, int32_t, int64_t, uint32_t

from cdcfast._binary cimport dec_column_fn

from cdcfast._values cimport cdc_cp, ts_fn, _ts_choose

cdef extern from "cdcfast/_text.h":
    int date10_cp "cdc_date10_cp"(const uint8_t* p, int64_t n, const cdc_cp* cp,
                                  int64_t* days) nogil
    int clock_cp "cdc_clock_cp"(const uint8_t* p, int64_t n, const cdc_cp* cp, int64_t* us,
                                int64_t* used) nogil
    ctypedef int64_t (*tscol_fn "cdc_ts_column_fn")(const uint8_t** vp, int64_t voff,
                                                    int64_t width, const uint8_t** iend,
                                                    const int64_t* todo, int64_t nval,
                                                    int with_zone, const cdc_cp* cp,
                                                    int64_t* out, int64_t* hard) noexcept nogil
    tscol_fn _tscol_choose "cdc_ts_column_choose"(int allow_simd) noexcept nogil

cdef extern from "cdcfast/_utf8.h":
    ctypedef int64_t (*cpu8_fn "cdc_cp_utf8_fn")(const uint8_t* p, int64_t n,
                                                 const uint8_t* rows, const uint8_t* u8,
                                                 const uint8_t* u8len, uint8_t* out,
                                                 int64_t readable) noexcept nogil
    cpu8_fn _cpu8_choose "cdc_cp_utf8_choose"(int allow_simd) noexcept nogil
    void cp_rows "cdc_cp_rows"(const uint8_t* u8, const uint8_t* u8len,
                               uint8_t* rows) noexcept nogil
    ctypedef int64_t (*cprun_fn "cdc_cp_run_fn")(const uint8_t* p, int64_t n,
                                                 const uint8_t* rows, uint8_t* out,
                                                 uint32_t* high, int32_t* cum,
                                                 int mixed) noexcept nogil
    cprun_fn _cprun_choose "cdc_cp_run_choose"(int allow_simd) noexcept nogil
    void latin_ends "cdc_latin_ends"(int32_t* offs, int64_t n, int64_t base,
                                     const uint32_t* high, const int32_t* cum) noexcept nogil


cdef struct Kernels:
    # the text kernels of this CPU, as _lldf.pyx chose them at import (CDCFAST_NO_AVX2=1: the
    # scalar ones; cpu8 and cprun NULL where there is no SIMD form), and whether ts_column and
    # dec_column are the SIMD forms (asked here: each module has its own copy of a header's
    # functions, so another module's scalar pointer is not this one's)
    ts_fn ts
    tscol_fn ts_column
    cpu8_fn cpu8
    cprun_fn cprun
    dec_column_fn dec_column
    bint ts_simd, dec_simd


cdef struct TextRun:
    # one code-page text column's values of a block, back to back (cap bytes, 32 of them
    # slack), and per 32 of them the bytes past U+007F and their count before (cdc_cp_run_avx2)
    uint8_t* scr
    int64_t cap
    uint32_t* high
    int32_t* cum


cdef Kernels kernels() noexcept
cdef void text_run_free(TextRun* t) noexcept
cdef bint text_run(TextRun* t, const uint8_t* rows, int32_t* offs, uint8_t* data, int64_t dlen,
                   const int64_t* todo, int64_t nval, const uint8_t** vp, int64_t voff,
                   int64_t width, const int32_t* vl, const uint8_t** iend,
                   const uint8_t** rend, int64_t vmax, int64_t rb, int64_t nrows, int64_t text,
                   uint8_t* mixed, int64_t* out) except -1 nogil
