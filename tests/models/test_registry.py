"""Registering an encoder in MLflow and pulling it back through ``models:/NAME@ALIAS``."""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("mlflow")


@pytest.fixture
def local_store(tmp_path, monkeypatch):
    """A private SQLite MLflow store under tmp_path (what the workflows use by default)."""
    import mlflow

    from interlingua.core.runtime import tracking_target

    monkeypatch.delenv("MLFLOW_TRACKING_URI", raising=False)
    monkeypatch.setenv("INTERLINGUA_HOME", str(tmp_path / "state"))
    target = tracking_target()
    monkeypatch.setenv("MLFLOW_TRACKING_URI", target.tracking_uri)  # restored after the test
    yield target
    mlflow.set_tracking_uri(None)
    mlflow.set_registry_uri(None)


@pytest.fixture
def tiny_encoder_dir(tmp_path):
    from tiny_models import build_tiny_bert

    from interlingua.models.sentence_encoder import SentenceEncoder

    folder = tmp_path / "encoder"
    SentenceEncoder.from_folder(build_tiny_bert(tmp_path / "bert"), max_length=32).save(folder)
    return folder


TEXTS = ["the cat sits on the mat", "el gato se sienta en la alfombra", "good morning"]


def test_register_then_load_by_alias(local_store, tiny_encoder_dir):
    import mlflow

    from interlingua.models.load import load_encoder
    from interlingua.models.sentence_encoder import SentenceEncoder
    from interlingua.models.registry import log_and_register_encoder
    from interlingua.core.runtime import configure_mlflow

    configure_mlflow("registry-test")
    assert mlflow.get_tracking_uri() == local_store.tracking_uri
    with mlflow.start_run() as run:
        pass
    first = log_and_register_encoder(str(tiny_encoder_dir), "tiny-encoder", "champion", run.info.run_id)
    assert (first.uri, first.version) == ("models:/tiny-encoder@champion", "1")
    second = log_and_register_encoder(str(tiny_encoder_dir), "tiny-encoder", "champion", run.info.run_id)
    assert second.version == "2"
    alias = mlflow.tracking.MlflowClient().get_model_version_by_alias("tiny-encoder", "champion")
    assert str(alias.version) == "2"  # the alias moved to the newest version

    expected = SentenceEncoder.from_folder(tiny_encoder_dir).encode(TEXTS)
    pulled = load_encoder("models:/tiny-encoder@champion")
    np.testing.assert_allclose(pulled.encode(TEXTS), expected, rtol=1e-5, atol=1e-6)

    pyfunc = mlflow.pyfunc.load_model("models:/tiny-encoder@champion")
    np.testing.assert_allclose(np.asarray(pyfunc.predict(TEXTS)), expected, rtol=1e-5, atol=1e-6)


def test_unknown_registered_model_is_a_clear_error(local_store):
    from interlingua.models.load import load_encoder
    from interlingua.core.errors import UserError
    from interlingua.core.runtime import use_tracking_store

    use_tracking_store()
    with pytest.raises(UserError, match="could not fetch models:/no-such-model@x"):
        load_encoder("models:/no-such-model@x")


def test_alias_pull_downloads_once_per_version_and_follows_the_alias(local_store, tmp_path, monkeypatch):
    import mlflow

    from interlingua.models.load import load_encoder
    from interlingua.models.sentence_encoder import SentenceEncoder
    from interlingua.models.registry import log_and_register_encoder
    from interlingua.core.runtime import configure_mlflow
    from tiny_models import build_tiny_bert

    folders = []
    for seed in (1, 2):  # two different models
        folder = tmp_path / f"encoder-{seed}"
        SentenceEncoder.from_folder(build_tiny_bert(tmp_path / f"bert-{seed}", seed=seed), max_length=32).save(folder)
        folders.append(folder)
    configure_mlflow("registry-cache-test")
    with mlflow.start_run() as run:
        pass
    log_and_register_encoder(str(folders[0]), "cached-encoder", "prod", run.info.run_id)

    downloads = []
    real = mlflow.artifacts.download_artifacts

    def counting(*args, **kwargs):
        downloads.append(kwargs.get("artifact_uri"))
        return real(*args, **kwargs)

    monkeypatch.setattr(mlflow.artifacts, "download_artifacts", counting)
    first = load_encoder("models:/cached-encoder@prod").encode(TEXTS)
    again = load_encoder("models:/cached-encoder@prod").encode(TEXTS)
    np.testing.assert_array_equal(first, again)
    assert downloads == ["models:/cached-encoder/1"]  # the second pull used the cached version 1
    np.testing.assert_allclose(first, SentenceEncoder.from_folder(folders[0]).encode(TEXTS), rtol=1e-5, atol=1e-6)

    log_and_register_encoder(str(folders[1]), "cached-encoder", "prod", run.info.run_id)  # the alias moves to v2
    moved = load_encoder("models:/cached-encoder@prod").encode(TEXTS)
    assert downloads == ["models:/cached-encoder/1", "models:/cached-encoder/2"]
    np.testing.assert_allclose(moved, SentenceEncoder.from_folder(folders[1]).encode(TEXTS), rtol=1e-5, atol=1e-6)
    assert not np.allclose(moved, first)
