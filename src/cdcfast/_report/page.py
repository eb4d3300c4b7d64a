"""The report as one HTML page: its own style, its charts inline as SVG, nothing fetched.

Figures a reader (or a test) may want to check carry a `data-k` attribute naming them:
``ops|<input>|<table>|<op>``, ``events|…``, ``errors|…``, ``lag-p50|<input>|<table>|<lag>``.
"""
from __future__ import annotations

import html
import os
from datetime import datetime, timezone

import numpy as np

from .._version import __version__
from ..errors import printable
from . import charts
from . import stats
from .stats import OPS, TableStats, split_kind

MAX_TABLES = 30                 # tables given a section of their own (the largest)
MAX_KINDS = 40                  # error kinds listed per table (the most frequent)
MAX_COLUMNS = 120               # columns drawn per table (the first, in the table's order)
LARGEST = 5                     # largest transactions listed
SHOWN_BYTES = 240               # of a record quoted in an error example

_CSS = """
:root { --ink: #263238; --mute: #607d8b; --line: #cfd8dc; --bg: #f5f7f8; --warn: #c62828;
        --ok: #2e7d32; }
* { box-sizing: border-box; }
body { font: 14px/1.45 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif;
       color: var(--ink); margin: 0; background: #fff; }
main { max-width: 1000px; margin: 0 auto; padding: 24px 28px 48px; }
h1 { font-size: 22px; margin: 0 0 4px; }
h2 { font-size: 18px; margin: 32px 0 8px; padding-top: 12px; border-top: 2px solid var(--line); }
h3 { font-size: 15px; margin: 20px 0 6px; }
.sub { color: var(--mute); margin: 0 0 16px; }
.cards { display: grid; grid-template-columns: repeat(auto-fit, minmax(140px, 1fr));
         gap: 10px; margin: 12px 0 8px; }
.card { background: var(--bg); border-radius: 6px; padding: 8px 12px; }
.card b { display: block; font-size: 19px; }
.card span { color: var(--mute); font-size: 12px; }
.card.bad b { color: var(--warn); }
table { border-collapse: collapse; width: 100%; margin: 6px 0 10px; font-size: 13px; }
th, td { text-align: left; padding: 4px 8px; border-bottom: 1px solid var(--line);
         vertical-align: top; }
th { color: var(--mute); font-weight: 600; }
td.n, th.n { text-align: right; font-variant-numeric: tabular-nums; white-space: nowrap; }
.bad { color: var(--warn); }
.good { color: var(--ok); }
.note { color: var(--mute); font-size: 12.5px; margin: 2px 0 8px; }
.fig { margin: 4px 0 10px; }
svg.chart { width: 100%; height: auto; display: block; }
pre.bytes { background: var(--bg); padding: 6px 8px; margin: 4px 0; font-size: 11.5px;
            white-space: pre-wrap; word-break: break-all; border-radius: 4px; }
code { font-size: 12.5px; }
@media print {
  main { max-width: none; padding: 0; }
  section.table { break-before: page; }
  .fig, table, pre { break-inside: avoid; }
}
"""


def _e(x) -> str:
    return html.escape(str(x), quote=True)


def _n(x) -> str:
    return f"{int(x):,}"


def _ts(us) -> str:
    if us is None:
        return "—"
    t = datetime.fromtimestamp(us / 1e6, tz=timezone.utc)
    return t.strftime("%Y-%m-%d %H:%M:%S") + (f".{us % 1_000_000:06d}".rstrip("0").rstrip(".")
                                             if us % 1_000_000 else "") + " UTC"


def _day(us) -> str:
    """A time in a table's cell: to the second, UTC (the column's header says so)."""
    if us is None:
        return "—"
    return datetime.fromtimestamp(us // 1_000_000, tz=timezone.utc).strftime("%Y-%m-%d %H:%M:%S")


def duration(us) -> str:
    """A lag in µs as a reader says it: 850 µs, 12.5 ms, 3.2 s, 4 min 10 s, 2 h 5 min."""
    if us is None:
        return "—"
    sign, us = ("−", -us) if us < 0 else ("", us)
    if us < 1000:
        return f"{sign}{us} µs"
    if us < 1_000_000:
        return f"{sign}{us / 1000:.3g} ms"
    s = us / 1e6
    if s < 60:
        return f"{sign}{s:.3g} s"
    if s < 3600:
        return f"{sign}{int(s // 60)} min {int(s % 60)} s"
    if s < 86400:
        return f"{sign}{int(s // 3600)} h {int(s % 3600 // 60)} min"
    return f"{sign}{int(s // 86400)} d {int(s % 86400 // 3600)} h"


def _k(*parts, v=None) -> str:
    """The attributes that name a figure (and give its exact value, `v`, where the text
    rounds it)."""
    return ' data-k="' + _e("|".join(str(p) for p in parts)) + '"' + \
        ("" if v is None else f' data-v="{_e(v)}"')


def _table_label(key) -> str:
    return "(records that name no table)" if key is None else str(key)


def shown_bytes(raw: bytes, text: bool, start: int = 0, mark: int | None = None) -> str:
    """Bytes as the page shows them, as HTML: text with every control character and invalid
    byte escaped (\\n, \\x00, \\xff); binary as hex, 16 bytes a line, each line with its
    offset (`start`: raw's first byte's). `mark`: the offset within raw of the byte an
    error names, highlighted."""
    if text:
        def dec(b):
            return _e(printable(b.decode("utf-8", errors="backslashreplace")))
        if mark is None:
            return dec(raw)
        return dec(raw[:mark]) + "<mark>" + (dec(raw[mark:mark + 1]) or "⟂") + "</mark>" \
            + dec(raw[mark + 1:])
    lines = []
    for i in range(0, len(raw), 16):
        cells = [f"<mark>{b:02X}</mark>" if mark == i + j else f"{b:02X}"
                 for j, b in enumerate(raw[i:i + 16])]
        lines.append(f"{start + i:08X}  " + " ".join(cells))
    return "\n".join(lines)


class Page:
    """Builds the page from the inputs' figures (collect.InputStats)."""

    def __init__(self, inputs, format: str, text: bool, windows, title: str | None = None):
        self.inputs = inputs
        self.format = format
        self.text = text
        self.windows = windows              # (input i, message, byte) -> (bytes, start, mark)
        self.title = title or "Change stream report"
        self.parts = []
        self.cur = 0

    def w(self, s: str) -> None:
        self.parts.append(s)

    def html(self) -> str:
        now = datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
        self.w(f'<!doctype html><html lang="en"><head><meta charset="utf-8">'
               f'<meta name="viewport" content="width=device-width, initial-scale=1">'
               f'<meta name="generator" content="cdcfast {_e(__version__)}">'
               f'<title>{_e(self.title)}</title><style>{_CSS}</style></head><body><main>')
        names = ", ".join(os.path.basename(i.name) for i in self.inputs)
        self.w(f"<h1>{_e(self.title)}</h1><p class=sub>{_e(names)} · format "
               f"<b>{_e(self.format)}</b> · made by cdcfast {_e(__version__)} on "
               f"{now}</p>")
        for i, inp in enumerate(self.inputs):
            self.input_section(i, inp)
        self.w("</main></body></html>")
        return "".join(self.parts)

    # -- one input -------------------------------------------------------------------------
    def input_section(self, i: int, inp) -> None:
        name = inp.name
        self.cur = i
        if len(self.inputs) > 1:
            self.w(f"<h2>Input {i + 1}: {_e(name)}</h2>")
        allt = inp.all_tables()
        st = inp.stats
        tables = sorted((k for k in inp.tables if k is not None),
                        key=lambda k: (-inp.tables[k].events, k))
        unattributed = inp.tables.get(None)
        cards = [(_n(st.get("records", allt.events)), "records", "records", False),
                 (_n(inp.events), "change events", "events", False),
                 (_n(len(tables)), "tables", "tables", False),
                 (_n(allt.errors), "records with errors", "errors", allt.errors > 0),
                 (_n(allt.corrupt), "corrupt records", "corrupt", allt.corrupt > 0)]
        if st.get("dropped"):
            cards.append((_n(st["dropped"]), "dropped", "dropped", True))
        self.w('<div class="cards">' + "".join(
            f'<div class="card{" bad" if bad else ""}"><b{_k(key, name, "*")}>{v}</b>'
            f'<span>{_e(label)}</span></div>' for v, label, key, bad in cards) + "</div>")
        size = f" · {inp.size / 1e6:,.1f} MB" if inp.size else ""
        self.w(f'<p class="note">Commit time {_e(_ts(allt.first_ts))} … '
               f'{_e(_ts(allt.last_ts))}{size}'
               + (f" · {_n(st['control'])} control events (begin, commit, …) not counted"
                  if st.get("control") else "")
               + (f" · {_n(st['tombstones'])} tombstones" if st.get("tombstones") else "")
               + "</p>")
        self.overview(name, inp, tables)
        if len(tables) > 1:
            self.w("<h3>All tables together</h3>")
            self.figures(name, "*", allt, columns=False, order=False)
        shown = tables[:MAX_TABLES]
        for key in shown:
            self.table_section(name, key, inp.tables[key])
        if len(tables) > MAX_TABLES:
            self.w(f'<p class="note">{len(tables) - MAX_TABLES:,} smaller tables are in the '
                   f"overview above only.</p>")
        if unattributed is not None and unattributed.events:
            self.w('<section class="table"><h2>Records that name no table</h2>')
            self.w(f'<p>{_n(unattributed.events)} records could not be given a table'
                   f'{_k("events", name, "")}: corrupt records, or records whose table '
                   f"cannot be read.</p>")
            self.errors(name, "", unattributed)
            self.w("</section>")

    def overview(self, name: str, inp, tables) -> None:
        self.w("<h3>Tables</h3><table><tr><th>table</th><th class=n>events</th>"
               + "".join(f"<th class=n>{o}</th>" for o in OPS)
               + "<th class=n>errors</th><th>first commit (UTC)</th><th>last commit</th></tr>")
        for key in tables + ([None] if None in inp.tables else []):
            t = inp.tables[key]
            label = _table_label(key)
            k = "" if key is None else key
            self.w(f"<tr><td>{_e(label)}</td><td class=n{_k('events', name, k)}>"
                   f"{_n(t.events)}</td>"
                   + "".join(f"<td class=n{_k('ops', name, k, o)}>{_n(t.ops[o])}</td>"
                             for o in OPS)
                   + f'<td class="n{" bad" if t.errors else ""}"{_k("errors", name, k)}>'
                   f"{_n(t.errors)}</td><td>{_e(_day(t.first_ts))}</td>"
                   f"<td>{_e(_day(t.last_ts))}</td></tr>")
        self.w("</table>")
        other = {}
        for t in inp.tables.values():
            for o, c in t.other_ops.items():
                other[o] = other.get(o, 0) + c
        if other:
            self.w('<p class="note">Other ops: ' + ", ".join(
                f"{'(none: not read)' if o is None else _e(o)} {_n(c)}"
                for o, c in sorted(other.items(), key=str)) + "</p>")

    def table_section(self, name: str, key, t: TableStats) -> None:
        self.w(f'<section class="table"><h2>{_e(key)}</h2>')
        mix = " · ".join(f"{charts.OP_NAMES[o]}s {_n(t.ops[o])}" for o in OPS if t.ops[o])
        self.w(f"<p>{_n(t.events)} events: {mix or 'none'}. Commit time "
               f"{_e(_ts(t.first_ts))} … {_e(_ts(t.last_ts))}.</p>")
        self.figures(name, key, t)
        self.w("</section>")

    # -- the figures of a table (or of all tables) -----------------------------------------
    def figures(self, name: str, key, t: TableStats, columns: bool = True,
                order: bool = True) -> None:
        self.over_time(t)
        self.transactions(t)
        self.lags(name, key, t)
        if order:
            self.order(t)
        self.errors(name, key, t)
        if columns:
            self.columns(t)

    def over_time(self, t: TableStats) -> None:
        # each op's counts in seconds (a count map may have coarsened its keys)
        times = {o: (t.times[o].items()[0] * t.times[o].scale, t.times[o].items()[1])
                 for o in OPS}
        scale = max(t.times[o].scale for o in OPS)
        svg, width = charts.events_over_time(times, scale)
        self.w("<h3>Events over commit time</h3>")
        if not svg:
            self.w('<p class="note">No event has a commit time.</p>')
            return
        self.w(f'<div class="fig">{svg}</div>')
        notes = [f"bars of {charts._duration(width)}"]
        if t.no_time:
            notes.append(f"{_n(t.no_time)} events without a commit time are left out")
        if scale > 1:
            notes.append(f"times were counted to the nearest {charts._duration(scale)}")
        self.w(f'<p class="note">{_e("; ".join(notes))}.</p>')

    def transactions(self, t: TableStats) -> None:
        tx = t.transactions()
        self.w("<h3>Transactions</h3>")
        if tx is None:
            self.w('<p class="note">No event carries a transaction id.</p>')
            return
        sizes = np.asarray(tx.column("count_all"))
        self.w(f"<p>{_n(len(sizes))} transactions; events per transaction: median "
               f"{_n(np.median(sizes))}, largest {_n(sizes.max())}.</p>")
        if t.txns.full:
            self.w(f'<p class="note">Counted over the first {_n(t.txns.rows)} events only: '
                   f"past {_n(stats.LIMIT)} distinct transactions, no more are kept (memory "
                   "stays bounded).</p>")
        self.w(f'<div class="fig">{charts.transaction_sizes(sizes)}</div>')
        top = tx.sort_by([("count_all", "descending"), ("ts", "ascending")]).slice(0, LARGEST)
        self.w("<table><tr><th>largest transactions: txid</th><th class=n>events</th>"
               "<th>commit (UTC)</th></tr>")
        for row in top.to_pylist():
            self.w(f"<tr><td><code>{_e(row['txid'])}</code></td><td class=n>"
                   f"{_n(row['count_all'])}</td><td>{_e(_day(row['ts']))}</td></tr>")
        self.w("</table>")

    def lags(self, name: str, key, t: TableStats) -> None:
        shown = False
        for label, cm in sorted(t.lags.items()):
            keys, counts = cm.items()
            if not len(keys) or (keys.min() == 0 and keys.max() == 0 and cm.scale == 1):
                continue                # one time given for both: no lag
            if not shown:
                self.w("<h3>Capture lag</h3>")
                shown = True
            p50, p95 = cm.quantile(0.5), cm.quantile(0.95)
            top = int(keys.max()) * cm.scale
            neg = int(counts[keys < 0].sum())
            self.w(f"<p><b>{_e(label)}</b>: p50 <b{_k('lag-p50', name, key, label, v=p50)}>"
                   f"{_e(duration(p50))}</b>, p95 <b{_k('lag-p95', name, key, label, v=p95)}>"
                   f"{_e(duration(p95))}</b>, max <b{_k('lag-max', name, key, label, v=top)}>"
                   f"{_e(duration(top))}</b> over {_n(counts.sum())} events"
                   + (f'; <span class="bad">{_n(neg)} negative</span> (the later time '
                      "before the earlier: clocks apart?)" if neg else "") + ".</p>")
            svg = charts.lag(keys * cm.scale, counts, p50, p95)
            if svg:
                self.w(f'<div class="fig">{svg}</div>')
            if cm.scale > 1:
                self.w(f'<p class="note">Lags were counted to the nearest '
                       f"{_e(duration(cm.scale))} (too many distinct values to keep "
                       "exactly).</p>")

    def order(self, t: TableStats) -> None:
        self.w("<h3>Log order</h3>")
        if t.backwards:
            self.w(f'<p class="bad"><b{_k("backwards", self.inputs[self.cur].name, t.name)}>'
                   f"{_n(t.backwards)}</b> events have a commit position below "
                   "the event before them.</p><table><tr><th class=n>seq</th>"
                   "<th>position before</th><th>this position</th><th>commit time</th></tr>")
            for seq, prev, pos, ts in t.backward_examples:
                self.w(f"<tr><td class=n>{_e(seq)}</td><td><code>{_e(_hex(prev))}</code>"
                       f"</td><td><code>{_e(_hex(pos))}</code></td><td>"
                       f"{_e(ts if ts is None else ts.strftime('%Y-%m-%d %H:%M:%S'))}</td>"
                       "</tr>")
            self.w("</table>")
        else:
            self.w('<p class="good">Commit positions never go backwards.</p>')
        if not t.per_change:
            self.w('<p class="note">Repeated changes cannot be told here: this format gives '
                   "one position per transaction (its change position is the commit's).</p>")
            return
        d = t.duplicates()
        if d is None:
            self.w('<p class="note">No event carries a change position.</p>')
        elif d.num_rows == 0:
            self.w('<p class="good">No position appears twice: no replayed changes.</p>')
        if d is not None and t.positions.full:
            self.w(f'<p class="note">Positions counted over the first {_n(t.positions.rows)} '
                   f"events only: past {_n(stats.LIMIT)} distinct positions, no more are "
                   "kept (memory stays bounded).</p>")
        if d is None or d.num_rows == 0:
            return
        extra = int(np.asarray(d.column("count_all")).sum()) - d.num_rows
        self.w(f'<p class="bad">{_n(d.num_rows)} positions appear more than once: '
               f'<b{_k("replays", self.inputs[self.cur].name, t.name)}>{_n(extra)}</b> '
               "events repeat an earlier one (replays).</p><table><tr>"
               "<th>commit position</th><th>change position</th><th class=n>times</th>"
               "</tr>")
        for row in d.slice(0, LARGEST).to_pylist():
            self.w(f"<tr><td><code>{_e(_hex(row['commit_pos']))}</code></td><td><code>"
                   f"{_e(_hex(row['change_pos']))}</code></td><td class=n>"
                   f"{_n(row['count_all'])}</td></tr>")
        self.w("</table>")

    def errors(self, name: str, key, t: TableStats) -> None:
        self.w("<h3>Errors</h3>")
        if not t.errors:
            self.w('<p class="good">No errors.</p>')
            return
        self.w(f'<p class="bad">{_n(t.errors)} records with errors'
               + (f", {_n(t.corrupt)} of them corrupt (not split into fields)"
                  if t.corrupt else "") + ".</p>")
        self.w("<table><tr><th>field</th><th>reason</th><th class=n>records</th></tr>")
        kinds = sorted(t.error_kinds.items(), key=lambda kv: (-kv[1], kv[0]))
        for kind, count in kinds[:MAX_KINDS]:
            field, reason = split_kind(kind)
            self.w(f"<tr><td><code>{_e(field or '—')}</code></td><td>{_e(reason)}</td>"
                   f"<td class=n{_k('error-kind', name, key, kind)}>{_n(count)}</td></tr>")
        self.w("</table>")
        if len(kinds) > MAX_KINDS:
            rest = kinds[MAX_KINDS:]
            self.w(f'<p class="note">{_n(len(rest))} more kinds, '
                   f"{_n(sum(c for _, c in rest))} records.</p>")
        for kind, _ in kinds[:8]:
            for text, message, byte, raw in t.error_examples.get(kind, []):
                self.w(f'<p class="note">{_e(text)}</p>')
                self.w(f'<pre class="bytes">{self.quoted(raw, message, byte)}</pre>')

    def quoted(self, raw, message, byte) -> str:
        """The bytes an error example shows: the corrupt record itself, else the input around
        the byte the error names."""
        if raw is not None:
            return shown_bytes(raw[:SHOWN_BYTES], self.text) + \
                ("…" if len(raw) > SHOWN_BYTES else "")
        got = self.windows(self.cur, message, byte)
        if got is None:
            return "(the input's bytes are not at hand)"
        data, start, mark = got
        return shown_bytes(data, self.text, start, mark)

    def columns(self, t: TableStats) -> None:
        if t.nulls is None or not t.columns:
            return
        self.w("<h3>Columns</h3>")
        null_rate = np.where(t.values > 0, t.nulls / np.maximum(t.values, 1), 0.0)
        changed = t.changed / t.updates if t.updates else None
        k = MAX_COLUMNS
        svg = charts.columns(t.columns[:k], null_rate[:k],
                             None if changed is None else changed[:k])
        self.w(f'<div class="fig">{svg}</div>')
        if len(t.columns) > k:
            self.w(f'<p class="note">The first {k} of {len(t.columns):,} columns.</p>')
        self.w('<p class="note">Null: the share of the row images carrying the column (after '
               "images of inserts, updates and reads, before images of deletes) whose value "
               "is null" + (f"; changed: the share of the {_n(t.updates)} updates that "
                            "changed the column." if t.updates else ".") + "</p>")


def _hex(b) -> str:
    return "—" if b is None else bytes(b).hex(" ", 2).upper()
