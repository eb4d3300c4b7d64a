"""The `ibm-delimited` encoder and generator on their own (no decoder): the vendor's examples
byte for byte, quoting, code pages, value formats, and the generator's promises."""
import datetime as dt
import decimal

import pyarrow as pa
import pytest

from cdcfast.catalog import Catalog
from cdcfast.encode import encode as encode_any, events as events_any, generate as generate_any
from cdcfast.encode.ibm_delimited import encode, events, generate
from conftest import shared_path

UTC = dt.timezone.utc

# Copied verbatim from seeds/ibm-qrep-event-publishing-delimited.txt ("Examples", DB2 for z/OS
# V10 with replication V10.2.1), including its U+201D typo and formatting newlines.
SEED_V10 = """\
10,"IBM","2006030","182318000005","TEST","EMPLOYEE","ISRT",
"0000:0000:0388:4642:0000","0000:0000:0000:0271:000c:0000:0000:0000",
"2006-06-30-18.00.52","ASNQC910",0000,
,,,,,,"John","Doe","MGR","SALES",120000,12000
10,"IBM","2006030","182318003005","TEST","EMPLOYEE","REPL",
"0000:0000:0388:4722:0000","0000:0000:0000:0271:2669:0000:0000:0000\u201d,
"2006-06-30-18.01.02","ASNQCAP",0000,
"Ed","Smith","SALESREP","SALES",109000,10900,
"Ed","Smith","SALESREP","SALES",150000,15000
10,"IBM","2006030","182318003550","TEST","EMPLOYEE","REPL",
"0000:0000:0388:4860:0000","0000:0000:0000:0271:3543:0000:0000:0000",
"2006-06-30-18.05.67","ASNQCAP",0000,
"Bill","Green","SALESREP","SALES",105000,10500,
"Bill","Green","SALESREP","SALES",110000,11000
"""
# The same file's invalid-character-data examples (DB2 for z/OS V10).
SEED_INVALID = """\
10,"IBM-INVALID-COLUMN-002A-HEX","2006030","182318000005","ASN","T1","ISRT","0000:0000:0388:4642:0000","0000:0000:0000:0271:000c:0000:0000:0000",
"2006-06-30-18.00.52","ASNQCAP",0000,,,,1,"4A6F686E","446F65"
10,"IBM-INVALID-COLUMN-002A-NULL","2006030","182318000005","ASN","T1","ISRT","0000:0000:0388:4642:0000","0000:0000:0000:0271:000c:0000:0000:0000",
"2006-06-30-18.00.52","ASNQCAP",0000,,,,1,,
"""

EMPLOYEE = Catalog.from_dict({"tables": [
    {"schema": "TEST", "table": "EMPLOYEE", "columns": [
        {"name": "FIRST_NAME", "type": "VARCHAR(20)"}, {"name": "LAST_NAME", "type": "VARCHAR(20)"},
        {"name": "POSITION", "type": "VARCHAR(10)"}, {"name": "DEPARTMENT", "type": "VARCHAR(10)"},
        {"name": "SALARY", "type": "INTEGER"}, {"name": "COMMISSION", "type": "INTEGER"}]},
    {"schema": "ASN", "table": "T1", "columns": [
        {"name": "C1", "type": "INTEGER"}, {"name": "C2", "type": "CHAR(4)"},
        {"name": "C3", "type": "CHAR(3)"}]},
]})


def seed_records(text):
    """The vendor's records: formatting newlines removed (a record starts with `10,"IBM`),
    the U+201D typo read as the plain quotation mark it stands for."""
    records = []
    for line in text.replace("\u201d", '"').splitlines():
        if line.startswith('10,"IBM'):
            records.append("")
        records[-1] += line
    return [r + "\n" for r in records]


def employee(first, last, salary, commission):
    return {"FIRST_NAME": first, "LAST_NAME": last, "POSITION": "SALESREP" if first != "John"
            else "MGR", "DEPARTMENT": "SALES", "SALARY": salary, "COMMISSION": commission}


def seed_event(op, put_us, txid, lsn, commit, plan, before=None, after=None, table="EMPLOYEE",
               schema="TEST", identifier="IBM"):
    return {"op": op, "schema": schema, "table": table, "txid": txid,
            "commit_ts": commit, "commit_pos": bytes.fromhex(lsn.replace(":", "")),
            "before": before, "after": after,
            "source": {"identifier": identifier, "plan_name": plan, "segment": 0,
                       # 2006030 is day 30 of 2006; 182318000005 is 18:23:18 and 5 µs
                       "put_ts": dt.datetime(2006, 1, 30, 18, 23, 18, tzinfo=UTC)
                       + dt.timedelta(microseconds=put_us)}}


def seed_events():
    t = dt.datetime(2006, 6, 30, 18, 0, 52, tzinfo=UTC)
    return [
        seed_event("c", 5, "0000:0000:0388:4642:0000", "0000:0000:0000:0271:000c:0000:0000:0000",
                   t, "ASNQC910", after=employee("John", "Doe", 120000, 12000)),
        seed_event("u", 3005, "0000:0000:0388:4722:0000",
                   "0000:0000:0000:0271:2669:0000:0000:0000", t.replace(minute=1, second=2),
                   "ASNQCAP", employee("Ed", "Smith", 109000, 10900),
                   employee("Ed", "Smith", 150000, 15000)),
        # The seed's commit time 18.05.67 has no datetime; 67 seconds past 18:05 is 18:06:07.
        seed_event("u", 3550, "0000:0000:0388:4860:0000",
                   "0000:0000:0000:0271:3543:0000:0000:0000", t.replace(minute=6, second=7),
                   "ASNQCAP", employee("Bill", "Green", 105000, 10500),
                   employee("Bill", "Green", 110000, 11000)),
    ]


def count_records(data, quote=b'"', end=b"\n"):
    """Records in a stream: record delimiters outside strings (a doubled quote toggles twice)."""
    inside, n = False, 0
    q, e = quote[0], end[0]
    for b in data:
        if b == q:
            inside = not inside
        elif b == e and not inside:
            n += 1
    return n


# -- the vendor's examples ------------------------------------------------------------------

def test_seed_copy_is_verbatim():
    # ../shared/seeds: a skip without it, a failure in CI (conftest.shared_path)
    seed = shared_path("seeds", "ibm-qrep-event-publishing-delimited.txt").read_text(
        encoding="utf-8")
    assert SEED_V10 in seed
    assert SEED_INVALID.split("\n")[0] in seed


def test_seed_example_byte_for_byte():
    expected = seed_records(SEED_V10)
    expected[2] = expected[2].replace("18.05.67", "18.06.07")
    assert encode(seed_events(), EMPLOYEE) == "".join(expected).encode()
    # each record on its own, and through the format registry
    for ev, rec in zip(seed_events(), expected):
        assert encode_any([ev], "ibm-delimited", catalog=EMPLOYEE) == rec.encode()


def test_seed_invalid_column_examples():
    t = dt.datetime(2006, 6, 30, 18, 0, 52, tzinfo=UTC)
    lsn = "0000:0000:0000:0271:000c:0000:0000:0000"
    hex_row = seed_event("c", 5, "0000:0000:0388:4642:0000", lsn, t, "ASNQCAP", schema="ASN",
                         table="T1", identifier="IBM-INVALID-COLUMN-002A-HEX",
                         after={"C1": 1, "C2": "4A6F686E", "C3": "446F65"})
    null_row = seed_event("c", 5, "0000:0000:0388:4642:0000", lsn, t, "ASNQCAP", schema="ASN",
                          table="T1", identifier="IBM-INVALID-COLUMN-002A-NULL",
                          after={"C1": 1, "C2": None, "C3": None})
    assert encode([hex_row, null_row], EMPLOYEE) == "".join(seed_records(SEED_INVALID)).encode()


def test_pyarrow_table_input():
    evs = seed_events()
    assert encode(pa.Table.from_pylist(evs), EMPLOYEE) == encode(evs, EMPLOYEE)


# -- quoting, delimiters, code pages --------------------------------------------------------

def one(after, catalog=None, **options):
    """The data part of one insert into X.T (header dropped: it has 12 fields, no strings with
    delimiters here)."""
    ev = {"op": "c", "schema": "X", "table": "T", "txid": "1", "commit_ts": None,
          "commit_pos": b"\x00\x01", "after": after, "source": {}}
    return encode([ev], catalog, **options)


def test_string_delimiter_doubled_and_delimiters_as_data():
    out = one({"A": 'say "hi", ok\nbye'}).decode()
    assert out.endswith(',,"say ""hi"", ok\nbye"\n')
    out = one({"A": "it's, \"x\""}, string_delimiter="'", column_delimiter="|").decode()
    assert out.endswith("||'it''s, \"x\"'\n")


def test_header_fields_and_nulls():
    out = one({"A": "", "B": None}).decode()
    # type 10, identifier IBM, no put time, no commit time, no plan name, segment 0000
    assert out == '10,"IBM",,,"X","T","ISRT","1","0001",,,0000,,,"",\n'
    out = one({"A": "v"}, trailing_delimiter=True).decode()
    assert out.endswith(',"v",\n')


def test_source_tz_converts_header_times():
    ev = {"op": "d", "schema": "X", "table": "T", "txid": "t",
          "commit_ts": dt.datetime(2024, 1, 1, 3, 0, 0, tzinfo=UTC), "commit_pos": b"\xab\xcd",
          "before": {"A": "v"}, "source": {"put_ts": dt.datetime(2024, 1, 1, 3, 0, 0, 7, UTC),
                                            "segment": 2, "type": 9, "plan_name": "P"}}
    out = encode([ev], source_tz="America/New_York").decode()
    # 03:00 UTC on 2024-01-01 is 22:00 on 2023-12-31 (day 365) in New York
    assert out == ('9,"IBM","2023365","220000000007","X","T","DLET","t","abcd",'
                   '"2023-12-31-22.00.00","P",0002,"v",\n')


def test_ebcdic_cp037():
    ev = seed_events()[0]
    out = encode([ev], EMPLOYEE, encoding="cp037")
    assert out == encode([ev], EMPLOYEE).decode("utf-8").encode("cp037")
    assert out[2] == 0x6B                      # ',' after the type 10
    assert out[3] == 0x7F                      # '"' opening "IBM"
    assert out[-1] == 0x25                     # the record delimiter is X'25'
    assert b"\n" not in out and b"," not in out


def test_ebcdic_cp1047_through_codepages():
    out = encode(seed_events()[:1], EMPLOYEE, encoding="cp1047")
    assert out[2] == 0x6B and out[-1] == 0x25


def test_delimiters_must_be_single_and_distinct():
    with pytest.raises(ValueError):
        one({"A": "v"}, column_delimiter=",,")
    with pytest.raises(ValueError):
        one({"A": "v"}, decimal_char=",")
    with pytest.raises(ValueError, match="no encoder"):
        encode_any([], "nope")


# -- values by catalog type -----------------------------------------------------------------

TYPES = Catalog.from_dict({"tables": [{"schema": "X", "table": "T", "columns": [
    {"name": n, "type": t} for n, t in [
        ("D", "DECIMAL(9,2)"), ("F", "DOUBLE"), ("R", "REAL"), ("DT", "DATE"), ("TM", "TIME"),
        ("TM6", "TIME(6)"), ("TS", "TIMESTAMP"), ("TS0", "TIMESTAMP(0)"), ("TS3", "TIMESTAMP(3)"),
        ("TS12", "TIMESTAMP(12)"), ("TZ", "TIMESTAMP WITH TIME ZONE"), ("B", "BOOLEAN"),
        ("BIN", "VARCHAR(8) FOR BIT DATA"), ("I", "SMALLINT"), ("DF", "DECFLOAT"),
        ("S", "VARCHAR(10)")]]}]})


def data_fields(out, n):
    return out.decode().rstrip("\n").split(",")[-n:]


def test_values_by_type():
    t = dt.datetime(2024, 2, 29, 23, 59, 58, 123456)
    plus2 = dt.timezone(dt.timedelta(hours=2))
    after = {"D": decimal.Decimal("-12.5"), "F": 1e-05, "R": 0.1, "DT": dt.date(1, 1, 1),
             "TM": dt.time(7, 8, 9), "TM6": dt.time(7, 8, 9, 500), "TS": t, "TS0": t, "TS3": t,
             "TS12": t, "TZ": dt.datetime(2024, 1, 1, 1, 0, tzinfo=plus2),
             "B": True, "BIN": b"\x01\xab", "I": -7, "DF": "1.5E+3", "S": "x"}
    assert data_fields(one(after, TYPES), 16) == [
        "-12.50", "1E-05", "0.1", '"0001-01-01"', '"07.08.09"', '"07.08.09.000500"',
        '"2024-02-29-23.59.58.123456"', '"2024-02-29-23.59.58"', '"2024-02-29-23.59.58.123"',
        '"2024-02-29-23.59.58.123456000000"', '"2023-12-31-23.00.00.000000+00:00"', "1",
        '"01AB"', "-7", "1.5E+3", '"x"']


def test_decimal_char():
    out = one({"D": decimal.Decimal("3"), "F": 2.5}, TYPES, decimal_char="#").decode()
    assert ",3#00,2#5," in out


def test_unknown_column_is_an_error():
    with pytest.raises(ValueError, match="lacks"):
        one({"NOPE": 1}, TYPES)


# -- the generator ------------------------------------------------------------------------

def test_generate_is_deterministic():
    a, cat_a = generate(300, seed=7)
    b, cat_b = generate(300, seed=7)
    assert a == b and cat_a.to_dict() == cat_b.to_dict()
    assert generate(300, seed=8)[0] != a
    # the same records whether as one stream or as messages
    msgs, _ = generate(300, seed=7, messages=True)
    assert b"".join(msgs) == a and len(msgs) < 300


@pytest.mark.parametrize("rows", [0, 1, 7, 999, 6001])
def test_generate_gives_n_records(rows):
    data, catalog = generate(rows, table_width=12, tables=3)
    assert count_records(data) == rows
    msgs, _ = generate(rows, table_width=12, tables=3, messages=True, records_per_message=(2, 5))
    assert sum(map(count_records, msgs)) == rows
    assert all(1 <= count_records(m) <= 5 for m in msgs)
    assert [t.name for t in catalog] == ["SALES.ORDERS_0", "SALES.ORDERS_1", "SALES.ORDERS_2"]
    assert all(len(t.columns) == 12 for t in catalog)


def test_generate_in_ebcdic():
    data, _ = generate(200, encoding="cp037", seed=3)
    assert count_records(data, quote='"'.encode("cp037"), end=b"\x25") == 200
    # cp037 holds the characters of latin-1, so the generator picks the same text for both
    assert data.decode("cp037") == generate(200, seed=3, encoding="latin-1")[0].decode("latin-1")


def test_generated_content_is_realistic():
    evs, catalog = events(3000, seed=1)
    ops = [e["op"] for e in evs]
    assert 0.5 < ops.count("c") / 3000 < 0.7 and 0.2 < ops.count("u") / 3000 < 0.4
    assert ops.count("d") > 100
    text = generate(3000, seed=1)[0].decode()
    for piece in ('""', "é", "中"):
        assert piece in text
    values = [v for e in evs for v in (e["after"] or {}).values()]
    assert None in values and "" in values
    assert any(isinstance(v, decimal.Decimal) for v in values)
    assert any(isinstance(v, str) and "\n" in v for v in values)
    assert {e["source"]["segment"] for e in evs} >= {0, 1}
    lsns = [e["commit_pos"] for e in evs]
    assert lsns == sorted(lsns) and len(lsns[0]) == 16
    # updates change a few columns of a row that exists; the key never changes
    for e in evs:
        if e["op"] == "u":
            assert e["before"]["ORDER_ID"] == e["after"]["ORDER_ID"]
            assert sum(e["before"][k] != e["after"][k] for k in e["after"]) <= 3


def test_events_are_what_generate_encodes():
    for rows in (50, 5003):
        evs, catalog = events_any("ibm-delimited", rows, table_width=25, tables=2, seed=4,
                                  column_delimiter=";")
        assert len(evs) == rows
        data, _ = generate_any("ibm-delimited", rows, table_width=25, tables=2, seed=4,
                               column_delimiter=";")
        assert encode(evs, catalog, column_delimiter=";") == data


def test_line_per_record_keeps_record_delimiters_out_of_strings():
    """For line-based readers (the Spark benchmark's read.text): each line one record, the
    same rows as the default stream, which does put record delimiters inside strings."""
    import cdcfast
    data, cat = cdcfast.encode.generate("ibm-delimited", rows=2000, seed=8, line_per_record=True)
    lines = data.split(b"\n")[:-1]
    assert len(lines) == 2000
    t = cdcfast.decode(lines, format="ibm-delimited", catalog=cat)
    assert t.num_rows == 2000 and t.column("_error").null_count == 2000
    usual, _ = cdcfast.encode.generate("ibm-delimited", rows=2000, seed=8)
    assert usual.count(b"\n") > 2000
    whole = cdcfast.decode(data, format="ibm-delimited", catalog=cat)
    assert whole.column("after").combine_chunks().field("ORDER_ID").equals(
        cdcfast.decode(usual, format="ibm-delimited", catalog=cat)
        .column("after").combine_chunks().field("ORDER_ID"))
