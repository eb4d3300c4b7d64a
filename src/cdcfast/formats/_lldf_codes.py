"""The numbers `lldf` shares with its kernel: the one spec of them. The kernel (native/cdcfast/
_lldf_frame.pyx, _lldf.pyx) cimports them from native/cdcfast/_lldf_codes.pxd, which
native/codes_pxd.py writes from this file; cdcfast.formats.lldf and its runner _lldf_run import
them from here (the reference decoder too, and the encoder through cdcfast.formats.lldf). Pure
data: no imports (the build executes this file by its path)."""

# -- the Data Change Record header (SPEC §5.2): its least length, the offsets of the fields
# the framer and the envelope read, and the widths of those the kernel reads whole
HEADER_MIN = 288
OFF_LENGTH = 0              # BIN(2) the header's length
OFF_OWNERLEN = 12           # BIN(2) TBOWNERLEN
OFF_NAMELEN = 14            # BIN(2) TBNAMELEN
OFF_OWNER = 32              # CHAR(8) TABLEOWNER
OFF_NAME = 40               # CHAR(18) TABLENAME
OFF_TIMESTAMP = 60          # BIN(17) TIMESTAMP
OFF_LOGLRSN = 77            # BIN(10) LOGLRSN
OFF_CHANGE_TYPE = 104       # CHAR(2) CHANGE TYPE
OFF_COMMIT_TS = 144         # BIN(17) UORCOMMITTIMESTAMP
OFF_UORID = 172             # BIN(10) UORID
OFF_SEGLEN = 182            # BIN(2) SEGLEN
OFF_TOTALSEGS = 184         # BIN(2) TOTALSEGS
OFF_SEGNUM = 186            # BIN(2) SEGNUM
OFF_COMMITLRSN = 192        # BIN(10) UORCOMMITLRSN
LEN_OWNER = 8               # TABLEOWNER, TABLENAME: longer names are truncated to these
LEN_NAME = 18
LEN_LRSN = 10               # LOGLRSN, UORCOMMITLRSN, UORID
LEN_TS = 17                 # TIMESTAMP, UORCOMMITTIMESTAMP
LEN_CHANGE_TYPE = 2

# -- header kinds: how a header field of cdcfast.formats.lldf.HEADER is read
H_BIN1 = 0
H_BIN2 = 1
H_BIN4 = 2
H_BINX = 3
H_CHAR = 4
H_YN = 5
H_TS = 6

# -- error codes; cdcfast.formats.lldf.describe() names each (field, reason)
# record-level: the record cannot be split
E_RAW_REST = 1
E_HDR_LENGTH = 2
E_HDR_CUT = 3
E_REC_CUT = 4
E_DW_SHORT = 5
E_DW_RESERVED = 6
E_DW_CUT = 7
E_SEGLEN = 8
E_BLOCK_FILL = 9
# segments and the data area
E_SEG_MISSING = 20
E_SEG_ALONE = 21
E_NO_DATA = 22
E_DATA_LEN = 23
E_IMAGE_CUT = 24
E_DATA_REST = 25
# a header field (kept, the field null)
E_CHANGE_TYPE = 30
E_HEADER_VALUE = 31
# images
E_IMAGE_SHORT = 40
E_IMAGE_LONG = 41
E_NULL_BYTE = 42
E_VALUE = 43

# -- framing codes: one per message, the option's or detected (cdcfast.formats.lldf FRAMINGS)
FR_RAW = 0
FR_RDW = 1
FR_VB = 2

# -- image kinds: how a column of a row image is read (cdcfast.formats.lldf.layout)
K_I16 = 0
K_I32 = 1
K_I64 = 2
K_DEC = 3
K_F32 = 4
K_F64 = 5
K_CHAR = 6
K_GRAPHIC = 7
K_VARCHAR = 8
K_VARGRAPHIC = 9
K_VARBIN = 10
K_CLOB = 11
K_DBCLOB = 12
K_BLOB = 13
K_XML = 14
K_BINARY = 15
K_DATE = 16
K_TIME = 17
K_TS = 18
K_TSZ = 19
K_BOOL = 20

# -- what an error names: a header field by its index in cdcfast.formats.lldf.HEADER (>= 0),
# a column value as F_BEFORE_COL + j or F_AFTER_COL + j, else one of these
F_LENGTH = -1
F_SEGLEN = -2
F_RDW = -3
F_BDW = -4
F_SEGNUM = -5
F_CHANGE_TYPE = -6
F_DATA = -7
F_BEFORE = -8
F_AFTER = -9
F_TIMESTAMP = -10
F_COMMIT_TS = -11
F_BEFORE_COL = 100000
F_AFTER_COL = 200000

# -- an error entry of the kernel (TableOut.errors): ERR_WORDS int64 words, these
ERR_ROW = 0
ERR_CODE = 1
ERR_FIELD = 2
ERR_POS = 3
ERR_A = 4                   # the code's numbers, describe()'s a and b
ERR_B = 5
ERR_C = 6                   # a third (E_SEGLEN: the record's length)
ERR_MSG = 7
ERR_RAW_AT = 8              # the bytes it shows (TableOut.raw_bytes)
ERR_RAW_LEN = 9
ERR_SPAN_START = 10         # the span of a record that cannot be decoded (else 0, 0)
ERR_SPAN_END = 11
ERR_WORDS = 12

# -- what Framer.scan stops for
S_DONE = 0                  # the input is over
S_FULL = 1                  # the chunk holds the records asked for
S_NEW_TABLE = 2             # a record names a table not registered yet
