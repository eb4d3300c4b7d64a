"""The command line as a new user meets it: one line and a documented exit code for every
ordinary mistake, counts on every run, outputs that are all or nothing, file names the input
cannot choose, the same Parquet through --spark as without it."""
import json
import os
import re

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import cdcfast
from cdcfast import cli
from cdcfast.filenames import MAX_ENCODED, safe_name, table_name


@pytest.fixture(scope="module")
def ibm(tmp_path_factory):
    """A generated ibm-delimited file of two tables and its catalog."""
    d = tmp_path_factory.mktemp("ibm")
    out = d / "s.del"
    assert cli.main(["generate", "--format", "ibm-delimited", "--rows", "600", "--tables", "2",
                     "--table-width", "20", "-o", str(out)]) == 0
    return d, str(out), str(out) + ".catalog.json"


def run(capsys, *argv):
    """(exit code, stdout, stderr) of `cdcfast argv`."""
    capsys.readouterr()
    try:
        code = cli.main([str(a) for a in argv])
    except SystemExit as e:         # argparse's own exits (--help, --version, usage errors)
        code = e.code
    out, err = capsys.readouterr()
    return code, out, err


def one_line(err: str) -> str:
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    assert "Traceback" not in err
    return lines[0]


# -- ordinary mistakes -------------------------------------------------------------------------
def test_ordinary_mistakes_are_one_line_and_an_exit_code(ibm, tmp_path, capsys):
    d, path, cat = ibm
    bad_json = tmp_path / "bad.json"
    bad_json.write_text('{"tables": [\n  {"table": "X",, }]}')
    bad_type = tmp_path / "type.json"
    bad_type.write_text(json.dumps({"tables": [{"table": "X", "columns": [
        {"name": "A", "type": "FLUX(3)"}]}]}))
    base = ["decode", path, "--format", "ibm-delimited"]
    cases = [
        (["decode", tmp_path / "nope.del", "--format", "ibm-delimited", "-o", tmp_path / "o"],
         3, "nope.del: no such file"),
        (["decode", tmp_path, "--format", "ibm-delimited", "-o", tmp_path / "o"],
         3, "is a folder, not a file"),
        (["inspect", tmp_path / "nope.del", "--format", "ibm-delimited"], 3, "no such file"),
        (base + ["--catalog", tmp_path / "none.json", "-o", tmp_path / "o"],
         3, "catalog " + str(tmp_path / "none.json") + ": no such file"),
        (base + ["--catalog", tmp_path, "-o", tmp_path / "o"], 3, "is a folder"),
        (base + ["--catalog", bad_json, "-o", tmp_path / "o"],
         3, f"{bad_json}: line 2, column 17: Expecting property name"),
        (base + ["--catalog", bad_type, "-o", tmp_path / "o"],
         3, "table X, column A: unknown type 'FLUX(3)'"),
        (base + ["--option", "colum_delimiter=;", "-o", tmp_path / "o"],
         2, "unknown option colum_delimiter for ibm-delimited (its options: column_delimiter"),
        (base + ["--option", "column_delimiter", "-o", tmp_path / "o"],
         2, "--option takes KEY=VALUE, not 'column_delimiter'"),
        (base + ["--option", "column_delimiter=a", "-o", tmp_path / "o"],
         2, "column_delimiter 'a' is alphanumeric"),
        (base + ["--catalog", cat, "--mode", "FAILFAST", "--option", "column_delimiter=;",
                 "-o", tmp_path / "o"], 1, "(message 0, byte "),
        (["generate", "--format", "lldf", "--rows", "-5", "-o", tmp_path / "x"],
         2, "argument --rows: must be positive, not -5"),
        (base + ["--catalog", cat, "--table", "SALES.ORDERS_0", "-o", d],
         2, "is a folder: with --table, -o names the Parquet file to write"),
        (base + ["--catalog", cat, "-o", path], 2, "is a file: without --table, -o names a "
                                                   "folder"),
        (base + ["--catalog", cat, "--table", "NO.SUCH", "-o", tmp_path / "t.parquet"],
         2, "'NO.SUCH' is neither in the catalog nor in the input"),
        (["decode", "--format", "ibm-delimited"], 2, "the following arguments are required"),
        (["bench", "--size", "-1"], 2, "argument --size: must be positive"),
        (base + ["--catalog", cat, "-o", f"{path}/sub"], 2, "is a file, not a folder"),
    ]
    for argv, code, text in cases:
        got, out, err = run(capsys, *argv)
        line = one_line(err)
        assert got == code, (argv, err)
        assert text in line, (argv, line)
    # FAILFAST names the input and the record
    got, out, err = run(capsys, *base, "--catalog", cat, "--mode", "FAILFAST", "--option",
                        "column_delimiter=;", "-o", tmp_path / "o")
    assert one_line(err).startswith(f"cdcfast decode: error: {path}: ")
    assert not (tmp_path / "o").exists()


def test_output_folders_are_made(ibm, tmp_path, capsys):
    d, path, cat = ibm
    code, out, err = run(capsys, "decode", path, "--format", "ibm-delimited", "--catalog", cat,
                         "--table", "SALES.ORDERS_1", "-o", tmp_path / "a" / "b" / "t.parquet")
    assert code == 0 and pq.read_table(tmp_path / "a" / "b" / "t.parquet").num_rows > 0


def test_debug_shows_the_traceback(ibm, tmp_path):
    d, path, cat = ibm
    with pytest.raises(cli.Failure, match="no such file"):
        cli.main(["inspect", str(tmp_path / "nope"), "--format", "ibm-delimited", "--debug"])
    with pytest.raises(cdcfast.DecodeError):
        cli.main(["decode", path, "--format", "ibm-delimited", "--catalog", cat, "--mode",
                  "FAILFAST", "--option", "column_delimiter=;", "--debug",
                  "-o", str(tmp_path / "o")])
    assert not (tmp_path / "o").exists()


def test_exit_codes_are_documented(capsys):
    code, out, err = run(capsys, "--help")
    assert code == 0
    for c, meaning in cli.EXIT.items():
        assert re.search(rf"^ +{c} +{re.escape(meaning)}$", out, re.M), c
    doc = open(os.path.join(os.path.dirname(__file__), "..", "docs", "cli.md"),
               encoding="utf-8").read()
    for c in cli.EXIT:
        assert re.search(rf"^\| `{c}` \|", doc, re.M), c


# -- nothing decoded ---------------------------------------------------------------------------
@pytest.mark.parametrize("fmt", cdcfast.formats())
def test_random_bytes_decode_nothing_and_say_so(fmt, tmp_path, capsys):
    import random
    rnd = random.Random(7)
    path = tmp_path / "random.bin"
    path.write_bytes(bytes(rnd.randrange(256) for _ in range(20000)))
    code, out, err = run(capsys, "decode", path, "--format", fmt, "-o", tmp_path / "o")
    assert code == cli.NOTHING_DECODED
    assert f"nothing could be decoded as {fmt}: is --format right?" in one_line(err)
    counts = re.search(r"^([0-9,]+) records: 0 events \(0 with errors\), ([0-9,]+) corrupt "
                       r"records, 0 dropped$", out, re.M)
    assert counts and counts.group(1) == counts.group(2) != "0"
    # what could not be decoded is still there to look at
    assert pq.read_table(tmp_path / "o" / "_corrupt.parquet").num_rows == \
        int(counts.group(1).replace(",", ""))
    code, out, err = run(capsys, "inspect", path, "--format", fmt)
    assert code == cli.NOTHING_DECODED and "nothing could be decoded" in one_line(err)
    assert "commit time: (none)" in out


def test_a_file_in_another_format(ibm, tmp_path, capsys):
    d, path, cat = ibm
    code, out, err = run(capsys, "decode", path, "--format", "debezium", "-o", tmp_path / "o")
    assert code == cli.NOTHING_DECODED
    assert "nothing could be decoded as debezium: is --format right? (the first problem: " \
        in one_line(err)


def test_every_run_prints_its_counts(ibm, tmp_path, capsys):
    d, path, cat = ibm
    broken = tmp_path / "broken.del"
    broken.write_bytes(open(path, "rb").read() + b'\n"unterminated\n')
    code, out, err = run(capsys, "decode", broken, "--format", "ibm-delimited", "--catalog",
                         cat, "-o", tmp_path / "o")
    assert code == 0 and err == ""
    assert "601 records: 600 events (0 with errors), 1 corrupt records, 0 dropped" in out
    code, out, err = run(capsys, "decode", broken, "--format", "ibm-delimited", "--catalog",
                         cat, "--mode", "DROPMALFORMED", "-o", tmp_path / "dm")
    assert code == 0 and "601 records: 600 events (0 with errors), 0 corrupt records, " \
        "1 dropped" in out
    assert not (tmp_path / "dm" / "_corrupt.parquet").exists()


# -- file names --------------------------------------------------------------------------------
HOSTILE = ["../PWNED", "..", ".", "a/b", "/etc/passwd", "a\\b", "x\x00y", ".hidden",
           "_corrupt", "Z" * 400, "é%~", "%", "%25", "CON", "a b"]


def test_safe_names():
    assert safe_name("SALES.ORDERS_1") == "SALES.ORDERS_1"
    assert safe_name("../PWNED") == "%2E.%2FPWNED"
    assert safe_name("") == "%"
    assert safe_name("_corrupt") == "%5Fcorrupt"
    assert safe_name("x\x00y") == "x%00y"
    for name in HOSTILE:
        safe = safe_name(name)
        assert "/" not in safe and "\\" not in safe and "\x00" not in safe
        assert safe not in (".", "..") and not safe.startswith((".", "_"))
        assert len(safe) <= MAX_ENCODED
        if len(name) < 60:
            assert table_name(safe) == name
    long = safe_name("Z" * 400)
    assert long != safe_name("Z" * 401) and "~" in long
    with pytest.raises(ValueError, match="shortened"):
        table_name(long)


@given(st.text(max_size=80))
@settings(max_examples=300, deadline=None)
def test_safe_names_are_reversible_and_flat(name):
    safe = safe_name(name)
    assert re.fullmatch(r"[A-Za-z0-9%-][A-Za-z0-9_.%-]*(~[0-9a-f]{16})?", safe)
    assert len(safe) <= MAX_ENCODED
    if "~" in safe:                 # shortened: the full name is in the file's metadata
        assert len(name.encode("utf-8", "surrogatepass")) * 3 > MAX_ENCODED - 17
    else:
        assert table_name(safe) == name


def qlik_message(table, schema=""):
    return json.dumps({"schema": schema, "table": table, "headers": {
        "operation": "INSERT", "changeSequence": "20230911032325000000000000000000001",
        "timestamp": "2023-09-11T03:23:25.000", "transactionId": "AA"},
        "data": {"ID": "1"}})


def test_a_message_never_chooses_where_we_write(tmp_path, capsys):
    evil = tmp_path / "in" / "evil.json"
    evil.parent.mkdir()
    evil.write_text("\n".join(qlik_message(t) for t in HOSTILE) + "\n")
    out = tmp_path / "in" / "out"
    code, text, err = run(capsys, "decode", evil, "--format", "qlik", "-o", out)
    assert code == 0, err
    # nothing outside the output folder, nothing hidden or nested inside it
    assert sorted(os.listdir(tmp_path / "in")) == ["evil.json", "out"]
    assert sorted(os.listdir(tmp_path)) == ["in"]
    files = os.listdir(out)
    assert all(os.path.isfile(out / f) and not f.startswith(".") for f in files)
    tables = {}
    for f in files:
        t = pq.read_table(out / f)
        assert t.schema.metadata[b"cdcfast.table"].decode() == (
            "" if f == "_corrupt.parquet" else t.column("table")[0].as_py())
        tables[t.schema.metadata[b"cdcfast.table"].decode()] = f
    named = {t for t in HOSTILE if t}
    assert named <= set(tables)
    for name in named:
        f = tables[name]
        assert f == safe_name(name) + ".parquet"
        if "~" not in f:
            assert table_name(f[:-len(".parquet")]) == name


# -- all or nothing ----------------------------------------------------------------------------
def test_failfast_leaves_no_partial_output(tmp_path, capsys):
    data, catalog = cdcfast.encode.generate("ibm-delimited", rows=70000, table_width=3)
    path = tmp_path / "big.del"
    path.write_bytes(data + b"\n" + b"x" * 10 + b"\n")      # bad after a whole batch
    cat = tmp_path / "c.json"
    catalog.save(str(cat))
    name = catalog.tables[0].name
    out = tmp_path / "one.parquet"
    out.write_bytes(b"an earlier result")
    code, text, err = run(capsys, "decode", path, "--format", "ibm-delimited", "--catalog", cat,
                          "--table", name, "--mode", "FAILFAST", "-o", out)
    assert code == 1 and "(message 0, byte " in one_line(err)
    assert out.read_bytes() == b"an earlier result"             # untouched
    assert sorted(os.listdir(tmp_path)) == ["big.del", "c.json", "one.parquet"]   # no leftovers
    folder = tmp_path / "tables"
    code, text, err = run(capsys, "decode", path, "--format", "ibm-delimited", "--catalog", cat,
                          "--mode", "FAILFAST", "-o", folder)
    assert code == 1 and not folder.exists()
    assert sorted(os.listdir(tmp_path)) == ["big.del", "c.json", "one.parquet"]
    # PERMISSIVE: the same input writes everything
    code, text, err = run(capsys, "decode", path, "--format", "ibm-delimited", "--catalog", cat,
                          "--table", name, "-o", out)
    assert code == 0 and pq.read_table(out).num_rows == 70001


def test_a_stale_corrupt_file_is_replaced(ibm, tmp_path, capsys):
    d, path, cat = ibm
    out = tmp_path / "o"
    broken = tmp_path / "broken.del"
    broken.write_bytes(open(path, "rb").read() + b'\n"unterminated\n')
    assert run(capsys, "decode", broken, "--format", "ibm-delimited", "--catalog", cat,
               "-o", out)[0] == 0
    assert (out / "_corrupt.parquet").exists()
    assert run(capsys, "decode", path, "--format", "ibm-delimited", "--catalog", cat,
               "-o", out)[0] == 0
    assert sorted(os.listdir(out)) == ["SALES.ORDERS_0.parquet", "SALES.ORDERS_1.parquet"]


def test_empty_input_writes_empty_tables_with_their_schema(ibm, tmp_path, capsys):
    d, path, cat = ibm
    empty = tmp_path / "empty.del"
    empty.write_bytes(b"")
    catalog = cdcfast.Catalog.load(cat)
    dec = cdcfast.Decoder("ibm-delimited", catalog=catalog)
    code, out, err = run(capsys, "decode", empty, "--format", "ibm-delimited", "--catalog", cat,
                         "-o", tmp_path / "o")
    assert code == 0 and "0 records: 0 events" in out
    assert sorted(os.listdir(tmp_path / "o")) == ["SALES.ORDERS_0.parquet",
                                                   "SALES.ORDERS_1.parquet"]
    for t in catalog.tables:
        got = pq.read_table(tmp_path / "o" / f"{t.name}.parquet")
        assert got.num_rows == 0
        assert got.schema.remove_metadata() == dec.schema(t.name).remove_metadata()
    code, out, err = run(capsys, "decode", empty, "--format", "ibm-delimited", "--catalog", cat,
                         "--table", "SALES.ORDERS_1", "-o", tmp_path / "one.parquet")
    assert code == 0
    got = pq.read_table(tmp_path / "one.parquet")
    assert got.num_rows == 0 and got.schema.remove_metadata() == \
        dec.schema("SALES.ORDERS_1").remove_metadata()


# -- the options generate used travel in its catalog --------------------------------------------
def test_generated_options_reach_decode_and_inspect(tmp_path, capsys):
    path = tmp_path / "pipe.del"
    assert run(capsys, "generate", "--format", "ibm-delimited", "--rows", "200",
               "--option", "column_delimiter=|", "-o", path)[0] == 0
    cat = str(path) + ".catalog.json"
    assert json.load(open(cat))["generated"] == {"format": "ibm-delimited",
                                                 "options": {"column_delimiter": "|"}}
    code, out, err = run(capsys, "inspect", path, "--format", "ibm-delimited", "--catalog", cat)
    assert code == 0 and "options recorded in the catalog: column_delimiter=|" in out
    assert "200 records: 200 decoded (0 with errors), 0 corrupt records" in out
    # a recorded option of the wrong kind is a usage error, not a traceback
    bad = tmp_path / "bad.catalog.json"
    d = json.load(open(cat))
    d["generated"]["options"] = {"column_delimiter": ["|"]}
    bad.write_text(json.dumps(d))
    code, out, err = run(capsys, "inspect", path, "--format", "ibm-delimited", "--catalog", bad)
    assert code == cli.USAGE and "column_delimiter" in one_line(err)
    # an explicit --option wins over the recorded one
    code, out, err = run(capsys, "inspect", path, "--format", "ibm-delimited", "--catalog", cat,
                         "--option", "column_delimiter=;")
    assert code == cli.NOTHING_DECODED


def test_lldf_as_the_readme_shows_it(tmp_path, capsys):
    """generate with framing=rdw, then inspect and decode with the written catalog: every
    record, every table, no corrupt ones."""
    path = tmp_path / "log.lldf"
    assert run(capsys, "generate", "--format", "lldf", "--rows", "400", "--tables", "2",
               "--option", "framing=rdw", "--option", "segment_bytes=4000", "-o", path)[0] == 0
    cat = str(path) + ".catalog.json"
    code, out, err = run(capsys, "inspect", path, "--format", "lldf", "--catalog", cat)
    assert code == 0, err
    assert "records: " in out and "0 corrupt records" in out and "D0.S" not in out
    code, out, err = run(capsys, "decode", path, "--format", "lldf", "--catalog", cat,
                         "-o", tmp_path / "o")
    assert code == 0, err
    want = cdcfast.decode_tables(str(path), format="lldf", catalog=cdcfast.Catalog.load(cat),
                                 framing="rdw")
    assert None not in want and len(want) == 2
    assert sorted(os.listdir(tmp_path / "o")) == sorted(f"{k}.parquet" for k in want)
    for key, table in want.items():
        assert pq.read_table(tmp_path / "o" / f"{key}.parquet").num_rows == table.num_rows
    assert sum(t.num_rows for t in want.values()) > 300


# -- small things ------------------------------------------------------------------------------
def test_version(capsys):
    code, out, err = run(capsys, "--version")
    assert code == 0 and out.strip() == f"cdcfast {cdcfast.__version__}"


def test_formats_lists_every_option_from_the_registry(capsys):
    from cdcfast.formats import get
    code, out, err = run(capsys, "formats")
    assert code == 0
    for name in cdcfast.formats():
        cls = get(name)
        assert re.search(rf"^{re.escape(name)}: {re.escape(cls.SUMMARY)}$", out, re.M)
        assert cls.SUMMARY
        assert set(cls.HELP) == set(cls.DEFAULTS), name       # every option has its line
        for opt, kind, default, meaning in cls.option_docs():
            shown = "(none)" if default is None else json.dumps(default)
            assert re.search(rf"^  {opt} +{kind} +default {re.escape(shown)} +"
                             rf"{re.escape(meaning)}$", out, re.M), (name, opt)


def test_every_flag_has_help():
    p = cli.parser()
    command = next(a for a in p._actions if a.dest == "command")
    subs = command.choices
    subs_help = {a.dest: a.help for a in command._choices_actions}
    assert set(subs) == {"decode", "apply", "inspect", "report", "generate", "formats", "bench",
                         "demo"}
    for name, sp in subs.items():
        assert subs_help[name], name                # a line in `cdcfast --help`
        for action in sp._actions:
            assert action.help, (name, action.dest)


def test_inspect_is_aligned_and_names_the_file_of_an_error(ibm, tmp_path, capsys):
    d, path, cat = ibm
    broken = tmp_path / "broken.del"
    broken.write_bytes(b'"unterminated\n')
    code, out, err = run(capsys, "inspect", path, broken, "--format", "ibm-delimited",
                         "--catalog", cat)
    assert code == 0
    lines = out.splitlines()
    table = [ln for ln in lines if ln.startswith(("table ", "SALES.", "(unattributable)"))]
    assert len(table) == 4
    # every column ends at the same place on every line
    ends = [[m.end() for m in re.finditer(r"\S+(?: / \S+)*", ln)] for ln in table]
    assert all(e[-1] == ends[0][-1] for e in ends), out
    assert all(len(ln) == len(table[0]) for ln in table)
    assert f"{path}: 600 records" in out and f"{broken}: 1 records" in out
    assert re.search(rf"^errors: 1 \(first in {re.escape(str(broken))}: ", out, re.M)


def test_spark_sessions_listen_on_loopback_only(spark):
    assert spark.conf.get("spark.driver.bindAddress") == "127.0.0.1"
    assert spark.conf.get("spark.driver.host") == "127.0.0.1"
    assert os.environ.get("SPARK_LOCAL_IP") == "127.0.0.1"
    assert spark.conf.get("spark.ui.enabled") == "false"
    from cdcfast.spark import local_session
    assert local_session() is spark             # the CLI, the demo and the bench reuse it
    # every socket the JVM listens on is a loopback one
    pid = spark.sparkContext._gateway.proc.pid
    inodes = set()
    for fd in os.listdir(f"/proc/{pid}/fd"):
        try:
            link = os.readlink(f"/proc/{pid}/fd/{fd}")
        except OSError:
            continue
        if link.startswith("socket:["):
            inodes.add(link[8:-1])
    listening = []
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        with open(table) as f:
            next(f)
            for line in f:
                cols = line.split()
                if cols[3] == "0A" and cols[9] in inodes:          # LISTEN, the JVM's
                    listening.append(cols[1].split(":")[0])
    assert listening                                # the driver's RPC and block manager at least
    loopback = {"0100007F", "0000000000000000FFFF00000100007F",
                "00000000000000000000000001000000"}
    assert all(a in loopback for a in listening), listening


def test_spark_runs_of_the_cli_are_quiet(tmp_path, ibm):
    """A fresh `cdcfast decode --spark`: its own lines only, not the JVM's banner and logs."""
    import subprocess
    import sys
    d, path, cat = ibm
    res = subprocess.run([sys.executable, "-m", "cdcfast", "decode", path, "--format",
                          "ibm-delimited", "--catalog", cat, "--table", "SALES.ORDERS_0",
                          "--spark", "-o", str(tmp_path / "o")], capture_output=True,
                         text=True, timeout=600, env={**os.environ, "SPARK_LOCAL_IP": ""})
    assert res.returncode == 0, res.stderr
    assert res.stderr == ""
    lines = res.stdout.splitlines()
    assert lines[0].startswith("SALES.ORDERS_0: ") and lines[-1].startswith(
        "decoded through Spark in "), res.stdout
    assert len(lines) == 3


# -- --spark: the same Parquet as the local path ------------------------------------------------
def test_spark_writes_what_the_local_path_writes(spark, ibm, tmp_path, capsys):
    d, path, cat = ibm
    broken = tmp_path / "broken.del"
    broken.write_bytes(open(path, "rb").read() + b'\n"unterminated\n')
    assert run(capsys, "decode", broken, "--format", "ibm-delimited", "--catalog", cat,
               "-o", tmp_path / "local")[0] == 0
    code, out, err = run(capsys, "decode", broken, "--format", "ibm-delimited", "--catalog", cat,
                         "--spark", "-o", tmp_path / "spark")
    assert code == 0, err
    assert "601 records: 600 events (0 with errors), 1 corrupt records" in out
    assert sorted(os.listdir(tmp_path / "spark")) == ["SALES.ORDERS_0", "SALES.ORDERS_1",
                                                       "_corrupt"]
    for f in os.listdir(tmp_path / "local"):
        local = pq.read_table(tmp_path / "local" / f)
        through = pq.read_table(tmp_path / "spark" / f[:-len(".parquet")])
        assert through.schema.remove_metadata() == local.schema.remove_metadata(), f
        assert through.replace_schema_metadata(None).sort_by("seq").equals(
            local.replace_schema_metadata(None).sort_by("seq")), f
    corrupt = pq.read_table(tmp_path / "spark" / "_corrupt")
    assert corrupt.num_rows == 1                    # once, not in every table's output
    assert pa.types.is_timestamp(corrupt.schema.field("commit_ts").type)
    assert spark.conf.get("spark.sql.timeType.enabled", "false") == "false"   # restored


def test_spark_empty_input_and_failures(spark, ibm, tmp_path, capsys):
    d, path, cat = ibm
    empty = tmp_path / "empty.del"
    empty.write_bytes(b"")
    dec = cdcfast.Decoder("ibm-delimited", catalog=cdcfast.Catalog.load(cat))
    code, out, err = run(capsys, "decode", empty, "--format", "ibm-delimited", "--catalog", cat,
                         "--spark", "-o", tmp_path / "e")
    assert code == 0, err
    assert sorted(os.listdir(tmp_path / "e")) == ["SALES.ORDERS_0", "SALES.ORDERS_1"]
    for name in ("SALES.ORDERS_0", "SALES.ORDERS_1"):
        got = pq.read_table(tmp_path / "e" / name)
        assert got.num_rows == 0
        assert got.schema.remove_metadata() == dec.schema(name).remove_metadata()
    # one table, twice into the same folder: replaced, not refused
    for _ in range(2):
        code, out, err = run(capsys, "decode", path, "--format", "ibm-delimited", "--catalog",
                             cat, "--table", "SALES.ORDERS_1", "--spark", "-o", tmp_path / "t1")
        assert code == 0, err
    assert pq.read_table(tmp_path / "t1").num_rows == \
        cdcfast.decode(path, format="ibm-delimited", catalog=cdcfast.Catalog.load(cat),
                       table="SALES.ORDERS_1").num_rows
    # FAILFAST through Spark: the DecodeError's one line, no folder left behind
    code, out, err = run(capsys, "decode", path, "--format", "ibm-delimited", "--catalog", cat,
                         "--mode", "FAILFAST", "--option", "column_delimiter=;", "--spark",
                         "-o", tmp_path / "ff")
    assert code == cli.FAILED_RECORD
    line = one_line(err)
    assert "(message 0, byte " in line and "Java" not in line and "at org." not in line
    assert not (tmp_path / "ff").exists()
    assert not [f for f in os.listdir(tmp_path) if f.startswith(".ff")]
