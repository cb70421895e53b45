"""A killed ``corpus export`` left its hidden staging folder (``.OUT.exporting-...``) beside OUT forever: the next
export beside it removes those no running export owns, and names those it cannot tell about."""

from __future__ import annotations

import errno
import fcntl
import logging
import os
import signal
import subprocess
import sys
import textwrap
import uuid
from pathlib import Path

import pyarrow as pa
import pytest

from interlingua.operators.corpus import CorpusStore
from interlingua.operators.corpus import export
from interlingua.operators.corpus.export import export_version

#: An export that writes one file of its staging folder, says so, and waits to be killed.
PAUSED_EXPORT = """
import time
import interlingua.operators.corpus.export as export
from interlingua.operators.corpus import CorpusStore

def write_and_wait(store, manifest, fs, root):
    fs.makedirs(root + "/data", exist_ok=True)
    fs.pipe_file(root + "/data/part.parquet", b"half")
    print("writing", flush=True)
    time.sleep(600)

export._write_parquet = write_and_wait
export.export_version(CorpusStore({store!r}), "c", "latest", {out!r})
"""


def published_store(tmp_path: Path) -> CorpusStore:
    store = CorpusStore(str(tmp_path / "store"))
    writer = store.open_version("c", {"a": 1}, ["x"])
    writer.write_shard("s0", pa.table({"id": ["1", "2"]}))
    writer.publish()
    return store


def paused_export(store: CorpusStore, out: Path) -> subprocess.Popen:
    """An export of ``store`` into ``out`` in another process, stopped with its staging folder half written."""
    code = textwrap.dedent(PAUSED_EXPORT).format(store=store.root, out=str(out))
    process = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True)
    assert process.stdout.readline() == "writing\n"
    return process


def hidden(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir() if p.name.startswith("."))


def test_an_export_removes_the_staging_folder_of_a_killed_export_and_keeps_a_running_ones(tmp_path: Path) -> None:
    store = published_store(tmp_path)
    exports = tmp_path / "exports"
    killed = paused_export(store, exports / "killed")
    running = paused_export(store, exports / "running")
    try:
        killed.send_signal(signal.SIGKILL)
        killed.wait()
        [running_staging] = [name for name in hidden(exports) if name.startswith(".running.")]
        assert len(hidden(exports)) == 2

        export_version(store, "c", "latest", str(exports / "out"))

        assert hidden(exports) == [running_staging]  # the killed one's is gone; the running one's is still writing
        assert (exports / "out" / "manifest.json").is_file()
    finally:
        running.kill()
        running.wait()


def test_a_staging_folder_whose_lock_is_held_is_kept_though_its_pid_is_gone(tmp_path: Path) -> None:
    """The lock answers for an export whose pid says nothing here (a reused pid, another PID namespace)."""
    store = published_store(tmp_path)
    gone = subprocess.Popen([sys.executable, "-c", "pass"])
    gone.wait()
    staging = tmp_path / f".elsewhere.exporting-{export._this_host()}-{gone.pid}-{uuid.uuid4().hex[:12]}"
    staging.mkdir()
    handle = os.open(staging, os.O_RDONLY)
    try:
        fcntl.flock(handle, fcntl.LOCK_EX)
        export_version(store, "c", "latest", str(tmp_path / "first"))
        assert staging.is_dir()
    finally:
        os.close(handle)
    export_version(store, "c", "latest", str(tmp_path / "second"))
    assert not staging.exists()


def test_staging_folders_of_other_hosts_and_older_versions_are_named_in_one_line_not_removed(tmp_path: Path,
                                                                                              caplog) -> None:
    store = published_store(tmp_path)
    other_host = tmp_path / f".a.exporting-not-{export._this_host()}-1-{uuid.uuid4().hex[:12]}"
    older = tmp_path / f".b.exporting-{uuid.uuid4().hex[:12]}"  # before the name held its owner
    for folder in (other_host, older):
        folder.mkdir()
    with caplog.at_level(logging.WARNING, logger=export.__name__):
        export_version(store, "c", "latest", str(tmp_path / "out"))
    assert other_host.is_dir() and older.is_dir()
    [line] = [r.getMessage() for r in caplog.records if r.name == export.__name__]
    assert f"beside {tmp_path / 'out'}" in line and other_host.name in line and older.name in line



def test_an_export_beside_folders_it_cannot_list_still_runs(tmp_path: Path, monkeypatch) -> None:
    """A parent this user may pass through but not list (mode 0o300, as root sees none): nothing to clean there, and
    the export into its existing empty folder runs, as before."""
    store = published_store(tmp_path)
    parent = os.path.realpath(tmp_path / "pass-through")
    os.makedirs(os.path.join(parent, "out"))
    scandir = os.scandir

    def not_listable(path="."):
        if os.fspath(path) == parent:
            raise PermissionError(13, "Permission denied", path)
        return scandir(path)

    monkeypatch.setattr(os, "scandir", not_listable)
    export_version(store, "c", "latest", os.path.join(parent, "out"))
    assert os.path.isfile(os.path.join(parent, "out", "manifest.json"))


def test_a_staging_folder_is_locked_before_another_export_can_take_it_for_a_killed_ones(tmp_path: Path,
                                                                                      monkeypatch) -> None:
    """An export of another PID namespace on this host (its pid is none here) cleaning up beside OUT right after this
    export made its staging folder: the folder was made under its staging name and locked after, so the cleaner found
    it unlocked and removed it under the export."""
    store = published_store(tmp_path)
    out = tmp_path / "exports" / "out"
    mkdir = os.mkdir

    def mkdir_then_clean_up_as_another_namespace(path, *args, **kwargs):
        mkdir(path, *args, **kwargs)
        if os.path.dirname(path) == str(out.parent):
            export._remove_stale_staging(str(out.parent), "elsewhere")

    monkeypatch.setattr(export, "_is_running", lambda pid: False)
    monkeypatch.setattr(os, "mkdir", mkdir_then_clean_up_as_another_namespace)
    export_version(store, "c", "latest", str(out))
    assert (out / "manifest.json").is_file() and hidden(out.parent) == []


@pytest.mark.parametrize("error", [errno.ENOLCK, errno.EINVAL])
def test_a_staging_folder_whose_lock_cannot_be_tried_is_kept_and_named(tmp_path: Path, monkeypatch, caplog,
                                                                       error: int) -> None:
    """A file system that takes no lock on a folder (some network mounts): the lock's failure was read as the lock
    taken, so a folder whose pid is none here (another PID namespace of this host) was removed though its export may
    run. Only a lock taken tells that nobody holds it; the export itself still runs without one."""
    store = published_store(tmp_path)
    gone = subprocess.Popen([sys.executable, "-c", "pass"])
    gone.wait()
    staging = tmp_path / f".elsewhere.exporting-{export._this_host()}-{gone.pid}-{uuid.uuid4().hex[:12]}"
    staging.mkdir()

    def no_lock(handle, operation):
        raise OSError(error, os.strerror(error))

    monkeypatch.setattr(fcntl, "flock", no_lock)
    with caplog.at_level(logging.WARNING, logger=export.__name__):
        export_version(store, "c", "latest", str(tmp_path / "out"))
    assert staging.is_dir() and (tmp_path / "out" / "manifest.json").is_file()
    [line] = [r.getMessage() for r in caplog.records if r.name == export.__name__]
    assert staging.name in line and "without locks" in line
