# cython: language_level=3
"""The value kinds of cdcfast.catalog (the same numbers), for every kernel that dispatches on
them once per column."""

cdef enum:
    K_BOOL = 0
    K_INT8 = 1
    K_INT16 = 2
    K_INT32 = 3
    K_INT64 = 4
    K_DECIMAL = 5
    K_FLOAT32 = 6
    K_FLOAT64 = 7
    K_STRING = 8
    K_BINARY = 9
    K_DATE32 = 10
    K_TIME64 = 11
    K_TIMESTAMP = 12
    K_TIMESTAMP_TZ = 13
    K_DECTEXT = 14
