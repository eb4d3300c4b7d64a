"""The Spark layer is a thin adapter (issue #21): src/cdcfast/spark.py imports only the public
API (cdcfast, cdcfast.api), the format registry (cdcfast.formats: get, names) and its own file
planning (cdcfast.spark_files, standard library only), and touches
no underscore name of another module. What it needs of a decoder is public on Decoder and
tested here without Spark: decode_message_batches (a partition's Arrow batches of messages as
one call), split_points, file_pieces and read_piece."""
from __future__ import annotations

import ast
import pathlib
import sys

import pyarrow as pa
import pytest

import cdcfast
from cdcfast import Catalog

SPARK_PY = pathlib.Path(cdcfast.__file__).with_name("spark.py")
THIRD_PARTY = {"pyarrow", "pyspark", "pandas", "numpy"}
CDCFAST = {"cdcfast": None, "cdcfast.api": None, "cdcfast.formats": {"get", "names"},
           "cdcfast.spark_files": None,    # the data source's file planning, plain Python
           "cdcfast.delta": None}          # public: cs.apply_changes_to_delta writes through it


def _module_of(node: ast.ImportFrom) -> str:
    if not node.level:
        return node.module
    assert node.level == 1, f"line {node.lineno}: import from above the package"
    return "cdcfast" + (f".{node.module}" if node.module else "")


def test_spark_imports_only_the_public_api_and_the_registry():
    tree = ast.parse(SPARK_PY.read_text(encoding="utf-8"))
    bad = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for a in node.names:
                top = a.name.split(".")[0]
                if a.name in CDCFAST:
                    continue
                if top not in THIRD_PARTY and top not in sys.stdlib_module_names:
                    bad.append(f"line {node.lineno}: import {a.name}")
        elif isinstance(node, ast.ImportFrom):
            module = _module_of(node)
            top = module.split(".")[0]
            names = [a.name for a in node.names]
            if top == "cdcfast":
                if module == "cdcfast":     # `from . import x`: x must be a public module
                    allowed = {"api", "formats"} | set(cdcfast.__all__)
                    bad += [f"line {node.lineno}: from {module} import {n}"
                            for n in names if n not in allowed]
                elif module not in CDCFAST:
                    bad.append(f"line {node.lineno}: from {module} import …")
                else:
                    only = CDCFAST[module]
                    bad += [f"line {node.lineno}: from {module} import {n}" for n in names
                            if n.startswith("_") or (only is not None and n not in only)]
            elif top not in THIRD_PARTY and top not in sys.stdlib_module_names:
                bad.append(f"line {node.lineno}: from {module} import …")
    assert not bad, "spark.py imports more than the public API:\n" + "\n".join(bad)


def test_spark_files_is_plain_python():
    """The data source's file planning (cdcfast.spark_files) imports the standard library
    only: no pyspark, no decoder (it runs wherever the data source plans)."""
    tree = ast.parse(SPARK_PY.with_name("spark_files.py").read_text(encoding="utf-8"))
    bad = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            bad += [a.name for a in node.names
                    if a.name.split(".")[0] not in sys.stdlib_module_names]
        elif isinstance(node, ast.ImportFrom) and node.module != "__future__":
            if node.level or node.module.split(".")[0] not in sys.stdlib_module_names:
                bad.append(node.module or ".")
    assert not bad, bad


def test_spark_uses_no_underscore_name_of_another_module():
    """An attribute `._x` is only spark.py's own (its functions, classes and their methods,
    e.g. self._files); dunders aside."""
    tree = ast.parse(SPARK_PY.read_text(encoding="utf-8"))
    own = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.ClassDef)):
            own.add(node.name)
        elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            own.add(node.id)
        elif isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Store):
            own.add(node.attr)
    bad = [f"line {node.lineno}: .{node.attr}" for node in ast.walk(tree)
           if isinstance(node, ast.Attribute) and node.attr.startswith("_")
           and not (node.attr.startswith("__") and node.attr.endswith("__"))
           and node.attr not in own]
    assert not bad, "spark.py reaches into other modules' private names:\n" + "\n".join(bad)


# -- Decoder.decode_message_batches --------------------------------------------------------------
@pytest.fixture(scope="module")
def olr():
    """OLR messages with scn/tm on a transaction's first message only (carry-forward needed
    across batches), tombstones among them."""
    msgs, cat = cdcfast.encode.generate("olr", rows=60, table_width=6, seed=5, messages=True)
    assert sum(b'"tms"' in m for m in msgs) < len(msgs) / 2
    msgs = [m for i, m in enumerate(msgs) for m in ((m, None) if i % 10 == 9 else (m,))]
    cat = Catalog.coerce(cat)
    return msgs, cat, cat.tables[0].name


def chunks(msgs, size):
    return [pa.array(msgs[i:i + size], pa.binary()) for i in range(0, len(msgs), size)]


def message_index(dec, msgs, table):
    """For every event of `table` in `msgs`: its message's index (each decoded on its own)."""
    return [i for i, m in enumerate(msgs) if m is not None
            for _ in range(dec.decode_tables([m]).get(table, pa.table({})).num_rows)]


@pytest.mark.parametrize("size", [1, 7, 1000])
def test_message_batches_are_one_call(olr, size):
    msgs, cat, table = olr
    dec = cdcfast.Decoder("olr", catalog=cat)
    arrays = chunks(msgs, size)
    out = list(dec.decode_message_batches(iter(arrays), table))
    assert [b for b, _, _ in out] == arrays         # every input batch, as given, in order
    events = pa.concat_tables([e for _, e, _ in out if e is not None])
    # one call: carry-forward reaches across batches, as over the concatenated messages
    whole = dec.decode(msgs, table=table)
    assert whole.column("commit_ts").null_count == 0
    assert events.drop_columns(["seq"]).equals(whole.drop_columns(["seq"]))
    # each message an input of its own: seq counts within it
    assert set(events.column("seq").to_pylist()) == {0}
    # each event's message index within its batch
    base, index = 0, []
    for b, e, i in out:
        assert (e is None) == (i is None)
        if i is not None:
            assert len(i) == e.num_rows and i.type == pa.int64()
            index += [base + x for x in i.to_pylist()]
        base += len(b)
    assert index == message_index(dec, msgs, table)
    # the batches' split does not change the events
    one = list(dec.decode_message_batches([pa.array(msgs, pa.binary())], table))
    assert one[0][1].equals(events)


def test_message_batches_are_read_lazily(olr):
    """An input batch is answered as soon as the decoder asks for the one after it."""
    msgs, cat, table = olr
    dec = cdcfast.Decoder("olr", catalog=cat)
    read = []

    def batches():
        for i, a in enumerate(chunks(msgs, 7)):
            read.append(i)
            yield a

    for i, (b, e, _) in enumerate(dec.decode_message_batches(batches(), table)):
        assert e is not None and len(read) <= i + 2


def test_message_batches_of_every_table_and_record_batches(olr):
    """of_all: one output of decode_tables (None: the unattributable records); `column`:
    record batches whose column holds the messages, handed back for their other columns."""
    msgs, cat, table = olr
    msgs = msgs[:30] + [b"{not json", b'{"xid":"1.2.3","scn":5}'] + msgs[30:]
    dec = cdcfast.Decoder("olr", catalog=cat)
    batches = [pa.record_batch([a, pa.array(range(len(a)))], names=["value", "row"])
               for a in chunks(msgs, 9)]
    whole = dec.decode_tables(msgs)
    assert None in whole and table in whole
    for key in whole:
        out = list(dec.decode_message_batches(batches, key, of_all=True, column="value"))
        assert [b for b, _, _ in out] == batches
        got = pa.concat_tables([e for _, e, _ in out if e is not None])
        index = [b.column(1)[x].as_py() + 9 * n for n, (b, _, i) in enumerate(out)
                 if i is not None for x in i.to_pylist()]
        if key is None:
            assert got.num_rows == 2 and index == [30, 31]
            assert got.schema == dec.unattributable_schema()
        else:
            assert got.drop_columns(["seq"]).equals(whole[key].drop_columns(["seq"]))
            assert index == message_index(dec, msgs, key)
    # without of_all: the table's events and the unattributable records, as decode(table=…)
    got = pa.concat_tables([e for _, e, _ in dec.decode_message_batches(batches, table,
                                                                         column="value")
                            if e is not None])
    assert got.num_rows == dec.decode(msgs, table=table).num_rows
    with pytest.raises(KeyError, match="column 'nope'"):
        list(dec.decode_message_batches(batches, table, column="nope"))
    with pytest.raises(ValueError, match="table="):
        list(dec.decode_message_batches(batches, None, column="value"))
    with pytest.raises(TypeError, match="batch of messages"):
        list(dec.decode_message_batches([b"bytes"], table))


# -- files: split_points, file_pieces, read_piece ------------------------------------------------
@pytest.mark.parametrize("fmt", cdcfast.formats())
def test_split_points_file_pieces_and_read_piece(fmt, tmp_path):
    data, cat = cdcfast.encode.generate(fmt, rows=400, table_width=6, seed=1)
    cat = Catalog.coerce(cat)
    table = cat.tables[0].name
    dec = cdcfast.Decoder(fmt, catalog=cat)
    step = max(1, len(data) // 5)
    points = dec.split_points(data, step)
    assert points == dec._fmt.split_points(data, step, dec._native)
    assert points[0] == 0 and points[-1] == len(data)
    path = tmp_path / "data.bin"
    path.write_bytes(data)
    assert dec.file_pieces(path, len(data)) == [(0, len(data))]
    pieces = dec.file_pieces(path, step)
    assert pieces == list(zip(points, points[1:]))
    for a, b in pieces:
        got = list(dec.read_piece(path, a, b, table, batch_size=50))
        assert all(0 < g.num_rows <= 50 for g in got)
        want = list(dec.read_batches(data[a:b], table, batch_size=50))
        assert pa.Table.from_batches(got, want[0].schema if want else None) \
            .equals(pa.Table.from_batches(want, want[0].schema if want else None))
