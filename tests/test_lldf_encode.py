"""The `lldf` encoder and generator on their own (no decoder): header fields at the seed's
offsets, value layouts (packed decimal, HFP), nulls, segments, framings, and the generator's
promises — checked on the bytes, with a small walker that splits records and images."""
import datetime as dt
import decimal
import struct

import pyarrow as pa
import pytest

from cdcfast.catalog import Catalog
from cdcfast.encode import encode as encode_any
from cdcfast.encode.lldf import _hfp_long, _hfp_short, encode, events, generate
from cdcfast.formats.lldf import K_BLOB, K_CLOB, K_DBCLOB, K_XML, SOURCE, layout

UTC = dt.timezone.utc
T0 = dt.datetime(2024, 3, 1, 12, 34, 56, 789012, tzinfo=UTC)

CAT = Catalog.from_dict({"tables": [{"schema": "X", "table": "T", "columns": [
    {"name": "ID", "type": "INTEGER", "nullable": False},
    {"name": "D", "type": "DECIMAL(9,2)"}, {"name": "E", "type": "DECIMAL(10,3)"},
    {"name": "S", "type": "VARCHAR(10)"}, {"name": "C", "type": "CHAR(3)"},
    {"name": "L", "type": "CLOB"}, {"name": "R", "type": "REAL"}, {"name": "F", "type": "DOUBLE"},
    {"name": "G", "type": "GRAPHIC(2)"}, {"name": "TS", "type": "TIMESTAMP(9)"},
    {"name": "TZ", "type": "TIMESTAMP(0) WITH TIME ZONE"}, {"name": "TM", "type": "TIME"},
    {"name": "B", "type": "BOOLEAN"}]},
    {"schema": "LONGOWNER1", "table": "A_VERY_LONG_TABLE_NAME_1",
     "aliases": ["LONGOWNE.A_VERY_LONG_TAB001"],
     "columns": [{"name": "ID", "type": "SMALLINT", "nullable": False}]}]})


def event(op="c", after=None, before=None, **extra):
    ev = {"op": op, "schema": "X", "table": "T", "txid": "00000000000000ABCDEF",
          "commit_ts": T0, "change_ts": T0 - dt.timedelta(seconds=1),
          "commit_pos": bytes(range(10)), "change_pos": bytes(range(1, 11)),
          "before": before, "after": after, "source": {"systemid": "DB2P", "rid_page": 513,
                                                       "rid_id": 7, "uor_has_comp": False}}
    ev.update(extra)
    return ev


ROW = {"ID": 42, "D": decimal.Decimal("-12.5"), "E": decimal.Decimal("1.5"), "S": "ab",
       "C": "x", "L": None, "R": -118.625, "F": 1.0, "G": "中", "TS": T0.replace(tzinfo=None),
       "TZ": T0, "TM": dt.time(1, 2, 3), "B": True}


def cp(text):
    return text.encode("cp037")


def u16(b, off):
    return int.from_bytes(b[off:off + 2], "big")


# -- a walker: physical records of a stream, and the columns of an image -------------------

def walk(data, framing="raw"):
    """-> [(header, data)] of every physical record, checking every length on the way."""
    bodies = []
    if framing == "raw":
        pos = 0
        while pos < len(data):
            end = pos + u16(data, pos) + u16(data, pos + 182)
            bodies.append(data[pos:end])
            pos = end
    else:
        blocks = [data]
        if framing == "vb":
            blocks, pos = [], 0
            while pos < len(data):
                n = int.from_bytes(data[pos:pos + 4], "big")
                n = n & 0x7FFFFFFF if n & 0x80000000 else n >> 16
                blocks.append(data[pos + 4:pos + n])
                pos += n
        for block in blocks:
            pos = 0
            while pos < len(block):
                n = u16(block, pos)
                assert block[pos + 2:pos + 4] == b"\0\0"
                bodies.append(block[pos + 4:pos + n])
                pos += n
    out = []
    for body in bodies:
        length = u16(body, 0)
        assert length >= 288 and length + u16(body, 182) == len(body)
        out.append((body[:length], body[length:]))
    return out


def logical(physical):
    """Physical records -> [(first header, DATA)], joining segments (consecutive, same LRSN)."""
    out = []
    for header, data in physical:
        total, num = u16(header, 184), u16(header, 186)
        if total > 1 and num > 1:
            first, joined, last = out[-1]
            assert num == last + 1 and header[77:87] == first[77:87]
            out[-1] = (first, joined + data, num)
        else:
            out.append((header, data, num))
    return [(h, d) for h, d, _ in out]


def images(data):
    if not data:
        return []
    assert u16(data, 0) == len(data)
    pos, out = 2, []
    while pos < len(data):
        n = u16(data, pos)
        out.append(data[pos + 2:pos + 2 + n])
        pos += 2 + n
    assert pos == len(data)
    return out


def columns(image, table):
    """The raw bytes of each column (None when null), using the decoders' layouts."""
    pos, out = 0, {}
    for c in table.columns:
        kind, width = layout(c)
        null = False
        if c.nullable:
            assert image[pos] in (0, 0xFF)
            null, pos = image[pos] == 0xFF, pos + 1
        if width:
            start, pos = pos, pos + width
        else:
            size = 4 if kind in (K_CLOB, K_DBCLOB, K_BLOB, K_XML) else 2
            n = int.from_bytes(image[pos:pos + size], "big")
            start, pos = pos + size, pos + size + n
        out[c.name] = None if null else image[start:pos]
    assert pos == len(image)
    return out


# -- the header -----------------------------------------------------------------------------

def test_header_fields_at_the_seeds_offsets():
    (h, data), = walk(encode([event(after=ROW)], CAT))
    assert len(h) == 288 and u16(h, 0) == 288
    assert h[2:6] == cp("DB2P")
    assert u16(h, 12) == 1 and u16(h, 14) == 1                # TBOWNERLEN, TBNAMELEN
    assert h[32:40] == cp("X".ljust(8)) and h[40:58] == cp("T".ljust(18))
    assert h[60:77] == bytes.fromhex("2024030112345578901200000000000000")   # TIMESTAMP
    assert h[77:87] == bytes(range(1, 11))                    # LOGLRSN
    assert h[99:103] == (513).to_bytes(4, "big") and h[103] == 7           # RID
    assert h[104:106] == cp("I ")
    assert h[106:109] == cp("   ")                             # None CHAR: blanks
    assert h[127:144] == bytes(17)                            # no UORTIMESTAMP
    assert h[144:161] == bytes.fromhex("2024030112345678901200000000000000")
    assert h[172:182] == bytes.fromhex("00000000000000ABCDEF")   # UORID from txid
    assert u16(h, 182) == len(data) and h[184:192] == bytes(8)   # SEGLEN, TOTALSEGS 0, SEGNUM 0
    assert h[192:202] == bytes(range(10))                     # UORCOMMITLRSN
    assert h[274:277] == cp(" ") + cp(" ") + cp("N")          # Y/N flags
    assert h[287:288] == cp(" ")


def test_change_types_source_tz_and_header_length():
    evs = [event("u", ROW, ROW), event("d", before=ROW), event("t"),
           event(None, source_op="E"), event("message", source_op="SC")]
    recs = walk(encode(evs, CAT, source_tz="America/New_York", header_length=300))
    assert [h[104:106].decode("cp037") for h, _ in recs] == ["UB", "D ", "DM", "E ", "SC"]
    assert [len(images(d)) for _, d in recs] == [2, 1, 0, 0, 0]
    assert all(u16(h, 0) == 300 and h[288:] == bytes(12) for h, _ in recs)
    # 12:34:56 UTC on 2024-03-01 is 07:34:56 in New York
    assert recs[0][0][144:153] == bytes.fromhex("202403010734567890")
    with pytest.raises(ValueError, match="disagrees"):
        encode([event("c", ROW, source_op="UB")], CAT)
    with pytest.raises(ValueError, match="not in the catalog"):
        encode([event(after=ROW, table="NOPE")], CAT)
    assert len(walk(encode([event("ddl", table="NOPE")], CAT))) == 1   # no images: allowed


def test_long_names_use_the_catalogs_alias():
    ev = event(after={"ID": 1}, schema="LONGOWNER1", table="A_VERY_LONG_TABLE_NAME_1")
    (h, _), = walk(encode([ev], CAT))
    assert (u16(h, 12), u16(h, 14)) == (10, 24)
    assert h[32:40] == cp("LONGOWNE") and h[40:58] == cp("A_VERY_LONG_TAB001")


def test_uorid_and_bin_fields():
    ev = event(after=ROW)
    ev["source"].update(uorid=b"\x01" * 10, logbytes=0x01020304, incomplete_trans=True)
    (h, _), = walk(encode([ev], CAT))
    assert h[172:182] == b"\x01" * 10 and h[109:113] == bytes([1, 2, 3, 4]) and h[274] == 0xE8
    ev["source"]["logrba"] = b"\x01"
    with pytest.raises(ValueError, match="LOGRBA"):
        encode([ev], CAT)


# -- values ---------------------------------------------------------------------------------

def test_value_layouts():
    (_, data), = walk(encode([event(after=ROW)], CAT))
    after, = images(data)
    col = columns(after, CAT.get("X.T"))
    assert col["ID"] == (42).to_bytes(4, "big")
    assert col["D"] == bytes.fromhex("000001250D")            # DECIMAL(9,2): 5 bytes
    assert col["E"] == bytes.fromhex("00000001500C")          # even precision: a pad nibble
    assert col["S"] == cp("ab") and b"\x00\x00\x02" + cp("ab") in after   # u16 length
    assert col["C"] == cp("x  ")
    assert col["L"] is None                                   # its bytes: FF 00000000
    assert col["R"] == bytes.fromhex("C276A000")              # HFP REAL -118.625
    assert col["F"] == bytes.fromhex("4110000000000000")      # HFP DOUBLE 1.0
    assert col["G"] == "中 ".encode("utf-16-be")
    assert col["TS"] == cp("2024-03-01-12.34.56.789012000")
    assert col["TZ"] == cp("2024-03-01-12.34.56+00:00")
    assert col["TM"] == cp("01.02.03") and col["B"] == b"\x01"


def test_nulls_and_limits():
    row = dict.fromkeys(ROW) | {"ID": 1}
    (_, data), = walk(encode([event(after=row)], CAT))
    after, = images(data)
    assert after == (b"\x00\x00\x00\x01" + b"\xff" + bytes(5) + b"\xff" + bytes(6)
                     + b"\xff\x00\x00" + b"\xff" + bytes(3) + b"\xff" + bytes(4)
                     + b"\xff" + bytes(4) + b"\xff" + bytes(8) + b"\xff" + bytes(4)
                     + b"\xff" + bytes(29) + b"\xff" + bytes(25) + b"\xff" + bytes(8)
                     + b"\xff\x00")
    for bad, match in (({"ID": None}, "NOT NULL"), ({"C": "abcd"}, "CHAR"),
                       ({"D": decimal.Decimal("0.001")}, "fraction"),
                       ({"D": decimal.Decimal("1E7")}, "digits"), ({"NOPE": 1}, "lacks")):
        with pytest.raises(ValueError, match=match):
            encode([event(after=ROW | bad)], CAT)


def test_hfp():
    assert _hfp_short(1.0) == bytes.fromhex("41100000")
    assert _hfp_short(-118.625) == bytes.fromhex("C276A000")
    assert _hfp_short(0.0) == bytes(4) and _hfp_short(-0.0) == bytes.fromhex("80000000")
    assert _hfp_short(1 / 16) == bytes.fromhex("40100000")
    assert _hfp_short(0.1) == bytes.fromhex("4019999A")         # rounded to nearest
    assert _hfp_long(0.1) == bytes.fromhex("401999999999999A")
    assert _hfp_long(-118.625) == bytes.fromhex("C276A00000000000")
    assert _hfp_long(2.0 ** -260) == bytes.fromhex("00" + "10" + "00" * 6)   # 16**-65
    for bad in (float("nan"), 2.0 ** -261, 16.0 ** 63):
        with pytest.raises(ValueError):
            _hfp_long(bad)
    # every double converts exactly: fraction * 16**(exp-64) / 2**56
    for x in (1e-70, 3.14159, -2.5e60, 123456789.123):
        b = int.from_bytes(_hfp_long(x), "big")
        value = (b & (1 << 56) - 1) * 16.0 ** ((b >> 56 & 0x7F) - 64) / 2.0 ** 56
        assert value == abs(x) and (b >> 63) == (x < 0)


def test_ieee_float_format():
    (_, data), = walk(encode([event(after=ROW)], CAT, float_format="ieee"))
    col = columns(images(data)[0], CAT.get("X.T"))
    assert col["R"] == struct.pack(">f", -118.625) and col["F"] == struct.pack(">d", 1.0)


# -- segments and framings ------------------------------------------------------------------

def test_segments():
    ev = event("u", ROW | {"L": "x" * 300}, ROW)
    whole = walk(encode([ev], CAT))
    parts = walk(encode([ev], CAT, segment_bytes=100))
    data = whole[0][1]
    assert len(parts) == -(-len(data) // 100) > 1
    assert [u16(h, 184) for h, _ in parts] == [len(parts)] * len(parts)
    assert [u16(h, 186) for h, _ in parts] == list(range(1, len(parts) + 1))
    assert [u16(h, 182) for h, _ in parts] == [len(d) for _, d in parts]
    assert b"".join(d for _, d in parts) == data
    assert all(h[:182] == whole[0][0][:182] and h[188:] == whole[0][0][188:] for h, _ in parts)
    # an unsegmented record keeps TOTALSEGS 0 or 1 (SEGNUM 1 with it)
    ev["source"]["totalsegs"] = 1
    (h, _), = walk(encode([ev], CAT, segment_bytes=10_000))
    assert (u16(h, 184), u16(h, 186)) == (1, 1)


def test_framings():
    evs = [event(after=ROW | {"ID": i}) for i in range(50)]
    raw = encode(evs, CAT)
    rdw = encode(evs, CAT, framing="rdw")
    vb = encode(evs, CAT, framing="vb", block_bytes=2000)
    assert len(rdw) == len(raw) + 4 * 50
    assert [r for r in walk(rdw, "rdw")] == walk(raw) == walk(vb, "vb")
    pos = 0
    while pos < len(vb):           # blocks of at most block_bytes, BDW reserved bytes zero
        n = u16(vb, pos)
        assert n <= 2000 and vb[pos + 2:pos + 4] == b"\0\0"
        pos += n
    big = encode(evs * 3, CAT, framing="vb", block_bytes=40000)
    first = int.from_bytes(big[:4], "big")
    assert first & 0x80000000 and 32767 < first & 0x7FFFFFFF <= 40000
    assert walk(big, "vb") == walk(encode(evs * 3, CAT))
    huge = event(after=ROW | {"L": "y" * 66000})
    with pytest.raises(ValueError, match="exceeds"):
        encode([huge], CAT)
    long_ev = event(after=ROW | {"L": "y" * 65300})
    with pytest.raises(ValueError, match="segment_bytes"):
        encode([long_ev], CAT, framing="rdw")
    assert len(walk(encode([long_ev], CAT, framing="rdw", segment_bytes=32000), "rdw")) == 3


def test_pyarrow_input_and_registry():
    evs = [event(after=ROW), event("d", before=ROW)]
    assert encode(pa.Table.from_pylist(evs), CAT) == encode(evs, CAT)
    assert encode_any(evs, "lldf", catalog=CAT, encoding="cp1047") == encode(evs, CAT,
                                                                              encoding="cp1047")


# -- the generator ------------------------------------------------------------------------

def test_generate_is_deterministic_and_events_match():
    a, cat = generate(300, seed=7)
    assert generate(300, seed=7)[0] == a and generate(300, seed=8)[0] != a
    msgs, _ = generate(300, seed=7, messages=True)
    assert b"".join(msgs) == a and len(msgs) < 300
    evs, cat2 = events(300, seed=7)
    assert cat2.to_dict() == cat.to_dict() and encode(evs, cat) == a


@pytest.mark.parametrize("options", [
    {}, {"framing": "rdw", "encoding": "cp1047", "control": True},
    {"framing": "vb", "segment_bytes": 120, "all_types": True, "tables": 2},
    {"float_format": "ieee", "long_names": True, "header_length": 320, "encoding": "latin-1"}])
def test_generated_records_walk(options):
    framing = options.get("framing", "raw")
    data, cat = generate(700, seed=3, **options)
    evs, _ = events(700, seed=3, **options)
    recs = logical(walk(data, framing))
    assert len(recs) == len(evs) == 700
    enc = options.get("encoding", "cp037")
    for (h, d), ev in zip(recs, evs):
        assert set(ev["source"]) == set(SOURCE.names)
        assert h[104:106].decode("latin-1" if enc == "latin-1" else "cp037") == ev["source_op"]
        assert h[172:182].hex().upper() == ev["txid"] and h[192:202] == ev["commit_pos"]
        table = cat.get(f"{ev['schema']}.{ev['table']}")
        imgs = [ev[k] for k in ("before", "after") if ev[k] is not None]
        assert len(images(d)) == len(imgs)
        for raw, image in zip(images(d), imgs):
            col = columns(raw, table)
            assert int.from_bytes(col["ORDER_ID"], "big") == image["ORDER_ID"]
        segs = ev["source"]["totalsegs"]
        assert segs in (0, 1) or segs == -(-len(d) // options["segment_bytes"])
    ops = [e["source_op"] for e in evs]
    if options.get("control"):
        assert {"DM", "CO"} <= set(ops)
    if options.get("long_names"):
        assert all(e["source"]["owner_truncated"] and e["source"]["name_truncated"] for e in evs)
        assert all(u16(h, 12) == 15 and h[32:40] == b"SALES_AN" for h, _ in recs)


def test_generated_content_is_realistic():
    evs, cat = events(3000, seed=1, all_types=True)
    ops = [e["op"] for e in evs]
    assert 0.5 < ops.count("c") / 3000 < 0.7 and 0.2 < ops.count("u") / 3000 < 0.4
    assert ops.count("d") > 100 and "IL" in {e["source_op"] for e in evs}
    commits = [e["commit_pos"] for e in evs]
    changes = [e["change_pos"] for e in evs]
    assert commits == sorted(commits) and changes == sorted(changes)
    assert all(e["change_ts"] <= e["commit_ts"] and e["source"]["uor_ts"] <= e["change_ts"]
               and e["change_pos"] < e["commit_pos"] for e in evs)
    assert len({e["txid"] for e in evs}) < len(evs) / 2        # transactions of several records
    values = [v for e in evs for v in (e["after"] or {}).values()]
    assert None in values and "" in values
    # cp037 text holds é but not € or 中; GRAPHIC text holds anything, surrogate pairs too
    notes = [e["after"]["NOTES"] for e in evs if e["after"] and e["after"]["NOTES"]]
    assert any("é" in v for v in notes) and not any("€" in v or "中" in v for v in notes)
    graphic = [e["after"]["NOTE_VG"] for e in evs if e["after"] and e["after"]["NOTE_VG"]]
    assert any(any(ord(c) > 0xFFFF for c in v) for v in graphic)
    assert all(len(e["after"]["LABEL_G"].encode("utf-16-be")) == 12
               for e in evs if e["after"] and e["after"]["LABEL_G"])
    reals = [e["after"][k] for e in evs if e["after"] for k in ("WEIGHT_KG", "RATIO")
             if e["after"][k] is not None]
    for x in reals:        # HFP short holds them exactly
        b = int.from_bytes(_hfp_short(x), "big")
        value = (b & 0xFFFFFF) * 16.0 ** ((b >> 24 & 0x7F) - 64) / 2.0 ** 24
        assert value == abs(x) and (b >> 31) == (x < 0)
    for e in evs:
        if e["op"] == "u":
            assert e["before"]["ORDER_ID"] == e["after"]["ORDER_ID"]
            assert sum(e["before"][k] != e["after"][k] for k in e["after"]) <= 3


def test_generate_pools_beyond_fresh_rows():
    data, cat = generate(12000, seed=2, framing="vb")
    assert len(logical(walk(data, "vb"))) == 12000
    msgs, _ = generate(6001, seed=2, messages=True, records_per_message=(2, 5))
    assert sum(len(logical(walk(m))) for m in msgs) == 6001
