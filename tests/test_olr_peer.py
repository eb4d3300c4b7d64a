"""Every golden file of real OpenLogReplicator output in peer-data/olr decodes with no error —
without a catalog (JSON kinds) and with a catalog made from the case's own CREATE TABLE — and
agrees with what Oracle LogMiner saw of the same changes (logminer-reference.json) wherever
both carry a value. The differences that are not ours are asserted, each with its reason."""
from __future__ import annotations

import collections
import datetime as dt
import decimal
import json
import re
import struct

import pytest

import cdcfast
import cdcfast.reference
from cdcfast import Catalog
from conftest import shared_path

# The golden cases in ../shared/peer-data/olr, named here rather than found by listing the
# folder: without ../shared each case still shows, as a skip that says why
# (conftest.shared_path). test_every_case_is_here checks this list against the folder.
CASES = ["basic-crud", "boolean-type", "data-types", "ddl-add-column", "interleaved-transactions",
         "lob-operations", "many-columns", "null-handling", "number-precision",
         "rac-interleaved", "rollback", "special-chars", "timestamp-variants"]
DECODERS = [pytest.param(cdcfast, id="native"), pytest.param(cdcfast.reference, id="reference")]
OWNER = "OLR_TEST"          # the scenarios run as the PDB user olr_test
UTC = dt.timezone.utc


# -- the case's files ---------------------------------------------------------------------

def peer_file(case: str, name: str):
    """A file of the case's folder in ../shared/peer-data/olr (the test skips without it)."""
    return shared_path("peer-data", "olr", case, name)


def messages(case: str) -> list:
    """The golden file's messages, numbers kept as their text."""
    lines = peer_file(case, "output.json").read_text(encoding="utf-8").splitlines()
    return [json.loads(line, parse_float=str, parse_int=str) for line in lines if line]


def elements(case: str) -> list:
    return [e for m in messages(case) for e in m["payload"]]


# Oracle column types as the catalog names them: Oracle's INTEGER is NUMBER(38) (SPEC §2's
# INTEGER is Db2's int32)
_ORACLE = {"INTEGER": "NUMBER(38,0)"}


def _columns(body: str) -> list:
    """(name, type, primary key) of a CREATE TABLE's column list (commas inside parentheses
    are part of a type)."""
    parts, depth, cur = [], 0, ""
    for ch in body:
        depth += (ch == "(") - (ch == ")")
        if ch == "," and depth == 0:
            parts.append(cur)
            cur = ""
        else:
            cur += ch
    parts.append(cur)
    out = []
    for p in parts:
        words = p.split()
        if not words:
            continue
        pk = "PRIMARY KEY" in p.upper()
        type_text = re.sub(r"\s*PRIMARY\s+KEY", "", " ".join(words[1:]), flags=re.I).upper()
        out.append((words[0].upper(), _ORACLE.get(type_text, type_text), pk))
    return out


def catalog_of(case: str) -> Catalog:
    """The case's table as its scenario.sql creates it (and alters it: ADD columns)."""
    sql = peer_file(case, "scenario.sql").read_text(encoding="utf-8")
    m = re.search(r"CREATE TABLE (\w+) \((.*?)\n\);", sql, re.S)
    cols = _columns(m.group(2))
    for add in re.finditer(rf"ALTER TABLE {m.group(1)} ADD \(([^;]*)\);", sql):
        cols += _columns(add.group(1))
    return Catalog.from_dict({"tables": [{
        "schema": OWNER, "table": m.group(1).upper(), "key": [n for n, _, pk in cols if pk],
        "columns": [{"name": n, "type": t, "nullable": not pk} for n, t, pk in cols]}]})


def logminer(case: str) -> list:
    """LogMiner's events (not JSON for boolean-type: LogMiner cannot read BOOLEAN)."""
    text = peer_file(case, "logminer-reference.json").read_text(encoding="utf-8")
    return [json.loads(line) for line in text.splitlines()
            if line.strip() and not line.startswith("#")]


def xid_of_raw(raw: str) -> str:
    """LogMiner's RAW XID (usn u16, slot u16, sqn u32, little-endian) as our txid."""
    usn, slot, sqn = struct.unpack("<HHI", bytes.fromhex(raw))
    return f"0x{usn:04x}.{slot:03x}.{sqn:08x}"


def fold_lob_writes(events: list, lobs: set) -> list:
    """LogMiner shows a LOB write as an event with EMPTY_CLOB()/EMPTY_BLOB() (or the other
    columns) followed, in the same transaction, by an UPDATE of the same row whose after
    image holds only LOB columns; OpenLogReplicator gives the row once, LOBs included. Fold
    such an UPDATE into the event before it."""
    out = []
    for ev in events:
        key = _row_key(ev)
        prev = next((p for p in reversed(out) if _row_key(p) == key), None)
        if (ev["op"] == "UPDATE" and prev is not None and prev["xid"] == ev["xid"]
                and ev.get("after") and set(ev["after"]) <= lobs):
            prev["after"] = {**prev["after"], **ev["after"]}
            continue
        out.append(dict(ev))
    return out


def _row_key(ev):
    img = ev.get("before") or {}
    return ev["table"], img.get("ID", (ev.get("after") or {}).get("ID"))


# -- LogMiner's values ------------------------------------------------------------------------

_MONTHS = {m: i for i, m in enumerate(
    "JAN FEB MAR APR MAY JUN JUL AUG SEP OCT NOV DEC".split(), 1)}


def _nls_date(text: str) -> dt.date:
    """DD-MON-RR (LogMiner's NLS_DATE_FORMAT; RR: 00-49 is 20xx)."""
    d, mon, yy = text.split("-")
    year = int(yy) + (2000 if int(yy) < 50 else 1900)
    return dt.date(year, _MONTHS[mon], int(d))


def _nls_timestamp(text: str):
    """DD-MON-RR HH.MI.SS[.FF] AM (NLS_TIMESTAMP_FORMAT) -> (the whole second, the fraction
    as a Decimal of a second)."""
    date, clock, half = text.split()
    parts = clock.split(".")
    h, mi, s = int(parts[0]) % 12 + (12 if half == "PM" else 0), int(parts[1]), int(parts[2])
    frac = decimal.Decimal("0." + parts[3]) if len(parts) > 3 else decimal.Decimal(0)
    day = _nls_date(date)
    return dt.datetime(day.year, day.month, day.day, h, mi, s), frac


def _f32(x: float) -> float:
    return struct.unpack("f", struct.pack("f", x))[0]


def compare(ours, lm, ctype, where):
    """None when our value is LogMiner's; else the name of a difference that is not ours
    (asserting it is exactly that difference)."""
    if lm is None:
        assert ours is None, where
        return None
    base = ctype.base
    if base in ("NUMBER",):
        assert decimal.Decimal(str(ours)) == decimal.Decimal(lm), where
        return None
    if base in ("VARCHAR2", "NVARCHAR2", "CHAR", "CLOB"):
        if ours == lm:
            return None
        # LogMiner's SQL_REDO is split into lines; the repo's logminer2json joins them with a
        # space, so a newline (or CR LF) in a value reads as one space there
        assert re.sub(r"\r?\n", " ", ours) == lm, where
        return "newline"
    if base in ("RAW", "BLOB"):
        assert ours == bytes.fromhex(lm), where
        return None
    if base == "DATE":
        # LogMiner prints DATE as DD-MON-RR: the day only (our value has its time of day,
        # which the epoch seconds OpenLogReplicator wrote carry)
        assert ours.date() == _nls_date(lm), where
        return "day only"
    if base == "TIMESTAMP":
        whole, frac = _nls_timestamp(lm)
        if not frac:
            assert ours == whole, where
            return None
        # OpenLogReplicator writes epoch seconds with the fraction rounded to the nearest
        # second, half up (peer-data README §2: .999 → the next second, .500 up, .123456 down)
        assert ours == whole + dt.timedelta(seconds=1 if frac >= decimal.Decimal("0.5") else 0), \
            where
        return "fraction rounded"
    if base in ("BINARY_FLOAT", "BINARY_DOUBLE"):
        x = float(lm)
        exact = _f32(x) if base == "BINARY_FLOAT" else x
        if ours == exact:
            return None
        # OpenLogReplicator prints binary floats with C++'s default 6 significant digits
        six = float(f"{x:.6g}")
        assert ours == (_f32(six) if base == "BINARY_FLOAT" else six), where
        return "6 digits"
    raise AssertionError(f"{where}: no comparison for {ctype.name}")


# The differences between OpenLogReplicator and LogMiner that are not ours, per case: how
# many values differ in each way (see compare()). LogMiner has no BOOLEAN (boolean-type has no
# reference); values OLR's compact updates leave out are not compared.
EXPECTED = {
    "basic-crud": {},
    "data-types": {"day only": 5, "fraction rounded": 1, "6 digits": 1},
    "ddl-add-column": {},
    "interleaved-transactions": {},
    "lob-operations": {},
    "many-columns": {"day only": 8, "fraction rounded": 4},
    "null-handling": {"day only": 3},
    "number-precision": {"6 digits": 5},
    "rac-interleaved": {},
    "rollback": {},
    "special-chars": {"newline": 2},
    "timestamp-variants": {"day only": 7, "fraction rounded": 13},
}


# -- the tests --------------------------------------------------------------------------------

def test_every_case_is_here():
    """CASES names exactly the cases the folder holds (a case added there is tested)."""
    folder = shared_path("peer-data", "olr")
    assert sorted(p.name for p in folder.iterdir() if (p / "output.json").is_file()) == CASES


@pytest.mark.parametrize("dec", DECODERS)
@pytest.mark.parametrize("case", CASES)
def test_headers(dec, case):
    """Message fields: every record clean, the xid dotted decimal normalized, scns/tms of
    the begin message carried to the whole transaction, commit_pos the c_scn."""
    msgs = messages(case)
    d = dec.Decoder("olr")
    h = d.headers(peer_file(case, "output.json")).to_pylist()
    assert len(h) == len(msgs) and d.last_stats["errors"] == 0
    assert [r["seq"] for r in h] == list(range(len(msgs)))
    carried = {}
    for r, m in zip(h, msgs):
        assert r["_error"] is None
        (e,) = m["payload"]
        usn, slot, sqn = (int(x) for x in m["xid"].split("."))
        assert r["txid"] == f"0x{usn:04x}.{slot:03x}.{sqn:08x}"
        assert r["source_op"] == e["op"] and r["source"]["xid"] == m["xid"]
        if "scns" in m:
            carried[m["xid"]] = (int(m["scns"], 16), int(m["tms"]))
        scn, tms = carried[m["xid"]]
        assert r["source"]["scn"] == scn
        assert r["commit_ts"] == r["change_ts"] == dt.datetime.fromtimestamp(tms, UTC)
        assert r["commit_pos"] == int(m["c_scn"]).to_bytes(8, "big")
        assert r["change_pos"] == r["commit_pos"] + int(m["c_idx"]).to_bytes(8, "big") + bytes(4)
        if e["op"] in ("c", "u", "d"):
            assert (r["schema"], r["table"]) == (OWNER, e["schema"]["table"])


@pytest.mark.parametrize("dec", DECODERS)
@pytest.mark.parametrize("case", CASES)
def test_without_catalog_every_value_is_its_text(dec, case):
    """JSON kinds: every column a string holding the value exactly as OLR wrote it (NUMBER
    with all its digits, CHAR with its padding, epoch seconds, hex)."""
    d = dec.Decoder("olr")
    got = d.decode_tables(peer_file(case, "output.json"))
    data = [e for e in elements(case) if e["op"] in ("c", "u", "d")]
    ((name, t),) = got.items()
    assert name == f"{OWNER}.{data[0]['schema']['table']}"
    assert d.last_stats["errors"] == 0 and t.num_rows == len(data)
    assert d.last_stats["unknown_tables"] == len(data)
    seen = list(dict.fromkeys(k for e in data for img in ("before", "after")
                              for k in (e.get(img) or {})))
    assert sorted(f.name for f in t.schema.field("after").type) == sorted(seen)
    for r, e in zip(t.to_pylist(), data):
        assert r["op"] == e["op"] and r["_error"] is None
        for img in ("before", "after"):
            if img not in e or (e["op"] == "c" and img == "before") \
                    or (e["op"] == "d" and img == "after"):
                assert r[img] is None
                continue
            want = {k: v if v is None else str(v) for k, v in e[img].items()}
            assert {k: v for k, v in r[img].items() if v is not None or k in want} == want


@pytest.mark.parametrize("dec", DECODERS)
@pytest.mark.parametrize("case", CASES)
def test_with_its_catalog_agrees_with_logminer(dec, case):
    cat = catalog_of(case)
    table = cat.tables[0]
    types = {c.name: c.type for c in table.columns}
    d = dec.Decoder("olr", catalog=cat)
    t = d.decode(peer_file(case, "output.json"), table=table.name)
    data = [e for e in elements(case) if e["op"] in ("c", "u", "d")]
    assert d.last_stats["errors"] == 0 and d.last_stats["extra_columns"] == 0
    assert d.last_stats["unknown_tables"] == 0 and t.num_rows == len(data)
    decoded = t.to_pylist()
    assert all(r["_error"] is None for r in decoded)
    ref = logminer(case)
    if not ref:
        assert case == "boolean-type"          # LogMiner cannot read BOOLEAN (23ai)
        assert {r["after"]["IS_ACTIVE"] for r in decoded if r["op"] == "c"} == {True, False, None}
        return
    lobs = {c.name for c in table.columns if c.type.is_lob}
    ref = fold_lob_writes(ref, lobs)
    ops = {"INSERT": "c", "UPDATE": "u", "DELETE": "d"}
    theirs = collections.defaultdict(list)
    for ev in ref:
        theirs[ops[ev["op"]], _row_key(ev)[1]].append(ev)
    ours = collections.defaultdict(list)
    for r, e in zip(decoded, data):
        img = e.get("before") if e["op"] == "d" else e.get("after")
        ours[e["op"], str((e.get("after") or {}).get("ID") or img.get("ID"))].append((r, e))
    assert {k: len(v) for k, v in ours.items()} == {k: len(v) for k, v in theirs.items()}
    found = collections.Counter()
    for key, pairs in ours.items():
        for (r, e), lm in zip(pairs, theirs[key]):
            assert r["txid"] == xid_of_raw(lm["xid"])
            for img in ("before", "after"):
                sent, lm_img = e.get(img), lm.get(img)
                if sent is None or lm_img is None:
                    continue
                for col, lm_value in lm_img.items():
                    where = f"{case} {key} {img}.{col}"
                    if lm_value in ("EMPTY_CLOB()", "EMPTY_BLOB()"):
                        continue           # LogMiner's placeholder of a LOB written later
                    if col not in sent:
                        if e["op"] in ("c", "d"):
                            # compact mode: inserts and deletes leave out null columns; the
                            # decoder gives them null, present
                            assert lm_value is None and r[img][col] is None, where
                            assert r["present"][col] is True, where
                        continue           # an update leaves out what it did not change
                    diff = compare(r[img][col], lm_value, types[col], where)
                    if diff:
                        found[diff] += 1
    assert dict(found) == EXPECTED[case]
