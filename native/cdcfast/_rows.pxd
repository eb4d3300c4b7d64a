# cython: language_level=3
"""One output table of a JSON kernel's run (`_debezium`, `_olr`, `_qlik`).

The envelope's columns by name, the format's `source` fields as a list of Columns (`src`, in
the order of its struct), and the row images of the table when the call wants them: before,
after, changed and present, one Column per table column, with the flag bitmaps also reached
through raw pointers (`flags`) so a row's flags are set without Python; every Column is also
reached through a borrowed pointer (`colp`, `srcp`, `beforep`…), so the walk runs without the
GIL. Rows are written at an
index (`length` is the next row) and only become rows with `finish_row`, so a row can be taken
back (`clear_row`) when the kernel has to stop for Python halfway through it. Every problem of a
row is kept while it is read (a key given twice voids its first value's); a row's problem is its
first in document order; Python writes their texts.

A layout typed by the data (`derived`) grows: `add_column` adds a string column, null in the
rows written so far.
"""
from libc.stdint cimport uint8_t, int32_t, int64_t

cimport cython

from cdcfast._arrow cimport Column

cdef enum:
    NO_NAME = -3        # column_of_escaped: a key with a lone surrogate names nothing

# what a row is, for the flags of a column added later (add_column)
cdef enum:
    ROW_OTHER = 0
    ROW_C = 3            # an insert (or a read): the column would have been sent
    ROW_D = 5            # a delete: likewise
    ROW_U = 4            # an update: not sent


@cython.final
cdef class Progress:
    """How far a run is through its input (bytes `start`..`end`, now at `at`) and its
    batches' rows at most: what its Outs size their columns by. A cell of its own, shared by
    the run and its Outs, so an Out never points into a run that is gone."""
    cdef public int64_t at, start, end, batch_rows


@cython.final
cdef class Out:
    cdef readonly int64_t ncols
    cdef readonly bint images
    cdef public bint want_flags         # changed / present wanted (a projection may not)
    cdef public bint want_before        # the before image's values converted (else skipped)
    cdef public Column op, source_op, schema, table, txid, commit_ts, change_ts
    cdef public Column commit_pos, change_pos, seq
    cdef public list src                # the source struct's fields
    cdef public Column source_v
    cdef public list before, after, changed, present
    cdef public Column before_v, after_v, changed_v, present_v
    cdef list cols                      # every Column above, for reserve and undo
    # the layout: kinds, precision/scale, nullability, column names (for keys)
    cdef int32_t* kind
    cdef int32_t* prec
    cdef int32_t* scl
    cdef uint8_t* nullable
    cdef bytes lob_                     # per column: 1 where a mask never speaks for it (LOBs)
    cdef const uint8_t* lobp            # (its bytes, reached without Python)
    cdef bytes names
    cdef const char* namesp             # (its bytes, reached without Python)
    cdef int64_t* noff
    cdef bint plain                     # no name has a quote, backslash or control byte
    cdef public bint derived            # typed by the data: grows (add_column)
    # per row: the image columns sent
    cdef uint8_t* sent_b
    cdef uint8_t* sent_a
    # problems: (row, field, code, pos, a, b) per row that has one
    cdef int64_t* errs
    cdef readonly int64_t nerr
    cdef int64_t errcap
    # per row: message index, record start and end (for _corrupt_record), what it is; in
    # Columns (`rinfo`) only for their blocks: a repeated call writes into pages it has
    # (the block cache), not fresh ones
    cdef int64_t* rmsg
    cdef int64_t* rstart
    cdef int64_t* rend
    cdef uint8_t* rop
    cdef uint8_t* rvend                 # per row: seq is the vendor's number, not the ordinal
    cdef int64_t rcap
    cdef list rinfo
    cdef readonly int64_t length
    cdef int64_t room                   # rows every column has room for
    cdef public Progress progress       # the run's (None: columns grow by doubling alone)
    cdef bint sized                     # this batch's columns were sized from it
    cdef list vars_                     # the VAR columns (a null row sets their offset)
    cdef int32_t*** voffs
    cdef int64_t** vdlen
    cdef int64_t nvars
    cdef uint8_t*** flags               # per column: present data, valid, changed data, valid
    # the Columns above as borrowed pointers (the lists keep them), for the walk without the
    # GIL: every column (`cols`), the source fields, and per image column its before, after,
    # changed and present (cast back with <Column>)
    cdef void** colp
    cdef int64_t ncolp
    cdef void** srcp
    cdef void** beforep
    cdef void** afterp
    cdef void** changedp
    cdef void** presentp

    cdef _column(self, int32_t kind, int32_t prec, int32_t scale, bint nullable, str name)
    cdef _vars(self)
    cdef _grow_rows(self, int64_t n)
    cdef _grow_info(self, int64_t n)
    cdef int64_t column_of(self, const uint8_t* k, int64_t n) noexcept nogil
    cdef int64_t column_of_escaped(self, const uint8_t* k, int64_t n) except -2 nogil
    cdef int twice_problem(self, int64_t row, int64_t field, int64_t pos) except -1 nogil
    cdef void null_row(self, int64_t row) noexcept nogil
    cdef void finish_row(self, int64_t row, int64_t msg, int64_t start, int64_t end,
                         uint8_t op) noexcept nogil
    cdef int reserve_row(self) except -1 nogil
    cdef void clear_row(self, int64_t row) noexcept nogil
    cdef int add_problem(self, int64_t row, int64_t field, int64_t code, int64_t pos,
                         int64_t a, int64_t b) except -1 nogil
    cdef void move_fields(self, int64_t row, int64_t lo, int64_t hi, int64_t delta) noexcept nogil
    cdef int64_t _first_of_row(self, int64_t i) noexcept nogil
