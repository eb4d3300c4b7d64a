"""What the native runs of the JSON message formats share (`debezium`, `olr`, `qlik`): a
kernel's Scanner (cdcfast/_walk.pyx) driven part by part — Python answers what it stops for —
and its outputs (cdcfast/_rows.pyx) turned into record batches whose error texts the format's
`describe` writes, as its reference does."""
from __future__ import annotations

import pyarrow as pa

from .. import envelope
from ..errors import DecodeError
from ..sources import release
# the stops and problem codes every JSON kernel numbers alike (their one spec: _json_codes,
# which native/cdcfast/_walk.pxd reads)
from ._json_codes import (IMG_AFTER, IMG_BEFORE, STOP_BATCH, STOP_END, STOP_PAUSE, W_MISSING,
                          W_NOT_NULL, W_TWICE, W_VALUE)
from ._jsontext import Spans
from .base import (ALL, HEADERS, MESSAGE, apply_mode, binary_column, envelope_schema,
                   errors_column, image_structs)


class _Output:
    def __init__(self, key, layout, images, slot, out):
        self.key, self.layout, self.images, self.slot, self.out = key, layout, images, slot, out


class KernelRun:
    """Decode one Part with a format's kernel: `kernel` its module, `source` its source
    struct, `corrupt` the problem codes of corrupt records; a subclass makes the Scanner
    (`scanner`), gives layouts (`layout_of_key`), answers the other stops (`answer`) and
    writes error texts (`describe`)."""
    source = pa.struct([])
    corrupt = frozenset()

    def __init__(self, fmt, part, want, images, batch_rows, mode, stats, call, kernel):
        from .. import _rows
        self.k = kernel
        self.rows = _rows
        self.spec = _rows.source_spec(self.source)
        self.fmt, self.part, self.want, self.images = fmt, part, want, images
        self.batch_rows, self.mode, self.stats, self.call = batch_rows, mode, stats, call
        self.sc = self.scanner(images)
        self.sc.batch_rows = batch_rows
        self.sc.seq_start(call.seq)
        self.sc.messages = want.messages
        self.outputs = {}           # key -> _Output
        self.by_slot = []
        self.released = int(self.part.offsets[0])
        if not images and want.table is None:
            self.sc.headers_slot = self.output(HEADERS).slot
        ckey = want.corrupt_key
        if ckey is not None or want.table is ALL:
            self.sc.corrupt_slot = self.output(ckey).slot

    def scanner(self, images):
        raise NotImplementedError

    def layout_of_key(self, key):
        raise NotImplementedError

    def answer(self, stop: int):
        raise NotImplementedError

    def describe(self, o, field, code, raw, pos, data):
        raise NotImplementedError

    @staticmethod
    def field_problem(o, field, code, raw, name, reasons, quote):
        """(field name, reason) of a row's problem: of a column value (`field` from
        IMG_BEFORE on, named by its envelope path) or of the field `name`; `reasons` the
        format's texts by code, `quote` how it shows a value."""
        if field >= IMG_BEFORE:
            img = "after" if field >= IMG_AFTER else "before"
            col = o.layout.columns[field - (IMG_AFTER if field >= IMG_AFTER else IMG_BEFORE)]
            name = f"{img}.{col.name}"
            if code == W_VALUE:
                return name, f"{quote(raw)} is not {col.type.name}"
        if code == W_TWICE:
            return name, "given twice"
        if code == W_NOT_NULL:
            return name, "null in NOT NULL column"
        if code == W_MISSING:
            return name, "missing"
        return name, reasons[code].format(quote(raw))

    # -- outputs ---------------------------------------------------------------------------------
    def output(self, key, layout=None) -> _Output:
        o = self.outputs.get(key)
        if o is not None:
            return o
        images = self.images and key != HEADERS
        if images and key is not None and layout is None:
            layout = self.layout_of_key(key)
        cols = layout.columns if (images and layout is not None) else []
        out = self.rows.Out(self.spec, [c.type.kind for c in cols],
                            [c.type.precision for c in cols], [c.type.scale for c in cols],
                            [c.nullable for c in cols], [c.name for c in cols], images,
                            images and getattr(layout, "derived", False))
        if cols and hasattr(cols[0], "lob"):
            out.lob = bytes(bool(c.lob) for c in cols)
        out.want_flags = self.want.flags
        out.want_before = self.want.before
        slot = self.sc.add_output(out)
        o = self.outputs[key] = _Output(key, layout, self.images, slot, out)
        self.by_slot.append(o)
        return o

    # -- the loop --------------------------------------------------------------------------------
    def run(self):
        sc = self.sc
        try:
            while True:
                r = sc.run()
                if r == STOP_END:
                    break
                if r == STOP_BATCH:
                    yield from self.flush(self.by_slot[sc.full_slot])
                    self.released = release(self.part.data, sc.pos, self.released)
                elif r == STOP_PAUSE:
                    self.released = release(self.part.data, sc.pos, self.released)
                else:
                    yield from self.answer(r)
            for o in self.by_slot:
                if o.out.length:
                    yield from self.flush(o)
        finally:
            st = self.stats
            st["records"] += sc.records
            st["tombstones"] += sc.tombstones
            st["control"] += sc.control
            st["unknown_tables"] += sc.unknown
            st["extra_columns"] += sc.extra
            self.call.seq = sc.seq

    def raise_pending(self):
        """FAILFAST: the first error met so far, in input order, before anything else."""
        if self.mode != "FAILFAST":
            return
        first = None
        for o in self.by_slot:
            for p in o.out.peek_problems():
                err = self.error(o, p)
                key = (p[6], p[3])
                if first is None or key < first[0]:
                    first = (key, err)
                break
        if first is not None:
            raise first[1]

    def flush(self, o: _Output):
        self.raise_pending()
        batch, first = self.batch(o)
        vendor = self.vendor
        kept = apply_mode(batch, self.mode, self.stats, first)
        if self.want.seq_masks is not None:     # a piece: which rows' seq is the vendor's
            if vendor is not None and kept.num_rows != batch.num_rows:
                vendor = vendor[batch.column("_error").is_null().to_numpy(zero_copy_only=False)]
            self.want.seq_masks.append(vendor)
        yield o.key, kept

    # -- batches ---------------------------------------------------------------------------------
    def message_of(self, msg: int) -> int:
        return 0 if self.want.messages else self.part.base + msg

    def error(self, o: _Output, p) -> DecodeError:
        row, field, code, pos, a, b, msg = p
        data = self.part.data
        base = self.part.message_start(msg)
        raw = bytes(memoryview(data)[a:b])
        name, reason = self.describe(o, field, code, raw, pos, data)
        return DecodeError(reason, self.message_of(msg), pos - base, name)

    def batch(self, o: _Output):
        """(record batch, its first DecodeError or None) of an output's rows so far."""
        out = o.out
        n = out.length
        out.sync_lengths()
        self.vendor = out.vendor_seq()
        msgs, starts, ends = out.rows_info()
        problems = out.problems()
        data = self.part.data
        rows, texts, crows, cvals = [], [], [], []
        first = None
        for p in problems:                  # rows with a problem only
            row, code = p[0], p[2]
            err = self.error(o, p + (int(msgs[row]),))
            first = first or err
            rows.append(row)
            texts.append(str(err))
            if code in self.corrupt:
                crows.append(row)
                cvals.append(bytes(memoryview(data)[starts[row]:ends[row]]))
        images = o.images and o.key != HEADERS
        cols = o.layout.columns if (images and o.layout is not None) else []
        head = [out.op.finish(pa.string()), out.source_op.finish(pa.string()),
                out.schema.finish(pa.string()), out.table.finish(pa.string()),
                out.txid.finish(pa.string()), out.commit_ts.finish(envelope.UTC_US),
                out.change_ts.finish(envelope.UTC_US), out.commit_pos.finish(pa.binary()),
                out.change_pos.finish(pa.binary()), out.seq.finish(pa.int64())]
        from .._arrow import finish_struct
        source = finish_struct(self.source, n, out.source_v, out.src)
        arrays = head
        if images:
            arrays += image_structs(out, cols, n, self.source)
            schema = envelope_schema(cols, self.source)
        else:
            for c in (out.before_v, out.after_v, out.changed_v, out.present_v):
                c.take_validity()
            schema = envelope.headers_schema(self.source)
        arrays += [source, errors_column(n, rows, texts), binary_column(n, crows, cvals)]
        out.finished()
        batch = pa.RecordBatch.from_arrays(arrays, schema=schema)
        if self.want.messages:
            batch = batch.append_column(pa.field(MESSAGE, pa.int64()),
                                        pa.array(msgs + self.part.base, pa.int64()))
        return batch, first


def token_at(data, pos: int) -> bytes:
    """The JSON value at pos of a well-formed document (a corrupt record's problem names it)."""
    return bytes(memoryview(data)[pos:Spans(data, len(data)).value_end(pos)])
