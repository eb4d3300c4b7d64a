"""Table names as file names: the input never chooses a path.

A table name comes from the data (a Qlik message may say ``"table": "../PWNED"``), so every
writer of cdcfast turns it into a file name only through `safe_name`, which is reversible
(`table_name` gives the table back) and never yields a path separator, ``.`` or ``..``, a
hidden name (leading ``.``) or a name that starts with ``_`` (kept for our own files, such as
``_corrupt``, and which Spark and Hadoop treat as hidden):

- every byte of the name's UTF-8 outside ``[A-Za-z0-9_.-]`` is written ``%XX`` (upper-case
  hex), and so are a leading ``.`` and a leading ``_``; ``%`` itself is ``%25``;
- the empty name is ``%`` alone (no encoded name is, since ``%`` always has two digits after it);
- a name whose encoding is longer than `MAX_ENCODED` characters is cut there (never inside a
  ``%XX``) and followed by ``~`` and 16 hex digits of its SHA-256: ``~`` is never part of an
  encoding, so such a name cannot meet a short one; `table_name` cannot restore it and says so
  (the Parquet files cdcfast writes also hold the full name in their metadata, ``cdcfast.table``).
"""
from __future__ import annotations

import hashlib

MAX_ENCODED = 200       # characters, so that "<name>.parquet" and temporary suffixes fit 255
_PLAIN = frozenset(b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_.-")
_HEX = "0123456789ABCDEF"


def safe_name(table: str) -> str:
    """The file name (without extension) under which `table`'s output is written."""
    raw = table.encode("utf-8", "surrogatepass")
    if not raw:
        return "%"
    parts = []
    for i, b in enumerate(raw):
        if b in _PLAIN and not (i == 0 and b in b"._"):
            parts.append(chr(b))
        else:
            parts.append("%" + _HEX[b >> 4] + _HEX[b & 15])
    if sum(map(len, parts)) <= MAX_ENCODED:
        return "".join(parts)
    head, n = [], 0
    for p in parts:
        if n + len(p) > MAX_ENCODED - 17:
            break
        head.append(p)
        n += len(p)
    return "".join(head) + "~" + hashlib.sha256(raw).hexdigest()[:16]


def table_name(name: str) -> str:
    """The table name `safe_name` encoded into `name` (ValueError for a name it did not
    write, or one it shortened)."""
    if name == "%":
        return ""
    if "~" in name:
        raise ValueError(f"{name!r} is a shortened table name: the full one is in the file's "
                         "metadata (cdcfast.table)")
    out = bytearray()
    i = 0
    while i < len(name):
        c = name[i]
        if c == "%":
            digits = name[i + 1:i + 3]
            if len(digits) != 2 or any(d not in _HEX for d in digits):
                raise ValueError(f"{name!r} is not a name safe_name wrote")
            out.append(int(digits, 16))
            i += 3
        elif ord(c) < 128 and ord(c) in _PLAIN:
            out.append(ord(c))
            i += 1
        else:
            raise ValueError(f"{name!r} is not a name safe_name wrote")
    return out.decode("utf-8", "surrogatepass")
