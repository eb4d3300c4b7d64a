"""`cdcfast` on the command line (SPEC §7): generate, bench, demo."""
from __future__ import annotations

import argparse
import sys


def _generate(args) -> int:
    from .encode import generate
    data, catalog = generate(args.format, rows=args.rows, table_width=args.table_width,
                             tables=args.tables, seed=args.seed)
    with open(args.output, "wb") as f:
        f.write(data)
    catalog.save(args.output + ".catalog.json")
    print(f"wrote {args.rows:,} records ({len(data) / 1e6:.1f} MB) of {args.format} to "
          f"{args.output}, catalog {args.output}.catalog.json")
    return 0


def _bench(args) -> int:
    from . import bench
    results = bench.run(args.format, size_mb=args.size, repeat=args.repeat,
                        reference_mb=args.reference_size, table_width=args.table_width,
                        extras=not args.quick)
    if args.json:
        with open(args.json, "w") as f:
            f.write(bench.dumps(results))
    return 0


def _demo(args) -> int:
    """Generate a sample stream, decode it, show a few events and the throughput."""
    import time

    import cdcfast
    from .encode import generate
    data, catalog = generate("ibm-delimited", rows=args.rows, table_width=20, seed=1)
    table = catalog.tables[0].name
    print(f"cdcfast {cdcfast.__version__} (native kernels: {cdcfast.native_available()})")
    print(f"generated {args.rows:,} IBM Q Replication delimited records "
          f"({len(data) / 1e6:.1f} MB) of {table}")
    dec = cdcfast.Decoder("ibm-delimited", catalog=catalog)
    dec.decode(data[:100000], table=table)           # warm up
    t = time.perf_counter()
    events = dec.decode(data, table=table)
    secs = time.perf_counter() - t
    show = events.select(["op", "schema", "table", "txid", "commit_ts", "seq", "after"])
    for row in show.slice(0, 3).to_pylist():
        after = row.pop("after") or {}
        print(" ", row, "after:", dict(list(after.items())[:4]), "…")
    print(f"decoded {events.num_rows:,} events in {secs:.2f} s: "
          f"{len(data) / 1e6 / secs:,.0f} MB/s, {events.num_rows / secs:,.0f} rows/s "
          f"(stats: {dec.last_stats})")
    return 0


def main(argv=None) -> int:
    from .formats import names
    p = argparse.ArgumentParser(prog="cdcfast", description="Decode CDC messages into Arrow.")
    sub = p.add_subparsers(dest="command", required=True)

    g = sub.add_parser("generate", help="write synthetic data and its catalog")
    g.add_argument("--format", required=True, choices=names())
    g.add_argument("--rows", type=int, required=True)
    g.add_argument("--table-width", type=int, default=20)
    g.add_argument("--tables", type=int, default=1)
    g.add_argument("--seed", type=int, default=0)
    g.add_argument("-o", "--output", required=True)
    g.set_defaults(run=_generate)

    b = sub.add_parser("bench", help="throughput against the reference and pyarrow (SPEC §8)")
    b.add_argument("--format", default="ibm-delimited", choices=names())
    b.add_argument("--size", type=float, default=100, help="input MB (default 100)")
    b.add_argument("--repeat", type=int, default=5,
                   help="interleaved timing rounds; each tool's best is kept")
    b.add_argument("--reference-size", type=float, default=5,
                   help="MB given to the slow reference decoder (the start of the same data)")
    b.add_argument("--table-width", type=int, default=20)
    b.add_argument("--quick", action="store_true", help="skip cold start and peak memory")
    b.add_argument("--json", help="also write the figures to this file")
    b.set_defaults(run=_bench)

    d = sub.add_parser("demo", help="generate a sample, decode it, print a few events")
    d.add_argument("--rows", type=int, default=200000)
    d.set_defaults(run=_demo)

    args = p.parse_args(argv)
    return args.run(args)


if __name__ == "__main__":
    sys.exit(main())
