"""Writes the harnesses' seed inputs:

- fuzz/corpus/HARNESS/: the seeds of the generators and the vendors' examples (TARGET.seeds()),
  committed (with what the campaign adds, minimized, as grown-…: docs/reliability.md);
- build/fuzz/peer/HARNESS/: the peer data's messages (../shared/peer-data), which the
  campaign reads but the repository never holds.

    python fuzz/seeds.py [HARNESS…]        (all of them by default)
    python fuzz/seeds.py --adopt HARNESS DIR  copy to fuzz/corpus/HARNESS the inputs of DIR it
                                            lacks, but none derived from the peer data
                                            (ci/fuzz.sh --merge)
"""
import hashlib
import importlib
import pathlib
import sys

import harness

HARNESSES = ("ibm", "lldf", "debezium", "olr", "qlik", "split", "catalog", "hexmask",
             "jsonscan")


def peer_seeds(name: str):
    """The peer data's messages in the input layout of harness `name` (none without
    ../shared)."""
    enc = harness.encode_case
    if name == "olr":
        last = len(importlib.import_module(name).TARGET.variants) - 1
        for p in harness.peer_files("olr", "*/output.json"):
            msgs = [m for m in p.read_bytes().split(b"\n") if m.strip()][:12]
            yield enc(form="list", catalog=False, variant=last, data=msgs)
            yield enc(form="stream", catalog=False, call="headers", variant=last,
                      data=b"\n".join(msgs))
    elif name == "qlik":
        last = len(importlib.import_module(name).TARGET.variants) - 1
        for p in harness.peer_files("qlik", "*.json"):
            yield enc(form="list", catalog=True, variant=last, data=[p.read_bytes()])
            yield enc(form="stream", catalog=True, call="read_batches", variant=last,
                      data=p.read_bytes())
    elif name == "debezium":
        last = len(importlib.import_module(name).TARGET.variants) - 1
        for p in harness.peer_files("debezium", "*/*"):
            if p.suffix in (".json", ".txt"):
                yield enc(form="stream", catalog=False, variant=last, data=p.read_bytes()[:16000])
    elif name == "catalog":
        for p in harness.peer_files("debezium", "*/*"):
            if p.suffix in (".json", ".txt"):
                yield bytes([0]) + p.read_bytes()[:16000]
        for p in harness.peer_files("olr", "*/output.json"):
            yield bytes([1]) + p.read_bytes()[:16000]
        for p in harness.peer_files("qlik", "*.json"):
            yield bytes([2]) + p.read_bytes()


def write(folder: pathlib.Path, inputs) -> int:
    folder.mkdir(parents=True, exist_ok=True)
    n = 0
    for data in inputs:
        (folder / hashlib.sha1(data).hexdigest()).write_bytes(data)
        n += 1
    return n


WINDOW = 12     # bytes: a run this long of a peer file that our own seeds lack marks its copy


def peer_marks(name: str) -> set:
    """Every WINDOW-byte run of the peer data's messages for harness `name` that none of our
    own seeds (every harness's TARGET.seeds(): the generators', the vendor examples') holds:
    what only a copy of the peer data, or a mutation of one, can contain."""
    def runs(data: bytes):
        return {data[i:i + WINDOW] for i in range(len(data) - WINDOW + 1)}
    marks = set()
    for data in peer_seeds(name):
        marks |= runs(data)
    for other in HARNESSES:
        for data in importlib.import_module(other).TARGET.seeds():
            if not marks:
                return marks
            marks -= runs(data)
    return marks


def adopt(name: str, folder: pathlib.Path) -> None:
    """Copy to fuzz/corpus/`name` each input of `folder` it lacks, unless it holds a run of
    the peer data (`peer_marks`): the repository never holds the peer data, even mutated."""
    corpus = harness.HERE / "corpus" / name
    have = {hashlib.sha1(p.read_bytes()).hexdigest() for p in corpus.iterdir()}
    marks = peer_marks(name)
    added = derived = 0
    for p in sorted(folder.iterdir()):
        data = p.read_bytes()
        sha = hashlib.sha1(data).hexdigest()
        if sha in have:
            continue
        if any(data[i:i + WINDOW] in marks for i in range(len(data) - WINDOW + 1)):
            derived += 1
            continue
        # grown-…: what a campaign found (the smoke run starts from the seeds alone)
        (corpus / f"grown-{sha}").write_bytes(data)
        have.add(sha)
        added += 1
    print(f"{name}: {added} inputs added to fuzz/corpus/{name}, {derived} left out (derived "
          f"from the peer data)")


def main(names) -> None:
    for name in names:
        target = importlib.import_module(name).TARGET
        a = write(harness.HERE / "corpus" / name, target.seeds())
        b = write(harness.ROOT / "build" / "fuzz" / "peer" / name, peer_seeds(name))
        print(f"{name}: {a} seeds in fuzz/corpus/{name}, {b} from the peer data in "
              f"build/fuzz/peer/{name}")


if __name__ == "__main__":
    if sys.argv[1:2] == ["--adopt"]:
        adopt(sys.argv[2], pathlib.Path(sys.argv[3]))
    else:
        main(sys.argv[1:] or HARNESSES)
