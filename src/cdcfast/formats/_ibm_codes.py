"""The error codes of `ibm-delimited`: the one spec of them. The kernel (native/cdcfast/_ibm.pyx)
cimports them from native/cdcfast/_ibm_codes.pxd, which native/codes_pxd.py writes from this
file; cdcfast.formats.ibm_delimited (which turns them into error texts) imports them from here.
Pure data: no imports (the build executes this file by its path)."""

# record-level (the tokenizer)
E_UNTERMINATED = 1
E_AFTER_CLOSE = 2
E_STRAY_QUOTE = 3
E_TOO_FEW = 4
E_COUNT = 5
E_ODD = 6
# values (E_VALUE and above: the error's a, b are the value's span)
E_VALUE = 10
E_NOT_NULL = 11
E_INSERT_BEFORE = 12
E_DELETE_AFTER = 13
E_HEX = 14
E_TEXT = 15
