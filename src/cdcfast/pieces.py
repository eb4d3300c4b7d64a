"""One call on several threads (docs/performance.md, "Threads").

A big part of the input is cut into pieces — a stream at record starts (the split points the
Spark data source cuts files at), a part of many messages between messages — and each piece is
decoded by the format's native runner on a worker thread; the kernels run without the GIL, so
the pieces decode at once. The pieces' results are joined in input order into what one thread
gives, row for row:

- `seq`: a piece counts its ordinals from 0; the join adds the records of the pieces before it
  (of the same message where the format restarts `seq` per message) to the rows whose `seq`
  is the ordinal (not the vendor's own number: Want.seq_masks);
- byte offsets count from the message's start (`Part.head`), message indexes from the part's
  (`Part.base`);
- what a format carries from one part to the next (`Want.carried`: ibm-delimited's N of a
  table the catalog lacks through `Want.recall`, the JSON formats' layouts and Qlik's
  metadata through `Noted` dicts, OLR's carried scn/tm through the format's own
  `carried_agrees` / `carried_merge`) is checked piece by piece against what the pieces
  before it left; a piece that relied on something else is decoded again, in order, from the
  right state. A piece starts from what the pieces before it left so far, and from what the
  format guesses of those still on their way (`Format.speculate`: OLR's open transactions),
  or waits for its part's first piece (`FIRST_PIECE_ALONE`);
- statistics add up in order; in FAILFAST the error raised is the earliest in input order: a
  piece that fails is decoded again, in order, after every piece before it was handed out.

Pieces in flight are bounded (IN_FLIGHT a thread), so `read_batches` keeps its bounded memory.
"""
from __future__ import annotations

import copy
import os
import threading
from concurrent.futures import ThreadPoolExecutor, wait

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from .sources import Part, release

PARALLEL_MIN = 4 << 20      # a part smaller than this decodes on the calling thread
PIECE_MIN = 1 << 20         # pieces of at least this many bytes…
PIECE_MAX = 64 << 20        # …and at most this many
IN_FLIGHT = 2               # pieces handed to the pool per thread, at most (memory in flight)
FIRST_PIECE = 256 << 10     # a first piece decoded alone (Format.FIRST_PIECE_ALONE): short


def cores() -> int:
    """The cores this process may use."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:                                  # not on this platform
        return max(1, os.cpu_count() or 1)


def check_threads(threads) -> int | None:
    """`threads=` as given by a caller: None (every core the process may use) or an int ≥ 1."""
    if threads is None:
        return None
    if isinstance(threads, bool) or not isinstance(threads, (int, np.integer)) or threads < 1:
        raise ValueError(f"threads must be a whole number of at least 1 (or None), "
                         f"not {threads!r}")
    return int(threads)


_pools: dict = {}           # threads -> the process's pool of that many workers
_pools_lock = threading.Lock()


def _pool(threads: int) -> ThreadPoolExecutor:
    """The process's pool of `threads` workers, started once: starting two threads cost a
    call about 2 ms before its second piece could begin (as much again as a piece's own
    fixed cost). Calls with the same `threads=` share it, as pyarrow's readers share one
    pool."""
    with _pools_lock:
        pool = _pools.get(threads)
        if pool is None:
            pool = _pools[threads] = ThreadPoolExecutor(threads,
                                                        thread_name_prefix="cdcfast")
        return pool


def _forget_pools():
    """In a forked child: the parent's workers are not there (Spark forks its Python
    workers); the next call starts its own."""
    global _pools_lock
    _pools.clear()
    _pools_lock = threading.Lock()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_forget_pools)


def piece_bytes(size: int, threads: int) -> int:
    """How big the pieces of a part of `size` bytes are: the same number for every thread,
    as few as PIECE_MAX allows — one a thread up to `threads` × PIECE_MAX bytes. Each piece
    has a fixed cost (its batches' Arrow arrays, its buffers' first sizing, its cut: about
    2 ms, a tenth of a 25 MB piece of `lldf`), and pieces of equal size on every thread end
    together, so more pieces only add that cost; within PIECE_MIN…PIECE_MAX."""
    each = -(-size // (threads * PIECE_MAX))                # pieces a thread
    return int(min(PIECE_MAX, max(PIECE_MIN, -(-size // (threads * each)) + 1)))


def pieces(fmt, part: Part, threads: int):
    """(piece, last) of a part, as they are found: the part itself when it is small or
    cannot be cut."""
    size = int(part.offsets[-1] - part.offsets[0])
    if size < PARALLEL_MIN or part.count == 0 or (part.count == 1 and part.valid is not None
                                                   and not part.valid[0]):
        yield part, True
        return
    step = piece_bytes(size, threads)
    first = min(FIRST_PIECE, PIECE_MIN) if fmt.FIRST_PIECE_ALONE else 0
    if part.count == 1:
        a0, b0 = int(part.offsets[0]), int(part.offsets[1])
        whole = fmt.piece_state(part)
        cuts = fmt.piece_cuts(memoryview(part.data)[a0:b0], step, first)
        a = next(cuts)
        b = next(cuts)
        for c in cuts:
            yield Part(part.data, np.array([a0 + a, a0 + b], dtype=np.int64), None, part.base,
                       head=part.head + a, whole=whole), False
            a, b = b, c
        if a == 0:
            yield part, True
        else:
            yield Part(part.data, np.array([a0 + a, a0 + b], dtype=np.int64), None, part.base,
                       head=part.head + a, whole=whole), True
        return
    # many messages: runs of whole messages of about `step` bytes
    marks = part.offsets[0] + step * np.arange(1, size // step + 1)
    if first:
        marks = np.concatenate([[part.offsets[0] + first], marks])
    cut = np.unique(np.searchsorted(part.offsets, marks))
    cut = cut[(cut > 0) & (cut < part.count)]
    bounds = [0] + cut.tolist() + [part.count]
    for k, (i, j) in enumerate(zip(bounds, bounds[1:])):
        yield Part(part.data, part.offsets[i:j + 1],
                   None if part.valid is None else part.valid[i:j],
                   part.base + i, head=part.head if i == 0 else 0,
                   whole=part.whole if i == 0 else None), k == len(bounds) - 2


class _Piece:
    """One piece's decode: its batches, statistics, and what it carried out."""

    def __init__(self, part, number, message, rest, last):
        self.part = part
        self.number = number        # the number of the part it was cut from
        self.message = message      # (part number, message) of a stream's piece; else None
        self.rest = rest            # the part from this piece to its end
        self.last = last            # the last piece of its part
        self.exact = False          # decoded in order, from the state the pieces before left
        self.first = False          # the first piece of its part (of several)
        self.source = part          # the part it was cut from
        self.batches = []
        self.stats = None
        self.want = None
        self.error = None


def _want_of(want, carried):
    w = copy.copy(want)
    w.matched = False
    w.unsure = False
    w.carried = carried
    w.assumed = {}
    w.open_end = False
    w.notes = {}
    w.seq_masks = []
    w.piece = True
    return w


def _decode(decode, fmt, piece, want, carried, images, batch_rows, mode, stats_keys):
    """Decode one piece into its _Piece (`carried`: a copy of its own)."""
    w = _want_of(want, carried)
    stats = dict.fromkeys(stats_keys, 0)
    piece.stats, piece.want, piece.batches, piece.error = stats, w, [], None
    try:
        for key, batch in decode(fmt, [piece.part], w, images, batch_rows, mode, stats):
            piece.batches.append((key, batch))
    except Exception as e:          # handed out in input order, by the join
        piece.error = e
    return piece


def _masks(w, n: int) -> list:
    """The vendor-seq masks of the n batches a decode with Want `w` handed out (none from a
    runner whose seq is always the ordinal)."""
    return w.seq_masks if len(w.seq_masks) == n else [None] * n


def _agrees(carried: dict, w, fmt) -> bool:
    """Whether what a piece relied on is what the pieces before it left (`carried`):
    the values it found (`Want.assumed`, None for none), and the first reads of `Noted`
    state (`Want.notes`) — found as it is now, or found nothing where nothing is, or where
    what is now is what the piece fixed itself (a value that does not grow) —, and what the
    format checks itself (Format.carried_agrees)."""
    if not all(carried.get(name, {}).get(k) == v
               for name, used in w.assumed.items() for k, v in used.items()):
        return False
    for name, used in w.notes.items():
        now, own = carried.get(name, {}), w.carried.get(name, {})
        for k, note in used.items():
            if note is None:                        # written before it was read
                continue
            snap, found = note
            v = now.get(k)
            if v is None:
                if found:
                    return False
            elif found:
                if repr(v) != snap:                 # (Want.note's snapshot)
                    return False
            elif getattr(v, "derived", False) or repr(v) != repr(own.get(k)):
                return False
    return fmt.carried_agrees(carried, w)


def _keep_noted(into: dict, w) -> None:
    """What a piece wrote or read of `Noted` state, as it left it (a read layout may have
    grown), over what the pieces before it left."""
    for name, used in w.notes.items():
        mine = w.carried.get(name, {})
        dst = into.setdefault(name, {})
        for k in used:
            if k in mine:
                dst[k] = mine[k]


def _merge(into: dict, learned: dict) -> None:
    for name, got in learned.items():
        if isinstance(got, dict):
            into.setdefault(name, {})
            for k, v in got.items():
                into[name].setdefault(k, v)
        else:
            into.setdefault(name, got)


def _add_seq(batch: pa.RecordBatch, base: int, vendor=None) -> pa.RecordBatch:
    """The ordinals of a piece's batch counted after `base` records (rows whose seq is the
    vendor's own number, `vendor`, keep it)."""
    if not base or not batch.num_rows:
        return batch
    i = batch.schema.get_field_index("seq")
    if i < 0:
        return batch
    seq = batch.column(i)
    moved = pc.add(seq, base)
    if vendor is not None:
        moved = pc.if_else(pa.array(vendor), seq, moved)
    return batch.set_column(i, batch.schema.field(i), moved)


def _rest(part: Part, piece: Part) -> Part:
    """The part from `piece` (one of its pieces) to its end."""
    if part.count == 1:
        return Part(part.data, np.array([piece.offsets[0], part.offsets[1]], dtype=np.int64),
                    None, part.base, head=piece.head, whole=piece.whole)
    i = piece.base - part.base
    return Part(part.data, part.offsets[i:], None if part.valid is None else part.valid[i:],
                piece.base, head=piece.head, whole=piece.whole)


def threaded_batches(fmt, decode, parts, want, images, batch_rows, mode, stats, threads):
    """fmt.batches on `threads` threads: (key, RecordBatch) in input order, as decode gives
    them on one thread (see the module's docstring)."""
    per_message = fmt.SEQ_SCOPE == "message"
    abandoned = set()       # parts whose remaining pieces are decoded in one go (`unsure`)

    def work():
        for n, part in enumerate(parts):
            for k, (p, last) in enumerate(pieces(fmt, part, threads)):
                if n in abandoned:
                    break
                stream = part.count == 1 and p is not part
                piece = _Piece(p, n, (n, part.base) if stream else None, _rest(part, p), last)
                piece.first = k == 0 and not last
                piece.source = part
                yield piece

    def state_for(piece):
        """What a piece starts from: what the pieces before it left so far, and what the
        format guesses of those still on their way (checked by the join)."""
        carried = copy.deepcopy(want.carried)
        src, p = piece.source, piece.part
        if p.base > src.base or p.offsets[0] > src.offsets[0]:     # (not at its part's start)
            fmt.speculate(src, p, carried)
        return carried

    def account(piece_stats, piece_want):
        for k, v in piece_stats.items():
            stats[k] = stats.get(k, 0) + v
        want.matched = want.matched or piece_want.matched
        _merge(want.carried, {k: v for k, v in piece_want.carried.items()
                              if k not in piece_want.notes and k not in fmt.CARRIED_OWN})
        _keep_noted(want.carried, piece_want)
        fmt.carried_merge(want.carried, piece_want)

    def again(piece):
        """Decode a piece here, in order, from the state the pieces before it left."""
        _decode(decode, fmt, piece, want, copy.deepcopy(want.carried), images, batch_rows,
                mode, list(stats))
        piece.exact = True

    pool = _pool(threads)
    queue = []
    todo = work()
    seq_base = 0            # the records before the next piece that its seq counts after
    last_message = None
    released = (-1, 0)      # (part number, byte): a mapped file's pages given back below
    try:
        while True:
            while len(queue) < IN_FLIGHT * threads and not (
                    fmt.FIRST_PIECE_ALONE and queue and queue[0][0].first):
                piece = next(todo, None)
                if piece is None:
                    break
                queue.append((piece, pool.submit(
                    _decode, decode, fmt, piece, want, state_for(piece),
                    images, batch_rows, mode, list(stats))))
            if not queue:
                break
            piece, fut = queue.pop(0)
            fut.result()
            if per_message and piece.message != last_message:
                seq_base = 0
            last_message = piece.message

            while True:
                if piece.message is not None and not piece.last and piece.want.open_end:
                    # the guessed cut after it fell inside a string: join the next piece
                    nxt, f = queue.pop(0) if queue else (next(todo), None)
                    if f is not None:
                        f.cancel()
                    piece = _Piece(Part(piece.part.data,
                                        np.array([piece.part.offsets[0],
                                                  nxt.part.offsets[-1]], dtype=np.int64),
                                        None, piece.part.base, head=piece.part.head,
                                        whole=piece.part.whole),
                                   piece.number, piece.message, piece.rest, nxt.last)
                    again(piece)
                elif piece.want.unsure:
                    break
                elif not piece.exact and (piece.error is not None
                                          or not _agrees(want.carried, piece.want,
                                                         fmt)):
                    again(piece)
                else:
                    break
            if piece.want.unsure:
                # it relied on what only the rest of its part can tell (ibm-delimited:
                # a table no record of the piece gives N for): the rest of the part is
                # decoded here, in one go, as one thread does
                abandoned.add(piece.number)
                for p, f in queue:
                    if p.number == piece.number:
                        f.cancel()
                queue = [(p, f) for p, f in queue if p.number != piece.number]
                w = _want_of(want, copy.deepcopy(want.carried))
                rest_stats = dict.fromkeys(stats, 0)
                try:
                    for key, batch in decode(fmt, [piece.rest], w, images, batch_rows,
                                             mode, rest_stats):
                        yield key, _add_seq(batch, seq_base, w.seq_masks[-1]
                                            if w.seq_masks else None)
                finally:
                    account(rest_stats, w)
                seq_base += rest_stats["records"]
                if piece.message is None and per_message:
                    seq_base = 0
                continue
            account(piece.stats, piece.want)
            for (key, batch), vendor in zip(piece.batches,
                                            _masks(piece.want, len(piece.batches))):
                yield key, _add_seq(batch, seq_base, vendor)
            if piece.error is not None:
                raise piece.error
            # a mapped file's pages behind the pieces handed out (each piece gives back
            # only its own, and too few at a time): read_batches stays bounded
            if released[0] != piece.number:
                released = (piece.number, int(piece.part.offsets[0]))
            released = (piece.number, release(piece.part.data, int(piece.part.offsets[-1]),
                                              released[1]))
            seq_base += piece.stats["records"]
            if piece.message is None and per_message:
                seq_base = 0
    finally:
        # pieces still running read the input: the caller may close it (a mapped file)
        # once this returns, so they end first
        wait([fut for _, fut in queue if not fut.cancel()])
