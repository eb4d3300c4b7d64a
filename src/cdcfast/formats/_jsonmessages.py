"""What the JSON formats (debezium, olr, qlik) share outside their kernels: a table's layout
(`LCol`, `Layout`), their catalog builders' messages as parsed documents (`catalog_from`,
behind Catalog.from_debezium / from_olr / from_qlik), a JSON integer, whether a text can name
a table or column, and where a stream of documents can be cut (`record_start`). How the
decoders themselves read JSON text is cdcfast.formats._jsontext."""
from __future__ import annotations

import json
import re
from collections.abc import Callable
from dataclasses import dataclass

from ..catalog import ColumnType, Frozen, Table


@dataclass(frozen=True)
class LCol(Frozen):
    """One column of a layout (a format adds what its values need: debezium.DbzCol,
    qlik.QlikCol)."""
    name: str
    type: ColumnType        # the Arrow type (`type.arrow_type`) and the name errors give
    nullable: bool


@dataclass
class Layout:
    """What a decoder needs for one table: its columns, fixed for one call at the table's first
    data message (docs/<format>.md, "Columns and their types") — or, for a table nothing
    describes (olr, qlik), typed by the data: a key first met in a later message becomes the
    next column (`grow` makes it)."""
    name: str                   # output identity: catalog name, else the name as sent
    table: Table | None         # the catalog (or metadata-message) table, when there is one
    columns: list               # LCol
    index: dict                 # column name -> position
    grow: Callable[[str], LCol] | None = None   # typed by the data: the column of a new key

    @classmethod
    def of(cls, name, table, columns, grow=None):
        return cls(name, table, list(columns), {c.name: i for i, c in enumerate(columns)},
                   grow)

    @property
    def derived(self) -> bool:
        """The columns are the keys met in the data, in order."""
        return self.grow is not None

    def add(self, name: str) -> int:
        """Append the column of a key met in the data; its position."""
        self.index[name] = len(self.columns)
        self.columns.append(self.grow(name))
        return self.index[name]


def documents(messages):
    """(where, parsed document) of messages given as a stream (bytes/str), one dict, or an
    iterable of messages."""
    if isinstance(messages, (bytes, bytearray, memoryview, str)):
        return stream(messages)
    if isinstance(messages, dict):
        return [("message #0", messages)]
    return items(messages)


def items(messages):
    for i, m in enumerate(messages):
        where = f"message #{i}"
        if m is None or isinstance(m, dict):
            yield where, m
            continue
        if isinstance(m, (bytes, bytearray, memoryview)):
            try:
                m = bytes(m).decode("utf-8")
            except UnicodeDecodeError as e:
                raise ValueError(f"{where} is not UTF-8 JSON: {e}") from None
        if not isinstance(m, str):
            raise TypeError(f"{where} is a {type(m).__name__}, not bytes, str or dict")
        if not m.strip():
            continue
        try:
            yield where, json.loads(m)
        except json.JSONDecodeError as e:
            raise ValueError(f"{where} is not valid JSON: {e}") from None


def stream(data):
    """JSON documents separated by whitespace (NDJSON or pretty-printed) in one text."""
    if not isinstance(data, str):
        try:
            data = bytes(data).decode("utf-8")
        except UnicodeDecodeError as e:
            raise ValueError(f"the message stream is not UTF-8 JSON: {e}") from None
    decoder = json.JSONDecoder()
    ws = re.compile(r"\s*")
    pos, n, k = 0, len(data), 0
    last, offset = 0, 0          # byte offset of `pos`, counted incrementally (UTF-8)
    while True:
        pos = ws.match(data, pos).end()
        if pos >= n:
            return
        offset += len(data[last:pos].encode("utf-8"))
        last = pos
        where = f"document #{k} (byte {offset} of the stream)"
        try:
            doc, end = decoder.raw_decode(data, pos)
        except json.JSONDecodeError as e:
            raise ValueError(f"{where} is not valid JSON: {e}") from None
        yield where, doc
        pos, k = end, k + 1


def int_or_none(v):
    """A JSON integer (or integer text); anything else (null, bool, float, junk) → None."""
    if isinstance(v, bool):
        return None
    if isinstance(v, int):
        return v
    if isinstance(v, str) and re.fullmatch(r"\s*-?\d+\s*", v):
        return int(v)
    return None


def utf8_text(text: str) -> bool:
    """Text without a lone surrogate (from a JSON \\u escape): it can name a table or column."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


# -- cutting a stream of documents (Spark splits big files) ----------------------------------
def find(data, sub: bytes, start: int) -> int:
    """`data.find(sub, start)` for bytes, mmap and memoryview alike (a memoryview is searched
    a window at a time)."""
    if hasattr(data, "find"):
        return data.find(sub, start)
    mv = memoryview(data)
    n = len(mv)
    window = 1 << 20
    while start < n:
        stop = min(n, start + window + len(sub) - 1)
        at = bytes(mv[start:stop]).find(sub)
        if at >= 0:
            return start + at
        start += window
    return -1


def record_start(data, offset: int) -> int:
    """The first place at or after `offset` where a stream can be cut: a line start that
    opens an object (a newline then `{`), which never falls inside a document
    (docs/debezium.md, "Inputs and framing"); len(data) when there is none, 0 for 0."""
    if offset <= 0:
        return 0
    at = find(data, b"\n{", offset - 1)
    return len(data) if at < 0 else at + 1

