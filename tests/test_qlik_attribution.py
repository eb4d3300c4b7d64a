"""Which table a Qlik data message belongs to (SPEC §5.5, docs/qlik.md "The table of a data
message"; issue 20, items 1 and 2).

A Kafka data message names its table by `messageSchemaId`: the metadata (MD) message of the
input with that `schemaId`, else a catalog built by Catalog.from_qlik, which keeps each table's
schema ids. When the id is set but resolves to nothing the message is unattributable — never
given the `table` argument, which is only for messages whose messageSchemaId is null. In
headers() without a table such a null-id message is listed with its header fields, no
schema/table and no error.

The data: two tables' messages with the MD messages first, then the DT messages; partitions,
files or calls that hold only DT messages. Native and reference decoders agree exactly; the
Spark layer (mapInArrow, the data source) and the CLI go through the same rule.
"""
from __future__ import annotations

import collections
import json
import pathlib
from dataclasses import replace

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import cdcfast
from conftest import shared_path
import cdcfast.reference
from cdcfast import Catalog, DecodeError

FMT = "qlik"
T1, T2 = "GEN.TABLE_1", "GEN.TABLE_2"
DECODERS = [pytest.param(cdcfast, id="native"), pytest.param(cdcfast.reference, id="reference")]
LACKS = ("names metadata this input lacks: no metadata message before it and no catalog "
         "table has that schemaId; give a catalog built with cdcfast.Catalog.from_qlik over the "
         "metadata (MD) messages")
PEER = ("peer-data", "qlik", "globant_tests_dataflow-update.json")


def two_tables(rows=40, seed=11, width=6):
    """(MD messages, DT messages, catalog from Catalog.from_qlik over the MD messages, the
    generator's catalog without schema ids, the table of each DT message)."""
    msgs, gen_cat = cdcfast.encode.generate(FMT, rows=rows, tables=2, table_width=width,
                                            seed=seed, messages=True)
    md = [m for m in msgs if json.loads(m)["type"] == "MD"]
    dt = [m for m in msgs if json.loads(m)["type"] == "DT"]
    assert len(md) == 2 and len(dt) == rows
    ids = {}
    for m in md:
        body = json.loads(m)["message"]
        ids[body["schemaId"]] = f"{body['lineage']['schema']}.{body['lineage']['table']}"
    owner = [ids[json.loads(m)["messageSchemaId"]] for m in dt]
    bare = Catalog([replace(t, qlik_schema_ids=()) for t in gen_cat])
    return md, dt, Catalog.from_qlik(md), bare, owner


def both(fn, *args, **kw):
    """fn of cdcfast and of cdcfast.reference: equal; the native one's result."""
    got = [getattr(dec, fn)(*args, **kw) for dec in (cdcfast, cdcfast.reference)]
    if isinstance(got[0], dict):
        assert got[0].keys() == got[1].keys()
        for k in got[0]:
            assert got[0][k].equals(got[1][k]), k
    else:
        assert got[0].equals(got[1])
    return got[0]


def md_message(schema_id, table, columns, version=1, schema="SRC") -> bytes:
    cols = {c: {"ordinal": i + 1, "type": t, "length": 20, "precision": 0, "scale": 0,
                "primaryKeyPosition": int(i == 0)} for i, (c, t) in enumerate(columns)}
    return json.dumps({
        "magic": "atMSG", "type": "MD", "headers": None, "messageSchemaId": None,
        "messageSchema": None, "message": {
            "schemaId": schema_id, "lineage": {"server": "s", "task": "t", "schema": schema,
                                               "table": table, "tableVersion": version,
                                               "timestamp": "2023-01-01T00:00:00.000"},
            "tableStructure": {"tableColumns": cols}}}).encode()


def dt_message(schema_id, data, op="INSERT", counter=1) -> bytes:
    return json.dumps({
        "magic": "atMSG", "type": "DT", "headers": None, "messageSchemaId": schema_id,
        "messageSchema": None, "message": {"data": data, "beforeData": None, "headers": {
            "operation": op, "changeSequence": "20230101000000000000000000000000001",
            "timestamp": "2023-01-01T00:00:01.500", "streamPosition": "p1",
            "transactionId": "AB01", "changeMask": "01", "columnMask": "03",
            "transactionEventCounter": counter, "transactionLastEvent": True}}}).encode()


# -- the catalog keeps the schema ids --------------------------------------------------------

def test_from_qlik_keeps_every_schema_id_and_round_trips(tmp_path):
    """Each tableVersion has its own schemaId: the table keeps all of them, in the order met,
    and to_dict/save/load/from_dict carry them."""
    msgs = [md_message("a1", "ORDERS", [("ID", "INT4"), ("NOTE", "STRING")]),
            md_message("b1", "ITEMS", [("ID", "INT4")]),
            md_message("a2", "ORDERS", [("ID", "INT4"), ("NOTE", "STRING"), ("QTY", "INT2")],
                       version=2)]
    cat = Catalog.from_qlik(msgs)
    orders, items = cat.get("SRC.ORDERS"), cat.get("SRC.ITEMS")
    assert orders.qlik_schema_ids == ("a1", "a2") and items.qlik_schema_ids == ("b1",)
    assert [c.name for c in orders.columns] == ["ID", "NOTE", "QTY"]     # the latest version
    assert cat.qlik_table("a1") is orders and cat.qlik_table("a2") is orders
    assert cat.qlik_table("b1") is items and cat.qlik_table("zz") is None
    d = cat.to_dict()
    assert [t["qlik_schema_ids"] for t in d["tables"]] == [["a1", "a2"], ["b1"]]
    path = tmp_path / "cat.json"
    cat.save(path)
    assert json.loads(path.read_text())["tables"][0]["qlik_schema_ids"] == ["a1", "a2"]
    back = Catalog.load(path)
    assert back.to_dict() == d and back.qlik_table("a2").name == "SRC.ORDERS"
    assert Catalog.from_dict(d).get("SRC.ITEMS").qlik_schema_ids == ("b1",)


def test_older_catalogs_and_bad_schema_ids():
    old = {"tables": [{"schema": "SRC", "table": "ORDERS",
                       "columns": [{"name": "ID", "type": "INTEGER"}]}]}
    cat = Catalog.from_dict(old)
    assert cat.get("SRC.ORDERS").qlik_schema_ids == () and cat.qlik_table("a1") is None
    assert cat.to_dict() == old                          # nothing added to an older catalog
    with pytest.raises(ValueError, match="table SRC.ORDERS: 'qlik_schema_ids' is not a list"):
        Catalog.from_dict({"tables": [{**old["tables"][0], "qlik_schema_ids": "a1"}]})
    twice = {"tables": [{**old["tables"][0], "qlik_schema_ids": ["a1"]},
                        {"table": "OTHER", "columns": [], "qlik_schema_ids": ["a1"]}]}
    with pytest.raises(ValueError, match="qlik schema id 'a1' under tables SRC.ORDERS and OTHER"):
        Catalog.from_dict(twice)


def test_generated_catalog_has_the_schema_ids_of_its_metadata_messages():
    md, dt, cat, bare, owner = two_tables()
    msgs, gen_cat = cdcfast.encode.generate(FMT, rows=40, tables=2, table_width=6, seed=11,
                                            messages=True)
    assert {t.name: t.to_dict() for t in gen_cat} == \
        {t.name: t.to_dict() for t in Catalog.from_qlik(msgs)}
    assert {t.name: t.qlik_schema_ids for t in gen_cat} == \
        {t.name: t.qlik_schema_ids for t in cat}
    assert all(len(t.qlik_schema_ids) == 1 for t in cat)


# -- Python: DT messages without their MD messages --------------------------------------------

def test_unresolved_schema_id_is_never_given_the_table_argument():
    """The issue's case: DT messages of two tables whose MD messages this input lacks,
    decoded with table=GEN.TABLE_1 and a catalog without schema ids: none is taken for
    TABLE_1; each is unattributable, its raw message kept and the error saying what to pass."""
    md, dt, cat, bare, owner = two_tables()
    got = both("decode", dt, format=FMT, catalog=bare, table=T1)
    assert got.num_rows == len(dt) == 40
    assert got.column("table").null_count == got.column("schema").null_count == 40
    assert got.column("_corrupt_record").to_pylist() == dt
    for i, (m, e) in enumerate(zip(dt, got.column("_error").to_pylist())):
        sid = json.loads(m)["messageSchemaId"]
        pos = m.index(f'"{sid}"'.encode())
        assert e == f"messageSchemaId: '{sid}' {LACKS} (message {i}, byte {pos})"
    assert got.column("op").null_count == 40
    tables = both("decode_tables", dt, format=FMT, catalog=bare)
    assert list(tables) == [None] and tables[None].num_rows == 40
    assert tables[None].column("_error").to_pylist() == got.column("_error").to_pylist()
    # without any catalog, alike
    none = both("decode_tables", dt, format=FMT)
    assert list(none) == [None] and none[None].num_rows == 40
    # FAILFAST names the field and the byte; DROPMALFORMED drops them all
    for dec in (cdcfast, cdcfast.reference):
        with pytest.raises(DecodeError) as e:
            dec.decode(dt, format=FMT, catalog=bare, table=T1, mode="FAILFAST")
        assert (e.value.field, e.value.message_index) == ("messageSchemaId", 0)
        d = dec.Decoder(FMT, catalog=bare, mode="DROPMALFORMED")
        assert d.decode(dt, table=T1).num_rows == 0 and d.last_stats["dropped"] == 40


def test_a_from_qlik_catalog_names_the_tables_without_the_md_messages():
    """With Catalog.from_qlik over the MD messages, the DT messages alone decode as the
    whole stream (MD messages first) does."""
    md, dt, cat, bare, owner = two_tables()
    counts = collections.Counter(owner)
    assert counts[T1] > 5 and counts[T2] > 5
    tables = both("decode_tables", dt, format=FMT, catalog=cat)
    assert set(tables) == {T1, T2}                       # nothing under None
    whole = both("decode_tables", md + dt, format=FMT, catalog=bare)
    for t in (T1, T2):
        assert tables[t].num_rows == counts[t]
        assert tables[t].column("_error").null_count == counts[t]
        assert set(tables[t].column("table").to_pylist()) == {t.split(".")[1]}
        assert tables[t].column("after").to_pylist() == whole[t].column("after").to_pylist()
        assert tables[t].column("seq").to_pylist() == whole[t].column("seq").to_pylist()
        one = both("decode", dt, format=FMT, catalog=cat, table=t)
        assert one.equals(tables[t])
    heads = both("headers", dt, format=FMT, catalog=cat)
    assert heads.column("_error").null_count == 40
    assert [f"{s}.{t}" for s, t in zip(heads.column("schema").to_pylist(),
                                       heads.column("table").to_pylist())] == owner


def test_the_input_metadata_comes_first_then_the_catalog():
    """A schemaId the input's MD message gives wins over the catalog's; ids of older table
    versions in the catalog still name their table."""
    cat = Catalog.from_qlik([md_message("a1", "ORDERS", [("ID", "INT4"), ("NOTE", "STRING")]),
                             md_message("a2", "ORDERS", [("ID", "INT4"), ("NOTE", "STRING")],
                                        version=2)])
    msgs = [dt_message("a1", {"ID": "1", "NOTE": "x"}),
            dt_message("a2", {"ID": "2", "NOTE": "y"}, counter=2)]
    got = both("decode_tables", msgs, format=FMT, catalog=cat)
    assert list(got) == ["SRC.ORDERS"]
    assert got["SRC.ORDERS"].column("after").to_pylist() == [{"ID": 1, "NOTE": "x"},
                                                            {"ID": 2, "NOTE": "y"}]
    assert got["SRC.ORDERS"].column("_error").null_count == 2
    # an MD message of the input that gives "a1" to another table names it first
    moved = [md_message("a1", "OTHER", [("ID", "INT4"), ("NOTE", "STRING")])] + msgs
    got = both("decode_tables", moved, format=FMT, catalog=cat)
    assert {k: t.num_rows for k, t in got.items()} == {"SRC.OTHER": 1, "SRC.ORDERS": 1}
    assert got["SRC.OTHER"].column("after").to_pylist() == [{"ID": 1, "NOTE": "x"}]


def test_null_schema_id_takes_the_table_argument_and_a_set_one_never():
    """In one input: a message with a null messageSchemaId is the `table` argument's; one
    whose id resolves is its table's; one whose id resolves to nothing is unattributable."""
    cat = Catalog.from_qlik([md_message("a1", "ORDERS", [("ID", "INT4"), ("NOTE", "STRING")])])
    cat = Catalog(list(cat) + [Catalog.from_dict({"tables": [{
        "schema": "SRC", "table": "PLAIN", "columns": [{"name": "ID", "type": "INTEGER"}]}]}
    ).tables[0]])
    msgs = [dt_message(None, {"ID": "7"}), dt_message("a1", {"ID": "1", "NOTE": "x"}),
            dt_message("nope", {"ID": "9"})]
    plain = both("decode", msgs, format=FMT, catalog=cat, table="SRC.PLAIN")
    assert plain.column("table").to_pylist() == ["PLAIN", None]
    assert plain.column("after").to_pylist() == [{"ID": 7}, None]
    assert plain.column("_error").to_pylist()[0] is None
    pos = msgs[2].index(b'"nope"')
    assert plain.column("_error").to_pylist()[1] == \
        f"messageSchemaId: 'nope' {LACKS} (message 2, byte {pos})"
    orders = both("decode", msgs, format=FMT, catalog=cat, table="SRC.ORDERS")
    assert orders.column("table").to_pylist() == ["ORDERS", "ORDERS", None]
    assert orders.column("after").to_pylist() == [{"ID": 7, "NOTE": None},
                                                  {"ID": 1, "NOTE": "x"}, None]
    tables = both("decode_tables", msgs, format=FMT, catalog=cat)
    assert {k: t.num_rows for k, t in tables.items()} == {"SRC.ORDERS": 1, None: 2}
    assert [e.rsplit(" (message", 1)[0] for e in tables[None].column("_error").to_pylist()] == [
        "messageSchemaId: null, and the message names no table; pass table=…",
        f"messageSchemaId: 'nope' {LACKS}"]


# -- headers() of messages that name no table ---------------------------------------------------

def test_headers_list_null_schema_id_messages_without_error():
    """A stream without MD messages (messageSchemaId null): headers() gives every record's
    header fields with schema/table null and no error; with table= they are that table's."""
    msgs, cat = cdcfast.encode.generate(FMT, rows=30, tables=1, table_width=5, seed=2,
                                        messages=True, md=False)
    assert all(json.loads(m)["messageSchemaId"] is None for m in msgs)
    h = both("headers", msgs, format=FMT)
    named = both("headers", msgs, format=FMT, table=T1)
    assert h.num_rows == named.num_rows == 30
    assert h.column("_error").null_count == 30 and h.column("_corrupt_record").null_count == 30
    assert h.column("schema").null_count == h.column("table").null_count == 30
    assert set(named.column("table").to_pylist()) == {"TABLE_1"}
    rest = [c for c in h.column_names if c not in ("schema", "table")]
    assert h.select(rest).equals(named.select(rest))
    assert h.column("op").null_count == 0 and set(h.column("op").to_pylist()) >= {"c", "u"}
    assert h.column("source").null_count == 0
    cdc = h.filter(pa.compute.not_equal(h.column("op"), "r"))
    assert cdc.num_rows > 10
    for c in ("txid", "commit_ts", "change_ts", "commit_pos", "change_pos"):
        assert cdc.column(c).null_count == 0, c
    events, _ = cdcfast.encode.events(FMT, rows=30, tables=1, table_width=5, seed=2, md=False)
    assert h.column("seq").to_pylist() == [e["seq"] for e in events]
    assert h.column("txid").to_pylist() == [e["txid"] for e in events]
    # decode_tables still cannot place them: unattributable, saying to pass table=
    got = both("decode_tables", msgs, format=FMT)
    assert list(got) == [None] and got[None].num_rows == 30


def test_headers_of_the_real_message():
    """The peer-data Kafka message ("messageSchemaId": null) in headers(): every header
    field as sent."""
    data = shared_path(*PEER).read_bytes()    # skips without ../shared (fails in CI)
    r, = both("headers", data, format=FMT).to_pylist()
    assert (r["op"], r["source_op"], r["schema"], r["table"]) == ("u", "UPDATE", None, None)
    assert r["txid"] == "0000000066DA0202A903000000000000"
    assert r["commit_pos"] == r["change_pos"] == b"20230321213416580000000000000000017"
    assert r["commit_ts"].isoformat() == "2023-03-21T21:34:19.511000+00:00" == \
        r["change_ts"].isoformat()
    assert (r["seq"], r["source"]["change_mask"], r["source"]["column_mask"]) == \
        (1, "008080", "00FFFF")
    assert r["source"]["operation"] == "UPDATE" and r["source"]["transaction_last_event"]
    assert r["_error"] is None and r["_corrupt_record"] is None


def test_headers_of_a_mixed_input():
    """headers() lists every record: named ones with their table, null-id and Pub/Sub
    messages without a table with no error, an unresolved id as an unattributable record."""
    md = md_message("a1", "ORDERS", [("ID", "INT4"), ("NOTE", "STRING")])
    pubsub = json.dumps({"headers": {"operation": "DELETE", "transactionId": "T9",
                                     "transactionEventCounter": "4"},
                         "data": {"ID": "3"}}).encode()
    msgs = [md, dt_message("a1", {"ID": "1", "NOTE": "x"}), dt_message(None, {"ID": "2"}),
            dt_message("nope", {"ID": "9"}), pubsub]
    h = both("headers", msgs, format=FMT)
    rows = h.to_pylist()
    assert [(r["op"], r["table"], r["txid"], r["seq"]) for r in rows] == [
        ("c", "ORDERS", "AB01", 1), ("c", None, "AB01", 1), (None, None, None, 2),
        ("d", None, "T9", 4)]
    assert [r["_error"] is None for r in rows] == [True, True, False, True]
    assert rows[2]["_error"].startswith("messageSchemaId: 'nope' " + LACKS)
    assert rows[2]["_corrupt_record"] == msgs[3]
    assert rows[1]["source"]["column_mask"] == "03" and rows[1]["source"]["stream_position"] == "p1"


# -- Spark: a DataFrame of messages in 2 partitions, the MD messages in the first -------------

def split_df(spark, msgs):
    """A DataFrame (offset, value) of msgs in 2 partitions, in order; the partition sizes."""
    rdd = spark.sparkContext.parallelize([(1000 + i, m) for i, m in enumerate(msgs)], 2)
    df = spark.createDataFrame(rdd, "offset long, value binary")
    sizes = df.rdd.glom().map(len).collect()
    assert len(sizes) == 2 and min(sizes) > 10
    return df, sizes


def spark_counts(tables: dict) -> dict:
    """Rows of each DataFrame of cs.decode_tables, in one Spark job."""
    from functools import reduce

    from pyspark.sql import functions as F
    keyed = [df.select(F.lit(k if k is not None else "None").alias("k")) for k, df in
             tables.items()]
    got = {r.k: r["count"] for r in reduce(lambda a, b: a.unionByName(b), keyed)
           .groupBy("k").count().collect()}
    return {k: got.get(k if k is not None else "None", 0) for k in tables}


def test_spark_partition_without_the_md_messages(spark):
    from cdcfast import spark as cs
    md, dt, cat, bare, owner = two_tables()
    msgs = md + dt                          # MD messages for both, then the DT messages
    df, sizes = split_df(spark, msgs)
    second = msgs[sizes[0]:]
    assert not any(json.loads(m)["type"] == "MD" for m in second)
    counts = collections.Counter(owner)
    first_counts = collections.Counter(owner[:sizes[0] - len(md)])
    # a from_qlik catalog: every event under its own table
    got = cs.decode(df, format=FMT, catalog=cat, table=T1, keep=["offset"]).toArrow()
    assert got.num_rows == counts[T1]
    assert set(got.column("table").to_pylist()) == {"TABLE_1"}
    assert got.column("_error").null_count == got.num_rows
    assert sorted(got.column("offset").to_pylist()) == \
        [1000 + len(md) + i for i, t in enumerate(owner) if t == T1]
    tables = cs.decode_tables(df, format=FMT, catalog=cat)
    assert set(tables) == {T1, T2, None}
    assert spark_counts(tables) == {T1: counts[T1], T2: counts[T2], None: 0}
    # a catalog without schema ids: the second partition's events are unattributable, not
    # TABLE_1's
    got = cs.decode(df, format=FMT, catalog=bare, table=T1).toArrow()
    labelled = got.filter(pa.compute.is_valid(got.column("table")))
    lost = got.filter(pa.compute.is_null(got.column("table")))
    assert labelled.num_rows == first_counts[T1]
    assert labelled.column("_error").null_count == labelled.num_rows
    assert lost.num_rows == len(second)
    assert sorted(lost.column("_corrupt_record").to_pylist()) == sorted(second)
    assert all(LACKS in e and "(message 0, byte " in e for e in lost.column("_error").to_pylist())
    tables = cs.decode_tables(df, format=FMT, catalog=bare)
    assert spark_counts(tables) == {T1: first_counts[T1], T2: first_counts[T2],
                                    None: len(second)}


def test_data_source_file_without_the_md_messages(spark, tmp_path):
    """Two files, the second holding DT messages only: with the from_qlik catalog file each
    table's events come back from both; without schema ids the second file's are
    unattributable, never the `table` option's."""
    from cdcfast import spark as cs
    cs.register(spark)
    md, dt, cat, bare, owner = two_tables(seed=12)
    folder = tmp_path / "in"
    folder.mkdir()
    half = len(dt) // 2
    (folder / "a.json").write_bytes(b"\n".join(md + dt[:half]) + b"\n")
    (folder / "b.json").write_bytes(b"\n".join(dt[half:]) + b"\n")
    cat_path, bare_path = tmp_path / "cat.json", tmp_path / "bare.json"
    cat.save(cat_path)
    bare.save(bare_path)
    counts = collections.Counter(owner)
    for t in (T1, T2):
        df = spark.read.format("cdcfast").option("format", FMT) \
            .option("catalog", str(cat_path)).option("table", t).load(str(folder))
        got = df.toArrow()
        assert got.num_rows == counts[t]
        assert set(got.column("table").to_pylist()) == {t.split(".")[1]}
        assert got.column("_error").null_count == got.num_rows
    got = spark.read.format("cdcfast").option("format", FMT).option("catalog", str(bare_path)) \
        .option("table", T1).load(str(folder)).toArrow()
    labelled = got.filter(pa.compute.is_valid(got.column("table")))
    assert labelled.num_rows == collections.Counter(owner[:half])[T1]
    lost = got.filter(pa.compute.is_null(got.column("table")))
    assert lost.num_rows == len(dt) - half
    assert all(e.startswith("messageSchemaId: '") and LACKS in e
               for e in lost.column("_error").to_pylist())


# -- the CLI -----------------------------------------------------------------------------------

def parquet_counts(folder) -> collections.Counter:
    """Rows per `schema.table` (None: no table) over every Parquet file the CLI wrote."""
    out = collections.Counter()
    for p in sorted(pathlib.Path(folder).glob("*.parquet")):
        t = pq.read_table(p, columns=["schema", "table"])
        for s, n in zip(t.column("schema").to_pylist(), t.column("table").to_pylist()):
            out[f"{s}.{n}" if n is not None else None] += 1
    return out


def test_cli_decode_file_without_the_md_messages(tmp_path):
    from cdcfast.cli import main
    md, dt, cat, bare, owner = two_tables(seed=13)
    path = tmp_path / "dt.json"
    path.write_bytes(b"\n".join(dt) + b"\n")
    cat_path, bare_path = tmp_path / "cat.json", tmp_path / "bare.json"
    cat.save(cat_path)
    bare.save(bare_path)
    assert main(["decode", str(path), "--format", FMT, "--catalog", str(cat_path),
                 "-o", str(tmp_path / "out")]) == 0
    assert parquet_counts(tmp_path / "out") == collections.Counter(owner)
    # (the CLI may exit non-zero when nothing could be placed; the files are written)
    main(["decode", str(path), "--format", FMT, "--catalog", str(bare_path),
          "-o", str(tmp_path / "bare")])
    assert parquet_counts(tmp_path / "bare") == {None: len(dt)}
