# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True, initializedcheck=False
"""The `debezium` kernel: JSON change events straight into Arrow buffers.

Two passes over each document. The first is the strict scanner of _json.h: a document that is
not well-formed is a corrupt record, with the code and byte its pure-Python twin gives, and
nothing of it is written. The second walks the known-good document once more and writes the
values into the output's columns, trusting its syntax: keys are matched against the names the
previous row used (Debezium writes every row of a table in one order), values are converted
by a plan made once per table and embedded schema (cdcfast/formats/debezium.py), never per
value.

Row images come before `source` in Debezium's order, so a row's table is not known when its
images are read: they are written into the table of the previous document, and moved (written
again into the right one, the first attempt undone) when `source` names another.

Problems of a row are kept as one entry, the first in document order (the reference's rule);
Python writes their texts (cdcfast/formats/_dbz_run.py).
"""
from libc.stdint cimport uint8_t, int8_t, int16_t, int32_t, int64_t, uint64_t
from libc.stdlib cimport free
from libc.string cimport memcpy, memcmp, memset, memchr
from libc.math cimport NAN, INFINITY, isinf

from cdcfast._mem cimport grow
from cdcfast._arrow cimport (Column, FIXED, VAR, BITS, VALIDITY, col_valid, col_unset,
                             bits_set, bits_get, kind_column)
from cdcfast._kinds cimport *
from cdcfast._values cimport parse_float, US_PER_DAY

import numpy as np

from cdcfast._jsonrow cimport *


# encodings (cdcfast/formats/debezium.py)
cdef enum:
    EN_PLAIN = 0
    EN_DAYS = 1
    EN_MS = 2
    EN_US = 3
    EN_NS = 4
    EN_ZONED = 5
    EN_B64DEC = 6
    EN_VSD = 7
    EN_B64 = 8
    EN_JSONTEXT = 9

# problem codes (Python turns them into texts: cdcfast/formats/_dbz_run.py)
cdef enum:
    P_VALUE = 1          # the value is not of its column's type (a: value start, b: end)
    P_TWICE = 2          # a key given twice (a: the second key)
    P_NOT_NULL = 3       # null in a NOT NULL column
    P_SURROGATE = 4      # a lone surrogate in a \u escape of a text
    P_MISSING = 5        # a field that must be there is not (payload.op)
    P_BAD_OP = 6         # op is none of c u d r t m
    P_BAD_STATUS = 7     # status is not BEGIN or END
    P_NOT_INT = 8        # a header integer that is none
    P_TS_RANGE = 9       # a header time out of range
    P_LSN = 10           # an LSN that is not hex groups
    P_NOT_OBJECT = 11    # source / transaction / an image that is not an object
    P_SOURCE_TABLE = 12  # (corrupt) a change event without source.table
    P_JSON = 13          # (corrupt) not well-formed: field = the scanner's code
    P_NOT_DOC = 14       # (corrupt) a document that is not an object
    P_PAYLOAD = 15       # (corrupt) payload given twice or not an object

# header fields, by where they are in the payload (their names: _dbz_run.HEADER_PATHS)
cdef enum:
    H_BEFORE = 0
    H_AFTER = 1
    H_SOURCE = 2
    H_OP = 3
    H_TS_MS = 4
    H_TS_US = 5
    H_TRANSACTION = 6
    H_STATUS = 7
    H_ID = 8
    H_EVENT_COUNT = 9
    H_DATA_COLLECTIONS = 10
    H_TABLE_CHANGES = 11
    HS_VERSION = 12
    HS_CONNECTOR = 13
    HS_NAME = 14
    HS_DB = 15
    HS_SNAPSHOT = 16
    HS_SCHEMA = 17
    HS_TABLE = 18
    HS_TS_MS = 19
    HS_TS_US = 20
    HS_CHANGE_LSN = 21
    HS_COMMIT_LSN = 22
    HT_ID = 23
    HT_TOTAL_ORDER = 24
    HT_DCO = 25
    NH = 26

# the field numbers of image columns in problems: IMG_BEFORE + column, IMG_AFTER + column
cdef enum:
    IMG_BEFORE = 1 << 20
    IMG_AFTER = 2 << 20
    F_DOC = -1           # the document as a whole
    F_PAYLOAD = -2

# what the scanner stops for
cdef enum:
    STOP_END = 0         # the part is done
    STOP_BATCH = 1       # an output reached batch_rows
    STOP_TABLE = 2       # a document names a table the kernel has no id for
    STOP_SCHEMA = 3      # a document's embedded schema is new
    STOP_PLAN = 4        # an output needs its plan for a schema
    STOP_PAUSE = 6       # PAUSE_BYTES more of the input are read

cdef int64_t PAUSE_BYTES = 64 << 20

cdef enum:
    BAD = -3             # a walk met something that is not well-formed JSON
    BADDOC = 5           # (never leaves the scanner) the document needs the strict scanner

HEADER_FIELDS = NH


cdef inline bint to_us(int64_t x, int64_t unit, int64_t* us) noexcept:
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



cdef class Out:
    """One output table of a run: the envelope's columns, and the row images of its table
    when it has a layout and the call wants images."""
    cdef readonly int64_t ncols
    cdef readonly bint images
    cdef public Column op, source_op, schema, table, txid, commit_ts, change_ts
    cdef public Column commit_pos, change_pos, seq
    cdef public Column s_version, s_connector, s_name, s_db, s_snapshot, s_processed
    cdef public Column s_change_lsn, s_commit_lsn, s_dco, s_event_count, s_collections
    cdef public Column source_v
    cdef public list before, after, changed, present
    cdef public Column before_v, after_v, changed_v, present_v
    cdef list cols                  # every Column above, for reserve and undo
    # the layout: kinds, column names (for keys), nullability
    cdef int32_t* kind
    cdef int32_t* prec
    cdef int32_t* scl
    cdef uint8_t* nullable
    cdef bytes names
    cdef int64_t* noff
    cdef bint plain                 # no name has a quote, backslash or control byte
    # the plan for one embedded schema (sid; -1: none, the catalog's/options' encodings)
    cdef readonly int64_t plan_sid
    cdef int32_t* enc
    cdef int32_t* escale
    cdef int32_t* unit
    # per row: the image columns sent (1) and the next column a key is expected to be
    cdef uint8_t* sent_b
    cdef uint8_t* sent_a
    # problems: (row, field, code, pos, a, b) per row that has one
    cdef int64_t* errs
    cdef readonly int64_t nerr
    cdef int64_t errcap
    # per row: message index, document start and end (for _corrupt_record)
    cdef int64_t* rmsg
    cdef int64_t* rstart
    cdef int64_t* rend
    cdef int64_t rcap
    cdef readonly int64_t length
    cdef int64_t room               # rows every column has room for
    cdef list vars_                 # the VAR columns (a null row sets their offset)
    cdef int32_t*** voffs           # … their offsets and data lengths, reached without
    cdef int64_t** vdlen            # Python (the fields of objects that vars_ keeps alive)
    cdef int64_t nvars

    def __cinit__(self, kinds, precs, scales, nullables, names, bint images):
        cdef int64_t j, n = len(kinds) if images else 0
        self.ncols = n
        self.images = images
        self.kind = <int32_t*>grow(NULL, (n + 1) * 4)
        self.prec = <int32_t*>grow(NULL, (n + 1) * 4)
        self.scl = <int32_t*>grow(NULL, (n + 1) * 4)
        self.nullable = <uint8_t*>grow(NULL, n + 1)
        self.enc = <int32_t*>grow(NULL, (n + 1) * 4)
        self.escale = <int32_t*>grow(NULL, (n + 1) * 4)
        self.unit = <int32_t*>grow(NULL, (n + 1) * 4)
        self.sent_b = <uint8_t*>grow(NULL, n + 1)
        self.sent_a = <uint8_t*>grow(NULL, n + 1)
        self.noff = <int64_t*>grow(NULL, (n + 1) * 8)
        blob = b""
        self.noff[0] = 0
        for j in range(n):
            self.kind[j] = kinds[j]
            self.prec[j] = precs[j]
            self.scl[j] = scales[j]
            self.nullable[j] = nullables[j]
            nb = names[j].encode("utf-8")
            blob += nb
            self.noff[j + 1] = len(blob)
        self.names = blob
        self.plain = not any(c < 32 or c in (34, 92) for c in blob)
        self.plan_sid = -2
        self.cols = []
        for name in ("op", "source_op", "schema", "table", "txid", "commit_pos", "change_pos",
                     "s_version", "s_connector", "s_name", "s_db", "s_snapshot",
                     "s_change_lsn", "s_commit_lsn", "s_collections"):
            setattr(self, name, Column(VAR))
        for name in ("commit_ts", "change_ts", "seq", "s_processed", "s_dco", "s_event_count"):
            setattr(self, name, Column(FIXED, 8))
        self.source_v = Column(VALIDITY)
        self.before, self.after, self.changed, self.present = [], [], [], []
        for j in range(n):
            self.before.append(kind_column(self.kind[j]))
            self.after.append(kind_column(self.kind[j]))
            self.changed.append(Column(BITS))
            self.present.append(Column(BITS))
        self.before_v = Column(VALIDITY)
        self.after_v = Column(VALIDITY)
        self.changed_v = Column(VALIDITY)
        self.present_v = Column(VALIDITY)
        self.cols = [self.op, self.source_op, self.schema, self.table, self.txid,
                     self.commit_ts, self.change_ts, self.commit_pos, self.change_pos, self.seq,
                     self.s_version, self.s_connector, self.s_name, self.s_db, self.s_snapshot,
                     self.s_processed, self.s_change_lsn, self.s_commit_lsn, self.s_dco,
                     self.s_event_count, self.s_collections, self.source_v,
                     self.before_v, self.after_v, self.changed_v, self.present_v] \
            + self.before + self.after + self.changed + self.present
        self.vars_ = [c for c in self.cols if c.layout == VAR]
        self.nvars = len(self.vars_)
        self.voffs = <int32_t***>grow(NULL, (self.nvars + 1) * sizeof(void*))
        self.vdlen = <int64_t**>grow(NULL, (self.nvars + 1) * sizeof(void*))
        cdef Column vc
        for j, vc in enumerate(self.vars_):
            self.voffs[j] = &vc.offs
            self.vdlen[j] = &vc.dlen
        self.room = 0
        self.errs = NULL
        self.nerr = self.errcap = 0
        self.rmsg = self.rstart = self.rend = NULL
        self.rcap = 0
        self.length = 0

    def __dealloc__(self):
        free(self.kind)
        free(self.prec)
        free(self.scl)
        free(self.nullable)
        free(self.enc)
        free(self.escale)
        free(self.unit)
        free(self.sent_b)
        free(self.sent_a)
        free(self.noff)
        free(self.voffs)
        free(self.vdlen)
        free(self.errs)
        free(self.rmsg)
        free(self.rstart)
        free(self.rend)

    cdef int64_t column_of(self, const uint8_t* k, int64_t n) noexcept:
        """The column named by the key bytes k[0:n], or -1."""
        cdef int64_t j
        cdef const char* names = <const char*>self.names
        for j in range(self.ncols):
            if self.noff[j + 1] - self.noff[j] == n and memcmp(names + self.noff[j], k, n) == 0:
                return j
        return -1

    cdef int64_t column_of_escaped(self, const uint8_t* k, int64_t n) except -2:
        """column_of for a key with escapes (unescaped first; a lone surrogate names none)."""
        cdef bytearray tmp = bytearray(n + 1)
        cdef uint8_t* t = tmp
        cdef int64_t m = json_unescape(k, n, t)
        if m < 0:
            return -1
        return self.column_of(t, m)

    def set_plan(self, int64_t sid, encs, escales, units):
        """The encodings of every column for documents of embedded schema `sid`."""
        cdef int64_t j
        for j in range(self.ncols):
            self.enc[j] = encs[j]
            self.escale[j] = escales[j]
            self.unit[j] = units[j]
        self.plan_sid = sid

    cdef int reserve_row(self) except -1:
        """Room for one more row in every column. Columns learn their length only here (when
        they grow) and at the batch's end (sync_lengths): rows are written at an index."""
        cdef Column c
        cdef int64_t n = self.length
        if n >= self.room:
            for c in self.cols:
                c.length = n
                c.reserve(max(64, n))
            self.room = min([c.cap for c in self.cols])
        if self.rcap <= n:
            self.rcap = max(64, 2 * self.rcap)
            self.rmsg = <int64_t*>grow(self.rmsg, self.rcap * 8)
            self.rstart = <int64_t*>grow(self.rstart, self.rcap * 8)
            self.rend = <int64_t*>grow(self.rend, self.rcap * 8)
        return 0

    cdef int add_problem(self, int64_t row, int64_t field, int64_t code, int64_t pos,
                         int64_t a, int64_t b) except -1:
        """Keep the row's first problem in document order (one entry per row)."""
        cdef int64_t* e
        if self.nerr and self.errs[(self.nerr - 1) * 6] == row:
            e = self.errs + (self.nerr - 1) * 6
            if pos < e[3]:
                e[1] = field
                e[2] = code
                e[3] = pos
                e[4] = a
                e[5] = b
            return 0
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

    cdef void drop_problem(self, int64_t row) noexcept:
        if self.nerr and self.errs[(self.nerr - 1) * 6] == row:
            self.nerr -= 1

    def problems(self):
        """(row, field, code, pos, a, b) of every row with a problem, then start afresh."""
        out = [tuple(self.errs[i * 6 + k] for k in range(6)) for i in range(self.nerr)]
        self.nerr = 0
        return out

    def peek_problems(self):
        """The first problem (row, field, code, pos, a, b, message index), if any, kept."""
        if not self.nerr:
            return []
        return [tuple(self.errs[k] for k in range(6)) + (self.rmsg[self.errs[0]],)]

    def rows_info(self):
        """Per row: (message index, document start, document end) as int64 numpy arrays (one
        copy each, no object per row)."""
        cdef int64_t n = self.length * 8
        if n == 0:
            e = np.zeros(0, dtype=np.int64)
            return e, e, e
        return (np.frombuffer((<char*>self.rmsg)[:n], dtype=np.int64),
                np.frombuffer((<char*>self.rstart)[:n], dtype=np.int64),
                np.frombuffer((<char*>self.rend)[:n], dtype=np.int64))

    def sync_lengths(self):
        """Every column as long as the output (before they are finished)."""
        cdef Column c
        for c in self.cols:
            c.length = self.length

    def finished(self):
        """After the batch's columns were finished: rows start again at 0."""
        self.length = 0
        self.room = 0




cdef class Scanner:
    """Walks the documents of one Part (see the module docstring)."""
    cdef object keep
    cdef const uint8_t* buf
    cdef int64_t nmsg
    cdef const int64_t* moff
    cdef const uint8_t* mvalid
    cdef bint images, headers_only
    cdef readonly int64_t msg, pos, piece_end, seq, tombstones, records, control, unknown
    cdef int64_t paused
    cdef public int64_t extra
    cdef public int64_t batch_rows
    # the current document
    cdef int64_t dstart, dend, pstart
    cdef bint envelope
    cdef int64_t hp[NH]             # value start of each header field (-1: absent)
    cdef int64_t hk[NH]             # its key position (for "given twice")
    cdef int64_t he[NH]             # its end
    cdef int32_t hn[NH]             # times the key was met
    cdef readonly int64_t doc_sid
    # table ids: the raw JSON text of (source.schema, source.table) -> tid, and tid -> output
    cdef list tnames                # per tid: bytes of schema text + b"\0" + table text
    cdef int64_t* tslot             # per tid: its output's slot (-1: not wanted)
    cdef uint8_t* tcontrol          # per tid: 1 for a table without columns (no catalog, no schema)
    cdef list tcat                  # per tid: the catalog's (schema, table) names as bytes, or None
    cdef int64_t cur_tid
    cdef int64_t ntid, tcap
    cdef int64_t last_tid
    cdef readonly bytes pending_name    # STOP_TABLE: what the document named
    # outputs, by slot
    cdef list outs
    cdef public int64_t headers_slot    # headers(): the one output of every record (-1: none)
    cdef public int64_t corrupt_slot    # where unattributable records go (-1: dropped)
    cdef readonly int64_t full_slot     # STOP_BATCH: which output
    # embedded schemas: their texts, and the current document's id
    cdef list schemas
    cdef int64_t sid
    cdef readonly int64_t pending_sid   # STOP_PLAN: for which schema
    cdef readonly int64_t pending_slot  # STOP_PLAN: which output
    cdef readonly bytes pending_schema  # STOP_SCHEMA: the new schema's text
    cdef public bint messages           # each message an input (Spark): seq counts per part
    cdef int esc                        # the string value just scanned has a backslash
    cdef bint checking                  # the walk checks the syntax (no scanner pass before it)
    cdef unsigned high                  # a byte past 0x7F was met (UTF-8 to check)
    cdef bint saw_payload
    cdef int64_t xk_b[32]               # keys the table lacks in this row's images (start, end)
    cdef int64_t xk_a[32]
    cdef int nx_b, nx_a
    cdef int64_t pre_slot               # images read during the walk into this output (-1: none)
    cdef bint pre_b, pre_a
    cdef uint8_t* scratch               # base64 of decimals, decoded
    cdef int64_t scap

    def __cinit__(self, data, offsets, valid, bint images):
        self.keep = (data, offsets, valid)
        cdef const uint8_t[::1] mv = data if len(data) else b"\0"
        self.buf = &mv[0]
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
        self.tnames = []
        self.tcat = []
        self.tslot = NULL
        self.tcontrol = NULL
        self.ntid = self.tcap = 0
        self.last_tid = -1
        self.outs = []
        self.headers_slot = -1
        self.corrupt_slot = -1
        self.schemas = []
        self.sid = -1
        self.pending_sid = -1
        self.messages = False
        self.scratch = NULL
        self.scap = 0

    def __dealloc__(self):
        free(self.tslot)
        free(self.tcontrol)
        free(self.scratch)

    # -- what Python tells the scanner -------------------------------------------------------
    def add_output(self, Out out):
        self.outs.append(out)
        return len(self.outs) - 1

    def add_table(self, bytes name, int64_t slot, bint control_only=False, cat=None):
        """Give the table the last STOP_TABLE named an id, and the output its records go to
        (-1: not wanted); `cat`: the catalog's (schema, table) names, as bytes."""
        self.tcat.append(cat)
        if self.ntid >= self.tcap:
            self.tcap = max(16, 2 * self.tcap)
            self.tslot = <int64_t*>grow(self.tslot, self.tcap * 8)
            self.tcontrol = <uint8_t*>grow(self.tcontrol, self.tcap)
        self.tnames.append(name)
        self.tslot[self.ntid] = slot
        self.tcontrol[self.ntid] = control_only
        self.ntid += 1

    def set_slot(self, int64_t tid, int64_t slot):
        self.tslot[tid] = slot

    def add_schema(self, bytes text):
        """Give the schema the last STOP_SCHEMA met an id (its index)."""
        self.schemas.append(text)

    def seq_start(self, int64_t seq):
        self.seq = seq

    # -- the walk ------------------------------------------------------------------------------
    def run(self):
        """Decode documents until the part ends or Python is needed; returns a STOP_ code."""
        cdef int r
        while True:
            if self.pos >= self.piece_end:
                if self.pos - self.paused >= PAUSE_BYTES:
                    self.paused = self.pos
                    return STOP_PAUSE           # Python gives back the mapped input behind
                if not self.next_piece():
                    return STOP_END
            self.pos = ws(self.buf, self.pos, self.piece_end)
            if self.pos >= self.piece_end:
                continue
            r = self.document()
            if r != 0:
                return r

    cdef bint next_piece(self):
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
                    self.seq = 0                # each message an input (Spark, SPEC §6)
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

    cdef int64_t content_end(self):
        """The piece's end without its trailing whitespace."""
        cdef int64_t e = self.piece_end
        while e > self.pos and (self.buf[e - 1] == 32 or self.buf[e - 1] == 10
                                or self.buf[e - 1] == 13 or self.buf[e - 1] == 9):
            e -= 1
        return e

    cdef int document(self) except -1:
        """One document at self.pos: 0 when done with it, else a STOP_ code (self.pos then
        stays at the document, which is read again).

        An object is walked at once, each step checked (`checking`); at the first thing that
        is not well-formed JSON the strict scanner reads the document from its start, for
        the code and byte its twin gives (and, should the walk have been wrong, the document
        is walked again, trusting the scanner)."""
        cdef const uint8_t* b = self.buf
        cdef int64_t start = self.pos, stop = self.content_end(), doc_end, err_pos
        cdef int code, r
        self.dstart = start
        if b[start] == 123:
            self.checking = True
            self.dend = stop
            self.high = 0
            r = self.event()
            if r == BADDOC:
                self.undo_pre()
                if json_document(b, start, stop, &doc_end, &code, &err_pos) != 0:
                    r = self.corrupt(start, stop, P_JSON, code, err_pos)
                    if r == 0:
                        self.pos = self.piece_end    # the rest of the piece is that record
                    return r
                self.checking = False
                self.dend = doc_end
                r = self.event()
            if r == 0:
                self.pos = self.dend
            return r
        if json_document(b, start, stop, &doc_end, &code, &err_pos) != 0:
            r = self.corrupt(start, stop, P_JSON, code, err_pos)
            if r == 0:
                self.pos = self.piece_end
            return r
        self.dend = doc_end
        if b[start] == 110:                       # null: a tombstone
            self.tombstones += 1
            self.pos = doc_end
            return 0
        r = self.corrupt(start, doc_end, P_NOT_DOC, 0, start)
        if r == 0:
            self.pos = doc_end
        return r

    cdef int corrupt(self, int64_t start, int64_t end, int64_t code, int64_t scode,
                     int64_t err_pos) except -1:
        """A record that names no table: only _corrupt_record and _error."""
        cdef int64_t slot = self.corrupt_slot if self.corrupt_slot >= 0 else self.headers_slot
        cdef Out o
        cdef int64_t row
        if slot >= 0:
            o = self.outs[slot]
            if o.length >= self.batch_rows:
                self.full_slot = slot
                return STOP_BATCH
            o.reserve_row()
            row = o.length
            self.null_row(o, row)
            (<int64_t*>o.seq.data)[row] = self.seq
            col_valid(o.seq, row)
            o.add_problem(row, scode, code, err_pos, start, end)
            self.finish_row(o, row, start, end)
        self.records += 1
        self.seq += 1
        return 0

    cdef void null_row(self, Out o, int64_t row) noexcept:
        """Every column of the row null (the bits are 0 already: buffers are zeroed)."""
        cdef Column c
        cdef int64_t k
        for k in range(o.nvars):
            o.voffs[k][0][row + 1] = <int32_t>o.vdlen[k][0]

    cdef void finish_row(self, Out o, int64_t row, int64_t start, int64_t end) noexcept:
        o.rmsg[row] = self.msg
        o.rstart[row] = start
        o.rend[row] = end
        o.length = row + 1

    # -- one change event -----------------------------------------------------------------------
    cdef int64_t key_field(self, const uint8_t* b, int64_t k, int64_t n, int level) noexcept:
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
            return HT_DCO
        return -1

    cdef int64_t walk(self, int64_t i, int level, int depth) except -2:
        """Record the header fields of the object at i (level 0: the payload, then its
        source (1) and transaction (2); `depth`: its nesting, 1 at the top); returns the
        object's end, or BAD. Keys with escapes are none of ours (no Debezium field name
        needs one)."""
        cdef const uint8_t* b = self.buf
        cdef int64_t end = self.dend, k, e, v, f
        cdef int esc, done
        cdef Out o
        i = ws(b, i + 1, end)
        if i >= end:
            return BAD
        if b[i] == 125:
            return i + 1
        while True:
            v = self.key_at(i, &k, &e, &esc)
            if v == BAD:
                return BAD
            f = -1 if esc else self.key_field(b, k, e - k, level)
            if f < 0 and level == 0 and not esc and key_is(b, k, e - k, b"payload", 7):
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
                    and level == 0 and self.predicted() is not None:
                o = self.outs[self.pre_slot]
                if f == H_AFTER:
                    self.pre_a = True
                else:
                    self.pre_b = True
                e = self.image(o, o.length, v, f == H_AFTER, depth + 1)
            else:
                e = self.skip(v, 512 - depth)
            if e == BAD:
                return BAD
            if f >= 0 and self.hn[f] == 1:
                self.he[f] = e
            i = self.after_value(e, &done)
            if i == BAD or done:
                return i

    cdef int64_t key_at(self, int64_t i, int64_t* k, int64_t* e, int* esc) except -2:
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

    cdef int64_t after_value(self, int64_t e, int* done) noexcept:
        """After a member's value ending at e: the next member's start (done 0), or just
        past the object (done 1), or BAD."""
        cdef const uint8_t* b = self.buf
        cdef int64_t i = ws(b, e, self.dend)
        if i >= self.dend:
            return BAD
        if b[i] == 44:
            done[0] = 0
            return ws(b, i + 1, self.dend)
        if self.checking and b[i] != 125:
            return BAD
        done[0] = 1
        return i + 1

    cdef int64_t sscan(self, int64_t i, int* esc) noexcept:
        """The closing quote of the string whose first byte is at i, or -1."""
        cdef int code
        cdef int64_t ep
        return json_string_scan(self.buf, i, self.dend, esc, &self.high, &code, &ep)

    cdef int64_t skip(self, int64_t v, int depth_left) noexcept:
        """The end of the value at v (checked when checking), or BAD."""
        cdef const uint8_t* b = self.buf
        cdef int64_t end = self.dend, e, ep
        cdef int esc = 0, code
        cdef uint8_t c = b[v]
        if not self.checking:
            return token_end(b, v, end)
        if c == 34:
            e = self.sscan(v + 1, &esc)
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

    cdef void reset_fields(self, int64_t a, int64_t z) noexcept:
        cdef int64_t f
        for f in range(a, z):
            self.hp[f] = -1
            self.he[f] = -1
            self.hk[f] = -1
            self.hn[f] = 0

    cdef int event(self) except -1:
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
        self.nx_b = self.nx_a = 0
        self.envelope = False
        self.saw_payload = False
        self.doc_sid = -1
        i = ws(b, start + 1, end)
        if i >= end:
            return BADDOC
        envelope = False
        if b[i] == 34:                          # the first key tells the form, mostly
            v = self.key_at(i, &k, &e, &esc)
            envelope = v != BAD and not esc and (key_is(b, k, e - k, b"schema", 6)
                                                 or key_is(b, k, e - k, b"payload", 7))
        if not envelope:
            top_end = self.walk(start, 0, 1) if b[i] != 125 else i + 1
            if top_end == BAD:
                return BADDOC
            if self.saw_payload:                # an envelope after all: read it as one
                self.undo_pre()
                self.reset_fields(0, NH)
                self.pre_slot = -2
                self.nx_b = self.nx_a = 0
                envelope = True
        if envelope:
            while True:
                v = self.key_at(i, &k, &e, &esc)
                if v == BAD:
                    return BADDOC
                if not esc and key_is(b, k, e - k, b"payload", 7):
                    npay += 1
                    if npay == 1:
                        pay = v
                        if b[v] == 123:
                            r = self.set_sid(sa, sb)
                            if r != 0:
                                return r
                            self.envelope = True
                            self.pstart = v
                            e = self.walk(v, 0, 2)
                            walked = True
                        else:
                            e = self.skip(v, 511)
                    else:
                        pay_key = i
                        e = self.skip(v, 511)
                elif not esc and key_is(b, k, e - k, b"schema", 6):
                    sa = v
                    e = sb = self.schema_end(v)
                    late = walked
                else:
                    e = self.skip(v, 511)
                if e == BAD:
                    return BADDOC
                i = self.after_value(e, &done)
                if i == BAD:
                    return BADDOC
                if done:
                    break
            top_end = i
            if npay == 0:                       # no payload key: the object is the payload
                envelope = False
                self.undo_pre()
                self.reset_fields(0, NH)
                self.pre_slot = -2
                self.nx_b = self.nx_a = 0
                self.doc_sid = -1
                if self.walk(start, 0, 1) == BAD:
                    return BADDOC
        self.dend = top_end
        if self.checking and self.high and \
                cdc_utf8_first_invalid(b + start, top_end - start) >= 0:
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
                self.undo_pre()
                self.reset_fields(0, NH)
                self.pre_slot = -2
                self.nx_b = self.nx_a = 0
                r = self.set_sid(sa, sb)
                if r != 0:
                    return r
                self.walk(pay, 0, 2)
        return self.route()

    cdef int set_sid(self, int64_t sa, int64_t sb) except -1:
        """The document's schema id from the schema text at [sa, sb) (none: -1); a new one
        stops for Python (after the scanner has checked the whole document)."""
        self.doc_sid = -1
        if sa < 0 or self.buf[sa] == 110:       # "schema": null is no schema
            return 0
        self.doc_sid = self.schema_id(sa, sb)
        if self.doc_sid < 0:
            if self.checking:
                return BADDOC                   # Python reads it: only a checked text
            self.pending_schema = bytes(self.buf[sa:sb])
            return STOP_SCHEMA
        self.sid = self.doc_sid
        return 0

    cdef Out predicted(self):
        """The output the previous document's table wrote to, when this document's images
        can be read into it as the walk meets them (else None)."""
        cdef Out o
        cdef int64_t slot
        if self.pre_slot == -2:
            self.pre_slot = -1
            if self.images and self.last_tid >= 0 and not self.tcontrol[self.last_tid]:
                slot = self.tslot[self.last_tid]
                if slot >= 0:
                    o = self.outs[slot]
                    if o.ncols and o.plan_sid == self.doc_sid and o.length < self.batch_rows:
                        o.reserve_row()
                        self.null_row(o, o.length)
                        memset(o.sent_b, 0, o.ncols)
                        memset(o.sent_a, 0, o.ncols)
                        self.pre_slot = slot
        if self.pre_slot < 0:
            return None
        return self.outs[self.pre_slot]

    cdef void undo_pre(self):
        """Take back the images read into the predicted output (another table, a control
        event, a stop)."""
        cdef Out o
        cdef int64_t j, row
        if self.pre_slot < 0 or not (self.pre_b or self.pre_a):
            self.pre_slot = -1
            return
        o = self.outs[self.pre_slot]
        row = o.length
        for j in range(o.ncols):
            if o.sent_b[j]:
                undo_value(<Column>o.before[j], row)
            if o.sent_a[j]:
                undo_value(<Column>o.after[j], row)
        o.drop_problem(row)
        self.pre_slot = -1
        self.pre_b = self.pre_a = False
        self.nx_b = self.nx_a = 0

    cdef int64_t schema_id(self, int64_t a, int64_t z):
        """The id of the schema text b[a:z] (the last one first), or -1 when new."""
        cdef int64_t n = z - a, s
        cdef bytes t
        if self.sid >= 0:
            t = self.schemas[self.sid]
            if len(t) == n and memcmp(self.buf + a, <const char*>t, n) == 0:
                return self.sid
        for s in range(len(self.schemas)):
            t = self.schemas[s]
            if len(t) == n and memcmp(self.buf + a, <const char*>t, n) == 0:
                return s
        return -1

    cdef int64_t schema_end(self, int64_t v) except -2:
        """The end of the embedded schema at v: the length of the last schema met when the
        bytes are those (then they are that same, whole JSON value), else a scan."""
        cdef bytes last
        cdef int64_t n
        if self.sid >= 0:
            last = self.schemas[self.sid]
            n = len(last)
            if v + n <= self.dend and memcmp(self.buf + v, <const char*>last, n) == 0:
                return v + n
        return self.skip(v, 511)

    cdef int corrupt_at(self, int64_t code, int64_t flag, int64_t pos) except -1:
        """A document that is JSON but no change event: the whole document is the record."""
        return self.corrupt(self.dstart, self.dend, code, flag, pos)

    # -- routing ---------------------------------------------------------------------------------
    cdef bint is_text(self, int64_t f) noexcept:
        """Field f holds a non-empty JSON string."""
        cdef int64_t v = self.hp[f]
        return v >= 0 and self.hn[f] == 1 and self.buf[v] == 34 and self.buf[v + 1] != 34

    cdef int64_t table_id(self):
        """The table id of the document's (source.schema, source.table) texts, or -1 (then
        pending_name holds them for Python)."""
        cdef const uint8_t* b = self.buf
        cdef int64_t sa = 0, sn = 0, ta = 0, tn = 0, t, esc, n
        cdef int e_
        cdef bytes name
        if self.is_text(HS_TABLE):
            ta = self.hp[HS_TABLE]
            tn = self.he[HS_TABLE] - ta
            if self.is_text(HS_SCHEMA):
                sa = self.hp[HS_SCHEMA]
                sn = self.he[HS_SCHEMA] - sa
        n = sn + 1 + tn
        if self.last_tid >= 0:
            name = self.tnames[self.last_tid]
            if len(name) == n and memcmp(<const char*>name, b + sa, sn) == 0 \
                    and memcmp(<const char*>name + sn + 1, b + ta, tn) == 0:
                return self.last_tid
        for t in range(self.ntid):
            name = self.tnames[t]
            if len(name) == n and memcmp(<const char*>name, b + sa, sn) == 0 \
                    and memcmp(<const char*>name + sn + 1, b + ta, tn) == 0:
                self.last_tid = t
                return t
        self.pending_name = bytes(b[sa:sa + sn]) + b"\0" + bytes(b[ta:ta + tn])
        return -1

    cdef int route(self) except -1:
        """Where the walked document goes; its row written there. Images read during the walk
        into another output than its table's are taken back first."""
        cdef const uint8_t* b = self.buf
        cdef bint control, data
        cdef int64_t tid, slot, row, v
        cdef Out o
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
        tid = self.table_id()
        if tid < 0:
            self.undo_pre()
            return BADDOC if self.checking else STOP_TABLE  # Python reads only checked text
        self.cur_tid = tid
        slot = self.tslot[tid]
        if slot < 0 or (data and self.tcontrol[tid]):
            self.undo_pre()
            return self.counted(control, data and self.tcontrol[tid])
        o = self.outs[slot]
        if self.pre_slot >= 0 and self.pre_slot != slot:
            self.undo_pre()
        if o.length >= self.batch_rows:
            self.undo_pre()
            self.full_slot = slot
            return STOP_BATCH
        if data and o.ncols and o.plan_sid != self.doc_sid:
            self.undo_pre()
            self.pending_slot = slot
            self.pending_sid = self.doc_sid
            return STOP_PLAN
        o.reserve_row()
        row = o.length
        self.null_row(o, row)
        self.header(o, row)
        if data and o.images:
            self.images_of(o, row)
            self.extra += self.nx_b + self.nx_a
        if control:
            self.control += 1
        self.finish_row(o, row, self.dstart, self.dend)
        self.records += 1
        self.seq += 1
        return 0

    cdef int counted(self, bint control, bint unknown) noexcept:
        """A record no output wants: counted only."""
        self.control += control
        self.unknown += unknown
        self.records += 1
        self.seq += 1
        return 0

    # -- the header ------------------------------------------------------------------------------
    cdef int64_t fid(self, int64_t f) noexcept:
        """A header field as a problem names it (with the form of the document)."""
        return f + (NH if self.envelope else 0)

    cdef int twice(self, Out o, int64_t row, int64_t f) except -1:
        """1 (and the problem) when field f's key was given twice."""
        if self.hn[f] > 1:
            o.add_problem(row, self.fid(f), P_TWICE, self.hk[f], self.hk[f], self.hk[f])
            return 1
        return 0

    cdef int text(self, Out o, int64_t row, int64_t f, Column c) except -1:
        """Field f as text: a string's text, any other value its JSON text; null stays
        null."""
        cdef const uint8_t* b = self.buf
        cdef int64_t v = self.hp[f], e
        if v < 0 or self.twice(o, row, f) or b[v] == 110:
            return 0
        if b[v] == 34:
            if put_string(c, row, b, v, self.dend):
                e = self.he[f]
                o.add_problem(row, self.fid(f), P_SURROGATE, v, v, e)
            return 0
        e = self.he[f]
        put_bytes(c, row, b + v, e - v)
        return 0

    cdef int name_text(self, Out o, int64_t row, int64_t f, Column c) except -1:
        """source.schema / source.table: text, an empty one null."""
        cdef int64_t v = self.hp[f]
        if v >= 0 and self.hn[f] == 1 and self.buf[v] == 34 and self.buf[v + 1] == 34:
            return 0
        return self.text(o, row, f, c)

    cdef int integer(self, Out o, int64_t row, int64_t f, int64_t* out) except -1:
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

    cdef int ts(self, Out o, int64_t row, int64_t f, int64_t mult, int64_t* out) except -1:
        cdef int64_t x
        if not self.integer(o, row, f, &x):
            return 0
        if mult != 1 and (x > I64_MAX // mult or x < I64_MIN // mult):
            o.add_problem(row, self.fid(f), P_TS_RANGE, self.hp[f], self.hp[f],
                          self.he[f])
            return 0
        out[0] = x * mult
        return 1

    cdef int present_field(self, int64_t f) noexcept:
        """Field f is there and not null."""
        return self.hp[f] >= 0 and self.buf[self.hp[f]] != 110

    cdef int header(self, Out o, int64_t row) except -1:
        cdef const uint8_t* b = self.buf
        cdef int64_t v, e, x, n
        cdef bint tx
        cdef Column c
        col_valid(o.source_v, row)
        if self.hn[H_SOURCE] > 1:
            self.twice(o, row, H_SOURCE)
        elif self.hn[H_SOURCE] == 1 and b[self.hp[H_SOURCE]] != 123 \
                and b[self.hp[H_SOURCE]] != 110:
            v = self.hp[H_SOURCE]
            o.add_problem(row, self.fid(H_SOURCE), P_NOT_OBJECT, v, v, value_end(b, v, self.dend))
        cat = self.tcat[self.cur_tid]
        if cat is not None:
            if cat[0] is not None:
                put_bytes(o.schema, row, <const uint8_t*><bytes>cat[0], len(cat[0]))
            put_bytes(o.table, row, <const uint8_t*><bytes>cat[1], len(cat[1]))
        else:
            self.name_text(o, row, HS_SCHEMA, o.schema)
            self.name_text(o, row, HS_TABLE, o.table)
        self.text(o, row, HS_VERSION, o.s_version)
        self.text(o, row, HS_CONNECTOR, o.s_connector)
        self.text(o, row, HS_NAME, o.s_name)
        self.text(o, row, HS_DB, o.s_db)
        self.text(o, row, HS_SNAPSHOT, o.s_snapshot)
        self.text(o, row, HS_CHANGE_LSN, o.s_change_lsn)
        self.text(o, row, HS_COMMIT_LSN, o.s_commit_lsn)
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
                put_fixed(o.s_event_count, row, &x, 8)
            self.text(o, row, H_DATA_COLLECTIONS, o.s_collections)
            return 0
        # processed_ts: payload ts_us, else ts_ms
        if self.hn[H_TS_US] == 1 and self.present_field(H_TS_US):
            if self.ts(o, row, H_TS_US, 1, &x):
                put_fixed(o.s_processed, row, &x, 8)
        else:
            self.twice(o, row, H_TS_US)     # a key given twice reads as absent
            if self.ts(o, row, H_TS_MS, 1000, &x):
                put_fixed(o.s_processed, row, &x, 8)
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
            if self.integer(o, row, HT_DCO, &x):
                put_fixed(o.s_dco, row, &x, 8)
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

    cdef int lsn(self, Out o, int64_t row, int64_t f, Column c) except -1:
        """An LSN text as position bytes (only a JSON string: what source keeps as text
        otherwise has no position)."""
        cdef const uint8_t* b = self.buf
        cdef int64_t v = self.hp[f], e, k
        cdef int esc = 0
        if v < 0 or self.hn[f] != 1 or b[v] == 110:
            return 0
        e = self.he[f]
        c.reserve_data(e - v)
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

    cdef int op(self, Out o, int64_t row) except -1:
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

    cdef int ddl_kind(self, Out o, int64_t row) except -1:
        """A schema-change event's source_op: its first tableChanges entry's type."""
        cdef const uint8_t* b = self.buf
        cdef int64_t v = self.hp[H_TABLE_CHANGES], i, k, e, w
        cdef int esc
        if self.hn[H_TABLE_CHANGES] != 1 or b[v] != 91:
            return 0
        i = ws(b, v + 1, self.dend)
        if b[i] != 123:
            return 0
        i = ws(b, i + 1, self.dend)
        cdef int64_t at = -1, seen = 0
        while b[i] == 34:
            k = i + 1
            esc = 0
            e = str_end(b, k, self.dend, &esc)
            w = ws(b, ws(b, e + 1, self.dend) + 1, self.dend)
            if not esc and key_is(b, k, e - k, b"type", 4):
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

    # -- row images --------------------------------------------------------------------------------
    cdef int images_of(self, Out o, int64_t row) except -1:
        """before, after, changed, present of a data event's row."""
        cdef const uint8_t* b = self.buf
        cdef int64_t j, n = o.ncols
        cdef bint has_b, has_a
        cdef uint8_t* sent
        cdef uint8_t op = 0
        cdef int64_t v = self.hp[H_OP]
        cdef bint pre = self.pre_slot >= 0 and self.outs[self.pre_slot] is o
        if not pre:
            memset(o.sent_b, 0, n)
            memset(o.sent_a, 0, n)
        has_b = self.one_image(o, row, 0, pre and self.pre_b)
        has_a = self.one_image(o, row, 1, pre and self.pre_a)
        # the op, as the header read it
        if self.hn[H_OP] == 1 and v >= 0 and b[v] == 34 and self.he[H_OP] == v + 3:
            op = b[v + 1]
        sent = NULL                     # present: what the after image sent (before: deletes)
        if op == 100 and has_b:
            sent = o.sent_b
        elif (op == 99 or op == 117 or op == 114) and has_a:
            sent = o.sent_a
        if sent != NULL:
            col_valid(o.present_v, row)
            for j in range(n):
                if sent[j]:
                    bits_set((<Column>o.present[j]).data, row)
                col_valid(<Column>o.present[j], row)
        if op == 99 or op == 114:
            col_valid(o.changed_v, row)
            for j in range(n):
                bits_set((<Column>o.changed[j]).data, row)
                col_valid(<Column>o.changed[j], row)
        elif op == 100:
            col_valid(o.changed_v, row)
            for j in range(n):
                col_valid(<Column>o.changed[j], row)
        elif op == 117 and has_b and has_a:
            col_valid(o.changed_v, row)
            for j in range(n):
                if differs(<Column>o.before[j], <Column>o.after[j], row):
                    bits_set((<Column>o.changed[j]).data, row)
                col_valid(<Column>o.changed[j], row)
        return 0

    cdef bint one_image(self, Out o, int64_t row, int which, bint read) except -1:
        """The before (0) or after (1) image of a data event's row: read now unless the walk
        did (`read`); its validity set. 1 when the row has that image."""
        cdef const uint8_t* b = self.buf
        cdef int64_t f = H_AFTER if which else H_BEFORE, v = self.hp[f], j
        cdef uint8_t* sent = o.sent_a if which else o.sent_b
        cdef list cols = o.after if which else o.before
        if self.hn[f] > 1:
            if read:                            # the first one was read: taken back
                for j in range(o.ncols):
                    if sent[j]:
                        undo_value(<Column>cols[j], row)
                        sent[j] = 0
            self.twice(o, row, f)
            return False
        if v >= 0 and b[v] == 123:
            if not read:
                self.image(o, row, v, which, self.img_depth())
            col_valid(o.after_v if which else o.before_v, row)
            return True
        if v >= 0 and b[v] != 110:
            o.add_problem(row, self.fid(f), P_NOT_OBJECT, v, v, value_end(b, v, self.dend))
        return False

    cdef int64_t image(self, Out o, int64_t row, int64_t v, int which, int depth) except -2:
        """The image object at v (nested `depth` deep) into the before (0) or after (1)
        columns; returns its end, or BAD."""
        cdef const uint8_t* b = self.buf
        cdef int64_t end = self.dend, i, k, e, w, j, guess = 0, n = o.ncols, f0, ln
        cdef int esc, done
        cdef uint8_t* sent = o.sent_a if which else o.sent_b
        cdef list cols = o.after if which else o.before
        cdef Column c
        f0 = IMG_AFTER if which else IMG_BEFORE
        i = ws(b, v + 1, end)
        if i >= end:
            return BAD
        if b[i] == 125:
            return i + 1
        while True:
            if i >= end or b[i] != 34:
                return BAD
            k = i + 1
            j = -1
            if guess < n and o.plain:
                ln = o.noff[guess + 1] - o.noff[guess]
                if k + ln < end and b[k + ln] == 34 and memcmp(
                        b + k, <const char*>o.names + o.noff[guess], ln) == 0:
                    j = guess               # the key the previous row had here
                    e = k + ln
            if j >= 0:
                w = ws(b, e + 1, end)
                if w >= end or b[w] != 58:
                    return BAD
                w = ws(b, w + 1, end)
                if w >= end:
                    return BAD
            else:
                w = self.key_at(i, &k, &e, &esc)
                if w == BAD:
                    return BAD
                j = o.column_of(b + k, e - k) if not esc else o.column_of_escaped(b + k, e - k)
            if j < 0:
                self.extra_key(k, e, which)
                e = self.skip(w, 512 - depth)
            else:
                guess = j + 1
                c = <Column>cols[j]
                if sent[j]:
                    undo_value(c, row)
                    o.add_problem(row, f0 + j, P_TWICE, i, i, i)
                    e = self.skip(w, 512 - depth)
                else:
                    sent[j] = 1
                    e = self.value(o, c, j, row, w, f0 + j, depth)
            if e == BAD:
                return BAD
            i = self.after_value(e, &done)
            if i == BAD or done:
                return i

    cdef int img_depth(self) noexcept:
        return 3 if self.envelope else 2

    cdef void extra_key(self, int64_t k, int64_t e, int which) noexcept:
        """A key the table lacks: counted once per key and image (a key given twice, once)."""
        cdef int64_t t, n = e - k
        cdef int64_t* seen
        cdef int* cnt
        if which:
            seen = &self.xk_a[0]
            cnt = &self.nx_a
        else:
            seen = &self.xk_b[0]
            cnt = &self.nx_b
        for t in range(min(cnt[0], 16)):
            if seen[2 * t + 1] - seen[2 * t] == n and memcmp(self.buf + seen[2 * t],
                                                             self.buf + k, n) == 0:
                return
        if cnt[0] < 16:
            seen[2 * cnt[0]] = k
            seen[2 * cnt[0] + 1] = e
        cnt[0] += 1

    # -- one value ---------------------------------------------------------------------------------
    cdef int64_t value(self, Out o, Column c, int64_t j, int64_t row, int64_t v,
                       int64_t field, int depth) except -2:
        """The value at v of column j into c; returns its end, or BAD."""
        cdef const uint8_t* b = self.buf
        cdef int esc = 0
        cdef int64_t e
        cdef int r
        if b[v] == 34:
            e = self.sscan(v + 1, &esc)
            if e < 0:
                return BAD
            e += 1
        else:
            e = self.skip(v, 512 - depth)
            if e == BAD:
                return BAD
        self.esc = esc
        if b[v] == 110:
            if not o.nullable[j]:
                o.add_problem(row, field, P_NOT_NULL, v, v, e)
            return e
        r = self.convert(o, c, j, row, v, e)
        if r != 1:
            undo_value(c, row)
            o.add_problem(row, field, P_SURROGATE if r == 2 else P_VALUE, v, v, e)
        return e

    cdef int64_t unit_of(self, Out o, int64_t j) noexcept:
        cdef int32_t en = o.enc[j]
        return en if (en == EN_MS or en == EN_US or en == EN_NS) else o.unit[j]

    cdef int convert(self, Out o, Column c, int64_t j, int64_t row, int64_t v,
                     int64_t e) except -1:
        """1 when the value b[v:e] (not null) is one of column j's type and was written, 2 for
        a lone surrogate in a text, else 0."""
        cdef const uint8_t* b = self.buf
        cdef int32_t kind = o.kind[j], en = o.enc[j]
        cdef uint8_t ch = b[v]
        cdef const uint8_t* p = b + v
        cdef int64_t n = e - v, x, lo, hi, us
        cdef bint quoted = ch == 34
        cdef double d
        cdef float f
        cdef cdc_jv_i128 u, q
        cdef int64_t uscale
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
                if not parse_float(p, n, NULL, 46, &d, 0) or isinf(d):
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
            r = self.unscaled(o, j, v, e, &u, &uscale)
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
            r = self.unscaled(o, j, v, e, &u, &uscale)
            if r == 0:
                return 0
            if r == 2:
                if quoted and cdc_jv_is_number(p, n):
                    put_bytes(c, row, p, n)
                    return 1
                return 0
            if uscale < -1000 or uscale > 1000:
                return 0
            c.reserve_data(48 + (uscale if uscale > 0 else -uscale))
            x = cdc_jv_scaled_text(u, uscale, c.data + c.dlen)
            c.dlen += x
            c.offs[row + 1] = <int32_t>c.dlen
            col_valid(c, row)
            return 1
        if kind == K_STRING:
            if quoted:
                if not self.esc:
                    put_bytes(c, row, p, n)
                    return 1
                return 2 if put_string(c, row, b, v, self.dend) else 1
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
            c.reserve_data(n)
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
                if not to_us(x, self.unit_of(o, j), &us):
                    return 0
                if kind == K_TIME64 and not (0 <= us < US_PER_DAY):
                    return 0
            put_fixed(c, row, &us, 8)
            return 1
        return 0

    cdef int unscaled(self, Out o, int64_t j, int64_t v, int64_t e, cdc_jv_i128* u,
                      int64_t* scale) except -1:
        """A decimal written as an unscaled integer: a VariableScaleDecimal object, or base64
        where column j's encoding says so. 1 (u at scale), 0 when it is not a valid one, 2
        when the value is not written that way (a number, or decimal text)."""
        cdef const uint8_t* b = self.buf
        cdef int32_t en = o.enc[j]
        if b[v] == 123:
            return self.vsd(v, e, u, scale)
        if b[v] == 34 and en == EN_B64DEC:
            scale[0] = o.escale[j]
            return self.b64_int(b + v + 1, e - v - 2, u)
        if b[v] == 34 and en == EN_VSD:
            return 0                    # a VariableScaleDecimal is an object, not a text
        return 2

    cdef int b64_int(self, const uint8_t* p, int64_t n, cdc_jv_i128* out) except -1:
        """Base64 of a big-endian two's complement integer (at most 128 bits): 1, else 0."""
        if n > self.scap:
            self.scap = n + 64
            self.scratch = <uint8_t*>grow(self.scratch, self.scap)
        cdef int64_t k = base64_decode(p, n, self.scratch)
        return k > 0 and cdc_jv_twos(self.scratch, k, out)

    cdef int vsd(self, int64_t v, int64_t e, cdc_jv_i128* u, int64_t* scale) except -1:
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
            if not esc and key_is(b, k, ke - k, b"scale", 5):
                ns += 1
                sv = w
            elif not esc and key_is(b, k, ke - k, b"value", 5):
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
