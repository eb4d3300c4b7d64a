"""`cdcfast report`: a change stream on one HTML page (docs/report.md).

Which tables, how many inserts, updates and deletes over what time, how big the
transactions are, how far the capture lags the commit, whether the log order is clean, what
is broken and where, and each column's nulls and changes — per input and per table. Read in
one pass over the decoded batches (`Decoder.read_tables`: bounded memory), figured with
pyarrow compute, drawn as inline SVG: the page opens offline and prints.
"""
from __future__ import annotations

import os

CONTEXT = 160           # bytes shown either side of the byte an error names (text formats)


def report(*sources, format: str, catalog=None, mode: str = "PERMISSIVE",
           title: str | None = None, progress: bool = False, threads: int | None = None,
           batch_size: int = 65536, **options) -> str:
    """The report of one or more inputs (each anything `decode` reads: a path, bytes, a
    list or Arrow array of messages) as the text of one self-contained HTML page. Memory
    is bounded by `batch_size` rows a table (Decoder.read_tables), not by the input."""
    from ..api import Decoder
    from ..formats import get
    from .collect import collect
    from .page import Page
    if not sources:
        raise TypeError("report needs at least one input")
    need_matplotlib()
    dec = Decoder(format, catalog=catalog, mode=mode, threads=threads, **options)
    text = get(format).TEXT
    bar = None
    if progress:
        from tqdm import tqdm
        bar = tqdm(unit=" events", unit_scale=True, desc="reading", leave=False)
    try:
        inputs = [collect(dec, s, i, bar.update if bar is not None else None, batch_size)
                  for i, s in enumerate(sources)]
    finally:
        if bar is not None:
            bar.close()

    def windows(i, message, byte):
        return window(sources[i], message, byte, text)
    return Page(inputs, format, text, windows, title).html()


def need_matplotlib() -> None:
    """The charts are matplotlib's: say how to get it when it is missing."""
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        raise ImportError("cdcfast draws its charts with matplotlib: pip install "
                          "'cdcfast[report]' (or matplotlib)") from None


def _message(source, message: int):
    """Message `message` of a source (a stream source is one message), or None."""
    import pyarrow as pa
    if isinstance(source, (str, os.PathLike)):
        return source if message == 0 else None
    if isinstance(source, (bytes, bytearray, memoryview, pa.Buffer)):
        return memoryview(source) if message == 0 else None
    if isinstance(source, (list, tuple)):
        m = source[message] if 0 <= message < len(source) else None
        return m.encode() if isinstance(m, str) else m
    if isinstance(source, (pa.Array, pa.ChunkedArray)):
        if not 0 <= message < len(source):
            return None
        v = source[message].as_py()
        return v.encode() if isinstance(v, str) else v
    return None


def window(source, message, byte, text: bool):
    """(bytes, offset of the first, index of the byte named) around `byte` of `message`:
    for text, the line that holds it (at most CONTEXT bytes either side); for binary, from
    the 16-byte line before it to 48 bytes on. None when the source cannot give it."""
    if message is None or byte is None or byte < 0:
        return None
    m = _message(source, message)
    if m is None:
        return None
    before, after = (CONTEXT, CONTEXT) if text else (16 + byte % 16, 48)
    lo = max(0, byte - before)
    if isinstance(m, (str, os.PathLike)):
        with open(m, "rb") as f:
            f.seek(lo)
            data = f.read(byte - lo + after)
    else:
        data = bytes(memoryview(m)[lo:byte + after])
    if byte - lo >= len(data):
        return None
    mark = byte - lo
    if text:                                    # the line around the byte
        cut = data.rfind(b"\n", 0, mark)
        if cut >= 0:
            data, mark, lo = data[cut + 1:], mark - cut - 1, lo + cut + 1
        end = data.find(b"\n", mark + 1)
        if end >= 0:
            data = data[:end]
    return data, lo, mark


__all__ = ["report"]
