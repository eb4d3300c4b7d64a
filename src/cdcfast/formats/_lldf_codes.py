"""The numbers `lldf` shares with its kernel: the one spec of them. The kernel (native/cdcfast/
_lldf.pyx) cimports them from native/cdcfast/_lldf_codes.pxd, which native/codes_pxd.py writes
from this file; cdcfast.formats.lldf imports them from here (and the reference decoder and the
encoder from it). Pure data: no imports (the build executes this file by its path)."""

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
