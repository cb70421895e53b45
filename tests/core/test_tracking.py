"""Every way interlingua sends text to MLflow (``interlingua.core.tracking``) masks credentials: what MLflow stores is
read back from a private SQLite store and searched for the secret."""

from __future__ import annotations

import json

import pytest

pytest.importorskip("mlflow")

SECRET = "S3CRETvalue42"
LEAKY = {"source": f"https://u:{SECRET}@data.example/raw.en", "storage_options": {"secret": SECRET},
         "ray": f"{SECRET}@head:6379", "contact": "me@example.com"}


@pytest.fixture
def store(tmp_path, monkeypatch):
    """A private SQLite MLflow store with one experiment (artifacts under tmp_path)."""
    import mlflow
    from mlflow.tracking import MlflowClient

    monkeypatch.chdir(tmp_path)
    for name in ("MLFLOW_TRACKING_URI", "MLFLOW_REGISTRY_URI", "MLFLOW_RUN_ID", "MLFLOW_EXPERIMENT_ID"):
        monkeypatch.delenv(name, raising=False)
    uri = f"sqlite:///{tmp_path / 'mlflow.db'}"
    mlflow.set_tracking_uri(uri)
    mlflow.set_registry_uri(uri)  # a registry URI another test set would send the model versions elsewhere
    client = MlflowClient(tracking_uri=uri, registry_uri=uri)
    experiment_id = client.create_experiment("tracking", artifact_location=(tmp_path / "artifacts").as_uri())
    yield client, experiment_id
    if mlflow.active_run() is not None:
        mlflow.end_run()
    mlflow.set_tracking_uri(None)
    mlflow.set_registry_uri(None)


def _recorded(client, run_id: str) -> str:
    """Everything MLflow holds for the run: params, tags and the text of its artifacts."""
    import mlflow

    data = client.get_run(run_id).data
    texts = [json.dumps({"params": data.params, "tags": data.tags})]
    for info in client.list_artifacts(run_id):
        texts.append(mlflow.artifacts.load_text(f"runs:/{run_id}/{info.path}"))
    return "\n".join(texts)


@pytest.mark.parametrize("active", [True, False], ids=["active run", "run_id"])
def test_params_tags_and_artifacts_are_masked(store, active):
    import mlflow

    from interlingua.core import tracking

    client, experiment_id = store
    run_id = tracking.create_run(experiment_id, f"run of https://{SECRET}@hub.example/enc",
                                 {"interlingua.source": LEAKY["source"], "api_token": SECRET}, client).info.run_id
    if active:
        with mlflow.start_run(run_id=run_id):
            tracking.log_params({"config": LEAKY})
            tracking.set_tags({"interlingua.model": LEAKY["ray"]})
            tracking.log_dict({"config": LEAKY}, "config.json")
            tracking.log_text(f"loaded {LEAKY['source']}\n", "log.txt")
    else:
        tracking.log_params({"config": LEAKY}, run_id, client)
        tracking.set_tags({"interlingua.model": LEAKY["ray"]}, run_id, client)
        tracking.log_dict({"config": LEAKY}, "config.json", run_id, client)
        tracking.log_text(f"loaded {LEAKY['source']}\n", "log.txt", run_id, client)
    recorded = _recorded(client, run_id)
    assert SECRET not in recorded
    data = client.get_run(run_id).data
    assert data.params["config.source"] == "https://***@data.example/raw.en"
    assert data.params["config.storage_options.secret"] == "***" and data.params["config.contact"] == "me@example.com"
    assert data.tags["interlingua.model"] == "***@head:6379" and data.tags["api_token"] == "***"
    assert data.tags["mlflow.runName"] == "run of https://***@hub.example/enc"
    assert "loaded https://***@data.example/raw.en" in recorded and '"secret": "***"' in recorded


def test_a_model_versions_description_and_tags_are_masked(store, tmp_path):
    from interlingua.core import tracking

    client, experiment_id = store
    run_id = tracking.create_run(experiment_id, "model", client=client).info.run_id
    (tmp_path / "model").mkdir()
    client.create_registered_model("enc")
    version = client.create_model_version("enc", str(tmp_path / "model"), run_id).version
    tracking.describe_model_version("enc", version, f"# enc\n\nbase: {LEAKY['source']}\n", client)
    tracking.set_model_version_tags("enc", version, {"interlingua.base_model": LEAKY["ray"], "password": SECRET,
                                                     "interlingua.embedding_dim": 384}, client)
    stored = client.get_model_version("enc", version)
    assert SECRET not in stored.description + json.dumps(stored.tags)
    assert "base: https://***@data.example/raw.en" in stored.description
    assert stored.tags == {"interlingua.base_model": "***@head:6379", "password": "***", "interlingua.embedding_dim": "384"}
