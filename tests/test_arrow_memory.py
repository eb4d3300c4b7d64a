"""Output buffers and their recycling (native/cdcfast/_arrow.pyx)."""
from __future__ import annotations

import os
import subprocess
import sys

import pytest

import cdcfast
from cdcfast.encode import generate

pytestmark = pytest.mark.skipif(not cdcfast.native_available(), reason="native kernels only")
FMT = "ibm-delimited"


@pytest.fixture(scope="module")
def two_inputs():
    a, cat = generate(FMT, rows=3000, table_width=20, seed=1)
    b, _ = generate(FMT, rows=3000, table_width=20, seed=2)
    return a, b, cat


def test_live_arrays_are_never_recycled(two_inputs):
    """A table still referenced keeps its buffers: decoding more does not write into them."""
    from cdcfast import _arrow
    a, b, cat = two_inputs
    dec = cdcfast.Decoder(FMT, catalog=cat)
    first = dec.decode(a, table=cat.tables[0].name)
    expected = first.to_pylist()
    for _ in range(3):
        other = dec.decode(b, table=cat.tables[0].name)
        del other                       # its blocks go back to the cache ...
        dec.decode(a, table=cat.tables[0].name)     # ... and are written again
    assert first.to_pylist() == expected
    assert _arrow.cache_info()[0] > 0


def test_blocks_come_back_and_are_reused(two_inputs):
    from cdcfast import _arrow
    a, _, cat = two_inputs
    dec = cdcfast.Decoder(FMT, catalog=cat)
    cdcfast.release_memory()
    assert _arrow.cache_info() == (0, 0)
    t = dec.decode(a, table=cat.tables[0].name)
    want = t.to_pylist()
    held_while_alive = _arrow.cache_info()[1]
    del t
    blocks, held = _arrow.cache_info()
    assert blocks > 0 and held > held_while_alive
    t = dec.decode(a, table=cat.tables[0].name)
    assert _arrow.cache_info()[1] < held            # the new table took blocks back
    assert t.to_pylist() == want
    del t
    cdcfast.release_memory()
    assert _arrow.cache_info() == (0, 0)


@pytest.mark.parametrize("fmt", ["ibm-delimited", "olr", "qlik"])
def test_string_offsets_start_on_a_page(fmt):
    """A string column's offsets of 4 KiB and more start on a page boundary, whether their
    block is new or taken back from the cache (docs/performance.md, "Threads": where they
    started within their pages moved olr's speed by up to a fifth)."""
    import pyarrow as pa
    data, cat = generate(fmt, rows=3000, table_width=20, seed=3)
    dec = cdcfast.Decoder(fmt, catalog=cat)
    for _ in range(3):                          # new blocks, then recycled ones
        t = dec.decode(data, table=cat.tables[0].name)
        seen = 0
        for image in ("before", "after"):
            for chunk in t.column(image).chunks:
                for i, field in enumerate(chunk.type):
                    child = chunk.field(i)
                    if pa.types.is_string(field.type) and len(child) >= 1024:
                        assert child.offset == 0
                        assert child.buffers()[1].address % 4096 == 0, field.name
                        seen += 1
        assert seen >= 2
        del t


def test_cache_limit_from_the_environment(tmp_path):
    """CDCFAST_BUFFER_CACHE_MB bounds what is kept; 0 keeps nothing."""
    code = ("import cdcfast; from cdcfast import _arrow; from cdcfast.encode import generate\n"
            "d, c = generate('ibm-delimited', rows=3000, table_width=20, seed=1)\n"
            "t = cdcfast.decode(d, format='ibm-delimited', catalog=c, table=c.tables[0].name)\n"
            "del t; print(_arrow.cache_info()[1])")
    for mb, check in (("0", lambda n: n == 0), ("0.5", lambda n: 0 < n <= 1 << 19)):
        env = dict(os.environ, CDCFAST_BUFFER_CACHE_MB=mb)
        out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True,
                             text=True, check=True).stdout
        assert check(int(out)), (mb, out)


def test_a_bad_cache_limit_warns_and_keeps_the_default():
    env = dict(os.environ, CDCFAST_BUFFER_CACHE_MB="lots")
    res = subprocess.run([sys.executable, "-c",
                          "from cdcfast import _arrow; print(_arrow._cache_limit())"],
                         env=env, capture_output=True, text=True, check=True)
    assert int(res.stdout) == 256 << 20
    assert "CDCFAST_BUFFER_CACHE_MB='lots' is not a number" in res.stderr


def test_a_struct_field_outlives_its_table(two_inputs):
    """The image structs are imported whole through the Arrow C data interface
    (_arrow.finish_struct): a field kept after its table is gone keeps its blocks — decoding
    more (which reuses released blocks) never writes into it."""
    a, b, cat = two_inputs
    dec = cdcfast.Decoder(FMT, catalog=cat)
    table = dec.decode(a, table=cat.tables[0].name)
    after = table.column("after").chunk(0)
    kept = [after.field(i) for i in range(after.type.num_fields)]
    flags = table.column("changed").chunk(0).field(0)
    want = [k.to_pylist() for k in kept], flags.to_pylist()
    del table, after
    for _ in range(3):
        dec.decode(b, table=cat.tables[0].name)
    assert ([k.to_pylist() for k in kept], flags.to_pylist()) == want
    for k in kept:
        k.validate(full=True)


@pytest.mark.parametrize("fmt", ["debezium", "olr", "qlik"])
def test_json_columns_are_sized_once_a_batch(fmt):
    """A JSON run sizes its columns from how far through its input it is (_rows.Progress),
    instead of doubling them: the blocks a doubling leaves behind (as much as the output
    itself) are not there while the output lives, and a repeated decode of the same input
    finds every block it needs in the cache."""
    from cdcfast import _arrow
    data, cat = generate(fmt, rows=20000, table_width=8, seed=3)
    dec = cdcfast.Decoder(fmt, catalog=cat, threads=1)
    table = cat.tables[0].name
    cdcfast.release_memory()
    t = dec.decode(data, table=table)
    left_behind = _arrow.cache_info()[1]
    assert t.num_rows > 10000
    assert left_behind < 0.15 * t.nbytes, (left_behind, t.nbytes)
    want = t.to_pylist()
    del t
    held = _arrow.cache_info()[1]
    t = dec.decode(data, table=table)
    assert t.to_pylist() == want
    assert _arrow.cache_info()[1] <= held - 0.8 * t.nbytes      # taken from the cache
    del t
    cdcfast.release_memory()
