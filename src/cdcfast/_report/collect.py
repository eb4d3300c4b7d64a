"""One input read once: its tables' figures (stats.TableStats) and its decode statistics."""
from __future__ import annotations

import os

from .stats import TableStats

BATCH = 65536


class InputStats:
    """One input: a name, its size, each table's figures (key None: the records that name
    no table), and the decoder's statistics of the read."""

    def __init__(self, name: str, size: int | None, per_change: bool = True):
        self.name = name
        self.per_change = per_change
        self.size = size
        self.tables = {}
        self.stats = {}

    def table(self, key) -> TableStats:
        t = self.tables.get(key)
        if t is None:
            t = self.tables[key] = TableStats(key, self.per_change)
        return t

    def all_tables(self) -> TableStats:
        """Every table's figures together (and the unattributable records')."""
        out = TableStats("all tables", self.per_change)
        for t in self.tables.values():
            out = out.merged(t, "all tables")
        return out

    @property
    def events(self) -> int:
        return sum(t.events for k, t in self.tables.items() if k is not None)


def input_name(source, i: int) -> tuple[str, int | None]:
    """How an input is named on the page, and its size in bytes when it has one."""
    if isinstance(source, (str, os.PathLike)):
        return os.fspath(source), os.path.getsize(source)
    if isinstance(source, (bytes, bytearray, memoryview)):
        return f"input {i + 1} (bytes)", len(source)
    return f"input {i + 1} ({type(source).__name__})", None


def collect(decoder, source, i: int = 0, progress=None, batch_size: int = BATCH) -> InputStats:
    """Read one input with `decoder` (Decoder.read_tables: bounded memory) into its figures;
    `progress(events)` is called after each batch."""
    from ..formats import get
    name, size = input_name(source, i)
    out = InputStats(name, size, get(decoder.format).POSITION_PER_CHANGE)
    for key, batch in decoder.read_tables(source, batch_size=batch_size):
        out.table(key).add(batch)
        if progress is not None:
            progress(batch.num_rows)
    out.stats = dict(decoder.last_stats)
    return out
