"""The house rules of docs/architecture.md: the import-linter contracts of pyproject.toml,
no import cycle anywhere in the package (function-level imports included), and no reference
decoder importing a compiled kernel."""
import ast
import os
import pathlib
import shutil
import subprocess
import sys

import grimp

ROOT = pathlib.Path(__file__).resolve().parents[1]
SRC = ROOT / "src" / "cdcfast"


def test_the_import_contracts_hold():
    exe = shutil.which("lint-imports") or os.path.join(os.path.dirname(sys.executable),
                                                       "lint-imports")
    res = subprocess.run([exe, "--no-cache"], cwd=ROOT, capture_output=True, text=True,
                         env={**os.environ, "PYTHONPATH": str(ROOT / "src")})
    assert res.returncode == 0, res.stdout[-4000:] + res.stderr[-2000:]
    assert "0 broken" in res.stdout


def cycles(graph) -> list:
    """The strongly connected components of more than one module (Tarjan)."""
    index, low, stack, on, found = {}, {}, [], set(), []

    def visit(v):
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in graph.find_modules_directly_imported_by(v):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                found.append(sorted(comp))

    sys.setrecursionlimit(max(10000, sys.getrecursionlimit()))
    for m in sorted(graph.modules):
        if m not in index:
            visit(m)
    return found


def test_no_import_cycles():
    """Every import statement counts, inside functions too; only `if TYPE_CHECKING:` imports
    (never executed) are left out."""
    graph = grimp.build_graph("cdcfast", include_external_packages=False,
                              exclude_type_checking_imports=True)
    assert len(graph.modules) > 40
    assert cycles(graph) == []


def test_the_cycle_finder_finds_one():
    class Graph:
        modules = {"a", "b", "c"}

        @staticmethod
        def find_modules_directly_imported_by(m):
            return {"a": {"b"}, "b": {"a"}, "c": {"a"}}[m]
    assert cycles(Graph) == [["a", "b"]]


def kernels() -> set:
    """The compiled kernels: native/cdcfast/*.pyx."""
    return {p.stem for p in (ROOT / "native" / "cdcfast").glob("*.pyx")}


def imported_names(path: pathlib.Path) -> set:
    """Every module a file imports, relative imports resolved against cdcfast.reference."""
    out = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            out.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                pkg = ["cdcfast", "reference"][:max(0, 2 - node.level + 1)]
                base = ".".join(pkg + ([base] if base else []))
            out.add(base)
            out.update(f"{base}.{a.name}" for a in node.names)
    return out


def test_reference_imports_no_kernel():
    names = set()
    for path in (SRC / "reference").glob("*.py"):
        names |= imported_names(path)
    native = {f"cdcfast.{k}" for k in kernels()}
    assert len(native) >= 8
    assert names & native == set()


def test_every_format_names_decoders_that_exist():
    import cdcfast
    from cdcfast.formats import get
    from cdcfast.formats.base import resolve
    for name in cdcfast.formats():
        F = get(name)
        runner, reference = F.RUNNER, F.REFERENCE
        assert runner.startswith("cdcfast.formats._") and runner.endswith(":native_batches")
        assert reference == f"cdcfast.reference.{F.__module__.rsplit('.', 1)[1]}" \
            ":reference_batches"
        assert callable(resolve(runner)) and callable(resolve(reference))
