"""End to end: ``fit`` on 2 Ray Train workers with DeepSpeed (CPU/gloo) and gradient caching.

Checks the supported grad-cache combinations (ZeRO 0 and 1) train, log per-step metrics to MLflow
from rank 0, save an encoder that both ``SentenceEncoder`` and sentence-transformers load, and that
re-running ``fit`` with the same ``storage_path``/``name`` resumes from the latest checkpoint
(Ray Train v2 restores the run's checkpoint manager snapshot from storage)."""

from __future__ import annotations

import math
import os

import pytest

from interlingua.trainers.engine.config import TrainConfig
from engine_env import engine_environment
from tiny_models import EN_ES_PAIRS

pytestmark = pytest.mark.slow

STEP_METRICS = ("loss", "lr", "samples_per_s", "negatives_per_anchor", "effective_batch")
WORKERS = 2
BATCH = 4  # pairs per worker per step

PAIRS = EN_ES_PAIRS


@pytest.fixture(scope="module")
def env(tmp_path_factory):
    with engine_environment(tmp_path_factory.mktemp("engine_fit"), "engine-fit") as environment:
        yield environment


def _dataset():
    import ray

    rows = [{"src": s, "tgt": t} for s, t in PAIRS] * 2  # 32 rows: 16 per worker, 4 batches per epoch
    return ray.data.from_items(rows).materialize()


def _config(zero_stage: int, max_steps: int) -> TrainConfig:
    return TrainConfig(objective="translation_ranking", num_workers=WORKERS, batch_size=BATCH, grad_cache_chunk=2,
                       zero_stage=zero_stage, max_steps=max_steps, lr=1e-3, max_length=16, shuffle_buffer=0)


def _new_run(env, name: str) -> str:
    from mlflow.tracking import MlflowClient

    return MlflowClient(env["uri"]).create_run(env["experiment_id"], run_name=name).info.run_id


def _fit(env, zero_stage: int, max_steps: int, name: str, run_id: str):
    from interlingua.trainers.engine.fit import fit

    return fit(env["encoder"], _dataset(), _config(zero_stage, max_steps), storage_path=env["root"] / "ray_results",
               name=name, run_id=run_id)


def _history(env, run_id: str) -> dict[str, list]:
    from mlflow.tracking import MlflowClient

    client = MlflowClient(env["uri"])
    return {key: sorted(client.get_metric_history(run_id, key), key=lambda m: m.step) for key in STEP_METRICS}


def _check_trained(result, history, steps: list[int], max_steps: int) -> None:
    global_batch = WORKERS * BATCH
    for key in STEP_METRICS:
        assert key in result.metrics, f"final metrics lack {key}: {sorted(result.metrics)}"
    assert math.isfinite(result.metrics["loss"]) and result.metrics["loss"] > 0
    assert result.metrics["effective_batch"] == global_batch
    assert result.metrics["negatives_per_anchor"] == global_batch - 1
    assert result.metrics["samples_per_s"] > 0
    for key, points in history.items():
        assert [m.step for m in points] == steps, f"MLflow {key} logged at steps {[m.step for m in points]}"
    assert all(math.isfinite(m.value) for m in history["loss"])
    assert all(m.value == global_batch for m in history["effective_batch"])
    # Linear decay with no warm-up: step s uses lr * (max_steps - s + 1) / max_steps (it logged the next step's rate,
    # the last step's always 0)
    lrs = [m.value for m in history["lr"]]
    assert lrs == pytest.approx([1e-3 * (max_steps - s + 1) / max_steps for s in steps])


def _check_encoder_loads(encoder_dir: str) -> None:
    import numpy as np
    from sentence_transformers import SentenceTransformer

    from interlingua.models.sentence_encoder import SentenceEncoder

    texts = ["the cat sits on the mat", "el gato"]
    ours = SentenceEncoder.from_folder(encoder_dir).encode(texts)
    st = SentenceTransformer(encoder_dir, device="cpu").encode(texts, normalize_embeddings=True)
    assert ours.shape == st.shape == (2, 32)
    np.testing.assert_allclose(ours, st, atol=1e-5)


@pytest.fixture(scope="module")
def stage1_run(env):
    """ZeRO 1 + grad cache for 2 steps; reused by the resume test."""
    run_id = _new_run(env, "zero1")
    result = _fit(env, zero_stage=1, max_steps=2, name="zero1", run_id=run_id)
    return {"result": result, "run_id": run_id, "name": "zero1"}


def test_fit_zero0_grad_cache_trains_logs_and_saves(env):
    run_id = _new_run(env, "zero0")
    result = _fit(env, zero_stage=0, max_steps=3, name="zero0", run_id=run_id)
    _check_trained(result, _history(env, run_id), steps=[1, 2, 3], max_steps=3)
    assert result.metrics["step"] == 3
    _check_encoder_loads(result.encoder_dir)


def test_fit_zero1_grad_cache_trains_logs_and_saves(env, stage1_run):
    result = stage1_run["result"]
    _check_trained(result, _history(env, stage1_run["run_id"]), steps=[1, 2], max_steps=2)
    assert result.metrics["step"] == 2
    assert os.path.isdir(os.path.join(result.checkpoint_dir, "deepspeed"))
    _check_encoder_loads(result.encoder_dir)


def test_fit_again_with_same_name_resumes_from_latest_checkpoint(env, stage1_run):
    from interlingua.models.sentence_encoder import SentenceEncoder

    first = stage1_run["result"]
    run_id = _new_run(env, "zero1-resumed")
    result = _fit(env, zero_stage=1, max_steps=4, name=stage1_run["name"], run_id=run_id)
    assert result.metrics["step"] == 4
    history = _history(env, run_id)
    # Only the steps after the checkpoint ran: the resumed run starts at step 3, not 1.
    assert [m.step for m in history["loss"]] == [3, 4]
    assert all(math.isfinite(m.value) for m in history["loss"])
    assert result.checkpoint_dir != first.checkpoint_dir
    # The encoder kept training from the checkpointed weights (it differs from the step-2 encoder).
    import torch

    before = SentenceEncoder.from_folder(first.encoder_dir).state_dict()
    after = SentenceEncoder.from_folder(result.encoder_dir).state_dict()
    assert any(not torch.equal(before[k], after[k]) for k in before)


@pytest.mark.parametrize("zero_stage", [2, 3])
def test_grad_cache_with_zero_2_or_3_is_refused(zero_stage):
    from interlingua.core.config import ConfigError

    with pytest.raises(ConfigError, match=r"grad_cache_chunk=2 with zero_stage=%d is not supported" % zero_stage):
        TrainConfig(zero_stage=zero_stage, grad_cache_chunk=2, batch_size=4)
    TrainConfig(zero_stage=zero_stage, batch_size=4)  # without caching the stage is fine
