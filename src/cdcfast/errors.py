"""The one error type of cdcfast, and the one way its text is written.

Native kernels never raise from inside a hot loop: they carry an error *code* with the
message index, byte offset and field out of the loop (as simdjson does), and this module turns
that into text. The reference decoders use the same formatter, so native and reference agree on
every `_error` string, byte for byte.
"""
from __future__ import annotations


class DecodeError(ValueError):
    """A record that could not be decoded.

    Attributes: ``message_index`` (0-based), ``byte_offset`` (within that message), ``field``
    (the vendor's name for header fields, ``after.SALARY`` for column values) and ``reason``.
    ``str(err)`` is the same text that PERMISSIVE mode stores in ``_error``.
    """

    def __init__(self, reason: str, message_index: int | None = None,
                 byte_offset: int | None = None, field: str | None = None):
        self.reason = reason
        self.message_index = message_index
        self.byte_offset = byte_offset
        self.field = field
        super().__init__(error_text(field, reason, message_index, byte_offset))


# where error_text says an error is, as a regular expression (Python's and RE2's alike): a
# report reads the message index and byte offset back from `_error`
PLACE = r" \(message (\d+), byte (\d+)\)$"


def error_text(field, reason, message_index, byte_offset) -> str:
    """``"after.SALARY: 'abc' is not DECIMAL(9,2) (message 3, byte 212)"``"""
    head = f"{field}: {reason}" if field else reason
    if message_index is None:
        return head
    return f"{head} (message {message_index}, byte {byte_offset})"


def show_value(raw: bytes, encoding: str = "utf-8", limit: int = 40) -> str:
    """How a bad value is quoted inside an error text: decoded, repr-quoted, cut at ``limit``."""
    text = raw.decode(encoding, errors="replace")
    if len(text) > limit:
        return repr(text[:limit]) + "…"
    return repr(text)


def printable(name: str) -> str:
    """A name as error texts show it: control characters (a newline in a quoted table name)
    escaped, so that an error is always one line."""
    return "".join(c if c.isprintable() else repr(c)[1:-1] for c in name)
