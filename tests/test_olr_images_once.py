"""`olr` reads the first element's row images as its walk meets them (checked, straight into
the row its table's output will give the element) instead of scanning them and walking them
again (docs/performance.md, "Where a core spends its time"). Each document here sends that
path somewhere its guess must be taken back — another table, a key given twice, a document
that turns out not to be JSON after its images, an image before the element's schema, a full
batch — and the native decoder must still give exactly what the reference gives."""
from __future__ import annotations

import pytest

import cdcfast
from jsonfuzz import compare

CATALOG = cdcfast.Catalog.from_dict({"tables": [
    {"schema": "A", "table": "T", "columns": [{"name": "X", "type": "NUMBER(5)"},
                                               {"name": "Y", "type": "VARCHAR2(10)"}]},
    {"schema": "A", "table": "U", "columns": [{"name": "X", "type": "NUMBER(5)"}]}]})

T = b'"schema":{"owner":"A","table":"T"}'
U = b'"schema":{"owner":"A","table":"U"}'
HEAD = b'"xid":"1.2.3","scn":100,"tm":1700000000'


def doc(*elements: bytes, head: bytes = HEAD, tail: bytes = b"") -> bytes:
    return b'{' + head + b',"payload":[' + b",".join(elements) + b']' + tail + b'}'


CASES = {
    "read as met": [doc(b'{"op":"c",' + T + b',"after":{"X":1,"Y":"a"}}'),
                    doc(b'{"op":"u",' + T + b',"before":{"X":1},"after":{"X":2,"Y":"b"}}'),
                    doc(b'{"op":"d",' + T + b',"before":{"X":2,"Y":"b"}}')],
    "image before the schema": [doc(b'{"op":"c","after":{"X":1},' + T + b'}')],
    "op after the images": [doc(b'{' + T + b',"after":{"X":1},"op":"c"}')],
    "a value not its type": [doc(b'{"op":"c",' + T + b',"after":{"X":"abc","Y":"a"}}')],
    "an unknown key": [doc(b'{"op":"c",' + T + b',"after":{"X":1,"Z":5}}')],
    "after given twice": [doc(b'{"op":"c",' + T + b',"after":{"X":1},"after":{"X":2}}')],
    "before given twice": [doc(b'{"op":"u",' + T + b',"before":{"X":1},"after":{"X":2},'
                               b'"before":{"X":3}}')],
    "op given twice": [doc(b'{"op":"c",' + T + b',"after":{"X":1},"op":"u"}')],
    "schema given twice": [doc(b'{"op":"c",' + T + b',"after":{"X":1},' + U + b'}')],
    "another table's": [doc(b'{"op":"c",' + U + b',"after":{"X":1}}'),
                        doc(b'{"op":"c",' + T + b',"after":{"X":1}}')],
    "a table no catalog has": [doc(b'{"op":"c","schema":{"owner":"A","table":"V"},'
                                   b'"after":{"X":1}}')],
    "not JSON after the images": [doc(b'{"op":"c",' + T + b',"after":{"X":1,"Y":"a"}}',
                                      tail=b',"num":}')],
    "bad UTF-8 in an image": [doc(b'{"op":"c",' + T + b',"after":{"X":1,"Y":"\xff"}}')],
    "payload given twice": [doc(b'{"op":"c",' + T + b',"after":{"X":1}}',
                                tail=b',"payload":[]')],
    "second element": [doc(b'{"op":"c",' + T + b',"after":{"X":1}}',
                           b'{"op":"c",' + T + b',"after":{"X":2}}',
                           b'{"op":"u",' + T + b',"before":{"X":2},"after":{"X":3}}')],
    "an array image": [doc(b'{"op":"u",' + T + b',"before":[{"X":1},{"Y":"q"}],'
                           b'"after":{"X":2}}')],
    "a control element first": [doc(b'{"op":"begin"}', b'{"op":"c",' + T + b',"after":{"X":1}}')],
    "an element that is no object": [doc(b'7', b'{"op":"c",' + T + b',"after":{"X":1}}')],
    "no table": [doc(b'{"op":"c","schema":{"owner":"A"},"after":{"X":1}}')],
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_native_equals_reference(case):
    # a table first so that the walk knows it, then the case, then more rows after it
    first = doc(b'{"op":"c",' + T + b',"after":{"X":0,"Y":"z"}}')
    after = doc(b'{"op":"c",' + T + b',"after":{"X":9,"Y":"y"}}')
    stream = b"\n".join([first] + CASES[case] + [after]) + b"\n"
    for table in ("A.T", "A.U"):
        assert compare("olr", stream, CATALOG, {}, table=table, batch_size=1) == []
        assert compare("olr", stream, CATALOG, {}, table=table, batch_size=2) == []


@pytest.fixture
def read_as_met(monkeypatch):
    """The rows whose images the kernel read as its walk met them, per call."""
    from cdcfast.formats import _olr_run
    seen = []
    real = _olr_run.Run.run

    def run(self):
        try:
            yield from real(self)
        finally:
            seen.append(self.sc.read_as_met)
    monkeypatch.setattr(_olr_run.Run, "run", run)
    return seen


@pytest.mark.parametrize("case, rows", [("read as met", 3), ("image before the schema", 0),
                                        ("op after the images", 0), ("after given twice", 0),
                                        ("another table's", 1), ("second element", 1),
                                        ("not JSON after the images", 0)])
def test_which_rows_are_read_as_met(read_as_met, case, rows):
    """(the path these tests are about runs: the first element's images of a table met
    before — the first document's is not —, after its op and schema, not given twice, in a
    document that is well-formed; else they are read with the rest of the element)"""
    first = doc(b'{"op":"c",' + T + b',"after":{"X":0,"Y":"z"}}')
    cdcfast.decode_tables(b"\n".join([first] + CASES[case]), format="olr", catalog=CATALOG)
    assert read_as_met == [rows]


def test_the_images_read_as_met_are_the_rows():
    t = cdcfast.decode(b"\n".join(CASES["read as met"]), format="olr", catalog=CATALOG,
                       table="A.T")
    assert t.column("after").to_pylist() == [{"X": 1, "Y": "a"}, {"X": 2, "Y": "b"}, None]
    assert t.column("before").to_pylist() == [None, {"X": 1, "Y": None}, {"X": 2, "Y": "b"}]
    assert t.column("_error").null_count == 3
