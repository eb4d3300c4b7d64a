import os
HERE = os.path.dirname(os.path.abspath(__file__))
DATA = os.path.join(HERE, "dbz.jsonl")      # made by data.py
import ctypes as C, sys
L=C.CDLL(os.path.join(HERE, 'libproto.so'))
L.px_load.restype=C.c_void_p; L.px_load.argtypes=[C.c_char_p, C.POINTER(C.c_int64)]
for f in ['px_memchr','px_stage1','px_stage1_whole','px_index','px_stage2_only','px_onepass','px_check_stage1']: getattr(L,f).restype=C.c_int64
L.px_out_new.restype=C.c_void_p
n=C.c_int64(); buf=L.px_load(DATA.encode(), C.byref(n)); n=n.value
print('lines', L.px_memchr(C.c_void_p(buf), C.c_int64(n)))
for v in (0,1,2): print('check stage1 v%d'%v, L.px_check_stage1(C.c_void_p(buf), C.c_int64(n), v))
o=C.c_void_p(L.px_out_new(C.c_int64(200000), C.c_int64(n)))
def sums():
    r=(C.c_double*6)(); L.px_sums(o, r); return list(r)
print('index', L.px_index(C.c_void_p(buf), C.c_int64(n), C.c_int64(1<<18), o, 0), sums())
for v in (0,1,2): print('onepass', v, L.px_onepass(C.c_void_p(buf), C.c_int64(n), o, v), sums())
