"""The change-event envelope (SPEC §3): one Arrow schema for every format.

Every field is nullable, so PERMISSIVE mode can always write a null.
"""
from __future__ import annotations

import pyarrow as pa

UTC_US = pa.timestamp("us", tz="UTC")

HEAD = [  # before the images
    ("op", pa.string()), ("source_op", pa.string()), ("schema", pa.string()),
    ("table", pa.string()), ("txid", pa.string()), ("commit_ts", UTC_US),
    ("change_ts", UTC_US), ("commit_pos", pa.binary()), ("change_pos", pa.binary()),
    ("seq", pa.int64()),
]
IMAGES = ("before", "after", "changed", "present")
TAIL = [("_error", pa.string()), ("_corrupt_record", pa.binary())]


def columns_struct(columns) -> pa.StructType:
    """``columns``: (name, Arrow type) pairs in table order."""
    return pa.struct([pa.field(n, t) for n, t in columns])


def flags_struct(columns) -> pa.StructType:
    return pa.struct([pa.field(n, pa.bool_()) for n, _ in columns])


def schema(columns, source: pa.StructType) -> pa.Schema:
    """The envelope of one table: ``columns`` as (name, Arrow type) pairs."""
    image = columns_struct(columns)
    flags = flags_struct(columns)
    return pa.schema([pa.field(n, t) for n, t in HEAD]
                     + [pa.field("before", image), pa.field("after", image),
                        pa.field("changed", flags), pa.field("present", flags),
                        pa.field("source", source)]
                     + [pa.field(n, t) for n, t in TAIL])


def headers_schema(source: pa.StructType) -> pa.Schema:
    """What ``headers()`` returns: the envelope without before/after/changed/present."""
    return pa.schema([pa.field(n, t) for n, t in HEAD] + [pa.field("source", source)]
                     + [pa.field(n, t) for n, t in TAIL])
