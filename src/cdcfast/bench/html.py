"""`cdcfast bench --html`: the bench's figures as one self-contained page — a bar a tool and
format (MB/s, the ratio cdcfast stands at written on each bar), then the text table."""
from __future__ import annotations

import html
from datetime import datetime, timezone

from .. import pieces


def bars(results: dict) -> list:
    """One format's bars: (tool, MB/s, what is written on the bar), cdcfast first, then the
    other tools fastest first; threaded figures after."""
    tools = results["tools"]
    out = [("cdcfast", tools["cdcfast"]["mb_s"], "")]
    rest = sorted(((n, r) for n, r in tools.items() if n != "cdcfast"),
                  key=lambda nr: -nr[1]["mb_s"])
    for name, r in rest:
        x = r["cdcfast_x"]
        shown = f"{x:.2f}" if x < 10 else f"{x:.0f}" if x >= 100 else f"{x:.1f}"
        part = "" if r["input_mb"] == results["input_mb"] else \
            f", on the first {r['input_mb']:g} MB"
        out.append((name, r["mb_s"], f"cdcfast is {shown}× faster{part}"))
    t = results.get("threads")
    if t:
        one = t["tools"].get("cdcfast threads=1", {}).get("mb_s")
        for name, r in t["tools"].items():
            if name == "cdcfast threads=1":
                continue
            label = ""
            if name.startswith("cdcfast") and one:
                label = f"{r['mb_s'] / one:.2f}× threads=1"
            elif "margin" in t and name == t.get("rival"):
                label = f"cdcfast threads={t['threads']} is {t['margin']:.2f}× faster"
            out.append((name, r["mb_s"], label))
    return out


def page(runs: list, text: str) -> str:
    """The page of one or more `bench.run` results; `text`: the table the run printed."""
    from .._report import charts
    from .._version import __version__
    svg = charts.bench([(r["format"], bars(r)) for r in runs])
    when = datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    sizes = ", ".join(f"{r['format']} {r['input_mb']:g} MB ({r['rows']:,} rows)" for r in runs)
    cores = pieces.cores()
    e = html.escape
    return (f'<!doctype html><html lang="en"><head><meta charset="utf-8">'
            f"<title>cdcfast bench</title><style>"
            "body{font:14px/1.45 system-ui,sans-serif;color:#263238;margin:0}"
            "main{max-width:1000px;margin:0 auto;padding:24px 28px}"
            "h1{font-size:22px;margin:0 0 4px}.sub{color:#607d8b;margin:0 0 12px}"
            "svg.chart{width:100%;height:auto;display:block}"
            "pre{background:#f5f7f8;padding:8px;font-size:12px;overflow-x:auto}"
            "</style></head><body><main>"
            f"<h1>cdcfast bench</h1><p class=sub>{e(sizes)}; single core unless marked "
            f"threads; best of each tool's interleaved runs, same machine, same run "
            f"({cores} cores here) · cdcfast {e(__version__)} · {when}</p>"
            f'<div class="fig">{svg}</div><pre>{e(text)}</pre></main></body></html>')
