"""``interlingua gc`` on a state folder with a real local MLflow store: what is pruned, what is kept, sizes."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest


def _fill(folder, size):
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "blob.bin").write_bytes(b"x" * size)
    return folder


def _dead_pid() -> str:
    import subprocess
    import sys

    process = subprocess.Popen([sys.executable, "-c", "pass"])
    process.wait()
    return str(process.pid)


@pytest.fixture
def state(tmp_path, monkeypatch):
    import mlflow

    from interlingua.operators.translate import ctranslate2_backend

    monkeypatch.setattr(ctranslate2_backend, "DEFAULT_CT2_CACHE", tmp_path / "ct2")
    monkeypatch.delenv("MLFLOW_TRACKING_URI", raising=False)
    monkeypatch.setenv("INTERLINGUA_HOME", str(tmp_path / "state"))
    monkeypatch.chdir(tmp_path)
    yield tmp_path / "state"
    mlflow.set_tracking_uri(None)
    mlflow.set_registry_uri(None)


def test_gc_prunes_only_what_nothing_refers_to(state, capsys):
    import mlflow
    from mlflow.tracking import MlflowClient

    from interlingua.core.runtime import configure_mlflow
    from interlingua.models.load import CACHE_SOURCE
    from interlingua.workflows.cli import main

    configure_mlflow("gc-test")
    client = MlflowClient()
    runs = {}
    for key in ("registered", "unregistered", "deleted"):
        with mlflow.start_run() as run:
            mlflow.log_text("x" * 1000, "notes.txt")
        runs[key] = run.info.run_id
    client.delete_run(runs["deleted"])
    client.create_registered_model("enc")
    for _ in range(2):  # versions 1 and 2, both from the registered run; the alias holds 2
        client.create_model_version("enc", f"runs:/{runs['registered']}/notes.txt", runs["registered"])
    client.set_registered_model_alias("enc", "champion", "2")

    ray = state / "ray_results"
    done = _fill(ray / f"quickstart-{runs['registered'][:8]}", 5000)
    resumable = _fill(ray / f"quickstart-{runs['unregistered'][:8]}", 3000)
    cache = state / "model_cache"
    held = _fill(cache / "mlflow-held", 700)
    (held / CACHE_SOURCE).write_text("models:/enc/2\n")
    stale = _fill(cache / "mlflow-stale", 900)
    (stale / CACHE_SOURCE).write_text("models:/enc/1\n")
    partial = _fill(cache / f"mlflow-x.partial-{_dead_pid()}", 100)
    being_written = _fill(cache / f"fsspec-y.partial-{os.getpid()}", 100)  # this process is alive
    ct2 = state.parent / "ct2"
    ct2_partial = _fill(ct2 / f"opus-mt-en-de-0123456789abcdef-ct2-float32.partial-{_dead_pid()}", 100)
    ct2_done = _fill(ct2 / "opus-mt-en-de-0123456789abcdef-ct2-float32", 100)
    orphan_model = _fill(state / "mlartifacts" / "models" / ("m-" + "a" * 32) / "artifacts", 400)
    (orphan_model / "MLmodel").write_text(f"run_id: {runs['deleted']}\n")
    corpus = _fill(state / "corpus" / "bitext" / "v1", 2000)

    assert main(["gc", "--dry-run", "--all"]) == 0
    out = capsys.readouterr().out
    assert f"keep  " in out and "no registered version comes from this run (resumable)" in out
    assert "its model is registered (models:/enc/" in out
    assert "no alias holds models:/enc/1" in out and "models:/enc/2 is held by an alias" in out
    assert "its run was deleted or does not exist" in out
    assert "no registered version refers to it and its run is gone" in out
    assert "corpus store" in out
    assert f"being written by process {os.getpid()}" in out and "interrupted conversion" in out
    assert all(p.exists() for p in (done, stale, partial, orphan_model.parent, held, resumable, ct2_partial))

    assert main(["gc"]) == 0
    out = capsys.readouterr().out
    assert not done.exists() and not stale.exists() and not partial.exists() and not orphan_model.parent.exists()
    assert not ct2_partial.exists() and ct2_done.exists() and being_written.exists()
    assert not (state / "mlartifacts" / runs["deleted"]).exists()
    assert held.exists() and resumable.exists() and corpus.exists()
    assert (state / "mlartifacts" / runs["registered"]).exists() and (state / "mlartifacts" / runs["unregistered"]).exists()
    assert "freed " in out
    assert mlflow.artifacts.load_text(f"runs:/{runs['registered']}/notes.txt") == "x" * 1000


# -- a shared state folder: links are never followed, odd names never crash gc ----------------------------------


def _victim(folder):
    (folder / "projectA" / "src").mkdir(parents=True)
    (folder / "projectA" / "src" / "main.py").write_text("print('mine')\n")
    return folder / "projectA" / "src" / "main.py"


def test_gc_never_deletes_or_sizes_through_a_symlink(state, tmp_path, capsys):
    from interlingua.core.runtime import configure_mlflow
    from interlingua.workflows.cli import main

    configure_mlflow("gc-test")
    models_victim, cache_victim, item_victim = (_victim(tmp_path / name) for name in ("v1", "v2", "v3"))
    (cache_victim.parents[2] / "fsspec-abc").mkdir()  # would be pruned as a URL cache copy
    _fill(item_victim.parents[2] / "big", 50_000)
    (state / "mlartifacts").mkdir(parents=True)
    (state / "mlartifacts" / "models").symlink_to(models_victim.parents[2], target_is_directory=True)
    (state / "model_cache").symlink_to(cache_victim.parents[2], target_is_directory=True)
    (state / "mlartifacts" / ("0" * 32)).symlink_to(item_victim.parents[2], target_is_directory=True)
    real_orphan = _fill(state / "mlartifacts" / ("1" * 32), 300)

    assert main(["gc", "--dry-run"]) == 0
    out = capsys.readouterr().out
    assert "would free 300 B in 1 item(s)" in out  # the linked folder's 50 kB are not counted
    skipped = [line for line in out.splitlines() if line.startswith("skip ")]
    assert len(skipped) == 3 and all("symbolic link" in line and "never follows a link" in line for line in skipped)
    assert any(f"mlartifacts/models  (-> {models_victim.parents[2]}" in line for line in skipped)

    assert main(["gc"]) == 0
    out = capsys.readouterr().out
    assert "freed 300 B in 1 item(s)" in out and not real_orphan.exists()
    assert models_victim.read_text() == cache_victim.read_text() == item_victim.read_text() == "print('mine')\n"
    assert (cache_victim.parents[2] / "fsspec-abc").is_dir() and (item_victim.parents[2] / "big" / "blob.bin").is_file()
    assert (state / "mlartifacts" / ("0" * 32)).is_symlink()  # the link is left too: gc reports, the user decides


def _plan(state, **kwargs):
    from interlingua.cluster.state_gc import RegistryView, plan_gc

    return plan_gc(state, RegistryView({}, set(), set(), set()), local_artifacts=state / "mlartifacts", **kwargs)


def test_a_folder_swapped_for_a_link_after_planning_is_not_followed(tmp_path):
    from interlingua.cluster.state_gc import prune

    state = tmp_path / "state"
    _fill(state / "model_cache" / "fsspec-abc" / "model", 10)
    items = _plan(state)
    assert [(i.path.name, i.prune) for i in items] == [("fsspec-abc", True)]
    victim = _victim(tmp_path / "victim")
    shutil.rmtree(state / "model_cache")
    (state / "model_cache").symlink_to(tmp_path / "victim" / "projectA", target_is_directory=True)
    (tmp_path / "victim" / "projectA" / "fsspec-abc").mkdir()
    assert prune(items) == 0
    assert victim.is_file() and (tmp_path / "victim" / "projectA" / "fsspec-abc").is_dir()


def test_odd_partial_pids_and_unreadable_model_files_do_not_stop_gc(tmp_path):
    from interlingua.cluster.state_gc import prune

    state = tmp_path / "state"
    huge = _fill(state / "model_cache" / f"mlflow-x.partial-{'9' * 30}", 10)  # os.kill: OverflowError
    zero = _fill(state / "model_cache" / "mlflow-y.partial-0", 10)  # os.kill(0, 0): the caller's own group
    bad_yaml = _fill(state / "mlartifacts" / "models" / ("m-" + "b" * 32) / "artifacts", 10)
    (bad_yaml / "MLmodel").write_text("run_id: [unclosed\n")
    listed = _fill(state / "mlartifacts" / "models" / ("m-" + "c" * 32) / "artifacts", 10)
    (listed / "MLmodel").write_text("- a list, not a mapping\n")
    items = {i.path.name: i for i in _plan(state)}
    assert items[huge.name].prune and items[huge.name].reason == "interrupted download"
    assert items[zero.name].prune
    assert items["m-" + "b" * 32].prune and items["m-" + "c" * 32].prune
    assert prune(list(items.values())) == sum(i.size for i in items.values()) > 4 * 10
    assert not any(p.exists() for p in (huge, zero, bad_yaml, listed))


def test_registry_view_pages_through_experiments_runs_and_versions():
    from interlingua.cluster.state_gc import registry_view

    class Page(list):
        def __init__(self, items, token=None):
            super().__init__(items)
            self.token = token

    def pages(items, max_results=None, page_token=None):
        """MLflow's behaviour: without paging only the first page (here of 2) comes back."""
        start = int(page_token or 0)
        end = start + 2
        return Page(items[start:end], str(end) if end < len(items) else None)

    class Item:
        def __init__(self, **fields):
            self.__dict__.update(fields)

    class Client:
        def search_registered_models(self, **kw):
            return pages([Item(name=f"m{k}", aliases={"a": str(k)}) for k in range(3)], **kw)

        def search_model_versions(self, **kw):
            return pages([Item(name="m", version=str(k), run_id=f"r{k}", source="") for k in range(5)], **kw)

        def search_experiments(self, view_type=None, **kw):
            return pages([Item(experiment_id=str(k)) for k in range(3)], **kw)

        def search_runs(self, experiment_ids, run_view_type=None, **kw):
            return pages([Item(info=Item(run_id=f"run-of-{e}")) for e in experiment_ids], **kw)

    view = registry_view(Client())
    assert view.live_runs == {"run-of-0", "run-of-1", "run-of-2"}  # the third experiment is on page 2
    assert set(view.version_runs) == {f"r{k}" for k in range(5)} and ("m2", "2") in view.alias_held


# -- <state>/tmp: what killed processes left behind ------------------------------------------------------------


def _aged(folder, days=2):
    """``folder`` and everything in it last changed ``days`` ago."""
    import time

    then = time.time() - days * 86400
    for path in sorted(folder.rglob("*"), key=lambda p: len(p.parts), reverse=True) + [folder]:
        os.utime(path, (then, then), follow_symlinks=False)
    return folder


def test_gc_removes_temporary_folders_left_behind_and_keeps_those_in_use(state, tmp_path, capsys):
    """A Ray actor killed (SIGKILL, out of memory) skips its exit handlers and left its eflomal run's folder (the
    corpus's text) in <state>/tmp, as an older eflomal left its binary; nothing removed them."""
    from interlingua.core.runtime import configure_mlflow
    from interlingua.core.tempdir_lock import hold, this_host
    from interlingua.operators.align import eflomal_backend
    from interlingua.workflows.cli import main

    configure_mlflow("gc-test")
    current = os.path.dirname(eflomal_backend.seeded_binary_path())
    tmp, mine, here = state / "tmp", state / "tmp" / f"u{os.geteuid()}", f"@{this_host()}@"
    left = _aged(_fill(tmp / f"eflomal-run-{here}left", 1000))
    fresh = _fill(tmp / f"eflomal-run-{here}fresh", 100)
    running = _aged(_fill(tmp / "interlingua_align_params_running", 100))
    holding = hold(str(running))
    older_binary = _aged(_fill(mine / "eflomal-0123456789abcdef", 200), days=8)  # its machine unknown: a week
    old_layout = _aged(_fill(tmp / os.path.basename(current), 300), days=8)
    other_user = _aged(_fill(tmp / "u1000" / "eflomal-0123456789abcdef", 50))
    _aged(mine / os.path.basename(current))
    victim = _victim(tmp_path / "victim")
    (tmp / "eflomal-run-link").symlink_to(victim.parents[1], target_is_directory=True)
    _aged(victim.parents[1])
    try:
        assert main(["gc", "--dry-run", "--all"]) == 0
        out = capsys.readouterr().out
        assert "would free 1.5 KiB in 3 item(s)" in out
        lines = {next(word for word in line.split() if word.startswith("tmp/")): line
                 for line in out.splitlines() if " tmp/" in line}
        assert "left behind (unchanged for over a day, no process holds it)" in lines[f"tmp/{left.name}"]
        assert lines[f"tmp/{left.name}"].startswith("prune") and lines[f"tmp/{old_layout.name}"].startswith("prune")
        assert lines[f"tmp/{mine.name}/{older_binary.name}"].startswith("prune")
        assert "changed within a day" in lines[f"tmp/{fresh.name}"]
        assert "in use by a running process" in lines["tmp/interlingua_align_params_running"]
        assert "this installation's seeded eflomal binary" in lines[f"tmp/{mine.name}/{os.path.basename(current)}"]
        assert lines["tmp/eflomal-run-link"].startswith("skip") and "never follows a link" in lines["tmp/eflomal-run-link"]

        assert main(["gc"]) == 0
        assert "freed 1.5 KiB in 3 item(s)" in capsys.readouterr().out
    finally:
        os.close(holding)
    assert not left.exists() and not older_binary.exists() and not old_layout.exists()
    assert fresh.is_dir() and running.is_dir() and other_user.is_dir() and victim.read_text() == "print('mine')\n"
    assert (tmp / "eflomal-run-link").is_symlink() and os.path.isfile(os.path.join(current, "eflomal"))


def test_a_state_tempdir_is_held_while_it_lives_so_gc_leaves_it_alone(tmp_path):
    """A long build's lexical tables are written once and read for days: their folder's age does not say it is in
    use, the lock its process holds does (released when the process ends, killed included)."""
    from interlingua.core.runtime import state_tempdir
    from interlingua.core.tempdir_lock import held

    state = tmp_path / "state"
    with state_tempdir("interlingua_fast_align_", state=state) as live:
        _aged(_fill(Path(live) / "tables", 10))
        items = {i.path.name: i for i in _plan(state)}
        assert held(live) is True and not items[os.path.basename(live)].prune
    assert held(live) is None and not os.path.exists(live)


def test_gc_trusts_a_folders_lock_only_on_the_machine_that_made_it(tmp_path, monkeypatch):
    """On NFS a flock is seen on the machine that took it only: a folder another machine made (a wikipedia2vec scratch
    folder trained on for hours, untouched) is kept for a week, unlocked as it looks from here."""
    import socket

    from interlingua.core.runtime import state_tempdir
    from interlingua.core.tempdir_lock import hold

    monkeypatch.setattr(socket, "gethostname", lambda: "node_a.example")  # sanitized: node-a.example
    state, tmp = tmp_path / "state", tmp_path / "state" / "tmp"
    with state_tempdir("w2v-", state=state) as live:
        assert os.path.basename(live).startswith("w2v-@node-a.example@")
    elsewhere = _aged(_fill(tmp / "w2v-@node-b@abc", 10))
    elsewhere_old = _aged(_fill(tmp / "w2v-@node-b@def", 10), days=8)
    unknown = _aged(_fill(tmp / "w2v-older_code", 10))
    ours = _aged(_fill(tmp / "w2v-@node-a.example@ghi", 10))
    locked = _aged(_fill(tmp / "w2v-@node-a.example@jkl", 10))
    holding = hold(str(locked))
    try:
        items = {i.path.name: i for i in _plan(state)}
    finally:
        os.close(holding)
    assert not items[elsewhere.name].prune
    assert items[elsewhere.name].reason.startswith("made on node-b (its lock cannot be seen from here)")
    assert not items[unknown.name].prune and "its lock cannot be seen from here" in items[unknown.name].reason
    assert items[elsewhere_old.name].prune and "over a week" in items[elsewhere_old.name].reason
    assert items[ours.name].prune and not items[locked.name].prune


def test_a_non_root_gc_leaves_other_users_temporary_folders_as_theirs(tmp_path, monkeypatch):
    """Another user's private folder cannot be opened: its lock and contents unseen, it looked stale and was listed as
    pruned, then its removal failed."""
    from interlingua.core import state_tmp
    from interlingua.core.tempdir_lock import this_host

    monkeypatch.setattr(state_tmp, "euid", lambda: 1001)  # gc run by user 1001, not root
    tmp, here = tmp_path / "state" / "tmp", f"@{this_host()}@"
    theirs, mine = _fill(tmp / f"w2v-{here}theirs", 10), _fill(tmp / f"w2v-{here}mine", 10)
    os.chown(theirs, 1000, 1000)
    os.chown(mine, 1001, 1001)
    _aged(theirs), _aged(mine)
    items = {i.path.name: i for i in _plan(tmp_path / "state")}
    assert not items[theirs.name].prune and items[theirs.name].reason.startswith("another user's (uid 1000)")
    assert items[mine.name].prune
    monkeypatch.setattr(state_tmp, "euid", lambda: 0)  # root judges every user's folders
    assert {i.path.name: i for i in _plan(tmp_path / "state")}[theirs.name].prune


def test_a_temporary_folder_is_walked_once_for_its_size_and_its_age(tmp_path, monkeypatch):
    """gc listed every folder below a <state>/tmp folder twice: once for its size, once for its newest change. Both
    come from one walk; a file changed an hour ago deep inside still keeps the folder, and counts in its size."""
    import time
    from collections import Counter

    from interlingua.cluster import state_gc
    from interlingua.core.tempdir_lock import this_host

    tmp, here = tmp_path / "state" / "tmp", f"@{this_host()}@"
    stale, touched = tmp / f"w2v-{here}stale", tmp / f"w2v-{here}touched"
    for folder, deep in ((stale, 20), (touched, 30)):
        _fill(_fill(folder, 10) / "deep", deep)
        _aged(folder)
    hour_ago = time.time() - 3600
    os.utime(touched / "deep" / "blob.bin", (hour_ago, hour_ago))
    listed, scandir = Counter(), os.scandir

    def counted(path):
        listed[str(path)] += 1
        return scandir(path)

    monkeypatch.setattr(state_gc.os, "scandir", counted)
    items = {i.path.name: i for i in _plan(tmp_path / "state")}
    assert {path: n for path, n in listed.items() if path.startswith((str(stale), str(touched)))} == {
        str(folder): 1 for folder in (stale, stale / "deep", touched, touched / "deep")}
    assert (items[stale.name].prune, items[stale.name].size) == (True, 30)
    assert (items[touched.name].prune, items[touched.name].size) == (False, 40)
    assert items[touched.name].reason == "changed within a day (may be in use)"
