"""The quickstart end to end at tiny scale, through the CLI as a user runs it.

A tiny random BERT, a small en-es bitext and debian-reference-style pairs written here; the real
workflow otherwise: local Ray started in-process, a corpus version, DeepSpeed on 2 Ray Train workers,
an MLflow run in a SQLite store under the state directory, the model registered with an alias, the
base-vs-tuned table, and finally ``interlingua embed --model models:/NAME@ALIAS`` pulling it back from
the registry in a new process.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from tiny_models import EN_ES_PAIRS, build_tiny_bert

pytestmark = pytest.mark.slow

PAIRS = EN_ES_PAIRS
MODEL_NAME = "tiny-quickstart"
ALIAS = "e2e"


def _cli(args: list[str], env: dict, cwd: Path, timeout: int = 600) -> subprocess.CompletedProcess:
    proc = subprocess.run([sys.executable, "-m", "interlingua.workflows.cli", *args], cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=timeout)
    assert proc.returncode == 0, f"interlingua {' '.join(args)} failed:\n{proc.stdout[-4000:]}\n{proc.stderr[-4000:]}"
    return proc


def test_quickstart_tiny_end_to_end_then_embed_from_registry(tmp_path):
    import pyarrow as pa
    import pyarrow.parquet as pq

    from interlingua.evaluation.splits import bible_heldout_split

    model = build_tiny_bert(tmp_path / "tiny_bert")
    # 372 verse-like rows; ids decide the held-out split exactly as for the real Bible; each text its own (a held-out
    # verse whose text a training verse has is no test verse)
    rows = [(f"Tiny.{i // len(PAIRS)}.{i % len(PAIRS)}", *(f"{text} ({i})" for text in PAIRS[i % len(PAIRS)]))
            for i in range(31 * len(PAIRS))]
    ids = [r[0] for r in rows]
    heldout = int(bible_heldout_split(ids).sum())
    assert 0 < heldout < len(rows)
    bitext = tmp_path / "bitext.parquet"
    pq.write_table(pa.table({"id": ids, "en": [r[1] for r in rows], "es": [r[2] for r in rows]}), bitext)
    debian = tmp_path / "debian"
    debian.mkdir()
    pq.write_table(pa.table({"en": [p[0] for p in PAIRS], "tgt": [p[1] for p in PAIRS]}),
                   debian / "debian-reference-en-es.parquet")

    state = tmp_path / "state"
    env = {k: v for k, v in os.environ.items() if k not in ("MLFLOW_TRACKING_URI", "RAY_ADDRESS")}
    env.update(INTERLINGUA_HOME=str(state), RAY_DEDUP_LOGS="1", PYTHONUNBUFFERED="1")
    settings = {
        "model": str(model), "bitext": str(bitext), "debian_reference_dir": str(debian),
        "registered_model": MODEL_NAME, "alias": ALIAS, "rows_per_shard": 100,
        "train.max_steps": 3, "train.batch_size": 4, "train.max_length": 16, "train.lr": 1e-3,
        "train.freeze_embeddings": False, "train.warmup_steps": 0,
    }
    args = ["run", "quickstart"]
    for key, value in settings.items():
        args += ["--set", f"{key}={value}"]
    out = _cli(args, env, tmp_path).stdout

    assert "retrieval accuracy" in out and "bible en-es" in out and "debian-reference en-es" in out
    summary = json.loads((state / "quickstart" / "summary.json").read_text())
    assert summary["model_uri"] == f"models:/{MODEL_NAME}@{ALIAS}"
    assert summary["train_metrics"]["effective_batch"] == 8  # 2 workers x 4
    assert set(summary["retrieval"]) == {"bible en-es", "debian-reference en-es"}
    assert summary["retrieval"]["bible en-es"]["pairs"] == heldout
    for scores in summary["retrieval"].values():
        assert 0 <= scores["base"] <= 100 and 0 <= scores["tuned"] <= 100

    # the corpus version: held-out verses excluded, every row accounted for
    manifest = json.loads(_cli(["corpus", "show", "bible-en-es", "--json"], env, tmp_path).stdout)
    assert manifest["total_rows"] + sum(manifest["rejects_by_reason"].values()) == len(rows) - heldout
    assert all(s["rows"] > 0 and s["sha256"] for s in manifest["shards"])

    # the MLflow run: per-step metrics and the registered version behind the alias
    from mlflow.tracking import MlflowClient

    store = f"sqlite:///{state / 'mlflow.db'}"
    client = MlflowClient(tracking_uri=store, registry_uri=store)
    history = client.get_metric_history(summary["run_id"], "loss")
    assert sorted(m.step for m in history) == [1, 2, 3]
    version = client.get_model_version_by_alias(MODEL_NAME, ALIAS)
    assert version.run_id == summary["run_id"]

    # a new process pulls the model from the registry
    vectors = tmp_path / "vectors.npy"
    _cli(["embed", "--model", f"models:/{MODEL_NAME}@{ALIAS}", PAIRS[0][0], PAIRS[0][1], "--out", str(vectors)],
         env, tmp_path)
    emb = np.load(vectors)
    assert emb.shape == (2, 32)
    np.testing.assert_allclose(np.linalg.norm(emb, axis=1), 1.0, rtol=1e-5)
