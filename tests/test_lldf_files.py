"""`lldf` from files and on the command line: memory-mapped reading with its pages given back
as the decoder passes them, read_batches, order="commit", and generate / inspect / decode /
bench --format lldf."""
import importlib
import json
import re

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import cdcfast
from cdcfast import cli, sources

FMT = "lldf"


@pytest.fixture(scope="module")
def stream():
    return cdcfast.encode.generate(FMT, rows=2500, seed=7, tables=2, framing="rdw",
                                   segment_bytes=300, control=True)


def test_read_batches_of_a_mapped_file_giving_pages_back(tmp_path, stream, monkeypatch,
                                                        pages_given_back):
    """Pages dropped behind the decoder (a tiny release step here) change nothing: batches
    of at most batch_size rows, together the decode of the same bytes."""
    data, cat = stream
    path = tmp_path / "x.lldf"
    path.write_bytes(data)
    run = importlib.import_module("cdcfast.formats._lldf_run")
    released = pages_given_back(run)
    monkeypatch.setattr(run, "KEEP_BEHIND", 4096)
    want = cdcfast.decode(data, format=FMT, catalog=cat, table="SALES.ORDERS_1",
                          framing="rdw")
    batches = list(cdcfast.read_batches(str(path), format=FMT, catalog=cat,
                                        table="SALES.ORDERS_1", batch_size=100,
                                        framing="rdw"))
    assert len(released) > 3 and released == sorted(released)     # given back as it went
    assert all(b.num_rows <= 100 for b in batches) and len(batches) > 5
    assert pa.Table.from_batches(batches).equals(want)
    assert want.num_rows > 1000 and want.column("_error").null_count == want.num_rows


def test_release_leaves_other_buffers_alone():
    assert sources.release(b"x" * (1 << 27), 1 << 27, 0) == 0


def test_order_commit_sorts_the_result_and_each_batch():
    msgs, cat = cdcfast.encode.generate(FMT, rows=2500, seed=7, tables=2, framing="rdw",
                                        segment_bytes=300, control=True, messages=True)
    data = b"".join(reversed(msgs))           # transactions out of commit order
    dec = cdcfast.Decoder(FMT, catalog=cat, framing="rdw", order="commit")
    t = dec.decode(data, table="SALES.ORDERS_0")
    keys = list(zip(t.column("commit_pos").to_pylist(), t.column("change_pos").to_pylist()))
    assert keys == sorted(keys) and t.num_rows > 1000
    plain = cdcfast.decode(data, format=FMT, catalog=cat, table="SALES.ORDERS_0",
                           framing="rdw")
    assert sorted(t.column("seq").to_pylist()) == plain.column("seq").to_pylist()
    assert t.column("seq").to_pylist() != plain.column("seq").to_pylist()   # it did reorder
    for b in dec.read_batches(data, table="SALES.ORDERS_0", batch_size=300):
        k = list(zip(b.column("commit_pos").to_pylist(), b.column("change_pos").to_pylist()))
        assert k == sorted(k)
    h = dec.headers(data)
    hk = list(zip(h.column("commit_pos").to_pylist(), h.column("change_pos").to_pylist()))
    assert hk == sorted(hk) and "ddl" in h.column("op").to_pylist()


def test_cli_generate_inspect_decode(tmp_path, capsys):
    out = tmp_path / "s.lldf"
    assert cli.main(["generate", "--format", FMT, "--rows", "800", "--tables", "2",
                     "--option", "framing=vb", "--option", "segment_bytes=250",
                     "--option", "control=true", "-o", str(out)]) == 0
    assert "800 records" in capsys.readouterr().out
    cat_file = str(out) + ".catalog.json"
    cat = cdcfast.Catalog.load(cat_file)
    assert cli.main(["inspect", str(out), "--format", FMT, "--catalog", cat_file,
                     "--option", "framing=vb"]) == 0
    text = capsys.readouterr().out
    assert re.search(r"^800 records in 1 input", text, re.M) and "errors: 0" in text
    assert "SALES.ORDERS_0" in text and "SALES.ORDERS_1" in text
    assert cli.main(["decode", str(out), "--format", FMT, "--catalog", cat_file,
                     "--option", "framing=vb", "-o", str(tmp_path / "o")]) == 0
    want = cdcfast.decode_tables(str(out), format=FMT, catalog=cat, framing="vb")
    for key, table in want.items():
        assert pq.read_table(tmp_path / "o" / f"{key}.parquet").equals(table)


def test_cli_bench_lldf(tmp_path, capsys):
    js = tmp_path / "b.json"
    assert cli.main(["bench", "--format", FMT, "--size", "1", "--reference-size", "0.2",
                     "--repeat", "1", "--quick", "--json", str(js)]) == 0
    text = capsys.readouterr().out
    for name in ("cdcfast", "reference (pure Python)", "plain struct decoder"):
        assert re.search(rf"^{re.escape(name)} +[0-9.]+ +[0-9,]+", text, re.M), name
    assert re.search(r"^headers\(\) .*: [0-9.]+ MB/s", text, re.M)
    res = json.loads(js.read_text())
    assert set(res["tools"]) == {"cdcfast", "reference (pure Python)", "plain struct decoder"}
    assert res["headers"]["mb_s"] > 0 and res["format"] == FMT


def test_struct_baseline_reads_the_generated_data_right():
    """The bench's struct decoder (the speed baseline) gives cdcfast's values on the data it
    is timed on: a baseline that decoded less would flatter the ratio."""
    from cdcfast.bench.lldf import struct_decoder
    data, cat = cdcfast.encode.generate(FMT, rows=1500, seed=3)
    table = cat.tables[0].name
    got = struct_decoder(cat, table)(data)
    want = cdcfast.decode(data, format=FMT, catalog=cat, table=table)
    assert got.num_rows == want.num_rows == 1500
    for name in got.column_names:
        assert got.column(name).to_pylist() == want.column(name).to_pylist(), name
