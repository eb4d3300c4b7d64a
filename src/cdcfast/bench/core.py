"""The benchmark contract (SPEC §8): cdcfast against the reference decoder and the general-purpose
tools a user would pick instead, on the same generated input, in one run, single core.

`cdcfast bench` prints these figures; bench/ (pytest-benchmark) times the same cases. Speed is
never asserted in tests: this module reports, it does not judge.
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile

import pyarrow as pa

from ._timing import Case, best_time, best_times, make_case


# -- the contenders ----------------------------------------------------------------------------
def cdcfast_decode(case: Case, threads: int = 1):
    import cdcfast
    dec = cdcfast.Decoder(case.format, catalog=case.catalog, threads=threads)
    return lambda: dec.decode(case.data, table=case.table)


def cdcfast_headers(case: Case):
    import cdcfast
    dec = cdcfast.Decoder(case.format, catalog=case.catalog, threads=1)
    return lambda: dec.headers(case.data)


def struct_decode(case: Case):
    """lldf's general-purpose contender: a plain struct decoder (cdcfast/bench/lldf.py)."""
    from .lldf import struct_decoder
    fn = struct_decoder(case.catalog, case.table)
    return lambda: fn(case.data)


def _json_module(case: Case):
    """A JSON format's bench module (cdcfast/bench/debezium.py, olr.py, qlik.py): the explicit
    schema of its messages (the values' JSON types, nothing converted), and LOADS_OPTIONS for
    json.loads where the numbers need them."""
    from . import debezium, olr, qlik
    return {"debezium": debezium, "olr": olr, "qlik": qlik}[case.format]


def _json_schema(case: Case) -> pa.Schema:
    return _json_module(case).schema(case)


def pyarrow_json(case: Case, threads: bool = False):
    """The JSON formats' general-purpose contender: pyarrow.json.read_json, one thread (or
    with `threads` its default: every core), explicit schema of the messages' JSON types."""
    import io
    import pyarrow.json as pj
    ro = pj.ReadOptions(use_threads=threads)
    po = pj.ParseOptions(explicit_schema=_json_schema(case), unexpected_field_behavior="ignore")
    data = case.data
    return lambda: pj.read_json(io.BytesIO(data), read_options=ro, parse_options=po)


def _per_line(loads, case: Case):
    schema = _json_schema(case)
    data = case.data

    def run():
        return pa.Table.from_pylist([loads(line) for line in data.splitlines() if line.strip()],
                                    schema=schema)
    return run


def json_loads(case: Case):
    """The slow path users run today: json.loads per line + Table.from_pylist (same schema)."""
    import functools
    options = getattr(_json_module(case), "LOADS_OPTIONS", {})
    return _per_line(functools.partial(json.loads, **options), case)


def msgspec_loads(case: Case):
    """The same with msgspec's decoder, or None when msgspec is not installed (or the format's
    numbers need options it lacks)."""
    try:
        import msgspec
    except ImportError:
        return None
    if getattr(_json_module(case), "LOADS_OPTIONS", None):
        return None
    return _per_line(msgspec.json.decode, case)


def reference_decode(case: Case):
    from .. import reference
    dec = reference.Decoder(case.format, catalog=case.catalog)
    return lambda: dec.decode(case.data, table=case.table)


def _csv_names(case: Case):
    cols = case.catalog.get(case.table).columns
    return [f"h{i}" for i in range(12)] + [f"b_{c.name}" for c in cols] \
        + [f"a_{c.name}" for c in cols], cols


def pyarrow_csv(case: Case, typed: bool, threads: bool = False):
    """pyarrow.csv.read_csv over the same bytes, one thread (or with `threads` its default:
    every core). Strings may hold newlines, so
    newlines_in_values is on. Typed: every column pyarrow can type from Db2's text (integers,
    decimals, floats, ISO dates, booleans); Db2 timestamps (`YYYY-MM-DD-HH.MM.SS.ffffff`) and
    times have no pyarrow parser and stay strings."""
    import pyarrow.csv as pc
    names, cols = _csv_names(case)
    types = {}
    for pre in ("b_", "a_"):
        for c in cols:
            t = c.type.arrow_type if typed else pa.string()
            if pa.types.is_timestamp(t) or pa.types.is_time(t) or pa.types.is_binary(t):
                t = pa.string()
            types[pre + c.name] = t
    if not typed:
        types.update({n: pa.string() for n in names[:12]})
    ro = pc.ReadOptions(column_names=names, use_threads=threads, block_size=1 << 24)
    po = pc.ParseOptions(newlines_in_values=True)
    co = pc.ConvertOptions(column_types=types, quoted_strings_can_be_null=False)
    buf = pa.py_buffer(case.data)
    return lambda: pc.read_csv(buf, read_options=ro, parse_options=po, convert_options=co)


# -- further figures -----------------------------------------------------------------------------
_COLD = """
import time, sys
t0 = time.perf_counter()
import cdcfast
t1 = time.perf_counter()
cat = cdcfast.Catalog.load(sys.argv[1])
cdcfast.decode(open(sys.argv[2], 'rb').read(), format=sys.argv[3], catalog=cat, threads=1)
t2 = time.perf_counter()
print(t1 - t0, t2 - t0)
"""

# the memory probes' common start: the peak (VmHWM) reset to the current RSS, as `base`
_PROBE = """
import sys, cdcfast

def status(key):
    for line in open("/proc/self/status"):
        if line.startswith(key):
            return int(line.split()[1]) * 1024

cat = cdcfast.Catalog.load(sys.argv[1])
with open("/proc/self/clear_refs", "w") as f:    # reset the peak (VmHWM) to the current RSS
    f.write("5")
base = status("VmRSS:")
"""

_PEAK = _PROBE + """
dec = cdcfast.Decoder(sys.argv[3], catalog=cat)
t = dec.decode(sys.argv[2], table=sys.argv[4])
print(status("VmHWM:") - base, t.nbytes)
"""

_BATCHES = _PROBE + """
rows = 0
for b in cdcfast.read_batches(sys.argv[2], format=sys.argv[3], catalog=cat, table=sys.argv[4],
                              batch_size=65536):
    rows += b.num_rows
print(status("VmHWM:") - base, rows)
"""


def cold_start(case: Case) -> tuple[float, float]:
    """(import seconds, import + first decode of one message seconds) in a fresh process."""
    from ..encode import generate
    one, cat = generate(case.format, rows=1, table_width=len(case.catalog.tables[0].columns))
    with tempfile.TemporaryDirectory() as d:
        cp, mp = os.path.join(d, "c.json"), os.path.join(d, "m.bin")
        cat.save(cp)
        with open(mp, "wb") as f:
            f.write(one)
        out = subprocess.run([sys.executable, "-c", _COLD, cp, mp, case.format],
                             capture_output=True, text=True, check=True)
    a, b = out.stdout.split()
    return float(a), float(b)


def peak_memory(case: Case) -> tuple[int, int, int]:
    """(peak RSS growth while decoding a file of the input, input bytes, output bytes)."""
    with tempfile.TemporaryDirectory() as d:
        cp, dp = os.path.join(d, "c.json"), os.path.join(d, "in.bin")
        case.catalog.save(cp)
        with open(dp, "wb") as f:
            f.write(case.data)
        out = subprocess.run([sys.executable, "-c", _PEAK, cp, dp, case.format, case.table],
                             capture_output=True, text=True, check=True)
    grew, outb = out.stdout.split()
    return int(grew), len(case.data), int(outb)


# read_batches over the 2 GB file is left out when cdcfast's measured speed says it would take
# longer than this (a format whose native path is missing runs its reference decoder)
BATCHES_MAX_S = 120


def batches_memory(case: Case, gb: float = 2.0) -> tuple[int, int, int]:
    """(peak RSS growth, file bytes, rows) of read_batches over a file of about `gb` GB (the
    input repeated: a stream of a format whose records are self-framed stays valid)."""
    reps = max(1, round(gb * 1e9 / len(case.data)))
    with tempfile.TemporaryDirectory() as d:
        cp, dp = os.path.join(d, "c.json"), os.path.join(d, "big.bin")
        case.catalog.save(cp)
        with open(dp, "wb") as f:
            for _ in range(reps):
                f.write(case.data)
        size = os.path.getsize(dp)
        out = subprocess.run([sys.executable, "-c", _BATCHES, cp, dp, case.format, case.table],
                             capture_output=True, text=True, check=True)
    grew, rows = out.stdout.split()
    return int(grew), size, int(rows)


# -- the report ------------------------------------------------------------------------------------
def run(format: str = "ibm-delimited", size_mb: float = 100, repeat: int = 5,
        reference_mb: float = 5, table_width: int = 20, extras: bool = True,
        spark: bool = False, echo=print, spark_cluster: bool = False,
        threads: int = 0) -> dict:
    echo(f"generating {size_mb:g} MB of {format} ({table_width} columns)…")
    case = make_case(format, size_mb, table_width)
    small = make_case(format, min(reference_mb, size_mb), table_width)
    results = {"format": format, "input_mb": round(case.mb, 1), "rows": case.rows,
               "columns": [c.type.name for c in case.catalog.get(case.table).columns],
               "tools": {}, "repeat": repeat}

    def record(name, secs, c):
        results["tools"][name] = {"mb_s": c.mb / secs, "rows_s": c.rows / secs,
                                  "input_mb": round(c.mb, 1)}

    tools = {"cdcfast": cdcfast_decode(case)}
    if format == "ibm-delimited":
        tools["pyarrow.csv strings"] = pyarrow_csv(case, typed=False)
        tools["pyarrow.csv typed"] = pyarrow_csv(case, typed=True)
    if format in ("lldf", "debezium", "olr", "qlik"):
        tools["headers()"] = cdcfast_headers(case)
    if format == "lldf":
        tools["plain struct decoder"] = struct_decode(case)
    slow = {}       # contenders too slow for the whole input: on the reference's share
    if format == "debezium":
        results["data"] = _debezium_data(case)
    if format in ("debezium", "olr", "qlik"):
        tools["pyarrow.json"] = pyarrow_json(case)
        slow["json.loads + from_pylist"] = json_loads(small)
        fn = msgspec_loads(small)
        if fn is not None:
            slow["msgspec + from_pylist"] = fn
    times = best_times(tools, repeat)
    record("cdcfast", times["cdcfast"], case)
    if "headers()" in times:
        secs = times.pop("headers()")
        results["headers"] = {"mb_s": case.mb / secs, "rows_s": case.rows / secs}
    record("reference (pure Python)", best_time(reference_decode(small), 1), small)
    for name in times:
        if name != "cdcfast":
            record(name, times[name], case)
    if slow:
        for name, secs in best_times(slow, 3).items():
            record(name, secs, small)
    mine = results["tools"]["cdcfast"]["mb_s"]
    for r in results["tools"].values():
        r["cdcfast_x"] = mine / r["mb_s"]
    if format == "qlik":
        from .qlik import MASK_COLUMNS, mask_rate
        results["masks"] = {"masks_s": mask_rate(), "columns": MASK_COLUMNS}
    if extras:
        imp, first = cold_start(case)
        results["cold_start_s"] = {"import": imp, "import_and_first_decode": first}
        grew, inb, outb = peak_memory(case)
        results["peak_memory"] = {"rss_growth_mb": grew / 1e6, "input_mb": inb / 1e6,
                                  "output_mb": outb / 1e6,
                                  "budget_mb": (inb + 2 * outb) / 1e6}
        if format in ("lldf", "debezium", "olr", "qlik"):
            estimate = 2e3 / mine           # seconds for 2 GB at the speed just measured
            if estimate > BATCHES_MAX_S:
                results["read_batches_memory"] = {"skipped": (
                    f"at {mine:.1f} MB/s it would take about {estimate / 60:.0f} min, over "
                    f"the {BATCHES_MAX_S} s limit")}
            else:
                grew, size, rows = batches_memory(case)
                results["read_batches_memory"] = {"rss_growth_mb": grew / 1e6,
                                                  "file_gb": size / 1e9, "rows": rows}
    if threads > 1:
        results["threads"] = threaded(case, threads, repeat)
    echo(report(results))
    if spark:
        from . import spark as bench_spark
        results["spark"] = bench_spark.run(case, repeat=max(1, min(repeat, 5)), echo=echo,
                                           cluster=spark_cluster)
    return results


def threaded(case: Case, threads: int, repeat: int) -> dict:
    """cdcfast on `threads` threads beside one, and the pyarrow reader of the format (if any)
    with its default threading (every core), interleaved in one run: MB/s of each, and
    cdcfast's scaling and its margin over the threaded reader."""
    tools = {"cdcfast threads=1": cdcfast_decode(case, 1),
             f"cdcfast threads={threads}": cdcfast_decode(case, threads)}
    rival = None
    if case.format == "ibm-delimited":
        rival = "pyarrow.csv typed, threaded"
        tools[rival] = pyarrow_csv(case, typed=True, threads=True)
    elif case.format in ("debezium", "olr", "qlik"):
        rival = "pyarrow.json, threaded"
        tools[rival] = pyarrow_json(case, threads=True)
    times = best_times(tools, repeat)
    out = {"threads": threads, "cores": len(os.sched_getaffinity(0)),
           "tools": {name: {"mb_s": case.mb / secs} for name, secs in times.items()}}
    one, many = times["cdcfast threads=1"], times[f"cdcfast threads={threads}"]
    out["scaling"] = one / many
    if rival is not None:
        out["rival"] = rival
        out["margin"] = times[rival] / many
    return out


def _debezium_data(case: Case) -> str:
    """What the generated debezium input holds, beyond the table's columns."""
    docs = case.data.count(b"\n")
    return (f"bare payloads (schemas.enable=false), one per line: {case.rows:,} change events "
            f"and {docs - case.rows:,} transaction BEGIN/END documents; "
            f"decimal.handling.mode=precise (DECIMAL as base64), time.precision.mode=adaptive "
            f"(DATE as days, TIMESTAMP(6) as MicroTimestamp, TIMESTAMP(3) as Timestamp, "
            f"TIMESTAMP(9) as NanoTimestamp, TIME as Time)")


def report(results: dict) -> str:
    lines = [f"cdcfast bench — {results['format']}, {results['input_mb']} MB, "
             f"{results['rows']:,} rows, single core, best of "
             f"{results.get('repeat', 5)} interleaved runs",
             f"table of {len(results.get('columns', []))} columns: "
             + ", ".join(results.get("columns", []))]
    if "data" in results:
        lines.append(f"data: {results['data']}")
    lines += [f"{'tool':<26}{'MB/s':>10}{'rows/s':>14}{'cdcfast is':>13}", "-" * 63]
    for name, r in results["tools"].items():
        note = "" if r["input_mb"] == results["input_mb"] else f"  (on the first {r['input_mb']} MB)"
        x = r["cdcfast_x"]
        ratio = "" if name == "cdcfast" else f"{x:.2f}x" if x < 1 else f"{x:.1f}x"
        lines.append(f"{name:<26}{r['mb_s']:>10.1f}{r['rows_s']:>14,.0f}{ratio:>13}{note}")
    if "headers" in results:
        h = results["headers"]
        lines.append(f"headers() (envelope and source, no images): {h['mb_s']:.1f} MB/s, "
                     f"{h['rows_s']:,.0f} rows/s")
    if "masks" in results:
        m = results["masks"]
        lines.append(f"hex masks (changeMask → struct of {m['columns']} bitmaps): "
                     f"{m['masks_s'] / 1e6:.1f} M masks/s")
    if "cold_start_s" in results:
        c = results["cold_start_s"]
        lines.append(f"cold start: import {c['import']:.2f} s, import + first decode of one "
                     f"message {c['import_and_first_decode']:.2f} s")
    if "peak_memory" in results:
        m = results["peak_memory"]
        lines.append(f"peak memory while decoding a {m['input_mb']:.0f} MB file: RSS grew "
                     f"{m['rss_growth_mb']:.0f} MB; budget input + 2 x output = "
                     f"{m['budget_mb']:.0f} MB (output {m['output_mb']:.0f} MB)")
    if "threads" in results:
        t = results["threads"]
        lines.append(f"threads ({t['cores']} cores here), best of the same interleaved runs:")
        for name, r in t["tools"].items():
            lines.append(f"  {name:<30}{r['mb_s']:>10.1f} MB/s")
        line = f"  scaling {t['scaling']:.2f}x"
        if "rival" in t:
            line += f"; cdcfast threads={t['threads']} is {t['margin']:.2f}x {t['rival']}"
        lines.append(line)
    if "read_batches_memory" in results and "skipped" in results["read_batches_memory"]:
        lines.append(f"read_batches over a 2 GB file: skipped — "
                     f"{results['read_batches_memory']['skipped']}")
    elif "read_batches_memory" in results:
        m = results["read_batches_memory"]
        lines.append(f"read_batches over a {m['file_gb']:.1f} GB file ({m['rows']:,} rows, "
                     f"batches of 65,536): peak RSS grew {m['rss_growth_mb']:.0f} MB")
    return "\n".join(lines)


def dumps(results: dict) -> str:
    return json.dumps(results, indent=1)
