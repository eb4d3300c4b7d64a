"""cdcfast: change-data-capture messages into Apache Arrow, natively.

    import cdcfast
    events = cdcfast.decode(data, format="ibm-delimited", catalog="catalog.json",
                            table="TEST.EMPLOYEE")
"""
from . import _native_state
from .api import Decoder, decode, decode_tables, headers, read_batches
from .apply import Applier, apply_changes, net_changes
from .catalog import Catalog
from .errors import DecodeError
from .formats import names as formats
from ._version import __version__

__all__ = ["Applier", "Catalog", "DecodeError", "Decoder", "apply_changes", "decode",
           "decode_tables", "formats", "headers", "native_available", "net_changes",
           "read_batches", "reference", "encode", "release_memory", "report"]


def native_available() -> bool:
    """True when the compiled kernels are in use (False: the reference fallback)."""
    return _native_state.available


def release_memory() -> None:
    """Free the output buffers the kernels keep for the next batch (see native/cdcfast/
    _arrow.pyx; at most CDCFAST_BUFFER_CACHE_MB, default 256 MiB, are kept)."""
    if _native_state.available:
        from . import _arrow
        _arrow.release_memory()


def __getattr__(name):
    # cdcfast.reference, cdcfast.encode and cdcfast.delta load on first use (deltalake:
    # when cdcfast.delta is first called), cdcfast.report likewise (matplotlib)
    if name == "report":
        from ._report import report
        return report
    if name in ("reference", "encode", "delta"):
        import importlib
        return importlib.import_module(f".{name}", __name__)
    raise AttributeError(name)
