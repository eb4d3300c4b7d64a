#!/usr/bin/env python
"""The split-point finders the Spark data source cuts files with (Decoder.split_points,
record_start, range_bounds): the native ones (ibm-delimited's quote-aware scan, lldf's walk of
its framing) and the JSON formats' line starts, against the reference (where it can tell:
ibm-delimited's cannot without the kernels) and against their own promises:

- split_points starts at 0, ends at len(data), strictly increasing; every cut is a record
  start (record_start(cut) == cut) and is record_start of the first multiple of the step past
  the cut before it;
- record_start(x) >= x, is len(data) or a fixed point, and nothing between x and it is a
  record start that record_start(x') for x' in that span would name differently;
- range_bounds over byte ranges of `step` bytes tile the stream at the same cuts;
- ibm-delimited and lldf: when the whole stream decodes without an error, its pieces decode
  to the same rows (seq and byte offsets apart);
- ibm-delimited, lldf and the JSON formats on several threads (cdcfast/pieces.py, pieces of
  `step` bytes): exactly what one thread gives, errors and last_stats included, whatever
  the input; and
  ibm-delimited's guessed cuts (`_ibm.guess_record_start`) lie in the stream, just past a
  record delimiter.

Input: byte 0 the format and its options (mod the variants), bytes 1-2 the step (1..4096),
byte 3 an offset (scaled into the stream), the rest the stream."""
import pyarrow as pa

import harness
import cdcfast
from cdcfast import pieces as _pieces

Finding = harness.Finding
VARIANTS = [
    ("ibm-delimited", {}),
    ("ibm-delimited", {"column_delimiter": ";", "string_delimiter": "'",
                       "record_delimiter": "|"}),
    ("ibm-delimited", {"encoding": "cp037"}),
    ("lldf", {"framing": "raw"}),
    ("lldf", {"framing": "rdw"}),
    ("lldf", {"framing": "vb"}),
    ("lldf", {"framing": "auto"}),
    ("debezium", {}),
    ("olr", {}),
    ("qlik", {}),
]
PIECES = ("ibm-delimited", "lldf")
THREADED = PIECES + ("debezium", "olr", "qlik")
TILES = 64              # byte ranges checked per input, at most


def _sample(xs: list, k: int = 32) -> list:
    """At most k of xs, spread over them (each record_start walks from the start)."""
    return xs if len(xs) <= k else [xs[i * len(xs) // k] for i in range(k)]


IGNORED = ("seq", "_error", "_corrupt_record")


def _rows(tables: dict) -> dict:
    return {k: t.drop_columns([c for c in IGNORED if c in t.column_names])
            for k, t in tables.items() if t.num_rows}


def check(data: bytes) -> None:
    fmt, opts = VARIANTS[(data[0] if data else 0) % len(VARIANTS)]
    step = (int.from_bytes(data[1:3], "big") if len(data) > 2 else 1) % 4096 + 1
    stream = data[4:]
    n = len(stream)
    dec = cdcfast.Decoder(fmt, threads=1, **opts)
    ref = cdcfast.reference.Decoder(fmt, **opts)
    cuts = dec.split_points(stream, step)
    if cuts[0] != 0 or cuts[-1] != n or any(a >= b for a, b in zip(cuts, cuts[1:])) and n:
        raise Finding(f"{fmt} split_points(step {step}) = {cuts} of {n} bytes")
    if dec.can_split() and ref.can_split():
        got = ref.split_points(stream, step)
        if got != cuts:
            raise Finding(f"{fmt} split_points(step {step}): native {cuts}, reference {got}")
    if not dec.can_split():
        return
    for c in _sample(cuts[1:-1]):
        if dec.record_start(stream, c) != c:
            raise Finding(f"{fmt}: cut {c} is not a record start ({dec.record_start(stream, c)})")
    x = (data[3] if len(data) > 3 else 0) * n // 255
    at = dec.record_start(stream, x)
    if not (x <= at <= n or x == 0 == at) or (at < n and dec.record_start(stream, at) != at):
        raise Finding(f"{fmt}: record_start({x}) = {at} of {n} bytes")
    if at > x and dec.record_start(stream, (x + at) // 2) != at:
        raise Finding(f"{fmt}: record_start({x}) = {at}, record_start({(x + at) // 2}) = "
                      f"{dec.record_start(stream, (x + at) // 2)}")
    if ref.can_split() and ref.record_start(stream, x) != at:
        raise Finding(f"{fmt}: record_start({x}) native {at}, reference "
                      f"{ref.record_start(stream, x)}")
    # byte ranges tile the stream at the cuts of their size (at most TILES of them: a Spark
    # task's piece is megabytes, not bytes)
    size = max(step, -(-n // TILES))
    known, tiled = [0], dec.split_points(stream, size) if size != step else cuts
    tiles = [dec.range_bounds(stream, s, s + size, known) for s in range(0, n, size)]
    edges = sorted({a for a, b in tiles if a < b} | {b for a, b in tiles if a < b})
    if n and (edges != tiled or any(b < a for a, b in tiles)):
        raise Finding(f"{fmt}: range_bounds of {size}-byte ranges {tiles}, split_points "
                      f"{tiled}")
    if fmt in THREADED:
        _threads(fmt, opts, dec, stream, step)
    if fmt in PIECES and len(cuts) > 2:   # (in at most TILES pieces)
        whole = dec.decode_tables(stream)
        if any(t.num_rows and t.column("_error").null_count < t.num_rows
               for t in whole.values()):
            return
        pieces = dec.split_points(stream, max(step, -(-n // TILES)))
        parts = [dec.decode_tables(stream[a:b]) for a, b in zip(pieces, pieces[1:])]
        joined = {}
        for p in parts:
            for k, t in _rows(p).items():
                joined.setdefault(k, []).append(t)
        joined = {k: pa.concat_tables(v, promote_options="permissive")
                  for k, v in joined.items()}
        want = _rows(whole)
        if joined.keys() != want.keys() or any(not joined[k].equals(want[k]) for k in want):
            raise Finding(f"{fmt}: the pieces at {pieces} decode to other rows than the whole")


def _threads(fmt, opts, dec, stream, step):
    n = len(stream)
    if fmt == "ibm-delimited":
        from cdcfast import _ibm
        delims = dec._fmt.delims
        for x in (0, n // 3, n // 2, n - 1):
            g = _ibm.guess_record_start(stream, delims, max(0, x))
            if not (max(0, x) <= g <= n) or (g < n and stream[g - 1] != delims[1]):
                raise Finding(f"guess_record_start({x}) = {g} of {n} bytes")
    one = _outcome(dec, stream)
    many = cdcfast.Decoder(fmt, threads=3, **opts)
    # cut every input, in pieces of 8 steps (the module's sizes are for real inputs; put
    # back after: the test suite replays this harness in its own process)
    saved = _pieces.PARALLEL_MIN, _pieces.PIECE_MIN, _pieces.piece_bytes
    _pieces.PARALLEL_MIN = 0
    _pieces.PIECE_MIN = step * 2            # (a first piece alone: Qlik's)
    _pieces.piece_bytes = lambda size, threads: max(1, min(step * 8, size))
    try:
        got = _outcome(many, stream)
    finally:
        _pieces.PARALLEL_MIN, _pieces.PIECE_MIN, _pieces.piece_bytes = saved
    if got[1] != one[1] or got[2] != one[2] or (
            got[0].keys() != one[0].keys() or any(not got[0][k].equals(one[0][k])
                                                  for k in one[0])):
        raise Finding(f"{fmt}: 3 threads (pieces of {step * 8} bytes) decode otherwise than one")


def _outcome(dec, stream):
    """(tables, last_stats, None), or (None, None, the error) of a call that refuses the
    input as a whole (a JSON table nothing describes, without a catalog)."""
    try:
        return dec.decode_tables(stream), dict(dec.last_stats), None
    except ValueError as e:
        return {}, None, (type(e), str(e))


class Target:
    check = staticmethod(check)

    @staticmethod
    def seeds():
        from cdcfast.encode import generate
        for v, (fmt, opts) in enumerate(VARIANTS):
            gen = {k: opts[k] for k in opts if fmt == "ibm-delimited"}
            if fmt == "lldf":
                gen = {"framing": "rdw" if opts["framing"] == "auto" else opts["framing"],
                       "segment_bytes": 60}
            data, _ = generate(fmt, 6, table_width=4, seed=v, **gen)
            for step in (7, 200, 1000):
                yield bytes([v]) + step.to_bytes(2, "big") + bytes([v * 23 % 256]) + data[:8000]


TARGET = Target()

if __name__ == "__main__":
    harness.main(TARGET)
