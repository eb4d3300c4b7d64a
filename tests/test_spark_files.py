"""How the data source finds and plans its files (cdcfast.spark_files, issue 22): paths
(relative ones against the user's working folder, file: URIs, other schemes refused),
listing as Spark's file sources do (hidden, `_` and `*.catalog.json` sidecar files left out,
pathGlobFilter, recursiveFileLookup), partitions packed as Spark's FilePartition does, big
files cut into byte ranges whose tasks find their own record starts (Decoder.record_start,
the rule of split_points), and the refusal to run the reference decoders in Spark."""
from __future__ import annotations

import bisect
import json
import os
import random
import sys
import textwrap

import pyarrow as pa
import pytest

import cdcfast
from cdcfast import Decoder
from cdcfast import spark as cs
from cdcfast.spark_files import (OPEN_COST, list_files, local_path, max_split_bytes,
                                 name_filter, pack, pieces, plan)

MB = 1 << 20


# -- paths -----------------------------------------------------------------------------------
def test_local_paths_uris_and_other_schemes():
    assert local_path("small", "/home/u/work") == "/home/u/work/small"
    assert local_path("cat/ibm.json", "/w") == "/w/cat/ibm.json"
    assert local_path("../in/./x.del", "/w/a") == "/w/in/x.del"
    assert local_path("/abs/x.del", "/w") == "/abs/x.del"
    assert local_path("small") == os.path.join(os.getcwd(), "small")
    assert local_path("file:///tmp/in/a%20b.del") == "/tmp/in/a b.del"
    assert local_path("file:/tmp/in") == "/tmp/in"
    assert local_path("FILE://localhost/tmp/in/") == "/tmp/in"
    # a glob joined to a working folder whose name holds glob characters
    assert local_path("*.del", "/w/run[1]") == "/w/run[[]1]/*.del"
    for uri in ("hdfs://nn:8020/data/x.del", "s3a://bucket/x", "abfss://c@a.dfs/x", "gs:/b"):
        with pytest.raises(ValueError, match="local or shared-filesystem paths") as e:
            local_path(uri)
        assert "binaryFile" in str(e.value) and "cs.decode" in str(e.value)
    with pytest.raises(ValueError, match="another host"):
        local_path("file://otherhost/tmp/x")


def test_a_glob_in_a_folder_named_with_glob_characters(tmp_path):
    odd = tmp_path / "run[1]"
    odd.mkdir()
    (odd / "a.del").write_bytes(b"x")
    assert list_files([local_path("*.del", str(odd))]) == [str(odd / "a.del")]


# -- listing ---------------------------------------------------------------------------------
@pytest.fixture()
def tree(tmp_path):
    """A landing folder as `cdcfast generate` and Spark jobs leave them."""
    files = ["a.del", "b.json", "a.del.catalog.json", ".hidden.del", "_SUCCESS",
             "sub/c.del", "sub/deeper/d.del", "sub/d.catalog.json", "_tmp/e.del", ".git/f.del"]
    for f in files:
        p = tmp_path / f
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_bytes(b"x")
    return tmp_path


def names(files, root):
    return [os.path.relpath(f, root) for f in files]


def test_a_folder_lists_its_data_files_only(tree):
    assert names(list_files([str(tree)]), tree) == \
        ["a.del", "b.json", "sub/c.del", "sub/deeper/d.del"]
    assert names(list_files([str(tree)], recursive=False), tree) == ["a.del", "b.json"]
    assert names(list_files([str(tree)], name_glob="*.del"), tree) == \
        ["a.del", "sub/c.del", "sub/deeper/d.del"]
    assert names(list_files([str(tree)], name_glob="{a,c}.*"), tree) == ["a.del", "sub/c.del"]
    # a glob's matches are filtered as a folder's files; a matched folder is a folder
    assert names(list_files([str(tree / "*")]), tree) == \
        ["a.del", "b.json", "sub/c.del", "sub/deeper/d.del"]
    assert names(list_files([str(tree / "a.*")]), tree) == ["a.del"]
    assert names(list_files([str(tree / "s*")], recursive=False), tree) == ["sub/c.del"]


def test_a_file_named_explicitly_is_always_read(tree):
    for f in ("a.del.catalog.json", ".hidden.del", "_SUCCESS", "_tmp/e.del"):
        assert list_files([str(tree / f)]) == [str(tree / f)]
    # pathGlobFilter applies to every file, as in Spark
    assert list_files([str(tree / "a.del")], name_glob="*.json") == []
    with pytest.raises(FileNotFoundError, match="no file matches"):
        list_files([str(tree / "nope.del")])


@pytest.mark.parametrize("pattern, yes, no", [
    ("*.del", ["a.del", ".del", "x.y.del"], ["a.dell", "a.de"]),
    ("part-0000?.json", ["part-00001.json"], ["part-0001.json", "part-000011.json"]),
    ("[ab]*", ["a1", "b"], ["c", "A"]),
    ("[^ab]*", ["c1", "z"], ["a", "b2"]),
    ("[!ab]*", ["c1"], ["a"]),
    ("[a-c]x", ["bx"], ["dx"]),
    ("*.{del,json}", ["a.del", "b.json"], ["c.txt", "d.jso"]),
    ("\\*x", ["*x"], ["ax"]),
    ("a+b(1).del", ["a+b(1).del"], ["aab1.del"]),
])
def test_path_glob_filter_syntax(pattern, yes, no):
    keep = name_filter(pattern)
    assert all(keep(n) for n in yes) and not any(keep(n) for n in no)


# -- partitions ------------------------------------------------------------------------------
def test_max_split_bytes_follows_spark():
    # 100 small files on 2 cores: bytes per core counts 4 MB per file: 128 MB splits
    assert max_split_bytes([10_000] * 100, 128 * MB, 2) == 128 * MB
    # 3 small files on 2 cores: 6 MB-odd
    assert max_split_bytes([1000] * 3, 128 * MB, 2) == (3 * (1000 + OPEN_COST)) // 2
    # one small file: never below the open cost
    assert max_split_bytes([1000], 128 * MB, 8) == OPEN_COST
    # one 300 MB file on 2 cores: 152 MB per core, capped at split_mb
    assert max_split_bytes([300 * MB], 128 * MB, 2) == 128 * MB
    assert max_split_bytes([300 * MB], 64 * MB, 2) == 64 * MB
    assert max_split_bytes([200 * MB], 128 * MB, 2) == 102 * MB


def test_small_files_are_packed_about_one_partition_per_core():
    files = [(f"/d/f{i:03}", 10_000) for i in range(100)]
    split = max_split_bytes([s for _, s in files], 128 * MB, 2)
    parts = pack(pieces(files, split, True), split)
    # next-fit: 32 files of 4 MB + 10 kB open cost fill 128 MB
    assert sorted(len(p) for p in parts) == [4, 32, 32, 32] and parts == sorted(parts)
    assert sorted(x for p in parts for x in p) == [(f, 0, s, s) for f, s in files]
    assert all(p == sorted(p) for p in parts)              # read in file order
    files = [(f"/d/f{i}", 1000) for i in range(3)]
    split = max_split_bytes([s for _, s in files], 128 * MB, 2)
    assert pack(pieces(files, split, True), split) == \
        [[(f, 0, s, s) for f, s in files[:2]], [(files[2][0], 0, 1000, 1000)]]


def test_big_files_are_cut_into_byte_ranges():
    files = [("/d/big", 300 * MB), ("/d/small", 1000)]
    split = max_split_bytes([s for _, s in files], 128 * MB, 2)
    got = pieces(files, split, True)
    assert got == [("/d/big", 0, 128 * MB, 300 * MB), ("/d/big", 128 * MB, 256 * MB, 300 * MB),
                   ("/d/big", 256 * MB, 300 * MB, 300 * MB), ("/d/small", 0, 1000, 1000)]
    assert pieces(files, split, False) == [("/d/big", 0, 300 * MB, 300 * MB),
                                           ("/d/small", 0, 1000, 1000)]
    parts = pack(got, split)
    # packed biggest first: the 44 MB tail and the small file share a partition; in file order
    assert parts == [[got[0]], [got[1]], [got[2], got[3]]]
    # split_mb smaller than the open cost: every piece a partition of its own
    split = max_split_bytes([300 * MB], 10 * MB, 2)
    assert split == 10 * MB and len(pack(pieces([("/d/big", 300 * MB)], split, True),
                                         split)) == 30


def test_plan_reads_sizes_only(tmp_path):
    for i, n in enumerate((5000, 20, 0)):
        (tmp_path / f"f{i}").write_bytes(b"x" * n)
    files = list_files([str(tmp_path)])
    parts = plan(files, 2000, 2, True)
    assert sorted(x for p in parts for x in p) == \
        [(files[0], 0, 2000, 5000), (files[0], 2000, 4000, 5000), (files[0], 4000, 5000, 5000),
         (files[1], 0, 20, 20), (files[2], 0, 0, 0)]
    assert plan(files + [str(tmp_path / "gone")], 2000, 2, True) == parts
    assert plan([], 2000, 2, True) == []


def test_planning_from_the_session_conf():
    class Conf:
        def __init__(self, d):
            self.d = d

        def get(self, k, default=None):
            return self.d.get(k, default)

    class Spark:
        def __init__(self, d, cores):
            self.conf = Conf(d)
            self.sparkContext = type("SC", (), {"defaultParallelism": cores})()

    p = cs.Planning.of(Spark({}, 2))
    assert (p.cwd, p.partitions, p.split_bytes, p.open_cost) == \
        (os.getcwd(), 2, 128 * MB, OPEN_COST)
    # executors still registering: what the configuration asks for counts
    assert cs.Planning.of(Spark({"spark.cores.max": "8"}, 2)).partitions == 8
    assert cs.Planning.of(Spark({"spark.executor.instances": "3",
                                 "spark.executor.cores": "4"}, 2)).partitions == 12
    assert cs.Planning.of(Spark({"spark.sql.files.minPartitionNum": "5"}, 16)).partitions == 5
    p = cs.Planning.of(Spark({"spark.sql.files.maxPartitionBytes": "64m",
                              "spark.sql.files.openCostInBytes": "1048576"}, 4))
    assert (p.partitions, p.split_bytes, p.open_cost) == (4, 64 * MB, MB)
    assert cs._bytes("128MB") == 128 * MB and cs._bytes("4194304") == OPEN_COST
    assert cs._bytes("1g") == 1 << 30 and cs._bytes("2k") == 2048


# -- record starts found in the task -----------------------------------------------------------
GEN = {"ibm-delimited": {}, "lldf": {"framing": "rdw", "segment_bytes": 200, "control": True},
       "debezium": {"pretty": True, "tombstones": True}, "olr": {}, "qlik": {}}


@pytest.fixture(scope="module", params=list(GEN))
def generated(request):
    fmt = request.param
    data, cat = cdcfast.encode.generate(fmt, rows=1200, seed=17, tables=2, table_width=6,
                                        **GEN[fmt])
    if fmt == "ibm-delimited":      # a blank line, then strings holding record delimiters
        data = data + b"\n\n" + data
        assert data.count(b"\n") > 2 * 1200 + 1
    return fmt, data, cat


def every_record_start(fmt, dec, data) -> list:
    """Every record start, as the formats split them: the reference's split of an
    ibm-delimited message (records as the decoder splits them), lldf's framing walk at step
    1, and every line that opens an object (JSON)."""
    if fmt == "ibm-delimited":
        from cdcfast.reference.ibm_delimited import split_message
        return [r.start for r in split_message(data, ord(","), ord("\n"), ord('"'))]
    if fmt == "lldf":
        from cdcfast import _lldf_frame
        return _lldf_frame.record_starts(data, "rdw", 1)[:-1]
    return [0] + [i + 1 for i in range(len(data) - 1) if data[i:i + 2] == b"\n{"]


@pytest.mark.skipif(not cdcfast.native_available(), reason="the kernels find the starts")
def test_record_start_is_the_first_record_start_at_or_after(generated):
    fmt, data, cat = generated
    dec = Decoder(fmt, catalog=cat)
    starts = every_record_start(fmt, dec, data)
    assert len(starts) > 1000 and dec.can_split()
    rnd = random.Random(5)
    offsets = [0, 1, len(data) - 1, len(data)] + starts[:10] + [s + 1 for s in starts[-10:]] \
        + [rnd.randrange(len(data)) for _ in range(150)]
    for o in offsets:
        i = bisect.bisect_left(starts, o)
        assert dec.record_start(data, o) == (starts[i] if i < len(starts) else len(data)), o


@pytest.mark.skipif(not cdcfast.native_available(), reason="the kernels find the starts")
@pytest.mark.parametrize("step", [3001, 40_000])
def test_byte_ranges_give_the_pieces_of_split_points(generated, step, tmp_path):
    """Tasks reading byte ranges of `step` bytes find exactly the pieces of the driver-side
    split (split_points), so every record is read once, with each piece's own seq."""
    fmt, data, cat = generated
    dec = Decoder(fmt, catalog=cat)
    cuts = dec.split_points(data, step)
    assert len(cuts) > 3
    bounds = [dec.range_bounds(data, a, a + step if a + step < len(data) else 1 << 62)
              for a in range(0, len(data), step)]
    assert [b for b in bounds if b[0] < b[1]] == list(zip(cuts, cuts[1:]))
    assert all(b[0] == b[1] for b in bounds if b not in zip(cuts, cuts[1:]))
    p = tmp_path / "f"
    p.write_bytes(data)
    table = cdcfast.Catalog.coerce(cat).tables[0].name
    got = [pa.Table.from_batches(list(dec.read_range(str(p), a, b, table)),
                                 dec.schema(table))
           for a, b in zip(range(0, len(data), step),
                           list(range(step, len(data), step)) + [len(data)])]
    want = [dec.decode(data[a:b], table=table) for a, b in zip(cuts, cuts[1:])]
    assert pa.concat_tables([t for t in got if t.num_rows]).equals(
        pa.concat_tables([t for t in want if t.num_rows]))


def test_without_the_kernels_ibm_delimited_is_read_whole():
    data, cat = cdcfast.encode.generate("ibm-delimited", rows=50, seed=1)
    ref = cdcfast.reference.Decoder("ibm-delimited", catalog=cat)
    assert not ref.can_split() and ref.split_points(data, 100) == [0, len(data)]
    assert ref.record_start(data, 0) == 0 and ref.record_start(data, 10) == len(data)
    assert ref.range_bounds(data, 0, 1 << 62) == (0, len(data))
    with pytest.raises(ValueError, match="compiled kernels"):
        ref.range_bounds(data, 100, 200)
    assert Decoder("ibm-delimited", catalog=cat).can_split(native=False) is False
    assert Decoder("lldf", catalog=None).can_split(native=False) is True
    assert Decoder("olr").can_split(native=False) is True
    # lldf's reference walks the framing as the kernel does: the same record starts
    data, cat = cdcfast.encode.generate("lldf", rows=300, seed=5, framing="rdw",
                                        segment_bytes=200)
    ref, dec = cdcfast.reference.Decoder("lldf", catalog=cat), Decoder("lldf", catalog=cat)
    assert ref.can_split()
    assert [ref.record_start(data, o) for o in range(0, len(data), 977)] == \
        [dec.record_start(data, o) for o in range(0, len(data), 977)]


# -- the refusal to run the reference decoders ----------------------------------------------------
def test_native_check(monkeypatch):
    monkeypatch.delenv(cs.ALLOW_REFERENCE_ENV, raising=False)
    cs.native_check(native=True)
    with pytest.raises(RuntimeError) as e:
        cs.native_check(native=False)
    text = str(e.value)
    for part in (sys.executable, "reference decoders", "venv-pack", "spark.archives",
                 "spark.submit.pyFiles", "allow_reference", "CDCFAST_ALLOW_REFERENCE=1",
                 "docs/spark.md"):
        assert part in text, part
    cs.native_check(True, native=False)
    cs.native_check("true", native=False)
    with pytest.raises(RuntimeError):
        cs.native_check("false", native=False)
    with pytest.raises(ValueError, match="true or false"):
        cs.native_check("maybe", native=False)
    monkeypatch.setenv(cs.ALLOW_REFERENCE_ENV, "1")
    cs.native_check(native=False)
    monkeypatch.setenv(cs.ALLOW_REFERENCE_ENV, "0")
    with pytest.raises(RuntimeError):
        cs.native_check(native=False)


# a Python worker whose cdcfast cannot load its kernels: a sitecustomize (first on the workers'
# PYTHONPATH, which Spark merges from the function's environment) blocks one of them
BLOCK = textwrap.dedent("""
    import importlib.abc, sys
    class _Block(importlib.abc.MetaPathFinder):
        def find_spec(self, name, path, target=None):
            if name == "cdcfast._arrow":
                raise ImportError("blocked by the test's sitecustomize")
    sys.meta_path.insert(0, _Block())
""")


@pytest.fixture()
def workers_without_kernels(spark, tmp_path):
    """Python functions (and data sources) wrapped while this is active run in workers whose
    cdcfast lacks its kernels: sc.environment travels with each wrapped function."""
    site = tmp_path / "site"
    site.mkdir()
    (site / "sitecustomize.py").write_text(BLOCK)
    env = spark.sparkContext.environment
    saved = dict(env)
    env["PYTHONPATH"] = str(site)
    # what a worker without the kernels does is the point here: CI's
    # CDCFAST_REQUIRE_NATIVE=1 (inherited by the workers) would stop its import instead
    env["CDCFAST_REQUIRE_NATIVE"] = "0"
    env.pop(cs.ALLOW_REFERENCE_ENV, None)
    try:
        yield
    finally:
        env.clear()
        env.update(saved)
        cs.register(spark)          # the registered class again with the session's env


def test_spark_refuses_the_reference_decoders(spark, workers_without_kernels, tmp_path):
    msgs, cat = cdcfast.encode.generate("ibm-delimited", rows=40, seed=3, messages=True)
    df = spark.createDataFrame([(m,) for m in msgs], "value binary")
    want = cdcfast.decode(msgs, format="ibm-delimited", catalog=cat)
    want = want.cast(cs._spark_arrow_schema(want.schema, False))
    with pytest.raises(Exception, match="compiled kernels do not load") as e:
        cs.decode(df, format="ibm-delimited", catalog=cat).collect()
    assert "allow_reference" in str(e.value)
    got = cs.decode(df, format="ibm-delimited", catalog=cat, allow_reference=True).toArrow()
    assert got.num_rows == want.num_rows == 40
    assert got.cast(want.schema).equals(want)     # the reference's rows, as the kernels'
    # the data source: refused when the plan is made (the driver's Python worker)
    p = tmp_path / "x.del"
    p.write_bytes(b"".join(msgs))
    cs.register(spark)
    reader = spark.read.format("cdcfast").option("format", "ibm-delimited") \
        .option("catalog", json.dumps(cat.to_dict()))
    with pytest.raises(Exception, match="compiled kernels do not load"):
        reader.load(str(p)).collect()
    got = reader.option("allow_reference", "true").load(str(p)).toArrow()
    assert got.num_rows == 40 and got.column("_error").null_count == 40


# -- the data source over a real session ------------------------------------------------------
FMT = "ibm-delimited"


def write_landing(folder, n, rows=30, seed=50):
    """n generated files and, as `cdcfast generate` leaves them, each one's catalog sidecar;
    a _SUCCESS marker and a hidden file too."""
    folder.mkdir(parents=True, exist_ok=True)
    datas = []
    for i in range(n):
        data, cat = cdcfast.encode.generate(FMT, rows=rows, seed=seed, table_width=5)
        seed += 1
        (folder / f"part-{i:03}.del").write_bytes(data)
        (folder / f"part-{i:03}.del.catalog.json").write_text(json.dumps(cat.to_dict()))
        datas.append(data)
    (folder / "_SUCCESS").write_bytes(b"")
    (folder / ".part-000.del.crc").write_bytes(b"\x00\x01")
    return datas, cat


def decoded(datas, cat) -> pa.Table:
    t = pa.concat_tables([cdcfast.decode(d, format=FMT, catalog=cat) for d in datas])
    return t.cast(cs._spark_arrow_schema(t.schema, False))


def rows(t: pa.Table) -> list:
    return sorted(json.dumps(r, default=str, sort_keys=True) for r in t.to_pylist())


def test_relative_paths_uris_sidecars_and_packing(spark, tmp_path):
    """From the user's working folder (os.chdir, then register): a relative folder and
    catalog, a file: URI; the sidecars, _SUCCESS and hidden files are no data; twelve small
    files in two partitions (two cores), or as many as asked."""
    datas, cat = write_landing(tmp_path / "small", 12)
    sub, _ = write_landing(tmp_path / "small" / "later", 2, seed=90)
    (tmp_path / "cat").mkdir()
    (tmp_path / "cat" / "ibm.json").write_text(json.dumps(cat.to_dict()))
    here = os.getcwd()
    os.chdir(tmp_path)
    try:
        cs.register(spark)
        def reader():       # (DataFrameReader.option changes the reader it is called on)
            return spark.read.format("cdcfast").option("format", FMT) \
                .option("catalog", "cat/ibm.json")

        df = reader().load("small")
        assert df.rdd.getNumPartitions() == 2
        got = df.toArrow()
    finally:
        os.chdir(here)
    want = decoded(datas + sub, cat)
    assert got.num_rows == want.num_rows == 14 * 30
    assert got.column("_error").null_count == got.num_rows          # no sidecar read as data
    assert rows(got.cast(want.schema)) == rows(want)
    # elsewhere now: the registered working folder still resolves them
    df = reader().option("partitions", "5").option("recursiveFileLookup", "false").load("small")
    # about five: 12 files of 4 MB open cost each, 9.6 MB a partition, three to a partition
    assert df.rdd.getNumPartitions() == len(plan(list_files([str(tmp_path / "small")],
                                                            recursive=False),
                                                 128 * MB, 5, True)) == 4
    assert rows(df.toArrow().cast(want.schema)) == rows(decoded(datas, cat))
    uri = (tmp_path / "small").as_uri()
    df = reader().option("pathGlobFilter", "part-00[0-4].del").load(uri)
    assert rows(df.toArrow().cast(want.schema)) == rows(decoded(datas[:5] + sub, cat))
    with pytest.raises(Exception, match="local or shared-filesystem paths"):
        reader().load("hdfs://namenode:8020/landing").collect()
    cs.register(spark)                              # back to this process's working folder


@pytest.mark.parametrize("fmt", list(GEN))
def test_tasks_find_the_record_starts_of_their_byte_ranges(spark, tmp_path, fmt):
    """A big file read as byte ranges of split_mb: each task finds its own record starts
    (no byte read on the driver), and Spark's rows are exactly those of the driver-side
    split (split_points), piece by piece with each piece's seq."""
    cs.register(spark)
    data, cat = cdcfast.encode.generate(fmt, rows=1500, seed=23, tables=2, table_width=6,
                                        **GEN[fmt])
    cat = cdcfast.Catalog.coerce(cat)
    table = cat.tables[1].name
    p = tmp_path / "big"
    p.write_bytes(data)
    split = 200_000
    dec = Decoder(fmt, catalog=cat, **({"framing": "rdw"} if fmt == "lldf" else {}))
    cuts = dec.split_points(data, split)
    assert len(cuts) - 1 >= 3
    reader = spark.read.format("cdcfast").option("format", fmt) \
        .option("catalog", json.dumps(cat.to_dict())).option("table", table) \
        .option("split_mb", str(split / MB))
    if fmt == "lldf":
        reader = reader.option("framing", "rdw")
    df = reader.load(str(p))
    ranges = -(-len(data) // split)
    assert df.rdd.getNumPartitions() == ranges          # split_mb < the open cost
    got = df.toArrow()
    per_piece = pa.concat_tables([dec.decode(data[a:b], table=table)
                                  for a, b in zip(cuts, cuts[1:])])
    per_piece = per_piece.cast(cs._spark_arrow_schema(per_piece.schema, False))
    assert got.num_rows == per_piece.num_rows > 200
    assert got.column("_error").null_count == got.num_rows
    assert rows(got.cast(per_piece.schema)) == rows(per_piece)
    assert got.column("seq").to_pylist().count(0) == \
        per_piece.column("seq").to_pylist().count(0)
