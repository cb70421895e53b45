"""``fit`` from a registered model (``models:/NAME@ALIAS``) when Ray started before the driver chose its MLflow store
(as ``interlingua run train`` starts Ray, then configures MLflow): the workers must resolve the base in the driver's
store. ``interlingua run train --set model=models:/...`` failed so: each worker opened a fresh ``mlflow.db`` in its
own working directory, and two workers creating it at once broke its schema migration."""

from __future__ import annotations

import os

import pytest

from engine_env import own_local_ray
from interlingua.trainers.engine.config import TrainConfig
from tiny_models import EN_ES_PAIRS, build_tiny_bert

pytestmark = pytest.mark.slow


def test_fit_starts_from_a_registered_model_resolved_in_the_drivers_store(tmp_path, monkeypatch):
    import mlflow

    from interlingua.models.registry import log_and_register_encoder
    from interlingua.models.sentence_encoder import SentenceEncoder
    from interlingua.trainers.engine.fit import fit

    # Ray first, with no store in the environment (mlflow.set_tracking_uri exports one, so it comes after)
    monkeypatch.delenv("MLFLOW_TRACKING_URI", raising=False)
    previous = mlflow.get_tracking_uri(), mlflow.get_registry_uri()
    try:
        with own_local_ray(num_cpus=4, object_store_memory=200 * 1024**2) as ray:
            uri = f"sqlite:///{tmp_path / 'mlflow.db'}"
            mlflow.set_tracking_uri(uri)
            mlflow.set_registry_uri(uri)
            artifacts = (tmp_path / "mlartifacts").as_uri()
            experiment = mlflow.create_experiment("registry-base", artifact_location=artifacts)
            encoder_dir = tmp_path / "tiny_encoder"
            SentenceEncoder.from_folder(build_tiny_bert(tmp_path / "tiny_bert"), max_length=16).save(encoder_dir)
            with mlflow.start_run(experiment_id=experiment) as run:
                pass
            log_and_register_encoder(str(encoder_dir), "tiny-base", "champion", run.info.run_id)

            rows = [{"src": s, "tgt": t} for s, t in EN_ES_PAIRS]
            config = TrainConfig(objective="translation_ranking", num_workers=2, batch_size=4, max_steps=1, lr=1e-3,
                                 max_length=16, shuffle_buffer=0, checkpoint_every=0)
            result = fit("models:/tiny-base@champion", ray.data.from_items(rows).materialize(), config,
                         storage_path=tmp_path / "ray_results", name="from-registry")
    finally:
        mlflow.set_tracking_uri(previous[0])
        mlflow.set_registry_uri(previous[1])
    assert result.metrics["loss"] > 0
    assert os.path.isdir(result.encoder_dir)
