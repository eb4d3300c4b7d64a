"""Differential fuzzing of the `olr` kernel: mutated OpenLogReplicator messages (bytes changed,
cut, spans doubled, JSON-ish tokens put in — structure, huge numbers, deep nesting, invalid
UTF-8, \\u escapes and lone surrogates —, message fields and payload values swapped for odd
ones, keys given twice, messages dropped, doubled, split, joined or made tombstones) decode
natively exactly as the reference decodes them — values, `_error` texts, `_corrupt_record`
bytes, statistics, FAILFAST errors — and never crash the process.

Inputs start from generated streams in every writer variant (`cdcfast.encode.olr.generate`:
scn/scns, tm/tms/iso/zone, hex/dec/xidn xids, object and array images, `schema.columns`,
full images, the full message format, epoch units, checkpoints) and from the real output in
../shared/peer-data/olr (when it is there).

1. `test_native_survives_a_larger_corpus`: many mutated inputs through the native decoder
   only, in a child process (a segfault names its input): every mode, as bytes, a message list
   and a pyarrow array, with and without the catalog, decode_tables, headers, decode(table=…),
   read_batches / read_tables in batches of 1–5 rows (stops inside a message's payload);
   every result passes `validate(full=True)`; nothing escapes but a FAILFAST DecodeError and
   the ValueErrors the API documents. ``CDCFAST_FUZZ_CORPUS`` sets the count (default 200).
2. `test_mutated_streams_native_equals_reference`: a sample of such inputs, native against
   reference in the main process (decode_tables, headers, read_batches of 3 rows, every mode).
3. `test_every_cut_of_a_message`, `test_batches_and_modes_agree`, `test_edge_sources`: cuts
   of one message, a longer stream across batches, degenerate sources.
4. Hand-written regressions (`REGRESSIONS`): minimal inputs of disagreements found here.

``CDCFAST_FUZZ_SCALE=K`` multiplies the differential sample.
"""
from __future__ import annotations

import os
import random

import pyarrow as pa
import pytest

import cdcfast
import cdcfast.reference
from cdcfast.encode import generate
from conftest import SHARED, shared_path, survive_corpus
from jsonfuzz import MODES, Known, Mutator, as_array, compare, show, stream

FMT = "olr"
SCALE = float(os.environ.get("CDCFAST_FUZZ_SCALE", "1"))
CI = os.environ.get("CI", "").lower() == "true"
# the real output in ../shared adds bases when it is there (test_peer_bases_are_here says
# when it is not)
PEER = SHARED / "peer-data" / "olr"
PEER_CASES = sorted(p.name for p in PEER.iterdir() if (p / "output.json").is_file()) \
    if PEER.is_dir() else []

# generate() options of the base streams: every writer variant at least once
VARIANTS = [
    dict(),
    dict(scn="scn", tm="tm", xid="hex", images="object", columns=True, compact=False,
         epoch_unit="ms"),
    dict(scn="scns", tm="iso", xid="xidn", images="array", full=True),
    dict(tm="zone", xid="dec", checkpoints=True, epoch_unit="ns"),
    dict(images="array", columns=True, epoch_unit="us", compact=False, first_only=False),
    dict(scn="scn", tm="tms", xid="hex", full=True, columns=True, checkpoints=True),
    dict(tm="iso", images="array", compact=True, epoch_unit="s"),
]

OPS = ['"begin"', '"commit"', '"c"', '"u"', '"d"', '"ddl"', '"chkpt"', '"x"', '"C"', '""',
       '"checkpoint"', "1", "null"]
SCNS = ['"0xZZ"', '"0x"', '"0x00000000000000001"', '"0xffffffffffffffff"',
        '"0x7fffffffffffffff"', '"0X1f"', '"12"', '"-5"', "-5", "18446744073709551615",
        "9223372036854775808", "3762397", '"3762397"', "1.5", "1e3"]
TIMES = ['"2024-01-01T00:00:00Z"', '"2024-01-01T00:00:00.123456789+05:30"', '"1700000000"',
         '"1700000000,+02:00"', '"2024-02-30T00:00:00,+00:00"', '"1700000000000000000000"',
         "1700000000", "1700000000000", "1700000000000000", "1700000000000000000",
         "-62135596801", "253402300800", "1.5", '"abc"', '",+00:00"', '"T"']
XIDS = ['"0x0009.003.0000568e"', '"0x0009.003"', '"1.2.3"', '"65536.1.1"', '"1.65536.1"',
        '"1.1.4294967296"', '"0x1.2.3.4"', '"0x.."', '"a.b.c"', '"-1.2.3"', "12",
        "18446744073709551615", "18446744073709551616", '"18446744073709551615"', "-1"]
IMAGES = ['[{"ID":1},{"ID":2}]', "[{}]", '[{"A":1,"B":2}]', "[1]", "[]", '{"ID":null}',
          '{"ID":1,"ID":2}', '{"ID":"x"}', '{"ID":1e400}', '{"ID":-1}', '{"NEW_COL":1}',
          '[{"ID":1},null]', '{"ID":99999999999999999999999999999999999999999}',
          '{"CREATED_TS":"9999-12-31T23:59:59.9999999Z","ORDER_DATE":-99999999999999}',
          '{"AMOUNT":"NaN","NAME":123,"STATUS":true}', '"x"', "5"]
COLUMNS = ['[{"name":"ID","type":"number","precision":5,"scale":9}]', '[{"name":5}]', '"x"',
           '[{"name":"ID","type":"varchar2","length":-1}]', "[1]", "[]",
           '[{"name":"ID","type":"number"},{"name":"ID","type":"date"}]',
           '[{"name":"ID","type":"binary_float"},{"name":"X","type":"xmltype"}]',
           '[{"name":"ID","type":"number","precision":39,"scale":0}]',
           '[{"name":"NAME","type":"raw","length":4},{"name":"ID","type":"boolean"}]',
           '[{"name":"ID","type":"timestamp with time zone"}]']
SCHEMAS = ['{"table":"T"}', '{"owner":"OLR_TEST"}', '{"owner":5,"table":"TABLE_1"}',
           '{"owner":"","table":"TABLE_1"}', '{"owner":"olr_test","table":"table_1"}',
           '{"table":"OBJ_123"}', '{"owner":"OLR_TEST","table":""}', '{"table":7}', "null",
           '"OLR_TEST"', '{"owner":"OLR_TEST","table":"TABLE_1","obj":"x"}']
KEYS = {
    "op": OPS, "scn": SCNS, "scns": SCNS, "c_scn": SCNS, "c_idx": SCNS, "tm": TIMES,
    "tms": TIMES, "xid": XIDS, "xidn": XIDS, "db": ['"DB"', "5", "null", '"\\ud800"'],
    "num": ['"7"', "-1", "1.5", "18446744073709551616", '"x"'],
    "rid": ['"AAAVS+AAMAAAACGAAA"', "5", '"\\udc00"'],
    "payload": ["[]", "null", "{}", "[1]", '[{"op":"c"}]', '[{"op":"begin"},{"op":"commit"}]',
                '"x"', "[[]]"],
    "schema": SCHEMAS, "owner": ['"OLR_TEST"', '""', "5", "null"],
    "table": ['"TABLE_1"', '"TABLE_2"', '""', "5", "null", '"OBJ_9"', '"NOPE"'],
    "obj": ['"x"', "-1", "1e400"], "columns": COLUMNS, "after": IMAGES, "before": IMAGES,
    "redo": ["true", "false", "1", "0", '"1"', '"true"', "2", '"x"'],
    "seq": ["-1", '"x"', "18446744073709551616"], "offset": ["-1", '"x"', "1.5"],
    "sql": ['"create table x"', "5"], "ddl": ['"alter table"', "5"],
    "ID": ["1", '"1"', "null", "1e400", '"x"', "-0", "12345678901"],
    "NAME": ['"x"', "5", "null", '"\\ud800"', '"' + "y" * 100 + '"'],
    "AMOUNT": ["1.005", "-0", '"12.5"', "1e-400", "123456789012.34"],
    "ORDER_DATE": ['"2024-02-30T00:00:00"', "-1", '"1700000000"', "1e20", '"x"'],
    "CREATED_TS": ['"2024-01-01T00:00:00.1234567891Z"', "9223372036854775807", '"-1"'],
    "precision": ["39", "-1", '"5"', "null"], "scale": ["-1", "40", '"x"'],
    "type": ['"number"', '"date"', '"blob"', '"bogus"', "5", "null"],
    "length": ["-1", "0", '"x"', "1e9"], "nullable": ["false", "true", '"no"', "0"],
    "name": ['"ID"', '"NAME"', "5", '""', "null"],
}
PAIRS = ['"op":"c"', '"op":"u"', '"op":"x"', '"after":{}', '"after":{"ID":2}', '"before":[]',
         '"payload":[]', '"payload":[{"op":"c"}]', '"xid":"1.2.3"', '"xidn":5', '"scn":1',
         '"scns":"0x1"', '"tm":1', '"tms":"1"', '"c_scn":1', '"c_idx":1', '"schema":{}',
         '"schema":{"owner":"OLR_TEST","table":"TABLE_1"}', '"table":"TABLE_2"', '"ID":1',
         '"ID":null', '"columns":[]', '"redo":true', '"num":1', '"rid":"x"']
MUTATOR = Mutator(KEYS, PAIRS)


def _peer_catalog(case):
    """The peer case's catalog from its CREATE TABLE (tests/test_olr_peer.py), or None."""
    try:
        from test_olr_peer import catalog_of
        return catalog_of(case)
    except Exception:           # noqa: BLE001 - without it the case runs without a catalog
        return None


def corpus(i: int):
    """Base input i -> (messages, catalog, decoder options, a table to ask for)."""
    if i < len(VARIANTS):
        opts = VARIANTS[i]
        rng = random.Random(i)
        msgs, cat = generate(FMT, rng.randrange(4, 14), table_width=rng.randrange(2, 10),
                             seed=i, tables=1 + i % 3, messages=True, **opts)
        unit = opts.get("epoch_unit", "s")
        return msgs, cat, {"epoch_unit": unit if i % 2 else "auto"}, cat.tables[0].name
    if i - len(VARIANTS) >= len(PEER_CASES):
        return corpus(i % len(VARIANTS))
    case = PEER_CASES[i - len(VARIANTS)]
    text = (PEER / case / "output.json").read_bytes()
    msgs = [m for m in text.split(b"\n") if m.strip()]
    cat = _peer_catalog(case)
    table = cat.tables[0].name if cat is not None and len(cat) else None
    return msgs, cat, {}, table


# the peer files' slots among the bases, fixed: a seed that draws a generated base draws the
# same input with or without ../shared (without it, a peer slot takes a generated base)
PEER_SLOTS = 13
BASES = len(VARIANTS) + PEER_SLOTS


def test_peer_bases_are_here():
    """The peer files are among the bases: a skip without ../shared, a failure in CI."""
    shared_path("peer-data", "olr")
    assert len(PEER_CASES) == PEER_SLOTS


def mutated(seed: int):
    """(base index, mutated messages, catalog, options, table) for a seed."""
    rng = random.Random(seed)
    i = rng.randrange(BASES)
    msgs, cat, opts, table = corpus(i)
    if len(msgs) > 12:
        k = rng.randrange(len(msgs) - 8)
        msgs = msgs[k:k + rng.randint(4, 12)]
    return i, MUTATOR.messages(msgs, rng, rate=rng.choice([0.2, 0.4, 0.8])), cat, opts, table


# -- known disagreements --------------------------------------------------------------------------
# None stand. Should one be found, it becomes a regression case below (xfail strict while it
# stands) and a rule here lets the differential sample step around it so that it keeps finding
# new ones (jsonfuzz.Known: an "error" rule matches every differing `_error`, an "input" rule the
# input's bytes, a "raise" rule an exception of either decoder); when it is fixed its regression
# XPASSes: drop the rule then.
KNOWN = []


def doc(text: str) -> bytes:
    return text.encode()


# (name, source, catalog, decoder options, table, reason it still fails or None)
REGRESSIONS = [
    ("top_level_scalar_run_on", [b"1a", b"00", b"1e", b"0.", b"null{\"payload\":[]}", b"true1"],
     None, {}, None,
     None),
    ("carry_forward_across_chunks",
     pa.chunked_array([pa.array([doc('{"scn":5,"tm":1700000000,"xid":"1.2.3",'
                                     '"payload":[{"op":"begin"}]}')]),
                       pa.array([doc('{"xid":"1.2.3","payload":[{"op":"c","schema":'
                                     '{"owner":"A","table":"T"},"after":{"X":1}}]}')])]),
     None, {}, "A.T",
     None),     # found here (native forgot the carried scn/tm at a chunk boundary); fixed
    ("ns_epoch_beyond_int64",
     doc('{"tm":18446744073709551615,"payload":[{"op":"begin"}]}\n'
         '{"tm":9223372036854775808,"payload":[{"op":"c","schema":{"owner":"A","table":"T",'
         '"columns":[{"name":"D","type":"date"}]},"after":{"D":-9223372036854775809}}]}'),
     None, {}, "A.T",
     None),
    ("xid_lone_surrogate", doc('{"xid":"\\ud800","payload":[{"op":"begin"}]}'), None, {}, None,
     None),
    ("array_image_duplicate_key",
     doc('{"payload":[{"op":"c","schema":{"owner":"A","table":"T"},"after":[{"X":1,"X":2}]}]}'),
     None, {}, "A.T",
     None),
    ("duplicate_column_after_bad_value",
     doc('{"payload":[{"op":"c","schema":{"owner":"A","table":"T"},"after":{"ID":"a","ID":7}}]}'),
     {"tables": [{"schema": "A", "table": "T", "columns": [
         {"name": "ID", "type": "NUMBER(10)", "nullable": False}]}]}, {}, "A.T",
     None),
    ("lone_surrogate_image_key",
     doc('{"payload":[{"op":"c","schema":{"table":"T"},"after":{"\\udfff":1}}]}'),
     None, {}, "T",
     None),
    ("lone_surrogate_columns_name",
     doc('{"payload":[{"op":"c","schema":{"table":"T","columns":[{"name":"\\ud800",'
         '"type":"number"}]},"after":{"A":1}}]}'),
     None, {}, "T",
     None),
    ("lone_surrogate_table_name",
     [doc('{"payload":[{"op":"c","schema":{"table":"\\udfff"},"after":{"A":1}}]}'),
      doc('{"payload":[{"op":"c","schema":{"owner":"\\ud800","table":"T"},"after":{"A":1}}]}'),
      doc('{"payload":[{"op":"begin","schema":{"table":"\\udfff"}}]}')],
     None, {}, None,
     None),
]
STILL_FAILING = {name for name, *_, why in REGRESSIONS if why}


@pytest.mark.parametrize("case", [
    pytest.param(c, id=c[0], marks=pytest.mark.xfail(strict=True, reason=c[5])) if c[5]
    else pytest.param(c, id=c[0]) for c in REGRESSIONS])
def test_regression(case):
    """A disagreement the fuzzing found, as a minimal input: native == reference, every
    mode, and PERMISSIVE raises nothing."""
    name, source, catalog, options, table, _ = case
    diffs = compare(FMT, source, catalog, options, table)
    assert not diffs, "\n".join(diffs) + f"\ninput: {show(source)}"


# -- the differential sample --------------------------------------------------------------------

def _variants(seed: int):
    """The sources of one mutated input, as compared: a stream, the list, an array."""
    i, msgs, cat, opts, table = mutated(seed)
    rng = random.Random(seed)
    return i, cat, opts, table, (("bytes", stream(msgs)), ("list", msgs),
                                 ("array", as_array(msgs, rng)))


@pytest.mark.parametrize("seed", range(int(20 * SCALE) or 1))
def test_mutated_streams_native_equals_reference(seed):
    """2.: a sample of mutated inputs, native against reference (jsonfuzz.compare): every
    mode as a stream with and without the catalog, PERMISSIVE and FAILFAST as a list and as
    an array."""
    failures, known, compared = [], [], 0
    for k in range(8):
        s = seed * 1000 + k
        i, cat, opts, table, sources = _variants(s)
        rng = random.Random(s)
        for what, source in sources:
            for c in (cat, None) if what == "bytes" else (cat if rng.random() < 0.5 else None,):
                try:
                    diffs = compare(FMT, source, c, opts, table, known=KNOWN,
                                    modes=MODES if what == "bytes" else ("PERMISSIVE",
                                                                         "FAILFAST"))
                except Known as e:
                    known.append(str(e))
                    continue
                compared += 1
                if diffs:
                    failures.append(f"seed {s} (base {i}, {what}, catalog {c is not None}, "
                                    f"options {opts}):\n" + "\n".join(diffs)
                                    + f"\ninput: {show(source)}")
    assert not failures, "\n\n".join(failures[:3])
    assert compared >= len(known), ("most inputs meet a known disagreement", known)


def test_every_cut_of_a_message():
    msgs, cat = generate(FMT, 3, table_width=8, seed=2, messages=True, columns=True,
                         images="array")
    doc = max(msgs, key=len)
    for i in range(0, len(doc), max(1, len(doc) // 250)):
        src = [doc[:i], doc]
        for c in (cat, None):
            a = cdcfast.decode_tables(src, format=FMT, catalog=c)
            b = cdcfast.reference.decode_tables(src, format=FMT, catalog=c)
            assert a.keys() == b.keys(), (i, doc[:i])
            for k in a:
                assert a[k].equals(b[k]), (i, doc[:i], k)


def test_batches_and_modes_agree():
    """A longer stream (about 300 records, two tables), lightly mutated: read_batches in
    batches of 17 and of 1, decode_tables, headers, every mode."""
    data, cat = generate(FMT, 300, seed=9, tables=2, table_width=6, messages=True,
                         checkpoints=True)
    rng = random.Random(1)
    msgs = MUTATOR.messages(data, rng, rate=0.05)
    for bs in (17, 1):
        diffs = compare(FMT, stream(msgs), cat, {}, "OLR_TEST.TABLE_1", batch_size=bs)
        assert not diffs, "\n".join(diffs)


@pytest.mark.parametrize("source", [
    b"", b"\n", b"null", b"{}", b"[]", b'{"payload":[]}', b'{"payload":null}', b'{"payload":[1]}',
    b'{"payload":[{}]}', b'{"payload":[{"op":"c"}]}', b'{"payload":[{"op":"c","schema":{}}]}',
    b'{"payload":[{"op":"c","schema":{"table":"T"},"after":{"A":1}}]}', b"\xff", b'{"a":' * 600,
    b'{"payload":[' + b"[" * 600, [None], [], [b""], [None, b"null", None], [b"{", b"}"],
])
def test_edge_sources(source):
    _, cat = generate(FMT, 2, table_width=3, seed=0)
    for c in (cat, None):
        diffs = compare(FMT, source, c, {}, "OLR_TEST.TABLE_1")
        assert not diffs, "\n".join(diffs)


# -- a larger corpus in a child process ---------------------------------------------------------

CHILD = r"""
import os, random, sys
sys.path.insert(0, sys.argv[1])
import test_olr_fuzz as f
import jsonfuzz
rng = random.Random(int(sys.argv[3]))
last = sys.argv[2]
for n in range(int(sys.argv[4])):
    s = rng.randrange(1 << 40)
    i, msgs, cat, opts, table = f.mutated(s)
    with open(last, "w") as fh:
        fh.write(repr((s, i, msgs, opts, table)))
    jsonfuzz.survive(f.FMT, msgs, cat, opts, table, random.Random(s), f.KNOWN)
os.remove(last)
"""


@pytest.mark.skipif(CI, reason="a larger random corpus: run locally")
def test_native_survives_a_larger_corpus(tmp_path):
    """Native only, many inputs, in a child process: a segfault names its input (the
    recorded tuple is (seed, base, messages, options, table); `mutated(seed)` rebuilds it)."""
    survive_corpus(CHILD, tmp_path, "200", "(seed, base, messages, options, table)")
