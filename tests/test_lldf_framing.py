"""`lldf` framing="auto" (the default): each message's framing (raw, rdw, vb) found from its
first records (docs/lldf.md, "Framing detection"). A detected framing decodes exactly as the
explicit option does, in the native decoder and in the reference alike; an explicit framing
is never overridden."""
import itertools
import random
import struct

import pyarrow as pa
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

import cdcfast
import cdcfast.reference
from cdcfast.formats import lldf as lldf_format
from cdcfast.formats.lldf import DETECT_RECORDS, Lldf, framing_of

FMT = "lldf"
APIS = {"native": cdcfast, "reference": cdcfast.reference}
FRAMINGS = ("raw", "rdw", "vb")
GEN_ONLY = ("segment_bytes", "block_bytes", "header_length")   # the writer's, not the reader's


def generate(rows, framing, seed=3, messages=False, **opts):
    gen = {k: opts.pop(k) for k in list(opts) if k in GEN_ONLY}
    data, cat = cdcfast.encode.generate(FMT, rows=rows, seed=seed, framing=framing,
                                        messages=messages, **gen, **opts)
    return data, cat, {k: v for k, v in opts.items() if k == "encoding"}


def all_rows(tables: dict) -> list:
    return sorted((r for t in tables.values() for r in t.to_pylist()), key=lambda r: r["seq"])


SETTINGS = [
    {},
    {"segment_bytes": 60},                                   # segmented records
    {"encoding": "cp1047", "tables": 3, "control": True},
    {"segment_bytes": 40, "block_bytes": 700, "tables": 2, "header_length": 300},
]


@pytest.mark.parametrize("opts", SETTINGS, ids=lambda o: ",".join(o) or "default")
@pytest.mark.parametrize("framing", FRAMINGS)
def test_detected_framing_decodes_as_the_explicit_one(framing, opts):
    data, cat, dopts = generate(60, framing, **opts)
    assert framing_of(data) == framing
    events, _ = cdcfast.encode.events(FMT, rows=60, seed=3,
                                      **{k: v for k, v in opts.items() if k not in GEN_ONLY})
    wanted = [e for e in events if e["op"] not in ("ddl", "message")]
    got = {}
    for name, api in APIS.items():
        auto = api.Decoder(FMT, cat, **dopts)
        explicit = api.Decoder(FMT, cat, framing=framing, **dopts)
        tables = auto.decode_tables(data)
        assert tables.keys() == explicit.decode_tables(data).keys()
        for k, t in explicit.decode_tables(data).items():
            assert tables[k].equals(t), (name, k)
        heads = auto.headers(data)
        assert heads.equals(explicit.headers(data))
        assert heads.num_rows == len(events) and heads.column("_error").null_count == len(events)
        rows = all_rows(tables)
        assert len(rows) == len(wanted)
        for r, e in zip(rows, wanted):
            for k in ("op", "schema", "table", "txid", "commit_pos", "after", "before"):
                assert r[k] == e[k], (name, r["seq"], k)
        got[name] = (tables, heads)
    assert got["native"][1].equals(got["reference"][1])
    assert got["native"][0].keys() == got["reference"][0].keys()
    for k, t in got["native"][0].items():
        assert t.equals(got["reference"][0][k])


@pytest.mark.parametrize("framing", FRAMINGS)
@pytest.mark.parametrize("api", APIS)
def test_one_record(framing, api):
    data, cat, _ = generate(1, framing)
    assert framing_of(data) == framing
    dec = APIS[api].Decoder(FMT, cat)
    t = dec.decode(data)
    assert t.num_rows == 1 and t.column("_error").to_pylist() == [None]
    assert t.equals(APIS[api].Decoder(FMT, cat, framing=framing).decode(data))
    events, _ = cdcfast.encode.events(FMT, rows=1, seed=3)
    assert t.column("after").to_pylist() == [events[0]["after"]]


@pytest.mark.parametrize("api", APIS)
def test_empty_input(api):
    assert framing_of(b"") == "raw"
    _, cat, _ = generate(1, "rdw")
    dec = APIS[api].Decoder(FMT, cat)
    assert dec.headers(b"").num_rows == 0
    assert dec.decode_tables(b"") == {}
    assert dec.decode_tables([b"", b""]) == {}
    assert dec.last_stats["records"] == 0


@pytest.mark.parametrize("api", APIS)
def test_random_bytes_are_raw_and_corrupt(api):
    rnd = random.Random(11)
    _, cat, _ = generate(1, "rdw")
    dec = APIS[api].Decoder(FMT, cat)
    for n in (1, 3, 4, 7, 300, 5000):
        junk = bytes(rnd.randrange(256) for _ in range(n))
        assert framing_of(junk) == "raw"
        h = dec.headers(junk)
        assert h.equals(APIS[api].Decoder(FMT, cat, framing="raw").headers(junk))
        assert h.num_rows == 1 and h.column("_corrupt_record").to_pylist() == [junk]
        assert h.column("_error")[0].as_py().startswith("LENGTH: ")


def rdw_records(n, seed=5):
    """n RDW records, each a bytes object (generate(..., messages=True) frames each message
    on its own; one record per message)."""
    msgs, cat = cdcfast.encode.generate(FMT, rows=n, seed=seed, framing="rdw", messages=True,
                                        records_per_message=1)
    assert len(msgs) == n and all(struct.unpack_from(">H", m)[0] == len(m) for m in msgs)
    return msgs, cat


@pytest.mark.parametrize("api", APIS)
def test_a_chain_that_breaks_within_the_checked_records_is_not_rdw(api):
    recs, cat = rdw_records(5)
    for broken in (b"\x00\x05\x00\x00\x01",                          # RDW too short for a header
                   b"\x00\x08\x00\x01" + b"\x40" * 4,                # reserved bytes not zero
                   recs[2][:4] + b"\x00" * (len(recs[2]) - 4),       # header LENGTH 0
                   recs[2][:-1]):                                    # overruns the input
        data = b"".join(recs[:2]) + broken + (b"".join(recs[3:]) if broken != recs[2][:-1]
                                              else b"")
        assert framing_of(data) == "raw", broken
        dec = APIS[api].Decoder(FMT, cat)
        h = dec.headers(data)
        assert h.equals(APIS[api].Decoder(FMT, cat, framing="raw").headers(data))
        assert not h.equals(APIS[api].Decoder(FMT, cat, framing="rdw").headers(data))
        assert h.column("_error").null_count < h.num_rows       # raw: corrupt records
    # the first records' lengths disagree with their LLDF header: not rdw either
    bad = bytearray(b"".join(recs))
    struct.pack_into(">H", bad, 4 + 182, 7)                           # SEGLEN of record 1
    assert framing_of(bytes(bad)) == "raw"


@pytest.mark.parametrize("api", APIS)
def test_a_break_past_the_checked_records_keeps_rdw(api):
    """Detection looks at the first DETECT_RECORDS records: a bad RDW later is the decoder's
    corrupt record, as with framing="rdw"."""
    recs, cat = rdw_records(DETECT_RECORDS + 4)
    data = b"".join(recs[:DETECT_RECORDS + 1]) + b"\x00\x08\x00\x01junk" + \
        b"".join(recs[DETECT_RECORDS + 1:])
    assert framing_of(data) == "rdw"
    h = APIS[api].Decoder(FMT, cat).headers(data)
    assert h.equals(APIS[api].Decoder(FMT, cat, framing="rdw").headers(data))
    errors = [e for e in h.column("_error").to_pylist() if e]
    assert h.num_rows == DETECT_RECORDS + 2 and len(errors) == 1 and errors[0].startswith("RDW")


def test_vb_blocks_must_be_filled_exactly():
    data, _, _ = generate(6, "vb", block_bytes=900)
    assert framing_of(data) == "vb"
    blen = struct.unpack_from(">H", data)[0]
    assert blen < len(data)                                 # several blocks
    longer = bytearray(data)
    struct.pack_into(">H", longer, 0, blen + 2)             # the first block's RDWs fall short
    assert framing_of(bytes(longer)) == "raw"
    ext = bytearray(b"\x80\x00" + data[:2]) + data[4:]      # an extended BDW is a BDW
    assert framing_of(bytes(ext)) == "vb"
    empty_first = b"\x00\x04\x00\x00" + data                # an empty block, then records
    assert framing_of(empty_first) == "vb"
    assert framing_of(b"\x00\x04\x00\x00" * 3) == "raw"     # no record at all


@pytest.mark.parametrize("api", APIS)
def test_each_message_has_its_own_framing(api):
    per = {f: generate(12, f, seed=9, messages=True, records_per_message=(1, 3))
           for f in FRAMINGS}
    cat = per["raw"][1]
    mixed, framings = [], []
    for i in range(max(len(m) for m, _, _ in per.values())):
        for f in FRAMINGS:
            if i < len(per[f][0]):
                mixed.append(per[f][0][i])
                framings.append(f)
    assert len(set(framings)) == 3 and len(mixed) > 10
    codes = lldf_format.detect_framing(b"".join(mixed),
                                       [0, *itertools.accumulate(map(len, mixed))])
    assert [FRAMINGS[c] for c in codes] == framings
    A = APIS[api]
    want = pa.concat_tables([A.headers(m, format=FMT, catalog=cat, framing=f)
                             for m, f in zip(mixed, framings)]).drop_columns(["seq"])
    assert want.num_rows > len(mixed) and want.column("_error").null_count == want.num_rows
    for source in (mixed, pa.array(mixed, pa.binary()),
                   pa.chunked_array([pa.array(mixed[:5], pa.binary()),
                                     pa.array(mixed[5:] + [None], pa.binary())])):
        h = A.headers(source, format=FMT, catalog=cat)
        assert h.drop_columns(["seq"]).equals(want)
    # a single framing for all would break most of them
    forced = A.headers(mixed, format=FMT, catalog=cat, framing="rdw")
    assert forced.column("_error").null_count < forced.num_rows


@pytest.mark.parametrize("api", APIS)
def test_explicit_framing_is_never_overridden(api):
    data, cat, _ = generate(10, "rdw")
    A = APIS[api]
    raw = A.headers(data, format=FMT, catalog=cat, framing="raw")
    assert raw.column("_error").null_count < raw.num_rows       # rdw bytes read as raw
    auto = A.headers(data, format=FMT, catalog=cat)
    assert auto.num_rows == 10 and auto.column("_error").null_count == 10


def test_config_keeps_auto_and_round_trips():
    data, cat, _ = generate(8, "vb", block_bytes=1000)
    dec = cdcfast.Decoder(FMT, catalog=cat)
    cfg = dec.config()
    assert cfg["options"]["framing"] == "auto" and dec.options["framing"] == "auto"
    again = cdcfast.Decoder.from_config(cfg)
    assert again.config() == cfg
    assert again.headers(data).equals(dec.headers(data))
    assert again.headers(data).column("_error").null_count == 8
    assert cdcfast.Decoder(FMT, catalog=cat, framing="VB").config()["options"]["framing"] == "vb"
    with pytest.raises(ValueError, match="framing must be one of auto, raw, rdw, vb"):
        cdcfast.Decoder(FMT, catalog=cat, framing="rdw2")


@pytest.mark.parametrize("native", [True, False])
@pytest.mark.parametrize("framing", FRAMINGS)
def test_split_points_use_the_detected_framing(framing, native):
    data, cat, _ = generate(120, framing, segment_bytes=50, block_bytes=700)
    auto = Lldf(cat).split_points(data, 1500, native)
    explicit = Lldf(cat, framing=framing).split_points(data, 1500, native)
    assert auto == explicit and len(auto) > 3 and auto[-1] == len(data)
    whole = cdcfast.headers(data, format=FMT, catalog=cat)
    pieces = [cdcfast.headers(data[a:b], format=FMT, catalog=cat)
              for a, b in zip(auto, auto[1:])]
    assert pa.concat_tables(pieces).drop_columns(["seq"]).equals(whole.drop_columns(["seq"]))
    assert whole.column("_error").null_count == whole.num_rows


def test_a_generated_file_decodes_without_the_option(tmp_path):
    """The README's `generate --option framing=rdw`, then decode of the file as it is."""
    data, cat, _ = generate(300, "rdw", segment_bytes=400, tables=2)
    path = tmp_path / "log.lldf"
    path.write_bytes(data)
    tables = cdcfast.decode_tables(str(path), format=FMT, catalog=cat)
    assert sorted(tables) == ["SALES.ORDERS_0", "SALES.ORDERS_1"]
    assert sum(t.num_rows for t in tables.values()) == 300
    assert all(t.column("_error").null_count == t.num_rows for t in tables.values())
    batches = list(cdcfast.read_batches(str(path), format=FMT, catalog=cat,
                                        table="SALES.ORDERS_0", batch_size=50))
    assert pa.Table.from_batches(batches).equals(tables["SALES.ORDERS_0"])


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(rows=st.integers(1, 25), framing=st.sampled_from(FRAMINGS), seed=st.integers(0, 99),
       segment_bytes=st.sampled_from([None, 30, 200]), block_bytes=st.sampled_from([400, 32760]),
       cut=st.integers(0, 3000))
def test_detection_over_random_streams(rows, framing, seed, segment_bytes, block_bytes, cut):
    data, cat, _ = generate(rows, framing, seed=seed, segment_bytes=segment_bytes,
                            block_bytes=block_bytes, table_width=4)
    assert framing_of(data) == framing
    auto = cdcfast.headers(data, format=FMT, catalog=cat)
    assert auto.equals(cdcfast.headers(data, format=FMT, catalog=cat, framing=framing))
    assert auto.equals(cdcfast.reference.headers(data, format=FMT, catalog=cat))
    # a stream cut short: whatever is detected, both decoders agree and use it
    short = data[:cut]
    f = framing_of(short)
    got = cdcfast.headers(short, format=FMT, catalog=cat)
    assert got.equals(cdcfast.headers(short, format=FMT, catalog=cat, framing=f))
    assert got.equals(cdcfast.reference.headers(short, format=FMT, catalog=cat))


# -- the rule, one message at a time: the oracle of the vectorized detect_framing -----------

def oracle(buf: bytes) -> str:
    """docs/lldf.md "Framing detection", written out plainly for one message."""
    def rdw(p, limit):
        if limit - p < 4:
            return None
        n, zero = struct.unpack_from(">HH", buf, p)
        if zero or n < 4 + 288 or n > limit - p:
            return None
        length, seglen = struct.unpack_from(">H", buf, p + 4)[0], \
            struct.unpack_from(">H", buf, p + 4 + 182)[0]
        return n if length >= 288 and length + seglen == n - 4 else None

    def bdw(p):
        if len(buf) - p < 4:
            return None
        w = struct.unpack_from(">I", buf, p)[0]
        if w & 0x80000000:
            n = w & 0x7FFFFFFF
        elif w & 0xFFFF:
            return None
        else:
            n = w >> 16
        return n if 4 <= n <= len(buf) - p else None

    def rdw_chain():
        p = k = 0
        while p < len(buf) and k < DETECT_RECORDS:
            n = rdw(p, len(buf))
            if n is None:
                return False
            p, k = p + n, k + 1
        return k > 0

    def vb_chain():
        p = k = blocks = 0
        while p < len(buf):
            n = bdw(p)
            if n is None:
                return False
            blocks += 1
            if blocks > DETECT_RECORDS:
                return k > 0
            end, q = p + n, p + 4
            while q < end:
                m = rdw(q, end)
                if m is None:
                    return False
                q, k = q + m, k + 1
                if k >= DETECT_RECORDS:
                    return True
            p = end
        return k > 0

    r, v = rdw_chain(), vb_chain()
    return "vb" if v and not r else "rdw" if r and not v else "raw"


_BASES = {}


def _base(framing, rows, segment_bytes, block_bytes):
    key = (framing, rows, segment_bytes, block_bytes)
    if key not in _BASES:
        _BASES[key] = cdcfast.encode.generate(FMT, rows=rows, seed=rows, framing=framing,
                                              segment_bytes=segment_bytes,
                                              block_bytes=block_bytes, table_width=3)[0]
    return _BASES[key]


mutation = st.tuples(st.sampled_from(["set", "cut", "drop_front", "prepend"]),
                     st.integers(0, 12000), st.binary(min_size=1, max_size=4))
message = st.builds(lambda f, rows, seg, blk, muts: (f, rows, seg, blk, muts),
                    st.sampled_from(FRAMINGS), st.sampled_from([1, 2, 5, 16, 17, 40]),
                    st.sampled_from([None, 100]), st.sampled_from([300, 1500, 32760]),
                    st.lists(mutation, max_size=3))


def _mutate(buf, muts):
    buf = bytearray(buf)
    for kind, at, raw in muts:
        at = at % (len(buf) + 1)
        if kind == "set":
            buf[at:at + len(raw)] = raw
        elif kind == "cut":
            del buf[at:]
        elif kind == "drop_front":
            del buf[:at % 600]
        else:
            buf[:0] = raw
    return bytes(buf)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(message, min_size=1, max_size=8))
def test_detect_framing_follows_the_rule(msgs):
    """Many messages at once (the walk is vectorized over them): each gets what the rule,
    applied to it alone, says — valid streams, and streams with bytes set, cut or dropped."""
    bufs = [_mutate(_base(f, rows, seg, blk), muts) for f, rows, seg, blk, muts in msgs]
    data = b"".join(bufs)
    codes = lldf_format.detect_framing(data, [0, *itertools.accumulate(map(len, bufs))])
    assert [FRAMINGS[c] for c in codes] == [oracle(b) for b in bufs]
    for (f, _, _, _, muts), b in zip(msgs, bufs):
        if not muts:
            assert oracle(b) == f


@pytest.mark.parametrize("framing", ["rdw", "vb"])
def test_a_segment_numbered_zero_is_a_cut(framing):
    """Found by the split fuzz harness (fuzz/split.py, docs/reliability.md): a record with
    TOTALSEGS > 1 and SEGNUM 0 never continues a segmented record (it is an error alone,
    docs/lldf.md "Segments"), so a cut may go before it — the reference's walk cut there, the
    native one did not (it asked for SEGNUM 1). Both cut alike now, and the pieces decode to
    the rows of the whole."""
    data, cat, _ = generate(6, framing, block_bytes=700)
    fmt = Lldf(cat, framing=framing)
    starts = fmt.split_points(data, 1, False)
    assert len(starts) > 4
    buf = bytearray(data)
    for at in starts[2:-1]:             # every record (block) after the second: SEGNUM 0 of 2
        h = at + (8 if framing == "vb" else 4)
        buf[h + lldf_format.OFF_TOTALSEGS:h + lldf_format.OFF_TOTALSEGS + 2] = b"\x00\x02"
        buf[h + lldf_format.OFF_SEGNUM:h + lldf_format.OFF_SEGNUM + 2] = b"\x00\x00"
    data = bytes(buf)
    for step in (1, 200, 700):
        native, ref = fmt.split_points(data, step, True), fmt.split_points(data, step, False)
        assert native == ref, step
    cuts = fmt.split_points(data, 1, True)
    assert cuts == starts
    whole = cdcfast.headers(data, format=FMT, catalog=cat)
    assert whole.column("_error").null_count < whole.num_rows      # SEGNUM errors
    pieces = pa.concat_tables([cdcfast.headers(data[a:b], format=FMT, catalog=cat)
                               for a, b in zip(cuts, cuts[1:])])
    # (error texts name the byte in their own piece: compared without it)
    assert pieces.drop_columns(["seq", "_error"]).equals(whole.drop_columns(["seq", "_error"]))
    assert [e and e.split(" (message")[0] for e in pieces.column("_error").to_pylist()] == \
        [e and e.split(" (message")[0] for e in whole.column("_error").to_pylist()]
