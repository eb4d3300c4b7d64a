"""What every format shares: the small interface the registry knows, which output table a record
goes to, modes, statistics and the finishing of `_error` columns.

A format is one module with one class: it validates its options when built, is fully described
by a JSON-serializable config (``name`` + options; the catalog travels beside it), and turns
sources into Arrow record batches of the envelope (its ``batches`` method). Hot loops live in
native/, never here.
"""
from __future__ import annotations

import functools
import struct

import numpy as np
import pyarrow as pa

from .. import envelope
from ..catalog import FLOAT32, FLOAT64, Catalog, Table

MODES = ("PERMISSIVE", "DROPMALFORMED", "FAILFAST")
STATS = ("records", "events", "errors", "dropped", "tombstones", "control", "unknown_tables",
         "extra_columns")


def check_mode(mode: str) -> str:
    m = str(mode).upper()
    if m not in MODES:
        raise ValueError(f"mode must be one of {', '.join(MODES)}, not {mode!r}")
    return m


def new_stats() -> dict:
    return dict.fromkeys(STATS, 0)


ALL = object()       # want every table (decode_tables)
MESSAGE = "_message"  # the last column when Want.messages: the row's message index (int64)


class _Headers:
    """The one output key of headers(table=None). Not a string, so that no table's name is
    it (a table named "*" once lost its images to a key spelled so)."""
    __slots__ = ()

    def __repr__(self):
        return "HEADERS"

    def __reduce__(self):           # unpickled as this module's own
        return "HEADERS"


HEADERS = _Headers()


class Noted:
    """A dict of what a format carries from one part of a call to the next (`Want.carried`),
    whose reads and writes are noted (`Want.note`): a piece decoded on its own thread is then
    checked against what the pieces before it left, and what it wrote is kept
    (cdcfast/pieces.py)."""

    def __init__(self, want: "Want", name: str):
        self.want, self.name = want, name
        self.d = want.carried.setdefault(name, {})
        want.notes.setdefault(name, {})             # (kept by what it uses: pieces.py)

    def get(self, key, default=None):
        got = self.d.get(key)
        self.want.note(self.name, key, got, True)
        return default if got is None else got

    def __contains__(self, key) -> bool:
        return self.get(key) is not None

    def __getitem__(self, key):
        got = self.get(key)
        if got is None:
            raise KeyError(key)
        return got

    def __setitem__(self, key, value) -> None:
        self.want.note(self.name, key, None, False)
        self.d[key] = value

    def add(self, key) -> None:
        """(used as a set)"""
        self[key] = True


class Want:
    """Which output a record of a given table goes to, for one call.

    ``Want(catalog, table="A.B")`` (decode / headers with a table): records of that table, and
    unattributable ones; ``Want(catalog, ALL)`` (decode_tables): each table under its own key,
    unattributable records under None; ``Want(catalog, None, headers=True)``: every record into
    one output.
    """

    def __init__(self, catalog: Catalog | None, table, headers: bool = False,
                 messages: bool = False):
        self.catalog = catalog
        self.table = table
        self.headers = headers
        # each message an input of its own (Spark, SPEC §6): rows get MESSAGE, their message's
        # index in the batch (for `keep`), and an error names message 0
        self.messages = messages
        # the call's projection (envelope.Projection, None: every column; the API applies
        # it) and whether it asks for `changed` or `present` (else kernels may skip them)
        self.projection = None
        self.flags = True         # changed / present computed (a projection may not)
        self.before = True        # the before image's values read (a projection may not)
        self.requested = None
        self.matched = False      # a record of the requested table was met
        # what a format learns in one part of the source and keeps for the next (the chunks
        # of a ChunkedArray are one input, as the list of their messages is): ibm-delimited's
        # N of a table the catalog lacks
        self.carried = {}
        # what this call relied on from `carried` (name -> key -> the value it found, None
        # when none): a piece decoded on its own thread is checked against what the pieces
        # before it left (cdcfast/pieces.py)
        self.assumed = {}
        # it relied on something only the rest of its part can tell (ibm-delimited: no
        # record of a table the catalog lacks gives its N before the part ends)
        self.unsure = False
        # its last record may run on past its end (ibm-delimited: a string the part's end
        # cut off): a piece cut at a guessed record start is joined to the next one
        self.open_end = False
        # what this call read and wrote of `carried` through `Noted` (the JSON formats'
        # layouts, Qlik's metadata): name -> key -> (what it found, as a snapshot, or None
        # when it wrote the key before reading it); see cdcfast/pieces.py
        self.notes = {}
        # per batch handed out, which rows' seq is the vendor's own number (a numpy bool
        # array, None for none): collected only for a piece (cdcfast/pieces.py), else None
        self.seq_masks = None
        # the call decodes a piece of a part (cdcfast/pieces.py): it notes what it relies on
        self.piece = False
        if table is not None and table is not ALL:
            t = catalog.get(table) if catalog else None
            self.requested = t.name if t else table

    def recall(self, name: str, key):
        """What an earlier part of the call fixed under carried[name][key] (None: nothing),
        noted as relied upon."""
        got = self.carried.get(name, {}).get(key)
        self.assumed.setdefault(name, {}).setdefault(key, got)
        return got

    def note(self, name: str, key, found, read: bool):
        """The first use of carried[name][key] by this call: read (what it found) or
        written before any read."""
        used = self.notes.setdefault(name, {})
        if key in used:
            return
        if not read:
            used[key] = None
        else:               # what it found, as text (a layout may grow after it was read)
            used[key] = (None, False) if found is None else (repr(found), True)

    def resolve(self, name: str):
        """(output key or None to skip, catalog Table or None) for a record's table name."""
        t = self.catalog.get(name) if self.catalog else None
        key = t.name if t else name
        if self.table is ALL:
            return key, t
        if self.table is None:
            return (HEADERS if self.headers else key), t
        if key == self.requested or (t is None and key.upper() == self.table.upper()):
            self.matched = True
            return self.requested, t
        return None, t

    def requested_table(self):
        """The catalog table a call asked for (decode / headers with a table), or None: its
        output exists even when the input has none of its records."""
        if self.requested is None or self.table is ALL or not self.catalog:
            return None
        return self.catalog.get(self.requested)

    @property
    def corrupt_key(self):
        """Where unattributable records go."""
        if self.table is ALL:
            return None
        if self.table is None:
            return HEADERS if self.headers else None
        return self.requested


def full_name(schema, table) -> str:
    return f"{schema}.{table}" if schema else (table or "")


def same(a, b, kind) -> bool:
    """Null-safe equality of two converted values (floats by their bits)."""
    if a is None or b is None:
        return a is None and b is None
    if kind == FLOAT64:
        return struct.pack("<d", a) == struct.pack("<d", b)
    if kind == FLOAT32:
        return struct.pack("<f", a) == struct.pack("<f", b)
    return a == b


def errors_column(n: int, rows, texts) -> pa.Array:
    """A string column of n rows: texts[i] at rows[i], null elsewhere (built without a Python
    object per row)."""
    if not rows:
        return pa.nulls(n, pa.string())
    idx = np.full(n, len(texts), dtype=np.int64)
    idx[np.asarray(rows, dtype=np.int64)] = np.arange(len(texts))
    return pa.array(list(texts) + [None], type=pa.string()).take(pa.array(idx))


def binary_column(n: int, rows, values) -> pa.Array:
    if not rows:
        return pa.nulls(n, pa.binary())
    idx = np.full(n, len(values), dtype=np.int64)
    idx[np.asarray(rows, dtype=np.int64)] = np.arange(len(values))
    return pa.array(list(values) + [None], type=pa.binary()).take(pa.array(idx))


def batch_room(outputs, batch_rows: int) -> int:
    """Records the next chunk may add: the fullest output stops at a whole batch."""
    return batch_rows - max([o.out.length for o in outputs if o.out is not None] or [0])


def presize(out, part, pos: int, batch_rows: int) -> None:
    """After an output's first rows, size its buffers (`out.presize`) for the whole batch: an
    estimate from the share of the part's input read so far (`pos`), so the columns are
    allocated once instead of through a chain of doublings."""
    total = int(part.offsets[-1] - part.offsets[0])
    done = max(1, int(pos - part.offsets[0]))
    rows = out.length
    est = min(batch_rows, int(rows * total / done * 1.05) + 16)
    if est > 4 * rows:
        out.presize(est)


@functools.lru_cache(maxsize=1024)
def _layout(columns: tuple, source_type) -> tuple:
    """(image struct, flags struct, envelope schema) of catalog columns: built once per
    layout, not per batch (a call on a small input is mostly such fixed costs)."""
    pairs = [(c.name, c.type.arrow_type) for c in columns]
    return (envelope.columns_struct(pairs), envelope.flags_struct(pairs),
            envelope.schema(pairs, source_type))


def envelope_schema(columns, source_type) -> pa.Schema:
    """envelope.schema of catalog columns (cached per layout)."""
    return _layout(tuple(columns), source_type)[2]


def image_structs(out, columns, n: int, source_type) -> list:
    """before, after, changed, present of a kernel's output (`out`: Column lists `before`,
    `after`, `changed`, `present` and their struct validity `before_v`, …), n rows each, for
    the catalog `columns` (`source_type`: the format's source struct, which keys the cached
    layout with them)."""
    image_t, flags_t, _ = _layout(tuple(columns), source_type)
    from .._arrow import finish_struct
    return [finish_struct(t, n, valid, vals)
            for vals, valid, t in ((out.before, out.before_v, image_t),
                                   (out.after, out.after_v, image_t),
                                   (out.changed, out.changed_v, flags_t),
                                   (out.present, out.present_v, flags_t))]


def images_and_schema(out, columns, n: int, images: bool, source_type) -> tuple:
    """The image structs of an output (none for headers()) and the batch's schema."""
    if images:
        return (image_structs(out, columns, n, source_type),
                envelope_schema(columns, source_type))
    return [], envelope.headers_schema(source_type)


def with_messages(batch: pa.RecordBatch, want: "Want", messages) -> pa.RecordBatch:
    """The batch with MESSAGE (`messages`: each row's message index) when `want` asks for it."""
    if not want.messages:
        return batch
    return batch.append_column(pa.field(MESSAGE, pa.int64()), pa.array(messages, pa.int64()))


def apply_mode(batch: pa.RecordBatch, mode: str, stats: dict, first_error) -> pa.RecordBatch:
    """PERMISSIVE keeps the batch; DROPMALFORMED drops rows with `_error`; FAILFAST raises the
    first error (`first_error`, a DecodeError or None)."""
    err = batch.column(batch.schema.get_field_index("_error"))
    nerr = len(err) - err.null_count
    stats["errors"] += nerr
    if nerr and mode == "FAILFAST":
        raise first_error
    if nerr and mode == "DROPMALFORMED":
        keep = err.is_null()
        stats["dropped"] += nerr
        batch = batch.filter(keep)
    stats["events"] += batch.num_rows
    return batch


def grown_table(batches: list) -> pa.Table:
    """The batches of one output whose layout grew as columns were met (JSON kinds: the
    last batch has every column, in order) as one table: a column an earlier batch lacks is
    null there, `present` as for a column the image left out (true for inserts and deletes,
    false for updates) and `changed` true only for inserts."""
    if not batches:
        return pa.Table.from_batches(batches)
    target = batches[-1].schema
    if all(b.schema == target for b in batches):
        return pa.Table.from_batches(batches)
    return pa.Table.from_batches([_pad(b, target) for b in batches], schema=target)


def _pad(batch: pa.RecordBatch, target: pa.Schema) -> pa.RecordBatch:
    import pyarrow.compute as pc
    if batch.schema == target:
        return batch
    op = batch.column(batch.schema.get_field_index("op"))
    fill = {"present": pc.fill_null(pc.is_in(op, pa.array(["c", "d"])), False),
            "changed": pc.fill_null(pc.equal(op, "c"), False)}
    arrays = []
    for f in target:
        col = batch.column(batch.schema.get_field_index(f.name))
        if f.name in ("before", "after", "changed", "present") and col.type != f.type:
            have = {c.name: col.field(c.name) for c in col.type}
            children = [have.get(c.name) if c.name in have else
                        (fill[f.name] if f.name in fill else pa.nulls(len(col), c.type))
                        for c in f.type]
            col = pa.StructArray.from_arrays(children, fields=list(f.type),
                                             mask=col.is_null())
        arrays.append(col)
    return pa.RecordBatch.from_arrays(arrays, schema=target)


def resolve(target: str):
    """The function a "package.module:function" names, imported on first use (how a format
    reaches its decoders and its twin's helpers without a static import back)."""
    import importlib
    module, name = target.split(":")
    return getattr(importlib.import_module(module), name)


class Format:
    """The interface of a format module (see module docstring), and what the rest of the
    package asks of a format: every list of formats (the encoders, the native kernels, the
    demo's samples, Spark's catalog advice) derives from these declarations through the
    registry (cdcfast.formats; tests/test_registry.py)."""
    name: str = ""
    DEFAULTS: dict = {}
    HELP: dict = {}             # option -> one line of meaning (`cdcfast formats`, the docs)
    SUMMARY: str = ""           # what the format is, in one line
    # declared by every format (no default):
    TITLE: str                  # a short display name (`cdcfast demo`)
    EXTENSION: str              # the suffix of a file of its messages, without the dot
    NATIVE: tuple               # the extension modules (cdcfast.<name>) its native decoder runs
    ENCODER: str                # its encoder and generator: the module cdcfast.encode.<ENCODER>
    # where the format's own messages can describe its tables: how to build the catalog Spark
    # needs (the end of Spark's "needs a catalog" error; "" where they cannot)
    CATALOG_ADVICE: str = ""
    # where they can, a classmethod (messages) -> Catalog (behind Catalog.from_<name>)
    catalog_from = None

    @classmethod
    def option_docs(cls) -> list:
        """(name, type, default, meaning) of each option, in DEFAULTS order."""
        def kind(v):
            return "true/false" if isinstance(v, bool) else "integer" \
                if isinstance(v, int) else "number" if isinstance(v, float) else "text"
        return [(k, kind(v), v, cls.HELP.get(k, "")) for k, v in cls.DEFAULTS.items()]

    def __init__(self, catalog: Catalog | None, **options):
        unknown = set(options) - set(self.DEFAULTS)
        if unknown:
            raise ValueError(f"unknown option(s) for {self.name}: {', '.join(sorted(unknown))}"
                             f" (known: {', '.join(self.DEFAULTS)})")
        self.catalog = catalog
        self.options = {**self.DEFAULTS, **options}

    def config(self) -> dict:
        return dict(self.options)

    @classmethod
    def options_from_text(cls, options: dict) -> dict:
        """Options given as text (Spark's .option, the command line's --option KEY=VALUE):
        booleans and numbers where the format's defaults are."""
        out = {}
        for k, v in options.items():
            d = cls.DEFAULTS.get(k)
            if isinstance(d, bool):
                low = str(v).lower()
                if low not in ("1", "true", "yes", "0", "false", "no"):
                    raise ValueError(f"option {k} takes true or false, not {v!r}")
                out[k] = low in ("1", "true", "yes")
            elif isinstance(d, (int, float)):
                try:
                    out[k] = type(d)(v)
                except ValueError:
                    raise ValueError(f"option {k} takes a number, not {v!r}") from None
            else:
                out[k] = v
        return out

    # the envelope ------------------------------------------------------------------------
    source_type: pa.StructType = pa.struct([])

    def columns(self, table: Table | None, ncols: int = 0):
        """(name, Arrow type) pairs of a table's columns."""
        raise NotImplementedError

    def schema(self, table: Table | None, ncols: int = 0) -> pa.Schema:
        return envelope.schema(self.columns(table, ncols), self.source_type)

    # the format's two decoders, as "module:function" (each takes the format object, then
    # parts, want, images, batch_rows, mode, stats): named, not imported, because both import
    # this module's format — the chain runs one way, runner → format ← reference
    RUNNER: str = ""            # the native one (formats/_X_run.py: native_batches)
    REFERENCE: str = ""         # the pure-Python twin (reference/X.py: reference_batches)

    # threads (cdcfast/pieces.py): whether the native runner may decode pieces of one call
    # on several threads, and what `seq` counts from — "message": each message's records
    # from 0; "call": every record of the call
    THREADED: bool = False
    SEQ_SCOPE: str = "message"
    # the first piece of a part is small and decoded before the others start: what it
    # learns (Qlik's metadata messages, at a stream's start) the others then start from
    FIRST_PIECE_ALONE: bool = False
    # what the format carries that the join checks and keeps itself (carried_agrees,
    # carried_merge), not by Want.assumed / Noted
    CARRIED_OWN: frozenset = frozenset()
    # whether `change_pos` names one change, so that two events at the same
    # (commit_pos, change_pos) are one change delivered twice (a replay: cdcfast report)
    POSITION_PER_CHANGE: bool = True
    # whether the records are text (shown escaped where a report quotes them), else binary
    # (shown in hex)
    TEXT: bool = True

    def batches(self, parts, want: Want, images: bool, batch_rows: int, mode: str,
                stats: dict, native: bool, threads: int = 1):
        """Yield (key, RecordBatch) in input order; raise DecodeError in FAILFAST. With
        `threads` > 1, a format whose runner allows it decodes big parts in pieces on that
        many threads, with the same result."""
        decode = resolve(self.RUNNER if native else self.REFERENCE)
        if threads > 1 and native and self.THREADED and not want.messages:
            from ..pieces import threaded_batches
            return threaded_batches(self, decode, parts, want, images, batch_rows, mode,
                                    stats, threads)
        return decode(self, parts, want, images, batch_rows, mode, stats)

    def streaming_threads(self, threads: int) -> int:
        """The threads of a streaming call (read_batches, read_tables): `threads`, unless
        the format's batches would differ with the cuts (lldf's order="commit")."""
        return threads

    def piece_cuts(self, data, step: int, first: int = 0):
        """Where a stream is cut into pieces for threads, 0 and len(data) included, as they
        are found (the first pieces decode while the walk goes on): the record starts of
        split_points, each walk going on from the cut before (the first at `first`, when
        given). A format may guess faster and let the decode of each piece tell whether the
        guess after it held (Want.open_end)."""
        n = len(data)
        yield 0
        at, target = 0, first or step
        while target < n:
            at = self.record_start(data, target, True, at)
            if at >= n:
                break
            yield at
            target = (at // step + 1) * step
        yield n

    def carried_agrees(self, carried: dict, want: Want) -> bool:
        """Whether a piece decoded with Want `want` relied on what the pieces before it left
        (`carried`) of the state the format keeps itself (CARRIED_OWN)."""
        return True

    def carried_merge(self, carried: dict, want: Want) -> None:
        """What a piece (Want `want`) leaves of that state, over what the pieces before it
        left."""

    def speculate(self, part, piece, carried: dict) -> None:
        """Before a piece is decoded (not its part's first): what the bytes just before it
        most likely leave of the state the format keeps itself, into `carried` — a guess the
        join checks, which spares a second decode when it holds."""

    def piece_state(self, part):
        """What pieces of one message of `part` must share, decided on the whole message
        (Part.whole; lldf: its framing); None by default."""
        return None

    def table_of(self, batches: list) -> pa.Table:
        """One output's batches as a table (a format whose layouts grow with the data pads
        the earlier ones: `grown_table`)."""
        return pa.Table.from_batches(batches)

    def finish_table(self, table: pa.Table) -> pa.Table:
        """The whole result of one decode / decode_tables / headers call, as the format
        wants it delivered (lldf's order="commit" sorts it); as is by default."""
        return table

    def can_split(self, native: bool) -> bool:
        """Whether record_start can find record starts (with or without the kernels)."""
        return False

    def record_start(self, data, offset: int, native: bool, known: int = 0) -> int:
        """The first record start at or after `offset` in a stream (bytes-like, e.g. a
        memory-mapped file), len(data) when there is none: where a piece of the stream that
        begins or ends at byte `offset` begins or ends (a Spark task that reads bytes a:b of
        a file reads record_start(a) to record_start(b), so neighbouring tasks agree). 0 for
        offset 0. `known`: a record start at or before `offset` from which a format that
        must walk the stream may begin (0: the stream's start). Formats that cannot tell
        (can_split false) answer 0 or len(data) only."""
        n = len(data)
        if offset <= 0:
            return 0
        if offset >= n or not self.can_split(native):
            return n
        known = min(max(0, known), offset)
        if known == offset:
            return offset
        return self.find_record_start(data, offset, native, known)

    def find_record_start(self, data, offset: int, native: bool, known: int) -> int:
        """record_start for 0 < offset < len(data), known <= offset a record start."""
        raise NotImplementedError

    def split_points(self, data, step: int, native: bool) -> list:
        """Offsets where a stream can be cut into inputs of their own, 0 and len(data)
        included: the first record start at or after each multiple of `step` (record_start;
        a multiple that falls in the same record as an earlier one adds no cut), so these
        are exactly the pieces Spark's tasks find over byte ranges of `step` bytes;
        [0, len(data)] where the framing cannot tell."""
        n = len(data)
        step = max(1, int(step))
        if n <= step or not self.can_split(native):
            return [0, n]
        cuts = [0]
        target = step
        while target < n:
            at = self.record_start(data, target, native, cuts[-1])
            if at >= n:
                break
            cuts.append(at)
            target = (at // step + 1) * step
        cuts.append(n)
        return cuts
