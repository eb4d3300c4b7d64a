"""Fuzzing `ibm-delimited` (SPEC §4): random bytes, and mutations of valid generated messages
(byte flips, insertions, deletions, truncation, duplicated delimiters and quotes, swapped-in
invalid-column identifiers), decoded by the native and the reference decoder, with and without a
catalog, as one stream and as a list of messages (with tombstones). For every input:

- nothing but a ``DecodeError`` / ``ValueError`` ever escapes, and PERMISSIVE never raises;
- native and reference give equal tables (``decode_tables``, ``decode(table=…)``, ``headers``)
  and equal ``last_stats``;
- every ``_error`` reads ``<field>: <reason> (message M, byte B)``;
- FAILFAST raises ``DecodeError`` (message_index, byte_offset and field set, text = the first
  PERMISSIVE error in input order) exactly when PERMISSIVE has an error row;
- DROPMALFORMED gives exactly the PERMISSIVE rows without ``_error``.

Budget: the ``ci`` profile (``CI=true``) runs 100 derandomized examples per test and keeps this
file well under a minute; elsewhere the ``dev`` profile runs more, randomly.
``CDCFAST_FUZZ_EXAMPLES=N`` overrides both. The last test (not in CI, ~10 s) feeds more mutated
inputs (``CDCFAST_FUZZ_CORPUS``, default 600) to the native decoder in a child process, so that a
crash is reported with its input instead of taking pytest down.
"""
from __future__ import annotations

import functools
import os
import re

import pyarrow as pa
import pyarrow.compute as pc
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

import cdcfast
from conftest import survive_corpus
from cdcfast import reference
from cdcfast.codepages import encode_text
from cdcfast.encode import generate

FMT = "ibm-delimited"
CI = os.environ.get("CI", "").lower() == "true"
_N = os.environ.get("CDCFAST_FUZZ_EXAMPLES")
settings.register_profile(
    "ibm-fuzz-ci", max_examples=int(_N or 100), deadline=None, derandomize=True, database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
settings.register_profile(
    "ibm-fuzz-dev", max_examples=int(_N or 250), deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
FUZZ = settings.get_profile("ibm-fuzz-ci" if CI else "ibm-fuzz-dev")

ERROR_RE = re.compile(r"^[^:]+: .+ \(message \d+, byte \d+\)$")
ERROR_PARTS = re.compile(r"^(?P<field>[^:]+): (?P<reason>.+) \(message (?P<msg>\d+), "
                         r"byte (?P<byte>\d+)\)$", re.S)
APIS = (("native", cdcfast), ("reference", reference))


# -- the corpus: generated messages in several dialects ---------------------------------------

# (generator options, decoder options): every option the decoder knows a generator can write
VARIANTS = [
    ({"table_width": 20, "seed": 11}, {}),
    ({"table_width": 6, "tables": 2, "seed": 12}, {}),
    ({"table_width": 20, "seed": 13, "encoding": "cp037"}, {"encoding": "cp037"}),
    ({"table_width": 20, "seed": 14, "column_delimiter": ";", "decimal_char": ","},
     {"column_delimiter": ";", "decimal_char": ","}),
    ({"table_width": 9, "seed": 15, "trailing_delimiter": True}, {}),
    ({"table_width": 20, "seed": 16, "encoding": "cp1140"}, {"encoding": "cp1140"}),
    ({"table_width": 12, "seed": 17, "string_delimiter": "'", "record_delimiter": "|"},
     {"string_delimiter": "'", "record_delimiter": "|"}),
]


@functools.lru_cache(maxsize=None)
def corpus(i):
    """(messages, catalog, decoder options, (cd, rd, sd) bytes, encoding) of variant i."""
    gen, opts = VARIANTS[i]
    msgs, cat = generate(FMT, rows=12, messages=True, records_per_message=(1, 3), **gen)
    enc = opts.get("encoding", "utf-8")
    delims = tuple(encode_text(opts.get(k, d), enc) for k, d in
                   (("column_delimiter", ","), ("record_delimiter", "\n"),
                    ("string_delimiter", '"')))
    return msgs, cat, opts, delims, enc


# Text that is likely to mean something to the splitter or a converter.
TOKENS = [",", '"', "\n", '""', ",,", '",', ',"', ".", ":", "-", " ", "T", "0", "9", "E", "e",
          "+", "24.00.00", "NaN", "Infinity", "REPL", "DLET", "ISRT", "UPSR", "FF", "G",
          "2024366", "2023366", "9999-12-31-24.00.00", "0001-01-01", "99999999999999999999",
          "é", "€", "中"]
IDENTIFIERS = ["IBM-INVALID-COLUMN-0002-A-HEX", "IBM-INVALID-COLUMN-002A-NULL",
               "IBM-INVALID-COLUMN-0003-B-HEX", "IBM-INVALID-COLUMN-1B-NULL",
               "IBM-INVALID-COLUMN-12345-A-HEX", "IBM-INVALID-COLUMN-"]


def _encode(text, enc):
    try:
        return encode_text(text, enc)
    except (UnicodeError, ValueError):
        return b"?"


def mutate(msgs, ops, delims, enc):
    """Apply mutation ops to a list of messages (bytes); returns a new list."""
    msgs = [bytearray(m) for m in msgs]
    cd, rd, sd = delims
    for op in ops:
        kind, which, at = op[0], op[1], op[2]
        m = msgs[which % len(msgs)]
        n = len(m)
        if kind == "flip" and n:
            m[at % n] ^= op[3]
        elif kind == "insert":
            tok = op[3] if isinstance(op[3], bytes) else _encode(op[3], enc)
            if op[3] in (",", "\n", '"'):           # the dialect's own delimiters
                tok = {",": cd, "\n": rd, '"': sd}[op[3]]
            m[at % (n + 1):at % (n + 1)] = tok
        elif kind == "delete" and n:
            i = at % n
            del m[i:i + op[3]]
        elif kind == "truncate":
            del m[at % (n + 1):]
        elif kind == "dup":                         # double a delimiter or quote
            spots = [i for i, b in enumerate(m) if bytes([b]) in (cd, rd, sd)]
            if spots:
                i = spots[at % len(spots)]
                m[i:i] = m[i:i + 1]
        elif kind == "ident":                       # an invalid-column identifier
            ibm = sd + _encode("IBM", enc) + sd
            spots = [i for i in range(n) if m.startswith(ibm, i)]
            if spots:
                i = spots[at % len(spots)]
                m[i:i + len(ibm)] = sd + _encode(op[3], enc) + sd
    return [bytes(m) for m in msgs]


@functools.lru_cache(maxsize=None)
def hex_encodings():
    return (None, "cp037", "utf-8")


# -- strategies ----------------------------------------------------------------------------------

_pos = st.integers(0, 1 << 16)
MUTATION = st.one_of(
    st.tuples(st.just("flip"), _pos, _pos, st.integers(1, 255)),
    st.tuples(st.just("insert"), _pos, _pos,
              st.one_of(st.sampled_from(TOKENS), st.binary(min_size=1, max_size=3))),
    st.tuples(st.just("delete"), _pos, _pos, st.integers(1, 12)),
    st.tuples(st.just("truncate"), _pos, _pos),
    st.tuples(st.just("dup"), _pos, _pos),
    st.tuples(st.just("ident"), _pos, _pos, st.sampled_from(IDENTIFIERS)),
)


@st.composite
def mutated_inputs(draw):
    """(messages with None tombstones, catalog, decoder options) from a mutated corpus slice."""
    i = draw(st.integers(0, len(VARIANTS) - 1))
    msgs, cat, opts, delims, enc = corpus(i)
    start = draw(st.integers(0, len(msgs) - 1))
    count = draw(st.integers(1, 4))
    chosen = msgs[start:start + count]
    ops = draw(st.lists(MUTATION, min_size=0, max_size=4))
    out = mutate(chosen, ops, delims, enc)
    tomb = draw(st.lists(st.integers(0, len(out)), max_size=2))
    for t in sorted(tomb, reverse=True):
        out.insert(t, None)
    opts = dict(opts)
    opts["source_tz"] = draw(st.sampled_from(["UTC", "America/New_York"]))
    hx = draw(st.sampled_from(hex_encodings()))
    if hx is not None:
        opts["hex_encoding"] = hx
    return out, cat, opts


# Fields that look like the header's, so random records get past the splitter now and then.
SOUP = [b"10", b'"IBM"', b'"IBM-INVALID-COLUMN-0002-A-HEX"', b'"IBM-INVALID-COLUMN-3B-NULL"',
        b'"2006030"', b'"182318000005"', b'"S"', b'"T"', b'"ISRT"', b'"REPL"', b'"DLET"',
        b'"0000:0271"', b'"2006-06-30-18.00.52"', b'"P"', b"0000", b"", b"", b'""', b"1",
        b"-1.5E3", b'"x""y"', b'"a,b"', b'"a\nb"', b'"C1C2"', b"\xff", b'"', b"\n", b"\n\n",
        b"abc", b"24.00.00"]
SOUP_CATALOG = {"tables": [{"schema": "S", "table": "T", "columns": [
    {"name": "A", "type": "INTEGER"}, {"name": "B", "type": "VARCHAR(8)", "nullable": False},
    {"name": "C", "type": "DECIMAL(5,2)"}, {"name": "D", "type": "CLOB"},
    {"name": "E", "type": "CHAR(2)"}]}]}


def soup(pick, count):
    """One message of header-like fields: ``pick(list)`` chooses, ``count`` fields."""
    return b",".join(pick(SOUP) for _ in range(count)) + pick([b"", b"\n", b",\n"])


@st.composite
def random_inputs(draw):
    """(messages, catalog or None, options) of random bytes or random header-like soup."""
    pick = lambda xs: draw(st.sampled_from(xs))     # noqa: E731
    parts = []
    for _ in range(draw(st.integers(1, 3))):
        if draw(st.booleans()):
            parts.append(draw(st.binary(max_size=300)))
        else:
            parts.append(soup(pick, draw(st.integers(0, 24))))
    if draw(st.booleans()):
        parts.insert(draw(st.integers(0, len(parts))), None)
    opts = {"source_tz": pick(["UTC", "America/New_York"])}
    hx = pick(hex_encodings())
    if hx is not None:
        opts["hex_encoding"] = hx
    return parts, pick([SOUP_CATALOG, None]), opts


# -- the checks -----------------------------------------------------------------------------------

def _run(fn):
    """('ok', value) or ('raised', exception); anything but DecodeError/ValueError fails."""
    try:
        return "ok", fn()
    except (cdcfast.DecodeError, ValueError) as e:
        return "raised", e
    except Exception as e:          # noqa: BLE001 - a crash of the decoder is the finding
        raise AssertionError(f"decoder crashed with {type(e).__name__}: {e}") from e


def _show_row(t, i):
    try:
        return t.slice(i, 1).to_pylist()[0]
    except Exception:               # noqa: BLE001 - e.g. a year-10000 timestamp
        return str(t.slice(i, 1))


def assert_same_table(a: pa.Table, b: pa.Table, what: str, source):
    if a.equals(b):
        return
    lines = [f"{what}: native and reference differ", f"input: {source!r}"]
    if a.schema != b.schema:
        lines += [f"native schema: {a.schema}", f"reference schema: {b.schema}"]
    elif a.num_rows != b.num_rows:
        lines.append(f"rows: native {a.num_rows}, reference {b.num_rows}")
    else:
        for i in range(a.num_rows):
            if not a.slice(i, 1).equals(b.slice(i, 1)):
                lines += [f"first differing row {i}:", f"  native:    {_show_row(a, i)}",
                          f"  reference: {_show_row(b, i)}"]
                break
    raise AssertionError("\n".join(lines))


def assert_same_outcome(a, b, what, source):
    if a[0] != b[0]:
        raise AssertionError(f"{what}: native {a[0]} {a[1]!r}, reference {b[0]} {b[1]!r}\n"
                             f"input: {source!r}")
    if a[0] == "raised":
        assert (type(a[1]), str(a[1])) == (type(b[1]), str(b[1])), (what, source, a, b)
    elif isinstance(a[1], dict):
        assert a[1].keys() == b[1].keys(), (what, source, a[1].keys(), b[1].keys())
        for k in a[1]:
            assert_same_table(a[1][k], b[1][k], f"{what}[{k!r}]", source)
    else:
        assert_same_table(a[1], b[1], what, source)


def errors_in_input_order(tables: dict):
    """Every PERMISSIVE error text, ordered as its record appears in the input."""
    found = []
    for t in tables.values():
        for err, seq in zip(t.column("_error").to_pylist(), t.column("seq").to_pylist()):
            if err is not None:
                m = ERROR_PARTS.match(err)
                found.append(((int(m.group("msg")), seq), err))
    return [e for _, e in sorted(found)]


def _nonempty(tables):
    return {k: t for k, t in tables.items() if t.num_rows}


def check(source, catalog, options):
    """Every promise of the module docstring, for one source."""
    decs = {n: m.Decoder(FMT, catalog=catalog, **options) for n, m in APIS}
    got = {n: _run(lambda d=d: d.decode_tables(source)) for n, d in decs.items()}
    assert got["native"][0] == "ok", got["native"][1]      # PERMISSIVE never raises
    assert got["reference"][0] == "ok", got["reference"][1]
    assert_same_outcome(got["native"], got["reference"], "decode_tables", source)
    assert decs["native"].last_stats == decs["reference"].last_stats, \
        (source, decs["native"].last_stats, decs["reference"].last_stats)
    perm = got["native"][1]
    for t in perm.values():
        for e in t.column("_error").drop_null().to_pylist():
            assert ERROR_RE.match(e) and "\n" not in e, (e, source)

    heads = {n: _run(lambda m=m: m.headers(source, format=FMT, catalog=catalog, **options))
             for n, m in APIS}
    assert heads["native"][0] == "ok", heads["native"][1]
    assert_same_outcome(heads["native"], heads["reference"], "headers", source)
    for e in heads["native"][1].column("_error").drop_null().to_pylist():
        assert ERROR_RE.match(e) and "\n" not in e, (e, source)

    # one table: the catalog's first, or (no catalog) the input's first. (Asked for in another
    # case, the decoders name it differently in field-count errors: a known disagreement,
    # tests/test_ibm_values.py::test_case_merged_table_in_count_errors.)
    if catalog is not None:
        want = catalog["tables"][0] if isinstance(catalog, dict) else catalog.tables[0].to_dict()
        name = f"{want['schema']}.{want['table']}"
    else:
        name = next((k for k in perm if k is not None), None)
    if name is not None:
        one = {n: _run(lambda m=m: m.decode(source, format=FMT, catalog=catalog, table=name,
                                            **options)) for n, m in APIS}
        assert_same_outcome(one["native"], one["reference"], f"decode(table={name!r})", source)

    # FAILFAST: raises exactly when PERMISSIVE has an error row, with the first one
    errors = errors_in_input_order(perm)
    for n, m in APIS:
        dec = m.Decoder(FMT, catalog=catalog, mode="FAILFAST", **options)
        res = _run(lambda: dec.decode_tables(source))
        if not errors:
            assert res[0] == "ok", (n, res[1], source)
            assert_same_outcome(res, got["native"], f"{n} FAILFAST vs PERMISSIVE", source)
            continue
        assert res[0] == "raised" and isinstance(res[1], cdcfast.DecodeError), (n, res, source)
        e = res[1]
        assert str(e) == errors[0], (n, str(e), errors[0], source)
        parts = ERROR_PARTS.match(errors[0])
        assert (e.field, e.message_index, e.byte_offset) == (
            parts.group("field"), int(parts.group("msg")), int(parts.group("byte"))), \
            (n, e.field, e.message_index, e.byte_offset, source)

    # DROPMALFORMED: the PERMISSIVE rows without _error
    expected = _nonempty({k: t.filter(pc.is_null(t.column("_error"))) for k, t in perm.items()})
    stats = {}
    for n, m in APIS:
        dec = m.Decoder(FMT, catalog=catalog, mode="DROPMALFORMED", **options)
        res = _run(lambda: dec.decode_tables(source))
        assert res[0] == "ok", (n, res[1], source)
        stats[n] = dec.last_stats
        got_drop = _nonempty(res[1])
        assert got_drop.keys() == expected.keys(), (n, got_drop.keys(), expected.keys(), source)
        for k, t in expected.items():
            assert_same_table(got_drop[k], t, f"{n} DROPMALFORMED[{k!r}] vs PERMISSIVE", source)
        assert dec.last_stats["dropped"] == len(errors), (n, dec.last_stats, source)
    assert stats["native"] == stats["reference"], (source, stats)


def check_all(messages, catalog, options):
    """The stream (the present messages back to back) and the list (tombstones included),
    each with the catalog and without one."""
    stream = b"".join(m for m in messages if m is not None)
    for cat in ((catalog, None) if catalog is not None else (None,)):
        check(stream, cat, options)
        check(messages, cat, options)


# -- the tests ----------------------------------------------------------------------------------

def test_native_kernel_is_in_use():
    """Without it both sides of every comparison below would be the reference."""
    assert cdcfast.native_available()


def test_error_text_is_one_line():
    """A quoted table name may hold the record delimiter; error texts escape it."""
    rec = (b'10,"IBM","2006030","182318000005","S","T\nX","ISRT","TX","0000",'
           b'"2006-06-30-18.00.52","P",0,')
    check_all([rec + b",1\n" + rec + b",,1,2\n"], None, {})


def test_corpus_decodes_cleanly():
    """Unmutated, every variant decodes without errors, equally on both decoders."""
    for i in range(len(VARIANTS)):
        msgs, cat, opts, _, _ = corpus(i)
        a = cdcfast.decode_tables(msgs, format=FMT, catalog=cat, **opts)
        b = reference.decode_tables(msgs, format=FMT, catalog=cat, **opts)
        assert a.keys() == b.keys() and None not in a
        for k in a:
            assert a[k].equals(b[k]) and a[k].column("_error").null_count == a[k].num_rows, \
                (VARIANTS[i], k)


@FUZZ
@given(mutated_inputs())
def test_mutated_messages(case):
    check_all(*case)


@FUZZ
@given(random_inputs())
def test_random_bytes(case):
    check_all(*case)


@pytest.mark.parametrize("source", [
    b"", b"\n", b"\n\n", b'"', b'""', b',', b'"\n', b"\xff\xfe", b'10,"IBM"',
    b',,,,,,,,,,,', b',,,,,,,,,,,\n,,,,,,,,,,,,,', b',,,,,,,,,,,,,,,,', [None], [], [b""],
    [None, b"\n", None], ['10,"a\nb"', '"'],
])
def test_edge_sources(source):
    cat = {"tables": [{"schema": "S", "table": "T", "columns": [
        {"name": "A", "type": "INTEGER", "nullable": False}]}]}
    if isinstance(source, list):
        source = [m.encode() if isinstance(m, str) else m for m in source]
    check_all(source if isinstance(source, list) else [source], cat, {})


# -- a larger corpus in a child process (not in CI) ----------------------------------------------

CHILD = r"""
import os, random, sys
sys.path.insert(0, sys.argv[1])
import test_ibm_fuzz as f
import cdcfast
rng = random.Random(int(sys.argv[3]))
last = sys.argv[2]
hex_choices = (None, "cp037", "utf-8", "cp1140")
for n in range(int(sys.argv[4])):
    i = rng.randrange(len(f.VARIANTS))
    msgs, cat, opts, delims, enc = f.corpus(i)
    if rng.random() < 0.3:
        msgs = [f.soup(rng.choice, rng.randint(0, 24)) for _ in range(4)]
        cat, opts, delims, enc = f.SOUP_CATALOG, {}, (b",", b"\n", b'"'), "utf-8"
        i = "soup"
    s = rng.randrange(len(msgs))
    ops = []
    for _ in range(rng.randint(0, 6)):
        k = rng.choice(["flip", "insert", "delete", "truncate", "dup", "ident"])
        a, b = rng.randrange(1 << 16), rng.randrange(1 << 16)
        extra = {"flip": (rng.randint(1, 255),), "insert": (rng.choice(f.TOKENS),),
                 "delete": (rng.randint(1, 12),), "ident": (rng.choice(f.IDENTIFIERS),)}
        ops.append((k, a, b) + extra.get(k, ()))
    out = f.mutate(msgs[s:s + rng.randint(1, 4)], ops, delims, enc)
    opts = dict(opts, hex_encoding=rng.choice(hex_choices),
                source_tz=rng.choice(["UTC", "America/New_York", "-03:30"]))
    with open(last, "w") as fh:
        fh.write(repr((out, i, opts)))
    for src in (out, b"".join(out)):        # modes differ only in the Python layer
        for c in (cat, None):
            cdcfast.decode_tables(src, format="ibm-delimited", catalog=c, **opts)
            cdcfast.headers(src, format="ibm-delimited", catalog=c, **opts)
os.remove(last)
"""


@pytest.mark.skipif(CI, reason="a larger random corpus: run locally")
def test_native_survives_a_larger_corpus(tmp_path):
    """Native only, many inputs, in a child process: a segfault names its input."""
    survive_corpus(CHILD, tmp_path, "600", "(messages, variant, options)")
