"""The change-event envelope (SPEC §3): one Arrow schema for every format.

Every field is nullable, so PERMISSIVE mode can always write a null.
"""
from __future__ import annotations

import pyarrow as pa

UTC_US = pa.timestamp("us", tz="UTC")

HEAD = [  # before the images
    ("op", pa.string()), ("source_op", pa.string()), ("schema", pa.string()),
    ("table", pa.string()), ("txid", pa.string()), ("commit_ts", UTC_US),
    ("change_ts", UTC_US), ("commit_pos", pa.binary()), ("change_pos", pa.binary()),
    ("seq", pa.int64()),
]
IMAGES = ("before", "after", "changed", "present")
TAIL = [("_error", pa.string()), ("_corrupt_record", pa.binary())]


def columns_struct(columns) -> pa.StructType:
    """``columns``: (name, Arrow type) pairs in table order."""
    return pa.struct([pa.field(n, t) for n, t in columns])


def flags_struct(columns) -> pa.StructType:
    return pa.struct([pa.field(n, pa.bool_()) for n, _ in columns])


def schema(columns, source: pa.StructType) -> pa.Schema:
    """The envelope of one table: ``columns`` as (name, Arrow type) pairs."""
    image = columns_struct(columns)
    flags = flags_struct(columns)
    return pa.schema([pa.field(n, t) for n, t in HEAD]
                     + [pa.field("before", image), pa.field("after", image),
                        pa.field("changed", flags), pa.field("present", flags),
                        pa.field("source", source)]
                     + [pa.field(n, t) for n, t in TAIL])


def headers_schema(source: pa.StructType) -> pa.Schema:
    """What ``headers()`` returns: the envelope without before/after/changed/present."""
    return pa.schema([pa.field(n, t) for n, t in HEAD] + [pa.field("source", source)]
                     + [pa.field(n, t) for n, t in TAIL])


# -- projection: `columns=` (SPEC §1) ------------------------------------------------------------
NAMES = [n for n, _ in HEAD] + list(IMAGES) + ["source"] + [n for n, _ in TAIL]
HEADER_NAMES = [n for n, _ in HEAD] + ["source"] + [n for n, _ in TAIL]


class Projection:
    """The envelope columns a call asks for (`columns=`: names, or one comma-separated text):
    top-level names (``op``, ``commit_ts``, ``after``, …) and ``before.COL`` / ``after.COL`` /
    ``changed.COL`` / ``present.COL``, which narrow an image or flag struct to those table
    columns. Results keep envelope order (and table order inside a struct) whatever the order
    asked; ``_error`` always comes back, ``_corrupt_record`` only when named.

    A projection selects: the rows, their values and their ``_error`` are those of the whole
    envelope, but for one thing (SPEC §1): the before image is not read when neither
    ``before`` nor ``changed`` is named (``reads_before``), so a bad value there is not
    reported. What it saves: that image's conversion, the flag structs when neither
    ``changed`` nor ``present`` is named, and the arrays of whatever is not named
    (docs/contract.md §1.7)."""

    def __init__(self, columns, headers: bool = False, flags: str = "struct"):
        if flags not in FLAG_FORMS:
            raise ValueError(f"flags must be one of {', '.join(FLAG_FORMS)}, not {flags!r}")
        self.bitmask = flags == "bitmask"
        if columns is None:
            columns = HEADER_NAMES if headers else NAMES
        if isinstance(columns, Projection):
            columns = columns.names
        if isinstance(columns, str):
            columns = [c for c in columns.split(",")]
        names = [str(c).strip() for c in columns]
        known = HEADER_NAMES if headers else NAMES
        top, narrow = set(), {}
        for name in names:
            if not name:
                raise ValueError("columns: an empty name (a doubled or trailing comma?)")
            head, dot, col = name.partition(".")
            if dot and head in IMAGES and not headers:
                if not col:
                    raise ValueError(f"columns: {name!r} names no table column")
                narrow.setdefault(head, []).append(col)
            elif name in known:
                top.add(name)
            else:
                more = "" if headers else " (and before.COL, after.COL, changed.COL, present.COL)"
                raise ValueError(f"columns: unknown name {name!r}; the envelope's are "
                                 f"{', '.join(known)}{more}")
        for img in list(narrow):
            if img in top:          # the whole struct was asked for too
                del narrow[img]
        self.names = names
        self.top = top | set(narrow) | {"_error"}
        self.narrow = narrow        # image -> the table columns asked for
        self.headers = headers

    def __repr__(self):
        return f"Projection({','.join(self.names)!r})"

    @classmethod
    def of(cls, columns, headers: bool = False, flags: str = "struct"):
        """A Projection, or None for the whole envelope as it is (columns None, flags as
        structs)."""
        if columns is None and flags == "struct":
            return None
        return cls(columns, headers, flags)

    @property
    def wants_flags(self) -> bool:
        """Whether `changed` or `present` is asked for (else the kernels build neither)."""
        return "changed" in self.top or "present" in self.top

    @property
    def reads_before(self) -> bool:
        """Whether the `before` image is read (SPEC §1: not when `before` is not named): it
        is when `before` is asked for, or `changed` (an update's changed compares the two
        images)."""
        return "before" in self.top or "changed" in self.top

    def check(self, table_columns, where: str = "the table") -> None:
        """A ValueError when a `before.COL`-style name is not a column of the table."""
        have = list(table_columns)
        for img, cols in self.narrow.items():
            missing = [c for c in cols if c not in have]
            if missing:
                raise ValueError(f"columns: {', '.join(f'{img}.{c}' for c in missing)}: not a "
                                 f"column of {where} (its columns: {', '.join(have) or 'none'})")

    def _field(self, f: pa.Field, strict: bool) -> pa.Field:
        cols = self.narrow.get(f.name)
        if cols is not None:
            if strict:
                self.check([c.name for c in f.type], "the table")
            keep = set(cols)
            f = f.with_type(pa.struct([c for c in f.type if c.name in keep]))
        if self.bitmask and f.name in FLAGS and pa.types.is_struct(f.type):
            f = f.with_type(bitmask_type(f.type.num_fields))
        return f

    def schema(self, schema: pa.Schema, strict: bool = True) -> pa.Schema:
        """The schema a result of the whole-envelope `schema` has under this projection
        (extra columns after the envelope's, e.g. Spark's kept ones, stay)."""
        return pa.schema([self._field(f, strict) for f in schema if self._keeps(f.name)],
                         metadata=schema.metadata)

    def _keeps(self, name: str) -> bool:
        return name in self.top or name not in NAMES

    def apply(self, data, strict: bool = True):
        """A record batch or table of the whole envelope, projected (zero-copy: columns and
        struct children are selected, nothing is rebuilt)."""
        arrays, fields = [], []
        for i, f in enumerate(data.schema):
            if not self._keeps(f.name):
                continue
            col = data.column(i)
            if f.name in self.narrow:
                keep = set(self.narrow[f.name])
                col = _narrow(col, pa.struct([c for c in f.type if c.name in keep]))
            f = self._field(f, strict)
            if self.bitmask and f.name in FLAGS and pa.types.is_struct(col.type):
                col = bitmask(col)
            arrays.append(col)
            fields.append(f)
        schema = pa.schema(fields, metadata=data.schema.metadata)
        if isinstance(data, pa.RecordBatch):
            return pa.RecordBatch.from_arrays(arrays, schema=schema)
        return pa.Table.from_arrays(arrays, schema=schema)


FLAG_FORMS = ("struct", "bitmask")
FLAGS = ("changed", "present")
MASK_BITS = 64          # up to this many columns a flag bitmask is an int64, else binary


def bitmask_type(ncols: int) -> pa.DataType:
    """The type of a flag struct of `ncols` columns as a bitmask (flags="bitmask")."""
    return pa.int64() if ncols <= MASK_BITS else pa.binary()


def bitmask(col):
    """A flag struct column as bitmasks: bit j (of an int64 for up to 64 columns, else of
    little-endian bytes: byte j // 8, bit j % 8) is the table's column j; a null struct is a
    null bitmask, a null flag inside a struct a 0 bit."""
    import numpy as np
    if isinstance(col, pa.ChunkedArray):
        return pa.chunked_array([bitmask(c) for c in col.chunks],
                                type=bitmask_type(col.type.num_fields))
    n, k = len(col), col.type.num_fields
    mask = None if col.null_count == 0 else col.is_null().to_numpy(zero_copy_only=False)
    if k <= MASK_BITS:
        out = np.zeros(n, dtype=np.uint64)
        for j in range(k):
            bits = col.field(j).fill_null(False).to_numpy(zero_copy_only=False)
            out |= bits.astype(np.uint64) << np.uint64(j)
        return pa.array(out.view(np.int64), type=pa.int64(), mask=mask)
    width = (k + 7) // 8
    out = np.zeros((n, width), dtype=np.uint8)
    for j in range(k):
        bits = col.field(j).fill_null(False).to_numpy(zero_copy_only=False)
        out[:, j >> 3] |= bits.astype(np.uint8) << np.uint8(j & 7)
    offsets = pa.array(np.arange(0, (n + 1) * width, width, dtype=np.int32))
    arr = pa.BinaryArray.from_buffers(pa.binary(), n, [None, offsets.buffers()[1],
                                                       pa.py_buffer(out.tobytes())])
    if mask is None:
        return arr
    import pyarrow.compute as pc
    return pc.if_else(pa.array(mask), pa.scalar(None, pa.binary()), arr)


def _narrow(col, t: pa.StructType):
    """A struct column (array or chunked) with only the children of type t."""
    if isinstance(col, pa.ChunkedArray):
        return pa.chunked_array([_narrow(c, t) for c in col.chunks], type=t)
    children = [col.field(f.name) for f in t]
    return pa.StructArray.from_arrays(children, fields=list(t), mask=col.is_null()) \
        if col.null_count else pa.StructArray.from_arrays(children, fields=list(t))
