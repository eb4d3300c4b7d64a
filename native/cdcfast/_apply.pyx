# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True, initializedcheck=False
"""The apply fold's kernels (cdcfast.apply; docs/apply.md "How it runs").

`group_ids` numbers the distinct keys of Arrow key columns (read in place from their buffers)
in order of first appearance: through a plain array for a dense integer key, else by
hashing. `present_masks` turns the `present` struct into a bit mask per event. `walk` then
goes through the events once, in log order, keeping per key: whether a row exists, and per
column which value it holds — an event's index k (>= 0), a target row i (written -2 - i) or
null (-1): one `base` for all columns in the key's 32-byte head, or, once a partial image
reaches the key, a row of per-column values. It never looks at a value: SCD type 2's "did a
tracked column change" is computed between its two walks from the `prev` the first one
records (cdcfast.apply). Per-key state is reached at random, so each loop prefetches the
state of the event a few steps ahead. `by_last`, `value_rows` and `take_validity` turn the
walk's outcome into the rows the values are taken from.
"""
import numpy as np
import pyarrow as pa

from libc.stdint cimport uint8_t, uint16_t, uint32_t, int8_t, int16_t, int32_t, int64_t, uint64_t, uintptr_t
from libc.string cimport memcmp, memcpy, memset

cdef extern from *:
    """
    #define CDC_PREFETCH(p) __builtin_prefetch((const void*)(p))
    """
    void prefetch "CDC_PREFETCH"(const void* p) noexcept nogil
    int _clz "__builtin_clzll"(uint64_t x) noexcept nogil
    int _ctz "__builtin_ctzll"(uint64_t x) noexcept nogil
    int _popcount "__builtin_popcount"(unsigned int x) noexcept nogil
    int _popcount64 "__builtin_popcountll"(uint64_t x) noexcept nogil
    uint64_t _bswap64 "__builtin_bswap64"(uint64_t x) noexcept nogil

DEF AHEAD = 16


def empty(shape, dtype, fill=None):
    """A numpy array in memory from Arrow's pool (filled with `fill` when given). The fold
    makes several arrays of the events' length per call; numpy's come from fresh pages
    every time (the first write into fresh memory costs ~2 ms per MB here), Arrow's pool
    (mimalloc, jemalloc) hands the same pages back to the next call."""
    dtype = np.dtype(dtype)
    count = int(np.prod(shape))
    out = np.frombuffer(pa.allocate_buffer(max(count, 1) * dtype.itemsize), dtype)[:count]
    out = out.reshape(shape)
    if fill is not None:
        out.fill(fill)
    return out

# -- group ids ------------------------------------------------------------------------------
cdef struct KeyCol:
    int64_t width          # > 0: fixed width in bytes; 0: offsets (32 or 64 bit) + data
    int64_t offset         # the array's offset into its buffers
    const uint8_t* valid   # NULL: no nulls
    const uint8_t* data
    const int32_t* off32
    const int64_t* off64
    const uint8_t* sel     # not NULL: row i is the alt column's where sel[i] (a delete's
    KeyCol* alt            # key is its before image's: no column of chosen keys is made)

cdef struct Slot:
    uint64_t tag           # the key itself (one fixed-width column of <= 8 bytes) or its hash
    int32_t g              # group + 1 (0: empty)
    int32_t first          # the group's first row


cdef inline uint64_t _fmix(uint64_t h) noexcept nogil:
    h ^= h >> 33
    h *= 0xff51afd7ed558ccdULL
    h ^= h >> 33
    h *= 0xc4ceb9fe1a85ec53ULL
    h ^= h >> 33
    return h


cdef inline uint64_t _bytes_hash(const uint8_t* p, int64_t n, uint64_t h) noexcept nogil:
    cdef uint64_t x
    cdef int64_t i = 0
    while i + 8 <= n:
        memcpy(&x, p + i, 8)
        h = (h ^ _fmix(x)) * 0x9E3779B97F4A7C15ULL
        i += 8
    if i < n:
        x = 0
        memcpy(&x, p + i, n - i)
        h = (h ^ _fmix(x)) * 0x9E3779B97F4A7C15ULL
    return _fmix(h ^ <uint64_t>n)


cdef inline bint _valid_raw(const KeyCol* c, int64_t i) noexcept nogil:
    cdef int64_t j = c.offset + i
    return c.valid == NULL or (c.valid[j >> 3] >> (j & 7)) & 1


cdef inline bint _valid(const KeyCol* c, int64_t i) noexcept nogil:
    """Row i of the column, or of its alt where sel says, is not null."""
    if c.sel != NULL and c.sel[i]:
        c = c.alt
    return _valid_raw(c, i)


cdef inline void _span(const KeyCol* c, int64_t i, const uint8_t** p, int64_t* n) noexcept nogil:
    cdef int64_t j, a, b
    if c.sel != NULL and c.sel[i]:
        c = c.alt
    j = c.offset + i
    if c.width > 0:
        p[0] = c.data + j * c.width
        n[0] = c.width
        return
    if c.off32 != NULL:
        a = c.off32[j]
        b = c.off32[j + 1]
    else:
        a = c.off64[j]
        b = c.off64[j + 1]
    p[0] = c.data + a
    n[0] = b - a


cdef inline void _prefetch_row(const KeyCol* cols, int64_t i) noexcept nogil:
    cdef const KeyCol* c = &cols[0]
    cdef int64_t j
    if c.sel != NULL and c.sel[i]:
        c = c.alt
    j = c.offset + i
    if c.width > 0:
        prefetch(c.data + j * c.width)
    elif c.off32 != NULL:
        prefetch(&c.off32[j])
    else:
        prefetch(&c.off64[j])


cdef inline bint _same_row(const KeyCol* cols, int ncols, int64_t i, int64_t j) noexcept nogil:
    cdef const uint8_t* p
    cdef const uint8_t* q
    cdef int64_t a, b
    cdef int c
    for c in range(ncols):
        _span(&cols[c], i, &p, &a)
        _span(&cols[c], j, &q, &b)
        if a != b or memcmp(p, q, a) != 0:
            return False
    return True


cdef extern from "math.h":
    double log(double x) noexcept nogil
    double ldexp(double x, int e) noexcept nogil


cdef inline uint64_t _direct(const KeyCol* k0, int64_t i) noexcept nogil:
    """Row i's value of a fixed-width column of at most 8 bytes, as a number."""
    cdef int64_t j, w = k0.width
    cdef uint64_t x = 0
    if k0.sel != NULL and k0.sel[i]:
        k0 = k0.alt
    j = k0.offset + i
    if w == 8:
        return (<const uint64_t*>k0.data)[j]
    if w == 4:
        return (<const uint32_t*>k0.data)[j]
    if w == 2:
        return (<const uint16_t*>k0.data)[j]
    if w == 1:
        return k0.data[j]
    memcpy(&x, k0.data + j * w, w)
    return x


cdef inline uint64_t _hash(const uint64_t* h, const KeyCol* k0, int64_t i) noexcept nogil:
    """Row i's hash: kept in h, or (h NULL) of the direct key's value."""
    if h != NULL:
        return h[i]
    return _fmix(_direct(k0, i) ^ 0x243F6A8885A308D3ULL)


cdef double _distinct(const uint64_t* h, const KeyCol* k0, const int32_t* gid,
                      int64_t n) noexcept nogil:
    """HyperLogLog's estimate of the number of distinct hashes (rows with gid >= 0):
    2**14 registers, about 1 % off."""
    cdef uint8_t reg[16384]
    cdef int64_t i, zeros = 0
    cdef uint64_t x, rest
    cdef uint8_t rank
    cdef double m = 16384.0, total = 0.0, e
    memset(reg, 0, sizeof(reg))
    for i in range(n):
        if gid[i] < 0:
            continue
        x = _hash(h, k0, i)
        rest = (x << 14) | (<uint64_t>1 << 13)
        rank = <uint8_t>(_clz(rest) + 1)
        if rank > reg[x >> 50]:
            reg[x >> 50] = rank
    for i in range(16384):
        total += ldexp(1.0, -reg[i])
        if reg[i] == 0:
            zeros += 1
    e = 0.7213 / (1.0 + 1.079 / m) * m * m / total
    if e <= 2.5 * m and zeros:
        e = m * log(m / zeros)
    return e


def _fixed_width(t) -> int:
    """The byte width of a fixed-width Arrow type (0: offsets and data)."""
    if pa.types.is_string(t) or pa.types.is_binary(t) or pa.types.is_large_string(t) \
            or pa.types.is_large_binary(t):
        return 0
    return t.bit_width // 8


cdef inline int64_t _int_raw(const KeyCol* k0, int64_t i, bint signed) noexcept nogil:
    """Row i of an integer column as int64 (an unsigned value above 2**63 - 1 wraps)."""
    cdef int64_t j = k0.offset + i, w = k0.width
    if w == 8:
        return (<const int64_t*>k0.data)[j]
    if w == 4:
        return (<const int32_t*>k0.data)[j] if signed else (<const uint32_t*>k0.data)[j]
    if w == 2:
        return (<const int16_t*>k0.data)[j] if signed else (<const uint16_t*>k0.data)[j]
    return (<const int8_t*>k0.data)[j] if signed else k0.data[j]


cdef inline int64_t _int_pick(const KeyCol* k0, int64_t i, bint signed,
                              bint* ok) noexcept nogil:
    """Row i of an integer key (_int_raw), from alt where sel says, and whether it is
    valid: both read, one chosen without a branch (sel comes in no order, and a
    mispredicted branch here stalls the loads of the table behind it)."""
    cdef const KeyCol* b = k0.alt if k0.sel != NULL else k0
    cdef bint s = k0.sel != NULL and k0.sel[i]
    cdef int64_t x = _int_raw(k0, i, signed), y = _int_raw(b, i, signed)
    cdef bint vx = _valid_raw(k0, i), vy = _valid_raw(b, i)
    ok[0] = vy if s else vx
    return y if s else x


cdef int64_t _ranked_ids(const KeyCol* k0, bint signed, int64_t n, int64_t lo, int64_t span,
                         int32_t[::1] gid) except -2:
    """Numbers a dense integer key by rank (its place among the distinct values): a bitmap
    of the range (a bit per value: 128 KB for a million) and a count per word, both in the
    core's own cache, where a table of first appearances is a random access into megabytes."""
    cdef int64_t words = (span + 63) // 64, i, v, w, total = 0
    cdef bint ok
    marks = empty(words, np.uint64, 0)
    before = empty(words, np.int64)
    cdef uint64_t[::1] bits = marks
    cdef int64_t[::1] rank = before
    with nogil:
        for i in range(n):
            v = _int_pick(k0, i, signed, &ok) - lo
            if ok:
                bits[v >> 6] |= (<uint64_t>1) << (v & 63)
        for w in range(words):
            rank[w] = total
            total += _popcount64(bits[w])
        for i in range(n):
            v = _int_pick(k0, i, signed, &ok) - lo
            if not ok:
                gid[i] = -1
                continue
            gid[i] = <int32_t>(rank[v >> 6]
                               + _popcount64(bits[v >> 6] & (((<uint64_t>1) << (v & 63)) - 1)))
    return total


cdef int64_t _dense_ids(const KeyCol* k0, bint signed, int64_t n, int32_t[::1] gid,
                        bint ranked) except -2:
    """Numbers an integer key whose values span a range at most a few times the rows (the
    common surrogate key) with a plain array over that range — a small table, in cache, no
    hashing. Returns the number of groups, or -1 (nothing written) when the range is wider
    or an unsigned 64-bit value is past int64."""
    cdef int64_t i, lo = 0, hi = 0, v, g, groups = 0
    cdef bint seen = False, wraps = False, ok
    with nogil:
        for i in range(n):
            v = _int_pick(k0, i, signed, &ok)
            if not ok:
                continue
            if not signed and k0.width == 8 and v < 0:
                wraps = True
                break
            if not seen:
                lo = hi = v
                seen = True
            elif v < lo:
                lo = v
            elif v > hi:
                hi = v
    if wraps:
        return -1
    # the span in unsigned arithmetic: hi - lo may not fit an int64 (-2**63 … 2**63 - 1)
    if seen and (<uint64_t>hi - <uint64_t>lo) > <uint64_t>(4 * n + (1 << 20)):
        return -1
    if ranked and seen:
        return _ranked_ids(k0, signed, n, lo, hi - lo + 1, gid)
    table = empty((hi - lo + 1) if seen else 1, np.int32, -1)
    cdef int32_t[::1] t = table
    with nogil:
        for i in range(n):
            v = _int_pick(k0, i, signed, &ok) - lo
            if not ok:
                gid[i] = -1
                continue
            g = t[v]
            if g < 0:
                g = groups
                t[v] = <int32_t>g
                groups += 1
            gid[i] = <int32_t>g
    return groups


cdef object _key_cols(list arrays, int64_t n, KeyCol** out):
    """KeyCols of `arrays` (each of n rows) in memory the returned object keeps."""
    cdef int ncols = len(arrays)
    spec = np.zeros(max(1, ncols) * sizeof(KeyCol) // 8, np.int64)
    cdef KeyCol* cols = <KeyCol*><uintptr_t>spec.ctypes.data
    cdef int c
    for c in range(ncols):
        arr = arrays[c]
        if len(arr) != n:
            raise ValueError("group_ids: key columns of different lengths")
        bufs = arr.buffers()
        width = _fixed_width(arr.type)
        cols[c].width = width
        cols[c].offset = arr.offset
        cols[c].valid = <const uint8_t*><uintptr_t>(bufs[0].address if bufs[0] is not None
                                                    and arr.null_count else 0)
        cols[c].sel = NULL
        cols[c].alt = NULL
        if width:
            cols[c].data = <const uint8_t*><uintptr_t>bufs[1].address
            cols[c].off32 = NULL
            cols[c].off64 = NULL
        else:
            wide = pa.types.is_large_string(arr.type) or pa.types.is_large_binary(arr.type)
            cols[c].data = <const uint8_t*><uintptr_t>(bufs[2].address if bufs[2] is not None
                                                       else 0)
            cols[c].off32 = NULL if wide else <const int32_t*><uintptr_t>bufs[1].address
            cols[c].off64 = <const int64_t*><uintptr_t>bufs[1].address if wide else NULL
    out[0] = cols
    return spec


def group_ids(list arrays, list alt=None, const uint8_t[::1] use_alt=None,
              bint ranked=False):
    """Numbers the rows' keys: per row, the key's group (0, 1, … in order of first
    appearance), -1 where a key column is null; and the number of groups. arrays: the key
    columns, of equal length, each fixed-width (whole bytes) or string/binary (32- or 64-bit
    offsets), as cdcfast.apply makes them. With alt (columns of the same types) and use_alt
    (per row, 1: read alt's row instead), the keys are those chosen. ranked: the caller
    does not need first appearance — a dense integer key is then numbered in key order."""
    cdef int ncols = len(arrays)
    cdef int64_t n = len(arrays[0]) if ncols else 0
    cdef KeyCol* cols
    cdef KeyCol* alts
    keep = _key_cols(arrays, n, &cols)
    cdef int c
    if alt is not None:
        if use_alt is None or use_alt.shape[0] != n or len(alt) != ncols \
                or any(a.type != b.type for a, b in zip(arrays, alt)):
            raise ValueError("group_ids: alt needs columns of the same types and use_alt of "
                             "the rows' length")
        keep_alt = _key_cols(alt, n, &alts)
        for c in range(ncols):
            cols[c].sel = &use_alt[0] if n else NULL
            cols[c].alt = &alts[c]
    if n >= (1 << 31) - 2:
        raise ValueError("group_ids: at most 2**31 - 3 rows at once")
    gids = empty(n, np.int32)
    cdef int32_t[::1] gid = gids
    # per row: the slot's hash, and the tag the slot keeps: for a single fixed-width key of at
    # most 8 bytes the value itself (read again from the column whenever needed: no copy, and
    # no need to reach the group's first row to compare), else the hash, kept in `hashes`
    cdef bint direct = ncols == 1 and 0 < cols[0].width <= 8
    if direct and pa.types.is_integer(arrays[0].type) and n:
        dense = _dense_ids(&cols[0], pa.types.is_signed_integer(arrays[0].type), n, gid,
                           ranked)
        if dense >= 0:
            return gids, dense
    hashes = empty(0 if direct else n, np.uint64)
    cdef uint64_t[::1] hs = hashes
    cdef uint64_t* h = &hs[0] if not direct and n else NULL
    cdef int64_t i, j, a
    cdef const uint8_t* p
    cdef uint64_t x
    cdef bint ok
    cdef double distinct
    cdef const KeyCol* k0 = &cols[0]
    with nogil:
        if direct:
            for i in range(n):
                gid[i] = 0 if _valid(k0, i) else -1
        else:
            for i in range(n):
                x = 0x243F6A8885A308D3ULL
                ok = True
                for c in range(ncols):
                    if not _valid(&cols[c], i):
                        ok = False
                        break
                    _span(&cols[c], i, &p, &a)
                    x = _bytes_hash(p, a, x + <uint64_t>c)
                h[i] = x
                gid[i] = 0 if ok else -1
        # the table's size from an estimate of the distinct keys (HyperLogLog), so that it
        # rarely has to grow
        distinct = _distinct(h, k0, &gid[0], n) if n else 0
    # open addressing, linear probing, grown at half full
    cdef int64_t cap = 1024, mask, groups = 0, s, t
    while cap < 2.5 * min(n, distinct):
        cap *= 2
    table = empty(cap * 2, np.int64, 0)
    cdef Slot* slots = <Slot*><uintptr_t>table.ctypes.data
    cdef Slot* grown
    mask = cap - 1
    i = 0
    while i < n:
        if 2 * (groups + 1) > cap:           # half full: twice the slots, every group again
            cap *= 2
            mask = cap - 1
            bigger = empty(cap * 2, np.int64, 0)
            grown = <Slot*><uintptr_t>bigger.ctypes.data
            with nogil:
                for s in range(cap // 2):
                    if slots[s].g != 0:
                        t = _hash(h, k0, slots[s].first) & mask
                        while grown[t].g != 0:
                            t = (t + 1) & mask
                        grown[t] = slots[s]
            table = bigger
            slots = grown
        with nogil:
            while i < n and 2 * (groups + 1) <= cap:
                if i + AHEAD < n:
                    prefetch(&slots[_hash(h, k0, i + AHEAD) & mask])
                if not direct and i + AHEAD // 2 < n:
                    # the first row of the group the slot of a nearer row holds: its bytes
                    t = h[i + AHEAD // 2] & mask
                    if slots[t].g != 0:
                        _prefetch_row(cols, slots[t].first)
                if gid[i] >= 0:
                    x = _direct(k0, i) if direct else h[i]
                    s = _hash(h, k0, i) & mask
                    while True:
                        if slots[s].g == 0:
                            slots[s].tag = x
                            slots[s].g = groups + 1
                            slots[s].first = i
                            gid[i] = groups
                            groups += 1
                            break
                        if slots[s].tag == x and (direct or _same_row(cols, ncols, i,
                                                                      slots[s].first)):
                            gid[i] = slots[s].g - 1
                            break
                        s = (s + 1) & mask
                i += 1
    return gids, groups


def moved_keys(const uint8_t[::1] code, list old, list new):
    """The rows (int64) of the updates (code 2, see op_codes) that move their key: the old
    key (before's columns) has no null and differs from the new one (after's) — bytewise,
    as group_ids tells keys apart, or the new one has a null."""
    cdef int64_t n = code.shape[0], i, a, b, count = 0
    cdef int ncols = len(old), c
    cdef KeyCol* o
    cdef KeyCol* w
    if len(new) != ncols:
        raise ValueError("moved_keys: old and new keys of different columns")
    keep = (_key_cols(old, n, &o), _key_cols(new, n, &w))
    out = np.empty(n, np.int64)
    cdef int64_t[::1] rows = out
    cdef const uint8_t* p
    cdef const uint8_t* q
    cdef bint differ, whole
    if ncols == 1 and 0 < o[0].width <= 8 and o[0].width == w[0].width:
        with nogil:                          # one fixed-width key: compared as numbers
            for i in range(n):
                if code[i] == 2 and _valid_raw(&o[0], i) and (
                        not _valid_raw(&w[0], i) or _direct(&o[0], i) != _direct(&w[0], i)):
                    rows[count] = i
                    count += 1
        return out[:count].copy()
    with nogil:
        for i in range(n):
            if code[i] != 2:
                continue
            differ = False
            whole = True
            for c in range(ncols):
                if not _valid(&o[c], i):
                    whole = False
                    break
                if differ:
                    continue
                if not _valid(&w[c], i):
                    differ = True
                else:
                    _span(&o[c], i, &p, &a)
                    _span(&w[c], i, &q, &b)
                    differ = a != b or memcmp(p, q, a) != 0
            if whole and differ:
                rows[count] = i
                count += 1
    return out[:count].copy()


# -- the walk -------------------------------------------------------------------------------
cdef enum:
    EXISTS = 1
    DELETED = 2            # deleted in this batch (after its last truncate)
    PART = 4               # the values differ by column: they are the key's row of `vals`

cdef struct Key:          # a key's state: HEAD int32s, 32 bytes (two to a cache line)
    int32_t lastpos        # position id of the last event applied to the key (-1: none)
    int32_t last           # that event (-1: none in the current epoch)
    int32_t ver            # SCD2: the current version (-1: none)
    int32_t epoch          # the truncate epoch the state belongs to
    int32_t flags
    int32_t base           # without PART: every column's value
    int32_t pad0, pad1

HEAD = 8                   # int32s of a Key
cdef int64_t _HEAD = 8


# what a walk counts, in this order in its `stats`
STATS = ("applied", "replays", "skipped_no_key", "deletes", "truncates", "last_truncate")

cdef enum:
    UPSERT = 0
    DELETE = 1
    TRUNCATE = 2


cdef struct Ver:
    int64_t* g             # per version: its key group
    int64_t* s             # the event that opened it (k, or -2 - i for a target row i)
    int64_t* e             # the event that ended it (-1: current)
    int32_t* v             # [version, column]: the values it held when it ended
    int64_t n              # versions so far
    int64_t size
    int64_t ncols


cdef inline void _set_all(Key* st, int32_t v) noexcept nogil:
    """Every column's value is v (an event, a target row or null): the key's row of vals
    is left as it is, unread until a partial image sets PART again."""
    st.base = v
    st.flags &= ~PART


cdef inline int32_t _value(const Key* st, const int32_t* row, int64_t c) noexcept nogil:
    return row[c] if st.flags & PART else st.base


cdef inline void _wipe(Key* st, int64_t epoch) noexcept nogil:
    st.flags = 0
    st.last = -1
    st.ver = -1
    st.epoch = epoch
    st.base = -1


cdef inline void _close(Ver* ver, int64_t v, int64_t k, const Key* st,
                        const int32_t* row) noexcept nogil:
    cdef int64_t c
    cdef int32_t* out = ver.v + v * ver.ncols
    ver.e[v] = k
    if st.flags & PART:
        memcpy(out, row, ver.ncols * sizeof(int32_t))
    else:
        for c in range(ver.ncols):
            out[c] = st.base


cdef inline void _open(Ver* ver, Key* st, int64_t g, int64_t k) noexcept nogil:
    cdef int64_t v = ver.n
    ver.g[v] = g
    ver.s[v] = k
    ver.e[v] = -1
    st.ver = v
    ver.n = v + 1


cdef inline void _delete(Key* st, const int32_t* row, int64_t k, Ver* ver) noexcept nogil:
    if ver != NULL and st.ver >= 0:
        _close(ver, st.ver, k, st, row)
    st.ver = -1
    st.flags = DELETED
    st.base = -1


cdef struct Sent:
    const uint8_t* bits    # the column's flags
    const uint8_t* valid   # its validity (NULL: no nulls); a null flag counts as true
    int64_t boff, voff     # their bit offsets


cdef inline bint _bit(const uint8_t* p, int64_t j) noexcept nogil:
    return (p[j >> 3] >> (j & 7)) & 1


cdef struct Flags:
    Sent* sent             # per column (bits NULL: sent by every event)
    int64_t ncols, words
    const uint8_t* pvalid  # the struct's validity (NULL: no nulls); a null struct: all sent
    int64_t poff
    bint aligned           # every bitmap starts on a byte: 8 events' flags are one byte


cdef object _flags_setup(Flags* f, present, list columns):
    """Fills f to read the flags of `present` (see present_masks); returns what keeps its
    buffers alive."""
    cdef int64_t c, ncols = len(columns)
    spec = np.zeros(max(1, ncols) * sizeof(Sent) // 8, np.int64)
    f.sent = <Sent*><uintptr_t>spec.ctypes.data
    f.ncols, f.words = ncols, (ncols + 63) // 64
    pbufs = present.buffers()
    f.pvalid = <const uint8_t*><uintptr_t>(
        pbufs[0].address if pbufs[0] is not None and present.null_count else 0)
    f.poff = present.offset
    aligned = f.poff % 8 == 0 or f.pvalid == NULL
    for c in range(ncols):
        if columns[c] < 0:
            continue
        child = present.field(columns[c])          # sliced to the struct, its own validity
        bufs = child.buffers()
        f.sent[c].bits = <const uint8_t*><uintptr_t>bufs[1].address
        f.sent[c].boff = child.offset
        f.sent[c].valid = <const uint8_t*><uintptr_t>(bufs[0].address if bufs[0] is not None
                                                      and child.null_count else 0)
        f.sent[c].voff = child.offset
        aligned = aligned and child.offset % 8 == 0
    f.aligned = aligned
    return [spec, present]


cdef inline uint64_t _transpose8(uint64_t x) noexcept nogil:
    """The 8x8 bit matrix x (byte i, bit j) transposed (byte j, bit i)."""
    cdef uint64_t t
    t = (x ^ (x >> 7)) & 0x00AA00AA00AA00AAULL
    x = x ^ t ^ (t << 7)
    t = (x ^ (x >> 14)) & 0x0000CCCC0000CCCCULL
    x = x ^ t ^ (t << 14)
    t = (x ^ (x >> 28)) & 0x00000000F0F0F0F0ULL
    return x ^ t ^ (t << 28)


cdef void _block_masks(const Flags* f, int64_t b, uint64_t* out) noexcept nogil:
    """The masks of events 8b…8b+7 (rows in order, aligned bitmaps) into out [8, words]
    (zeroed unless one word): per 8 columns, their 8 flag bytes transposed into the events'
    8 bytes."""
    cdef int64_t q, i, j, c, words = f.words
    cdef uint64_t x, full
    cdef uint64_t acc[8]
    cdef uint8_t v, pv
    if words == 1:
        memset(acc, 0, sizeof(acc))
    for q in range((f.ncols + 7) // 8):
        x = 0
        for i in range(8):
            c = 8 * q + i
            if c >= f.ncols:
                break
            if f.sent[c].bits == NULL:
                v = 0xFF
            else:
                v = f.sent[c].bits[(f.sent[c].boff >> 3) + b]
                if f.sent[c].valid != NULL:
                    v |= ~f.sent[c].valid[(f.sent[c].voff >> 3) + b]
            x |= (<uint64_t>v) << (8 * i)
        x = _transpose8(x)
        if words == 1:
            for j in range(8):
                acc[j] |= ((x >> (8 * j)) & 0xFF) << (8 * q)
        else:
            for j in range(8):
                out[j * words + q // 8] |= ((x >> (8 * j)) & 0xFF) << (8 * (q % 8))
    if words == 1:
        for j in range(8):
            out[j] = acc[j]
    if f.pvalid != NULL:
        pv = f.pvalid[(f.poff >> 3) + b]
        for j in range(8):
            if not (pv >> j) & 1:
                for q in range(words):
                    out[j * words + q] = _full(f.ncols, q)


def present_masks(present, list columns, const int64_t[::1] orig=None, int64_t m=-1):
    """The `present` flags of each event as bits: [m, words] uint64, column c at bit c % 64 of
    word c // 64. present: the events' `present` struct; columns: per table column, its
    field index in the struct or -1 (sent by every event); a null struct or a null flag is
    true. Event k is row orig[k] of the struct (orig None: row k, m events). None when every
    column is -1. Rows in order with byte-aligned bitmaps go 8 events at a time (a bit
    transpose per 8 columns)."""
    if orig is not None:
        m = orig.shape[0]
    if all(f < 0 for f in columns):
        return None
    cdef int64_t length = len(present), r
    if orig is None and not 0 <= m <= length:
        raise ValueError("present_masks: more events than the struct's rows")
    if orig is not None:
        for r in range(m):
            if not 0 <= orig[r] < length:
                raise IndexError("present_masks: a row out of range")
    cdef Flags f
    keep = _flags_setup(&f, present, columns)
    cdef int64_t words = max(f.words, 1)
    out = empty((m, words), np.uint64, 0 if words > 1 else None)
    cdef uint64_t[:, ::1] pm = out
    cdef int64_t k = 0, w, b
    cdef bint blocks = orig is None and f.aligned and f.words >= 1
    with nogil:
        if blocks:
            for b in range(m // 8):
                _block_masks(&f, b, &pm[8 * b, 0])
            k = (m // 8) * 8
        for k in range(k, m):
            for w in range(f.words):
                pm[k, w] = _mask(f.sent, f.ncols, w, k if orig is None else orig[k],
                                 f.pvalid, f.poff)
    del keep
    return out


cdef inline uint64_t _mask(const Sent* sent, int64_t ncols, int64_t w, int64_t r,
                           const uint8_t* pvalid, int64_t poff) noexcept nogil:
    """Word w of row r's mask (no branch on a flag's value: they come in no order)."""
    cdef uint64_t x = 0, bit
    cdef int64_t c
    if pvalid != NULL and not _bit(pvalid, poff + r):
        return _full(ncols, w)
    for c in range(64 * w, min(ncols, 64 * w + 64)):
        if sent[c].bits == NULL:
            bit = 1
        else:
            bit = _bit(sent[c].bits, sent[c].boff + r)
            if sent[c].valid != NULL:
                bit |= _bit(sent[c].valid, sent[c].voff + r) ^ 1
        x |= bit << (c & 63)
    return x


cdef inline uint64_t _full(int64_t ncols, int64_t w) noexcept nogil:
    """Word w of a mask with every one of ncols columns set."""
    if ncols - 64 * w >= 64:
        return ~(<uint64_t>0)
    return ((<uint64_t>1) << (ncols - 64 * w)) - 1


# -- reading the events ---------------------------------------------------------------------
cdef struct Bin:
    const uint8_t* valid
    const uint8_t* data
    const int32_t* off32
    const int64_t* off64
    int64_t offset


cdef Bin _bin(arr) except *:
    cdef Bin b
    bufs = arr.buffers()
    b.valid = <const uint8_t*><uintptr_t>(bufs[0].address if bufs[0] is not None
                                         and arr.null_count else 0)
    b.data = <const uint8_t*><uintptr_t>(bufs[2].address if bufs[2] is not None else 0)
    wide = pa.types.is_large_binary(arr.type) or pa.types.is_large_string(arr.type)
    b.off32 = NULL if wide else <const int32_t*><uintptr_t>bufs[1].address
    b.off64 = <const int64_t*><uintptr_t>bufs[1].address if wide else NULL
    b.offset = arr.offset
    return b


cdef inline int _bin_cmp(const Bin* b, int64_t i, int64_t j) noexcept nogil:
    """-1, 0, 1: row i against row j, bytewise, nulls first."""
    cdef int64_t ii = b.offset + i, jj = b.offset + j, a0, a1, b0, b1, n
    cdef bint vi = True, vj = True
    cdef int r
    if b.valid != NULL:
        vi = (b.valid[ii >> 3] >> (ii & 7)) & 1
        vj = (b.valid[jj >> 3] >> (jj & 7)) & 1
    if not vi or not vj:
        return (<int>vi) - (<int>vj)
    if b.off32 != NULL:
        a0, a1, b0, b1 = b.off32[ii], b.off32[ii + 1], b.off32[jj], b.off32[jj + 1]
    else:
        a0, a1, b0, b1 = b.off64[ii], b.off64[ii + 1], b.off64[jj], b.off64[jj + 1]
    cdef uint64_t x, y
    if a1 - a0 == 8 and b1 - b0 == 8:                # the common position: 8 bytes
        memcpy(&x, b.data + a0, 8)
        memcpy(&y, b.data + b0, 8)
        x, y = _bswap64(x), _bswap64(y)
        return (x > y) - (x < y)
    n = min(a1 - a0, b1 - b0)
    r = memcmp(b.data + a0, b.data + b0, n) if n > 0 else 0
    if r:
        return 1 if r > 0 else -1
    return (a1 - a0 > b1 - b0) - (a1 - a0 < b1 - b0)


def log_steps(commit_pos, change_pos, seq):
    """Per event, 1 where its position (commit_pos, change_pos, seq: binary, binary, int64)
    differs from the event before's (the first: 1); and whether the positions never go
    down (bytewise, nulls first)."""
    cdef int64_t m = len(commit_pos), i
    if len(change_pos) != m or len(seq) != m:
        raise ValueError("log_steps: columns of different lengths")
    out = empty(m, np.uint8, 1)
    cdef uint8_t[::1] step = out
    cdef Bin cp = _bin(commit_pos), chp = _bin(change_pos)
    sbufs = seq.buffers()
    cdef const uint8_t* svalid = <const uint8_t*><uintptr_t>(
        sbufs[0].address if sbufs[0] is not None and seq.null_count else 0)
    cdef int64_t soff = seq.offset, a, b
    cdef uintptr_t saddr = sbufs[1].address
    cdef const int64_t* sv = (<const int64_t*>saddr) + soff
    cdef int r
    cdef bint ordered = True, va, vb
    with nogil:
        for i in range(1, m):
            r = _bin_cmp(&cp, i, i - 1)
            if r == 0:
                r = _bin_cmp(&chp, i, i - 1)
            if r == 0:
                va = vb = True
                if svalid != NULL:
                    a = soff + i
                    b = a - 1
                    va = (svalid[a >> 3] >> (a & 7)) & 1
                    vb = (svalid[b >> 3] >> (b & 7)) & 1
                if not va or not vb:
                    r = (<int>va) - (<int>vb)
                else:
                    r = (sv[i] > sv[i - 1]) - (sv[i] < sv[i - 1])
            step[i] = r != 0
            if r < 0:
                ordered = False
    return out, ordered


def op_codes(op, const uint8_t[::1] kinds=None):
    """Per event, the index of its op in c r u d t (5: anything else, null included); with
    kinds (6 values), also each event's kinds[code]."""
    cdef int64_t m = len(op), i, j, a, b
    out = empty(m, np.uint8, 5)
    cdef uint8_t[::1] code = out
    if kinds is not None and kinds.shape[0] != 6:
        raise ValueError("op_codes: kinds has a value per code, 6")
    kind_out = empty(m if kinds is not None else 0, np.uint8)
    cdef uint8_t[::1] kd = kind_out
    cdef Bin o = _bin(op)
    cdef uint8_t ch
    cdef uint8_t table[256]
    memset(table, 5, 256)
    table[ord("c")], table[ord("r")], table[ord("u")] = 0, 1, 2
    table[ord("d")], table[ord("t")] = 3, 4
    with nogil:
        for i in range(m):
            j = o.offset + i
            if o.valid != NULL and not ((o.valid[j >> 3] >> (j & 7)) & 1):
                continue
            if o.off32 != NULL:
                a, b = o.off32[j], o.off32[j + 1]
            else:
                a, b = o.off64[j], o.off64[j + 1]
            if b - a == 1:
                code[i] = table[o.data[a]]
        if kinds is not None:
            for i in range(m):
                kd[i] = kinds[code[i]]
    return out if kinds is None else (out, kind_out)


ctypedef fused index_t:
    int32_t
    int64_t


def take_validity(arr, const index_t[::1] idx, const uint8_t[::1] mask=None):
    """The validity bitmap of arr.take(idx) (idx: rows of arr, none null; an Array or
    ChunkedArray of one chunk), ANDed with mask (a bitmap over idx) when given; and its
    null count. Arrow's take is several times slower on a column with nulls than without:
    cdcfast.apply takes the values without their validity and gathers it here."""
    cdef int64_t n = idx.shape[0], i, j, r, nulls = 0, nb = (n + 7) // 8
    cdef int64_t length = len(arr), offset = arr.offset
    if mask is not None and mask.shape[0] < nb:
        raise ValueError("take_validity: a mask shorter than the rows")
    for i in range(n):
        if not 0 <= idx[i] < length:
            raise IndexError("take_validity: a row out of range")
    bufs = arr.buffers()
    cdef const uint8_t* valid = <const uint8_t*><uintptr_t>(
        bufs[0].address if bufs[0] is not None and arr.null_count else 0)
    out = np.empty(nb, np.uint8)
    cdef uint8_t[::1] o = out
    cdef uint8_t byte
    with nogil:
        for j in range(nb):
            byte = 0
            for i in range(8 * j, min(n, 8 * j + 8)):
                r = offset + idx[i]
                if valid == NULL or (valid[r >> 3] >> (r & 7)) & 1:
                    byte |= <uint8_t>(1 << (i & 7))
            if mask is not None:
                byte &= mask[j]
            if 8 * j + 8 > n:
                byte &= <uint8_t>((1 << (n - 8 * j)) - 1)
            o[j] = byte
            nulls += min(8, n - 8 * j) - _popcount(byte)
    return out, nulls


def value_rows(const int32_t[:, ::1] head, const int32_t[:, ::1] vals, const int64_t[::1] groups,
               const int64_t[::1] orig, bint target, const uint8_t[::1] reset=None):
    # orig None: event k is row k
    """The rows the values of `groups` come from (the walk's head and vals), per column:
    (rows of the events' table — orig[k] for a value of event k, 0 where none — as int32;
    the bitmap of those that are one, or None when all are; with target, an Arrow int32
    array of rows of the target (i for -2 - i), null elsewhere; with reset (per group: 1 if
    its row started from nulls in the batch), a BooleanArray: an event sent the value, or
    reset). int32: rows of one call stay below 2**31."""
    cdef int64_t n = groups.shape[0], ncols = vals.shape[1], nb = (n + 7) // 8
    if head.shape[1] != _HEAD or head.shape[0] != vals.shape[0] \
            or (reset is not None and reset.shape[0] != n):
        raise ValueError("value_rows: arrays of mismatched shapes")
    cdef int64_t i, c, g, v, G = head.shape[0]
    for i in range(n):
        if not 0 <= groups[i] < G:
            raise ValueError("value_rows: a group out of range")
    ev = empty((max(ncols, 1), n), np.int32)
    evv = empty((max(ncols, 1), nb), np.uint8, 0)
    tg = empty((max(ncols, 1), n if target else 0), np.int32)
    tgv = empty((max(ncols, 1), nb if target else 0), np.uint8, 0)
    cdef int32_t[:, ::1] e = ev, t = tg
    cdef uint8_t[:, ::1] ev_ok = evv, tg_ok = tgv
    enull = np.zeros(max(ncols, 1), np.int64)
    tnull = np.zeros(max(ncols, 1), np.int64)
    cdef int64_t[::1] en = enull, tn = tnull
    cdef const int32_t* row
    cdef const Key* st
    cdef const Key* keys = <const Key*>&head[0, 0] if G else NULL
    cdef bint ident = orig is None, flags = reset is not None, part
    cdef uint8_t bit
    sv = empty((max(ncols, 1), nb if flags else 0), np.uint8, 0)
    cdef uint8_t[:, ::1] sent = sv
    with nogil:
        for i in range(n):
            if i + AHEAD < n:
                prefetch(&keys[groups[i + AHEAD]])
            g = groups[i]
            st = &keys[g]
            part = st.flags & PART
            row = &vals[g, 0] if part and ncols else NULL
            v = st.base
            bit = <uint8_t>(1 << (i & 7))
            if not part and not target:      # the common key: every column from one event
                if v >= 0:
                    v = v if ident else orig[v]
                    for c in range(ncols):
                        e[c, i] = <int32_t>v
                        ev_ok[c, i >> 3] |= bit
                        if flags:
                            sent[c, i >> 3] |= bit
                else:
                    for c in range(ncols):
                        e[c, i] = 0
                        en[c] += 1
                        if flags and reset[i]:
                            sent[c, i >> 3] |= bit
                continue
            for c in range(ncols):
                if part:
                    v = row[c]
                if flags and (v >= 0 or reset[i]):
                    sent[c, i >> 3] |= bit
                if v >= 0:
                    e[c, i] = <int32_t>(v if ident else orig[v])
                    ev_ok[c, i >> 3] |= bit
                else:
                    e[c, i] = 0
                    en[c] += 1
                if target:
                    if v <= -2:
                        t[c, i] = <int32_t>(-2 - v)
                        tg_ok[c, i >> 3] |= bit
                    else:
                        t[c, i] = 0
                        tn[c] += 1
    out = []
    for c in range(ncols):
        b = pa.Array.from_buffers(pa.int32(), n, [pa.py_buffer(tgv[c]), pa.py_buffer(tg[c])],
                                  null_count=int(tnull[c])) if target else None
        f = pa.Array.from_buffers(pa.bool_(), n, [None, pa.py_buffer(sv[c])]) if flags \
            else None
        out.append((ev[c], evv[c] if enull[c] else None, b, f))
    return out


def by_last(const int32_t[::1] gid, const int32_t[::1] ogid, const int32_t[:, ::1] head,
            bint live):
    """The groups the walk left (head) in the order of their last event, the lower group
    first when one event is last of two (an update that moved its key): live, the groups
    whose row exists, those no event reached (target rows) first, in group order; else
    every group an event of the current epoch reached. The last events are marked in a
    bitmap of the events (a bit each: it stays in cache), then read in order."""
    cdef int64_t m = gid.shape[0], G = head.shape[0], n = 0, k, g, a, b, x, j, w, last
    if head.shape[1] != _HEAD or (ogid is not None and ogid.shape[0] != m):
        raise ValueError("by_last: arrays of mismatched shapes")
    out = empty(G, np.int64)
    marks = empty((m + 63) // 64, np.uint64, 0)
    cdef int64_t[::1] o = out
    cdef uint64_t[::1] bits = marks
    cdef uint64_t word
    cdef const Key* keys = <const Key*>&head[0, 0] if G else NULL
    cdef bint moved = ogid is not None
    with nogil:
        for g in range(G):
            last = keys[g].last
            if live and not keys[g].flags & EXISTS:
                continue
            if last < 0:
                if live:                     # a target row no event reached
                    o[n] = g
                    n += 1
            elif last < m:
                bits[last >> 6] |= (<uint64_t>1) << (last & 63)
        for w in range(bits.shape[0]):
            word = bits[w]
            while word:
                k = 64 * w + _ctz(word)
                word &= word - 1
                a = gid[k]
                b = ogid[k] if moved else -1
                if b == a:
                    b = -1
                if b >= 0 and (a < 0 or b < a):
                    a, b = b, a
                for j in range(2):
                    x = a if j == 0 else b
                    if 0 <= x < G and keys[x].last == k and n < G \
                            and (not live or keys[x].flags & EXISTS):
                        o[n] = x
                        n += 1
    return out[:n]


def walk(const int32_t[::1] gid, const int32_t[::1] ogid, const uint8_t[::1] kind,
         const uint8_t[::1] newpos, const uint64_t[:, ::1] present, int64_t groups,
         const int32_t[::1] target_group, int32_t[:, ::1] head, int32_t[:, ::1] vals,
         int64_t[::1] stats, const int64_t[::1] track=None, int32_t[:, ::1] prev=None,
         uint8_t[::1] newrow=None, const uint8_t[::1] changed=None,
         int64_t[::1] ver_group=None, int64_t[::1] ver_start=None, int64_t[::1] ver_end=None,
         int32_t[:, ::1] ver_values=None):
    """One pass over the m events in log order (see the module docstring and
    cdcfast.apply): gid / ogid the key group of each event and, for an update that moves its
    key, the old key's (-1: none; ogid None: no event moves its key); kind UPSERT, DELETE, TRUNCATE or anything else (ignored);
    newpos 1 where the position differs from the event before; present the events' flags
    as present_masks gives them (None: every event sent every column).
    target_group: the group of each target row (-1: none), whose state starts as that row.
    Leaves in head, per group, a Key (HEAD int32s: its last event and flags EXISTS, DELETED —
    both -1 / 0 for a group whose state a later truncate wiped — and where its values are:
    all `base`, or with PART its row of vals, [groups, columns]); and the counts of STATS.
    An event that sends every column writes only its key's head (32 bytes, two keys to a
    cache line): the walk's state stays small enough for the cache.
    First SCD2 walk: track (column indexes), prev [len(track), m] (each upsert's values of
    those columns before it) and newrow (1: the upsert found no row). Second: changed (1: a
    tracked column changed) and the versions' arrays (Ver), which must hold every version it
    opens: the target's rows first, one each, then at most one per event. Returns the
    number of versions (0 without them)."""
    cdef int64_t m = gid.shape[0], ncols = vals.shape[1], T = target_group.shape[0]
    cdef int64_t words = (ncols + 63) // 64
    if (ogid is not None and ogid.shape[0] != m) or kind.shape[0] != m or newpos.shape[0] != m \
            or (present is not None and (present.shape[0] != m or present.shape[1] < words)) \
            or head.shape[0] != groups or head.shape[1] != _HEAD or vals.shape[0] != groups \
            or stats.shape[0] != len(STATS):
        raise ValueError("walk: arrays of mismatched lengths")
    cdef bint first = track is not None, second = ver_group is not None, moves = ogid is not None
    cdef int64_t ntrack = track.shape[0] if first else 0, q
    for q in range(m):                   # the records are indexed by these: in range
        if gid[q] >= groups or (moves and ogid[q] >= groups):
            raise ValueError("walk: a group out of range")
    if first:
        for q in range(ntrack):
            if not 0 <= track[q] < ncols:
                raise ValueError("walk: a tracked column out of range")
    if first and (prev is None or newrow is None or prev.shape[0] != ntrack
                  or prev.shape[1] != m or newrow.shape[0] != m):
        raise ValueError("walk: track needs prev and newrow of the events' length")
    cdef int64_t i, k, g, og, c, j, v, w, epoch = 0, posid = -1, since_t = 0
    cdef uint64_t bits
    cdef bint whole
    cdef const uint64_t* pm = NULL
    if present is not None and m:
        pm = &present[0, 0]
    cdef int64_t pstride = present.shape[1] if present is not None else 0
    cdef uint64_t full0 = _full(ncols, 0) if ncols else 0
    cdef Ver ver_
    cdef Ver* ver = NULL
    if second:
        if changed is None or changed.shape[0] != m or ver_start is None or ver_end is None \
                or ver_values is None or ver_values.shape[1] != ncols \
                or ver_start.shape[0] != ver_group.shape[0] \
                or ver_end.shape[0] != ver_group.shape[0] \
                or ver_values.shape[0] != ver_group.shape[0] \
                or ver_group.shape[0] < T + m:
            raise ValueError("walk: versions need changed of the events' length and room "
                             "for the target's rows and the events")
        ver = &ver_
        ver.g, ver.s, ver.e = &ver_group[0], &ver_start[0], &ver_end[0]
        ver.v = &ver_values[0, 0] if ncols else NULL
        ver.n, ver.size, ver.ncols = 0, ver_group.shape[0], ncols
    cdef int64_t applied = 0, replays = 0, nokey = 0, deletes = 0, truncates = 0
    cdef int64_t last_t = -1
    cdef uint8_t kd
    cdef Key* st
    cdef Key* ost
    cdef int32_t* row
    cdef Key* keys = <Key*>&head[0, 0] if groups else NULL
    cdef int32_t* rows = &vals[0, 0] if groups and ncols else NULL
    for g in range(groups):
        _wipe(&keys[g], 0)
        keys[g].lastpos = -1
    for i in range(T):
        g = target_group[i]
        if g < 0:
            continue
        if g >= groups:
            raise ValueError("walk: a target group out of range")
        st = &keys[g]
        if st.flags & EXISTS:
            raise ValueError("the target holds a key twice")
        st.flags = EXISTS
        _set_all(st, <int32_t>(-2 - i))
        if second:
            _open(ver, st, g, -2 - i)
    with nogil:
        for k in range(m):
            if k + AHEAD < m:
                g = gid[k + AHEAD]
                if g >= 0:
                    prefetch(&keys[g])
                    # a partial image writes the key's row
                    if pm != NULL and pm[(k + AHEAD) * pstride] != full0:
                        prefetch(rows + g * ncols)
                        prefetch(rows + g * ncols + ncols - 1)
            if newpos[k]:
                posid += 1
            kd = kind[k]
            if kd == TRUNCATE:
                truncates += 1
                applied += 1
                epoch += 1
                last_t = k
                if second:
                    for v in range(since_t, ver.n):
                        if ver.e[v] == -1:
                            g = ver.g[v]
                            _close(ver, v, k, &keys[g], rows + g * ncols)
                    since_t = ver.n
                continue
            if kd != UPSERT and kd != DELETE:
                continue
            g = gid[k]
            if g < 0:
                nokey += 1
                continue
            st = &keys[g]
            if st.lastpos == posid:
                replays += 1
                continue
            st.lastpos = <int32_t>posid
            applied += 1
            row = rows + g * ncols
            if st.epoch != epoch:
                _wipe(st, epoch)
            if kd == DELETE:
                deletes += 1
                _delete(st, row, k, ver)
                st.last = <int32_t>k
                continue
            og = ogid[k] if moves else -1
            if og >= 0:
                ost = &keys[og]
                if ost.epoch != epoch:
                    _wipe(ost, epoch)
                _delete(ost, rows + og * ncols, k, ver)
                ost.last = <int32_t>k
            if first:
                newrow[k] = 0 if st.flags & EXISTS else 1
                for j in range(ntrack):
                    prev[j, k] = _value(st, row, track[j])
            if second:
                if not (st.flags & EXISTS):
                    _open(ver, st, g, k)
                elif changed[k]:
                    _close(ver, st.ver, k, st, row)
                    _open(ver, st, g, k)
            # the columns it sent: all (only the head changes), or some (the row holds them)
            bits = 0
            whole = True
            if pm != NULL:
                w = 0
                while whole and w < words:
                    bits = pm[k * pstride + w]
                    whole = bits == _full(ncols, w)
                    w += 1
            if whole:
                _set_all(st, <int32_t>k)
            else:
                if not (st.flags & PART):
                    for c in range(ncols):
                        row[c] = st.base
                    st.flags |= PART
                for w in range(words):
                    if w or words > 1:
                        bits = pm[k * pstride + w]
                    while bits:
                        row[64 * w + _ctz(bits)] = <int32_t>k
                        bits &= bits - 1
            st.flags |= EXISTS
            st.last = <int32_t>k
        for g in range(groups):
            st = &keys[g]
            if st.epoch != epoch:
                st.flags = 0
                st.last = -1
        if second:
            for v in range(since_t, ver.n):
                if ver.e[v] == -1:
                    g = ver.g[v]
                    _close(ver, v, -1, &keys[g], rows + g * ncols)
    stats[0] = applied
    stats[1] = replays
    stats[2] = nokey
    stats[3] = deletes
    stats[4] = truncates
    stats[5] = last_t
    return ver.n if second else 0
