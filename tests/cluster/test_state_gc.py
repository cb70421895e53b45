"""``interlingua gc`` on a state folder with a real local MLflow store: what is pruned, what is kept, sizes."""

from __future__ import annotations

import pytest


def _fill(folder, size):
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "blob.bin").write_bytes(b"x" * size)
    return folder


@pytest.fixture
def state(tmp_path, monkeypatch):
    import mlflow

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
    partial = _fill(cache / "mlflow-x.partial-123", 100)
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
    assert all(p.exists() for p in (done, stale, partial, orphan_model.parent, held, resumable))

    assert main(["gc"]) == 0
    out = capsys.readouterr().out
    assert not done.exists() and not stale.exists() and not partial.exists() and not orphan_model.parent.exists()
    assert not (state / "mlartifacts" / runs["deleted"]).exists()
    assert held.exists() and resumable.exists() and corpus.exists()
    assert (state / "mlartifacts" / runs["registered"]).exists() and (state / "mlartifacts" / runs["unregistered"]).exists()
    assert "freed " in out
    assert mlflow.artifacts.load_text(f"runs:/{runs['registered']}/notes.txt") == "x" * 1000
