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

SCD type 2 (every version of every key, `__start_at`/`__end_at`/`__start_pos`/`__end_pos`):

1. the keys the batch touches (after the mark) are read off the events, and only their
   current versions (both ends null) are read from the table — every current version when
   the batch holds a truncate;
2. `Applier(scd=2).apply(events, target=<those versions>, since=mark)` continues them: per
   touched key, its former current version (ended, updated in place or as it was) and the
   versions the batch opens;
3. one MERGE: the former current version matches its row on the key, `__start_pos IS NOT
   DISTINCT FROM` (a version opened by an event without a commit_pos has none) and both
   ends null, and is updated, every column; the new versions carry a null merge key, match
   nothing and are inserted.
"""
from __future__ import annotations

import json
import os

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from .apply import (KEY, POSITION, SCD2, Applier, _chunk, _group_ids, _later, _table,
                    parse_position, position_text)

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
    """Apply one table's change events to the Delta table at `uri` (SCD type 1: its live
    rows; type 2: every version of every key, `track=` as for `Applier`), creating it with
    the table's columns (and the SCD2 columns) when it does not exist; one MERGE, whose
    commit carries the new high-water mark. Returns the fold's counts
    (`Applier.last_stats`), the `position` the table holds after the call and the `version`
    committed (None: nothing to apply, no commit)."""
    applier = Applier(key=key, scd=scd, track=track)
    dl = _deltalake()
    uri = _uri(uri)
    t = _table(events)
    columns = _columns(dl, t)
    exists = dl.DeltaTable.is_deltatable(uri, storage_options=storage_options)
    dt = dl.DeltaTable(uri, storage_options=storage_options) if exists else None
    since = _mark(dt) if dt is not None else None
    key = _key_of(key, t)
    if scd == 2:
        return _apply_scd2(dl, uri, dt, t, columns, key, since, applier, storage_options)
    net = applier.net_changes(_lean(t, key), since=since)
    stats = dict(applier.last_stats)
    if dt is None:
        dt = dl.DeltaTable.create(uri, columns, mode="ignore", storage_options=storage_options)
    target = _target_schema(dt)
    _check_target(uri, columns, target)
    if all(n in target.names for n in SCD2):
        raise ValueError(f"the Delta table at {uri} holds versions ({', '.join(SCD2)}): "
                         "apply to it with scd=2")
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
    return {**stats, "position": high, "version": _commit(dl, dt, merge, target, mark)}


def _check_target(uri, columns: pa.Schema, target: pa.Schema) -> None:
    lacks = [f.name for f in columns if f.name not in target.names]
    if lacks:
        raise ValueError(f"the Delta table at {uri} lacks the table's column(s) "
                         f"{', '.join(lacks)}")


def _commit(dl, dt, merge, target: pa.Schema, mark) -> int:
    """Runs the MERGE (None: there is no source row) and returns the version committed."""
    read = dt.version()
    if merge is not None:
        merge.execute()
    if dt.version() == read:
        # delta-rs commits nothing for a MERGE that changes no row (a delete of a key the
        # table lacks): the mark still goes in, with an empty append
        dl.write_deltalake(dt, target.empty_table(), mode="append", commit_properties=mark)
    return dt.version()


# -- SCD type 2 --------------------------------------------------------------------------------
TS, POS = pa.timestamp("us", "UTC"), pa.binary()
VERSION = pa.schema(list(zip(SCD2, (TS, TS, POS, POS))))   # as Applier(scd=2) gives them


def _as_delta(t: pa.Table, columns: pa.Schema) -> pa.Table:
    """The events with their images as the Delta table types them (a TIME column as its
    text): the fold then compares and carries the values the table holds."""
    for name in ("before", "after"):
        typ = t.schema.field(name).type
        want = pa.struct([columns.field(f.name).with_nullable(f.nullable) for f in typ])
        if want != typ:
            t = t.set_column(t.schema.get_field_index(name), name,
                             t.column(name).cast(want))
    return t


def _touched(t: pa.Table, key: list, since):
    """The key of every event after `since` (an event's after-image key and its before-image
    key: an update's, the old one too when it moves the key; a delete's), as a table of the
    key columns without a null — or None when one of them is a truncate, which touches every
    key."""
    live = pc.is_null(t.column("_error"))
    if since is not None:
        live = pc.and_(live, pa.array(_later(t, since)))
    t = t.filter(live)
    if pc.any(pc.fill_null(pc.equal(t.column("op"), "t"), False)).as_py():
        return None
    images = [_chunk(t.column(img)) for img in ("after", "before")]
    keys = pa.table([pa.concat_arrays([pc.struct_field(i, k) for i in images]) for k in key],
                    names=key)
    valid = None
    for c in keys.columns:
        valid = c.is_valid() if valid is None else pc.and_(valid, c.is_valid())
    return keys.filter(valid)


def _current(dt, schema: pa.Schema, key: list, touched) -> pa.Table:
    """The current versions (`__end_at` and `__end_pos` null) of the touched keys (None:
    of every key). The scan reads the table's batches with the filter pushed into it — the
    row groups without a current version, or without a touched value of a fixed-width key
    column, are skipped unread — and keeps, batch by batch, the rows whose key is touched.
    (A text or binary key column is only tested in memory: delta-rs MERGE writes it as a
    view type, which Arrow's row-group statistics cannot compare yet.)"""
    scan = pc.field("__end_at").is_null() & pc.field("__end_pos").is_null()
    ds = dt.to_pyarrow_dataset()
    if touched is None:
        return ds.to_table(columns=schema.names, filter=scan).cast(schema)
    if touched.num_rows == 0:
        return schema.empty_table()
    values = {k: pc.unique(touched.column(k)).cast(schema.field(k).type) for k in key}
    for k in key:
        if not _variable(ds.schema.field(k).type):
            scan &= pc.field(k).isin(values[k].cast(ds.schema.field(k).type))
    parts = []
    for batch in ds.to_batches(columns=schema.names, filter=scan):
        batch = pa.Table.from_batches([batch]).cast(schema)
        hit = None
        for k in key:
            h = pc.is_in(batch.column(k), value_set=values[k])
            hit = h if hit is None else pc.and_(hit, h)
        parts.append(batch.filter(hit))
    rows = pa.concat_tables(parts) if parts else schema.empty_table()
    if len(key) > 1 and rows.num_rows:
        # each column's value is a touched one; the combination must be one too: a row's
        # group is one of the touched keys' (numbered first) or it is not touched
        gids, _ = _group_ids([[touched.column(k) for k in key], [rows.column(k) for k in key]])
        n = touched.num_rows
        seen = gids[:n]
        rows = rows.filter(pa.array(np.isin(gids[n:], seen[seen >= 0])))
    return rows


def _variable(t: pa.DataType) -> bool:
    return (pa.types.is_string(t) or pa.types.is_large_string(t) or pa.types.is_binary(t)
            or pa.types.is_large_binary(t) or pa.types.is_string_view(t)
            or pa.types.is_binary_view(t))


def _apply_scd2(dl, uri, dt, t, columns, key, since, applier, storage_options) -> dict:
    """SCD type 2: the touched keys' current versions, continued by the events (Applier
    with them as its target), written back with one MERGE — see docs/apply.md."""
    events = _lean(t, key)
    if columns is None or events is t:
        applier.apply(t, since=since)           # says what the fold cannot read
        raise ValueError("scd=2 reads the events' commit_ts: give them as decode returns "
                         "them")
    events = _as_delta(events, columns)
    schema = pa.schema(list(columns) + list(VERSION))
    if dt is None:          # no versions yet; the fold first, so a call refused creates nothing
        cur = schema.empty_table()
        out = applier.apply(events, since=since)
        dt = dl.DeltaTable.create(uri, schema, mode="ignore", storage_options=storage_options)
        target = _target_schema(dt)
    else:
        target = _target_schema(dt)
        _check_target(uri, schema, target)
        cur = _current(dt, schema, key, _touched(events, key, since))
        if since is not None:
            cur = cur.replace_schema_metadata({POSITION: position_text(since).encode()})
        out = applier.apply(events, target=cur, since=since)
    stats = dict(applier.last_stats)
    if stats["applied"] == 0:
        return {**stats, "position": since, "version": None}
    high = _last_position(t)
    assert high is not None and _after(high, since), (high, since)
    mark = dl.CommitProperties(custom_metadata={MARK: position_text(high)})
    source = _versions_source(out, cur, schema, key)
    q = _quote
    on = [f"target.{q(k)} = source.__m{j}" for j, k in enumerate(key)]
    # a version that started in a row with a null commit_pos has a null __start_pos
    on += ["(target.__start_pos IS NOT DISTINCT FROM source.__ms)",
           "target.__end_at IS NULL", "target.__end_pos IS NULL"]
    merge = None
    if source.num_rows:
        merge = dt.merge(source, predicate=" AND ".join(on), source_alias="source",
                         target_alias="target", commit_properties=mark)
        every = {q(f.name): f"source.__v{i}" for i, f in enumerate(schema)}
        merge = merge.when_matched_update(every).when_not_matched_insert(every)
    return {**stats, "position": high, "version": _commit(dl, dt, merge, target, mark)}


def _versions_source(out: pa.Table, cur: pa.Table, schema: pa.Schema, key: list) -> pa.Table:
    """The MERGE's source for SCD2: every version of the touched keys (`__v<i>`: column i of
    `schema`), with a merge key on the one row per key of `cur` that replaces its current
    version — the key (`__m<j>`) and that version's `__start_pos` (`__ms`) — and a null
    merge key on the others, which match nothing and are inserted.
    Every key of `cur` has versions in `out` (the Applier ends a version, never drops one);
    the first is the one that continues `cur`'s row (it opens the target's versions first),
    and that is the one given the merge key. Any of them would leave the same rows: the
    current version replaced by one of the key's versions, the others added."""
    T = cur.num_rows
    if out.num_rows == 0:
        return pa.table({"__ms": pa.array([], POS)})
    gids, _ = _group_ids([[cur.column(k) for k in key], [out.column(k) for k in key]])
    assert (gids[:T] == np.arange(T)).all()     # one current version per key
    og = gids[T:]
    groups, first = np.unique(og, return_index=True)
    replaces = first[(groups >= 0) & (groups < T)]   # per key of cur, its first version
    assert len(replaces) == T, (len(replaces), T)
    hit = np.zeros(out.num_rows, bool)
    hit[replaces] = True
    row = np.zeros(out.num_rows, np.int64)          # the row of cur it replaces
    row[replaces] = og[replaces]
    hit = pa.array(hit)
    merge = [pc.if_else(hit, _chunk(out.column(k)).cast(schema.field(k).type), None)
             for k in key]
    start = pc.if_else(hit, _chunk(cur.column("__start_pos")).take(pa.array(row)), None) \
        if T else pa.nulls(out.num_rows, POS)
    cols = merge + [start] + [_chunk(out.column(f.name)).cast(f.type) for f in schema]
    names = [f"__m{j}" for j in range(len(key))] + ["__ms"] + \
        [f"__v{i}" for i in range(len(schema))]
    return pa.table(cols, names=names)
