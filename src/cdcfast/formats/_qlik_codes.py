"""The problem codes of `qlik`: the one spec of them. The kernel (native/cdcfast/_qlik.pyx)
cimports them from native/cdcfast/_qlik_codes.pxd, which native/codes_pxd.py writes from this
file; cdcfast.formats._qlik_run (which turns them into error texts) imports them from here.
Pure data: no imports (the build executes this file by its path)."""

P_VALUE = 1          # a column value that is not of its column's type
P_TWICE = 2          # a key given twice (a: the second key)
P_NOT_NULL = 3       # null in a NOT NULL column
P_SURROGATE = 4      # a lone surrogate in a \u escape of a text
P_MISSING = 5        # headers.operation missing
P_BAD_OP = 6         # headers.operation none of INSERT UPDATE DELETE REFRESH
P_NOT_INT = 7        # transactionEventCounter
P_TIME = 8           # timestamp
P_NOT_HEX = 9        # a mask
P_NOT_OBJECT = 10    # headers / an image that is not an object
P_BOOL = 11          # transactionLastEvent
P_TEXT = 12          # a text field that holds an object or array
P_TYPE = 13          # type none of DT, MD
P_JSON = 14          # (corrupt) not well-formed: field = the scanner's code
P_NOT_DOC = 15       # (corrupt) a document that is not an object
P_MESSAGE = 16       # (corrupt) message given twice (field 1) or not an object (0)
P_UNNAMED = 17       # (corrupt) no table: field = the case (_qlik_run.UNNAMED)
P_META = 18          # (corrupt) a metadata message that cannot be read: field = its text
