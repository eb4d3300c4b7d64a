"""The numbers of `debezium` that its kernel and its Python share: the one spec of them. The
kernel (native/cdcfast/_debezium.pyx) cimports them from native/cdcfast/_debezium_codes.pxd,
which native/codes_pxd.py writes from this file; cdcfast.formats.debezium (the encodings) and
cdcfast.formats._dbz_run (problem texts, header names) import them from here.
The first five problem codes are the ones every JSON kernel shares (_json_codes' W_*).
Pure data: no imports (the build executes this file by its path)."""

# encodings: how the connector wrote a value (docs/debezium.md, "Columns and their types")
EN_PLAIN = 0         # as its JSON kind says; a temporal column in its default unit
EN_DAYS = 1
EN_MS = 2
EN_US = 3
EN_NS = 4
EN_ZONED = 5
EN_B64DEC = 6
EN_VSD = 7
EN_B64 = 8
EN_JSONTEXT = 9

# problem codes (_dbz_run turns them into texts)
P_VALUE = 1          # a column value that is not of its column's type
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

# header fields, by where they are in the payload (their paths: _dbz_run.HEADER_PATHS); a
# problem names field f of the envelope form as f + NH
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
HT_DATA_COLLECTION_ORDER = 25
NH = 26

# the fields of the `source` struct (cdcfast.formats.debezium.SOURCE), in its order
S_VERSION = 0
S_CONNECTOR = 1
S_NAME = 2
S_DB = 3
S_SNAPSHOT = 4
S_PROCESSED_TS = 5
S_CHANGE_LSN = 6
S_COMMIT_LSN = 7
S_DATA_COLLECTION_ORDER = 8
S_EVENT_COUNT = 9
S_DATA_COLLECTIONS = 10
