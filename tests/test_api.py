"""The Python API of SPEC §1 over `ibm-delimited`: sources, table selection, modes, stats,
configs, read_batches, headers, and the native / fallback switch."""
import json
from decimal import Decimal
import os
import subprocess
import sys

import pyarrow as pa
import pytest

import cdcfast
from cdcfast import reference
from cdcfast.encode import generate

CAT = {"tables": [{"schema": "TEST", "table": "EMPLOYEE", "columns": [
    {"name": "FIRST_NAME", "type": "VARCHAR(20)"},
    {"name": "LAST_NAME", "type": "VARCHAR(20)", "nullable": False},
    {"name": "SALARY", "type": "DECIMAL(9,2)"}]}]}

HEAD = ('10,"IBM","2006030","182318000005","{owner}","{name}","{op}",'
        '"0000:0000:0388:4642:0000","0000:0000:0000:0271:000c:0000:0000:0000",'
        '"2006-06-30-18.00.52","ASNQC910",0000,')


def rec(before, after, op="ISRT", owner="TEST", name="EMPLOYEE"):
    return (HEAD.format(owner=owner, name=name, op=op) + ",".join(before + after)).encode()


INS = rec(["", "", ""], ['"John"', '"Doe"', "120000"])
UPD = rec(['"Ed"', '"Smith"', "109000"], ['"Ed"', '"Smith"', "150000.5"], "REPL")
BAD = rec(["", "", ""], ['"Bill"', '"Green"', "abc"])
CORRUPT = b'10,"IBM","2006030","oops'   # unterminated string


@pytest.fixture(params=["native", "reference"])
def api(request):
    return cdcfast if request.param == "native" else reference


def test_native_is_in_use():
    assert cdcfast.native_available() is True


@pytest.mark.parametrize("kind", ["bytes", "bytearray", "memoryview", "path", "buffer"])
def test_stream_sources(api, kind, tmp_path):
    data = INS + b"\n" + UPD + b"\n"
    src = {"bytes": data, "bytearray": bytearray(data), "memoryview": memoryview(data),
           "buffer": pa.py_buffer(data), "path": tmp_path / "s.txt"}[kind]
    if kind == "path":
        src.write_bytes(data)
    t = api.decode(src, format="ibm-delimited", catalog=CAT, table="TEST.EMPLOYEE")
    assert t.column("op").to_pylist() == ["c", "u"]
    assert t.column("seq").to_pylist() == [0, 1]
    assert [r["SALARY"] for r in t.column("after").to_pylist()] == \
        [Decimal("120000.00"), Decimal("150000.50")]


@pytest.mark.parametrize("kind", ["list", "binary", "string", "large_binary", "chunked"])
def test_message_sources_with_tombstones(api, kind):
    msgs = [INS, None, UPD + b"\n" + BAD, INS.decode()]
    if kind == "binary":
        src = pa.array([m.encode() if isinstance(m, str) else m for m in msgs], pa.binary())
    elif kind == "string":
        src = pa.array([m.decode() if isinstance(m, bytes) else m for m in msgs], pa.string())
    elif kind == "large_binary":
        src = pa.array([m.encode() if isinstance(m, str) else m for m in msgs],
                       pa.large_binary())
    elif kind == "chunked":
        b = [m.encode() if isinstance(m, str) else m for m in msgs]
        src = pa.chunked_array([pa.array(b[:2], pa.binary()), pa.array(b[2:], pa.binary())])
    else:
        src = msgs
    dec = api.Decoder("ibm-delimited", catalog=CAT)
    t = dec.decode(src, table="TEST.EMPLOYEE")
    assert t.column("op").to_pylist() == ["c", "u", "c", "c"]
    assert t.column("seq").to_pylist() == [0, 0, 1, 0]       # ordinal within its message
    err = t.column("_error").to_pylist()
    # message 2 (tombstone at 1 still counts as an index); SALARY is the 6th data field
    assert err[2] == ("after.SALARY: 'abc' is not DECIMAL(9,2) "
                      f"(message 2, byte {len(UPD) + 1 + BAD.rindex(b'abc') - 0})")
    assert dec.last_stats == {"records": 4, "events": 4, "errors": 1, "dropped": 0,
                              "tombstones": 1, "control": 0, "unknown_tables": 0,
                              "extra_columns": 0}


def test_byte_offsets_count_within_the_message(api):
    t = api.decode([UPD + b"\n" + BAD], format="ibm-delimited", catalog=CAT)
    (e,) = [x for x in t.column("_error").to_pylist() if x]
    assert e.endswith(f"(message 0, byte {len(UPD) + 1 + BAD.rindex(b'abc')})")


def two_tables():
    return INS + b"\n" + rec(["", ""], ["1", "2"], owner="X", name="Y") + b"\n" + CORRUPT


def test_table_selection(api):
    data = two_tables()
    with pytest.raises(ValueError, match=r"TEST\.EMPLOYEE.*X\.Y|X\.Y.*TEST\.EMPLOYEE"):
        api.decode(data, format="ibm-delimited", catalog=CAT)
    emp = api.decode(data, format="ibm-delimited", catalog=CAT, table="TEST.EMPLOYEE")
    # the unattributable record is in every decode(table=…) result, in input order
    assert emp.column("table").to_pylist() == ["EMPLOYEE", None]
    assert emp.column("seq").to_pylist() == [0, 2]
    assert emp.column("_corrupt_record").to_pylist() == [None, CORRUPT]
    assert emp.column("_error").to_pylist()[1] == \
        "time: unterminated string (message 0, byte %d)" % (len(data) - len(CORRUPT) + 19)
    xy = api.decode(data, format="ibm-delimited", catalog=CAT, table="x.y")   # no catalog
    assert xy.schema.field("after").type == pa.struct([("C1", pa.string()),
                                                       ("C2", pa.string())])
    assert xy.column("after").to_pylist()[0] == {"C1": "1", "C2": "2"}
    assert xy.num_rows == 2
    got = api.decode_tables(data, format="ibm-delimited", catalog=CAT)
    assert sorted(got, key=str) == [None, "TEST.EMPLOYEE", "X.Y"]
    assert got[None].column("_corrupt_record").to_pylist() == [CORRUPT]
    assert got["TEST.EMPLOYEE"].num_rows == 1 and got["X.Y"].num_rows == 1
    with pytest.raises(ValueError, match="neither"):
        api.decode(data, format="ibm-delimited", catalog=CAT, table="NO.SUCH")


def test_case_insensitive_table_and_empty_result(api):
    t = api.decode(INS, format="ibm-delimited", catalog=CAT, table="test.employee")
    assert t.num_rows == 1
    empty = api.decode(rec(["", ""], ["1", "2"], owner="X", name="Y"), format="ibm-delimited",
                       catalog=CAT, table="TEST.EMPLOYEE")
    dec = api.Decoder("ibm-delimited", catalog=CAT)
    assert empty.num_rows == 0 and empty.schema == dec.schema("TEST.EMPLOYEE")


def test_schema_is_the_envelope():
    s = cdcfast.Decoder("ibm-delimited", catalog=CAT).schema("TEST.EMPLOYEE")
    assert s.names == ["op", "source_op", "schema", "table", "txid", "commit_ts", "change_ts",
                       "commit_pos", "change_pos", "seq", "before", "after", "changed",
                       "present", "source", "_error", "_corrupt_record"]
    assert all(f.nullable for f in s)
    assert s.field("commit_ts").type == pa.timestamp("us", tz="UTC")
    assert s.field("before").type.field("SALARY").type == pa.decimal128(9, 2)
    assert s.field("changed").type.field("SALARY").type == pa.bool_()
    assert s.field("source").type.names == ["type", "identifier", "put_ts", "plan_name",
                                            "segment", "invalid_column", "invalid_image",
                                            "invalid_mode"]
    t = cdcfast.decode(INS, format="ibm-delimited", catalog=CAT)
    assert t.schema == s


def test_modes(api):
    data = INS + b"\n" + BAD + b"\n" + UPD
    dec = api.Decoder("ibm-delimited", catalog=CAT, mode="DROPMALFORMED")
    t = dec.decode(data)
    assert t.column("seq").to_pylist() == [0, 2]
    assert dec.last_stats["dropped"] == 1 and dec.last_stats["errors"] == 1
    with pytest.raises(cdcfast.DecodeError) as e:
        api.decode(data, format="ibm-delimited", catalog=CAT, mode="failfast")
    assert (e.value.message_index, e.value.field) == (0, "after.SALARY")
    assert e.value.byte_offset == len(INS) + 1 + BAD.rindex(b"abc")
    assert isinstance(e.value, ValueError)
    with pytest.raises(ValueError, match="mode"):
        api.Decoder("ibm-delimited", mode="LENIENT")


def test_failfast_ignores_other_tables(api):
    other_bad = rec(["", ""], ["1", "2"], owner="X", name="Y", op="UPDT")
    t = api.decode(other_bad + b"\n" + INS, format="ibm-delimited", catalog=CAT,
                   table="TEST.EMPLOYEE", mode="FAILFAST")
    assert t.num_rows == 1


@pytest.mark.parametrize("opts", [
    dict(column_delimiter=";", record_delimiter=";"), dict(string_delimiter="a"),
    dict(decimal_char="1"), dict(column_delimiter=",,"), dict(encoding="cp999"),
    dict(column_delimiter="é"), dict(nonsense=1), dict(source_tz="Mars/Olympus"),
    dict(hex_encoding="klingon")])
def test_bad_options(opts):
    with pytest.raises(ValueError):
        cdcfast.Decoder("ibm-delimited", **opts)


def test_unknown_format():
    with pytest.raises(ValueError, match="ibm-delimited"):
        cdcfast.Decoder("csv")


def test_config_round_trip():
    dec = cdcfast.Decoder("ibm-delimited", catalog=CAT, mode="DROPMALFORMED",
                          column_delimiter=";", encoding="CP037", source_tz="Europe/Paris")
    cfg = json.loads(json.dumps(dec.config()))
    again = cdcfast.Decoder.from_config(cfg)
    assert again.config() == dec.config()
    assert cfg["options"]["encoding"] == "cp037" and cfg["mode"] == "DROPMALFORMED"
    data, cat = generate("ibm-delimited", rows=200, seed=3, column_delimiter=";",
                         encoding="cp037", source_tz="Europe/Paris")
    d1 = cdcfast.Decoder("ibm-delimited", catalog=cat, column_delimiter=";",
                         encoding="cp037", source_tz="Europe/Paris")
    d2 = cdcfast.Decoder.from_config(json.loads(json.dumps(d1.config())))
    assert d1.decode(data).equals(d2.decode(data))


def test_headers(api):
    h = api.headers(two_tables(), format="ibm-delimited", catalog=CAT)
    assert h.schema.names == ["op", "source_op", "schema", "table", "txid", "commit_ts",
                              "change_ts", "commit_pos", "change_pos", "seq", "source",
                              "_error", "_corrupt_record"]
    assert h.column("table").to_pylist() == ["EMPLOYEE", "Y", None]
    one = api.headers(two_tables(), format="ibm-delimited", catalog=CAT, table="X.Y")
    assert one.column("table").to_pylist() == ["Y", None]


def test_read_batches_bounded_and_equal(api, tmp_path):
    data, cat = generate("ibm-delimited", rows=5000 if api is cdcfast else 700, seed=7,
                         tables=2)
    path = tmp_path / "big.txt"
    path.write_bytes(data)
    name = cat.tables[1].name
    batches = list(api.read_batches(path, format="ibm-delimited", catalog=cat, table=name,
                                    batch_size=333))
    assert batches and all(0 < b.num_rows <= 333 for b in batches)
    whole = api.decode(path, format="ibm-delimited", catalog=cat, table=name)
    assert pa.Table.from_batches(batches).equals(whole.combine_chunks())


def test_native_and_reference_agree_on_many_tables():
    data, cat = generate("ibm-delimited", rows=1500, seed=11, tables=3)
    a = cdcfast.decode_tables(data, format="ibm-delimited", catalog=cat)
    b = reference.decode_tables(data, format="ibm-delimited", catalog=cat)
    assert sorted(a) == sorted(b) == sorted(t.name for t in cat.tables)
    for k in a:
        assert a[k].equals(b[k]), k


@pytest.mark.parametrize("api", [cdcfast, reference])
def test_read_tables_streams_what_decode_tables_returns(api):
    """read_tables: every table's batches as they are decoded (bounded memory), together the
    tables of decode_tables, unattributable records under None."""
    data, cat = generate("ibm-delimited", rows=3000, seed=13, tables=3)
    data += b"\nnot a record"
    dec = api.Decoder("ibm-delimited", catalog=cat)
    got = {}
    for key, batch in dec.read_tables(data, batch_size=400):
        assert 0 < batch.num_rows <= 400
        got.setdefault(key, []).append(batch)
    want = dec.decode_tables(data)
    assert set(got) == set(want) and None in got
    for key, batches in got.items():
        assert pa.Table.from_batches(batches).equals(want[key]), key
    assert dec.last_stats["records"] == 3001


def test_format_options_from_text():
    """Options given as text (Spark, --option) take the types of the format's defaults."""
    from cdcfast.formats.base import Format

    class F(Format):
        DEFAULTS = {"flag": False, "count": 3, "ratio": 0.5, "name": "x", "maybe": None}

    assert F.options_from_text({"flag": "TRUE", "count": "12", "ratio": "2", "name": "7",
                                "maybe": "y"}) == \
        {"flag": True, "count": 12, "ratio": 2.0, "name": "7", "maybe": "y"}
    assert F.options_from_text({"flag": "no"}) == {"flag": False}
    with pytest.raises(ValueError):
        F.options_from_text({"count": "many"})


_BLOCK = """
import sys, warnings, importlib.abc
class Block(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path, target=None):
        if name in ("cdcfast._ibm", "cdcfast._arrow"):
            raise ImportError("blocked for the test")
sys.meta_path.insert(0, Block())
warnings.simplefilter("error" if sys.argv[1] == "error" else "always")
try:
    import cdcfast
except RuntimeWarning as w:
    print("warned:", w); sys.exit(0)
t = cdcfast.decode(%r, format="ibm-delimited", catalog=%r)
print(cdcfast.native_available(), t.column("op").to_pylist())
"""


def test_fallback_warns_and_uses_the_reference():
    code = _BLOCK % (INS, CAT)
    out = subprocess.run([sys.executable, "-c", code, "error"], capture_output=True, text=True,
                         env={**os.environ, "CDCFAST_REQUIRE_NATIVE": ""})
    assert out.returncode == 0 and "warned:" in out.stdout and "reference" in out.stdout
    out = subprocess.run([sys.executable, "-c", code, "always"], capture_output=True,
                         text=True, env={**os.environ, "CDCFAST_REQUIRE_NATIVE": ""})
    assert out.stdout.strip() == "False ['c']", out.stderr
    out = subprocess.run([sys.executable, "-c", code, "always"], capture_output=True,
                         text=True, env={**os.environ, "CDCFAST_REQUIRE_NATIVE": "1"})
    assert out.returncode != 0 and "ImportError" in out.stderr
