"""A table's name is data: whatever it is, it names that table's output and nothing else.

Found by the catalog fuzz harness (fuzz/catalog.py) under CI's fuzz smoke: a Debezium table
named "*" lost its before, after, changed and present columns. Its output key was the same
string as the key of `headers(table=None)`'s output (`formats.base.HEADERS`, then "*"), and
the JSON runners leave images out of that output. HEADERS is now an object no name can equal.
"""
from __future__ import annotations

import pickle

import pytest

import cdcfast
from cdcfast.encode import encode, events
from cdcfast.formats.base import HEADERS
from test_tables_without_columns import _decoded

# (the harness's input itself, an insert of a table "*" without columns, is tested with its
# twin in tests/test_tables_without_columns.py)


@pytest.mark.parametrize("fmt", ["debezium", "olr", "qlik", "ibm-delimited", "lldf"])
@pytest.mark.parametrize("name", ["*", "_message", "None", "HEADERS"])
def test_any_name_keeps_its_images(fmt, name):
    """The generator's events of a table renamed (no schema), natively as by the reference,
    with every image column, from decode_tables and decode alike."""
    ev, cat = events(fmt, 12, table_width=3, seed=4)
    d = cat.to_dict()
    t = d["tables"][0]
    t.pop("schema", None)
    old, t["table"] = t["table"], name
    renamed = cdcfast.Catalog.from_dict(d)
    data = encode([dict(e, schema=None, table=name) if e.get("table") == old else e
                   for e in ev], fmt, catalog=renamed)
    got = _decoded(fmt, data, renamed)
    assert list(got["native"]) == list(got["reference"]) == [name]
    native, ref = got["native"][name], got["reference"][name]
    assert {"before", "after", "changed", "present"} <= set(native.schema.names)
    assert native.num_rows == 12
    assert native.equals(ref)
    one = cdcfast.Decoder(fmt, catalog=renamed).decode(data, table=name)
    assert one.equals(native)


def test_the_headers_key_is_no_string_and_pickles_as_itself():
    assert not isinstance(HEADERS, str)
    assert pickle.loads(pickle.dumps(HEADERS)) is HEADERS
