"""The reference decoder of `debezium` (SPEC §5.3, docs/debezium.md), in plain Python.

This is the slow per-record parser the native kernel replaces, and the oracle it is tested
against: the `json` module parses each document (numbers kept as their text, so decimals
stay exact), and plain Python converts the values. Byte positions, which the `json` module
does not give, are found only for records with an error: a small walker over the document
(`Spans` of cdcfast.formats._jsontext) locates the value an error names, and the strict
scanner of `_jsonscan` names the first byte of a document that is not well-formed.
"""
from __future__ import annotations

import decimal
import struct

from ..catalog import (BINARY, BOOL, DATE32, DECIMAL, DECTEXT, FLOAT32, FLOAT64, INT32,
                       STRING, TIME64, TIMESTAMP, TIMESTAMP_TZ)
from ..errors import show_value
from ..formats.base import ALL, HEADERS, full_name
from ..formats._jsontext import Doc, Num, Problem, dups, resolve, scan_reason
from ..formats.debezium import (B64DEC, MS, NS, SOURCE, US, VSD,
                                image_fields)
from . import _jsonscan
from . import _jsondoc
from ._jsondoc import (_FLOAT_WORDS, _INT, _NUMBER, I64, INT_RANGE, US_PER_DAY, Bad, Output,
                       RoutedRows, _RawText, cut_raw_texts, documents, empty_row, integer,
                       iso_us, number_parts, rescale, same, scaled_text)

DATA_OPS = {"c", "u", "d", "r", "t"}
# -- values -------------------------------------------------------------------------------

def b64(text: str):
    """Base64 text -> bytes (docs/debezium.md), or None."""
    if not isinstance(text, str) or isinstance(text, Num):
        return None
    try:
        raw = text.encode("ascii")
    except UnicodeEncodeError:
        return None
    return _jsonscan.base64_decode(raw)


def unscaled_of(v, enc: int, scale: int):
    """(unscaled int, its scale) of a base64 or VariableScaleDecimal value, or None."""
    if enc == VSD or isinstance(v, dict):
        if not isinstance(v, dict) or dups(v) & {"scale", "value"}:
            return None
        s = v.get("scale")
        if not isinstance(s, Num) or not _INT.fullmatch(s):
            return None
        raw = b64(v.get("value"))
        scale = int(s)
    else:
        raw = b64(v)
    if not raw:
        return None
    u = int.from_bytes(raw, "big", signed=True)
    if not -2 ** 127 <= u < 2 ** 127:
        return None                         # more than 128 bits (docs/debezium.md)
    return u, scale


def to_us(x: int, unit: int):
    us = x * 1000 if unit == MS else x // 1000 if unit == NS else x
    return us if I64[0] <= us <= I64[1] else None


_AS_SENT = object()     # convert(): "the value's JSON text, cut from the document"


def convert(col, enc: int, scale: int, v):
    """The Python value (as pyarrow takes it) of JSON value `v` for layout column `col`
    written with encoding `enc`; raises Bad."""
    kind = col.type.kind
    if kind in INT_RANGE:
        x = integer(v, *INT_RANGE[kind])
        if x is None:
            raise Bad
        return x
    if kind == BOOL:
        if v is True or v is False:
            return v
        if isinstance(v, Num) and v in ("0", "1"):
            return v == "1"
        raise Bad
    if kind in (FLOAT32, FLOAT64):
        if isinstance(v, str) and (isinstance(v, Num) or _NUMBER.fullmatch(v)):
            x = float(v)
            if x in (float("inf"), float("-inf")):
                raise Bad
        elif isinstance(v, str) and v in _FLOAT_WORDS:
            x = _FLOAT_WORDS[v]
        else:
            raise Bad
        if kind == FLOAT32:
            try:
                x = struct.unpack("<f", struct.pack("<f", x))[0]
            except OverflowError:
                raise Bad from None
        return x
    if kind == DECIMAL:
        p, s = col.type.precision, col.type.scale
        if (enc in (B64DEC, VSD) and isinstance(v, str) and not isinstance(v, Num)) \
                or isinstance(v, dict):
            got = unscaled_of(v, enc, scale)
            if got is None:
                raise Bad
            u = rescale(got[0], -got[1], s, p)
        elif isinstance(v, str):
            parts = number_parts(v)
            if parts is None:
                raise Bad
            u = rescale(parts[0], parts[1], s, p)
        else:
            raise Bad
        if u is None:
            raise Bad
        return decimal.Decimal(f"{u}E-{s}")
    if kind == DECTEXT:
        if isinstance(v, Num):
            return str(v)
        if isinstance(v, dict) or enc in (B64DEC, VSD):
            got = unscaled_of(v, enc, scale)
            t = scaled_text(*got) if got is not None else None
            if t is None:
                raise Bad
            return t
        if isinstance(v, str) and _NUMBER.fullmatch(v):
            return str(v)
        raise Bad
    if kind == STRING:
        if v is True or v is False:
            return "true" if v else "false"
        if isinstance(v, (dict, list)):
            return _AS_SENT                 # the caller cuts the text from the document
        try:
            v.encode("utf-8")
        except UnicodeEncodeError:
            raise Bad("has a lone surrogate in a \\u escape") from None
        return str(v)
    if kind == BINARY:
        raw = b64(v)
        if raw is None:
            raise Bad
        return raw
    if kind == DATE32:
        x = integer(v, *INT_RANGE[INT32])
        if x is None:
            raise Bad
        return x
    if kind == TIME64:
        x = integer(v, *I64)
        unit = enc if enc in (MS, US, NS) else col.unit
        us = to_us(x, unit) if x is not None else None
        if us is None or not 0 <= us < US_PER_DAY:
            raise Bad
        return us
    if kind in (TIMESTAMP, TIMESTAMP_TZ):
        if isinstance(v, str) and not isinstance(v, Num) and not _INT.fullmatch(v):
            us = iso_us(v, kind == TIMESTAMP_TZ)
        else:
            x = integer(v, *I64)
            unit = enc if enc in (MS, US, NS) else col.unit
            us = to_us(x, unit) if x is not None else None
        if us is None or not I64[0] <= us <= I64[1]:
            raise Bad
        return us
    raise Bad


# -- header fields --------------------------------------------------------------------------

def lsn_bytes(text: str):
    """Position bytes of an LSN text (`:`-separated hex groups), or None."""
    out = bytearray()
    for g in text.split(":"):
        if not g or any(c not in "0123456789abcdefABCDEF" for c in g):
            return None
        out += bytes.fromhex(g if len(g) % 2 == 0 else "0" + g)
    return bytes(out)


class Header(_jsondoc.Header):
    """Reads the header fields of one payload into a row, collecting problems."""

    def ts(self, obj, path, unit):
        x = self.int(obj, path)
        if x is None:
            return None
        us = to_us(x, unit)
        if us is None:
            self.fail(path, "is out of the timestamp range")
        return us


# -- the decoder ----------------------------------------------------------------------------

class Call:
    """What lasts across the parts of one call: the record ordinal and the table layouts."""

    def __init__(self):
        self.seq = 0
        self.layouts = {}       # table identity -> Layout
        self.no_layout = set()  # tables whose first change event had no schema (no catalog)


class Event:
    """One document read as a change event (before routing)."""
    __slots__ = ("doc", "payload", "prefix", "schema", "kind", "name")

    def __init__(self, doc, payload, prefix, schema, kind, name):
        self.doc, self.payload, self.prefix, self.schema = doc, payload, prefix, schema
        self.kind, self.name = kind, name   # kind: data, control, tombstone, corrupt


def classify(doc: Doc) -> Event:
    v = doc.value
    if doc.code:
        return Event(doc, None, (), None, "corrupt", None)
    if v is None:
        return Event(doc, None, (), None, "tombstone", None)
    if not isinstance(v, dict):
        return Event(doc, None, (), None, "corrupt", None)
    prefix, schema, payload = (), None, v
    if "payload" in v:
        if "payload" in dups(v):
            return Event(doc, None, (), None, "corrupt", None)
        payload, schema, prefix = v["payload"], v.get("schema"), ("payload",)
        if payload is None:
            return Event(doc, None, prefix, None, "tombstone", None)
        if not isinstance(payload, dict):
            return Event(doc, None, prefix, None, "corrupt", None)
    if "status" in payload or "tableChanges" in payload:
        kind = "control"
    elif payload.get("op") == "m" and "op" not in dups(payload):
        kind = "control"
    else:
        kind = "data"
    src = payload.get("source") if "source" not in dups(payload) else None
    name = None
    if isinstance(src, dict):
        sch, tab = src.get("schema"), src.get("table")
        sch = None if "schema" in dups(src) else sch
        tab = None if "table" in dups(src) else tab
        sch = sch if isinstance(sch, str) and sch and not isinstance(sch, Num) else None
        tab = tab if isinstance(tab, str) and tab and not isinstance(tab, Num) else None
        if tab is not None:
            name = full_name(sch, tab)
    if kind == "data" and name is None:
        kind = "corrupt"
    return Event(doc, payload, prefix, schema, kind, name)


class PartDecoder(RoutedRows):
    """Decode one Part: documents, routing, header and image conversion, batching."""

    def __init__(self, fmt, part, want, images, batch_rows, mode, stats, call):
        self.fmt, self.part, self.want, self.images = fmt, part, want, images
        self.batch_rows, self.mode, self.stats, self.call = batch_rows, mode, stats, call
        self.outputs = {}

    # -- layouts ------------------------------------------------------------------------------
    def identity(self, name):
        """(table identity, catalog Table or None) of a table name: the catalog's name; else,
        when the call merges it into an output (decode(table=X) takes the names matching X
        case-insensitively as X), that output's key, so that every spelling is read with
        the one layout the output's batches have; else the name as sent."""
        t = self.fmt.catalog.get(name) if self.fmt.catalog is not None and name else None
        if t is not None:
            return t.name, t
        key = self.want.resolve(name)[0] if name else None
        return (key if key is not None and key != HEADERS else name), None

    def learn(self, events):
        """Fix the layout of every table met in this part that has none yet: the catalog's,
        else the embedded schema of its first change event in the call (docs/debezium.md)."""
        layouts, none = self.call.layouts, self.call.no_layout
        for ev in events:
            if ev.kind != "data":
                continue
            ident, t = self.identity(ev.name)
            if ident in layouts or ident in none:
                continue
            if t is not None:
                layouts[ident] = self.fmt.catalog_layout(t)
                continue
            fields = image_fields(ev.schema)
            if fields is not None:
                layouts[ident] = self.fmt.schema_layout(ident, fields)
            else:
                none.add(ident)

    def layout_for(self, key):
        if key is None or key == HEADERS:
            return None
        lay = self.call.layouts.get(key)
        if lay is None and self.fmt.catalog is not None:
            t = self.fmt.catalog.get(key)
            if t is not None:
                lay = self.call.layouts[t.name] = self.fmt.catalog_layout(t)
        return lay

    def output(self, key) -> Output:
        o = self.outputs.get(key)
        if o is None:
            lay = self.layout_for(key) if self.images else None
            o = self.outputs[key] = Output(key, lay, self.images, self.want, SOURCE)
        return o

    # -- the loop -------------------------------------------------------------------------------
    def run(self):
        part, stats, want = self.part, self.stats, self.want
        msgs = []
        for i in range(part.count):
            if part.valid is not None and not part.valid[i]:
                stats["tombstones"] += 1
                continue
            data = part.message(i)
            evs = [classify(d) for d in documents(data)]
            if not evs:
                stats["tombstones"] += 1        # an empty message
            msgs.append((i, data, evs))
        self.learn(ev for _, _, evs in msgs for ev in evs)
        for i, data, evs in msgs:
            if want.messages:
                self.call.seq = 0           # each message an input (Spark, SPEC §6)
            for ev in evs:
                if ev.kind == "tombstone":
                    stats["tombstones"] += 1
                    continue
                seq = self.call.seq
                self.call.seq += 1
                stats["records"] += 1
                routed = self.route(ev, data, seq)
                full = self.deliver(i, *routed) if routed is not None else None
                if full is not None:
                    yield full
        yield from self.rest()

    def route(self, ev: Event, data: bytes, seq: int):
        """(key, row, first problem or None) of one event, or None when not wanted."""
        want, stats = self.want, self.stats
        doc = ev.doc
        if ev.kind == "corrupt":
            key = want.corrupt_key
            if key is None and want.table is not ALL:
                return None
            row = empty_row(seq)
            row["_corrupt_record"] = data[doc.start:doc.end]
            return key, row, self.corrupt_problem(ev, data)
        key, table = want.resolve(ev.name or "")
        ident = self.identity(ev.name)[0] if ev.name else None
        if ev.kind == "control":
            stats["control"] += 1
            if self.images or key is None:
                return None
        else:
            if table is None and ident not in self.call.layouts:
                stats["unknown_tables"] += 1
                if self.images and key is not None:
                    raise ValueError(
                        f"table {ev.name!r} is neither in the catalog nor described by an "
                        "embedded schema: give a catalog, or write the messages with "
                        "schemas.enable=true")
            if key is None:
                return None
        problems = []
        row = empty_row(seq)
        self.header(ev, row, problems)
        if self.images and ev.kind == "data":
            self.read_images(ev, row, problems)
        cut_raw_texts(row, data, doc)
        return key, row, resolve(problems, data, doc) if problems else None

    def corrupt_problem(self, ev, data):
        doc = ev.doc
        if doc.code:
            return doc.err_pos, None, f"invalid JSON: {scan_reason(doc.code, data, doc.err_pos)}"
        v = doc.value
        if not isinstance(v, dict):
            return doc.start, None, "invalid JSON: the document is not an object"
        if ev.payload is None:
            if "payload" in dups(v):
                return resolve([Problem("payload", ("payload",), "given twice", 2, True)],
                               data, doc)
            return resolve([Problem("payload", ("payload",), "is not an object")],
                           data, doc)
        name = ".".join(ev.prefix + ("source", "table"))
        return doc.start, name, "missing"

    def header(self, ev: Event, row: dict, problems: list):
        p = ev.payload
        h = Header(ev.prefix, problems)
        src = h.get(p, ("source",))
        if src is not None and not isinstance(src, dict):
            h.fail(("source",), "is not an object")
            src = None
        src = src or {}
        # schema / table as sent (an empty text reads as null)
        row["schema"] = h.text(p, ("source", "schema")) or None
        row["table"] = h.text(p, ("source", "table")) or None
        if self.fmt.catalog is not None and ev.name:
            t = self.fmt.catalog.get(ev.name)
            if t is not None:
                row["schema"], row["table"] = t.schema, t.table
        source = dict.fromkeys(SOURCE.names)
        for f in ("version", "connector", "name", "db"):
            source[f] = h.text(p, ("source", f))
        source["snapshot"] = h.text(p, ("source", "snapshot"))
        source["change_lsn"] = h.text(p, ("source", "change_lsn"))
        source["commit_lsn"] = h.text(p, ("source", "commit_lsn"))
        ts_us = h.get(p, ("ts_us",))
        source["processed_ts"] = h.ts(p, ("ts_us",), US) if ts_us is not None \
            else h.ts(p, ("ts_ms",), MS)
        if "status" in p:
            status = h.text(p, ("status",))
            row["source_op"] = status
            row["op"] = {"BEGIN": "begin", "END": "commit"}.get(status)
            if row["op"] is None:
                h.fail(("status",), "is not BEGIN or END")
            row["txid"] = h.text(p, ("id",))
            row["commit_ts"] = row["change_ts"] = h.ts(p, ("ts_ms",), MS)
            source["event_count"] = h.int(p, ("event_count",))
            source["data_collections"] = h.text(p, ("data_collections",))
            source["processed_ts"] = None
            row["source"] = source
            return
        if "tableChanges" in p:
            row["op"] = "ddl"
            tc = h.get(p, ("tableChanges",))
            first = tc[0] if isinstance(tc, list) and tc and isinstance(tc[0], dict) else {}
            kind = first.get("type") if "type" not in dups(first) else None
            ok = isinstance(kind, str) and not isinstance(kind, Num)
            try:
                ok = ok and bool(kind.encode("utf-8")) is not None
            except UnicodeEncodeError:
                ok = False
            row["source_op"] = kind if ok else None
        else:
            op = h.text(p, ("op",))
            row["source_op"] = op
            row["op"] = "message" if op == "m" else op if op in DATA_OPS else None
            if row["op"] is None:
                if op is None and h.get(p, ("op",)) is None and "op" not in dups(p):
                    problems.append(Problem(h.name(("op",)), (), "missing"))
                elif "op" not in dups(p):
                    h.fail(("op",), "is not one of c, u, d, r, t, m")
        tx = h.get(p, ("transaction",))
        if tx is not None and not isinstance(tx, dict):
            h.fail(("transaction",), "is not an object")
            tx = None
        row["txid"] = h.text(p, ("transaction", "id")) if tx else None
        total = h.int(p, ("transaction", "total_order")) if tx else None
        if total is not None:
            row["seq"] = total
        source["data_collection_order"] = h.int(p, ("transaction", "data_collection_order")) \
            if tx else None
        us = h.get(p, ("source", "ts_us"))
        row["commit_ts"] = row["change_ts"] = h.ts(p, ("source", "ts_us"), US) \
            if us is not None else h.ts(p, ("source", "ts_ms"), MS)
        for f, col in (("commit_lsn", "commit_pos"), ("change_lsn", "change_pos")):
            text = source[f]
            if isinstance(text, _RawText):      # an object or array is no LSN
                h.fail(("source", f), "is not an LSN (hex groups separated by ':')")
            elif isinstance(text, str):
                pos = lsn_bytes(text)
                if pos is None:
                    h.fail(("source", f), "is not an LSN (hex groups separated by ':')")
                row[col] = pos
        row["source"] = source

    def read_images(self, ev: Event, row: dict, problems: list):
        op = row["op"]
        lay = self.call.layouts[self.identity(ev.name)[0]]
        over = {}
        fields = image_fields(ev.schema)
        if fields is not None:
            over = self.fmt.overrides(fields)
        imgs = {}
        for img in ("before", "after"):
            path = ev.prefix + (img,)
            if img in dups(ev.payload):
                problems.append(Problem(".".join(path), path, "given twice", 2, True))
                imgs[img] = None
                continue
            v = ev.payload.get(img)
            if v is None:
                imgs[img] = None
                continue
            if not isinstance(v, dict):
                problems.append(Problem(".".join(path), path,
                                        lambda raw: f"{show_value(raw)} is not an object"))
                imgs[img] = None
                continue
            imgs[img] = self.image(img, v, path, lay, over, problems)
        before, after = imgs["before"], imgs["after"]
        row["before"] = before[0] if before else None
        row["after"] = after[0] if after else None
        cols = lay.columns
        shown = before if op == "d" else after
        if op in DATA_OPS and op != "t" and shown is not None:
            row["present"] = {c.name: c.name in shown[1] for c in cols}
        if op in ("c", "r"):
            row["changed"] = {c.name: True for c in cols}
        elif op == "d":
            row["changed"] = {c.name: False for c in cols}
        elif op == "u" and before is not None and after is not None:
            row["changed"] = {c.name: not same(before[0][c.name], after[0][c.name], c.type.kind)
                              for c in cols}

    def image(self, img, obj, path, lay, over, problems):
        """(values by column, the set of columns sent) of one image object."""
        values = dict.fromkeys(lay.index)
        sent = set()
        bad = dups(obj)
        for k, v in obj.items():
            j = lay.index.get(k)
            if j is None:
                self.stats["extra_columns"] += 1
                continue
            col = lay.columns[j]
            sent.add(k)
            field = f"{img}.{k}"
            if k in bad:
                problems.append(Problem(field, path + (k,), "given twice", 2, True))
                continue
            if img == "before" and not self.want.before:
                continue        # a projection without before: its values not read (SPEC §1)
            if v is None:
                if not col.nullable:
                    problems.append(Problem(field, path + (k,), "null in NOT NULL column"))
                continue
            enc, scale = over.get(k, (col.enc, col.scale))
            try:
                x = convert(col, enc, scale, v)
            except Bad as e:
                why = e.args[0] if e.args else f"is not {col.type.name}"
                problems.append(Problem(field, path + (k,),
                                        lambda raw, w=why: f"{show_value(raw)} {w}"))
                continue
            values[k] = _RawText(path + (k,)) if x is _AS_SENT else x
        return values, sent


def reference_batches(fmt, parts, want, images, batch_rows, mode, stats):
    """Yield ``(output key, RecordBatch)`` for every Part of the source."""
    call = Call()
    for part in parts:
        yield from PartDecoder(fmt, part, want, images, batch_rows, mode, stats, call).run()


__all__ = ["reference_batches", "documents", "convert", "Num"]
