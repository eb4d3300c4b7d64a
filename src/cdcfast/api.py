"""The Python API of SPEC §1: Decoder, decode, decode_tables, headers, read_batches."""
from __future__ import annotations

import os

import pyarrow as pa

from . import formats
from .catalog import Catalog
from .formats.base import ALL, HEADERS, Want, check_mode, new_stats
from .sources import parts

DECODE_BATCH_ROWS = 1 << 20     # rows per record batch inside a decoded Table


class Decoder:
    """A decoder built once for a format, catalog, mode and format options, then reused.

    All schema work happens here, up front; ``config()`` describes it as JSON-serializable data
    so Spark executors can rebuild it with ``Decoder.from_config``.
    """
    _native = True      # the reference twin (cdcfast.reference.Decoder) sets False

    def __init__(self, format: str, catalog=None, mode: str = "PERMISSIVE", **options):
        self.format = format
        self.catalog = Catalog.coerce(catalog)
        self.mode = check_mode(mode)
        self._fmt = formats.get(format)(self.catalog, **options)
        self.last_stats = new_stats()
        if self._native:
            from . import _native_state
            self._native = _native_state.available

    # -- configuration ---------------------------------------------------------------------
    def config(self) -> dict:
        return {"format": self.format, "mode": self.mode, "options": self._fmt.config(),
                "catalog": self.catalog.to_dict() if self.catalog is not None else None}

    @classmethod
    def from_config(cls, config: dict) -> "Decoder":
        return cls(config["format"], catalog=config.get("catalog"),
                   mode=config.get("mode", "PERMISSIVE"), **(config.get("options") or {}))

    @property
    def options(self) -> dict:
        return self._fmt.config()

    def schema(self, table: str) -> pa.Schema:
        """The envelope schema of a catalog table (what decode(table=…) returns)."""
        t = self.catalog.get(table) if self.catalog is not None else None
        if t is None:
            raise ValueError(f"table {table!r} is not in the catalog: its schema depends on "
                             "the data; give a catalog")
        return self._fmt.schema(t)

    def headers_schema(self) -> pa.Schema:
        from .envelope import headers_schema
        return headers_schema(self._fmt.source_type)

    # -- decoding --------------------------------------------------------------------------
    def _collect(self, source, want: Want, images: bool, batch_rows=DECODE_BATCH_ROWS):
        stats = new_stats()
        seen = {}
        try:
            for key, batch in self._fmt.batches(parts(source), want, images, batch_rows,
                                                self.mode, stats, self._native):
                seen.setdefault(key, []).append(batch)
        finally:
            self.last_stats = stats
        return {k: self._fmt.finish_table(self._fmt.table_of(v)) for k, v in seen.items()}

    def decode(self, source, table: str | None = None) -> pa.Table:
        """Change events of one table (``"OWNER.TABLE"``) as a pyarrow.Table."""
        if table is None:
            got = self._collect(source, Want(self.catalog, ALL), True)
            named = sorted(k for k in got if k is not None)
            if len(named) > 1:
                raise ValueError(f"the input holds several tables ({', '.join(named)}): "
                                 "pass table=… or use decode_tables")
            if len(named) == 1:
                if None not in got:
                    return got[named[0]]
                table = named[0]    # unattributable records belong in this result too
            elif self.catalog is not None and len(self.catalog) == 1:
                table = self.catalog.tables[0].name
            else:
                return got.get(None) or self._fmt.schema(None).empty_table()
        want = Want(self.catalog, table)
        got = self._collect(source, want, True)
        t = self.catalog.get(table) if self.catalog is not None else None
        if t is None and not want.matched:
            raise ValueError(f"table {table!r} is neither in the catalog nor in the input")
        if want.requested in got:
            return got[want.requested]
        return self._fmt.schema(t).empty_table()

    def decode_tables(self, source) -> dict:
        """Every table of the input: ``{"OWNER.TABLE": pyarrow.Table}``, plus ``None`` for
        unattributable records (PERMISSIVE)."""
        return self._collect(source, Want(self.catalog, ALL), True)

    def headers(self, source, table: str | None = None) -> pa.Table:
        """The envelope without before/after/changed/present, for every record (or one
        table's), control events included."""
        want = Want(self.catalog, table, headers=True)
        got = self._collect(source, want, False)
        key = HEADERS if table is None else want.requested
        if table is not None and not want.matched \
                and (self.catalog is None or self.catalog.get(table) is None):
            raise ValueError(f"table {table!r} is neither in the catalog nor in the input")
        if key in got:
            return got[key]
        return self.headers_schema().empty_table()

    def read_tables(self, source, batch_size: int = 65536):
        """(``"OWNER.TABLE"`` or None, record batch) pairs of every table, decoded as they are
        read, in input order per table: decode_tables with memory bounded by the batch (a path
        is memory-mapped)."""
        if batch_size < 1:
            raise ValueError("batch_size must be at least 1")
        stats = new_stats()
        self.last_stats = stats
        for key, batch in self._fmt.batches(parts(source), Want(self.catalog, ALL), True,
                                            batch_size, self.mode, stats, self._native):
            if batch.num_rows:
                yield key, batch

    def read_batches(self, source, table: str | None = None, batch_size: int = 65536):
        """Record batches of ≤ batch_size rows of one table, decoded as they are read (a path
        is memory-mapped, so memory stays bounded by the batch, not the file)."""
        if batch_size < 1:
            raise ValueError("batch_size must be at least 1")
        if table is None:
            if self.catalog is None or len(self.catalog) != 1:
                raise ValueError("read_batches needs table=… (or a catalog of one table)")
            table = self.catalog.tables[0].name
        want = Want(self.catalog, table)
        stats = new_stats()
        self.last_stats = stats
        for key, batch in self._fmt.batches(parts(source), want, True, batch_size, self.mode,
                                            stats, self._native):
            if key == want.requested and batch.num_rows:
                yield batch
        if not want.matched and (self.catalog is None or self.catalog.get(table) is None):
            raise ValueError(f"table {table!r} is neither in the catalog nor in the input")


def functions(cls):
    """decode, decode_tables, headers and read_batches over a Decoder class (the native one
    here; cdcfast.reference builds the same four over its own)."""

    def decode(source, format: str, catalog=None, table: str | None = None,
               mode: str = "PERMISSIVE", **options) -> pa.Table:
        return cls(format, catalog, mode, **options).decode(source, table=table)

    def decode_tables(source, format: str, catalog=None, mode: str = "PERMISSIVE",
                      **options) -> dict:
        return cls(format, catalog, mode, **options).decode_tables(source)

    def headers(source, format: str, catalog=None, table: str | None = None,
                mode: str = "PERMISSIVE", **options) -> pa.Table:
        return cls(format, catalog, mode, **options).headers(source, table=table)

    def read_batches(source, format: str, catalog=None, table: str | None = None,
                     batch_size: int = 65536, mode: str = "PERMISSIVE", **options):
        if not isinstance(source, (str, os.PathLike, bytes, bytearray, memoryview, pa.Array,
                                   pa.ChunkedArray, list, tuple)):
            raise TypeError("read_batches reads a path, bytes or message array")
        return cls(format, catalog, mode, **options).read_batches(source, table, batch_size)

    return decode, decode_tables, headers, read_batches


decode, decode_tables, headers, read_batches = functions(Decoder)
