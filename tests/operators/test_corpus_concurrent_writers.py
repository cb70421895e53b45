"""Published corpus versions stay immutable under concurrent writers, crashes and crafted manifests (#13 item 2)."""

from __future__ import annotations

import json
import multiprocessing
import os
import signal
import threading
import time
import uuid
from pathlib import Path

import pyarrow as pa
import pytest

from interlingua.operators.corpus import CorpusStore, CorruptVersionError, VersionBusyError, plan_shards
from interlingua.operators.corpus.lease import acquire

PLAN = plan_shards(12, rows_per_shard=3)
CONFIG, INPUTS = {"min_chars": 3}, ["file:///data/kjv.txt"]


def table_of(writer_tag: str, start: int, stop: int) -> pa.Table:
    """Rows that differ per writer, as a nondeterministic learner would make them."""
    return pa.table({"id": list(range(start, stop)), "text": [f"{writer_tag} {i}" for i in range(start, stop)]})


def _writer_process(root: str, tag: str, start_at: float, results) -> None:
    store = CorpusStore(root)
    writer = store.open_version("bible", CONFIG, INPUTS)
    time.sleep(max(0.0, start_at - time.time()))
    for spec in PLAN:  # both write every shard themselves (no adoption): the worst case for immutability
        writer.write_shard(spec.id, table_of(tag, spec.start, spec.stop))
        time.sleep(0.01)
    manifest = writer.publish(expected_shards=[s.id for s in PLAN])
    results.put({"tag": tag, "lost": writer.lost_race, "manifest": manifest.to_json(),
                 "staging_left": os.path.exists(writer.staging_dir)})


def test_two_processes_publish_the_same_version_once_and_it_never_changes(tmp_path: Path) -> None:
    context = multiprocessing.get_context("spawn")
    results = context.Queue()
    start_at = time.time() + 3.0  # both past their imports before they start writing
    processes = [context.Process(target=_writer_process, args=(str(tmp_path), tag, start_at, results)) for tag in "AB"]
    for process in processes:
        process.start()
    outcomes = [results.get(timeout=120) for _ in processes]
    for process in processes:
        process.join(timeout=30)
        assert process.exitcode == 0

    assert sorted(o["lost"] for o in outcomes) == [False, True]  # exactly one winner
    winner = next(o for o in outcomes if not o["lost"])
    assert all(o["manifest"] == winner["manifest"] for o in outcomes)  # the loser got the winner's manifest
    assert not any(o["staging_left"] for o in outcomes)
    store = CorpusStore(str(tmp_path))
    version = json.loads(winner["manifest"])["version"]
    assert (tmp_path / "bible" / version / "manifest.json").read_text() == winner["manifest"]
    assert store.verify("bible") .to_json() == winner["manifest"]  # every file matches its sha256
    texts = store.read_table("bible").column("text").to_pylist()
    assert {t.split()[0] for t in texts} == {winner["tag"]} and len(texts) == 12  # one writer's rows, all of them
    assert not (tmp_path / "bible" / "_staging" / version).exists()


def test_threads_on_memory_store_publish_once_under_the_lock() -> None:
    root = f"memory://concurrent-{uuid.uuid4().hex}"
    outcomes: list[tuple[str, bool, str]] = []
    both_open = threading.Barrier(2)

    def write(tag: str) -> None:
        writer = CorpusStore(root).open_version("bible", CONFIG, INPUTS)
        both_open.wait(timeout=60)  # a writer opened after the other published gets the published version instead
        for spec in PLAN:
            writer.write_shard(spec.id, table_of(tag, spec.start, spec.stop))
            time.sleep(0.002)
        manifest = writer.publish()
        outcomes.append((tag, writer.lost_race, manifest.to_json()))

    threads = [threading.Thread(target=write, args=(tag,)) for tag in "AB"]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    assert sorted(lost for _, lost, _ in outcomes) == [False, True]
    assert len({m for _, _, m in outcomes}) == 1
    store = CorpusStore(root)
    winner = next(tag for tag, lost, _ in outcomes if not lost)
    assert {t.split()[0] for t in store.verify("bible") and store.read_table("bible").column("text").to_pylist()} == {winner}
    assert not store.fs.exists(f"{store._name_dir('bible')}/_locks/{store.latest_version('bible')}.lock")


def _crashing_writer(root: str, ready) -> None:
    writer = CorpusStore(root).open_version("bible", CONFIG, INPUTS)
    for spec in PLAN[:2]:
        writer.write_shard(spec.id, table_of("X", spec.start, spec.stop))
    ready.set()
    time.sleep(600)  # killed here


def test_kill_9_mid_build_resumes_from_the_dead_writers_shards(tmp_path: Path) -> None:
    context = multiprocessing.get_context("spawn")
    ready = context.Event()
    process = context.Process(target=_crashing_writer, args=(str(tmp_path), ready))
    process.start()
    assert ready.wait(60)
    os.kill(process.pid, signal.SIGKILL)
    process.join(timeout=30)

    store = CorpusStore(str(tmp_path))
    resumed = store.open_version("bible", CONFIG, INPUTS)
    assert resumed.completed_shards() == [PLAN[0].id, PLAN[1].id]  # adopted, checksums verified
    for spec in PLAN:
        if not resumed.is_complete(spec.id):
            resumed.write_shard(spec.id, table_of("X", spec.start, spec.stop))
    manifest = resumed.publish(expected_shards=[s.id for s in PLAN])

    clean_store = CorpusStore(str(tmp_path / "clean"))
    clean = clean_store.open_version("bible", CONFIG, INPUTS)
    for spec in PLAN:
        clean.write_shard(spec.id, table_of("X", spec.start, spec.stop))
    clean_manifest = clean.publish()
    assert [(s.shard_id, s.sha256) for s in manifest.shards] == [(s.shard_id, s.sha256) for s in clean_manifest.shards]
    assert store.read_table("bible").equals(clean_store.read_table("bible"))
    # the dead writer's process is gone: publishing swept its staging folder
    assert not (tmp_path / "bible" / "_staging" / manifest.version).exists()


def test_second_writer_adopts_shards_the_first_finished_and_can_refuse_or_wait(tmp_path: Path) -> None:
    store = CorpusStore(str(tmp_path), lease_seconds=30)
    first = store.open_version("bible", CONFIG, INPUTS)
    first.write_shard(PLAN[0].id, table_of("A", 0, 3))
    with pytest.raises(VersionBusyError, match="is being written by .*wait for it"):
        store.open_version("bible", CONFIG, INPUTS, if_busy="fail")
    with pytest.raises(VersionBusyError, match="waited 0 s"):
        store.open_version("bible", CONFIG, INPUTS, if_busy="wait", wait_timeout=0.2)

    second = store.open_version("bible", CONFIG, INPUTS)  # share: works alongside
    assert second.is_complete(PLAN[0].id) and not second.is_complete(PLAN[1].id)
    for spec in PLAN[1:]:
        second.write_shard(spec.id, table_of("B", spec.start, spec.stop))
    manifest = second.publish(expected_shards=[s.id for s in PLAN])
    shard_0 = store.read_table("bible").column("text").to_pylist()[0]
    assert shard_0 == "A 0" and not second.lost_race

    # the first writer publishes afterwards: it gets the published version back, nothing is rewritten
    before = {p: p.read_bytes() for p in (tmp_path / "bible" / manifest.version).rglob("*") if p.is_file()}
    assert first.publish() == manifest and first.lost_race
    after = {p: p.read_bytes() for p in (tmp_path / "bible" / manifest.version).rglob("*") if p.is_file()}
    assert before == after

    waiting = store.open_version("bible", CONFIG, INPUTS, if_busy="wait")
    assert waiting.published and waiting.manifest == manifest


def test_a_corrupted_shard_is_not_adopted(tmp_path: Path) -> None:
    store = CorpusStore(str(tmp_path))
    first = store.open_version("bible", CONFIG, INPUTS)
    first.write_shard(PLAN[0].id, table_of("A", 0, 3))
    data = Path(first.staging_dir) / "data" / f"{PLAN[0].id}.parquet"
    raw = bytearray(data.read_bytes())
    raw[10] ^= 0xFF  # same size, different bytes
    data.write_bytes(bytes(raw))
    assert not store.open_version("bible", CONFIG, INPUTS).is_complete(PLAN[0].id)


def publish_with_crafted_shard(tmp_path: Path, field: str, value: str) -> CorpusStore:
    """A published version whose manifest was then edited: shard 0's ``field`` set to ``value``."""
    store = CorpusStore(str(tmp_path))
    writer = store.open_version("bible", CONFIG, INPUTS)
    writer.write_shard(PLAN[0].id, table_of("A", 0, 3))
    path = tmp_path / "bible" / writer.publish().version / "manifest.json"
    payload = json.loads(path.read_text())
    payload["shards"][0][field] = value
    path.write_text(json.dumps(payload))
    return store


@pytest.mark.parametrize("bad_path", ["../../x.parquet", "/etc/passwd", "data/../../../x.parquet",
                                      "s3://bucket/x.parquet", "data\\..\\x.parquet", ""])
def test_a_manifest_naming_paths_outside_the_version_folder_is_refused(tmp_path: Path, bad_path: str) -> None:
    store = publish_with_crafted_shard(tmp_path, "path", bad_path)
    with pytest.raises(CorruptVersionError, match="refusing the manifest .*not a relative path inside the version"):
        store.read_table("bible")


def test_a_manifest_pointing_into_another_corpus_is_refused(tmp_path: Path) -> None:
    store = publish_with_crafted_shard(tmp_path, "stored_in", "../secrets")
    with pytest.raises(CorruptVersionError, match="stored_in"):
        store.manifest("bible")


def test_altered_published_shard_fails_the_read(tmp_path: Path) -> None:
    store = CorpusStore(str(tmp_path))
    writer = store.open_version("bible", CONFIG, INPUTS)
    writer.write_shard(PLAN[0].id, table_of("A", 0, 3))
    manifest = writer.publish()
    other = store.open_version("bible", {"other": 1}, INPUTS)
    other.write_shard(PLAN[0].id, table_of("B", 0, 3))
    replacement = Path(other.staging_dir) / "data" / f"{PLAN[0].id}.parquet"
    (tmp_path / "bible" / manifest.version / manifest.shards[0].path).write_bytes(replacement.read_bytes())
    with pytest.raises(CorruptVersionError, match="does not match the SHA-256"):
        store.read_table("bible")


def test_stale_lock_is_taken_over_by_exactly_one_waiter() -> None:
    root = f"memory://lock-{uuid.uuid4().hex}"
    store = CorpusStore(root)
    path = f"{store._root_path}/locks/v.lock"
    store.fs.makedirs(f"{store._root_path}/locks", exist_ok=True)
    store.fs.pipe_file(path, json.dumps({"owner": "dead", "expires_at": time.time() - 1}).encode())
    holders: list[str] = []
    events: list[tuple[str, str]] = []

    def take(owner: str) -> None:
        lease = acquire(store.fs, path, owner, lease_seconds=5, timeout=0.5)
        events.append(("start", owner))
        holders.append(owner)
        time.sleep(0.2)
        events.append(("end", owner))
        lease.release()

    errors: list[BaseException] = []

    def run(owner: str) -> None:
        try:
            take(owner)
        except TimeoutError as error:
            errors.append(error)

    threads = [threading.Thread(target=run, args=(f"w{i}",)) for i in range(3)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    # the stale lease is replaced once; the others either wait their turn or time out naming the holder
    assert len(holders) >= 1 and len(holders) + len(errors) == 3
    assert all("held by w" in str(error) for error in errors)
    # never two holders at once: starts and ends alternate, each end closing the start before it
    assert [kind for kind, _ in events] == ["start", "end"] * len(holders)
    assert all(events[k][1] == events[k + 1][1] for k in range(0, len(events), 2))


def test_staging_removed_whole_while_another_writer_removes_it_too(tmp_path: Path, monkeypatch) -> None:
    """The losing writer drops its staging as the winner drops it as stale: files vanishing under one remover
    (the race two processes hit) must not raise, and the folder must still end up gone."""
    from interlingua.core import no_follow

    writer = CorpusStore(str(tmp_path)).open_version("race", CONFIG, INPUTS)
    staging = Path(tmp_path / "staging-copy")
    (staging / "_complete").mkdir(parents=True)
    for name in ("README.md", "manifest.json", "_complete/s0.json"):
        (staging / name).write_text("x")
    real_rmtree, calls = no_follow.shutil.rmtree, []

    def rmtree_racing_another_remover(path, *args, **kwargs):
        calls.append(path)
        if len(calls) == 1:  # the other writer removed a file first: this rmtree stops halfway, as shutil's does
            (staging / "README.md").unlink()
            raise FileNotFoundError(2, "No such file or directory", "README.md")
        return real_rmtree(path, *args, **kwargs)

    monkeypatch.setattr(no_follow.shutil, "rmtree", rmtree_racing_another_remover)
    writer._remove_dir(str(staging))
    assert not staging.exists()
    assert len(calls) == 2


def test_a_shard_whose_other_writer_vanishes_mid_adoption_is_not_adopted(tmp_path, monkeypatch):
    """Three writers racing one version (tests/faults/test_concurrent_store.py): a writer adopting a shard another
    writer completed found that writer's folder gone between reading its record and linking its files (it had
    published and was cleaned up) and died with a FileNotFoundError traceback; it now adopts nothing and writes the
    shard itself."""
    import shutil

    import pyarrow as pa

    from interlingua.operators.corpus.store import CorpusStore
    from interlingua.operators.corpus import version_writer

    store = CorpusStore(str(tmp_path / "store"))
    first = store.open_version("c", {"a": 1}, ["in.txt"])
    first.write_shard("shard-00000", pa.table({"x": [1, 2]}))
    second = store.open_version("c", {"a": 1}, ["in.txt"])
    link = version_writer.VersionWriter._copy_or_link

    def vanishing(self, source, target):
        shutil.rmtree(first._dir)  # the other writer's folder goes between the record and the files
        return link(self, source, target)

    monkeypatch.setattr(version_writer.VersionWriter, "_copy_or_link", vanishing)
    assert second.is_complete("shard-00000") is False
    monkeypatch.setattr(version_writer.VersionWriter, "_copy_or_link", link)
    second.write_shard("shard-00000", pa.table({"x": [1, 2]}))
    assert store.read_table("c", second.publish().version).num_rows == 2
