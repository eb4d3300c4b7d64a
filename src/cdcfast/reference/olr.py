"""The reference decoder of `olr` (SPEC §5.4, docs/olr.md), in plain Python.

This is the slow per-record parser the native kernel replaces, and the oracle it is tested
against. It reads a call in two passes: the first parses every document and fixes each table's
layout (the catalog's, else the `schema.columns` of its first data event, else the JSON kinds,
whose columns are every key met in the call — so every batch of a call has the same columns);
the second reads the message fields (carrying scn and tm forward by xid), turns every payload
element into a row and routes it. The `json` module parses (numbers kept as their text, so
NUMBER values stay exact); byte positions are found only for records with an error, by the
`Spans` of cdcfast.formats._jsontext.
"""
from __future__ import annotations

import decimal
import re
import struct

from ..catalog import (BINARY, BOOL, DECIMAL, DECTEXT, FLOAT32, FLOAT64, STRING, TIME64,
                       TIMESTAMP, TIMESTAMP_TZ)
from ..errors import show_value
from ..formats._jsonmessages import utf8_text as encodable
from ..formats._jsontext import Num, Problem, Spans, dups, resolve, scan_reason
from ..formats.base import ALL, HEADERS, full_name
from ..formats.olr import SOURCE, normal_xid
from ._jsondoc import (_INT, _NUMBER, I64, INT_RANGE, Bad, Header, Output, RoutedRows,
                       cut_raw_texts, documents, empty_row, integer, iso_us, number_parts,
                       rescale, same)

# payload.op as sent -> envelope op
OPS = {"begin": "begin", "commit": "commit", "c": "c", "u": "u", "d": "d", "ddl": "ddl",
       "chkpt": "checkpoint"}
OP_LIST = "begin, commit, c, u, d, ddl, chkpt"
DATA_OPS = ("c", "u", "d")
# the images an op reads
READS = {"c": ("after",), "u": ("before", "after"), "d": ("before",)}
SCN_MAX = 2 ** 63 - 1

_EPOCH = re.compile(r"-?[0-9]+")
_SCNS = re.compile(r"0x([0-9a-fA-F]{1,16})")
_HEX = re.compile(r"(?:[0-9a-fA-F]{2})*")
_TIME = re.compile(r"([0-9]{2}):([0-9]{2}):([0-9]{2})(?:\.([0-9]+))?")
_BOOLS = {"1": True, "0": False, "true": True, "false": False}


# -- values -------------------------------------------------------------------------------

def number_text(v):
    """The text of a JSON number, or of a string holding one; else None."""
    if isinstance(v, Num) or (isinstance(v, str) and _NUMBER.fullmatch(v)):
        return str(v)
    return None


def epoch_us(text: str, unit: str):
    """µs since the epoch of epoch digits (an optional `-`) in `unit` (`auto`: by the number
    of digits, docs/olr.md), sub-µs digits floored; None outside the int64 µs range."""
    if len(text) > 40:
        return None
    x = int(text)
    if unit == "auto":
        digits = len(str(abs(x)))
        unit = "s" if digits <= 11 else "ms" if digits <= 14 else "us" if digits <= 17 else "ns"
    us = x * 1_000_000 if unit == "s" else x * 1000 if unit == "ms" else \
        x if unit == "us" else x // 1000
    return us if I64[0] <= us <= I64[1] else None


def time_us(v, unit: str):
    """µs since the epoch of a time value: an epoch (a JSON integer or a string of digits),
    ISO-8601 text (`T` or a space between date and time), either followed by `,<zone>`,
    whose zone part is not read; None when it is none of these or out of range."""
    if isinstance(v, Num):
        return epoch_us(v, unit) if _INT.fullmatch(v) else None
    if not isinstance(v, str):
        return None
    text = v.split(",", 1)[0]
    if _EPOCH.fullmatch(text):
        return epoch_us(text, unit)
    if len(text) > 10 and text[10] == " ":
        text = text[:10] + "T" + text[11:]
    return iso_us(text, True)


def convert(col, v, unit: str):
    """The Python value (as pyarrow takes it) of the non-null JSON value `v` for layout column
    `col` (docs/olr.md, "Values"); raises Bad."""
    kind = col.type.kind
    if kind in INT_RANGE:
        parts = number_parts(number_text(v) or "")
        if parts is None or parts[1] < 0 or parts[1] > 20:
            raise Bad
        x = parts[0] * 10 ** parts[1]
        lo, hi = INT_RANGE[kind]
        if not lo <= x <= hi:
            raise Bad
        return x
    if kind == DECIMAL:
        parts = number_parts(number_text(v) or "")
        u = rescale(*parts, col.type.scale, col.type.precision) if parts else None
        if u is None:
            raise Bad
        return decimal.Decimal(f"{u}E-{col.type.scale}")
    if kind == DECTEXT:
        text = number_text(v)
        if text is None:
            raise Bad
        return text
    if kind in (FLOAT32, FLOAT64):
        text = number_text(v)
        x = float(text) if text is not None else float("inf")
        if x in (float("inf"), float("-inf")):
            raise Bad
        if kind == FLOAT32:
            try:
                x = struct.unpack("<f", struct.pack("<f", x))[0]
            except OverflowError:
                raise Bad from None
        return x
    if kind == STRING:
        if v is True or v is False:
            return "true" if v else "false"
        if not isinstance(v, str):
            raise Bad
        try:
            v.encode("utf-8")
        except UnicodeEncodeError:
            raise Bad("has a lone surrogate in a \\u escape") from None
        return str(v)
    if kind == BINARY:
        if isinstance(v, Num) or not isinstance(v, str) or not _HEX.fullmatch(v):
            raise Bad
        return bytes.fromhex(v)
    if kind in (TIMESTAMP, TIMESTAMP_TZ):
        us = time_us(v, unit)
        if us is None:
            raise Bad
        return us
    if kind == TIME64:
        m = _TIME.fullmatch(v) if isinstance(v, str) and not isinstance(v, Num) else None
        if not m:
            raise Bad
        h, mi, s = int(m.group(1)), int(m.group(2)), int(m.group(3))
        if h > 23 or mi > 59 or s > 59:
            raise Bad
        return (h * 3600 + mi * 60 + s) * 1_000_000 + int(((m.group(4) or "") + "000000")[:6])
    if kind == BOOL:
        if v is True or v is False:
            return v
        if isinstance(v, str) and v in _BOOLS:
            return _BOOLS[v]
        raise Bad
    raise Bad


# -- message fields ---------------------------------------------------------------------------

def xid_of(text):
    """The normalized form `0xuuuu.sss.qqqqqqqq` of an xid text, or None."""
    if isinstance(text, Num):
        return None
    return normal_xid(text)


def xidn_of(v):
    """The normalized xid of a numeric `xidn` (usn << 48 | slot << 32 | sqn), or None."""
    x = integer(v, 0, 2 ** 64 - 1) if isinstance(v, str) else None
    if x is None:
        return None
    return f"0x{x >> 48:04x}.{(x >> 32) & 0xFFFF:03x}.{x & 0xFFFFFFFF:08x}"


class Message:
    """The fields every element of one OLR message shares (docs/olr.md, "Message fields"),
    with the problems found reading them."""

    def __init__(self, v: dict, unit: str):
        self.problems = []
        self.commits = any(isinstance(el, dict) and el.get("op") == "commit"
                           and "op" not in dups(el) for el in v["payload"])
        h = Header((), self.problems)
        self.db = h.text(v, ("db",))
        self.num = h.int(v, ("num",))
        self.c_scn = self.scn(h, v, "c_scn")
        self.c_idx = self.unsigned(h, v, "c_idx", "is not a non-negative integer")
        self.scn_sent, self.scn_value = self.either(h, v, "scn", "scns", self.scn_text)
        self.tm_sent, self.tm_value = self.either(
            h, v, "tm", "tms", lambda h, v, key: self.time(h, v, key, unit))
        self.txid = self.xid = None         # normalized, as sent
        for key, norm in (("xid", xid_of), ("xidn", xidn_of)):
            raw = h.get(v, (key,))
            if raw is not None:
                self.xid = h.text(v, (key,))
                self.txid = norm(raw)
                if self.txid is None:
                    h.fail((key,), "is not a transaction id")
                break
            if key in dups(v):
                break
        self.scn = self.tm = None           # after carry-forward (PartDecoder.carry)

    @staticmethod
    def either(h, v, number_key, text_key, read):
        """(whether the field was sent, its value or None) of a field the writer sends under
        one of two names; the first is read when both are (docs/olr.md)."""
        for key in (number_key, text_key):
            if h.get(v, (key,)) is not None:
                return True, read(h, v, key)
            if key in dups(v):
                return True, None
        return False, None

    @staticmethod
    def unsigned(h, v, key, reason):
        raw = h.get(v, (key,))
        if raw is None:
            return None
        x = integer(raw, 0, SCN_MAX) if isinstance(raw, str) else None
        if x is None:
            h.fail((key,), reason)
        return x

    def scn(self, h, v, key):
        return self.unsigned(h, v, key, "is not an SCN")

    def scn_text(self, h, v, key):
        if key == "scn":
            return self.scn(h, v, key)
        raw = h.get(v, (key,))
        m = _SCNS.fullmatch(raw) if isinstance(raw, str) and not isinstance(raw, Num) else None
        x = int(m.group(1), 16) if m else None
        if x is None or x > SCN_MAX:
            h.fail((key,), "is not an SCN")
            return None
        return x

    @staticmethod
    def time(h, v, key, unit):
        raw = h.get(v, (key,))
        us = time_us(raw, unit)
        if us is None:
            h.fail((key,), "is not a time")
        return us


# -- records -------------------------------------------------------------------------------------

class Record:
    """One record of a message: a payload element, or a whole document that is corrupt or
    a tombstone (`kind`: data, control, corrupt, tombstone)."""
    __slots__ = ("kind", "doc", "j", "element", "op", "name", "problem")

    def __init__(self, kind, doc, j=None, element=None, op=None, name=None, problem=None):
        self.kind, self.doc, self.j, self.element = kind, doc, j, element
        self.op, self.name = op, name
        self.problem = problem          # a corrupt record's (byte, field, reason), or None


def element_name(el: dict):
    """`owner.table` of an element's schema (the bare table without an owner), or None when
    it names no table."""
    sch = el.get("schema") if "schema" not in dups(el) else None
    if not isinstance(sch, dict):
        return None
    table = sch.get("table") if "table" not in dups(sch) else None
    if not isinstance(table, str) or isinstance(table, Num) or not table \
            or not encodable(table):
        return None
    owner = sch.get("owner") if "owner" not in dups(sch) else None
    owner = owner if isinstance(owner, str) and not isinstance(owner, Num) and owner \
        and encodable(owner) else None
    return full_name(owner, table)


def column_list(el: dict):
    """An element's `schema.columns` when it is a list of objects with a text `name`; None
    when not sent; False when sent but not such a list."""
    sch = el.get("schema")
    if not isinstance(sch, dict) or sch.get("columns") is None:
        return None
    cols = sch["columns"]
    if "columns" in dups(sch) or not isinstance(cols, list) or not all(
            isinstance(c, dict) and isinstance(c.get("name"), str)
            and not isinstance(c.get("name"), Num) and "name" not in dups(c)
            and encodable(c["name"]) for c in cols):
        return False
    return cols


def records(doc, data):
    """The records of one document (docs/olr.md, "Inputs and framing")."""
    if doc.code:
        return [Record("corrupt", doc, problem=(
            doc.err_pos, None, f"invalid JSON: {scan_reason(doc.code, data, doc.err_pos)}"))]
    v = doc.value
    if v is None:
        return [Record("tombstone", doc)]
    if not isinstance(v, dict):
        return [Record("corrupt", doc, problem=(
            doc.start, None, "invalid JSON: the document is not an object"))]
    if "payload" in dups(v):
        return [Record("corrupt", doc, problem=resolve(
            [Problem("payload", ("payload",), "given twice", 2, True)], data, doc))]
    payload = v.get("payload")
    if payload is None:
        return [Record("corrupt", doc, problem=(doc.start, "payload", "missing"))]
    if not isinstance(payload, list):
        return [Record("corrupt", doc, problem=resolve(
            [Problem("payload", ("payload",), lambda raw: f"{show_value(raw)} is not an array")],
            data, doc))]
    out = []
    for j, el in enumerate(payload):
        if not isinstance(el, dict):
            out.append(Record("corrupt", doc, j, problem=resolve(
                [Problem(f"payload[{j}]", ("payload", j),
                         lambda raw: f"{show_value(raw)} is not an object")], data, doc)))
            continue
        raw_op = el.get("op") if "op" not in dups(el) else None
        op = OPS.get(raw_op) if isinstance(raw_op, str) and not isinstance(raw_op, Num) \
            else None
        name = element_name(el)
        if op is not None and op not in DATA_OPS:
            out.append(Record("control", doc, j, el, op, name))
        elif name is not None:
            out.append(Record("data", doc, j, el, op, name))
        elif op is None:            # no table and no valid op: what it is, is unknown
            problems = []
            op_problem(Header(("payload", j), problems, ("payload",)), el)
            out.append(Record("corrupt", doc, j, el, problem=resolve(problems, data, doc)))
        else:
            out.append(Record("corrupt", doc, j, el, problem=(
                Spans(data, doc.end).span(doc.start, ("payload", j))[0],
                "payload.schema.table", "missing")))
    return out


def op_problem(h: Header, el: dict):
    """Note why an element's `op` is none of OPS (given twice, missing, or another value)."""
    if "op" in dups(el):
        h.get(el, ("op",))
    elif el.get("op") is None:
        h.problems.append(Problem(h.name(("op",)), h.prefix, "missing"))
    else:
        h.fail(("op",), f"is not one of {OP_LIST}")


# -- the decoder ----------------------------------------------------------------------------

class Call:
    """What lasts across the parts of one call: the record ordinal, the table layouts and the
    carried scn/tm of open transactions."""

    def __init__(self):
        self.seq = 0
        self.layouts = {}       # table identity -> Layout
        self.carry = {}         # normalized xid -> [scn, tm]


class PartDecoder(RoutedRows):
    """Decode one Part: messages, routing, header and image conversion, batching."""

    def __init__(self, fmt, part, msgs, want, images, batch_rows, mode, stats, call):
        self.fmt, self.part, self.msgs, self.want = fmt, part, msgs, want
        self.images, self.batch_rows, self.mode = images, batch_rows, mode
        self.stats, self.call = stats, call
        self.unit = fmt.options["epoch_unit"]
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

    def learn(self):
        """Fix the layout of every table met in this part that has none yet, and grow the
        JSON-kinds layouts by the keys of the images their data events read."""
        layouts = self.call.layouts
        for _, _, docs in self.msgs:
            for rec in (r for _, recs in docs or () for r in recs):
                if rec.kind != "data":
                    continue
                ident, t = self.identity(rec.name)
                lay = layouts.get(ident)
                if lay is None:
                    cols = column_list(rec.element)
                    lay = layouts[ident] = self.fmt.catalog_layout(t) if t is not None \
                        else self.fmt.schema_layout(ident, cols) if cols \
                        else self.fmt.kinds_layout(ident)
                if lay.derived and rec.op is not None:
                    for img in READS[rec.op]:
                        for key in image_keys(rec.element, img):
                            if key not in lay.index and encodable(key):
                                lay.add(key)

    def layout_for(self, key):
        """The layout of an output key (a requested table's, also before its first row)."""
        if key is None or key == HEADERS:
            return None
        lay = self.call.layouts.get(key)
        t = self.fmt.catalog.get(key) if lay is None and self.fmt.catalog is not None else None
        if t is not None:
            lay = self.fmt.catalog_layout(t)
        return lay

    def output(self, key) -> Output:
        o = self.outputs.get(key)
        if o is None:
            lay = self.layout_for(key) if self.images else None
            o = self.outputs[key] = Output(key, lay, self.images, self.want, SOURCE)
        return o

    # -- the loop -------------------------------------------------------------------------------
    def run(self):
        stats, want, call = self.stats, self.want, self.call
        for i, data, docs in self.msgs:
            if docs is None:
                stats["tombstones"] += 1        # a null or empty message
                continue
            if want.messages:
                call.seq = 0                # each message an input (Spark, SPEC §6)
            for msg, recs in docs:
                if msg is not None:
                    self.carry(msg)
                for rec in recs:
                    if rec.kind == "tombstone":
                        stats["tombstones"] += 1
                        continue
                    seq = call.seq
                    call.seq += 1
                    stats["records"] += 1
                    routed = self.route(rec, msg, data, seq)
                    full = self.deliver(i, *routed) if routed is not None else None
                    if full is not None:
                        yield full
                if msg is not None and msg.txid is not None and msg.commits:
                    call.carry.pop(msg.txid, None)  # the transaction ends with its message
        yield from self.rest()

    def carry(self, msg: Message):
        """Set the message's scn and tm, carried forward by xid (docs/olr.md)."""
        msg.scn, msg.tm = msg.scn_value, msg.tm_value
        if msg.txid is not None:
            mem = self.call.carry.setdefault(msg.txid, [None, None])
            if msg.scn_sent:
                if msg.scn is not None:
                    mem[0] = msg.scn
            else:
                msg.scn = mem[0]
            if msg.tm_sent:
                if msg.tm is not None:
                    mem[1] = msg.tm
            else:
                msg.tm = mem[1]

    def route(self, rec: Record, msg, data: bytes, seq: int):
        """(key, row, first problem or None) of one record, or None when not wanted."""
        want, stats = self.want, self.stats
        doc = rec.doc
        if rec.kind == "corrupt":
            key = want.corrupt_key
            if key is None and want.table is not ALL:
                return None
            row = empty_row(seq)
            span = Spans(data, doc.end).span(doc.start, ("payload", rec.j)) \
                if rec.j is not None else (doc.start, doc.end)
            row["_corrupt_record"] = data[span[0]:span[1]]
            return key, row, rec.problem
        key, table = want.resolve(rec.name or "")
        if rec.kind == "control":
            stats["control"] += 1
            if self.images or key is None:
                return None
        else:
            if self.call.layouts.get(self.identity(rec.name)[0]).derived:
                stats["unknown_tables"] += 1
            if key is None:
                return None
        problems = list(msg.problems)
        row = empty_row(seq)
        self.header(rec, msg, row, problems)
        if self.images and rec.kind == "data" and rec.op is not None:
            self.read_images(rec, row, problems)
        cut_raw_texts(row, data, doc)
        return key, row, resolve(problems, data, doc) if problems else None

    def header(self, rec: Record, msg: Message, row: dict, problems: list):
        el, j = rec.element, rec.j
        h = Header(("payload", j), problems, ("payload",))
        row["op"] = rec.op
        row["source_op"] = h.text(el, ("op",))
        if rec.op is None:
            op_problem(h, el)
        sch = h.get(el, ("schema",))
        obj = None
        if sch is not None and not isinstance(sch, dict):
            h.fail(("schema",), "is not an object")
        elif sch is not None:
            hs = Header(("payload", j, "schema"), problems, ("payload", "schema"))
            for f in ("owner", "table"):
                v = hs.get(sch, (f,))
                if v is not None and (not isinstance(v, str) or isinstance(v, Num)):
                    hs.fail((f,), "is not text")
                elif v and not encodable(v):
                    hs.fail((f,), "has a lone surrogate in a \\u escape")
                elif v:
                    row["schema" if f == "owner" else "table"] = v
            obj = hs.int(sch, ("obj",))
            if column_list(el) is False and "columns" not in dups(sch):
                hs.fail(("columns",), "is not a list of columns")
            else:
                hs.get(sch, ("columns",))       # notes a key given twice
        if rec.name is not None and self.fmt.catalog is not None:
            t = self.fmt.catalog.get(rec.name)
            if t is not None:
                row["schema"], row["table"] = t.schema, t.table
        row["txid"] = msg.txid if rec.op != "checkpoint" else None
        row["commit_ts"] = row["change_ts"] = msg.tm
        commit = msg.c_scn if msg.c_scn is not None else msg.scn
        if commit is not None:
            row["commit_pos"] = commit.to_bytes(8, "big")
            row["change_pos"] = (row["commit_pos"] + (msg.c_idx or 0).to_bytes(8, "big")
                                 + j.to_bytes(4, "big"))
        num = h.int(el, ("num",))
        ddl = h.text(el, ("sql",))
        redo = h.get(el, ("redo",))
        if redo is not None:
            redo = _BOOLS.get(redo) if isinstance(redo, str) and redo in ("0", "1") else \
                redo if redo is True or redo is False else None
            if redo is None:
                h.fail(("redo",), "is not a boolean")
        row["source"] = {
            "db": msg.db, "scn": msg.scn, "c_scn": msg.c_scn, "c_idx": msg.c_idx, "obj": obj,
            "num": num if num is not None else msg.num, "xid": msg.xid,
            "rid": h.text(el, ("rid",)), "ddl": ddl if ddl is not None else h.text(el, ("ddl",)),
            "checkpoint_seq": h.int(el, ("seq",)), "checkpoint_offset": h.int(el, ("offset",)),
            "checkpoint_redo": redo}

    def read_images(self, rec: Record, row: dict, problems: list):
        op, j = rec.op, rec.j
        lay = self.call.layouts[self.identity(rec.name)[0]]
        imgs = {}
        for img in READS[op]:
            path = ("payload", j, img)
            if img in dups(rec.element):
                problems.append(Problem(img, path, "given twice", 2, True))
                imgs[img] = None
                continue
            imgs[img] = self.image(img, rec.element.get(img), path, lay, problems)
        before, after = imgs.get("before"), imgs.get("after")
        row["before"] = before[0] if before else None
        row["after"] = after[0] if after else None
        cols = lay.columns
        if op == "c":
            row["changed"] = dict.fromkeys(lay.index, True)
            row["present"] = dict.fromkeys(lay.index, True) if after else None
        elif op == "d":
            row["changed"] = dict.fromkeys(lay.index, False)
            row["present"] = dict.fromkeys(lay.index, True) if before else None
        elif after is not None:
            sent = after[1]
            row["present"] = {c.name: c.name in sent for c in cols}
            row["changed"] = {
                c.name: c.name in sent and (before is None or c.name not in before[1]
                                            or not same(before[0][c.name], after[0][c.name],
                                                        c.type.kind))
                for c in cols}

    def image(self, img, value, path, lay, problems):
        """(values by column, the set of columns sent) of one image, or None (with a problem
        when it is neither an object nor an array of one-member objects)."""
        if value is None:
            return None
        if isinstance(value, dict):
            members = [(k, v, path + (k,), 2 if k in dups(value) else 0)
                       for k, v in value.items()]
        elif isinstance(value, list):
            members, seen = [], set()
            for k, el in enumerate(value):
                if not isinstance(el, dict) or len(el) != 1 or dups(el):
                    problems.append(Problem(img, path + (k,), lambda raw: (
                        f"{show_value(raw)} is not an object of one column")))
                    return None
                (name, v), = el.items()
                twice = 2 if name in dups(el) else 1 if name in seen else 0
                seen.add(name)
                members.append((name, v, path + (k, name), twice))
        else:
            problems.append(Problem(img, path,
                                    lambda raw: f"{show_value(raw)} is not an object"))
            return None
        values = dict.fromkeys(lay.index)
        sent = set()
        for name, v, vpath, twice in members:
            j = lay.index.get(name)
            if j is None:
                self.stats["extra_columns"] += 1
                continue
            col = lay.columns[j]
            field = f"{img}.{name}"
            if twice:
                problems.append(Problem(field, vpath, "given twice", twice, True))
                values[name] = None
                sent.add(name)
                continue
            sent.add(name)
            if img == "before" and not self.want.before:
                continue        # a projection without before: its values not read (SPEC §1)
            if v is None:
                if not col.nullable:
                    problems.append(Problem(field, vpath, "null in NOT NULL column"))
                continue
            try:
                values[name] = convert(col, v, self.unit)
            except Bad as e:
                why = e.args[0] if e.args else f"is not {col.type.name}"
                problems.append(Problem(field, vpath,
                                        lambda raw, w=why: f"{show_value(raw)} {w}"))
        return values, sent


def image_keys(el: dict, img: str):
    """The column names an element's image carries, in order (none when it is not an object
    or an array of one-member objects)."""
    value = el.get(img) if img not in dups(el) else None
    if isinstance(value, dict):
        return list(value)
    if isinstance(value, list) and all(isinstance(m, dict) and len(m) == 1 and not dups(m)
                                       for m in value):
        return [next(iter(m)) for m in value]
    return []


def parse_part(part, unit: str) -> list:
    """(message index, bytes, [(Message or None, records) per document], or None for a
    tombstone message) of every message of a part."""
    out = []
    for i in range(part.count):
        if part.valid is not None and not part.valid[i]:
            out.append((i, None, None))
            continue
        data = part.message(i)
        docs = []
        for doc in documents(data):
            v = doc.value
            is_message = not doc.code and isinstance(v, dict) and "payload" not in dups(v) \
                and isinstance(v.get("payload"), list)
            docs.append((Message(v, unit) if is_message else None, records(doc, data)))
        out.append((i, data, docs or None))
    return out


def reference_batches(fmt, parts, want, images, batch_rows, mode, stats):
    """Yield ``(output key, RecordBatch)`` for every Part of the source, once every part has
    been read (the layouts of JSON-kinds tables take keys from the whole call)."""
    call = Call()
    decoders = []
    for part in parts:
        d = PartDecoder(fmt, part, parse_part(part, fmt.options["epoch_unit"]), want, images,
                        batch_rows, mode, stats, call)
        d.learn()
        decoders.append(d)
    for d in decoders:
        yield from d.run()


__all__ = ["reference_batches", "convert", "time_us", "xid_of"]
