"""A registered encoder served by ``mlflow models serve`` from an environment without interlingua."""

from __future__ import annotations

import subprocess

import numpy as np
import pytest

from mlflow_services import model_server, post_json, serving_venv

TEXTS = ["the cat sits on the mat", "el gato se sienta en la alfombra", "good morning"]


@pytest.fixture(scope="module")
def foreign_python(tmp_path_factory):
    python = serving_venv(tmp_path_factory.mktemp("serve") / "venv")
    probe = subprocess.run([str(python), "-c", "import interlingua"], capture_output=True, text=True)
    assert probe.returncode != 0 and "No module named 'interlingua'" in probe.stderr
    return python


@pytest.mark.slow
def test_served_encoders_answer_without_interlingua(foreign_python, tmp_path, monkeypatch):
    import mlflow
    import torch
    from sentence_transformers import SentenceTransformer
    from sentence_transformers.sentence_transformer.modules import Dense
    from tiny_models import build_tiny_bert

    from interlingua.core.runtime import configure_mlflow
    from interlingua.models.registry import log_and_register_encoder
    from interlingua.models.sentence_encoder import SentenceEncoder

    tracking = f"sqlite:///{tmp_path / 'mlflow.db'}"
    monkeypatch.setenv("MLFLOW_TRACKING_URI", tracking)
    monkeypatch.chdir(tmp_path)  # a user-set tracking URI has no artifact root: MLflow's ./mlruns lands in tmp_path
    monkeypatch.setenv("INTERLINGUA_HOME", str(tmp_path / "state"))
    plain = SentenceEncoder.from_folder(build_tiny_bert(tmp_path / "bert"), max_length=32).save(tmp_path / "plain")
    headed = SentenceTransformer(str(plain), device="cpu")
    torch.manual_seed(5)
    headed.append(Dense(32, 8))
    headed.save(str(tmp_path / "headed"))
    configure_mlflow("serving-test", state=tmp_path)
    with mlflow.start_run() as run:
        pass
    try:
        log_and_register_encoder(str(plain), "served-plain", "champion", run.info.run_id)
        log_and_register_encoder(str(tmp_path / "headed"), "served-headed", "champion", run.info.run_id)
    finally:
        mlflow.set_tracking_uri(None)
        mlflow.set_registry_uri(None)

    cases = {"served-plain": SentenceEncoder.from_folder(plain).encode(TEXTS),
             "served-headed": headed.encode(TEXTS)}
    for name, expected in cases.items():
        with model_server(foreign_python, f"models:/{name}@champion", tracking, tmp_path / name) as url:
            answer = post_json(url, {"inputs": TEXTS})
            np.testing.assert_allclose(np.asarray(answer["predictions"]), expected, rtol=1e-4, atol=1e-5)
            one = post_json(url, {"dataframe_split": {"columns": ["text"], "data": [[TEXTS[0]]]}})
            np.testing.assert_allclose(np.asarray(one["predictions"]), expected[:1], rtol=1e-4, atol=1e-5)
