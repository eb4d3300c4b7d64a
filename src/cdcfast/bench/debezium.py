"""The general-purpose contenders of `cdcfast bench --format debezium` (SPEC §8): what a user
reads Debezium's JSON change events with today, over the very bytes cdcfast decodes.

- `pyarrow.json.read_json`, one thread, with an explicit schema of the payload as the JSON
  converter writes it: row images as structs of the values' JSON types (base64 decimals and
  binaries as strings, MicroTimestamp/NanoTimestamp/Timestamp and Time as int64, Date as int32,
  ZonedTimestamp as its ISO text), the `source` and `transaction` blocks, and the fields of the
  transaction BEGIN/END documents the stream interleaves (`status`, `id`, `event_count`,
  `data_collections`). Every field is nullable, so a BEGIN/END line is a row whose payload
  fields are null and a change event is a row whose status fields are null: pyarrow reads the
  whole stream, control lines included, as one table. It converts no value beyond its JSON
  type — the base64 decimals, day counts and epoch integers stay what they are, so it does
  less than cdcfast, which gives decimal128, date32 and timestamp[us] columns.
- `json.loads` per line then `pyarrow.Table.from_pylist` with the same schema: the slow path
  most pipelines run today (and the same with `msgspec` when it is installed).

Only the bare payload (`schemas.enable=false`, newline-delimited) is covered: it is what the
bench generates.
"""
from __future__ import annotations

import pyarrow as pa

from ..catalog import (BINARY, BOOL, DATE32, DECIMAL, DECTEXT, FLOAT32, FLOAT64, INT8, INT16,
                       INT32, INT64, STRING, TIME64, TIMESTAMP, TIMESTAMP_TZ)


def json_type(ctype, decimal_handling: str = "precise") -> pa.DataType:
    """The Arrow type of one column's value as the JSON converter writes it (no conversion
    past its JSON type): what a user hands pyarrow.json as the explicit schema."""
    kind = ctype.kind
    if kind in (INT8, INT16, INT32, INT64, BOOL, FLOAT32, FLOAT64):
        return ctype.arrow_type
    if kind == DECIMAL:                 # precise: base64 unscaled bytes; string: its text
        return pa.float64() if decimal_handling == "double" else pa.string()
    if kind == DATE32:                  # io.debezium.time.Date: days since the epoch
        return pa.int32()
    if kind in (TIME64, TIMESTAMP):     # (Micro|Nano)Time(stamp): an epoch integer
        return pa.int64()
    if kind in (STRING, DECTEXT, BINARY, TIMESTAMP_TZ):   # text, base64, ZonedTimestamp ISO
        return pa.string()
    raise ValueError(f"no JSON type for {ctype.name}")


_SOURCE = pa.struct([(n, pa.int64() if n.startswith("ts_") else pa.string()) for n in (
    "version", "connector", "name", "ts_ms", "snapshot", "db", "sequence", "ts_us", "ts_ns",
    "schema", "table", "change_lsn", "commit_lsn")])
_TRANSACTION = pa.struct([("id", pa.string()), ("total_order", pa.int64()),
                          ("data_collection_order", pa.int64())])
_COLLECTIONS = pa.list_(pa.struct([("data_collection", pa.string()),
                                   ("event_count", pa.int64())]))


def payload_schema(table, decimal_handling: str = "precise") -> pa.Schema:
    """The explicit schema of a bare-payload stream of one table: change events and the
    BEGIN/END transaction documents in one row type, every field nullable."""
    image = pa.struct([(c.name, json_type(c.type, decimal_handling)) for c in table.columns])
    return pa.schema([
        ("before", image), ("after", image), ("source", _SOURCE), ("op", pa.string()),
        ("ts_ms", pa.int64()), ("ts_us", pa.int64()), ("ts_ns", pa.int64()),
        ("transaction", _TRANSACTION),
        # transaction metadata (BEGIN/END); ts_ms is shared with the change events'
        ("status", pa.string()), ("id", pa.string()), ("event_count", pa.int64()),
        ("data_collections", _COLLECTIONS),
    ])


def schema(case) -> pa.Schema:
    """The explicit schema the contenders read the case with (cdcfast/bench/core.py)."""
    return payload_schema(case.catalog.get(case.table))
