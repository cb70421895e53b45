"""The corpus store when somebody else can write in it (a shared store: its contents are untrusted input).

Each test builds the attack in a store under ``tmp_path`` and checks that nothing outside the store changes.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pyarrow as pa
import pytest
from fsspec.implementations.local import LocalFileSystem

from interlingua.operators.corpus import CorpusStore
from interlingua.operators.corpus.lease import acquire
from interlingua.operators.corpus.no_follow import StoreLinkError

TABLE = pa.table({"text": ["a", "b", "c"]})


def victim_folder(tmp_path: Path) -> Path:
    """A folder of the victim's, outside the store: two subfolders and a file."""
    victim = tmp_path / "victim"
    (victim / "projects" / "thesis").mkdir(parents=True)
    (victim / "photos").mkdir()
    (victim / "projects" / "thesis" / "chapter1.tex").write_text("precious")
    (victim / ".bashrc").write_text("export PATH\n")
    return victim


def snapshot(folder: Path) -> dict[str, str]:
    return {str(p.relative_to(folder)): (p.read_bytes().hex() if p.is_file() else "/") for p in sorted(folder.rglob("*"))}


def publish(store: CorpusStore, name: str = "c", config: dict | None = None) -> object:
    writer = store.open_version(name, config or {"a": 1}, ["x"])
    writer.write_shard("s0", TABLE)
    return writer.publish()


# -- 1. symbolic links in the store are never followed -------------------------------------------------------------


def test_a_staging_folder_replaced_by_a_link_is_never_listed_written_or_deleted_through(tmp_path: Path) -> None:
    victim = victim_folder(tmp_path)
    before = snapshot(victim)
    store = CorpusStore(str(tmp_path / "store"))
    crashed = store.open_version("c", {"a": 1}, ["x"])  # the version id is a predictable hash
    staging = Path(store._staging_root("c", crashed.version))
    shutil.rmtree(staging)  # the attacker, who can write in the store
    os.symlink(victim, staging)

    writer = store.open_version("c", {"a": 1}, ["x"])  # the victim reruns the same build
    writer.write_shard("s0", TABLE)
    manifest = writer.publish()

    assert snapshot(victim) == before  # nothing removed, nothing written inside the link's target
    assert store.read_table("c", manifest.version).column("text").to_pylist() == ["a", "b", "c"]
    assert not staging.is_symlink()


def test_a_link_among_the_writer_folders_is_not_followed_when_stale_staging_is_dropped(tmp_path: Path) -> None:
    victim = victim_folder(tmp_path)
    before = snapshot(victim)
    store = CorpusStore(str(tmp_path / "store"))
    writer = store.open_version("c", {"a": 1}, ["x"])
    os.symlink(victim, Path(store._staging_root("c", writer.version)) / "host-1-deadbeef")  # "another writer"
    writer.write_shard("s0", TABLE)
    writer.publish()
    assert snapshot(victim) == before


def test_writes_into_a_writer_folder_never_go_through_a_link(tmp_path: Path) -> None:
    victim = victim_folder(tmp_path)
    store = CorpusStore(str(tmp_path / "store"))
    writer = store.open_version("c", {"a": 1}, ["x"])
    writer.write_shard("s0", TABLE)
    data = Path(writer.staging_dir) / "data"
    os.symlink(victim / ".bashrc", data / "s1.parquet")  # a file link is replaced, not written through
    writer.write_shard("s1", TABLE)
    assert (victim / ".bashrc").read_text() == "export PATH\n"
    assert not (data / "s1.parquet").is_symlink()

    shutil.rmtree(data)
    os.symlink(victim / "photos", data)  # a folder link is refused
    with pytest.raises(StoreLinkError, match="symbolic link"):
        writer.write_shard("s2", TABLE)
    assert list((victim / "photos").iterdir()) == []


def test_prune_never_deletes_through_a_linked_version_folder(tmp_path: Path) -> None:
    store = CorpusStore(str(tmp_path / "store"))
    first = publish(store, config={"a": 1})
    for k in (2, 3):
        publish(store, config={"a": k})
    victim = tmp_path / "victim"
    folder = Path(store._version_dir("c", first.version))
    shutil.copytree(folder, victim)  # the victim's own copy of that version, say
    before = snapshot(victim)
    shutil.rmtree(folder)
    os.symlink(victim, folder)

    store.prune("c", keep_last=1)
    assert snapshot(victim) == before


def test_a_reused_shard_that_is_a_link_is_refused_not_hard_linked(tmp_path: Path) -> None:
    secret = tmp_path / "victim" / "id_rsa"
    secret.parent.mkdir()
    secret.write_text("-----BEGIN PRIVATE KEY-----")
    store = CorpusStore(str(tmp_path / "store"))
    parent = publish(store)
    shard_file = Path(store._version_dir("c", parent.version)) / parent.shards[0].path
    shard_file.unlink()
    os.symlink(secret, shard_file)  # a refresh would publish the victim's file in the shared store

    writer = store.open_version("c", {"a": 2}, ["x"])
    with pytest.raises(StoreLinkError):
        writer.reuse_shard(parent.shards[0], parent)
    assert os.stat(secret).st_nlink == 1


def test_unpin_never_deletes_through_a_linked_pins_folder(tmp_path: Path) -> None:
    store = CorpusStore(str(tmp_path / "store"))
    manifest = publish(store)
    victim = tmp_path / "victim"
    victim.mkdir()
    (victim / manifest.version).write_text("mine")
    os.symlink(victim, Path(store._name_dir("c")) / "_pins")
    with pytest.raises(StoreLinkError):
        store.unpin("c", manifest.version)
    assert (victim / manifest.version).read_text() == "mine"


def test_a_lock_file_that_is_a_link_is_replaced_not_written_through(tmp_path: Path) -> None:
    victim_rc = tmp_path / "victim_rc"
    victim_rc.write_text("alias ls='ls -F'\n")
    lock = tmp_path / "store" / "c" / "_locks" / "v-1.lock"
    lock.parent.mkdir(parents=True)
    os.symlink(victim_rc, lock)
    lease = acquire(LocalFileSystem(), str(lock), "me", lease_seconds=60, timeout=5)
    lease.renew()
    assert victim_rc.read_text() == "alias ls='ls -F'\n"
    assert not lock.is_symlink()
    lease.release()


# -- 2. corpus pin ----------------------------------------------------------------------------------------------------


def run_corpus_cli(*argv: str) -> int:
    import argparse

    from interlingua.workflows.commands import corpus as corpus_command

    parser = argparse.ArgumentParser()
    corpus_command.add_arguments(parser)
    return corpus_command.run(parser.parse_args(argv))


def test_corpus_pin_replaces_a_link_at_the_pin_file_and_never_writes_through_it(tmp_path: Path) -> None:
    store = CorpusStore(str(tmp_path / "store"))
    manifest = publish(store, "leak")
    victim_rc = tmp_path / "victim_rc"
    victim_rc.write_text("alias ls='ls -F'\n")
    pins = Path(store._name_dir("leak")) / "_pins"
    pins.mkdir()
    os.symlink(victim_rc, pins / manifest.version)

    assert run_corpus_cli("pin", "leak", "latest", "--root", store.root) == 0
    assert victim_rc.read_text() == "alias ls='ls -F'\n"
    assert not (pins / manifest.version).is_symlink()
    assert store.pins("leak") == [manifest.version]


def test_corpus_pin_refuses_a_pins_folder_that_is_a_link(tmp_path: Path, capsys) -> None:
    store = CorpusStore(str(tmp_path / "store"))
    manifest = publish(store, "leak")
    victim = tmp_path / "victim"
    victim.mkdir()
    os.symlink(victim, Path(store._name_dir("leak")) / "_pins")
    assert run_corpus_cli("pin", "leak", "latest", "--root", store.root) == 2
    assert "_pins is a symbolic link" in capsys.readouterr().err
    assert list(victim.iterdir()) == []
    assert manifest.version  # still published, unpinned
