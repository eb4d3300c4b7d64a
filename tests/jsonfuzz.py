"""What tests/test_olr_fuzz.py and tests/test_qlik_fuzz.py share: mutations of JSON CDC
messages (bytes changed, cut, spans doubled, JSON-ish tokens put in, values swapped, keys given
twice, messages dropped, doubled, split, joined or made tombstones), the native decoder run
over a mutated input in every mode and source form (the child-process corpus), and the
native-against-reference comparison (values, `_error` texts, `_corrupt_record` bytes,
`last_stats`, FAILFAST errors).

A format's test module gives the format-specific parts: its base corpus (generated streams and
peer-data), the keys worth doubling or inserting and the values worth putting under them, and
its known disagreements (`compare(known=…)`, `survive(known=…)`): rules that recognize an input
meeting a bug that has an xfail regression case, so that the random sample steps around it
and keeps looking for new ones."""
from __future__ import annotations

import random

import pyarrow as pa

import cdcfast
import cdcfast.reference
from cdcfast.formats.base import grown_table

MODES = ("PERMISSIVE", "DROPMALFORMED", "FAILFAST")

# JSON-ish bytes put in anywhere: structure, escapes, numbers past every range, nesting past
# the 512 limit, invalid UTF-8, \u escapes (lone surrogates among them), control bytes
TOKENS = [
    b"{", b"}", b"[", b"]", b'"', b"\\", b",", b":", b"null", b"\n{", b"\n", b" ", b"\t", b"\r",
    b"true", b"false", b'""', b"{}", b"[]", b"\n\n", b"{\n", b"}\n{", b"\"\":\"\"",
    b"1e999999", b"-1e-999999", b"1E+400", b"-0", b"0.000000000000000000000000000001", b"01",
    b"123456789012345678901234567890123456789012345", b"18446744073709551616",
    b"9223372036854775808", b"-9223372036854775809", b"1.", b".5", b"+1", b"0x1F", b"NaN",
    b"[" * 600, b'{"a":' * 520, b"[" * 40 + b"]" * 40, b'{"a":' * 30 + b"1" + b"}" * 30,
    b"\xff", b"\xfe", b"\xc3", b"\xe2\x82", b"\xed\xa0\x80", b"\xf4\x90\x80\x80", b"\xc0\xaf",
    b"\xef\xbb\xbf", b"\x00", b"\x01", b"\x7f", b"\xc3\xa9", b"\xf0\x9f\x98\x80",
    b'"\\ud800"', b'"\\udc00"', b'"\\ud83d\\ude00"', b'"\\ud800\\u0041"', b'"\\ud800\\ud800"',
    b"\\u", b"\\u00", b"\\uZZZZ", b"\\u0000", b"\\ud800", b"\\udfff", b"\\ud83d\\ude00",
    b"\\x41", b"\\/", b"\\n", b'\\"',
]

# JSON values put under a key
VALUES = [
    '"abc"', '""', '"\\u00e9\\ud83d\\ude00"', '"\\ud800"', '"\\udc00x"', '"12"', '"-7"',
    '"1.5e3"', '" 12"', '"12 "', '"0x1F"', "0", "-0", "1", "12", "-1", "1.5", "1e400",
    "-1e-400", "1E2", "123456789012345678901234567890", "9223372036854775807",
    "9223372036854775808", "18446744073709551615", "18446744073709551616", "-9223372036854775808",
    "true", "false", "null", "{}", "[]", "[null]", "[{}]", '{"a": "b"}', '[1, {"a": "b"}]',
    '"AQID"', '"2023-11-30T12:34:56.5Z"', '"2023-02-30 00:00:00"', '"2023-03-21 14:34:21.000000"',
    '"9999-12-31 23:59:59.999999999"', '"0001-01-01"', '"24:00:00"', '"NaN"', '"Infinity"',
    '"-Infinity"', '"true"', '"1"', '"0"', '"\\u0000"', '"' + "x" * 300 + '"', '"a\\"b"',
    '"\\\\"', "[" * 20 + "]" * 20,
]


def value_end(doc: bytes, i: int) -> int:
    """The end of the JSON value that starts at (or after whitespace at) doc[i]: the next `,`,
    `}` or `]` at depth 0 outside strings (the document's end when cut)."""
    j, depth, instr = i, 0, False
    while j < len(doc):
        c = doc[j]
        if instr:
            if c == 0x5C:
                j += 1
            elif c == 0x22:
                instr = False
        elif c == 0x22:
            instr = True
        elif c in b"{[":
            depth += 1
        elif c in b"}]":
            if depth == 0:
                break
            depth -= 1
        elif c == 0x2C and depth == 0:
            break
        j += 1
    return min(j, len(doc))


def key_spots(doc: bytes, key: bytes) -> list:
    """Positions just after `"key":` (whitespace allowed before the colon's value)."""
    out, pat, at = [], b'"' + key + b'"', 0
    while True:
        at = doc.find(pat, at)
        if at < 0:
            return out
        k = at + len(pat)
        while k < len(doc) and doc[k] in b" \t\r\n":
            k += 1
        if k < len(doc) and doc[k] == 0x3A:
            out.append(k + 1)
        at += 1


class Mutator:
    """Mutations of one format's messages. `keys`: key -> JSON values worth putting under it
    (besides VALUES); `pairs`: whole `"key":value` texts worth inserting after a `{`."""

    def __init__(self, keys: dict, pairs: list):
        self.keys = keys
        self.names = sorted(keys)
        self.pairs = pairs

    def field(self, doc: bytes, rng: random.Random) -> bytes:
        """A named field's value swapped for one of the values worth trying under it."""
        key = rng.choice(self.names)
        spots = key_spots(doc, key.encode())
        if not spots:
            return self.value(doc, rng)
        i = rng.choice(spots)
        pool = self.keys[key]
        new = rng.choice(pool) if pool and rng.random() < 0.8 else rng.choice(VALUES)
        return doc[:i] + new.encode() + doc[value_end(doc, i):]

    @staticmethod
    def value(doc: bytes, rng: random.Random) -> bytes:
        """Any value (after a `:`) swapped for another JSON value."""
        spots = [i + 1 for i in range(len(doc)) if doc[i] == 0x3A]
        if not spots:
            return doc
        i = rng.choice(spots)
        return doc[:i] + rng.choice(VALUES).encode() + doc[value_end(doc, i):]

    def twice(self, doc: bytes, rng: random.Random) -> bytes:
        """A `"key":value` given twice (a key the decoder reads, when there is one)."""
        key = rng.choice(self.names)
        spots = key_spots(doc, key.encode())
        if not spots:
            return doc
        i = rng.choice(spots)
        start = doc.rfind(b'"' + key.encode() + b'"', 0, i)
        end = value_end(doc, i)
        pair = doc[start:end]
        if rng.random() < 0.5:
            return doc[:end] + b"," + pair + doc[end:]
        return doc[:start] + pair + b"," + doc[start:]

    def insert_pair(self, doc: bytes, rng: random.Random) -> bytes:
        """A `"key":value,` put in right after some `{`."""
        spots = [i + 1 for i in range(len(doc)) if doc[i] == 0x7B]
        if not spots:
            return doc
        i = rng.choice(spots)
        return doc[:i] + rng.choice(self.pairs).encode() + b"," + doc[i:]

    def bytes_op(self, doc: bytes, rng: random.Random) -> bytes:
        n = len(doc)
        kind = rng.randrange(11)
        if n == 0:
            return rng.choice(TOKENS)
        if kind == 0:                               # a byte changed
            i = rng.randrange(n)
            b = rng.choice([rng.randrange(256), 0x22, 0x5C, 0x7B, 0x7D, 0x2C, 0x3A, 0x0A, 0x80,
                            0xFF, 0x00])
            return doc[:i] + bytes([b]) + doc[i + 1:]
        if kind == 1:                               # cut short
            return doc[:rng.randrange(n)]
        if kind == 2:                               # a span doubled (here or elsewhere)
            a = rng.randrange(n)
            b = min(n, a + rng.randint(1, 200))
            c = rng.choice([b, rng.randrange(n + 1)])
            return doc[:c] + doc[a:b] + doc[c:]
        if kind == 3:                               # a token put in
            i = rng.randrange(n + 1)
            return doc[:i] + rng.choice(TOKENS) + doc[i:]
        if kind == 4:                               # a span dropped
            a = rng.randrange(n)
            return doc[:a] + doc[a + rng.randint(1, 30):]
        if kind == 5:
            return self.value(doc, rng)
        if kind in (6, 7):
            return self.field(doc, rng)
        if kind == 8:
            return self.twice(doc, rng)
        if kind == 9:
            return self.insert_pair(doc, rng)
        i = rng.randrange(n + 1)                    # a token put in at a structural place
        spots = [j for j in range(n) if doc[j] in b'{}[],:"']
        if spots:
            i = rng.choice(spots) + rng.randrange(2)
        return doc[:i] + rng.choice(TOKENS) + doc[i:]

    def message(self, doc: bytes, rng: random.Random, ops: int | None = None) -> bytes:
        for _ in range(rng.randint(1, 3) if ops is None else ops):
            doc = self.bytes_op(doc, rng)
        return doc

    def messages(self, msgs: list, rng: random.Random, rate: float = 0.3) -> list:
        """Each message mutated with probability `rate`, then now and then a message dropped,
        doubled, swapped with its neighbour, split in two, joined to the next, or made a
        tombstone (None, b"", b"null", whitespace)."""
        out = [self.message(m, rng) if m is not None and rng.random() < rate else m
               for m in msgs]
        for _ in range(rng.choice([0, 0, 0, 1, 2])):
            if not out:
                break
            i = rng.randrange(len(out))
            kind = rng.randrange(6)
            if kind == 0:
                del out[i]
            elif kind == 1:
                out.insert(i, out[i])
            elif kind == 2 and i + 1 < len(out):
                out[i], out[i + 1] = out[i + 1], out[i]
            elif kind == 3 and out[i]:
                k = rng.randrange(len(out[i]) + 1)
                out[i:i + 1] = [out[i][:k], out[i][k:]]
            elif kind == 4 and i + 1 < len(out) and out[i] is not None \
                    and out[i + 1] is not None:
                out[i:i + 2] = [out[i] + rng.choice([b"", b" ", b"\n"]) + out[i + 1]]
            else:
                out.insert(i, rng.choice([None, b"", b"null", b" \n ", b"\n"]))
        return out


# -- sources ------------------------------------------------------------------------------------

def stream(msgs: list) -> bytes:
    """The messages as one stream, one document a line (tombstones left out)."""
    return b"".join(m + b"\n" for m in msgs if m is not None)


def as_array(msgs: list, rng: random.Random):
    """The messages as a pyarrow binary / large_binary / chunked array (None: a tombstone)."""
    typ = rng.choice([pa.binary(), pa.large_binary()])
    if len(msgs) > 1 and rng.random() < 0.4:
        k = rng.randrange(1, len(msgs))
        return pa.chunked_array([pa.array(msgs[:k], typ), pa.array(msgs[k:], typ)])
    return pa.array(msgs, typ)


# -- the native decoder alone (the child process's corpus) --------------------------------------

def validated(out):
    """Every table or batch of a result, checked by Arrow (`validate(full=True)`)."""
    if isinstance(out, dict):
        for t in out.values():
            t.validate(full=True)
    elif isinstance(out, list):
        for b in out:
            b.validate(full=True)
    elif out is not None:
        out.validate(full=True)
    return out


DOCUMENTED = ("is neither in the catalog nor in the input", "the input holds several tables")


def _allowed(mode: str, call: str, e: Exception) -> bool:
    """Whether an exception is one the API documents for this mode and call: a DecodeError
    in FAILFAST; a ValueError naming a table the input and the catalog lack (headers/decode/
    read_batches with table=…) or several tables (decode without table=)."""
    if isinstance(e, cdcfast.DecodeError):
        return mode == "FAILFAST"
    if isinstance(e, ValueError):
        return call in ("decode", "read_batches", "headers_table") \
            and any(s in str(e) for s in DOCUMENTED)
    return False


def survive(fmt: str, msgs: list, catalog, options: dict, table: str | None,
            rng: random.Random, known=()) -> None:
    """The native decoder over one input: bytes, the message list and a pyarrow array, with
    and without the catalog, every mode; decode_tables, headers, decode(table=…) and
    read_batches with small batches (stops inside a message's payload). Every result is
    valid Arrow; nothing but the documented exceptions escapes (anything else is raised with
    the call named), but a known crash (a "raise" rule of `known`)."""
    raises = [rule for _, kind, rule in known if kind == "raise"]
    sources = [("bytes", stream(msgs)), ("list", list(msgs)), ("array", as_array(msgs, rng))]
    for sname, src in sources:
        for cat in (catalog, None):
            for mode in MODES:
                dec = cdcfast.Decoder(fmt, catalog=cat, mode=mode, **options)
                calls = [("decode_tables", lambda: dec.decode_tables(src)),
                         ("headers", lambda: dec.headers(src))]
                if table is not None:
                    bs = rng.choice([1, 2, 3, 5])
                    calls += [("decode", lambda: dec.decode(src, table=table)),
                              ("headers_table", lambda: dec.headers(src, table=table)),
                              ("read_batches",
                               lambda bs=bs: list(dec.read_batches(src, table, batch_size=bs))),
                              ("read_tables",
                               lambda bs=bs: list(b for _, b in dec.read_tables(src, bs)))]
                for call, fn in calls:
                    try:
                        validated(fn())
                    except Exception as e:      # noqa: BLE001 - the finding
                        if not _allowed(mode, call, e) and not any(r(e) for r in raises):
                            raise AssertionError(
                                f"{call} ({sname}, {mode}, catalog {cat is not None}) raised "
                                f"{type(e).__name__}: {e}") from e


# -- native against reference -------------------------------------------------------------------

def _bits(arr):
    """An array with every float (inside structs too) viewed as its bits, so that NaN equals
    itself and -0.0 does not equal 0.0."""
    if isinstance(arr, pa.ChunkedArray):
        arr = arr.combine_chunks()
    t = arr.type
    if pa.types.is_floating(t):
        return arr.view(pa.uint32() if t.bit_width == 32 else pa.uint64())
    if pa.types.is_struct(t):
        kids = [_bits(arr.field(i)) for i in range(t.num_fields)]
        return pa.StructArray.from_arrays(kids, names=[t.field(i).name
                                                       for i in range(t.num_fields)],
                                          mask=arr.is_null() if arr.null_count else None)
    return arr


def grows_to(a: pa.Schema, b: pa.Schema) -> bool:
    """Whether schema b is schema a with more image columns at the end (the growth of a
    derived layout between batches)."""
    if a.names != b.names:
        return False
    for fa, fb in zip(a, b):
        if fa.type == fb.type:
            continue
        if fa.name not in ("before", "after", "changed", "present") \
                or not pa.types.is_struct(fa.type) or not pa.types.is_struct(fb.type):
            return False
        na, nb = fa.type.num_fields, fb.type.num_fields
        if na >= nb or [fa.type.field(i) for i in range(na)] != \
                [fb.type.field(i) for i in range(na)]:
            return False
    return True


def tables_equal(a, b) -> bool:
    if a.equals(b):
        return True
    if a.schema != b.schema or a.num_rows != b.num_rows:
        return False
    return all(_bits(a.column(i)).equals(_bits(b.column(i))) for i in range(a.num_columns))


def _row(t, i):
    try:
        return t.slice(i, 1).to_pylist()[0]
    except Exception:           # noqa: BLE001 - e.g. a timestamp past year 9999
        return str(t.slice(i, 1))


def explain(a, b, what: str) -> str:
    """The first difference between two tables, column by column."""
    if a.schema != b.schema:
        return f"{what}: schemas differ\nnative:    {a.schema}\nreference: {b.schema}"
    if a.num_rows != b.num_rows:
        def err(t):
            return t.column("_error").to_pylist() if "_error" in t.column_names else None
        return (f"{what}: rows native {a.num_rows}, reference {b.num_rows}\n"
                f"native _error:    {err(a)}\nreference _error: {err(b)}")
    for i in range(a.num_rows):
        if not tables_equal(a.slice(i, 1), b.slice(i, 1)):
            ra, rb = _row(a, i), _row(b, i)
            lines = [f"{what}: row {i} differs"]
            if isinstance(ra, dict) and isinstance(rb, dict):
                for k in ra:
                    if not tables_equal(a.slice(i, 1).select([k]), b.slice(i, 1).select([k])):
                        lines += [f"  {k}:", f"    native:    {ra[k]!r}",
                                  f"    reference: {rb[k]!r}"]
            else:
                lines += [f"  native:    {ra}", f"  reference: {rb}"]
            return "\n".join(lines)
    return f"{what}: equal"


def run(fn):
    """('ok', value) or ('raised', exception): any exception (what is allowed is judged by
    the caller)."""
    try:
        return "ok", fn()
    except Exception as e:          # noqa: BLE001 - a crash of a decoder is a finding
        return "raised", e


def error_key(e):
    if isinstance(e, cdcfast.DecodeError):
        return (type(e).__name__, str(e), e.message_index, e.byte_offset, e.field)
    return (type(e).__name__, str(e))


def difference(a, b, what: str) -> str | None:
    """None when two run() results agree, else what differs."""
    if a[0] != b[0]:
        return f"{what}: native {a[0]} {a[1]!r}, reference {b[0]} {b[1]!r}"
    if a[0] == "raised":
        if error_key(a[1]) != error_key(b[1]):
            return f"{what}: native raised {error_key(a[1])}, reference {error_key(b[1])}"
        return None
    x, y = a[1], b[1]
    if isinstance(x, dict):
        if x.keys() != y.keys():      # the same tables (their order is not part of the API)
            return f"{what}: tables native {list(x)}, reference {list(y)}"
        for k in x:
            if not tables_equal(x[k], y[k]):
                return explain(x[k], y[k], f"{what}[{k!r}]")
        return None
    if isinstance(x, list):
        if [t.num_rows for t in x] != [t.num_rows for t in y]:
            return (f"{what}: batch sizes native {[t.num_rows for t in x]}, reference "
                    f"{[t.num_rows for t in y]}")
        for i, (s, t) in enumerate(zip(x, y)):
            if s.schema != t.schema and grows_to(s.schema, t.schema):
                # a JSON-kinds (derived) table: the native batches may see its schema grow,
                # the reference's never do (docs/olr.md, docs/qlik.md); the earlier batch,
                # padded as decode() pads it, must equal the reference's
                s = grown_table([s, t.slice(0, 0)])
            else:
                s = pa.Table.from_batches([s])
            t = pa.Table.from_batches([t])
            if not tables_equal(s, t):
                return explain(s, t, f"{what} batch {i}")
        return None
    if not tables_equal(x, y):
        return explain(x, y, what)
    return None


class Known(Exception):
    """An input that meets a known disagreement (see compare)."""


def compare(fmt: str, source, catalog, options: dict, table: str | None = None,
            batch_size: int = 3, modes=MODES, known=()) -> list:
    """Native against reference over one source: decode_tables and headers in every mode
    (PERMISSIVE and DROPMALFORMED: equal tables and last_stats; FAILFAST: the same DecodeError
    — text, message, byte, field — or equal tables), and read_batches of `table` in small
    batches. Returns the differences found (empty: none). With `known` rules, raises Known
    when the input meets a known disagreement: either decoder raises what a "raise" rule
    recognizes, a "batches" rule(native batches, reference batches) recognizes a
    read_batches difference, or `classify` recognizes every differing `_error`."""
    out = []
    for mode in modes:
        decs = {n: m.Decoder(fmt, catalog=catalog, mode=mode, **options)
                for n, m in (("native", cdcfast), ("reference", cdcfast.reference))}
        calls = [("decode_tables", lambda d: d.decode_tables(source)),
                 ("headers", lambda d: d.headers(source))]
        if table is not None:
            calls.append(("read_batches", lambda d: list(d.read_batches(source, table,
                                                                        batch_size))))
        for call, fn in calls:
            got = {n: run(lambda d=d: fn(d)) for n, d in decs.items()}
            for n, (how, e) in got.items():
                hit = how == "raised" and next(
                    (name for name, kind, rule in known if kind == "raise" and rule(e)), None)
                if hit:
                    raise Known(f"{hit} ({n} {mode} {call}: {type(e).__name__}: {e})")
            if got["native"][0] == "ok":
                validated(got["native"][1])
            elif not _allowed(mode, call, got["native"][1]):
                out.append(f"{mode} {call}: native raised {error_key(got['native'][1])}")
            diff = difference(got["native"], got["reference"], f"{mode} {call}")
            if diff is not None and call == "read_batches" and got["native"][0] == "ok" \
                    and got["reference"][0] == "ok":
                hit = next((name for name, kind, rule in known
                            if kind == "batches" and rule(got["native"][1],
                                                          got["reference"][1])), None)
                if hit:
                    raise Known(f"{hit} ({mode} {call})")
            if diff is None and got["native"][0] == "ok" \
                    and decs["native"].last_stats != decs["reference"].last_stats:
                diff = (f"{mode} {call}: last_stats native {decs['native'].last_stats}, "
                        f"reference {decs['reference'].last_stats}")
            if diff is not None:
                out.append(diff)
    if out and known:
        name = classify(fmt, source, catalog, options, known, table)
        if name is not None:
            raise Known(name)
    return out


def _errors_by_row(tables: dict) -> dict:
    out = {}
    for key, t in tables.items():
        if t.num_rows and "_error" in t.column_names:
            for seq, err in zip(t.column("seq").to_pylist(), t.column("_error").to_pylist()):
                out[(key, seq)] = err
    return out


def source_bytes(source) -> bytes:
    if isinstance(source, (pa.Array, pa.ChunkedArray)):
        source = source.to_pylist()
    if isinstance(source, (bytes, bytearray, memoryview)):
        return bytes(source)
    return b"\n".join(bytes(m) for m in source if m is not None)


def classify(fmt, source, catalog, options, known, table=None) -> str | None:
    """The name of the known disagreement an input that the decoders disagree on meets:
    `known` holds (name, kind, rule) triples; an "input" rule(bytes of the input) names it
    by itself; else every row whose `_error` differs between the decoders (PERMISSIVE
    decode_tables and headers, also of `table`) must be one that an "error" rule(native
    error, reference error) recognizes. None: not a known one."""
    data = source_bytes(source)
    for name, kind, rule in known:
        if kind == "input" and rule(data):
            return name
    errs = []
    for m in (cdcfast, cdcfast.reference):
        d = m.Decoder(fmt, catalog=catalog, **options)
        try:
            tables = {("t", k): v for k, v in d.decode_tables(source).items()}
            tables[("h", None)] = d.headers(source)
            if table is not None:
                tables[("h", table)] = d.headers(source, table=table)
                tables[("d", table)] = d.decode(source, table=table)
        except Exception:           # noqa: BLE001 - not for this to judge
            return None
        errs.append(_errors_by_row(tables))
    native, ref = errs
    names = set()
    for key in native.keys() | ref.keys():
        n, r = native.get(key), ref.get(key)
        if n == r:
            continue
        hit = next((name for name, kind, rule in known if kind == "error" and rule(n, r)),
                   None)
        if hit is None:
            return None
        names.add(hit)
    return ", ".join(sorted(names)) or None


def show(source) -> str:
    if isinstance(source, (pa.Array, pa.ChunkedArray)):
        source = source.to_pylist()
    text = repr(source)
    return text if len(text) < 6000 else text[:6000] + "…"


# -- known disagreements (each has an xfail regression case naming it) ---------------------------

