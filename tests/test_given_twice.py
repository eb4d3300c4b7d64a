"""A column given twice in one image: "given twice" at the second key is that column's problem
and voids whatever its first value had (the reference reads only a key's last value); the
row's error is then the first of its problems in document order — also when another column's
problem lies between the first value and the second key.

Found by the catalog fuzz harness (fuzz/catalog.py, docs/reliability.md): the native kernels
kept one problem per row, so a problem met between a column's bad first value and its second
key was lost when "given twice" replaced the first one (`{"A":"","B":"","A":"","B":""}` with
B a TIMESTAMP: native `after.B: given twice`, the reference `after.A: given twice`)."""
from __future__ import annotations

import pytest

import cdcfast
import cdcfast.reference

CATALOG = {"tables": [{"schema": "S", "table": "T", "columns": [
    {"name": "A", "type": "VARCHAR(10)"}, {"name": "B", "type": "TIMESTAMP"},
    {"name": "C", "type": "INTEGER"}]}]}

IMAGES = [
    (b'{"A":"","B":"","A":"","B":""}', "after.A: given twice"),
    (b'{"A":"x","B":"bad","A":"y","B":"2024-01-01T00:00:00Z"}', "after.A: given twice"),
    (b'{"B":"bad","C":"x","B":"2024-01-01T00:00:00Z"}', "after.C: "),
    (b'{"B":"bad","C":"x","B":"","B":"2024-01-01T00:00:00Z"}', "after.C: "),
    (b'{"C":"x","B":"bad","A":"","B":1,"C":2}', "after.B: given twice"),
    (b'{"B":"bad","B":"bad","B":"bad"}', "after.B: given twice"),
]


def documents(image: bytes) -> dict:
    return {
        "olr": b'{"scn":1,"xid":"1.2.3","payload":[{"op":"c","schema":{"owner":"S","table":'
               b'"T"},"after":%s}]}' % image,
        "qlik": b'{"schema":"S","table":"T","headers":{"operation":"INSERT"},"data":%s}'
                % image,
        "debezium": b'{"payload":{"before":null,"after":%s,"source":{"schema":"S",'
                    b'"table":"T"},"op":"c","ts_ms":1}}' % image,
    }


@pytest.mark.parametrize("fmt", ["olr", "qlik", "debezium"])
@pytest.mark.parametrize("image, first", IMAGES)
def test_a_row_reports_its_first_problem_after_a_key_given_twice(fmt, image, first):
    doc = documents(image)[fmt]
    got = [m.decode(doc, format=fmt, catalog=CATALOG) for m in (cdcfast, cdcfast.reference)]
    errors = [t.column("_error").to_pylist() for t in got]
    assert errors[0] == errors[1]
    assert errors[0][0].startswith(first), errors[0]
