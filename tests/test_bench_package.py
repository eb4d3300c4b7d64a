"""The bench package (src/cdcfast/bench/): what its callers import, and an import graph without
a cycle — every `import` and `from … import` of its modules, top-level and inside functions.

Run as a script to list the graph's edges: python tests/test_bench_package.py"""
import ast
import graphlib
import importlib.util
import pathlib

import cdcfast.bench

PACKAGE = "cdcfast.bench"
FOLDER = pathlib.Path(cdcfast.bench.__file__).parent


def modules() -> dict:
    """{module name in the package ("__init__" for the package itself): its parsed source}"""
    return {p.stem: ast.parse(p.read_text(encoding="utf-8"), str(p))
            for p in sorted(FOLDER.glob("*.py"))}


def _member(name: str, names) -> str | None:
    """The package's module that absolute module `name` is (or lies in), or None."""
    if name == PACKAGE:
        return "__init__"
    if name.startswith(PACKAGE + "."):
        first = name[len(PACKAGE) + 1:].split(".")[0]
        return first if first in names else None
    return None


def edges() -> set:
    """(importer, imported) pairs of the package's modules."""
    mods = modules()
    out = set()
    for mod, tree in mods.items():
        for node in ast.walk(tree):
            targets = []
            if isinstance(node, ast.Import):
                targets = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom):
                if node.level:          # every module of the package, __init__ too, sits in it
                    base = PACKAGE.split(".")
                    base = base[:len(base) - (node.level - 1)]
                    where = ".".join(base + ([node.module] if node.module else []))
                else:
                    where = node.module
                # `from X import m`: the submodule X.m when there is one, else X itself
                for a in node.names:
                    sub = f"{where}.{a.name}"
                    targets.append(sub if _member(sub, mods) not in (None, "__init__")
                                   else where)
            for t in targets:
                m = _member(t, mods)
                if m is not None and m != mod:
                    out.add((mod, m))
    return out


def test_the_package_exposes_what_its_callers_use():
    # cli.py: run, dumps; bench/ (pytest-benchmark): the cases and the contenders
    for name in ("run", "dumps", "report", "make_case", "Case", "best_time", "best_times",
                 "cdcfast_decode", "cdcfast_headers", "reference_decode", "pyarrow_csv",
                 "pyarrow_json", "json_loads", "msgspec_loads", "struct_decode"):
        assert callable(getattr(cdcfast.bench, name)), name
    for name in ("core", "_timing", "debezium", "lldf", "olr", "qlik", "spark"):
        importlib.import_module(f"{PACKAGE}.{name}")
    for old in ("bench_debezium", "bench_lldf", "bench_olr", "bench_qlik", "bench_spark"):
        assert importlib.util.find_spec(f"cdcfast.{old}") is None, old


def test_no_module_imports_by_name_at_run_time():
    """The graph below sees every import only if none is made from a string."""
    for mod, tree in modules().items():
        for node in ast.walk(tree):
            if isinstance(node, ast.Call):
                f = node.func
                name = f.attr if isinstance(f, ast.Attribute) else getattr(f, "id", None)
                assert name not in ("import_module", "__import__"), mod


def test_the_import_graph_has_no_cycle():
    found = edges()
    graph = {m: set() for m in modules()}
    for a, b in found:
        graph[a].add(b)
    list(graphlib.TopologicalSorter(graph).static_order())     # raises CycleError on a cycle
    # the shared case and timing sit below both users; the Spark bench does not import core
    assert {("core", "_timing"), ("spark", "_timing"), ("core", "spark")} <= found
    assert not {e for e in found if e[1] in ("core", "__init__") and e[0] != "__init__"}
    assert not {e for e in found if e[0] == "_timing"}


if __name__ == "__main__":
    for a, b in sorted(edges()):
        print(f"{a} -> {b}")
