"""Tests of the versioned corpus store (operators/corpus) and the `interlingua corpus` CLI."""

from __future__ import annotations

import argparse
import hashlib
import importlib.metadata
import json
import threading
import time
import uuid
from collections import Counter
from pathlib import Path

import fsspec
import pyarrow as pa
import pytest

from interlingua.operators.corpus import (
    REJECTS_SCHEMA,
    CorpusLookupError,
    CorpusStore,
    Manifest,
    VersionWriter,
    plan_shards,
)
from interlingua.workflows.commands import corpus as corpus_command

SOURCE = pa.table(
    {
        "id": list(range(10)),
        "text": [f"sentence {i} ☃" for i in range(10)],
        "lang": ["en", "fr", "es", "de", "bg"] * 2,
    }
)
PLAN = plan_shards(SOURCE.num_rows, rows_per_shard=3)  # 4 shards: 3 + 3 + 3 + 1 rows


def memory_root() -> str:
    return f"memory://corpus-test-{uuid.uuid4().hex}"


def write_all(writer: VersionWriter, source: pa.Table = SOURCE) -> list[str]:
    """Write every incomplete shard of PLAN; return the ids written."""
    written = []
    for spec in PLAN:
        if not writer.is_complete(spec.id):
            writer.write_shard(spec.id, source.slice(spec.start, spec.num_rows), counters={"seen": spec.num_rows})
            written.append(spec.id)
    return written


def publish_source(store: CorpusStore, name: str = "bible", config: dict | None = None) -> Manifest:
    writer = store.open_version(name, config or {"min_chars": 3}, ["file:///data/kjv.txt"])
    write_all(writer)
    return writer.publish(expected_shards=[spec.id for spec in PLAN])


# -- shard plans ---------------------------------------------------------------------------


def test_plan_shards_covers_every_row_once_in_order() -> None:
    plan = plan_shards(10, 3)
    assert [(s.id, s.start, s.stop) for s in plan] == [
        ("shard-00000", 0, 3),
        ("shard-00001", 3, 6),
        ("shard-00002", 6, 9),
        ("shard-00003", 9, 10),
    ]
    covered = [row for spec in plan_shards(1000, 7) for row in range(spec.start, spec.stop)]
    assert covered == list(range(1000))
    assert plan_shards(0, 5) == []
    wide = plan_shards(200_001, 2)
    assert wide[-1].id == "shard-100000" and sorted(s.id for s in wide[-3:]) == [s.id for s in wide[-3:]]


@pytest.mark.parametrize(("num_rows", "rows_per_shard", "option"), [(-1, 3, "num_rows"), (5, 0, "rows_per_shard"), (5, 2.5, "rows_per_shard")])
def test_plan_shards_rejects_bad_arguments(num_rows: int, rows_per_shard: int, option: str) -> None:
    with pytest.raises(ValueError, match=option):
        plan_shards(num_rows, rows_per_shard)


# -- publish and read back -----------------------------------------------------------------


def test_publish_and_read_back_equal_rows(tmp_path: Path) -> None:
    store = CorpusStore(str(tmp_path / "corpus"))
    manifest = publish_source(store)

    assert store.read_table("bible").equals(SOURCE)
    assert store.read_table("bible", manifest.version).equals(SOURCE)
    assert store.read_table("bible", columns=["text"]).column("text").to_pylist() == SOURCE.column("text").to_pylist()
    assert store.versions("bible") == [manifest.version] and store.latest_version("bible") == manifest.version
    # a reader through another URL spelling of the same root sees the same version
    assert CorpusStore(f"file://{tmp_path / 'corpus'}").read_table("bible").equals(SOURCE)


def test_manifest_fields_agree_with_the_files(tmp_path: Path) -> None:
    store = CorpusStore(str(tmp_path))
    config = {"min_chars": 3, "langs": ["en", "fr"]}
    writer = store.open_version("bible", config, ["file:///data/kjv.txt", "file:///data/sparv.txt"])
    write_all(writer)
    writer.add_counters({"documents": 2})
    manifest = writer.publish()

    assert manifest.name == "bible" and manifest.version == writer.version and manifest.version.startswith("v-")
    assert manifest.inputs == ("file:///data/kjv.txt", "file:///data/sparv.txt")
    assert manifest.config == config
    canonical = json.dumps({"langs": ["en", "fr"], "min_chars": 3}, separators=(",", ":"))
    assert manifest.config_hash == hashlib.sha256(canonical.encode()).hexdigest()
    assert manifest.code_version.package_version == importlib.metadata.version("interlingua")
    assert manifest.columns == {"id": "int64", "text": "string", "lang": "string"}
    assert [shard.shard_id for shard in manifest.shards] == [spec.id for spec in PLAN]
    assert [shard.rows for shard in manifest.shards] == [3, 3, 3, 1]
    assert manifest.total_rows == 10
    assert manifest.counters == {"documents": 2, "seen": 10}
    for shard in manifest.shards:
        data = (tmp_path / "bible" / manifest.version / shard.path).read_bytes()
        assert shard.bytes == len(data)
        assert shard.sha256 == hashlib.sha256(data).hexdigest()
    on_disk = Manifest.from_json((tmp_path / "bible" / manifest.version / "manifest.json").read_text())
    assert on_disk == manifest == Manifest.from_json(manifest.to_json())
    assert (tmp_path / "bible" / "latest").read_text().strip() == manifest.version


def test_manifest_rejects_inconsistent_totals() -> None:
    manifest = publish_source(CorpusStore(memory_root()))
    payload = json.loads(manifest.to_json())
    payload["total_rows"] += 1
    with pytest.raises(ValueError, match="total_rows"):
        Manifest.from_json(json.dumps(payload))


def test_version_id_is_deterministic_and_depends_on_config_and_inputs() -> None:
    store = CorpusStore(memory_root())
    first = store.open_version("c", {"a": 1, "b": 2}, ["x"]).version
    assert store.open_version("c", {"b": 2, "a": 1}, ["x"]).version == first
    assert store.open_version("c", {"a": 2, "b": 2}, ["x"]).version != first
    assert store.open_version("c", {"a": 1, "b": 2}, ["y"]).version != first
    assert store.open_version("d", {"a": 1, "b": 2}, ["x"]).version != first


# -- atomic publish --------------------------------------------------------------------------


def test_publish_writes_staging_then_version_files_then_manifest_then_latest(monkeypatch: pytest.MonkeyPatch) -> None:
    store = CorpusStore(memory_root())
    written: list[str] = []
    fs = store.fs
    original_pipe, original_copy, original_open = fs.pipe_file, fs.copy, fs.open
    monkeypatch.setattr(fs, "pipe_file", lambda path, data, **kw: (written.append(path), original_pipe(path, data, **kw))[1])
    monkeypatch.setattr(fs, "copy", lambda src, dst, **kw: (written.append(dst), original_copy(src, dst, **kw))[1])
    monkeypatch.setattr(fs, "open", lambda path, mode="rb", **kw: (written.append(path) if "x" in mode else None,
                                                                   original_open(path, mode, **kw))[1])
    manifest = publish_source(store)

    staged = [p for p in written if "/_staging/" in p]
    published = [p for p in written if f"/{manifest.version}/" in p and "/_staging/" not in p]
    assert written[-1].endswith("/latest") and published[-1].endswith("/manifest.json")
    assert max(written.index(p) for p in staged) < min(written.index(p) for p in published)
    assert sorted(p.rsplit("/", 2)[-2] for p in published if p.endswith(".parquet")) == ["data"] * 4
    # in staging, each shard's completion record follows its data file
    for spec in PLAN:
        assert written.index(next(p for p in staged if p.endswith(f"_complete/{spec.id}.json"))) > written.index(
            next(p for p in staged if p.endswith(f"data/{spec.id}.parquet"))
        )
    assert not fs.exists(f"{store._name_dir('bible')}/_staging/{manifest.version}")  # staging removed


def test_concurrent_reader_sees_only_complete_versions(tmp_path: Path) -> None:
    store = CorpusStore(str(tmp_path))
    publish_source(store, config={"round": 1})
    v1 = SOURCE
    v2 = SOURCE.set_column(1, "text", pa.array([f"v2 {i}" for i in range(10)]))
    observed: list[pa.Table] = []
    errors: list[BaseException] = []
    stop = threading.Event()

    def read_latest_repeatedly() -> None:
        reader = CorpusStore(str(tmp_path))
        while not stop.is_set():
            try:
                observed.append(reader.read_table("bible"))
            except BaseException as error:  # noqa: BLE001 - any failure is a test failure
                errors.append(error)
                return

    thread = threading.Thread(target=read_latest_repeatedly)
    thread.start()
    try:
        writer = store.open_version("bible", {"round": 2}, ["file:///data/kjv.txt"])
        for spec in PLAN:
            time.sleep(0.05)  # slow shard writes: the reader polls while v2 is half written
            writer.write_shard(spec.id, v2.slice(spec.start, spec.num_rows))
        writer.publish()
        deadline = time.monotonic() + 5
        while not (observed and observed[-1].equals(v2)) and time.monotonic() < deadline and thread.is_alive():
            time.sleep(0.01)
    finally:
        stop.set()
        thread.join()

    assert errors == []
    assert observed[0].equals(v1) and observed[-1].equals(v2)
    assert all(table.equals(v1) or table.equals(v2) for table in observed)
    first_v2 = next(i for i, table in enumerate(observed) if table.equals(v2))
    assert all(table.equals(v2) for table in observed[first_v2:])


# -- resume ----------------------------------------------------------------------------------


def test_resume_after_crash_writes_only_missing_shards_and_equals_clean_run(tmp_path: Path) -> None:
    store = CorpusStore(str(tmp_path / "crashed"))
    config, inputs = {"min_chars": 3}, ["file:///data/kjv.txt"]
    first_run_writes: list[str] = []

    writer = store.open_version("bible", config, inputs)
    with pytest.raises(RuntimeError, match="simulated crash"):
        for spec in PLAN:
            if len(first_run_writes) == 2:
                raise RuntimeError("simulated crash")
            writer.write_shard(spec.id, SOURCE.slice(spec.start, spec.num_rows), counters={"seen": spec.num_rows})
            first_run_writes.append(spec.id)
    with pytest.raises(CorpusLookupError):
        store.manifest("bible")  # nothing published by the crashed run

    resumed = store.open_version("bible", config, inputs)
    assert resumed.version == writer.version and not resumed.published
    assert resumed.completed_shards() == first_run_writes == ["shard-00000", "shard-00001"]
    assert write_all(resumed) == ["shard-00002", "shard-00003"]
    manifest = resumed.publish(expected_shards=[spec.id for spec in PLAN])

    clean = publish_source(CorpusStore(str(tmp_path / "clean")))
    assert store.read_table("bible").equals(CorpusStore(str(tmp_path / "clean")).read_table("bible"))
    assert [(s.shard_id, s.rows, s.sha256) for s in manifest.shards] == [(s.shard_id, s.rows, s.sha256) for s in clean.shards]
    assert manifest.counters == clean.counters == {"seen": 10}

    rerun = store.open_version("bible", config, inputs)
    assert rerun.published and rerun.manifest == manifest and write_all(rerun) == []


def test_partial_shard_files_are_not_complete_and_get_rewritten(tmp_path: Path) -> None:
    store = CorpusStore(str(tmp_path))
    writer = store.open_version("bible", {"min_chars": 3}, ["file:///data/kjv.txt"])
    version_dir = Path(writer.staging_dir)  # the crashed writer's private folder
    # crash mid-write of shard 0: a torn data file and no completion record
    (version_dir / "data").mkdir(parents=True)
    (version_dir / "data" / "shard-00000.parquet").write_bytes(b"PAR1 torn")
    # shard 1 completed, then its data file was truncated behind the record's back
    writer.write_shard("shard-00001", SOURCE.slice(3, 3))
    data_1 = version_dir / "data" / "shard-00001.parquet"
    data_1.write_bytes(data_1.read_bytes()[:20])
    # shard 2 has a torn completion record
    writer.write_shard("shard-00002", SOURCE.slice(6, 3))
    (version_dir / "_complete" / "shard-00002.json").write_text('{"shard": {')

    resumed = store.open_version("bible", {"min_chars": 3}, ["file:///data/kjv.txt"])
    assert [resumed.is_complete(spec.id) for spec in PLAN] == [False, False, False, False]
    assert write_all(resumed) == [spec.id for spec in PLAN]
    resumed.publish()
    assert store.read_table("bible").equals(SOURCE)


# -- rejects ---------------------------------------------------------------------------------


def test_rejects_are_written_per_shard_and_counted_by_reason_and_operator() -> None:
    store = CorpusStore(memory_root())
    writer = store.open_version("wiki", {}, ["memory://in"])
    rejects_0 = [
        {"operator": "length_filter", "reason": "too_short", "row": {"id": 100, "text": "a"}},
        {"operator": "amr_parse", "reason": "invalid_penman", "row": {"id": 101, "text": "(x / y"}},
    ]
    rejects_1 = pa.table(
        {
            "operator": ["length_filter", "length_filter"],
            "reason": ["too_short", "too_long"],
            "row": [json.dumps({"id": 102}), json.dumps({"id": 103})],
        }
    )
    writer.write_shard("shard-00000", SOURCE.slice(0, 5), rejects=rejects_0)
    writer.write_shard("shard-00001", SOURCE.slice(5, 5), rejects=rejects_1)
    writer.write_shard("shard-00002", SOURCE.slice(0, 0), rejects=[])
    manifest = writer.publish()

    assert manifest.rejects_by_reason == {"invalid_penman": 1, "too_long": 1, "too_short": 2}
    assert manifest.rejects_by_operator == {"amr_parse": 1, "length_filter": 3}
    assert [s.reject_rows for s in manifest.shards] == [2, 2, 0] and manifest.total_rejects == 4
    assert manifest.total_rows == 10

    rejected = store.read_rejects("wiki")
    assert rejected.schema == REJECTS_SCHEMA
    assert rejected.column("shard").to_pylist() == ["shard-00000"] * 2 + ["shard-00001"] * 2
    assert [json.loads(row)["id"] for row in rejected.column("row").to_pylist()] == [100, 101, 102, 103]
    assert json.loads(rejected.column("row")[1].as_py()) == rejects_0[1]["row"]
    assert Counter(rejected.column("reason").to_pylist()) == manifest.rejects_by_reason


@pytest.mark.parametrize(
    ("rejects", "message"),
    [
        ([{"operator": "f", "row": {}}], r"rejects\[0\]\['reason'\]"),
        ([{"operator": "f", "reason": "r"}], r"no 'row'"),
        ([{"operator": "f", "reason": "r", "row": {}, "shard": "other"}], "names shard 'other'"),
        (["not a mapping"], r"rejects\[0\] must be a mapping"),
    ],
)
def test_malformed_rejects_are_refused(rejects: list, message: str) -> None:
    writer = CorpusStore(memory_root()).open_version("c", {}, [])
    with pytest.raises(ValueError, match=message):
        writer.write_shard("s0", SOURCE, rejects=rejects)
    assert not writer.is_complete("s0")


# -- memory:// and errors -----------------------------------------------------------------------


def test_memory_filesystem_round_trip_and_listing() -> None:
    root = memory_root()
    store = CorpusStore(root)
    v1 = publish_source(store, config={"round": 1})
    v2 = publish_source(store, config={"round": 2})
    publish_source(store, name="amr")

    assert CorpusStore(root).read_table("bible", v1.version).equals(SOURCE)
    assert store.corpus_names() == ["amr", "bible"]
    assert store.versions("bible") == [v1.version, v2.version]
    summaries = store.list_versions("bible")
    assert [(s.version, s.is_latest, s.total_rows, s.num_shards) for s in summaries] == [
        (v1.version, False, 10, 4),
        (v2.version, True, 10, 4),
    ]
    assert len(store.list_versions()) == 3
    assert fsspec.filesystem("memory").exists(f"{root.removeprefix('memory://')}/bible/latest")
    with pytest.raises(ValueError, match="per-process"):
        store.read_ray("bible")


def test_lookup_errors_name_what_exists() -> None:
    store = CorpusStore(memory_root())
    manifest = publish_source(store)
    with pytest.raises(CorpusLookupError, match=f"unknown version 'v-000000000000'.*published versions: {manifest.version}"):
        store.manifest("bible", "v-000000000000")
    with pytest.raises(CorpusLookupError, match="no published corpus named 'wiki'.*published corpora: bible"):
        store.read_table("wiki")
    with pytest.raises(CorpusLookupError, match="published corpora: none"):
        CorpusStore(memory_root()).list_versions("bible")
    with pytest.raises(ValueError, match=r"columns \['nope'\].*available: \['id', 'text', 'lang'\]"):
        store.read_table("bible", columns=["nope"])


def test_bad_arguments_give_clear_errors() -> None:
    store = CorpusStore(memory_root())
    with pytest.raises(ValueError, match="root"):
        CorpusStore("")
    with pytest.raises(ValueError, match="corpus name"):
        store.open_version("../escape", {}, [])
    with pytest.raises(ValueError, match="JSON-serializable"):
        store.open_version("c", {"when": object()}, [])
    with pytest.raises(ValueError, match="inputs must be a list"):
        store.open_version("c", {}, "file:///one/string")
    writer = store.open_version("c", {}, [])
    with pytest.raises(ValueError, match="shard_id"):
        writer.write_shard("../x", SOURCE)
    with pytest.raises(TypeError, match="pyarrow.Table"):
        writer.write_shard("s0", SOURCE.to_pydict())  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="counters"):
        writer.write_shard("s0", SOURCE, counters={"seen": -1})
    with pytest.raises(ValueError, match="no shard is complete"):
        writer.publish()
    writer.write_shard("s0", SOURCE)
    writer.write_shard("s1", SOURCE.select(["id"]))
    with pytest.raises(ValueError, match=r"shards \['s1'\] have columns that differ"):
        writer.publish()
    with pytest.raises(ValueError, match=r"not complete \['s2'\]"):
        writer.publish(expected_shards=["s0", "s1", "s2"])

    writer.write_shard("s1", SOURCE)  # rewriting a shard replaces it
    manifest = writer.publish(expected_shards=["s0", "s1"])
    assert manifest.total_rows == 20
    with pytest.raises(RuntimeError, match="already published"):
        writer.write_shard("s2", SOURCE)


# -- ray -----------------------------------------------------------------------------------------


@pytest.mark.slow
def test_read_ray_reads_the_published_shards(tmp_path: Path) -> None:
    import ray

    store = CorpusStore(str(tmp_path))
    publish_source(store)
    started = not ray.is_initialized()
    if started:
        ray.init(address="local", num_cpus=4, include_dashboard=False, log_to_driver=False)
    try:
        dataset = store.read_ray("bible")
        rows = dataset.take_all()
    finally:
        if started:
            ray.shutdown()
    assert sorted(row["id"] for row in rows) == SOURCE.column("id").to_pylist()
    # shard order, whatever order the parallel read tasks finish in (a seeded shuffle downstream is then reproducible)
    assert dataset.context.execution_options.preserve_order
    assert [row["id"] for row in rows] == store.read_table("bible").column("id").to_pylist()
    assert {row["id"]: row["text"] for row in rows} == dict(zip(SOURCE["id"].to_pylist(), SOURCE["text"].to_pylist(), strict=True))


# -- CLI -----------------------------------------------------------------------------------------


def run_cli(*argv: str) -> int:
    parser = argparse.ArgumentParser(prog="interlingua corpus")
    corpus_command.add_arguments(parser)
    return corpus_command.run(parser.parse_args(argv))


def test_cli_list_and_show(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    root = str(tmp_path)
    v1 = publish_source(CorpusStore(root), config={"round": 1})
    v2 = publish_source(CorpusStore(root), config={"round": 2})

    assert run_cli("list", "--root", root) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].split() == ["NAME", "VERSION", "CREATED", "(UTC)", "ROWS", "SHARDS", "REJECTS"]
    assert lines[1].split()[:2] == ["bible", v1.version] and lines[1].split()[-3:] == ["10", "4", "0"]
    assert lines[2].split()[:3] == ["bible", v2.version, "*"]

    assert run_cli("show", "bible", "--root", root) == 0
    shown = capsys.readouterr().out
    assert f"version   {v2.version} (latest)" in shown
    assert "rows      10 in 4 shards" in shown and "counters  seen=10" in shown
    assert [line.split()[0] for line in shown.splitlines() if line.startswith("shard-")] == [s.id for s in PLAN]

    assert run_cli("show", "bible", "--version", v1.version, "--json", "--root", root) == 0
    assert Manifest.from_json(capsys.readouterr().out) == v1

    assert run_cli("show", "bible", "--version", "v-000000000000", "--root", root) == 2
    error = capsys.readouterr().err
    assert "unknown version 'v-000000000000'" in error and v1.version in error and v2.version in error


def test_one_damaged_version_does_not_hide_the_other_versions_of_its_corpus_from_list(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A version whose manifest is not JSON left its whole corpus out of `corpus list`: with no other corpus, stdout
    said "no published corpora under ROOT", which was false."""
    root = str(tmp_path)
    older = publish_source(CorpusStore(root), config={"round": 1})
    damaged = publish_source(CorpusStore(root), config={"round": 2})
    newest = publish_source(CorpusStore(root), config={"round": 3})
    manifest_path = tmp_path / "bible" / damaged.version / "manifest.json"
    manifest_path.write_text("{ damaged", encoding="utf-8")
    assert run_cli("list", "--root", root) == 1
    captured = capsys.readouterr()
    assert [line.split()[:2] for line in captured.out.splitlines()[1:-1]] == [
        ["bible", older.version], ["bible", newest.version]]
    assert captured.err.splitlines() == [f"interlingua corpus: error: version bible/{damaged.version} left out: "
                                         f"refusing the manifest {manifest_path}: Invalid JSON: key must be a string "
                                         "at line 1 column 3"]

    for version in (older, newest):
        (tmp_path / "bible" / version.version / "manifest.json").write_text("{ damaged", encoding="utf-8")
    assert run_cli("list", "--root", root) == 1
    assert capsys.readouterr().out.strip() == f"no readable published versions under {root}"


def test_one_damaged_corpus_does_not_hide_the_others_from_list(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A corrupt manifest of one corpus made `corpus list` fail (exit 2) for the whole store, a shared one included."""
    root = str(tmp_path)
    good = publish_source(CorpusStore(root), name="bible")
    bad = publish_source(CorpusStore(root), name="other")
    (tmp_path / "other" / bad.version / "manifest.json").write_text("{ damaged", encoding="utf-8")
    assert run_cli("list", "--root", root) == 1
    captured = capsys.readouterr()
    listed = [line.split()[:2] for line in captured.out.splitlines()[1:] if line.startswith(("bible", "other"))]
    assert listed == [["bible", good.version]]
    assert captured.err.startswith(f"interlingua corpus: error: version other/{bad.version} left out: refusing the "
                                   "manifest ")
    assert run_cli("list", "--name", "other", "--root", root) == 1  # asked for by name: its error, a damaged store
    capsys.readouterr()
    assert run_cli("export", "bible", "--root", root, "--out", str(tmp_path / "bible" / "v-000000000000")) == 2
    assert "is inside the corpus store" in capsys.readouterr().err
    assert not (tmp_path / "bible" / "v-000000000000").exists()


def test_an_empty_root_or_a_file_as_root_is_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """``--root ""`` listed the default store; a file as the root said "no published corpora" with exit 0."""
    (tmp_path / "afile").write_text("x")
    assert run_cli("list", "--root", "") == 2
    assert "--root is empty" in capsys.readouterr().err
    assert run_cli("list", "--root", str(tmp_path / "afile")) == 2
    assert "is a file, not a corpus store folder" in capsys.readouterr().err
    assert run_cli("prune", "bible", "--keep", "0", "--root", str(tmp_path)) == 2  # the option's name, not keep_last
    assert "--keep must be >= 1 (the newest version always stays), got 0" in capsys.readouterr().err


def test_unpinning_a_version_never_pinned_says_so(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """``pin V --remove`` of a version that held no pin printed "unpinned", as if one had been taken away."""
    root = str(tmp_path)
    version = publish_source(CorpusStore(root)).version
    assert run_cli("pin", "bible", version, "--remove", "--root", root) == 0
    assert capsys.readouterr().out.strip() == f"bible/{version} was not pinned: nothing to remove"
    assert run_cli("pin", "bible", "latest", "--root", root) == 0
    capsys.readouterr()
    assert run_cli("pin", "bible", "latest", "--remove", "--root", root) == 0
    assert capsys.readouterr().out.strip() == f"unpinned bible/{version}"
    assert CorpusStore(root).pins("bible") == []


def test_cli_default_root_is_under_interlingua_home(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("INTERLINGUA_HOME", str(tmp_path))
    assert run_cli("list") == 0
    assert capsys.readouterr().out.strip() == f"no published corpora under {tmp_path}/corpus"
    publish_source(CorpusStore(str(tmp_path / "corpus")))
    assert run_cli("list") == 0
    assert "bible" in capsys.readouterr().out
    monkeypatch.delenv("INTERLINGUA_HOME")
    assert corpus_command.default_corpus_root() == str(Path.cwd().resolve() / ".interlingua" / "corpus")


def test_a_latest_pointer_naming_no_version_of_its_corpus_is_named_as_damaged(tmp_path: Path) -> None:
    """It read "unknown version 'latest' ... (or 'latest')"."""
    store = CorpusStore(str(tmp_path))
    version = publish_source(store).version
    (tmp_path / "bible" / "latest").write_text("../other/v-000000000000\n")
    with pytest.raises(CorpusLookupError, match=r"the latest pointer of corpus 'bible' under .* names "
                                                r"'\.\./other/v-000000000000', which is not a published version of "
                                                rf"'bible' \(the pointer is damaged\); published versions: {version}"):
        store.manifest("bible")
    assert store.manifest("bible", version).version == version  # by its id, still read
