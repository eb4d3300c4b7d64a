"""The format registry (cdcfast.formats) is the one list of formats: every format declares what
the rest of the package asks of it, every other list derives from those declarations, and the
core modules reach a format only through the registry, by name (issue #21)."""
import ast
import glob
import importlib
import importlib.util
import os
import re
from pathlib import Path

import pytest

import cdcfast
from cdcfast import Catalog, _native_state, demo, encode
from cdcfast.formats import _REGISTRY, get, names, native_modules

SRC = Path(cdcfast.__file__).parent
NATIVE_DIR = SRC.parent.parent / "native" / "cdcfast"
# extension modules no decoder runs, built for their tests and benchmark: the JSON scanner's
# entry points (tests/test_json_scan.py), the hex-mask column kernel (test_qlik_masks.py) and
# the lldf kernel's test hooks (test_lldf_kernels.py)
SHARED_NATIVE = {"_json", "_masks", "_lldf_testing", "_apply"}
# the modules that may import no format module (the house rule of issue #21)
CORE = ["catalog.py", "api.py", "envelope.py", "errors.py", "sources.py", "pieces.py",
        "formats/__init__.py"]


@pytest.mark.parametrize("name", names())
def test_every_format_declares_what_the_package_asks_of_it(name):
    F = get(name)
    assert F.name == name
    assert isinstance(F.SUMMARY, str) and F.SUMMARY
    assert isinstance(F.DEFAULTS, dict) and isinstance(F.HELP, dict)
    assert set(F.HELP) <= set(F.DEFAULTS)
    assert isinstance(F.TITLE, str) and F.TITLE
    assert isinstance(F.EXTENSION, str) and re.fullmatch(r"[a-z0-9]+", F.EXTENSION)
    assert isinstance(F.NATIVE, tuple) and F.NATIVE
    assert all(isinstance(m, str) and m.startswith("_") for m in F.NATIVE)
    assert isinstance(F.ENCODER, str) and F.ENCODER
    assert isinstance(F.CATALOG_ADVICE, str)
    assert F.catalog_from is None or callable(F.catalog_from)
    # a format that builds catalogs says how (Spark's error), and Catalog.from_<name> has it
    assert bool(F.CATALOG_ADVICE) == (F.catalog_from is not None)
    if F.catalog_from is not None:
        assert callable(getattr(Catalog, f"from_{name}"))
    module = importlib.import_module(f"cdcfast.encode.{F.ENCODER}")
    for fn in ("encode", "generate", "events"):
        assert callable(getattr(module, fn)), (F.ENCODER, fn)


def test_the_encoders_derive_from_the_registry():
    assert encode._modules() == {n: get(n).ENCODER for n in names()}
    with pytest.raises(ValueError, match="no encoder for format 'nope'; known: debezium, "):
        encode.encode([], "nope")


def test_the_native_modules_derive_from_the_registry():
    assert _native_state.MODULES == native_modules()
    assert set(native_modules()) == {m for n in names() for m in get(n).NATIVE}


def test_setup_builds_the_formats_native_modules_and_the_shared_ones():
    built = {os.path.basename(p)[:-len(".pyx")] for p in glob.glob(str(NATIVE_DIR / "*.pyx"))}
    assert built == set(native_modules()) | SHARED_NATIVE
    assert not SHARED_NATIVE & set(native_modules())
    if cdcfast.native_available():
        for m in sorted(built):
            assert importlib.util.find_spec(f"cdcfast.{m}") is not None, m


def test_the_demo_formats_derive_from_the_registry():
    assert demo.FORMATS == tuple((n, get(n).TITLE, get(n).EXTENSION, demo.ROWS[n])
                                 for n in names())
    assert set(demo.ROWS) == set(names())


def test_no_other_module_lists_every_format():
    """A literal naming every registered format is a list of formats: only the registry holds
    one (and demo.ROWS, the demo's sample sizes, checked against the registry above)."""
    allowed = {("formats/__init__.py", "_REGISTRY"), ("demo.py", "ROWS")}
    every = set(names())
    found = []
    for path in sorted(SRC.rglob("*.py")):
        rel = path.relative_to(SRC).as_posix()
        tree = ast.parse(path.read_text(encoding="utf-8"))
        owner = {}
        for node in ast.walk(tree):
            if isinstance(node, (ast.Assign, ast.AnnAssign)):
                targets = node.targets if isinstance(node, ast.Assign) else [node.target]
                for sub in ast.walk(node.value) if node.value is not None else ():
                    for t in targets:
                        if isinstance(t, ast.Name):
                            owner.setdefault(id(sub), t.id)
        for node in ast.walk(tree):
            elts = node.keys if isinstance(node, ast.Dict) else \
                node.elts if isinstance(node, (ast.Tuple, ast.List, ast.Set)) else None
            if elts is None:
                continue
            strings = set()
            for e in elts:
                for sub in ast.walk(e) if e is not None else ():
                    if isinstance(sub, ast.Constant) and isinstance(sub.value, str):
                        strings.add(sub.value)
            if every <= strings and (rel, owner.get(id(node))) not in allowed:
                found.append(f"{rel}:{node.lineno}")
    assert not found, f"lists of the formats outside the registry: {found}"


def _imports(path: Path, package: str):
    """Every module an import statement of `path` names (any level, function-level too),
    resolved to its absolute name; `from X import y` also names X.y (a submodule or not)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for a in node.names:
                yield node.lineno, a.name
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                parts = package.split(".")
                base = ".".join(parts[:len(parts) - node.level + 1])
                mod = f"{base}.{node.module}" if node.module else base
            else:
                mod = node.module
            yield node.lineno, mod
            for a in node.names:
                yield node.lineno, f"{mod}.{a.name}"


# a format module: a module of cdcfast/formats but the registry and the shared base (the
# formats, their runs, ...), the reference decoders, the encoders
_FORMAT_SIDE = sorted(p.stem for p in (SRC / "formats").glob("*.py")
                      if p.stem not in ("__init__", "base"))
FORMAT_MODULE = re.compile(rf"cdcfast\.(formats\.({'|'.join(_FORMAT_SIDE)})|reference|encode)"
                           r"(\.|$)")


@pytest.mark.parametrize("rel", CORE)
def test_core_imports_no_format_module(rel):
    path = SRC / rel
    package = "cdcfast.formats" if rel.startswith("formats/") else "cdcfast"
    bad = [(line, mod) for line, mod in _imports(path, package) if FORMAT_MODULE.match(mod)]
    assert not bad, f"{rel} imports format modules: {bad}"


def test_the_scan_sees_a_format_import_at_any_level(tmp_path):
    p = tmp_path / "m.py"
    p.write_text("def f():\n    from .formats.debezium import Debezium\n"
                 "    from .formats import olr\n    from . import reference\n")
    mods = {m for _, m in _imports(p, "cdcfast")}
    assert {"cdcfast.formats.debezium", "cdcfast.formats.olr", "cdcfast.reference"} <= mods
    assert all(FORMAT_MODULE.match(m) for m in ("cdcfast.formats.debezium",
                                                "cdcfast.formats._qlik_run",
                                                "cdcfast.reference.olr", "cdcfast.encode"))
    assert not any(FORMAT_MODULE.match(m) for m in ("cdcfast.formats", "cdcfast.formats.get",
                                                    "cdcfast.formats.base", "cdcfast.catalog"))


def test_the_registry_names_the_format_classes():
    for name, target in _REGISTRY.items():
        module, cls = target.split(":")
        assert get(name).__module__ == module and get(name).__name__ == cls


@pytest.mark.parametrize("name", ["debezium", "olr", "qlik"])
def test_catalog_from_wrappers_reach_the_format(name):
    """Catalog.from_<name> is the format's catalog_from (the values: tests/test_catalog_*)."""
    data, _ = encode.generate(name, rows=3, table_width=4, seed=2, messages=True)
    built = getattr(Catalog, f"from_{name}")(data)
    assert type(built) is Catalog
    assert built.to_dict() == get(name).catalog_from(data).to_dict()

    class Mine(Catalog):
        pass
    assert type(getattr(Mine, f"from_{name}")(data)) is Mine
