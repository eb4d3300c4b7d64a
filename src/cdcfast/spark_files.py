"""How the data source ``cdcfast`` finds and plans its files (cdcfast.spark): plain Python,
no pyspark, no decoder — the paths a user gives, the files they name, and the partitions
those files are read in.

- **Paths** are local or shared-filesystem paths (the executors memory-map the files): a
  relative path is made absolute against the user's working folder (captured by
  ``cs.register(spark)``), a ``file:`` URI is its local path, any other scheme is refused.
- **Listing** follows Spark's file sources: a folder's files, recursively (the cdcfast
  default; ``recursiveFileLookup=false``: only its own files), without hidden (``.``) or
  ``_`` names and without the ``*.catalog.json`` sidecars ``cdcfast generate`` writes; a glob's
  matches the same way; a file named explicitly is always read. ``pathGlobFilter`` keeps the
  files whose name matches a glob (Hadoop's syntax: ``*``, ``?``, ``[abc]``, ``[^a]``,
  ``{a,b}``).
- **Partitions** follow Spark's ``FilePartition`` logic: ``maxSplitBytes = min(split_bytes,
  max(open_cost, total / min_partitions))`` with ``total`` the files' bytes plus ``open_cost``
  per file; a splittable file bigger than that is cut into byte ranges of ``maxSplitBytes``;
  the pieces, biggest first, are packed next-fit into partitions of at most ``maxSplitBytes``,
  each piece counting ``open_cost`` more. No byte of a file is read here: a task finds the
  record starts of its byte ranges itself (``Decoder.read_range``).

A piece is ``(path, start, end, size)``: bytes start:end of a file that had `size` bytes
when planned (``end == size``: to its end).
"""
from __future__ import annotations

import glob as _glob
import os
import re
from urllib.parse import unquote, urlsplit

OPEN_COST = 4 << 20             # Spark's spark.sql.files.openCostInBytes default
SIDECAR = ".catalog.json"       # `cdcfast generate` writes X.catalog.json beside X

_SCHEME = re.compile(r"^([A-Za-z][A-Za-z0-9+.\-]+):")


def local_path(path, cwd: str | None = None) -> str:
    """The absolute local path `path` names: a ``file:`` URI's path, a relative path joined
    to `cwd` (None: this process's working folder). A URI of another scheme (hdfs://,
    s3a://, …) is a ValueError: the data source reads local or shared-filesystem paths."""
    p = os.fspath(path)
    m = _SCHEME.match(p)
    if m:
        if m.group(1).lower() != "file":
            raise ValueError(
                f"the cdcfast data source reads local or shared-filesystem paths (the "
                f"executors memory-map the files), not {m.group(1)}: URIs ({p}). For files "
                "on another filesystem, read their bytes with Spark and decode the column: "
                'cs.decode(spark.read.format("binaryFile").load(…), …, column="content") '
                'or, for text formats, spark.read.format("text") (one message per line)')
        u = urlsplit(p)
        if u.netloc not in ("", "localhost"):
            raise ValueError(f"a file: URI on another host ({p}): give a local path")
        p = unquote(u.path)
        if not p.startswith("/"):
            raise ValueError(f"a file: URI needs an absolute path, not {path}")
    if not os.path.isabs(p):
        base = os.getcwd() if cwd is None else cwd
        # a glob is joined to a folder whose own name may hold glob characters
        p = os.path.join(_glob.escape(base) if _glob.has_magic(p) else base, p)
    return os.path.normpath(p)


def name_filter(pattern: str | None):
    """A predicate on file names for `pattern`, a glob as Spark's ``pathGlobFilter`` takes it
    (Hadoop's GlobFilter: ``*`` any run of characters, ``?`` one, ``[abc]`` / ``[a-z]`` /
    ``[^a]`` / ``[!a]`` a class, ``{a,b}`` alternatives, ``\\`` escapes); None: every name."""
    if pattern is None:
        return None
    rx = re.compile(_glob_regex(pattern), re.DOTALL)
    return lambda name: rx.fullmatch(name) is not None


def _glob_regex(pattern: str) -> str:
    out, i, n, depth = [], 0, len(pattern), 0
    while i < n:
        c = pattern[i]
        if c == "\\" and i + 1 < n:
            out.append(re.escape(pattern[i + 1]))
            i += 2
            continue
        if c == "*":
            out.append(".*")
        elif c == "?":
            out.append(".")
        elif c == "[":
            j = pattern.find("]", i + 2 if i + 1 < n and pattern[i + 1] in "^!" else i + 1)
            if j < 0:
                raise ValueError(f"pathGlobFilter {pattern!r}: unclosed [")
            body = pattern[i + 1:j]
            neg = body[:1] in ("^", "!")
            body = body[1:] if neg else body
            out.append("[" + ("^" if neg else "") + body.replace("\\", "\\\\") + "]")
            i = j
        elif c == "{":
            depth += 1
            out.append("(?:")
        elif c == "}" and depth:
            depth -= 1
            out.append(")")
        elif c == "," and depth:
            out.append("|")
        else:
            out.append(re.escape(c))
        i += 1
    if depth:
        raise ValueError(f"pathGlobFilter {pattern!r}: unclosed {{")
    return "".join(out)


def listed(name: str) -> bool:
    """Whether a file met in a folder (or matched by a glob) is read: not hidden, not ``_``
    (Spark's _SUCCESS, _metadata …), not a ``*.catalog.json`` sidecar."""
    return not name.startswith((".", "_")) and not name.endswith(SIDECAR)


def list_files(paths, missing_ok: bool = False, recursive: bool = True,
               name_glob: str | None = None) -> list:
    """The files of `paths` (files, folders, globs; absolute, see local_path), sorted, each
    once. A folder gives its files (`recursive`: those of its subfolders too, hidden and
    ``_`` folders left out), a glob its matches (a matched folder as a folder), both without
    hidden, ``_`` and sidecar files (`listed`); a file named without a glob is always read.
    `name_glob` (pathGlobFilter) keeps only the files whose name matches it. A path or glob
    that matches nothing is a FileNotFoundError, unless `missing_ok` (a folder stream waiting
    for its first files)."""
    keep = name_filter(name_glob)
    out = set()

    def add(f):
        if keep is None or keep(os.path.basename(f)):
            out.add(f)

    for p in paths:
        p = os.fspath(p)
        magic = _glob.has_magic(p)
        hits = sorted(_glob.glob(p, recursive=True)) if magic else \
            ([p] if os.path.exists(p) else [])
        if not hits and not missing_ok:
            raise FileNotFoundError(f"no file matches {p}")
        for h in hits:
            if magic and not listed(os.path.basename(h)):
                continue            # a glob's hidden, _ or sidecar match
            if os.path.isdir(h):
                for root, dirs, files in os.walk(h):
                    dirs[:] = [d for d in dirs if not d.startswith((".", "_"))] \
                        if recursive else []
                    for f in files:
                        if listed(f):
                            add(os.path.join(root, f))
            elif os.path.isfile(h):
                add(h)
    return sorted(out)


def max_split_bytes(sizes, split_bytes: int, min_partitions: int,
                    open_cost: int = OPEN_COST) -> int:
    """Spark's FilePartition.maxSplitBytes: min(split_bytes, max(open_cost, bytes per
    partition)), the bytes counting `open_cost` per file."""
    total = sum(s + open_cost for s in sizes)
    per = total // max(1, int(min_partitions))
    return max(1, min(int(split_bytes), max(int(open_cost), per)))


def pieces(files, split: int, splittable: bool) -> list:
    """(path, start, end, size) pieces of `files` ((path, size) pairs): byte ranges of
    `split` bytes of a file bigger than that when `splittable`, else the whole file."""
    out = []
    for path, size in files:
        if splittable and size > split:
            out += [(path, a, min(a + split, size), size) for a in range(0, size, split)]
        else:
            out.append((path, 0, size, size))
    return out


def pack(pieces_, split: int, open_cost: int = OPEN_COST) -> list:
    """Spark's FilePartition.getFilePartitions: the pieces, biggest first, packed next-fit
    into partitions of at most `split` bytes, each piece counting `open_cost` more (a piece
    bigger than that is a partition of its own). Each partition lists its pieces in file
    order (path, start), as they are read, and the partitions come in the order of their
    first pieces (Spark leaves them biggest first)."""
    parts, current, size = [], [], 0
    for piece in sorted(pieces_, key=lambda p: p[2] - p[1], reverse=True):
        length = piece[2] - piece[1]
        if current and size + length > split:
            parts.append(sorted(current))
            current, size = [], 0
        current.append(piece)
        size += length + open_cost
    if current:
        parts.append(sorted(current))
    return sorted(parts)        # in file order: a read's rows come in the order of its files


def plan(files, split_bytes: int, min_partitions: int, splittable: bool,
         open_cost: int = OPEN_COST) -> list:
    """The partitions (lists of pieces) that read `files` (paths): sizes from the filesystem
    only, never their bytes (a file gone since it was listed is left out)."""
    sized = []
    for f in files:
        try:
            sized.append((f, os.path.getsize(f)))
        except FileNotFoundError:
            pass
    split = max_split_bytes([s for _, s in sized], split_bytes, min_partitions, open_cost)
    return pack(pieces(sized, split, splittable), split, open_cost)
