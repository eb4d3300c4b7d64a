"""`ibm-delimited`: the pure-Python reference decoder (cdcfast.reference) against the vendor's
examples and against the native kernel.

1. Hand-written cases straight from seeds/ibm-qrep-event-publishing-delimited.txt, run against
   BOTH decoders with exact expected values.
2. Differential tests: generated streams decoded by both must give equal tables and stats.
3. Known disagreements, one minimal test each, marked ``xfail(strict=True)`` on the side that
   is wrong per docs/ibm-delimited.md / SPEC (so they turn into failures once fixed, and the
   marker must then go).
"""
import datetime as dt
import decimal

import pyarrow as pa
import pytest

import cdcfast
from cdcfast.errors import show_value
import cdcfast.reference
from cdcfast.encode import generate

UTC = dt.timezone.utc
D = decimal.Decimal
FMT = "ibm-delimited"

# -- the seed ---------------------------------------------------------------------------------
# "DB2 for z/OS V10 with replication V10.2.1", one record per line (the seed's newlines inside a
# record are "for formatting purposes only"). The second record carries the seed's U+201D typo.
SEED_RECORDS = [
    '10,"IBM","2006030","182318000005","TEST","EMPLOYEE","ISRT",'
    '"0000:0000:0388:4642:0000","0000:0000:0000:0271:000c:0000:0000:0000",'
    '"2006-06-30-18.00.52","ASNQC910",0000,'
    ',,,,,,"John","Doe","MGR","SALES",120000,12000',
    '10,"IBM","2006030","182318003005","TEST","EMPLOYEE","REPL",'
    '"0000:0000:0388:4722:0000","0000:0000:0000:0271:2669:0000:0000:0000\u201d,'
    '"2006-06-30-18.01.02","ASNQCAP",0000,'
    '"Ed","Smith","SALESREP","SALES",109000,10900,'
    '"Ed","Smith","SALESREP","SALES",150000,15000',
    '10,"IBM","2006030","182318003550","TEST","EMPLOYEE","REPL",'
    '"0000:0000:0388:4860:0000","0000:0000:0000:0271:3543:0000:0000:0000",'
    '"2006-06-30-18.05.67","ASNQCAP",0000,'
    '"Bill","Green","SALESREP","SALES",105000,10500,'
    '"Bill","Green","SALESREP","SALES",110000,11000',
]
SEED = ("\n".join(SEED_RECORDS) + "\n").encode()
SEED_FIXED = SEED.replace("\u201d".encode(), b'"')

SEED_HEX = (b'10,"IBM-INVALID-COLUMN-002A-HEX","2006030","182318000005","ASN","T1","ISRT",'
            b'"0000:0000:0388:4642:0000","0000:0000:0000:0271:000c:0000:0000:0000",'
            b'"2006-06-30-18.00.52","ASNQCAP",0000,,,,1,"4A6F686E","446F65"\n')
SEED_NULL = (b'10,"IBM-INVALID-COLUMN-002A-NULL","2006030","182318000005","ASN","T1","ISRT",'
             b'"0000:0000:0388:4642:0000","0000:0000:0000:0271:000c:0000:0000:0000",'
             b'"2006-06-30-18.00.52","ASNQCAP",0000,,,,1,,\n')

EMPLOYEE = {"tables": [{"schema": "TEST", "table": "EMPLOYEE", "columns": [
    {"name": "FIRST_NAME", "type": "VARCHAR(20)"}, {"name": "LAST_NAME", "type": "VARCHAR(20)"},
    {"name": "POSITION", "type": "VARCHAR(10)"}, {"name": "DEPARTMENT", "type": "VARCHAR(10)"},
    {"name": "SALARY", "type": "DECIMAL(9,2)"}, {"name": "COMMISSION", "type": "DECIMAL(9,2)"}]}]}
T1 = {"tables": [{"schema": "ASN", "table": "T1", "columns": [
    {"name": "ID", "type": "INTEGER"}, {"name": "A", "type": "CHAR(4)"},
    {"name": "B", "type": "CHAR(3)"}]}]}
T1_NOT_NULL = {"tables": [{"schema": "ASN", "table": "T1", "columns": [
    {"name": "ID", "type": "INTEGER"}, {"name": "A", "type": "CHAR(4)", "nullable": False},
    {"name": "B", "type": "CHAR(3)", "nullable": False}]}]}

NATIVE = pytest.param(cdcfast, id="native")
REFERENCE = pytest.param(cdcfast.reference, id="reference")
BOTH = [NATIVE, REFERENCE]


def native_xfail(reason, raises=None):
    """Both decoders, the native one expected to fail (a known kernel bug, see the reason)."""
    return [pytest.param(cdcfast, id="native", marks=pytest.mark.xfail(
        strict=True, reason=reason, raises=raises)), REFERENCE]


def utc(*a):
    return dt.datetime(*a, tzinfo=UTC)


def row_of(table, i=0):
    return table.slice(i, 1).to_pylist()[0]


# -- 1. the seed, exact values ------------------------------------------------------------------

EMPLOYEE_COLS = ("FIRST_NAME", "LAST_NAME", "POSITION", "DEPARTMENT", "SALARY", "COMMISSION")


def image(*values):
    return dict(zip(EMPLOYEE_COLS, values))


def flags(*values):
    return dict(zip(EMPLOYEE_COLS, values))


def no_invalid(**src):
    return {**src, "invalid_column": None, "invalid_image": None, "invalid_mode": None}


@pytest.mark.parametrize("dec", BOTH)
def test_seed_corrected_exact_values(dec):
    t = dec.decode(SEED_FIXED, FMT, catalog=EMPLOYEE, table="TEST.EMPLOYEE")
    assert t.num_rows == 3
    rows = t.to_pylist()
    assert rows[0] == {
        "op": "c", "source_op": "ISRT", "schema": "TEST", "table": "EMPLOYEE",
        "txid": "0000:0000:0388:4642:0000",
        "commit_ts": utc(2006, 6, 30, 18, 0, 52), "change_ts": utc(2006, 6, 30, 18, 0, 52),
        "commit_pos": bytes.fromhex("0000 0000 0000 0271 000c 0000 0000 0000"),
        "change_pos": b"\x00\x00\x00\x00\x00\x00\x02\x71\x00\x0c\x00\x00\x00\x00\x00\x00",
        "seq": 0, "before": None,
        "after": image("John", "Doe", "MGR", "SALES", D("120000.00"), D("12000.00")),
        "changed": flags(*[True] * 6), "present": flags(*[True] * 6),
        # 2006030 = 30 January 2006; 182318000005 = 18:23:18.000005
        "source": no_invalid(type=10, identifier="IBM", put_ts=utc(2006, 1, 30, 18, 23, 18, 5),
                             plan_name="ASNQC910", segment=0),
        "_error": None, "_corrupt_record": None}
    assert rows[1] == {
        "op": "u", "source_op": "REPL", "schema": "TEST", "table": "EMPLOYEE",
        "txid": "0000:0000:0388:4722:0000",
        "commit_ts": utc(2006, 6, 30, 18, 1, 2), "change_ts": utc(2006, 6, 30, 18, 1, 2),
        "commit_pos": b"\0\0\0\0\0\0\x02\x71\x26\x69\0\0\0\0\0\0",
        "change_pos": b"\0\0\0\0\0\0\x02\x71\x26\x69\0\0\0\0\0\0",
        "seq": 1,
        "before": image("Ed", "Smith", "SALESREP", "SALES", D("109000.00"), D("10900.00")),
        "after": image("Ed", "Smith", "SALESREP", "SALES", D("150000.00"), D("15000.00")),
        "changed": flags(False, False, False, False, True, True),
        "present": flags(*[True] * 6),
        "source": no_invalid(type=10, identifier="IBM",
                             put_ts=utc(2006, 1, 30, 18, 23, 18, 3005), plan_name="ASNQCAP",
                             segment=0),
        "_error": None, "_corrupt_record": None}
    # the third record's commit_time has 67 seconds: an error; the rest of the row stays
    at = SEED_FIXED.index(b'"2006-06-30-18.05.67"')
    assert at == 595
    assert rows[2] == {
        "op": "u", "source_op": "REPL", "schema": "TEST", "table": "EMPLOYEE",
        "txid": "0000:0000:0388:4860:0000", "commit_ts": None, "change_ts": None,
        "commit_pos": b"\0\0\0\0\0\0\x02\x71\x35\x43\0\0\0\0\0\0",
        "change_pos": b"\0\0\0\0\0\0\x02\x71\x35\x43\0\0\0\0\0\0",
        "seq": 2,
        "before": image("Bill", "Green", "SALESREP", "SALES", D("105000.00"), D("10500.00")),
        "after": image("Bill", "Green", "SALESREP", "SALES", D("110000.00"), D("11000.00")),
        "changed": flags(False, False, False, False, True, True),
        "present": flags(*[True] * 6),
        "source": no_invalid(type=10, identifier="IBM",
                             put_ts=utc(2006, 1, 30, 18, 23, 18, 3550), plan_name="ASNQCAP",
                             segment=0),
        "_error": f"commit_time: '2006-06-30-18.05.67' is not a TIMESTAMP (message 0, byte {at})",
        "_corrupt_record": None}


@pytest.mark.parametrize("dec", BOTH)
def test_seed_typo_is_a_corrupt_record(dec):
    t = dec.decode(SEED, FMT, catalog=EMPLOYEE, table="TEST.EMPLOYEE")
    assert t.num_rows == 3
    first, bad, third = t.to_pylist()
    assert first["after"]["FIRST_NAME"] == "John" and first["_error"] is None
    # the U+201D does not close the string: the next '"' (before 2006-06-30-18.01.02) does,
    # and the '2' after it makes the record unsplittable
    at = SEED.index(b"2006-06-30-18.01.02")
    assert at == 343
    line = SEED_RECORDS[1].encode()
    assert bad == {
        "op": None, "source_op": None, "schema": None, "table": None, "txid": None,
        "commit_ts": None, "change_ts": None, "commit_pos": None, "change_pos": None,
        "seq": 1, "before": None, "after": None, "changed": None, "present": None,
        "source": None,
        "_error": f"commit_lsn: text after closing string delimiter (message 0, byte {at})",
        "_corrupt_record": line}
    # decoding resumed at the next record
    assert third["seq"] == 2 and third["after"]["SALARY"] == D("110000.00")
    assert third["commit_ts"] is None
    assert third["_error"].startswith("commit_time: '2006-06-30-18.05.67' is not a TIMESTAMP")


@pytest.mark.parametrize("dec", BOTH)
def test_seed_typo_in_every_view(dec):
    """An unattributable record is never dropped silently: headers(), decode_tables()[None]."""
    heads = dec.headers(SEED, FMT, catalog=EMPLOYEE)
    assert heads.column("seq").to_pylist() == [0, 1, 2]
    assert heads.column("op").to_pylist() == ["c", None, "u"]
    assert heads.schema.names == ["op", "source_op", "schema", "table", "txid", "commit_ts",
                                  "change_ts", "commit_pos", "change_pos", "seq", "source",
                                  "_error", "_corrupt_record"]
    tables = dec.decode_tables(SEED, FMT, catalog=EMPLOYEE)
    assert set(tables) == {"TEST.EMPLOYEE", None}
    assert tables["TEST.EMPLOYEE"].column("seq").to_pylist() == [0, 2]
    assert tables[None].column("_corrupt_record").to_pylist() == [SEED_RECORDS[1].encode()]
    # without a catalog: C1…C6 strings
    t = dec.decode(SEED_FIXED, FMT, table="TEST.EMPLOYEE")
    assert t.schema.field("after").type == pa.struct([(f"C{i}", pa.string())
                                                      for i in range(1, 7)])
    assert row_of(t)["after"] == {"C1": "John", "C2": "Doe", "C3": "MGR", "C4": "SALES",
                                  "C5": "120000", "C6": "12000"}


@pytest.mark.parametrize("dec", BOTH)
def test_seed_failfast(dec):
    d = dec.Decoder(FMT, EMPLOYEE, mode="FAILFAST")
    with pytest.raises(cdcfast.DecodeError) as ei:
        d.decode(SEED, table="TEST.EMPLOYEE")
    e = ei.value
    assert (e.message_index, e.byte_offset, e.field, e.reason) == (
        0, 343, "commit_lsn", "text after closing string delimiter")
    assert str(e) == "commit_lsn: text after closing string delimiter (message 0, byte 343)"
    # with the typo corrected, the first error is the third record's commit_time
    with pytest.raises(cdcfast.DecodeError) as ei:
        d.decode(SEED_FIXED, table="TEST.EMPLOYEE")
    assert (ei.value.field, ei.value.byte_offset) == ("commit_time", 595)
    assert ei.value.reason == "'2006-06-30-18.05.67' is not a TIMESTAMP"
    # headers() checks the header too
    with pytest.raises(cdcfast.DecodeError, match="commit_lsn: text after closing"):
        d.headers(SEED)


@pytest.mark.parametrize("dec", BOTH)
def test_seed_dropmalformed(dec):
    d = dec.Decoder(FMT, EMPLOYEE, mode="DROPMALFORMED")
    t = d.decode(SEED, table="TEST.EMPLOYEE")
    assert t.column("seq").to_pylist() == [0]
    assert row_of(t)["after"]["LAST_NAME"] == "Doe"
    assert d.last_stats == {"records": 3, "events": 1, "errors": 2, "dropped": 2,
                            "tombstones": 0, "control": 0, "unknown_tables": 0,
                            "extra_columns": 0}
    assert d.decode_tables(SEED).keys() == {"TEST.EMPLOYEE", None}
    assert d.decode_tables(SEED)[None].num_rows == 0


@pytest.mark.parametrize("dec", BOTH)
def test_seed_invalid_column_hex(dec):
    t = dec.decode(SEED_HEX, FMT, catalog=T1, table="ASN.T1")
    r = row_of(t)
    assert r["op"] == "c" and r["before"] is None and r["_error"] is None
    # "002A": column 2, after image; character columns arrive as hex text and stay so
    assert r["source"] == {"type": 10, "identifier": "IBM-INVALID-COLUMN-002A-HEX",
                           "put_ts": utc(2006, 1, 30, 18, 23, 18, 5), "plan_name": "ASNQCAP",
                           "segment": 0, "invalid_column": 2, "invalid_image": "A",
                           "invalid_mode": "HEX"}
    assert r["after"] == {"ID": 1, "A": "4A6F686E", "B": "446F65"}
    assert r["present"] == {"ID": True, "A": True, "B": True}
    assert r["changed"] == {"ID": True, "A": True, "B": True}
    # ... unless hex_encoding names a code page to decode them with
    for enc in ("utf-8", "latin-1", "ascii"):
        r = row_of(dec.decode(SEED_HEX, FMT, catalog=T1, table="ASN.T1", hex_encoding=enc))
        assert r["after"] == {"ID": 1, "A": "John", "B": "Doe"}
    r = row_of(dec.decode(SEED_HEX.replace(b"4A6F686E", b"D1968895").replace(b"446F65", b"C49685"),
                          FMT, catalog=T1, table="ASN.T1", hex_encoding="cp037"))
    assert r["after"] == {"ID": 1, "A": "John", "B": "Doe"}
    bad = SEED_HEX.replace(b'"446F65"', b'"446F6"')
    r = row_of(dec.decode(bad, FMT, catalog=T1, table="ASN.T1", hex_encoding="utf-8"))
    assert r["after"] == {"ID": 1, "A": "John", "B": None}
    at = bad.index(b'"446F6"')
    assert r["_error"] == f"after.B: '446F6' is not hex text (message 0, byte {at})"


@pytest.mark.parametrize("dec", BOTH)
def test_seed_invalid_column_null(dec):
    for cat in (T1, T1_NOT_NULL):       # nulled character columns are never errors
        r = row_of(dec.decode(SEED_NULL, FMT, catalog=cat, table="ASN.T1"))
        assert r["_error"] is None
        assert r["source"]["invalid_mode"] == "NULL"
        assert (r["source"]["invalid_column"], r["source"]["invalid_image"]) == (2, "A")
        assert r["after"] == {"ID": 1, "A": None, "B": None}
        assert r["present"] == {"ID": True, "A": False, "B": False}
        assert r["changed"] == {"ID": True, "A": True, "B": True}
    # a normal row with the same nulls: present, and an error in the NOT NULL column
    normal = SEED_NULL.replace(b"IBM-INVALID-COLUMN-002A-NULL", b"IBM")
    r = row_of(dec.decode(normal, FMT, catalog=T1_NOT_NULL, table="ASN.T1"))
    assert r["present"] == {"ID": True, "A": True, "B": True}
    at = normal.rindex(b",1,,") + 3          # the empty field after ",1,"
    assert r["_error"] == f"after.A: null in NOT NULL column (message 0, byte {at})"


@pytest.mark.parametrize("dec", BOTH)
def test_messages_seq_indexes_and_tombstones(dec):
    """A list source: each element a message; seq and byte offsets count within a message,
    a null element is a tombstone (skipped, but it keeps its message index)."""
    recs = SEED_FIXED.splitlines(keepends=True)
    d = dec.Decoder(FMT, EMPLOYEE)
    t = d.decode([recs[0] + recs[1], None, recs[2]], table="TEST.EMPLOYEE")
    assert t.column("seq").to_pylist() == [0, 1, 0]
    at = recs[2].index(b'"2006-06-30-18.05.67"')
    assert row_of(t, 2)["_error"] == (f"commit_time: '2006-06-30-18.05.67' is not a TIMESTAMP "
                                      f"(message 2, byte {at})")
    assert d.last_stats["tombstones"] == 1 and d.last_stats["records"] == 3
    # a ChunkedArray: message indexes run on across chunks
    arr = pa.chunked_array([pa.array([recs[0]], pa.binary()), pa.array([recs[2]], pa.binary())])
    with pytest.raises(cdcfast.DecodeError) as ei:
        dec.decode(arr, FMT, catalog=EMPLOYEE, table="TEST.EMPLOYEE", mode="FAILFAST")
    assert (ei.value.message_index, ei.value.byte_offset) == (1, at)


# -- 2. differential: native vs reference ---------------------------------------------------------

def first_difference(a: pa.Table, b: pa.Table) -> str:
    if a.schema != b.schema:
        return f"schemas differ:\nnative:    {a.schema}\nreference: {b.schema}"
    if a.num_rows != b.num_rows:
        return f"row counts differ: native {a.num_rows}, reference {b.num_rows}"
    for i in range(a.num_rows):
        x, y = row_of(a, i), row_of(b, i)
        if x != y:
            keys = [k for k in x if x[k] != y[k]]
            return (f"row {i} differs in {keys}:\nnative:    {[x[k] for k in keys]}\n"
                    f"reference: {[y[k] for k in keys]}")
    return "tables differ (in a way to_pylist does not show)"


def assert_same(a: pa.Table, b: pa.Table):
    assert a.equals(b), first_difference(a, b)


def both_decoders(cat, mode="PERMISSIVE", **opts):
    return (cdcfast.Decoder(FMT, cat, mode, **opts),
            cdcfast.reference.Decoder(FMT, cat, mode, **opts))


OPTIONS = {
    "default": {},
    "cp037": {"encoding": "cp037"},
    "cp1047": {"encoding": "cp1047"},
    "semicolon": {"column_delimiter": ";"},
    "decimal-comma": {"column_delimiter": ";", "decimal_char": ","},
    "new-york": {"source_tz": "America/New_York"},
    "trailing-delimiter": {"trailing_delimiter": True},
}
DECODER_ONLY = {"trailing_delimiter"}        # generator options the decoder does not take


def stream(opts, seed, messages=False, rows=240):
    gen = dict(opts)
    data, cat = generate(FMT, rows=rows, seed=seed, tables=2, messages=messages, **gen)
    return data, cat, {k: v for k, v in opts.items() if k not in DECODER_ONLY}


@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize("name", list(OPTIONS))
def test_differential_generated(name, seed):
    data, cat, opts = stream(OPTIONS[name], seed)
    nat, ref = both_decoders(cat, **opts)
    a, b = nat.decode_tables(data), ref.decode_tables(data)
    assert a.keys() == b.keys() == {"SALES.ORDERS_0", "SALES.ORDERS_1"}
    for k in a:
        assert_same(a[k], b[k])
    assert nat.last_stats == ref.last_stats
    assert_same(nat.headers(data), ref.headers(data))
    assert nat.last_stats == ref.last_stats
    assert_same(nat.decode(data, table="SALES.ORDERS_1"), ref.decode(data, table="SALES.ORDERS_1"))
    assert nat.last_stats == ref.last_stats
    assert_same(nat.headers(data, table="sales.orders_0"),
                ref.headers(data, table="sales.orders_0"))
    na = list(nat.read_batches(data, table="SALES.ORDERS_0", batch_size=37))
    rb = list(ref.read_batches(data, table="SALES.ORDERS_0", batch_size=37))
    assert [x.num_rows for x in na] == [x.num_rows for x in rb]
    assert all(x.num_rows <= 37 for x in rb)
    assert_same(pa.Table.from_batches(na), pa.Table.from_batches(rb))


@pytest.mark.parametrize("seed", [0, 1])
def test_differential_without_catalog(seed):
    data, _, opts = stream({}, seed)
    nat, ref = both_decoders(None)
    a, b = nat.decode_tables(data), ref.decode_tables(data)
    assert a.keys() == b.keys()
    for k in a:
        assert_same(a[k], b[k])
    assert nat.last_stats == ref.last_stats
    assert nat.last_stats["unknown_tables"] == 240
    assert_same(nat.decode(data, table="SALES.ORDERS_0"), ref.decode(data, table="SALES.ORDERS_0"))


def damaged(seed):
    """A generated stream with a few lines broken in the ways the doc names."""
    data, cat, _ = stream({}, seed, rows=60)
    lines = data.split(b"\n")
    lines[3] = lines[3].replace(b'"ISRT"', b'"UPSERT"').replace(b'"REPL"', b'"UPSERT"') \
        .replace(b'"DLET"', b'"UPSERT"')                                  # unknown operation
    lines[7] = lines[7] + b",x"                                            # field count
    lines[11] = lines[11].replace(b'","', b'"x,"', 1)                      # after closing quote
    lines[13] = b",".join(lines[13].split(b",")[:5])                        # too few fields
    lines[17] = lines[17].replace(b'"2024-', b'"2024-13-', 1)              # bad commit_time
    lines[19] = lines[19].replace(b',0000,', b',00x0,', 1)                 # bad segment
    lines[23] = b'1"' + lines[23][1:]                                      # stray quote
    return b"\n".join(lines), cat


@pytest.mark.parametrize("mode", ["PERMISSIVE", "DROPMALFORMED"])
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_differential_damaged(seed, mode):
    data, cat = damaged(seed)
    for catalog in (cat, None):
        nat, ref = both_decoders(catalog, mode)
        a, b = nat.decode_tables(data), ref.decode_tables(data)
        assert a.keys() == b.keys()
        for k in a:
            assert_same(a[k], b[k])
        assert nat.last_stats == ref.last_stats
        if mode == "PERMISSIVE":
            # (lines are not records: generated strings hold record delimiters too)
            assert b[None].num_rows >= 1 and b[None].column("_error").null_count == 0
            assert b[None].column("_corrupt_record").null_count == 0
        assert_same(nat.headers(data), ref.headers(data))
        assert nat.last_stats == ref.last_stats
        assert_same(nat.decode(data, table="SALES.ORDERS_0"),
                    ref.decode(data, table="SALES.ORDERS_0"))
        assert nat.last_stats == ref.last_stats


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_differential_failfast(seed):
    data, cat = damaged(seed)
    for table in ("SALES.ORDERS_0", "SALES.ORDERS_1"):
        errors = []
        for dec in both_decoders(cat, "FAILFAST"):
            with pytest.raises(cdcfast.DecodeError) as ei:
                dec.decode(data, table=table)
            errors.append(str(ei.value))
        assert errors[0] == errors[1]


@pytest.mark.parametrize("name", ["default", "cp1047", "decimal-comma", "new-york"])
def test_differential_messages(name):
    data, cat, opts = stream(OPTIONS[name], 3, messages=True)
    assert isinstance(data, list) and len(data) > 1
    nat, ref = both_decoders(cat, **opts)
    a, b = nat.decode_tables(data), ref.decode_tables(data)
    for k in a:
        assert_same(a[k], b[k])
    assert nat.last_stats == ref.last_stats
    assert_same(nat.headers(data), ref.headers(data))


def test_reference_messages_equal_stream():
    """The reference alone: the same records as one stream or as messages give the same rows
    but seq (which restarts per message)."""
    data, cat = generate(FMT, rows=80, seed=5, tables=1, messages=True)
    ref = cdcfast.reference.Decoder(FMT, cat)
    a = ref.decode(data).drop_columns(["seq"])
    b = ref.decode(b"".join(data)).drop_columns(["seq"])
    assert_same(a, b)
    assert ref.decode(data).column("seq").to_pylist() != list(range(80))


# -- 3. known disagreements ---------------------------------------------------------------------

def one_value(type_text, text, nullable=True):
    """An update of a one-column table S.T whose before and after value are `text`."""
    head = ('10,"IBM","2006030","182318000005","S","T","REPL","0000:0000",'
            '"0000:0000:0271:000c","2006-06-30-18.00.52","P",0000,')
    cat = {"tables": [{"schema": "S", "table": "T", "columns": [
        {"name": "X", "type": type_text, "nullable": nullable}]}]}
    return (head + f"{text},{text}\n"), cat


VALUE_CASES = {
    # (type, field text, expected value or the error marker) — decisions written into
    # docs/ibm-delimited.md after the first differential runs
    # an empty quoted field is the empty binary value (hex text of no bytes)
    "binary-empty-quoted": ("VARCHAR(8) FOR BIT DATA", '""', b""),
    "blob-empty-quoted": ("BLOB", '""', b""),
    # the exponent is written E or e
    "double-lowercase-e": ("DOUBLE", "1.5e3", 1500.0),
    "decfloat-lowercase-e": ("DECFLOAT", "1e5", "1e5"),
    # NaN, sNaN, Infinity in any case, with an optional sign, kept as sent
    "decfloat-nan-lowercase": ("DECFLOAT", "nan", "nan"),
    "decfloat-minus-nan": ("DECFLOAT", "-NaN", "-NaN"),
    "decfloat-plus-infinity": ("DECFLOAT", "+Infinity", "+Infinity"),
    "number-nan": ("NUMBER", "NaN", "NaN"),
    "decfloat-garbage": ("DECFLOAT", "1.2.3", "error"),
    # number text is at most 319 characters
    "double-long-text": ("DOUBLE", "0" * 400 + "1.5", "error"),
    "double-319-chars": ("DOUBLE", "0" * 316 + "1.5", 1.5),
}


@pytest.mark.parametrize("case", list(VALUE_CASES))
@pytest.mark.parametrize("dec", BOTH)
def test_value_rules(dec, case):
    type_text, text, want = VALUE_CASES[case]
    data, cat = one_value(type_text, text)
    r = row_of(dec.decode(data.encode(), FMT, catalog=cat, table="S.T"))
    if want == "error":
        assert r["after"] == {"X": None}
        shown = show_value(text.strip('"').encode())
        assert r["_error"] == f"before.X: {shown} is not {type_text} " \
                              f"(message 0, byte {data.index(text)})"
    else:
        assert r["after"] == {"X": want} and r["_error"] is None


@pytest.mark.parametrize("dec", BOTH)
def test_non_ascii_decimal_char_is_refused(dec):
    # numbers are parsed as ASCII text in every code page, so the decimal character must be
    # ASCII there (latin-1 '§' is one byte, but not ASCII)
    with pytest.raises(ValueError, match="decimal_char"):
        dec.Decoder(FMT, encoding="latin-1", decimal_char="§", column_delimiter=";")


@pytest.mark.parametrize("dec", BOTH)
def test_ascii_encoding_rejects_high_bytes(dec):
    data = ('10,"IBM","2006030","182318000005","S","T","ISRT","0000:0000","0000:0000",'
            '"2006-06-30-18.00.52","P",0000,,"a\xe9"\n').encode("latin-1")
    cat = {"tables": [{"schema": "S", "table": "T", "columns": [
        {"name": "X", "type": "VARCHAR(4)"}]}]}
    r = row_of(dec.decode(data, FMT, catalog=cat, table="S.T", encoding="ascii"))
    assert r["after"] == {"X": None}
    at = data.rindex(b'"a')
    assert r["_error"] == f"after.X: 'a\xe9' is not VARCHAR(4) (message 0, byte {at})"


@pytest.mark.parametrize("dec", BOTH)
def test_null_row_present_only_for_nulled_columns(dec):
    data = SEED_NULL.replace(b"0000,,,,1,,", b'0000,,,,1,"\xff",')
    r = row_of(dec.decode(data, FMT, catalog=T1, table="ASN.T1"))
    assert r["after"] == {"ID": 1, "A": None, "B": None}
    assert r["_error"].startswith("after.A: ")
    assert r["present"] == {"ID": True, "A": True, "B": False}


@pytest.mark.parametrize("dec", BOTH)
@pytest.mark.parametrize("when, utc_us", [("0001-01-01-00.00.00", -62135579038000000),
                                          ("9999-12-31-23.59.59", 253402318799000000)])
def test_source_tz_at_the_ends_of_time(dec, when, utc_us):
    line = ('10,"IBM","2006030","182318000005","S","T","ISRT","0000:0000","0000:0000",'
            f'"{when}","P",0000,,1\n')
    t = dec.decode(line.encode(), FMT, source_tz="America/New_York")
    assert t.column("_error").to_pylist() == [None]
    # New York before 1883 is LMT, -4:56:02; EST -5:00 after
    assert t.column("commit_ts").cast(pa.int64()).to_pylist() == [utc_us]


OTHER_TABLE_FIRST = (
    b'10,"IBM","2006030","182318000005","S","OTHER","ISRT","0000:0000","0000:0000",'
    b'"not a time","P",0000,,1\n'
    b'10,"IBM","2006030","182318000005","S","T","ISRT","0000:0000","0000:0000",'
    b'"2006-06-30-18.00.52","P",0000,,1\n')


@pytest.mark.parametrize("dec", BOTH)
def test_headers_of_one_table_failfast_ignores_other_tables(dec):
    d = dec.Decoder(FMT, None, "FAILFAST")
    t = d.headers(OTHER_TABLE_FIRST, table="S.T")
    assert t.column("table").to_pylist() == ["T"]


@pytest.mark.parametrize("dec", BOTH)
def test_headers_of_one_table_stats(dec):
    d = dec.Decoder(FMT, None, "DROPMALFORMED")
    assert d.headers(OTHER_TABLE_FIRST, table="S.T").num_rows == 1
    assert (d.last_stats["events"], d.last_stats["errors"], d.last_stats["dropped"]) == (1, 0, 0)


def _two_column_record(owner, name):
    return (f'10,"IBM","2006030","182318000005","{owner}","{name}","ISRT","0000:0000",'
            f'"0000:0000","2006-06-30-18.00.52","P",0000,,,"p","q"\n').encode()


@pytest.mark.parametrize("dec", BOTH)
def test_no_catalog_table_case_with_corrupt_record_first(dec):
    data = b"garbage\n" + _two_column_record("S", "T")
    batches = list(dec.read_batches(data, FMT, table="s.t", batch_size=1))
    t = pa.Table.from_batches(batches)
    assert t.schema.field("after").type == pa.struct([("C1", pa.string()), ("C2", pa.string())])
    assert row_of(t, 1)["after"] == {"C1": "p", "C2": "q"}


@pytest.mark.parametrize("dec", BOTH)
def test_no_catalog_spellings_of_one_table_share_n(dec):
    one = (b'10,"IBM","2006030","182318000005","S","T","ISRT","0000:0000","0000:0000",'
           b'"2006-06-30-18.00.52","P",0000,,x\n')
    two = _two_column_record("s", "t")
    t = dec.decode(one + two, FMT, table="S.T")
    assert row_of(t, 0)["after"] == {"C1": "x"}
    r = row_of(t, 1)
    assert r["after"] is None and r["_corrupt_record"] == two[:-1]
    assert r["_error"] == f"record: record has 16 fields, table S.T needs 14 " \
                          f"(message 0, byte {len(one)})"
