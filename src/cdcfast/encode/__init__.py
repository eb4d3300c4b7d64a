"""Encoders and stream generators, one module per format (for tests, benchmarks and users).

Each format module offers ``encode(events, catalog=None, **options) -> bytes``,
``generate(rows, …) -> (data, catalog)`` and ``events(rows, …) -> (list of dicts, catalog)``;
this module finds it by the format's name: the registry's format declares it (``ENCODER``).
"""
from __future__ import annotations

import importlib


def _modules() -> dict:
    """format name -> its encoder module's name here (each format's ENCODER)."""
    from ..formats import get, names
    return {name: get(name).ENCODER for name in names()}


def _module(format):
    modules = _modules()
    try:
        name = modules[format]
    except KeyError:
        raise ValueError(f"no encoder for format {format!r}; "
                         f"known: {', '.join(sorted(modules))}") from None
    return importlib.import_module(f"{__name__}.{name}")


def encode(events, format, catalog=None, **options) -> bytes:
    """Write envelope-shaped events (dicts or a ``pyarrow.Table``) as ``format`` messages."""
    return _module(format).encode(events, catalog=catalog, **options)


def generate(format, rows, table_width=20, tables=1, seed=0, messages=False, **options):
    """A realistic, deterministic stream of ``rows`` records -> ``(data, catalog)``: ``bytes``,
    or a list of ``bytes`` messages with ``messages=True``."""
    return _module(format).generate(rows, table_width=table_width, tables=tables, seed=seed,
                                    messages=messages, **options)


def events(format, rows, table_width=20, tables=1, seed=0, **options):
    """The event dicts that ``generate`` with the same arguments encodes, and the catalog."""
    return _module(format).events(rows, table_width=table_width, tables=tables, seed=seed,
                                  **options)


__all__ = ["encode", "generate", "events"]
