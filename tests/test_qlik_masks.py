"""The native hex-mask kernel (_hexmask.h through cdcfast._masks.decode_masks) against
Python's own reading of a mask, int(mask, 16): bit i of the integer is column i."""
from __future__ import annotations

import re

import numpy as np
import pyarrow as pa
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from cdcfast._masks import decode_masks
from cdcfast.reference.qlik import NOT_HEX, mask_bits

HEX = re.compile(r"[0-9A-Fa-f]+")


def expected(texts, ncols, lob):
    """What decode_masks must give: per row a dict of column flags or None, and bad rows."""
    rows, bad = [], []
    for r, t in enumerate(texts):
        if t is None or t == "":
            rows.append(None)
        elif not HEX.fullmatch(t):
            rows.append(None)
            bad.append(r)
        else:
            x = int(t, 16)
            rows.append({f"c{i}": None if lob and lob[i] else bool(x >> i & 1)
                         for i in range(ncols)})
    return rows, bad


def check(arr, texts, ncols, lob=None):
    got, bad = decode_masks(arr, ncols, lob)
    got.validate(full=True)
    want, want_bad = expected(texts, ncols, lob)
    assert got.to_pylist() == want
    assert bad.dtype == np.int64 and bad.tolist() == want_bad
    assert got.null_count == sum(w is None for w in want)


HEX_TEXT = st.text(alphabet="0123456789abcdefABCDEF", max_size=40)
ANY_TEXT = st.one_of(
    HEX_TEXT,
    st.text(alphabet="0123456789abcdefABCDEFxg _-\u0661\uff11", max_size=40),   # bad chars
    st.none(), st.just(""))


@settings(max_examples=300, deadline=None)
@given(texts=st.lists(ANY_TEXT, max_size=40), ncols=st.integers(1, 150), data=st.data())
def test_equals_python_int_reading(texts, ncols, data):
    lob = data.draw(st.one_of(st.none(), st.lists(st.booleans(), min_size=ncols,
                                                  max_size=ncols)))
    check(pa.array(texts, pa.string()), texts, ncols, lob)


@settings(max_examples=60, deadline=None)
@given(texts=st.lists(ANY_TEXT, min_size=1, max_size=30), ncols=st.integers(1, 70),
       start=st.integers(0, 29), kind=st.sampled_from([pa.string(), pa.large_string(),
                                                       pa.binary(), pa.large_binary()]))
def test_slices_and_wide_offsets(texts, ncols, start, kind):
    """An array with an offset (a slice) and 64-bit offsets read the same."""
    arr = pa.array(texts, kind).slice(min(start, len(texts)))
    check(arr, texts[min(start, len(texts)):], ncols)


def test_the_sample_and_readme_masks():
    got, bad = decode_masks(pa.array(["008080", "00FFFF"]), 16)
    changed, present = got.to_pylist()
    assert [k for k, v in changed.items() if v] == ["c7", "c15"]
    assert all(present.values())
    got, _ = decode_masks(pa.array(["0B", "00", "05"]), 3, names=["A", "B", "C"])
    assert got.to_pylist() == [{"A": True, "B": True, "C": False},
                               {"A": False, "B": False, "C": False},
                               {"A": True, "B": False, "C": True}]
    got, _ = decode_masks(pa.array(["0B"]), 4)
    assert got.to_pylist() == [{"c0": True, "c1": True, "c2": False, "c3": True}]


def test_lob_columns_are_null_and_bad_rows_named():
    arr = pa.array(["FF", None, "1x", "", "f" * 40, "0"])
    got, bad = decode_masks(arr, 3, lob=[False, True, False])
    assert got.to_pylist() == [{"c0": True, "c1": None, "c2": True}, None, None, None,
                               {"c0": True, "c1": None, "c2": True},
                               {"c0": False, "c1": None, "c2": False}]
    assert bad.tolist() == [2]


def test_every_row_count_around_the_blocks_of_eight():
    for n in range(0, 20):
        texts = [format(i * 37 % 4096, "x") for i in range(n)]
        check(pa.array(texts, pa.string()), texts, 12)


def test_arguments_are_checked():
    with pytest.raises(ValueError):
        decode_masks(pa.array(["1"]), 0)
    with pytest.raises(ValueError):
        decode_masks(pa.array(["1"]), 2, names=["a"])
    with pytest.raises(ValueError):
        decode_masks(pa.array(["1"]), 2, lob=[True])
    with pytest.raises(TypeError):
        decode_masks(pa.array([1]), 2)


@settings(max_examples=200, deadline=None)
@given(text=st.text(max_size=20))
def test_reference_reading_is_strict_hex(text):
    """The reference's mask reader takes exactly what the kernel takes (Python's int() alone
    would also take spaces, `_`, `0x` and non-ASCII digits)."""
    bits = mask_bits(text) if text else 0
    if text and HEX.fullmatch(text):
        assert bits == int(text, 16)
    elif text:
        assert bits is NOT_HEX
        _, bad = decode_masks(pa.array([text]), 8)
        assert bad.tolist() == [0]
