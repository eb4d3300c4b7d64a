"""The numbers a format shares with its kernel have one spec, src/cdcfast/formats/_<x>_codes.py
(#21): the kernel cimports them from native/cdcfast/_<x>_codes.pxd, generated from the spec by
native/codes_pxd.py (setup.py runs it), and the format's Python imports them from the spec.
Checked here: the committed .pxd files are what the generator writes, a spec imports nothing,
the format modules still offer the names, and no kernel keeps a copy of its own: not its .pyx
files, not its .pxd files, not its C header (lldf's _lldf.h takes every such number from its
callers, so it holds none), nor the Python modules that use them. Likewise the numbers every
JSON kernel shares (_json_codes: the stops, the problem codes of a value, the strict scanner's
codes, which the C of _json.h must say too) and the value kinds of cdcfast.catalog
(native/cdcfast/_kinds.pxd)."""
import ast
import importlib
import pathlib
import re
import runpy

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[1]
NATIVE = ROOT / "native" / "cdcfast"
GEN = runpy.run_path(str(ROOT / "native" / "codes_pxd.py"))

# kernel -> (its generated .pxd, the modules that offer the spec's names under their old homes)
KERNELS = {
    "_debezium": ("_debezium_codes.pxd", []),   # (no old home: its own test below)
    "_ibm": ("_ibm_codes.pxd", ["cdcfast.formats.ibm_delimited"]),
    "_lldf": ("_lldf_codes.pxd", ["cdcfast.formats.lldf"]),
    "_olr": ("_olr_codes.pxd", ["cdcfast.formats._olr_run"]),
    "_qlik": ("_qlik_codes.pxd", ["cdcfast.formats._qlik_run"]),
}
# the spec every JSON kernel shares: the native files that cimport it, the modules that offer
# its names under their old homes
SHARED = {"_json_codes.pxd": (["_walk.pxd", "_rows.pyx"], ["cdcfast.reference._jsonscan"])}
# the kernels that take the shared numbers (through _walk.pxd), which must keep no copy
JSON_KERNELS = ["_walk.pxd", "_walk.pyx", "_rows.pxd", "_rows.pyx", "_debezium.pyx", "_olr.pyx",
                "_qlik.pyx"]
# the Python modules that know lldf's numbers, each reading them from the spec
LLDF_PYTHON = ["formats/lldf.py", "formats/_lldf_run.py", "reference/lldf.py"]


def kernel_files(kernel):
    """A kernel's sources: its .pyx, and its other .pyx, .pxd and .h files (_lldf_frame.pyx,
    _lldf.h, ...), not the generated .pxd of its codes."""
    pxd = KERNELS[kernel][0]
    return sorted(p for p in NATIVE.glob(f"{kernel}*") if p.suffix in (".pyx", ".pxd", ".h")
                  and p.name != pxd and (p.stem == kernel or p.stem.startswith(kernel + "_")))


def spec(pxd):
    return GEN["constants"](str(ROOT / GEN["SPECS"][pxd]))


def code_lines(path):
    """(line number, the line without its comment) of a .pyx or .pxd; of a C header, without
    its /* */ and // comments (a # there starts a directive, which stays)."""
    text = path.read_text(encoding="utf-8")
    if path.suffix == ".h":
        text = re.sub(r"/\*.*?\*/", lambda m: "\n" * m.group(0).count("\n"), text, flags=re.S)
        for i, line in enumerate(text.splitlines(), 1):
            yield i, line.split("//", 1)[0]
        return
    for i, line in enumerate(text.splitlines(), 1):
        yield i, line.split("#", 1)[0]


def test_every_kernel_with_codes_is_listed():
    assert sorted([pxd for pxd, _ in KERNELS.values()] + list(SHARED)) == sorted(GEN["SPECS"])


@pytest.mark.parametrize("pxd", sorted(GEN["SPECS"]))
def test_the_committed_pxd_is_generated_from_its_spec(pxd):
    committed = (NATIVE / pxd).read_text(encoding="utf-8")
    assert committed == GEN["render"](pxd), \
        f"native/cdcfast/{pxd} is stale: run python native/codes_pxd.py"
    assert spec(pxd), pxd


@pytest.mark.parametrize("pxd", sorted(GEN["SPECS"]))
def test_a_spec_is_pure_data(pxd):
    """The build executes a spec by its path: no imports, only upper-case int constants."""
    tree = ast.parse((ROOT / GEN["SPECS"][pxd]).read_text(encoding="utf-8"))
    for node in tree.body:
        assert not isinstance(node, (ast.Import, ast.ImportFrom)), node.lineno
        if isinstance(node, ast.Expr):          # (the docstring)
            continue
        assert isinstance(node, ast.Assign) and len(node.targets) == 1, node.lineno
        name = node.targets[0]
        assert isinstance(name, ast.Name) and GEN["NAME"].match(name.id), node.lineno
        value = node.value
        if isinstance(value, ast.UnaryOp) and isinstance(value.op, ast.USub):   # (-1)
            value = value.operand
        assert isinstance(value, ast.Constant) and type(value.value) is int, name.id


def test_names_are_unique_within_a_spec_and_the_values_of_codes_distinct():
    for pxd in GEN["SPECS"]:
        consts = spec(pxd)
        for prefix in ("E_", "P_", "H_", "W_", "STOP_", "IMG_", "K_", "FR_", "F_", "S_", "ERR_"):
            values = [v for k, v in consts.items() if k.startswith(prefix)]
            assert len(values) == len(set(values)), (pxd, prefix)


@pytest.mark.parametrize("kernel", sorted(KERNELS))
def test_the_format_modules_offer_the_specs_names(kernel):
    pxd, modules = KERNELS[kernel]
    for module in modules:
        m = importlib.import_module(module)
        for name, value in spec(pxd).items():
            if name.startswith(("E_", "P_", "OFF_", "H_", "K_", "FR_")) or name == "HEADER_MIN":
                assert getattr(m, name) == value, (module, name)


@pytest.mark.parametrize("pxd", sorted(SHARED))
def test_the_old_homes_offer_the_shared_names(pxd):
    for module in SHARED[pxd][1]:
        m = importlib.import_module(module)
        for name, value in spec(pxd).items():
            if name.startswith("E_") or name == "MAX_DEPTH":
                assert getattr(m, name) == value, (module, name)


def test_the_json_formats_codes_begin_with_the_shared_ones():
    """A JSON kernel's own P_* codes start with the ones the shared walk and rows write
    (W_VALUE is the format's P_VALUE, and so on)."""
    shared = {k[2:]: v for k, v in spec("_json_codes.pxd").items() if k.startswith("W_")}
    assert set(shared) == {"VALUE", "TWICE", "NOT_NULL", "SURROGATE", "MISSING"}
    for pxd in ("_olr_codes.pxd", "_qlik_codes.pxd"):
        consts = spec(pxd)
        assert {k: consts["P_" + k] for k in shared} == shared, pxd


def test_the_c_scanner_says_the_specs_codes():
    """_json.h is plain C (no Cython to cimport the spec): its enum and its depth limit must
    be the spec's numbers, name by name."""
    text = (NATIVE / "_json.h").read_text(encoding="utf-8")
    c_codes = {"E_" + m.group(1): int(m.group(2))
               for m in re.finditer(r"^\s*CDC_JSON_E_(\w+)\s*=\s*(\d+)\s*,", text, re.M)}
    depth = re.search(r"^#define CDC_JSON_MAX_DEPTH (\d+)$", text, re.M)
    consts = spec("_json_codes.pxd")
    assert c_codes == {k: v for k, v in consts.items() if k.startswith("E_")}
    assert depth and int(depth.group(1)) == consts["MAX_DEPTH"]


def test_the_kinds_pxd_is_generated_from_the_catalog():
    from cdcfast import catalog
    committed = (NATIVE / GEN["KINDS"][0]).read_text(encoding="utf-8")
    assert committed == GEN["render"](GEN["KINDS"][0]), \
        "native/cdcfast/_kinds.pxd is stale: run python native/codes_pxd.py"
    kinds = GEN["kinds"](str(ROOT / GEN["KINDS"][1]))
    assert len(kinds) == 15
    assert kinds == {name: getattr(catalog, name) for name in kinds}
    assert {catalog.parse_type(t).kind for t in ("BOOLEAN", "DECFLOAT", "DATE")} == \
        {kinds["BOOL"], kinds["DECTEXT"], kinds["DATE32"]}


def _copies(text_lines, names):
    """Lines (number, name) that define one of `names`: an enum entry, a DEF, a cdef
    variable or a plain assignment at the start of a line, or a C #define (of the name, or
    of it behind a CDC_<FORMAT>_ prefix, as C names a kernel's constants)."""
    define = re.compile(r"^\s*(?:#\s*define\s+(?:CDC_[A-Z]+_)?([A-Z][A-Z0-9_]*)\b"
                        r"|(?:DEF\s+|cdef\s+(?:const\s+)?[\w ]*?\s)?(?:CDC_[A-Z]+_)?"
                        r"([A-Z][A-Z0-9_]*)\s*=[^=])")
    found = []
    for i, code in text_lines:
        m = define.match(code)
        name = m and (m.group(1) or m.group(2))
        if name in names:
            found.append((i, name))
    return found


@pytest.mark.parametrize("kernel", sorted(KERNELS))
def test_no_kernel_keeps_its_own_copy(kernel):
    pxd, _ = KERNELS[kernel]
    path = NATIVE / f"{kernel}.pyx"
    text = path.read_text(encoding="utf-8")
    assert re.search(rf"^from cdcfast\.{pxd[:-4]} cimport", text, re.M), \
        f"{path.name} does not cimport {pxd}"
    for p in kernel_files(kernel):
        assert not _copies(code_lines(p), set(spec(pxd))), f"{p.name} redefines spec'd codes"


def test_the_lldf_kernel_is_its_files():
    assert [p.name for p in kernel_files("_lldf")] == [
        "_lldf.h", "_lldf.pxd", "_lldf.pyx", "_lldf_frame.pxd", "_lldf_frame.pyx",
        "_lldf_testing.pyx"]


@pytest.mark.parametrize("pxd", sorted(SHARED))
def test_the_shared_codes_are_cimported_not_copied(pxd):
    names = set(spec(pxd))
    for name in SHARED[pxd][0]:
        text = (NATIVE / name).read_text(encoding="utf-8")
        assert re.search(rf"^from cdcfast\.{pxd[:-4]} cimport", text, re.M), \
            f"{name} does not cimport {pxd}"
    for name in JSON_KERNELS:
        assert not _copies(code_lines(NATIVE / name), names), f"{name} redefines shared codes"


def test_the_copy_scan_sees_a_copy(tmp_path):
    p = tmp_path / "k.pyx"
    p.write_text("cdef enum:\n    E_VALUE = 43\nDEF E_SEGLEN = 8\ncdef int64_t OFF_UORID = 172\n"
                 "    x = E_VALUE == 43\n")
    assert [n for _, n in _copies(code_lines(p), {"E_VALUE", "E_SEGLEN", "OFF_UORID"})] == \
        ["E_VALUE", "E_SEGLEN", "OFF_UORID"]
    h = tmp_path / "k.h"
    h.write_text("/* #define E_VALUE 43\n E_VALUE = 43 */\n#define CDC_LLDF_HEADER_MIN 288\n"
                 "  E_SEGLEN = 8,\n#define  OFF_UORID (172)\n"
                 "    x = f(E_VALUE); // E_VALUE = 43\n#include \"E_VALUE.h\"\n")
    assert _copies(code_lines(h), {"E_VALUE", "E_SEGLEN", "OFF_UORID", "HEADER_MIN"}) == \
        [(3, "HEADER_MIN"), (4, "E_SEGLEN"), (5, "OFF_UORID")]


def _assigned(path):
    """The names a Python module binds at its top level (to a value, or by unpacking)."""
    names = set()
    for node in ast.parse(path.read_text(encoding="utf-8")).body:
        targets = node.targets if isinstance(node, ast.Assign) else \
            [node.target] if isinstance(node, (ast.AnnAssign, ast.AugAssign)) else []
        for t in targets:
            names |= {n.id for n in ast.walk(t) if isinstance(n, ast.Name)}
    return names


@pytest.mark.parametrize("module", LLDF_PYTHON)
def test_the_lldf_python_modules_keep_no_copy(module):
    """They import the spec's names; none binds one of its own (`K_I16, ... = range(21)`)."""
    path = ROOT / "src" / "cdcfast" / module
    assert not _assigned(path) & set(spec("_lldf_codes.pxd")), module
    assert "_lldf_codes import" in path.read_text(encoding="utf-8"), module


def test_the_python_copy_scan_sees_a_copy(tmp_path):
    p = tmp_path / "m.py"
    p.write_text("A, (K_I16, K_I32) = 1, range(2)\nF_LENGTH: int = -1\ndef f():\n    E_VALUE = 1\n")
    assert _assigned(p) == {"A", "K_I16", "K_I32", "F_LENGTH"}


def test_the_lldf_framings_are_named_by_their_codes():
    from cdcfast.formats import lldf
    codes = spec("_lldf_codes.pxd")
    assert lldf.FRAMINGS == ("raw", "rdw", "vb")
    for name in lldf.FRAMINGS:
        assert lldf.FRAMINGS[codes[f"FR_{name.upper()}"]] == name
        assert lldf.FRAMING_CODES[name] == codes[f"FR_{name.upper()}"]


def bare_offsets(lines, offsets):
    """Header offsets written as numbers: h (a record's header) + a number, hp[i] + a number,
    hp[i][a number], p + an offset of the spec, or one of the spec's offsets past 100 anywhere
    (none of those numbers means anything else in the kernel; HEADER_MIN, 288, among them)."""
    big = "|".join(str(v) for v in sorted(offsets) if v >= 100)
    mid = "|".join(str(v) for v in sorted(offsets) if v >= 12)
    pat = re.compile(rf"\bh\s*\+\s*\d+\b|\bhpz?\[\w+\]\s*\+\s*\d+\b|\bhpz?\[\w+\]\[\d+\]"
                     rf"|\bp\s*\+\s*(?:{mid})\b|\b(?:{big})\b")
    return [(i, m.group(0)) for i, code in lines for m in pat.finditer(code)]


@pytest.mark.parametrize("path", kernel_files("_lldf"), ids=lambda p: p.name)
def test_no_bare_header_offset_in_the_lldf_kernel(path):
    codes = spec("_lldf_codes.pxd")
    offsets = {v for k, v in codes.items() if k.startswith("OFF_")} | {codes["HEADER_MIN"]}
    left = bare_offsets(code_lines(path), offsets)
    assert not left, f"{path.name}: header offsets as numbers, use the OFF_* names: {left}"


def test_the_offset_scan_sees_the_old_forms(tmp_path):
    offsets = {v for k, v in spec("_lldf_codes.pxd").items() if k.startswith("OFF_")}
    p = tmp_path / "k.pyx"
    p.write_text("a = be16(d + h + 184)\nb = hp[i][104]\nc = hp[i] + 172\n"
                 "e = be16(d + p + 182)  # h + 1 in a comment\nj = 192 if h == 0 else 77\n"
                 "ok = be16(d + h + OFF_SEGLEN) + p + 4\n")
    assert [i for i, _ in bare_offsets(code_lines(p), offsets)] == [1, 2, 3, 4, 5]


def test_debezium_names_its_headers_encodings_and_source_fields_by_the_spec():
    """The numbers only debezium's Python gives meaning to: each header field H_*/HS_*/HT_* is
    the path _dbz_run names (H_TS_MS is payload.ts_ms, HS_* under source, HT_* under
    transaction), each S_* is the `source` field of that name and place, and each EN_* is the
    encoding cdcfast.formats.debezium uses under that name."""
    from cdcfast.formats import _dbz_run, debezium
    codes = spec("_debezium_codes.pxd")
    heads = {k: v for k, v in codes.items() if re.match(r"H[ST]?_", k)}
    assert sorted(heads.values()) == list(range(codes["NH"]))
    assert sorted(_dbz_run.HEADER_PATHS) == list(range(codes["NH"]))
    under = {"H": (), "HS": ("source",), "HT": ("transaction",)}
    for name, value in heads.items():
        prefix, field = name.split("_", 1)
        path = _dbz_run.HEADER_PATHS[value]
        assert path[:-1] == under[prefix], name
        assert path[-1].replace("tableChanges", "table_changes").upper() == field, name
    fields = [f.name for f in debezium.SOURCE]
    assert {k: v for k, v in codes.items() if k.startswith("S_")} == \
        {"S_" + name.upper(): i for i, name in enumerate(fields)}
    for name, value in codes.items():
        if name.startswith("EN_"):
            assert getattr(debezium, name[3:]) == value, name
