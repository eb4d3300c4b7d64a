"""`columns=` (SPEC §1): a projection returns only the named envelope columns, in envelope
order, and changes nothing else — the rows, their values and their `_error` are those of the
whole envelope (a projection never hides a bad record), in every mode, call and format, native
and reference alike. The expectation is built here, in plain Python over the rows of the
whole decode, not with the projection code under test.

One exception, SPEC's own: a projection that names neither `before` nor `changed` does not
read the before image, so a bad value there is not reported. Such a projection is compared
with the decode of everything but those two (`whole`); tests/test_projection_before.py
compares that one with the whole envelope."""
from __future__ import annotations

import functools
import random

import pyarrow as pa
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import cdcfast
import cdcfast.reference
from cdcfast.encode import generate
from cdcfast.envelope import IMAGES, NAMES, Projection
from cdcfast.formats import names as format_names

FORMATS = format_names()
DECODERS = {"native": cdcfast.Decoder, "reference": cdcfast.reference.Decoder}


@functools.lru_cache(maxsize=None)
def stream(fmt: str, broken: bool):
    """A generated stream of two tables, and with `broken`, the same with bytes overwritten
    here and there (so some records carry `_error` or are corrupt)."""
    data, cat = generate(fmt, 300, table_width=6, tables=2, seed=5)
    if broken:
        rnd = random.Random(7)
        b = bytearray(data)
        for _ in range(12):
            i = rnd.randrange(len(b))
            b[i] = rnd.choice(b"x9\x00{\",:")
        data = bytes(b)
    return data, cat


def table_columns(cat, table: str) -> list:
    return [c.name for c in cat.get(table).columns]


def expected(full: pa.Table, names: list) -> tuple:
    """(field names with their types, rows as dicts) of `full` projected to `names`, by hand."""
    top = {n for n in names if "." not in n} | {"_error"}
    narrow = {}
    for n in names:
        head, dot, col = n.partition(".")
        if dot and head not in top:
            narrow.setdefault(head, set()).add(col)
    fields = []
    for f in full.schema:
        if f.name in top or f.name in narrow:
            t = f.type
            if f.name in narrow:
                t = pa.struct([c for c in f.type if c.name in narrow[f.name]])
            fields.append((f.name, t))
    rows = []
    for r in full.to_pylist():
        row = {}
        for name, t in fields:
            v = r[name]
            if name in narrow and v is not None:
                v = {c.name: v[c.name] for c in t}
            row[name] = v
        rows.append(row)
    return fields, rows


def whole(names) -> list | None:
    """columns= of the decode a projection of `names` selects from: the whole envelope
    (None) when it reads the before image (it names before or changed), else everything
    but those two."""
    if any(n.partition(".")[0] in ("before", "changed") for n in names):
        return None
    return [n for n in NAMES if n not in ("before", "changed")]


def same(got: pa.Table, full: pa.Table, names: list):
    fields, rows = expected(full, names)
    assert [(f.name, f.type) for f in got.schema] == fields
    assert got.to_pylist() == rows


@st.composite
def projections(draw, columns):
    """A projection: some envelope names and some image.COL names, in any order."""
    picked = draw(st.lists(st.sampled_from(NAMES), max_size=6, unique=True))
    narrowed = draw(st.lists(st.tuples(st.sampled_from(IMAGES), st.sampled_from(columns)),
                             max_size=4, unique=True))
    names = picked + [f"{i}.{c}" for i, c in narrowed]
    if not names:
        names = ["op"]
    return draw(st.permutations(names))


# -- decode: a projection is a selection of the whole envelope --------------------------------
@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize("broken", [False, True], ids=["clean", "broken"])
def test_decode_selects_the_whole_envelope(fmt, broken):
    data, cat = stream(fmt, broken)
    table = cat.tables[0].name
    cols = table_columns(cat, table)

    @settings(max_examples=12, deadline=None, database=None,
              suppress_health_check=[HealthCheck.too_slow])
    @given(projections(cols), st.sampled_from(sorted(DECODERS)),
           st.sampled_from(["PERMISSIVE", "DROPMALFORMED"]))
    def check(names, kind, mode):
        dec = DECODERS[kind]
        full = dec(fmt, catalog=cat, mode=mode).decode(data, table=table,
                                                       columns=whole(names))
        got = dec(fmt, catalog=cat, mode=mode).decode(data, table=table, columns=names)
        same(got, full, names)
        # the Decoder's default, comma-separated text and the function agree
        assert dec(fmt, catalog=cat, mode=mode, columns=",".join(names)) \
            .decode(data, table=table).equals(got)

    check()


@pytest.mark.parametrize("fmt", FORMATS)
def test_native_and_reference_projections_agree(fmt):
    data, cat = stream(fmt, False)
    table = cat.tables[1].name
    c0, c1 = table_columns(cat, table)[:2]
    for names in (["op", "commit_ts", "commit_pos", "seq", "after"],
                  [f"after.{c1}", f"before.{c0}", "changed", "op"],
                  [f"present.{c0}", f"changed.{c1}", "_corrupt_record", "source"],
                  ["seq"]):
        a = cdcfast.decode(data, fmt, catalog=cat, table=table, columns=names)
        b = cdcfast.reference.decode(data, fmt, catalog=cat, table=table, columns=names)
        assert a.num_rows > 0
        assert a.equals(b), names


@pytest.mark.parametrize("fmt", FORMATS)
def test_errors_stay_when_what_is_wrong_is_left_out(fmt):
    """A record whose only problem is in a column not asked for keeps its `_error`, and
    DROPMALFORMED drops the same rows, FAILFAST raises the same error (but for a bad value
    of a before image that is not read: tests/test_projection_before.py)."""
    data, cat = stream(fmt, True)
    table = cat.tables[0].name
    full = cdcfast.decode(data, fmt, catalog=cat, table=table)
    errors = full.column("_error").to_pylist()
    assert any(errors), "the broken stream has errors"
    got = cdcfast.decode(data, fmt, catalog=cat, table=table, columns="op,changed")
    assert got.column("_error").to_pylist() == errors
    unread = cdcfast.decode(data, fmt, catalog=cat, table=table, columns="op")
    for e, g in zip(errors, unread.column("_error").to_pylist()):
        if e is None or not e.startswith("before."):
            assert g == e
        else:
            assert g is None or not g.startswith("before.")
    kept = cdcfast.decode(data, fmt, catalog=cat, table=table, columns="seq,before",
                          mode="DROPMALFORMED")
    assert kept.column("seq").to_pylist() == [
        r["seq"] for r in full.to_pylist() if r["_error"] is None]
    with pytest.raises(cdcfast.DecodeError) as whole_error:
        cdcfast.decode(data, fmt, catalog=cat, table=table, mode="FAILFAST")
    for names in ("op,before", "op,changed"):      # both read the before image
        with pytest.raises(cdcfast.DecodeError) as some:
            cdcfast.decode(data, fmt, catalog=cat, table=table, mode="FAILFAST",
                           columns=names)
        assert str(some.value) == str(whole_error.value)


# -- the other calls ------------------------------------------------------------------------
@pytest.mark.parametrize("fmt", FORMATS)
def test_decode_tables_read_batches_and_read_tables(fmt):
    data, cat = stream(fmt, True)
    t0, t1 = (t.name for t in cat.tables)
    c0 = table_columns(cat, t0)[0]
    c1 = table_columns(cat, t1)[-1]
    names = ["seq", "op", f"after.{c0}", f"after.{c1}", "_corrupt_record"]
    full = cdcfast.decode_tables(data, fmt, catalog=cat, columns=whole(names))
    got = cdcfast.decode_tables(data, fmt, catalog=cat, columns=names)
    assert got.keys() == full.keys()
    for key in full:
        # each table narrowed to the named columns it has (none: an empty struct, as the
        # unattributable records' images are)
        same(got[key], full[key], names)
    dec = cdcfast.Decoder(fmt, catalog=cat, columns=names)
    batches = list(dec.read_batches(data, table=t1, batch_size=37))
    assert max(b.num_rows for b in batches) <= 37
    same(pa.Table.from_batches(batches),
         cdcfast.decode(data, fmt, catalog=cat, table=t1, columns=whole(names)), names)
    per = {}
    for key, b in dec.read_tables(data, batch_size=50):
        per.setdefault(key, []).append(b)
    for key, bs in per.items():
        assert pa.Table.from_batches(bs).equals(got[key])


@pytest.mark.parametrize("fmt", FORMATS)
def test_headers(fmt):
    data, cat = stream(fmt, True)
    full = cdcfast.headers(data, fmt, catalog=cat)
    got = cdcfast.headers(data, fmt, catalog=cat, columns="table,source,op")
    same(got, full, ["op", "table", "source"])
    with pytest.raises(ValueError, match="unknown name 'after'"):
        cdcfast.headers(data, fmt, catalog=cat, columns="op,after")


@pytest.mark.parametrize("fmt", FORMATS)
def test_message_batches_as_spark_decodes_them(fmt):
    data, cat = generate(fmt, 200, table_width=5, tables=2, seed=3, messages=True)
    table = cat.tables[0].name
    c = table_columns(cat, table)[2]
    names = ["op", f"before.{c}", "seq"]
    dec = cdcfast.Decoder(fmt, catalog=cat, columns=names)
    half = len(data) // 2
    got = [g for _, g, _ in dec.decode_message_batches([data[:half], data[half:]], table)
           if g is not None]
    whole = cdcfast.Decoder(fmt, catalog=cat)
    want = [g for _, g, _ in whole.decode_message_batches([data[:half], data[half:]], table)
            if g is not None]
    assert len(got) == len(want) > 0
    for g, w in zip(got, want):
        same(g, w, names)


# -- names, schemas, configuration ----------------------------------------------------------
def test_unknown_names_are_refused_with_the_known_ones():
    data, cat = stream("ibm-delimited", False)
    table = cat.tables[0].name
    with pytest.raises(ValueError, match=r"unknown name 'opp'.*op, source_op, schema"):
        cdcfast.decode(data, "ibm-delimited", catalog=cat, columns="op,opp")
    with pytest.raises(ValueError, match=r"after\.NOPE: not a column of .*its columns: "):
        cdcfast.Decoder("ibm-delimited", catalog=cat).decode(data, table=table,
                                                             columns="after.NOPE")
    with pytest.raises(ValueError, match="after.NOPE: not a column of any table"):
        cdcfast.decode_tables(data, "ibm-delimited", catalog=cat, columns="after.NOPE")
    with pytest.raises(ValueError, match="empty name"):
        cdcfast.Decoder("ibm-delimited", columns="op,,seq")
    with pytest.raises(ValueError, match="names no table column"):
        cdcfast.Decoder("ibm-delimited", columns="after.")


def test_schema_config_and_the_order_asked():
    data, cat = stream("qlik", False)
    table = cat.tables[0].name
    c0, c1 = table_columns(cat, table)[:2]
    dec = cdcfast.Decoder("qlik", catalog=cat, columns=[f"after.{c1}", "op", f"after.{c0}",
                                                        "seq"])
    schema = dec.schema(table)
    assert schema.names == ["op", "seq", "after", "_error"]
    assert [f.name for f in schema.field("after").type] == [c0, c1]   # table order
    assert dec.decode(data, table=table).schema == schema
    again = cdcfast.Decoder.from_config(dec.config())
    assert again.columns == dec.columns and again.schema(table) == schema
    # a whole struct named beside one of its columns: the whole struct
    both = cdcfast.Decoder("qlik", catalog=cat, columns=["after", f"after.{c0}"])
    assert both.schema(table).field("after").type == \
        cdcfast.Decoder("qlik", catalog=cat).schema(table).field("after").type
    # an empty table of the schema when the input has none of its events
    assert cdcfast.Decoder("qlik", catalog=cat, columns="op").decode(b"", table=table) \
        .schema.names == ["op", "_error"]
    assert Projection("op , seq").names == ["op", "seq"]


def test_the_command_line(tmp_path, capsys):
    import pyarrow.parquet as pq

    from cdcfast import cli
    data, cat = stream("ibm-delimited", True)
    src = tmp_path / "in.del"
    src.write_bytes(data)
    catalog = tmp_path / "cat.json"
    cat.save(str(catalog))
    table = cat.tables[0].name
    c = table_columns(cat, table)[1]
    assert cli.main(["decode", str(src), "--format", "ibm-delimited", "--catalog",
                     str(catalog), "--columns", f"seq,after.{c},op", "--table", table, "-o",
                     str(tmp_path / "out.parquet")]) == 0
    assert "events" in capsys.readouterr().out
    got = pq.read_table(tmp_path / "out.parquet")
    names = ["seq", f"after.{c}", "op"]
    same(got.replace_schema_metadata(None),
         cdcfast.decode(data, "ibm-delimited", catalog=cat, table=table,
                        columns=whole(names)), names)
    assert cli.main(["decode", str(src), "--format", "ibm-delimited", "--catalog",
                     str(catalog), "--columns", "op,nope", "-o", str(tmp_path / "o2")]) == 2
    assert "unknown name 'nope'" in capsys.readouterr().err


# -- flags as bitmasks ------------------------------------------------------------------------
@pytest.mark.parametrize("fmt", FORMATS)
def test_flags_as_bitmasks(fmt):
    """flags="bitmask": `changed` / `present` as int64 bitmasks (bit j: the table's column j;
    a null struct a null mask, a null flag a 0 bit), everything else unchanged."""
    data, cat = stream(fmt, True)
    table = cat.tables[0].name
    full = cdcfast.decode(data, fmt, catalog=cat, table=table)
    got = cdcfast.decode(data, fmt, catalog=cat, table=table, flags="bitmask")
    assert got.schema.field("changed").type == pa.int64()
    assert got.drop_columns(["changed", "present"]).equals(
        full.drop_columns(["changed", "present"]))
    cols = table_columns(cat, table)
    for name in ("changed", "present"):
        want = [None if r is None else sum(1 << j for j, c in enumerate(cols) if r[c])
                for r in full.column(name).to_pylist()]
        assert got.column(name).to_pylist() == want
    some = cdcfast.Decoder(fmt, catalog=cat, flags="bitmask", columns=["op", f"changed.{cols[2]}"])
    assert some.decode(data, table=table).column("changed").to_pylist() == [
        None if r is None else int(bool(r[cols[2]])) for r in full.column("changed").to_pylist()]


def test_wide_tables_get_binary_bitmasks():
    from cdcfast.envelope import bitmask
    n = 70
    flags = pa.StructArray.from_arrays(
        [pa.array([j % 3 == 0, True, None]) for j in range(n)],
        names=[f"C{j}" for j in range(n)], mask=pa.array([False, False, True]))
    got = bitmask(flags).to_pylist()
    assert got[2] is None
    assert got[1] == b"\xff" * 8 + b"\x3f"
    assert [j for j in range(n) if got[0][j // 8] >> (j % 8) & 1] == list(range(0, n, 3))
    with pytest.raises(ValueError, match="flags must be one of struct, bitmask"):
        cdcfast.Decoder("qlik", flags="bits")

