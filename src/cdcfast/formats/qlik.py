"""`qlik`: Qlik Replicate JSON data messages, Kafka envelope or Pub/Sub form (SPEC §5.5).

Decisions SPEC leaves open are in docs/qlik.md. This module holds what every decoder of the
format shares: the `source` struct, the operation codes, and table *layouts* — a table's
columns in the order its masks count them, from the catalog, else from a metadata message of
the input, else (`derived`) from the data's keys as they are met, all strings. The reference
twin is cdcfast/reference/qlik.py.
"""
from __future__ import annotations

from dataclasses import dataclass

import pyarrow as pa

from ..catalog import STRING, ColumnType, Table
from .base import Format
from .debezium import split_points

SOURCE = pa.struct([
    pa.field("change_sequence", pa.string()), pa.field("stream_position", pa.string()),
    pa.field("change_mask", pa.string()), pa.field("column_mask", pa.string()),
    pa.field("transaction_last_event", pa.bool_()), pa.field("operation", pa.string()),
])

# headers.operation -> op (seed "Data message"); anything else is an error on the row
OPS = {"INSERT": "c", "UPDATE": "u", "DELETE": "d", "REFRESH": "r"}

# a column of a table known only from its data: Replicate's own name for text
DERIVED = ColumnType("STRING", "STRING", STRING, is_char=True)


@dataclass(frozen=True)
class LCol:
    """One column of a layout."""
    name: str
    type: ColumnType        # the Arrow type (`type.arrow_type`) and the name errors give
    nullable: bool
    lob: bool               # left out of changeMask by Qlik: null in `changed`


@dataclass
class Layout:
    """A table's columns for one call (docs/qlik.md, "Columns and their types"). A derived
    layout grows: a key first met in a later message becomes the next column."""
    name: str                   # output identity: catalog name, else the name as sent
    table: Table | None         # the catalog or metadata-message table, when there is one
    columns: list               # LCol, in mask bit order
    index: dict                 # column name -> position
    derived: bool = False

    @classmethod
    def of(cls, name, table, columns, derived=False):
        return cls(name, table, columns, {c.name: i for i, c in enumerate(columns)}, derived)

    def add(self, name: str) -> int:
        """Append a derived column; its position."""
        self.index[name] = len(self.columns)
        self.columns.append(LCol(name, DERIVED, True, False))
        return self.index[name]


def table_layout(name: str, table: Table) -> Layout:
    """The layout of a described table: its columns, types and LOB flags."""
    return Layout.of(name, table, [LCol(c.name, c.type, c.nullable, c.type.is_lob)
                                   for c in table.columns])


class Qlik(Format):
    name = "qlik"
    SUMMARY = "Qlik Replicate data messages, Kafka envelope or Pub/Sub form"
    DEFAULTS: dict = {}
    source_type = SOURCE

    def __init__(self, catalog, **options):
        super().__init__(catalog, **options)
        self._catalog_layouts = {}

    # -- the envelope ----------------------------------------------------------------------
    def columns(self, table, ncols=0):
        if table is None:
            return []
        return [(c.name, c.type.arrow_type) for c in table.columns]

    # -- layouts ---------------------------------------------------------------------------
    def catalog_layout(self, table: Table) -> Layout:
        lay = self._catalog_layouts.get(table.name)
        if lay is None:
            lay = self._catalog_layouts[table.name] = table_layout(table.name, table)
        return lay

    @staticmethod
    def derived_layout(name: str) -> Layout:
        """A fresh layout of a table known only from its data (one per call: it grows)."""
        return Layout.of(name, None, [], derived=True)

    # -- decoding --------------------------------------------------------------------------
    def batches(self, parts, want, images: bool, batch_rows: int, mode: str, stats: dict,
                native: bool):
        if native:
            from ._qlik_run import native_batches
            yield from native_batches(self, parts, want, images, batch_rows, mode, stats)
        else:
            from ..reference.qlik import reference_batches
            yield from reference_batches(self, parts, want, images, batch_rows, mode, stats)

    def table_of(self, batches: list) -> pa.Table:
        """One output's batches as a table: a derived layout may have grown between them, and
        an earlier batch then gets the later columns as nulls (docs/qlik.md)."""
        if all(b.schema == batches[0].schema for b in batches):
            return pa.Table.from_batches(batches)
        return pa.concat_tables([pa.Table.from_batches([b]) for b in batches],
                                promote_options="permissive")

    def split_points(self, data, step: int, native: bool) -> list:
        if len(data) <= step:
            return [0, len(data)]
        return split_points(data, step)
