"""The report's charts, drawn by matplotlib as SVG (text kept as text): no script, no
network, the same on screen and on paper. Each function returns one `<svg>` element."""
from __future__ import annotations

import html
import io
import re
from datetime import datetime, timezone

import numpy as np

OP_COLORS = {"c": "#2e7d32", "u": "#1565c0", "d": "#c62828", "r": "#757575", "t": "#6a1b9a"}
OP_NAMES = {"c": "insert", "u": "update", "d": "delete", "r": "read", "t": "truncate"}
INK, GRID, ACCENT = "#263238", "#cfd8dc", "#ef6c00"
WIDTH = 7.0                         # inches: the page's column
# display bin widths for events over time, seconds
SPANS = (1, 5, 10, 30, 60, 300, 600, 1800, 3600, 3 * 3600, 6 * 3600, 12 * 3600, 86400,
         7 * 86400, 30 * 86400, 91 * 86400, 365 * 86400)
MAX_BARS = 120

_STYLE = {"svg.fonttype": "none", "font.size": 8,
          "font.family": "sans-serif", "axes.edgecolor": GRID, "axes.labelcolor": INK,
          "xtick.color": INK, "ytick.color": INK, "axes.spines.top": False,
          "axes.spines.right": False, "axes.grid": True, "grid.color": GRID,
          "grid.linewidth": 0.6, "axes.axisbelow": True, "legend.frameon": False}


def _figure(height: float, cols: int = 1):
    from matplotlib.figure import Figure
    fig = Figure(figsize=(WIDTH, height), layout="constrained")
    axes = fig.subplots(1, cols)
    return fig, axes


_NUMBERS = re.compile(r'( (?:d|x|y|transform|viewBox)="[^"]*")')
_DIGITS = re.compile(r"(\d\.\d\d)\d+")


def _svg(fig, label: str) -> str:
    """The figure as an inline <svg> that scales with the page: without the XML prolog and
    metadata, coordinates to two decimals (a hundredth of a point), named by `label` for
    screen readers."""
    buf = io.StringIO()
    fig.savefig(buf, format="svg", metadata={"Date": None, "Creator": None})
    text = buf.getvalue()
    text = text[text.index("<svg"):]
    text = re.sub(r"\s*<metadata>.*?</metadata>", "", text, count=1, flags=re.S)
    text = _NUMBERS.sub(lambda m: _DIGITS.sub(r"\1", m.group(1).replace("\n", "")), text)
    named = f'class="chart" role="img" aria-label="{html.escape(label, quote=True)}"'
    return re.sub(r'<svg([^>]*?) width="[^"]*" height="[^"]*"',
                  lambda m: f'<svg{m.group(1)} {named} preserveAspectRatio="xMinYMin meet"',
                  text, count=1)


_drawn = [0]


def _draw(fn):
    """Run a drawing function inside the report's matplotlib style (each chart its own salt
    for the ids matplotlib gives its clip paths and markers: the page holds many charts)."""
    def wrapped(*args, **kwargs):
        import matplotlib
        _drawn[0] += 1
        with matplotlib.rc_context({**_STYLE, "svg.hashsalt": f"cdcfast-{_drawn[0]}"}):
            return fn(*args, **kwargs)
    wrapped.__doc__ = fn.__doc__
    wrapped.__name__ = fn.__name__
    return wrapped


def time_bins(first_s: int, last_s: int) -> int:
    """The narrowest bin width (seconds) of SPANS that shows first…last in MAX_BARS bars."""
    span = max(0, last_s - first_s) + 1
    for w in SPANS:
        if span / w <= MAX_BARS:
            return w
    return SPANS[-1] * (span // (SPANS[-1] * MAX_BARS) + 1)


@_draw
def events_over_time(times: dict, least: int = 1) -> tuple[str, int]:
    """Events a bin of commit time, stacked by op: (svg, bin width in seconds). `times`:
    op -> (commit seconds, counts); bins are at least `least` seconds wide."""
    keys = [k for k, _ in times.values() if len(k)]
    if not keys:
        return "", 0
    lo = min(int(k.min()) for k in keys)
    hi = max(int(k.max()) for k in keys)
    width = max(time_bins(lo, hi), least)
    start = lo // width * width
    nb = (hi - start) // width + 1
    fig, ax = _figure(2.3)
    x = [datetime.fromtimestamp(start + i * width, tz=timezone.utc) for i in range(nb)]
    bottom = np.zeros(nb)
    days = width / 86400
    for op, (k, c) in times.items():
        if not len(k):
            continue
        per = np.bincount((k - start) // width, weights=c, minlength=nb)[:nb]
        ax.bar(x, per, width=days, bottom=bottom, align="edge", color=OP_COLORS[op],
               label=OP_NAMES[op], linewidth=0)
        bottom += per
    _dates(ax)
    ax.set_ylabel(f"events per {_duration(width)}")
    fig.legend(loc="outside upper left", ncols=5, fontsize=8)
    return _svg(fig, f"events per {_duration(width)} of commit time, stacked by op"), width


def _dates(ax) -> None:
    import matplotlib.dates as mdates
    loc = mdates.AutoDateLocator(minticks=3, maxticks=8, tz=timezone.utc)
    ax.xaxis.set_major_locator(loc)
    ax.xaxis.set_major_formatter(mdates.ConciseDateFormatter(loc, tz=timezone.utc))
    ax.grid(axis="x", visible=False)


def _duration(seconds: float) -> str:
    for unit, s in (("day", 86400), ("h", 3600), ("min", 60), ("s", 1)):
        if seconds >= s and seconds % s == 0:
            n = int(seconds // s)
            return (f"{n} {unit}" + ("s" if unit == "day" and n > 1 else "")) if n != 1 \
                else unit if unit != "day" else "day"
    return f"{seconds:g} s"


def size_classes(sizes: np.ndarray) -> tuple[list[str], np.ndarray]:
    """Transaction sizes in classes of powers of two: 1, 2, 3–4, 5–8, … (labels, counts)."""
    if not len(sizes):
        return [], np.zeros(0, np.int64)
    cls = np.ceil(np.log2(np.maximum(sizes, 1))).astype(np.int64)
    counts = np.bincount(cls)
    labels = ["1" if i == 0 else "2" if i == 1 else f"{2 ** (i - 1) + 1}–{2 ** i}"
              for i in range(len(counts))]
    return labels, counts


@_draw
def transaction_sizes(sizes: np.ndarray) -> str:
    """How many transactions had how many events (powers-of-two classes)."""
    labels, counts = size_classes(sizes)
    if not len(counts):
        return ""
    fig, ax = _figure(2.2)
    ax.bar(range(len(counts)), counts, color="#455a64", linewidth=0)
    ax.set_xticks(range(len(counts)), labels, rotation=0 if len(labels) < 12 else 45)
    ax.set_xlabel("events in the transaction")
    ax.set_ylabel("transactions")
    ax.grid(axis="x", visible=False)
    for i, c in enumerate(counts):
        if c:
            ax.annotate(f"{int(c):,}", (i, c), ha="center", va="bottom", fontsize=7,
                        color=INK, xytext=(0, 1), textcoords="offset points")
    return _svg(fig, "transactions by their number of events")


@_draw
def lag(keys: np.ndarray, counts: np.ndarray, p50: float, p95: float) -> str:
    """A lag's distribution (µs keys, their counts) on a log scale of seconds, with its p50
    and p95 marked; lags of zero or less are counted apart, in the title."""
    pos = keys > 0
    if not pos.any():
        return ""
    s = keys[pos] / 1e6
    lo, hi = float(s.min()), float(s.max())
    edges = np.geomspace(lo, hi * 1.0001, 41) if hi > lo else np.array([lo * 0.9, lo * 1.1])
    hist, _ = np.histogram(s, bins=edges, weights=counts[pos])
    fig, ax = _figure(2.2)
    ax.stairs(hist, edges, fill=True, color="#546e7a")
    ax.set_xscale("log")
    ax.set_xlabel("seconds")
    ax.set_ylabel("events")
    for q, v, y in (("p50", p50, 1.0), ("p95", p95, 0.86)):
        if v is not None and v > 0:
            ax.axvline(v / 1e6, color=ACCENT, linewidth=1)
            ax.annotate(q, (v / 1e6, y), xycoords=("data", "axes fraction"), color=ACCENT,
                        fontsize=8, ha="left", va="top", xytext=(2, 0),
                        textcoords="offset points")
    return _svg(fig, "the lag's distribution, in seconds on a log scale")


@_draw
def columns(names: list[str], null_rate: np.ndarray, changed_rate: np.ndarray | None) -> str:
    """Per column: the share of images with the value null, and the share of updates that
    changed it (side by side)."""
    if not names:
        return ""
    cols = 2 if changed_rate is not None else 1
    h = max(1.4, 0.19 * len(names) + 0.6)
    fig, axes = _figure(h, cols)
    axes = np.atleast_1d(axes)
    y = np.arange(len(names))[::-1]
    panels = [(axes[0], null_rate, "null (% of images)", "#78909c")]
    if cols == 2:
        panels.append((axes[1], changed_rate, "changed (% of updates)", OP_COLORS["u"]))
    for ax, rate, title, color in panels:
        ax.barh(y, rate * 100, color=color, height=0.7, linewidth=0)
        ax.set_xlim(0, 100)
        ax.set_title(title, fontsize=8.5, color=INK, loc="left")
        ax.grid(axis="y", visible=False)
        ax.set_yticks(y, names if ax is axes[0] else [""] * len(names))
        for yi, r in zip(y, rate):
            ax.annotate(f"{r * 100:.0f}%", (r * 100, yi), va="center", fontsize=6.5,
                        xytext=(2, 0), textcoords="offset points", color=INK)
    return _svg(fig, "per column: the share of null values and of updates that changed it")


@_draw
def bench(groups: list[tuple[str, list[tuple[str, float, str]]]]) -> str:
    """Throughput per tool, one group of bars per format: groups of (format, [(tool, MB/s,
    label written on the bar)]), cdcfast first in each."""
    rows = sum(len(g[1]) for g in groups) + len(groups)
    fig, ax = _figure(max(1.6, 0.24 * rows + 0.5))
    y, ticks, labels = 0, [], []
    top = max((v for _, tools in groups for _, v, _ in tools), default=1)
    for fmt, tools in groups:
        for tool, mbs, text in tools:
            color = OP_COLORS["u"] if tool.startswith("cdcfast") else "#90a4ae"
            ax.barh(-y, mbs, color=color, height=0.75, linewidth=0)
            ax.annotate(f"{mbs:,.0f} MB/s" + (f" · {text}" if text else ""), (mbs, -y),
                        va="center", fontsize=7.5, xytext=(3, 0), textcoords="offset points",
                        color=INK)
            ticks.append(-y)
            labels.append(f"{fmt}: {tool}")
            y += 1
        y += 1
    ax.set_yticks(ticks, labels)
    ax.set_xlim(0, top * 1.35)
    ax.set_xlabel("MB/s (higher is better)")
    ax.grid(axis="y", visible=False)
    return _svg(fig, "throughput per tool and format, MB/s")
