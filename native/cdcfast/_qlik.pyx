# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True, initializedcheck=False
"""The `qlik` kernel: Qlik Replicate data messages straight into Arrow buffers.

Each document is walked once, every step checked (_walk.pyx); the strict scanner reads it only
when the walk refuses it, for the code and byte its pure-Python twin gives. The walk records
where the fields are — the Kafka envelope's (`type`, `messageSchemaId`, `message`) and its
message's, or the Pub/Sub form's at the top, and the `headers` fields of either — and then the
record is written: headers into the envelope, the images converted straight into the output's
columns by the column kinds of the table's layout (cdcfast/formats/qlik.py), and the masks read
as one integer each (_hexmask.h), bit i into column i's flag bitmap.

The kernel stops for Python when it needs an answer: a metadata message to read (STOP_META), a
table it has no id for (STOP_TABLE), a column a derived layout has not met (STOP_COLUMN), a full
batch. It stops before writing anything of the document, and reads it again afterwards.

Problems of a row are kept as one entry, the first in document order (the reference's rule);
Python writes their texts (cdcfast/formats/_qlik_run.py; the rules: docs/qlik.md).
"""
cimport cython
from libc.stdint cimport uint8_t, int32_t, int64_t, uint64_t
from libc.stdlib cimport free
from libc.string cimport memcpy, memcmp, memset
from libc.math cimport NAN, INFINITY, isinf

from cdcfast._mem cimport grow
from cdcfast._arrow cimport Column, VAR, BITS, col_valid, bits_set, bits_get
from cdcfast._kinds cimport *
from cdcfast._values cimport parse_float
from cdcfast._jsonrow cimport *
# problem codes (their spec: cdcfast/formats/_qlik_codes.py; _qlik_run turns them into texts)
from cdcfast._qlik_codes cimport *
from cdcfast._rows cimport Out
from cdcfast._walk cimport (Walker, padded, header_key, MAX_FIELDS, STOP_END, STOP_BATCH, STOP_TABLE, STOP_COLUMN,
                            STOP_META, STOP_PAUSE, BAD, IMG_BEFORE, IMG_AFTER)

assert NF <= MAX_FIELDS, "the walk's field table is too small for this format"

cdef extern from "cdcfast/_olrval.h":
    int64_t olr_hex "cdc_olr_hex"(const uint8_t* p, int64_t n, uint8_t* dst) noexcept nogil

cdef extern from *:
    """
    #include "cdcfast/_olrval.h"
    /* YYYY-MM-DD[T| ]HH:MM:SS[.f...] (no zone) as us since the epoch (docs/qlik.md) */
    static inline int cdc_qlik_stamp(const uint8_t* p, int64_t n, int64_t* us) {
        int64_t days, clock;
        if (n < 19 || (p[10] != 'T' && p[10] != ' ') || !cdc_jv_date(p, 10, &days)
            || !cdc_jv_time(p + 11, n - 11, &clock))
            return 0;
        if (days > (INT64_MAX - clock) / CDC_US_PER_DAY || days < INT64_MIN / CDC_US_PER_DAY)
            return 0;
        *us = days * CDC_US_PER_DAY + clock;
        return 1;
    }
    /* p[0:n] is the lower-case word w in any case */
    static inline int cdc_qlik_word(const uint8_t* p, const char* w, int64_t n) {
        for (int64_t i = 0; i < n; i++)
            if ((p[i] | 0x20) != (uint8_t)w[i])
                return 0;
        return 1;
    }
    """
    int stamp_us "cdc_qlik_stamp"(const uint8_t* p, int64_t n, int64_t* us) noexcept nogil
    int word_is "cdc_qlik_word"(const uint8_t* p, const char* w, int64_t n) noexcept nogil

cdef extern from "cdcfast/_hexmask.h":
    int64_t CDC_HEXMASK_OK
    int64_t hexmask_read "cdc_hexmask_read"(const uint8_t* p, int64_t n, uint8_t* bits,
                                            int64_t nbytes) noexcept nogil


# fields: the top level's, the Kafka message's, the headers' (at the top, in the message);
# their names: _qlik_run.FIELDS
cdef enum:
    T_TYPE = 0
    T_MSID = 1
    T_MESSAGE = 2
    T_HEADERS = 3
    T_SCHEMA = 4
    T_TABLE = 5
    T_DATA = 6
    T_BEFORE = 7
    T_TSTRUCT = 8
    M_HEADERS = 9
    M_SCHEMA = 10
    M_TABLE = 11
    M_DATA = 12
    M_BEFORE = 13
    M_TSTRUCT = 14
    H_OP = 15            # the headers' fields at the top; + NHF: in the message
    H_SEQ = 16
    H_TS = 17
    H_POS = 18
    H_TX = 19
    H_CMASK = 20
    H_KMASK = 21
    H_COUNTER = 22
    H_LAST = 23
    NHF = 9
    NF = H_OP + 2 * NHF

# the source struct's fields (cdcfast/formats/qlik.py SOURCE), in Out.src
cdef enum:
    S_SEQUENCE = 0
    S_POSITION = 1
    S_CMASK = 2
    S_KMASK = 3
    S_LAST = 4
    S_OPERATION = 5

# operations (as the rows of cdcfast/_rows.pxd name c, u, d)
cdef enum:
    OP_NONE = 0
    OP_R = 1
    OP_C = 3
    OP_U = 4
    OP_D = 5


FIELDS = NF


@cython.final
cdef class Scanner(Walker):
    """Walks the documents of one Part (see the module docstring)."""
    cdef uint8_t hesc[NF]           # its string may hold an escape
    # the record's form: the fields that hold its body (the Kafka message's, else the top's)
    cdef bint kafka
    cdef int64_t fh, fs, ft, fd, fb, h0
    cdef readonly int64_t pending_start, pending_end   # STOP_META: the document
    cdef readonly int64_t pending_pos                  # STOP_TABLE: the value naming no table
    cdef int mask_c, mask_k         # changeMask / columnMask: 0 none, 1 read, 2 not hex
    # images read as the walk meets them (see `predict`): into which output and row, the
    # table id that output was chosen by, and which of data / beforeData were read
    cdef int64_t pre_slot, pre_row, pre_tid
    cdef bint pre_d, pre_b
    cdef uint8_t* scratch           # a value's text unescaped; a mask's bits
    cdef int64_t scap

    def __cinit__(self, data, offsets, valid, bint images):
        self.scratch = NULL
        self.scap = 0
        self.pre_slot = -1

    def __dealloc__(self):
        free(self.scratch)

    cdef uint8_t* room(self, int64_t n) except NULL nogil:
        if n > self.scap:
            self.scap = max(n, 2 * self.scap, 256)
            self.scratch = <uint8_t*>grow(self.scratch, self.scap)
        return self.scratch

    # -- what Python answers -----------------------------------------------------------------
    def meta_read(self):
        """The metadata message of the last STOP_META was read: not a record, counted as
        control; the walk goes on after it."""
        self.control += 1
        self.pos = self.pending_end

    def meta_corrupt(self, int64_t text, int64_t pos):
        """The metadata message of the last STOP_META cannot be read: a corrupt record (its
        reason: Python's text number `text`, at byte `pos`). STOP_BATCH when its output is
        full (then Python flushes and calls this again)."""
        cdef int r = self.corrupt(self.pending_start, self.pending_end, P_META, text, pos)
        if r == 0:
            self.pos = self.pending_end
        return r

    # -- the document ------------------------------------------------------------------------
    cdef int document(self) except -1 nogil:
        """The document at self.pos: 0 when done with it, else a STOP_ code (self.pos then
        stays at the document, which is read again)."""
        cdef const uint8_t* b = self.buf
        cdef int64_t start = self.pos, stop = self.content_end(), doc_end, err_pos, top, v
        cdef int code, r
        self.dstart = start
        top = BAD
        if b[start] == 123:
            self.checking = True
            self.high = 0
            self.dend = stop
            self.reset_fields(0, NF)
            self.pre_slot = -1
            self.pre_d = self.pre_b = False
            top = self.walk(start, 0, 1)
            if top != BAD and not self.utf8_ok(start, top):
                top = BAD
            if top == BAD:
                self.drop_pre()
        if top == BAD:
            if json_document(b, start, stop, &doc_end, &code, &err_pos) != 0:
                r = self.corrupt(start, stop, P_JSON, code, err_pos)
                if r == 0:
                    self.pos = self.piece_end    # the rest of the piece is that record
                return r
            self.dend = doc_end
            if b[start] == 110:                   # null: a tombstone
                self.tombstones += 1
                self.pos = doc_end
                return 0
            if b[start] != 123:
                r = self.corrupt(start, doc_end, P_NOT_DOC, 0, start)
                if r == 0:
                    self.pos = doc_end
                return r
            self.checking = False
            self.reset_fields(0, NF)
            top = self.walk(start, 0, 1)
        self.dend = top
        self.kafka = self.hn[T_MESSAGE] > 0
        if self.kafka:
            v = self.hp[T_MESSAGE]
            if self.hn[T_MESSAGE] > 1 or b[v] != 123:
                self.drop_pre()
                return self.done(self.corrupt(start, top, P_MESSAGE, self.hn[T_MESSAGE] > 1,
                                              self.hk[T_MESSAGE] if self.hn[T_MESSAGE] > 1
                                              else v))
            self.fh, self.fs, self.ft, self.fd, self.fb = \
                M_HEADERS, M_SCHEMA, M_TABLE, M_DATA, M_BEFORE
            self.h0 = H_OP + NHF
        else:
            self.fh, self.fs, self.ft, self.fd, self.fb = \
                T_HEADERS, T_SCHEMA, T_TABLE, T_DATA, T_BEFORE
            self.h0 = H_OP
        if (self.hn[T_TYPE] == 1 and self.is_word(T_TYPE, b"MD", 2)) \
                or self.hn[M_TSTRUCT if self.kafka else T_TSTRUCT] > 0:
            self.drop_pre()
            self.pending_start = start
            self.pending_end = top
            return STOP_META
        return self.done(self.record())

    cdef int done(self, int r) noexcept nogil:
        if r == 0:
            self.pos = self.dend
        return r

    cdef int64_t key_field(self, const uint8_t* b, int64_t k, int64_t n, int level) noexcept nogil:
        """The field a key names at a level (0 the top, 1 the Kafka message, 2 the top's
        headers, 3 the message's headers)."""
        cdef int64_t f = -1
        if level >= 2:
            if n == 9 and memcmp(b + k, b"operation", 9) == 0:
                f = H_OP
            elif n == 14 and memcmp(b + k, b"changeSequence", 14) == 0:
                f = H_SEQ
            elif n == 9 and memcmp(b + k, b"timestamp", 9) == 0:
                f = H_TS
            elif n == 14 and memcmp(b + k, b"streamPosition", 14) == 0:
                f = H_POS
            elif n == 13 and memcmp(b + k, b"transactionId", 13) == 0:
                f = H_TX
            elif n == 10 and memcmp(b + k, b"changeMask", 10) == 0:
                f = H_CMASK
            elif n == 10 and memcmp(b + k, b"columnMask", 10) == 0:
                f = H_KMASK
            elif n == 23 and memcmp(b + k, b"transactionEventCounter", 23) == 0:
                f = H_COUNTER
            elif n == 20 and memcmp(b + k, b"transactionLastEvent", 20) == 0:
                f = H_LAST
            return f + NHF if f >= 0 and level == 3 else f
        if n == 4 and memcmp(b + k, b"data", 4) == 0:
            f = T_DATA
        elif n == 10 and memcmp(b + k, b"beforeData", 10) == 0:
            f = T_BEFORE
        elif n == 7 and memcmp(b + k, b"headers", 7) == 0:
            f = T_HEADERS
        elif n == 6 and memcmp(b + k, b"schema", 6) == 0:
            f = T_SCHEMA
        elif n == 5 and memcmp(b + k, b"table", 5) == 0:
            f = T_TABLE
        elif n == 14 and memcmp(b + k, b"tableStructure", 14) == 0:
            f = T_TSTRUCT
        if level == 1:
            return f - T_HEADERS + M_HEADERS if f >= 0 else -1
        if f >= 0:
            return f
        if n == 4 and memcmp(b + k, b"type", 4) == 0:
            return T_TYPE
        if n == 15 and memcmp(b + k, b"messageSchemaId", 15) == 0:
            return T_MSID
        if n == 7 and memcmp(b + k, b"message", 7) == 0:
            return T_MESSAGE
        return -1

    cdef int64_t walk(self, int64_t i, int level, int depth) except -2 nogil:
        """Record the fields of the object at i (see key_field for the levels; `depth`: its
        nesting, 1 at the top); returns its end, or BAD. A key with escapes is the key
        it spells (`header_key`)."""
        cdef const uint8_t* b = self.buf
        cdef int64_t end = self.dend, k, e, v, f, at = 0
        cdef int esc, done
        i = ws(b, i + 1, end)
        if i >= end:
            return BAD
        if b[i] == 125:
            return i + 1
        while True:
            v = header_key(self, i, level, depth, at, &k, &e, &esc, &f)
            if v == BAD:
                return BAD
            at += 1
            if f >= 0:
                self.hn[f] += 1
                if self.hn[f] == 1:
                    self.hp[f] = v
                elif self.hn[f] == 2:
                    self.hk[f] = i
            if b[v] == 123 and f >= 0 and self.hn[f] == 1 and (
                    f == T_MESSAGE or f == T_HEADERS or f == M_HEADERS):
                e = self.walk(v, 1 if f == T_MESSAGE else 2 if f == T_HEADERS else 3,
                              depth + 1)
            elif b[v] == 123 and self.checking and f >= 0 and self.hn[f] == 1 and (
                    f == M_DATA or f == M_BEFORE or (f == T_DATA or f == T_BEFORE)
                    and self.hn[T_MESSAGE] == 0) and self.predict(f >= M_HEADERS):
                e = self.pre_image(v, f == M_DATA or f == T_DATA, depth + 1)
            else:
                e = self.skip(v, 512 - depth)
            if e == BAD:
                return BAD
            if f >= 0 and self.hn[f] == 1:
                self.he[f] = e
                self.hesc[f] = self.last_esc
            i = self.after_value(e, 125, &done)
            if i == BAD or done:
                return i

    # -- fields ------------------------------------------------------------------------------
    cdef bint given(self, int64_t f) noexcept nogil:
        """Field f is there once, and neither null nor ""."""
        cdef int64_t v = self.hp[f]
        return self.hn[f] == 1 and self.buf[v] != 110 and not (self.buf[v] == 34
                                                                and self.buf[v + 1] == 34)

    cdef bint is_word(self, int64_t f, const char* w, int64_t n) noexcept nogil:
        """Field f is the JSON string w (no escapes)."""
        cdef int64_t v = self.hp[f]
        return self.buf[v] == 34 and self.he[f] - v - 2 == n and memcmp(self.buf + v + 1, w,
                                                                        n) == 0

    cdef bint headers_ok(self) noexcept nogil:
        """The body's headers are one object (their fields can be read)."""
        return self.hn[self.fh] == 1 and self.buf[self.hp[self.fh]] == 123

    cdef int64_t hf(self, int64_t f) noexcept nogil:
        """A headers field of the record's form (f: its H_ number)."""
        return f - H_OP + self.h0

    cdef int twice(self, Out o, int64_t row, int64_t f) except -1 nogil:
        if self.hn[f] > 1:
            o.add_problem(row, f, P_TWICE, self.hk[f], self.hk[f], self.hk[f])
            return 1
        return 0

    cdef int field_text(self, Out o, int64_t row, int64_t f, const uint8_t** p,
                        int64_t* n, int64_t surrogate=P_SURROGATE) except -1 nogil:
        """1 with the text of field f in (p, n) — a string unescaped, a number or boolean its
        JSON text (docs/qlik.md) — or 0: absent, null, "", or a problem (given twice, an
        object or array, a lone surrogate)."""
        cdef const uint8_t* b = self.buf
        cdef int64_t v = self.hp[f], e, k
        cdef int esc = 0
        cdef uint8_t* t
        if v < 0 or self.twice(o, row, f) or not self.given(f):
            return 0
        e = self.he[f]
        if b[v] == 123 or b[v] == 91:
            o.add_problem(row, f, P_TEXT, v, v, e)
            return 0
        if b[v] != 34:
            p[0] = b + v
            n[0] = e - v
            return 1
        if self.hesc[f]:
            str_end(b, v + 1, self.dend, &esc)
        if not esc:
            p[0] = b + v + 1
            n[0] = e - v - 2
            return 1
        t = self.room(e - v)
        k = json_unescape(b + v + 1, e - v - 2, t)
        if k < 0:                           # (what the field's reader calls such a text)
            o.add_problem(row, f, surrogate, v, v, e)
            return 0
        p[0] = t
        n[0] = k
        return 1

    cdef int text(self, Out o, int64_t row, int64_t f, Column c) except -1 nogil:
        """Field f as text into c; 1 when written."""
        cdef const uint8_t* p
        cdef int64_t n
        if not self.field_text(o, row, f, &p, &n):
            return 0
        put_bytes(c, row, p, n)
        return 1

    cdef int name_text(self, int64_t f) noexcept nogil:
        """Field f can name a table: once, neither null nor "", not a container."""
        return self.given(f) and self.buf[self.hp[f]] != 123 and self.buf[self.hp[f]] != 91

    cdef int names(self, int64_t f) except -1 nogil:
        """Table field f names a table: name_text, and no lone surrogate in a string's
        escapes (no UTF-8 text carries one: the message then names its table otherwise)."""
        cdef const uint8_t* b = self.buf
        cdef int64_t v = self.hp[f], e = self.he[f]
        cdef int esc = 0
        if not self.name_text(f):
            return 0
        if b[v] != 34 or not self.hesc[f]:
            return 1
        str_end(b, v + 1, self.dend, &esc)
        return not esc or json_unescape(b + v + 1, e - v - 2, self.room(e - v)) >= 0

    # -- the record --------------------------------------------------------------------------
    cdef int record(self) except -1 nogil:
        """One data message: routed, then its row written (or a stop, nothing written)."""
        cdef const uint8_t* b = self.buf
        cdef int64_t tid, slot, sa = 0, sn = 0, ta = 0, tn = 0, at
        cdef int64_t start = self.dstart, end = self.dend
        cdef uint8_t tag
        if self.names(self.ft):
            tag = 0
            ta = self.hp[self.ft]
            tn = self.he[self.ft] - ta
            if self.name_text(self.fs):
                sa = self.hp[self.fs]
                sn = self.he[self.fs] - sa
        elif self.kafka and self.name_text(T_MSID):
            tag = 1
            ta = self.hp[T_MSID]
            tn = self.he[T_MSID] - ta
        elif self.kafka and (self.hn[T_MSID] > 1 or (self.hn[T_MSID] == 1 and (
                b[self.hp[T_MSID]] == 123 or b[self.hp[T_MSID]] == 91))):
            tag = 4                         # an id that cannot name (_qlik_run.TAG_BAD_ID)
        else:
            tag = 2 if self.kafka else 3    # none (null, ""): the `table` argument's
        tid = self.table_id(tag, sa, sn, ta, tn)
        if self.pre_slot >= 0 and (tid != self.pre_tid or self.tslot[tid] != self.pre_slot
                                   or self.hn[self.fd] > 1 or self.hn[self.fb] > 1
                                   or (self.pre_d and self.hp[self.fd] < 0)
                                   or (self.pre_b and self.hp[self.fb] < 0)):
            self.drop_pre()                 # not this record's images after all
        at = self.hp[T_MSID if self.kafka else self.ft]
        if tag == 4 and self.hn[T_MSID] > 1:
            at = self.hk[T_MSID]            # (given twice: at its second key)
        if at < 0:
            at = start
        if tid < 0:
            self.drop_pre()
            self.pending_pos = at
            return STOP_TABLE
        self.cur_tid = tid
        slot = self.tslot[tid]
        if slot <= -2:                          # no table: unattributable (field: the case,
            self.drop_pre()                     # + 10 when the field naming it is absent)
            return self.corrupt(start, end, P_UNNAMED,
                                -2 - slot + (10 if at == start else 0), at)
        self.unknown += self.tunk[tid]
        if slot < 0:
            self.drop_pre()
            return self.counted(False, False)
        return self.write_row(<Out>self.outp[slot], slot, tid, start, end)

    cdef int write_row(self, Out o, int64_t slot, int64_t tid, int64_t start,
                       int64_t end) except -1 nogil:
        """The routed record's row, into its output o (at `slot`)."""
        cdef int64_t row
        cdef int op, r
        if o.length >= self.batch_rows:
            self.drop_pre()
            self.unknown -= self.tunk[tid]
            self.full_slot = slot
            return STOP_BATCH
        if self.pre_slot < 0:
            o.reserve_row()
            row = o.length
            o.null_row(row)
        row = o.length
        op = self.header(o, row)
        self.checking = False               # (the walk has checked the whole document)
        if self.pre_slot >= 0 and not self.pre_fits(op):
            self.drop_pre()                 # a DELETE's data is its before image: again
            o.reserve_row()
            o.null_row(row)
            op = self.header(o, row)
        if self.pre_slot >= 0:              # the images are in: only the flags
            self.pre_slot = -1
            self.extra += self.nx
            if op == OP_D and self.pre_d:   # a DELETE's data is its before image
                self.to_before(o, row)
                self.pre_d = False
                self.pre_b = True
            if self.pre_d:
                col_valid(o.after_v, row)
            if self.pre_b:
                col_valid(o.before_v, row)
            self.flags(o, row, op, self.pre_b, self.pre_d)
        elif o.images and op != OP_NONE:
            r = self.images_of(o, row, op)
            if r != 0:
                o.clear_row(row)
                self.unknown -= self.tunk[tid]
                return r
            self.extra += self.nx
        o.finish_row(row, self.msg, start, end, op)
        self.records += 1
        self.seq += 1
        return 0

    cdef int header(self, Out o, int64_t row) except -1 nogil:
        """The envelope's header fields of the row; returns its operation."""
        cdef const uint8_t* b = self.buf
        cdef const uint8_t* p
        cdef int64_t v, e, x, f, n
        cdef int op = OP_NONE
        cdef int64_t t = self.cur_tid
        col_valid(o.source_v, row)
        (<int64_t*>o.seq.data)[row] = self.seq
        col_valid(o.seq, row)
        if self.tcat_p[2 * t] != NULL:
            put_bytes(o.schema, row, self.tcat_p[2 * t], self.tcat_n[2 * t])
        if self.tcat_p[2 * t + 1] != NULL:  # (NULL: headers() of a message naming no table)
            put_bytes(o.table, row, self.tcat_p[2 * t + 1], self.tcat_n[2 * t + 1])
        self.mask_c = self.mask_k = 0
        # type
        if self.field_text(o, row, T_TYPE, &p, &n) and not (
                n == 2 and (memcmp(p, b"DT", 2) == 0 or memcmp(p, b"MD", 2) == 0)):
            o.add_problem(row, T_TYPE, P_TYPE, self.hp[T_TYPE], self.hp[T_TYPE], self.he[T_TYPE])
        # the table's names as sent, checked as text (a bad one is a problem of the row)
        self.check_text(o, row, self.fs)
        self.check_text(o, row, self.ft)
        if self.kafka and not self.names(self.ft):
            self.check_text(o, row, T_MSID)
        # headers
        if self.hn[self.fh] > 1:
            self.twice(o, row, self.fh)
            return OP_NONE
        if self.hn[self.fh] == 1 and b[self.hp[self.fh]] != 123 and self.given(self.fh):
            v = self.hp[self.fh]
            o.add_problem(row, self.fh, P_NOT_OBJECT, v, v, self.he[self.fh])
            return OP_NONE
        if not self.headers_ok():
            o.add_problem(row, self.hf(H_OP), P_MISSING, self.dstart, self.dstart, self.dstart)
            return OP_NONE
        # operation
        f = self.hf(H_OP)
        if self.text(o, row, f, o.source_op):
            put_bytes(<Column>o.srcp[S_OPERATION], row, o.source_op.data + o.source_op.offs[row],
                      o.source_op.offs[row + 1] - o.source_op.offs[row])
            op = self.operation(o.source_op.data + o.source_op.offs[row],
                                o.source_op.offs[row + 1] - o.source_op.offs[row])
            if op == OP_NONE:
                o.add_problem(row, f, P_BAD_OP, self.hp[f], self.hp[f], self.he[f])
            elif op == OP_R:
                put_bytes(o.op, row, <const uint8_t*>b"r", 1)
            else:
                put_bytes(o.op, row, <const uint8_t*>(b"c" if op == OP_C else b"u"
                                                       if op == OP_U else b"d"), 1)
        elif self.hn[f] <= 1:
            o.add_problem(row, f, P_MISSING, self.dstart, self.dstart, self.dstart)
        # timestamp
        self.stamp(o, row, self.hf(H_TS))
        # changeSequence: the position
        f = self.hf(H_SEQ)
        if self.text(o, row, f, <Column>o.srcp[S_SEQUENCE]):
            self.position(o, <Column>o.srcp[S_SEQUENCE], row)
        self.text(o, row, self.hf(H_TX), o.txid)
        self.counter(o, row, self.hf(H_COUNTER))
        self.text(o, row, self.hf(H_POS), <Column>o.srcp[S_POSITION])
        self.mask_c = self.mask(o, row, self.hf(H_CMASK), <Column>o.srcp[S_CMASK])
        self.mask_k = self.mask(o, row, self.hf(H_KMASK), <Column>o.srcp[S_KMASK])
        self.last_event(o, row, self.hf(H_LAST))
        return op

    cdef int position(self, Out o, Column c, int64_t row) except -1 nogil:
        """changeSequence's text (in c) as commit_pos = change_pos."""
        put_bytes(o.commit_pos, row, c.data + c.offs[row], c.offs[row + 1] - c.offs[row])
        put_bytes(o.change_pos, row, c.data + c.offs[row], c.offs[row + 1] - c.offs[row])
        return 0

    cdef int check_text(self, Out o, int64_t row, int64_t f) except -1 nogil:
        """A text field read only for its problems (a container, a lone surrogate)."""
        cdef const uint8_t* p
        cdef int64_t n
        return self.field_text(o, row, f, &p, &n)

    cdef int stamp(self, Out o, int64_t row, int64_t f) except -1 nogil:
        """timestamp: UTC text YYYY-MM-DD[T| ]HH:MM:SS[.f…] as commit_ts = change_ts."""
        cdef const uint8_t* p
        cdef int64_t n, us
        if not self.field_text(o, row, f, &p, &n):
            return 0
        if not stamp_us(p, n, &us):
            o.add_problem(row, f, P_TIME, self.hp[f], self.hp[f], self.he[f])
            return 0
        put_fixed(o.commit_ts, row, &us, 8)
        put_fixed(o.change_ts, row, &us, 8)
        return 0

    cdef int counter(self, Out o, int64_t row, int64_t f) except -1 nogil:
        """transactionEventCounter: an int64 (a JSON integer or a string holding one) as
        seq."""
        cdef const uint8_t* b = self.buf
        cdef int64_t v = self.hp[f], e, x
        cdef const uint8_t* p
        cdef int64_t n
        if v < 0 or self.twice(o, row, f) or not self.given(f):
            return 0
        e = self.he[f]
        if b[v] == 34:
            if not self.field_text(o, row, f, &p, &n, P_NOT_INT):
                return 0
        else:
            p = b + v
            n = e - v
        if b[v] != 116 and b[v] != 102 and b[v] != 123 and b[v] != 91 \
                and cdc_jv_int(p, n, I64_MIN, I64_MAX, &x):
            (<int64_t*>o.seq.data)[row] = x
            o.rvend[row] = 1
            return 0
        o.add_problem(row, f, P_NOT_INT, v, v, e)
        return 0

    cdef int last_event(self, Out o, int64_t row, int64_t f) except -1 nogil:
        """transactionLastEvent: a JSON boolean, or the text true/false in any case."""
        return self.last_event_into(o, <Column>o.srcp[S_LAST], row, f)

    cdef int last_event_into(self, Out o, Column c, int64_t row, int64_t f) except -1 nogil:
        cdef const uint8_t* b = self.buf
        cdef int64_t v = self.hp[f], e
        cdef const uint8_t* p
        cdef int64_t n
        if v < 0 or self.twice(o, row, f) or not self.given(f):
            return 0
        e = self.he[f]
        if b[v] == 116 or b[v] == 102:
            p = b + v
            n = e - v
        elif b[v] == 34:
            if not self.field_text(o, row, f, &p, &n, P_BOOL):
                return 0
        else:
            o.add_problem(row, f, P_BOOL, v, v, e)
            return 0
        if n == 4 and word_is(p, b"true", 4):
            bits_set(c.data, row)
            col_valid(c, row)
        elif n == 5 and word_is(p, b"false", 5):
            col_valid(c, row)
        else:
            o.add_problem(row, f, P_BOOL, v, v, e)
        return 0

    cdef int operation(self, const uint8_t* p, int64_t n) noexcept nogil:
        if n == 6 and memcmp(p, b"INSERT", 6) == 0:
            return OP_C
        if n == 6 and memcmp(p, b"UPDATE", 6) == 0:
            return OP_U
        if n == 6 and memcmp(p, b"DELETE", 6) == 0:
            return OP_D
        if n == 7 and memcmp(p, b"REFRESH", 7) == 0:
            return OP_R
        return OP_NONE

    cdef int mask(self, Out o, int64_t row, int64_t f, Column c) except -1 nogil:
        """A mask's text into c; 0 none, 1 hex, 2 not hex (a problem)."""
        cdef int64_t n
        if not self.text(o, row, f, c):
            return 0
        n = c.offs[row + 1] - c.offs[row]
        if hexmask_read(c.data + c.offs[row], n, NULL, 0) != CDC_HEXMASK_OK:
            o.add_problem(row, f, P_NOT_HEX, self.hp[f], self.hp[f], self.he[f])
            return 2
        return 1

    # -- images read as the walk meets them ----------------------------------------------------
    cdef bint predict(self, bint kafka_body) except -1 nogil:
        """Whether an image met in the walk can be read now, into the row its record will
        most likely have: its table is known from the fields met so far (messageSchemaId
        before `message`; the Pub/Sub form's schema and table before `data`) and has a fixed
        layout and room. `record` checks the guess and takes the row back if it was wrong
        (another table, a DELETE, whose `data` is its before image, …)."""
        cdef int64_t tid, slot, sa = 0, sn = 0, ta = 0, tn = 0, fs, ft
        cdef uint8_t tag
        if not self.images:
            return False
        if self.pre_slot >= 0:
            return True
        fs, ft = (M_SCHEMA, M_TABLE) if kafka_body else (T_SCHEMA, T_TABLE)
        if self.names(ft):
            tag = 0
            ta = self.hp[ft]
            tn = self.he[ft] - ta
            if self.name_text(fs):
                sa = self.hp[fs]
                sn = self.he[fs] - sa
        elif kafka_body and self.name_text(T_MSID):
            tag = 1
            ta = self.hp[T_MSID]
            tn = self.he[T_MSID] - ta
        else:
            return False
        tid = self.table_id(tag, sa, sn, ta, tn)
        if tid < 0:
            return False
        slot = self.tslot[tid]
        if slot < 0:
            return False
        return self.reserve_pre(<Out>self.outp[slot], slot, tid)

    cdef bint reserve_pre(self, Out o, int64_t slot, int64_t tid) except -1 nogil:
        if not self.images_row(o):
            return False
        self.pre_slot = slot
        self.pre_row = o.length
        self.pre_tid = tid
        return True

    cdef bint pre_fits(self, int op) noexcept nogil:
        """The images read during the walk are the record's: an UPDATE's data and
        beforeData, an INSERT's, REFRESH's or DELETE's data (and no beforeData read; a
        DELETE's is then moved to the before columns) — each read when it is an object, and
        absent or null otherwise."""
        cdef bint d_ok = self.pre_d or self.hp[self.fd] < 0 or self.buf[self.hp[self.fd]] == 110
        cdef bint b_ok = self.pre_b or self.hp[self.fb] < 0 or self.buf[self.hp[self.fb]] == 110
        if op == OP_U:
            return d_ok and b_ok
        return (op == OP_C or op == OP_R or op == OP_D) and d_ok and not self.pre_b

    cdef int to_before(self, Out o, int64_t row) except -1 nogil:
        """Move the row's after values (read from a DELETE's `data`) to its before columns,
        and the row's problem with them."""
        cdef int64_t j, n = o.ncols, k
        for j in range(n):
            if o.sent_a[j]:
                copy_value(<Column>o.afterp[j], <Column>o.beforep[j], row)
                undo_value(<Column>o.afterp[j], row)
        if n:                                    # no columns: no arrays (NULL)
            memcpy(o.sent_b, o.sent_a, n)
            memset(o.sent_a, 0, n)
        o.move_fields(row, IMG_AFTER, IMG_AFTER + IMG_BEFORE, IMG_BEFORE - IMG_AFTER)
        return 0

    cdef void drop_pre(self) noexcept nogil:
        """Take back the images read during the walk."""
        if self.pre_slot >= 0:
            (<Out>self.outp[self.pre_slot]).clear_row(self.pre_row)
            self.pre_slot = -1
        self.pre_d = self.pre_b = False

    cdef int64_t pre_image(self, int64_t v, bint data, int depth) except -2 nogil:
        """The image object at v, read into the predicted row (data: the after columns,
        beforeData: the before ones), each step checked; returns its end, or BAD. A
        projection without before skips beforeData's values, never data's: a DELETE's data
        is its before image but the record's only one (moved there by `to_before`)."""
        if data:
            self.pre_d = True
        else:
            self.pre_b = True
        return self.walk_image(<Out>self.outp[self.pre_slot], self.pre_row, v, data, depth)

    # -- row images --------------------------------------------------------------------------
    cdef int images_of(self, Out o, int64_t row, int op) except -1 nogil:
        """before, after, changed, present of the row (docs/qlik.md, "Images, changed,
        present"); a stop (the row is then taken back) when a derived layout meets a new
        column. The images are read in document order (a derived layout adds columns in the
        order they are met)."""
        cdef int64_t fd = self.fd, fb = self.fb, j, n
        cdef int r = 0
        cdef bint has_b = False, has_a = False
        cdef bint data_first = self.hp[fb] < 0 or (self.hp[fd] >= 0 and self.hp[fd] < self.hp[fb])
        self.nx = 0
        if o.ncols:                              # no columns: no arrays (NULL)
            memset(o.sent_b, 0, o.ncols)
            memset(o.sent_a, 0, o.ncols)
        if data_first:
            r = self.one_image(o, row, fd, op != OP_D, &has_a if op != OP_D else &has_b)
            if r == 0 and op == OP_U:
                r = self.one_image(o, row, fb, False, &has_b)
        else:
            if op == OP_U:
                r = self.one_image(o, row, fb, False, &has_b)
            if r == 0:
                r = self.one_image(o, row, fd, op != OP_D, &has_a if op != OP_D else &has_b)
        if r != 0:
            return r
        if o.want_flags:                # (a projection without changed and present: neither)
            self.flags(o, row, op, has_b, has_a)
        return 0

    cdef int one_image(self, Out o, int64_t row, int64_t f, bint after, bint* has) except -1 nogil:
        """The image at field f into the after (or before) columns."""
        cdef const uint8_t* b = self.buf
        cdef int64_t v = self.hp[f]
        cdef int r
        has[0] = False
        if v < 0 or self.twice(o, row, f) or b[v] == 110:
            return 0
        if b[v] != 123:
            o.add_problem(row, f, P_NOT_OBJECT, v, v, self.he[f])
            return 0
        # a projection without before skips beforeData's values, never data's (a DELETE's
        # data, read into the before columns, is the record's only image)
        r = self.image(o, row, v, after, f == self.fd or o.want_before)
        if r != 0:
            return r
        if after:
            col_valid(o.after_v, row)
        else:
            col_valid(o.before_v, row)
        has[0] = True
        return 0

    cdef uint8_t* mask_bits(self, Column c, int64_t row, int64_t nb) except NULL nogil:
        """The bits of the hex mask at c's row (in the scratch buffer)."""
        cdef uint8_t* bits = self.room(nb + 1)
        hexmask_read(c.data + c.offs[row], c.offs[row + 1] - c.offs[row], bits, nb)
        return bits

    cdef int flags(self, Out o, int64_t row, int op, bint has_b, bint has_a) except -1 nogil:
        """present from columnMask (else the shown image's keys), changed from changeMask
        (else computed, SPEC §3)."""
        cdef int64_t j, n = o.ncols, byte = row >> 3, nb = (o.ncols + 7) >> 3
        cdef uint8_t bit = <uint8_t>(1 << (row & 7))
        cdef uint8_t*** fl = o.flags
        cdef uint8_t* bits
        cdef uint8_t* shown = o.sent_b if op == OP_D else o.sent_a
        cdef const uint8_t* lob
        cdef bint has = has_b if op == OP_D else has_a
        # present
        if self.mask_k == 1:
            bits = self.mask_bits(<Column>o.srcp[S_KMASK], row, nb)
            col_valid(o.present_v, row)
            for j in range(n):          # (no branch on the mask's bits: they vary by row)
                fl[4 * j + 1][0][byte] |= bit
                fl[4 * j][0][byte] |= bit * ((bits[j >> 3] >> (j & 7)) & 1)
        elif self.mask_k == 0 and has:
            col_valid(o.present_v, row)
            for j in range(n):
                fl[4 * j + 1][0][byte] |= bit
                if shown[j]:
                    fl[4 * j][0][byte] |= bit
        # changed
        if self.mask_c == 1:
            bits = self.mask_bits(<Column>o.srcp[S_CMASK], row, nb)
            col_valid(o.changed_v, row)
            lob = o.lobp
            for j in range(n):
                if lob[j]:
                    continue
                fl[4 * j + 3][0][byte] |= bit
                fl[4 * j + 2][0][byte] |= bit * ((bits[j >> 3] >> (j & 7)) & 1)
        elif self.mask_c == 0 and (op != OP_U or (has_b and has_a)):
            col_valid(o.changed_v, row)
            for j in range(n):
                fl[4 * j + 3][0][byte] |= bit
                if op == OP_C or op == OP_R or (op == OP_U and differs(
                        <Column>o.beforep[j], <Column>o.afterp[j], row)):
                    fl[4 * j + 2][0][byte] |= bit
        return 0

    # -- one value ---------------------------------------------------------------------------
    cdef int convert(self, Out o, Column c, int64_t j, int64_t row, int64_t v, int64_t e,
                     int esc) except -1 nogil:
        """1 when the value b[v:e] (not null) is one of column j's type and was written, 2 for
        a lone surrogate in a text, else 0 (docs/qlik.md, "Values")."""
        cdef const uint8_t* b = self.buf
        cdef int32_t kind = o.kind[j]
        cdef uint8_t ch = b[v]
        cdef const uint8_t* p = b + v
        cdef int64_t n = e - v, x, lo, hi, us
        cdef bint quoted = ch == 34
        cdef double d
        cdef float f
        cdef cdc_jv_i128 q
        if ch == 123 or ch == 91:
            return 0
        if kind == K_STRING:
            if quoted:
                if not esc:
                    put_bytes(c, row, p + 1, n - 2)
                    return 1
                return 2 if put_escaped(c, row, b, v, e) else 1
            put_bytes(c, row, p, n)     # a number's text, true, false
            return 1
        if quoted:
            p = b + v + 1
            n = e - v - 2
            if esc:                     # the text the escapes stand for
                n = json_unescape(p, n, self.room(n + 1))
                if n < 0:
                    return 0
                p = self.scratch
        if kind == K_BOOL:
            if ch == 116 or (n == 4 and quoted and word_is(p, b"true", 4)) \
                    or (n == 1 and p[0] == 49):
                bits_set(c.data, row)
            elif not (ch == 102 or (n == 5 and quoted and word_is(p, b"false", 5))
                      or (n == 1 and p[0] == 48)):
                return 0
            col_valid(c, row)
            return 1
        if not quoted and ch != 45 and not (48 <= ch <= 57):
            return 0                    # true, false
        if kind == K_INT8 or kind == K_INT16 or kind == K_INT32 or kind == K_INT64:
            lo, hi = int_range(kind)
            if not cdc_jv_int(p, n, lo, hi, &x):
                return 0
            store_int(c, row, x)
            return 1
        if kind == K_DECIMAL:
            if not cdc_jv_is_number(p, n) or not cdc_jv_decimal(p, n, o.prec[j], o.scl[j], &q):
                return 0
            put_fixed(c, row, &q, 16)
            return 1
        if kind == K_DECTEXT:
            if not cdc_jv_is_number(p, n):
                return 0
            put_bytes(c, row, p, n)
            return 1
        if kind == K_FLOAT32 or kind == K_FLOAT64:
            if cdc_jv_is_number(p, n):
                if not parse_float(p, n, NULL, 46, &d, padded(self, p, n)) or isinf(d):
                    return 0
            elif quoted and n == 3 and memcmp(p, b"NaN", 3) == 0:
                d = NAN
            elif quoted and n == 8 and memcmp(p, b"Infinity", 8) == 0:
                d = INFINITY
            elif quoted and n == 9 and memcmp(p, b"-Infinity", 9) == 0:
                d = -INFINITY
            else:
                return 0
            if kind == K_FLOAT32:
                f = <float>d
                if isinf(f) and not isinf(d):
                    return 0
                put_fixed(c, row, &f, 4)
            else:
                put_fixed(c, row, &d, 8)
            return 1
        if not quoted:
            return 0                    # binary, dates and times are text
        if kind == K_BINARY:
            if c.dlen + n > c.dcap:
                data_room(c, n)
            x = olr_hex(p, n, c.data + c.dlen)
            if x < 0:
                return 0
            c.dlen += x
            c.offs[row + 1] = <int32_t>c.dlen
            col_valid(c, row)
            return 1
        if kind == K_DATE32:
            if not json_date(p, n, &x) or x < -2147483648 or x > 2147483647:
                return 0
            store_int(c, row, x)
            return 1
        if kind == K_TIME64:
            if not json_time(p, n, &us):
                return 0
            put_fixed(c, row, &us, 8)
            return 1
        if kind == K_TIMESTAMP or kind == K_TIMESTAMP_TZ:
            if not stamp_us(p, n, &us):
                return 0
            put_fixed(c, row, &us, 8)
            return 1
        return 0
