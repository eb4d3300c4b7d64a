"""The header keys of a JSON document are matched against the ones the document before had
at the same place (a cache: the same bytes there are the same field). Documents whose keys
differ from the ones before in every way that could fool such a match — another key of the
same length, a longer or a shorter one, one past what is remembered, whitespace, a key cut
by the document's end, the envelope form after the bare one, a key spelled with escapes
(which is the key it spells) — decode as the reference decodes them, and as each decodes
alone."""
from __future__ import annotations

import pytest

import cdcfast
import cdcfast.reference
from cdcfast import Catalog

CATALOG = Catalog.from_dict({"tables": [{"schema": "S", "table": "T", "columns": [
    {"name": "A", "type": "INTEGER"}, {"name": "B", "type": "VARCHAR(9)"}]}]})
SOURCE = b'"source":{"version":"2.6","connector":"db2","schema":"S","table":"T","ts_ms":5}'
MANY = b'"source":{' + b",".join(b'"k%d":%d' % (n, n) for n in range(40)) \
    + b',"schema":"S","table":"T"}'


def debezium(source=SOURCE, op=b'"op":"c"', ts=b'"ts_ms":7', after=b'{"A":1,"B":"q"}'):
    return b'{"before":null,"after":' + after + b',' + source + b',' + op + b',' + ts + b'}'


DOCUMENTS = {
    "the same": debezium(),
    "another key of its length": debezium(op=b'"oq":"c"'),
    "a sibling of its length": debezium(ts=b'"ts_us":7'),
    "a longer key": debezium(source=b'"sourcex":{"schema":"S","table":"T"}'),
    "a shorter key": debezium(source=b'"sourc":{"schema":"S","table":"T"}'),
    "a prefix of the next": debezium(op=b'"o":"c","op":"d"'),
    "a key past what is remembered": debezium(
        op=b'"op":"c","' + b"x" * 40 + b'":1,"' + b"x" * 40 + b'":2'),
    "members past what is remembered": debezium(source=MANY),
    "whitespace around the colon": debezium(op=b'"op" : "u"'),
    "no colon": debezium(op=b'"op" "u"'),
    "cut in a key": debezium()[:30],
    "cut after a key": debezium()[:31],
    "the envelope form": b'{"schema":{},"payload":' + debezium() + b'}',
    "keys in another order": b'{"op":"d","before":{"A":2,"B":"r"},"after":null,' + SOURCE + b'}',
    "a key given twice": debezium(op=b'"op":"c","op":"u"'),
    # a key with escapes is the key it spells (json.loads reads it so)
    "an escaped key": debezium(source=SOURCE.replace(b'"source"', b'"s\\u006furce"'),
                               op=b'"o\\u0070":"u"'),
    "an escaped image key": b'{"before":null,"\\u0061fter":{"A":1,"B":"q"},' + SOURCE
                            + b',"op":"c"}',
    "an escaped envelope": b'{"sch\\u0065ma":{},"p\\u0061yload":' + debezium() + b'}',
    "an escaped lone surrogate": debezium(op=b'"\\ud800p":"u","op":"c"'),
}


def rows(module, data):
    t = module.Decoder("debezium", catalog=CATALOG).decode(data, table="S.T")
    return [t.column(c).to_pylist() for c in ("op", "before", "after", "_error")]


@pytest.mark.parametrize("name", sorted(DOCUMENTS))
def test_debezium_header_keys_that_differ_from_the_last_document(name):
    # each case between documents of the common shape: the keys it changes were remembered,
    # and the next document's must be remembered again
    docs = [debezium(), debezium(), DOCUMENTS[name], debezium(), DOCUMENTS[name], debezium()]
    data = b"\n".join(docs)
    assert rows(cdcfast, data) == rows(cdcfast.reference, data)
    alone = [rows(cdcfast, d) for d in docs]
    together = rows(cdcfast, data)
    for c in (0, 1, 2):
        assert together[c] == [v for a in alone for v in a[c]]


# -- olr and qlik: a header key of each level changed in each way -----------------------------

OLR_CAT = Catalog.from_dict({"tables": [{"schema": "O", "table": "T", "columns": [
    {"name": "ID", "type": "NUMBER(10)"}, {"name": "NAME", "type": "VARCHAR2(20)"}]}]})
OLR = (b'{"scn":100,"tm":1749983400000000000,"xid":"1.2.3","db":"DB","payload":[{"op":"c",'
       b'"schema":{"owner":"O","table":"T"},"rid":"AAA","after":{"ID":1,"NAME":"a"}}]}')
QLIK_CAT = Catalog.from_dict({"tables": [{"schema": "HR", "table": "EMP", "columns": [
    {"name": "ID", "type": "INTEGER"}, {"name": "NAME", "type": "VARCHAR(20)"}]}]})
QLIK = (b'{"schema":"HR","table":"EMP","headers":{"operation":"INSERT","changeSequence":"1",'
        b'"timestamp":"2023-09-11T03:23:25.000","streamPosition":"00000000.00bb2531",'
        b'"transactionId":"00000000000000000000000000060008","changeMask":"03",'
        b'"columnMask":"03"},"data":{"ID":"7","NAME":"Ann"},"beforeData":null}')


def variants(doc: bytes, key: bytes) -> dict:
    """The document with one header key changed: for each way a remembered key could be
    matched wrongly."""
    quoted = b'"' + key + b'"'
    at = doc.index(quoted)
    other = key[:-1] + (b"x" if key[-1:] != b"x" else b"y")
    return {
        "the same": doc,
        "another key of its length": doc.replace(quoted, b'"' + other + b'"', 1),
        "a longer key": doc.replace(quoted, b'"' + key + b'x"', 1),
        "a shorter key": doc.replace(quoted, b'"' + key[:-1] + b'"', 1),
        "whitespace around the colon": doc.replace(quoted + b":", quoted + b" : ", 1),
        "no colon": doc.replace(quoted + b":", quoted + b" ", 1),
        "cut in the key": doc[:at + 2],
        "cut after the key": doc[:at + len(quoted)],
        "the key spelled with an escape": doc.replace(
            quoted, b'"\\u%04x' % key[0] + key[1:] + b'"', 1),
    }


CASES = [(fmt, key, name) for fmt, doc, keys in (("olr", OLR, (b"xid", b"op", b"owner")),
                                                  ("qlik", QLIK, (b"table", b"operation")))
         for key in keys for name in sorted(variants(doc, key))]


@pytest.mark.parametrize("fmt,key,name", CASES)
def test_olr_and_qlik_header_keys_that_differ_from_the_last_document(fmt, key, name):
    doc, cat, table = (OLR, OLR_CAT, "O.T") if fmt == "olr" else (QLIK, QLIK_CAT, "HR.EMP")
    changed = variants(doc, key)[name]
    data = b"\n".join([doc, doc, changed, doc, changed, doc])

    def decoded(module):
        return module.Decoder(fmt, catalog=cat).decode(data, table=table).to_pylist()
    assert decoded(cdcfast) == decoded(cdcfast.reference)


def test_debezium_struct_keys_spelled_with_escapes():
    """The keys inside a value (a VariableScaleDecimal's "scale" and "value") are read by
    what they spell too: native and reference alike."""
    import base64
    import json
    fields = [{"type": "struct", "name": "io.debezium.data.VariableScaleDecimal", "field": "C",
               "fields": [{"type": "int32", "field": "scale"},
                          {"type": "bytes", "field": "value"}]}]
    schema = {"type": "struct", "fields": [
        {"type": "struct", "fields": fields, "field": "before", "optional": True},
        {"type": "struct", "fields": fields, "field": "after", "optional": True}]}
    neg = base64.b64encode((-12345).to_bytes(2, "big", signed=True)).decode()
    msg = json.dumps({"schema": schema, "payload": {
        "before": None, "after": {"C": {"scale": 3, "value": neg}},
        "source": {"table": "T"}, "op": "c"}})
    spelled = msg.replace('"scale": 3', '"sc\\u0061le": 3').replace(
        '"value": "', '"v\\u0061lue": "')
    assert spelled != msg
    got = [m.decode([msg, spelled], format="debezium").column("after").to_pylist()
           for m in (cdcfast, cdcfast.reference)]
    assert got[0] == got[1] == [{"C": "-12.345"}, {"C": "-12.345"}]
