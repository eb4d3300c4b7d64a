# cython: language_level=3
"""The walk every message kernel of a JSON format shares (`_debezium`, `_olr`, `_qlik`): a
Part's messages cut into pieces (a `{` that starts a line begins one), documents read one by
one by the format's `document`, each walked once with every step checked (`key_at`,
`after_value`, `skip`); the strict scanner of _json.h reads a document only when the walk
refuses it. Table ids (a name's raw JSON text -> the output its records go to) and the outputs
live here too, and the corrupt records, which every format writes alike.

The walk runs without the GIL (`run` releases it for the whole loop; pieces of one call decode
on several threads): what it reaches of Python objects it reaches through borrowed pointers
(the outputs `outp`, table names `tname`, catalog names `tcat_p`, an output's Columns), and
takes the GIL back only where Python must act anyway — a stop's pending name or key, a column
that grows.
"""
cimport cython
from libc.stdint cimport uint8_t, int32_t, int64_t

from cdcfast._arrow cimport Column
from cdcfast._rows cimport Out, Progress
from cdcfast._jsonrow cimport ws, cdc_jv_same
# what a kernel stops for, the problem codes of a column value and the field numbers of image
# columns, which every JSON kernel and its run number alike (the kernels cimport them from
# here; their one spec: cdcfast/formats/_json_codes.py)
from cdcfast._json_codes cimport (STOP_END, STOP_BATCH, STOP_TABLE, STOP_COLUMN, STOP_META,
                                  STOP_SCHEMA, STOP_PLAN, STOP_PAUSE, W_VALUE, W_NOT_NULL,
                                  W_SURROGATE, IMG_BEFORE, IMG_AFTER)

cdef extern from "_keyset.h":
    # the distinct keys of an image that its table lacks (each counts once per image)
    ctypedef struct cdc_keyset:
        int64_t count
    void cdc_ks_clear(cdc_keyset* s) noexcept nogil
    void cdc_ks_free(cdc_keyset* s) noexcept nogil
    int cdc_ks_add(cdc_keyset* s, const uint8_t* p, int64_t n, int esc) noexcept nogil

cdef enum:
    MAX_FIELDS = 40      # a format's fields of a document (hp, he, hk, hn), at most

cdef enum:
    BAD = -3             # a checked walk met something that is not well-formed JSON

cdef enum:
    GUESS_LEVELS = 4     # header objects whose keys are remembered: 4 levels, top or nested
    GUESS_KEYS = 32      # members remembered per object
    GUESS_LEN = 24       # key bytes remembered (a longer key is scanned every time)
    GUESS_PLACES = 2 * GUESS_LEVELS * GUESS_KEYS


cdef inline bint padded(Walker w, const uint8_t* p, int64_t n) noexcept nogil:
    """Eight bytes past p[0:n] may be read (a value in the input, not in a scratch copy, with
    eight more bytes of input after it): what parse_float's 8-at-a-time path asks."""
    return w.buf <= p and p + n + 8 <= w.bend


cdef class Walker:
    cdef object keep
    cdef const uint8_t* buf
    cdef const uint8_t* bend            # the input's end: bytes before it may be read
    cdef int64_t nmsg
    cdef const int64_t* moff
    cdef const uint8_t* mvalid
    cdef bint images
    cdef readonly int64_t msg, pos, piece_end, seq, tombstones, records, control, unknown
    cdef int64_t paused
    cdef public int64_t extra
    cdef public int64_t batch_rows
    cdef public bint messages           # each message an input (Spark): seq counts per message
    # the document in hand
    cdef int64_t dstart, dend
    cdef bint checking                  # the walk checks the syntax (the scanner on refusal)
    cdef unsigned high                  # a byte past 0x7F was met (UTF-8 to check)
    cdef bint last_esc                  # the string `skip` last passed may hold an escape
    # the fields of the document in hand, by the format's own numbers (MAX_FIELDS at most)
    cdef int64_t hp[MAX_FIELDS]     # value start of each field (-1: absent)
    cdef int64_t hk[MAX_FIELDS]     # its key position (for "given twice")
    cdef int64_t he[MAX_FIELDS]     # its end
    cdef int32_t hn[MAX_FIELDS]     # times the key was met
    # table ids: a tag byte + raw JSON texts -> tid, tid -> output slot and row names
    cdef list tnames                    # (keeps the bytes tname points into)
    cdef const char** tname
    cdef int64_t* tname_n
    cdef int64_t* tslot
    cdef list tcat                      # per tid: the row's (schema, table) as bytes, or None
    cdef const uint8_t** tcat_p         # …without Python: schema, table (NULL: None; a row
                                        # with a table has a catalog name)
    cdef int64_t* tcat_n                # …and their lengths
    cdef uint8_t* tunk                  # per tid: a table no catalog or metadata describes
    cdef int64_t ntid, tcap, last_tid, cur_tid
    cdef readonly bytes pending_name    # STOP_TABLE: what the record named
    cdef Progress progress              # how far the run is (its outputs size by it)
    # outputs, by slot
    cdef list outs
    cdef void** outp                    # the same, borrowed: cast back with <Out>
    cdef int64_t nout
    cdef public int64_t headers_slot    # headers(): the one output of every record (-1: none)
    cdef public int64_t corrupt_slot    # where unattributable records go (-1: dropped)
    cdef readonly int64_t full_slot     # STOP_BATCH: which output
    # row images
    cdef int64_t nx                     # keys the table lacks in this row's images
    cdef cdc_keyset xkeys               # this image's keys the table lacks, so far
    cdef readonly bytes pending_key     # STOP_COLUMN: the new key's raw text
    cdef readonly int64_t pending_slot  # STOP_COLUMN: which output
    # the last two header keys met at each place of each object (`header_key`), the newer
    # first (place g, then g + GUESS_PLACES): their bytes, length (0: none) and field
    cdef uint8_t gkey[2 * GUESS_PLACES * GUESS_LEN]
    cdef uint8_t glen[2 * GUESS_PLACES]
    cdef int64_t gfield[2 * GUESS_PLACES]
    cdef uint8_t* ktext                 # a key with escapes, unescaped (`key_text`)
    cdef int64_t kcap

    cdef bint busy(self) noexcept nogil
    cdef void new_input(self) noexcept nogil
    @cython.final
    cdef int _run(self) except -1 nogil
    cdef int document(self) except -1 nogil
    @cython.final
    cdef bint next_piece(self) noexcept nogil
    @cython.final
    cdef int64_t content_end(self) noexcept nogil
    @cython.final
    cdef int64_t sscan(self, int64_t i, int* esc) noexcept nogil
    @cython.final
    cdef int64_t key_at(self, int64_t i, int64_t* k, int64_t* e, int* esc) except -2 nogil
    cdef int64_t key_field(self, const uint8_t* b, int64_t k, int64_t n, int level) noexcept nogil
    @cython.final
    cdef const uint8_t* key_text(self, int64_t k, int64_t e, int esc, int64_t* n) except? NULL nogil
    @cython.final
    cdef bint key_equals(self, int64_t k, int64_t e, int esc, const char* name,
                         int64_t ln) except -1 nogil
    @cython.final
    cdef int64_t key_scanned(self, int64_t i, int level, int64_t g, int64_t* k, int64_t* e,
                             int* esc, int64_t* f) except -2 nogil
    @cython.final
    cdef int64_t after_value(self, int64_t e, uint8_t close, int* done) noexcept nogil
    @cython.final
    cdef int64_t skip(self, int64_t v, int depth_left) noexcept nogil
    @cython.final
    cdef bint utf8_ok(self, int64_t start, int64_t end) noexcept nogil
    @cython.final
    cdef int corrupt(self, int64_t start, int64_t end, int64_t code, int64_t scode,
                     int64_t err_pos) except -1 nogil
    @cython.final
    cdef int _corrupt(self, Out o, int64_t slot, int64_t start, int64_t end, int64_t code,
                      int64_t scode, int64_t err_pos) except -1 nogil
    @cython.final
    cdef int counted(self, bint control, bint unknown) noexcept nogil
    @cython.final
    cdef int64_t table_id(self, uint8_t tag, int64_t sa, int64_t sn, int64_t ta,
                          int64_t tn) except -2 nogil
    @cython.final
    cdef int64_t slot_of(self, Out o) noexcept nogil
    @cython.final
    cdef int64_t value(self, Out o, Column c, int64_t j, int64_t row, int64_t v,
                       int64_t field) except -2 nogil
    cdef int convert(self, Out o, Column c, int64_t j, int64_t row, int64_t v, int64_t e,
                     int esc) except -1 nogil
    @cython.final
    cdef int image(self, Out o, int64_t row, int64_t v, bint after, bint values) except -1 nogil
    @cython.final
    cdef int64_t walk_image(self, Out o, int64_t row, int64_t v, bint after,
                            int depth) except -2 nogil
    cdef void extra_key(self, int64_t k, int64_t e, int esc) noexcept nogil
    @cython.final
    cdef void reset_fields(self, int64_t a, int64_t z) noexcept nogil
    @cython.final
    cdef bint images_row(self, Out o) except -1 nogil


cdef inline int64_t header_key(Walker w, int64_t i, int level, int depth, int64_t at,
                               int64_t* k, int64_t* e, int* esc, int64_t* f) except -2 nogil:
    """The member at i, the `at`-th of a header object at `level` (`depth`: its nesting): as
    `key_at`, and its field (the format's `key_field` of the key's text: escapes read as
    what they stand for). The last two keys met there are tried first (a stream alternates
    shapes: Debezium's transaction documents between its events, OLR's begin and commit
    between its data): the same bytes there are the same field (a field is one at its own
    level only), matched whole instead of scanned and looked up (`key_scanned`). Inline: the
    formats' header walks call it per key."""
    cdef const uint8_t* b = w.buf
    cdef int64_t end = w.dend, v, ln = 0, h
    cdef int64_t g = -1
    if at >= GUESS_KEYS or level >= GUESS_LEVELS or b[i] != 34:
        return w.key_scanned(i, level, g, k, e, esc, f)
    g = (level * 2 + (depth > 1)) * GUESS_KEYS + at
    h = g
    while h < 2 * GUESS_PLACES:         # the newer, then the older
        ln = w.glen[h]
        if ln and i + 1 + ln < end and b[i + 1 + ln] == 34 and cdc_jv_same(
                b + i + 1, w.gkey + h * GUESS_LEN, ln):
            # (its bytes were checked then: a well-formed key without escapes)
            k[0] = i + 1
            e[0] = i + 1 + ln
            esc[0] = 0
            f[0] = w.gfield[h]
            v = ws(b, e[0] + 1, end)
            if v >= end or b[v] != 58:
                return BAD
            v = ws(b, v + 1, end)
            return v if v < end else BAD
        h += GUESS_PLACES
    return w.key_scanned(i, level, g, k, e, esc, f)
