"""The pure-Python reference decoders behind the same API as :mod:`cdcfast.api` (SPEC §1).

They are the slow per-record parsers cdcfast replaces, written straight from the format
documents (docs/*.md) for clarity rather than speed, and the oracle the native kernels are
tested against::

    import cdcfast.reference
    events = cdcfast.reference.decode(data, format="ibm-delimited", catalog=cat, table="A.B")
"""
from __future__ import annotations

from .. import api


class Decoder(api.Decoder):
    """:class:`cdcfast.Decoder` over the reference decoders (never the native kernels)."""
    _native = False


decode, decode_tables, headers, read_batches = api.functions(Decoder)


__all__ = ["Decoder", "decode", "decode_tables", "headers", "read_batches"]
