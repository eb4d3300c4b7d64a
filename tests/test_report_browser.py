"""The report in a real browser: headless Chromium renders the page, a screenshot shows every
chart drawn (the region where each chart lies is not blank), the browser logs no console
message, and the figures it renders are the ones `decode` gives.

Chromium comes from Debian's `chromium` package: ci/test.sh installs it in CI, where
CDCFAST_REQUIRE_BROWSER=1 makes its absence a failure; elsewhere these tests skip without it.
The checker is itself tested: a page with a blank chart and a page with a script error are
both caught.
"""
from __future__ import annotations

import json
import os
import re
import shutil
import subprocess

import numpy as np
import pytest

import cdcfast
from cdcfast.encode import generate
from test_report import damaged, expected, figures

WIDTH = 1100
# Chromium's own network and first-run chatter off; nothing it loads leaves the file
FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
         "--no-first-run", "--disable-extensions", "--disable-background-networking",
         "--disable-sync", "--disable-component-update", "--mute-audio",
         "--host-resolver-rules=MAP * ~NOTFOUND", "--enable-logging=stderr", "--v=0"]
# (a script the layout run adds: each chart's place and the page's height, as JSON)
_LAYOUT = """<script>addEventListener("load", () => {
  const r = e => { const b = e.getBoundingClientRect();
    return [b.left + scrollX, b.top + scrollY, b.width, b.height]; };
  document.getElementById("cdcfast-layout").textContent = JSON.stringify({
    height: document.documentElement.scrollHeight,
    charts: [...document.querySelectorAll("svg.chart")].map(r)});
});</script><pre id="cdcfast-layout"></pre>"""


def browser() -> str:
    for name in ("chromium", "chromium-browser", "google-chrome", "chrome"):
        path = shutil.which(name)
        if path:
            return path
    reason = "needs Chromium (Debian's chromium package; ci/test.sh installs it in CI)"
    if os.environ.get("CDCFAST_REQUIRE_BROWSER", "") not in ("", "0"):
        pytest.fail(f"{reason}: CDCFAST_REQUIRE_BROWSER is set", pytrace=False)
    pytest.skip(reason)


def _run(args, tmp_path) -> subprocess.CompletedProcess:
    env = dict(os.environ, HOME=str(tmp_path))         # (its profile: the test's folder)
    return subprocess.run([browser(), *FLAGS, f"--user-data-dir={tmp_path / 'profile'}",
                           *args], capture_output=True, text=True, timeout=120, env=env)


def _console(stderr: str) -> list:
    return [line for line in stderr.splitlines() if ":CONSOLE" in line]


def render(page: str, tmp_path) -> dict:
    """The page in Chromium: its DOM after load, each chart's place, a full-page screenshot
    (an RGB array) and the console messages of both runs."""
    path = tmp_path / "report.html"
    path.write_text(page, encoding="utf-8")
    probe = tmp_path / "layout.html"
    probe.write_text(page.replace("</body>", _LAYOUT + "</body>"), encoding="utf-8")
    dom = _run(["--dump-dom", f"--window-size={WIDTH},900", probe.as_uri()], tmp_path)
    got = re.search(r'<pre id="cdcfast-layout">([^<]*)</pre>', dom.stdout)
    assert got and got.group(1), dom.stderr[-2000:]
    layout = json.loads(got.group(1))
    shot = tmp_path / "shot.png"
    run = _run([f"--screenshot={shot}", f"--window-size={WIDTH},{layout['height']}",
                path.as_uri()], tmp_path)
    assert shot.exists(), run.stderr[-2000:]
    from matplotlib.image import imread
    pixels = imread(str(shot))[..., :3]
    return {"dom": dom.stdout, "charts": layout["charts"], "pixels": pixels,
            "console": _console(dom.stderr) + _console(run.stderr)}


def blank_charts(shown: dict) -> list:
    """The charts whose region of the screenshot is (nearly) all one colour."""
    img = shown["pixels"]
    blank = []
    for i, (x, y, w, h) in enumerate(shown["charts"]):
        x0, y0 = int(x), int(y)
        region = img[y0:y0 + int(h), x0:x0 + int(w)]
        inked = np.abs(region - region[0, 0]).sum(axis=2) > 0.1
        if region.size == 0 or inked.mean() < 0.02:
            blank.append(i)
    return blank


def _page(fmt="lldf"):
    data, cat = generate(fmt, 800, table_width=6, tables=2, seed=11)
    bad = damaged(data, 2, 8)
    return cdcfast.report(bad, format=fmt, catalog=cat), bad, cat


def test_every_chart_draws_and_the_console_stays_quiet(tmp_path):
    page, data, cat = _page()
    shown = render(page, tmp_path)
    # all tables: time, transactions, lag; each of two tables: those and its columns
    assert len(shown["charts"]) == 3 + 2 * 4
    assert all(w > 300 and h > 80 for _, _, w, h in shown["charts"])
    assert blank_charts(shown) == []
    assert shown["console"] == []
    # the figures the browser shows are decode's
    got = figures(shown["dom"])
    want = expected("lldf", data, cat, True)
    for key, value in want.items():
        kind, rest = key.split("|", 1)
        k = f"{kind}|input 1 (bytes)|{rest}"
        if kind in ("ops", "events", "errors"):
            assert got[k][0] == f"{value:,}", k
        elif kind == "lag-p50":
            assert int(got[k][1]) == value, k


def test_the_page_fetches_nothing():
    page, _, _ = _page("qlik")
    # (the charts' references within the page, href="#…" and url(#…), are no fetch)
    assert not re.search(r"\b(?:src|href)\s*=\s*[\"'](?!#)|url\((?!#)|@import|<script|<link|"
                         r"<iframe|<object|<embed", page)
    assert re.search(r'href="#', page)
    # the only addresses are the SVG and XLink namespaces
    assert set(re.findall(r"https?://[^\s\"'<>]+", page)) <= {
        "http://www.w3.org/2000/svg", "http://www.w3.org/1999/xlink"}


def test_the_checker_sees_a_blank_chart_and_a_console_error(tmp_path):
    page, _, _ = _page("qlik")
    first = re.search(r"<svg[^>]*class=\"chart\"[^>]*>.*?</svg>", page, re.S)
    emptied = page[:first.start()] + \
        '<svg class="chart" viewBox="0 0 500 200" xmlns="http://www.w3.org/2000/svg"></svg>' + \
        page[first.end():]
    broken = emptied.replace("</body>", "<script>no_such_function();</script>"
                                        '<img src="missing.png"></body>')
    shown = render(broken, tmp_path)
    assert blank_charts(shown) == [0]
    assert any("no_such_function" in line for line in shown["console"])


def test_the_bench_page_draws(tmp_path):
    from cdcfast.bench.html import page
    run = {"format": "qlik", "input_mb": 100.0, "rows": 61167,
           "tools": {"cdcfast": {"mb_s": 650.0, "input_mb": 100.0, "cdcfast_x": 1.0},
                     "pyarrow.json": {"mb_s": 224.0, "input_mb": 100.0, "cdcfast_x": 2.9},
                     "reference (pure Python)": {"mb_s": 9.7, "input_mb": 5.0,
                                                 "cdcfast_x": 67.0}},
           "threads": {"threads": 2, "cores": 2, "rival": "pyarrow.json, threaded",
                       "margin": 3.0, "scaling": 1.8,
                       "tools": {"cdcfast threads=1": {"mb_s": 650.0},
                                 "cdcfast threads=2": {"mb_s": 1170.0},
                                 "pyarrow.json, threaded": {"mb_s": 390.0}}}}
    shown = render(page([run], "the table"), tmp_path)
    assert len(shown["charts"]) == 1 and blank_charts(shown) == []
    assert shown["console"] == []
    assert "cdcfast is 2.90× faster" in shown["dom"] and "1.80× threads=1" in shown["dom"]
    assert "cdcfast threads=2 is 3.00× faster" in shown["dom"]


def test_the_page_prints(tmp_path):
    """Printed (Chromium's PDF, A4 or Letter), the page of two tables, each starting a
    printed page of its own, comes out as a PDF of at least three pages."""
    page, _, _ = _page("qlik")

    def pages(html, name):
        path = tmp_path / f"{name}.html"
        path.write_text(html, encoding="utf-8")
        pdf = tmp_path / f"{name}.pdf"
        run = _run(["--no-pdf-header-footer", f"--print-to-pdf={pdf}", path.as_uri()],
                   tmp_path)
        assert pdf.exists(), run.stderr[-2000:]
        data = pdf.read_bytes()
        assert data.startswith(b"%PDF")
        return len(re.findall(rb"/Type\s*/Page[^s]", data))
    assert page.count('<section class="table">') == 2
    assert "section.table { break-before: page; }" in page
    assert pages(page, "report") >= 3
