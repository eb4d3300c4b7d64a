"""The general-purpose contenders of `cdcfast bench --format qlik` (SPEC §8): what a user reads
Qlik Replicate's Kafka JSON with today, over the very bytes cdcfast decodes.

- `pyarrow.json.read_json`, one thread, with an explicit schema of the data messages as
  Replicate writes them: the envelope (`magic`, `type`, `messageSchemaId`), and its `message`
  with `data` and `beforeData` as structs of strings (Replicate sends every value as a JSON
  string) and the `headers` fields. Metadata messages read as rows whose message fields are
  null. It converts nothing past the JSON type — values stay strings, masks stay hex text —
  so it does less than cdcfast (typed columns, `changed`/`present` from the masks, DELETE's
  `data` as the before image, the table from the metadata message).
- `json.loads` per line then `pyarrow.Table.from_pylist` with the same schema: the slow path
  most pipelines run today (and the same with `msgspec` when it is installed).
"""
from __future__ import annotations

import pyarrow as pa

_HEADERS = pa.struct([(n, pa.string()) for n in (
    "operation", "changeSequence", "timestamp", "streamPosition", "transactionId",
    "changeMask", "columnMask")] + [("transactionEventCounter", pa.int64()),
                                    ("transactionLastEvent", pa.bool_())])


def message_schema(table) -> pa.Schema:
    image = pa.struct([(c.name, pa.string()) for c in table.columns])
    message = pa.struct([("data", image), ("beforeData", image), ("headers", _HEADERS)])
    return pa.schema([("magic", pa.string()), ("type", pa.string()),
                      ("messageSchemaId", pa.string()), ("message", message)])


def schema(case) -> pa.Schema:
    """The explicit schema the contenders read the case with (cdcfast/bench.py)."""
    return message_schema(case.catalog.get(case.table))
