"""`debezium`: a key given twice in a row image, and an image given twice, read by the native
kernel as the reference reads them — the dict keeps the last value, so "given twice" is the
problem even when the first value was bad, and the extra keys count once per key and image."""
from __future__ import annotations

import pytest

import cdcfast
import cdcfast.reference
from cdcfast import Catalog

CATALOG = Catalog.from_dict({"tables": [{"schema": "S", "table": "T", "columns": [
    {"name": "A", "type": "INTEGER"}, {"name": "B", "type": "VARCHAR(9)"}]}]})
GOOD = b'{"before":null,"after":{"A":1,"B":"q"},"source":{"schema":"S","table":"T"},"op":"c"}'
SOURCE = b'"source":{"schema":"S","table":"T"},"op":"c"}'

CASES = {
    "bad first value": b'{"before":null,"after":{"A":"x","B":"q","A":1},' + SOURCE,
    "bad second value": b'{"before":null,"after":{"A":1,"B":"q","A":"x"},' + SOURCE,
    "extra key thrice": b'{"before":null,"after":{"A":1,"Z":1,"B":"q","Z":2,"Z":3},' + SOURCE,
    "image twice, bad first": b'{"before":null,"after":{"A":"x","B":"q"},"after":{"A":2},'
                              + SOURCE,
    "image twice, extra key": b'{"before":null,"after":{"A":"x","Z":1},"after":{"A":2},'
                              + SOURCE,
}


def decoded(module, doc):
    dec = module.Decoder("debezium", catalog=CATALOG)
    # the good document first: the kernel reads the next one's images as its walk meets them
    t = dec.decode([GOOD, doc], table="S.T")
    return t.column("_error").to_pylist(), t.column("after").to_pylist(), dec.last_stats


@pytest.mark.parametrize("case", sorted(CASES))
def test_native_reads_twice_given_keys_as_the_reference(case):
    assert decoded(cdcfast, CASES[case]) == decoded(cdcfast.reference, CASES[case])
