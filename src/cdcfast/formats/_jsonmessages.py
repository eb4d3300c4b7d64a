"""What the JSON formats' catalog builders share (`catalog_from` of debezium, olr and qlik,
behind Catalog.from_debezium / from_olr / from_qlik): their messages as parsed documents, a
JSON integer, and whether a text can name a table or column."""
from __future__ import annotations

import json
import re


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
