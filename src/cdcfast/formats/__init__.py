"""The registry of formats: one module per format behind `base.Format`, found by name.

The rest of the package reaches a format only through here, by name (`get`), and every list
of formats derives from the registry and the formats' declarations (`base.Format`); this
module imports no format (the classes are imported when first asked for).
"""
from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .base import Format

_REGISTRY: dict[str, str] = {
    "ibm-delimited": "cdcfast.formats.ibm_delimited:IbmDelimited",
    "lldf": "cdcfast.formats.lldf:Lldf",
    "debezium": "cdcfast.formats.debezium:Debezium",
    "olr": "cdcfast.formats.olr:Olr",
    "qlik": "cdcfast.formats.qlik:Qlik",
}


def names() -> list[str]:
    return list(_REGISTRY)


def get(name: str) -> type[Format]:
    """The Format class registered under `name` (ValueError naming the known ones)."""
    try:
        target = _REGISTRY[name]
    except KeyError:
        raise ValueError(f"unknown format {name!r} (known: {', '.join(_REGISTRY)})") from None
    module, cls = target.split(":")
    return getattr(__import__(module, fromlist=[cls]), cls)


def native_modules() -> tuple[str, ...]:
    """Every extension module (cdcfast.<name>) a format's native decoder runs: the union of
    the formats' NATIVE, in registry order."""
    return tuple(dict.fromkeys(m for name in _REGISTRY for m in get(name).NATIVE))
