"""``run train`` and a 2-stage recipe end to end on a tiny BERT, through the CLI as a user runs them.

A corpus version written here (en-es tiny pairs), a one-task benchmark pack holding some of its pairs (so the
pack exclusion has something to drop), DeepSpeed on 2 Ray Train workers, the MLflow registry with the model
card, then a recipe train -> combine whose rerun skips both stages, and ``interlingua embed`` reading the
combined encoder folder.
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

PACK_PAIRS = EN_ES_PAIRS[:4]


def _cli(args: list[str], env: dict, cwd: Path, expect: int = 0) -> subprocess.CompletedProcess:
    proc = subprocess.run([sys.executable, "-m", "interlingua.workflows.cli", *args], cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=900)
    assert proc.returncode == expect, f"interlingua {' '.join(args)}:\n{proc.stdout[-4000:]}\n{proc.stderr[-4000:]}"
    return proc


def _summary(stdout: str) -> dict:
    """The JSON summary the CLI prints last (its opening brace is alone on a line)."""
    return json.loads(stdout[stdout.rindex("\n{\n") + 1:])


def _tuned_stage(version: str, model: Path, pack: Path, registered_model: str, seed: bool = False) -> str:
    """A recipe's ``tuned`` stage: 2 training steps of the tiny model on the tiny corpus (``train.seed: ${seed}``)."""
    seeded = ', seed: "${seed}"' if seed else ""
    return f"""  tuned:
    workflow: train
    config:
      corpus: tiny
      version: {version}
      model: {model}
      pack: {pack}
      registered_model: {registered_model}
      train: {{max_steps: 2, batch_size: 4, max_length: 16, lr: 1.0e-3, warmup_steps: 0{seeded}}}
      eval_seeds: [1]"""


def _setup(tmp_path: Path) -> tuple[dict, Path, Path, str]:
    import pyarrow as pa

    from interlingua.evaluation.pack.tables import write_table
    from interlingua.operators.corpus.store import CorpusStore

    state = tmp_path / "state"
    store = CorpusStore(str(state / "corpus"))
    writer = store.open_version("tiny", {"test": 1}, ["memory://tiny"])
    rows = [(f"r{k}-{i}", en, es) for k in range(4) for i, (en, es) in enumerate(EN_ES_PAIRS)]
    writer.write_shard("shard-00000", pa.table({
        "id": [r[0] for r in rows], "src": [r[1] for r in rows], "tgt": [r[2] for r in rows],
        "src_lang": ["en"] * len(rows), "tgt_lang": ["es"] * len(rows)}))
    version = writer.publish().version
    pack = tmp_path / "pack"
    write_table({"source": [p[0] for p in PACK_PAIRS], "target": [p[1] for p in PACK_PAIRS]}, pack / "tiny_retrieval.parquet")
    (pack / "manifest.json").write_text(json.dumps({"version": 1, "tasks": [
        {"name": "tiny_retrieval", "kind": "retrieval", "language": "en-es", "file": "tiny_retrieval.parquet",
         "size": len(PACK_PAIRS)}], "skipped": []}))
    env = {k: v for k, v in os.environ.items() if k not in ("MLFLOW_TRACKING_URI", "RAY_ADDRESS", "MLFLOW_RUN_ID")}
    env.update(INTERLINGUA_HOME=str(state), RAY_DEDUP_LOGS="1", PYTHONUNBUFFERED="1")
    return env, state, pack, version


TRAIN = {"train.max_steps": 2, "train.batch_size": 4, "train.max_length": 16, "train.lr": 1e-3,
         "train.freeze_embeddings": False, "train.warmup_steps": 0, "eval_seeds": "[1]"}


def test_train_then_recipe_with_combination(tmp_path):
    from mlflow.tracking import MlflowClient

    env, state, pack, version = _setup(tmp_path)
    model = build_tiny_bert(tmp_path / "tiny_bert")

    # wrong columns for the objective: one line, before Ray starts
    bad = _cli(["run", "train", "--set", "corpus=tiny", "--set", "train.objective=simcse_sup"], env, tmp_path, expect=2)
    assert "lacks columns ['premise', 'entailment', 'contradiction']" in bad.stderr
    assert len(bad.stderr.strip().splitlines()) == 1 and not (state / "ray_results").exists()

    args = ["run", "train", "--set", "corpus=tiny", "--set", f"model={model}", "--set", f"pack={pack}",
            "--set", "registered_model=tiny-train", "--set", "alias=e2e"]
    for key, value in TRAIN.items():
        args += ["--set", f"{key}={value}"]
    out = _cli(args, env, tmp_path).stdout
    assert "tiny_retrieval" in out
    summary = _summary(out)
    n_pack_rows = 4 * len(PACK_PAIRS)
    assert summary["rows"] == {"corpus": 4 * len(EN_ES_PAIRS), "excluded_pack": n_pack_rows,
                               "rows": 4 * len(EN_ES_PAIRS) - n_pack_rows}
    assert summary["corpus_versions"] == {"tiny": version} and summary["languages"] == ["en", "es"]
    [row] = summary["evaluation"]
    assert row["task"] == "tiny_retrieval" and 0 <= row["base"] <= 100 and 0 <= row["tuned"] <= 100

    store = f"sqlite:///{state / 'mlflow.db'}"
    client = MlflowClient(tracking_uri=store, registry_uri=store)
    mv = client.get_model_version_by_alias("tiny-train", "e2e")
    assert mv.tags["interlingua.corpus_versions"] == f"tiny@{version}"
    assert mv.tags["interlingua.languages"] == "en,es" and mv.tags["interlingua.objective"] == "translation_ranking"
    tags = client.get_run(summary["run_id"]).data.tags  # a rerun after a crash would continue this run
    assert tags["interlingua.complete"] == "true" and tags["interlingua.resume_key"]
    artifacts = {a.path for a in client.list_artifacts(summary["run_id"], "evaluation")}
    assert {"evaluation/results.png", "evaluation/results.json"} <= artifacts
    assert "tiny_retrieval" in mv.description and str(model) in mv.description  # the model card
    card = json.loads(Path(client.download_artifacts(summary["run_id"], "model_card/card.json", str(tmp_path))).read_text())
    assert card["base_model"] == str(model) and card["evaluation"] == summary["evaluation"]
    assert Path(client.download_artifacts(summary["run_id"], "model_card/README.md", str(tmp_path))).read_text() == mv.description

    recipe = tmp_path / "recipe.yaml"
    recipe.write_text(f"""
name: tiny-two
stages:
{_tuned_stage(version, model, pack, "tiny-recipe")}
  both:
    workflow: combine
    config:
      first: ${{stages.tuned.model}}
      second: {model}
      pack: {pack}
      eval_seeds: [1]
""")
    first = _summary(_cli(["run", "recipe", "-c", str(recipe)], env, tmp_path).stdout)
    assert first["actions"] == {"tuned": "run", "both": "run"}
    assert first["outputs"]["tuned"]["model"] == "models:/tiny-recipe/1"
    parent = client.get_run(first["parent_run_id"])
    children = client.search_runs([parent.info.experiment_id], f"tags.mlflow.parentRunId = '{parent.info.run_id}'")
    assert sorted(r.data.tags["interlingua.stage"] for r in children) == ["both", "tuned"]
    assert all(r.info.status == "FINISHED" for r in children)
    # the train stage logged into its child run (MLFLOW_RUN_ID), not a run of its own
    tuned = next(r for r in children if r.data.tags["interlingua.stage"] == "tuned")
    assert tuned.data.tags["interlingua.objective"] == "translation_ranking" and "train.max_steps" in tuned.data.params
    assert len(client.search_runs([parent.info.experiment_id], "tags.`interlingua.workflow` = 'train'")) == 1

    again = _summary(_cli(["run", "recipe", "-c", str(recipe)], env, tmp_path).stdout)
    assert again["actions"] == {"tuned": "skip", "both": "skip"} and again["outputs"] == first["outputs"]

    # another pack (here: its manifest changed) means other evaluation tasks and other texts left out: both run again
    manifest = json.loads((pack / "manifest.json").read_text())
    (pack / "manifest.json").write_text(json.dumps({**manifest, "seed": 7}))
    changed = _summary(_cli(["run", "recipe", "-c", str(recipe), "--set", "stop_after=tuned"], env, tmp_path).stdout)
    assert changed["actions"] == {"tuned": "run"}

    vectors = tmp_path / "v.npy"
    _cli(["embed", "--model", first["outputs"]["both"]["model"], EN_ES_PAIRS[0][0], "--out", str(vectors)], env, tmp_path)
    emb = np.load(vectors)
    assert emb.shape == (1, 64)


def test_seeded_recipe_trains_per_seed_interpolates_and_tabulates(tmp_path):
    from mlflow.tracking import MlflowClient
    from safetensors.torch import load_file

    env, state, pack, version = _setup(tmp_path)
    model = build_tiny_bert(tmp_path / "tiny_bert")
    recipe = tmp_path / "recipe.yaml"
    recipe.write_text(f"""
name: tiny-seeds
seeds: [1, 2]
stages:
{_tuned_stage(version, model, pack, "tiny-seeded", seed=True)}
  mix:
    workflow: interpolate
    config:
      first: {model}
      second: ${{stages.tuned.model}}
      alpha: 0.5
      pack: {pack}
      registered_model: tiny-mix
      eval_seeds: [1]
""")
    out = _cli(["run", "recipe", "-c", str(recipe)], env, tmp_path).stdout
    summary = _summary(out)
    assert summary["actions"] == {"tuned.seed1": "run", "mix.seed1": "run", "tuned.seed2": "run", "mix.seed2": "run"}
    assert summary["outputs"]["mix.seed2"]["model"] == "models:/tiny-mix/2"
    header, _, row = summary["results"].splitlines()
    assert header == "| task | language | metric | base | tuned | mix |"
    assert row.startswith("| tiny_retrieval | en-es |") and row.count("±") == 3

    # the interpolated weights are the midpoint of the base and that seed's tuned model
    from interlingua.models.load import find_model_root, resolve_model_folder

    import mlflow

    store = f"sqlite:///{state / 'mlflow.db'}"
    # MLflow's process-wide URIs, not the environment: an earlier test's mlflow.set_tracking_uri outranks the variable
    previous = mlflow.get_tracking_uri(), mlflow.get_registry_uri()
    mlflow.set_tracking_uri(store)
    mlflow.set_registry_uri(store)
    try:
        client = MlflowClient(tracking_uri=store, registry_uri=store)
        tuned_runs = client.get_model_version("tiny-seeded", "1")
        assert tuned_runs.tags["interlingua.objective"] == "translation_ranking"
        mixed = load_file(f"{find_model_root(resolve_model_folder('models:/tiny-mix/1', tmp_path / 'c'))}/model.safetensors")
        tuned = load_file(f"{find_model_root(resolve_model_folder('models:/tiny-seeded/1', tmp_path / 'c'))}/model.safetensors")
    finally:
        mlflow.set_tracking_uri(previous[0])
        mlflow.set_registry_uri(previous[1])
    base = load_file(str(model / "model.safetensors"))
    name = "encoder.layer.0.attention.self.query.weight"
    key = next(k for k in mixed if k.endswith(name))
    np.testing.assert_allclose(mixed[key].numpy(), (base[next(k for k in base if k.endswith(name))].numpy()
                                                    + tuned[key].numpy()) / 2, rtol=1e-5, atol=1e-6)
    assert not np.allclose(tuned[key].numpy(), base[next(k for k in base if k.endswith(name))].numpy())

    again = _summary(_cli(["run", "recipe", "-c", str(recipe)], env, tmp_path).stdout)
    assert set(again["actions"].values()) == {"skip"} and again["outputs"] == summary["outputs"]
