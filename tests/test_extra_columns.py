"""`last_stats["extra_columns"]`: image keys the table lacks. Debezium and Qlik count each
key once per image, as the reference counts the keys of the dict json.loads gives
(docs/debezium.md, docs/qlik.md): a key given twice once, and keys compared by their code
points — "X" and "\\u0058" are one key, an escaped surrogate pair equals the character in UTF-8,
lone surrogates are keys of their own. OLR the same (docs/olr.md), an array form's one-column
objects each an image of its own.

Found by the qlik fuzz harness (fuzz/qlik.py, docs/reliability.md): the native qlik kernel
counted every occurrence (an image `{"":"","":null,…}` counted 6 where the reference counts
1); the debezium kernel remembered the first 16 keys of an image and compared raw bytes, so a
17th key given twice, or "X" beside "\\u0058", counted twice; the OLR kernel counted each
occurrence in an object where the reference counts once (docs/olr.md said "each occurrence":
now once per key and image, as the reference always counted)."""
from __future__ import annotations

import pytest

import cdcfast
import cdcfast.reference
from cdcfast.encode import generate

KEYS = [
    (b'"X":1,"X":2', 1),
    (b'"X":1,"\\u0058":2', 1),
    (b'"\\ud83d\\ude00":1,"\xf0\x9f\x98\x80":2', 1),
    (b'"\\ud800":1,"\\uD800":2,"\\udc00":3', 2),
    (b'"a\\nb":1,"a\\u000ab":1,"a\\/":1,"a/":2', 2),
    (b'"":"","":null,"":""', 1),
    (b",".join(b'"K%d":%d' % (i, i) for i in range(300)) + b',"K7":1,"K250":1', 300),
]


def _qlik(keys: bytes):
    _, cat = generate("qlik", 2, table_width=3, seed=5, form="pubsub")
    t = cat.tables[0]
    doc = (b'{"schema":"%s","table":"%s","headers":{"operation":"INSERT"},"data":{%s}}'
           % (t.schema.encode(), t.table.encode(), keys))
    return doc, cat


def _debezium(keys: bytes):
    msgs, cat = generate("debezium", 2, table_width=3, seed=1, messages=True,
                         transactions=False)
    m = next(x for x in msgs if x and b'"after":{' in x)
    i = m.index(b'"after":{') + len(b'"after":{')
    return m[:i] + keys + b"," + m[i:], cat


@pytest.mark.parametrize("fmt, build", [("qlik", _qlik), ("debezium", _debezium)])
@pytest.mark.parametrize("keys, count", KEYS)
def test_extra_columns_count_each_key_once_per_image(fmt, build, keys, count):
    doc, cat = build(keys)
    for mod in (cdcfast, cdcfast.reference):
        dec = mod.Decoder(fmt, catalog=cat)
        t = dec.decode(doc, table=cat.tables[0].name)
        assert t.num_rows == 1 and t.column("_error").to_pylist() == [None]
        assert dec.last_stats["extra_columns"] == count, (mod.__name__, keys[:40])


def test_olr_counts_each_key_once_per_object():
    for images, at, ins, count in [
            ("object", b'"after":{', b'"ZZ":1,"ZZ":2,"\\u005a\\u005a":3,"YY":4,', 2),
            ("array", b'"after":[', b'{"ZZ":1},{"ZZ":2},{"YY":4},', 3)]:
        msgs, cat = generate("olr", 2, table_width=3, seed=2, messages=True, images=images)
        m = next(x for x in msgs if at in x)
        i = m.index(at) + len(at)
        for mod in (cdcfast, cdcfast.reference):
            dec = mod.Decoder("olr", catalog=cat)
            t = dec.decode_tables(m[:i] + ins + m[i:])
            assert [x.column("_error").to_pylist() for x in t.values()] == [[None]]
            assert dec.last_stats["extra_columns"] == count, (mod.__name__, images)
