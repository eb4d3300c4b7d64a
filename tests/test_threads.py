"""`threads=`: one call decoded in pieces on several threads gives what one thread gives —
rows, seq, message indexes and byte offsets in errors, last_stats, FAILFAST's first error —
(docs/performance.md, "Threads"). The pieces are made small here (PARALLEL_MIN, PIECE_MIN)
so inputs of a few hundred KB are cut into many, and every join path runs: a guessed cut
inside a string, a table the catalog lacks whose N a later piece fixes, a piece decoded
again from the state the pieces before it left."""
from __future__ import annotations

import os
import random
import threading

import pyarrow as pa
import pytest

import cdcfast
from cdcfast.encode import generate, ibm_delimited, lldf
from cdcfast import pieces as _pieces


@pytest.fixture
def small_pieces(monkeypatch):
    """Cut anything over 16 KB into pieces of about 8 KB; count what the join does."""
    monkeypatch.setattr(_pieces, "PARALLEL_MIN", 16 << 10)
    monkeypatch.setattr(_pieces, "PIECE_MIN", 4 << 10)
    monkeypatch.setattr(_pieces, "piece_bytes", lambda size, threads: 8 << 10)
    seen = {"pieces": 0, "open_end": 0, "unsure": 0, "again": 0}
    real = _pieces._decode

    def counting(decode, fmt, piece, want, carried, *rest):
        got = real(decode, fmt, piece, want, carried, *rest)
        seen["pieces"] += 1
        seen["open_end"] += piece.want.open_end
        seen["unsure"] += piece.want.unsure
        return got
    monkeypatch.setattr(_pieces, "_decode", counting)
    agrees = _pieces._agrees

    def counting_agrees(carried, w, fmt):
        ok = agrees(carried, w, fmt)
        seen["again"] += not ok
        return ok
    monkeypatch.setattr(_pieces, "_agrees", counting_agrees)
    return seen


def same_tables(a: dict, b: dict):
    assert a.keys() == b.keys()
    for k in a:
        assert a[k].schema == b[k].schema, k
        assert a[k].num_rows == b[k].num_rows, k
        assert a[k].equals(b[k]), k


def every_call(fmt, data, catalog=None, mode="PERMISSIVE", table=None, **options):
    """decode_tables, headers, read_batches (joined) and last_stats of each, on 1 and 3
    threads: equal."""
    out = {}
    for threads in (1, 3):
        dec = cdcfast.Decoder(fmt, catalog=catalog, mode=mode, threads=threads, **options)
        got = {"tables": dec.decode_tables(data)}
        got["stats"] = dict(dec.last_stats)
        got["headers"] = dec.headers(data)
        got["headers_stats"] = dict(dec.last_stats)
        if table is not None:
            got["batches"] = pa.concat_tables(       # (a layout typed by the data grows)
                [pa.Table.from_batches([b]) for b in dec.read_batches(data, table,
                                                                      batch_size=1000)],
                promote_options="permissive")
            got["batch_stats"] = dict(dec.last_stats)
        out[threads] = got
    one, many = out[1], out[3]
    same_tables(one["tables"], many["tables"])
    assert one["headers"].equals(many["headers"])
    for k in ("stats", "headers_stats", "batch_stats"):
        assert one.get(k) == many.get(k), k
    if table is not None:
        assert one["batches"].equals(many["batches"])
    return one


def test_ibm_delimited_with_a_catalog(small_pieces):
    data, cat = ibm_delimited.generate(3000, table_width=8, tables=3, seed=5)
    one = every_call("ibm-delimited", data, cat, table=cat.tables[0].name)
    assert small_pieces["pieces"] > 20
    assert one["stats"]["records"] == 3000
    seq = pa.concat_arrays([t.column("seq").combine_chunks() for t in one["tables"].values()])
    assert sorted(seq.to_pylist()) == list(range(3000))     # one message: 0 … n - 1


def corrupted(data: bytes, seed: int, every: int = 97) -> bytes:
    """Damage some records: a value that is not its type, a field count off, an
    unterminated string at the very end."""
    recs = data.split(b"\n")
    rnd = random.Random(seed)
    for i in range(0, len(recs) - 1, every):
        r = recs[i]
        k = rnd.randrange(3)
        if k == 0:
            recs[i] = r.replace(b",", b",zz", 1)
        elif k == 1:
            recs[i] = r + b",9"
        else:
            recs[i] = r[: len(r) // 2]
    return b"\n".join(recs) + b'\n10,"IBM","unterminated'


@pytest.mark.parametrize("mode", ["PERMISSIVE", "DROPMALFORMED"])
def test_ibm_delimited_errors_and_modes(small_pieces, mode):
    data, cat = ibm_delimited.generate(2500, table_width=6, tables=2, seed=7)
    bad = corrupted(data, 1)
    one = every_call("ibm-delimited", bad, cat, mode=mode, table=cat.tables[1].name)
    assert one["stats"]["errors"] > 20


def test_failfast_raises_the_earliest_error_in_input_order(small_pieces):
    data, cat = ibm_delimited.generate(2500, table_width=6, seed=3)
    recs = data.split(b"\n")
    # a bad value late, and one earlier: the earlier one wins, whichever thread is first
    recs[2000] = recs[2000].replace(b'"ISRT"', b'"XXXX"')
    recs[1500] = recs[1500].replace(b'"ISRT"', b'"YYYY"').replace(b'"REPL"', b'"YYYY"') \
        .replace(b'"DLET"', b'"YYYY"')
    bad = b"\n".join(recs)
    errors = {}
    for threads in (1, 3):
        dec = cdcfast.Decoder("ibm-delimited", catalog=cat, mode="FAILFAST", threads=threads)
        with pytest.raises(cdcfast.DecodeError) as e:
            dec.decode_tables(bad)
        errors[threads] = (str(e.value), e.value.message_index, e.value.byte_offset,
                           e.value.field)
        # (what last_stats counted before the raise goes by chunks of records, which the
        # pieces cut otherwise: docs/performance.md)
        assert 1000 <= dec.last_stats["records"] < 2500
    assert errors[1] == errors[3]
    assert "YYYY" in errors[1][0]
    assert errors[1][2] == bad.index(b'"YYYY"')


def test_a_guessed_cut_inside_a_string_is_joined_to_the_next_piece(small_pieces):
    """Strings holding record delimiters followed by lines that split like records: the
    guess (`guess_record_start`) takes some of them, the piece before tells (a string its
    end cut off), and the two pieces are decoded again as one."""
    fake = b"\n".join(b",".join(b"%d" % i for i in range(14)) for _ in range(3))
    cat = {"tables": [{"schema": "S", "table": "T",
                       "columns": [{"name": "A", "type": "INTEGER"},
                                   {"name": "B", "type": "VARCHAR(400)"}]}]}
    head = (b'10,"IBM","2006030","182318000005","S","T","ISRT","TX","0000",'
            b'"2006-06-30-18.00.52","P",0,')
    recs = [head + b',,%d,"x\n%s\ny"\n' % (i, fake) for i in range(2000)]
    data = b"".join(recs)
    from cdcfast import _ibm
    inside = _ibm.guess_record_start(data, b',\n"', len(recs[0]) + len(head) + 10)
    assert data[inside:inside + 2] == b"0,"           # a line inside the string: a wrong guess
    one = every_call("ibm-delimited", data, cat, table="S.T")
    assert small_pieces["open_end"] > 0
    t = one["tables"]["S.T"]
    assert t.num_rows == 2000 and t.column("_error").null_count == 2000
    assert t.column("after").combine_chunks().field("A").to_pylist() == list(range(2000))


HEAD = (b'10,"IBM","2006030","182318000005","S","%s","ISRT","TX","0000",'
        b'"2006-06-30-18.00.52","P",0,')


def test_ibm_delimited_without_a_catalog_n_fixed_across_pieces(small_pieces):
    """N of a table the catalog lacks is fixed by its first well-formed record of the call:
    a piece that met the table only in other shapes is decoded again from that N; a piece
    with no well-formed record of it relies on the rest of the part, which is then decoded
    in one go."""
    out = []
    for i in range(3000):
        if i < 400:
            out.append(HEAD % b"LATE" + b"broken\n")              # no N in the first pieces
        elif i % 500 == 0:
            out.append(HEAD % b"LATE" + b",%d,,%d\n" % (i, i))   # N = 2 from here on
        out.append(HEAD % b"T" + (b",%d\n" % i if i < 1500 else b",%d,,%d\n" % (i, i)))
    data = b"".join(out)
    one = every_call("ibm-delimited", data)
    assert small_pieces["unsure"] > 0
    late = one["tables"]["S.LATE"]
    assert late.schema.field("after").type.num_fields == 2
    t = one["tables"]["S.T"]
    assert t.schema.field("after").type.num_fields == 1       # its first record's N
    assert t.column("_error").null_count == 1500


def test_ibm_delimited_unsure_at_the_end_of_a_part(small_pieces):
    """The rest of a part decoded in one go while the next part's pieces are already
    decoding: those stay (a ChunkedArray's chunks are parts of one input)."""
    first = [HEAD % b"T" + b",%d\n" % i for i in range(560)]
    first += [HEAD % b"LATE" + b"broken\n" for _ in range(40)]
    second = [HEAD % b"LATE" + b",1,,2\n"] + [HEAD % b"T" + b",%d\n" % i for i in range(600)]
    src = pa.chunked_array([pa.array(first, pa.binary()), pa.array(second, pa.binary())])
    one = every_call("ibm-delimited", src)
    assert small_pieces["unsure"] > 0
    assert one["tables"]["S.LATE"].schema.field("after").type.num_fields == 2


def test_ibm_delimited_without_a_catalog_a_piece_decoded_again(small_pieces):
    """Pieces decoded at once each fix N of a table the catalog lacks by their own first
    record; where an earlier piece fixed another N, the later one is decoded again."""
    out = [HEAD % b"U" + b",0\n"]
    out += [HEAD % b"U" + b",%d,,%d\n" % (i, i) for i in range(1, 3000)]
    one = every_call("ibm-delimited", b"".join(out))
    assert small_pieces["again"] > 0
    u = one["tables"]["S.U"]
    assert u.schema.field("after").type.num_fields == 1
    assert u.column("_error").null_count == 1       # every later record: a field count off


def test_ibm_delimited_many_messages(small_pieces):
    msgs, cat = ibm_delimited.generate(3000, table_width=6, tables=2, seed=9, messages=True)
    msgs = [m if i % 50 else None for i, m in enumerate(msgs)]      # tombstones too
    every_call("ibm-delimited", msgs, cat, table=cat.tables[0].name)
    chunked = pa.chunked_array([pa.array(msgs[:700], pa.binary()),
                                pa.array(msgs[700:], pa.binary())])
    every_call("ibm-delimited", chunked, cat)


def test_lldf_stream_and_messages(small_pieces):
    data, cat = lldf.generate(1500, table_width=8, tables=2, seed=4, control=True)
    one = every_call("lldf", data, cat, table=cat.tables[0].name)
    assert small_pieces["pieces"] > 20
    msgs, cat = lldf.generate(1500, table_width=8, tables=2, seed=4, messages=True)
    every_call("lldf", msgs, cat, table=cat.tables[0].name)
    seq = pa.concat_arrays([t.column("seq").combine_chunks()
                            for t in one["tables"].values()]).to_pylist()
    assert sorted(seq)[:5] == [0, 1, 2, 3, 4]


def test_lldf_damaged(small_pieces):
    data, cat = lldf.generate(1500, table_width=8, seed=8)
    b = bytearray(data)
    rnd = random.Random(2)
    for _ in range(40):
        b[rnd.randrange(len(b))] ^= 0xFF
    every_call("lldf", bytes(b), cat, table=cat.tables[0].name)
    # a record whose LENGTH is below a header's: a span that cannot be framed, which loses
    # the rest of the stream on one thread — and so must the pieces after it (the piece
    # that meets it is joined to the next, and so on)
    from cdcfast import _lldf_frame
    from cdcfast.formats._lldf_codes import OFF_LENGTH
    starts = _lldf_frame.record_starts(data, "raw", len(data) // 3)
    b = bytearray(data)
    b[starts[1] + OFF_LENGTH:starts[1] + OFF_LENGTH + 2] = b"\x00\x07"
    one = every_call("lldf", bytes(b), cat, table=cat.tables[0].name)
    assert small_pieces["open_end"] > 0
    assert one["stats"]["records"] < 1000


@pytest.mark.parametrize("framing", ["rdw", "vb"])
def test_lldf_framings_and_segments(small_pieces, framing):
    data, cat = lldf.generate(1200, table_width=8, seed=6, framing=framing, segment_bytes=90)
    every_call("lldf", data, cat, table=cat.tables[0].name)
    b = bytearray(data)
    b[len(b) // 2] ^= 0x5A
    every_call("lldf", bytes(b), cat, table=cat.tables[0].name)


def test_lldf_guessed_cuts_are_record_starts():
    """guess_record_start lands where the framing walk from the start has a cut."""
    from cdcfast import _lldf_frame
    from cdcfast.formats import get
    for framing in ("raw", "rdw", "vb"):
        data, cat = lldf.generate(400, table_width=6, seed=2, framing=framing,
                                  segment_bytes=120)
        fmt = get("lldf")(cat, framing=framing)
        starts = set(_lldf_frame.record_starts(data, framing, 1))
        for off in range(1, len(data), len(data) // 37):
            g = _lldf_frame.guess_record_start(data, framing, fmt.asc, off)
            assert g == len(data) or g in starts, (framing, off, g)
            assert g >= off


def test_lldf_order_commit_streams_on_one_thread(small_pieces):
    data, cat = lldf.generate(1500, table_width=4, seed=1)
    dec = cdcfast.Decoder("lldf", catalog=cat, threads=3, order="commit")
    assert dec._fmt.streaming_threads(3) == 1
    every_call("lldf", data, cat, table=cat.tables[0].name, order="commit")


@pytest.mark.parametrize("fmt", ["ibm-delimited", "lldf", "debezium", "olr", "qlik"])
def test_one_decoder_from_several_threads(small_pieces, fmt):
    """A Decoder serves several Python threads at once (every kernel runs without the GIL,
    each call on its own kernel state); last_stats is each thread's own."""
    inputs = [generate(fmt, rows=400 + 300 * i, table_width=5, seed=i) for i in range(4)]
    cat = inputs[0][1]
    dec = cdcfast.Decoder(fmt, catalog=cat, threads=2)
    one = cdcfast.Decoder(fmt, catalog=cat, threads=1)
    want, want_stats = [], []
    for d, _ in inputs:
        want.append(one.decode_tables(d))
        want_stats.append(dict(one.last_stats))
    got, stats, failures = {}, {}, []

    def work(i):
        try:
            for _ in range(3):
                got[i] = dec.decode_tables(inputs[i][0])
                stats[i] = dict(dec.last_stats)
        except Exception as e:          # reported below
            failures.append(e)
    ts = [threading.Thread(target=work, args=(i,)) for i in range(4)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    assert not failures
    for i in range(4):
        same_tables(got[i], want[i])
        assert stats[i] == want_stats[i]
        assert stats[i]["records"] >= 400 + 300 * i     # (JSON formats: control events too)


def test_threads_argument():
    with pytest.raises(ValueError, match="threads"):
        cdcfast.Decoder("ibm-delimited", threads=0)
    with pytest.raises(ValueError, match="threads"):
        cdcfast.decode(b"", "ibm-delimited", threads=True)
    dec = cdcfast.Decoder("ibm-delimited", threads=None)
    assert dec._threads(None) == _pieces.cores() >= 1
    assert dec._threads(2) == 2
    assert cdcfast.Decoder.from_config(dec.config()).threads is None
    assert cdcfast.Decoder.from_config({**dec.config(), "threads": 3}).threads == 3


def test_spark_tasks_decode_on_one_thread():
    pytest.importorskip("pyspark")
    from cdcfast import spark
    dec = cdcfast.Decoder("ibm-delimited", threads=4)
    import json
    assert spark._decoder(json.dumps(dec.config(), sort_keys=True)).threads == 1


def test_a_decoder_pickles_without_its_thread_state():
    import pickle
    dec = cdcfast.Decoder("ibm-delimited", threads=2)
    dec.decode_tables(b"")
    copy = pickle.loads(pickle.dumps(dec))
    assert copy.threads == 2 and copy.last_stats["records"] == 0


def test_read_batches_of_a_mapped_file_gives_pages_back(small_pieces, tmp_path,
                                                        pages_given_back):
    """On several threads too, a mapped file's pages behind the pieces handed out are given
    back as the batches go (else RSS would grow with the file: each piece alone is too small
    to give back its own)."""
    data, cat = lldf.generate(1500, table_width=8, seed=12, framing="rdw")
    path = tmp_path / "x.lldf"
    path.write_bytes(data)
    released = pages_given_back(_pieces)
    want = cdcfast.decode(data, format="lldf", catalog=cat, table=cat.tables[0].name,
                          framing="rdw", threads=1)
    batches = list(cdcfast.read_batches(str(path), format="lldf", catalog=cat,
                                        table=cat.tables[0].name, batch_size=100,
                                        framing="rdw", threads=3))
    assert len(released) > 3 and released == sorted(released)
    assert pa.Table.from_batches(batches).equals(want)


# -- the JSON formats ---------------------------------------------------------------------------
def damaged_lines(data: bytes, seed: int, every: int = 61) -> bytes:
    """Damage some documents: one cut short, one whose value is not its type."""
    lines = data.split(b"\n")
    rnd = random.Random(seed)
    for i in range(3, len(lines) - 1, every):
        if rnd.randrange(2):
            lines[i] = lines[i][: len(lines[i]) // 2]
        else:
            lines[i] = lines[i].replace(b'"ID":', b'"ID":"x', 1).replace(b'"x', b'"x"', 1) \
                if b'"ID":' in lines[i] else lines[i][:-1]
    return b"\n".join(lines)


@pytest.mark.parametrize("schemas", [False, True])
def test_debezium_with_and_without_a_catalog(small_pieces, schemas):
    data, cat = generate("debezium", 1500, table_width=6, tables=3, seed=11, schemas=schemas,
                         tombstones=True)
    one = every_call("debezium", data, cat, table=cat.tables[0].name)
    assert small_pieces["pieces"] > 20
    assert one["stats"]["records"] > 1500          # (BEGIN/END events too)
    if schemas:             # layouts from the embedded schemas: each piece fixes its own
        every_call("debezium", data, None, table=cat.tables[0].name)
        before = small_pieces["again"]
        cdcfast.Decoder("debezium", threads=3).decode_tables(data)
        assert small_pieces["again"] == before      # ... equal to the earlier pieces'


def test_debezium_seq_keeps_the_vendors_order_and_counts_the_rest(small_pieces):
    """seq is transaction.total_order where the event has one, else its ordinal in the call:
    only ordinals move by the records of the pieces before."""
    data, cat = generate("debezium", 1200, table_width=4, seed=2, transactions=True)
    lines = data.split(b"\n")
    # a stretch without transaction blocks in the middle: ordinals there
    for i in range(500, 700):
        lines[i] = lines[i].replace(b'"transaction":{', b'"transaction_":{')
    data = b"\n".join(lines)
    one = every_call("debezium", data, cat, table=cat.tables[0].name)
    t = one["headers"]
    seq, txid = t.column("seq").to_pylist(), t.column("txid").to_pylist()
    ordinal = [i for i in range(len(seq)) if seq[i] == i]
    assert len(ordinal) > 100                       # the stretch, counted in the call
    assert any(seq[i] != i for i in range(len(seq)))     # total_order elsewhere


@pytest.mark.parametrize("mode", ["PERMISSIVE", "DROPMALFORMED"])
@pytest.mark.parametrize("fmt", ["debezium", "olr", "qlik"])
def test_json_errors_and_modes(small_pieces, fmt, mode):
    data, cat = generate(fmt, 1500, table_width=5, tables=2, seed=5)
    bad = damaged_lines(data, 3)
    one = every_call(fmt, bad, cat, mode=mode, table=cat.tables[1].name)
    assert one["stats"]["errors"] > 10


@pytest.mark.parametrize("fmt", ["debezium", "olr", "qlik"])
def test_json_failfast_raises_the_earliest_error(small_pieces, fmt):
    data, cat = generate(fmt, 1500, table_width=5, seed=8)
    lines = data.split(b"\n")
    lines[1200] = lines[1200][:20]
    lines[900] = lines[900][:30]
    bad = b"\n".join(lines)
    errors = {}
    for threads in (1, 3):
        dec = cdcfast.Decoder(fmt, catalog=cat, mode="FAILFAST", threads=threads)
        with pytest.raises(cdcfast.DecodeError) as e:
            dec.decode_tables(bad)
        errors[threads] = (str(e.value), e.value.message_index, e.value.byte_offset,
                           e.value.field)
    assert errors[1] == errors[3]
    start = len(b"\n".join(lines[:900])) + 1             # in the earlier damaged document
    assert start <= errors[1][2] <= start + len(lines[900])


@pytest.mark.parametrize("md", [True, False])
def test_qlik_metadata_and_derived_layouts_across_pieces(small_pieces, md):
    """Without a catalog: the metadata messages met in earlier pieces name and describe the
    tables of later ones; without them, layouts typed by the data grow across pieces."""
    data, cat = generate("qlik", 1500, table_width=6, tables=3, seed=4, md=md,
                         form="kafka" if md else "pubsub")
    if not md:              # columns met late, in several pieces at once
        lines = data.split(b"\n")
        for i in range(len(lines) * 3 // 4, len(lines), 3):
            lines[i] = lines[i].replace(b'"data":{', b'"data":{"LATE_%d":"x",' % (i % 4), 1)
        data = b"\n".join(lines)
    for catalog in (cat, None):
        every_call("qlik", data, catalog, table=cat.tables[2].name)
    assert small_pieces["pieces"] > 20
    if not md:
        assert small_pieces["again"] > 0    # a piece whose layout grew otherwise: again


def test_json_many_messages(small_pieces):
    for fmt in ("debezium", "olr", "qlik"):
        msgs, cat = generate(fmt, 2000, table_width=5, tables=2, seed=9, messages=True)
        every_call(fmt, msgs, cat, table=cat.tables[0].name)


@pytest.mark.parametrize("catalog", [True, False])
def test_olr_carry_forward_across_pieces(small_pieces, catalog):
    """scn and tm are sent on a transaction's first message only: a piece that starts inside
    a transaction takes them from the bytes before it (a guess the join checks)."""
    data, cat = generate("olr", 1500, table_width=5, tables=2, seed=6)
    assert data.count(b'"scns"') < data.count(b'"xid"') / 2
    one = every_call("olr", data, cat if catalog else None, table=cat.tables[0].name)
    assert one["tables"][cat.tables[0].name].column("commit_ts").null_count == 0
    assert small_pieces["pieces"] > 20
    if catalog:             # (without: a piece whose layout typed by the data grew otherwise
        assert small_pieces["again"] == 0       # than the pieces' before it: again)


def test_olr_long_transactions_decoded_again(small_pieces, monkeypatch):
    """A transaction begun before what a piece's guess reads: the piece relied on other
    carried values than the pieces before it left, and is decoded again."""
    from cdcfast.formats import olr
    monkeypatch.setattr(olr, "SPECULATE_BYTES", 64)
    data, cat = generate("olr", 1200, table_width=4, seed=12, records_per_txn=(20, 40))
    every_call("olr", data, cat, table=cat.tables[0].name)
    assert small_pieces["again"] > 0


def test_piece_sizes_give_every_thread_as_many_pieces_as_few_as_fit():
    mb = 1 << 20
    step = _pieces.piece_bytes
    assert step(100 * mb, 2) == 50 * mb + 1                 # one a thread
    assert step(100 * mb, 4) == 25 * mb + 1
    assert step(8 * mb, 16) == _pieces.PIECE_MIN            # never below PIECE_MIN
    # over threads × PIECE_MAX: the same number of pieces a thread, each at most PIECE_MAX
    s = step(1000 * mb, 2)
    assert s <= _pieces.PIECE_MAX and -(-1000 * mb // s) == 16
    s = step(129 * mb, 2)                                   # just over: two a thread
    assert -(-129 * mb // s) == 4


@pytest.mark.skipif(not hasattr(os, "fork"), reason="fork: POSIX only")
def test_the_worker_pool_is_started_once_and_again_in_a_forked_child(small_pieces):
    """Calls share the process's pool of workers; a forked child (Spark forks its Python
    workers) has none of the parent's threads and starts its own."""
    data, cat = lldf.generate(1500, table_width=8, seed=4)
    dec = cdcfast.Decoder("lldf", catalog=cat, threads=2)
    want = cdcfast.Decoder("lldf", catalog=cat, threads=1).decode_tables(data)
    same_tables(dec.decode_tables(data), want)
    pool = _pieces._pools[2]
    same_tables(dec.decode_tables(data), want)
    assert _pieces._pools[2] is pool and small_pieces["pieces"] > 4
    pid = os.fork()
    if pid == 0:                                            # the child: report by exit code
        code = 1
        try:
            got = dec.decode_tables(data)
            code = 0 if (got.keys() == want.keys() and all(got[k].equals(want[k]) for k in got)
                         and _pieces._pools[2] is not pool) else 2
        finally:
            os._exit(code)
    _, status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(status) == 0
