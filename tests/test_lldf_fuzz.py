"""Property-based tests of `lldf` (SPEC §5.2, docs/lldf.md): round trips through the writer
(cdcfast.encode.lldf), the native decoder against the reference decoder on valid, broken and
random inputs, and splitting at ``record_starts``.

1. Round trip: ``generate(...)`` with random options (framing, code page, float format,
   segments, longer headers, control records, every column type, long names, several tables,
   a non-UTC ``source_tz``, single messages) decodes — native and reference alike — to exactly
   the values ``events(...)`` says, without an error, and ``encode`` of the decoded rows gives
   the same bytes back. Rows drawn directly from column types (the ends of every range, HFP and
   IEEE floats, packed decimals up to 31 digits, UTF-16 text with surrogate pairs, timestamps
   of every precision and offset) do the same.
2. Differential on valid data: ``decode_tables``, ``decode(table=…)``, ``headers()``,
   ``headers(table=…)``, ``read_batches`` with small batches and ``order="commit"`` (a stable
   sort by commit_pos, then change_pos) give equal Arrow tables and equal ``last_stats``.
3. Differential on broken data: a small valid corpus mutated — bytes flipped or set (X'00',
   X'FF', X'40', BCD and packed nibbles), runs deleted or inserted, truncation, records
   duplicated, dropped or swapped (segments out of order), RDW / BDW / LENGTH / SEGLEN /
   TOTALSEGS / SEGNUM / DATA-length fields corrupted, header fields overwritten, the catalog
   made to disagree (a column's type changed, a column dropped or added, nullable flipped), the
   wrong decoder options — as one stream and as message arrays with tombstones. For every
   input nothing but ``DecodeError``/``ValueError`` escapes and:

   - PERMISSIVE never raises; native and reference give equal tables (``_error`` texts and
     ``_corrupt_record`` bytes included) and equal ``last_stats``;
   - every ``_error`` reads ``<field>: <reason> (message M, byte B)``, M names a message of the
     input and B lies inside it; a ``_corrupt_record`` is a run of that message's bytes;
   - FAILFAST raises the same ``DecodeError`` on both (text, message_index, byte_offset,
     field), exactly when PERMISSIVE has an error row, and it is the first one in input order;
   - DROPMALFORMED gives exactly the PERMISSIVE rows without ``_error``, on both.
4. Kernel fuzz: random bytes, random bytes behind a valid header, and row images built column
   by column from near-valid and random bytes (every type, every code page) through both
   decoders and both ``record_starts`` in every framing; REAL / DOUBLE (HFP and IEEE) and
   packed DECIMAL(p,s) from random bits, and BIN(17) header timestamps (impossible dates, the
   hours zones repeat or skip, years 1-9999) in odd zones, also against oracles written here.
5. Split: cutting a valid segmented stream at ``record_starts(data, framing, step)`` and
   decoding the pieces gives the rows of the whole (``seq`` apart), in every framing.

Sources come as bytes, bytearray, memoryview, a file path, lists, binary / large_binary /
chunked arrays with tombstones, and messages cut anywhere (a segmented record's segments in
two messages); one test runs past the native kernel's 1 024-record chunk. A Decoder used
before must give what a fresh one gave.

Every failure prints the input (hex), the catalog, the options and both outputs
(``assert_same_table``: the first differing row, column by column).

Budget: each test has its own example count (the whole file runs in about 40 s on 2 cores);
with ``CI=true`` the examples are derandomized and no database is kept.
``CDCFAST_FUZZ_SCALE=K`` multiplies every count (a long hunt for disagreements:
``CDCFAST_FUZZ_SCALE=20``, about 12 minutes), ``CDCFAST_FUZZ_EXAMPLES=N`` sets them all to N
as in tests/test_ibm_fuzz.py. ``pytest --hypothesis-show-statistics`` lists the error kinds
the inputs reached. The last test (not in CI) feeds more mutated inputs
(``CDCFAST_FUZZ_CORPUS``, default 250) to the native decoder in a child process, so that a
crash is reported with its input instead of taking pytest down.
"""
from __future__ import annotations

import datetime as dt
import decimal
import functools
import math
import os
import pathlib
import random
import re
import struct

import pyarrow as pa
import pyarrow.compute as pc
import pytest
from hypothesis import (HealthCheck, currently_in_test_context, event, given, note, settings,
                        strategies as st)

import cdcfast
from conftest import survive_corpus
from cdcfast import _lldf_frame as native_lldf
from cdcfast import codepages, reference
from cdcfast.encode import lldf as writer
from cdcfast.formats import lldf as layouts
from cdcfast.reference import lldf as reference_lldf

FMT = "lldf"
UTC = dt.timezone.utc
D = decimal.Decimal
CI = os.environ.get("CI", "").lower() == "true"
_N = os.environ.get("CDCFAST_FUZZ_EXAMPLES")
_SCALE = float(os.environ.get("CDCFAST_FUZZ_SCALE", "1"))


def budget(n):
    """Hypothesis settings for a test whose own count is ``n`` examples."""
    extra = {"derandomize": True, "database": None} if CI else {}
    return settings(max_examples=int(_N) if _N else max(1, round(n * _SCALE)), deadline=None,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large,
                                           HealthCheck.filter_too_much],
                    **extra)


ERROR_PARTS = re.compile(r"^(?P<field>[^:\n]+): (?P<reason>[^\n]+) \(message (?P<msg>\d+), "
                         r"byte (?P<byte>\d+)\)$")
APIS = (("native", cdcfast), ("reference", reference))
STARTS = (("native", native_lldf.record_starts), ("reference", reference_lldf.record_starts))
FRAMINGS = ("raw", "rdw", "vb")
ENCODINGS = ("cp037", "cp1047", "cp500", "cp1140", "cp273", "latin-1", "ascii")
ZONES = ("UTC", "Europe/Paris", "America/New_York", "Asia/Kolkata", "-03:30")
ENVELOPE = ("op", "source_op", "schema", "table", "txid", "commit_ts", "change_ts",
            "commit_pos", "change_pos")


# -- showing a difference -------------------------------------------------------------------------

def show_source(source) -> str:
    """An input as hex: a stream, or a list of messages (None for a tombstone)."""
    if isinstance(source, str):
        return f"the file {source}, " + show_source(pathlib.Path(source).read_bytes())
    if isinstance(source, (bytes, bytearray, memoryview)):
        text = bytes(source).hex()
        if len(text) > 20000:   # a long stream: its start (the falsifying example rebuilds it)
            text = text[:20000] + "…"
        return f"{len(source)} bytes: {text}"
    if isinstance(source, (pa.Array, pa.ChunkedArray)):
        source = source.to_pylist()
    return "[" + ", ".join("None" if m is None else f"{bytes(m).hex()}" for m in source) + "]"


def _show_row(t, i):
    try:
        return t.slice(i, 1).to_pylist()[0]
    except Exception:               # noqa: BLE001 - e.g. a year-10000 timestamp
        return str(t.slice(i, 1))


def _context(source, catalog, options):
    return [f"input: {show_source(source)}", f"catalog: {_catalog_dict(catalog)}",
            f"options: {options}"]


def _catalog_dict(catalog):
    if catalog is None or isinstance(catalog, dict):
        return catalog
    return catalog.to_dict()


def _bits(arr):
    """An array with every float (inside structs too) replaced by its bits, so that equality
    is bitwise (Arrow's equals calls NaN unequal to itself)."""
    if isinstance(arr, pa.ChunkedArray):
        return pa.chunked_array([_bits(c) for c in arr.chunks], _bits_type(arr.type))
    t = arr.type
    if pa.types.is_floating(t):
        return arr.view(pa.uint32() if t.bit_width == 32 else pa.uint64())
    if pa.types.is_struct(t):
        return pa.StructArray.from_arrays(
            [_bits(arr.field(i)) for i in range(t.num_fields)],
            fields=[pa.field(t.field(i).name, _bits_type(t.field(i).type))
                    for i in range(t.num_fields)],
            mask=arr.is_null() if arr.null_count else None)
    return arr


def _bits_type(t):
    if pa.types.is_floating(t):
        return pa.uint32() if t.bit_width == 32 else pa.uint64()
    if pa.types.is_struct(t):
        return pa.struct([pa.field(t.field(i).name, _bits_type(t.field(i).type))
                          for i in range(t.num_fields)])
    return t


def tables_equal(a: pa.Table, b: pa.Table) -> bool:
    """Schema and values equal, floats compared by their bits."""
    if a.equals(b):
        return True
    if a.schema != b.schema or a.num_rows != b.num_rows:
        return False
    return all(_bits(a.column(i).combine_chunks()).equals(_bits(b.column(i).combine_chunks()))
               for i in range(a.num_columns))


def assert_same_table(a: pa.Table, b: pa.Table, what: str, source, catalog=None, options=None,
                      names=("native", "reference")):
    """a == b as Arrow tables (schema and values), else an error naming the first difference."""
    if tables_equal(a, b):
        return
    n1, n2 = names
    lines = [f"{what}: {n1} and {n2} differ", *_context(source, catalog, options)]
    if a.schema != b.schema:
        lines += [f"{n1} schema: {a.schema}", f"{n2} schema: {b.schema}"]
    elif a.num_rows != b.num_rows:
        lines += [f"rows: {n1} {a.num_rows}, {n2} {b.num_rows}",
                  f"{n1} _error: {a.column('_error').to_pylist()}",
                  f"{n2} _error: {b.column('_error').to_pylist()}"]
    else:
        for i in range(a.num_rows):
            if not tables_equal(a.slice(i, 1), b.slice(i, 1)):
                ra, rb = _show_row(a, i), _show_row(b, i)
                lines.append(f"first differing row {i}:")
                if isinstance(ra, dict) and isinstance(rb, dict):
                    for k in ra:
                        if not tables_equal(a.slice(i, 1).select([k]), b.slice(i, 1).select([k])):
                            lines += [f"  column {k}:", f"    {n1}: {ra[k]!r}",
                                      f"    {n2}: {rb[k]!r}"]
                else:
                    lines += [f"  {n1}: {ra}", f"  {n2}: {rb}"]
                break
    raise AssertionError("\n".join(lines))


def _run(fn):
    """('ok', value) or ('raised', exception); anything but DecodeError/ValueError fails."""
    try:
        return "ok", fn()
    except (cdcfast.DecodeError, ValueError) as e:
        return "raised", e
    except Exception as e:          # noqa: BLE001 - a crash of the decoder is the finding
        raise AssertionError(f"decoder crashed with {type(e).__name__}: {e}") from e


def _error_key(e):
    if isinstance(e, cdcfast.DecodeError):
        return (type(e), str(e), e.message_index, e.byte_offset, e.field)
    return (type(e), str(e))


def assert_same_outcome(a, b, what, source, catalog=None, options=None):
    """Two _run results: the same exception, or equal tables (or dicts of tables)."""
    ctx = lambda: "\n".join(_context(source, catalog, options))     # noqa: E731
    if a[0] != b[0]:
        raise AssertionError(f"{what}: native {a[0]} {a[1]!r}, reference {b[0]} {b[1]!r}\n"
                             f"{ctx()}")
    if a[0] == "raised":
        if _error_key(a[1]) != _error_key(b[1]):
            raise AssertionError(f"{what}: native raised {_error_key(a[1])}, reference raised "
                                 f"{_error_key(b[1])}\n{ctx()}")
    elif isinstance(a[1], dict):
        if a[1].keys() != b[1].keys():
            raise AssertionError(f"{what}: native tables {sorted(a[1], key=str)}, reference "
                                 f"{sorted(b[1], key=str)}\n{ctx()}")
        for k in a[1]:
            assert_same_table(a[1][k], b[1][k], f"{what}[{k!r}]", source, catalog, options)
    elif isinstance(a[1], list):    # record batches
        sizes = ([x.num_rows for x in a[1]], [x.num_rows for x in b[1]])
        if sizes[0] != sizes[1]:
            raise AssertionError(f"{what}: batch sizes native {sizes[0]}, reference {sizes[1]}"
                                 f"\n{ctx()}")
        for i, (x, y) in enumerate(zip(a[1], b[1])):
            assert_same_table(pa.Table.from_batches([x]), pa.Table.from_batches([y]),
                              f"{what} batch {i}", source, catalog, options)
    else:
        assert_same_table(a[1], b[1], what, source, catalog, options)


def same_value(a, b) -> bool:
    """Equality of decoded values; floats by their bits (NaN == NaN, 0.0 != -0.0)."""
    if isinstance(a, float) and isinstance(b, float):
        return struct.pack(">d", a) == struct.pack(">d", b) or (a == b and a != 0.0)
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(same_value(a[k], b[k]) for k in a)
    if isinstance(a, decimal.Decimal) and isinstance(b, decimal.Decimal):
        return a == b and a.as_tuple().exponent == b.as_tuple().exponent
    return type(a) is type(b) and a == b if a is not None and b is not None else a is b


def assert_rows_are(rows, expected, keys, what, source=None):
    assert len(rows) == len(expected), (what, len(rows), len(expected))
    for i, (r, e) in enumerate(zip(rows, expected)):
        for k in keys:
            if not same_value(r[k], e[k]):
                raise AssertionError(f"{what}: row {i} ({e.get('op')}), {k}:\n  decoded:  "
                                     f"{r[k]!r}\n  expected: {e[k]!r}"
                                     + (f"\ninput: {show_source(source)}" if source else ""))


# -- commit order ---------------------------------------------------------------------------------

def commit_key(row):
    """order="commit": commit_pos, then change_pos, bytewise, nulls last; then input order."""
    cp, ch = row["commit_pos"], row["change_pos"]
    return (cp is None, cp or b"", ch is None, ch or b"", row["seq"])


def commit_sorted(t: pa.Table) -> pa.Table:
    """The rows of an input-order table in commit order, computed here (not by the decoder)."""
    keys = [commit_key(r) for r in t.select(["commit_pos", "change_pos", "seq"]).to_pylist()]
    return t.take(sorted(range(t.num_rows), key=keys.__getitem__)) if t.num_rows else t


def assert_commit_order(t: pa.Table, what):
    rows = t.select(["commit_pos", "change_pos", "seq"]).to_pylist()
    keys = [commit_key(r) for r in rows]
    assert keys == sorted(keys), (what, rows)


# -- the writer's events against decoded rows ----------------------------------------------------

def merged_rows(tables: dict, heads: pa.Table) -> list:
    """Every logical record as a row dict, in input order: decode_tables' rows (with images)
    and headers()' control records (ddl, message), which decode_tables leaves out."""
    rows = [r for k, t in tables.items() for r in t.to_pylist()]
    rows += [dict(r, before=None, after=None, changed=None, present=None)
             for r in heads.to_pylist() if r["op"] in ("ddl", "message")]
    return sorted(rows, key=lambda r: r["seq"])


# -- round trip of generated streams --------------------------------------------------------------

@st.composite
def generator_options(draw, max_rows=6):
    """Keyword arguments of ``generate``/``events`` and the matching decoder options."""
    framing = draw(st.sampled_from(FRAMINGS))
    all_types = draw(st.booleans())
    gen = {
        "rows": draw(st.integers(1, max_rows)),
        "table_width": draw(st.integers(1, 12)),
        "tables": draw(st.integers(1, 3)),
        "seed": draw(st.integers(0, 1 << 30)),
        "control": draw(st.booleans()),
        "all_types": all_types,
        "long_names": draw(st.booleans()),
        "framing": framing,
        "encoding": draw(st.sampled_from(ENCODINGS)),
        "float_format": draw(st.sampled_from(("hfp", "ieee"))),
        "source_tz": draw(st.sampled_from(ZONES)),
        "segment_bytes": draw(st.one_of(st.none(), st.integers(1, 600))),
        "header_length": draw(st.sampled_from((288, 288, 289, 300, 512))),
    }
    if all_types and gen["segment_bytes"] is not None:   # wide rows: not thousands of segments
        gen["segment_bytes"] = max(gen["segment_bytes"], 60)
    if framing == "vb":
        gen["block_bytes"] = draw(st.sampled_from((8, 400, 2000, 32760, 70000)))
    dec = {k: gen[k] for k in ("framing", "encoding", "float_format", "source_tz")}
    return gen, dec


def with_control(events, rng):
    """Control records (and the rarer change types) put among generated events: copies of an
    event's header with CHANGE TYPE CO, CM, SC, E (+ any byte), DM, DT, DR or IL."""
    out = []
    for ev in events:
        out.append(ev)
        if rng.random() < 0.4:
            code = rng.choice(["CO", "CM", "SC", "E ", "E\x01", "DM", "DT", "DR", "IL"])
            ctl = dict(ev, source_op=code, op=None)
            if code == "IL":
                if ev["op"] != "c":
                    continue
                ctl["op"], ctl["change_pos"] = "c", bytes(10)
            else:           # no DATA: not segmented (TOTALSEGS 0, or 1 as the source said)
                ctl["before"] = ctl["after"] = None
                if ev["source"]["totalsegs"] > 1:
                    ctl["source"] = dict(ev["source"], totalsegs=0)
            out.append(ctl)
    return out


def check_round_trip(data, events, catalog, options, write_options):
    """Both decoders give `events` back, without an error, and encode(decoded) == data."""
    for name, api in APIS:
        dec = api.Decoder(FMT, catalog, **options)
        heads = dec.headers(data)
        assert heads.column("_error").null_count == heads.num_rows, \
            (name, heads.column("_error").drop_null().to_pylist()[:3])
        assert heads.num_rows == len(events), (name, heads.num_rows, len(events))
        assert dec.last_stats["errors"] == 0 and dec.last_stats["records"] == len(events), \
            (name, dec.last_stats)
        assert_rows_are(heads.to_pylist(), events, ENVELOPE + ("source",), f"{name} headers",
                        None)
        tables = dec.decode_tables(data)
        assert None not in tables
        stats = dec.last_stats
        for t in tables.values():
            assert t.column("_error").null_count == t.num_rows, \
                (name, t.column("_error").drop_null().to_pylist()[:3])
            assert t.column("_corrupt_record").null_count == t.num_rows
        rows = merged_rows(tables, heads)
        assert_rows_are(rows, events, ENVELOPE + ("source", "before", "after"),
                        f"{name} decode_tables", None)
        assert [r["seq"] for r in rows] == list(range(len(events)))
        control = sum(e["op"] in ("ddl", "message") for e in events)
        assert (stats["records"], stats["control"], stats["errors"], stats["events"]) == \
            (len(events), control, 0, len(events) - control), (name, stats)
        for r in rows:         # changed / present as docs/lldf.md computes them
            if r["op"] in ("c", "d", "u"):
                img = r["after"] if r["op"] != "d" else r["before"]
                assert r["present"] == {k: True for k in img}
                if r["op"] == "u":
                    want = {k: not same_value(r["before"][k], r["after"][k]) for k in img}
                else:
                    want = {k: r["op"] == "c" for k in img}
                assert r["changed"] == want, (name, r["changed"], want)
            elif r["op"] == "t":
                assert r["changed"] is None and r["present"] is None
        again = writer.encode(rows, catalog, **write_options)
        assert again == data, (name, "encode(decoded) differs from the stream",
                               _first_difference(again, data))


def _first_difference(a: bytes, b: bytes):
    i = next((i for i, (x, y) in enumerate(zip(a, b)) if x != y), min(len(a), len(b)))
    return f"lengths {len(a)} / {len(b)}, first difference at byte {i}: " \
           f"{a[i:i + 16].hex()} / {b[i:i + 16].hex()}"


def _write_options(gen):
    return {k: gen[k] for k in ("framing", "encoding", "float_format", "source_tz",
                                "segment_bytes", "header_length", "block_bytes") if k in gen}


@budget(40)
@given(generator_options())
def test_round_trip_generated(opts):
    gen, dec = opts
    data, catalog = writer.generate(**gen)
    events, _ = writer.events(**gen)
    note(f"generate options: {gen}")
    check_round_trip(data, events, catalog, dec, _write_options(gen))


@budget(20)
@given(generator_options(max_rows=4), st.integers(0, 1 << 30))
def test_round_trip_with_every_change_type(opts, seed):
    """Control records (CO, CM, SC, E + any byte), truncates (DM, DT, DR) and IL inserts
    among generated events: encode, then both decoders give them all back."""
    gen, dec = opts
    events, catalog = writer.events(**gen)
    events = with_control(events, random.Random(seed))
    for ev in events:       # decoded form: the op follows from the CHANGE TYPE
        if ev["op"] is None:
            ev["op"] = {"CO": "ddl", "DM": "t", "DT": "t", "DR": "t"}.get(ev["source_op"],
                                                                           "message")
    wo = _write_options(gen)
    data = writer.encode(events, catalog, **wo)
    note(f"options: {gen}")
    check_round_trip(data, events, catalog, dec, wo)


@budget(15)
@given(generator_options(max_rows=8))
def test_round_trip_messages(opts):
    """``messages=True``: a list of messages, each framed on its own; decoded as an array
    with tombstones, every message gives its own events, and its own bytes back."""
    gen, dec = opts
    msgs, catalog = writer.generate(messages=True, records_per_message=(1, 3), **gen)
    events, _ = writer.events(records_per_message=(1, 3), **gen)
    source = pa.array([None, *msgs[:1], None, *msgs[1:]], pa.binary())
    for name, api in APIS:
        d = api.Decoder(FMT, catalog, **dec)
        heads = d.headers(source)
        assert heads.column("_error").null_count == heads.num_rows, name
        assert_rows_are(heads.to_pylist(), events, ENVELOPE + ("source",), f"{name} headers")
        rows = merged_rows(d.decode_tables(source), heads)
        assert_rows_are(rows, events, ENVELOPE + ("source", "before", "after"),
                        f"{name} decode_tables")
        assert d.last_stats["tombstones"] == 2
    wo = _write_options(gen)
    for m in msgs:
        rows = merged_rows(cdcfast.decode_tables(m, format=FMT, catalog=catalog, **dec),
                           cdcfast.headers(m, format=FMT, catalog=catalog, **dec))
        assert writer.encode(rows, catalog, **wo) == m


# -- round trip of rows drawn from column types --------------------------------------------------

@functools.lru_cache(maxsize=None)
def _alphabet(encoding):
    """The characters a single-byte code page can write."""
    table = codepages.decoding_table(encoding)
    return "".join(sorted({c for c in table if c != "\ufffd"}))


def _utf16_units(s):
    return len(s.encode("utf-16-be")) // 2


_FLOAT32_MAX = struct.unpack(">f", b"\x7f\x7f\xff\xff")[0]


def hfp_real_values():
    """REAL values HFP holds exactly: a 24-bit fraction (leading hex digit non-zero) times a
    power of 16, within float32's normal range; and both zeros."""
    exact = st.builds(lambda s, m, k: (-1) ** s * math.ldexp(m, 4 * k - 24),
                      st.integers(0, 1), st.integers(1 << 20, (1 << 24) - 1),
                      st.integers(-30, 32))
    return st.one_of(st.sampled_from([0.0, -0.0, 1.0, -2.0, 0.5, _FLOAT32_MAX]),
                     exact.filter(lambda x: abs(x) <= _FLOAT32_MAX))


def _f32(x):
    return struct.unpack(">f", struct.pack(">f", x))[0]


@st.composite
def column_type(draw, encoding, float_format):
    """(type text, strategy of (value written, value decoded)), for one catalog column."""
    same = lambda s: s.map(lambda v: (v, v))           # noqa: E731
    pick = draw(st.integers(0, 22))
    if pick == 0:
        return "SMALLINT", same(st.integers(-(1 << 15), (1 << 15) - 1))
    if pick == 1:
        return "INTEGER", same(st.integers(-(1 << 31), (1 << 31) - 1))
    if pick == 2:
        return "BIGINT", same(st.integers(-(1 << 63), (1 << 63) - 1))
    if pick == 3:
        p = draw(st.sampled_from([1, 2, 3, 5, 9, 10, 18, 19, 30, 31]))
        s = draw(st.integers(0, p))
        vals = st.integers(-(10 ** p - 1), 10 ** p - 1).map(lambda n: D(f"{n}E-{s}"))
        return f"DECIMAL({p},{s})", same(vals)
    if pick == 4:
        if float_format == "hfp":
            return "REAL", same(hfp_real_values())
        return "REAL", st.floats(width=32).map(lambda x: (x, _f32(x)))
    if pick == 5:
        if float_format == "hfp":      # every double in HFP's range is exact in 56 bits
            vals = st.floats(-7e75, 7e75).filter(lambda x: x == 0 or abs(x) >= 1e-78)
            return draw(st.sampled_from(["DOUBLE", "FLOAT", "FLOAT(53)"])), same(vals)
        return "DOUBLE", same(st.floats())
    if pick == 6:
        n = draw(st.integers(1, 8))
        return f"CHAR({n})", st.text(_alphabet(encoding), max_size=n).map(
            lambda v: (v, v.ljust(n)))
    if pick == 7:
        n = draw(st.integers(1, 20))
        return draw(st.sampled_from([f"VARCHAR({n})", "LONG VARCHAR", "CLOB"])), \
            same(st.text(_alphabet(encoding), max_size=n))
    if pick == 8:
        n = draw(st.integers(1, 6))
        return f"GRAPHIC({n})", st.text(max_size=n).filter(
            lambda v: _utf16_units(v) <= n).map(lambda v: (v, v + " " * (n - _utf16_units(v))))
    if pick == 9:
        return draw(st.sampled_from(["VARGRAPHIC(10)", "DBCLOB"])), same(st.text(max_size=10))
    if pick == 10:
        return "XML", same(st.text(max_size=10))
    if pick == 11:
        n = draw(st.integers(1, 8))
        return draw(st.sampled_from([f"BINARY({n})", f"CHAR({n}) FOR BIT DATA"])), \
            st.binary(max_size=n).map(lambda v: (v, v.ljust(n, b"\x00")))
    if pick == 12:
        return draw(st.sampled_from(["VARBINARY(12)", "VARCHAR(12) FOR BIT DATA", "ROWID",
                                     "BLOB"])), same(st.binary(max_size=12))
    if pick == 13:
        return "DATE", same(st.dates())
    if pick == 14:
        return draw(st.sampled_from(["TIME", "TIME(0)", "TIME(6)"])), \
            same(st.times().map(lambda t: t.replace(microsecond=0)))
    if pick in (15, 16):
        p = draw(st.sampled_from([None, 0, 1, 3, 6, 9, 12]))
        keep = 10 ** (6 - min(6 if p is None else p, 6))
        vals = st.datetimes().map(lambda v: v.replace(microsecond=v.microsecond // keep * keep))
        return ("TIMESTAMP" if p is None else f"TIMESTAMP({p})"), same(vals)
    if pick in (17, 18):
        p = draw(st.sampled_from([0, 2, 6, 12]))
        keep = 10 ** (6 - min(p, 6))
        offsets = st.one_of(st.just(0), st.integers(-14 * 60 + 1, 14 * 60 - 1))
        vals = st.builds(
            lambda v, m: (v.replace(microsecond=v.microsecond // keep * keep,
                                    tzinfo=dt.timezone(dt.timedelta(minutes=m))),
                          (v.replace(microsecond=v.microsecond // keep * keep)
                           - dt.timedelta(minutes=m)).replace(tzinfo=UTC)),
            st.datetimes(dt.datetime(2, 1, 1), dt.datetime(9998, 12, 31)), offsets)
        return f"TIMESTAMP({p}) WITH TIME ZONE", vals
    if pick == 19:
        return "BOOLEAN", same(st.booleans())
    if pick == 20:
        return "TIMESTAMP(12) WITH TIME ZONE", same(st.datetimes(
            dt.datetime(1, 1, 2), dt.datetime(9999, 12, 30)).map(
            lambda v: v.replace(tzinfo=UTC)))
    if pick == 21:
        return "NUMERIC(31,31)", same(st.integers(-(10 ** 31 - 1), 10 ** 31 - 1).map(
            lambda n: D(f"{n}E-31")))
    return "DEC", same(st.integers(-99999, 99999).map(D))


def _wall_clock(v, zone_name):
    """What a BIN(17) written in `zone_name` decodes to (docs/lldf.md: the wall clock read in
    source_tz; a repeated or skipped local time is the earlier instant)."""
    if v is None:
        return None
    from cdcfast import _tz
    z = _tz.zone(zone_name)
    wall = v.astimezone(z).replace(tzinfo=None)
    return min(wall.replace(tzinfo=z, fold=f).astimezone(UTC) for f in (0, 1))


@st.composite
def drawn_rows(draw):
    """(events written, events decoded, catalog, write options, decoder options)."""
    framing = draw(st.sampled_from(FRAMINGS))
    encoding = draw(st.sampled_from(ENCODINGS))
    float_format = draw(st.sampled_from(("hfp", "ieee")))
    tz = draw(st.sampled_from(ZONES))
    ncols = draw(st.integers(1, 5))
    cols, makers = [], []
    for i in range(ncols):
        type_text, values = draw(column_type(encoding, float_format))
        nullable = draw(st.booleans())
        cols.append({"name": f"C{i}", "type": type_text, "nullable": nullable})
        makers.append(st.one_of(st.just((None, None)), values) if nullable else values)
    catalog = {"tables": [{"schema": "FUZZ", "table": "ROWS", "columns": cols}]}

    def image():
        pairs = [draw(m) for m in makers]
        return ({c["name"]: p[0] for c, p in zip(cols, pairs)},
                {c["name"]: p[1] for c, p in zip(cols, pairs)})
    stamps = st.one_of(st.none(), st.datetimes(dt.datetime(1, 1, 2), dt.datetime(9999, 12, 30),
                                               timezones=st.just(UTC)))
    written, decoded = [], []
    for _ in range(draw(st.integers(1, 4))):
        op = draw(st.sampled_from("cud"))
        before = image() if op in "ud" else (None, None)
        after = image() if op in "cu" else (None, None)
        head = {"op": op, "source_op": {"c": "I ", "u": "UB", "d": "D "}[op],
                "schema": "FUZZ", "table": "ROWS",
                "txid": draw(st.binary(min_size=10, max_size=10)).hex().upper(),
                "commit_ts": draw(stamps), "change_ts": draw(stamps),
                "commit_pos": draw(st.binary(min_size=10, max_size=10)),
                "change_pos": draw(st.binary(min_size=10, max_size=10))}
        written.append(dict(head, before=before[0], after=after[0]))
        decoded.append(dict(head, before=before[1], after=after[1],
                            commit_ts=_wall_clock(head["commit_ts"], tz),
                            change_ts=_wall_clock(head["change_ts"], tz)))
    wo = {"framing": framing, "encoding": encoding, "float_format": float_format,
          "source_tz": tz, "segment_bytes": draw(st.one_of(st.none(), st.integers(1, 40))),
          "header_length": draw(st.sampled_from((288, 290, 400)))}
    if framing == "vb":
        wo["block_bytes"] = draw(st.sampled_from((8, 300, 32760)))
    return written, decoded, catalog, wo, {k: wo[k] for k in ("framing", "encoding",
                                                               "float_format", "source_tz")}


@budget(120)
@given(drawn_rows())
def test_round_trip_drawn_rows(case):
    written, decoded, catalog, wo, options = case
    data = writer.encode(written, catalog, **wo)
    note(f"input: {show_source(data)}\ncatalog: {catalog}\noptions: {wo}")
    got = {}
    for name, api in APIS:
        dec = api.Decoder(FMT, catalog, **options)
        t = dec.decode(data, table="FUZZ.ROWS")
        got[name] = t
        assert dec.last_stats["errors"] == 0, (name, t.column("_error").to_pylist())
        rows = t.to_pylist()
        assert_rows_are(rows, decoded, ENVELOPE + ("before", "after"), name, data)
        for r in rows:
            img = r["after"] if r["op"] != "d" else r["before"]
            assert r["present"] == {k: True for k in img}
            want = {k: (r["op"] == "c" if r["op"] != "u"
                        else not same_value(r["before"][k], r["after"][k])) for k in img}
            assert r["changed"] == want, (name, r["changed"], want)
    assert_same_table(got["native"], got["reference"], "decode", data, catalog, options)
    rows = got["native"].to_pylist()
    again = writer.encode(rows, catalog, **wo)
    assert again == writer.encode(decoded, catalog, **wo), _first_difference(
        again, writer.encode(decoded, catalog, **wo))
    if all(e["after"] is None or not any(isinstance(v, dt.datetime) and v.tzinfo is not None
                                         and v.utcoffset() for v in e["after"].values())
           for e in written) and all(
            e["before"] is None or not any(isinstance(v, dt.datetime) and v.tzinfo is not None
                                           and v.utcoffset() for v in e["before"].values())
            for e in written):
        assert again == data, _first_difference(again, data)


# -- the corpus of the differential tests: small valid streams ------------------------------------

# generate/events options (rows kept small) and the decoder options that read them
VARIANTS = [
    dict(rows=4, table_width=6, seed=101),
    dict(rows=5, table_width=8, seed=102, framing="rdw", segment_bytes=40),
    dict(rows=5, table_width=5, tables=2, seed=103, framing="vb", block_bytes=900,
         segment_bytes=30),
    dict(rows=2, all_types=True, seed=104, float_format="ieee", encoding="cp1047",
         long_names=True, segment_bytes=700),
    dict(rows=4, table_width=10, seed=105, encoding="ascii", framing="rdw", header_length=300),
    dict(rows=4, table_width=7, seed=106, encoding="cp273", framing="vb", segment_bytes=60,
         source_tz="Europe/Paris", block_bytes=32760),
    dict(rows=4, table_width=6, seed=107, encoding="latin-1", header_length=320,
         segment_bytes=25, tables=2, long_names=True),
    dict(rows=3, table_width=12, seed=108, encoding="cp500", framing="raw", segment_bytes=50,
         float_format="ieee"),
    # the generator's own messages (messages=True), with its control records
    dict(rows=8, table_width=4, seed=109, framing="rdw", segment_bytes=20, control=True,
         encoding="cp1140", messages=True),
]
DECODER_KEYS = ("framing", "encoding", "float_format", "source_tz")


@functools.lru_cache(maxsize=None)
def corpus(i):
    """(messages: one list of bytes per logical-record group, catalog dict, decoder options) of
    variant i: generated events with control records and rarer change types among them, each
    message 1-3 events framed on its own."""
    gen = dict(VARIANTS[i])
    opts = {k: gen[k] for k in DECODER_KEYS if k in gen}
    opts.setdefault("framing", "raw")
    if gen.pop("messages", False):
        msgs, catalog = writer.generate(messages=True, records_per_message=(1, 3), **gen)
        return tuple(msgs), catalog.to_dict(), opts
    events, catalog = writer.events(**gen)
    events = with_control(events, random.Random(i))
    for ev in events:
        if ev["op"] is None:
            ev["op"] = {"CO": "ddl", "DM": "t", "DT": "t", "DR": "t"}.get(ev["source_op"],
                                                                           "message")
    wo = _write_options(gen)
    rng = random.Random(1000 + i)
    msgs, at = [], 0
    while at < len(events):
        n = rng.randint(1, 3)
        msgs.append(writer.encode(events[at:at + n], catalog, **wo))
        at += n
    return tuple(msgs), catalog.to_dict(), opts


def physical(data: bytes, framing: str) -> list:
    """A valid message's physical records (header + data, descriptor words left out), grouped
    by block: ``[[record, …], …]`` (a single group for raw and rdw)."""
    recs, i, n = [], 0, len(data)
    u16 = lambda at: int.from_bytes(data[at:at + 2], "big")    # noqa: E731
    if framing == "raw":
        while i < n:
            end = i + u16(i) + u16(i + 182)
            recs.append(data[i:end])
            i = end
        return [recs]
    if framing == "rdw":
        while i < n:
            end = i + u16(i)
            recs.append(data[i + 4:end])
            i = end
        return [recs]
    blocks = []
    while i < n:
        word = int.from_bytes(data[i:i + 4], "big")
        end = i + (word & 0x7FFFFFFF if word & 0x80000000 else word >> 16)
        j, block = i + 4, []
        while j < end:
            e = j + u16(j)
            block.append(data[j + 4:e])
            j = e
        blocks.append(block)
        i = end
    return blocks


def frame(blocks, framing, rdw=None, bdw=None) -> bytes:
    """The inverse of `physical`, with descriptor words overridden: ``rdw[k]`` / ``bdw[b]`` is
    (how, v): ("len", v) sets the length, ("add", v) adds to the right one, ("res", v) sets
    the reserved bytes, ("ext", v) writes an extended (31-bit) BDW of the right length + v."""
    rdw, bdw = rdw or {}, bdw or {}

    def word(right, how):
        if how is None:
            return struct.pack(">HH", right, 0) if right <= 0x7FFF or framing != "vb" else \
                struct.pack(">I", 0x80000000 | right)
        kind, v = how
        if kind == "len":
            return struct.pack(">HH", v & 0xFFFF, 0)
        if kind == "add":
            return struct.pack(">HH", (right + v) & 0xFFFF, 0)
        if kind == "res":
            return struct.pack(">HH", right & 0xFFFF, v & 0xFFFF)
        return struct.pack(">I", 0x80000000 | ((right + v) & 0x7FFFFFFF))

    out, k = [], 0
    for b, block in enumerate(blocks):
        body = []
        for rec in block:
            body.append(rec if framing == "raw" else word(len(rec) + 4, rdw.get(k)) + rec)
            k += 1
        body = b"".join(body)
        if framing == "vb":
            out.append(word(len(body) + 4, bdw.get(b)))
        out.append(body)
    return b"".join(out)


# -- mutations ------------------------------------------------------------------------------------

U16_FIELDS = {"LENGTH": 0, "TBOWNERLEN": 12, "TBNAMELEN": 14, "SEGLEN": 182, "TOTALSEGS": 184,
              "SEGNUM": 186, "DATA": None, "IMAGE": None}
U16_VALUES = [0, 1, 2, 3, 4, 5, 9, 18, 19, 287, 288, 289, 0x7FFF, 0x8000, 0xFFFF]
# (offset, width) of header fields worth overwriting whole
HEADER_SPOTS = [(104, 2), (60, 17), (127, 17), (144, 17), (77, 10), (192, 10), (172, 10),
                (274, 1), (275, 1), (276, 1), (2, 4), (32, 8), (40, 18), (106, 1), (212, 2),
                (287, 1)]
# CHANGE TYPEs (cp037) and bytes that mean something to some field
SPOT_BYTES = [b"\xe4\xc2", b"\xc9\x40", b"\xc9\xd3", b"\xc4\x40", b"\xc4\xd4", b"\xc3\xd6",
              b"\xc5\x40", b"\xc5\xff", b"\xc3\xd4", b"\xe2\xc3", b"\xe7\xe7", b"UB", b"I ",
              b"\x00", b"\xff", b"\x40", b"\xe8", b"\xd5", b"\x20", b"Y", b"\x80",
              bytes.fromhex("2024022930000000"), bytes.fromhex("20241301"),
              bytes.fromhex("00000000"), bytes.fromhex("2024010224"), bytes.fromhex("9999")]
SPECIAL_BYTES = [0x00, 0xFF, 0x40, 0x20, 0x0C, 0x0D, 0x0F, 0xF0, 0xF9, 0x4B, 0x60, 0x7A]

_pos = st.integers(0, 1 << 16)
_u16v = st.one_of(st.sampled_from(U16_VALUES), st.integers(0, 0xFFFF))
_delta = st.sampled_from([-300, -5, -2, -1, 1, 2, 5, 300])
STRUCT_MUTATION = st.one_of(
    st.tuples(st.just("dup"), _pos, _pos),
    st.tuples(st.just("drop"), _pos),
    st.tuples(st.just("swap"), _pos, _pos),
    st.tuples(st.just("swapnext"), _pos),
    st.tuples(st.just("u16"), _pos, st.sampled_from(sorted(U16_FIELDS)),
              st.one_of(st.tuples(st.just("set"), _u16v), st.tuples(st.just("add"), _delta))),
    st.tuples(st.just("spot"), _pos, st.sampled_from(HEADER_SPOTS),
              st.one_of(st.sampled_from(SPOT_BYTES), st.binary(min_size=1, max_size=4))),
    st.tuples(st.just("bcd"), _pos, st.sampled_from([60, 127, 144]), st.integers(0, 33),
              st.integers(0, 15)),
    st.tuples(st.just("rdw"), _pos,
              st.one_of(st.tuples(st.just("len"), _u16v), st.tuples(st.just("add"), _delta),
                        st.tuples(st.just("res"), st.integers(1, 0xFFFF)))),
    st.tuples(st.just("bdw"), _pos,
              st.one_of(st.tuples(st.just("len"), _u16v), st.tuples(st.just("add"), _delta),
                        st.tuples(st.just("res"), st.integers(1, 0xFFFF)),
                        st.tuples(st.just("ext"), st.sampled_from([0, 0, 1, -1, 1 << 20])))),
)
BYTE_MUTATION = st.one_of(
    st.tuples(st.just("flip"), _pos, st.integers(1, 255)),
    st.tuples(st.just("set"), _pos, st.one_of(st.sampled_from(SPECIAL_BYTES),
                                              st.integers(0, 255))),
    st.tuples(st.just("nibble"), _pos, st.booleans(), st.integers(0, 15)),
    st.tuples(st.just("delete"), _pos, st.integers(1, 40)),
    st.tuples(st.just("insert"), _pos, st.one_of(
        st.binary(min_size=1, max_size=8),
        st.builds(lambda b, n: bytes([b]) * n, st.sampled_from(SPECIAL_BYTES),
                  st.integers(1, 300)))),
    st.tuples(st.just("truncate"), _pos),
)
TYPES = ["INTEGER", "SMALLINT", "BIGINT", "DECIMAL(5,2)", "DECIMAL(31,0)", "DECIMAL(4,4)",
         "REAL", "DOUBLE", "CHAR(3)", "CHAR(1)", "VARCHAR(10)", "GRAPHIC(2)", "VARGRAPHIC(4)",
         "CLOB", "DBCLOB", "BLOB", "XML", "DATE", "TIME", "TIMESTAMP", "TIMESTAMP(0)",
         "TIMESTAMP(12) WITH TIME ZONE", "BOOLEAN", "BINARY(3)", "VARBINARY(5)", "ROWID",
         "CHAR(4) FOR BIT DATA"]
CATALOG_MUTATION = st.one_of(
    st.tuples(st.just("type"), _pos, _pos, st.sampled_from(TYPES)),
    st.tuples(st.just("drop"), _pos, _pos),
    st.tuples(st.just("add"), _pos, _pos, st.sampled_from(TYPES), st.booleans()),
    st.tuples(st.just("nullable"), _pos, _pos),
)


def mutate_structure(blocks, ops):
    """Apply record-level ops to ``[[record, …], …]`` -> (blocks, rdw overrides, bdw
    overrides)."""
    blocks = [[bytearray(r) for r in b] for b in blocks]
    rdw, bdw = {}, {}

    def flat():
        return [(b, i) for b, block in enumerate(blocks) for i in range(len(block))]
    for op in ops:
        where = flat()
        kind = op[0]
        if kind in ("rdw", "bdw"):
            (rdw if kind == "rdw" else bdw)[op[1] % (len(where) + 1 if kind == "rdw"
                                                     else len(blocks))] = op[2]
            continue
        if not where:
            continue
        b, i = where[op[1] % len(where)]
        rec = blocks[b][i]
        if kind == "dup":
            b2, i2 = where[op[2] % len(where)]
            blocks[b2].insert(i2, bytearray(rec))
        elif kind == "drop":
            del blocks[b][i]
        elif kind == "swap":
            b2, i2 = where[op[2] % len(where)]
            blocks[b][i], blocks[b2][i2] = blocks[b2][i2], blocks[b][i]
        elif kind == "swapnext":
            j = (op[1] + 1) % len(where)
            b2, i2 = where[j]
            blocks[b][i], blocks[b2][i2] = blocks[b2][i2], blocks[b][i]
        elif kind == "u16":
            off = U16_FIELDS[op[2]]
            if off is None:           # DATA's total length, or the first image's length
                off = int.from_bytes(rec[0:2], "big") + (2 if op[2] == "IMAGE" else 0)
            if off + 2 <= len(rec):
                how, v = op[3]
                old = int.from_bytes(rec[off:off + 2], "big")
                rec[off:off + 2] = ((v if how == "set" else old + v) & 0xFFFF).to_bytes(2, "big")
        elif kind == "spot":
            (off, width), raw = op[2], op[3]
            raw = raw[:width]
            rec[off:off + len(raw)] = raw
        elif kind == "bcd":
            off, digit, v = op[2], op[3], op[4]
            at = off + digit // 2
            if digit % 2:
                rec[at] = (rec[at] & 0xF0) | v
            else:
                rec[at] = (rec[at] & 0x0F) | v << 4
    return [[bytes(r) for r in b] for b in blocks], rdw, bdw


def mutate_bytes(data: bytes, ops) -> bytes:
    m = bytearray(data)
    for op in ops:
        kind, n = op[0], len(m)
        if kind == "flip" and n:
            m[op[1] % n] ^= op[2]
        elif kind == "set" and n:
            m[op[1] % n] = op[2]
        elif kind == "nibble" and n:
            i = op[1] % n
            m[i] = (m[i] & 0x0F) | op[3] << 4 if op[2] else (m[i] & 0xF0) | op[3]
        elif kind == "delete" and n:
            i = op[1] % n
            del m[i:i + op[2]]
        elif kind == "insert":
            i = op[1] % (n + 1)
            m[i:i] = op[2]
        elif kind == "truncate":
            del m[op[1] % (n + 1):]
    return bytes(m)


def mutate_catalog(catalog: dict, ops) -> dict:
    tables = [dict(t, columns=[dict(c) for c in t["columns"]]) for t in catalog["tables"]]
    for op in ops:
        t = tables[op[1] % len(tables)]
        cols = t["columns"]
        kind = op[0]
        if kind == "add":
            name = f"ADDED_{len(cols)}_{op[2] % 97}"
            if all(c["name"] != name for c in cols):
                cols.insert(op[2] % (len(cols) + 1),
                            {"name": name, "type": op[3], "nullable": op[4]})
            continue
        if not cols:
            continue
        c = cols[op[2] % len(cols)]
        if kind == "type":
            c["type"] = op[3]
        elif kind == "drop":
            cols.remove(c)
            t["key"] = [k for k in t.get("key") or () if k != c["name"]]
        elif kind == "nullable":
            c["nullable"] = not c.get("nullable", True)
    return {"tables": tables}


@st.composite
def mutated_inputs(draw, catalog_ops=True):
    """(source: a stream or a list of messages with None tombstones, catalog, options)."""
    i = draw(st.integers(0, len(VARIANTS) - 1))
    msgs, catalog, opts = corpus(i)
    framing = opts["framing"]
    start = draw(st.integers(0, len(msgs) - 1))
    chosen = list(msgs[start:start + draw(st.integers(1, 3))])
    n_struct = draw(st.integers(0, 3))
    n_bytes = draw(st.integers(0, 3))
    as_stream = draw(st.booleans())
    out = []
    if not as_stream and draw(st.integers(0, 2)) == 0:
        # messages cut at any physical record, segmented records' segments across messages
        recs = [r for m in chosen for b in physical(m, framing) for r in b]
        recs = [r for b in mutate_structure([recs], draw(st.lists(
            STRUCT_MUTATION.filter(lambda op: op[0] not in ("rdw", "bdw")),
            max_size=n_struct)))[0] for r in b]
        cuts = sorted(set(draw(st.lists(st.integers(0, len(recs)), max_size=4))))
        groups = [recs[a:b] for a, b in zip([0, *cuts], [*cuts, len(recs)]) if b > a]
        out = [frame([g], framing) for g in groups] or [b""]
        k = draw(st.integers(0, len(out) - 1))
        out[k] = mutate_bytes(out[k], draw(st.lists(BYTE_MUTATION, max_size=n_bytes)))
    for k, m in enumerate(chosen if not out else ()):
        if k == 0 or draw(st.booleans()):
            blocks, rdw, bdw = mutate_structure(
                physical(m, framing), draw(st.lists(STRUCT_MUTATION, max_size=n_struct)))
            m = mutate_bytes(frame(blocks, framing, rdw, bdw),
                             draw(st.lists(BYTE_MUTATION, max_size=n_bytes)))
        out.append(m)
    if catalog_ops and draw(st.integers(0, 3)) == 0:
        catalog = mutate_catalog(catalog, draw(st.lists(CATALOG_MUTATION, min_size=1,
                                                        max_size=3)))
    opts = dict(opts)
    if draw(st.integers(0, 5)) == 0:      # the wrong options for the data
        key = draw(st.sampled_from(["framing", "encoding", "float_format", "source_tz"]))
        opts[key] = draw(st.sampled_from({"framing": FRAMINGS, "encoding": ENCODINGS,
                                          "float_format": ("hfp", "ieee"),
                                          "source_tz": ZONES}[key]))
    opts["order"] = draw(st.sampled_from(["input", "input", "commit"]))
    if as_stream:
        source = b"".join(out)
        kind = draw(st.sampled_from(["bytes", "bytes", "bytearray", "memoryview", "path"]))
        if kind == "bytearray":
            source = bytearray(source)
        elif kind == "memoryview":
            source = memoryview(b"\x00" + source)[1:]        # a view that does not start at 0
        elif kind == "path":
            source = StreamFile(source)
    else:
        for t in sorted(draw(st.lists(st.integers(0, len(out)), max_size=2)), reverse=True):
            out.insert(t, None)
        source = draw(st.sampled_from(["list", "array", "large", "chunked"]))
        if source == "list":
            source = out
        elif source == "array":
            source = pa.array(out, pa.binary())
        elif source == "large":
            source = pa.array(out, pa.large_binary())
        else:
            cut = draw(st.integers(0, len(out)))
            source = pa.chunked_array([pa.array(out[:cut], pa.binary()),
                                       pa.array(out[cut:], pa.binary())])
    return source, catalog, opts


class StreamFile:
    """A stream the strategies want read from a file (SPEC §1: a path is memory-mapped);
    `check` writes it to a temporary file and passes the path."""

    def __init__(self, data: bytes):
        self.data = data

    def __repr__(self):
        return f"StreamFile({self.data!r})"


_TMP = []


def as_source(source):
    """A StreamFile becomes a path (one temporary file, rewritten per example)."""
    if not isinstance(source, StreamFile):
        return source
    if not _TMP:
        import atexit
        import shutil
        import tempfile
        folder = tempfile.mkdtemp(prefix="lldf-fuzz-")
        atexit.register(shutil.rmtree, folder, True)
        _TMP.append(pathlib.Path(folder) / "stream.lldf")
    _TMP[0].write_bytes(source.data)
    return str(_TMP[0])


# -- the checks -----------------------------------------------------------------------------------

def messages_of(source) -> list:
    if isinstance(source, StreamFile):
        return [source.data]
    if isinstance(source, (str, os.PathLike)):
        return [pathlib.Path(source).read_bytes()]
    if isinstance(source, (bytes, bytearray, memoryview)):
        return [bytes(source)]
    if isinstance(source, (pa.Array, pa.ChunkedArray)):
        return source.to_pylist()
    return list(source)


def check_errors(t: pa.Table, messages, what, ctx):
    """Every `_error` names a message of the input and a byte inside it, and a
    `_corrupt_record` is a run of that message's bytes."""
    for err, corrupt in zip(t.column("_error").to_pylist(),
                            t.column("_corrupt_record").to_pylist()):
        if err is None:
            assert corrupt is None, (what, corrupt, ctx())
            continue
        m = ERROR_PARTS.match(err)
        assert m, (what, f"error text {err!r} is not 'field: reason (message M, byte B)'",
                   ctx())
        msg, pos = int(m.group("msg")), int(m.group("byte"))
        assert msg < len(messages) and messages[msg] is not None, (what, err, ctx())
        assert pos <= len(messages[msg]), (what, err, len(messages[msg]), ctx())
        if corrupt is not None:     # the error lies in the corrupt bytes, found in message M
            at = [i for i in range(len(messages[msg]) - len(corrupt) + 1)
                  if messages[msg].startswith(corrupt, i)] if corrupt else []
            assert any(i <= pos <= i + len(corrupt) for i in at), \
                (what, err, corrupt.hex(), at, ctx())


def errors_in_input_order(tables) -> list:
    found = []
    for t in tables:
        for err, seq in zip(t.column("_error").to_pylist(), t.column("seq").to_pylist()):
            if err is not None:
                found.append((seq, err))
    return [e for _, e in sorted(found)]


def _nonempty(tables: dict) -> dict:
    return {k: t for k, t in tables.items() if t.num_rows}


def _without_errors(t: pa.Table) -> pa.Table:
    return t.filter(pc.is_null(t.column("_error")))


def check(source, catalog, options, batches=True):
    """Every promise of the module docstring (3.), for one source."""
    source = as_source(source)
    ctx = lambda: "\n".join(_context(source, catalog, options))     # noqa: E731
    made = {n: _run(lambda m=m: m.Decoder(FMT, catalog, **options)) for n, m in APIS}
    if made["native"][0] == "raised" or made["reference"][0] == "raised":
        assert _error_key(made["native"][1]) == _error_key(made["reference"][1]), \
            (made, ctx())
        return
    decs = {n: r[1] for n, r in made.items()}
    messages = messages_of(source)

    # PERMISSIVE: decode_tables, headers, decode(table=…) and headers(table=…)
    got = {n: _run(lambda d=d: d.decode_tables(source)) for n, d in decs.items()}
    for n in got:
        assert got[n][0] == "ok", (n, got[n][1], ctx())
    assert_same_outcome(got["native"], got["reference"], "decode_tables", source, catalog,
                        options)
    assert decs["native"].last_stats == decs["reference"].last_stats, \
        (decs["native"].last_stats, decs["reference"].last_stats, ctx())
    perm = got["native"][1]
    for k, t in perm.items():
        check_errors(t, messages, f"decode_tables[{k!r}]", ctx)
        if options.get("order") == "commit":
            assert_commit_order(t, f"decode_tables[{k!r}]")

    heads = {n: _run(lambda d=d: d.headers(source)) for n, d in decs.items()}
    assert heads["native"][0] == "ok", (heads["native"][1], ctx())
    assert_same_outcome(heads["native"], heads["reference"], "headers", source, catalog,
                        options)
    assert decs["native"].last_stats == decs["reference"].last_stats, ctx()
    h = heads["native"][1]
    check_errors(h, messages, "headers", ctx)
    errs = {e for t in [h, *perm.values()] for e in t.column("_error").drop_null().to_pylist()}
    for err in errs if currently_in_test_context() else ():
        m = ERROR_PARTS.match(err)      # pytest --hypothesis-show-statistics lists them
        event(f"error {m.group('field').split('.')[0]}: "
              f"{re.sub(r'X.[0-9A-F]*.|[0-9]+', 'N', m.group('reason'))[:45]}")
    assert h.num_rows == decs["native"].last_stats["records"], ctx()
    if options.get("order") == "commit":
        assert_commit_order(h, "headers")

    cat = cdcfast.Catalog.from_dict(catalog)
    name = cat.tables[0].name
    for what, call in ((f"decode(table={name!r})", lambda d: d.decode(source, table=name)),
                       (f"headers(table={name!r})", lambda d: d.headers(source, table=name))):
        one = {n: _run(lambda d=d: call(d)) for n, d in decs.items()}
        assert_same_outcome(one["native"], one["reference"], what, source, catalog, options)
        assert decs["native"].last_stats == decs["reference"].last_stats, (what, ctx())
        if one["native"][0] == "ok" and what[0] == "d":
            # the table's rows and the unattributable ones
            want = [r for k in (name, None) if k in perm
                    for r in perm[k].column("seq").to_pylist()]
            assert sorted(one["native"][1].column("seq").to_pylist()) == sorted(want), \
                (what, ctx())

    if batches:
        size = 1 + len(messages) % 3
        res = {n: _run(lambda m=m: list(m.read_batches(source, format=FMT, catalog=catalog,
                                                       table=name, batch_size=size,
                                                       **options))) for n, m in APIS}
        assert_same_outcome(res["native"], res["reference"], f"read_batches({size})", source,
                            catalog, options)
        if res["native"][0] == "ok":
            assert all(b.num_rows <= size for b in res["native"][1]), ctx()

    # a Decoder used before gives what a fresh one gave
    again = _run(lambda: decs["native"].decode_tables(source))
    assert_same_outcome(again, got["native"], "decode_tables again", source, catalog, options)

    # FAILFAST: the same DecodeError on both, exactly when PERMISSIVE has an error row
    for what, call, perm_tables in (
            ("decode_tables", lambda d: d.decode_tables(source), perm.values()),
            ("headers", lambda d: d.headers(source), [h])):
        errors = errors_in_input_order(perm_tables)
        res = {}
        for n, m in APIS:
            d = m.Decoder(FMT, catalog, mode="FAILFAST", **options)
            res[n] = _run(lambda d=d: call(d))
        assert_same_outcome(res["native"], res["reference"], f"FAILFAST {what}", source,
                            catalog, options)
        r = res["native"]
        if not errors:
            assert r[0] == "ok", (what, r[1], ctx())
            continue
        assert r[0] == "raised" and isinstance(r[1], cdcfast.DecodeError), (what, r, ctx())
        e = r[1]
        assert str(e) == errors[0], (what, str(e), errors[0], ctx())
        parts = ERROR_PARTS.match(errors[0])
        assert (e.field, e.message_index, e.byte_offset) == (
            parts.group("field"), int(parts.group("msg")), int(parts.group("byte"))), \
            (what, e.field, e.message_index, e.byte_offset, ctx())

    # DROPMALFORMED: the PERMISSIVE rows without _error, on both
    for what, call, expected in (
            ("decode_tables", lambda d: d.decode_tables(source),
             _nonempty({k: _without_errors(t) for k, t in perm.items()})),
            ("headers", lambda d: d.headers(source), _without_errors(h))):
        stats = {}
        for n, m in APIS:
            d = m.Decoder(FMT, catalog, mode="DROPMALFORMED", **options)
            res = _run(lambda d=d: call(d))
            assert res[0] == "ok", (n, what, res[1], ctx())
            stats[n] = d.last_stats
            if isinstance(expected, dict):
                got_drop = _nonempty(res[1])
                assert got_drop.keys() == expected.keys(), (n, got_drop.keys(),
                                                            expected.keys(), ctx())
                for k, t in expected.items():
                    assert_same_table(got_drop[k], t, f"{n} DROPMALFORMED {what}[{k!r}]",
                                      source, catalog, options, ("DROPMALFORMED", "PERMISSIVE"))
            else:
                assert_same_table(res[1], expected, f"{n} DROPMALFORMED {what}", source,
                                  catalog, options, ("DROPMALFORMED", "PERMISSIVE"))
        assert stats["native"] == stats["reference"], (what, stats, ctx())


# -- the tests ------------------------------------------------------------------------------------

def test_native_kernel_is_in_use():
    """Without it both sides of every comparison below would be the reference."""
    assert cdcfast.native_available()


def test_corpus_decodes_cleanly():
    """Unmutated, every variant decodes without errors, equally on both decoders."""
    for i in range(len(VARIANTS)):
        msgs, catalog, opts = corpus(i)
        for source in (b"".join(msgs), list(msgs)):
            a = cdcfast.Decoder(FMT, catalog, **opts)
            b = reference.Decoder(FMT, catalog, **opts)
            ta, tb = a.decode_tables(source), b.decode_tables(source)
            assert ta.keys() == tb.keys() and None not in ta, VARIANTS[i]
            for k in ta:
                assert_same_table(ta[k], tb[k], f"variant {i} [{k}]", source)
                assert ta[k].column("_error").null_count == ta[k].num_rows, (VARIANTS[i], k)
            ha, hb = a.headers(source), b.headers(source)
            assert_same_table(ha, hb, f"variant {i} headers", source)
            assert ha.column("_error").null_count == ha.num_rows
            assert set(ha.column("op").to_pylist()) >= {"c"}
            assert a.last_stats == b.last_stats
            for blocks in (physical(m, opts["framing"]) for m in msgs):
                assert frame(blocks, opts["framing"]) in msgs   # the walker sees it all


@budget(60)
@given(st.integers(0, len(VARIANTS) - 1), st.sampled_from(["input", "commit"]),
       st.integers(1, 4), st.booleans())
def test_valid_data_differential(i, order, batch_size, as_messages):
    """2.: every entry point, on valid data, native == reference; commit order checked here."""
    msgs, catalog, opts = corpus(i)
    source = list(msgs) if as_messages else b"".join(msgs)
    opts = dict(opts, order=order)
    ctx = (source, catalog, opts)
    results = {}
    for n, m in APIS:
        d = m.Decoder(FMT, catalog, **opts)
        r = {"tables": d.decode_tables(source), "s1": d.last_stats,
             "headers": d.headers(source), "s2": d.last_stats}
        for t in cdcfast.Catalog.from_dict(catalog):
            r[("decode", t.name)] = d.decode(source, table=t.name)
            r[("s", t.name)] = d.last_stats
            r[("headers", t.name)] = d.headers(source, table=t.name)
            r[("batches", t.name)] = list(d.read_batches(source, table=t.name,
                                                         batch_size=batch_size))
            r[("sb", t.name)] = d.last_stats
        results[n] = r
    a, b = results["native"], results["reference"]
    assert a["tables"].keys() == b["tables"].keys()
    for k in a["tables"]:
        assert_same_table(a["tables"][k], b["tables"][k], f"decode_tables[{k}]", *ctx)
    for k in a:
        if k == "tables":
            continue
        if isinstance(a[k], dict):
            assert a[k] == b[k], (k, a[k], b[k])
        elif isinstance(a[k], list):
            assert_same_outcome(("ok", a[k]), ("ok", b[k]), str(k), *ctx)
        else:
            assert_same_table(a[k], b[k], str(k), *ctx)
    heads = a["headers"]
    for t in cdcfast.Catalog.from_dict(catalog):
        batches = a[("batches", t.name)]
        assert all(x.num_rows <= batch_size for x in batches)
        whole = a[("decode", t.name)]
        if batches:
            joined = pa.Table.from_batches(batches)
            if order == "input":
                assert_same_table(joined, whole, "read_batches vs decode", *ctx,
                                  names=("batches", "decode"))
            else:
                for x in batches:
                    assert_commit_order(pa.Table.from_batches([x]), "a batch")
                assert sorted(joined.column("seq").to_pylist()) == \
                    sorted(whole.column("seq").to_pylist())
        else:
            assert whole.num_rows == 0
    if order == "commit":       # the decoders' order is the one computed here
        base = dict(opts, order="input")
        plain = cdcfast.Decoder(FMT, catalog, **base)
        assert_same_table(heads, commit_sorted(plain.headers(source)), "headers commit order",
                          *ctx, names=("decoder", "computed"))
        for k, t in plain.decode_tables(source).items():
            assert_same_table(a["tables"][k], commit_sorted(t), f"[{k}] commit order", *ctx,
                              names=("decoder", "computed"))
        assert_commit_order(heads, "headers")


@budget(150)
@given(mutated_inputs())
def test_mutated_inputs(case):
    """3.: the main fuzz."""
    check(*case)


@budget(25)
@given(mutated_inputs(catalog_ops=False), st.lists(CATALOG_MUTATION, min_size=1, max_size=4))
def test_catalog_disagrees(case, ops):
    """3.: a catalog that does not match the data: a column's type changed, dropped, added,
    nullable flipped."""
    source, catalog, options = case
    check(source, mutate_catalog(catalog, ops), options, batches=False)


@st.composite
def random_inputs(draw):
    """4.: random bytes, or random bytes behind a valid header, in any framing."""
    i = draw(st.integers(0, len(VARIANTS) - 1))
    msgs, catalog, opts = corpus(i)
    framing = draw(st.sampled_from(FRAMINGS))
    parts = []
    for _ in range(draw(st.integers(1, 3))):
        kind = draw(st.integers(0, 3))
        if kind == 0:
            parts.append(draw(st.binary(max_size=400)))
            continue
        rec = physical(msgs[draw(st.integers(0, len(msgs) - 1))], opts["framing"])[0][0]
        head_len = int.from_bytes(rec[:2], "big")
        head = bytearray(rec[:head_len])
        if kind == 1:       # random DATA of any length behind a right SEGLEN
            body = draw(st.binary(max_size=300))
        else:               # random bytes after a plausible DATA length and image length
            img = draw(st.binary(max_size=300))
            body = struct.pack(">HH", 4 + len(img), len(img)) + img
            if kind == 2 and draw(st.booleans()):      # bytes after the images
                rest = draw(st.binary(min_size=1, max_size=3))
                body = struct.pack(">H", 4 + len(img) + len(rest)) + body[2:] + rest
            if kind == 3 and draw(st.booleans()):
                body = struct.pack(">HH", 6 + 2 * len(img), len(img)) + img + \
                    struct.pack(">H", len(img)) + draw(st.binary(min_size=len(img),
                                                                  max_size=len(img)))
        head[182:188] = struct.pack(">HHH", len(body), *draw(st.sampled_from(
            [(0, 0), (1, 1), (2, 1), (2, 2), (3, 3)])))
        parts.append(frame([[bytes(head) + body]], framing))
    if draw(st.booleans()):
        parts.append(draw(st.binary(max_size=12)))
    opts = dict(opts, framing=framing)
    source = b"".join(parts) if draw(st.booleans()) else parts
    return source, catalog, opts


@budget(80)
@given(random_inputs())
def test_random_bytes(case):
    check(*case, batches=False)


@budget(80)
@given(st.one_of(st.binary(max_size=600), random_inputs().map(
    lambda c: c[0] if isinstance(c[0], bytes) else b"".join(c[0]))),
    st.sampled_from(FRAMINGS), st.sampled_from([1, 2, 7, 64, 300, 1000, 1 << 20]))
def test_record_starts_random(data, framing, step):
    """4.: both record_starts agree on any bytes, never crash, and return sorted cuts from 0
    to len(data)."""
    got = {}
    for n, fn in STARTS:
        got[n] = _run(lambda fn=fn: fn(data, framing, step))
    assert got["native"][0] == got["reference"][0] == "ok", got
    a, b = list(got["native"][1]), list(got["reference"][1])
    assert a == b, (f"record_starts({framing}, {step}): native {a}, reference {b}",
                    show_source(data))
    assert a[0] == 0 and a[-1] == len(data), a
    assert a == sorted(set(a)) or a == [0, 0] and not data, a


# rows of random column values: an image built column by column
FUZZ_CATALOG = {"tables": [
    {"schema": "FUZZ", "table": "FIXED", "columns": [
        {"name": "I2", "type": "SMALLINT"}, {"name": "P", "type": "DECIMAL(5,2)"},
        {"name": "P4", "type": "DECIMAL(4,1)", "nullable": False},
        {"name": "P31", "type": "DECIMAL(31,5)"}, {"name": "P1", "type": "DECIMAL(1,0)"},
        {"name": "R", "type": "REAL"}, {"name": "F", "type": "DOUBLE"},
        {"name": "C", "type": "CHAR(2)"}, {"name": "C9", "type": "CHAR(9)"},
        {"name": "C17", "type": "CHAR(17)"}, {"name": "G", "type": "GRAPHIC(1)"},
        {"name": "G3", "type": "GRAPHIC(3)"}, {"name": "DT", "type": "DATE"},
        {"name": "TM", "type": "TIME"}, {"name": "TS", "type": "TIMESTAMP(0)"},
        {"name": "TS3", "type": "TIMESTAMP(3)"}, {"name": "TS6", "type": "TIMESTAMP"},
        {"name": "TS12", "type": "TIMESTAMP(12)"},
        {"name": "TZ", "type": "TIMESTAMP(0) WITH TIME ZONE"},
        {"name": "TZ9", "type": "TIMESTAMP(9) WITH TIME ZONE"},
        {"name": "BO", "type": "BOOLEAN"}, {"name": "BIN", "type": "BINARY(2)"}]},
    {"schema": "FUZZ", "table": "VAR", "columns": [
        {"name": "V", "type": "VARCHAR(40)"}, {"name": "VG", "type": "VARGRAPHIC(20)"},
        {"name": "CL", "type": "CLOB", "nullable": False}, {"name": "X", "type": "XML"},
        {"name": "B", "type": "BLOB"}, {"name": "DB", "type": "DBCLOB"},
        {"name": "VB", "type": "VARBINARY(4)"}, {"name": "LV", "type": "LONG VARCHAR"},
        {"name": "RI", "type": "ROWID"}, {"name": "I8", "type": "BIGINT"}]},
]}

# near-valid text per type (written in the decoder's code page, now and then in another one):
# the converters' edges
NEAR_TEXT = {
    "DATE": ["2024-02-29", "2023-02-29", "0000-01-01", "0001-01-01", "9999-12-31",
             "2024-13-01", "2024-1-011", "2024/02/01", "2024-02-00", "2024-04-31",
             "2024.02.01", " 024-02-01", "+024-02-01", "2024-02-3 "],
    "TIME": ["24.00.00", "23:59:59", "23.60.00", "00.00.60", "1.2.3.4.", "00.00.00",
             "24.00.01", "23.59:59", "-1.00.00", "2 .00.00", "12.00.0 "],
    "TIMESTAMP": ["2024-02-29-24.00.00.000000000000", "2024-02-29 23.59.59.999999999999",
                  "2024-02-29T23:59:59.000000000001", "9999-12-31-24.00.00.000000000000",
                  "9999-12-31-23.59.59.999999999999", "0001-01-01-00.00.00.000000000000",
                  "2024-02-29-12.00.00,000001000000", "2024-02-29-12.00.00.99999x000000",
                  "2024-02-29-24.00.00.000001000000", "2024-02-29-12.00.00 000000000000",
                  "2024-02-29-12:00:00.123456789012", "2024-02-29-12.00.00.1234567     "],
    "TIMESTAMP WITH TIME ZONE": [
        "2024-02-29-12.00.00.000000000+14:00", "2024-02-29-12.00.00.000000000-24:00",
        "2024-02-29-12.00.00.000000000+01:60", "0001-01-01-00.00.00.000000000+01:00",
        "9999-12-31-23.59.59.999999999-01:00", "2024-02-29-12.00.00.000000000 01:00",
        "2024-02-29-24.00.00.000000000+00:00", "2024-02-29-12.00.00.000000000+00:00",
        "2024-02-29-12.00.00.000000000-00:30", "2024-02-29-12.00.00.000000000+1:000"],
    "CHAR": ["", "A", "ABC DEF  ", "é€[]^¬|!", "        ", "12345678901234567"],
}
# (bytes written whatever the code page)
NEAR_BYTES = {
    "REAL": [bytes.fromhex(h) for h in (
        "61100000", "60FFFFFF", "00000001", "80000000", "7FFFFFFF", "FFFFFFFF", "00100000",
        "3F800000", "7F800000", "7FC00000", "0010000F", "20100000", "21FFFFFF", "22800001",
        "1F000001", "A2800001", "61000001", "60FFFFFE", "6100FFFF")],
    "DOUBLE": [bytes.fromhex(h) for h in (
        "7FFFFFFFFFFFFFFF", "0000000000000001", "4110000000000000", "41FFFFFFFFFFFFFF",
        "00FFFFFFFFFFFFFF", "7FF0000000000000", "7FF8000000000001", "8000000000000000",
        "4010000000000008", "4010000000000018", "401000000000000C", "C1FFFFFFFFFFFFFC",
        "000000000000000F", "7F00000000000001")],
    "DECIMAL": [bytes.fromhex(h) for h in ("99999C", "00000D", "99999B", "9999AC", "12345E",
                                           "000009", "FFFFFF", "00000F", "09999C", "19999C",
                                           "0000AD", "0C", "9D", "1A", "00", "0F", "9F")],
    "GRAPHIC": [b"\xd8\x00", b"\xdc\x00", b"\x00\x00", b"\xff\xfe", b"\xd8\x3d\xde\x00",
                b"\x00A\x00B\x00C", b"\xd8\x00\x00A\x00B", b"\x00A\xdc\x00\x00B"],
    "BOOLEAN": [b"\x00", b"\x01", b"\x02", b"\xff"],
}
NULL_BYTES = [0x00] * 20 + [0xFF] * 6 + [0x01, 0x40, 0xFE]
VAR_PAYLOADS = [b"", b"\xd8\x00\xdc\x00", b"\xd8\x00", b"\xdc\x00\x00A", b"\xc3\x28",
                b"\xe2\x82", b"\xed\xa0\x80", b"\xf4\x90\x80\x80", b"\x00A\x00", b"<a/>",
                b"\xc1\xc2\xc3", "<a>€ü中😀</a>".encode("utf-8"), b"\xc0\x80",
                b"\xf8\x88\x80\x80",
                b"A" * 8 + b"\x80" + b"B" * 8, bytes(range(0x40, 0x60)), bytes(range(0x80, 0xA8))]


def _near_key(ctype):
    base = ctype.base
    if base == "TIMESTAMP":
        return "TIMESTAMP WITH TIME ZONE" if "ZONE" in ctype.name else "TIMESTAMP"
    if base in ("DECIMAL", "DEC", "NUMERIC"):
        return "DECIMAL"
    return base if base in ("REAL", "DOUBLE", "GRAPHIC", "BOOLEAN", "DATE", "TIME",
                            "CHAR") else None


@st.composite
def fixed_value(draw, ctype, width, encoding):
    """`width` bytes for a fixed-width column: near-valid text or bytes, mostly."""
    key = _near_key(ctype)
    if key is None or not draw(st.integers(0, 3)):
        return draw(st.binary(min_size=width, max_size=width))
    if key in NEAR_BYTES:
        raw = draw(st.sampled_from(NEAR_BYTES[key]))
        return raw[-width:].rjust(width, b"\x00") if key == "DECIMAL" else \
            raw[:width].ljust(width, b"\x00")
    text = draw(st.sampled_from(NEAR_TEXT[key]))
    enc = encoding if draw(st.integers(0, 5)) else draw(st.sampled_from(ENCODINGS))
    raw = codepages.encode_text("".join(c if c in _alphabet(enc) else "?" for c in text), enc)
    blank = codepages.encode_text(" ", enc)
    if key in ("TIMESTAMP", "TIMESTAMP WITH TIME ZONE"):
        p = ctype.precision
        if key == "TIMESTAMP":
            raw = raw[:19] + (raw[19:20 + p] if p else b"")
        else:       # the fraction cut to p digits, the zone kept
            raw = raw[:19] + (raw[19:20 + p] if p else b"") + raw[29:]
    raw = bytearray(raw[:width].ljust(width, blank))
    if draw(st.integers(0, 4)) == 0:    # one character replaced by any byte
        raw[draw(st.integers(0, width - 1))] = draw(st.integers(0, 255))
    return bytes(raw)


@st.composite
def random_images(draw):
    """(stream, catalog, options): records of FUZZ_CATALOG (its columns in a drawn order, so
    that any column's error can come first) whose images are built column by column from
    near-valid and random bytes, in a drawn code page, null bytes X'00', X'FF' or anything,
    and now and then one length field that does not fit."""
    catalog = {"tables": [dict(t, columns=draw(st.permutations(t["columns"])))
                          for t in FUZZ_CATALOG["tables"]]}
    cat = cdcfast.Catalog.from_dict(catalog)
    framing = draw(st.sampled_from(FRAMINGS))
    float_format = draw(st.sampled_from(("hfp", "ieee")))
    encoding = draw(st.sampled_from(ENCODINGS))
    records = []
    for _ in range(draw(st.integers(1, 3))):
        t = cat.tables[draw(st.integers(0, 1))]

        def image():
            out = bytearray()
            slip = draw(st.sampled_from([None] * 4 + list(range(len(t.columns)))))
            for i, c in enumerate(t.columns):
                if c.nullable:      # mostly right, so that the values behind get read
                    out.append(draw(st.sampled_from(NULL_BYTES)))
                kind, width = layouts.layout(c)
                if width:
                    out += draw(fixed_value(c.type, width, encoding))
                else:
                    wide = kind in (layouts.K_CLOB, layouts.K_BLOB,
                                    layouts.K_DBCLOB, layouts.K_XML)
                    payload = draw(st.one_of(st.binary(max_size=40),
                                             st.sampled_from(VAR_PAYLOADS)))
                    n = len(payload) + (draw(st.sampled_from([1, -1, 1000])) if i == slip
                                        else 0)
                    out += (n & 0xFFFFFFFF).to_bytes(4, "big") if wide else \
                        (n & 0xFFFF).to_bytes(2, "big")
                    out += payload
            return bytes(out)
        op = draw(st.sampled_from(["I ", "UB", "D "]))
        images = [image() for _ in range(2 if op == "UB" else 1)]
        body = b"".join(struct.pack(">H", len(i)) + i for i in images)
        data = struct.pack(">H", 2 + len(body)) + body
        control = {"op": "t", "source_op": "DM", "schema": "FUZZ", "table": t.table}
        head = bytearray(writer.encode([control], cat, encoding=encoding))  # the table's header
        head[104:106] = codepages.encode_text(op, encoding)
        head[182:188] = struct.pack(">HHH", len(data), 0, 0)
        records.append(bytes(head) + data)
    segs = draw(st.one_of(st.none(), st.integers(5, 60)))
    if segs:        # cut each record's DATA into segments
        out = []
        for rec in records:
            data = rec[288:]
            chunks = [data[i:i + segs] for i in range(0, len(data), segs)]
            for k, c in enumerate(chunks):
                h = bytearray(rec[:288])
                h[182:188] = struct.pack(">HHH", len(c), len(chunks), k + 1)
                out.append(bytes(h) + c)
        records = out
    stream = frame([records], framing)
    return stream, catalog, {"framing": framing, "float_format": float_format,
                             "encoding": encoding, "source_tz": draw(st.sampled_from(ZONES))}


@budget(60)
@given(random_images())
def test_random_column_values(case):
    """4.: every converter on random and near-valid bytes: native == reference."""
    check(*case, batches=False)


# -- numbers against an oracle written here -------------------------------------------------------

_F32_MAX = struct.unpack(">f", b"\x7f\x7f\xff\xff")[0]


def hfp_oracle(raw: bytes, real: bool):
    """docs/lldf.md: the exact value fraction × 16^(exp−64) / 2^24 (or 2^56), rounded once to
    the nearest double (a REAL: to the nearest float32, beyond its largest finite value an
    error -> None), sign kept for zero. Computed with fractions."""
    from fractions import Fraction
    n = int.from_bytes(raw, "big")
    bits = 8 * len(raw)
    neg, exp, frac = n >> (bits - 1), (n >> (bits - 8)) & 0x7F, n & ((1 << (bits - 8)) - 1)
    exact = Fraction(frac, 1 << (bits - 8)) * Fraction(16) ** (exp - 64)
    if real and exact > Fraction(_F32_MAX):
        return None
    x = exact.numerator / exact.denominator     # int / int rounds correctly (ties to even)
    if real:        # exact in a double (24 bits), so this rounds once
        x = struct.unpack(">f", struct.pack(">f", x))[0]
    return -x if neg else x


def packed_oracle(raw: bytes, p: int, s: int):
    """docs/lldf.md: digit nibbles 0-9, sign nibble A-F (D, B minus), the pad nibble 0 when p
    is even; -0 is 0 -> the Decimal, or None for an error."""
    nibbles = raw.hex().upper()
    digits, sign = nibbles[:-1], nibbles[-1]
    if sign not in "ABCDEF" or not digits.isdigit() or (p % 2 == 0 and digits[0] != "0"):
        return None
    value = D(f"{int(digits)}E-{s}")
    return value.copy_negate() if sign in "DB" and int(digits) else value


@st.composite
def hfp_bytes(draw, size):
    """HFP (or IEEE) bits: random, or with the exponents where rounding, float32 subnormals
    and overflow happen, fractions at rounding ties."""
    if draw(st.booleans()):
        return draw(st.binary(min_size=size, max_size=size))
    sign = draw(st.integers(0, 1))
    exp = draw(st.one_of(st.integers(0, 127), st.sampled_from(
        [0x00, 0x1E, 0x1F, 0x20, 0x21, 0x22, 0x23, 0x40, 0x41, 0x5F, 0x60, 0x61, 0x7F])))
    fbits = 8 * size - 8
    frac = draw(st.one_of(
        st.integers(0, (1 << fbits) - 1),
        st.sampled_from([0, 1, (1 << fbits) - 1, 1 << (fbits - 4), (1 << (fbits - 4)) - 1,
                         0b100, 0b1100, 0b0100 | 1 << (fbits - 1), 0b1100 | 1 << (fbits - 1),
                         0x80 | 1 << (fbits - 1)])))
    return (sign << (8 * size - 1) | exp << fbits | frac).to_bytes(size, "big")


@budget(80)
@given(st.lists(st.tuples(hfp_bytes(4), hfp_bytes(8),
                          st.binary(min_size=16, max_size=16)), min_size=1, max_size=5),
       st.sampled_from([(1, 0), (2, 1), (5, 2), (10, 10), (18, 3), (19, 0), (30, 30),
                        (31, 5), (31, 31)]),
       st.sampled_from(FRAMINGS), st.sampled_from(("hfp", "ieee")), st.booleans())
def test_floats_and_packed_decimals(values, ps, framing, float_format, tail):
    """REAL, DOUBLE and DECIMAL(p,s) from random bits: both decoders equal the oracle above
    (floats by their bits), and an error exactly where the oracle says. With `tail` a
    CHAR(16) column follows the decimal, so the kernel reads it in 16-byte words (its fast
    path); without, the decimal ends the image and is read byte by byte."""
    p, s = ps
    width = (p + 2) // 2
    catalog = {"tables": [{"schema": "N", "table": "T", "columns": [
        {"name": "R", "type": "REAL", "nullable": False},
        {"name": "F", "type": "DOUBLE", "nullable": False},
        {"name": "P", "type": f"DECIMAL({p},{s})", "nullable": False}]
        + ([{"name": "Z", "type": "CHAR(16)", "nullable": False}] if tail else [])}]}
    events = []
    for r, f, dec in values:
        nib = bytearray(dec[:width])
        if dec[15] & 1:     # mostly a valid sign nibble and digits, so values get read
            nib = bytearray(bytes.fromhex("".join(str(b % 10)
                                                  for b in (dec * 2)[:2 * width - 1])
                                          + "ABCDEF"[dec[14] % 6]))
        events.append((r, f, bytes(nib)))
    recs = []
    for r, f, dec in events:
        image = r + f + dec + (codepages.encode_text("tail" * 4, "cp037") if tail else b"")
        data = struct.pack(">HH", 4 + len(image), len(image)) + image
        ev = {"op": "t", "source_op": "DM", "schema": "N", "table": "T"}
        head = bytearray(writer.encode([ev], catalog))
        head[104:106] = codepages.encode_text("I ", "cp037")
        head[182:184] = struct.pack(">H", len(data))
        recs.append(bytes(head) + data)
    data = frame([recs], framing)
    options = {"framing": framing, "float_format": float_format}
    check(data, catalog, options, batches=False)
    t = cdcfast.decode(data, format=FMT, catalog=catalog, table="N.T", **options)
    after = t.column("after").combine_chunks()
    got_r = after.field("R").to_pylist()
    got_f = after.field("F").to_pylist()
    got_p = after.field("P").to_pylist()
    errors = t.column("_error").to_pylist()
    for i, (r, f, dec) in enumerate(events):
        if float_format == "hfp":
            want_r, want_f = hfp_oracle(r, True), hfp_oracle(f, False)
        else:
            want_r, want_f = struct.unpack(">f", r)[0], struct.unpack(">d", f)[0]
        want_p = packed_oracle(dec, p, s)
        where = f"record {i}: REAL {r.hex()}, DOUBLE {f.hex()}, DECIMAL({p},{s}) {dec.hex()}"
        assert same_value(got_r[i], want_r) or (
            want_r is not None and got_r[i] is not None and math.isnan(want_r)
            and math.isnan(got_r[i])), (where, got_r[i], want_r)
        assert same_value(got_f[i], want_f), (where, got_f[i], want_f)
        assert same_value(got_p[i], want_p), (where, got_p[i], want_p)
        first = "R" if want_r is None else "P" if want_p is None else None
        assert (errors[i] or "").split(":")[0] == (f"after.{first}" if first else ""), \
            (where, errors[i])


# -- BIN(17) header timestamps in source_tz -------------------------------------------------------

# zones with the odd transitions: 30-minute DST, negative DST, a skipped day, DST suspended for
# Ramadan, a two-hour jump, LMT offsets with seconds, fixed offsets
TS_ZONES = ("UTC", "Europe/Paris", "America/New_York", "Australia/Lord_Howe", "Europe/Dublin",
            "Pacific/Apia", "Africa/Casablanca", "Antarctica/Troll", "America/St_Johns",
            "Asia/Kolkata", "Europe/Moscow", "+05:45", "-03:30")
TS_FIELDS = (("TIMESTAMP", 60), ("UORTIMESTAMP", 127), ("UORCOMMITTIMESTAMP", 144))


@functools.lru_cache(maxsize=None)
def transition_walls(zone_name):
    """Wall clocks at the zone's offset changes (both sides) in a few years, for the
    strategies: the hours that repeat or are skipped."""
    from cdcfast import _tz
    z = _tz.zone(zone_name)
    if isinstance(z, dt.timezone):
        return (dt.datetime(2024, 1, 1),)
    out = []
    off = lambda t: t.astimezone(z).utcoffset()     # noqa: E731
    for year in (1891, 1911, 1940, 1970, 1996, 2011, 2014, 2019, 2024, 2037, 2050, 2100, 9998):
        t = dt.datetime(year, 1, 1, tzinfo=UTC)
        while t.year == year:
            n = t + dt.timedelta(days=1)
            if off(t) != off(n):
                a, b = t, n
                while b - a > dt.timedelta(seconds=1):
                    mid = a + (b - a) / 2
                    mid = mid.replace(microsecond=0)
                    if mid <= a:
                        break
                    a, b = (mid, b) if off(mid) == off(a) else (a, mid)
                for o in (off(a), off(b)):
                    out.append((b + o).replace(tzinfo=None))
            t = n
    return tuple(out) or (dt.datetime(2024, 1, 1),)


def bcd17(y, mo, d, h, mi, s, frac15, pad5="00000"):
    return bytes.fromhex(f"{y:04d}{mo:02d}{d:02d}{h:02d}{mi:02d}{s:02d}{frac15}{pad5}")


@st.composite
def header_stamps(draw, zone_name):
    """(17 bytes, the decoded instant or "error" or None): valid wall clocks (near the zone's
    transitions, or anywhere in years 1-9999), all zeros, and impossible dates and times."""
    kind = draw(st.integers(0, 9))
    frac = draw(st.integers(0, 10 ** 15 - 1))
    if kind == 0:
        return bytes(17), None
    if kind <= 2:       # an impossible date or time, or a bad nibble
        y, mo, d, h, mi, sec = draw(st.sampled_from([
            (0, 1, 1, 0, 0, 0), (2024, 0, 1, 0, 0, 0), (2024, 13, 1, 0, 0, 0),
            (2023, 2, 29, 0, 0, 0), (2024, 4, 31, 0, 0, 0), (2024, 1, 0, 0, 0, 0),
            (2024, 1, 32, 0, 0, 0), (2024, 1, 1, 24, 0, 0), (2024, 1, 1, 0, 60, 0),
            (2024, 1, 1, 0, 0, 60), (1900, 2, 29, 12, 0, 0)]))
        raw = bytearray(bcd17(y, mo, d, h, mi, sec, f"{frac:015d}"))
        if kind == 2:   # or a nibble above 9 anywhere, pad digits included
            at, low = draw(st.integers(0, 16)), draw(st.booleans())
            v = draw(st.integers(10, 15))
            raw = bytearray(bcd17(2024, 6, 1, 12, 0, 0, f"{frac:015d}"))
            raw[at] = (raw[at] & 0xF0) | v if low else (raw[at] & 0x0F) | v << 4
        return bytes(raw), "error"
    if kind <= 6:
        wall = draw(st.sampled_from(transition_walls(zone_name))) + draw(st.sampled_from([
            dt.timedelta(0), dt.timedelta(seconds=-1), dt.timedelta(microseconds=-1),
            dt.timedelta(microseconds=1), dt.timedelta(minutes=30), dt.timedelta(hours=-1),
            dt.timedelta(hours=1), dt.timedelta(minutes=59, seconds=59),
            dt.timedelta(hours=2), dt.timedelta(days=-1)]))
        frac = wall.microsecond * 10 ** 9 + frac % 10 ** 9
    else:
        wall = draw(st.datetimes(dt.datetime(1, 1, 1), dt.datetime(9999, 12, 31, 23, 59, 59)))
        frac = wall.microsecond * 10 ** 9 + frac % 10 ** 9
    pad = draw(st.sampled_from(["00000", "00000", "12345", "99999"]))
    raw = bcd17(wall.year, wall.month, wall.day, wall.hour, wall.minute, wall.second,
                f"{frac:015d}", pad)
    return raw, _wall_clock_instant(wall, zone_name)


def _wall_clock_instant(wall, zone_name):
    """docs/lldf.md and SPEC §3: the wall clock read in source_tz, a repeated or skipped local
    time as the earlier instant; None where Python's datetime cannot hold the answer."""
    from cdcfast import _tz
    if not 2 <= wall.year <= 9998:
        return "unchecked"
    z = _tz.zone(zone_name)
    return min(wall.replace(tzinfo=z, fold=f).astimezone(UTC) for f in (0, 1))


@budget(60)
@given(st.sampled_from(TS_ZONES).flatmap(lambda z: st.tuples(
    st.just(z), st.lists(st.tuples(header_stamps(z), header_stamps(z), header_stamps(z)),
                         min_size=1, max_size=4))), st.sampled_from(["input", "commit"]))
def test_header_timestamps(case, order):
    """BIN(17) TIMESTAMP / UORTIMESTAMP / UORCOMMITTIMESTAMP in any zone: both decoders equal
    (and equal to the wall clock read as docs/lldf.md says), impossible ones an error."""
    zone_name, stamps = case
    msgs, catalog, _ = corpus(0)
    base = physical(msgs[0], "raw")[0][0]
    records = []
    for triple in stamps:
        rec = bytearray(base)
        for (_, off), (raw, _) in zip(TS_FIELDS, triple):
            rec[off:off + 17] = raw
        records.append(bytes(rec))
    data = b"".join(records)
    options = {"source_tz": zone_name, "order": order}
    check(data, catalog, options, batches=False)
    heads = cdcfast.headers(data, format=FMT, catalog=catalog, source_tz=zone_name)
    cols = (heads.column("change_ts"), heads.column("source").combine_chunks().field("uor_ts"),
            heads.column("commit_ts"))
    for i, triple in enumerate(stamps):
        first_error = next((name for (name, _), (_, want) in zip(TS_FIELDS, triple)
                            if want == "error"), None)
        err = heads.column("_error")[i].as_py()
        assert (err or "").split(":")[0] == (first_error or ""), (err, triple, zone_name)
        for (name, _), (raw, want), col in zip(TS_FIELDS, triple, cols):
            if want == "unchecked":
                assert col[i].is_valid, (name, raw.hex(), zone_name)
                continue
            got = col[i].as_py()
            assert got == (None if want == "error" else want), \
                (name, raw.hex(), zone_name, got, want)


@budget(40)
@given(st.sampled_from(FRAMINGS), st.integers(0, 1 << 30), st.integers(1, 80),
       st.integers(1, 3000), st.booleans())
def test_split_at_record_starts(framing, seed, segment_bytes, step, all_types):
    """5.: pieces cut at record_starts decode to the rows of the whole (seq apart)."""
    gen = dict(rows=12, table_width=4, tables=2, seed=seed, framing=framing,
               segment_bytes=segment_bytes + (60 if all_types else 0), control=True,
               all_types=all_types, block_bytes=500)
    if all_types:
        gen["rows"] = 4
    data, catalog = writer.generate(**gen)
    starts = native_lldf.record_starts(data, framing, step)
    assert list(starts) == list(reference_lldf.record_starts(data, framing, step))
    assert starts[0] == 0 and starts[-1] == len(data)
    for n, api in APIS:
        dec = api.Decoder(FMT, catalog, framing=framing)
        whole = dec.headers(data)
        assert whole.column("_error").null_count == whole.num_rows
        pieces = [dec.headers(data[a:b]) for a, b in zip(starts, starts[1:])]
        joined = pa.concat_tables(pieces).drop_columns(["seq"])
        assert_same_table(joined, whole.drop_columns(["seq"]), f"{n} split headers", data,
                          catalog, {"framing": framing, "step": step},
                          names=("pieces", "whole"))
        tables = dec.decode_tables(data)
        got = {}
        for a, b in zip(starts, starts[1:]):
            for k, t in dec.decode_tables(data[a:b]).items():
                got.setdefault(k, []).append(t.drop_columns(["seq"]))
        assert got.keys() == tables.keys()
        for k in tables:
            assert_same_table(pa.concat_tables(got[k]), tables[k].drop_columns(["seq"]),
                              f"{n} split decode_tables[{k}]", data, catalog,
                              {"framing": framing, "step": step}, names=("pieces", "whole"))


@functools.lru_cache(maxsize=None)
def long_stream(framing, seed):
    """About 1 030 logical records (most in 2-3 segments), past the native kernel's chunk of
    1 024 records."""
    return writer.generate(1030, table_width=1, tables=2, seed=seed, segment_bytes=6,
                           control=True, framing=framing, block_bytes=3000)


@budget(3)
@given(st.sampled_from(FRAMINGS), st.integers(0, 1), st.lists(STRUCT_MUTATION, max_size=3),
       st.lists(BYTE_MUTATION, max_size=3), st.sampled_from([1000, 1024, 1025]))
def test_chunk_boundaries(framing, seed, struct_ops, byte_ops, batch_size):
    """A longer stream, mutated: records and segments across the kernel's chunks and the
    batches, native == reference (PERMISSIVE, FAILFAST, read_batches)."""
    data, catalog = long_stream(framing, seed)
    blocks, rdw, bdw = mutate_structure(physical(data, framing), struct_ops)
    data = mutate_bytes(frame(blocks, framing, rdw, bdw), byte_ops)
    options = {"framing": framing}
    for what, call in (
            ("decode_tables", lambda m, mode: m.Decoder(FMT, catalog, mode=mode, **options)
             .decode_tables(data)),
            ("headers", lambda m, mode: m.Decoder(FMT, catalog, mode=mode, **options)
             .headers(data)),
            ("read_batches", lambda m, mode: list(m.read_batches(
                data, format=FMT, catalog=catalog, table="SALES.ORDERS_1",
                batch_size=batch_size, mode=mode, **options)))):
        for mode in ("PERMISSIVE", "FAILFAST"):
            got = {n: _run(lambda m=m: call(m, mode)) for n, m in APIS}
            assert_same_outcome(got["native"], got["reference"], f"{mode} {what}", data,
                                catalog, options)


@pytest.mark.parametrize("source", [
    b"", b"\x00", b"\x01\x20", b"\x00\x04\x00\x00", b"\x00\x08\x00\x00\x00\x04\x00\x00",
    b"\x80\x00\x00\x04", b"\x80\x00\x00\x08\x00\x04\x00\x00", b"\xff" * 300, b"\x00" * 300,
    b"\x40" * 600, [None], [], [b""], [None, b"\x00\x04\x00\x00", None],
])
@pytest.mark.parametrize("framing", FRAMINGS)
def test_edge_sources(source, framing):
    msgs, catalog, _ = corpus(0)
    check(source, catalog, {"framing": framing})


@pytest.mark.parametrize("catalog", [
    {"tables": [{"schema": "A", "table": "B", "columns": [{"name": "X", "type": "DECFLOAT"}]}]},
    {"tables": [{"schema": "A", "table": "B", "columns": [{"name": "X", "type": "NUMBER"}]}]},
    {"tables": [{"schema": "A", "table": "B", "columns": [{"name": "X", "type": "TINYINT"}]}]},
])
def test_catalog_without_layout_is_refused_alike(catalog):
    """A type with no LLDF layout: the same ValueError, naming table and column, on both."""
    got = {n: _run(lambda m=m: m.Decoder(FMT, catalog)) for n, m in APIS}
    assert got["native"][0] == got["reference"][0] == "raised"
    assert str(got["native"][1]) == str(got["reference"][1])
    assert "A.B" in str(got["native"][1]) and "X" in str(got["native"][1])


# -- a larger corpus in a child process (not in CI) ----------------------------------------------

CHILD = r"""
import os, random, sys
sys.path.insert(0, sys.argv[1])
import test_lldf_fuzz as f
import cdcfast
from cdcfast import _lldf_frame
rng = random.Random(int(sys.argv[3]))
last = sys.argv[2]
for n in range(int(sys.argv[4])):
    i = rng.randrange(len(f.VARIANTS))
    msgs, catalog, opts = f.corpus(i)
    framing = opts["framing"]
    out = []
    for m in msgs[rng.randrange(len(msgs)):][:rng.randint(1, 3)]:
        ops = []
        for _ in range(rng.randint(0, 4)):
            k = rng.choice(["dup", "drop", "swap", "swapnext", "u16", "rdw", "bdw"])
            a, b = rng.randrange(1 << 16), rng.randrange(1 << 16)
            if k == "u16":
                ops.append((k, a, rng.choice(sorted(f.U16_FIELDS)),
                            ("set", rng.choice(f.U16_VALUES + [rng.randrange(1 << 16)]))))
            elif k in ("rdw", "bdw"):
                ops.append((k, a, rng.choice([("len", rng.randrange(1 << 16)),
                                              ("add", rng.choice([-5, -1, 1, 5])),
                                              ("res", rng.randrange(1, 1 << 16))])))
            else:
                ops.append((k, a, b))
        blocks, rdw, bdw = f.mutate_structure(f.physical(m, framing), ops)
        data = f.frame(blocks, framing, rdw, bdw)
        bops = []
        for _ in range(rng.randint(0, 6)):
            k = rng.choice(["flip", "set", "nibble", "delete", "insert", "truncate"])
            a = rng.randrange(1 << 16)
            extra = {"flip": (rng.randint(1, 255),), "set": (rng.choice(f.SPECIAL_BYTES),),
                     "nibble": (rng.random() < 0.5, rng.randrange(16)),
                     "delete": (rng.randint(1, 40),),
                     "insert": (bytes(rng.randrange(256) for _ in range(rng.randint(1, 6))),)}
            bops.append((k, a) + extra.get(k, ()))
        out.append(f.mutate_bytes(data, bops))
    if rng.random() < 0.2:
        catalog = f.mutate_catalog(catalog, [("type", rng.randrange(9), rng.randrange(99),
                                              rng.choice(f.TYPES))])
    opts = dict(opts, source_tz=rng.choice(f.ZONES),
                order=rng.choice(["input", "commit"]))
    if rng.random() < 0.2:
        opts["framing"] = rng.choice(f.FRAMINGS)
    with open(last, "w") as fh:
        fh.write(repr((out, i, catalog, opts)))
    for src in (out, b"".join(out)):
        cdcfast.decode_tables(src, format="lldf", catalog=catalog, **opts)
        cdcfast.headers(src, format="lldf", catalog=catalog, **opts)
    for fr in f.FRAMINGS:
        _lldf_frame.record_starts(b"".join(out), fr, rng.choice([1, 100, 5000]))
os.remove(last)
"""


@pytest.mark.skipif(CI, reason="a larger random corpus: run locally")
def test_native_survives_a_larger_corpus(tmp_path):
    """Native only, many inputs, in a child process: a segfault names its input."""
    survive_corpus(CHILD, tmp_path, "250", "(messages, variant, catalog, options)")
