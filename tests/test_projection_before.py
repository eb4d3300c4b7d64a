"""SPEC §1: a projection that names neither `before` nor `changed` does not read the before
image — its values are not converted, so a bad one is not reported — and everything else is
as the whole decode has it: the structure of the record and of the image is still checked
(a cut image, a key given twice, invalid JSON), and so is every other value. With `before` or
`changed` named, the before image is read and the `_error` is the whole decode's.

The inputs are generated streams with one byte overwritten, found by a deterministic search
for a change that the whole decode reports as a bad before value."""
from __future__ import annotations

import functools
import random

import pytest

import cdcfast
import cdcfast.reference
from cdcfast.encode import generate
from cdcfast.formats import names as format_names

FORMATS = format_names()
DECODERS = {"native": cdcfast.Decoder, "reference": cdcfast.reference.Decoder}
UNREAD = ["op", "seq", "after"]             # names neither before nor changed (envelope order)


@functools.lru_cache(maxsize=None)
def bad_before(fmt: str, op: str = "u"):
    """(stream, catalog, table, whole decode, rows whose `_error` is a before value's): a
    generated stream with one byte overwritten so that a before value of a row of operation
    `op` is bad. ("10.1" is JSON but no integer, "A=Cu" no base64.)"""
    data, cat = generate(fmt, 300, table_width=6, tables=2, seed=5)
    rnd = random.Random(11)
    for _ in range(5000):
        i = rnd.randrange(len(data))
        changed = data[:i] + rnd.choice([b"x", b"9", b"A", b"-", b"7", b".", b"="]) \
            + data[i + 1:]
        for table in (t.name for t in cat.tables):
            try:
                full = cdcfast.decode(changed, fmt, catalog=cat, table=table)
            except cdcfast.DecodeError:
                continue
            ops = full.column("op").to_pylist()
            rows = [r for r, e in enumerate(full.column("_error").to_pylist())
                    if e and e.startswith("before.")]
            if any(ops[r] == op for r in rows):
                return changed, cat, table, full, rows
    raise AssertionError(f"no byte found that makes a before value of {fmt} bad")


@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize("kind", sorted(DECODERS))
def test_a_bad_before_value_is_reported_only_when_before_is_read(fmt, kind):
    data, cat, table, full, rows = bad_before(fmt)
    dec = DECODERS[kind](fmt, catalog=cat)
    whole = dec.decode(data, table=table)
    assert whole.equals(full)
    errors = full.column("_error").to_pylist()
    got = dec.decode(data, table=table, columns=UNREAD)
    assert got.num_rows == full.num_rows
    for r, (e, g) in enumerate(zip(errors, got.column("_error").to_pylist())):
        if r in rows:
            assert g is None or not g.startswith("before."), g
        else:
            assert g == e
    # the values asked for are the whole decode's
    assert got.drop_columns(["_error"]).equals(full.select(UNREAD))
    first = cat.get(table).columns[0].name
    for names in (["op", "before"], ["op", "changed"], ["seq", f"before.{first}"]):
        assert dec.decode(data, table=table, columns=names).column("_error").to_pylist() \
            == errors, names


@pytest.mark.parametrize("fmt", FORMATS)
def test_native_and_reference_agree_on_what_is_not_read(fmt):
    data, cat, table, full, rows = bad_before(fmt)
    whole = cdcfast.Decoder(fmt, catalog=cat)
    whole.decode(data, table=table)
    for names in (UNREAD, ["op", "present"], ["op", "before"], ["op", "changed", "after"],
                  "seq"):
        a = cdcfast.Decoder(fmt, catalog=cat)
        b = cdcfast.reference.Decoder(fmt, catalog=cat)
        got = a.decode(data, table=table, columns=names)
        assert got.equals(b.decode(data, table=table, columns=names)), names
        assert a.last_stats == b.last_stats, names
        # the keys and columns are matched still: the counts are the whole decode's, but
        # for the errors of before values not read
        assert {k: v for k, v in a.last_stats.items() if k != "errors"} == \
            {k: v for k, v in whole.last_stats.items() if k != "errors"}


@pytest.mark.parametrize("fmt", FORMATS)
def test_modes_follow_what_is_read(fmt):
    """DROPMALFORMED keeps a row whose only problem is a before value not read; FAILFAST
    raises only for what is read."""
    data, cat, table, full, rows = bad_before(fmt)
    seqs = full.column("seq").to_pylist()
    errors = full.column("_error").to_pylist()
    unread = cdcfast.decode(data, fmt, catalog=cat, table=table, columns=UNREAD)
    clean_now = [seqs[r] for r in rows if unread.column("_error")[r].as_py() is None]
    assert clean_now, "the overwritten byte breaks only the before value"
    kept = cdcfast.decode(data, fmt, catalog=cat, table=table, columns="seq",
                          mode="DROPMALFORMED").column("seq").to_pylist()
    assert set(clean_now) <= set(kept)
    assert kept == [s for s, g in zip(seqs, unread.column("_error").to_pylist()) if g is None]
    read = cdcfast.decode(data, fmt, catalog=cat, table=table, columns="seq,before",
                          mode="DROPMALFORMED").column("seq").to_pylist()
    assert read == [s for s, e in zip(seqs, errors) if e is None]
    # FAILFAST stops for what is read (the whole decode's error: test_projection.py), not
    # for the before value alone — the stream's only problem
    assert sum(e is not None for e in errors) == len(rows)
    with pytest.raises(cdcfast.DecodeError):
        cdcfast.decode(data, fmt, catalog=cat, table=table, mode="FAILFAST",
                       columns="op,changed")
    assert cdcfast.decode(data, fmt, catalog=cat, table=table, mode="FAILFAST",
                          columns=UNREAD).num_rows == full.num_rows


@pytest.mark.parametrize("kind", sorted(DECODERS))
def test_a_qlik_delete_reads_its_data(kind):
    """A Qlik DELETE's `data` is its before image and the record's only one: read always, so
    a bad value there stays an error without `before` named."""
    data, cat, table, full, rows = bad_before("qlik", "d")
    ops = full.column("op").to_pylist()
    row = next(r for r in rows if ops[r] == "d")
    got = DECODERS[kind]("qlik", catalog=cat).decode(data, table=table, columns=UNREAD)
    assert got.column("_error")[row].as_py() == full.column("_error")[row].as_py()


@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize("kind", sorted(DECODERS))
def test_a_clean_stream_reads_the_same(fmt, kind):
    """A clean stream: `after` and `present` (a delete's: what its before image sent) are
    the whole decode's, and so are the counts."""
    data, cat = generate(fmt, 300, table_width=6, tables=2, seed=5)
    names = ["op", "after", "present"]
    for t in cat.tables:
        whole = DECODERS[kind](fmt, catalog=cat)
        full = whole.decode(data, table=t.name)
        assert "d" in full.column("op").to_pylist()
        dec = DECODERS[kind](fmt, catalog=cat)
        got = dec.decode(data, table=t.name, columns=names)
        assert got.column_names == names + ["_error"]
        assert got.to_pylist() == [{n: r[n] for n in names + ["_error"]}
                                   for r in full.to_pylist()]
        assert dec.last_stats == whole.last_stats
