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

    with pytest.raises(StoreLinkError, match=f"{folder} is a symbolic link"):  # refused, not skipped (nor followed)
        store.prune("c", keep_last=1)
    assert snapshot(victim) == before


def test_a_shard_stored_in_a_linked_version_folder_is_not_read_through_the_link(tmp_path: Path) -> None:
    """A manifest may name another version of its corpus as the holder of a shard (``stored_in``); a holder folder
    that is a link was read through, its bytes accepted when they matched the manifest's digest."""
    import json

    store = CorpusStore(str(tmp_path / "store"))
    holder = publish(store, config={"a": 1})
    reader = publish(store, config={"a": 2})  # the same rows: the same shard bytes and SHA-256
    manifest_file = Path(store._version_dir("c", reader.version)) / "manifest.json"
    manifest = json.loads(manifest_file.read_text())
    manifest["shards"][0]["stored_in"] = holder.version
    manifest_file.write_text(json.dumps(manifest))
    folder = Path(store._version_dir("c", holder.version))
    elsewhere = tmp_path / "elsewhere"
    folder.rename(elsewhere)
    os.symlink(elsewhere, folder)

    for read in (store.read_table, store.verify, store.shard_paths):
        with pytest.raises(StoreLinkError, match=f"{folder} is a symbolic link"):
            read("c", reader.version)


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


# -- 3. every read of a published version checks the manifest's digests ----------------------------------------------


def tamper(path: Path) -> None:
    """Change one byte in place (same size): what a store writer with write access can do to a published file."""
    raw = bytearray(path.read_bytes())
    raw[len(raw) // 2] ^= 0xFF
    path.write_bytes(bytes(raw))


def test_read_ray_checks_every_shard_before_building_the_dataset(tmp_path: Path, monkeypatch) -> None:
    import ray.data

    from interlingua.operators.corpus import CorruptVersionError

    read: list[list[str]] = []

    class Dataset:
        class context:  # noqa: N801 - what read_ray sets on the dataset
            class execution_options:  # noqa: N801
                preserve_order = False

    monkeypatch.setattr(ray.data, "read_parquet", lambda paths, **_: read.append(list(paths)) or Dataset())
    store = CorpusStore(str(tmp_path / "store"))
    manifest = publish(store)
    folder = Path(store._version_dir("c", manifest.version))
    (folder / "data" / "extra.parquet").write_bytes((folder / manifest.shards[0].path).read_bytes())
    store.read_ray("c")
    assert read == [[str(folder / manifest.shards[0].path)]]  # the files the manifest lists, nothing else

    tamper(folder / manifest.shards[0].path)
    with pytest.raises(CorruptVersionError, match=rf"s0.parquet of c@{manifest.version} does not match the SHA-256.*"
                                                  rf"interlingua corpus verify c@{manifest.version}"):
        store.read_ray("c")
    assert len(read) == 1


def test_read_ray_after_languages_hashes_each_shard_once_and_again_once_rewritten(tmp_path: Path, monkeypatch) -> None:
    """train reads languages() then read_ray on one store: the second read trusts the first check while the file is
    the one checked (same inode, size, mtime, ctime); a shard rewritten between the two, its mtime set back, is
    hashed again and refused."""
    import ray.data

    from interlingua.core import integrity
    from interlingua.operators.corpus import CorruptVersionError

    class Dataset:
        class context:  # noqa: N801 - what read_ray sets on the dataset
            class execution_options:  # noqa: N801
                preserve_order = False

    monkeypatch.setattr(ray.data, "read_parquet", lambda paths, **_: Dataset())
    hashed: list[str] = []
    real_hash = integrity.hash_file
    monkeypatch.setattr(integrity, "hash_file", lambda fs, path, progress=None: hashed.append(path) or
                        real_hash(fs, path, progress))
    store = CorpusStore(str(tmp_path / "store"))
    writer = store.open_version("c", {"a": 1}, ["x"])
    for k, lang in enumerate(["en", "de"]):
        writer.write_shard(f"s{k}", pa.table({"text": ["a", "b"], "lang": [lang, lang]}))
    manifest = writer.publish()
    folder = Path(store._version_dir("c", manifest.version))
    assert store.languages("c") == ["de", "en"]
    store.read_ray("c")
    assert hashed == []  # both shards were checked on the bytes languages() parsed
    CorpusStore(str(tmp_path / "store")).read_ray("c")
    assert len(hashed) == 2  # another store object checks for itself

    hashed.clear()
    shard = folder / manifest.shards[1].path
    stat = shard.stat()
    tamper(shard)
    os.utime(shard, ns=(stat.st_atime_ns, stat.st_mtime_ns))  # same size and mtime: the ctime still moves
    with pytest.raises(CorruptVersionError, match=rf"s1.parquet of c@{manifest.version} does not match the SHA-256"):
        store.read_ray("c")
    assert hashed == [str(shard)]


def publish_entities(store: CorpusStore) -> object:
    writer = store.open_version("e-entities", {"a": 1}, ["x"])
    for k in range(2):
        writer.write_shard(f"entities-{k:05d}", pa.table({
            "entity_id": [f"Q{k}a", f"Q{k}b"],
            "vector": pa.array([[1.0, 2.0], [3.0, 4.0]], pa.list_(pa.float32()))}))
    return writer.publish()


def test_entity_vectors_of_a_version_folder_are_its_listed_shards_checked(tmp_path: Path) -> None:
    import pyarrow.parquet as pq

    from interlingua.operators.corpus import CorruptVersionError
    from interlingua.trainers.objectives.entity_vectors import load_entity_vectors

    store = CorpusStore(str(tmp_path / "store"))
    manifest = publish_entities(store)
    folder = Path(store._version_dir("e-entities", manifest.version))
    pq.write_table(pa.table({"entity_id": ["EVIL"], "vector": pa.array([[9.0, 9.0]], pa.list_(pa.float32()))}),
                   folder / "data" / "zz-extra.parquet")  # a file the manifest does not list
    for url in (str(folder), str(folder / "data")):
        assert load_entity_vectors(url).ids == ["Q0a", "Q0b", "Q1a", "Q1b"]

    tamper(folder / manifest.shards[1].path)
    with pytest.raises(CorruptVersionError, match=rf"entities-00001.parquet of e-entities@{manifest.version} .*"
                                                  rf"interlingua corpus verify e-entities@{manifest.version}"):
        load_entity_vectors(str(folder))
    with pytest.raises(CorruptVersionError, match="does not match"):
        load_entity_vectors(str(folder / manifest.shards[1].path))



@pytest.mark.parametrize("linked", ["corpus", "version", "manifest", "shard"])
def test_entity_vectors_of_a_version_folder_are_not_read_through_a_link_in_the_store(tmp_path: Path,
                                                                                    linked: str) -> None:
    """load_entity_vectors (the EASE entity_vectors key) read a version folder, its manifest and its shards through
    symbolic links that every reader of the store refuses. Each link points to what it replaces: followed, the read
    would succeed."""
    from interlingua.trainers.objectives.entity_vectors import load_entity_vectors

    store = CorpusStore(str(tmp_path / "store"))
    manifest = publish_entities(store)
    folder = Path(store._version_dir("e-entities", manifest.version))
    link = {"corpus": folder.parent, "version": folder, "manifest": folder / "manifest.json",
            "shard": folder / manifest.shards[1].path}[linked]
    link.rename(tmp_path / "elsewhere")
    link.symlink_to(tmp_path / "elsewhere")
    for url in (folder, folder / "data", folder / manifest.shards[1].path):
        with pytest.raises(StoreLinkError, match=f"^{link} is a symbolic link"):
            load_entity_vectors(str(url))
    link.unlink()
    (tmp_path / "elsewhere").rename(link)
    assert load_entity_vectors(str(folder)).ids == ["Q0a", "Q0b", "Q1a", "Q1b"]

def publish_with_parameters(store: CorpusStore, tmp_path: Path) -> object:
    params = tmp_path / "params"
    params.mkdir()
    (params / "fast_align_params.json").write_text('{"tension": 4.0}')
    writer = store.open_version("c", {"a": 1}, ["x"])
    writer.write_shard("s0", TABLE)
    writer.add_artifact("fast_align", str(params))
    return writer.publish()


def test_parameter_artifacts_changed_in_place_are_refused(tmp_path: Path) -> None:
    from interlingua.operators.corpus import CorruptVersionError

    store = CorpusStore(str(tmp_path / "store"))
    parent = publish_with_parameters(store, tmp_path)
    assert [record.path for record, _ in store.open_version("c", {"a": 1}, ["x"]).artifact_files("fast_align")] == [
        "fast_align/fast_align_params.json"]
    tamper(Path(store._version_dir("c", parent.version)) / "fast_align" / "fast_align_params.json")
    with pytest.raises(CorruptVersionError, match="fast_align_params.json"):
        store.open_version("c", {"a": 1}, ["x"]).artifact_files("fast_align")  # the published version's
    with pytest.raises(CorruptVersionError, match=f"fast_align_params.json of c@{parent.version}"):
        store.open_version("c", {"a": 2}, ["x"]).reuse_artifact("fast_align", parent)  # a refresh taking them over


def test_corpus_verify_counts_one_file_in_the_singular(tmp_path: Path, capsys) -> None:
    """It said "1 files match" (and "1 of the N files do not match")."""
    store = CorpusStore(str(tmp_path / "store"))
    writer = store.open_version("c", {"a": 1}, ["x"])
    writer.write_shard("s0", TABLE)
    manifest = writer.publish()
    assert run_corpus_cli("verify", "c", "--root", store.root) == 0
    assert capsys.readouterr().out == f"c@{manifest.version}: 1 file matches its manifest (size and SHA-256)\n"
    shard = Path(store.shard_paths("c")[0])
    shard.write_bytes(shard.read_bytes()[:-1] + b"?")
    assert run_corpus_cli("verify", "c", "--root", store.root) == 1
    assert "c@latest: 1 of the 1 files does not match its manifest" in capsys.readouterr().err


def test_corpus_verify_names_each_file_that_differs_and_keeps_old_manifests_readable(tmp_path: Path, capsys) -> None:
    import json

    store = CorpusStore(str(tmp_path / "store"))
    writer = store.open_version("c", {"a": 1}, ["x"])
    for k in range(3):
        writer.write_shard(f"s{k}", TABLE, rejects=[{"operator": "clean", "reason": "empty", "row": {"text": ""}}])
    manifest = writer.publish()
    folder = Path(store._version_dir("c", manifest.version))
    assert run_corpus_cli("verify", f"c@{manifest.version}", "--root", store.root) == 0
    assert "c@" + manifest.version + ": 6 files match" in capsys.readouterr().out

    # a manifest written before rejects had a digest: read unchecked, and verify says so
    path = folder / "manifest.json"
    payload = json.loads(path.read_text())
    payload["shards"][0]["rejects_sha256"] = None
    path.write_text(json.dumps(payload))
    assert store.read_rejects("c").num_rows == 3
    assert run_corpus_cli("verify", "c", "--root", store.root) == 0
    out = capsys.readouterr().out
    assert f"unchecked c/{manifest.version}/rejects/s0.parquet" in out and "1 unchecked" in out

    tamper(folder / "data" / "s1.parquet")
    with open(folder / "data" / "s2.parquet", "ab") as handle:
        handle.write(b"appended")
    tamper(folder / "rejects" / "s1.parquet")
    assert run_corpus_cli("verify", "c", "--root", store.root) == 1
    captured = capsys.readouterr()
    lines = [line for line in captured.out.splitlines() if line.startswith("mismatch")]
    assert len(lines) == 3
    assert f"c/{manifest.version}/data/s1.parquet does not match the SHA-256" in lines[0]
    assert f"c/{manifest.version}/rejects/s1.parquet does not match the SHA-256" in lines[1]
    assert f"c/{manifest.version}/data/s2.parquet does not match the size" in lines[2]
    assert "3 of the 6 files do not match" in captured.err
    from interlingua.operators.corpus import CorruptVersionError

    with pytest.raises(CorruptVersionError, match="s1.parquet of c@.* does not match the SHA-256"):
        store.read_table("c")
    (folder / "data" / "s1.parquet").unlink()
    with pytest.raises(CorruptVersionError, match="s1.parquet of c@.* is missing"):
        store.read_table("c")
    with pytest.raises(CorruptVersionError, match="rejects/s1.parquet"):
        store.read_rejects("c")


# -- 4. malformed leases, oversized records, control characters -------------------------------------------------------


@pytest.mark.parametrize("expires_at", ["never", None, [1], float("inf"), True])
def test_a_malformed_lease_in_another_writers_folder_counts_as_expired(tmp_path: Path, caplog, expires_at) -> None:
    import json

    store = CorpusStore(str(tmp_path / "store"))
    writer = store.open_version("c", {"a": 1}, ["x"])
    other = Path(store._staging_root("c", writer.version)) / "host-1-deadbeef"
    other.mkdir()
    (other / "_writer.json").write_text(json.dumps({"owner": "x", "host": "h", "pid": 1, "expires_at": expires_at}))
    assert writer.live_writers() == []
    writer.write_shard("s0", TABLE)
    manifest = writer.publish()  # raised TypeError after publishing, from _is_live
    assert store.latest_version("c") == manifest.version and not other.exists()
    assert "malformed lease" in caplog.text


def test_a_lock_holding_a_malformed_lease_is_taken_over(tmp_path: Path, caplog) -> None:
    import json

    lock = tmp_path / "store" / "c" / "_locks" / "v-1.lock"
    lock.parent.mkdir(parents=True)
    lock.write_text(json.dumps({"owner": "x", "expires_at": "never"}))
    lease = acquire(LocalFileSystem(), str(lock), "me", lease_seconds=60, timeout=5)
    assert json.loads(lock.read_text())["owner"] == "me"
    assert "malformed lease" in caplog.text
    lease.release()


def test_an_oversized_latest_pointer_is_refused(tmp_path: Path) -> None:
    from interlingua.operators.corpus import CorruptVersionError

    store = CorpusStore(str(tmp_path / "store"))
    manifest = publish(store)
    Path(store._latest_path("c")).write_text(manifest.version + "\n" + " " * 5000)
    with pytest.raises(CorruptVersionError, match="latest pointer .* larger than 4 KiB"):
        store.latest_version("c")


def test_an_oversized_manifest_is_refused_without_being_read_whole(tmp_path: Path) -> None:
    from interlingua.operators.corpus import CorruptVersionError
    from interlingua.trainers.objectives.entity_vectors import load_entity_vectors

    store = CorpusStore(str(tmp_path / "store"))
    manifest = publish(store)
    manifest_file = Path(store._version_dir("c", manifest.version)) / "manifest.json"
    os.truncate(manifest_file, (64 << 20) + 1)  # sparse: no disk used
    with pytest.raises(CorruptVersionError, match="manifest .* larger than 64 MiB"):
        store.manifest("c", manifest.version)
    with pytest.raises(CorruptVersionError, match="manifest .* larger than 64 MiB"):
        load_entity_vectors(str(manifest_file.parent))


def live_lease_padded() -> str:
    import json
    import time

    live = json.dumps({"owner": "x", "host": "elsewhere", "pid": 1, "expires_at": time.time() + 3600})
    return live + " " * 5000  # parses, but no lease is that large


def test_an_oversized_writer_lease_is_no_lease(tmp_path: Path, caplog) -> None:
    store = CorpusStore(str(tmp_path / "store"))
    writer = store.open_version("c", {"a": 2}, ["x"])
    other = Path(store._staging_root("c", writer.version)) / "host-1-deadbeef"
    other.mkdir()
    (other / "_writer.json").write_text(live_lease_padded())
    assert writer.live_writers() == []
    assert "treated as no lease" in caplog.text


def test_an_oversized_lock_is_a_stale_one(tmp_path: Path, caplog) -> None:
    lock = tmp_path / "store" / "c" / "_locks" / "v-1.lock"
    lock.parent.mkdir(parents=True)
    lock.write_text(live_lease_padded())
    acquire(LocalFileSystem(), str(lock), "me", lease_seconds=60, timeout=0.5).release()
    assert "larger than any lease" in caplog.text


OSC52 = "\x1b]52;c;Y3VybCBldmlsLnNoIHwgc2g=\x07"  # sets the terminal's clipboard
HOSTILE = [f"file:///data/a.txt{OSC52}", "file:///b\u009b2J.txt", "file:///c\u202etxt.exe", "file:///d\x7f\r\n.txt"]


def test_corpus_commands_escape_control_characters_a_manifest_holds(tmp_path: Path, capsys) -> None:
    import json
    import re

    from interlingua.core.console import printable

    store = CorpusStore(str(tmp_path / "store"))
    rejects = [{"operator": f"op{OSC52}", "reason": "r\u202e", "row": {"text": ""}}]
    versions = []
    for k, inputs in enumerate((HOSTILE[:2], HOSTILE)):
        writer = store.open_version("c", {"a": k, "note": f"x{OSC52}"}, inputs)
        writer.write_shard("s0", TABLE, rejects=rejects, counters={f"seen\x1b[2J{k}": 1})
        versions.append(writer.publish().version)
    control = re.compile("[\x00-\x09\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")
    commands = [("list",), ("show", "c"), ("show", "c", "--json"), ("diff", "c", *versions),
                ("diff", "c", *versions, "--json"), ("show", "c", "--version", f"v-{OSC52}"), ("verify", "c")]
    for command in commands:
        run_corpus_cli(*command, "--root", store.root)
        captured = capsys.readouterr()
        for text in (captured.out, captured.err):
            assert not control.search(text), (command, text)
        if "--json" in command:  # still JSON, with the same strings
            assert HOSTILE[2] in json.dumps(json.loads(captured.out), ensure_ascii=False)
        elif command[1:2] == ("c",) and command[0] in ("show", "diff") and "--version" not in command:
            assert printable(HOSTILE[0] if command[0] == "show" else HOSTILE[2]) in captured.out
            assert "seen\\x1b[2J1" in captured.out
