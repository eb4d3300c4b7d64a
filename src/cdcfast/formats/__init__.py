"""The registry of formats: one module per format behind `base.Format`, found by name."""
from __future__ import annotations

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
