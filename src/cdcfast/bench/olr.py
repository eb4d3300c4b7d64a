"""The general-purpose contenders of `cdcfast bench --format olr` (SPEC §8): what a user reads
OpenLogReplicator's JSON with today, over the very bytes cdcfast decodes.

- `pyarrow.json.read_json`, one thread, with an explicit schema of the messages as the writer
  sends them: the message fields (`scns`, `tms`, `xid`, `c_scn`, `c_idx`) and the `payload`
  list of elements whose row images are structs of the values' JSON types — every number a
  double (which is what a JSON number becomes there: the exact decimal is lost), text as
  strings, DATE/TIMESTAMP as their epoch text, RAW as its hex text. It converts nothing past
  the JSON type and carries nothing forward, so it does less than cdcfast (decimal128, timestamp[us],
  binary columns, the carried scn and time, normalized xids, positions).
- `json.loads` per line then `pyarrow.Table.from_pylist` with the same schema: the slow path
  most pipelines run today (and the same with `msgspec` when it is installed).
"""
from __future__ import annotations

import pyarrow as pa

from ..catalog import BOOL, DECIMAL, DECTEXT, FLOAT32, FLOAT64, INT8, INT16, INT32, INT64


def json_type(ctype) -> pa.DataType:
    """The Arrow type of one column's value as the writer sends it, no conversion past its
    JSON type."""
    if ctype.kind in (INT8, INT16, INT32, INT64, BOOL, DECIMAL, DECTEXT, FLOAT32, FLOAT64):
        return pa.float64()     # a JSON number (38-digit NUMBERs pass int64)
    return pa.string()          # text, hex, epoch text


def message_schema(table) -> pa.Schema:
    image = pa.struct([(c.name, json_type(c.type)) for c in table.columns])
    element = pa.struct([("op", pa.string()),
                         ("schema", pa.struct([("owner", pa.string()), ("table", pa.string())])),
                         ("rid", pa.string()), ("before", image), ("after", image)])
    return pa.schema([("scns", pa.string()), ("tms", pa.string()), ("scn", pa.int64()),
                      ("tm", pa.int64()), ("xid", pa.string()), ("c_scn", pa.int64()),
                      ("c_idx", pa.int64()), ("payload", pa.list_(element))])


# json.loads reads the numbers as the schema types them (38-digit NUMBERs as doubles, where
# a user's pipeline would put them; msgspec has no such option, so it is left out for olr)
LOADS_OPTIONS = {"parse_int": float}


def schema(case) -> pa.Schema:
    """The explicit schema the contenders read the case with (cdcfast/bench/core.py)."""
    return message_schema(case.catalog.get(case.table))
