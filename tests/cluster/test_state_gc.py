"""``interlingua gc`` on a state folder with a real local MLflow store: what is pruned, what is kept, sizes."""

from __future__ import annotations

import os

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
