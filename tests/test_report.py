"""`cdcfast report`: the figures on the page are the ones `decode` gives.

Each figure the page names (`data-k`: events, ops, errors, lag percentiles, positions that go
backwards, replays) is checked against what it should be, computed here straight from
`decode_tables` with pyarrow and numpy — not through the report's own accumulators — on
generated streams of every format with some of their bytes damaged, on real peer output,
and on streams built to go backwards and to replay. The accumulators' bounds (coarser keys
past a cap, folded groups) are tested against exact answers, and what the page quotes of the
input is escaped. The page in a real browser: tests/test_report_browser.py.
"""
from __future__ import annotations

import html.parser
import os
import random

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pytest

import cdcfast
from cdcfast._report import page as page_mod
from cdcfast._report import stats, window
from cdcfast.cli import main
from cdcfast.encode import generate
from conftest import shared_path

FORMATS = ["ibm-delimited", "lldf", "debezium", "olr", "qlik"]
LAGS = {"put_ts": stats.CAPTURE_TIMES["put_ts"],
        "processed_ts": stats.CAPTURE_TIMES["processed_ts"]}


class _Figures(html.parser.HTMLParser):
    """Every element with a data-k: key -> (its text, its data-v)."""

    def __init__(self):
        super().__init__()
        self.got = {}
        self._open = []

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        self._open.append((tag, a.get("data-k"), a.get("data-v"), []))

    def handle_endtag(self, tag):
        while self._open:
            t, k, v, text = self._open.pop()
            if k is not None:
                self.got[k] = ("".join(text), v)
            if self._open:
                self._open[-1][3].extend(text)
            if t == tag:
                break

    def handle_data(self, data):
        if self._open:
            self._open[-1][3].append(data)


def figures(page: str) -> dict:
    p = _Figures()
    p.feed(page)
    return p.got


def damaged(data: bytes, seed: int, n: int = 25) -> bytes:
    """data with n of its digits made letters (values that fail, records that break)."""
    b = bytearray(data)
    r = random.Random(seed)
    digits = [i for i in range(len(b)) if 48 <= b[i] <= 57]
    for i in r.sample(digits, n):
        b[i] = r.choice(b"xZ")
    return bytes(b)


def expected(fmt: str, data, catalog, per_change: bool) -> dict:
    """The page's figures, computed from decode_tables."""
    got = cdcfast.Decoder(fmt, catalog=catalog).decode_tables(data)
    out = {}
    for key, t in got.items():
        k = "" if key is None else key
        out[f"events|{k}"] = t.num_rows
        out[f"errors|{k}"] = t.num_rows - t.column("_error").null_count
        ops = {r["values"]: r["counts"] for r in pc.value_counts(t.column("op")).to_pylist()}
        for o in stats.OPS:
            out[f"ops|{k}|{o}"] = ops.get(o, 0)
        if key is None:
            continue
        ts = t.column("commit_ts").cast(pa.int64())
        pairs = [("commit_ts − change_ts", ts, t.column("change_ts").cast(pa.int64()))]
        src = t.column("source")
        for field, label in LAGS.items():
            if src.type.get_field_index(field) >= 0:
                pairs.append((label, pc.struct_field(src, field).cast(pa.int64()), ts))
        for label, later, earlier in pairs:
            lag = pc.subtract(later, earlier).drop_null()
            if len(lag) and pc.max(pc.abs(lag)).as_py() > 0:
                out[f"lag-p50|{k}|{label}"] = pc.quantile(lag, q=0.5,
                                                          interpolation="lower")[0].as_py()
                out[f"lag-p95|{k}|{label}"] = pc.quantile(lag, q=0.95,
                                                          interpolation="lower")[0].as_py()
        pos = t.column("commit_pos").to_pylist()
        back, last = 0, None
        for p in pos:
            if p is not None:
                back += last is not None and p < last
                last = p
        out[f"backwards|{k}"] = back
        if per_change:
            pairs = [(a, b) for a, b in zip(pos, t.column("change_pos").to_pylist())
                     if b is not None]
            out[f"replays|{k}"] = len(pairs) - len(set(pairs))
    return out


def check(page: str, name: str, want: dict) -> None:
    """Every figure `want` names is on the page, for input `name`, with that value; the
    counts of backwards positions and replays are on it only when not zero."""
    got = figures(page)
    for key, value in want.items():
        kind, rest = key.split("|", 1)
        k = f"{kind}|{name}|{rest}"
        if kind in ("backwards", "replays") and value == 0:
            assert k not in got, k
            continue
        assert k in got, k
        text, raw = got[k]
        if kind.startswith("lag"):
            assert int(raw) == value, k
            assert text == page_mod.duration(value), k
        else:
            assert text == f"{value:,}", k


@pytest.mark.parametrize("fmt", FORMATS)
def test_the_figures_are_decodes(fmt, tmp_path):
    """Three tables, some bytes damaged, read from a file: each table's events, ops, errors,
    lag percentiles, backward positions and replays as decode_tables gives them."""
    data, cat = generate(fmt, 1500, table_width=6, tables=3, seed=7)
    for seed in range(20):
        bad = damaged(data, seed)
        try:
            cdcfast.Decoder(fmt, catalog=cat).decode_tables(bad)
            break
        except ValueError:      # (a damaged name of a table no schema describes)
            continue
    path = tmp_path / f"in.{fmt}"
    path.write_bytes(bad)
    page = cdcfast.report(str(path), format=fmt, catalog=cat)
    want = expected(fmt, bad, cat, fmt != "ibm-delimited")
    assert sum(v for k, v in want.items() if k.startswith("errors|")) > 0
    check(page, str(path), want)
    got = figures(page)
    assert got[f"events|{path}|*"][0] == f"{sum(v for k, v in want.items() if k.startswith('events|') and k != 'events|'):,}"


def test_lags_where_the_format_gives_two_times():
    """ibm-delimited's put time, lldf's change and commit times, Debezium's processing time:
    each shown; OLR's and Qlik's one time: no lag."""
    for fmt, labels in (("ibm-delimited", [LAGS["put_ts"]]),
                        ("lldf", ["commit_ts − change_ts"]),
                        ("debezium", [LAGS["processed_ts"]]), ("olr", []), ("qlik", [])):
        data, cat = generate(fmt, 300, table_width=4, seed=3)
        got = figures(cdcfast.report(data, format=fmt, catalog=cat))
        shown = sorted({k.split("|")[3] for k in got if k.startswith("lag-p50|")})
        assert shown == sorted(labels), fmt


def _lines_replayed(fmt: str):
    """A stream of one table whose middle is sent again: the replayed records repeat their
    positions, and the first of them goes backwards."""
    data, cat = generate(fmt, 400, table_width=4, seed=5)
    lines = data.split(b"\n")
    lines = [x for x in lines if x]
    again = lines[150:190]
    return b"\n".join(lines[:260] + again + lines[260:]) + b"\n", cat


@pytest.mark.parametrize("fmt", ["debezium", "qlik", "olr"])
def test_replays_and_backward_positions(fmt):
    data, cat = _lines_replayed(fmt)
    page = cdcfast.report(data, format=fmt, catalog=cat)
    want = expected(fmt, data, cat, True)
    table = cat.tables[0].name
    assert want[f"replays|{table}"] > 0 and want[f"backwards|{table}"] > 0
    check(page, "input 1 (bytes)", want)


def test_ibm_cannot_tell_replays():
    """ibm-delimited's change position is the commit's: the page says replays cannot be
    told, and counts none."""
    data, cat = generate("ibm-delimited", 200, table_width=4, seed=5)
    page = cdcfast.report(data + data, format="ibm-delimited", catalog=cat)
    assert "Repeated changes cannot be told here" in page
    assert not any(k.startswith("replays|") for k in figures(page))
    assert figures(page)[f"backwards|input 1 (bytes)|{cat.tables[0].name}"][0] == "1"


def test_several_inputs_each_their_own():
    a, cat = generate("qlik", 200, table_width=4, seed=1)
    b, _ = generate("qlik", 300, table_width=4, seed=2)
    page = cdcfast.report(a, b, format="qlik", catalog=cat)
    t = cat.tables[0].name
    got = figures(page)
    assert got[f"events|input 1 (bytes)|{t}"][0] == "200"
    assert got[f"events|input 2 (bytes)|{t}"][0] == "300"


@pytest.mark.parametrize("case", ["basic-crud", "interleaved-transactions", "rollback",
                                  "rac-interleaved", "null-handling"])
def test_real_olr_output(case):
    path = shared_path("peer-data", "olr", case, "output.json")
    page = cdcfast.report(str(path), format="olr")
    data = path.read_bytes()
    check(page, str(path), expected("olr", data, None, True))


@pytest.mark.parametrize("name", ["debezium-data-schema-include.txt",
                                  "debezium-postgres-data-schema-include.txt"])
def test_real_debezium_output(name):
    path = shared_path("peer-data", "debezium", "flink", name)
    data = path.read_bytes()
    cat = cdcfast.Catalog.from_debezium(data)
    page = cdcfast.report(str(path), format="debezium", catalog=cat)
    want = expected("debezium", data, cat, True)
    assert sum(v for k, v in want.items() if k.startswith("events|")) == 16
    check(page, str(path), want)


# -- the accumulators --------------------------------------------------------------------------
def test_count_map_is_exact_under_its_cap_and_coarse_past_it():
    rng = np.random.default_rng(0)
    values = rng.integers(-5_000, 2_000_000, 50_000)
    exact = stats.CountMap(cap=1 << 20)
    coarse = stats.CountMap(cap=1000)
    for chunk in np.array_split(values, 37):
        exact.add(chunk)
        coarse.add(chunk)
    s = np.sort(values)
    for q in (0.0, 0.01, 0.5, 0.95, 1.0):
        want = int(s[int(q * (len(s) - 1))])
        assert exact.quantile(q) == want
        got = coarse.quantile(q)
        assert coarse.scale > 1
        assert want // coarse.scale * coarse.scale == got        # floored to its unit
    assert exact.total == coarse.total == len(values)
    assert exact.scale == 1 and len(coarse.items()[0]) <= 1000


def test_count_maps_merge_at_the_coarser_scale():
    a, b = stats.CountMap(cap=100), stats.CountMap(cap=1 << 20)
    a.add(np.arange(10_000))
    b.add(np.arange(0, 10_000, 7))
    m = a.merged(b)
    assert m.scale == a.scale > 1 and m.total == 10_000 + len(range(0, 10_000, 7))
    keys, counts = m.items()
    assert (np.diff(keys) > 0).all()


def test_groups_fold_to_the_group_by(monkeypatch):
    monkeypatch.setattr(stats, "COMPACT", 50)
    rng = np.random.default_rng(1)
    ids = rng.integers(0, 300, 5000).astype(str)
    ts = rng.integers(0, 10**9, 5000)
    g = stats.Groups(["txid"], "ts")
    for a in range(0, 5000, 333):
        g.add(pa.table({"txid": ids[a:a + 333], "ts": ts[a:a + 333]}))
    got = g.table().sort_by("txid").to_pylist()
    want = pa.table({"txid": ids, "ts": ts}).group_by("txid").aggregate(
        [([], "count_all"), ("ts", "min")]).sort_by("txid").to_pylist()
    assert [(r["txid"], r["count_all"], r["ts"]) for r in got] == \
        [(r["txid"], r["count_all"], r["ts_min"]) for r in want]


def test_error_kinds_leave_out_the_value_and_the_place():
    texts = pa.array([
        "after.SALARY: 'abc' is not DECIMAL(9,2) (message 3, byte 212)",
        "after.SALARY: 'x\\'y' is not DECIMAL(9,2) (message 9, byte 7)",
        "after.ORDER_DATE: X'F2F0F2' is not DATE (message 0, byte 48481)",
        "invalid JSON: unexpected 'x' (message 0, byte 25547)",
        "invalid JSON: unexpected \"'\" (message 0, byte 9407)",
        "unterminated string (message 2, byte 1)",
        "a record without a place",
    ])
    assert stats.error_kinds(texts).to_pylist() == [
        "after.SALARY: … is not DECIMAL(9,2)", "after.SALARY: … is not DECIMAL(9,2)",
        "after.ORDER_DATE: … is not DATE", "invalid JSON: unexpected …",
        "invalid JSON: unexpected …", "unterminated string", "a record without a place"]
    assert stats.split_kind("after.SALARY: … is not DECIMAL(9,2)") == \
        ("after.SALARY", "… is not DECIMAL(9,2)")
    assert stats.split_kind("unterminated string") == ("", "unterminated string")
    assert stats.error_place("x (message 12, byte 345)") == (12, 345)
    from cdcfast.errors import error_text
    assert stats.error_place(error_text("after.X", "'1' is bad", 7, 9)) == (7, 9)
    assert stats.error_place("x") == (None, None)


def test_seconds_floor_before_1970():
    us = pa.array([-1, -1_000_000, -1_000_001, 0, 999_999, None], pa.int64())
    assert stats._floor_div(us, 1_000_000).to_pylist() == [-1, -1, -2, 0, 0, None]


# -- what the page quotes of the input -----------------------------------------------------------
def test_quoted_bytes_are_escaped():
    assert page_mod.shown_bytes(b"<script>\x00\xff\n&", True) == \
        "&lt;script&gt;\\x00\\xff\\n&amp;"
    assert page_mod.shown_bytes(b"ab<c", True, mark=2) == "ab<mark>&lt;</mark>c"
    assert page_mod.shown_bytes(bytes(range(20)), False, start=32, mark=17) == \
        ("00000020  00 01 02 03 04 05 06 07 08 09 0A 0B 0C 0D 0E 0F\n"
         "00000030  10 <mark>11</mark> 12 13")


def test_window_is_the_line_around_the_byte(tmp_path):
    data = b"first line\nsecond <b> line\nthird\n"
    path = tmp_path / "f"
    path.write_bytes(data)
    at = data.index(b"<b>")
    for source in (data, str(path), memoryview(data)):
        got, start, mark = window(source, 0, at, True)
        assert (got, start, mark) == (b"second <b> line", 11, 7)
    assert window([b"m0", b"abc\ndef"], 1, 5, True) == (b"def", 4, 1)
    assert window(pa.array([b"m0", b"xyz"]), 1, 2, True) == (b"xyz", 0, 2)
    assert window(data, 1, 0, True) is None and window(data, 0, 10_000, True) is None
    got, start, mark = window(bytes(range(256)) * 2, 0, 100, False)
    assert start == 80 and got[mark] == 100 and len(got) == 20 + 48


def test_hostile_names_and_bytes_stay_text():
    """A table named like markup and a damaged record: the page shows them, escaped."""
    from cdcfast.encode import encode, events
    ev, cat = events("qlik", 30, table_width=3, seed=4)
    d = cat.to_dict()
    old = d["tables"][0]["table"]
    d["tables"][0]["table"] = name = "<img src=x onerror=alert(1)>"
    renamed = cdcfast.Catalog.from_dict(d)
    data = encode([dict(e, table=name) if e.get("table") == old else e for e in ev], "qlik",
                  catalog=renamed)
    data += b'{"magic": "<script>alert(2)</script>\x01"\n'
    page = cdcfast.report(data, format="qlik", catalog=renamed)
    assert "<img src=x" not in page and "<script>alert" not in page
    assert "&lt;img src=x onerror=alert(1)&gt;" in page
    assert "&lt;script&gt;alert(2)&lt;/script&gt;\\x01" in page


# -- the command -------------------------------------------------------------------------------
def test_the_command_writes_the_page(tmp_path, capsys):
    data, cat = generate("lldf", 500, table_width=5, tables=2, seed=9)
    src = tmp_path / "in.lldf"
    src.write_bytes(damaged(data, 1, 5))
    catalog = tmp_path / "cat.json"
    cat.save(catalog)
    out = tmp_path / "r" / "report.html"
    assert main(["report", str(src), "--format", "lldf", "--catalog", str(catalog), "-o",
                 str(out), "--title", "Orders <feed>"]) == 0
    page = out.read_text(encoding="utf-8")
    assert "<title>Orders &lt;feed&gt;</title>" in page
    assert f"wrote {out}" in capsys.readouterr().out
    check(page, str(src), expected("lldf", src.read_bytes(), cat, True))
    assert not [p for p in os.listdir(out.parent) if p != "report.html"]   # nothing staged left


def test_the_command_refuses_what_it_cannot_do(tmp_path, capsys):
    data, cat = generate("qlik", 50, table_width=3, seed=1)
    src = tmp_path / "in.json"
    src.write_bytes(data + b"{broken\n")
    assert main(["report", str(tmp_path / "missing"), "--format", "qlik", "-o",
                 str(tmp_path / "r.html")]) == 3
    assert main(["report", str(src), "--format", "qlik", "-o", str(tmp_path)]) == 2
    assert main(["report", str(src), "--format", "qlik", "--mode", "FAILFAST", "-o",
                 str(tmp_path / "r.html")]) == 1
    assert not (tmp_path / "r.html").exists()
    err = capsys.readouterr().err
    assert "no such file" in err and "is a folder" in err and "invalid JSON" in err


# -- cdcfast bench --html ----------------------------------------------------------------------
def test_bench_page_draws_each_tool_with_its_ratio(tmp_path, capsys):
    """Two formats in one run: --json holds both results, the page a bar for each tool of
    each, with the ratio the run measured written on it, and the run's table."""
    from cdcfast.bench.html import bars
    js, out = tmp_path / "b.json", tmp_path / "bench.html"
    assert main(["bench", "--format", "qlik", "--format", "lldf", "--size", "1",
                 "--reference-size", "0.2", "--repeat", "1", "--quick", "--json", str(js),
                 "--html", str(out)]) == 0
    import json
    runs = json.loads(js.read_text())
    assert [r["format"] for r in runs] == ["qlik", "lldf"]
    page = out.read_text(encoding="utf-8")
    assert page.count('class="chart"') == 1
    for r in runs:
        drawn = bars(r)
        assert [b[0] for b in drawn] == ["cdcfast"] + sorted(
            (n for n in r["tools"] if n != "cdcfast"), key=lambda n: -r["tools"][n]["mb_s"])
        for tool, mbs, label in drawn:
            assert f"{r['format']}: {tool}" in page
            assert f"{mbs:,.0f} MB/s" + (f" · {label}" if label else "") in page
            if tool != "cdcfast":
                x = r["tools"][tool]["cdcfast_x"]
                assert f"cdcfast is {x:.2f}×" in label or f"cdcfast is {x:.1f}×" in label \
                    or f"cdcfast is {x:.0f}×" in label
    assert "cdcfast bench — qlik" in page and "cdcfast bench — lldf" in page
    assert "generating" not in page


def test_bench_format_all_runs_every_format(monkeypatch, capsys):
    from cdcfast import bench
    seen = []
    monkeypatch.setattr(bench, "run", lambda name, **kw: seen.append(name) or {})
    assert main(["bench", "--format", "all", "--format", "qlik"]) == 0
    assert seen == list(cdcfast.formats())


def test_memory_stays_bounded(monkeypatch):
    """What the report keeps past the batch: count maps capped in distinct keys, groups of
    transactions and positions capped in distinct keys (then the page says from how many
    events it counted). With small caps, a stream of 45,000 events stays within them."""
    import pyarrow as pa
    from cdcfast._report.collect import collect
    monkeypatch.setattr(stats, "COMPACT", 500)
    monkeypatch.setattr(stats, "LIMIT", 3000)
    monkeypatch.setattr(stats, "CAP", 200)
    data, cat = generate("qlik", 45_000, table_width=4, tables=1, seed=2)
    dec = cdcfast.Decoder("qlik", catalog=cat, threads=1)
    before = pa.total_allocated_bytes()
    got = collect(dec, data, batch_size=1024)
    t = got.tables[cat.tables[0].name]
    assert t.events == 45_000
    assert t.positions.full and 3000 < t.positions.table().num_rows <= 2 * 3000 + 1024
    assert t.positions.rows < 45_000
    assert t.txns.table().num_rows <= 2 * 3000 + 1024
    assert all(len(m.items()[0]) <= 200 for m in t.times.values())
    assert all(len(m.items()[0]) <= 200 for m in t.lags.values())
    assert pa.total_allocated_bytes() - before < 2e6
    page = page_mod.Page([got], "qlik", True, lambda *a: None).html()
    assert f"Positions counted over the first {t.positions.rows:,} events only" in page


def test_progress_goes_to_stderr(capsys):
    data, cat = generate("qlik", 300, table_width=3, seed=1)
    cdcfast.report(data, format="qlik", catalog=cat, progress=True)
    err = capsys.readouterr().err
    assert "reading" in err and "events" in err


def test_many_error_kinds_and_columns_stay_a_page(monkeypatch):
    """Past KINDS distinct error kinds a table counts the rest as one; the page lists the
    most frequent MAX_KINDS and draws the first MAX_COLUMNS columns, and says so."""
    monkeypatch.setattr(stats, "KINDS", 5)
    monkeypatch.setattr(page_mod, "MAX_KINDS", 3)
    monkeypatch.setattr(page_mod, "MAX_COLUMNS", 4)
    t = stats.TableStats("T")
    texts = [f"field{i % 8}: 'v' is not INTEGER (message 0, byte {i})" for i in range(40)]
    batch = pa.record_batch({"_error": pa.array(texts),
                             "_corrupt_record": pa.nulls(40, pa.binary())})
    t._errors(batch)
    assert len(t.error_kinds) == 6 and t.error_kinds[stats.OTHER_KINDS] == 15
    assert sum(t.error_kinds.values()) == t.errors == 40
    data, cat = generate("qlik", 60, table_width=9, seed=3)
    page = cdcfast.report(data, format="qlik", catalog=cat)
    assert "The first 4 of 9 columns." in page
    page = page_mod.Page([], "qlik", True, lambda *a: None)
    page.errors("n", "T", t)
    html = "".join(page.parts)
    assert html.count("error-kind|") == 3 and "3 more kinds, 15 records." in html
