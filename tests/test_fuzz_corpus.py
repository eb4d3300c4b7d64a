"""The fuzzers' corpus, replayed: every input under fuzz/corpus/HARNESS goes through that
harness's check (fuzz/HARNESS.py, TARGET.check) in the normal build — native against
reference, error rows, only documented exceptions —, so an input a campaign kept (and every
input that once showed a bug) keeps passing. No timing here: the fuzzers' resource limits
are judged while fuzzing (ci/fuzz.sh), never in the test suite."""
from __future__ import annotations

import importlib
import pathlib
import sys

import pytest

import cdcfast

FUZZ = pathlib.Path(__file__).resolve().parents[1] / "fuzz"
sys.path.insert(0, str(FUZZ))
HARNESSES = ("ibm", "lldf", "debezium", "olr", "qlik", "split", "catalog", "hexmask",
             "jsonscan")


def test_every_harness_is_replayed():
    """A harness added under fuzz/ is listed here and in ci/fuzz.sh."""
    found = {p.stem for p in FUZZ.glob("*.py")} - {"harness", "seeds"}
    assert found == set(HARNESSES)
    script = (FUZZ.parent / "ci" / "fuzz.sh").read_text()
    assert f"HARNESSES=({' '.join(HARNESSES)})" in script


@pytest.mark.skipif(not cdcfast.native_available(), reason="native kernels only")
@pytest.mark.parametrize("name", HARNESSES)
def test_corpus_replays(name):
    target = importlib.import_module(name).TARGET
    files = sorted((FUZZ / "corpus" / name).iterdir())
    assert files, f"fuzz/corpus/{name} is empty (python fuzz/seeds.py {name})"
    for path in files:
        try:
            target.check(path.read_bytes())
        except Exception as e:
            raise AssertionError(f"fuzz/corpus/{name}/{path.name}: {type(e).__name__}: "
                                 f"{str(e)[:3000]}") from e


def test_corpus_is_small():
    size = sum(p.stat().st_size for p in (FUZZ / "corpus").rglob("*") if p.is_file())
    assert size <= 5 << 20, f"fuzz/corpus holds {size} bytes (at most 5 MB: minimize it)"
