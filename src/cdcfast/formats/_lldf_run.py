"""The native run of `lldf` (cdcfast/formats/lldf.py): drives the kernel chunk by chunk (the
framer native/cdcfast/_lldf_frame.pyx, the converter _lldf.pyx), registers tables as the
framer meets them, and turns the converter's columns and error entries into record batches.
Nothing here loops over records or values.
"""
from __future__ import annotations

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from .. import _tz
from ..errors import DecodeError
from ..sources import release
from ._lldf_codes import (ERR_A, ERR_B, ERR_C, ERR_CODE, ERR_FIELD, ERR_MSG, ERR_POS,
                          ERR_RAW_AT, ERR_RAW_LEN, ERR_ROW, ERR_SPAN_END, ERR_SPAN_START,
                          F_AFTER, F_AFTER_COL, F_BDW, F_BEFORE, F_BEFORE_COL, F_CHANGE_TYPE,
                          F_COMMIT_TS, F_DATA, F_LENGTH, F_RDW, F_SEGLEN, F_SEGNUM, F_TIMESTAMP,
                          S_DONE, S_NEW_TABLE)
from .base import (ALL, apply_mode, batch_room, binary_column, errors_column, full_name,
                   images_and_schema, presize, with_messages)
from .lldf import (HEADER, H_TS, SOURCE, E_HEADER_VALUE, E_IMAGE_LONG, E_IMAGE_SHORT, E_SEGLEN,
                   E_VALUE, describe, header_what)

CHUNK_RECORDS = 1024          # logical records framed per chunk: their headers stay in cache
FLUSH_BYTES = 256 << 20       # data bytes per batch at most: keeps string columns < 2 GiB
KEEP_BEHIND = 1 << 20         # input kept mapped behind the framer (a peeked record)

# what an error entry names (TableOut.errors: its words are _lldf_codes' ERR_*), when not a
# header field or a column value
_FIELDS = {F_LENGTH: "LENGTH", F_SEGLEN: "SEGLEN", F_RDW: "RDW", F_BDW: "BDW",
           F_SEGNUM: "SEGNUM", F_CHANGE_TYPE: "CHANGE TYPE", F_DATA: "DATA", F_BEFORE: "before",
           F_AFTER: "after", F_TIMESTAMP: "TIMESTAMP", F_COMMIT_TS: "UORCOMMITTIMESTAMP"}
_LOCAL = pa.timestamp("us")
_HEADER_TYPES = [SOURCE.field(i).type for i in range(len(HEADER))]


def native_batches(fmt, parts, want, images, batch_rows, mode, stats):
    """(key, RecordBatch) of every part, in input order per key; `seq` counts across parts."""
    check_request(fmt, want, images)
    seq = 0
    for part in parts:
        run = _Run(fmt, part, want, images, batch_rows, mode, stats, seq)
        yield from run.run()
        seq = run.fr.seq


def check_request(fmt, want, images):
    """decode(table=…) of a table the catalog lacks: lldf images cannot be read without it."""
    if images and want.requested is not None and want.table is not ALL \
            and (fmt.catalog is None or fmt.catalog.get(want.requested) is None):
        raise ValueError(f"table {want.requested!r} is not in the catalog: lldf row images "
                         "need its column definitions")


class _Output:
    def __init__(self, key, table, slot):
        self.key = key
        self.table = table        # catalog Table or None
        self.slot = slot
        self.out = None
        self.bytes = 0            # input bytes since the last batch
        self.presized = False


class _Run:
    """Decode one Part with the kernel."""

    def __init__(self, fmt, part, want, images, batch_rows, mode, stats, seq0):
        from .. import _lldf, _lldf_frame
        self._lldf = _lldf
        self.fmt, self.part, self.want, self.images = fmt, part, want, images
        self.batch_rows, self.mode, self.stats = batch_rows, mode, stats
        self.seq0 = seq0
        self.fr = _lldf_frame.Framer(part.data, part.offsets, part.valid, fmt.framings(part),
                               fmt.asc)
        self.fr.seq = seq0
        self.tid_of = {}          # table identity -> kernel table id
        self.tables = []          # table id -> (identity, catalog Table)
        self.slots = np.full(16, -1, dtype=np.int32)
        self.looked = np.zeros(16, dtype=bool)     # table ids this call looks at
        self.unknown = np.zeros(16, dtype=bool)    # table ids the catalog lacks
        self.outputs = {}
        self.last_pos = int(part.offsets[0])
        self.released = int(part.offsets[0])   # a piece releases only its own pages

    # -- tables ----------------------------------------------------------------------------
    def _register(self):
        fr, fmt = self.fr, self.fmt
        owner_b, name_b = fr.pending_names()
        owner = fmt.text(owner_b).rstrip(" ")
        name = fmt.text(name_b).rstrip(" ")
        full = full_name(owner, name)
        key, table = self.want.resolve(full)
        ident = table.name if table is not None else full
        tid = self.tid_of.get(ident)
        if tid is None:
            tid = self.tid_of[ident] = len(self.tables)
            self.tables.append((ident, table))
            if tid >= len(self.slots):
                grow = len(self.slots)
                self.slots = np.concatenate([self.slots, np.full(grow, -1, dtype=np.int32)])
                self.looked = np.concatenate([self.looked, np.zeros(grow, dtype=bool)])
                self.unknown = np.concatenate([self.unknown, np.zeros(grow, dtype=bool)])
            self.unknown[tid] = table is None
            self.looked[tid] = key is not None
            if key is not None and (table is not None or not self.images):
                self.slots[tid] = self._output(key, table).slot
        if table is not None:
            schema, tname = table.schema, table.table
        else:
            schema, tname = owner or None, name
        fr.add_name(tid, schema.encode() if schema is not None else None, tname.encode(),
                    bool(self.looked[tid]), bool(self.unknown[tid]))

    def _output(self, key, table):
        o = self.outputs.get(key)
        if o is None:
            o = self.outputs[key] = _Output(key, table, len(self.outputs))
        return o

    def _builder(self, o: _Output):
        if o.out is None:
            fmt = self.fmt
            cols = list(o.table.columns) if (self.images and o.table is not None) else []
            lay = fmt.layouts[o.table.name] if cols else []
            o.columns = cols
            o.out = self._lldf.TableOut(
                [k for k, _ in lay], [w for _, w in lay], [c.type.precision for c in cols],
                [c.nullable for c in cols], [0] * len(cols), self.images,
                [(off, width, kind) for _, _, off, width, kind in HEADER],
                fmt.asc, fmt.u8, fmt.u8len, fmt.space, fmt.options["float_format"] == "hfp",
                fmt.encoding == "ascii", fmt.cpchars)
            o.out.want_flags = self.want.flags
            o.out.want_before = self.want.before
        return o.out

    # -- the loop --------------------------------------------------------------------------
    def run(self):
        fr, want = self.fr, self.want
        t = want.requested_table()
        if t is not None:
            self._output(want.requested, t)
        while True:
            room = batch_room(self.outputs.values(), self.batch_rows)
            st = fr.scan(max(1, min(CHUNK_RECORDS, room)))
            if fr.n_unframed:
                want.open_end = True    # a span it cannot frame (cdcfast/pieces.py)
            if st == S_NEW_TABLE:
                self._register()
                continue
            yield from self._chunk(st == S_DONE)
            # the chunk is converted: the mapped input before it is no longer needed (a
            # record that waits for its segments is at most one physical record back)
            self.released = release(self.part.data, fr.pos - KEEP_BEHIND, self.released)
            fr.reset()
            if st == S_DONE:
                break
        self.stats["tombstones"] += fr.tombstones

    def _chunk(self, done):
        fr, want, stats = self.fr, self.want, self.stats
        stats["records"] += fr.n_records
        stats["unknown_tables"] += fr.n_unknown
        stats["control"] += fr.n_control
        fr.n_records = fr.n_unknown = fr.n_control = 0
        ckey = want.corrupt_key
        if (ckey is not None or want.table is ALL) and ckey not in self.outputs \
                and fr.corrupt_count():
            t = self.fmt.catalog.get(ckey) if self.fmt.catalog and ckey else None
            self._output(ckey, t)
        firsts = []
        nbytes = int(fr.pos - self.last_pos)
        self.last_pos = fr.pos
        for o in list(self.outputs.values()):
            out = self._builder(o)
            e0 = out.error_count
            k = out.convert(fr, self.slots, o.slot, o.key == ckey, self.images)
            o.bytes += nbytes
            if k and not o.presized:
                self._presize(o)
            if self.mode == "FAILFAST" and out.error_count > e0:
                e = out.errors(e0)
                e = e[np.lexsort((e[:, ERR_POS], e[:, ERR_MSG]))[0]]
                firsts.append(((e[ERR_MSG], e[ERR_POS]), o, e))
        if firsts:
            _, o, e = min(firsts, key=lambda x: x[0])
            raise self._error(o, e)
        for o in self.outputs.values():
            if o.out is not None and o.out.length and \
                    (done or o.out.length >= self.batch_rows or o.bytes >= FLUSH_BYTES):
                yield o.key, self._finish(o)

    def _presize(self, o):
        o.presized = True
        presize(o.out, self.part, self.fr.pos, self.batch_rows)

    # -- batches -----------------------------------------------------------------------------
    def _field(self, o, f):
        if f >= F_AFTER_COL:
            return f"after.{o.columns[f - F_AFTER_COL].name}"
        if f >= F_BEFORE_COL:
            return f"before.{o.columns[f - F_BEFORE_COL].name}"
        if f >= 0:
            return HEADER[f][1]
        return _FIELDS[f]

    def _error(self, o, e) -> DecodeError:
        code, f = int(e[ERR_CODE]), int(e[ERR_FIELD])
        field = self._field(o, f)
        raw = o.out.raw_bytes(int(e[ERR_RAW_AT]), int(e[ERR_RAW_LEN]))
        what = ""
        if code == E_SEGLEN:
            what = str(int(e[ERR_C]))
        elif code == E_HEADER_VALUE:
            what = header_what(H_TS if f < 0 else HEADER[f][4], self.fmt.encoding)
        elif code == E_VALUE:
            what = o.columns[f % F_BEFORE_COL].type.name
        elif code in (E_IMAGE_SHORT, E_IMAGE_LONG):
            what = o.table.name
        msg = int(e[ERR_MSG])
        part = self.part
        return DecodeError(describe(code, field, int(e[ERR_A]), int(e[ERR_B]), raw, what),
                           0 if self.want.messages else part.base + msg,
                           int(e[ERR_POS]) - part.message_start(msg), field)

    def _finish(self, o: _Output) -> pa.RecordBatch:
        out, fmt = o.out, self.fmt
        n = out.length
        ents = out.errors(0)
        # each row's first problem: the lowest byte offset (then the first found)
        order = np.lexsort((np.arange(len(ents)), ents[:, ERR_POS], ents[:, ERR_ROW]))
        ents = ents[order]
        firsts = ents[np.r_[True, ents[1:, ERR_ROW] != ents[:-1, ERR_ROW]]] if len(ents) else ents
        errs = [self._error(o, e) for e in firsts]
        out.clear_errors()
        first = None
        if errs:
            k = int(np.lexsort((firsts[:, ERR_POS], firsts[:, ERR_MSG]))[0])
            first = errs[k]
        spans = ents[ents[:, ERR_SPAN_END] > 0]
        data = memoryview(self.part.data)
        tz = fmt.options["source_tz"]
        local = _LOCAL
        commit_ts = _tz.local_to_utc(out.commit_ts.finish(local), tz)
        change_ts = _tz.local_to_utc(out.change_ts.finish(local), tz)
        children = []
        for c, t in zip(out.source, _HEADER_TYPES):
            children.append(_tz.local_to_utc(c.finish(local), tz) if t == SOURCE.field("uor_ts").type
                            else c.finish(t))
        children.append(out.owner_trunc.finish(pa.bool_()))
        children.append(out.name_trunc.finish(pa.bool_()))
        source = pa.Array.from_buffers(SOURCE, n, [out.source_v.take_validity()],
                                       children=children)
        seq = out.seq.finish(pa.int64())
        arrays = [out.op.finish(pa.string()), out.source_op.finish(pa.string()),
                  out.schema.finish(pa.string()), out.table.finish(pa.string()),
                  out.txid.finish(pa.string()), commit_ts, change_ts,
                  out.commit_pos.finish(pa.binary()), out.change_pos.finish(pa.binary()), seq]
        structs, schema = images_and_schema(out, o.columns, n, self.images, SOURCE)
        arrays += structs
        arrays.append(source)
        arrays.append(errors_column(n, firsts[:, ERR_ROW].tolist(), [str(e) for e in errs]))
        arrays.append(binary_column(n, spans[:, ERR_ROW].tolist(),
                                    [bytes(data[int(s):int(e)]) for s, e in
                                     zip(spans[:, ERR_SPAN_START], spans[:, ERR_SPAN_END])]))
        batch = pa.RecordBatch.from_arrays(arrays, schema=schema)
        if self.want.messages:
            batch = with_messages(batch, self.want,
                                  pc.add(out.msg.finish(pa.int64()), self.part.base))
        else:
            out.msg.finish(pa.int64())
        o.bytes = 0
        o.presized = False
        return apply_mode(batch, self.mode, self.stats, first)
