"""Registering an encoder in MLflow and pulling it back through ``models:/NAME@ALIAS``."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("mlflow")


@pytest.fixture
def local_store(tmp_path, monkeypatch):
    """A private SQLite MLflow store under tmp_path (what the workflows use by default)."""
    import mlflow

    from interlingua.core.runtime import tracking_target

    monkeypatch.delenv("MLFLOW_TRACKING_URI", raising=False)
    monkeypatch.chdir(tmp_path)  # experiments created with the URI set put their artifacts in ./mlruns
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
    downloads = []
    real = mlflow.artifacts.download_artifacts
    mlflow.artifacts.download_artifacts = lambda *a, **k: downloads.append(k) or real(*a, **k)
    try:
        pulled = load_encoder("models:/tiny-encoder@champion")
    finally:
        mlflow.artifacts.download_artifacts = real
    assert downloads == []  # a local artifact store is read in place: the model is stored once
    from pathlib import Path

    from interlingua.models.load import resolve_model_folder

    assert Path.cwd() in Path(resolve_model_folder("models:/tiny-encoder@champion")).parents  # the artifact store
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
    """A remote artifact store (simulated: the in-place shortcut for local artifact folders turned off)."""
    import mlflow

    import interlingua.models.load as load_module
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
    monkeypatch.setattr(load_module, "_local_artifact_folder", lambda pinned: None)
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


def _dense_stack(base_dir, folder):
    """A composed encoder: the tiny base plus a Dense head, saved as a sentence-transformers stack (Transformer,
    Pooling, Dense: the base's Normalize is left out, since Normalize then Dense is a meaning head's stack)."""
    import torch
    from sentence_transformers import SentenceTransformer
    from sentence_transformers.sentence_transformer.modules import Dense

    model = SentenceTransformer(str(base_dir), device="cpu", local_files_only=True)
    assert type(model[2]).__name__ == "Normalize"  # what SentenceEncoder.save ends its stack with
    del model[2]
    torch.manual_seed(3)
    model.append(Dense(32, 8))
    model.save(str(folder))
    return folder


def test_registered_encoder_is_the_standard_flavor_with_card_signature_and_pins(local_store, tiny_encoder_dir, caplog,
                                                                               tmp_path):
    import importlib.metadata as md
    import logging
    import warnings

    import mlflow
    import yaml
    from mlflow.tracking import MlflowClient

    from interlingua.core.runtime import configure_mlflow
    from interlingua.models.model_card import ModelCard
    from interlingua.models.registry import log_and_register_encoder
    from interlingua.models.sentence_encoder import SentenceEncoder

    configure_mlflow("registry-flavor-test")
    with mlflow.start_run() as run:
        pass
    card = ModelCard(base_model="tiny-bert", objective="translation_ranking", workflow="test",
                     corpus_versions={"bible": "v7"}, languages=["en", "es"],
                     evaluation=[{"task": "bible en-es", "metric": "acc", "base": 10.0, "tuned": 20.0}])
    with warnings.catch_warnings(record=True) as caught, caplog.at_level(logging.WARNING):
        warnings.simplefilter("always")
        registered = log_and_register_encoder(str(tiny_encoder_dir), "flavored", "champion", run.info.run_id,
                                              card=card, tags={"team": "nlp"})
    said = [str(w.message) for w in caught] + [r.getMessage() for r in caplog.records]
    assert not [m for m in said if "pickle" in m.lower()], said

    client = MlflowClient()
    version = client.get_model_version("flavored", registered.version)
    assert version.description == card.to_markdown()
    assert version.tags["interlingua.corpus_versions"] == "bible@v7"
    assert version.tags["interlingua.objective"] == "translation_ranking"
    assert version.tags["team"] == "nlp"
    run_card = Path(client.download_artifacts(run.info.run_id, "model_card", str(tmp_path / "run_card")))
    assert (run_card / "README.md").read_text() == card.to_markdown()
    assert json.loads((run_card / "card.json").read_text()) == card.to_dict()

    local = mlflow.artifacts.download_artifacts(artifact_uri=registered.version_uri)

    files = [p.relative_to(local).as_posix() for p in Path(local).rglob("*") if p.is_file()]
    assert not [f for f in files if f.endswith((".pkl", ".pickle", ".bin", ".pt"))], files
    mlmodel = yaml.safe_load((Path(local) / "MLmodel").read_text())
    assert set(mlmodel["flavors"]) == {"python_function", "sentence_transformers"}
    assert mlmodel["flavors"]["python_function"]["loader_module"] == "mlflow.sentence_transformers"
    assert (Path(local) / "model.sentence_transformer" / "README.md").read_text() == card.to_markdown()
    requirements = (Path(local) / "requirements.txt").read_text().split()
    for package in ("sentence-transformers", "transformers", "torch"):
        assert f"{package}=={md.version(package).split('+')[0]}" in requirements
    assert not [r for r in requirements if r.startswith("interlingua")]

    signature = mlflow.models.get_model_info(registered.version_uri).signature
    assert signature.inputs.to_dict() == [{"type": "string", "required": True}]
    assert signature.outputs.to_dict()[0]["tensor-spec"] == {"dtype": "float32", "shape": (-1, 32)}

    expected = SentenceEncoder.from_folder(tiny_encoder_dir).encode(TEXTS)  # unit length
    st_model = mlflow.sentence_transformers.load_model(registered.uri)
    assert [type(m).__name__ for m in st_model] == ["Transformer", "Pooling", "Normalize"]  # save's; none added
    np.testing.assert_allclose(st_model.encode(TEXTS), expected, rtol=1e-5, atol=1e-6)


def test_any_sentence_transformers_stack_registers_and_loads(local_store, tiny_encoder_dir, tmp_path):
    import mlflow
    from sentence_transformers import SentenceTransformer

    from interlingua.core.errors import UserError
    from interlingua.core.runtime import configure_mlflow
    from interlingua.models.load import load_encoder, load_text_encoder
    from interlingua.models.registry import log_and_register_encoder
    from interlingua.models.resolve import resolve_encoder

    folder = _dense_stack(tiny_encoder_dir, tmp_path / "with-head")
    expected = SentenceTransformer(str(folder), device="cpu").encode(TEXTS)
    assert expected.shape == (3, 8)
    configure_mlflow("registry-stack-test")
    with mlflow.start_run() as run:
        pass
    registered = log_and_register_encoder(str(folder), "headed", "champion", run.info.run_id)
    assert "Dense" in mlflow.tracking.MlflowClient().get_model_version("headed", "1").description
    np.testing.assert_allclose(load_text_encoder(registered.uri).encode(TEXTS), expected, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(resolve_encoder(registered.uri).encode(TEXTS), expected, rtol=1e-5, atol=1e-6)
    pyfunc = mlflow.pyfunc.load_model(registered.uri)
    np.testing.assert_allclose(np.asarray(pyfunc.predict(TEXTS)), expected, rtol=1e-5, atol=1e-6)
    with pytest.raises(UserError, match=r"modules \['Dense'\].*load_text_encoder"):
        load_encoder(registered.uri)


def _log_old_layout(encoder_dir, tmp_path) -> str:
    """Log, as artifact ``model`` of a new run, a model of the older pyfunc layout (MLmodel + a cloudpickled
    python_model + the encoder folder as an artifact); its pickle is garbage, so reading it would fail. Returns
    the run id."""
    import shutil

    import mlflow
    import yaml

    old = tmp_path / "old-model"
    shutil.copytree(encoder_dir, old / "artifacts" / "encoder")
    (old / "python_model.pkl").write_bytes(b"\x80\x05 not a pickle, never read")
    (old / "MLmodel").write_text(yaml.safe_dump({"flavors": {"python_function": {
        "loader_module": "mlflow.pyfunc.model", "python_model": "python_model.pkl",
        "artifacts": {"encoder": {"path": "artifacts/encoder", "uri": str(encoder_dir)}}}}}))
    with mlflow.start_run() as run:
        mlflow.log_artifacts(str(old), "model")
    return run.info.run_id


def test_models_of_the_old_pyfunc_layout_load_without_unpickling(local_store, tiny_encoder_dir, tmp_path):
    """Versions registered before the flavor change: MLmodel + a cloudpickled python_model + the encoder
    folder as an artifact. The pickle here is garbage: reading it would fail the load."""
    from mlflow.tracking import MlflowClient

    from interlingua.core.runtime import configure_mlflow
    from interlingua.models.load import load_encoder
    from interlingua.models.sentence_encoder import SentenceEncoder

    configure_mlflow("registry-old-layout")
    run_id = _log_old_layout(tiny_encoder_dir, tmp_path)
    client = MlflowClient()
    client.create_registered_model("old-layout")
    version = client.create_model_version("old-layout", f"runs:/{run_id}/model", run_id)
    client.set_registered_model_alias("old-layout", "prod", version.version)

    pulled = load_encoder("models:/old-layout@prod")
    np.testing.assert_allclose(pulled.encode(TEXTS), SentenceEncoder.from_folder(tiny_encoder_dir).encode(TEXTS),
                               rtol=1e-5, atol=1e-6)


def test_an_mlflow_model_that_is_not_an_encoder_is_refused(tmp_path):
    import yaml

    from interlingua.core.errors import UserError
    from interlingua.models.load import encoder_folder_of_mlflow_model

    (tmp_path / "MLmodel").write_text(yaml.safe_dump({"flavors": {"sklearn": {"pickled_model": "model.pkl"}}}))
    with pytest.raises(UserError, match=r"flavors \['sklearn'\], not an encoder"):
        encoder_folder_of_mlflow_model(tmp_path, "models:/clf/1")
    (tmp_path / "MLmodel").write_text(yaml.safe_dump({"flavors": {"sentence_transformers": {}, "python_function": {
        "data": "../../etc", "loader_module": "mlflow.sentence_transformers"}}}))
    with pytest.raises(UserError, match="data path: '../../etc' is not a path inside"):
        encoder_folder_of_mlflow_model(tmp_path, "models:/evil/1")


LONG = " ".join(["the quick brown fox jumps over the lazy dog"] * 6)


@pytest.mark.parametrize("pooling", ["cls", "max"])
def test_a_registered_encoder_keeps_its_pooling_and_max_length(local_store, tmp_path, pooling):
    """sentence-transformers 6 (what the MLflow flavor saves with) writes ``pooling_mode`` and leaves
    ``max_seq_length`` to the tokenizer's ``model_max_length``: our loader read the old keys only, so every
    registered model came back mean-pooled with 128 tokens (cosine off by up to 0.46 from pyfunc on this model,
    and a crash past its 64 positions)."""
    import mlflow
    from sentence_transformers import SentenceTransformer
    from tiny_models import build_tiny_bert

    from interlingua.core.runtime import configure_mlflow
    from interlingua.models.load import load_encoder, load_text_encoder
    from interlingua.models.registry import log_and_register_encoder
    from interlingua.models.sentence_encoder import SentenceEncoder

    folder = tmp_path / "enc"
    SentenceEncoder.from_folder(build_tiny_bert(tmp_path / "bert"), pooling=pooling, max_length=12,
                                prefix="query: ").save(folder)
    texts = [*TEXTS, LONG]
    expected = SentenceEncoder.from_folder(folder).encode(texts)
    saved = tmp_path / "st-saved"
    SentenceTransformer(str(folder), device="cpu").save(str(saved))  # the layout the registry holds
    assert not (saved / "interlingua_encoder.json").exists()
    reread = SentenceEncoder.from_folder(saved)
    assert (reread.pooling, reread.max_length, reread.prefix) == (pooling, 12, "query: ")
    configure_mlflow("registry-pooling")
    with mlflow.start_run() as run:
        pass
    uri = log_and_register_encoder(str(folder), f"pooled-{pooling}", "champion", run.info.run_id).uri
    served = np.asarray(mlflow.pyfunc.load_model(uri).predict(texts))
    np.testing.assert_allclose(served, expected, rtol=1e-5, atol=1e-5)
    for loaded in (load_encoder(uri), load_text_encoder(uri)):
        np.testing.assert_allclose(loaded.encode(texts), expected, rtol=1e-5, atol=1e-5)


def test_sentence_transformers_pooling_settings_are_read_as_sentence_transformers_reads_them(tmp_path):
    """Legacy ``pooling_mode_*`` flags, a pooling this encoder does not compute (refused, not read as mean), and a
    plain Hugging Face folder whose positions are fewer than the default 128 tokens."""
    import json
    import shutil

    from tiny_models import build_tiny_bert

    from interlingua.core.errors import UserError
    from interlingua.models.sentence_encoder import SentenceEncoder

    bert = build_tiny_bert(tmp_path / "bert")
    plain = SentenceEncoder.from_folder(bert)
    positions = plain.transformer.config.max_position_embeddings
    assert plain.max_length == min(128, positions)
    assert plain.encode([" ".join(["word"] * 300)]).shape == (1, plain.dim)  # truncated, no index error
    folder = tmp_path / "st"
    shutil.copytree(bert, folder)
    (folder / "modules.json").write_text("[]")
    (folder / "1_Pooling").mkdir()
    for config, expected in (({"pooling_mode_max_tokens": True}, "max"), ({"pooling_mode": ["cls"]}, "cls"),
                             ({"pooling_mode_mean_tokens": False}, "mean")):
        (folder / "1_Pooling" / "config.json").write_text(json.dumps(config))
        assert SentenceEncoder.from_folder(folder).pooling == expected
    for config in ({"pooling_mode": "lasttoken"}, {"pooling_mode": ["mean", "max"]},
                   {"pooling_mode_mean_tokens": True, "pooling_mode_max_tokens": True}):
        (folder / "1_Pooling" / "config.json").write_text(json.dumps(config))
        with pytest.raises(UserError, match="is not one this encoder computes"):
            SentenceEncoder.from_folder(folder)


def test_embed_cli_serves_what_the_registry_holds(local_store, tiny_encoder_dir, tmp_path, monkeypatch, capsys):
    """``interlingua embed`` loads any encoder the registry accepts (a Dense head used to be refused), writes
    ``--out`` under the exact name given (np.save added ".npy"), and refuses non-UTF-8 input as one line."""
    import io

    import mlflow
    from sentence_transformers import SentenceTransformer

    from interlingua.core.runtime import configure_mlflow
    from interlingua.models.registry import log_and_register_encoder
    from interlingua.workflows.cli import main

    monkeypatch.setenv("INTERLINGUA_LOG_FILE", "")
    folder = _dense_stack(tiny_encoder_dir, tmp_path / "with-head")
    configure_mlflow("registry-embed")
    with mlflow.start_run() as run:
        pass
    uri = log_and_register_encoder(str(folder), "headed-embed", "champion", run.info.run_id).uri
    out = tmp_path / "vectors.bin"
    assert main(["embed", "--model", uri, *TEXTS, "--out", str(out)]) == 0
    assert out.exists() and not (tmp_path / "vectors.bin.npy").exists()
    vectors = np.load(out, allow_pickle=False)
    expected = SentenceTransformer(str(folder), device="cpu").encode(TEXTS, normalize_embeddings=True)
    np.testing.assert_allclose(vectors, expected, rtol=1e-5, atol=1e-5)
    capsys.readouterr()

    monkeypatch.setattr("sys.stdin", io.TextIOWrapper(io.BytesIO(b"good line\n\xff\xfe bad\n"), encoding="utf-8",
                                                      errors="surrogateescape"))
    assert main(["embed", "--model", uri, "--input", "-"]) == 2
    assert "--input -: not UTF-8 text" in capsys.readouterr().err
    assert main(["embed", "--model", uri, "fine", "bad \udcff byte"]) == 2
    err = capsys.readouterr().err
    assert "sentence argument 2 is not UTF-8" in err and len(err.strip().splitlines()) == 1


def test_promotion_refuses_a_version_of_the_older_pickled_layout(local_store, tiny_encoder_dir, tmp_path, capsys):
    """An alias moved onto a cloudpickled pyfunc would serve its pickle: ``mlflow.pyfunc.load_model`` runs it, while
    promotion evaluated the encoder folder beside it. Refused before any model loads; the pickle is never read."""
    from mlflow.tracking import MlflowClient

    from interlingua.core.runtime import configure_mlflow
    from interlingua.models.registry import log_and_register_encoder
    from interlingua.workflows.cli import main

    configure_mlflow("promotion-old-layout")
    run_id = _log_old_layout(tiny_encoder_dir, tmp_path)
    client = MlflowClient()
    log_and_register_encoder(str(tiny_encoder_dir), "mixed", "staging", run_id)  # version 1: the flavor
    client.create_model_version("mixed", f"runs:/{run_id}/model", run_id)  # version 2: old layout
    common = ["--alias", "champion", "--tasks", "toy_retrieval", "--pack", str(_toy_pack(tmp_path))]
    assert main(["promote", "models:/mixed/2", *common]) == 2
    err = capsys.readouterr().err
    assert "not the sentence_transformers flavor" in err and "older pyfunc layout" in err and "hint" in err
    assert main(["promote", "models:/mixed/1", *common]) == 0  # the flavor: a first promotion
    assert str(client.get_model_version_by_alias("mixed", "champion").version) == "1"


def test_a_version_rewritten_to_serve_a_pickle_is_neither_promoted_nor_loaded(local_store, tiny_encoder_dir,
                                                                               tmp_path, capsys):
    """A shared registry's version whose ``MLmodel`` was rewritten after registering: ``python_function`` now names
    ``mlflow.pyfunc.model`` and a cloudpickle beside the untouched sentence-transformers folder. interlingua would
    evaluate the folder while ``mlflow.pyfunc.load_model`` of the promoted alias unpickled: promotion refuses it before
    any model loads, and loading ``models:/`` refuses it by the same rule (the pickle is never read)."""
    import mlflow
    import yaml
    from mlflow.tracking import MlflowClient

    from interlingua.core.errors import UserError
    from interlingua.core.runtime import configure_mlflow
    from interlingua.models.load import load_encoder, load_text_encoder
    from interlingua.models.registry import log_and_register_encoder
    from interlingua.workflows.cli import main

    configure_mlflow("promotion-tampered")
    with mlflow.start_run() as run:
        pass
    log_and_register_encoder(str(tiny_encoder_dir), "tampered", "staging", run.info.run_id)  # version 1
    log_and_register_encoder(str(tiny_encoder_dir), "tampered", "staging", run.info.run_id)  # version 2
    root = Path(MlflowClient().get_model_version_download_uri("tampered", "1"))
    mlmodel = yaml.safe_load((root / "MLmodel").read_text())
    mlmodel["flavors"]["python_function"].update(loader_module="mlflow.pyfunc.model", python_model="python_model.pkl")
    (root / "MLmodel").write_text(yaml.safe_dump(mlmodel))
    (root / "python_model.pkl").write_bytes(b"\x80\x05 not a pickle, never read")
    common = ["--alias", "champion", "--tasks", "toy_retrieval", "--pack", str(_toy_pack(tmp_path))]
    assert main(["promote", "models:/tampered/1", *common]) == 2
    err = capsys.readouterr().err
    assert "models:/tampered/1: its MLmodel's flavors.python_function.loader_module is 'mlflow.pyfunc.model'" in err
    assert "champion" not in MlflowClient().get_registered_model("tampered").aliases  # not moved
    for load in (load_encoder, load_text_encoder):
        with pytest.raises(UserError, match="loader_module is 'mlflow.pyfunc.model'"):
            load("models:/tampered/1")

    second = Path(MlflowClient().get_model_version_download_uri("tampered", "2"))
    (second / "model.sentence_transformer" / "extra.pkl").write_bytes(b"\x80\x05 not a pickle")  # a file alone
    assert main(["promote", "models:/tampered/2", *common]) == 2
    assert "models:/tampered/2 holds model.sentence_transformer/extra.pkl, a pickle-based file" in \
        capsys.readouterr().err
    with pytest.raises(UserError, match="extra.pkl, a pickle-based file"):
        load_encoder("models:/tampered@staging")


def _toy_pack(tmp_path):
    """A benchmark pack of one retrieval task (``toy_retrieval``) over :data:`TEXTS`."""
    import json

    import pyarrow as pa
    import pyarrow.parquet as pq

    pack = tmp_path / "pack"
    pack.mkdir()
    pq.write_table(pa.table({"source": TEXTS, "target": TEXTS}), pack / "toy.parquet")
    (pack / "manifest.json").write_text(json.dumps({"tasks": [
        {"name": "toy_retrieval", "kind": "retrieval", "language": "en-en", "file": "toy.parquet"}]}))
    return pack


def test_promotion_reads_the_candidates_mlmodel_once(local_store, tiny_encoder_dir, tmp_path, monkeypatch, capsys):
    """The check that the candidate is servable reads its ``MLmodel``; the evaluation loads the encoder folder that
    same reading names, without parsing the file again (the holder, another version, reads its own once)."""
    import mlflow
    import yaml

    from interlingua.core.runtime import configure_mlflow
    from interlingua.models.registry import log_and_register_encoder
    from interlingua.workflows.cli import main

    configure_mlflow("promotion-reads-once")
    with mlflow.start_run() as run:
        pass
    log_and_register_encoder(str(tiny_encoder_dir), "once", "staging", run.info.run_id)  # version 1
    log_and_register_encoder(str(tiny_encoder_dir), "once", "staging", run.info.run_id)  # version 2
    parsed = []
    real = yaml.safe_load

    def counting(stream):
        data = real(stream)
        if isinstance(data, dict) and "flavors" in data:
            parsed.append(data)
        return data

    monkeypatch.setattr(yaml, "safe_load", counting)
    common = ["--alias", "champion", "--tasks", "toy_retrieval", "--pack", str(_toy_pack(tmp_path))]
    assert main(["promote", "models:/once/1", *common]) == 0, capsys.readouterr().err  # no holder yet
    assert len(parsed) == 1
    parsed.clear()
    assert main(["promote", "models:/once/2", *common]) == 1, capsys.readouterr().err  # same scores: kept
    assert len(parsed) == 2  # the candidate's once, the holder's (version 1) once
