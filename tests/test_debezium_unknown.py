"""A table no catalog or embedded schema describes, in `headers()`: its rows are there and
they count as `unknown_tables`, natively as in the reference. A table's first change event
fixes its layout (an embedded schema then, or none), so the order of schema-bearing and bare
events matters the same way on both sides."""
import json

import pytest

import cdcfast
import cdcfast.reference as reference

SOURCE = {"version": "2.5", "connector": "db2", "name": "s", "db": "D", "schema": "S",
          "table": "T", "ts_ms": 1}
PAYLOAD = {"before": None, "after": {"ID": 1}, "source": SOURCE, "op": "c", "ts_ms": 2}
ID = {"type": "int32", "optional": False, "field": "ID"}
SCHEMA = {"type": "struct", "optional": False, "name": "S.T.Envelope", "fields": [
    {"type": "struct", "optional": True, "field": "before", "fields": [ID]},
    {"type": "struct", "optional": True, "field": "after", "fields": [ID]}]}
WITH_SCHEMA = json.dumps({"schema": SCHEMA, "payload": PAYLOAD}).encode()
BARE = json.dumps(PAYLOAD).encode()
BEGIN = json.dumps({"status": "BEGIN", "id": "1", "event_count": None,
                    "data_collections": None, "ts_ms": 1}).encode()


@pytest.mark.parametrize("messages, unknown", [
    ([WITH_SCHEMA], 0),
    ([BARE], 1),
    ([WITH_SCHEMA, BARE], 0),               # the first event's schema describes the table
    ([BARE, WITH_SCHEMA], 2),               # the first event fixed it: no layout
    ([BEGIN, BARE, BARE], 2),
])
def test_headers_count_tables_nothing_describes_and_keep_their_rows(messages, unknown):
    native, ref = cdcfast.Decoder("debezium"), reference.Decoder("debezium")
    got, want = native.headers(messages), ref.headers(messages)
    assert native.last_stats == ref.last_stats
    assert native.last_stats["unknown_tables"] == unknown
    assert got.num_rows == want.num_rows == len(messages)
    assert got.column("table").to_pylist() == want.column("table").to_pylist()
