"""The command line (SPEC §7: generate, bench, demo) and the README's two commands."""
import json
import os
import re
import subprocess
import sys

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


def test_demo(capsys):
    assert cli.main(["demo", "--rows", "2000"]) == 0
    text = capsys.readouterr().out
    assert "native kernels: True" in text and "decoded 2,000 events" in text


def test_python_dash_m():
    out = subprocess.run([sys.executable, "-m", "cdcfast", "--help"], capture_output=True,
                         text=True)
    assert out.returncode == 0 and "generate" in out.stdout and "bench" in out.stdout


def test_readme_commands_are_what_ci_runs():
    readme = open(os.path.join(ROOT, "README.md"), encoding="utf-8").read()
    blocks = re.findall(r"```bash\n(.*?)\n```", readme, re.S)
    assert blocks[0] == "python -m pip install -e . && python -m cdcfast demo"
    script = open(os.path.join(ROOT, "ci", "test.sh"), encoding="utf-8").read()
    assert blocks[1] in script.splitlines()
    assert "ci/test.sh" in open(os.path.join(ROOT, ".ci", "run"), encoding="utf-8").read()
