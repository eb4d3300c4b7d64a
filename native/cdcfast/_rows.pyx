# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True, initializedcheck=False
"""One output table of a JSON kernel's run (`_debezium`, `_olr`, `_qlik`): see _rows.pxd."""
from libc.stdint cimport uint8_t, int32_t, int64_t
from libc.stdlib cimport free, malloc
from libc.string cimport memcmp, memchr

from cdcfast._mem cimport grow
from cdcfast._arrow cimport (Column, FIXED, VAR, BITS, VALIDITY, col_valid, bits_set, bits_get,
                             kind_column)
from cdcfast._kinds cimport *
from cdcfast._jsonrow cimport undo_value, json_unescape
from cdcfast._json_codes cimport W_TWICE

import numpy as np


cdef int64_t SIZE_AFTER_ROWS = 256     # rows a batch has before its columns are sized


cdef class Out:
    """One output table of a run: the envelope's columns, and the row images of its table
    when it has a layout and the call wants images."""

    def __cinit__(self, source, kinds, precs, scales, nullables, names, bint images,
                  bint derived=False):
        cdef int64_t j, n = len(kinds) if images else 0
        self.images = images
        self.want_flags = True
        self.want_before = True
        self.derived = derived and images
        self.ncols = 0
        self.kind = self.prec = self.scl = NULL
        self.nullable = self.sent_b = self.sent_a = NULL
        self.noff = <int64_t*>grow(NULL, 8)
        self.noff[0] = 0
        self.names = b""
        self.namesp = <const char*>self.names
        self.lob = b""
        self.plain = True
        self.before, self.after, self.changed, self.present = [], [], [], []
        for name in ("op", "source_op", "schema", "table", "txid", "commit_pos", "change_pos"):
            setattr(self, name, Column(VAR))
        for name in ("commit_ts", "change_ts", "seq"):
            setattr(self, name, Column(FIXED, 8))
        self.src = [Column(*spec) for spec in source]
        self.source_v = Column(VALIDITY)
        self.before_v = Column(VALIDITY)
        self.after_v = Column(VALIDITY)
        self.changed_v = Column(VALIDITY)
        self.present_v = Column(VALIDITY)
        self.cols = [self.op, self.source_op, self.schema, self.table, self.txid,
                     self.commit_ts, self.change_ts, self.commit_pos, self.change_pos, self.seq,
                     self.source_v, self.before_v, self.after_v, self.changed_v,
                     self.present_v] + self.src
        self.voffs = NULL
        self.vdlen = NULL
        self.flags = NULL
        self.colp = self.srcp = self.beforep = self.afterp = self.changedp = self.presentp = NULL
        self.ncolp = 0
        self.room = 0
        self.errs = NULL
        self.nerr = self.errcap = 0
        self.rmsg = self.rstart = self.rend = NULL
        self.rop = NULL
        self.rvend = NULL
        self.rcap = 0
        self.progress = None
        self.sized = False
        self.rinfo = [Column(FIXED, 8, 0), Column(FIXED, 8, 0), Column(FIXED, 8, 0),
                      Column(FIXED, 1, 0), Column(FIXED, 1, 0)]
        self.length = 0
        for j in range(n):
            self._column(kinds[j], precs[j], scales[j], nullables[j], names[j])
        self._vars()

    def __dealloc__(self):
        free(self.kind)
        free(self.prec)
        free(self.scl)
        free(self.nullable)
        free(self.sent_b)
        free(self.sent_a)
        free(self.noff)
        free(self.voffs)
        free(self.vdlen)
        free(self.flags)
        free(self.colp)
        free(self.srcp)
        free(self.beforep)
        free(self.afterp)
        free(self.changedp)
        free(self.presentp)
        free(self.errs)

    cdef _column(self, int32_t kind, int32_t prec, int32_t scale, bint nullable, str name):
        """One more image column (the layout's next)."""
        cdef int64_t j = self.ncols, n = j + 1
        self.kind = <int32_t*>grow(self.kind, n * 4)
        self.prec = <int32_t*>grow(self.prec, n * 4)
        self.scl = <int32_t*>grow(self.scl, n * 4)
        self.nullable = <uint8_t*>grow(self.nullable, n)
        self.sent_b = <uint8_t*>grow(self.sent_b, n)
        self.sent_a = <uint8_t*>grow(self.sent_a, n)
        self.noff = <int64_t*>grow(self.noff, (n + 1) * 8)
        self.kind[j] = kind
        self.prec[j] = prec
        self.scl[j] = scale
        self.nullable[j] = nullable
        nb = name.encode("utf-8")
        self.names = self.names + nb
        self.namesp = <const char*>self.names
        self.lob = self.lob_ + b"\0"
        self.noff[j + 1] = len(self.names)
        self.plain = self.plain and not any(c < 32 or c in (34, 92) for c in nb)
        cols = [kind_column(kind), kind_column(kind), Column(BITS), Column(BITS)]
        cdef Column c
        cdef int64_t r
        for c in cols:                  # null in the rows so far (fresh bitmaps are zeroed)
            c.reserve(max(64, self.room, self.length + 1))
            if c.layout == VAR:
                for r in range(self.length + 1):
                    c.offs[r] = 0
            c.length = self.length
        self.before.append(cols[0])
        self.after.append(cols[1])
        self.changed.append(cols[2])
        self.present.append(cols[3])
        self.cols += cols
        self.ncols = n

    @property
    def lob(self):
        return self.lob_

    @lob.setter
    def lob(self, bytes value):
        self.lob_ = value
        self.lobp = <const uint8_t*>self.lob_

    cdef _vars(self):
        cdef Column vc
        cdef int64_t j
        self.vars_ = [c for c in self.cols if (<Column>c).layout == VAR]
        self.nvars = len(self.vars_)
        self.voffs = <int32_t***>grow(self.voffs, (self.nvars + 1) * sizeof(void*))
        self.vdlen = <int64_t**>grow(self.vdlen, (self.nvars + 1) * sizeof(void*))
        for j, vc in enumerate(self.vars_):
            self.voffs[j] = &vc.offs
            self.vdlen[j] = &vc.dlen
        # the flag bitmaps, reached without Python (the fields of Columns the lists keep)
        self.flags = <uint8_t***>grow(self.flags, (4 * self.ncols + 1) * sizeof(void*))
        for j in range(self.ncols):
            vc = self.present[j]
            self.flags[4 * j] = &vc.data
            self.flags[4 * j + 1] = &vc.valid
            vc = self.changed[j]
            self.flags[4 * j + 2] = &vc.data
            self.flags[4 * j + 3] = &vc.valid
        # every Column as a borrowed pointer (the lists hold the references)
        self.ncolp = len(self.cols)
        self.colp = _pointers(self.colp, self.cols)
        self.srcp = _pointers(self.srcp, self.src)
        self.beforep = _pointers(self.beforep, self.before)
        self.afterp = _pointers(self.afterp, self.after)
        self.changedp = _pointers(self.changedp, self.changed)
        self.presentp = _pointers(self.presentp, self.present)

    def add_column(self, str name, int32_t kind=K_STRING, int32_t prec=0, int32_t scale=0,
                   bint nullable=True, bint fill=True):
        """One more column (a layout typed by the data met a new one; a layout fixed after
        the output's first rows), null in the rows so far; with `fill`, `present` /
        `changed` there as for a column those rows' images left out (docs/olr.md), else null
        (docs/qlik.md)."""
        cdef int64_t j = self.ncols, r
        cdef uint8_t op
        self._column(kind, prec, scale, nullable, name)
        self._vars()
        self.room = min([(<Column>c).cap for c in self.cols])
        cdef Column ch = self.changed[j], pr = self.present[j]
        if not fill:
            return
        for r in range(self.length):
            op = self.rop[r]
            if bits_get(self.present_v.valid, r):
                col_valid(pr, r)
                if op == ROW_C or op == ROW_D:
                    bits_set(pr.data, r)
            if bits_get(self.changed_v.valid, r):
                col_valid(ch, r)
                if op == ROW_C:
                    bits_set(ch.data, r)

    cdef int64_t column_of(self, const uint8_t* k, int64_t n) noexcept nogil:
        """The column named by the key bytes k[0:n], or -1."""
        cdef int64_t j
        cdef const char* names = self.namesp
        for j in range(self.ncols):
            if self.noff[j + 1] - self.noff[j] == n and memcmp(names + self.noff[j], k, n) == 0:
                return j
        return -1

    cdef int64_t column_of_escaped(self, const uint8_t* k, int64_t n) except -2 nogil:
        """column_of for a key with escapes (unescaped first): -1 for none, NO_NAME for a key
        with a lone surrogate, which can name no column (not even one a layout typed by the
        data would add)."""
        cdef uint8_t* t = <uint8_t*>grow(NULL, n + 1)
        cdef int64_t m = json_unescape(k, n, t)
        if m < 0:
            free(t)
            return NO_NAME
        m = self.column_of(t, m)
        free(t)
        return m

    cdef int twice_problem(self, int64_t row, int64_t field, int64_t pos) except -1 nogil:
        """A column given twice: "given twice" at the second key is the column's problem —
        it replaces one the first value had (the reference reads only the key's last value,
        so it never sees that one), and the row's problem is then the first of the others
        and this one (every problem of the row in hand is kept until the row is read)."""
        cdef int64_t i = self.nerr - 1
        cdef int64_t* e
        while i >= 0 and self.errs[i * 6] == row:
            e = self.errs + i * 6
            if e[1] == field:
                if e[2] != W_TWICE:     # (a third key: the second key's stands)
                    e[2] = W_TWICE
                    e[3] = e[4] = e[5] = pos
                return 0
            i -= 1
        return self.add_problem(row, field, W_TWICE, pos, pos, pos)

    cdef void null_row(self, int64_t row) noexcept nogil:
        """Every column of the row null (the bits are 0 already: buffers are zeroed)."""
        cdef int64_t k
        for k in range(self.nvars):
            self.voffs[k][0][row + 1] = <int32_t>self.vdlen[k][0]
        self.rvend[row] = 0

    cdef void finish_row(self, int64_t row, int64_t msg, int64_t start, int64_t end,
                         uint8_t op) noexcept nogil:
        self.rmsg[row] = msg
        self.rstart[row] = start
        self.rend[row] = end
        self.rop[row] = op
        self.length = row + 1

    cdef int reserve_row(self) except -1 nogil:
        """Room for one more row in every column (rows are written at an index; columns
        learn their length here and in sync_lengths); the columns grow, doubling, with the
        GIL taken back."""
        cdef int64_t n = self.length
        if n >= self.room:
            with gil:
                self._grow_rows(n)
        if self.rcap <= n:
            with gil:
                self._grow_info(n)
        return 0

    cdef _grow_info(self, int64_t n):
        """Room for the per-row arrays past row n: as much as the columns have (or double)."""
        cdef Column c
        cdef int64_t cap = max(64, 2 * self.rcap, self.room)
        for c in self.rinfo:
            c.length = n
            c.reserve(cap - n)
        self.rmsg = <int64_t*>(<Column>self.rinfo[0]).data
        self.rstart = <int64_t*>(<Column>self.rinfo[1]).data
        self.rend = <int64_t*>(<Column>self.rinfo[2]).data
        self.rop = (<Column>self.rinfo[3]).data
        self.rvend = (<Column>self.rinfo[4]).data
        self.rcap = cap

    cdef _grow_rows(self, int64_t n):
        """Room past row n in every column: double, or — once a batch, when the run has
        read enough to tell (`progress`) — the rows the batch will likely reach, so the
        columns are allocated once instead of through a chain of doublings, each copying
        what came before and leaving a block behind (as _arrow.presize does for the other
        kernels)."""
        cdef Column c
        cdef int64_t more = max(64, n), est = 0, done, total
        cdef Progress p = self.progress
        if p is not None and not self.sized and n >= SIZE_AFTER_ROWS:
            self.sized = True
            done = p.at - p.start
            total = p.end - p.start
            if 0 < done < total:
                est = min(p.batch_rows, <int64_t>(n * (<double>total / done) * 1.05) + 16)
                if est > 2 * n:
                    more = est - n
                else:
                    est = 0
        for c in self.cols:
            c.length = n
            c.reserve(more)
            if est and c.layout == VAR and n > 0:
                c.reserve_data(<int64_t>(c.dlen * (est / <double>n) * 1.1) - c.dlen + 64)
        self.room = min([c.cap for c in self.cols])

    cdef void clear_row(self, int64_t row) noexcept nogil:
        """Take back everything written at `row` (not yet a row of the output)."""
        cdef int64_t k
        for k in range(self.ncolp):
            undo_value(<Column>self.colp[k], row)
        while self.nerr and self.errs[(self.nerr - 1) * 6] == row:
            self.nerr -= 1

    cdef int add_problem(self, int64_t row, int64_t field, int64_t code, int64_t pos,
                         int64_t a, int64_t b) except -1 nogil:
        """Note a problem of a row. Every problem of a row is kept (a later key given twice
        may void one, twice_problem); the row's problem is its first in document order
        (`problems`, `peek_problems`)."""
        cdef int64_t* e
        if self.nerr >= self.errcap:
            self.errcap = max(64, 2 * self.errcap)
            self.errs = <int64_t*>grow(self.errs, self.errcap * 6 * 8)
        e = self.errs + self.nerr * 6
        e[0] = row
        e[1] = field
        e[2] = code
        e[3] = pos
        e[4] = a
        e[5] = b
        self.nerr += 1
        return 0

    cdef void move_fields(self, int64_t row, int64_t lo, int64_t hi, int64_t delta) noexcept nogil:
        """The row's problems of fields lo..hi-1 renumbered by delta (qlik: an after image
        that turns out to be the before image)."""
        cdef int64_t i = self.nerr - 1
        cdef int64_t* e
        while i >= 0 and self.errs[i * 6] == row:
            e = self.errs + i * 6
            if lo <= e[1] < hi:
                e[1] += delta
            i -= 1

    cdef int64_t _first_of_row(self, int64_t i) noexcept nogil:
        """The entry, from entry i on, of the first problem (document order) of i's row."""
        cdef int64_t best = i, j = i + 1, row = self.errs[i * 6]
        while j < self.nerr and self.errs[j * 6] == row:
            if self.errs[j * 6 + 3] < self.errs[best * 6 + 3]:
                best = j
            j += 1
        return best

    def problems(self):
        """(row, field, code, pos, a, b) of every row with a problem — its first in document
        order —, then start afresh."""
        cdef int64_t i = 0, b
        out = []
        while i < self.nerr:
            b = self._first_of_row(i)
            out.append(tuple(self.errs[b * 6 + k] for k in range(6)))
            row = self.errs[i * 6]
            while i < self.nerr and self.errs[i * 6] == row:
                i += 1
        self.nerr = 0
        return out

    def peek_problems(self):
        """The first problem (row, field, code, pos, a, b, message index), if any, kept."""
        cdef int64_t b
        if not self.nerr:
            return []
        b = self._first_of_row(0)
        return [tuple(self.errs[b * 6 + k] for k in range(6)) + (self.rmsg[self.errs[0]],)]

    def rows_info(self):
        """Per row: (message index, record start, record end) as int64 numpy arrays: views
        of the Out's own arrays, no copy (rows written later, after `finished`, show
        through them: use them before the next run)."""
        cdef int64_t n = self.length * 8
        if n == 0:
            e = np.zeros(0, dtype=np.int64)
            return e, e, e
        return tuple(np.frombuffer((<Column>self.rinfo[k]).data_view(n), dtype=np.int64)
                     for k in range(3))

    def vendor_seq(self):
        """Per row: whether its seq is the vendor's own number (not the ordinal), as a
        numpy bool array; None when no row's is."""
        cdef int64_t n = self.length
        if n == 0 or memchr(self.rvend, 1, n) == NULL:
            return None
        return np.frombuffer((<Column>self.rinfo[4]).data_view(n), dtype=np.bool_).copy()

    def sync_lengths(self):
        cdef Column c
        for c in self.cols:
            c.length = self.length

    def finished(self):
        self.length = 0
        self.room = 0
        self.sized = False


cdef void** _pointers(void** p, list objs) except NULL:
    """The objects of a list as borrowed pointers (the list keeps them)."""
    cdef int64_t j
    p = <void**>grow(p, (len(objs) + 1) * sizeof(void*))
    for j in range(len(objs)):
        p[j] = <void*>objs[j]
    return p


def source_spec(struct):
    """The Column layouts of a source struct's fields (Out's `source` argument): text and
    binary VAR, booleans BITS, every other (int64, timestamps) 8-byte FIXED."""
    import pyarrow as pa
    spec = []
    for f in struct:
        if pa.types.is_string(f.type) or pa.types.is_binary(f.type):
            spec.append((VAR,))
        elif pa.types.is_boolean(f.type):
            spec.append((BITS,))
        else:
            spec.append((FIXED, 8))
    return spec
