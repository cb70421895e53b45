"""``amr-retrofit`` end to end at tiny scale, through the CLI as a user runs it.

A tiny amr-corpus version (en + es, hand-written graphs) and a tiny random BERT written here; the real
workflow otherwise: frequent relations/frames added to the vocabulary, mixed triples, DeepSpeed on 2
Ray Train workers (local Ray started in-process), an MLflow run in the SQLite store under the state
directory, the AMR encoder registered with an alias and loaded back from the registry.
"""

from __future__ import annotations

import json
import math
import os
import subprocess
import sys
from pathlib import Path

import pytest

from amr_tiny_corpus import TRIPLES, tiny_amr_rows, write_tiny_amr_corpus
from tiny_models import build_tiny_bert

pytestmark = pytest.mark.slow

MODEL_NAME = "tiny-amr-encoder"
ALIAS = "e2e"
STEPS = 3


def _cli(args: list[str], env: dict, cwd: Path, timeout: int = 600) -> subprocess.CompletedProcess:
    proc = subprocess.run([sys.executable, "-m", "interlingua.workflows.cli", *args], cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=timeout)
    assert proc.returncode == 0, f"interlingua {' '.join(args)} failed:\n{proc.stdout[-4000:]}\n{proc.stderr[-4000:]}"
    return proc


def test_amr_retrofit_tiny_end_to_end_then_load_from_registry(tmp_path, monkeypatch):
    from interlingua.trainers.objectives.amr_vocabulary import frequent_amr_symbols

    model = build_tiny_bert(tmp_path / "tiny_bert")
    state = tmp_path / "state"
    manifest = write_tiny_amr_corpus(state / "corpus")
    expected_symbols = frequent_amr_symbols([r["linearized"] for r in tiny_amr_rows() if r["linearized"]], 2)
    assert {":ARG0", "want-01"} <= set(expected_symbols)

    env = {k: v for k, v in os.environ.items() if k not in ("MLFLOW_TRACKING_URI", "RAY_ADDRESS")}
    env.update(INTERLINGUA_HOME=str(state), RAY_DEDUP_LOGS="1", PYTHONUNBUFFERED="1")
    settings = {
        "model": str(model), "registered_model": MODEL_NAME, "alias": ALIAS, "min_symbol_count": 2,
        "train.max_steps": STEPS, "train.batch_size": 2, "train.max_length": 32, "train.lr": 1e-3,
        "train.warmup_steps": 0,
    }
    args = ["run", "amr-retrofit"]
    for key, value in settings.items():
        args += ["--set", f"{key}={value}"]
    _cli(args, env, tmp_path)

    summary = json.loads((state / "amr_retrofit" / "summary.json").read_text())
    assert summary["model_uri"] == f"models:/{MODEL_NAME}@{ALIAS}"
    assert summary["corpus"] == f"amr-corpus@{manifest.version}"
    assert summary["languages"] == ["en", "es"]
    assert summary["triples"] == len(TRIPLES) - 1 and summary["triples_skipped"] == 1
    assert summary["symbols_added"] == len(expected_symbols)
    assert set(summary["symbols"]) == set(expected_symbols)
    assert summary["inputs"]["graph"] + summary["inputs"]["text"] == 3 * summary["triples"]
    assert summary["inputs"]["graph"] > 0
    assert math.isfinite(summary["final_loss"]) and summary["final_loss"] > 0
    assert summary["train_metrics"]["effective_batch"] == 4  # 2 workers x 2
    assert summary["train_metrics"]["negatives_per_anchor"] == 4 - 1 + 4
    extended = Path(summary["extended_encoder"])
    assert extended == state / "amr_retrofit" / summary["run_id"] / "extended-encoder"
    assert (extended / "config.json").exists()

    # the MLflow run: params, per-step loss, the registered version behind the alias
    import mlflow
    from mlflow.tracking import MlflowClient

    store = f"sqlite:///{state / 'mlflow.db'}"
    client = MlflowClient(tracking_uri=store, registry_uri=store)
    run = client.get_run(summary["run_id"])
    assert run.data.params["symbols_added"] == str(len(expected_symbols))
    assert run.data.params["triples"] == str(len(TRIPLES) - 1)
    assert run.data.params["triples_skipped"] == "1"
    assert run.data.params["train.objective"] == "amr_retrofit"
    history = client.get_metric_history(summary["run_id"], "loss")
    assert sorted(m.step for m in history) == list(range(1, STEPS + 1))
    assert all(math.isfinite(m.value) for m in history)
    version = client.get_model_version_by_alias(MODEL_NAME, ALIAS)
    assert version.run_id == summary["run_id"]
    # train's model card: the corpus version it trained on is a tag, so `corpus prune` keeps it
    assert version.tags["interlingua.corpus_versions"] == summary["corpus"]

    # the registered AMR encoder loads with its extended vocabulary
    from interlingua.models.load import load_encoder

    previous = mlflow.get_tracking_uri(), mlflow.get_registry_uri()
    monkeypatch.setenv("MLFLOW_TRACKING_URI", store)
    mlflow.set_tracking_uri(store)
    mlflow.set_registry_uri(store)
    try:
        encoder = load_encoder(f"models:/{MODEL_NAME}@{ALIAS}", cache_dir=tmp_path / "cache")
    finally:
        mlflow.set_tracking_uri(previous[0])
        mlflow.set_registry_uri(previous[1])
    vocab = encoder.tokenizer.get_vocab()
    assert {":ARG0", "want-01"} <= set(vocab) and set(expected_symbols) <= set(vocab)
    assert encoder.transformer.get_input_embeddings().weight.shape[0] == len(encoder.tokenizer)
    ids = encoder.tokenizer("( want-01 :ARG0 ( boy ) )", add_special_tokens=False)["input_ids"]
    assert vocab["want-01"] in ids and vocab[":ARG0"] in ids
    vectors = encoder.encode(["( want-01 :ARG0 ( boy ) )", "the boy wants to go"])
    assert vectors.shape == (2, 32)
