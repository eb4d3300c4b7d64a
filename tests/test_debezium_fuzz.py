"""Differential fuzzing of the `debezium` kernel: mutated documents (bytes changed, values
swapped for other JSON values, keys doubled, documents cut) decode natively exactly as the
reference decodes them — values, `_error` texts, `_corrupt_record` bytes and statistics — and
never crash the process."""
from __future__ import annotations

import json
import os
import random

import pytest

import cdcfast
import cdcfast.reference
from cdcfast.encode import generate

SCALE = float(os.environ.get("CDCFAST_FUZZ_SCALE", "1"))

VALUES = ['"abc"', '""', '"\\u00e9\\ud83d\\ude00"', '"\\ud800"', '"12"', '"-7"', '"1.5e3"',
          "0", "-0", "1", "12", "-1", "1.5", "1e400", "-1e-400", "123456789012345678901234567890",
          "9223372036854775807", "9223372036854775808", "true", "false", "null", "{}", "[]",
          '{"scale": 2, "value": "AQI="}', '{"scale": 2}', '[1, {"a": "b"}]', '"AQID"',
          '"AQ=="', '"A"', '"2023-11-30T12:34:56.5Z"', '"2023-02-30T00:00:00Z"', '"NaN"',
          '"Infinity"', '"00000027:00000758:0003"', '"0:zz"', '"BEGIN"', '"END"', '"c"',
          '"u"', '"d"', '"m"', '"x"', '"t"', '"r"']


def _mutate(doc: bytes, rng: random.Random) -> bytes:
    kind = rng.randrange(6)
    if kind == 0:                               # a byte changed
        i = rng.randrange(len(doc))
        return doc[:i] + bytes([rng.randrange(256)]) + doc[i + 1:]
    if kind == 1:                               # cut short
        return doc[:rng.randrange(len(doc))]
    if kind == 2:                               # a value swapped for another JSON value
        spots = [i for i in range(len(doc) - 1) if doc[i:i + 1] == b":"]
        if not spots:
            return doc
        i = rng.choice(spots) + 1
        j = i
        depth = 0
        instr = False
        while j < len(doc):
            c = doc[j:j + 1]
            if instr:
                if c == b"\\":
                    j += 1
                elif c == b'"':
                    instr = False
            elif c == b'"':
                instr = True
            elif c in b"{[":
                depth += 1
            elif c in b"}]":
                if depth == 0:
                    break
                depth -= 1
            elif c == b"," and depth == 0:
                break
            j += 1
        return doc[:i] + rng.choice(VALUES).encode() + doc[j:]
    if kind == 3:                               # a key given twice
        spots = [i for i in range(len(doc) - 1) if doc[i:i + 2] == b',"']
        if not spots:
            return doc
        i = rng.choice(spots)
        k = doc.index(b",", i + 1) if b"," in doc[i + 1:] else -1
        if k < 0:
            return doc
        return doc[:k] + doc[i:k] + doc[k:]
    if kind == 4:                               # a byte dropped
        i = rng.randrange(len(doc))
        return doc[:i] + doc[i + 1:]
    return doc.replace(b'"op":"u"', b'"op":"' + rng.choice(b"cudrtmx").to_bytes(1, "big")
                       + b'"', 1)


def _same(a, b):
    """Equal Arrow tables (compared as Arrow: a timestamp past year 9999 has no datetime)."""
    assert a.keys() == b.keys()
    for k in a:
        assert a[k].schema == b[k].schema, k
        if not a[k].equals(b[k]):
            for i in range(b[k].num_rows):
                x, y = a[k].slice(i, 1), b[k].slice(i, 1)
                assert x.equals(y), (k, i, x.to_pydict(), y.to_pydict())


@pytest.mark.parametrize("seed", range(int(6 * SCALE) or 1))
def test_mutated_streams_native_equals_reference(seed):
    rng = random.Random(seed)
    schemas = seed % 2 == 1
    data, cat = generate("debezium", 40, table_width=rng.randrange(3, 12), seed=seed,
                         tables=1 + seed % 3, schemas=schemas)
    docs = data.split(b"\n")
    for _ in range(12):
        out = [(_mutate(d, rng) if d and rng.random() < 0.3 else d) for d in docs]
        stream = b"\n".join(out)
        for catalog in (cat, None if schemas else cat):
            nd = cdcfast.Decoder("debezium", catalog=catalog)
            rd = cdcfast.reference.Decoder("debezium", catalog=catalog)
            try:
                want = rd.decode_tables(stream)
            except ValueError as e:
                with pytest.raises(ValueError, match="catalog"):
                    nd.decode_tables(stream)
                assert "catalog" in str(e)
                continue
            got = nd.decode_tables(stream)
            _same(got, want)
            assert nd.last_stats == rd.last_stats
            _same({"h": nd.headers(stream)}, {"h": rd.headers(stream)})
            msgs = [d for d in out if d]
            _same(nd.decode_tables(msgs), rd.decode_tables(msgs))


def test_every_cut_of_a_document():
    """A document cut anywhere is one unattributable row in both decoders: `_error` a
    truncated document at the cut's end, `_corrupt_record` the cut bytes (without trailing
    whitespace), nothing else set; the whole document after it still decodes. Cut at 0 it is
    an empty message, a tombstone: no row."""
    data, cat = generate("debezium", 3, table_width=8, seed=2, schemas=True)
    doc = data.split(b"\n")[1]
    whole = cdcfast.decode_tables([doc], format="debezium", catalog=cat)
    assert list(whole) == ["GEN.TABLE_1"] and whole["GEN.TABLE_1"].num_rows == 1
    for i in range(0, len(doc), max(1, len(doc) // 300)):
        msgs = [doc[:i], doc]
        a = cdcfast.decode_tables(msgs, format="debezium", catalog=cat)
        b = cdcfast.reference.decode_tables(msgs, format="debezium", catalog=cat)
        _same(a, b)
        for got in (a, b):
            assert got["GEN.TABLE_1"].drop_columns(["seq"]).equals(
                whole["GEN.TABLE_1"].drop_columns(["seq"])), i
            if i == 0:
                assert list(got) == ["GEN.TABLE_1"]
                continue
            cut = doc[:i].rstrip()
            row, = got[None].to_pylist()
            assert row.pop("_error") == ("invalid JSON: truncated document "
                                         f"(message 0, byte {len(cut)})"), i
            assert row.pop("_corrupt_record") == cut, i
            assert row.pop("seq") == 0
            assert set(row.values()) == {None}, (i, row)


def test_batches_and_modes_agree():
    data, cat = generate("debezium", 300, seed=9, tables=2)
    docs = data.split(b"\n")
    rng = random.Random(1)
    stream = b"\n".join(_mutate(d, rng) if d and rng.random() < 0.1 else d for d in docs)
    for mode in ("PERMISSIVE", "DROPMALFORMED", "FAILFAST"):
        nd = cdcfast.Decoder("debezium", catalog=cat, mode=mode)
        rd = cdcfast.reference.Decoder("debezium", catalog=cat, mode=mode)
        try:
            want = [b.to_pylist() for b in rd.read_batches(stream, table="GEN.TABLE_1",
                                                            batch_size=17)]
        except cdcfast.DecodeError as e:
            with pytest.raises(cdcfast.DecodeError) as got:
                list(nd.read_batches(stream, table="GEN.TABLE_1", batch_size=17))
            assert str(got.value) == str(e)
            continue
        got = [b.to_pylist() for b in nd.read_batches(stream, table="GEN.TABLE_1",
                                                       batch_size=17)]
        assert sum(got, []) == sum(want, [])
