"""``load_encoder``: local folders, ``file://`` and fsspec URLs, MLflow ``models:/NAME@ALIAS``, user errors."""

from __future__ import annotations

import uuid
from pathlib import Path

import numpy as np
import pytest

from interlingua.models.identity import files_digest, model_identity
from interlingua.models.load import find_model_root, load_encoder, resolve_model_folder
from interlingua.operators.embed_encoder import OperatorEmbedEncoder
from interlingua.models.sentence_encoder import SentenceEncoder
from interlingua.core.errors import UserError
from tiny_models import SENTENCES, build_tiny_bert


@pytest.fixture(scope="module")
def bert_folder(tmp_path_factory):
    return build_tiny_bert(tmp_path_factory.mktemp("tiny_bert"), seed=0)


@pytest.fixture(scope="module")
def reference(bert_folder):
    return SentenceEncoder.from_folder(bert_folder).encode(SENTENCES)


# --- local and fsspec ----------------------------------------------------------------------------

def test_local_folder(bert_folder, reference):
    assert resolve_model_folder(str(bert_folder)) == str(bert_folder)
    np.testing.assert_allclose(load_encoder(str(bert_folder)).encode(SENTENCES), reference, atol=1e-6)


def test_file_url(bert_folder, reference):
    encoder = load_encoder(bert_folder.as_uri())
    np.testing.assert_allclose(encoder.encode(SENTENCES), reference, atol=1e-6)


def test_load_options_reach_the_encoder(bert_folder):
    encoder = load_encoder(str(bert_folder), pooling="cls", max_length=8, prefix="query: ")
    assert (encoder.pooling, encoder.max_length, encoder.prefix) == ("cls", 8, "query: ")


def test_fsspec_url_is_copied_to_the_cache(bert_folder, reference, tmp_path):
    import fsspec

    memory = fsspec.filesystem("memory")
    root = f"/models-{uuid.uuid4().hex}/tiny"
    for file in bert_folder.iterdir():
        memory.pipe(f"{root}/{file.name}", file.read_bytes())
    try:
        cache = tmp_path / "cache"
        folder = resolve_model_folder(f"memory://{root}", cache_dir=cache)
        assert folder.startswith(str(cache))
        assert sorted(p.name for p in (cache / folder).iterdir()) == sorted(p.name for p in bert_folder.iterdir())
        encoder = load_encoder(f"memory://{root}", cache_dir=cache)
        np.testing.assert_allclose(encoder.encode(SENTENCES), reference, atol=1e-6)
    finally:
        memory.rm(root, recursive=True)


def test_a_model_replaced_at_its_url_is_fetched_again(bert_folder, tmp_path):
    import fsspec

    from interlingua.models.identity import files_digest

    memory = fsspec.filesystem("memory")
    root = f"/models-{uuid.uuid4().hex}/tiny"
    for file in bert_folder.iterdir():
        memory.pipe(f"{root}/{file.name}", file.read_bytes())
    cache = tmp_path / "cache"
    try:
        first = resolve_model_folder(f"memory://{root}", cache_dir=cache)
        assert resolve_model_folder(f"memory://{root}", cache_dir=cache) == first  # unchanged: the same copy
        assert files_digest(first) == files_digest(bert_folder) and not list(cache.glob("*.partial-*"))
        memory.pipe(f"{root}/config.json", (bert_folder / "config.json").read_bytes() + b"\n")  # replaced
        second = resolve_model_folder(f"memory://{root}", cache_dir=cache)
        assert second != first
        assert (Path(second) / "config.json").read_bytes() == (bert_folder / "config.json").read_bytes() + b"\n"
        assert files_digest(second) != files_digest(first)
    finally:
        memory.rm(root, recursive=True)


def test_an_interrupted_download_is_not_taken_for_a_copy(bert_folder, tmp_path, monkeypatch):
    import fsspec

    memory = fsspec.filesystem("memory")
    root = f"/models-{uuid.uuid4().hex}/tiny"
    for file in bert_folder.iterdir():
        memory.pipe(f"{root}/{file.name}", file.read_bytes())
    cache = tmp_path / "cache"
    real_get = type(memory).get

    def get_then_fail(self, source, target, **kwargs):  # the weights never arrive
        real_get(self, source, target, **kwargs)
        for weights in Path(target).glob("*.safetensors"):
            weights.unlink()
        raise ConnectionError("connection reset")

    try:
        monkeypatch.setattr(type(memory), "get", get_then_fail)
        with pytest.raises(ConnectionError):
            resolve_model_folder(f"memory://{root}", cache_dir=cache)
        assert [p.name.split(".partial-")[0].startswith("fsspec-") for p in cache.iterdir()] == [True]
        assert not list(cache.glob("fsspec-*/.complete"))
        monkeypatch.setattr(type(memory), "get", real_get)
        folder = resolve_model_folder(f"memory://{root}", cache_dir=cache)
        assert sorted(p.name for p in Path(folder).iterdir()) == sorted(p.name for p in bert_folder.iterdir())
    finally:
        memory.rm(root, recursive=True)


def test_missing_fsspec_url_is_a_user_error(tmp_path):
    with pytest.raises(UserError, match="does not exist"):
        resolve_model_folder(f"memory:///no-such-{uuid.uuid4().hex}", cache_dir=tmp_path)


@pytest.mark.parametrize("uri", ["/definitely/not/here", "./not-here", "a/b/c"])
def test_missing_local_folder_is_a_user_error(uri):
    with pytest.raises(UserError, match="does not exist"):
        load_encoder(uri)


def test_missing_file_url_is_a_user_error(tmp_path):
    with pytest.raises(UserError, match="does not exist"):
        load_encoder((tmp_path / "absent").as_uri())


def test_folder_without_config_is_a_user_error(tmp_path):
    (tmp_path / "notes.txt").write_text("not a model")
    with pytest.raises(UserError, match="no config.json"):
        load_encoder(str(tmp_path))


def test_find_model_root_looks_below_and_reports_absence(bert_folder, tmp_path):
    nested = tmp_path / "artifacts" / "encoder"
    nested.mkdir(parents=True)
    for file in bert_folder.iterdir():
        (nested / file.name).write_bytes(file.read_bytes())
    assert find_model_root(tmp_path) == str(nested)
    empty = tmp_path / "empty"
    empty.mkdir()
    with pytest.raises(UserError, match="no model folder"):
        find_model_root(empty)


def test_a_transformer_folder_without_weights_is_refused_when_resolved(bert_folder, tmp_path):
    import shutil

    folder = tmp_path / "no-weights"
    shutil.copytree(bert_folder, folder, ignore=shutil.ignore_patterns("model.safetensors"))
    with pytest.raises(UserError, match=f"^{folder} has config.json but no model weights"):
        resolve_model_folder(str(folder))
    (folder / "model.safetensors.index.json").write_text("{}")  # sharded weights: from_pretrained reads the index
    assert resolve_model_folder(str(folder)) == str(folder)


def test_find_model_root_gives_a_combined_folder_not_its_first_part(bert_folder, tmp_path):
    from interlingua.models.combined import CombinedEncoder
    from interlingua.models.sentence_encoder import SentenceEncoder

    part = SentenceEncoder.from_folder(bert_folder)
    combined = CombinedEncoder(part, part, "concat").save(tmp_path / "artifacts" / "both")
    assert find_model_root(combined) == str(combined)
    assert find_model_root(tmp_path) == str(combined)  # below the given folder too


# --- MLflow registry -----------------------------------------------------------------------------

@pytest.fixture
def local_mlflow(tmp_path, monkeypatch):
    """A throw-away SQLite tracking store + artifact folder in ``tmp_path``; MLflow's globals restored."""
    import mlflow
    import mlflow.tracking.fluent as fluent

    from interlingua.core.runtime import configure_mlflow

    monkeypatch.chdir(tmp_path)  # any default ./mlruns artifact root lands in tmp_path
    monkeypatch.setenv("MLFLOW_TRACKING_URI", f"sqlite:///{tmp_path / 'mlflow.db'}")
    for name in ("MLFLOW_REGISTRY_URI", "MLFLOW_EXPERIMENT_ID", "MLFLOW_EXPERIMENT_NAME"):
        monkeypatch.delenv(name, raising=False)
    experiment_id = configure_mlflow("encoder-load-test", state=tmp_path)
    yield experiment_id
    if mlflow.active_run():
        mlflow.end_run()
    mlflow.set_tracking_uri(None)
    mlflow.set_registry_uri(None)
    fluent._active_experiment_id = None


def _register(folder, name: str, alias: str):
    import mlflow

    from interlingua.models.registry import log_and_register_encoder

    with mlflow.start_run() as run:
        run_id = run.info.run_id
    return log_and_register_encoder(str(folder), name, alias, run_id)


@pytest.mark.slow
def test_models_alias_round_trip_and_alias_moves(local_mlflow, tmp_path, bert_folder, reference):
    from mlflow.tracking import MlflowClient

    first_dir = SentenceEncoder.from_folder(bert_folder, prefix="query: ").save(tmp_path / "v1")
    second_dir = SentenceEncoder.from_folder(build_tiny_bert(tmp_path / "other", seed=1)).save(tmp_path / "v2")
    first_vectors = SentenceEncoder.from_folder(first_dir).encode(SENTENCES)
    second_vectors = SentenceEncoder.from_folder(second_dir).encode(SENTENCES)
    assert not np.allclose(first_vectors, second_vectors, atol=1e-3)
    cache = tmp_path / "cache"

    first = _register(first_dir, "tiny-encoder", "champion")
    assert (first.version, first.uri) == ("1", "models:/tiny-encoder@champion")
    loaded = load_encoder(first.uri, cache_dir=cache)
    assert loaded.prefix == "query: "
    np.testing.assert_allclose(loaded.encode(SENTENCES), first_vectors, atol=1e-6)

    second = _register(second_dir, "tiny-encoder", "champion")
    assert second.version == "2"
    np.testing.assert_allclose(load_encoder(second.uri, cache_dir=cache).encode(SENTENCES), second_vectors, atol=1e-6)
    np.testing.assert_allclose(load_encoder("models:/tiny-encoder/1", cache_dir=cache).encode(SENTENCES),
                               first_vectors, atol=1e-6)

    # the embedding cache's key follows the alias: the version's content, and the actors load that version
    version_2 = f"sha256:{files_digest(resolve_model_folder('models:/tiny-encoder/2', cache_dir=cache))}"
    assert model_identity(first.uri, cache_dir=cache) == version_2
    operator = OperatorEmbedEncoder(first.uri)
    assert operator.identity == f"embed:{version_2}" and operator.spec == "models:/tiny-encoder/2"

    MlflowClient().set_registered_model_alias("tiny-encoder", "champion", "1")  # move the alias back
    np.testing.assert_allclose(load_encoder(first.uri, cache_dir=cache).encode(SENTENCES), first_vectors, atol=1e-6)
    version_1 = f"sha256:{files_digest(resolve_model_folder('models:/tiny-encoder/1', cache_dir=cache))}"
    assert model_identity(first.uri, cache_dir=cache) == version_1 != version_2


@pytest.mark.slow
def test_unknown_registered_model_is_a_user_error(local_mlflow, tmp_path):
    with pytest.raises(UserError, match="could not fetch models:/no-such-model@x"):
        load_encoder("models:/no-such-model@x", cache_dir=tmp_path / "cache")


@pytest.mark.slow
def test_an_unknown_alias_fails_when_the_operator_encoder_is_keyed(local_mlflow):
    with pytest.raises(UserError, match="could not fetch models:/no-such-model@x"):
        OperatorEmbedEncoder("models:/no-such-model@x").identity
