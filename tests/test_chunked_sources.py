"""A ChunkedArray source is the list of its messages: one input, whatever its chunks
(docs/contract.md, "Sources"). The decoders read each chunk as a part of their own; what a
format learns in one part holds for the next.

Found by the debezium fuzz harness (fuzz/debezium.py, docs/reliability.md): rows met in an
earlier chunk than their table's embedded schema were built without its columns, and joining
the chunks' batches raised ArrowInvalid ("Schema at index 1 was different") — natively and in
the reference. The same class in ibm-delimited without a catalog: each chunk fixed a table's N
by its own first record (and the same crash, or another N than the list's)."""
from __future__ import annotations

import pyarrow as pa
import pytest

import cdcfast
import cdcfast.reference

MODULES = [pytest.param(cdcfast, id="native"), pytest.param(cdcfast.reference, id="reference")]

IBM_HEAD = (b'10,"IBM","2006030","182318000005","S","T","ISRT","TX","0000",'
            b'"2006-06-30-18.00.52","P",0,')


def dbz(name: bytes = b"x") -> bytes:
    return (b'{"schema":{"type":"struct","fields":[{"type":"struct","fields":[{"type":"string",'
            b'"optional":true,"field":"%s"}],"optional":true,"field":"after"}]},"payload":'
            b'{"before":null,"after":{"%s":"v"},"source":{"schema":"S","table":"s"},"op":"c",'
            b'"ts_ms":1}}' % (name, name))


CASES = [
    ("debezium", [b"junk", dbz()]),
    ("debezium", [b"junk", None, dbz(b""), b"{}", dbz(b"")]),
    ("ibm-delimited", [IBM_HEAD + b",1\n", IBM_HEAD + b",1,,2\n"]),
    ("ibm-delimited", [b"junk\n", IBM_HEAD + b",1\n"]),
    ("ibm-delimited", [IBM_HEAD + b",1,,2\n", IBM_HEAD + b",1\n", b"x\n", IBM_HEAD + b",1\n"]),
    # the requested table's N fixed by the first chunk, the second without its records: its
    # empty batch there keeps the columns (the reference built it with none, and joining the
    # batches as grown layouts then dropped them; found by fuzz/ibm.py)
    ("ibm-delimited", [IBM_HEAD + b",1\n", b"x\n"]),
]


def chunkings(msgs):
    yield pa.chunked_array([pa.array(msgs[:1], pa.binary()), pa.array(msgs[1:], pa.binary())])
    yield pa.chunked_array([pa.array([m], pa.large_binary()) for m in msgs])


def calls(mod, fmt):
    dec = mod.Decoder(fmt)
    return {"decode": dec.decode, "decode_tables": dec.decode_tables,
            "headers": dec.headers}, dec


@pytest.mark.parametrize("mod", MODULES)
@pytest.mark.parametrize("fmt, msgs", CASES)
def test_a_chunked_array_decodes_as_the_list_of_its_messages(mod, fmt, msgs):
    fns, dec = calls(mod, fmt)
    for name in ("decode", "decode_tables", "headers"):
        want = fns[name](msgs)
        stats = dec.last_stats
        for src in chunkings(msgs):
            assert fns[name](src) == want, name
            assert dec.last_stats == stats, name
    assert mod.decode(msgs, format=fmt).num_rows == len([m for m in msgs if m is not None])


@pytest.mark.parametrize("fmt, msgs", CASES)
def test_native_and_reference_agree_on_every_chunking(fmt, msgs):
    for src in [msgs, *chunkings(msgs)]:
        for name in ("decode", "decode_tables", "headers"):
            got = [calls(m, fmt)[0][name](src) for m in (cdcfast, cdcfast.reference)]
            assert got[0] == got[1], name
