"""Before AND after images converted (as cdcfast does for this data); interleaved, best of ROUNDS.
usage: python bench2.py [rounds] [chunk_bytes]"""
from common import C, CHUNK, I, L, N, S, best_times, buf, cat, d, dec, t  # noqa: F401
for f in ['px_index', 'px_onepass']: getattr(L, f).restype = C.c_int64
S.sj_run2.restype = C.c_int64
o = C.c_void_p(L.px_out_new(I(200000), I(N))); ob = C.c_void_p(L.px_out_new(I(200000), I(N)))
def sums(x):
    r = (C.c_double * 6)(); L.px_sums(x, r); return tuple(r)
def withb(f):
    def g():
        L.px_set_before(ob); r = f(); L.px_set_before(None); return r
    return g
contenders = {
    'cdcfast Decoder.decode (1 thread)': lambda: dec.decode(d, table=t).num_rows,
    'stage1(vpcompressd)+stage2, before+after': withb(lambda: L.px_index(buf, I(N), I(CHUNK), o, 1)),
    'one-pass SSE2, before+after': withb(lambda: L.px_onepass(buf, I(N), o, 1)),
    'simdjson On-Demand, before+after': lambda: S.sj_run2(buf, I(N), o, ob, I(1 << 20)),
}
ref = None
for k, f in contenders.items():
    r = f()
    if 'cdcfast' in k: continue
    s = (sums(o), sums(ob)); print(f'# {k}: rows={r} after={s[0][0]},{s[0][3:]} before={s[1][0]},{s[1][3:]}')
    ref = ref or s
    assert all(a[0] == b[0] and a[3:] == b[3:] for a, b in zip(s, ref)), k
best = best_times(contenders)
base = best['one-pass SSE2, before+after']
for k, v in best.items():
    print(f'{k:50s} {N/v/1e6:8.0f} MB/s {v*1e3:8.1f} ms {base/v:6.2f}x vs one-pass')
