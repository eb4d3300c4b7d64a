"""The command line (SPEC §7: generate, bench, demo) and the README's two commands."""
import json
import os
import re
import subprocess
import sys

import pytest

import cdcfast
from cdcfast import cli

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def test_generate_writes_data_and_catalog(tmp_path, capsys):
    out = tmp_path / "s.txt"
    assert cli.main(["generate", "--format", "ibm-delimited", "--rows", "300",
                     "--table-width", "7", "-o", str(out)]) == 0
    assert "300 records" in capsys.readouterr().out
    cat = cdcfast.Catalog.load(str(out) + ".catalog.json")
    assert len(cat.tables[0].columns) == 7
    t = cdcfast.decode(str(out), format="ibm-delimited", catalog=cat)
    assert t.num_rows == 300 and t.column("_error").null_count == 300


def test_bench_prints_every_contender(tmp_path, capsys):
    js = tmp_path / "b.json"
    assert cli.main(["bench", "--size", "1", "--reference-size", "0.2", "--repeat", "1",
                     "--quick", "--json", str(js)]) == 0
    text = capsys.readouterr().out
    for name in ("cdcfast", "reference (pure Python)", "pyarrow.csv strings",
                 "pyarrow.csv typed"):
        assert re.search(rf"^{re.escape(name)} +[0-9.]+ +[0-9,]+", text, re.M), name
    res = json.loads(js.read_text())
    assert set(res["tools"]) == {"cdcfast", "reference (pure Python)", "pyarrow.csv strings",
                                 "pyarrow.csv typed"}
    assert all(r["mb_s"] > 0 and r["rows_s"] > 0 for r in res["tools"].values())


def test_bench_on_spark_prints_every_contender(spark, capsys, tmp_path):
    js = tmp_path / "b.json"
    assert cli.main(["bench", "--size", "1", "--reference-size", "0.2", "--repeat", "1",
                     "--quick", "--spark", "--json", str(js)]) == 0
    text = capsys.readouterr().out
    names = ("Spark read.text + from_csv + casts", "cdcfast mapInArrow", "cdcfast data source",
             "mapInArrow identity (transfer floor)", "mapInArrow answering pre-decoded events",
             "data source of pre-decoded events")
    for name in names:
        assert re.search(rf"^{re.escape(name)} +[0-9.]+ +[0-9,]+ +[0-9.]+x", text, re.M), name
    res = json.loads(js.read_text())["spark"]
    assert set(res["tools"]) == set(names) and res["files"] == 8
    assert res["rows"] == json.loads(js.read_text())["rows"]      # every record read
    assert "against the envelope's own cost (no decoding)" in text
    assert spark.range(2).count() == 2                              # the session still runs


def test_demo_on_local_spark(spark, capsys):
    assert cli.main(["demo", "--rows", "2000"]) == 0
    text = capsys.readouterr().out
    assert "native kernels: True" in text and "in this process: 2,000 events" in text
    assert re.search(r"on Spark \(the cdcfast data source, 4 files\): 2,000 events", text)
    assert text.count("'ORDER_ID': 1,") >= 3           # the first event of each file shown
    assert spark.range(3).count() == 3                  # the caller's session still runs


def sample(tmp_path, rows=3000, tables=2):
    out = tmp_path / "s.del"
    assert cli.main(["generate", "--format", "ibm-delimited", "--rows", str(rows),
                     "--tables", str(tables), "--table-width", "8", "-o", str(out)]) == 0
    return str(out), str(out) + ".catalog.json"


def test_decode_to_parquet_per_table_and_one_table(tmp_path, capsys):
    import pyarrow.parquet as pq
    path, cat = sample(tmp_path)
    want = cdcfast.decode_tables(path, format="ibm-delimited", catalog=cdcfast.Catalog.load(cat))
    assert cli.main(["decode", path, "--format", "ibm-delimited", "--catalog", cat,
                     "-o", str(tmp_path / "out")]) == 0
    for key, table in want.items():
        assert pq.read_table(tmp_path / "out" / f"{key}.parquet").equals(table)
    assert cli.main(["decode", path, "--format", "ibm-delimited", "--catalog", cat,
                     "--table", "SALES.ORDERS_1", "-o", str(tmp_path / "one.parquet")]) == 0
    assert pq.read_table(tmp_path / "one.parquet").equals(want["SALES.ORDERS_1"])
    assert "SALES.ORDERS_1" in capsys.readouterr().out


def test_decode_shows_progress_on_long_inputs(tmp_path, capsys, monkeypatch):
    path, cat = sample(tmp_path, rows=500)
    monkeypatch.setattr(cli, "PROGRESS_BYTES", 1000)
    assert cli.main(["decode", path, "--format", "ibm-delimited", "--catalog", cat,
                     "-o", str(tmp_path / "o")]) == 0
    assert "decoding" in capsys.readouterr().err
    assert cli.main(["decode", path, "--format", "ibm-delimited", "--catalog", cat, "--quiet",
                     "-o", str(tmp_path / "o")]) == 0
    assert "decoding" not in capsys.readouterr().err


def test_decode_options_and_modes(tmp_path):
    import pyarrow.parquet as pq
    data, cat = cdcfast.encode.generate("ibm-delimited", rows=100, column_delimiter="|",
                                        table_width=4)
    path = tmp_path / "pipe.del"
    path.write_bytes(data + b"\nnot,a,record")
    cat_file = tmp_path / "c.json"
    cat.save(str(cat_file))
    base = ["decode", str(path), "--format", "ibm-delimited", "--catalog", str(cat_file),
            "--table", cat.tables[0].name, "--option", "column_delimiter=|"]
    assert cli.main(base + ["-o", str(tmp_path / "p.parquet")]) == 0
    t = pq.read_table(tmp_path / "p.parquet")
    assert t.num_rows == 101 and t.column("_error").null_count == 100
    assert cli.main(base + ["--mode", "DROPMALFORMED", "-o", str(tmp_path / "d.parquet")]) == 0
    assert pq.read_table(tmp_path / "d.parquet").num_rows == 100
    with pytest.raises(cdcfast.DecodeError):
        cli.main(base + ["--mode", "FAILFAST", "-o", str(tmp_path / "f.parquet")])
    with pytest.raises(SystemExit):
        cli.main(base + ["--option", "oops", "-o", str(tmp_path / "x.parquet")])


def test_decode_through_spark(spark, tmp_path, capsys):
    path, cat = sample(tmp_path, rows=1000)
    assert cli.main(["decode", path, "--format", "ibm-delimited", "--catalog", cat,
                     "-o", str(tmp_path / "sp"), "--spark"]) == 0
    want = cdcfast.decode_tables(path, format="ibm-delimited", catalog=cdcfast.Catalog.load(cat))
    for key, table in want.items():
        got = spark.read.parquet(str(tmp_path / "sp" / key))
        assert got.count() == table.num_rows
        assert sorted(r.seq for r in got.select("seq").collect()) == \
            sorted(table.column("seq").to_pylist())


def test_inspect(tmp_path, capsys):
    path, cat = sample(tmp_path)
    heads = cdcfast.headers(path, format="ibm-delimited", catalog=cdcfast.Catalog.load(cat))
    capsys.readouterr()
    assert cli.main(["inspect", path, "--format", "ibm-delimited", "--catalog", cat]) == 0
    text = capsys.readouterr().out
    assert text.startswith("3,000 records in 1 input(s)")
    import collections
    ops = collections.Counter(zip(heads.column("table").to_pylist(),
                                  heads.column("op").to_pylist()))
    for t in ("ORDERS_0", "ORDERS_1"):
        line = next(ln for ln in text.splitlines() if ln.startswith(f"SALES.{t} "))
        mix = " / ".join(f"{ops[(t, o)]:,}" for o in "cud") + " / 0"
        assert mix in line and line.split()[1] == f"{sum(ops[(t, o)] for o in 'cud'):,}"
    assert "commit time: 2024-06-12" in text and "errors: 0" in text


def test_python_dash_m():
    out = subprocess.run([sys.executable, "-m", "cdcfast", "--help"], capture_output=True,
                         text=True)
    assert out.returncode == 0 and "generate" in out.stdout and "bench" in out.stdout


def test_readme_commands_are_what_ci_runs():
    readme = open(os.path.join(ROOT, "README.md"), encoding="utf-8").read()
    blocks = re.findall(r"```bash\n(.*?)\n```", readme, re.S)
    assert blocks[0] == 'python -m pip install -e ".[spark]" && python -m cdcfast demo'
    script = open(os.path.join(ROOT, "ci", "test.sh"), encoding="utf-8").read()
    assert blocks[1] in script.splitlines()
    assert "ci/test.sh" in open(os.path.join(ROOT, ".ci", "run"), encoding="utf-8").read()
