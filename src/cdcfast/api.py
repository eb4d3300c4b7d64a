"""The Python API of SPEC §1: Decoder, decode, decode_tables, headers, read_batches."""
from __future__ import annotations

import bisect
import collections
import json
import os
import threading

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from . import formats
from .apply import KEY, TABLE
from .catalog import Catalog
from .envelope import Projection
from .pieces import check_threads, cores
from .formats.base import ALL, HEADERS, MESSAGE, Want, check_mode, new_stats
from .sources import map_file, parts

DECODE_BATCH_ROWS = 1 << 20     # rows per record batch inside a decoded Table


class Decoder:
    """A decoder built once for a format, catalog, mode and format options, then reused.

    All schema work happens here, up front; ``config()`` describes it as JSON-serializable data
    so Spark executors can rebuild it with ``Decoder.from_config``.
    """
    _native = True      # the reference twin (cdcfast.reference.Decoder) sets False

    def __init__(self, format: str, catalog=None, mode: str = "PERMISSIVE", columns=None,
                 flags: str = "struct", threads: int | None = None, **options):
        self.format = format
        self.catalog = Catalog.coerce(catalog)
        self.mode = check_mode(mode)
        self._fmt = formats.get(format)(self.catalog, **options)
        # the default projection of every call (SPEC §1 `columns=`), checked here
        self.columns = _names(columns)
        # `changed` / `present` as structs of booleans or as bitmasks (docs/contract.md §1.7)
        self.flags = flags
        Projection.of(self.columns, flags=flags)
        # the threads of every call (None: every core the process may use; 1: the calling
        # thread only): docs/performance.md, "Threads"
        self.threads = check_threads(threads)
        self._local = threading.local()
        self.last_stats = new_stats()
        self._starts = {}       # file -> record starts found by read_range (sorted)
        if self._native:
            from . import _native_state
            self._native = _native_state.available

    def __getstate__(self):
        state = dict(self.__dict__)
        state.pop("_local", None)       # per thread: not carried by a copy
        return state

    def __setstate__(self, state):
        self.__dict__.update(state)
        self._local = threading.local()

    @property
    def last_stats(self) -> dict:
        """The statistics of this thread's last call (a Decoder may serve several threads at
        once: each sees its own)."""
        return self._local.__dict__.get("stats") or new_stats()

    @last_stats.setter
    def last_stats(self, stats: dict) -> None:
        self._local.stats = stats

    def _threads(self, threads) -> int:
        """The threads of one call: its own `threads`, else the Decoder's; None: the cores."""
        t = check_threads(threads) if threads is not None else self.threads
        return cores() if t is None else t

    # -- configuration ---------------------------------------------------------------------
    def config(self) -> dict:
        return {"format": self.format, "mode": self.mode, "options": self._fmt.config(),
                "catalog": self.catalog.to_dict() if self.catalog is not None else None,
                "columns": self.columns, "flags": self.flags, "threads": self.threads}

    @classmethod
    def from_config(cls, config: dict) -> "Decoder":
        return cls(config["format"], catalog=config.get("catalog"),
                   mode=config.get("mode", "PERMISSIVE"), columns=config.get("columns"),
                   flags=config.get("flags", "struct"), threads=config.get("threads"),
                   **(config.get("options") or {}))

    def _projection(self, columns, headers: bool = False):
        """The Projection of one call: its own `columns`, else the Decoder's (None: all)."""
        return Projection.of(_names(columns) if columns is not None else self.columns,
                             headers, self.flags)

    @property
    def options(self) -> dict:
        return self._fmt.config()

    def schema(self, table: str, columns=None, strict: bool = True) -> pa.Schema:
        """The envelope schema of a catalog table (what decode(table=…) returns), projected
        to `columns` (default: the Decoder's). Not `strict`: a `after.COL`-style name the
        table lacks is left out (decode_tables) rather than a ValueError."""
        t = self.catalog.get(table) if self.catalog is not None else None
        if t is None:
            raise ValueError(f"table {table!r} is not in the catalog: its schema depends on "
                             "the data; give a catalog")
        return self._keyed(t.name, _project(self._projection(columns), self._fmt.schema(t),
                                            t.name if strict else None))

    def _keyed(self, name, obj):
        """`obj` (a Table, RecordBatch or Schema) with the catalog table's key and name in its
        schema metadata (`cdcfast.key`, a JSON list, and `cdcfast.table`: what apply reads,
        SPEC §9) when `name` is a catalog table that names a key."""
        t = self.catalog.get(name) if self.catalog is not None and isinstance(name, str) \
            else None
        if t is None or not t.key:
            return obj
        schema = obj if isinstance(obj, pa.Schema) else obj.schema
        meta = dict(schema.metadata or {})
        meta[KEY] = json.dumps(list(t.key)).encode()
        meta[TABLE] = t.name.encode()
        if isinstance(obj, pa.Schema):
            return obj.with_metadata(meta)
        return obj.replace_schema_metadata(meta)

    def unattributable_schema(self, columns=None) -> pa.Schema:
        """The schema of the records no table can be named for (decode_tables' key None)."""
        return _project(self._projection(columns), self._fmt.schema(None), None)

    def headers_schema(self, columns=None) -> pa.Schema:
        from .envelope import headers_schema
        return _project(self._projection(columns, headers=True),
                        headers_schema(self._fmt.source_type), None)

    # -- decoding --------------------------------------------------------------------------
    def _collect(self, source, want: Want, images: bool, batch_rows=DECODE_BATCH_ROWS,
                 threads=None):
        stats = new_stats()
        seen = {}
        try:
            for key, batch in self._fmt.batches(parts(source), want, images, batch_rows,
                                                self.mode, stats, self._native,
                                                self._threads(threads)):
                seen.setdefault(key, []).append(batch)
        finally:
            self.last_stats = stats
        got = {k: self._fmt.finish_table(self._fmt.table_of(v)) for k, v in seen.items()}
        proj = want.projection
        if proj is None:
            return got
        if want.table is ALL and proj.narrow:
            # decode_tables: each table narrowed to the named columns it has; a name that
            # no table has is unknown
            have = set()
            for t in got.values():
                have.update(_image_columns(t.schema, proj))
            tables = self.catalog.tables if self.catalog is not None else []
            for t in tables:
                have.update(c.name for c in t.columns)
            proj.check(sorted(have), "any table of the input or the catalog")
            return {k: proj.apply(t, strict=False) for k, t in got.items()}
        return {k: proj.apply(t, strict=k is not None and k != HEADERS)
                for k, t in got.items()}

    def _want(self, table, columns, headers: bool = False, messages: bool = False) -> Want:
        """The Want of one call, with its projection (`want.projection`, checked against
        the requested catalog table up front)."""
        want = Want(self.catalog, table, headers=headers, messages=messages)
        want.projection = proj = self._projection(columns, headers)
        want.flags = proj is None or proj.wants_flags
        want.before = proj is None or proj.reads_before
        t = want.requested_table()
        if proj is not None and t is not None and not headers:
            proj.check([c.name for c in t.columns], t.name)
        return want

    def decode(self, source, table: str | None = None, columns=None,
               threads: int | None = None) -> pa.Table:
        """Change events of one table (``"OWNER.TABLE"``) as a pyarrow.Table (`columns`: a
        projection, SPEC §1; `threads`: how many decode at once; defaults the Decoder's)."""
        if table is None:
            got = self._collect(source, self._want(ALL, columns), True, threads=threads)
            named = sorted(k for k in got if k is not None)
            if len(named) > 1:
                raise ValueError(f"the input holds several tables ({', '.join(named)}): "
                                 "pass table=… or use decode_tables")
            if len(named) == 1:
                if None not in got:
                    return self._keyed(named[0], got[named[0]])
                table = named[0]    # unattributable records belong in this result too
            elif self.catalog is not None and len(self.catalog) == 1:
                table = self.catalog.tables[0].name
            else:
                return got.get(None) or self.unattributable_schema(columns).empty_table()
        want = self._want(table, columns)
        got = self._collect(source, want, True, threads=threads)
        t = self.catalog.get(table) if self.catalog is not None else None
        if t is None and not want.matched:
            raise ValueError(f"table {table!r} is neither in the catalog nor in the input")
        if want.requested in got:
            return self._keyed(want.requested, got[want.requested])
        return self._keyed(table, _project(want.projection, self._fmt.schema(t),
                                           table).empty_table())

    def decode_tables(self, source, columns=None, threads: int | None = None) -> dict:
        """Every table of the input: ``{"OWNER.TABLE": pyarrow.Table}``, plus ``None`` for
        unattributable records (PERMISSIVE)."""
        got = self._collect(source, self._want(ALL, columns), True, threads=threads)
        return {k: self._keyed(k, v) for k, v in got.items()}

    def headers(self, source, table: str | None = None, columns=None,
                threads: int | None = None) -> pa.Table:
        """The envelope without before/after/changed/present, for every record (or one
        table's), control events included."""
        want = self._want(table, columns, headers=True)
        got = self._collect(source, want, False, threads=threads)
        key = HEADERS if table is None else want.requested
        if table is not None and not want.matched \
                and (self.catalog is None or self.catalog.get(table) is None):
            raise ValueError(f"table {table!r} is neither in the catalog nor in the input")
        if key in got:
            return got[key]
        return self.headers_schema(columns).empty_table()

    def read_tables(self, source, batch_size: int = 65536, columns=None,
                    threads: int | None = None):
        """(``"OWNER.TABLE"`` or None, record batch) pairs of every table, decoded as they are
        read, in input order per table: decode_tables with memory bounded by the batch (a path
        is memory-mapped)."""
        if batch_size < 1:
            raise ValueError("batch_size must be at least 1")
        stats = new_stats()
        self.last_stats = stats
        want = self._want(ALL, columns)
        proj = want.projection
        have = set()            # the table columns met, for a name no table has
        for key, batch in self._fmt.batches(parts(source), want, True, batch_size,
                                            self.mode, stats, self._native,
                                            self._fmt.streaming_threads(
                                                self._threads(threads))):
            if proj is not None and proj.narrow:
                have.update(_image_columns(batch.schema, proj))
            if batch.num_rows:
                yield key, self._keyed(key, batch if proj is None
                                       else proj.apply(batch, strict=False))
        if proj is not None and proj.narrow:
            for t in (self.catalog.tables if self.catalog is not None else []):
                have.update(c.name for c in t.columns)
            proj.check(sorted(have), "any table of the input or the catalog")

    def read_batches(self, source, table: str | None = None, batch_size: int = 65536,
                     columns=None, threads: int | None = None):
        """Record batches of ≤ batch_size rows of one table, decoded as they are read (a path
        is memory-mapped, so memory stays bounded by the batch, not the file)."""
        if batch_size < 1:
            raise ValueError("batch_size must be at least 1")
        if table is None:
            if self.catalog is None or len(self.catalog) != 1:
                raise ValueError("read_batches needs table=… (or a catalog of one table)")
            table = self.catalog.tables[0].name
        want = self._want(table, columns)
        proj = want.projection
        strict = want.requested_table() is not None   # else the layout may grow with the data
        stats = new_stats()
        self.last_stats = stats
        for key, batch in self._fmt.batches(parts(source), want, True, batch_size, self.mode,
                                            stats, self._native,
                                            self._fmt.streaming_threads(
                                                self._threads(threads))):
            if key == want.requested and batch.num_rows:
                yield self._keyed(key, batch if proj is None else proj.apply(batch, strict))
        if not want.matched and (self.catalog is None or self.catalog.get(table) is None):
            raise ValueError(f"table {table!r} is neither in the catalog nor in the input")

    def decode_message_batches(self, batches, table, *, of_all: bool = False,
                               column: str | None = None, batch_size: int = 65536,
                               columns=None):
        """Decode the messages of several Arrow batches as ONE call (a Spark partition, SPEC
        §6), and yield ``(batch, events, index)`` for every input batch, in order.

        `batches`: an iterable of message arrays (pyarrow binary or string arrays, chunked
        arrays or lists of messages; one message per element, None for a tombstone), or with
        `column`, of record batches whose column of that name holds the messages. Each message
        is an input of its own (seq, byte offsets and an error's message index count from
        it), while OLR's carry-forward and Qlik's metadata lookup reach across all the
        messages of all the batches.

        `table`: whose events: without `of_all`, those of that table and the unattributable
        records, as ``decode(table=…)``; with `of_all`, only what ``decode_tables`` has under
        the key `table` (None: the unattributable records).

        Yields the input batch as given; its events (a pyarrow.Table, in message order, or
        None when its messages have none); and ``index``, each event's message index within
        that batch (an int64 ChunkedArray; None with no events). The batches are read lazily,
        one at a time: every format decodes a part and hands out all its events before it
        reads the next part, so an input batch is answered as soon as the decoder asks for
        the one after it."""
        if batch_size < 1:
            raise ValueError("batch_size must be at least 1")
        if table is None and not of_all:
            raise ValueError("decode_message_batches needs table=… (or of_all=True)")
        want = self._want(ALL if of_all else table, columns, messages=True)
        proj = want.projection
        key = table if of_all else want.requested
        fmt = self._fmt
        pending = collections.deque()   # (base, input batch, n messages) read, not answered
        done = [0]              # how many of `pending` had all their events handed out

        def inputs():
            base = 0
            for batch in batches:
                messages = batch if column is None else _column(batch, column)
                if not isinstance(messages, (pa.Array, pa.ChunkedArray, list, tuple)):
                    raise TypeError("a batch of messages is a pyarrow binary or string array "
                                    f"or a list of messages, not {type(messages).__name__}")
                got = list(parts(messages))
                n = sum(p.count for p in got)
                pending.append((base, batch, n))
                for p in got:
                    p.base += base
                    yield p
                done[0] = len(pending)          # its events are all out (see above)
                base += n

        got = []                # event batches of `key` not yet handed to their input batch

        def answer(upto):
            nonlocal got
            events = fmt.table_of(got) if got else None
            while len(pending) and upto > 0:
                base, batch, n = pending.popleft()
                upto -= 1
                done[0] -= 1
                mine = None
                if events is not None and events.num_rows:
                    index = events.column(MESSAGE).to_numpy()
                    if index[0] >= base + n:
                        k = 0
                    elif index[-1] < base + n:
                        k = len(index)
                    elif (index[1:] >= index[:-1]).all():
                        # in message order (as every format but lldf's order="commit" gives
                        # them): this batch's events are a prefix, sliced rather than copied
                        k = int(np.searchsorted(index, base + n))
                    else:
                        k = -1
                    if k >= 0:
                        mine, events = events.slice(0, k), events.slice(k)
                    else:
                        inside = pc.less(events.column(MESSAGE), base + n)
                        mine = events.filter(inside)
                        events = events.filter(pc.invert(inside))
                    mine = mine.set_column(mine.schema.get_field_index(MESSAGE), MESSAGE,
                                           pc.subtract(mine.column(MESSAGE), base)) \
                        if mine.num_rows else None
                if mine is None:
                    yield batch, None, None
                else:
                    mine = fmt.finish_table(mine)
                    index = mine.column(MESSAGE)
                    mine = mine.drop_columns([MESSAGE])
                    if proj is not None:
                        mine = proj.apply(mine, strict=False)
                    yield batch, mine, index
            got = events.to_batches() if events is not None and events.num_rows else []

        stats = new_stats()
        self.last_stats = stats
        for k, b in fmt.batches(inputs(), want, True, batch_size, self.mode, stats,
                                self._native):
            if k == key and b.num_rows:
                got.append(b)
            if done[0]:
                yield from answer(done[0])
        yield from answer(len(pending))
        if got:     # every format hands out a part's events before it reads the next one
            raise RuntimeError("cdcfast: events left over after their input batch was answered")

    # -- files -----------------------------------------------------------------------------
    def split_points(self, data, step: int) -> list:
        """Offsets where a stream (bytes-like, e.g. a memory-mapped file) can be cut into
        inputs of their own, 0 and len(data) included: the first record start at or after
        each multiple of `step` (record_start), so the same pieces as range_bounds over byte
        ranges of `step` bytes; [0, len(data)] where the format's framing cannot tell."""
        return self._fmt.split_points(data, step, self._native)

    def file_pieces(self, path, split_bytes: int) -> list:
        """(start, end) byte ranges of a file: the whole file, or for a file bigger than
        `split_bytes`, pieces cut at record starts (split_points) where the framing can
        find them."""
        size = os.path.getsize(path)
        if size <= split_bytes:
            return [(0, size)]
        points = self.split_points(map_file(path), split_bytes)
        return list(zip(points, points[1:]))

    def read_piece(self, path, start: int, end: int, table: str | None = None,
                   batch_size: int = 65536, columns=None):
        """read_batches over bytes start:end of a file (memory-mapped): a piece is an input of
        its own, seq and byte offsets count from its start."""
        yield from self.read_batches(memoryview(map_file(path))[start:end], table, batch_size,
                                     columns)


    def can_split(self, native: bool | None = None) -> bool:
        """Whether record_start finds record starts (else a file is read whole): the JSON
        formats always, lldf always (walking its framing), ibm-delimited with the kernels.
        `native`: with (True) or without (False) them; None: as this decoder runs."""
        return self._fmt.can_split(self._native if native is None else native)

    def record_start(self, data, offset: int) -> int:
        """The first record start at or after byte `offset` of a stream (bytes-like, e.g. a
        memory-mapped file), len(data) when there is none, 0 for 0; where the format cannot
        find record starts (can_split false), 0 or len(data). The rule of split_points: its
        cuts are record_start of each multiple of its step (docs/contract.md)."""
        return self._fmt.record_start(data, int(offset), self._native)

    def range_bounds(self, data, start: int, end: int, known: list | None = None) -> tuple:
        """(a, b): the piece of a stream that the byte range start:end stands for, from the
        first record start at or after `start` to the first at or after `end` (`end` at or
        past the stream's end: to its end). Ranges that tile a stream give pieces that tile
        it at record starts, each record in exactly one piece (as Hadoop's line readers share
        out the lines of a split file). `known`: a sorted list of record starts of this
        stream found before; a format that walks the stream (ibm-delimited, lldf) begins at
        the nearest one below each bound, and the bounds found are added to it."""
        n = len(data)
        if not self.can_split() and (start > 0 or end < n):
            raise ValueError(f"{self.format}: record starts inside a stream are only found "
                             "with the compiled kernels; read the file whole")
        known = [0] if known is None else known
        a = self._start_from(data, int(start), known)
        if end >= n:
            return a, n
        return a, max(a, self._start_from(data, int(end), known))

    def _start_from(self, data, offset: int, known: list) -> int:
        i = bisect.bisect_right(known, offset) - 1
        at = self._fmt.record_start(data, offset, self._native, known[i] if i >= 0 else 0)
        j = bisect.bisect_left(known, at)
        if at < len(data) and (j == len(known) or known[j] != at):
            known.insert(j, at)
        return at

    def read_range(self, path, start: int, end: int, table: str | None = None,
                   batch_size: int = 65536, columns=None):
        """read_batches over the piece of a file (memory-mapped) that the byte range
        start:end stands for (range_bounds): an input of its own, seq and byte offsets count
        from its first record. How a Spark task reads its share of a big file: no record
        start is looked for before the task runs. The record starts found are kept per file
        (path, size, mtime) for this decoder's later ranges of it (a task reading the
        pieces of a file in order scans its start once)."""
        data = map_file(path)
        st = os.stat(path)
        key = (os.path.realpath(path), st.st_size, st.st_mtime_ns)
        if key not in self._starts:
            if len(self._starts) >= 256:
                self._starts.clear()
            self._starts[key] = [0]
        a, b = self.range_bounds(data, start, end, self._starts[key])
        if a < b:
            yield from self.read_batches(memoryview(data)[a:b], table, batch_size, columns)


def _names(columns):
    """`columns=` as a list of names (comma-separated text is split; checked as envelope
    names), or None."""
    return None if columns is None else list(Projection(columns).names)


def _image_columns(schema: pa.Schema, proj) -> set:
    """The table columns of the image structs a projection narrows, in a result's schema."""
    out = set()
    for img in proj.narrow:
        i = schema.get_field_index(img)
        if i >= 0:
            out.update(f.name for f in schema.field(i).type)
    return out


def _project(proj, schema: pa.Schema, table) -> pa.Schema:
    if proj is None:
        return schema
    return proj.schema(schema, strict=table is not None)


def _column(batch, name: str):
    """The column `name` of a record batch (or table)."""
    i = batch.schema.get_field_index(name)
    if i < 0:
        raise KeyError(f"the input has no (single) column {name!r}")
    return batch.column(i)


def functions(cls):
    """decode, decode_tables, headers and read_batches over a Decoder class (the native one
    here; cdcfast.reference builds the same four over its own)."""

    def decode(source, format: str, catalog=None, table: str | None = None,
               mode: str = "PERMISSIVE", columns=None, threads: int | None = None,
               **options) -> pa.Table:
        return cls(format, catalog, mode, columns, threads=threads,
                   **options).decode(source, table=table)

    def decode_tables(source, format: str, catalog=None, mode: str = "PERMISSIVE",
                      columns=None, threads: int | None = None, **options) -> dict:
        return cls(format, catalog, mode, columns, threads=threads,
                   **options).decode_tables(source)

    def headers(source, format: str, catalog=None, table: str | None = None,
                mode: str = "PERMISSIVE", columns=None, threads: int | None = None,
                **options) -> pa.Table:
        return cls(format, catalog, mode, threads=threads,
                   **options).headers(source, table=table, columns=columns)

    def read_batches(source, format: str, catalog=None, table: str | None = None,
                     batch_size: int = 65536, mode: str = "PERMISSIVE", columns=None,
                     threads: int | None = None, **options):
        if not isinstance(source, (str, os.PathLike, bytes, bytearray, memoryview, pa.Array,
                                   pa.ChunkedArray, list, tuple)):
            raise TypeError("read_batches reads a path, bytes or message array")
        return cls(format, catalog, mode, columns, threads=threads,
                   **options).read_batches(source, table, batch_size)

    return decode, decode_tables, headers, read_batches


decode, decode_tables, headers, read_batches = functions(Decoder)
