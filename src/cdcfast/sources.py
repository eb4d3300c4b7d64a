"""Every accepted `source` (SPEC §1) as parts a kernel can scan without copying: one contiguous
buffer, the messages' start offsets into it, and which messages are tombstones."""
from __future__ import annotations

import mmap
import os
from dataclasses import dataclass

import numpy as np
import pyarrow as pa


@dataclass
class Part:
    data: object            # anything with the buffer protocol: bytes, pyarrow.Buffer, mmap
    offsets: np.ndarray     # int64, n + 1 message boundaries into data
    valid: np.ndarray | None  # uint8 per message (0: tombstone), or None when all are present
    base: int = 0           # message index of the part's first message
    # a piece of one message (a stream cut at a record start to decode on several threads):
    # how many bytes of that message lie before the piece (byte offsets count from the
    # message's start), and what the format decided on the whole message (lldf: its framing)
    head: int = 0
    whole: object = None

    @property
    def count(self) -> int:
        return len(self.offsets) - 1

    def message_start(self, i: int) -> int:
        """Where message i (0-based within the part) begins in data: the byte a byte offset
        inside it counts from (before the part, for a piece cut out of a message)."""
        return int(self.offsets[i]) - (self.head if i == 0 else 0)

    def message(self, i: int) -> bytes:
        """Message i of this part (0-based within the part), as bytes (error paths only)."""
        return bytes(memoryview(self.data)[self.offsets[i]:self.offsets[i + 1]])


_EMPTY = np.zeros(1, dtype=np.int64)


def _bytes_view(buf):
    """A flat unsigned-byte view (pyarrow buffers export signed chars)."""
    if isinstance(buf, bytes):
        return buf
    m = memoryview(buf)
    return m if m.format == "B" and m.ndim == 1 else m.cast("B")


def _stream(buf) -> Part:
    buf = _bytes_view(buf)
    return Part(buf, np.array([0, len(buf)], dtype=np.int64), None, 0)


def map_file(path) -> object:
    """A read-only memory map of a file (an empty file gives b"")."""
    with open(os.fspath(path), "rb") as f:
        size = os.fstat(f.fileno()).st_size
        if size == 0:
            return b""
        return mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ)


RELEASE_STEP = 64 << 20     # a mapped file's pages are given back in steps of this size


def release(data, upto: int, done: int) -> int:
    """Give back the pages of a memory-mapped file below `upto` (a decoder is past them; what
    it returned are copies), from `done` on; returns the new `done`. Pages of a mapped file
    count in the process's resident memory once touched, so without this reading a 2 GB file
    batch by batch would grow RSS by 2 GB. Anything else than an mmap is left alone."""
    if isinstance(data, memoryview):
        data = data.obj
    if not isinstance(data, mmap.mmap) or upto - done < RELEASE_STEP:
        return done
    upto -= upto % mmap.PAGESIZE
    done += -done % mmap.PAGESIZE       # a piece's first page may be its neighbour's last
    if upto <= done:
        return done
    try:
        data.madvise(mmap.MADV_DONTNEED, done, upto - done)
    except (AttributeError, OSError, ValueError):   # not on this platform: keep the pages
        return upto
    return upto


def _array_part(arr: pa.Array, base: int) -> Part:
    t = arr.type
    if pa.types.is_binary(t) or pa.types.is_string(t):
        odt = np.int32
    elif pa.types.is_large_binary(t) or pa.types.is_large_string(t):
        odt = np.int64
    else:
        raise TypeError(f"a message array must be binary or string, not {t}")
    n = len(arr)
    bufs = arr.buffers()
    if n == 0:
        return Part(b"", _EMPTY, None, base)
    offsets = np.frombuffer(bufs[1], dtype=odt)[arr.offset:arr.offset + n + 1].astype(np.int64)
    data = _bytes_view(bufs[2]) if bufs[2] is not None else b""
    valid = None
    if arr.null_count:
        valid = np.asarray(arr.is_valid()).astype(np.uint8)
    return Part(data, offsets, valid, base)


def parts(source):
    """Yield the Parts of a source; a stream source (bytes, path) is one message."""
    if isinstance(source, (bytes, bytearray)):
        yield _stream(bytes(source) if isinstance(source, bytearray) else source)
    elif isinstance(source, memoryview):
        yield _stream(source)
    elif isinstance(source, pa.Buffer):
        yield _stream(source)
    elif isinstance(source, (str, os.PathLike)):
        yield _stream(map_file(source))
    elif isinstance(source, pa.ChunkedArray):
        base = 0
        for chunk in source.chunks:
            yield _array_part(chunk, base)
            base += len(chunk)
    elif isinstance(source, pa.Array):
        yield _array_part(source, 0)
    elif isinstance(source, (list, tuple)):
        if not all(m is None or isinstance(m, (bytes, bytearray, memoryview, str))
                   for m in source):
            raise TypeError("a list source holds bytes or str messages (None for tombstones)")
        # pyarrow packs the messages into one buffer in C++ (str as UTF-8)
        yield _array_part(pa.array([bytes(m) if isinstance(m, (bytearray, memoryview)) else m
                                    for m in source], type=pa.binary()), 0)
    else:
        raise TypeError(f"unsupported source type {type(source).__name__}: use bytes, a path, "
                        "a pyarrow binary/string array or a list of messages")
