"""Corpus versions are datasets: `datasets.load_dataset(VERSION)`, `pandas.read_parquet`, `to_hf`, export (#14 item 4)."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import datasets
import pandas as pd
import pyarrow as pa
import pytest

from interlingua.operators.corpus import CorpusStore, plan_shards
from interlingua.operators.corpus.export import export_version
from interlingua.workflows.commands import corpus as corpus_command

ROWS = pa.table({
    "id": [str(i) for i in range(7)],
    "src_tokens": [[f"w{i}", "x"] for i in range(7)],
    "alignment": [[[0, 0], [1, 1]] for _ in range(7)],
})
PLAN = plan_shards(ROWS.num_rows, rows_per_shard=3)


def publish(store: CorpusStore, config: dict | None = None, parent=None):
    writer = store.open_version("pairs", config or {"k": 1}, ["file:///raw.tsv"])
    for spec in PLAN:
        if parent is not None and spec.id != PLAN[-1].id:
            writer.reuse_shard(next(s for s in parent.shards if s.shard_id == spec.id), parent)
            continue
        rejects = [{"operator": "hygiene", "reason": "empty", "row": {"id": f"r{spec.id}"}}]
        writer.write_shard(spec.id, ROWS.slice(spec.start, spec.num_rows), rejects=rejects)
    return writer.publish(expected_shards=[s.id for s in PLAN])


def rows_of(dataset) -> list[dict]:
    return [dict(row) for row in dataset]


def test_load_dataset_and_pandas_read_a_version_folder_as_is(tmp_path: Path) -> None:
    store = CorpusStore(str(tmp_path))
    manifest = publish(store)
    folder = tmp_path / "pairs" / manifest.version
    loaded = datasets.load_dataset(str(folder), cache_dir=str(tmp_path / "hf-cache"))
    assert list(loaded) == ["train"] and rows_of(loaded["train"]) == ROWS.to_pylist()
    assert loaded["train"].features["alignment"].feature.feature.dtype == "int64"  # lists of [i, j], not strings
    rejects = datasets.load_dataset(str(folder), "rejects", cache_dir=str(tmp_path / "hf-cache"))
    assert rows_of(rejects["train"]) == store.read_rejects("pairs").to_pylist()
    frame = pd.read_parquet(folder / "data")
    assert frame["id"].tolist() == ROWS.column("id").to_pylist()
    assert [list(t) for t in frame["src_tokens"]] == ROWS.column("src_tokens").to_pylist()
    assert "manifest.json" in {p.name for p in folder.iterdir()} and (folder / "README.md").read_text().startswith("---")


def test_a_version_with_an_empty_shard_loads_with_datasets(tmp_path: Path) -> None:
    """A shard whose rows were all rejected: written with no row group, since ``datasets`` refuses a row group of 0
    rows ("BatchSize must be greater than 0"), which failed ``load_dataset`` on the whole version and its export."""
    import pyarrow.parquet as pq

    store = CorpusStore(str(tmp_path))
    writer = store.open_version("pairs", {"k": 2}, ["file:///raw.tsv"])
    writer.write_shard("s0", ROWS.slice(0, 2))
    writer.write_shard("s1", ROWS.slice(0, 0), rejects=[{"operator": "hygiene", "reason": "empty", "row": {"id": "x"}}])
    manifest = writer.publish(expected_shards=["s0", "s1"])
    folder = tmp_path / "pairs" / manifest.version
    empty = next(folder.rglob("s1*.parquet"))
    assert pq.ParquetFile(empty).metadata.num_row_groups == 0 and pq.read_table(empty).schema == ROWS.schema
    loaded = datasets.load_dataset(str(folder), cache_dir=str(tmp_path / "hf-cache"))
    assert rows_of(loaded["train"]) == ROWS.slice(0, 2).to_pylist() == store.read_table("pairs").to_pylist()
    export_version(store, "pairs", manifest.version, str(tmp_path / "export"), "parquet")
    exported = datasets.load_dataset(str(tmp_path / "export"), cache_dir=str(tmp_path / "hf-cache2"))
    assert rows_of(exported["train"]) == ROWS.slice(0, 2).to_pylist()


def test_a_refreshed_version_with_reused_shards_loads_whole(tmp_path: Path) -> None:
    store = CorpusStore(str(tmp_path))
    parent = publish(store)
    child = publish(store, {"k": 2}, parent=parent)
    assert [s.reused_from for s in child.shards] == [parent.version, parent.version, None]
    folder = tmp_path / "pairs" / child.version
    # hard links on a local disk: the same inode, no bytes copied, and the folder is whole
    assert (folder / child.shards[0].path).stat().st_ino == (tmp_path / "pairs" / parent.version / parent.shards[0].path).stat().st_ino
    assert rows_of(datasets.load_dataset(str(folder), cache_dir=str(tmp_path / "c"))["train"]) == ROWS.to_pylist()
    assert pd.read_parquet(folder / "data")["id"].tolist() == ROWS.column("id").to_pylist()


def test_reuse_by_reference_on_memory_store_reads_and_exports(tmp_path: Path) -> None:
    import uuid

    store = CorpusStore(f"memory://ds-{uuid.uuid4().hex}")
    parent = publish(store)
    child = publish(store, {"k": 2}, parent=parent)
    assert [s.stored_in for s in child.shards] == [parent.version, parent.version, None]  # referenced, not copied
    assert not store.fs.exists(f"{store._version_dir('pairs', child.version)}/{child.shards[0].path}")
    assert store.read_table("pairs").equals(ROWS)
    card = store.fs.cat_file(f"{store._version_dir('pairs', child.version)}/README.md").decode()
    assert f'"../{parent.version}/data/shard-00000.parquet"' in card
    export_version(store, "pairs", "latest", str(tmp_path / "export"))
    assert rows_of(datasets.load_dataset(str(tmp_path / "export"), cache_dir=str(tmp_path / "c"))["train"]) == ROWS.to_pylist()
    # the parent holds the child's shards: retention keeps it although only the last version is asked for
    assert store.prune("pairs", keep_last=1)["kept"][parent.version] == f"holds files of {child.version}"


def test_to_hf_and_cli_export_both_formats(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    store = CorpusStore(str(tmp_path / "store"))
    manifest = publish(store)
    dataset = store.to_hf("pairs")
    assert isinstance(dataset, datasets.DatasetDict) and set(dataset) == {"train", "rejects"}
    assert rows_of(dataset["train"]) == ROWS.to_pylist() and dataset["rejects"].num_rows == len(PLAN)

    for fmt in ("parquet", "hf"):
        out = tmp_path / f"out-{fmt}"
        code = corpus_command.run(argparse.Namespace(corpus_action="export", name="pairs", version="latest",
                                                     out=str(out), format=fmt, root=str(tmp_path / "store")))
        assert code == 0 and manifest.version in capsys.readouterr().out
        loaded = (datasets.load_dataset(str(out), cache_dir=str(tmp_path / "c")) if fmt == "parquet"
                  else datasets.load_from_disk(str(out)))
        assert rows_of(loaded["train"]) == ROWS.to_pylist()
    assert json.loads((tmp_path / "out-parquet" / "manifest.json").read_text())["version"] == manifest.version
    code = corpus_command.run(argparse.Namespace(corpus_action="export", name="pairs", version="latest",
                                                 out=str(tmp_path / "out-hf"), format="hf", root=str(tmp_path / "store")))
    assert code == 2 and "not empty" in capsys.readouterr().err


def damage_last_shard(store: CorpusStore, manifest, problem: str, elsewhere: Path) -> None:
    """The last shard of ``manifest`` replaced by a link to a copy of itself, or by other bytes."""
    path = store._file_path(manifest.name, manifest.version, manifest.shards[-1], manifest.shards[-1].path)
    if problem == "damaged":
        store.fs.pipe_file(path, b"not the shard")
        return
    elsewhere.write_bytes(Path(path).read_bytes())
    Path(path).unlink()
    Path(path).symlink_to(elsewhere)


@pytest.mark.parametrize("out_existed", [False, True])
@pytest.mark.parametrize("fmt", ["parquet", "hf"])
@pytest.mark.parametrize(("problem", "code"), [("link", 2), ("damaged", 1)])
def test_a_failed_export_leaves_its_folder_as_it_was(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                     problem: str, code: int, fmt: str, out_existed: bool) -> None:
    """An export refused at the last shard (a link, or other bytes) left the shards before it in --out, a folder
    that looked like a finished export; now --out is left absent (or empty, as it was), and nothing beside it."""
    store = CorpusStore(str(tmp_path / "store"))
    damage_last_shard(store, publish(store), problem, tmp_path / "elsewhere.parquet")
    out = tmp_path / "exports" / "out"
    if out_existed:
        out.mkdir(parents=True)
    before = sorted(p.name for p in tmp_path.iterdir())
    returned = corpus_command.run(argparse.Namespace(corpus_action="export", name="pairs", version="latest",
                                                     out=str(out), format=fmt, root=str(tmp_path / "store")))
    assert returned == code and "shard-00002.parquet" in capsys.readouterr().err
    assert sorted(p.name for p in tmp_path.iterdir()) == before  # "exports" made for the export is gone too
    if out_existed:
        assert [p.name for p in out.parent.iterdir()] == ["out"] and list(out.iterdir()) == []


def test_a_failed_export_to_an_object_store_removes_what_it_wrote(tmp_path: Path) -> None:
    import uuid

    from interlingua.operators.corpus import CorruptVersionError

    store = CorpusStore(f"memory://ds-{uuid.uuid4().hex}")
    damage_last_shard(store, publish(store), "damaged", tmp_path / "unused")
    out = f"memory://export-{uuid.uuid4().hex}/out"
    with pytest.raises(CorruptVersionError, match="shard-00002.parquet"):
        export_version(store, "pairs", "latest", out)
    assert not store.fs.exists(out)


def test_an_export_into_an_existing_empty_folder_writes_in_it_and_keeps_the_folder(tmp_path: Path) -> None:
    """An empty --out that exists (a mount point, a folder whose parent is read-only, the working folder) is written
    in place: 1ae7329 renamed a copy onto it, which a mount point refuses (EBUSY), a read-only parent refuses, and
    which replaced the folder itself (its inode, mode and owner; a shell inside it was left in a deleted folder)."""
    store = CorpusStore(str(tmp_path / "store"))
    publish(store)
    out = tmp_path / "out"
    out.mkdir()
    out.chmod(0o750)
    before = out.stat()
    export_version(store, "pairs", "latest", str(out))
    after = out.stat()
    assert (after.st_ino, after.st_mode) == (before.st_ino, before.st_mode)
    assert (out / "manifest.json").is_file() and sorted(p.name for p in tmp_path.iterdir()) == ["out", "store"]
