"""The pure-Python reference decoders behind the same API as :mod:`cdcfast.api` (SPEC §1).

They are the slow per-record parsers cdcfast replaces, written straight from the format
documents (docs/*.md) for clarity rather than speed, and the oracle the native kernels are
tested against::

    import cdcfast.reference
    events = cdcfast.reference.decode(data, format="ibm-delimited", catalog=cat, table="A.B")
"""
from __future__ import annotations

import os

import pyarrow as pa

from .. import api


class Decoder(api.Decoder):
    """:class:`cdcfast.Decoder` over the reference decoders (never the native kernels)."""
    _native = False


def decode(source, format: str, catalog=None, table: str | None = None,
           mode: str = "PERMISSIVE", **options) -> pa.Table:
    return Decoder(format, catalog, mode, **options).decode(source, table=table)


def decode_tables(source, format: str, catalog=None, mode: str = "PERMISSIVE",
                  **options) -> dict:
    return Decoder(format, catalog, mode, **options).decode_tables(source)


def headers(source, format: str, catalog=None, table: str | None = None,
            mode: str = "PERMISSIVE", **options) -> pa.Table:
    return Decoder(format, catalog, mode, **options).headers(source, table=table)


def read_batches(source, format: str, catalog=None, table: str | None = None,
                 batch_size: int = 65536, mode: str = "PERMISSIVE", **options):
    if not isinstance(source, (str, os.PathLike, bytes, bytearray, memoryview, pa.Array,
                               pa.ChunkedArray, list, tuple)):
        raise TypeError("read_batches reads a path, bytes or message array")
    return Decoder(format, catalog, mode, **options).read_batches(source, table, batch_size)


__all__ = ["Decoder", "decode", "decode_tables", "headers", "read_batches"]
