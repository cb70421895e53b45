"""End to end: EASE with ``fit`` on 2 Ray Train workers (DeepSpeed ZeRO 0, CPU/gloo, grad cache chunk 2).

The entity table trains with the encoder (it is part of the DeepSpeed module), rows whose entity is not in
the table are dropped and counted, the table is saved as ``entity_table.npz`` next to the encoder."""

from __future__ import annotations

import math
import os

import numpy as np
import pytest

from interlingua.trainers.engine.config import TrainConfig
from engine_env import engine_environment
from tiny_models import EN_ES_PAIRS

pytestmark = pytest.mark.slow

WORKERS = 2
BATCH = 4
ENTITIES = ["Q1", "Q2", "Q3", "Q4", "Q5", "Q6"]
DIM = 8


@pytest.fixture(scope="module")
def env(tmp_path_factory):
    root = tmp_path_factory.mktemp("engine_fit_ease")
    rng = np.random.default_rng(0)
    vectors = root / "entity_vectors.txt"
    lines = [f"{len(ENTITIES)} {DIM}"] + [
        entity + " " + " ".join(f"{v:.6f}" for v in rng.normal(size=DIM)) for entity in ENTITIES]
    vectors.write_text("\n".join(lines) + "\n")
    with engine_environment(root, "engine-fit-ease") as environment:
        yield {**environment, "vectors": str(vectors)}


def _dataset():
    """EASE-corpus rows: each sentence linked to an entity, a list of hard negatives (the first is used);
    every 4th row links an entity that has no vector (dropped and counted, not a crash)."""
    import ray

    rows = []
    for i, (en, es) in enumerate(EN_ES_PAIRS * 2):
        entity = ENTITIES[i % len(ENTITIES)]
        negatives = [ENTITIES[(i + 1) % len(ENTITIES)], ENTITIES[(i + 2) % len(ENTITIES)]]
        if i % 4 == 3:
            entity = "Q404"
        rows.append({"lang": "en" if i % 2 == 0 else "es", "sentence": en if i % 2 == 0 else es,
                     "entity_id": entity, "hard_negative_ids": negatives, "page_id": i // 3})
    return ray.data.from_items(rows).materialize()


def test_fit_ease_zero0_grad_cache_trains_table_and_encoder(env):
    from mlflow.tracking import MlflowClient

    from interlingua.models.sentence_encoder import SentenceEncoder
    from interlingua.trainers.engine.fit import fit
    from interlingua.trainers.objectives.entity_vectors import load_word2vec_text

    config = TrainConfig(objective="ease", entity_vectors=env["vectors"], num_workers=WORKERS, batch_size=BATCH,
                         grad_cache_chunk=2, zero_stage=0, max_steps=3, lr=1e-2, max_length=16, shuffle_buffer=0)
    client = MlflowClient(env["uri"])
    run_id = client.create_run(env["experiment_id"], run_name="ease").info.run_id
    result = fit(env["encoder"], _dataset(), config, storage_path=env["root"] / "ray_results", name="ease",
                 run_id=run_id)

    assert result.metrics["step"] == 3
    assert math.isfinite(result.metrics["loss"]) and result.metrics["loss"] > 0
    assert "ease_unknown_entities" in result.metrics
    history = {key: sorted(client.get_metric_history(run_id, key), key=lambda m: m.step)
               for key in ("loss", "ease_unknown_entities")}
    assert [m.step for m in history["loss"]] == [1, 2, 3]
    assert all(math.isfinite(m.value) for m in history["loss"])
    # 32 rows, 8 with an unknown entity; 3 steps x 2 workers read 24 of them
    unknown = [m.value for m in history["ease_unknown_entities"]]
    assert [m.step for m in history["ease_unknown_entities"]] == [1, 2, 3]
    assert all(v >= 0 and v == int(v) for v in unknown) and sum(unknown) >= 1

    assert result.entity_table == os.path.join(result.checkpoint_dir, "entity_table.npz")
    saved = np.load(result.entity_table)
    initial = load_word2vec_text(env["vectors"])
    assert saved["ids"].tolist() == initial.ids
    assert saved["vectors"].shape == (len(ENTITIES), DIM)
    assert not np.allclose(saved["vectors"], initial.vectors)  # the table trained

    encoder = SentenceEncoder.from_folder(result.encoder_dir)
    embeddings = encoder.encode(["the cat sits on the mat", "el gato"])
    assert embeddings.shape == (2, 32) and np.isfinite(embeddings).all()
