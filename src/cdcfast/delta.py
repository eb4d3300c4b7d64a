"""Change events applied to a Delta Lake table (SPEC §9), through the `deltalake` package
(delta-rs: no JVM, no Spark).

One call is one MERGE, and that commit carries the high-water mark in its commit metadata
(`cdcfast.position`, as `position_text` writes it). The next call reads the mark back from
the table's history and skips every event at or below it, so a batch applied again, or a
run that died before or after its commit and is started over, changes nothing twice:

1. the events are folded into one net event per key (`Applier.net_changes`, since the mark);
2. the net events are flattened into the MERGE's source: the key, `__op` ('u' upsert, 'd'
   delete) and per table column i its value `__v<i>` and whether the batch sent it, `__p<i>`
   (positional names: a column's own name may hold anything);
3. MERGE on the key: a delete deletes the matched row; an upsert sets each column of the
   matched row to the source's value where the batch sent it and keeps the target's
   otherwise, and inserts the row when no row matches. A truncate in the batch also deletes
   every row the source does not match, and the keys' rows start from nulls.
"""
from __future__ import annotations

import json
import os

import pyarrow as pa
import pyarrow.compute as pc

from .apply import KEY, Applier, parse_position, position_text

MARK = "cdcfast.position"               # the commit metadata key of the high-water mark
LOG = ("commit_pos", "change_pos", "seq")
HISTORY_FIRST = 20                      # commits read for the mark before the whole history


def _deltalake():
    try:
        import deltalake
    except ImportError:
        raise ImportError("cdcfast.delta needs the deltalake package: "
                          "pip install cdcfast[delta]") from None
    return deltalake


def _uri(uri) -> str:
    return os.fspath(uri)


# -- the high-water mark ----------------------------------------------------------------------
def position(uri, storage_options=None):
    """The table's high-water mark, (commit_pos, change_pos, seq), as the newest commit that
    carries one wrote it; None when the table does not exist or no commit carries one.
    Other writers' commits (optimize, vacuum, a user's own writes) carry none and are looked
    past."""
    dl = _deltalake()
    uri = _uri(uri)
    if not dl.DeltaTable.is_deltatable(uri, storage_options=storage_options):
        return None
    return _mark(dl.DeltaTable(uri, storage_options=storage_options))


def _mark(dt):
    limit = HISTORY_FIRST
    while True:
        commits = sorted(dt.history(limit), key=lambda c: c.get("version", -1), reverse=True)
        for commit in commits:
            text = commit.get(MARK)
            if text is not None:
                return parse_position(text)
        if limit is None or len(commits) < limit:
            return None
        limit = None                    # not among the newest: read the whole history


def _after(p, since) -> bool:
    """Position p is after `since` in log order (bytewise, nulls first)."""
    def key(pos):
        return tuple(x for v in pos for x in (v is not None, v if v is not None else 0))
    return since is None or key(p) > key(since)


def _last_position(t: pa.Table):
    """The log position of the last row without `_error` (None: there is none): the
    largest commit_pos, then change_pos, then seq, nulls first."""
    rows = t.select(list(LOG)).filter(pc.is_null(t.column("_error")))
    if rows.num_rows == 0:
        return None
    out = []
    for name in LOG:
        col = rows.column(name)
        if col.null_count == len(col):
            out.append(None)
            continue
        top = pc.max(col)
        rows = rows.filter(pc.equal(col, top))
        out.append(top.as_py())
    return tuple(out)


# -- the table ---------------------------------------------------------------------------------
def _table(events) -> pa.Table:
    if isinstance(events, pa.Table):
        return events
    if isinstance(events, pa.RecordBatch):
        return pa.Table.from_batches([events])
    batches = list(events)
    if not batches:
        raise ValueError("no events: an empty iterable of batches has no schema")
    return pa.Table.from_batches(batches)


def _key_of(key, t: pa.Table):
    """The key columns: `key=`, else the events' `cdcfast.key` (None: neither)."""
    if key:
        return [key] if isinstance(key, str) else list(key)
    meta = t.schema.metadata or {}
    return list(json.loads(meta[KEY])) if KEY in meta else None


def _columns(dl, t: pa.Table) -> pa.Schema:
    """The Delta table's columns: the fields of `after`, in order, as Delta Lake types them —
    a TIME column as its text (Delta Lake has no TIME type; `HH:MM:SS.ffffff` sorts in time
    order) — or a ValueError naming the columns Delta Lake cannot hold."""
    if "after" not in t.schema.names or not pa.types.is_struct(t.schema.field("after").type):
        return None                     # Applier says what is wrong with the events
    schema = pa.schema([pa.field(f.name, pa.string() if pa.types.is_time(f.type) else f.type)
                        for f in t.schema.field("after").type])
    bad = []
    for f in schema:
        try:
            dl.Schema.from_arrow(pa.schema([f]))
        except Exception:               # delta-rs raises a bare Exception for a bad type
            bad.append(f"{f.name} ({f.type})")
    if bad:
        raise ValueError(f"Delta Lake has no type for column(s) {', '.join(bad)}")
    return schema


def _lean(t: pa.Table, key) -> pa.Table:
    """The events with only what the fold and the MERGE read: `before` narrowed to the key
    (a delete's key; the rest of the before image, `changed`, `source`, … are never read,
    and the net events would otherwise carry them through a take of every column). As
    they are when the key is unknown: the Applier then says what is wrong."""
    need = ("op", "commit_ts", "commit_pos", "change_pos", "seq", "before", "after",
            "present", "_error")
    if not key or any(n not in t.schema.names for n in need) \
            or not pa.types.is_struct(t.schema.field("before").type):
        return t
    before_type = t.schema.field("before").type
    if any(before_type.get_field_index(k) < 0 for k in key):
        return t
    before = t.column("before")
    narrow = pa.chunked_array(
        [pa.StructArray.from_arrays([pc.struct_field(c, k) for k in key],
                                    fields=[before_type.field(k) for k in key],
                                    mask=c.is_null()) for c in before.chunks],
        type=pa.struct([before_type.field(k) for k in key]))
    lean = t.select(list(need))
    return lean.set_column(lean.schema.get_field_index("before"), "before", narrow) \
        .replace_schema_metadata(t.schema.metadata)


def _quote(name: str) -> str:
    """A column name as DataFusion's SQL reads it whatever it holds (case, spaces, quotes)."""
    return "`" + name.replace("`", "``") + "`"


def _source(net: pa.Table, columns: pa.Schema, key: list, target: pa.Schema, truncated: bool):
    """The MERGE's source: one row per net event (see the module docstring), its values cast
    to the Delta table's types."""
    op = net.column("op").combine_chunks()
    is_d = pc.fill_null(pc.equal(op, "d"), False)
    before, after = net.column("before").combine_chunks(), net.column("after").combine_chunks()
    present = net.column("present").combine_chunks()
    cols, names = [pc.if_else(is_d, "d", "u")], ["__op"]
    for i, f in enumerate(columns):
        value = pc.struct_field(after, f.name)
        if f.name in key:               # a delete's key is its before image's
            value = pc.if_else(is_d, pc.struct_field(before, f.name), value)
        cols.append(value.cast(target.field(f.name).type))
        names.append(f"__v{i}")
        if not truncated:
            cols.append(pc.fill_null(pc.struct_field(present, f.name), True))
            names.append(f"__p{i}")
    return pa.table(cols, names=names)


def _target_schema(dt) -> pa.Schema:
    return pa.schema(dt.schema().to_arrow())


# -- apply -------------------------------------------------------------------------------------
def apply_changes(uri, events, key=None, scd: int = 1, track=None,
                  storage_options=None) -> dict:
    """Apply one table's change events to the Delta table at `uri` (SCD type 1), creating it
    with the table's columns when it does not exist; one MERGE, whose commit carries the new
    high-water mark. Returns the fold's counts (`Applier.last_stats`), the `position` the
    table holds after the call and the `version` committed (None: nothing to apply, no
    commit)."""
    if scd == 2:
        raise ValueError("scd=2 on Delta: not built yet (SCD type 1 only, docs/apply.md)")
    applier = Applier(key=key, scd=scd, track=track)
    dl = _deltalake()
    uri = _uri(uri)
    t = _table(events)
    columns = _columns(dl, t)
    exists = dl.DeltaTable.is_deltatable(uri, storage_options=storage_options)
    dt = dl.DeltaTable(uri, storage_options=storage_options) if exists else None
    since = _mark(dt) if dt is not None else None
    key = _key_of(key, t)
    net = applier.net_changes(_lean(t, key), since=since)
    stats = dict(applier.last_stats)
    if dt is None:
        dt = dl.DeltaTable.create(uri, columns, mode="ignore", storage_options=storage_options)
    target = _target_schema(dt)
    lacks = [f.name for f in columns if f.name not in target.names]
    if lacks:
        raise ValueError(f"the Delta table at {uri} lacks the table's column(s) "
                         f"{', '.join(lacks)}")
    if net.num_rows == 0:
        return {**stats, "position": since, "version": None}
    high = _last_position(t)
    assert high is not None and _after(high, since), (high, since)
    truncated = net.column("op")[0].as_py() == "t"
    rows = net.slice(1) if truncated else net
    source = _source(rows, columns, key, target, truncated)
    index = {f.name: i for i, f in enumerate(columns)}
    q = _quote
    mark = dl.CommitProperties(custom_metadata={MARK: position_text(high)})
    merge = dt.merge(source, predicate=" AND ".join(f"target.{q(k)} = source.__v{index[k]}"
                                                    for k in key),
                     source_alias="source", target_alias="target", commit_properties=mark)
    merge = merge.when_matched_delete(predicate="source.__op = 'd'")
    # a column the batch did not send keeps the target's value; after a truncate every
    # key's row starts from nulls, so the source's values (null where unsent) are the row
    updates = {q(f.name): f"source.__v{i}" if truncated else
               f"CASE WHEN source.__p{i} THEN source.__v{i} ELSE target.{q(f.name)} END"
               for i, f in enumerate(columns) if f.name not in key}
    if updates:
        merge = merge.when_matched_update(updates, predicate="source.__op = 'u'")
    merge = merge.when_not_matched_insert({q(f.name): f"source.__v{i}"
                                           for i, f in enumerate(columns)},
                                          predicate="source.__op = 'u'")
    if truncated:
        merge = merge.when_not_matched_by_source_delete()
    read = dt.version()
    merge.execute()
    if dt.version() == read:
        # delta-rs commits nothing for a MERGE that changes no row (a delete of a key the
        # table lacks): the mark still goes in, with an empty append
        dl.write_deltalake(dt, target.empty_table(), mode="append", commit_properties=mark)
    return {**stats, "position": high, "version": dt.version()}
