"""The general-purpose contender of `cdcfast bench --format lldf` (SPEC §8): a plain `struct`
decoder, the loop Db2-for-z/OS shops write today when they do not use Cobrix.

It is what such a script does, no more: per record it unpacks the header with one
precompiled `struct.Struct`, slices the owner and table names, reads each row image column by
column with per-type helpers chosen once per table (packed decimal through its hex text,
HFP through the formula, text through `bytes.decode`), and builds Arrow columns from Python
lists at the end. It checks nothing and handles no segments: a fair speed baseline, not a
decoder (use cdcfast.reference for correct results in pure Python).
"""
from __future__ import annotations

import datetime as dt
import decimal
import struct

import pyarrow as pa

from ..formats.lldf import (K_BINARY, K_BLOB, K_BOOL, K_CHAR, K_CLOB, K_DATE, K_DBCLOB, K_DEC,
                            K_F32, K_F64, K_GRAPHIC, K_I16, K_I32, K_I64, K_TIME, K_TS, K_TSZ,
                            K_VARBIN, K_VARCHAR, K_VARGRAPHIC, K_XML, layout)

_HEAD = struct.Struct(">H4sHHHHH8s8s8s18sH17s10s10sH5s2s")
_TAIL = struct.Struct(">10s10sHHH4x10s10s")


def _bcd(b: bytes):
    s = b.hex()
    if s.strip("0") == "":
        return None
    return dt.datetime(int(s[0:4]), int(s[4:6]), int(s[6:8]), int(s[8:10]), int(s[10:12]),
                       int(s[12:14]), int(s[14:20]), tzinfo=dt.timezone.utc)


def _hfp(w: int, bits: int) -> float:
    if w == 0:
        return 0.0
    sign = -1.0 if w >> (bits + 7) & 1 else 1.0
    return sign * (w & ((1 << bits) - 1)) / float(1 << bits) * 16.0 ** (((w >> bits) & 0x7F) - 64)


def _reader(column, encoding, hfp):
    """(value reader: (data, pos) -> (value, new pos)) for one column, chosen once."""
    kind, width = layout(column)
    scale = column.type.scale

    def fixed(conv):
        return lambda d, p: (conv(d[p:p + width]), p + width)

    def var(size, conv):
        fmt = ">H" if size == 2 else ">I"

        def read(d, p):
            n = struct.unpack_from(fmt, d, p)[0]
            p += size
            return conv(d[p:p + n]), p + n
        return read

    text = lambda b: b.decode(encoding)   # noqa: E731
    if kind in (K_I16, K_I32, K_I64):
        f = {K_I16: ">h", K_I32: ">i", K_I64: ">q"}[kind]
        return lambda d, p: (struct.unpack_from(f, d, p)[0], p + width)
    if kind == K_DEC:
        def dec(b):
            h = b.hex()
            sign = "-" if h[-1] in "db" else ""              # in the text: exact (negating
            return decimal.Decimal(f"{sign}{h[:-1]}E-{scale}")  # rounds to 28 digits)
        return fixed(dec)
    if kind == K_F32:
        return fixed((lambda b: _hfp(int.from_bytes(b, "big"), 24)) if hfp
                     else (lambda b: struct.unpack(">f", b)[0]))
    if kind == K_F64:
        return fixed((lambda b: _hfp(int.from_bytes(b, "big"), 56)) if hfp
                     else (lambda b: struct.unpack(">d", b)[0]))
    if kind == K_BOOL:
        return fixed(lambda b: b[0] == 1)
    if kind == K_DATE:
        return fixed(lambda b: dt.date.fromisoformat(text(b)))
    if kind == K_TIME:
        return fixed(lambda b: dt.time(*map(int, text(b).split("."))))
    if kind in (K_TS, K_TSZ):
        def ts(b):
            s = text(b)
            t = dt.datetime.strptime(s[:19], "%Y-%m-%d-%H.%M.%S")
            return t.replace(microsecond=int((s[20:26] or "0").ljust(6, "0")))
        return fixed(ts)
    if kind == K_CHAR:
        return fixed(text)
    if kind == K_GRAPHIC:
        return fixed(lambda b: b.decode("utf-16-be"))
    if kind == K_BINARY:
        return fixed(bytes)
    if kind == K_VARCHAR:
        return var(2, text)
    if kind == K_VARGRAPHIC:
        return var(2, lambda b: b.decode("utf-16-be"))
    if kind == K_VARBIN:
        return var(2, bytes)
    if kind == K_CLOB:
        return var(4, text)
    if kind == K_DBCLOB:
        return var(4, lambda b: b.decode("utf-16-be"))
    if kind == K_BLOB:
        return var(4, bytes)
    if kind == K_XML:
        return var(4, lambda b: b.decode("utf-8"))
    raise ValueError(column.type.name)


def _skipper(column):
    """(data, pos) -> pos past a null column's bytes (they follow the null byte unread)."""
    kind, width = layout(column)
    if width:
        return lambda d, p: p + width
    if kind in (K_CLOB, K_DBCLOB, K_BLOB, K_XML):
        return lambda d, p: p + 4 + struct.unpack_from(">I", d, p)[0]
    return lambda d, p: p + 2 + struct.unpack_from(">H", d, p)[0]


def struct_decoder(catalog, table, encoding="cp037", float_format="hfp"):
    """decode(data) -> pyarrow.Table of raw-framed records of one table: the baseline."""
    t = catalog.get(table)
    readers = [(c.name, c.nullable, _reader(c, encoding, float_format == "hfp"), _skipper(c))
               for c in t.columns]
    ops = {"UB": "u", "I ": "c", "IL": "c", "D ": "d"}

    def image(d, p):
        row = {}
        for name, nullable, read, skip in readers:
            if nullable and d[p]:
                row[name] = None
                p = skip(d, p + 1)
            elif nullable:
                row[name], p = read(d, p + 1)
            else:
                row[name], p = read(d, p)
        return row, p

    def decode(data):
        out = {k: [] for k in ("op", "schema", "table", "txid", "commit_ts", "change_ts",
                               "commit_pos", "change_pos", "before", "after")}
        pos, end = 0, len(data)
        while pos < end:
            (length, _, _, _, _, olen, nlen, _, _, owner, name, _, ts, lrsn, _, _, _,
             ctype) = _HEAD.unpack_from(data, pos)
            (_, _, seglen, _, _, commit_lrsn, _) = _TAIL.unpack_from(data, pos + 162)
            op = ops.get(ctype.decode(encoding))
            if op is not None:
                p = pos + length + 2
                before = after = None
                if op in ("u", "d"):
                    before, p = image(data, p + 2)
                if op in ("u", "c"):
                    after, p = image(data, p + 2)
                out["op"].append(op)
                out["schema"].append(owner[:olen].decode(encoding).rstrip())
                out["table"].append(name[:nlen].decode(encoding).rstrip())
                out["txid"].append(data[pos + 172:pos + 182].hex().upper())
                out["commit_ts"].append(_bcd(data[pos + 144:pos + 161]))
                out["change_ts"].append(_bcd(ts))
                out["commit_pos"].append(commit_lrsn)
                out["change_pos"].append(lrsn)
                out["before"].append(before)
                out["after"].append(after)
            pos += length + seglen
        image_t = pa.struct([pa.field(c.name, c.type.arrow_type) for c in t.columns])
        cols = {k: pa.array(v, type=image_t) if k in ("before", "after") else pa.array(v)
                for k, v in out.items()}
        return pa.table(cols)

    return decode
