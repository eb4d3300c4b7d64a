# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True, initializedcheck=False
"""The `debezium` kernel: JSON change events straight into Arrow buffers.

On the walk every JSON kernel shares (_walk.pyx) and its output tables (_rows.pyx). Each
document is walked once, every step checked; at the first thing the walk refuses, the row so
far is taken back and the strict scanner of _json.h reads the document from its start, for the
code and byte its pure-Python twin gives (a document it accepts is walked again, trusting it).
The walk records where the envelope's fields are — the embedded `schema` and the `payload`
(or the object that is the payload), its source and transaction blocks — and values are
converted straight into the output's columns by a plan made once per table and embedded schema
(cdcfast/formats/debezium.py): Debezium's logical types, base64 and VariableScaleDecimal
decimals, epoch units, never decided per value.

Row images come before `source` in Debezium's order, so a row's table is not known when its
images are met: they are read then, into the table of the previous document (`predicted`), and
taken back and read again into the right one when `source` names another.

The kernel stops for Python when it needs an answer: a table it has no id for (STOP_TABLE), an
embedded schema it has not met (STOP_SCHEMA), an output without the plan for the document's
schema (STOP_PLAN), a full batch. It stops before writing anything of the document, and reads
it again afterwards. Problems of a row are kept as one entry, the first in document order (the
reference's rule); Python writes their texts (cdcfast/formats/_dbz_run.py).
"""
cimport cython
from libc.stdint cimport uint8_t, int32_t, int64_t
from libc.stdlib cimport free
from libc.string cimport memcmp, memset
from libc.math cimport NAN, INFINITY, isinf

from cdcfast._mem cimport grow
from cdcfast._arrow cimport Column, col_valid, bits_set
from cdcfast._kinds cimport *
from cdcfast._values cimport parse_float, US_PER_DAY
from cdcfast._jsonrow cimport *
from cdcfast._rows cimport Out, ROW_OTHER
from cdcfast._walk cimport (Walker, padded, header_key, MAX_FIELDS, STOP_BATCH, STOP_TABLE, STOP_SCHEMA, STOP_PLAN,
                            BAD, W_SURROGATE)

assert NH <= MAX_FIELDS, "the walk's field table is too small for this format"


# the encodings EN_*, problem codes P_*, header fields H_*/HS_*/HT_* (NH of them) and source
# fields S_* (their spec: cdcfast/formats/_debezium_codes.py, which _dbz_run reads too)
from cdcfast._debezium_codes cimport *

cdef enum:
    BADDOC = 5           # (never leaves the kernel) the document needs the strict scanner


cdef inline bint to_us(int64_t x, int64_t unit, int64_t* us) noexcept nogil:
    """x in ms / µs / ns as µs (ns floored); 0 when out of int64."""
    cdef int64_t q
    if unit == EN_MS:
        if x > I64_MAX // 1000 or x < I64_MIN // 1000:
            return 0
        us[0] = x * 1000
    elif unit == EN_NS:
        q = x // 1000
        if x % 1000 < 0:
            q -= 1
        us[0] = q
    else:
        us[0] = x
    return 1


@cython.final
cdef class Plan:
    """How the values of one output's columns are written in the documents of one embedded
    schema (`sid`; -1: none, then the catalog's or the options'): per column its encoding, the
    scale of a base64 decimal, the unit of a plain temporal integer."""
    cdef int64_t sid
    cdef int32_t* enc
    cdef int32_t* escale
    cdef int32_t* unit

    def __cinit__(self, int64_t sid, encs, escales, units):
        cdef int64_t j, n = len(encs)
        self.sid = sid
        self.enc = <int32_t*>grow(NULL, (n + 1) * 4)
        self.escale = <int32_t*>grow(NULL, (n + 1) * 4)
        self.unit = <int32_t*>grow(NULL, (n + 1) * 4)
        for j in range(n):
            self.enc[j] = encs[j]
            self.escale[j] = escales[j]
            self.unit[j] = units[j]

    def __dealloc__(self):
        free(self.enc)
        free(self.escale)
        free(self.unit)


@cython.final
cdef class Scanner(Walker):
    """Walks the documents of one Part (see the module docstring)."""
    # the document in hand
    cdef bint envelope                  # the envelope form ({"schema", "payload"})
    cdef bint saw_payload
    cdef readonly int64_t doc_sid       # its embedded schema's id (-1: none)
    # embedded schemas: their texts (an id is an index), and the last one met
    cdef list schemas
    cdef const char** schp              # (the same, without Python)
    cdef int64_t* schn
    cdef int64_t nsch
    cdef int64_t sid
    cdef readonly bytes pending_schema  # STOP_SCHEMA: the new schema's text
    cdef readonly int64_t pending_sid   # STOP_PLAN: for which schema (and pending_slot)
    # plans, by output slot, and the one of the output in hand
    cdef list plans
    cdef void** planp                   # (the same, borrowed; NULL: none)
    cdef int64_t nplan
    cdef int32_t* enc                   # the plan in hand's arrays
    cdef int32_t* escale
    cdef int32_t* unit
    # images read during the walk: into which output (-1: none, -2: not guessed yet), which
    cdef int64_t pre_slot
    cdef bint pre_b, pre_a
    cdef uint8_t* scratch               # base64 of decimals, decoded
    cdef int64_t scap

    def __cinit__(self, data, offsets, valid, bint images):
        self.schemas = []
        self.sid = -1
        self.pending_sid = -1
        self.plans = []
        self.planp = NULL
        self.nplan = 0
        self.schp = NULL
        self.schn = NULL
        self.nsch = 0
        self.pre_slot = -1
        self.scratch = NULL
        self.scap = 0

    def __dealloc__(self):
        free(self.scratch)
        free(self.planp)
        free(self.schp)
        free(self.schn)

    # -- what Python tells the kernel ----------------------------------------------------------
    def add_schema(self, bytes text):
        """Give the schema the last STOP_SCHEMA met an id (its index)."""
        self.schemas.append(text)
        self.schp = <const char**>grow(self.schp, len(self.schemas) * sizeof(void*))
        self.schn = <int64_t*>grow(self.schn, len(self.schemas) * 8)
        self.schp[self.nsch] = <const char*>text
        self.schn[self.nsch] = len(text)
        self.nsch += 1

    def set_plan(self, int64_t slot, int64_t sid, encs, escales, units):
        """The encodings of the output at `slot` for documents of embedded schema `sid`."""
        cdef int64_t k
        while len(self.plans) <= slot:
            self.plans.append(None)
        self.plans[slot] = Plan(sid, encs, escales, units)
        self.planp = <void**>grow(self.planp, len(self.plans) * sizeof(void*))
        self.nplan = len(self.plans)
        for k in range(self.nplan):
            self.planp[k] = <void*>self.plans[k] if self.plans[k] is not None else NULL

    cdef bint planned(self, int64_t slot) noexcept nogil:
        """The output at `slot` has its plan for the document's schema (then it is the plan
        in hand)."""
        cdef void* p
        if slot >= self.nplan:
            return False
        p = self.planp[slot]
        if p == NULL or (<Plan>p).sid != self.doc_sid:
            return False
        self.enc = (<Plan>p).enc
        self.escale = (<Plan>p).escale
        self.unit = (<Plan>p).unit
        return True

    # -- one document --------------------------------------------------------------------------
    cdef int document(self) except -1 nogil:
        """The document at self.pos: 0 when done with it, else a STOP_ code (self.pos then
        stays at the document, which is read again)."""
        cdef const uint8_t* b = self.buf
        cdef int64_t start = self.pos, stop = self.content_end(), doc_end, err_pos
        cdef int code, r
        self.dstart = start
        if b[start] == 123:
            self.checking = True
            self.dend = stop
            self.high = 0
            r = self.event()
            if r != BADDOC:
                return self.done(r)
            self.undo_pre()
        if json_document(b, start, stop, &doc_end, &code, &err_pos) != 0:
            r = self.corrupt(start, stop, P_JSON, code, err_pos)
            if r == 0:
                self.pos = self.piece_end    # the rest of the piece is that record
            return r
        self.dend = doc_end
        if b[start] == 123:
            self.checking = False
            return self.done(self.event())
        if b[start] == 110:                  # null: a tombstone
            self.tombstones += 1
            self.pos = doc_end
            return 0
        return self.done(self.corrupt(start, doc_end, P_NOT_DOC, 0, start))

    cdef int done(self, int r) noexcept nogil:
        if r == 0:
            self.pos = self.dend
        return r

    cdef void restart(self) noexcept nogil:
        """Walk the document anew: no field met, no image read."""
        self.undo_pre()
        self.reset_fields(0, NH)
        self.pre_slot = -2

    cdef int64_t key_field(self, const uint8_t* b, int64_t k, int64_t n, int level) noexcept nogil:
        """The header field a key names at a level (0 payload, 1 source, 2 transaction), or
        -1."""
        if level == 0:
            if n == 2 and b[k] == 111 and b[k + 1] == 112:
                return H_OP
            if key_is(b, k, n, b"before", 6):
                return H_BEFORE
            if key_is(b, k, n, b"after", 5):
                return H_AFTER
            if key_is(b, k, n, b"source", 6):
                return H_SOURCE
            if key_is(b, k, n, b"ts_ms", 5):
                return H_TS_MS
            if key_is(b, k, n, b"ts_us", 5):
                return H_TS_US
            if key_is(b, k, n, b"transaction", 11):
                return H_TRANSACTION
            if key_is(b, k, n, b"status", 6):
                return H_STATUS
            if key_is(b, k, n, b"id", 2):
                return H_ID
            if key_is(b, k, n, b"event_count", 11):
                return H_EVENT_COUNT
            if key_is(b, k, n, b"data_collections", 16):
                return H_DATA_COLLECTIONS
            if key_is(b, k, n, b"tableChanges", 12):
                return H_TABLE_CHANGES
            return -1
        if level == 1:
            if key_is(b, k, n, b"version", 7):
                return HS_VERSION
            if key_is(b, k, n, b"connector", 9):
                return HS_CONNECTOR
            if key_is(b, k, n, b"name", 4):
                return HS_NAME
            if key_is(b, k, n, b"db", 2):
                return HS_DB
            if key_is(b, k, n, b"snapshot", 8):
                return HS_SNAPSHOT
            if key_is(b, k, n, b"schema", 6):
                return HS_SCHEMA
            if key_is(b, k, n, b"table", 5):
                return HS_TABLE
            if key_is(b, k, n, b"ts_ms", 5):
                return HS_TS_MS
            if key_is(b, k, n, b"ts_us", 5):
                return HS_TS_US
            if key_is(b, k, n, b"change_lsn", 10):
                return HS_CHANGE_LSN
            if key_is(b, k, n, b"commit_lsn", 10):
                return HS_COMMIT_LSN
            return -1
        if key_is(b, k, n, b"id", 2):
            return HT_ID
        if key_is(b, k, n, b"total_order", 11):
            return HT_TOTAL_ORDER
        if key_is(b, k, n, b"data_collection_order", 21):
            return HT_DATA_COLLECTION_ORDER
        return -1

    cdef int64_t walk(self, int64_t i, int level, int depth) except -2 nogil:
        """Record the header fields of the object at i (level 0: the payload, then its
        source (1) and transaction (2); `depth`: its nesting, 1 at the top), and read its
        images when their output can be guessed; returns the object's end, or BAD. A key with
        escapes is the key it spells (`header_key`)."""
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
            if f < 0 and level == 0 and (esc or e - k == 7) \
                    and self.key_equals(k, e, esc, b"payload", 7):
                self.saw_payload = True
            if f >= 0:
                self.hn[f] += 1
                if self.hn[f] == 1:
                    self.hp[f] = v
                elif self.hn[f] == 2:
                    self.hk[f] = i          # the second key: where "given twice" points
            if (f == H_SOURCE or f == H_TRANSACTION) and b[v] == 123 and self.hn[f] == 1:
                e = self.walk(v, 1 if f == H_SOURCE else 2, depth + 1)
            elif (f == H_BEFORE or f == H_AFTER) and b[v] == 123 and self.hn[f] == 1 \
                    and level == 0 and self.predicted() >= 0:
                if f == H_AFTER:
                    self.pre_a = True
                else:
                    self.pre_b = True
                e = self.pre_image(<Out>self.outp[self.pre_slot], v, f == H_AFTER, depth + 1)
            else:
                e = self.skip(v, 512 - depth)
            if e == BAD:
                return BAD
            if f >= 0 and self.hn[f] == 1:
                self.he[f] = e
            i = self.after_value(e, 125, &done)
            if i == BAD or done:
                return i

    cdef int64_t pre_image(self, Out o, int64_t v, bint after, int depth) except -2 nogil:
        """An image read as the walk meets it, into the row reserved in the guessed output."""
        return self.walk_image(o, o.length, v, after, depth)

    cdef int event(self) except -1 nogil:
        """The object at dstart: the envelope ({"schema", "payload"}) or the payload itself,
        walked; then routed. BADDOC when checking finds it is not well-formed."""
        cdef const uint8_t* b = self.buf
        cdef int64_t start = self.dstart, end = self.dend, i, k, e, v, pay = -1, npay = 0
        cdef int64_t pay_key = -1, sa = -1, sb = -1, top_end
        cdef int esc, done, r
        cdef bint envelope, walked = False, late = False
        self.reset_fields(0, NH)
        self.pre_slot = -2
        self.pre_b = self.pre_a = False
        self.envelope = False
        self.saw_payload = False
        self.doc_sid = -1
        i = ws(b, start + 1, end)
        if i >= end:
            return BADDOC
        envelope = False
        if b[i] == 34:                          # the first key tells the form, mostly
            v = self.key_at(i, &k, &e, &esc)
            envelope = v != BAD and (self.key_equals(k, e, esc, b"schema", 6)
                                     or self.key_equals(k, e, esc, b"payload", 7))
        if not envelope:
            top_end = self.walk(start, 0, 1) if b[i] != 125 else i + 1
            if top_end == BAD:
                return BADDOC
            if self.saw_payload:                # an envelope after all: read it as one
                self.restart()
                envelope = True
        if envelope:
            while True:
                v = self.key_at(i, &k, &e, &esc)
                if v == BAD:
                    return BADDOC
                if self.key_equals(k, e, esc, b"payload", 7):
                    npay += 1
                    if npay == 1:
                        pay = v
                        if b[v] == 123:
                            r = self.set_sid(sa, sb)
                            if r != 0:
                                return r
                            self.envelope = True
                            e = self.walk(v, 0, 2)
                            walked = True
                        else:
                            e = self.skip(v, 511)
                    else:
                        pay_key = i
                        e = self.skip(v, 511)
                elif self.key_equals(k, e, esc, b"schema", 6):
                    sa = v
                    e = sb = self.schema_end(v)
                    late = walked
                else:
                    e = self.skip(v, 511)
                if e == BAD:
                    return BADDOC
                i = self.after_value(e, 125, &done)
                if i == BAD:
                    return BADDOC
                if done:
                    break
            top_end = i
            if npay == 0:                       # no payload key: the object is the payload
                envelope = False
                self.restart()
                self.doc_sid = -1
                if self.walk(start, 0, 1) == BAD:
                    return BADDOC
        self.dend = top_end
        if self.checking and not self.utf8_ok(start, top_end):
            return BADDOC
        self.envelope = envelope
        if envelope:
            if npay > 1:
                self.undo_pre()
                return self.corrupt_at(P_PAYLOAD, 1, pay_key)
            if npay == 1 and b[pay] == 110:
                self.undo_pre()
                self.tombstones += 1
                return 0
            if npay == 1 and b[pay] != 123:
                return self.corrupt_at(P_PAYLOAD, 0, pay)
            if late:                            # the schema came after the payload: again
                self.restart()
                r = self.set_sid(sa, sb)
                if r != 0:
                    return r
                self.walk(pay, 0, 2)
        return self.route()

    cdef int set_sid(self, int64_t sa, int64_t sb) except -1 nogil:
        """The document's schema id from the schema text at [sa, sb) (none: -1); a new one
        stops for Python (after the scanner has checked the whole document)."""
        self.doc_sid = -1
        if sa < 0 or self.buf[sa] == 110:       # "schema": null is no schema
            return 0
        self.doc_sid = self.schema_id(sa, sb)
        if self.doc_sid < 0:
            if self.checking:
                return BADDOC                   # Python reads it: only a checked text
            with gil:
                self.pending_schema = bytes(self.buf[sa:sb])
            return STOP_SCHEMA
        self.sid = self.doc_sid
        return 0

    cdef int64_t schema_id(self, int64_t a, int64_t z) noexcept nogil:
        """The id of the schema text b[a:z] (the last one first), or -1 when new."""
        cdef int64_t n = z - a, s
        if self.sid >= 0:
            if self.schn[self.sid] == n and memcmp(self.buf + a, self.schp[self.sid], n) == 0:
                return self.sid
        for s in range(self.nsch):
            if self.schn[s] == n and memcmp(self.buf + a, self.schp[s], n) == 0:
                return s
        return -1

    cdef int64_t schema_end(self, int64_t v) except -2 nogil:
        """The end of the embedded schema at v: the length of the last schema met when the
        bytes are those (then they are that same, whole JSON value), else a scan."""
        cdef int64_t n
        if self.sid >= 0:
            n = self.schn[self.sid]
            if v + n <= self.dend and memcmp(self.buf + v, self.schp[self.sid], n) == 0:
                return v + n
        return self.skip(v, 511)

    cdef int corrupt_at(self, int64_t code, int64_t flag, int64_t pos) except -1 nogil:
        """A document that is JSON but no change event: the whole document is the record."""
        return self.corrupt(self.dstart, self.dend, code, flag, pos)

    # -- images read as the walk meets them ----------------------------------------------------
    cdef int64_t predicted(self) except -2 nogil:
        """The slot of the output the previous document's table wrote to, when this
        document's images can be read into it as the walk meets them (else -1): a row reserved
        there."""
        cdef int64_t slot
        if self.pre_slot == -2:
            self.pre_slot = -1
            if self.images and self.last_tid >= 0 and not self.tunk[self.last_tid]:
                slot = self.tslot[self.last_tid]
                if slot >= 0 and self.reserve_pre(<Out>self.outp[slot], slot):
                    self.pre_slot = slot
        return self.pre_slot

    cdef bint reserve_pre(self, Out o, int64_t slot) except -1 nogil:
        if o.ncols and o.length < self.batch_rows and self.planned(slot):
            o.reserve_row()
            o.null_row(o.length)
            self.fresh_images(o)
            return True
        return False

    cdef void fresh_images(self, Out o) noexcept nogil:
        """No column of the row's images sent yet, no key the table lacks met."""
        if o.ncols:                              # no columns: no arrays (NULL)
            memset(o.sent_b, 0, o.ncols)
            memset(o.sent_a, 0, o.ncols)
        self.nx = 0

    cdef void undo_pre(self) noexcept nogil:
        """Take back the images read into the guessed output (another table, a control
        event, a stop, a document read again)."""
        if self.pre_slot >= 0 and (self.pre_b or self.pre_a):
            (<Out>self.outp[self.pre_slot]).clear_row((<Out>self.outp[self.pre_slot]).length)
        self.pre_slot = -1
        self.pre_b = self.pre_a = False

    # -- routing -------------------------------------------------------------------------------
    cdef bint is_text(self, int64_t f) noexcept nogil:
        """Field f holds a non-empty JSON string."""
        cdef int64_t v = self.hp[f]
        return v >= 0 and self.hn[f] == 1 and self.buf[v] == 34 and self.buf[v + 1] != 34

    cdef int route(self) except -1 nogil:
        """Where the walked document goes; its row written there. Images read during the walk
        into another output than its table's (or of an image given twice) are taken back
        first."""
        cdef const uint8_t* b = self.buf
        cdef bint control, data, unknown
        cdef int64_t tid, slot, v, sa = 0, sn = 0, ta = 0, tn = 0
        if self.hn[H_SOURCE] != 1 or b[self.hp[H_SOURCE]] != 123:
            self.reset_fields(HS_VERSION, HS_COMMIT_LSN + 1)
        v = self.hp[H_OP]
        control = self.hn[H_STATUS] > 0 or self.hn[H_TABLE_CHANGES] > 0 or (
            self.hn[H_OP] == 1 and b[v] == 34 and b[v + 1] == 109 and b[v + 2] == 34)
        data = not control
        if control and self.images:             # control events: headers() only
            self.undo_pre()
            return self.counted(True, False)
        if data and not self.is_text(HS_TABLE):
            self.undo_pre()
            return self.corrupt_at(P_SOURCE_TABLE, self.envelope, self.dstart)
        if self.is_text(HS_TABLE):
            ta = self.hp[HS_TABLE]
            tn = self.he[HS_TABLE] - ta
            if self.is_text(HS_SCHEMA):
                sa = self.hp[HS_SCHEMA]
                sn = self.he[HS_SCHEMA] - sa
        tid = self.table_id(0, sa, sn, ta, tn)
        if tid < 0:
            self.undo_pre()
            return BADDOC if self.checking else STOP_TABLE  # Python reads only checked text
        self.checking = False                   # (the walk has checked the whole document)
        self.cur_tid = tid
        slot = self.tslot[tid]
        unknown = data and self.tunk[tid]
        if slot < 0 or (unknown and self.images):
            self.undo_pre()
            return self.counted(control, unknown)
        self.unknown += unknown     # headers: the row is written, its table counted unknown
        return self.write_row(<Out>self.outp[slot], slot, control, data)

    cdef int write_row(self, Out o, int64_t slot, bint control, bint data) except -1 nogil:
        """The routed document's row, into its output o (at `slot`)."""
        cdef int64_t row
        if self.pre_slot >= 0 and (self.pre_slot != slot or self.hn[H_BEFORE] > 1
                                   or self.hn[H_AFTER] > 1):
            self.undo_pre()
        if o.length >= self.batch_rows:
            self.undo_pre()
            self.full_slot = slot
            return STOP_BATCH
        if data and o.ncols and not self.planned(slot):
            self.undo_pre()
            self.pending_slot = slot
            self.pending_sid = self.doc_sid
            return STOP_PLAN
        row = o.length
        if self.pre_slot < 0:
            o.reserve_row()
            o.null_row(row)
        self.header(o, row)
        if data and o.images:
            self.images_of(o, row)
            self.extra += self.nx
        if control:
            self.control += 1
        self.pre_slot = -1
        o.finish_row(row, self.msg, self.dstart, self.dend, ROW_OTHER)
        self.records += 1
        self.seq += 1
        return 0

    # -- the header ----------------------------------------------------------------------------
    cdef int64_t fid(self, int64_t f) noexcept nogil:
        """A header field as a problem names it (with the form of the document)."""
        return f + (NH if self.envelope else 0)

    cdef int twice(self, Out o, int64_t row, int64_t f) except -1 nogil:
        """1 (and the problem) when field f's key was given twice."""
        if self.hn[f] > 1:
            o.add_problem(row, self.fid(f), P_TWICE, self.hk[f], self.hk[f], self.hk[f])
            return 1
        return 0

    cdef int text(self, Out o, int64_t row, int64_t f, Column c) except -1 nogil:
        """Field f as text: a string's text, any other value its JSON text; null stays
        null."""
        cdef const uint8_t* b = self.buf
        cdef int64_t v = self.hp[f], e
        if v < 0 or self.twice(o, row, f) or b[v] == 110:
            return 0
        if b[v] == 34:
            if put_string(c, row, b, v, self.dend):
                e = self.he[f]
                o.add_problem(row, self.fid(f), W_SURROGATE, v, v, e)
            return 0
        e = self.he[f]
        put_bytes(c, row, b + v, e - v)
        return 0

    cdef int name_text(self, Out o, int64_t row, int64_t f, Column c) except -1 nogil:
        """source.schema / source.table: text, an empty one null."""
        cdef int64_t v = self.hp[f]
        if v >= 0 and self.hn[f] == 1 and self.buf[v] == 34 and self.buf[v + 1] == 34:
            return 0
        return self.text(o, row, f, c)

    cdef int integer(self, Out o, int64_t row, int64_t f, int64_t* out) except -1 nogil:
        """Field f as an int64 (a JSON integer or a string holding one): 1, else 0 (absent,
        null, or a problem)."""
        cdef const uint8_t* b = self.buf
        cdef int64_t v = self.hp[f], e
        if v < 0 or self.twice(o, row, f) or b[v] == 110:
            return 0
        e = self.he[f]
        if b[v] == 34:
            if cdc_jv_int(b + v + 1, e - v - 2, I64_MIN, I64_MAX, out):
                return 1
        elif cdc_jv_int(b + v, e - v, I64_MIN, I64_MAX, out):
            return 1
        o.add_problem(row, self.fid(f), P_NOT_INT, v, v, e)
        return 0

    cdef int ts(self, Out o, int64_t row, int64_t f, int64_t mult, int64_t* out) except -1 nogil:
        cdef int64_t x
        if not self.integer(o, row, f, &x):
            return 0
        if mult != 1 and (x > I64_MAX // mult or x < I64_MIN // mult):
            o.add_problem(row, self.fid(f), P_TS_RANGE, self.hp[f], self.hp[f],
                          self.he[f])
            return 0
        out[0] = x * mult
        return 1

    cdef int present_field(self, int64_t f) noexcept nogil:
        """Field f is there and not null."""
        return self.hp[f] >= 0 and self.buf[self.hp[f]] != 110

    cdef int header(self, Out o, int64_t row) except -1 nogil:
        cdef const uint8_t* b = self.buf
        cdef int64_t v, e, x
        cdef bint tx
        cdef void** src = o.srcp
        cdef int64_t t = self.cur_tid
        col_valid(o.source_v, row)
        if self.hn[H_SOURCE] > 1:
            self.twice(o, row, H_SOURCE)
        elif self.hn[H_SOURCE] == 1 and b[self.hp[H_SOURCE]] != 123 \
                and b[self.hp[H_SOURCE]] != 110:
            v = self.hp[H_SOURCE]
            o.add_problem(row, self.fid(H_SOURCE), P_NOT_OBJECT, v, v,
                          value_end(b, v, self.dend))
        if self.tcat_p[2 * t + 1] != NULL:     # the catalog's names
            if self.tcat_p[2 * t] != NULL:
                put_bytes(o.schema, row, self.tcat_p[2 * t], self.tcat_n[2 * t])
            put_bytes(o.table, row, self.tcat_p[2 * t + 1], self.tcat_n[2 * t + 1])
        else:
            self.name_text(o, row, HS_SCHEMA, o.schema)
            self.name_text(o, row, HS_TABLE, o.table)
        self.text(o, row, HS_VERSION, <Column>src[S_VERSION])
        self.text(o, row, HS_CONNECTOR, <Column>src[S_CONNECTOR])
        self.text(o, row, HS_NAME, <Column>src[S_NAME])
        self.text(o, row, HS_DB, <Column>src[S_DB])
        self.text(o, row, HS_SNAPSHOT, <Column>src[S_SNAPSHOT])
        self.text(o, row, HS_CHANGE_LSN, <Column>src[S_CHANGE_LSN])
        self.text(o, row, HS_COMMIT_LSN, <Column>src[S_COMMIT_LSN])
        (<int64_t*>o.seq.data)[row] = self.seq
        col_valid(o.seq, row)
        if self.hn[H_STATUS] > 0:
            self.text(o, row, H_STATUS, o.source_op)
            v = self.hp[H_STATUS]
            e = self.he[H_STATUS]
            if self.hn[H_STATUS] == 1 and b[v] == 34 and key_is(b, v + 1, e - v - 2,
                                                                b"BEGIN", 5):
                put_bytes(o.op, row, <const uint8_t*>b"begin", 5)
            elif self.hn[H_STATUS] == 1 and b[v] == 34 and key_is(b, v + 1, e - v - 2,
                                                                  b"END", 3):
                put_bytes(o.op, row, <const uint8_t*>b"commit", 6)
            else:
                o.add_problem(row, self.fid(H_STATUS), P_BAD_STATUS, v, v, e)
            self.text(o, row, H_ID, o.txid)
            if self.ts(o, row, H_TS_MS, 1000, &x):
                put_fixed(o.commit_ts, row, &x, 8)
                put_fixed(o.change_ts, row, &x, 8)
            if self.integer(o, row, H_EVENT_COUNT, &x):
                put_fixed(<Column>src[S_EVENT_COUNT], row, &x, 8)
            self.text(o, row, H_DATA_COLLECTIONS, <Column>src[S_DATA_COLLECTIONS])
            return 0
        # processed_ts: payload ts_us, else ts_ms
        if self.hn[H_TS_US] == 1 and self.present_field(H_TS_US):
            if self.ts(o, row, H_TS_US, 1, &x):
                put_fixed(<Column>src[S_PROCESSED_TS], row, &x, 8)
        else:
            self.twice(o, row, H_TS_US)     # a key given twice reads as absent
            if self.ts(o, row, H_TS_MS, 1000, &x):
                put_fixed(<Column>src[S_PROCESSED_TS], row, &x, 8)
        if self.hn[H_TABLE_CHANGES] > 0:
            put_bytes(o.op, row, <const uint8_t*>b"ddl", 3)
            self.ddl_kind(o, row)
        else:
            self.op(o, row)
        # transaction
        tx = False
        if self.hn[H_TRANSACTION] > 1:
            self.twice(o, row, H_TRANSACTION)
        elif self.hn[H_TRANSACTION] == 1:
            v = self.hp[H_TRANSACTION]
            if b[v] == 123:
                tx = True
            elif b[v] != 110:
                o.add_problem(row, self.fid(H_TRANSACTION), P_NOT_OBJECT, v, v,
                              value_end(b, v, self.dend))
        if tx:
            self.text(o, row, HT_ID, o.txid)
            if self.integer(o, row, HT_TOTAL_ORDER, &x):
                (<int64_t*>o.seq.data)[row] = x
                o.rvend[row] = 1
            if self.integer(o, row, HT_DATA_COLLECTION_ORDER, &x):
                put_fixed(<Column>src[S_DATA_COLLECTION_ORDER], row, &x, 8)
        # commit_ts = change_ts: source.ts_us, else source.ts_ms
        if self.hn[HS_TS_US] == 1 and self.present_field(HS_TS_US):
            if self.ts(o, row, HS_TS_US, 1, &x):
                put_fixed(o.commit_ts, row, &x, 8)
                put_fixed(o.change_ts, row, &x, 8)
        else:
            self.twice(o, row, HS_TS_US)
            if self.ts(o, row, HS_TS_MS, 1000, &x):
                put_fixed(o.commit_ts, row, &x, 8)
                put_fixed(o.change_ts, row, &x, 8)
        self.lsn(o, row, HS_COMMIT_LSN, o.commit_pos)
        self.lsn(o, row, HS_CHANGE_LSN, o.change_pos)
        return 0

    cdef int lsn(self, Out o, int64_t row, int64_t f, Column c) except -1 nogil:
        """An LSN text as position bytes (only a JSON string: what source keeps as text
        otherwise has no position)."""
        cdef const uint8_t* b = self.buf
        cdef int64_t v = self.hp[f], e, k
        cdef int esc = 0
        if v < 0 or self.hn[f] != 1 or b[v] == 110:
            return 0
        e = self.he[f]
        if c.dlen + e - v > c.dcap:
            data_room(c, e - v)
        if b[v] == 34:
            str_end(b, v + 1, self.dend, &esc)
            k = -1 if esc else cdc_jv_lsn(b + v + 1, e - v - 2, c.data + c.dlen)
        else:
            k = cdc_jv_lsn(b + v, e - v, c.data + c.dlen)
        if k < 0:
            o.add_problem(row, self.fid(f), P_LSN, v, v, e)
            return 0
        c.dlen += k
        c.offs[row + 1] = <int32_t>c.dlen
        col_valid(c, row)
        return 0

    cdef int op(self, Out o, int64_t row) except -1 nogil:
        cdef const uint8_t* b = self.buf
        cdef int64_t v = self.hp[H_OP], e
        cdef uint8_t c
        if self.hn[H_OP] == 0 or (v >= 0 and b[v] == 110 and self.hn[H_OP] == 1):
            o.add_problem(row, self.fid(H_OP), P_MISSING, self.dstart, self.dstart, self.dstart)
            return 0
        self.text(o, row, H_OP, o.source_op)
        if self.hn[H_OP] > 1:
            return 0
        e = self.he[H_OP]
        if b[v] == 34 and e - v == 3:
            c = b[v + 1]
            if c == 109:
                put_bytes(o.op, row, <const uint8_t*>b"message", 7)
                return 0
            if c == 99 or c == 117 or c == 100 or c == 114 or c == 116:
                put_bytes(o.op, row, b + v + 1, 1)
                return 0
        o.add_problem(row, self.fid(H_OP), P_BAD_OP, v, v, e)
        return 0

    cdef int ddl_kind(self, Out o, int64_t row) except -1 nogil:
        """A schema-change event's source_op: its first tableChanges entry's type."""
        cdef const uint8_t* b = self.buf
        cdef int64_t v = self.hp[H_TABLE_CHANGES], i, k, e, w
        cdef int64_t at = -1, seen = 0
        cdef int esc
        if self.hn[H_TABLE_CHANGES] != 1 or b[v] != 91:
            return 0
        i = ws(b, v + 1, self.dend)
        if b[i] != 123:
            return 0
        i = ws(b, i + 1, self.dend)
        while b[i] == 34:
            k = i + 1
            esc = 0
            e = str_end(b, k, self.dend, &esc)
            w = ws(b, ws(b, e + 1, self.dend) + 1, self.dend)
            if self.key_equals(k, e, esc, b"type", 4):
                seen += 1
                at = w
            e = value_end(b, w, self.dend)
            i = ws(b, e, self.dend)
            if b[i] != 44:
                break
            i = ws(b, i + 1, self.dend)
        if seen == 1 and b[at] == 34:
            put_string(o.source_op, row, b, at, self.dend)
        return 0

    # -- row images ----------------------------------------------------------------------------
    cdef int images_of(self, Out o, int64_t row) except -1 nogil:
        """before, after, changed, present of a data event's row (docs/debezium.md)."""
        cdef const uint8_t* b = self.buf
        cdef int64_t j, n = o.ncols, v = self.hp[H_OP], byte = row >> 3
        cdef uint8_t bit = <uint8_t>(1 << (row & 7))
        cdef uint8_t*** fl = o.flags
        cdef bint has_b, has_a
        cdef bint pre = self.pre_slot >= 0
        cdef uint8_t* sent
        cdef uint8_t op = 0
        if not pre:
            self.fresh_images(o)
        has_b = self.one_image(o, row, H_BEFORE, pre and self.pre_b)
        has_a = self.one_image(o, row, H_AFTER, pre and self.pre_a)
        # the op, as the header read it
        if self.hn[H_OP] == 1 and v >= 0 and b[v] == 34 and self.he[H_OP] == v + 3:
            op = b[v + 1]
        if not o.want_flags:            # a projection without changed and present
            return 0
        # present: what the after image sent (before: deletes); a row with that image has it,
        # even for a table of no columns (whose sent arrays are NULL: nothing is allocated)
        sent = NULL
        if op == 100 and has_b:
            sent = o.sent_b
            col_valid(o.present_v, row)
        elif (op == 99 or op == 117 or op == 114) and has_a:
            sent = o.sent_a
            col_valid(o.present_v, row)
        if sent != NULL:
            for j in range(n):
                if sent[j]:
                    fl[4 * j][0][byte] |= bit
                fl[4 * j + 1][0][byte] |= bit
        if op == 99 or op == 114:
            col_valid(o.changed_v, row)
            for j in range(n):
                fl[4 * j + 2][0][byte] |= bit
                fl[4 * j + 3][0][byte] |= bit
        elif op == 100:
            col_valid(o.changed_v, row)
            for j in range(n):
                fl[4 * j + 3][0][byte] |= bit
        elif op == 117 and has_b and has_a:
            col_valid(o.changed_v, row)
            for j in range(n):
                if differs(<Column>o.beforep[j], <Column>o.afterp[j], row):
                    fl[4 * j + 2][0][byte] |= bit
                fl[4 * j + 3][0][byte] |= bit
        return 0

    cdef bint one_image(self, Out o, int64_t row, int64_t f, bint read) except -1 nogil:
        """The before or after image (field f) of a data event's row: read now unless the
        walk did (`read`); its validity set. 1 when the row has that image."""
        cdef const uint8_t* b = self.buf
        cdef int64_t v = self.hp[f]
        if self.twice(o, row, f):
            return False
        if v >= 0 and b[v] == 123:
            if not read:                # (a projection without before: its values skipped)
                self.walk_image(o, row, v, f == H_AFTER, 3 if self.envelope else 2)
            if f == H_AFTER:
                col_valid(o.after_v, row)
            else:
                col_valid(o.before_v, row)
            return True
        if v >= 0 and b[v] != 110:
            o.add_problem(row, self.fid(f), P_NOT_OBJECT, v, v, value_end(b, v, self.dend))
        return False

    # -- one value -----------------------------------------------------------------------------
    cdef int convert(self, Out o, Column c, int64_t j, int64_t row, int64_t v, int64_t e,
                     int esc) except -1 nogil:
        """1 when the value b[v:e] (not null) is one of column j's type and was written, 2 for
        a lone surrogate in a text, else 0 (docs/debezium.md, "Columns and their types")."""
        cdef const uint8_t* b = self.buf
        cdef int32_t kind = o.kind[j], en = self.enc[j]
        cdef uint8_t ch = b[v]
        cdef const uint8_t* p = b + v
        cdef int64_t n = e - v, x, lo, hi, us
        cdef bint quoted = ch == 34
        cdef double d
        cdef float f
        cdef cdc_jv_i128 u, q
        cdef int64_t uscale
        cdef int r
        if quoted:
            p = b + v + 1
            n = e - v - 2
        if kind == K_INT8 or kind == K_INT16 or kind == K_INT32 or kind == K_INT64 \
                or kind == K_DATE32:
            if not quoted and ch != 45 and not (48 <= ch <= 57):
                return 0
            lo, hi = int_range(K_INT32 if kind == K_DATE32 else kind)
            if not cdc_jv_int(p, n, lo, hi, &x):
                return 0
            store_int(c, row, x)
            return 1
        if kind == K_BOOL:
            if ch == 116 or (ch == 49 and n == 1):
                bits_set(c.data, row)
            elif not (ch == 102 or (ch == 48 and n == 1)):
                return 0
            col_valid(c, row)
            return 1
        if kind == K_FLOAT32 or kind == K_FLOAT64:
            if quoted and not cdc_jv_is_number(p, n):
                if n == 3 and memcmp(p, b"NaN", 3) == 0:
                    d = NAN
                elif n == 8 and memcmp(p, b"Infinity", 8) == 0:
                    d = INFINITY
                elif n == 9 and memcmp(p, b"-Infinity", 9) == 0:
                    d = -INFINITY
                else:
                    return 0
            elif quoted or ch == 45 or (48 <= ch <= 57):
                if not parse_float(p, n, NULL, 46, &d, padded(self, p, n)) or isinf(d):
                    return 0
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
        if kind == K_DECIMAL:
            r = self.unscaled(en, j, v, e, &u, &uscale)
            if r == 0:
                return 0
            if r == 2:                  # a JSON number, or decimal text in a string
                if not (quoted or ch == 45 or (48 <= ch <= 57)) \
                        or (quoted and not cdc_jv_is_number(p, n)) \
                        or not cdc_jv_decimal(p, n, o.prec[j], o.scl[j], &q):
                    return 0
                put_fixed(c, row, &q, 16)
                return 1
            if not cdc_jv_rescale(u, uscale, o.scl[j], o.prec[j], &q):
                return 0
            put_fixed(c, row, &q, 16)
            return 1
        if kind == K_DECTEXT:
            if ch == 45 or (48 <= ch <= 57):
                put_bytes(c, row, p, n)
                return 1
            r = self.unscaled(en, j, v, e, &u, &uscale)
            if r == 0:
                return 0
            if r == 2:
                if quoted and cdc_jv_is_number(p, n):
                    put_bytes(c, row, p, n)
                    return 1
                return 0
            if uscale < -1000 or uscale > 1000:
                return 0
            x = 48 + (uscale if uscale > 0 else -uscale)
            if c.dlen + x > c.dcap:
                data_room(c, x)
            x = cdc_jv_scaled_text(u, uscale, c.data + c.dlen)
            c.dlen += x
            c.offs[row + 1] = <int32_t>c.dlen
            col_valid(c, row)
            return 1
        if kind == K_STRING:
            if quoted:
                if not esc:
                    put_bytes(c, row, p, n)
                    return 1
                return 2 if put_escaped(c, row, b, v, e) else 1
            if ch == 116:
                put_bytes(c, row, <const uint8_t*>b"true", 4)
            elif ch == 102:
                put_bytes(c, row, <const uint8_t*>b"false", 5)
            else:
                put_bytes(c, row, p, n)           # a number, or an object's JSON text
            return 1
        if kind == K_BINARY:
            if not quoted:
                return 0
            if c.dlen + n > c.dcap:
                data_room(c, n)
            x = base64_decode(p, n, c.data + c.dlen)
            if x < 0:
                return 0
            c.dlen += x
            c.offs[row + 1] = <int32_t>c.dlen
            col_valid(c, row)
            return 1
        if kind == K_TIME64 or kind == K_TIMESTAMP or kind == K_TIMESTAMP_TZ:
            if kind != K_TIME64 and quoted and not cdc_jv_int(p, n, I64_MIN, I64_MAX, &x):
                if not cdc_jv_iso_us(p, n, &us):
                    return 0
            else:
                if not quoted and ch != 45 and not (48 <= ch <= 57):
                    return 0
                if not cdc_jv_int(p, n, I64_MIN, I64_MAX, &x):
                    return 0
                if not to_us(x, en if (en == EN_MS or en == EN_US or en == EN_NS)
                             else self.unit[j], &us):
                    return 0
                if kind == K_TIME64 and not (0 <= us < US_PER_DAY):
                    return 0
            put_fixed(c, row, &us, 8)
            return 1
        return 0

    cdef int unscaled(self, int32_t en, int64_t j, int64_t v, int64_t e, cdc_jv_i128* u,
                      int64_t* scale) except -1 nogil:
        """A decimal written as an unscaled integer: a VariableScaleDecimal object, or base64
        where column j's encoding `en` says so. 1 (u at scale), 0 when it is not a valid one,
        2 when the value is not written that way (a number, or decimal text)."""
        cdef const uint8_t* b = self.buf
        if b[v] == 123:
            return self.vsd(v, e, u, scale)
        if b[v] == 34 and en == EN_B64DEC:
            scale[0] = self.escale[j]
            return self.b64_int(b + v + 1, e - v - 2, u)
        if b[v] == 34 and en == EN_VSD:
            return 0                    # a VariableScaleDecimal is an object, not a text
        return 2

    cdef int b64_int(self, const uint8_t* p, int64_t n, cdc_jv_i128* out) except -1 nogil:
        """Base64 of a big-endian two's complement integer (at most 128 bits): 1, else 0."""
        if n > self.scap:
            self.scap = n + 64
            self.scratch = <uint8_t*>grow(self.scratch, self.scap)
        cdef int64_t k = base64_decode(p, n, self.scratch)
        return k > 0 and cdc_jv_twos(self.scratch, k, out)

    cdef int vsd(self, int64_t v, int64_t e, cdc_jv_i128* u, int64_t* scale) except -1 nogil:
        """A VariableScaleDecimal {"scale": s, "value": base64} at v: 1, else 0."""
        cdef const uint8_t* b = self.buf
        cdef int64_t i, k, ke, w, we, sv = -1, vv = -1, ns = 0, nv = 0
        cdef int esc
        i = ws(b, v + 1, e)
        while b[i] == 34:
            k = i + 1
            esc = 0
            ke = str_end(b, k, e, &esc)
            w = ws(b, ws(b, ke + 1, e) + 1, e)
            we = value_end(b, w, e)
            if self.key_equals(k, ke, esc, b"scale", 5):
                ns += 1
                sv = w
            elif self.key_equals(k, ke, esc, b"value", 5):
                nv += 1
                vv = w
            i = ws(b, we, e)
            if b[i] != 44:
                break
            i = ws(b, i + 1, e)
        if ns != 1 or nv != 1 or b[sv] == 34 or b[vv] != 34:
            return 0
        if not cdc_jv_int(b + sv, value_end(b, sv, e) - sv, I64_MIN, I64_MAX, scale):
            return 0
        we = value_end(b, vv, e)
        return self.b64_int(b + vv + 1, we - vv - 2, u)
