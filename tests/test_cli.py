"""The command line (SPEC §7: generate, bench, demo) and the README's two commands."""
import importlib.util
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
             "cdcfast mapInArrow, columns=op,commit_ts,commit_pos,seq,after",
             "cdcfast data source, columns=op,commit_ts,commit_pos,seq,after",
             "cdcfast data source, flags=bitmask",
             "mapInArrow identity (transfer floor)", "mapInArrow answering pre-decoded events",
             "mapInArrow answering pre-decoded events, columns=op,commit_ts,commit_pos,seq,after",
             "data source of pre-decoded events")
    for name in names:
        assert re.search(rf"^{re.escape(name)} +[0-9.]+ +[0-9,]+ +[0-9.]+x", text, re.M), name
    res = json.loads(js.read_text())["spark"]
    assert set(res["tools"]) == set(names) and res["files"] == 8
    assert res["rows"] == json.loads(js.read_text())["rows"]      # every record read
    assert "against the envelope's own cost (no decoding)" in text
    assert "columns=op,commit_ts,commit_pos,seq,after: data source / from_csv" in text
    assert "flags as bitmasks: data source" in text
    assert "columns=…, no decoding: mapInArrow answering pre-decoded events" in text
    assert spark.range(2).count() == 2                              # the session still runs


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
    assert cli.main(base + ["--mode", "FAILFAST", "-o", str(tmp_path / "f.parquet")]) == 1
    assert not (tmp_path / "f.parquet").exists()
    with pytest.raises(cdcfast.DecodeError):        # --debug: the exception itself
        cli.main(base + ["--mode", "FAILFAST", "--debug", "-o", str(tmp_path / "f.parquet")])
    assert cli.main(base + ["--option", "oops", "-o", str(tmp_path / "x.parquet")]) == 2


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


# -- debezium ----------------------------------------------------------------------------------
DBZ_COLUMNS = ["ID", "NAME", "AMOUNT", "ORDER_DATE", "CREATED_TS", "STATUS", "QTY", "LINE_SEQ"]


def dbz_sample(tmp_path, rows=200, *options):
    out = tmp_path / "dbz.json"
    args = ["generate", "--format", "debezium", "--rows", str(rows), "--table-width", "8",
            "-o", str(out)]
    for o in options:
        args += ["--option", o]
    assert cli.main(args) == 0
    return str(out), str(out) + ".catalog.json"


def test_debezium_generate_inspect_decode(tmp_path, capsys):
    import collections

    import pyarrow.parquet as pq
    path, cat_path = dbz_sample(tmp_path)
    assert "wrote 200 records" in capsys.readouterr().out
    cat = cdcfast.Catalog.load(cat_path)
    assert [t.name for t in cat.tables] == ["GEN.TABLE_1"]
    assert [c.name for c in cat.tables[0].columns] == DBZ_COLUMNS
    # what generate wrote: 200 change events between BEGIN/END transaction documents
    evs, _ = cdcfast.encode.events("debezium", 200, table_width=8)
    data_evs = [e for e in evs if e["op"] in ("c", "u", "d", "r")]
    ops = collections.Counter(e["op"] for e in evs)
    assert len(data_evs) == 200 and ops["begin"] == ops["commit"] > 0

    assert cli.main(["inspect", path, "--format", "debezium"]) == 0
    text = capsys.readouterr().out
    assert text.startswith(f"{len(evs):,} records in 1 input(s), format debezium\n")
    line = next(ln for ln in text.splitlines() if ln.startswith("GEN.TABLE_1 "))
    assert line.split() == ["GEN.TABLE_1", "200", f"{ops['c']:,}", "/", f"{ops['u']:,}", "/",
                            f"{ops['d']:,}", "/", f"{ops['r']:,}", "0"]
    line = next(ln for ln in text.splitlines() if ln.startswith("(control events) "))
    n = ops["begin"] + ops["commit"]
    assert line.split()[2:] == [f"{n:,}", "0", "/", "0", "/", "0", "/", f"{n:,}", "0"]
    assert "(unattributable)" not in text
    assert f"ops: c {ops['c']:,}, u {ops['u']:,}, d {ops['d']:,}, r {ops['r']:,}, " \
           f"begin {ops['begin']:,}, commit {ops['commit']:,}\n" in text
    times = [e["commit_ts"] for e in evs]
    assert f"commit time: {min(times)} … {max(times)}\n" in text
    assert "errors: 0\n" in text

    want = cdcfast.decode(path, format="debezium", catalog=cat)
    assert want.num_rows == 200 and want.column("_error").null_count == 200
    assert want.column("op").to_pylist() == [e["op"] for e in data_evs]
    assert want.column("txid").to_pylist() == [e["txid"] for e in data_evs]
    assert want.column("seq").to_pylist() == [e["seq"] for e in data_evs]
    assert want.column("before").to_pylist() == [e["before"] for e in data_evs]
    assert want.column("after").to_pylist() == [e["after"] for e in data_evs]
    assert cli.main(["decode", path, "--format", "debezium", "--catalog", cat_path,
                     "-o", str(tmp_path / "out")]) == 0
    assert "GEN.TABLE_1: 200 events" in capsys.readouterr().out
    assert os.listdir(tmp_path / "out") == ["GEN.TABLE_1.parquet"]   # no control events
    got = pq.read_table(tmp_path / "out" / "GEN.TABLE_1.parquet")
    assert got.schema.equals(want.schema) and got.equals(want)
    after = got.schema.field("after").type
    assert str(after.field("AMOUNT").type) == "decimal128(11, 2)"
    assert str(after.field("ORDER_DATE").type) == "date32[day]"
    assert str(after.field("CREATED_TS").type) == "timestamp[us]"
    assert cli.main(["decode", path, "--format", "debezium", "--catalog", cat_path,
                     "--table", "GEN.TABLE_1", "--option", "decimal_handling=precise",
                     "--option", "time_precision=adaptive",
                     "-o", str(tmp_path / "one.parquet")]) == 0
    assert pq.read_table(tmp_path / "one.parquet").equals(want)


def test_debezium_connector_options(tmp_path, capsys):
    """decimal.handling.mode and time.precision.mode: the generator writes with them and
    decode reads with them, both through --option."""
    import pyarrow.parquet as pq
    opts = ["decimal_handling=string", "time_precision=connect"]
    path, cat_path = dbz_sample(tmp_path, 150, *opts)
    with open(path, "rb") as f:
        assert b'"AMOUNT":"' in f.read()      # decimal text, not base64: in quotes with a dot
    cat = cdcfast.Catalog.load(cat_path)
    want = cdcfast.decode(path, format="debezium", catalog=cat, decimal_handling="string",
                          time_precision="connect")
    assert want.num_rows == 150 and want.column("_error").null_count == 150
    evs, _ = cdcfast.encode.events("debezium", 150, table_width=8, decimal_handling="string",
                                   time_precision="connect")
    assert want.column("after").to_pylist() == [e["after"] for e in evs
                                                if e["op"] in ("c", "u", "d", "r")]
    base = ["decode", path, "--format", "debezium", "--catalog", cat_path,
            "--table", "GEN.TABLE_1"]
    args = base + [a for o in opts for a in ("--option", o)]
    assert cli.main(args + ["-o", str(tmp_path / "s.parquet")]) == 0
    assert pq.read_table(tmp_path / "s.parquet").equals(want)
    # the catalog generate wrote carries the options: decode uses them by itself
    assert cli.main(base + ["-o", str(tmp_path / "c.parquet")]) == 0
    assert pq.read_table(tmp_path / "c.parquet").equals(want)
    # read with the defaults (base64 decimals) the decimal text is an error on the row
    assert cli.main(base + ["--option", "decimal_handling=precise", "--option",
                            "time_precision=adaptive", "-o", str(tmp_path / "d.parquet")]) == 0
    errors = pq.read_table(tmp_path / "d.parquet").column("_error").drop_null().to_pylist()
    assert errors and all(e.startswith("after.AMOUNT: ") or e.startswith("before.AMOUNT: ")
                          for e in errors)
    capsys.readouterr()
    assert cli.main(base + ["--option", "decimal_handling=exact", "-o",
                            str(tmp_path / "x.pq")]) == cli.USAGE
    assert "decimal_handling must be one of precise, string, double, not 'exact'" in \
        capsys.readouterr().err


def test_debezium_decode_without_catalog_reads_embedded_schemas(tmp_path, capsys):
    import pyarrow.parquet as pq
    path, _ = dbz_sample(tmp_path, 60, "schemas=true")
    with open(path, "rb") as f:
        assert f.read(11) == b'{"schema":{'
    want = cdcfast.decode(path, format="debezium")
    assert want.num_rows == 60 and want.column("_error").null_count == 60
    assert [f.name for f in want.schema.field("after").type] == DBZ_COLUMNS
    assert cli.main(["decode", path, "--format", "debezium", "-o", str(tmp_path / "o")]) == 0
    assert pq.read_table(tmp_path / "o" / "GEN.TABLE_1.parquet").equals(want)


def test_debezium_inspect_counts_corrupt_documents(tmp_path, capsys):
    path, _ = dbz_sample(tmp_path, 50)
    with open(path, "ab") as f:
        f.write(b'{"op":"c","after":{"ID":1},\n')
    capsys.readouterr()
    assert cli.main(["inspect", path, "--format", "debezium"]) == 0
    text = capsys.readouterr().out
    line = next(ln for ln in text.splitlines() if ln.startswith("(unattributable) "))
    assert line.split()[1:] == ["1", "0", "/", "0", "/", "0", "/", "1", "1"]
    assert ", (none) 1\n" in text and "errors: 1 (first: " in text


def test_bench_debezium_prints_every_contender(tmp_path, capsys):
    js = tmp_path / "b.json"
    assert cli.main(["bench", "--format", "debezium", "--size", "1", "--reference-size",
                     "0.5", "--repeat", "1", "--quick", "--json", str(js)]) == 0
    text = capsys.readouterr().out
    names = ["cdcfast", "reference (pure Python)", "pyarrow.json", "json.loads + from_pylist"]
    if importlib.util.find_spec("msgspec") is not None:
        names.append("msgspec + from_pylist")
    for name in names:
        assert re.search(rf"^{re.escape(name)} +[0-9.]+ +[0-9,]+", text, re.M), name
    assert re.search(r"^headers\(\) .*: [0-9.]+ MB/s", text, re.M)
    assert "DECIMAL(11,2), DATE, TIMESTAMP," in text and "MicroTimestamp" in text
    res = json.loads(js.read_text())
    assert set(res["tools"]) == set(names)
    assert all(r["mb_s"] > 0 and r["rows_s"] > 0 for r in res["tools"].values())
    assert {"DECIMAL(11,2)", "DATE", "TIMESTAMP"} <= set(res["columns"])


# -- olr ---------------------------------------------------------------------------------------
def test_olr_generate_inspect_decode(tmp_path, capsys):
    import collections

    import pyarrow.parquet as pq
    out = tmp_path / "olr.json"
    assert cli.main(["generate", "--format", "olr", "--rows", "300", "--table-width", "8",
                     "--option", "checkpoints=true", "-o", str(out)]) == 0
    path, cat_path = str(out), str(out) + ".catalog.json"
    assert "wrote 300 records" in capsys.readouterr().out
    evs, cat = cdcfast.encode.events("olr", 300, table_width=8, checkpoints=True)
    ops = collections.Counter(e["op"] for e in evs)
    assert ops["c"] + ops["u"] + ops["d"] == 300 and ops["begin"] == ops["commit"] > 0
    assert cli.main(["inspect", path, "--format", "olr"]) == 0
    text = capsys.readouterr().out
    assert text.startswith(f"{len(evs):,} records in 1 input(s), format olr\n")
    line = next(ln for ln in text.splitlines() if ln.startswith("OLR_TEST.TABLE_1 "))
    assert line.split() == ["OLR_TEST.TABLE_1", "300", f"{ops['c']:,}", "/", f"{ops['u']:,}",
                            "/", f"{ops['d']:,}", "/", "0", "0"]
    assert f"begin {ops['begin']:,}, commit {ops['commit']:,}, " \
           f"checkpoint {ops['checkpoint']:,}\n" in text and "errors: 0\n" in text
    want = cdcfast.decode(path, format="olr", catalog=cat)
    assert want.column("after").to_pylist() == [e["after"] for e in evs
                                                 if e["op"] in ("c", "u", "d")]
    assert cli.main(["decode", path, "--format", "olr", "--catalog", cat_path,
                     "--table", "OLR_TEST.TABLE_1", "--option", "epoch_unit=s",
                     "-o", str(tmp_path / "one.parquet")]) == 0
    got = pq.read_table(tmp_path / "one.parquet")
    assert got.equals(want)
    assert str(got.schema.field("after").type.field("ORDER_DATE").type) == "timestamp[us]"


# -- qlik --------------------------------------------------------------------------------------
def qlik_sample(tmp_path, rows=300, *options, tables=2):
    out = tmp_path / "qlik.json"
    args = ["generate", "--format", "qlik", "--rows", str(rows), "--table-width", "8",
            "--tables", str(tables), "-o", str(out)]
    for o in options:
        args += ["--option", o]
    assert cli.main(args) == 0
    return str(out), str(out) + ".catalog.json"


def test_qlik_generate_inspect_decode(tmp_path, capsys):
    """Two tables in one Kafka-form stream: each table's metadata message names it (and
    types it without a catalog); inspect counts the data messages, decode writes a Parquet
    file per table, the same with the generated catalog or one from Catalog.from_qlik."""
    import collections

    import pyarrow.parquet as pq
    path, cat_path = qlik_sample(tmp_path)
    assert "wrote 300 records" in capsys.readouterr().out
    evs, cat = cdcfast.encode.events("qlik", 300, table_width=8, tables=2)
    assert cdcfast.Catalog.load(cat_path).to_dict() == cat.to_dict()
    with open(path, "rb") as f:
        data = f.read()
    assert data.count(b'"type":"MD"') == 2
    ops = collections.Counter((f"{e['schema']}.{e['table']}", e["op"]) for e in evs)
    assert cli.main(["inspect", path, "--format", "qlik"]) == 0
    text = capsys.readouterr().out
    assert text.startswith("300 records in 1 input(s), format qlik\n")  # MD: no records
    for t in ("GEN.TABLE_1", "GEN.TABLE_2"):
        line = next(ln for ln in text.splitlines() if ln.startswith(f"{t} "))
        n = sum(ops[(t, o)] for o in "cudr")
        assert line.split() == [t, f"{n:,}", f"{ops[(t, 'c')]:,}", "/", f"{ops[(t, 'u')]:,}",
                                "/", f"{ops[(t, 'd')]:,}", "/", f"{ops[(t, 'r')]:,}", "0"]
    times = [e["commit_ts"] for e in evs if e["commit_ts"] is not None]   # REFRESH: none
    assert f"commit time: {min(times)} … {max(times)}\n" in text and "errors: 0\n" in text
    want = cdcfast.decode_tables(path, format="qlik", catalog=cat)
    assert {k: v.num_rows for k, v in want.items()} == \
        {t: sum(ops[(t, o)] for o in "cudr") for t in ("GEN.TABLE_1", "GEN.TABLE_2")}
    assert cli.main(["decode", path, "--format", "qlik", "--catalog", cat_path,
                     "-o", str(tmp_path / "out")]) == 0
    assert "GEN.TABLE_1: " in capsys.readouterr().out
    assert sorted(os.listdir(tmp_path / "out")) == ["GEN.TABLE_1.parquet",
                                                    "GEN.TABLE_2.parquet"]
    for key, table in want.items():
        got = pq.read_table(tmp_path / "out" / f"{key}.parquet")
        assert got.equals(table)
        assert got.column("after").to_pylist() == \
            [e["after"] for e in evs if f"{e['schema']}.{e['table']}" == key]
    # without a catalog the metadata messages type the tables, as Catalog.from_qlik does
    from_md = tmp_path / "from_md.json"
    cdcfast.Catalog.from_qlik(data).save(str(from_md))
    assert cli.main(["decode", path, "--format", "qlik", "-o", str(tmp_path / "md")]) == 0
    assert cli.main(["decode", path, "--format", "qlik", "--catalog", str(from_md),
                     "-o", str(tmp_path / "fq")]) == 0
    for key, table in want.items():
        assert pq.read_table(tmp_path / "md" / f"{key}.parquet").equals(table)
        assert pq.read_table(tmp_path / "fq" / f"{key}.parquet").equals(table)


def test_qlik_without_metadata_needs_a_table(tmp_path, capsys):
    """A Kafka-form stream without metadata messages (md=false) names no table: decode with
    --table reads it; without one every record is unattributable (_corrupt.parquet)."""
    import pyarrow.parquet as pq
    path, cat_path = qlik_sample(tmp_path, 120, "md=false", tables=1)
    with open(path, "rb") as f:
        assert b'"type":"MD"' not in f.read()
    cat = cdcfast.Catalog.load(cat_path)
    want = cdcfast.decode(path, format="qlik", catalog=cat, table="GEN.TABLE_1")
    assert want.num_rows == 120 and want.column("_error").null_count == 120
    assert cli.main(["decode", path, "--format", "qlik", "--catalog", cat_path,
                     "--table", "GEN.TABLE_1", "-o", str(tmp_path / "one.parquet")]) == 0
    assert pq.read_table(tmp_path / "one.parquet").equals(want)
    capsys.readouterr()
    assert cli.main(["inspect", path, "--format", "qlik"]) == 0
    text = capsys.readouterr().out
    # headers() lists messages that name no table with their fields and no error
    line = next(ln for ln in text.splitlines() if ln.startswith("(no table named) "))
    assert line.split()[3] == "120" and line.split()[-1] == "0"
    # without --table nothing names the records' table: nothing decoded (exit 4), and the
    # first problem says what to pass; what was read is there to look at
    assert cli.main(["decode", path, "--format", "qlik", "--catalog", cat_path,
                     "-o", str(tmp_path / "none")]) == cli.NOTHING_DECODED
    assert "pass table=…" in capsys.readouterr().err
    # the catalog's table has its (empty) file, the unattributable records theirs
    assert sorted(os.listdir(tmp_path / "none")) == ["GEN.TABLE_1.parquet", "_corrupt.parquet"]
    assert pq.read_table(tmp_path / "none" / "GEN.TABLE_1.parquet").num_rows == 0
    corrupt = pq.read_table(tmp_path / "none" / "_corrupt.parquet")
    assert corrupt.num_rows == 120 and corrupt.column("_error").null_count == 0
    assert "before" not in corrupt.column_names       # no table: images without columns


def test_qlik_decode_through_spark(spark, tmp_path, capsys):
    path, cat_path = qlik_sample(tmp_path, 200)
    assert cli.main(["decode", path, "--format", "qlik", "--catalog", cat_path,
                     "-o", str(tmp_path / "sp"), "--spark"]) == 0
    want = cdcfast.decode_tables(path, format="qlik", catalog=cdcfast.Catalog.load(cat_path))
    for key, table in want.items():
        got = spark.read.parquet(str(tmp_path / "sp" / key))
        assert got.count() == table.num_rows > 50
        assert sorted(r.change_pos for r in got.select("change_pos").collect()
                      if r.change_pos is not None) == \
            sorted(p for p in table.column("change_pos").to_pylist() if p is not None)


# -- apply ---------------------------------------------------------------------------------------
def test_apply_to_delta(tmp_path, capsys, monkeypatch):
    """`cdcfast apply` decodes one table's events and applies them to a Delta table: the
    table's rows are cdcfast.apply_changes's, the summary counts them and names the mark, and
    a second run applies nothing and commits nothing."""
    from deltalake import DeltaTable
    from cdcfast.apply import position_text
    from cdcfast.delta import position
    path, cat = sample(tmp_path)
    table = "SALES.ORDERS_1"
    events = cdcfast.decode(path, format="ibm-delimited", catalog=cdcfast.Catalog.load(cat),
                            table=table)
    want = cdcfast.apply_changes(events).sort_by("ORDER_ID")
    uri = str(tmp_path / "lake" / "orders")
    monkeypatch.setattr(cli, "PROGRESS_BYTES", 1000)
    capsys.readouterr()
    args = ["apply", path, "--format", "ibm-delimited", "--catalog", cat, "--table", table,
            "--delta", uri]
    assert cli.main(args) == 0
    out, err = capsys.readouterr()
    assert "decoding" in err                            # the progress bar
    got = DeltaTable(uri).to_pyarrow_table().sort_by("ORDER_ID")
    assert got.equals(want.replace_schema_metadata(None)) and got.num_rows > 100
    n = events.num_rows
    deletes = events.column("op").to_pylist().count("d")
    mark = position_text(position(uri))
    assert mark == want.schema.metadata[b"cdcfast.position"].decode()
    assert f"applied {n:,} of {n:,} events ({deletes:,} deletes, 0 truncates); skipped 0 (0 " \
        f"with errors, 0 without a key, 0 replays); high-water mark {mark}" in out
    assert f"{uri}: version 1 (one MERGE)" in out
    assert cli.main(args + ["--quiet"]) == 0
    out, err = capsys.readouterr()
    assert "decoding" not in err
    assert f"applied 0 of {n:,} events (0 deletes, 0 truncates); skipped {n:,} (0 with " \
        f"errors, 0 without a key, {n:,} replays); high-water mark {mark}" in out
    assert f"{uri}: nothing to apply: no commit" in out
    assert DeltaTable(uri).version() == 1
    # --key names the key when the catalog does not, or another one
    assert cli.main(args[:-2] + ["--key", "ORDER_ID", "--delta", str(tmp_path / "k")]) == 0
    assert DeltaTable(str(tmp_path / "k")).to_pyarrow_table().num_rows == got.num_rows


def test_apply_says_what_it_cannot_do(tmp_path, capsys):
    path, cat = sample(tmp_path, rows=300)
    from deltalake import DeltaTable
    base = ["apply", path, "--format", "ibm-delimited", "--catalog", cat]
    uri = str(tmp_path / "t")
    capsys.readouterr()
    hist = str(tmp_path / "hist")                       # --scd 2 builds; then 1 is refused
    assert cli.main(base + ["--table", "SALES.ORDERS_1", "--scd", "2", "--delta", hist]) == 0
    capsys.readouterr()
    assert cli.main(base + ["--table", "SALES.ORDERS_1", "--delta", hist]) != 0
    assert "holds versions" in capsys.readouterr().err and DeltaTable(hist).version() == 1
    assert cli.main(base + ["--table", "NOPE.NOPE", "--delta", uri]) == 2
    assert "table 'NOPE.NOPE' is neither in the catalog nor in the input" in \
        capsys.readouterr().err
    with pytest.raises(SystemExit) as e:                # --table is required
        cli.main(base + ["--delta", uri])
    assert e.value.code == 2 and "--table" in capsys.readouterr().err
    assert cli.main(base + ["--table", "SALES.ORDERS_1", "--key", "NOPE", "--delta", uri]) == 2
    assert "key column(s) NOPE not among the table's columns" in capsys.readouterr().err
    assert cli.main(base + ["--table", "SALES.ORDERS_1", "--delta", path]) == 2
    assert "is a file" in capsys.readouterr().err
    assert not os.path.exists(uri)
    bad = tmp_path / "bad" / "_delta_log"               # not a Delta log
    bad.mkdir(parents=True)
    (bad / f"{0:020d}.json").write_text("garbage\n")
    assert cli.main(base + ["--table", "SALES.ORDERS_1", "--delta", str(bad.parent)]) == \
        cli.DELTA_FAILED
    assert "cdcfast apply: error:" in capsys.readouterr().err


def test_decode_and_bench_threads(tmp_path, capsys, monkeypatch):
    """--threads: decode gives the Parquet of one thread (the input cut in many pieces here);
    bench --threads adds the threaded figures."""
    import pyarrow.parquet as pq
    from cdcfast import pieces
    monkeypatch.setattr(pieces, "PARALLEL_MIN", 16 << 10)
    monkeypatch.setattr(pieces, "piece_bytes", lambda size, threads: 16 << 10)
    path, cat = sample(tmp_path)
    for n in ("1", "3"):
        assert cli.main(["decode", path, "--format", "ibm-delimited", "--catalog", cat,
                         "--threads", n, "--quiet", "-o", str(tmp_path / f"out{n}")]) == 0
    for f in (tmp_path / "out1").iterdir():
        assert pq.read_table(f).equals(pq.read_table(tmp_path / "out3" / f.name))
    js = tmp_path / "b.json"
    assert cli.main(["bench", "--size", "1", "--reference-size", "0.2", "--repeat", "1",
                     "--quick", "--threads", "2", "--json", str(js)]) == 0
    t = json.loads(js.read_text())["threads"]
    assert set(t["tools"]) == {"cdcfast threads=1", "cdcfast threads=2",
                               "pyarrow.csv typed, threaded"}
    assert t["scaling"] > 0 and t["margin"] > 0
    assert "scaling" in capsys.readouterr().out
