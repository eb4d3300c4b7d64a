"""`lldf` on hand-made records: every test runs against the native decoder and the pure-Python
reference decoder (cdcfast.reference.lldf) alike.

Every record here is built byte by byte with `struct` (a 288-byte header at the seed's
offsets, cp037 text through codepages.encode_text), so the expectations follow docs/lldf.md
and the seed's offset table, not another decoder.
"""
import datetime as dt
import decimal
import math
import struct

import pyarrow as pa
import pytest

import cdcfast
import cdcfast.reference
from cdcfast import codepages
from cdcfast.encode import lldf as lldf_writer
from cdcfast.errors import DecodeError
from cdcfast.reference import lldf as reference_lldf

API = cdcfast                    # set per test by the fixture below


@pytest.fixture(autouse=True, params=["native", "reference"])
def api(request):
    """Each test twice: through the native kernel and through the reference decoder."""
    global API
    API = cdcfast if request.param == "native" else cdcfast.reference
    yield request.param
    API = cdcfast


def record_starts(data, framing, step):
    if API is cdcfast:
        from cdcfast import _lldf_frame
        return _lldf_frame.record_starts(data, framing, step)
    return reference_lldf.record_starts(data, framing, step)

FMT = "lldf"
UTC = dt.timezone.utc
D = decimal.Decimal
ENC = "cp037"

CATALOG = {"tables": [
    {"schema": "TEST", "table": "EMP", "columns": [
        {"name": "ID", "type": "INTEGER", "nullable": False},
        {"name": "NAME", "type": "VARCHAR(10)"},
        {"name": "SAL", "type": "DECIMAL(5,2)"},
    ]},
    {"schema": "TEST", "table": "ALLTYPES", "columns": [
        {"name": "S", "type": "SMALLINT", "nullable": False},
        {"name": "B", "type": "BIGINT", "nullable": False},
        {"name": "P", "type": "DECIMAL(4,1)", "nullable": False},
        {"name": "R", "type": "REAL", "nullable": False},
        {"name": "F", "type": "DOUBLE", "nullable": False},
        {"name": "C", "type": "CHAR(3)", "nullable": False},
        {"name": "G", "type": "GRAPHIC(2)", "nullable": False},
        {"name": "VG", "type": "VARGRAPHIC(5)", "nullable": False},
        {"name": "BIN", "type": "CHAR(2) FOR BIT DATA", "nullable": False},
        {"name": "VB", "type": "VARBINARY(4)", "nullable": False},
        {"name": "CL", "type": "CLOB", "nullable": False},
        {"name": "X", "type": "XML", "nullable": False},
        {"name": "DT", "type": "DATE", "nullable": False},
        {"name": "TM", "type": "TIME", "nullable": False},
        {"name": "TS", "type": "TIMESTAMP", "nullable": False},
        {"name": "TZ", "type": "TIMESTAMP(0) WITH TIME ZONE", "nullable": False},
        {"name": "BO", "type": "BOOLEAN", "nullable": False},
    ]},
    {"schema": "LONGOWNER", "table": "A_VERY_LONG_TABLE_NAME_INDEED",
     "aliases": ["LONGOWNE.A_VERY_LONG_TABLE_"], "columns": [{"name": "ID", "type": "SMALLINT"}]},
]}


# -- building records -------------------------------------------------------------------------

def text(s, width=None):
    b = codepages.encode_text(s, ENC)
    if width is not None:
        b = b.ljust(width, codepages.encode_text(" ", ENC))
    return b


def bcd17(stamp="20240102030405123456789012345", pad="00000"):
    """BIN(17) of YYYYMMDDHHMMSS + 15 fraction digits + 5 pad digits."""
    digits = stamp + pad
    assert len(digits) == 34
    return bytes.fromhex(digits)


def header(change="I ", owner="TEST", name="EMP", seglen=0, length=288, totalsegs=0,
           segnum=0, ownerlen=None, namelen=None, ts=None, commit_ts=None,
           loglrsn=b"\x00" * 9 + b"\x01", commitlrsn=b"\x00" * 9 + b"\x02",
           uorid=bytes(range(1, 11)), **fields):
    """A header of `length` bytes (288 or more) at the seed's offsets."""
    h = bytearray(length)
    sp = text(" ")

    def put(off, b):
        h[off:off + len(b)] = b

    struct.pack_into(">H", h, 0, length)
    put(2, text("DB2A"))
    struct.pack_into(">HHH", h, 6, 261, 2, 3)
    struct.pack_into(">HH", h, 12, len(owner) if ownerlen is None else ownerlen,
                     len(name) if namelen is None else namelen)
    put(16, text("DBX", 8))
    put(24, text("TSX", 8))
    put(32, text(owner[:8], 8))
    put(40, text(name[:18], 18))
    struct.pack_into(">H", h, 58, 7)
    put(60, bcd17() if ts is None else ts)
    put(77, loglrsn)
    put(87, bytes(range(20, 30)))
    struct.pack_into(">H", h, 97, 1)
    put(99, b"\x00\x00\x01\x02\x03")
    put(104, text(change) if isinstance(change, str) else change)
    put(106, text("R"))
    put(107, text("C"))
    put(108, sp)
    struct.pack_into(">IH", h, 109, 1000, 12)
    h[115] = 5
    put(116, text("N"))
    put(117, bytes(10))
    put(127, bcd17("20240102030400000000000000000"))
    put(144, bcd17("20240102030500999999999999999") if commit_ts is None else commit_ts)
    put(161, text("C"))
    put(162, bytes(10))
    put(172, uorid)
    struct.pack_into(">HHH", h, 182, seglen, totalsegs, segnum)
    put(192, commitlrsn)
    put(202, bytes(10))
    put(212, text("TS"))
    put(214, text("CONN", 8))
    put(222, text("CORR", 12))
    put(234, text("AUTH", 8))
    put(242, text("PLAN", 8))
    put(250, text("NET", 8))
    put(258, text("LUW", 8))
    put(266, b"\x00\x01\x02\x03\x04\x05")
    struct.pack_into(">H", h, 272, 9)
    put(274, text("N"))
    put(275, text("Y"))
    put(276, sp)
    put(277, bytes(10))
    put(287, text("A"))
    for off, b in fields.items():
        put(int(off[1:]), b)
    return bytes(h)


def data(*images):
    """DATA: a u16 total length (counting itself), then each image behind its u16 length."""
    body = b"".join(struct.pack(">H", len(i)) + i for i in images)
    return struct.pack(">H", 2 + len(body)) + body


def record(change="I ", dat=b"", **kw):
    """A raw-framed record: header + DATA."""
    return header(change, seglen=len(dat), **kw) + dat


def rdw(rec):
    return struct.pack(">HH", len(rec) + 4, 0) + rec


def arec(change, *images):
    """A raw record of TEST.ALLTYPES."""
    return record(change, data(*images), name="ALLTYPES")


def packed(digits: str, sign="C"):
    return bytes.fromhex(digits + sign)


def emp_image(id_=1, name="ANN", sal="12345", name_null=False, sal_null=False):
    img = struct.pack(">i", id_)
    if name_null:
        img += b"\xff\x00\x00"
    else:
        n = text(name)
        img += b"\x00" + struct.pack(">H", len(n)) + n
    img += b"\xff" + bytes(3) if sal_null else b"\x00" + packed(sal)
    return img


def decode(src, table="TEST.EMP", **kw):
    return API.decode(src, format=FMT, catalog=CATALOG, table=table, **kw)


def headers(src, **kw):
    return API.headers(src, format=FMT, catalog=CATALOG, **kw)


def utc(*a):
    return dt.datetime(*a, tzinfo=UTC)


# -- the basics ---------------------------------------------------------------------------------

def test_empty_input():
    t = API.headers(b"", format=FMT)
    assert t.num_rows == 0
    assert decode(b"").num_rows == 0


def test_insert_update_delete():
    src = (record("I ", data(emp_image(1, "ANN", "12345")))
           + record("UB", data(emp_image(1, "ANN", "12345"), emp_image(1, "BOB", "12345")))
           + record("D ", data(emp_image(1, "BOB", sal_null=True))))
    t = decode(src)
    rows = t.to_pylist()
    assert [r["op"] for r in rows] == ["c", "u", "d"]
    assert [r["source_op"] for r in rows] == ["I ", "UB", "D "]
    assert [r["seq"] for r in rows] == [0, 1, 2]
    assert rows[0]["before"] is None
    assert rows[0]["after"] == {"ID": 1, "NAME": "ANN", "SAL": D("123.45")}
    assert rows[0]["changed"] == {"ID": True, "NAME": True, "SAL": True}
    assert rows[0]["present"] == {"ID": True, "NAME": True, "SAL": True}
    assert rows[1]["before"]["NAME"] == "ANN" and rows[1]["after"]["NAME"] == "BOB"
    assert rows[1]["changed"] == {"ID": False, "NAME": True, "SAL": False}
    assert rows[2]["after"] is None
    assert rows[2]["before"] == {"ID": 1, "NAME": "BOB", "SAL": None}
    assert rows[2]["changed"] == {"ID": False, "NAME": False, "SAL": False}
    for r in rows:
        assert r["_error"] is None and r["_corrupt_record"] is None
        assert r["schema"] == "TEST" and r["table"] == "EMP"
        assert r["txid"] == "0102030405060708090A"
        assert r["commit_pos"] == b"\x00" * 9 + b"\x02"
        assert r["change_pos"] == b"\x00" * 9 + b"\x01"
        assert r["change_ts"] == utc(2024, 1, 2, 3, 4, 5, 123456)
        assert r["commit_ts"] == utc(2024, 1, 2, 3, 5, 0, 999999)
    assert t.schema == API.Decoder(FMT, CATALOG).schema("TEST.EMP")


def test_source_struct():
    src = record("I ", data(emp_image()))
    s = headers(src).to_pylist()[0]["source"]
    assert s == {
        "systemid": "DB2A", "dbid": 261, "psid": 2, "obid": 3, "dbname": "DBX",
        "tsname": "TSX", "partnum": 7, "logrba": bytes(range(20, 30)), "memberid": 1,
        "rid_page": 0x00000102, "rid_id": 3, "sqltype": "R", "logrecdisp": "C",
        "sqlsrctype": None, "logbytes": 1000, "logdelta": 12, "anomaly_rowid": 5,
        "anomaly_type": "N", "anomaly_rba": bytes(10),
        "uor_ts": utc(2024, 1, 2, 3, 4, 0), "uordisp": "C", "uoridlrsn": bytes(10),
        "uorid": bytes(range(1, 11)), "totalsegs": 0, "uorcommitpoint": bytes(10),
        "connection_type": "TS", "connect_id": "CONN", "correlation_id": "CORR",
        "authid": "AUTH", "plan": "PLAN", "luw_network_id": "NET", "luw_name": "LUW",
        "luw_instance": b"\x00\x01\x02\x03\x04\x05", "luw_seqno": 9,
        "incomplete_trans": False, "incomplete_dep": True, "uor_has_comp": None,
        "sqlrirba": bytes(10), "pagenum_fmt": "A", "owner_truncated": False,
        "name_truncated": False}


def test_source_tz_and_null_timestamp():
    src = record("I ", data(emp_image()), ts=bytes(17))
    r = decode(src, source_tz="America/New_York").to_pylist()[0]
    assert r["change_ts"] is None
    assert r["commit_ts"] == utc(2024, 1, 2, 8, 5, 0, 999999)
    assert r["_error"] is None


def test_longer_header_and_truncated_names():
    src = record("I ", struct.pack(">H", 2 + 2 + 3) + struct.pack(">H", 3) + b"\x00\x00\x07",
                 owner="LONGOWNE", name="A_VERY_LONG_TABLE_", ownerlen=9, namelen=29,
                 length=300)
    t = API.decode_tables(src, format=FMT, catalog=CATALOG)
    assert list(t) == ["LONGOWNER.A_VERY_LONG_TABLE_NAME_INDEED"]
    r = t["LONGOWNER.A_VERY_LONG_TABLE_NAME_INDEED"].to_pylist()[0]
    assert r["schema"] == "LONGOWNER" and r["table"] == "A_VERY_LONG_TABLE_NAME_INDEED"
    assert r["after"] == {"ID": 7}
    assert r["source"]["owner_truncated"] and r["source"]["name_truncated"]


def test_short_name_lengths_cut_names():
    src = record("I ", data(emp_image()), owner="TESTXX", name="EMPXXX", ownerlen=4, namelen=3)
    assert decode(src).num_rows == 1


def test_empty_owner_gives_null_schema():
    src = record("I ", data(b""), owner="", name="LONELY")
    r = headers(src).to_pylist()[0]
    assert r["schema"] is None and r["table"] == "LONELY"


# -- values ---------------------------------------------------------------------------------------

def alltypes_image(r=b"\x41\x10\x00\x00", f=b"\x41\x10\x00\x00\x00\x00\x00\x00"):
    vg = "é€".encode("utf-16-be")
    cl = text("clob")
    x = "<a>ü</a>".encode("utf-8")
    return (struct.pack(">hq", -2, 2 ** 40) + packed("00123", "D") + r + f + text("AB ")
            + "Zü".encode("utf-16-be") + struct.pack(">H", len(vg)) + vg + b"\x01\x02"
            + struct.pack(">H", 3) + b"\xaa\xbb\xcc" + struct.pack(">I", len(cl)) + cl
            + struct.pack(">I", len(x)) + x + text("2024-02-29") + text("23.59.58")
            + text("2024-03-01-12.30.45.123456") + text("2024-03-01-12.30.45+01:30")
            + b"\x01")


def test_all_types():
    t = decode(arec("I ", alltypes_image()), table="TEST.ALLTYPES")
    r = t.to_pylist()[0]
    assert r["_error"] is None
    assert r["after"] == {
        "S": -2, "B": 2 ** 40, "P": D("-12.3"), "R": 1.0, "F": 1.0, "C": "AB ", "G": "Zü",
        "VG": "é€", "BIN": b"\x01\x02", "VB": b"\xaa\xbb\xcc", "CL": "clob", "X": "<a>ü</a>",
        "DT": dt.date(2024, 2, 29), "TM": dt.time(23, 59, 58),
        "TS": dt.datetime(2024, 3, 1, 12, 30, 45, 123456),
        "TZ": utc(2024, 3, 1, 11, 0, 45), "BO": True}


@pytest.mark.parametrize("raw,value", [
    (b"\x41\x10\x00\x00", 1.0),
    (b"\xc1\x20\x00\x00", -2.0),
    (b"\x40\x80\x00\x00", 0.5),
    (b"\x80\x00\x00\x00", -0.0),
    (b"\x00\x00\x00\x00", 0.0),
    (b"\x60\xff\xff\xff", float(struct.unpack(">f", b"\x7f\x7f\xff\xff")[0])),   # FLT_MAX
])
def test_hfp_real(raw, value):
    t = decode(arec("I ", alltypes_image(r=raw)), table="TEST.ALLTYPES")
    got = t.column("after").combine_chunks().field("R")[0].as_py()
    assert got == value and math.copysign(1, got) == math.copysign(1, value)


def test_hfp_real_overflow_is_an_error():
    src = arec("I ", alltypes_image(r=b"\x61\x10\x00\x00"))
    r = decode(src, table="TEST.ALLTYPES").to_pylist()[0]
    assert r["after"]["R"] is None and r["after"]["S"] == -2
    pos = 288 + 2 + 2 + 2 + 8 + 3
    assert r["_error"] == f"after.R: X'61100000' is not REAL (message 0, byte {pos})"


def test_hfp_double_rounds_once():
    # a 56-bit fraction rounds once to 53 bits (ties to even), then scales exactly
    raw = b"\x41" + (0xFFFFFFFFFFFFFF).to_bytes(7, "big")
    t = decode(arec("I ", alltypes_image(f=raw)), table="TEST.ALLTYPES")
    got = t.column("after").combine_chunks().field("F")[0].as_py()
    assert got == 16.0              # (2^56 - 1) / 2^56 × 16 rounds to 16 (ties to even)
    raw = b"\x42" + (0x00000000000001).to_bytes(7, "big")
    t = decode(arec("I ", alltypes_image(f=raw)), table="TEST.ALLTYPES")
    assert t.column("after").combine_chunks().field("F")[0].as_py() == math.ldexp(1, 8 - 56)


def test_ieee_float_bits_kept():
    snan = b"\x7f\x80\x00\x01"
    src = arec("I ", alltypes_image(r=snan, f=struct.pack(">d", -0.0)))
    t = decode(src, table="TEST.ALLTYPES", float_format="ieee")
    after = t.column("after").combine_chunks()
    assert after.field("R").buffers()[1].to_pybytes()[:4] == snan[::-1]
    assert math.copysign(1, after.field("F")[0].as_py()) == -1


def test_float_changed_by_bits():
    img0 = alltypes_image(f=struct.pack(">d", 0.0))
    img1 = alltypes_image(f=struct.pack(">d", -0.0))
    t = decode(arec("UB", img0, img1), table="TEST.ALLTYPES", float_format="ieee")
    ch = t.to_pylist()[0]["changed"]
    assert ch["F"] is True and ch["R"] is False and not any(
        v for k, v in ch.items() if k != "F")


@pytest.mark.parametrize("digits,sign,ok,value", [
    ("12345", "C", True, D("123.45")), ("12345", "F", True, D("123.45")),
    ("00000", "D", True, D("0.00")), ("12345", "B", True, D("-123.45")),
    ("1234A", "C", False, None), ("12345", "9", False, None),
])
def test_packed_decimal(digits, sign, ok, value):
    img = struct.pack(">i", 1) + b"\xff\x00\x00" + b"\x00" + packed(digits, sign)
    r = decode(record("I ", data(img))).to_pylist()[0]
    if ok:
        assert r["after"]["SAL"] == value and r["_error"] is None
        assert str(r["after"]["SAL"]) == str(value)
    else:
        assert r["after"]["SAL"] is None
        assert r["_error"] == (f"after.SAL: X'{digits}{sign}' is not DECIMAL(5,2) "
                               f"(message 0, byte {288 + 2 + 2 + 4 + 3})")


def test_packed_decimal_widths():
    """Up to 16 bytes (Db2's DECIMAL(31)) the column kernel reads them where 16 bytes are
    readable (here: not for the last column, whose value ends the record); a wider one,
    which a catalog may declare, goes byte by byte. Same values either way."""
    cat = {"tables": [{"schema": "TEST", "table": "WIDE", "columns": [
        {"name": "A", "type": "DECIMAL(31,0)", "nullable": False},
        {"name": "B", "type": "DECIMAL(33,2)", "nullable": False},
        {"name": "C", "type": "DECIMAL(1,0)", "nullable": False},
        {"name": "D", "type": "DECIMAL(31,31)", "nullable": False}]}]}
    img = (packed("9" * 31, "D") + packed("01" + "0" * 30 + "7", "C") + packed("5", "F")
           + packed("1" * 31, "B"))
    r = API.decode(record("I ", data(img), name="WIDE"), format=FMT, catalog=cat,
                   table="TEST.WIDE").to_pylist()[0]
    assert r["_error"] is None
    assert r["after"] == {"A": D("-" + "9" * 31), "B": D("1" + "0" * 29 + ".07"), "C": D(5),
                          "D": D("-0." + "1" * 31)}       # (not -D(...): that rounds to 28)


def test_even_precision_pad_nibble():
    ok = decode(arec("I ", alltypes_image()), table="TEST.ALLTYPES").to_pylist()[0]
    assert ok["after"]["P"] == D("-12.3")
    img = alltypes_image().replace(packed("00123", "D"), packed("10123", "D"), 1)
    bad = decode(arec("I ", img), table="TEST.ALLTYPES").to_pylist()[0]
    assert bad["after"]["P"] is None
    assert bad["_error"].startswith("after.P: X'10123D' is not DECIMAL(4,1)")


def test_null_byte_error_and_value_error_lowest_wins():
    img = struct.pack(">i", 1) + b"\x01\x00\x02" + text("AB") + b"\x00" + packed("1234A")
    r = decode(record("I ", data(img))).to_pylist()[0]
    assert r["after"] == {"ID": 1, "NAME": None, "SAL": None}
    assert r["_error"] == ("after.NAME: null byte X'01' is not X'00' or X'FF' "
                           f"(message 0, byte {288 + 4 + 4})")
    assert r["changed"] == {"ID": True, "NAME": True, "SAL": True}


def test_null_byte_error_on_a_fixed_width_column():
    # SAL's null byte (a fixed-width column: read in the column's own pass) is X'7F'
    img = struct.pack(">i", 1) + b"\x00\x00\x02" + text("AB") + b"\x7f" + packed("1234C")
    r = decode(record("I ", data(img))).to_pylist()[0]
    assert r["after"] == {"ID": 1, "NAME": "AB", "SAL": None}
    assert r["_error"] == ("after.SAL: null byte X'7F' is not X'00' or X'FF' "
                           f"(message 0, byte {288 + 4 + 4 + 1 + 2 + 2})")
    # X'FF' is null without an error; in an update both images' null bytes are read
    ok = struct.pack(">i", 1) + b"\x00\x00\x02" + text("AB") + b"\xff" + packed("1234C")
    r = decode(record("UB", data(ok, img))).to_pylist()[0]
    assert r["before"] == {"ID": 1, "NAME": "AB", "SAL": None}
    assert r["after"]["SAL"] is None
    assert r["_error"].startswith("after.SAL: null byte X'7F'")


def test_graphic_errors_and_bool():
    img = alltypes_image()
    bad_g = img.replace("Zü".encode("utf-16-be"), b"\xd8\x00\x00A", 1)
    r = decode(arec("I ", bad_g), table="TEST.ALLTYPES").to_pylist()[0]
    assert r["after"]["G"] is None and r["_error"].startswith(
        "after.G: X'D8000041' is not GRAPHIC(2)")
    bad_b = img[:-1] + b"\x02"
    r = decode(arec("I ", bad_b), table="TEST.ALLTYPES").to_pylist()[0]
    assert r["after"]["BO"] is None and r["_error"].startswith("after.BO: X'02' is not BOOLEAN")


def test_time_24_is_an_error_timestamp_24_is_next_midnight():
    img = alltypes_image().replace(text("23.59.58"), text("24.00.00"))
    img = img.replace(text("2024-03-01-12.30.45.123456"), text("2024-02-29-24.00.00.000000"))
    r = decode(arec("I ", img), table="TEST.ALLTYPES").to_pylist()[0]
    assert r["after"]["TM"] is None
    assert r["after"]["TS"] == dt.datetime(2024, 3, 1)
    assert r["_error"].startswith("after.TM: X'F2F44BF0F04BF0F0' is not TIME")


# -- image structure ---------------------------------------------------------------------------

def test_image_short_and_long():
    short = struct.pack(">i", 1) + b"\x00\x00\x05AB"
    r = decode(record("I ", data(short))).to_pylist()[0]
    assert r["after"] is None and r["changed"] is None and r["present"] is None
    assert r["_error"] == ("after: row image of 9 bytes does not match table TEST.EMP "
                           "(its columns need more) (message 0, byte 290)")
    long_ = emp_image() + b"\x00"
    r = decode(record("I ", data(long_))).to_pylist()[0]
    assert r["after"] is None
    assert r["_error"] == ("after: row image of 15 bytes does not match table TEST.EMP "
                           "(its columns use 14) (message 0, byte 290)")


def test_update_with_failed_after_keeps_before():
    r = decode(record("UB", data(emp_image(), emp_image() + b"\x00"))).to_pylist()[0]
    assert r["before"]["NAME"] == "ANN" and r["after"] is None
    assert r["changed"] is None and r["present"] is None
    assert r["_error"].startswith("after: row image of 15 bytes")


def test_image_cut_and_data_rest():
    img = emp_image()
    dat = struct.pack(">HH", 2 + 2 + len(img), len(img) + 1) + img
    r = decode(record("I ", dat)).to_pylist()[0]
    assert r["after"] is None and r["changed"] is None
    assert r["_error"] == ("after: row image of 17 bytes overruns the DATA (16 bytes left) "
                           "(message 0, byte 290)")
    dat = data(img) + b"\x00\x00"
    dat = struct.pack(">H", len(dat)) + dat[2:]
    r = decode(record("I ", dat)).to_pylist()[0]
    assert r["after"]["NAME"] == "ANN" and r["changed"]["ID"] is True
    assert r["_error"] == f"DATA: 2 bytes follow the row images (message 0, byte {290 + 16})"
    # an update whose after image's length is cut
    dat = data(img) + b"\x00"
    dat = struct.pack(">H", len(dat)) + dat[2:]
    r = decode(record("UB", dat)).to_pylist()[0]
    assert r["before"] is None and r["after"] is None
    assert r["_error"] == ("after: row image of 2 bytes overruns the DATA (1 bytes left) "
                           f"(message 0, byte {290 + 16})")


def test_data_length_and_no_data():
    r = decode(record("I ", b"")).to_pylist()[0]
    assert r["_error"] == "DATA: no row image (message 0, byte 288)"
    dat = data(emp_image())
    bad = struct.pack(">H", len(dat) + 1) + dat[2:]
    r = decode(record("I ", bad)).to_pylist()[0]
    assert r["after"] is None
    assert r["_error"] == ("DATA: total length 19 disagrees with the 18 data bytes "
                           "(message 0, byte 288)")
    h = headers(record("DM", b"\x05")).to_pylist()[0]
    assert h["op"] == "t"
    assert h["_error"] == ("DATA: total length 0 disagrees with the 1 data bytes "
                           "(message 0, byte 288)")
    assert headers(record("DM", b"")).to_pylist()[0]["_error"] is None


def test_truncate_rows_have_null_images():
    r = decode(record("DT", data(b"skipped"))).to_pylist()[0]
    assert r["op"] == "t" and r["before"] is None and r["after"] is None
    assert r["changed"] is None and r["present"] is None and r["_error"] is None


# -- header errors -----------------------------------------------------------------------------

def test_unknown_change_type():
    r = decode(record("XX", data(emp_image()))).to_pylist()[0]
    assert r["op"] is None and r["source_op"] == "XX" and r["after"] is None
    assert r["_error"] == "CHANGE TYPE: X'E7E7' is not a known change type (message 0, byte 104)"


def test_exchange_any_second_byte_is_a_message():
    h = headers(record(b"\xc5\x01", b"")).to_pylist()[0]
    assert h["op"] == "message" and h["source_op"] == "E\x01" and h["_error"] is None


def test_header_field_errors():
    src = record("I ", data(emp_image()), ts=bcd17("20240230030405123456789012345"),
                 f274=text("X"), f2=b"\x00\x00\x00\x00")
    r = decode(src).to_pylist()[0]
    assert r["change_ts"] is None and r["source"]["incomplete_trans"] is None
    assert r["after"]["NAME"] == "ANN"
    assert r["_error"] == ("TIMESTAMP: X'2024023003040512345678901234500000' is not a BIN(17) "
                           "timestamp (message 0, byte 60)")
    src = record("I ", data(emp_image()), f274=text("X"))
    assert decode(src).to_pylist()[0]["_error"] == (
        "INCOMPLETETRANS: X'E7' is not Y, N or blank (message 0, byte 274)")
    src = record("I ", data(emp_image()), f144=bytes.fromhex("2024010203050099999999999999900A"
                                                             "00"))
    assert decode(src).to_pylist()[0]["_error"].startswith(
        "UORCOMMITTIMESTAMP: X'")


def test_ascii_undefined_header_char():
    def t(s, w=None):
        b = s.encode("ascii")
        return b.ljust(w, b" ") if w else b
    h = bytearray(header())
    h[2:6] = b"\x80AB "
    # the names and the change type in ascii
    h[32:40] = t("TEST", 8)
    h[40:58] = t("EMP", 18)
    h[104:106] = b"I "
    src = bytes(h)
    r = API.headers(src, format=FMT, encoding="ascii").to_pylist()[0]
    assert r["source"]["systemid"] is None
    assert r["_error"] == "SYSTEMID: X'80414220' is not ascii text (message 0, byte 2)"


@pytest.mark.parametrize("enc", ["cp1140", "ascii"])
def test_header_text_runs(enc):
    """Each CHAR header field over a stream where its value repeats, changes in its first or
    its last byte only, goes blank, turns bad (a byte the code page lacks) and back, and grows
    past 16 bytes of UTF-8 (cp1140's euro sign is 3), and values come back after others (a
    field remembers its last few): each row gets its own bytes' text (repeats are found by
    comparing words, so the field's every byte must count and no neighbour's may)."""
    from cdcfast.formats.lldf import HEADER, H_CHAR
    fields = [(name, off, w) for name, _, off, w, kind in HEADER if kind == H_CHAR]

    def value(w, k):
        base = "ABCDEFGHIJKLMNOP"[:w]
        bad = b"\x80" if enc == "ascii" else base  # (cp1140 has every byte)
        euro = ("\u20ac" * w) if enc == "cp1140" else base.lower()
        # (values that come back after others: copied from the ones the field remembers)
        return [base, base, base[:-1] + "Z", base[:-1] + "Z", "Z" + base[1:-1] + "Z", "",
                "", base, bad, bad, base, euro, euro, base, base, euro, "",
                "Z" + base[1:-1] + "Z", bad][k]
    rows = 19
    recs, want = [], {name: [] for name, _, _ in fields}
    for k in range(rows):
        kw = {}
        for j, (name, off, w) in enumerate(fields):
            v = value(w, (k + j) % rows)            # the fields change at different rows
            raw = v if isinstance(v, bytes) else v.encode(enc)
            raw = kw[f"f{off}"] = raw.ljust(w, " ".encode(enc))[:w]
            txt = None if isinstance(v, bytes) else raw.decode(enc).rstrip(" ")
            want[name].append(txt or None)
        kw["f300"] = bytes([k]) * 8                 # bytes past the header change every row
        h = bytearray(record("I ", data(emp_image()), length=308, **kw))
        for o, t in ((32, "TEST".ljust(8)), (40, "EMP".ljust(18)), (104, "I ")):
            h[o:o + len(t)] = t.encode(enc)
        recs.append(bytes(h))
    t = API.headers(b"".join(recs), format=FMT, encoding=enc)
    src = t.column("source").to_pylist()
    for name, _, _ in fields:
        assert [r[name] for r in src] == want[name], name
    errs = t.column("_error").to_pylist()
    assert all((e is not None) == (enc == "ascii" and any(
        value(w, (k + j) % rows) == b"\x80" for j, (_, _, w) in enumerate(fields)))
        for k, e in enumerate(errs))
    # the same rows as messages, with messages that cannot be framed between them (rows
    # without a header: null, and the rows after them still take their own text)
    msgs, cut = [], []
    for k, r in enumerate(recs):
        msgs.append(r)
        if k % 5 in (1, 3):
            msgs.append(b"\x00\x10abc")
            cut.append(len(msgs) - 1)
    src = API.headers(msgs, format=FMT, encoding=enc).column("source").to_pylist()
    assert [i for i, r in enumerate(src) if r is None] == cut
    for name, _, _ in fields:
        assert [r[name] for r in src if r is not None] == want[name], name


# -- framing ---------------------------------------------------------------------------------

def test_raw_rest_is_one_corrupt_record():
    good = record("I ", data(emp_image()))
    for tail, err in [
        (b"\x01", "LENGTH: 1 bytes left, fewer than a 288-byte header"),
        (b"\x00\x10abc", "LENGTH: header length 16 is below 288"),
        (b"\x01\x20abc", "LENGTH: header of 288 bytes overruns the record (5 bytes left)"),
    ]:
        t = decode(good + tail)
        rows = t.to_pylist()
        assert len(rows) == 2
        bad = rows[1]
        assert bad["_corrupt_record"] == tail and bad["seq"] == 1
        assert bad["_error"] == f"{err} (message 0, byte {len(good)})"
        assert bad["source"] is None and bad["op"] is None and bad["after"] is None
    cut = record("I ", data(emp_image()))[:-1]
    rows = decode(cut).to_pylist()
    assert rows[0]["_error"] == ("SEGLEN: record of 306 bytes overruns the input (305 bytes "
                                 "left) (message 0, byte 182)")


def test_rdw_framing():
    good = rdw(record("I ", data(emp_image())))
    bad_inside = rdw(header("I ", seglen=5) + b"abc")
    src = good + bad_inside + good + b"\x00\x08\x00\x01"
    rows = decode(src, framing="rdw").to_pylist()
    assert len(rows) == 4
    assert rows[0]["_error"] is None and rows[2]["_error"] is None
    assert rows[1]["_corrupt_record"] == bad_inside
    assert rows[1]["_error"] == ("SEGLEN: header length 288 + SEGLEN 5 disagrees with the record "
                                 f"(291 bytes) (message 0, byte {len(good) + 4 + 182})")
    assert rows[3]["_error"] == ("RDW: RDW bytes 2-3 are X'0001', not zero "
                                 f"(message 0, byte {2 * len(good) + len(bad_inside)})")
    rows = decode(good + b"\x00\x02\x00\x00", framing="rdw").to_pylist()
    assert rows[1]["_error"].startswith("RDW: RDW length 2 is below 4")
    rows = decode(good + b"\x00\x09\x00\x00", framing="rdw").to_pylist()
    assert rows[1]["_error"].startswith("RDW: RDW length 9 overruns the input (4 bytes left)")
    rows = decode(good + b"\x00", framing="rdw").to_pylist()
    assert rows[1]["_error"].startswith("RDW: RDW needs 4 bytes, 1 left")
    rows = decode(good + b"\x00\x05\x00\x00\x01", framing="rdw").to_pylist()
    assert rows[1]["_error"] == (f"LENGTH: header length 0 is below 288 (message 0, byte "
                                 f"{len(good) + 4})")


def vb_block(*recs, extended=False):
    body = b"".join(rdw(r) for r in recs)
    if extended:
        return struct.pack(">I", 0x80000000 | (len(body) + 4)) + body
    return struct.pack(">HH", len(body) + 4, 0) + body


def test_vb_framing():
    r1 = record("I ", data(emp_image(1)))
    r2 = record("I ", data(emp_image(2)))
    src = vb_block(r1, r2) + vb_block() + vb_block(r1, extended=True)
    t = decode(src, framing="vb")
    assert t.column("after").to_pylist() == [
        {"ID": 1, "NAME": "ANN", "SAL": D("123.45")}, {"ID": 2, "NAME": "ANN", "SAL": D("123.45")},
        {"ID": 1, "NAME": "ANN", "SAL": D("123.45")}]
    # an RDW overrunning its block: the rest of the block, then the next block
    blk = vb_block(r1)
    broken = struct.pack(">HH", 4 + 4 + 3, 0) + struct.pack(">HH", 100, 0) + b"abc"
    rows = decode(broken + blk, framing="vb").to_pylist()
    assert rows[0]["_error"] == "RDW: RDW length 100 overruns its block (7 bytes left) " \
                                "(message 0, byte 4)"
    assert rows[0]["_corrupt_record"] == broken[4:]
    assert rows[1]["_error"] is None


# -- segments ---------------------------------------------------------------------------------

def segmented(change, dat, parts, lrsn=b"\x00" * 9 + b"\x01"):
    """A logical record cut into `parts` raw segments."""
    size = -(-len(dat) // parts)
    chunks = [dat[i * size:(i + 1) * size] for i in range(parts)]
    return [header(change, seglen=len(c), totalsegs=parts, segnum=i + 1, loglrsn=lrsn) + c
            for i, c in enumerate(chunks)]


def test_segments_reassembled():
    segs = segmented("UB", data(emp_image(1, "ANN"), emp_image(1, "BOB")), 3)
    rows = decode(b"".join(segs)).to_pylist()
    assert len(rows) == 1
    assert rows[0]["_error"] is None
    assert rows[0]["after"]["NAME"] == "BOB" and rows[0]["source"]["totalsegs"] == 3


def test_value_error_position_maps_into_its_segment():
    img = struct.pack(">i", 1) + b"\x00\x00\x02" + text("AB") + b"\x00" + packed("1234A")
    segs = segmented("I ", data(img), 2)
    rows = decode(b"".join(segs)).to_pylist()
    # the DECIMAL's null byte is DATA byte 2 + 2 + 9 = 13; segment 1 holds 9 of the 17 bytes
    assert rows[0]["_error"].endswith(f"(message 0, byte {len(segs[0]) + 288 + 13 - 9})")


def test_segment_missing_and_alone():
    segs = segmented("I ", data(emp_image()), 3)
    src = segs[0] + segs[1] + record("I ", data(emp_image(7))) + segs[2]
    rows = decode(src).to_pylist()
    assert len(rows) == 3
    assert rows[0]["_error"] == "SEGNUM: segment 3 of 3 is missing (message 0, byte 186)"
    assert rows[0]["_corrupt_record"] == segs[0] + segs[1]
    assert rows[0]["after"] is None and rows[0]["op"] == "c"
    assert rows[0]["source"]["totalsegs"] == 3
    assert rows[1]["after"]["ID"] == 7 and rows[1]["seq"] == 1
    start = len(segs[0]) + len(segs[1]) + len(record("I ", data(emp_image(7))))
    assert rows[2]["_error"] == ("SEGNUM: segment 3 of 3 arrives without segment 1 "
                                 f"(message 0, byte {start + 186})")
    assert rows[2]["_corrupt_record"] == segs[2]
    # a different LOGLRSN does not continue
    other = segmented("I ", data(emp_image()), 2, lrsn=b"\x09" * 10)
    rows = decode(segs[0] + other[1]).to_pylist()
    assert [r["_error"].split(" (")[0] for r in rows] == [
        "SEGNUM: segment 2 of 3 is missing", "SEGNUM: segment 2 of 2 arrives without segment 1"]
    # the message ends
    rows = decode(segs[0]).to_pylist()
    assert rows[0]["_error"].startswith("SEGNUM: segment 2 of 3 is missing")


# -- routing, statistics, modes ----------------------------------------------------------------

def test_routing_and_statistics():
    src = (record("I ", data(emp_image()))
           + record("CO", b"")
           + record("I ", data(b"zz"), owner="OTHER", name="T")
           + arec("I ", alltypes_image())
           + b"\x01")
    dec = API.Decoder(FMT, CATALOG)
    tables = dec.decode_tables(src)
    assert sorted(k for k in tables if k) == ["TEST.ALLTYPES", "TEST.EMP"]
    assert tables[None].num_rows == 1 and tables[None].schema.field("after").type == pa.struct([])
    assert tables[None].column("seq").to_pylist() == [4]
    assert dec.last_stats["records"] == 5 and dec.last_stats["control"] == 1
    assert dec.last_stats["unknown_tables"] == 1 and dec.last_stats["errors"] == 1
    h = dec.headers(src)
    assert h.column("op").to_pylist() == ["c", "ddl", "c", "c", None]
    assert h.column("table").to_pylist() == ["EMP", "EMP", "T", "ALLTYPES", None]
    assert dec.last_stats["control"] == 1 and dec.last_stats["unknown_tables"] == 1
    e = dec.decode(src, table="TEST.EMP")
    assert e.column("seq").to_pylist() == [0, 4]
    assert dec.last_stats["control"] == 1
    assert dec.headers(src, table="OTHER.T").num_rows == 2      # the corrupt record too
    with pytest.raises(ValueError, match="is not in the catalog: lldf row images"):
        dec.decode(src, table="OTHER.T")


def test_modes_and_messages():
    bad = record("I ", data(struct.pack(">i", 1) + b"\x00\x00\x00" + b"\x00" + packed("1234A")))
    good = record("I ", data(emp_image()))
    src = [good, None, bad, good]
    dec = API.Decoder(FMT, CATALOG, mode="DROPMALFORMED")
    t = dec.decode(src, table="TEST.EMP")
    assert t.column("seq").to_pylist() == [0, 2]
    assert dec.last_stats["tombstones"] == 1 and dec.last_stats["dropped"] == 1
    dec = API.Decoder(FMT, CATALOG, mode="FAILFAST")
    with pytest.raises(DecodeError) as ei:
        dec.decode(src, table="TEST.EMP")
    assert ei.value.message_index == 2 and ei.value.byte_offset == 288 + 2 + 2 + 4 + 3
    assert ei.value.field == "after.SAL"
    t = API.decode(src, format=FMT, catalog=CATALOG, table="TEST.EMP")
    assert t.column("_error").to_pylist()[1].endswith("(message 2, byte 299)")


def test_batches_and_order():
    recs = [record("I ", data(emp_image(i)), commitlrsn=bytes([0] * 9 + [9 - i]))
            for i in range(5)]
    batches = list(API.read_batches(b"".join(recs), format=FMT, catalog=CATALOG,
                                                  table="TEST.EMP", batch_size=2))
    assert [b.num_rows for b in batches] == [2, 2, 1]
    t = decode(b"".join(recs), order="commit")
    assert t.column("seq").to_pylist() == [4, 3, 2, 1, 0]


def test_message_column():
    from cdcfast.formats import get
    from cdcfast.formats.base import Want, new_stats
    from cdcfast.sources import parts
    fmt = get(FMT)(cdcfast.Catalog.from_dict(CATALOG))
    want = Want(fmt.catalog, "TEST.EMP", messages=True)
    out = list(fmt.batches(parts([record("I ", data(emp_image())), b"\x01"]), want, True,
                           100, "PERMISSIVE", new_stats(), native=False))
    (key, batch), = out
    assert key == "TEST.EMP"
    assert batch.column("_message").to_pylist() == [0, 1]
    assert batch.column("_error").to_pylist()[1].endswith("(message 0, byte 0)")


# -- splitting ---------------------------------------------------------------------------------

def test_record_starts_raw_and_rdw():
    r = record("I ", data(emp_image()))
    src = r * 6
    assert record_starts(src, "raw", len(r) * 2) == [0, 2 * len(r), 4 * len(r), 6 * len(r)]
    assert record_starts(src, "raw", len(r) * 2 - 5) == [0, 2 * len(r), 4 * len(r), 6 * len(r)]
    segs = segmented("I ", data(emp_image()), 3)
    src2 = r + b"".join(segs) + r
    starts = record_starts(src2, "raw", 10)
    assert starts == [0, len(r), len(r) + sum(map(len, segs)), len(src2)]
    # the walk stops at a framing error: the rest is one input
    assert record_starts(r + r + b"\x00\x01" + r, "raw", 10) == [0, len(r), 3 * len(r) + 2]
    assert record_starts(r, "raw", 10) == [0, len(r)]
    rr = rdw(r)
    assert record_starts(rr * 4, "rdw", len(rr)) == [0, len(rr), 2 * len(rr), 3 * len(rr),
                                                      4 * len(rr)]


def test_record_starts_vb():
    r = record("I ", data(emp_image()))
    b1 = vb_block(r, r)
    segs = segmented("I ", data(emp_image()), 2)
    src = b1 + vb_block(segs[0]) + vb_block(segs[1]) + vb_block() + b1
    starts = record_starts(src, "vb", 1)
    assert starts == [0, len(b1), len(src) - len(b1), len(src)]


# -- against the writer (cdcfast.encode.lldf, written apart from this decoder) ---------------

def _same(a, b):
    if isinstance(a, float) and isinstance(b, float):
        return a == b and math.copysign(1, a) == math.copysign(1, b) or (
            math.isnan(a) and math.isnan(b))
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(_same(a[k], b[k]) for k in a)
    return a == b


@pytest.mark.parametrize("opts", [
    {}, {"framing": "rdw"}, {"framing": "vb", "segment_bytes": 40, "block_bytes": 600},
    {"float_format": "ieee", "encoding": "cp1047", "long_names": True},
    {"source_tz": "Europe/Paris", "framing": "rdw", "segment_bytes": 64},
])
def test_writer_round_trip(opts):
    opts = dict(opts)
    long_names = opts.pop("long_names", False)
    kw = dict(all_types=True, control=True, tables=2, long_names=long_names, **opts)
    stream, catalog = lldf_writer.generate(200, **kw)
    events, _ = lldf_writer.events(200, **kw)
    options = {k: v for k, v in opts.items() if k not in ("segment_bytes", "block_bytes")}
    dec = API.Decoder(FMT, catalog, **options)
    h = dec.headers(stream)
    assert h.num_rows == len(events) and h.column("_error").null_count == h.num_rows
    tables = dec.decode_tables(stream)
    rows = sorted((r for t in tables.values() for r in t.to_pylist()), key=lambda r: r["seq"])
    wanted = [e for e in events if e["op"] not in ("ddl", "message")]
    assert len(rows) == len(wanted)
    assert dec.last_stats["control"] == len(events) - len(wanted)
    for r, e in zip(rows, wanted):
        for k in ("op", "source_op", "schema", "table", "txid", "commit_ts", "change_ts",
                  "commit_pos", "change_pos", "before", "after", "source"):
            assert _same(r[k], e[k]), (r["seq"], k, r[k], e[k])


@pytest.mark.parametrize("framing", ["raw", "rdw", "vb"])
def test_split_pieces_decode_as_the_whole(framing):
    stream, catalog = lldf_writer.generate(120, framing=framing, segment_bytes=50, block_bytes=700)
    whole = API.headers(stream, format=FMT, catalog=catalog, framing=framing)
    starts = record_starts(stream, framing, 1500)
    assert len(starts) > 3 and starts[0] == 0 and starts[-1] == len(stream)
    pieces = [API.headers(stream[a:b], format=FMT, catalog=catalog,
                                        framing=framing) for a, b in zip(starts, starts[1:])]
    joined = pa.concat_tables(pieces).drop_columns(["seq"])
    assert joined.equals(whole.drop_columns(["seq"]))


def test_every_header_field_has_its_own_value():
    """A distinct value in every field of the seed's offset table (no two BIN fields alike,
    no two CHAR fields alike), so that a field read at a wrong offset cannot pass."""
    ten = lambda k: bytes(range(k, k + 10))          # noqa: E731
    src = record("UB", data(emp_image(1), emp_image(2)),
                 owner="OWNR", name="TBLNAME",
                 ts=bcd17("20230405060708111111222222333"),
                 commit_ts=bcd17("20230405060709444444555555666"),
                 loglrsn=ten(0x10), commitlrsn=ten(0x20), uorid=ten(0x30),
                 _2=text("SYSA"), _6=struct.pack(">HHH", 11, 12, 13),
                 _16=text("DBNAMEA", 8), _24=text("TSNAMEB", 8), _58=struct.pack(">H", 14),
                 _87=ten(0x40), _97=struct.pack(">H", 15), _99=bytes([0, 1, 0, 16, 17]),
                 _106=text("U"), _107=text("A"), _108=text("T"),
                 _109=struct.pack(">IH", 0x01020304, 18), _115=bytes([19]), _116=text("X"),
                 _117=ten(0x50), _127=bcd17("20230405060700777777888888999"),
                 _161=text("A"), _162=ten(0x60), _202=ten(0x70), _212=text("DB"),
                 _214=text("CONNID", 8), _222=text("CORRELATION1", 12),
                 _234=text("AUTHIDX", 8), _242=text("PLANNAME", 8), _250=text("NETWORK", 8),
                 _258=text("LUWNAME", 8), _266=bytes(range(0x80, 0x86)),
                 _272=struct.pack(">H", 20), _274=text("Y"), _275=text("N"), _276=text("Y"),
                 _277=ten(0x90), _287=text("R"))
    r = API.headers(src, format=FMT).to_pylist()[0]
    assert {k: r[k] for k in ("op", "source_op", "schema", "table", "txid", "commit_ts",
                              "change_ts", "commit_pos", "change_pos", "seq", "_error")} == {
        "op": "u", "source_op": "UB", "schema": "OWNR", "table": "TBLNAME",
        "txid": ten(0x30).hex().upper(), "commit_ts": utc(2023, 4, 5, 6, 7, 9, 444444),
        "change_ts": utc(2023, 4, 5, 6, 7, 8, 111111), "commit_pos": ten(0x20),
        "change_pos": ten(0x10), "seq": 0, "_error": None}
    assert r["source"] == {
        "systemid": "SYSA", "dbid": 11, "psid": 12, "obid": 13, "dbname": "DBNAMEA",
        "tsname": "TSNAMEB", "partnum": 14, "logrba": ten(0x40), "memberid": 15,
        "rid_page": 0x00010010, "rid_id": 17, "sqltype": "U", "logrecdisp": "A",
        "sqlsrctype": "T", "logbytes": 0x01020304, "logdelta": 18, "anomaly_rowid": 19,
        "anomaly_type": "X", "anomaly_rba": ten(0x50),
        "uor_ts": utc(2023, 4, 5, 6, 7, 0, 777777), "uordisp": "A", "uoridlrsn": ten(0x60),
        "uorid": ten(0x30), "totalsegs": 0, "uorcommitpoint": ten(0x70),
        "connection_type": "DB", "connect_id": "CONNID", "correlation_id": "CORRELATION1",
        "authid": "AUTHIDX", "plan": "PLANNAME", "luw_network_id": "NETWORK",
        "luw_name": "LUWNAME", "luw_instance": bytes(range(0x80, 0x86)), "luw_seqno": 20,
        "incomplete_trans": True, "incomplete_dep": False, "uor_has_comp": True,
        "sqlrirba": ten(0x90), "pagenum_fmt": "R", "owner_truncated": False,
        "name_truncated": False}
