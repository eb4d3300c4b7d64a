"""The numbers every JSON kernel shares with Python: the one spec of them. The shared walk and
row outputs (native/cdcfast/_walk.pxd, _rows.pyx) cimport them from
native/cdcfast/_json_codes.pxd, which native/codes_pxd.py writes from this file;
cdcfast.formats._jsonrun and the runners on it (which answer the stops and turn the problems
into error texts) import them from here, and so does the strict scanner's twin,
cdcfast.reference._jsonscan. The scanner's codes are C's too (native/cdcfast/_json.h, plain C
without Cython): tests/test_codes.py checks that header says the same.
Pure data: no imports (the build executes this file by its path)."""

# what a kernel's run stops for (the runner answers, then runs it again)
STOP_END = 0         # the part is done
STOP_BATCH = 1       # an output reached batch_rows
STOP_TABLE = 2       # a record names a table the kernel has no id for
STOP_COLUMN = 3      # an image has a key its derived layout has not met
STOP_META = 4        # (qlik) a metadata message, for Python to read
STOP_PAUSE = 6       # PAUSE_BYTES more of the input are read
STOP_SCHEMA = 7      # (debezium) a document's embedded schema is new
STOP_PLAN = 8        # (debezium) an output needs its plan for a schema

# the problem codes every JSON kernel numbers alike; a format's own codes (its P_*) begin with
# these, under its names (P_VALUE = W_VALUE, …: tests/test_codes.py)
W_VALUE = 1          # a column value that is not of its column's type
W_TWICE = 2          # a key given twice (a: the second key)
W_NOT_NULL = 3       # null in a NOT NULL column
W_SURROGATE = 4      # a lone surrogate in a \u escape of a text
W_MISSING = 5        # a field the record needs is missing

# the field numbers of image columns in problems: IMG_BEFORE + column, IMG_AFTER + column
IMG_BEFORE = 1048576     # 1 << 20
IMG_AFTER = 2097152      # 2 << 20

# the strict scanner's codes (a document that is not well-formed: the code, at a byte)
E_TRUNCATED = 1      # the input ends inside a value; at end
E_UNEXPECTED = 2     # a byte that cannot come here; at it (a literal: at its first byte)
E_CONTROL = 3        # a raw byte below 0x20 in a string; at it
E_ESCAPE = 4         # a bad escape; at its backslash
E_UTF8 = 5           # invalid UTF-8; where Python's decode reports it
E_NUMBER = 6         # a run of number bytes that is no number; at its first
E_DEPTH = 7          # the bracket that opens level MAX_DEPTH + 1; at it
E_TRAILING = 8       # more than whitespace after the document; at it
MAX_DEPTH = 512      # the deepest nesting a document may have
