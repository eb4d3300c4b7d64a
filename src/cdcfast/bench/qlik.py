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
    """The explicit schema the contenders read the case with (cdcfast/bench/core.py)."""
    return message_schema(case.catalog.get(case.table))


MASK_COLUMNS = 20


def sample_masks(count: int = 1_000_000, columns: int = MASK_COLUMNS, seed: int = 0):
    """changeMask texts as Replicate writes them for `columns` columns (whole bytes and one
    more, `0FFFFF` for an insert of 20): a third all set, the rest updates touching a few
    columns — as a pyarrow string array."""
    import random
    rng = random.Random(seed)
    width = 2 * (columns // 8 + 1)
    full = f"{(1 << columns) - 1:0{width}X}"
    texts = []
    for _ in range(count):
        if rng.random() < 1 / 3:
            texts.append(full)
        else:
            bits = 0
            for _ in range(rng.randint(1, 4)):
                bits |= 1 << rng.randrange(columns)
            texts.append(f"{bits:0{width}X}")
    return pa.array(texts, pa.string())


def mask_rate(repeat: int = 5) -> float:
    """Masks per second of the hex-mask kernel (cdcfast._masks.decode_masks: 1,000,000 masks
    of a 20-column table into a struct of bitmaps), best of `repeat`."""
    import time
    from .._masks import decode_masks
    masks = sample_masks()
    best = float("inf")
    for _ in range(repeat + 1):
        t = time.perf_counter()
        decode_masks(masks, MASK_COLUMNS)
        best = min(best, time.perf_counter() - t)
    return len(masks) / best
