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
def bad_before(fmt: str):
    """(stream, catalog, table, whole decode, rows whose `_error` is a before value's): a
    generated stream with one byte overwritten so that a before value is bad."""
    data, cat = generate(fmt, 300, table_width=6, tables=2, seed=5)
    table = cat.tables[0].name
    rnd = random.Random(11)
    for _ in range(5000):
        i = rnd.randrange(len(data))
        changed = data[:i] + rnd.choice([b"x", b"9", b"A", b"-"]) + data[i + 1:]
        try:
            full = cdcfast.decode(changed, fmt, catalog=cat, table=table)
        except cdcfast.DecodeError:
            continue
        errors = full.column("_error").to_pylist()
        rows = [r for r, e in enumerate(errors) if e and e.startswith("before.")]
        if rows:
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
    for names in (UNREAD, ["op", "present"], ["op", "before"], ["op", "changed", "after"]):
        a = cdcfast.Decoder(fmt, catalog=cat)
        b = cdcfast.reference.Decoder(fmt, catalog=cat)
        got = a.decode(data, table=table, columns=names)
        assert got.equals(b.decode(data, table=table, columns=names)), names
        assert a.last_stats == b.last_stats, names


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
    with pytest.raises(cdcfast.DecodeError) as whole_error:
        cdcfast.decode(data, fmt, catalog=cat, table=table, mode="FAILFAST")
    with pytest.raises(cdcfast.DecodeError) as some:
        cdcfast.decode(data, fmt, catalog=cat, table=table, mode="FAILFAST",
                       columns="op,changed")
    assert str(some.value) == str(whole_error.value)
    if sum(e is not None for e in errors) == len(rows):     # the before value only
        assert cdcfast.decode(data, fmt, catalog=cat, table=table, mode="FAILFAST",
                              columns=UNREAD).num_rows == full.num_rows
