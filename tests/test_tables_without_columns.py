"""A catalog table of no columns (Catalog.from_debezium builds one from an embedded schema whose
image struct has no fields): its rows' images, `changed` and `present` are empty structs, null
only where the image is (SPEC §3), every key of an image an extra column.

Found by the catalog fuzz harness (fuzz/catalog.py, docs/reliability.md): the native debezium
kernel took `present` for null when the table had no columns — it told "the image was sent" by
the pointer to the columns' sent flags, which a table of no columns never allocates — where
the reference gives an empty struct. The OLR and Qlik kernels tell it by the image itself."""
from __future__ import annotations

import pytest

import cdcfast
import cdcfast.reference
from cdcfast.encode import generate

# the fuzz harness's minimized input: an insert whose schema's "after" struct has no fields
FOUND = (b'{"schema":{"":"","fields":[{"":"","fields":[],"":true,"":"","field":"after"},'
         b'{"":"","":[{"":false,"":false,"":""},{"":""},{"":"","":""},{"":"","":""},'
         b'{"":"","":""},{},{"":""}],"":true,"":"","":""}],"":2},"payload":{"after":'
         b'{"":"","":""},"source":{"":0,"table":"4"},"op":"c","":2,"":0,"":null}}')


def _decoded(fmt, data, cat):
    return {n: m.Decoder(fmt, catalog=cat).decode_tables(data)
            for n, m in (("native", cdcfast), ("reference", cdcfast.reference))}


@pytest.mark.parametrize("table", ["4", "*"])
def test_the_fuzzers_input(table):
    """Both of the catalog harness's finds: the table "4" (present was null), and the same
    insert of a table named "*" (no images at all: tests/test_table_names.py)."""
    found = FOUND.replace(b'"table":"4"', b'"table":"%s"' % table.encode())
    cat = cdcfast.Catalog.from_debezium(found)
    assert cat.to_dict() == {"tables": [{"table": table, "columns": []}]}
    got = _decoded("debezium", found, cat)
    for name, tables in got.items():
        rows = tables[table].select(["op", "before", "after", "changed", "present",
                                     "_error"]).to_pylist()
        assert rows == [{"op": "c", "before": None, "after": {}, "changed": {}, "present": {},
                         "_error": None}], name


@pytest.mark.parametrize("fmt", ["debezium", "olr", "qlik", "ibm-delimited", "lldf"])
def test_every_format_decodes_a_table_of_no_columns_as_its_reference(fmt):
    """The generator's inserts, updates and deletes of a table, decoded with a catalog that
    gives the table no columns: natively as by the reference, `present` and `changed` null
    exactly where the reference's are; in the JSON formats an insert's `present` is an empty
    struct and every key an extra column (ibm-delimited and lldf: every record has more
    fields or bytes than the table, an error row)."""
    data, cat = generate(fmt, 40, table_width=3, seed=11)
    t = cat.tables[0]
    bare = cdcfast.Catalog.from_dict({"tables": [{"table": t.name, "columns": []}]})
    got = _decoded(fmt, data, bare)
    assert got["native"].keys() == got["reference"].keys()
    for key, table in got["native"].items():
        ref = got["reference"][key]
        assert table.equals(ref), key
        if key is None:
            continue
        ops = table.column("op").to_pylist()
        present = table.column("present").to_pylist()
        if fmt in ("debezium", "olr", "qlik"):
            assert "c" in ops
            assert all(p == {} for o, p in zip(ops, present) if o == "c")
        else:
            assert table.column("_error").null_count == 0
    stats = {n: m.Decoder(fmt, catalog=bare) for n, m in (("native", cdcfast),
                                                          ("reference", cdcfast.reference))}
    for d in stats.values():
        d.decode_tables(data)
    assert stats["native"].last_stats == stats["reference"].last_stats
    if fmt in ("debezium", "olr", "qlik"):
        assert stats["native"].last_stats["extra_columns"] > 0
