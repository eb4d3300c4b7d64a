# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True, initializedcheck=False
"""The walk every message kernel of a JSON format shares: see _walk.pxd."""
from libc.stdint cimport uint8_t, int64_t
from libc.stdlib cimport free
from libc.string cimport memcmp, memchr, memcpy, memset

from cdcfast._mem cimport grow
from cdcfast._arrow cimport Column, col_valid
from cdcfast._jsonrow cimport *
from cdcfast._rows cimport Out, Progress, ROW_OTHER, NO_NAME

cdef int64_t PAUSE_BYTES = 64 << 20


cdef class Walker:
    def __cinit__(self, data, offsets, valid, bint images, *args):
        self.keep = (data, offsets, valid)
        cdef const uint8_t[::1] mv = data if len(data) else b"\0"
        self.buf = &mv[0]
        self.bend = self.buf + len(data)
        cdef const int64_t[::1] mo = offsets
        self.moff = &mo[0]
        self.nmsg = len(offsets) - 1
        cdef const uint8_t[::1] vv
        self.mvalid = NULL
        if valid is not None:
            vv = valid
            self.mvalid = &vv[0]
        self.images = images
        self.msg = -1
        self.pos = self.piece_end = self.paused = 0
        self.seq = self.tombstones = self.records = self.control = self.unknown = 0
        self.extra = 0
        self.batch_rows = 1 << 20
        self.messages = False
        self.tnames = []
        self.tcat = []
        self.tslot = NULL
        self.tunk = NULL
        self.tname = NULL
        self.tname_n = NULL
        self.tcat_p = NULL
        self.tcat_n = NULL
        self.outp = NULL
        self.nout = 0
        self.ntid = self.tcap = 0
        self.last_tid = -1
        self.outs = []
        self.headers_slot = -1
        self.corrupt_slot = -1
        self.progress = Progress()
        self.progress.start = self.moff[0]
        self.progress.end = self.moff[self.nmsg]

    def __dealloc__(self):
        free(self.tslot)
        free(self.tunk)
        free(self.tname)
        free(self.tname_n)
        free(self.tcat_p)
        free(self.tcat_n)
        free(self.outp)
        free(self.ktext)
        cdc_ks_free(&self.xkeys)

    # -- what Python tells the walker --------------------------------------------------------
    def add_output(self, Out out):
        out.progress = self.progress
        self.outs.append(out)
        self.outp = <void**>grow(self.outp, len(self.outs) * sizeof(void*))
        self.outp[self.nout] = <void*>out
        self.nout += 1
        return self.nout - 1

    def add_table(self, bytes name, int64_t slot, cat=None, bint unknown=False):
        """Give the table the last STOP_TABLE named an id and the output its records go to
        (-1: not wanted; below: a format's own meaning); `cat`: the row's (schema, table)
        names as bytes (None: as sent); `unknown`: its records count as of an unknown table."""
        cdef int64_t t = self.ntid
        if t >= self.tcap:
            self.tcap = max(16, 2 * self.tcap)
            self.tslot = <int64_t*>grow(self.tslot, self.tcap * 8)
            self.tunk = <uint8_t*>grow(self.tunk, self.tcap)
            self.tname = <const char**>grow(self.tname, self.tcap * sizeof(void*))
            self.tname_n = <int64_t*>grow(self.tname_n, self.tcap * 8)
            self.tcat_p = <const uint8_t**>grow(self.tcat_p, 2 * self.tcap * sizeof(void*))
            self.tcat_n = <int64_t*>grow(self.tcat_n, 2 * self.tcap * 8)
        self.tcat.append(cat)
        self.tnames.append(name)
        self.tname[t] = <const char*>name
        self.tname_n[t] = len(name)
        self.tcat_p[2 * t] = self.tcat_p[2 * t + 1] = NULL
        self.tcat_n[2 * t] = self.tcat_n[2 * t + 1] = 0
        if cat is not None:                 # (either may be None)
            if cat[0] is not None:
                self.tcat_p[2 * t] = <const uint8_t*><bytes>cat[0]
                self.tcat_n[2 * t] = len(cat[0])
            if cat[1] is not None:          # (qlik: a message naming no table)
                self.tcat_p[2 * t + 1] = <const uint8_t*><bytes>cat[1]
                self.tcat_n[2 * t + 1] = len(cat[1])
        self.tslot[t] = slot
        self.tunk[t] = unknown
        self.ntid += 1

    def forget_tables(self):
        """Every table id anew (what a name stands for has changed)."""
        self.tnames = []
        self.tcat = []
        self.ntid = 0
        self.last_tid = -1

    def seq_start(self, int64_t seq):
        self.seq = seq

    # -- the loop ----------------------------------------------------------------------------
    def run(self):
        """Decode documents until the part ends or Python is needed; returns a STOP_ code.
        The GIL is released meanwhile."""
        cdef int r
        self.progress.batch_rows = self.batch_rows
        with nogil:
            r = self._run()
        return r

    cdef int _run(self) except -1 nogil:
        cdef int r
        while True:
            if not self.busy():
                if self.pos >= self.piece_end:
                    if self.pos - self.paused >= PAUSE_BYTES:
                        self.paused = self.pos
                        return STOP_PAUSE       # Python gives back the mapped input behind
                    if not self.next_piece():
                        return STOP_END
                self.pos = ws(self.buf, self.pos, self.piece_end)
                if self.pos >= self.piece_end:
                    continue
            self.progress.at = self.pos
            r = self.document()
            if r != 0:
                return r

    cdef bint busy(self) noexcept nogil:
        """A document is in hand, halfway (its walk resumes, not a new one)."""
        return False

    cdef void new_input(self) noexcept nogil:
        """A message that is an input of its own begins (Spark, SPEC §6)."""
        self.seq = 0

    cdef int document(self) except -1 nogil:
        with gil:
            raise NotImplementedError

    cdef bint next_piece(self) noexcept nogil:
        """Move to the next piece (a message's bytes up to a `{` that starts a line)."""
        cdef int64_t a, end, i
        cdef const uint8_t* b = self.buf
        if self.msg >= 0 and self.piece_end < self.moff[self.msg + 1]:
            a = self.piece_end
        else:
            while True:
                self.msg += 1
                if self.msg >= self.nmsg:
                    return False
                if self.mvalid != NULL and not self.mvalid[self.msg]:
                    self.tombstones += 1
                    continue
                a = self.moff[self.msg]
                if ws(b, a, self.moff[self.msg + 1]) >= self.moff[self.msg + 1]:
                    self.tombstones += 1        # an empty message
                    continue
                if self.messages:
                    self.new_input()
                break
        end = self.moff[self.msg + 1]
        cdef const uint8_t* q = b + a
        cdef const uint8_t* z = b + end
        while True:
            q = <const uint8_t*>memchr(q, 10, z - q)
            if q == NULL or q + 1 >= z:
                i = end
                break
            if q[1] == 123:
                i = q + 1 - b
                break
            q += 1
        self.pos = a
        self.piece_end = i
        return True

    cdef int64_t content_end(self) noexcept nogil:
        """The piece's end without its trailing whitespace."""
        cdef int64_t e = self.piece_end
        while e > self.pos and (self.buf[e - 1] == 32 or self.buf[e - 1] == 10
                                or self.buf[e - 1] == 13 or self.buf[e - 1] == 9):
            e -= 1
        return e

    # -- the checked walk --------------------------------------------------------------------
    cdef int64_t sscan(self, int64_t i, int* esc) noexcept nogil:
        """The closing quote of the string whose first byte is at i, checked — its bytes past
        0x7F as UTF-8 too, there and then (so `utf8_ok` has only the containers `skip` passed
        whole to look at) — or -1."""
        cdef unsigned h = 0
        cdef int code
        cdef int64_t ep, e = json_string_scan(self.buf, i, self.dend, esc, &h, &code, &ep)
        if e >= 0 and h and cdc_utf8_first_invalid(self.buf + i, e - i) >= 0:
            return -1
        return e

    cdef int64_t key_at(self, int64_t i, int64_t* k, int64_t* e, int* esc) except -2 nogil:
        """The member at i: its key's first byte (k) and closing quote (e); returns its value's
        first byte, or BAD."""
        cdef const uint8_t* b = self.buf
        cdef int64_t end = self.dend, j, v
        if self.checking and (i >= end or b[i] != 34):
            return BAD
        k[0] = i + 1
        esc[0] = 0
        e[0] = self.sscan(i + 1, esc)
        if e[0] < 0:
            return BAD
        j = ws(b, e[0] + 1, end)
        if self.checking and (j >= end or b[j] != 58):
            return BAD
        v = ws(b, j + 1, end)
        if v >= end:
            return BAD
        return v

    cdef int64_t key_field(self, const uint8_t* b, int64_t k, int64_t n, int level) noexcept nogil:
        """The format's header field a key b[k:k+n] names at a level, or -1."""
        return -1

    cdef const uint8_t* key_text(self, int64_t k, int64_t e, int esc, int64_t* n) except? NULL nogil:
        """The text of the key buf[k:e] (`esc`: it holds a backslash), unescaped (valid until
        the next key with escapes), its length in n; NULL for a lone surrogate, which names
        nothing of ours."""
        if not esc:
            n[0] = e - k
            return self.buf + k
        if e - k > self.kcap:
            self.kcap = max(e - k, 64)
            self.ktext = <uint8_t*>grow(self.ktext, self.kcap)
        n[0] = json_unescape(self.buf + k, e - k, self.ktext)
        return self.ktext if n[0] >= 0 else NULL

    cdef bint key_equals(self, int64_t k, int64_t e, int esc, const char* name,
                         int64_t ln) except -1 nogil:
        """The key buf[k:e] is name[0:ln], escapes read as what they stand for."""
        cdef int64_t n
        cdef const uint8_t* t = self.key_text(k, e, esc, &n)
        return t != NULL and key_is(t, 0, n, name, ln)

    cdef int64_t key_scanned(self, int64_t i, int level, int64_t g, int64_t* k, int64_t* e,
                             int* esc, int64_t* f) except -2 nogil:
        """`header_key` when the key is none of the two remembered at its place g (-1: none
        is kept there): scanned (`key_at`), looked up (`key_field`), and remembered as the
        newer of the two."""
        cdef int64_t v = self.key_at(i, k, e, esc), ln
        cdef const uint8_t* t
        if v == BAD:
            return BAD
        # a key is its text: one with escapes names a field as the same key without them
        t = self.key_text(k[0], e[0], esc[0], &ln)
        f[0] = self.key_field(t, 0, ln, level) if t != NULL else -1
        if g >= 0:
            ln = e[0] - k[0] if not esc[0] and e[0] - k[0] <= GUESS_LEN else 0
            self.glen[g + GUESS_PLACES] = self.glen[g]          # the newer becomes the older
            self.gfield[g + GUESS_PLACES] = self.gfield[g]
            memcpy(self.gkey + (g + GUESS_PLACES) * GUESS_LEN, self.gkey + g * GUESS_LEN,
                   self.glen[g])
            self.glen[g] = <uint8_t>ln
            self.gfield[g] = f[0]
            memcpy(self.gkey + g * GUESS_LEN, self.buf + k[0], ln)
        return v

    cdef int64_t after_value(self, int64_t e, uint8_t close, int* done) noexcept nogil:
        """After a member's (or element's) value ending at e: the next one's start (done 0),
        or just past the container closed by `close` (done 1), or BAD."""
        cdef const uint8_t* b = self.buf
        cdef int64_t i = ws(b, e, self.dend)
        if i >= self.dend:
            return BAD
        if b[i] == 44:
            done[0] = 0
            i = ws(b, i + 1, self.dend)
            return i if i < self.dend else BAD
        if self.checking and b[i] != close:
            return BAD
        done[0] = 1
        return i + 1

    cdef int64_t skip(self, int64_t v, int depth_left) noexcept nogil:
        """The end of the value at v (checked when checking), or BAD."""
        cdef const uint8_t* b = self.buf
        cdef int64_t end = self.dend, e, ep
        cdef int esc = 0, code
        cdef uint8_t c = b[v]
        self.last_esc = True
        if not self.checking:
            return token_end(b, v, end)
        if c == 34:
            e = self.sscan(v + 1, &esc)
            self.last_esc = esc
            return e + 1 if e >= 0 else BAD
        if c == 45 or (48 <= c <= 57):
            e = json_number_end(b, v, end)
            return e if e >= 0 else BAD
        if c == 116:
            return v + 4 if v + 4 <= end and memcmp(b + v, b"true", 4) == 0 else BAD
        if c == 102:
            return v + 5 if v + 5 <= end and memcmp(b + v, b"false", 5) == 0 else BAD
        if c == 110:
            return v + 4 if v + 4 <= end and memcmp(b + v, b"null", 4) == 0 else BAD
        if c == 123 or c == 91:
            e = json_value_scan_d(b, v, end, depth_left, &self.high, &code, &ep)
            return e if e >= 0 else BAD
        return BAD

    cdef bint utf8_ok(self, int64_t start, int64_t end) noexcept nogil:
        """The checked walk's last step: the document's bytes are UTF-8 (looked at only when
        a byte past 0x7F was met)."""
        return not self.high or cdc_utf8_first_invalid(self.buf + start, end - start) < 0

    # -- records -----------------------------------------------------------------------------
    cdef int corrupt(self, int64_t start, int64_t end, int64_t code, int64_t scode,
                     int64_t err_pos) except -1 nogil:
        """A record that names no table: only _corrupt_record and _error."""
        cdef int64_t slot = self.corrupt_slot if self.corrupt_slot >= 0 else self.headers_slot
        if slot >= 0:
            return self._corrupt(<Out>self.outp[slot], slot, start, end, code, scode, err_pos)
        self.records += 1
        self.seq += 1
        return 0

    cdef int _corrupt(self, Out o, int64_t slot, int64_t start, int64_t end, int64_t code,
                      int64_t scode, int64_t err_pos) except -1 nogil:
        cdef int64_t row
        if True:
            if o.length >= self.batch_rows:
                self.full_slot = slot
                return STOP_BATCH
            o.reserve_row()
            row = o.length
            o.null_row(row)
            (<int64_t*>o.seq.data)[row] = self.seq
            col_valid(o.seq, row)
            o.add_problem(row, scode, code, err_pos, start, end)
            o.finish_row(row, self.msg, start, end, ROW_OTHER)
        self.records += 1
        self.seq += 1
        return 0

    cdef int counted(self, bint control, bint unknown) noexcept nogil:
        """A record no output wants: counted only."""
        self.control += control
        self.unknown += unknown
        self.records += 1
        self.seq += 1
        return 0

    cdef int64_t table_id(self, uint8_t tag, int64_t sa, int64_t sn, int64_t ta,
                          int64_t tn) except -2 nogil:
        """The id of the table named by `tag` and the raw texts buf[sa:sa+sn], buf[ta:ta+tn],
        or -1 (then pending_name holds them for Python: tag, first text, NUL, second)."""
        cdef const uint8_t* b = self.buf
        cdef int64_t t, n = 2 + sn + tn
        cdef const char* p
        if self.last_tid >= 0:
            t = self.last_tid
            p = self.tname[t]
            if self.tname_n[t] == n and <uint8_t>p[0] == tag and memcmp(p + 1, b + sa, sn) == 0 \
                    and memcmp(p + 2 + sn, b + ta, tn) == 0:
                return t
        for t in range(self.ntid):
            p = self.tname[t]
            if self.tname_n[t] == n and <uint8_t>p[0] == tag and memcmp(p + 1, b + sa, sn) == 0 \
                    and memcmp(p + 2 + sn, b + ta, tn) == 0:
                self.last_tid = t
                return t
        with gil:
            self.pending_name = (bytes([tag]) + bytes(b[sa:sa + sn]) + b"\0"
                                 + bytes(b[ta:ta + tn]))
        return -1

    cdef int64_t slot_of(self, Out o) noexcept nogil:
        """The slot of an output."""
        cdef int64_t k
        for k in range(self.nout):
            if self.outp[k] == <void*>o:
                return k
        return -1

    # -- row images --------------------------------------------------------------------------
    cdef int64_t value(self, Out o, Column c, int64_t j, int64_t row, int64_t v,
                       int64_t field) except -2 nogil:
        """The value at v of column j into c, converted by the format (`convert`); returns
        its end (BAD: not well-formed, when the walk checks)."""
        cdef const uint8_t* b = self.buf
        cdef int esc = 0
        cdef int64_t e
        cdef int r
        if b[v] == 34:
            e = self.sscan(v + 1, &esc) if self.checking else str_end(b, v + 1, self.dend, &esc)
            if e < 0:
                return BAD
            e += 1
        else:
            e = self.skip(v, 508)           # (an image's member: at least 4 deep)
            if e == BAD:
                return BAD
        if b[v] == 110:
            if not o.nullable[j]:
                o.add_problem(row, field, W_NOT_NULL, v, v, e)
            return e
        r = self.convert(o, c, j, row, v, e, esc)
        if r != 1:
            undo_value(c, row)
            o.add_problem(row, field, W_SURROGATE if r == 2 else W_VALUE, v, v, e)
        return e

    cdef int convert(self, Out o, Column c, int64_t j, int64_t row, int64_t v, int64_t e,
                     int esc) except -1 nogil:
        """1 when the (non-null) value b[v:e] is one of column j's type and was written into
        c, 2 for a lone surrogate in a text, else 0: the format's reading of values."""
        with gil:
            raise NotImplementedError

    cdef int image(self, Out o, int64_t row, int64_t v, bint after, bint values) except -1 nogil:
        """The (well-formed) image object at v into the row's after (or before) columns, each
        value by the format's `value` (without `values`, skipped as a key the table lacks is:
        a projection that reads no before image, SPEC §1); keys matched against the names the
        previous row had there; 0, or STOP_COLUMN when a layout typed by the data meets a key
        it lacks (an array form's one-member objects come here one by one)."""
        cdef const uint8_t* b = self.buf
        cdef int64_t end = self.dend, i, k, e, w, j, guess = 0, n = o.ncols, f0, ln
        cdef int esc
        cdef uint8_t* sent = o.sent_a if after else o.sent_b
        cdef void** cols = o.afterp if after else o.beforep
        f0 = IMG_AFTER if after else IMG_BEFORE
        cdc_ks_clear(&self.xkeys)
        i = ws(b, v + 1, end)
        if b[i] == 125:
            return 0
        while True:
            k = i + 1
            j = -1
            esc = 0
            if guess < n and o.plain:
                ln = o.noff[guess + 1] - o.noff[guess]
                if k + ln < end and b[k + ln] == 34 and cdc_jv_same(
                        b + k, <const uint8_t*>o.namesp + o.noff[guess], ln):
                    j = guess               # the key the previous row had here
                    e = k + ln
            if j < 0:
                e = str_end(b, k, end, &esc)
                j = o.column_of(b + k, e - k) if not esc else o.column_of_escaped(b + k, e - k)
            w = ws(b, ws(b, e + 1, end) + 1, end)
            if j < 0:
                if o.derived and j != NO_NAME:
                    with gil:
                        self.pending_key = bytes(b[k:e])
                    self.pending_slot = self.slot_of(o)
                    return STOP_COLUMN
                self.extra_key(k, e, esc)   # a key the table lacks: counted, skipped
                e = token_end(b, w, end)
            else:
                guess = j + 1
                if sent[j]:
                    undo_value(<Column>cols[j], row)
                    o.twice_problem(row, f0 + j, i)
                    e = token_end(b, w, end)
                else:
                    sent[j] = 1
                    if values:
                        e = self.value(o, <Column>cols[j], j, row, w, f0 + j)
                    else:
                        e = token_end(b, w, end)
            i = ws(b, e, end)
            if b[i] == 125:
                return 0
            i = ws(b, i + 1, end)

    cdef int64_t walk_image(self, Out o, int64_t row, int64_t v, bint after,
                            int depth) except -2 nogil:
        """The image object at v (nested `depth` deep) into the row's after (or before)
        columns, each value by the format's `value` (a before image's values only checked by
        `skip`, as a key the table lacks is, when the call wants no before image — a
        projection, SPEC §1 —; its keys are matched all the same), each step checked when
        the walk checks (a
        format may read images as its walk meets them, before it knows their row's table:
        into the output it guesses, taken back when wrong); returns the object's end, or BAD.
        Keys are matched against the names the previous row had there; one the layout lacks
        goes to `extra_key` (a layout typed by the data is read by `image`)."""
        cdef const uint8_t* b = self.buf
        cdef int64_t end = self.dend, i, k, e, w, j, guess = 0, n = o.ncols, ln
        cdef int64_t f0 = IMG_AFTER if after else IMG_BEFORE
        cdef int esc, done
        cdef bint values = after or o.want_before
        cdef uint8_t* sent = o.sent_a if after else o.sent_b
        cdef void** cols = o.afterp if after else o.beforep
        cdc_ks_clear(&self.xkeys)
        i = ws(b, v + 1, end)
        if i >= end:
            return BAD
        if b[i] == 125:
            return i + 1
        while True:
            if b[i] != 34:
                return BAD
            k = i + 1
            j = -1
            if guess < n and o.plain:
                ln = o.noff[guess + 1] - o.noff[guess]
                if k + ln < end and b[k + ln] == 34 and cdc_jv_same(
                        b + k, <const uint8_t*>o.namesp + o.noff[guess], ln):
                    j = guess               # the key the previous row had here
                    e = k + ln
                    w = ws(b, e + 1, end)
                    if w >= end or b[w] != 58:
                        return BAD
                    w = ws(b, w + 1, end)
                    if w >= end:
                        return BAD
            if j < 0:
                w = self.key_at(i, &k, &e, &esc)
                if w == BAD:
                    return BAD
                j = o.column_of(b + k, e - k) if not esc else o.column_of_escaped(b + k, e - k)
            if j < 0:
                self.extra_key(k, e, esc)
                e = self.skip(w, 512 - depth)
            else:
                guess = j + 1
                if sent[j]:
                    undo_value(<Column>cols[j], row)
                    o.twice_problem(row, f0 + j, i)
                    e = self.skip(w, 512 - depth)
                else:
                    sent[j] = 1
                    if values:
                        e = self.value(o, <Column>cols[j], j, row, w, f0 + j)
                    else:
                        e = self.skip(w, 512 - depth)
            if e == BAD:
                return BAD
            i = self.after_value(e, 125, &done)
            if i == BAD or done:
                return i

    cdef bint images_row(self, Out o) except -1 nogil:
        """The output's next row reserved for images read as the walk meets them, before
        their record is known to be its (qlik, olr): when the output has a layout of its own
        (not typed by the data) and room in its batch. The row is null, no column of it sent
        yet, no key the table lacks met."""
        if not o.images or o.derived or o.length >= self.batch_rows:
            return False
        o.reserve_row()
        o.null_row(o.length)
        if o.ncols:                              # no columns: no arrays (NULL)
            memset(o.sent_b, 0, o.ncols)
            memset(o.sent_a, 0, o.ncols)
        self.nx = 0
        return True

    cdef void reset_fields(self, int64_t a, int64_t z) noexcept nogil:
        """Fields a .. z-1 not met (yet)."""
        cdef int64_t f
        for f in range(a, z):
            self.hp[f] = -1
            self.he[f] = -1
            self.hk[f] = -1
            self.hn[f] = 0

    cdef void extra_key(self, int64_t k, int64_t e, int esc) noexcept nogil:
        """A key buf[k:e] (`esc`: it holds a backslash) of the image in hand that names no
        column of its layout: counted once per key and image, as the reference counts the
        keys of the dict json.loads gives (a key given twice once; "X" and "\\u0058" one key)."""
        if cdc_ks_add(&self.xkeys, self.buf + k, e - k, esc):
            self.nx += 1
