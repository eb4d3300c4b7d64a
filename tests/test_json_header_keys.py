"""The header keys of a JSON document are matched against the ones the document before had
at the same place (a cache: the same bytes there are the same field). Documents whose keys
differ from the ones before in every way that could fool such a match — another key of the
same length, a longer or a shorter one, one past what is remembered, whitespace, a key cut
by the document's end, the envelope form after the bare one — decode as the reference
decodes them, and as each decodes alone."""
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
