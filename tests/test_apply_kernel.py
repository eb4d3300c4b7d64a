"""The apply kernels (native/cdcfast/_apply.pyx) against their plain-Python twin
(cdcfast/_apply_py.py, the fallback when the extension is not built): key group ids over
every key type the fold accepts, and the whole fold run through either."""
from __future__ import annotations

import decimal

import numpy as np
import pyarrow as pa
import pytest
from hypothesis import given
from hypothesis import strategies as st

import cdcfast
from cdcfast import _apply, _apply_py
from cdcfast import apply as A
from test_apply import event_lists, model, relaxed, rows_of, table


def groups_of(gid) -> list:
    """The partition of rows a numbering makes (first appearance order)."""
    return [int(g) for g in gid]


def folds(t: pa.Table) -> tuple:
    """(apply_changes, net_changes) of t through the kernel, and through the twin."""
    native = (cdcfast.apply_changes(t), cdcfast.net_changes(t))
    saved = A._kernel
    A._kernel = _apply_py
    try:
        return native, (cdcfast.apply_changes(t), cdcfast.net_changes(t))
    finally:
        A._kernel = saved


KEYS = {
    "int64": pa.array([5, 3, 5, None, 3, 7, -1, 5], pa.int64()),     # a dense range: a table
    "int64 wide": pa.array([2**40, -2**40, 2**40, None, 0, 7, -2**40, 2**62]),   # hashed
    "int64 extremes": pa.array([-2**63, 2**63 - 1, -2**63, None, 0, 2**63 - 1, 0, 1]),
    "uint64 past int64": pa.array([2**64 - 1, 0, 2**64 - 1, 5, None, 5, 2**63, 0], pa.uint64()),
    "int8": pa.array([1, 2, 1, 2, None, 3, 3, 1], pa.int8()),
    "uint16": pa.array([65535, 0, 65535, 1, 0, 1, None, 2], pa.uint16()),
    "int32": pa.array([2**31 - 1, -2**31, 0, 0, -2**31, None, 1, 2**31 - 1], pa.int32()),
    "float64": pa.array([1.5, -0.0, 1.5, 2.0, None, 2.0, 3.25, 1.5]),
    "string": pa.array(["a", "", "a", None, "ab", "abcdefghijklmnopq", "", "ab"]),
    "large_string": pa.array(["x", "y", "x", "x", None, "y", "zz", "zz"], pa.large_string()),
    "binary": pa.array([b"\x00", b"\x00\x00", b"\x00", b"", None, b"", b"\xff" * 20,
                        b"\xff" * 20]),
    "timestamp": pa.array([1, 2, 1, 3, None, 3, 2, 1], pa.timestamp("us", "UTC")),
    "decimal": pa.array([decimal.Decimal("1.10"), decimal.Decimal("2.00"), None,
                         decimal.Decimal("1.10"), decimal.Decimal("-1.10"),
                         decimal.Decimal("2.00"), None, decimal.Decimal("0.00")],
                        pa.decimal128(10, 2)),
    "bool": pa.array([True, False, None, True, True, False, None, False]),
}


@pytest.mark.parametrize("name", sorted(KEYS))
def test_group_ids_number_keys_in_order_of_first_appearance(name):
    col = A._keyable(KEYS[name])
    native, n1 = _apply.group_ids([col])
    twin, n2 = _apply_py.group_ids([col])
    assert groups_of(native) == groups_of(twin) and n1 == n2
    seen = {}
    want = [-1 if v is None else seen.setdefault(v, len(seen)) for v in KEYS[name].to_pylist()]
    assert groups_of(native) == want


@pytest.mark.parametrize("name", sorted(KEYS))
def test_group_ids_read_each_row_from_the_column_chosen(name):
    """A delete's key is its before image's: group_ids reads row i of alt where use_alt[i]
    (both read, one chosen without a branch, for the dense integer keys) — the same groups
    as of the column of chosen values; and moved_keys finds the rows whose two differ."""
    swapped = KEYS[name].take(pa.array([1, 0, 3, 2, 5, 4, 7, 6]))
    new, old = A._keyable(KEYS[name]), A._keyable(swapped)
    use = np.array([0, 1, 1, 0, 0, 1, 0, 1], np.uint8)
    chosen = A._keyable(pa.array([o if u else a for a, o, u in zip(
        KEYS[name].to_pylist(), swapped.to_pylist(), use)], KEYS[name].type))
    native, n1 = _apply.group_ids([new], [old], use)
    plain, n2 = _apply.group_ids([chosen])
    twin, n3 = _apply_py.group_ids([new], [old], use)
    assert groups_of(native) == groups_of(plain) == groups_of(twin) and n1 == n2 == n3
    # ranked: the same partition (a dense integer key numbered in key order instead)
    ranked, n4 = _apply.group_ids([new], [old], use, ranked=True)
    assert n4 == n1 and [g < 0 for g in ranked] == [g < 0 for g in native]
    assert len({(int(a), int(b)) for a, b in zip(native, ranked) if a >= 0}) == n1
    values = [v for v in chosen.to_pylist() if v is not None]
    if pa.types.is_integer(KEYS[name].type) and max(values) - min(values) < 2**20:
        order = sorted(set(values))          # a dense integer key: numbered by rank
        assert [int(g) for g, v in zip(ranked, chosen.to_pylist()) if v is not None] == \
            [order.index(v) for v in values]
    code = np.array([2, 2, 0, 2, 2, 3, 2, 2], np.uint8)
    assert _apply.moved_keys(code, [old], [new]).tolist() == \
        _apply_py.moved_keys(code, [old], [new]).tolist()


def test_group_ids_of_several_columns_slices_and_many_keys():
    rng = np.random.default_rng(3)
    a = pa.array(rng.integers(0, 300, 20000))
    b = pa.array(rng.integers(0, 3, 20000).astype(str))
    b = pa.array(b.to_pylist(), mask=rng.random(20000) < 0.01)
    for cols in ([a, b], [a.slice(7), b.slice(7)], [b.slice(3, 500)]):
        native, n1 = _apply.group_ids(cols)
        seen = {}
        want = []
        for row in zip(*(c.to_pylist() for c in cols)):
            want.append(-1 if None in row else seen.setdefault(row, len(seen)))
        assert groups_of(native) == want and n1 == len(seen)
    # past the table's first size: it grows, and numbering does not change
    big = pa.array(np.arange(300_000) % 200_003)
    gid, n = _apply.group_ids([big])
    assert n == 200_003 and (gid == np.arange(300_000) % 200_003).all()


def test_a_key_of_a_type_that_cannot_be_one_says_so():
    with pytest.raises(ValueError, match="cannot be a key"):
        A._keyable(pa.array([[1], [2]]))


@relaxed
@given(event_lists())
def test_the_fold_through_the_python_twin_is_the_natives(events):
    native, twin = folds(table(events))
    assert native[0].equals(twin[0]) and native[1].equals(twin[1])
    assert rows_of(twin[0]) == model(events)[0]


def test_the_target_may_not_hold_a_key_twice():
    ev = table([])
    target = pa.table({"ID": [1, 1], "A": ["a", "b"], "B": [1, 2]})
    with pytest.raises(ValueError, match="holds a key twice"):
        cdcfast.apply_changes(ev, target=target)


@relaxed
@given(event_lists(), st.integers(0, 9))
def test_a_slice_of_the_events_is_read_as_its_rows(events, cut):
    """Slices start their bitmaps mid-byte (the masks' eight-at-a-time path is for aligned
    ones): the fold of a slice equals the fold of the same rows built afresh."""
    t = table(events).slice(cut)
    fresh = table(events[cut:])
    assert cdcfast.apply_changes(t).equals(cdcfast.apply_changes(fresh))
    assert cdcfast.net_changes(t).equals(cdcfast.net_changes(fresh))


@relaxed
@given(st.sampled_from([1, 3, 8, 9, 19, 64, 65, 130]), st.integers(0, 40),
       st.integers(0, 11), st.randoms(use_true_random=False), st.booleans())
def test_present_masks_of_any_width_offset_and_order_are_the_twins(ncols, n, cut, rnd,
                                                                   shuffled):
    """The kernel reads eight aligned events at a time through a bit transpose per eight
    columns, else one event at a time: the masks equal the twin's for tables narrower and
    wider than a word, bitmaps cut mid-byte, null flags, null structs, columns every event
    sent (-1), and events taken out of order (orig)."""
    m = n + cut
    names = [f"C{i}" for i in range(ncols)]
    fields = [pa.array([rnd.choice([True, False, None]) for _ in range(m)], pa.bool_())
              for _ in names]
    struct = pa.StructArray.from_arrays(
        fields, names=names, mask=pa.array([rnd.random() < 0.15 for _ in range(m)], pa.bool_()))
    present = struct.slice(cut)
    columns = [-1 if rnd.random() < 0.2 else i for i in range(ncols)]
    orig = np.array(rnd.sample(range(n), n), np.int64) if shuffled else None
    native = _apply.present_masks(present, columns, orig, n)
    twin = _apply_py.present_masks(present, columns, orig, n)
    if all(c < 0 for c in columns):
        assert native is None and twin is None
    else:
        assert native.shape == (n, (ncols + 63) // 64)
        assert native.tolist() == twin.tolist()


@pytest.mark.parametrize("width", [3, 64, 65, 70, 130])
def test_wide_tables_with_partial_images_fold_as_the_twin(width):
    """Tables of more columns than a mask word: partial images (the row of `vals`) and full
    ones (the head alone) through the kernel equal the twin's fold."""
    from cdcfast.bench.apply import events
    native, twin = folds(events(400, 40, width=width, partial=0.5, seed=width))
    assert native[0].num_rows > 0
    assert native[0].equals(twin[0]) and native[1].equals(twin[1])


TAKEN = {
    "int64": pa.array([1, None, 3, 4, None, 6, 7, 8, 9, None, 11], pa.int64()),
    "bool": pa.array([True, None, False, True, False, None, True, True, False, None, True]),
    "string": pa.array(["a", None, "", "ccc", None, "d", "ee", "f", None, "g", "hh"]),
    "large_binary": pa.array([b"a", None, b"", b"c", None, b"d", b"e", b"f", None, b"g", b"h"],
                             pa.large_binary()),
    "decimal": pa.array([decimal.Decimal("1.5"), None] * 5 + [decimal.Decimal("-2.25")],
                        pa.decimal128(6, 2)),
    "timestamp": pa.array([1, 2, None, 4, 5, 6, None, 8, 9, 10, 11], pa.timestamp("us")),
    "struct": pa.StructArray.from_arrays(
        [pa.array([1, None, 3, 4, 5, None, 7, 8, 9, 10, 11]),
         pa.array(["x", "y", None, "z", "w", "v", "u", None, "t", "s", "r"])],
        names=["a", "b"], mask=pa.array([False, True, False, False, True, False, False,
                                         False, False, True, False])),
    "list": pa.array([[1], None, [], [2, 3], [4], None, [5], [6], [], [7], [8]]),
    "dictionary": pa.array(["p", "q", None, "p", "r", "q", None, "p", "r", "q", "p"]
                           ).dictionary_encode(),
}


@relaxed
@given(st.sampled_from(sorted(TAKEN)), st.integers(0, 4), st.lists(st.integers(0, 6)),
       st.lists(st.booleans(), min_size=8, max_size=8), st.booleans())
def test_a_take_of_bare_values_and_gathered_validity_is_arrows(name, cut, rows, masked,
                                                               wide):
    """_take (values taken without their validity, the validity gathered by the kernel, a
    struct child by child) equals Arrow's take of the same rows with the masked ones null,
    for every type, a slice of the column, int32 and int64 rows; take_validity is its
    twin's."""
    arr = TAKEN[name].slice(cut)
    idx = np.array(rows, np.int64 if wide else np.int32)
    keep = np.array([masked[i % 8] for i in range(len(idx))], bool)
    mask = np.packbits(keep, bitorder="little")
    want = arr.take(pa.array(idx, mask=~keep))
    assert A._take(arr, idx, mask).equals(want)
    assert A._take(arr, idx).equals(arr.take(pa.array(idx)))
    native = _apply.take_validity(arr, idx, mask)
    twin = _apply_py.take_validity(arr, idx, mask)
    assert native[0].tolist() == twin[0].tolist() and native[1] == twin[1]


def test_take_validity_refuses_a_row_out_of_range():
    with pytest.raises(IndexError, match="out of range"):
        _apply.take_validity(pa.array([1, 2]), np.array([0, 2], np.int64))
    with pytest.raises(IndexError, match="out of range"):
        _apply.take_validity(pa.array([1, 2]), np.array([-1], np.int32))


def test_the_kernels_refuse_rows_and_groups_out_of_range():
    """The walk indexes the keys' records by group, present_masks the flags by row: what
    they are given is checked against what is there."""
    present = pa.StructArray.from_arrays([pa.array([True, False])], names=["A"])
    with pytest.raises(ValueError, match="more events"):
        _apply.present_masks(present, [0], None, 3)
    with pytest.raises(IndexError, match="out of range"):
        _apply.present_masks(present, [0], np.array([0, 2], np.int64))
    head = _apply.empty((1, _apply.HEAD), np.int32)
    vals = _apply.empty((1, 1), np.int32)
    with pytest.raises(ValueError, match="group out of range"):
        _apply.walk(np.array([0, 1], np.int32), None, np.zeros(2, np.uint8),
                    np.ones(2, np.uint8), None, 1, np.empty(0, np.int32), head, vals,
                    np.zeros(len(_apply.STATS), np.int64))
