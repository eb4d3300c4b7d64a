"""The native run of `ibm-delimited` (cdcfast/formats/ibm_delimited.py): drives the kernel
(native/cdcfast/_ibm.pyx) chunk by chunk, registers tables as the kernel meets them, and turns
the kernel's columns and error entries into record batches. Nothing here loops over records or
values.
"""
from __future__ import annotations

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from .. import _tz
from ..errors import DecodeError
from .base import ALL, HEADERS, Want, apply_mode, batch_room, binary_column, errors_column, \
    full_name, images_and_schema, presize, with_messages
from .ibm_delimited import (E_COUNT, E_ODD, E_TOO_FEW, E_UNTERMINATED, E_VALUE, SOURCE,
                            IbmDelimited)

CHUNK_RECORDS = 512            # records tokenized per chunk: the index stays in cache
CHUNK_BYTES = 16 << 20
FLUSH_BYTES = 256 << 20         # input bytes per batch at most: keeps string columns < 2 GiB


def native_batches(fmt, parts, want, images, batch_rows, mode, stats):
    """(key, RecordBatch) of every part, in input order per key."""
    for part in parts:
        yield from _NativeRun(fmt, part, want, images, batch_rows, mode, stats).run()


# columns of the kernel's error entries (TableOut.errors)
ROW, FIELD, CODE, POS, A, B, MSG, START, END = range(9)


def _first_in_input_order(ents):
    """The entry of the earliest record (message, then byte), its first field."""
    return ents[np.lexsort((ents[:, FIELD], ents[:, START], ents[:, MSG]))[0]]


class _Output:
    """One output table of a native run: its kernel builder and what it describes."""

    def __init__(self, key, table, ident, slot):
        self.key = key            # output key (None: unattributable records)
        self.table = table        # catalog Table or None
        self.ident = ident        # table identity (catalog name, else the name as sent)
        self.slot = slot
        self.out = None           # _ibm.TableOut, made once N is known
        self.columns = None
        self.input_bytes = 0
        self.presized = False


class _NativeRun:
    """Decode one Part with the kernel."""

    def __init__(self, fmt: IbmDelimited, part, want: Want, images, batch_rows, mode, stats):
        from .. import _ibm
        self._ibm = _ibm
        self.fmt, self.part, self.want, self.images = fmt, part, want, images
        self.batch_rows, self.mode, self.stats = batch_rows, mode, stats
        self.sc = _ibm.Scanner(part.data, part.offsets, part.valid, fmt.delims)
        self.tid_of = {}          # table identity → kernel table id
        self.tables = []          # kernel table id → (identity, catalog Table, display name)
        self.slots = np.full(16, -1, dtype=np.int32)
        self.outputs = {}         # output key → _Output
        self.ncols_hint = None    # no-catalog N by identity, from a pre-scan
        self.nocat = set()

    # -- tables ----------------------------------------------------------------------------
    def _ident(self, name):
        """(output key, catalog Table, table identity) of a record's table name. Spellings
        that one call merges into one output (case-insensitive matches without a catalog)
        are one table, whose first record fixes N."""
        key, table = self.want.resolve(name)
        if table is not None:
            return key, table, table.name
        if key is not None and key != HEADERS:
            return key, None, key
        return key, None, name

    def _register(self, sc):
        owner_b, name_b = sc.pending_names()
        name = full_name(self.fmt.text(owner_b), self.fmt.text(name_b))
        key, table, ident = self._ident(name)
        tid = self.tid_of.get(ident)
        if tid is None:
            if table is not None:
                tid = sc.new_table(len(table.columns), True)
            else:
                tid = sc.new_table(self._nocat_ncols(ident), False)
                self.nocat.add(tid)
            self.tid_of[ident] = tid
            self.tables.append((ident, table, name))
            if tid >= len(self.slots):
                self.slots = np.concatenate([self.slots, np.full(len(self.slots), -1,
                                                                 dtype=np.int32)])
            if key is not None:
                self.slots[tid] = self._output(key, table, ident).slot
        sc.add_name(owner_b, name_b, tid)

    def _nocat_ncols(self, ident):
        """N of a table the catalog lacks: from its first well-formed record in the call (an
        earlier part of the source may have fixed it: want.carried), else in this part, found
        by a tokenizer-only pass over the part (once), so every output knows its columns
        before its first row is written; 0 while no record fixes it."""
        fixed = self.want.recall("ibm_ncols", ident)
        if fixed is not None:
            return fixed
        known = self.want.carried.setdefault("ibm_ncols", {})
        if self.ncols_hint is None:
            pre = self._ibm.Scanner(self.part.data, self.part.offsets, self.part.valid,
                                    self.fmt.delims)
            ids = {}
            while True:
                st = pre.scan(CHUNK_RECORDS, 1 << 62)
                if st == 2:
                    o, n = pre.pending_names()
                    _, t, nm = self._ident(full_name(self.fmt.text(o), self.fmt.text(n)))
                    if nm not in ids:
                        ids[nm] = pre.new_table(len(t.columns) if t else -1, t is not None)
                    pre.add_name(o, n, ids[nm])
                    continue
                pre.reset()
                if st == 0:
                    break
            self.ncols_hint = {nm: pre.ncols(t) for nm, t in ids.items()}
        n = self.ncols_hint.get(ident, -1)
        if n < 0:
            self.want.unsure = True     # a later piece of the part may give it (cdcfast/pieces.py)
            return 0
        known[ident] = n
        return n

    def _output(self, key, table, ident):
        o = self.outputs.get(key)
        if o is None:
            o = self.outputs[key] = _Output(key, table, ident, len(self.outputs))
        return o

    def _builder(self, o: _Output):
        if o.out is None:
            if o.key is None or not self.images:
                cols = []
            elif o.table is not None:
                cols = self.fmt.table_columns(o.table)
            elif o.ident in self.tid_of:
                cols = self.fmt.table_columns(None, self.sc.ncols(self.tid_of[o.ident]))
            else:
                cols = self.fmt.table_columns(None, self._nocat_ncols(o.ident))
            o.columns = cols
            f = self.fmt
            o.out = self._ibm.TableOut(
                [c.type.kind for c in cols], [c.type.precision for c in cols],
                [c.type.scale for c in cols], [c.nullable for c in cols],
                [c.type.is_char for c in cols], [c.type.is_lob for c in cols], self.images,
                f.asc, f.u8, f.u8len, f.encoding == "utf-8", f.dc, f.hasc, f.hu8, f.hu8len,
                (f.options["hex_encoding"] or "utf-8") == "utf-8",
                f.options["hex_encoding"] is not None)
            o.out.want_flags = self.want.flags
            o.out.want_before = self.want.before
        return o.out

    # -- the loop --------------------------------------------------------------------------
    def run(self):
        sc, want = self.sc, self.want
        t = want.requested_table()
        if t is not None:
            self._output(want.requested, t, t.name)
        done = False
        while not done:
            room = batch_room(self.outputs.values(), self.batch_rows)
            pos0 = sc.pos
            st = sc.scan(max(1, min(CHUNK_RECORDS, room)), CHUNK_BYTES)
            if sc.unterminated:
                want.open_end = True    # a string runs to the part's end (cdcfast/pieces.py)
            if st == 2:
                self._register(sc)
                continue
            done = st == 0
            yield from self._convert_chunk(sc.pos - pos0, done)
            sc.reset()
        self.stats["tombstones"] += sc.tombstones

    def _convert_chunk(self, nbytes, done):
        sc, want = self.sc, self.want
        self.stats["records"] += sc.nrec
        if self.nocat and sc.nrec:
            tabs = sc.chunk_tables()
            self.stats["unknown_tables"] += int(np.isin(tabs, list(self.nocat)).sum())
        ckey = want.corrupt_key
        if (ckey is not None or want.table is ALL) and ckey not in self.outputs \
                and sc.corrupt_count():
            t = self.fmt.catalog.get(ckey) if self.fmt.catalog and ckey else None
            self._output(ckey, t, t.name if t else ckey)
        firsts = []
        for o in list(self.outputs.values()):
            out = self._builder(o)
            e0 = out.error_count
            k = out.convert(sc, self.slots, o.slot, o.key == ckey)
            o.input_bytes += nbytes
            if k and not o.presized:
                self._presize(o)
            if self.mode == "FAILFAST" and out.error_count > e0:
                e = _first_in_input_order(out.errors(e0))
                firsts.append(((e[MSG], e[START], e[FIELD]), o, e))
        if firsts:
            _, o, e = min(firsts, key=lambda x: x[0])
            raise self._error(o, e)
        for o in self.outputs.values():
            if o.out is not None and (done or o.out.length >= self.batch_rows
                                      or o.input_bytes >= FLUSH_BYTES) \
                    and (o.out.length or (done and o.key is not None
                                          and o.key == want.requested)):
                yield o.key, self._finish(o)

    def _presize(self, o):
        o.presized = True
        presize(o.out, self.part, self.sc.pos, self.batch_rows)

    # -- batches -----------------------------------------------------------------------------
    def _error(self, o: _Output, entry) -> DecodeError:
        """The DecodeError of one kernel error entry."""
        _, field, code, pos, a, b, msg, _, _ = (int(x) for x in entry)
        part = self.part
        mstart = part.message_start(msg)
        data = memoryview(part.data)
        kw = {}
        if code in (E_TOO_FEW, E_COUNT, E_ODD):
            kw["nfields"] = a
            if code == E_COUNT:
                ident, table, shown = self.tables[b]
                kw["table"] = ident
                kw["ncols"] = self.sc.ncols(b)
        elif code >= E_VALUE:               # a value: a, b are its span (else not a span)
            kw["raw"] = bytes(data[a:b])
        fname, reason = self.fmt.describe(code, field, o.columns, **kw)
        return DecodeError(reason, 0 if self.want.messages else part.base + msg, pos - mstart,
                           fname)

    def _finish(self, o: _Output) -> pa.RecordBatch:
        out, fmt = o.out, self.fmt
        n = out.length
        ents = out.errors(0)
        out.clear_errors()
        # each row's first problem in field order
        ents = ents[np.lexsort((ents[:, FIELD], ents[:, ROW]))]
        firsts = ents[np.r_[True, ents[1:, ROW] != ents[:-1, ROW]]] if len(ents) else ents
        errs = [self._error(o, e) for e in firsts]
        err_rows = firsts[:, ROW].tolist()
        first = errs[0] if errs else None
        texts = [str(e) for e in errs]
        # rows whose record could not be split (1) or whose field count is wrong (2)
        kinds = np.zeros(n, dtype=np.uint8)
        rec = firsts[(firsts[:, CODE] >= E_UNTERMINATED) & (firsts[:, CODE] <= E_ODD)]
        kinds[rec[:, ROW]] = np.where(rec[:, CODE] <= E_TOO_FEW, 1, 2)
        bad = rec[:, ROW].tolist()
        data = memoryview(self.part.data)
        raws = [bytes(data[int(s):int(e)]) for s, e in zip(rec[:, START], rec[:, END])]
        tz = fmt.options["source_tz"]
        local = pa.timestamp("us")
        commit_ts = _tz.local_to_utc(out.commit_ts.finish(local), tz)
        commit_pos = out.commit_pos.finish(pa.binary())
        s = SOURCE
        source = pa.StructArray.from_arrays(
            [out.s_type.finish(pa.int32()), out.s_ident.finish(pa.string()),
             _tz.local_to_utc(out.s_put.finish(local), tz), out.s_plan.finish(pa.string()),
             out.s_seg.finish(pa.int32()), out.s_invcol.finish(pa.int32()),
             out.s_invimg.finish(pa.string()), out.s_invmode.finish(pa.string())],
            fields=list(s), mask=pa.array(kinds == 1) if len(bad) else None)
        arrays = [out.op.finish(pa.string()), out.source_op.finish(pa.string()),
                  out.schema.finish(pa.string()), out.table.finish(pa.string()),
                  out.txid.finish(pa.string()), commit_ts, commit_ts, commit_pos, commit_pos,
                  out.seq.finish(pa.int64())]
        structs, schema = images_and_schema(out, o.columns, n, self.images, SOURCE)
        arrays += structs
        arrays.append(source)
        arrays.append(errors_column(n, err_rows, texts))
        arrays.append(binary_column(n, bad, raws))
        batch = pa.RecordBatch.from_arrays(arrays, schema=schema)
        if self.want.messages:
            batch = with_messages(batch, self.want,
                                  pc.add(out.msg.finish(pa.int64()), self.part.base))
        o.input_bytes = 0
        o.presized = False
        return apply_mode(batch, self.mode, self.stats, first)

