"""cdcfast in Spark (SPEC §6): the decoders run inside the executors' Python workers.

Two ways in:

- **A message column** (Kafka values, a table of raw messages): ``decode`` / ``decode_tables``
  / ``map_in_arrow`` run the native decoder in ``mapInArrow``, one Arrow batch of messages at a
  time; ``pandas_udf`` gives each message its events as an array of envelope structs.
- **Files**: ``register(spark)`` adds the data source ``cdcfast`` (PySpark's Python Data Source
  API). The executors' Python workers memory-map the files and yield Arrow record batches, so
  the file bytes never pass through the JVM: ``spark.read.format("cdcfast")`` over a file, a
  folder or a glob (small files packed into about one partition per core, big files cut
  into byte ranges whose tasks find their own record starts: cdcfast.spark_files), and
  ``spark.readStream.format("cdcfast")`` over a folder where new files arrive.

Every Spark path refuses to run the slow pure-Python reference decoders in a worker whose
Python cannot load the compiled kernels (``allow_reference=True`` or
``CDCFAST_ALLOW_REFERENCE=1`` lets it): see native_check.

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
import json
import os
import re
import sys

import pyarrow as pa
import pyarrow.compute as pc

from . import native_available
from . import Applier
from .api import Decoder, Projection
from .formats import get as format_class
from .spark_files import OPEN_COST, list_files, local_path, plan

__all__ = ["decode", "decode_tables", "map_in_arrow", "pandas_udf", "spark_schema", "register",
           "flag_sql", "DataSourceOptions", "native_check", "list_files", "net_changes",
           "apply_changes", "apply_changes_to_delta"]

READ_BATCH_ROWS = 65536         # rows per Arrow batch a data source task yields
SPLIT_MB = 128                  # files bigger than this are read in pieces of about this size


# -- decoders, rebuilt once per Python worker ----------------------------------------------------
@functools.lru_cache(maxsize=16)
def _decoder(config_json: str) -> Decoder:
    dec = Decoder.from_config(json.loads(config_json))
    dec.threads = 1         # a Spark task is one core's work: Spark runs a task per core
    return dec


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


# -- the compiled kernels, or a clear refusal ---------------------------------------------------
ALLOW_REFERENCE_ENV = "CDCFAST_ALLOW_REFERENCE"


def reference_allowed(allow_reference=False) -> bool:
    """Whether a Spark path may run the reference decoders: `allow_reference` (a bool or the
    text of the data source option) or CDCFAST_ALLOW_REFERENCE set (not "", "0", "false")."""
    if isinstance(allow_reference, str):
        allow_reference = _truth("allow_reference", allow_reference)
    env = os.environ.get(ALLOW_REFERENCE_ENV, "").strip().lower()
    return bool(allow_reference) or env not in ("", "0", "false", "no")


def native_check(allow_reference=False, native: bool | None = None) -> None:
    """Refuse to decode in a Python whose cdcfast cannot load its compiled kernels (`native`:
    whether it can; None: `cdcfast.native_available()`), unless reference_allowed: there
    the package would fall back, warning only in the worker's stderr, to the pure-Python
    reference decoders, tens of times slower. Runs in every Spark task (data source reads,
    mapInArrow, pandas_udf) and on the driver when a plan is made; in a task, the error is
    the task failure the driver reports."""
    if native is None:
        native = native_available()
    if native or reference_allowed(allow_reference):
        return
    import socket
    import cdcfast
    raise RuntimeError(
        "cdcfast's compiled kernels do not load in the Python that runs this (host "
        f"{socket.gethostname()}, Python {sys.executable} {sys.version.split()[0]}, cdcfast "
        f"from {os.path.dirname(cdcfast.__file__)}), so it would run the slow pure-Python "
        "reference decoders. A wheel shipped in spark.submit.pyFiles (or any zip) cannot load "
        "compiled modules: install cdcfast on every executor, or ship a packed virtual "
        "environment (venv-pack) with spark.archives and point spark.pyspark.python into it "
        "(docs/spark.md). To run the reference decoders anyway: allow_reference=True (the "
        "data source's .option(\"allow_reference\", \"true\"), the keyword of cs.decode, "
        f"cs.decode_tables, cs.map_in_arrow and cs.pandas_udf) or {ALLOW_REFERENCE_ENV}=1 in "
        "the workers' environment (spark.executorEnv.…)")


def _truth(name: str, text) -> bool:
    low = str(text).strip().lower()
    if low not in ("1", "true", "yes", "0", "false", "no"):
        raise ValueError(f"option {name} takes true or false, not {text!r}")
    return low in ("1", "true", "yes")


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
    return pa.schema([f.with_type(_spark_arrow_type(f.type, time_type)) for f in schema],
                     metadata=schema.metadata)


def _to_spark(batch: pa.RecordBatch, target: pa.Schema) -> pa.RecordBatch:
    return batch if batch.schema.equals(target) else batch.cast(target)


def _struct_type(arrow_schema: pa.Schema):
    """Spark's StructType of an Arrow schema: a timestamp with a zone (UTC) is TimestampType,
    one without (Db2's TIMESTAMP: a wall clock) TimestampNTZType."""
    from pyspark.sql.pandas.types import from_arrow_schema
    st = from_arrow_schema(arrow_schema, prefer_timestamp_ntz=True)
    key = (arrow_schema.metadata or {}).get(b"cdcfast.key")
    if key is not None and "after" in st.names:
        # the table's key, where cs.net_changes and cs.apply_changes find it: Spark keeps a
        # column's metadata through projections and Parquet, and drops the schema's
        st["after"].metadata = {**(st["after"].metadata or {}), KEY_META: json.loads(key)}
    return st


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


def flag_sql(flags: str, catalog, table: str, column: str) -> str:
    """A Spark SQL test of one table column's bit in a bitmask flag column (`flags`:
    "changed" or "present", decoded with flags="bitmask"): ``getbit(changed, j) = 1`` for a
    table of up to 64 columns (an int64), a byte test of the binary bitmask beyond. Null
    where the flags are null (a truncate)."""
    from . import Catalog
    t = Catalog.coerce(catalog).get(table)
    if t is None:
        raise ValueError(f"table {table!r} is not in the catalog")
    names = [c.name for c in t.columns]
    if column not in names:
        raise ValueError(f"{column!r} is not a column of {t.name} (its columns: "
                         f"{', '.join(names)})")
    j = names.index(column)
    if len(names) <= 64:
        return f"(getbit(`{flags}`, {j}) = 1)"
    return (f"((cast(conv(hex(substring(`{flags}`, {j // 8 + 1}, 1)), 16, 10) as int) "
            f"& {1 << (j % 8)}) != 0)")


# -- a message column: mapInArrow ----------------------------------------------------------------
def _message_fn(config_json, table, column, keep, target, of_all=False,
                allow_reference=False):
    """The function mapInArrow runs: batches of input rows → batches of events (+ keep).
    `of_all`: the output `table` (None: the unattributable records) of decode_tables, not
    decode(table=…), which also holds the unattributable records."""

    def fn(batches):
        native_check(allow_reference)
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
                 time_type: bool | None = None, columns=None, allow_reference: bool = False,
                 **options):
    """(fn, schema) for ``df.mapInArrow(fn, schema)``: each input row's `column` is one
    message; its events come out (only the envelope `columns` when given) with the `keep`
    input columns appended. `allow_reference`: run the reference decoders where the kernels
    do not load (native_check)."""
    native_check(allow_reference)
    config_json = _config(format, catalog, mode, options, columns)
    dec = _decoder(config_json)
    name = _table_of(dec, table)
    if time_type is None:
        time_type = time_type_enabled()
    return _mapper(config_json, dec.schema(name), name, column, keep, input_schema, time_type,
                   allow_reference=allow_reference)


def _mapper(config_json, arrow_schema, table, column, keep, input_schema, time_type,
            of_all=False, allow_reference=False):
    arrow = _spark_arrow_schema(arrow_schema, time_type)
    schema = _struct_type(arrow)
    for k in keep:
        if input_schema is None:
            raise ValueError("keep=… needs input_schema (the input DataFrame's schema)")
        schema = schema.add(input_schema[k])
    target = _exchange_schema(schema)
    return _message_fn(config_json, table, column, tuple(keep), target, of_all,
                       allow_reference), schema


def decode(df, format: str, catalog=None, table: str | None = None, column: str = "value",
           keep=(), mode: str = "PERMISSIVE", columns=None, allow_reference: bool = False,
           **options):
    """The events of one table decoded from a DataFrame's message column, as a DataFrame
    (mapInArrow); `columns`: only those envelope columns (SPEC §1: what is not named is not
    built, and Spark converts fewer fields); `keep` input columns are copied onto every
    event of their row."""
    fn, schema = map_in_arrow(format, catalog, table, column, keep, df.schema, mode,
                              time_type_enabled(df.sparkSession), columns,
                              allow_reference=allow_reference, **options)
    return df.mapInArrow(fn, schema)


def decode_tables(df, format: str, catalog=None, column: str = "value", keep=(),
                  mode: str = "PERMISSIVE", columns=None, allow_reference: bool = False,
                  **options) -> dict:
    """One DataFrame per catalog table; in PERMISSIVE mode also the key None: the records that
    could not be attributed to a table (`_corrupt_record`, `_error`). `columns`: only those
    envelope columns (an image's named table columns: those of each table that has them)."""
    native_check(allow_reference)
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
                             time_type_enabled(df.sparkSession), of_all=True,
                             allow_reference=allow_reference)
        out[key] = df.mapInArrow(fn, schema)
    return out


def pandas_udf(format: str, catalog=None, table: str | None = None, mode: str = "PERMISSIVE",
               time_type: bool | None = None, columns=None, allow_reference: bool = False,
               **options):
    """A pandas UDF: message column → array<envelope struct> (the message's events of the
    table, in order; an empty array for a message without any; `columns`: structs of only
    those envelope columns). An iterator UDF: the messages of a partition are one decoding
    call, as in mapInArrow (SPEC §6)."""
    from typing import Iterator

    from pyspark.sql.functions import pandas_udf as _pandas_udf
    from pyspark.sql.types import ArrayType
    import pandas as pd

    native_check(allow_reference)
    config_json = _config(format, catalog, mode, options, columns)
    dec = _decoder(config_json)
    name = _table_of(dec, table)
    if time_type is None:
        time_type = time_type_enabled()
    element = _struct_type(_spark_arrow_schema(dec.schema(name), time_type))
    arrow = _exchange_schema(element)

    def events(batches: Iterator[pd.Series]) -> Iterator[pd.Series]:
        native_check(allow_reference)
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
    JSON text, mode, format options as text), the table, the paths and how they are read.

    `planning`: what ``register(spark)`` captured in the user's Python (see Planning): its
    working folder, against which relative data and catalog paths resolve (the data source
    itself runs in Python workers whose working folder is the JVM's or an executor's), and
    the session's partitioning settings."""

    RESERVED = ("format", "catalog", "table", "mode", "path", "paths", "batch_rows",
                "time_type", "split_mb", "partitions", "pathglobfilter",
                "recursivefilelookup", "allow_reference", "columns", "flags")

    def __init__(self, options, time_type: bool = False, planning=None, schema=None):
        planning = planning or Planning()
        self.planning = planning
        opts = {str(k).lower(): v for k, v in dict(options).items()}
        if "format" not in opts:
            raise ValueError('the cdcfast data source needs .option("format", …)')
        self.format = opts["format"]
        catalog = opts.get("catalog")
        if catalog is not None and not catalog.lstrip().startswith("{"):
            with open(local_path(catalog, planning.cwd), encoding="utf-8") as f:
                catalog = f.read()
        catalog = json.loads(catalog) if catalog is not None else None
        self.mode = opts.get("mode", "PERMISSIVE")
        fmt_options = {k: v for k, v in opts.items() if k not in self.RESERVED}
        dec = Decoder(self.format, catalog=catalog, mode=self.mode, columns=opts.get("columns"),
                      flags=opts.get("flags", "struct"),
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
        split_mb = opts.get("split_mb")
        self.split_bytes = int(float(split_mb) * (1 << 20)) if split_mb is not None \
            else planning.split_bytes
        if self.split_bytes < 1:
            raise ValueError("split_mb must be positive")
        self.partitions = int(opts["partitions"]) if "partitions" in opts \
            else planning.partitions
        if self.partitions < 1:
            raise ValueError("partitions must be at least 1")
        self.name_glob = opts.get("pathglobfilter")
        self.recursive = _truth("recursiveFileLookup", opts.get("recursivefilelookup", "true"))
        self.allow_reference = _truth("allow_reference", opts.get("allow_reference", "false"))
        # byte ranges of big files only where this Python's tasks can find record starts,
        # and, when the reference may run, where the reference can too
        self.splittable = dec.can_split() and (
            not reference_allowed(self.allow_reference) or dec.can_split(native=False))
        paths = opts.get("paths")
        paths = json.loads(paths) if paths else ([opts["path"]] if "path" in opts else [])
        if not paths:
            raise ValueError("give the data source a path: .load(path)")
        self.paths = [local_path(p, planning.cwd) for p in paths]

    def files(self, missing_ok: bool = False) -> list:
        return list_files(self.paths, missing_ok, self.recursive, self.name_glob)

    def plan(self, files) -> list:
        """The partitions (lists of pieces, cdcfast.spark_files) reading `files`."""
        return plan(files, self.split_bytes, self.partitions, self.splittable,
                    self.planning.open_cost)

    def _struct(self, dec: Decoder):
        return _struct_type(_spark_arrow_schema(dec.schema(self.table), self.time_type))

    def _user_schema(self, dec: Decoder, schema) -> Decoder:
        """The Decoder of a user-specified schema (``.schema(...)``), which selects envelope
        columns as `columns` does (SPEC §1): each field an envelope column of the same type,
        an image or flag struct with only some of its table columns narrowed to those."""
        full = self._struct(Decoder(dec.format, catalog=dec.catalog, mode=dec.mode,
                                    flags=dec.flags, **dec.options))
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
                      flags=dec.flags, **dec.options)
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


class Planning:
    """What ``register(spark)`` captures of the user's session for the data source, which
    runs where neither the user's working folder nor the SparkContext can be seen: `cwd`
    (relative paths), `partitions` (about one per core: spark.sql.files.minPartitionNum,
    else spark.sql.leafNodeDefaultParallelism, else the larger of the context's
    defaultParallelism and the cores the configuration asks for), `split_bytes`
    (spark.sql.files.maxPartitionBytes, the default of split_mb) and `open_cost`
    (spark.sql.files.openCostInBytes)."""

    def __init__(self, cwd=None, partitions: int = 2, split_bytes: int = SPLIT_MB << 20,
                 open_cost: int = OPEN_COST):
        self.cwd = cwd
        self.partitions = max(1, int(partitions))
        self.split_bytes = int(split_bytes)
        self.open_cost = int(open_cost)

    def key(self):
        return (self.cwd, self.partitions, self.split_bytes, self.open_cost)

    @classmethod
    def of(cls, spark) -> "Planning":
        def conf(name):
            try:
                v = spark.conf.get(name, None)
            except Exception:           # noqa: BLE001 (a key this Spark does not know)
                return None
            return None if v in (None, "") else str(v)

        partitions = conf("spark.sql.files.minPartitionNum") \
            or conf("spark.sql.leafNodeDefaultParallelism")
        if partitions is None:
            partitions = _session_cores(spark, conf)
        split = conf("spark.sql.files.maxPartitionBytes")
        cost = conf("spark.sql.files.openCostInBytes")
        return cls(os.getcwd(), int(partitions),
                   _bytes(split) if split else SPLIT_MB << 20,
                   _bytes(cost) if cost else OPEN_COST)


def _session_cores(spark, conf) -> int:
    """About how many cores the session's executors have: the context's defaultParallelism
    (on a cluster, the cores registered so far, at least 2) or, when larger, what the
    configuration asks for (spark.cores.max; spark.executor.instances × executor cores)."""
    try:
        cores = int(spark.sparkContext.defaultParallelism)
    except Exception:                   # noqa: BLE001 (Spark Connect: no SparkContext)
        cores = int(conf("spark.default.parallelism") or 2)
    asked = conf("spark.cores.max")
    if asked is None and conf("spark.executor.instances"):
        asked = int(conf("spark.executor.instances")) * int(conf("spark.executor.cores") or 1)
    return max(cores, int(asked or 0))


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


def _bytes(text: str) -> int:
    """A Spark byte size: "4194304", "4m", "128MB", "1g" …"""
    m = re.fullmatch(r"\s*(\d+)\s*([kmgtp]?)i?b?\s*", str(text).lower())
    if not m:
        raise ValueError(f"not a byte size: {text!r}")
    return int(m.group(1)) << (10 * " kmgtp".index(m.group(2) or " "))


def _read_pieces(o: DataSourceOptions, partition, filters=()):
    """A partition's events, piece by piece in order: each piece (path, start, end, size) is
    an input of its own, read from its first record start at or after `start` to the first
    at or after `end` (Decoder.read_range: the task finds them; a whole file when start is 0
    and end its size); seq and byte offsets count from that first record. Rows the pushed
    `filters` reject are left out (read with the columns they test, then dropped)."""
    native_check(o.allow_reference)
    dec = _decoder(o.config_json)
    names = o.arrow.names
    columns = None
    need = sorted({f[0] for f in filters})
    if need and dec.columns is not None and not set(need) <= set(dec.columns):
        columns = list(dec.columns) + [c for c in need if c not in dec.columns]
    for path, start, end, size in getattr(partition, "pieces", None) or ():
        for batch in dec.read_range(path, start, end if end < size else 1 << 62, o.table,
                                    o.batch_rows, columns):
            if filters:
                batch = batch.filter(_filter_mask(batch, filters))
                if not batch.num_rows:
                    continue
            if batch.schema.names != names:
                batch = batch.select(names)
            yield _to_spark(batch, o.arrow)


def _source_classes(time_type: bool, planning: Planning, push_filters: bool = False):
    """The data source classes (built on first use: pyspark is an optional dependency).
    `time_type`: the default of the option of that name (TIME columns as Spark TIME);
    `planning`: what register() captured of the user's session; `push_filters`: the batch
    reader takes the filters it can apply (pushFilters; Spark refuses a reader that has the
    method unless spark.sql.python.filterPushdown.enabled)."""
    from pyspark.sql.datasource import (DataSource, DataSourceReader, DataSourceStreamReader,
                                        InputPartition)
    try:
        from pyspark.sql.streaming.datasource import SupportsTriggerAvailableNow
    except ImportError:                                   # Spark before 4.2
        SupportsTriggerAvailableNow = object

    class FilePartition(InputPartition):
        """Pieces of files, read one after the other by one task."""

        def __init__(self, pieces):
            super().__init__(pieces)
            self.pieces = pieces

    def partitions(opts, files):
        return [FilePartition(p) for p in opts.plan(files)]

    class Reader(DataSourceReader):
        def __init__(self, opts: DataSourceOptions):
            self.opts = opts
            self.files = opts.files()
            self.filters = []       # (column, operator, value) applied in read()

        def partitions(self):
            # small files packed into about one partition per core, big ones cut into byte
            # ranges (cdcfast.spark_files.plan): no file byte is read here
            return partitions(self.opts, self.files)

        def read(self, partition):
            return _read_pieces(self.opts, partition, tuple(self.filters))

    class PushingReader(Reader):
        """A Reader that applies the filters `pushed_filter` knows (Spark trusts them and
        does not evaluate them again); a `table` or `schema` equality no row of this table
        can meet leaves it with no partition to read (Spark then runs one task with none)."""

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
                        return []
            return super().partitions()

    class StreamReader(DataSourceStreamReader, SupportsTriggerAvailableNow):
        """New files in a folder. A file is new when its (ctime, path) passes the last
        offset's: a file moved in (a rename sets ctime) after the last batch is read once."""

        def __init__(self, opts: DataSourceOptions):
            self.opts = opts
            self.target = None

        def _files(self):
            keyed = []
            for f in self.opts.files(missing_ok=True):
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
            return partitions(self.opts, [k[1] for k in self._files() if lo < k <= hi])

        def read(self, partition):
            return _read_pieces(self.opts, partition)

        def commit(self, end):
            pass

    class CdcfastDataSource(DataSource):
        """spark.read.format("cdcfast").option("format", …).option("catalog", …)
        .option("table", …).load(path)."""

        @classmethod
        def name(cls):
            return "cdcfast"

        def _opts(self, schema=None):
            return DataSourceOptions(self.options, time_type, planning, schema)

        def schema(self):
            return self._opts().struct

        def reader(self, schema):
            opts = self._opts(schema)
            native_check(opts.allow_reference)          # the driver, at plan time
            return (PushingReader if push_filters else Reader)(opts)

        def streamReader(self, schema):
            opts = self._opts(schema)
            native_check(opts.allow_reference)
            return StreamReader(opts)

    return CdcfastDataSource


@functools.lru_cache(maxsize=8)
def _data_source(time_type: bool, planning_key: tuple, push_filters: bool):
    return _source_classes(time_type, Planning(*planning_key), push_filters)


def data_source(time_type: bool = False, planning: Planning | None = None,
                push_filters: bool = False):
    """The DataSource class registered as "cdcfast"."""
    return _data_source(time_type, (planning or Planning()).key(), push_filters)


def filter_pushdown_enabled(spark) -> bool:
    """Whether the session lets Python data sources take filters
    (spark.sql.python.filterPushdown.enabled, off by default)."""
    return str(spark.conf.get("spark.sql.python.filterPushdown.enabled", "false")).lower() \
        == "true"


def register(spark) -> None:
    """Make ``spark.read.format("cdcfast")`` and ``spark.readStream.format("cdcfast")``
    available in this session (TIME columns as the session allows: time_type_enabled).

    The registered class carries what the data source cannot see where it runs (Planning):
    this process's working folder — relative data and catalog paths resolve against it, so
    after an ``os.chdir`` call register again — and the session's core count and file
    settings, which size the partitions: on a cluster whose executors are still joining,
    register once they are up (or give ``.option("partitions", N)``).

    Where the session enables spark.sql.python.filterPushdown.enabled (set it before this
    call), batch reads apply equality and IN filters on `table`, `schema`, `op` and ranges
    of `commit_ts` themselves, before Spark receives the rows."""
    _check_python_exec(spark)
    spark.dataSource.register(data_source(time_type_enabled(spark), Planning.of(spark),
                                          filter_pushdown_enabled(spark)))


def _check_python_exec(spark) -> None:
    """Warn when the session's worker Python is a relative path that does not exist here:
    Spark plans a Python data source in a Python worker it starts on the driver with that
    same path (a venv-pack archive's ./environment/bin/python must be unpacked beside the
    driver too, docs/spark.md)."""
    try:
        exe = spark.sparkContext.pythonExec
    except Exception:                   # noqa: BLE001 (Spark Connect: no SparkContext)
        return
    if exe and os.sep in exe and not os.path.isabs(exe) and not os.path.exists(exe):
        import warnings
        warnings.warn(f"PYSPARK_PYTHON is {exe!r}, which does not exist from this driver's "
                      f"working folder {os.getcwd()}: Spark plans the cdcfast data source in "
                      "a Python worker it starts on the driver with that path; unpack the "
                      "same environment there (docs/spark.md, on a cluster)", RuntimeWarning,
                      stacklevel=3)


# -- apply: change events to tables, on the executors (SPEC §9) --------------------------------
# A DataFrame of one table's events is folded key by key: groupBy(<the event's key>) and
# applyInArrow, where each group's events go through cdcfast.Applier. Two things reach across
# keys, and are made group-local before the shuffle:
# - a truncate empties every key: each truncate is copied into every key's group (a cross
#   join of the truncates with the keys); net_changes then gives the last truncate once;
# - an update that moves its key deletes the old key: a copy of it with op 'd' goes to the
#   old key's group, where the before image's key is the key a delete reads.
# Replays (a second event of a key at the same position) are dropped before, in log order
# then input order, so that a moved update that is a replay moves nothing, as in Applier; in
# a group, the events then get positions of their own (change_pos null, seq their rank in
# log order, commit_pos kept: SCD2 reads it) so that no copy is taken for a replay there.
ORDER = "__cdcfast_order"       # the input order (monotonically_increasing_id)
ORIG = ("__cdcfast_change_pos", "__cdcfast_seq")    # a group's events' own positions
KEYS_PREFIX = "__cdcfast_k"
KEY_META = "cdcfast.key"        # the key columns, as the `after` column's Spark metadata
EVENT_OPS = ("c", "r", "u", "d", "t")   # the ops Applier applies (SPEC §3); others: skipped


def _key_columns(df, key) -> list:
    """`key=` as a list, else the key cs.decode wrote into the `after` column's metadata."""
    if key:
        return [key] if isinstance(key, str) else list(key)
    names = df.schema.names
    if "after" in names:
        meta = df.schema["after"].metadata or {}
        if meta.get(KEY_META):
            return list(meta[KEY_META])
    raise ValueError("key=… names the table's key columns (the DataFrame's `after` column "
                     "carries no cdcfast.key: its catalog table names none, or the column "
                     "did not come from cs.decode or the cdcfast data source)")


def _check_events_df(df, key) -> None:
    need = ("op", "commit_pos", "change_pos", "seq", "before", "after", "present", "_error")
    lacks = [n for n in need if n not in df.schema.names]
    if lacks:
        raise ValueError(f"events must be one table's envelope as cs.decode returns it "
                         f"(present as a struct: flags='struct'); missing: {', '.join(lacks)}")
    columns = [f.name for f in df.schema["after"].dataType.fields]
    missing = [k for k in key if k not in columns]
    if missing:
        raise ValueError(f"key column(s) {', '.join(missing)} not among the table's columns "
                         f"({', '.join(columns)})")


def _after_position(since):
    """A Spark Column: the row's log position is after `since` (bytewise, nulls first)."""
    from pyspark.sql import functions as F
    gt, eq = F.lit(False), F.lit(True)
    for name, value in zip(("commit_pos", "change_pos", "seq"), since):
        c = F.col(name)
        if value is None:
            g, e = c.isNotNull(), c.isNull()
        else:
            v = F.lit(bytearray(value)) if name != "seq" else F.lit(int(value))
            g, e = F.coalesce(c > v, F.lit(False)), F.coalesce(c == v, F.lit(False))
        gt, eq = gt | (eq & g), eq & e
    return gt


def _grouped(df, key, since=None):
    """(events ready for groupBy(keys), key column names, the applicable truncates): the
    applicable events of `df` with their key in columns __cdcfast_k<i> and their input order
    in __cdcfast_order, replays dropped, a delete of the old key added for each moved key,
    every truncate copied into every key's group."""
    from pyspark.sql import Window
    from pyspark.sql import functions as F
    ks = [f"{KEYS_PREFIX}{i}" for i in range(len(key))]
    ev = df.withColumn(ORDER, F.monotonically_increasing_id())
    ok = F.col("_error").isNull() & F.col("op").isin(*EVENT_OPS)
    if since is not None:
        ok = ok & _after_position(since)
    ev = ev.filter(ok)
    is_d = F.col("op") == "d"
    keyed = ev.filter(F.col("op") != "t").select(
        "*", *[F.when(is_d, F.col("before")[k]).otherwise(F.col("after")[k]).alias(c)
               for k, c in zip(key, ks)])
    for c in ks:
        keyed = keyed.filter(F.col(c).isNotNull())
    # a replay: an event of the same key at the same position after another (input order)
    first = Window.partitionBy(*ks, "commit_pos", "change_pos", "seq").orderBy(ORDER)
    keyed = keyed.withColumn("__cdcfast_n", F.row_number().over(first)) \
        .filter(F.col("__cdcfast_n") == 1).drop("__cdcfast_n")
    # a moved key: the update, and a copy of it as a delete of the old key (one pass: explode)
    old = [F.col("before")[k] for k in key]
    moved = (F.col("op") == "u") & F.col("before").isNotNull()
    differs = F.lit(False)
    for k, o in zip(key, old):
        moved = moved & o.isNotNull()
        differs = differs | ~o.eqNullSafe(F.col("after")[k])
    copy = "__cdcfast_copy"
    events = keyed.withColumn(copy, F.explode(
        F.when(moved & differs, F.array(F.lit(False), F.lit(True)))
        .otherwise(F.array(F.lit(False)))))
    events = events.withColumn("op", F.when(F.col(copy), F.lit("d")).otherwise(F.col("op")))
    for c, o in zip(ks, old):
        events = events.withColumn(c, F.when(F.col(copy), o).otherwise(F.col(c)))
    events = events.drop(copy)
    # every key any image names (a group of truncates only gives nothing), from the input as
    # it is: the windowed events are computed once
    images = F.explode(F.array(*[F.struct(*[F.col(img)[k].alias(c) for k, c in zip(key, ks)])
                                 for img in ("after", "before")]))
    keys = df.select(images.alias("__cdcfast_key")).select("__cdcfast_key.*")
    for c in ks:
        keys = keys.filter(F.col(c).isNotNull())
    truncates = ev.filter(F.col("op") == "t")
    copies = truncates.crossJoin(keys.distinct())
    return events.unionByName(copies), ks, truncates


def _arrow_plain(t: pa.DataType) -> pa.DataType:
    """Arrow's type as Applier reads it: large and view strings and binaries as the plain."""
    if pa.types.is_large_string(t) or pa.types.is_string_view(t):
        return pa.string()
    if pa.types.is_large_binary(t) or pa.types.is_binary_view(t):
        return pa.binary()
    if pa.types.is_struct(t):
        return pa.struct([f.with_type(_arrow_plain(f.type)) for f in t])
    if pa.types.is_list(t) or pa.types.is_large_list(t):
        return pa.list_(t.value_field.with_type(_arrow_plain(t.value_type)))
    return t


def _group_events(t: pa.Table) -> pa.Table:
    """A group's events in log order, then input order, each at a position of its own: its
    change_pos and seq kept in ORIG, change_pos null and seq its rank (commit_pos kept)."""
    plain = pa.schema([f.with_type(_arrow_plain(f.type)) for f in t.schema])
    if not plain.equals(t.schema):
        t = t.cast(plain)
    order = pc.sort_indices(t.select(["commit_pos", "change_pos", "seq", ORDER]),
                            sort_keys=[(n, "ascending", "at_start") for n in
                                       ("commit_pos", "change_pos", "seq", ORDER)])
    t = t.take(order)
    t = t.append_column(ORIG[0], t.column("change_pos")).append_column(ORIG[1], t.column("seq"))
    t = t.set_column(t.schema.get_field_index("change_pos"), "change_pos",
                     pa.nulls(t.num_rows, pa.binary()))
    return t.set_column(t.schema.get_field_index("seq"), "seq",
                        pa.array(range(t.num_rows), t.schema.field("seq").type))


def _of_key(t: pa.Table, cols: list, values: list) -> pa.Table:
    """The rows of t whose key columns `cols` (arrays) equal `values`."""
    mask = None
    for col, v in zip(cols, values):
        m = pc.fill_null(pc.equal(col, pa.scalar(v, col.type)), False)
        mask = m if mask is None else pc.and_(mask, m)
    return t.filter(mask)


def _apply_fn(key, ks, scd, track, net, schema):
    """The function applyInArrow runs on one key's group: its events through Applier."""
    target = _exchange_schema(schema)
    names = target.names

    def fn(t: pa.Table) -> pa.Table:
        values = [t.column(c)[0].as_py() for c in ks] if t.num_rows else []
        t = _group_events(t)
        applier = Applier(key=key, scd=scd, track=track)
        if net:
            out = applier.net_changes(t)
            out = out.filter(pc.fill_null(pc.not_equal(out.column("op"), "t"), True))
            is_d = pc.fill_null(pc.equal(out.column("op"), "d"), False)
            cols = [pc.if_else(is_d, pc.struct_field(out.column("before"), k),
                               pc.struct_field(out.column("after"), k)) for k in key]
            out = _of_key(out, cols, values)
            for name, orig in zip(("change_pos", "seq"), ORIG):
                out = out.set_column(out.schema.get_field_index(name), name, out.column(orig))
        else:
            out = applier.apply(t)
            out = _of_key(out, [out.column(k) for k in key], values)
        out = out.select(names).replace_schema_metadata(None)
        return out.cast(target)

    return fn


def _result_schema(df, scd: int, net: bool):
    from pyspark.sql.types import BinaryType, StructField, StructType, TimestampType
    if net:
        return StructType(list(df.schema.fields))
    fields = [StructField(f.name, f.dataType, True) for f in df.schema["after"].dataType.fields]
    if scd == 2:
        fields += [StructField("__start_at", TimestampType()),
                   StructField("__end_at", TimestampType()),
                   StructField("__start_pos", BinaryType()),
                   StructField("__end_pos", BinaryType())]
    return StructType(fields)


def net_changes(df, key=None, since=None):
    """Per key, the one event that takes it across the DataFrame's events (SPEC §9), as
    cdcfast.net_changes gives it, computed on the executors (grouped by key): a DataFrame of
    the events' schema, with the last truncate, when there is one, as its first row (a
    DataFrame has no order otherwise). `key`: the key columns (default: the `cdcfast.key`
    the `after` column's metadata carries); `since`: skip events at or below that position."""
    key = _key_columns(df, key)
    _check_events_df(df, key)
    grouped, ks, truncates = _grouped(df, key, since)
    schema = _result_schema(df, 1, net=True)
    per_key = grouped.groupBy(*ks).applyInArrow(
        _apply_fn(key, ks, 1, None, True, schema), schema)
    from pyspark.sql import functions as F
    last = truncates.orderBy(*[F.col(n).desc_nulls_last() for n in
                               ("commit_pos", "change_pos", "seq")],
                             F.col(ORDER).desc()).limit(1).select(*schema.names)
    return last.unionByName(per_key)


def apply_changes(df, key=None, scd: int = 1, track=None):
    """The table the DataFrame's events describe (SPEC §9: SCD type 1, its live rows; type
    2, every version of every key), as cdcfast.apply_changes gives it, computed on the
    executors (grouped by key). `key` as for net_changes."""
    Applier(scd=scd, track=track)                  # the arguments' errors, here
    key = _key_columns(df, key)
    _check_events_df(df, key)
    grouped, ks, _ = _grouped(df, key)
    schema = _result_schema(df, scd, net=False)
    return grouped.groupBy(*ks).applyInArrow(_apply_fn(key, ks, scd, track, False, schema),
                                             schema)


def apply_changes_to_delta(df, uri, key=None, scd: int = 1, checkpoint=None, trigger=None,
                           storage_options=None):
    """Apply the DataFrame's events to the Delta table at `uri` through
    cdcfast.delta.apply_changes (one MERGE on the driver, the high-water mark in its commit).

    A batch DataFrame: the events after the table's mark are folded on the executors
    (net_changes; SCD type 2 needs every event, which are collected as they are), the net
    events collected and applied; returns what cdcfast.delta.apply_changes returns (its
    counts are of the net events). A streaming DataFrame: each micro-batch the same way
    (foreachBatch), from `checkpoint` (the query's checkpointLocation), started with
    `trigger` (keywords of DataStreamWriter.trigger, e.g. {"availableNow": True}); returns
    the StreamingQuery. Exactly once: a micro-batch Spark runs again after a restart holds
    only events at or below the mark its first run committed, which are skipped."""
    key = _key_columns(df, key)
    _check_events_df(df, key)
    if not df.isStreaming:
        return _apply_to_delta(df, uri, key, scd, storage_options)

    def batch(micro, batch_id):
        _apply_to_delta(micro, uri, key, scd, storage_options)

    writer = df.writeStream.foreachBatch(batch)
    if checkpoint is not None:
        writer = writer.option("checkpointLocation", os.fspath(checkpoint))
    if trigger:
        writer = writer.trigger(**trigger)
    return writer.start()


def _apply_to_delta(df, uri, key, scd, storage_options):
    import cdcfast.delta as delta
    mark = delta.position(uri, storage_options=storage_options)
    if scd == 1:
        rows = net_changes(df, key, since=mark)
    else:
        rows = df.filter(_after_position(mark)) if mark is not None else df
    return delta.apply_changes(uri, rows.toArrow(), key=key, scd=scd,
                               storage_options=storage_options)


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
