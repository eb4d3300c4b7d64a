"""docs/contract.md is the user-facing contract the repository ships: it must keep up with the
code. Every registered format's options (names and defaults), every envelope column with its
Arrow type, every mode, every `last_stats` key and every catalog type name are checked against
the code here, and the README and docs must not send users to a file the repository does not
ship (the project's SPEC.md lives outside it)."""
from __future__ import annotations

import dataclasses
import json
import pathlib
import re

import pytest

from cdcfast import envelope
from cdcfast.catalog import _CHAR, _LOB_TEXT, _SIMPLE, Column, Table, parse_type
from cdcfast.formats import get, names
from cdcfast.formats.base import MODES, STATS

ROOT = pathlib.Path(__file__).resolve().parents[1]
CONTRACT = ROOT / "docs" / "contract.md"


@pytest.fixture(scope="module")
def contract() -> str:
    return CONTRACT.read_text(encoding="utf-8")


def section(text: str, heading: str) -> str:
    """The text under the Markdown heading line `heading`, up to the next heading of the
    same or a higher level."""
    level = len(heading) - len(heading.lstrip("#"))
    lines = text.splitlines()
    start = lines.index(heading) + 1
    out = []
    for line in lines[start:]:
        m = re.match(r"(#+) ", line)
        if m and len(m.group(1)) <= level:
            break
        out.append(line)
    return "\n".join(out)


def shown(value) -> str:
    """A default as the option tables write it: `None`, `"UTC"`, `"\\n"`, `'"'`."""
    if value is None:
        return "`None`"
    if isinstance(value, str) and '"' in value:
        return f"`'{value}'`"
    return f"`{json.dumps(value)}`"


def format_section(contract: str, name: str) -> str:
    heads = [line for line in contract.splitlines()
             if re.fullmatch(rf"### 5\.\d+ `{re.escape(name)}`", line)]
    assert len(heads) == 1, f"docs/contract.md has no section '### 5.x `{name}`'"
    return section(contract, heads[0])


@pytest.mark.parametrize("name", names())
def test_every_option_of_every_format_with_its_default(contract, name):
    text = format_section(contract, name)
    defaults = get(name).DEFAULTS
    rows = {m.group(1): m.group(2).split("|")
            for m in re.finditer(r"^\| `(\w+)` \|(.*)\|$", text, re.M)}
    assert set(rows) == set(defaults), (
        f"{name}: the option table of docs/contract.md lists {sorted(rows)}, "
        f"the format has {sorted(defaults)}")
    for option, default in defaults.items():
        cells = [c.strip() for c in rows[option]]
        assert len(cells) == 3 and all(cells), f"{name}.{option}: type, default, meaning"
        assert cells[1] == shown(default), (
            f"{name}.{option}: docs/contract.md says the default is {cells[1]}, "
            f"the code {shown(default)}")
    if not defaults:
        assert "No options" in text


def test_every_format_is_in_the_table_at_the_top(contract):
    top = contract.split("\n## ", 1)[0]
    for name in names():
        assert f"| `{name}` |" in top
        assert (ROOT / "docs" / f"{name}.md").is_file()
        assert f"]({name}.md)" in top


def test_every_envelope_column_with_its_arrow_type(contract):
    text = section(contract, "## 3. The envelope")
    rows = {m.group(1): m.group(2).strip()
            for m in re.finditer(r"^\| `(\w+)` \| ([^|]+) \|", text, re.M)}
    flat = envelope.HEAD + envelope.TAIL
    for column, arrow in flat:
        assert column in rows, f"envelope column {column} is not in docs/contract.md §3"
        assert rows[column] == str(arrow), f"{column}: {rows[column]} vs {arrow}"
    for column in (*envelope.IMAGES, "source"):
        assert column in rows and rows[column].startswith("struct"), column
    # nothing listed that the envelope lacks, and in the envelope's order
    order = [n for n, _ in envelope.HEAD] + list(envelope.IMAGES) + ["source"] \
        + [n for n, _ in envelope.TAIL]
    assert list(rows) == order


def test_every_mode(contract):
    text = section(contract, "## 4. Bad input: `mode`")
    for mode in MODES:
        assert f"- `{mode}`" in text, mode


def test_every_last_stats_key(contract):
    text = section(contract, "### 1.6 `last_stats`")
    listed = re.findall(r"^\| `(\w+)` \|", text, re.M)
    assert listed == list(STATS)


def test_every_source_field_of_every_format(contract):
    for name in names():
        text = format_section(contract, name)
        for field in get(name).source_type:
            assert f"`{field.name}`" in text, f"{name}: source.{field.name}"


def test_every_field_of_the_catalog_json(contract):
    """Each key a catalog table or column can have in the JSON (Table.to_dict /
    Catalog.from_dict) is described in §2."""
    text = section(contract, "## 2. Catalog")
    keys = {f.name for cls in (Table, Column) for f in dataclasses.fields(cls)}
    for key in sorted(keys | {"tables"}):
        assert f"`{key}`" in text, f"catalog JSON key {key!r} is not described in §2"


def test_every_catalog_type_name(contract):
    text = section(contract, "### 2.1 Types")
    bases = set(_SIMPLE) | _CHAR | _LOB_TEXT | {"DECIMAL", "DEC", "NUMERIC", "NUMBER", "FLOAT",
                                                "TIME", "TIMESTAMP"}
    for base in sorted(bases):
        parse_type(base)                # each is a type name the catalog takes
        assert re.search(rf"`{re.escape(base)}[`(\[]", text), base


def test_no_link_to_a_file_the_repository_does_not_ship():
    """The contract's own file (SPEC.md) lives outside the repository: README and docs point
    to docs/contract.md instead."""
    files = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
    found = [f"{f.relative_to(ROOT)}:{i}: {line.strip()}"
             for f in files for i, line in enumerate(f.read_text(encoding="utf-8")
                                                      .splitlines(), 1)
             if re.search(r"\bSPEC\b", line)]
    assert not found, "say 'the contract (docs/contract.md)' instead:\n" + "\n".join(found)
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert "docs/contract.md" in readme
