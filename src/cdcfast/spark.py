"""cdcfast in Spark (SPEC §6): the decoders run inside the executors' Python workers.

Two ways in:

- **A message column** (Kafka values, a table of raw messages): ``decode`` / ``decode_tables``
  / ``map_in_arrow`` run the native decoder in ``mapInArrow``, one Arrow batch of messages at a
  time; ``pandas_udf`` gives each message its events as an array of envelope structs.
- **Files**: ``register(spark)`` adds the data source ``cdcfast`` (PySpark's Python Data Source
  API). The executors' Python workers memory-map the files and yield Arrow record batches, so
  the file bytes never pass through the JVM: ``spark.read.format("cdcfast")`` over a file, a
  folder or a glob (one partition per file; a big file in pieces cut at record starts), and
  ``spark.readStream.format("cdcfast")`` over a folder where new files arrive.

Executors rebuild the Decoder from its JSON-serializable config (``Decoder.config()``), once
per Python worker; nothing is compiled in a task. Schemas are known up front, from the catalog:
the Spark layer refuses a table without one — Debezium's embedded schemas included, which are
only known once a message is read (``Catalog.from_debezium`` over a sample makes the catalog),
and so are OLR's ``schema.columns`` and Qlik's metadata messages (``Catalog.from_olr``,
``Catalog.from_qlik``). A message column's partition is decoded as one call, so OLR's
carry-forward and Qlik's metadata lookup reach across its Arrow batches (SPEC §6).
"""
from __future__ import annotations

import functools
import glob as _glob
import json
import os

import pyarrow as pa
import pyarrow.compute as pc

from .api import Decoder, Projection
from .formats import get as format_class

__all__ = ["decode", "decode_tables", "map_in_arrow", "pandas_udf", "spark_schema", "register",
           "DataSourceOptions"]

READ_BATCH_ROWS = 65536         # rows per Arrow batch a data source task yields
SPLIT_MB = 128                  # files bigger than this are read in pieces of about this size


# -- decoders, rebuilt once per Python worker ----------------------------------------------------
@functools.lru_cache(maxsize=16)
def _decoder(config_json: str) -> Decoder:
    return Decoder.from_config(json.loads(config_json))


def _config(format, catalog, mode, options, columns=None) -> str:
    """The JSON config executors rebuild the Decoder from (`columns`: its projection)."""
    return json.dumps(Decoder(format, catalog=catalog, mode=mode, columns=columns,
                              **options).config(), sort_keys=True)


def _table_of(dec: Decoder, table):
    """The catalog table a Spark result is for: `table`, or the catalog's only one."""
    if dec.catalog is None:
        raise ValueError("Spark needs a catalog: without one a table's columns depend on the "
                         "data, and Spark must know the schema before it reads"
                         + format_class(dec.format).CATALOG_ADVICE)
    if table is None:
        if len(dec.catalog) != 1:
            raise ValueError("give table=… (the catalog holds "
                             f"{', '.join(t.name for t in dec.catalog.tables)})")
        return dec.catalog.tables[0].name
    t = dec.catalog.get(table)
    if t is None:
        raise ValueError(f"table {table!r} is not in the catalog")
    return t.name


# -- Arrow types as Spark takes them ----------------------------------------------------------
def time_type_enabled(spark=None) -> bool:
    """Whether TIME columns are Spark TIME values: where the Spark version has TimeType and
    the session enables it (``spark.sql.timeType.enabled``, off by default in Spark 4.x;
    without it Spark can neither write nor cast TIME). Otherwise they are ISO text
    (``HH:MM:SS.ffffff``)."""
    try:
        from pyspark.sql.types import TimeType  # noqa: F401  (Spark 4.1+)
    except ImportError:
        return False
    if spark is None:
        from pyspark.sql import SparkSession
        spark = SparkSession.getActiveSession()
    if spark is None:
        return False
    return str(spark.conf.get("spark.sql.timeType.enabled", "false")).lower() == "true"


def _spark_arrow_type(t: pa.DataType, time_type: bool) -> pa.DataType:
    """The Arrow type Spark exchanges for a value of Arrow type t: TIME (time64[us]) becomes
    time64[ns] (Spark's TimeType) or its ISO text (see time_type_enabled)."""
    if pa.types.is_time(t):
        return pa.time64("ns") if time_type else pa.string()
    if pa.types.is_struct(t):
        return pa.struct([f.with_type(_spark_arrow_type(f.type, time_type)) for f in t])
    return t


def _spark_arrow_schema(schema: pa.Schema, time_type: bool) -> pa.Schema:
    return pa.schema([f.with_type(_spark_arrow_type(f.type, time_type)) for f in schema])


def _to_spark(batch: pa.RecordBatch, target: pa.Schema) -> pa.RecordBatch:
    return batch if batch.schema.equals(target) else batch.cast(target)


def _struct_type(arrow_schema: pa.Schema):
    """Spark's StructType of an Arrow schema: a timestamp with a zone (UTC) is TimestampType,
    one without (Db2's TIMESTAMP: a wall clock) TimestampNTZType."""
    from pyspark.sql.pandas.types import from_arrow_schema
    return from_arrow_schema(arrow_schema, prefer_timestamp_ntz=True)


def _exchange_schema(struct_type) -> pa.Schema:
    """The Arrow schema Spark expects batches of a StructType in (it compares them exactly)."""
    from pyspark.sql.pandas.types import to_arrow_schema
    return to_arrow_schema(struct_type, timezone="UTC")


def spark_schema(format: str, catalog=None, table: str | None = None, keep=(),
                 input_schema=None, mode: str = "PERMISSIVE", time_type: bool | None = None,
                 columns=None, **options):
    """The Spark StructType of a table's events (the envelope, SPEC §3; `columns`: only
    those, SPEC §1), then the `keep` input columns (their types from `input_schema`, a Spark
    StructType). `time_type`: TIME columns as Spark TIME (None: as the active session
    allows, see time_type_enabled)."""
    dec = Decoder(format, catalog=catalog, mode=mode, columns=columns, **options)
    if time_type is None:
        time_type = time_type_enabled()
    st = _struct_type(_spark_arrow_schema(dec.schema(_table_of(dec, table)), time_type))
    for k in keep:
        if input_schema is None:
            raise ValueError("keep=… needs input_schema (the input DataFrame's schema)")
        st = st.add(input_schema[k])
    return st


# -- a message column: mapInArrow ----------------------------------------------------------------
def _message_fn(config_json, table, column, keep, target, of_all=False):
    """The function mapInArrow runs: batches of input rows → batches of events (+ keep).
    `of_all`: the output `table` (None: the unattributable records) of decode_tables, not
    decode(table=…), which also holds the unattributable records."""

    def fn(batches):
        # one call over the partition's batches (SPEC §6)
        for batch, got, index in _decoder(config_json).decode_message_batches(
                batches, table, of_all=of_all, column=column, batch_size=READ_BATCH_ROWS):
            if got is None or got.num_rows == 0:
                continue
            for k in keep:
                col = batch.column(batch.schema.get_field_index(k))
                got = got.append_column(k, pc.take(col, index))
            for b in got.to_batches():
                yield _to_spark(b, target)

    return fn


def map_in_arrow(format: str, catalog=None, table: str | None = None, column: str = "value",
                 keep=(), input_schema=None, mode: str = "PERMISSIVE",
                 time_type: bool | None = None, columns=None, **options):
    """(fn, schema) for ``df.mapInArrow(fn, schema)``: each input row's `column` is one
    message; its events come out (only the envelope `columns` when given) with the `keep`
    input columns appended."""
    config_json = _config(format, catalog, mode, options, columns)
    dec = _decoder(config_json)
    name = _table_of(dec, table)
    if time_type is None:
        time_type = time_type_enabled()
    return _mapper(config_json, dec.schema(name), name, column, keep, input_schema, time_type)


def _mapper(config_json, arrow_schema, table, column, keep, input_schema, time_type,
            of_all=False):
    arrow = _spark_arrow_schema(arrow_schema, time_type)
    schema = _struct_type(arrow)
    for k in keep:
        if input_schema is None:
            raise ValueError("keep=… needs input_schema (the input DataFrame's schema)")
        schema = schema.add(input_schema[k])
    target = _exchange_schema(schema)
    return _message_fn(config_json, table, column, tuple(keep), target, of_all), schema


def decode(df, format: str, catalog=None, table: str | None = None, column: str = "value",
           keep=(), mode: str = "PERMISSIVE", columns=None, **options):
    """The events of one table decoded from a DataFrame's message column, as a DataFrame
    (mapInArrow); `columns`: only those envelope columns (SPEC §1: what is not named is not
    built, and Spark converts fewer fields); `keep` input columns are copied onto every
    event of their row."""
    fn, schema = map_in_arrow(format, catalog, table, column, keep, df.schema, mode,
                              time_type_enabled(df.sparkSession), columns, **options)
    return df.mapInArrow(fn, schema)


def decode_tables(df, format: str, catalog=None, column: str = "value", keep=(),
                  mode: str = "PERMISSIVE", columns=None, **options) -> dict:
    """One DataFrame per catalog table; in PERMISSIVE mode also the key None: the records that
    could not be attributed to a table (`_corrupt_record`, `_error`). `columns`: only those
    envelope columns (an image's named table columns: those of each table that has them)."""
    config_json = _config(format, catalog, mode, options, columns)
    dec = _decoder(config_json)
    if dec.catalog is None:
        _table_of(dec, None)
    keys = [t.name for t in dec.catalog.tables] + ([None] if dec.mode == "PERMISSIVE" else [])
    if dec.columns is not None:     # a table column no table has is unknown
        Projection(dec.columns).check(sorted({c.name for t in dec.catalog.tables
                                              for c in t.columns}), "any table of the catalog")
    out = {}
    for key in keys:
        arrow = dec.schema(key, strict=False) if key is not None \
            else dec.unattributable_schema()
        fn, schema = _mapper(config_json, arrow, key, column, keep, df.schema,
                             time_type_enabled(df.sparkSession), of_all=True)
        out[key] = df.mapInArrow(fn, schema)
    return out


def pandas_udf(format: str, catalog=None, table: str | None = None, mode: str = "PERMISSIVE",
               time_type: bool | None = None, columns=None, **options):
    """A pandas UDF: message column → array<envelope struct> (the message's events of the
    table, in order; an empty array for a message without any; `columns`: structs of only
    those envelope columns). An iterator UDF: the messages of a partition are one decoding
    call, as in mapInArrow (SPEC §6)."""
    from typing import Iterator

    from pyspark.sql.functions import pandas_udf as _pandas_udf
    from pyspark.sql.types import ArrayType
    import pandas as pd

    config_json = _config(format, catalog, mode, options, columns)
    dec = _decoder(config_json)
    name = _table_of(dec, table)
    if time_type is None:
        time_type = time_type_enabled()
    element = _struct_type(_spark_arrow_schema(dec.schema(name), time_type))
    arrow = _exchange_schema(element)

    def events(batches: Iterator[pd.Series]) -> Iterator[pd.Series]:
        arrays = (pa.array(s, type=pa.binary(), from_pandas=True) for s in batches)
        for messages, got, index in _decoder(config_json).decode_message_batches(
                arrays, name, batch_size=READ_BATCH_ROWS):
            n = len(messages)
            if got is None:
                yield pd.Series([[] for _ in range(n)])
                continue
            index = index.to_numpy()
            got = got.cast(arrow)
            # events are in message order: the offsets of each message's run of events
            offsets = pa.array(_offsets(index, n), pa.int32())
            structs = got.to_struct_array().combine_chunks()
            yield pa.ListArray.from_arrays(offsets, structs).to_pandas(integer_object_nulls=True)

    # real types, not the strings of `from __future__ import annotations`: Spark reads them
    events.__annotations__ = {"batches": Iterator[pd.Series], "return": Iterator[pd.Series]}
    return _pandas_udf(events, ArrayType(element))


def _offsets(index, n):
    import numpy as np
    counts = np.bincount(index, minlength=n)
    return np.concatenate([[0], np.cumsum(counts)])


# -- files: the data source --------------------------------------------------------------------
class DataSourceOptions:
    """What `.option(...)` carries for the data source: the decoder (format, catalog file or
    JSON text, mode, format options as text), the table, and the paths."""

    RESERVED = ("format", "catalog", "table", "mode", "path", "paths", "batch_rows",
                "time_type", "split_mb", "columns")

    def __init__(self, options, time_type: bool = False, schema=None):
        opts = {str(k).lower(): v for k, v in dict(options).items()}
        if "format" not in opts:
            raise ValueError('the cdcfast data source needs .option("format", …)')
        self.format = opts["format"]
        catalog = opts.get("catalog")
        if catalog is not None and not catalog.lstrip().startswith("{"):
            with open(catalog, encoding="utf-8") as f:
                catalog = f.read()
        catalog = json.loads(catalog) if catalog is not None else None
        self.mode = opts.get("mode", "PERMISSIVE")
        fmt_options = {k: v for k, v in opts.items() if k not in self.RESERVED}
        dec = Decoder(self.format, catalog=catalog, mode=self.mode, columns=opts.get("columns"),
                      **format_class(self.format).options_from_text(fmt_options))
        self.table = _table_of(dec, opts.get("table"))
        if "time_type" in opts:
            time_type = str(opts["time_type"]).lower() == "true"
        self.time_type = time_type
        self.order = None           # a user schema's column order, where it differs
        if schema is not None and schema != self._struct(dec):
            dec = self._user_schema(dec, schema)
        self.config_json = json.dumps(dec.config(), sort_keys=True)
        self.struct = self._struct(dec)
        if self.order is not None:
            self.struct = _reorder(self.struct, self.order)
        self.arrow = _exchange_schema(self.struct)
        self.batch_rows = int(opts.get("batch_rows", READ_BATCH_ROWS))
        self.split_bytes = int(float(opts.get("split_mb", SPLIT_MB)) * (1 << 20))
        if self.split_bytes < 1:
            raise ValueError("split_mb must be positive")
        paths = opts.get("paths")
        self.paths = json.loads(paths) if paths else ([opts["path"]] if "path" in opts else [])
        if not self.paths:
            raise ValueError("give the data source a path: .load(path)")

    def _struct(self, dec: Decoder):
        return _struct_type(_spark_arrow_schema(dec.schema(self.table), self.time_type))

    def _user_schema(self, dec: Decoder, schema) -> Decoder:
        """The Decoder of a user-specified schema (``.schema(...)``), which selects envelope
        columns as `columns` does (SPEC §1): each field an envelope column of the same type,
        an image or flag struct with only some of its table columns narrowed to those."""
        full = self._struct(Decoder(dec.format, catalog=dec.catalog, mode=dec.mode,
                                    **dec.options))
        have = {f.name: f for f in full.fields}
        names = []
        for f in schema.fields:
            mine = have.get(f.name)
            if mine is None:
                raise ValueError(f"the schema names {f.name!r}, which is not an envelope column "
                                 f"of {self.table} (its columns: {', '.join(have)})")
            if f.name in ("before", "after", "changed", "present") \
                    and f.dataType != mine.dataType and hasattr(f.dataType, "fields"):
                names += [f"{f.name}.{c.name}" for c in f.dataType.fields]
            else:
                names.append(f.name)
        if "_error" not in have or "_error" not in [f.name for f in schema.fields]:
            raise ValueError("a schema given to the cdcfast data source must include "
                             "`_error string`: a projection never hides a bad record (SPEC §1)")
        dec = Decoder(dec.format, catalog=dec.catalog, mode=dec.mode, columns=names,
                      **dec.options)
        got = self._struct(dec)
        mine = {f.name: f.dataType for f in got.fields}
        for f in schema.fields:
            if mine[f.name] != f.dataType:
                raise ValueError(f"the schema's {f.name} is {f.dataType.simpleString()}; "
                                 f"the data source gives {mine[f.name].simpleString()}")
        order = [f.name for f in schema.fields]
        if order != [f.name for f in got.fields]:
            self.order = order
        return dec


def list_files(paths, missing_ok: bool = False) -> list:
    """The files of `paths` (files, folders — their files, recursively, hidden ones and
    names starting with '_' left out — or globs), sorted, each once. A path or glob that
    matches nothing is a FileNotFoundError, unless `missing_ok` (a folder stream waiting for
    its first files)."""
    out = set()
    for p in paths:
        p = os.fspath(p)
        hits = _glob.glob(p, recursive=True) if _glob.has_magic(p) else \
            ([p] if os.path.exists(p) else [])
        if not hits and not missing_ok:
            raise FileNotFoundError(f"no file matches {p}")
        for h in hits:
            if os.path.isdir(h):
                for root, dirs, files in os.walk(h):
                    dirs[:] = [d for d in dirs if not d.startswith((".", "_"))]
                    out.update(os.path.join(root, f) for f in files
                               if not f.startswith((".", "_")))
            elif os.path.isfile(h):
                out.add(h)
    return sorted(out)


def file_pieces(config_json: str, path: str, split_bytes: int) -> list:
    """(path, start, end) pieces of a file: the whole file, or for a file bigger than
    split_bytes, pieces cut at record starts where the format's framing can find them."""
    return [(path, a, b) for a, b in _decoder(config_json).file_pieces(path, split_bytes)]


def _reorder(struct, order):
    from pyspark.sql.types import StructType
    return StructType([struct[name] for name in order])


# -- filters the data source applies itself (pushFilters) ----------------------------------------
PUSHED_TEXT = ("table", "schema", "op")     # equality and IN on these text columns
PUSHED_TIME = "commit_ts"                   # ranges (and equality) on the commit time


def pushed_filter(f):
    """A Spark data source filter as (column, operator, value) when the data source applies
    it (equality or IN on `table`, `schema`, `op`; =, <, <=, >, >= on `commit_ts`), else
    None (Spark applies it)."""
    import datetime as dt

    from pyspark.sql.datasource import (EqualTo, GreaterThan, GreaterThanOrEqual, In,
                                        LessThan, LessThanOrEqual)
    path = tuple(getattr(f, "attribute", ()))
    if len(path) != 1:
        return None
    col = path[0]
    if col in PUSHED_TEXT:
        if isinstance(f, EqualTo) and isinstance(f.value, str):
            return (col, "==", f.value)
        if isinstance(f, In) and f.value and all(isinstance(v, str) for v in f.value):
            return (col, "in", tuple(f.value))
        return None
    ops = {EqualTo: "==", GreaterThan: ">", GreaterThanOrEqual: ">=", LessThan: "<",
           LessThanOrEqual: "<="}
    if col == PUSHED_TIME and type(f) in ops and isinstance(f.value, dt.datetime):
        v = f.value
        if v.tzinfo is None:        # Spark hands TIMESTAMP literals as UTC wall clocks
            v = v.replace(tzinfo=dt.timezone.utc)
        delta = v - dt.datetime(1970, 1, 1, tzinfo=dt.timezone.utc)
        return (col, ops[type(f)], delta // dt.timedelta(microseconds=1))
    return None


def _filter_mask(batch: pa.RecordBatch, filters):
    """The rows of a decoded batch that pass every pushed filter (a null compares false, as
    in SQL)."""
    mask = None
    for col, op, value in filters:
        c = batch.column(batch.schema.get_field_index(col))
        if op == "in":
            m = pc.is_in(c, value_set=pa.array(list(value), pa.string()))
            m = pc.and_(m, pc.is_valid(c))
        else:
            v = pa.scalar(value, pa.timestamp("us", tz="UTC")) if col == PUSHED_TIME \
                else pa.scalar(value, pa.string())
            m = {"==": pc.equal, ">": pc.greater, ">=": pc.greater_equal, "<": pc.less,
                 "<=": pc.less_equal}[op](c, v)
        mask = m if mask is None else pc.and_(mask, m)
    return mask


def _read_piece(config_json: str, table: str, piece, batch_rows: int, target: pa.Schema,
                filters=()):
    """One piece's events of `table`, batch by batch (the file is memory-mapped; a piece is
    an input of its own: seq and byte offsets count from its start), as `target` orders
    them, less the rows the pushed `filters` reject (read with the columns they test, then
    left out)."""
    path, start, end = piece
    names = target.names
    dec = _decoder(config_json)
    columns = None
    need = sorted({f[0] for f in filters})
    if need and dec.columns is not None and not set(need) <= set(dec.columns):
        columns = list(dec.columns) + [c for c in need if c not in dec.columns]
    for batch in dec.read_piece(path, start, end, table, batch_rows, columns=columns):
        if filters:
            batch = batch.filter(_filter_mask(batch, filters))
            if not batch.num_rows:
                continue
        if batch.schema.names != names:
            batch = batch.select(names)
        yield _to_spark(batch, target)


def _source_classes(time_type: bool, push_filters: bool = False):
    """The data source classes (built on first use: pyspark is an optional dependency).
    `time_type`: the default of the option of that name (TIME columns as Spark TIME);
    `push_filters`: the batch reader takes the filters it can apply (pushFilters; Spark
    refuses a reader that has the method unless spark.sql.python.filterPushdown.enabled)."""
    from pyspark.sql.datasource import (DataSource, DataSourceReader, DataSourceStreamReader,
                                        InputPartition)
    try:
        from pyspark.sql.streaming.datasource import SupportsTriggerAvailableNow
    except ImportError:                                   # Spark before 4.2
        SupportsTriggerAvailableNow = object

    class FilePartition(InputPartition):
        def __init__(self, piece):
            super().__init__(piece)
            self.piece = piece

    def pieces(opts, files):
        return [FilePartition(p) for f in files
                for p in file_pieces(opts.config_json, f, opts.split_bytes)]

    class Reader(DataSourceReader):
        def __init__(self, opts: DataSourceOptions):
            self.opts = opts
            self.files = list_files(opts.paths)
            self.filters = []       # (column, operator, value) applied in read()

        def partitions(self):
            # one per file, or per piece of a big file cut at record starts
            return pieces(self.opts, self.files)

        def read(self, partition):
            o = self.opts
            return _read_piece(o.config_json, o.table, partition.piece, o.batch_rows, o.arrow,
                               tuple(self.filters))

    class PushingReader(Reader):
        """A Reader that applies the filters `pushed_filter` knows (Spark trusts them and
        does not evaluate them again); a `table` or `schema` equality no row of this table
        can meet leaves it with no partition to read."""

        def pushFilters(self, filters):
            for f in filters:
                got = pushed_filter(f)
                if got is None:
                    yield f
                else:
                    self.filters.append(got)

        def partitions(self):
            owner, _, name = self.opts.table.rpartition(".")
            for col, op, value in self.filters:
                if col in ("table", "schema") and op in ("==", "in"):
                    have = (name if col == "table" else owner).upper()
                    values = [value] if op == "==" else list(value)
                    if have not in (v.upper() for v in values):
                        return []       # (Spark then runs one task with no piece)
            return super().partitions()

        def read(self, partition):
            if getattr(partition, "piece", None) is None:
                return iter(())
            return super().read(partition)

    class StreamReader(DataSourceStreamReader, SupportsTriggerAvailableNow):
        """New files in a folder. A file is new when its (ctime, path) passes the last
        offset's: a file moved in (a rename sets ctime) after the last batch is read once."""

        def __init__(self, opts: DataSourceOptions):
            self.opts = opts
            self.paths = opts.paths
            self.target = None

        def _files(self):
            keyed = []
            for f in list_files(self.paths, missing_ok=True):
                try:
                    keyed.append((os.stat(f).st_ctime_ns, f))
                except FileNotFoundError:
                    pass
            return sorted(keyed)

        def initialOffset(self):
            return {"ctime_ns": -1, "path": ""}

        def latestOffset(self, start=None, limit=None):
            files = self._files()
            if self.target is not None:
                files = [k for k in files if k <= self.target]
            if not files:
                return start if start is not None else self.initialOffset()
            ctime, path = files[-1]
            return {"ctime_ns": ctime, "path": path}

        def prepareForTriggerAvailableNow(self):
            files = self._files()
            self.target = files[-1] if files else (-1, "")

        def partitions(self, start, end):
            lo = (start["ctime_ns"], start["path"])
            hi = (end["ctime_ns"], end["path"])
            return pieces(self.opts, [k[1] for k in self._files() if lo < k <= hi])

        def read(self, partition):
            o = self.opts
            return _read_piece(o.config_json, o.table, partition.piece, o.batch_rows, o.arrow)

        def commit(self, end):
            pass

    class CdcfastDataSource(DataSource):
        """spark.read.format("cdcfast").option("format", …).option("catalog", …)
        .option("table", …).load(path)."""

        @classmethod
        def name(cls):
            return "cdcfast"

        def _opts(self, schema=None):
            return DataSourceOptions(self.options, time_type, schema)

        def schema(self):
            return self._opts().struct

        def reader(self, schema):
            return (PushingReader if push_filters else Reader)(self._opts(schema))

        def streamReader(self, schema):
            return StreamReader(self._opts(schema))

    return CdcfastDataSource


@functools.lru_cache(maxsize=4)
def data_source(time_type: bool = False, push_filters: bool = False):
    """The DataSource class registered as "cdcfast"."""
    return _source_classes(time_type, push_filters)


def filter_pushdown_enabled(spark) -> bool:
    """Whether the session lets Python data sources take filters
    (spark.sql.python.filterPushdown.enabled, off by default)."""
    return str(spark.conf.get("spark.sql.python.filterPushdown.enabled", "false")).lower() \
        == "true"


def register(spark) -> None:
    """Make ``spark.read.format("cdcfast")`` and ``spark.readStream.format("cdcfast")``
    available in this session (TIME columns as the session allows: time_type_enabled).
    Where the session enables spark.sql.python.filterPushdown.enabled (set it before this
    call), batch reads apply equality and IN filters on `table`, `schema`, `op` and ranges
    of `commit_ts` themselves, before Spark receives the rows."""
    spark.dataSource.register(data_source(time_type_enabled(spark),
                                          filter_pushdown_enabled(spark)))


# -- a local session, as the CLI, the demo, the bench and the tests start it ---------------------
LOOPBACK = "127.0.0.1"


def local_session(cores: str = "*", app: str = "cdcfast", quiet: bool = True, **conf):
    """The active SparkSession, else a new local one on `cores` (``local[cores]``) that
    listens on loopback only (``SPARK_LOCAL_IP``, ``spark.driver.bindAddress`` and
    ``spark.driver.host`` 127.0.0.1; no web UI), with UTC session time, TIMESTAMP_MICROS
    Parquet and `conf` on top. `quiet`: the JVM's own output (its banner, log4j lines,
    Python worker noise) goes to a log file (`spark_log()` names it) instead of this
    process's stderr, and Spark logs errors only."""
    from pyspark.sql import SparkSession
    active = SparkSession.getActiveSession()
    if active is not None:
        return active
    import sys
    os.environ["SPARK_LOCAL_IP"] = LOOPBACK
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    os.environ.setdefault("PYSPARK_DRIVER_PYTHON", sys.executable)
    settings = {"spark.driver.bindAddress": LOOPBACK, "spark.driver.host": LOOPBACK,
                "spark.ui.enabled": "false", "spark.ui.showConsoleProgress": "false",
                "spark.sql.session.timeZone": "UTC",
                "spark.sql.parquet.outputTimestampType": "TIMESTAMP_MICROS", **conf}
    builder = SparkSession.builder.master(f"local[{cores}]").appName(app)
    for k, v in settings.items():
        builder = builder.config(k, v)
    if not quiet:
        session = builder.getOrCreate()
    else:
        with _stderr_to(spark_log()):
            session = builder.getOrCreate()
    session.sparkContext.setLogLevel("ERROR")
    return session


def spark_log() -> str:
    """Where a quiet `local_session` sends the JVM's output."""
    import tempfile
    return os.path.join(tempfile.gettempdir(), f"cdcfast-spark-{os.getuid()}.log")


class _stderr_to:
    """While the JVM starts, file descriptor 2 is `path` (the JVM, and the Python workers it
    starts later, inherit it), and this process's sys.stderr a copy of the real one."""

    def __init__(self, path):
        self.path = path

    def __enter__(self):
        import sys
        sys.stderr.flush()
        self.saved_fd = os.dup(2)
        log = os.open(self.path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        os.dup2(log, 2)
        os.close(log)
        self.saved_stderr = sys.stderr
        sys.stderr = os.fdopen(os.dup(self.saved_fd), "w", buffering=1)
        return self

    def __exit__(self, *exc):
        import sys
        sys.stderr.flush()
        sys.stderr.close()
        sys.stderr = self.saved_stderr
        os.dup2(self.saved_fd, 2)
        os.close(self.saved_fd)
        return False
