"""The problem codes of `olr`: the one spec of them. The kernel (native/cdcfast/_olr.pyx)
cimports them from native/cdcfast/_olr_codes.pxd, which native/codes_pxd.py writes from this
file; cdcfast.formats._olr_run (which turns them into error texts) imports them from here.
The first five are the ones every JSON kernel shares (_json_codes' W_*).
Pure data: no imports (the build executes this file by its path)."""

P_VALUE = 1          # a column value that is not of its column's type
P_TWICE = 2          # a key given twice (a: the second key)
P_NOT_NULL = 3       # null in a NOT NULL column
P_SURROGATE = 4      # a lone surrogate in a \u escape of a text
P_MISSING = 5        # payload.op missing
P_BAD_OP = 6         # payload.op none of begin commit c u d ddl chkpt
P_NOT_INT = 7        # an integer field that is none (or negative where unsigned)
P_SCN = 8            # scns that is not 0x + hex
P_TIME = 9           # tm / tms that is not a time
P_XID = 10           # xid / xidn that is not one
P_NOT_OBJECT = 11    # an image that is not an object
P_BOOL = 12          # payload.redo that is not a boolean
P_TEXT = 13          # schema.owner / schema.table that is no text
P_JSON = 14          # (corrupt) not well-formed: field = the scanner's code
P_NOT_DOC = 15       # (corrupt) a document that is not an object
P_PAYLOAD = 16       # (corrupt) payload missing (field 0), given twice (1), not an array (2)
P_ELEMENT = 17       # (corrupt) a payload element that is not an object
P_TABLE = 18         # (corrupt) a c/u/d element without schema.table
P_COLUMNS = 19       # schema.columns that is not a list of columns
P_PAIR = 20          # an array image's element that is not an object of one column
P_SCN_INT = 21       # scn / c_scn that is not an SCN
P_UNSIGNED = 22      # c_idx that is not a non-negative integer
P_OP_CORRUPT = 23    # (corrupt) an element with neither a table nor a valid op: field = why
                     # (0 op missing, 1 given twice, 2 none of the ops)
