"""Differential fuzzing of the `qlik` kernel: mutated Qlik Replicate messages (bytes changed,
cut, spans doubled, JSON-ish tokens put in — structure, huge numbers, deep nesting, invalid
UTF-8, \\u escapes and lone surrogates —, headers, masks and values swapped for odd ones —
masks with non-hex digits, odd lengths, far too long —, keys such as `message`, `headers`,
`data`, `operation` given twice, metadata messages broken, messages dropped, doubled, split,
joined or made tombstones) decode natively exactly as the reference decodes them — values,
`_error` texts, `_corrupt_record` bytes, statistics, FAILFAST errors — and never crash the
process.

Inputs start from generated streams in every writer variant (`cdcfast.encode.qlik.generate`:
the Kafka envelope and the Pub/Sub form, with and without metadata messages, all strings or
typed JSON values, pretty-printed, with and without masks) and from the real message in
../shared/peer-data/qlik (when it is there).

1. `test_native_survives_a_larger_corpus`: many mutated inputs through the native decoder
   only, in a child process (a segfault names its input): every mode, as bytes, a message list
   and a pyarrow array, with and without the catalog, decode_tables, headers, decode(table=…),
   read_batches / read_tables in batches of 1–5 rows; every result passes
   `validate(full=True)`; nothing escapes but a FAILFAST DecodeError and the ValueErrors the
   API documents. ``CDCFAST_FUZZ_CORPUS`` sets the count (default 200).
2. `test_mutated_streams_native_equals_reference`: a sample of such inputs, native against
   reference in the main process (decode_tables, headers, read_batches of 3 rows, every mode).
3. `test_every_cut_of_a_message`, `test_masks`, `test_batches_and_modes_agree`,
   `test_edge_sources`: cuts of one message, masks of every odd shape, a longer stream across
   batches, degenerate sources.
4. Hand-written regressions (`REGRESSIONS`): minimal inputs of disagreements found here.

``CDCFAST_FUZZ_SCALE=K`` multiplies the differential sample.
"""
from __future__ import annotations

import json
import os
import random

import pytest

import cdcfast
import cdcfast.reference
from cdcfast import Catalog
from cdcfast.encode import generate
from conftest import SHARED, shared_path, survive_corpus
from jsonfuzz import MODES, Known, Mutator, as_array, compare, show, stream

FMT = "qlik"
SCALE = float(os.environ.get("CDCFAST_FUZZ_SCALE", "1"))
CI = os.environ.get("CI", "").lower() == "true"
# the real output in ../shared adds bases when it is there (test_peer_bases_are_here says
# when it is not)
PEER = SHARED / "peer-data" / "qlik"
PEER_FILES = sorted(PEER.glob("*.json")) if PEER.is_dir() else []

# generate() options of the base streams: every writer variant at least once
VARIANTS = [
    dict(),
    dict(form="pubsub"),
    dict(md=False, all_strings=False, masks=False),
    dict(form="pubsub", pretty=True, md=False),
    dict(pretty=True, all_strings=False),
    dict(form="pubsub", masks=False, all_strings=False),
    dict(md=False),
]

# The peer-data sample's 16 columns typed as tests/test_qlik_decode.py types them
ITEM = Catalog.from_dict({"tables": [{"schema": "SAPTM", "table": "ITEM", "key": ["item_no"],
                                      "columns": [
    {"name": "item_no", "type": "VARCHAR(18)", "nullable": False},
    {"name": "mfg_div_cd", "type": "CHAR(1)"}, {"name": "phys_loc_cd", "type": "CHAR(1)"},
    {"name": "plnr_cd", "type": "CHAR(1)"}, {"name": "inv_class_cd", "type": "CHAR(1)"},
    {"name": "use_um_cd", "type": "CHAR(2)"}, {"name": "byr_cd", "type": "CHAR(1)"},
    {"name": "item_desc", "type": "VARCHAR(40)"}, {"name": "itm_aut_ord_fct", "type": "SMALLINT"},
    {"name": "itm_ord_mod_cd", "type": "CHAR(1)"}, {"name": "itm_whs_ctl_cd", "type": "CHAR(1)"},
    {"name": "itm_aut_ord_cd", "type": "CHAR(1)"}, {"name": "gnr_pt_no_ind", "type": "CHAR(1)"},
    {"name": "div_adr_no", "type": "VARCHAR(4)"}, {"name": "ems_rel_cd", "type": "CHAR(1)"},
    {"name": "load_date_time", "type": "TIMESTAMP"}]}]})

MASKS = ['"ZZ"', '"0G"', '"F"', '"FFF"', '"00FFFF"', '""', '"' + "F" * 2000 + '"',
         '"' + "0" * 2000 + '1"', '"ff"', '"0x0F"', '" 0F"', '"0F "', '"\\u0030F"', '"FF\\u00e9"',
         '"\\ud800"', "12", "null", "true", "[]", '"00"', '"' + "A" * 33 + '"', '"8000000000"',
         '"-1"', '"+F"', '"F\\u0000"', '"0f0F"']
OPERATIONS = ['"INSERT"', '"UPDATE"', '"DELETE"', '"REFRESH"', '"insert"', '"BOGUS"', '""',
              "null", "5", '"INSERT "', '"\\u0049NSERT"']
STAMPS = ['"2023-03-21T21:34:19.511"', '"2023-03-21T21:34:19"', '"2023-02-30T00:00:00.000"',
          '"2023-03-21 21:34:19.511"', '"2023-03-21T21:34:19.5112345678"', '"x"', '""',
          '"9999-12-31T23:59:59.999"', '"0000-01-01T00:00:00.000"', "1679434459511", "null"]
DATA = ['{}', 'null', '[]', '"x"', '{"ID":"1"}', '{"ID":"1","ID":"2"}', '{"NEW_COL":"x"}',
        '{"ID":null}', '{"ID":{}}', '{"ID":[1]}', '{"ID":1e400}', '{"ID":"\\ud800"}',
        '{"ID":"99999999999999999999"}', '{"QTY":"70000","ID":"-1"}', '{"ITEM_NO":5}',
        '{"item_no":"AAL614","load_date_time":"2023-02-30 00:00:00"}', '{"\\u0049D":"7"}']
COLUMNS = ['{}', '{"ID":{}}', '{"ID":{"ordinal":1,"type":"INT4"},"ID":{"ordinal":2}}',
           '{"A":{"ordinal":"x","type":"NUMERIC","precision":40,"scale":50}}', "[]", "null",
           '{"A":5}', '{"B":{"ordinal":2,"type":"STRING"},"A":{"ordinal":1,"type":"BYTES"}}',
           '{"A":{"type":"BOGUS"}}', '{"ID":{"ordinal":1,"type":"REAL8"}}']
KEYS = {
    "magic": ['"atMSG"', '"x"', "null", "5"],
    "type": ['"DT"', '"MD"', '"XY"', '""', "null", "5", '"dt"', '"INT4"', '"NUMERIC"',
             '"STRING"', '"BYTES"', '"DATE"', '"TIME"', '"DATETIME"', '"BOOLEAN"', '"REAL4"',
             '"UINT8"', '"WSTRING"', '"CLOB"'],
    "headers": ["null", "{}", '"x"', "[]", '{"operation":"INSERT"}'],
    "messageSchemaId": ['"nope"', "null", "5", '""', '"\\ud800"', "{}"],
    "schemaId": ['"nope"', "null", "5", '""', "{}", "true"],
    "message": ["null", "{}", '"x"', "[]", '{"data":{}}'],
    "data": DATA, "beforeData": DATA,
    "operation": OPERATIONS,
    "changeSequence": ['"x"', "5", "null", '""', '"\\ud800"'],
    "timestamp": STAMPS,
    "streamPosition": ['"x"', "5", "null"],
    "transactionId": ['"x"', "5", "null", '""', "{}"],
    "changeMask": MASKS, "columnMask": MASKS,
    "transactionEventCounter": ['""', '"x"', "-1", "1e400", '"12"', "1.5",
                                "18446744073709551616", "null", "true"],
    "transactionLastEvent": ["true", "false", '"true"', '"1"', "1", '"x"', "null", "2"],
    "schema": ['"GEN"', '""', "5", "null", '"\\ud800"', '"gen"'],
    "table": ['"TABLE_1"', '"TABLE_2"', '""', "5", "null", '"nope"', '"table_1"'],
    "lineage": ["null", "{}", '"x"', '{"table":"TABLE_1"}', '{"schema":"GEN","table":5}'],
    "tableStructure": ["null", "{}", '"x"', '{"tableColumns":{}}'],
    "tableColumns": COLUMNS,
    "ordinal": ["1", "0", "-1", '"x"', "null", "99", "1.5"],
    "length": ["0", "-1", '"x"', "1e9"], "precision": ["0", "39", "-1", '"5"'],
    "scale": ["-1", "40", '"x"'], "primaryKeyPosition": ["1", "0", '"x"'],
    "ID": ['"1"', '"x"', "null", '"-0"', '"2147483648"', "1", "1.5", "true", "{}"],
    "QTY": ['"32768"', '"1e2"', '"1.0"', '""', "-1"],
    "ITEM_NO": ['""', "5", '"\\u0000"', '"' + "y" * 100 + '"'],
    "item_no": ['""', "null", "5"], "itm_aut_ord_fct": ['"x"', '"1.5"', '"99999"'],
    "load_date_time": ['"2023-03-21 14:34:21.1234567"', '"2023-03-21"', '"x"', '""'],
}
PAIRS = ['"message":{}', '"headers":{}', '"headers":{"operation":"DELETE"}', '"data":{}',
         '"data":{"ID":"9"}', '"beforeData":{}', '"operation":"UPDATE"', '"operation":"x"',
         '"changeMask":"FF"', '"columnMask":"00"', '"changeMask":"ZZ"',
         '"columnMask":"' + "F" * 300 + '"', '"type":"MD"', '"type":"DT"', '"magic":"atMSG"',
         '"schema":"GEN"', '"table":"TABLE_2"', '"messageSchemaId":"x"', '"schemaId":"x"',
         '"tableStructure":{"tableColumns":{"ID":{"ordinal":1,"type":"INT4"}}}',
         '"lineage":{"schema":"GEN","table":"TABLE_1"}', '"transactionEventCounter":7',
         '"transactionLastEvent":true', '"ID":"1"', '"timestamp":"2023-03-21T21:34:19.511"']
MUTATOR = Mutator(KEYS, PAIRS)


def corpus(i: int):
    """Base input i -> (messages, catalog, decoder options, a table to ask for)."""
    if i < len(VARIANTS):
        opts = VARIANTS[i]
        rng = random.Random(i)
        msgs, cat = generate(FMT, rng.randrange(3, 10), table_width=rng.randrange(2, 12),
                             seed=i, tables=1 + i % 2 if opts.get("md", True) or
                             opts.get("form") == "pubsub" else 1, messages=True, **opts)
        return msgs, cat, {}, cat.tables[0].name
    if i - len(VARIANTS) >= len(PEER_FILES):
        return corpus(i % len(VARIANTS))
    path = PEER_FILES[i - len(VARIANTS)]
    return [path.read_bytes()], ITEM, {}, "SAPTM.ITEM"


# the peer files' slots among the bases, fixed: a seed that draws a generated base draws the
# same input with or without ../shared (without it, a peer slot takes a generated base)
PEER_SLOTS = 1
BASES = len(VARIANTS) + PEER_SLOTS


def test_peer_bases_are_here():
    """The peer files are among the bases: a skip without ../shared, a failure in CI."""
    shared_path("peer-data", "qlik")
    assert len(PEER_FILES) == PEER_SLOTS


def mutated(seed: int):
    """(base index, mutated messages, catalog, options, table) for a seed."""
    rng = random.Random(seed)
    i = rng.randrange(BASES)
    msgs, cat, opts, table = corpus(i)
    if len(msgs) > 12:
        k = rng.randrange(len(msgs) - 8)
        msgs = msgs[k:k + rng.randint(4, 12)]
    if len(msgs) < 3 and rng.random() < 0.5:    # the one peer message: a few copies
        msgs = msgs * rng.randint(2, 4)
    return i, MUTATOR.messages(msgs, rng, rate=rng.choice([0.3, 0.5, 0.9])), cat, opts, table


# -- known disagreements --------------------------------------------------------------------------
# None stand. Should one be found, it becomes a regression case below (xfail strict while it
# stands) and a rule here lets the differential sample step around it so that it keeps finding
# new ones (jsonfuzz.Known: an "error" rule matches every differing `_error`, an "input" rule the
# input's bytes, a "raise" rule an exception of either decoder); when it is fixed its regression
# XPASSes: drop the rule then.
KNOWN = []


def doc(value) -> bytes:
    return json.dumps(value, separators=(",", ":")).encode() if not isinstance(value, str) \
        else value.encode()


# (name, source, catalog, decoder options, table, reason it still fails or None)
REGRESSIONS = [
    ("top_level_scalar_run_on", [b"1a", b"00", b"1e", b"0.", b"null{}", b"true1"],
     None, {}, None,
     None),
    ("duplicate_column_after_bad_value",
     doc('{"schema":"A","table":"T","headers":{"operation":"INSERT"},'
         '"data":{"ID":"a","ID":"7"}}'),
     {"tables": [{"schema": "A", "table": "T", "columns": [
         {"name": "ID", "type": "INTEGER", "nullable": False}]}]}, {}, "A.T",
     None),
    ("bad_metadata_in_a_message_list",
     [doc('{"type":"MD","message":{"lineage":5}}')], None, {}, None,
     None),
    ("read_batches_before_the_first_row",
     doc('{"lineage":{"schema":"S","table":"T"},"tableStructure":{"tableColumns":{"D":'
         '{"type":"INT4"}}}}\n{\n{\n{\n{"x":1}'),
     None, {}, "S.T",
     None),
    ("container_table_name",
     [doc('{"schema":"S","table":[],"headers":{"operation":"INSERT"},"data":{"A":"1"}}'),
      doc('{"type":"DT","messageSchemaId":{},"message":{"headers":{"operation":"INSERT"},'
          '"data":{"A":"1"}}}')],
     None, {}, None,
     None),
    ("header_lone_surrogate",
     [doc('{"schema":"S","table":"T","headers":{"operation":"INSERT",'
          '"transactionLastEvent":"\\ud800"},"data":{"A":"1"}}'),
      doc('{"schema":"S","table":"T","headers":{"operation":"INSERT",'
          '"transactionEventCounter":"\\ud800"},"data":{"A":"1"}}')],
     None, {}, None,
     None),
    ("lone_surrogate_data_key",
     doc('{"schema":"S","table":"T","headers":{"operation":"INSERT"},"data":{"\\udfff":"1"}}'),
     None, {}, "S.T",
     None),
    ("lone_surrogate_schema_or_table",
     [doc('{"schema":"\\ud800","table":"T","headers":{"operation":"INSERT"},"data":{"A":"1"}}'),
      doc('{"schema":"S","table":"\\ud800","headers":{"operation":"INSERT"},'
          '"data":{"A":"1"}}')],
     None, {}, None,
     None),
    ("lone_surrogate_metadata",
     [doc('{"magic":"atMSG","type":"MD","message":{"schemaId":"s","lineage":{"schema":"S",'
          '"table":"\\ud800"},"tableStructure":{"tableColumns":{"A":{"ordinal":1,'
          '"type":"STRING","length":5}}}}}'),
      doc('{"magic":"atMSG","type":"MD","message":{"schemaId":"s","lineage":{"schema":"S",'
          '"table":"T"},"tableStructure":{"tableColumns":{"\\ud800":{"ordinal":1,'
          '"type":"STRING","length":5}}}}}'),
      doc('{"magic":"atMSG","type":"DT","messageSchemaId":"s","message":{"data":{"A":"x"},'
          '"headers":{"operation":"INSERT"}}}')],
     None, {}, None,
     None),
    ("lone_surrogate_schema_id",
     [doc('{"magic":"atMSG","type":"DT","messageSchemaId":"\\ud800","message":{"data":'
          '{"A":"x"},"headers":{"operation":"INSERT"}}}'),
      doc('{"magic":"atMSG","type":"MD","message":{"schemaId":"\\ud800","lineage":{"schema":'
          '"S","table":"T"},"tableStructure":{"tableColumns":{"A":{"ordinal":1,'
          '"type":"STRING","length":5}}}}}'),
      doc('{"magic":"atMSG","type":"DT","messageSchemaId":"\\ud800","message":{"data":'
          '{"A":"x"},"headers":{"operation":"INSERT"}}}')],
     None, {}, None,
     None),
]


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
    msgs, cat = generate(FMT, 3, table_width=8, seed=2, messages=True)
    doc_ = max(msgs, key=len)
    for i in range(0, len(doc_), max(1, len(doc_) // 250)):
        src = [msgs[0], doc_[:i], doc_]
        for c in (cat, None):
            a = cdcfast.decode_tables(src, format=FMT, catalog=c)
            b = cdcfast.reference.decode_tables(src, format=FMT, catalog=c)
            assert a.keys() == b.keys(), (i, doc_[:i])
            for k in a:
                assert a[k].equals(b[k]), (i, doc_[:i], k)


@pytest.mark.parametrize("which", ["changeMask", "columnMask"])
def test_masks(which):
    """Every odd mask on every message of a short stream, with and without the catalog."""
    msgs, cat = generate(FMT, 4, table_width=9, seed=5, messages=True)
    key = f'"{which}":'.encode()
    for mask in MASKS + ['"' + "F" * n + '"' for n in (1, 3, 4, 5, 6)]:
        out = []
        for m in msgs:
            at = m.find(key)
            if at >= 0:
                a = at + len(key)
                m = m[:a] + mask.encode() + m[m.index(b",", a):]
            out.append(m)
        for c in (cat, None):
            diffs = compare(FMT, stream(out), c, {}, cat.tables[0].name,
                            modes=("PERMISSIVE", "FAILFAST"))
            assert not diffs, "\n".join(diffs) + f"\nmask {mask[:40]}"


def test_batches_and_modes_agree():
    """A longer stream (about 300 records, two tables), lightly mutated: read_batches in
    batches of 17 and of 1, decode_tables, headers, every mode."""
    data, cat = generate(FMT, 300, seed=9, tables=2, table_width=6, messages=True)
    rng = random.Random(1)
    msgs = MUTATOR.messages(data, rng, rate=0.05)
    for bs in (17, 1):
        diffs = compare(FMT, stream(msgs), cat, {}, "GEN.TABLE_1", batch_size=bs, known=KNOWN)
        assert not diffs, "\n".join(diffs)


@pytest.mark.parametrize("source", [
    b"", b"\n", b"null", b"{}", b"[]", b'{"message":null}', b'{"message":{}}', b'{"type":"MD"}',
    b'{"type":"MD","message":{}}', b'{"headers":{}}', b'{"data":{}}',
    b'{"schema":"S","table":"T","headers":{"operation":"INSERT"},"data":{"A":"1"}}', b"\xff",
    b'{"a":' * 600, b'{"message":{"data":' + b"[" * 600, [None], [], [b""],
    [None, b"null", None], [b"{", b"}"],
])
def test_edge_sources(source):
    _, cat = generate(FMT, 2, table_width=3, seed=0)
    for c in (cat, None):
        diffs = compare(FMT, source, c, {}, "GEN.TABLE_1")
        assert not diffs, "\n".join(diffs)


# -- a larger corpus in a child process ---------------------------------------------------------

CHILD = r"""
import os, random, sys
sys.path.insert(0, sys.argv[1])
import test_qlik_fuzz as f
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
