"""What every harness under fuzz/ shares: the layout of a fuzz input, the native-against-
reference check of one decode call, the checks of error rows, the resource limits and the
atheris entry point.

A harness is a module with a ``TARGET``: an object with ``check(data: bytes)`` (raises
``Finding`` — or lets any unexpected exception escape — when the input shows a bug) and
``seeds()`` (the inputs ``fuzz/seeds.py`` starts its corpus from). ``main(TARGET)`` hands
``check`` to atheris (libFuzzer inside): ``python fuzz/ibm.py [libFuzzer flags] [corpus
dirs]``; ``ci/fuzz.sh`` runs it against the sanitizer build. ``tests/test_fuzz_corpus.py``
replays the committed corpus through the same ``check`` in the normal build.

The input of a decode harness (``DecodeTarget``):

- byte 0: bits 0-1 the source's form (0 a stream of bytes, 1 a list of messages, 2 a binary
  pyarrow array, 3 a large_binary array cut in two chunks), bit 2 the catalog (1: the
  variant's, 0: none), bits 3-4 the mode (PERMISSIVE, DROPMALFORMED, FAILFAST, PERMISSIVE),
  bits 5-6 the call (decode_tables, decode of one table, headers, read_batches);
- byte 1: bits 0-3 the variant (generator and decoder options, catalog), bits 4-6 the batch
  size of read_batches less one;
- the rest: a stream, or messages, each a 2-byte big-endian length and that many bytes
  (0xFFFF: a tombstone, None), the last one cut where the input ends.
"""
from __future__ import annotations

import os
import pathlib
import re
import sys
import time

HERE = pathlib.Path(__file__).resolve().parent
ROOT = HERE.parent
SHARED = ROOT.parent / "shared"
# the comparison the test suite's fuzz tests use (tables, errors, batches, statistics)
sys.path.insert(0, str(ROOT / "tests"))

import pyarrow as pa  # noqa: E402

import cdcfast  # noqa: E402
import cdcfast.reference  # noqa: E402
from cdcfast.errors import error_text  # noqa: E402
from cdcfast.formats.base import grown_table  # noqa: E402
from jsonfuzz import _allowed, difference, run, validated  # noqa: E402

MODES = ("PERMISSIVE", "DROPMALFORMED", "FAILFAST", "PERMISSIVE")
FORMS = ("stream", "list", "array", "chunked")
CALLS = ("decode_tables", "decode", "headers", "read_batches")
TOMBSTONE = 0xFFFF
ERROR = re.compile(r"(?P<field>[^:\n]+): (?P<reason>[^\n]+) \(message (?P<msg>\d+), "
                   r"byte (?P<byte>\d+)\)\Z", re.S)


# the ValueErrors the API documents for a call that names no table (jsonfuzz.DOCUMENTED has
# those of a table the input and the catalog lack, and of several tables)
NO_TABLE = "needs table="
# Debezium without a catalog: a data message of a table no embedded schema describes
# (docs/debezium.md), in every mode and call
NO_SCHEMA = "is neither in the catalog nor described by an embedded schema"


def allowed(mode: str, call: str, e: Exception) -> bool:
    """Whether the API documents this exception for this mode and call."""
    if isinstance(e, ValueError) and not isinstance(e, cdcfast.DecodeError):
        if call in ("decode", "read_batches") and NO_TABLE in str(e) or NO_SCHEMA in str(e):
            return True
    return _allowed(mode, call, e)


class Finding(AssertionError):
    """An input that shows a bug: a disagreement, a malformed error, a broken limit."""


# -- the input's layout ---------------------------------------------------------------------

def frames(payload: bytes) -> list:
    """The messages of a payload: 2-byte big-endian length + bytes; 0xFFFF is None."""
    out, i, n = [], 0, len(payload)
    while i < n:
        if i + 2 > n:
            out.append(payload[i:])
            break
        size = payload[i] << 8 | payload[i + 1]
        i += 2
        if size == TOMBSTONE:
            out.append(None)
            continue
        out.append(payload[i:i + size])
        i += size
    return out


def framed(messages) -> bytes:
    out = bytearray()
    for m in messages:
        if m is None:
            out += TOMBSTONE.to_bytes(2, "big")
        else:
            m = m[:TOMBSTONE - 1]
            out += len(m).to_bytes(2, "big") + m
    return bytes(out)


def encode_case(*, form="stream", catalog=True, mode="PERMISSIVE", call="decode_tables",
                variant=0, batch=3, data=b"") -> bytes:
    """A decode harness's input: the inverse of Case (seeds, regression inputs)."""
    b0 = (FORMS.index(form) | int(catalog) << 2 | MODES.index(mode) << 3
          | CALLS.index(call) << 5)
    b1 = variant & 15 | ((batch - 1) & 7) << 4
    payload = data if form == "stream" else framed(data)
    return bytes([b0, b1]) + payload


class Case:
    """A decode harness's input, read: what to call, on which source."""

    def __init__(self, data: bytes, variants: int):
        b0 = data[0] if data else 0
        b1 = data[1] if len(data) > 1 else 0
        payload = data[2:]
        self.form = FORMS[b0 & 3]
        self.catalog = bool(b0 >> 2 & 1)
        self.mode = MODES[b0 >> 3 & 3]
        self.call = CALLS[b0 >> 5 & 3]
        self.variant = (b1 & 15) % variants
        self.batch = (b1 >> 4 & 7) + 1
        if self.form == "stream":
            self.messages = [payload]
            self.source = payload
        else:
            self.messages = frames(payload)
            if self.form == "list":
                self.source = list(self.messages)
            elif self.form == "array":
                self.source = pa.array(self.messages, pa.binary())
            else:
                k = len(self.messages) // 2
                self.source = pa.chunked_array(
                    [pa.array(self.messages[:k], pa.large_binary()),
                     pa.array(self.messages[k:], pa.large_binary())], pa.large_binary())
        self.nbytes = len(payload)

    def __repr__(self):
        return (f"Case(form={self.form}, catalog={self.catalog}, mode={self.mode}, "
                f"call={self.call}, variant={self.variant}, batch={self.batch}, "
                f"messages={_short(repr(self.messages))})")


def _short(text: str, n: int = 3000) -> str:
    return text if len(text) <= n else text[:n] + f"… ({len(text)} characters)"


# -- checks of a result -----------------------------------------------------------------------

def _joined(batches: list):
    """read_batches' batches as one table (a layout that grew padded), [] for none."""
    return grown_table(batches) if batches else []


def tables_of(result) -> list:
    if isinstance(result, dict):
        return list(result.values())
    if isinstance(result, list):
        return [pa.Table.from_batches([b]) for b in result]
    return [result]


def rows_of(result) -> int:
    return sum(t.num_rows for t in tables_of(result))


def check_position(where: str, msg: int, byte: int, messages: list) -> None:
    """An error's (message M, byte B) names a message of the input and a byte inside it (its
    end included: where a cut-short message stops)."""
    if not 0 <= msg < len(messages):
        raise Finding(f"{where}: message {msg}, but the input has {len(messages)}")
    size = len(messages[msg] or b"")
    if not 0 <= byte <= size:
        raise Finding(f"{where}: byte {byte} of message {msg}, which has {size} bytes")


def check_errors(result, messages: list) -> None:
    """Every `_error` reads `<field>: <reason> (message M, byte B)`, one line, M and B inside
    the input; a `_corrupt_record` is bytes of that message."""
    for t in tables_of(result):
        if "_error" not in t.column_names:
            continue
        errors = t.column("_error").to_pylist()
        corrupt = (t.column("_corrupt_record").to_pylist()
                   if "_corrupt_record" in t.column_names else [None] * len(errors))
        for err, rec in zip(errors, corrupt):
            if err is None:
                continue
            m = ERROR.match(err)
            if m is None:
                raise Finding(f"_error {err!r} does not read '<field>: <reason> "
                              "(message M, byte B)'")
            msg, byte = int(m.group("msg")), int(m.group("byte"))
            check_position(f"_error {err!r}", msg, byte, messages)
            if rec is not None and bytes(rec) not in (messages[msg] or b""):
                raise Finding(f"_corrupt_record {bytes(rec)!r} of {err!r} is not bytes of "
                              f"message {msg}")


def check_raised(e: Exception, messages: list) -> None:
    """A DecodeError's text is its parts' (`<field>: <reason>`, or the reason alone for a
    problem of the whole message — not JSON, cut short — which names no field), with its
    message and byte inside the input."""
    if isinstance(e, cdcfast.DecodeError):
        if e.message_index is None or e.byte_offset is None or \
                str(e) != error_text(e.field, e.reason, e.message_index, e.byte_offset):
            raise Finding(f"DecodeError {str(e)!r}: field {e.field!r}, reason {e.reason!r}, "
                          f"message {e.message_index}, byte {e.byte_offset} do not make its "
                          "text")
        check_position(f"DecodeError {str(e)!r}", e.message_index, e.byte_offset, messages)


# -- resource limits (only while fuzzing: the test suite times nothing) -----------------------

class Limits:
    """A call may take at most FACTOR× the CPU time a clean input of its size takes — bytes,
    rows and output batches — on the same path: the path's (variant, catalog, call, source
    form) cost with one clean message (an output batch of every column) once and once more
    per output batch (a table the input names, a batch of read_batches), plus per byte and per
    row what the harness's own clean seeds cost (the median). Measured at
    start (`calibrate`, best of three after a warm-up pass), in the same build. And
    read_batches may hold at most its input + 2× its largest batch + SLACK of Arrow memory
    (docs/reliability.md). Off until calibrated (the corpus replay in the test suite times
    nothing)."""

    FACTOR = 10.0
    FLOOR = 0.05            # s: below this a call is not judged (fixed Python costs, noise)
    SLACK = 8 << 20         # bytes: the kernels' output blocks of a first batch

    def __init__(self):
        self.on = False
        self.fixed = {}
        self.per_byte = self.per_row = 0.0

    def calibrate(self, fixed: dict, samples: list) -> None:
        """fixed: path -> CPU seconds of its one-message input (DecodeTarget.baseline);
        samples: (path, seconds, input bytes, output rows) of clean inputs."""
        self.fixed = dict(fixed)
        # a seed's whole cost per byte and per row (not less its path's: a one-message
        # baseline can time above a seed of several, and a zero rate would judge nothing)
        self.per_byte = _median([s / max(n, 1) for _, s, n, _ in samples]) if samples else 0.0
        self.per_row = _median([s / max(r, 1) for _, s, _, r in samples]) if samples else 0.0
        self.on = True

    def budget(self, path, nbytes: int, rows: int, batches: int) -> float:
        fixed = self.fixed.get(path, max(self.fixed.values(), default=0.0))
        return self.FACTOR * (fixed * (1 + batches) + self.per_byte * nbytes
                              + self.per_row * rows)

    def check_time(self, path, seconds: float, nbytes: int, rows: int, batches: int,
                   again, baseline) -> None:
        """`again`: the call once more; `baseline`: the call on its path's calibration
        input."""
        if not self.on or seconds <= self.FLOOR:
            return
        limit = max(self.budget(path, nbytes, rows, batches), self.FLOOR)
        if seconds <= limit:
            return
        # a slow moment of the machine? the best of three, against the limit scaled by how
        # much slower than at calibration the path's own input runs right now
        best = min(_timed(again)[0] for _ in range(3))
        now = min(_timed(baseline)[0] for _ in range(3))
        limit *= max(1.0, now / max(self.fixed.get(path, now), 1e-6))
        if best > limit:
            raise Finding(f"took {best:.3f} s, over {self.FACTOR:g}× a clean input of "
                          f"{nbytes} bytes, {rows} rows and {batches} output batches on its "
                          f"path {path} ({limit:.3f} s)")

    def describe(self) -> str:
        f = sorted(self.fixed.values()) or [0.0]
        return (f"limits: x{self.FACTOR:g} of {f[0] * 1e3:.2f}-{f[-1] * 1e3:.2f} ms a path + "
                f"{self.per_byte * 1e9:.0f} ns/byte + {self.per_row * 1e6:.1f} us/row "
                f"(clean inputs); Arrow memory of read_batches <= input + 2x batch + "
                f"{self.SLACK >> 20} MB")


LIMITS = Limits()


def _median(xs: list) -> float:
    xs = sorted(xs)
    return xs[len(xs) // 2]


def _timed(fn):
    """(CPU seconds of this process, run(fn)): CPU time, not wall time, so that a fuzzer
    starved by the machine's other work (ci/fuzz.sh runs it niced) is not taken for slow."""
    t = time.process_time()
    out = run(fn)
    return time.process_time() - t, out


def check_batch_memory(batches, nbytes: int) -> None:
    """read_batches holds at most its input + 2× its largest batch + SLACK of Arrow memory
    while it runs (each batch dropped as the next is asked for)."""
    base = pa.total_allocated_bytes()
    peak = big = 0
    for b in batches:
        peak = max(peak, pa.total_allocated_bytes() - base)
        big = max(big, b.nbytes)
        del b
    bound = nbytes + 2 * big + Limits.SLACK
    if peak > bound:
        raise Finding(f"read_batches held {peak} bytes of Arrow memory, over its input "
                      f"({nbytes}) + 2× its largest batch ({big}) + {Limits.SLACK}")


# -- a format's decode calls --------------------------------------------------------------------

class DecodeTarget:
    """One format's decoding of fuzzed sources: native against reference (equal tables,
    `_error` texts, `_corrupt_record` bytes, last_stats, FAILFAST errors), a chunked array
    against the list of its messages, only documented exceptions, well-formed error rows,
    valid Arrow, and the limits.

    variants: a function returning a list of (catalog, decoder options, seed message lists)
    — at most 16 —, called once."""

    def __init__(self, fmt: str, variants, calls=CALLS):
        self.fmt = fmt
        self._make = variants
        self._variants = None
        self.calls = calls

    @property
    def variants(self) -> list:
        if self._variants is None:
            self._variants = [(None if cat is None else cdcfast.Catalog.from_dict(cat), opts,
                               lists) for cat, opts, lists in self._make()]
        return self._variants

    def decoders(self, case: Case):
        cat, opts, _ = self.variants[case.variant]
        cat = cat if case.catalog else None
        return cat, {n: m.Decoder(self.fmt, catalog=cat, mode=case.mode, **opts)
                     for n, m in (("native", cdcfast), ("reference", cdcfast.reference))}

    def call(self, case: Case, cat, src=None):
        """(name for _allowed, function of a decoder) of the case's call (on `src` instead of
        the case's source when given)."""
        table = cat.tables[0].name if cat is not None and cat.tables else None
        call = case.call if case.call in self.calls else self.calls[0]
        src = case.source if src is None else src
        if call == "decode_tables":
            return call, lambda d: d.decode_tables(src)
        if call == "decode":
            return call, lambda d: d.decode(src, table=table)
        if call == "headers":
            if table is None:
                return call, lambda d: d.headers(src)
            return "headers_table", lambda d: d.headers(src, table=table)
        return call, lambda d: list(d.read_batches(src, table, batch_size=case.batch))

    def check(self, data: bytes) -> None:
        case = Case(data, len(self.variants))
        cat, decs = self.decoders(case)
        call, fn = self.call(case, cat)
        seconds, native = _timed(lambda: fn(decs["native"]))
        reference = run(lambda: fn(decs["reference"]))
        if native[0] == "raised":
            e = native[1]
            if not allowed(case.mode, call, e):
                raise Finding(f"{call} raised {type(e).__name__}: {e}") from e
            check_raised(e, case.messages)
        else:
            validated(native[1])
            check_errors(native[1], case.messages)
        diff = difference(native, reference, f"{case.mode} {call}")
        if diff is None and native[0] == "ok" \
                and decs["native"].last_stats != decs["reference"].last_stats:
            diff = (f"{case.mode} {call}: last_stats native {decs['native'].last_stats}, "
                    f"reference {decs['reference'].last_stats}")
        if diff is None and case.form == "chunked":
            # a ChunkedArray is the list of its messages: one input, whatever its chunks
            _, again = self.decoders(case)
            _, as_list = self.call(case, cat, list(case.messages))
            listed = run(lambda: as_list(again["native"]))
            chunked = native
            if call == "read_batches" and native[0] == listed[0] == "ok":
                # where a batch ends may differ (a chunk's end ends one): the rows may not
                chunked, listed = (("ok", _joined(r[1])) for r in (native, listed))
            diff = difference(chunked, listed, f"{case.mode} {call}: chunked against a list")
            if diff is None and native[0] == "ok" \
                    and decs["native"].last_stats != again["native"].last_stats:
                diff = (f"{case.mode} {call}: last_stats chunked {decs['native'].last_stats}, "
                        f"as a list {again['native'].last_stats}")
        if diff is not None:
            raise Finding(diff)
        if LIMITS.on:
            stats = decs["native"].last_stats or {}
            rows = max(rows_of(native[1]) if native[0] == "ok" else 0,
                       stats.get("records", 0), stats.get("events", 0), len(case.messages))
            tables = max(len(native[1]) if isinstance(native[1], dict) else 1,
                         stats.get("unknown_tables", 0))
            batches = tables + (-(-rows // case.batch) if call == "read_batches" else 0)
            LIMITS.check_time(self.path(case, call), seconds, case.nbytes, rows, batches,
                              lambda: fn(decs["native"]), lambda: self.baseline(case))
            if call == "read_batches" and native[0] == "ok":
                table = cat.tables[0].name if cat is not None and cat.tables else None
                check_batch_memory(decs["native"].read_batches(case.source, table,
                                                               batch_size=case.batch),
                                   case.nbytes)

    def seeds(self):
        """Each variant's messages as a stream and as a list, with and without the catalog,
        over the calls and modes in turn."""
        k = 0
        for v, (_, _, lists) in enumerate(self.variants):
            for msgs in lists:
                for form in ("stream", "list"):
                    call = self.calls[k % len(self.calls)]
                    mode = MODES[k % 3]
                    msgs = _within(msgs, SEED_BYTES)
                    data = b"".join(m for m in msgs if m is not None) if form == "stream" \
                        else msgs
                    yield encode_case(form=form, catalog=k % 4 != 3, mode=mode, call=call,
                                      variant=v, batch=1 + k % 5, data=data)
                    k += 1

    def one_message(self, variant: int) -> bytes:
        """The variant's first clean message (b"" where it has none of its own)."""
        lists = self.variants[variant][2]
        return next((m for msgs in lists for m in msgs if m), b"")[:SEED_BYTES]

    def baseline_input(self, form: str, catalog: bool, call: str, variant: int,
                       mode: str = "PERMISSIVE") -> bytes:
        """The input a path's fixed cost is measured on: its variant's one message."""
        one = self.one_message(variant)
        return encode_case(form=form, catalog=catalog, mode=mode, call=call, variant=variant,
                           batch=1, data=one if form == "stream" else [one] if one else [])

    def baseline(self, case: Case):
        """The case's call on its path's calibration input (natively)."""
        base = Case(self.baseline_input(case.form, case.catalog, case.call, case.variant,
                                        case.mode), len(self.variants))
        cat, decs = self.decoders(base)
        return self.call(base, cat)[1](decs["native"])

    @staticmethod
    def path(case: Case, call: str) -> tuple:
        return case.variant, case.catalog, call, case.form

    def clean(self):
        """The clean costs of the native decoder (Limits.calibrate's arguments): each path's
        one-message input, then the seeds (a first pass warms up what a first call pays
        once)."""
        def best(data):
            case = Case(data, len(self.variants))
            cat, decs = self.decoders(case)
            call, fn = self.call(case, cat)
            t, got = min((_timed(lambda: fn(decs["native"])) for _ in range(3)),
                         key=lambda x: x[0])
            return self.path(case, call), t, case.nbytes, got

        seeds = list(self.seeds())
        for data in seeds:
            self.check(data)
        fixed = {}
        for v in range(len(self.variants)):
            for form in FORMS:
                for catalog in (False, True):
                    for call in self.calls:
                        p, t, _, _ = best(self.baseline_input(form, catalog, call, v))
                        fixed[p] = t
        samples = []
        for data in seeds:
            p, t, n, got = best(data)
            if got[0] == "ok":
                samples.append((p, t, n, rows_of(got[1])))
        return fixed, samples


SEED_BYTES = 8000       # a seed's messages, at most (the committed corpus stays small)


def _within(msgs: list, limit: int) -> list:
    """The first messages of a list that fit in `limit` bytes (at least one, cut)."""
    out, size = [], 0
    for m in msgs:
        size += len(m or b"") + 2
        if size > limit:
            break
        out.append(m)
    return out or [m[:limit] if m else m for m in msgs[:1]]


def peer_files(fmt_dir: str, pattern: str = "*") -> list:
    """Files of ../shared/peer-data/<fmt_dir> (none when ../shared is not beside us)."""
    d = SHARED / "peer-data" / fmt_dir
    return sorted(p for p in d.glob(pattern) if p.is_file()) if d.is_dir() else []


# -- atheris -------------------------------------------------------------------------------------

def main(target) -> None:
    """Fuzz `target.check` with atheris: libFuzzer's flags and corpus dirs in sys.argv. The
    limits are calibrated first (CDCFAST_FUZZ_LIMITS=0 leaves them off)."""
    import atheris
    if os.environ.get("CDCFAST_FUZZ_LIMITS", "1") != "0" and hasattr(target, "clean"):
        LIMITS.calibrate(*target.clean())
        print(LIMITS.describe(), file=sys.stderr)
    prefix = next((a.split("=", 1)[1] for a in sys.argv if a.startswith("-artifact_prefix=")),
                  "./")

    def check(data: bytes) -> None:
        # the input is saved here first: libFuzzer's own dump of a Python exception's input
        # does not always happen (an alarm can end the exit path before it)
        try:
            target.check(data)
        except BaseException:
            import hashlib
            with open(f"{prefix}finding-{hashlib.sha1(data).hexdigest()}", "wb") as f:
                f.write(data)
            raise

    atheris.Setup(sys.argv, check)
    atheris.Fuzz()
