"""``interlingua run meaning-head`` and ``interlingua run absent`` end to end at tiny scale, through the CLI.

meaning-head: a tiny random BERT as the frozen base, en-es pairs written here, a one-task benchmark pack;
the head trains per seed (plus an ablation row), the table is written and logged, the composed encoder is
registered and then read back by ``interlingua embed`` and ``interlingua eval`` from the registry.
absent: word vectors trained with gensim on the tiny bitext, every GAN variant and the linear baselines at
two parallel ratios."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tiny_models import EN_ES_PAIRS, build_tiny_bert

pytestmark = pytest.mark.slow


def _cli(args: list[str], env: dict, cwd: Path, timeout: int = 900) -> subprocess.CompletedProcess:
    proc = subprocess.run([sys.executable, "-m", "interlingua.workflows.cli", *args], cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=timeout)
    assert proc.returncode == 0, f"interlingua {' '.join(args)} failed:\n{proc.stdout[-4000:]}\n{proc.stderr[-4000:]}"
    return proc


def _env(state: Path) -> dict:
    env = {k: v for k, v in os.environ.items() if k not in ("MLFLOW_TRACKING_URI", "RAY_ADDRESS")}
    env.update(INTERLINGUA_HOME=str(state), RAY_DEDUP_LOGS="1", PYTHONUNBUFFERED="1")
    return env


def _write_inputs(tmp_path: Path, extra_test: tuple = ()) -> tuple[Path, Path]:
    import pyarrow as pa
    import pyarrow.parquet as pq

    pairs = [(f"{en} {k}", f"{es} {k}") if k else (en, es) for k in range(3) for en, es in EN_ES_PAIRS]
    bitext = tmp_path / "bitext.parquet"
    pq.write_table(pa.table({"id": [str(i) for i in range(len(pairs))], "src": [p[0] for p in pairs],
                             "tgt": [p[1] for p in pairs]}), bitext)
    pack = tmp_path / "pack"
    pack.mkdir()
    test = [*EN_ES_PAIRS, *extra_test]
    pq.write_table(pa.table({"id": [str(i) for i in range(len(test))], "source": [p[0] for p in test],
                             "target": [p[1] for p in test]}), pack / "bible_retrieval.parquet")
    (pack / "manifest.json").write_text(json.dumps({"version": 1, "tasks": [
        {"name": "bible_retrieval", "kind": "retrieval", "language": "en-es", "file": "bible_retrieval.parquet"}],
        "skipped": []}))
    return bitext, pack


def test_meaning_head_tiny_end_to_end_then_embed_and_eval_from_registry(tmp_path):
    import mlflow
    import numpy as np

    model = build_tiny_bert(tmp_path / "tiny_bert")
    bitext, pack = _write_inputs(tmp_path)
    state = tmp_path / "state"
    env = _env(state)
    sets = {"model": str(model), "bitext.file": str(bitext), "bitext.max_pairs": "40", "pack": str(pack),
            "tasks": '["bible_retrieval"]', "seeds": "[1,2]", "ablations": '["reconstruction"]',
            "train.batch_size": "8", "train.max_epochs": "6", "train.patience": "2",
            "registered_model": "tiny-meaning", "alias": "e2e", "pca_sentences": "10"}
    args = ["run", "meaning-head"] + [a for k, v in sets.items() for a in ("--set", f"{k}={v}")]
    proc = _cli(args, env, tmp_path)
    assert "meaning head −reconstruction" in proc.stdout
    summary = json.loads(proc.stdout[proc.stdout.index("{\n"):])
    assert summary["model_uri"] == "models:/tiny-meaning@e2e" and summary["model"] == "models:/tiny-meaning/1"
    assert summary["base_model"] == str(model)  # a recipe's ${stages.X.model} is the trained encoder, not its base
    results = json.loads(Path(summary["results"]).read_text())
    methods = [r["method"] for r in results]
    assert methods == ["raw", "centered", "projected to en", "meaning head", "meaning head −reconstruction"]
    assert all(r["tasks"]["bible_retrieval"]["n"] == (2 if r["method"].startswith("meaning") else 1) for r in results)
    out = Path(summary["results"]).parent
    assert (out / "pca.png").stat().st_size > 1000 and (out / "results.png").stat().st_size > 1000

    mlflow.set_tracking_uri(f"sqlite:///{state / 'mlflow.db'}")
    run = mlflow.get_run(summary["run_id"])
    assert run.data.params["train.batch_size"] == "8"
    history = mlflow.tracking.MlflowClient().get_metric_history(summary["run_id"], "train.meaning_head.seed1.val_loss")
    assert len(history) == summary["epochs"]["meaning head"][0]
    assert "eval.raw.bible_retrieval" in run.data.metrics

    # the registered composed encoder, read back in new processes
    vectors = tmp_path / "v.npy"
    _cli(["embed", "--model", "models:/tiny-meaning@e2e", "the cat sits on the mat", "el gato", "--out", str(vectors)],
         env, tmp_path)
    v = np.load(vectors, allow_pickle=False)
    assert v.shape == (2, 32)
    np.testing.assert_allclose(np.linalg.norm(v, axis=1), 1.0, rtol=1e-5)
    evaluated = _cli(["eval", "--model", "models:/tiny-meaning@e2e", "--pack", str(pack), "--tasks", "bible_retrieval",
                      "--seeds", "1", "--out", str(tmp_path / "eval")], env, tmp_path)
    assert "bible_retrieval" in evaluated.stdout
    # the registered encoder (first seed's head) scores what the workflow measured for that seed
    document = json.loads((tmp_path / "eval" / "results.json").read_text())
    accuracy = next(m["value"] for m in document["measurements"] if m["task"] == "bible_retrieval" and m["metric"] == "accuracy")
    head_row = next(r for r in results if r["method"] == "meaning head")
    assert accuracy == pytest.approx(head_row["tasks"]["bible_retrieval"]["values"][0], abs=1e-6)


def test_absent_tiny_end_to_end(tmp_path):
    import mlflow

    # a repeated test pair (its gold would be ambiguous) and one without a known word: both dropped, counted and
    # the second written aside with its reason
    bitext, pack = _write_inputs(tmp_path, extra_test=(EN_ES_PAIRS[0], ("zzqx vrrk", "qqzz wkkv")))
    state = tmp_path / "state"
    sets = {"bitext.file": str(bitext), "pack": str(pack), "ratios": "[0.5, 1.0]", "seeds": "[1, 2]",
            "variants": '["absent", "uni-sent", "no-mismatch", "cgan"]', "word_vectors.dim": "16",
            "word_vectors.min_count": "1", "word_vectors.epochs": "2", "train.batch_size": "8", "train.epochs": "2",
            "train.hidden": "[16, 32, 16]", "csls_k": "3"}
    args = ["run", "absent"] + [a for k, v in sets.items() for a in ("--set", f"{k}={v}")]
    proc = _cli(args, _env(state), tmp_path)
    summary = json.loads(proc.stdout[proc.stdout.index("{\n"):])
    document = json.loads(Path(summary["results"]).read_text())
    methods = {(r["method"], r["ratio"]) for r in document["rows"]}
    expected = {"least squares", "procrustes", "procrustes + CSLS", "absent", "uni-sent", "no-mismatch", "cgan"}
    assert methods == {(m, r) for m in expected for r in (0.5, 1.0)}
    assert all(r["seeds"] == 2 and 0 <= r["p1_src2tgt"] <= r["p5_src2tgt"] <= 100 for r in document["rows"])
    pairs = summary["pairs"]  # the pairs each ratio actually kept parallel, beside its nominal share
    assert {(r["ratio"], tuple(r["parallel_pairs"])) for r in document["rows"]} == {
        (0.5, (round(pairs * 0.5),)), (1.0, (pairs,))}
    assert Path(summary["chart"]).stat().st_size > 1000
    assert document["rejects_by_reason"] == summary["rejects_by_reason"] == {
        "train_no_known_word": 0, "train_zero_vector": 0, "test_no_known_word": 1, "test_zero_vector": 0,
        "test_duplicate_text": 1}
    aside = [json.loads(line) for line in (Path(summary["results"]).parent / "rejected.jsonl").read_text().splitlines()]
    assert aside == [{"split": "test", "id": str(len(EN_ES_PAIRS) + 1), "reason": "no_known_word", "src": "zzqx vrrk",
                      "tgt": "qqzz wkkv"}]
    mlflow.set_tracking_uri(f"sqlite:///{state / 'mlflow.db'}")
    client = mlflow.tracking.MlflowClient()
    assert len(client.get_metric_history(summary["run_id"], "train.absent.ratio0.5.seed1.d_loss")) == 2
    artifacts = {a.path for a in client.list_artifacts(summary["run_id"], "generators")}
    assert "generators/absent-G.safetensors" in artifacts and "generators/uni-sent-G.safetensors" in artifacts
