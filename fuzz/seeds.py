"""Writes the harnesses' seed inputs:

- fuzz/corpus/HARNESS/: the seeds of the generators and the vendors' examples (TARGET.seeds()),
  committed (with what the campaign adds, minimized: docs/reliability.md);
- build/fuzz/peer/HARNESS/: the peer data's messages (../shared/peer-data), which the
  campaign reads but the repository never holds.

    python fuzz/seeds.py [HARNESS…]        (all of them by default)
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


def main(names) -> None:
    for name in names:
        target = importlib.import_module(name).TARGET
        a = write(harness.HERE / "corpus" / name, target.seeds())
        b = write(harness.ROOT / "build" / "fuzz" / "peer" / name, peer_seeds(name))
        print(f"{name}: {a} seeds in fuzz/corpus/{name}, {b} from the peer data in "
              f"build/fuzz/peer/{name}")


if __name__ == "__main__":
    main(sys.argv[1:] or HARNESSES)
