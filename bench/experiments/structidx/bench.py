"""Interleaved harness: every contender once per round, best of ROUNDS; MB/s = file bytes / s.
usage: python bench.py [rounds] [chunk_bytes]"""
from common import C, CHUNK, I, L, N, S, best_times, buf, cat, d, dec, t  # noqa: F401
for f in ['px_index_nav', 'px_onepass_nav', 'px_memchr', 'px_stage1', 'px_stage1_whole', 'px_index', 'px_stage2_only', 'px_onepass']:
    getattr(L, f).restype = C.c_int64
S.sj_run.restype = C.c_int64; S.sj_utf8.restype = C.c_int64; S.sj_impl.restype = C.c_char_p
o = C.c_void_p(L.px_out_new(I(200000), I(N)))
def sums():
    r = (C.c_double * 6)(); L.px_sums(o, r); return tuple(r)
M = L.px_stage1_whole(buf, I(N), 0)     # the whole-file index, for stage 2 alone
contenders = {
    'cdcfast Decoder.decode (1 thread)': lambda: dec.decode(d, table=t).num_rows,
    'memchr newline count (floor)': lambda: L.px_memchr(buf, I(N)),
    'stage1 AVX512 masks+tzcnt flatten': lambda: L.px_stage1(buf, I(N), I(CHUNK), 0),
    'stage1 AVX512 masks+vpcompressd': lambda: L.px_stage1(buf, I(N), I(CHUNK), 1),
    'stage1 AVX2 masks+tzcnt flatten': lambda: L.px_stage1(buf, I(N), I(CHUNK), 2),
    'stage1+stage2 (AVX512, tzcnt)': lambda: L.px_index(buf, I(N), I(CHUNK), o, 0),
    'stage1+stage2 (AVX512, vpcompressd)': lambda: L.px_index(buf, I(N), I(CHUNK), o, 1),
    'stage2 alone (whole-file index, prebuilt)': lambda: L.px_stage2_only(buf, I(N), I(M), o),
    'one-pass walker, bytewise strings': lambda: L.px_onepass(buf, I(N), o, 0),
    'one-pass walker, SSE2 16B strings (cdcfast-like)': lambda: L.px_onepass(buf, I(N), o, 1),
    'one-pass walker, AVX2 32B strings': lambda: L.px_onepass(buf, I(N), o, 2),
    'simdjson 3.12.3 On-Demand iterate_many': lambda: S.sj_run(buf, I(N), o, I(1 << 20)),
    'nav only: stage1(vpcompressd)+index skip per doc': lambda: L.px_index_nav(buf, I(N), I(CHUNK), 1),
    'nav only: one-pass SSE2 skip per doc': lambda: L.px_onepass_nav(buf, I(N)),
    'simdjson::validate_utf8 (whole file)': lambda: S.sj_utf8(buf, I(N)),
}
# correctness: every C/C++ contender fills the same columns
ref = None
for k, f in contenders.items():
    r = f()
    if 'stage2' in k or 'walker' in k or 'simdjson' in k:
        s = sums(); print(f'# {k}: rows={r} sums={s[:1]}..{s[3:]}')
        ref = ref or s
        assert s[0] == ref[0] and s[3:] == ref[3:] and abs(s[1] / ref[1] - 1) < 1e-9 and abs(s[2] / ref[2] - 1) < 1e-9, k
print(f'# file {N} bytes, {M} structurals ({M/N:.3f}/byte), chunk {CHUNK}, simdjson kernel {S.sj_impl().decode()}')
best = best_times(contenders)
base = best['one-pass walker, SSE2 16B strings (cdcfast-like)']
print(f'{"contender":50s} {"MB/s":>8s} {"ms":>8s} {"vs 1-pass SSE2":>14s}')
for k, v in best.items():
    print(f'{k:50s} {N/v/1e6:8.0f} {v*1e3:8.1f} {base/v:14.2f}')
for v in ('tzcnt', 'vpcompressd'):
    s1 = best[f'stage1 AVX512 masks+{v if v != "tzcnt" else "tzcnt flatten"}']; s12 = best[f'stage1+stage2 (AVX512, {v})']
    print(f'# {v}: stage-1 share of stage1+stage2 {s1/s12:.0%}; stage1+2 vs one-pass SSE2 {base/s12:.2f}x; '
          f'vs simdjson {best["simdjson 3.12.3 On-Demand iterate_many"]/s12:.2f}x; vs cdcfast {best["cdcfast Decoder.decode (1 thread)"]/s12:.2f}x')
