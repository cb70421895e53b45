"""Shared set-up of the engine's end-to-end tests (not a test module): a SQLite MLflow store and a tiny
encoder under ``root``, and a local Ray runtime (4 logical CPUs, so 2 train workers leave room for Ray Data)
whose workers inherit the store and the CPU accelerator."""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator
from pathlib import Path

from tiny_models import build_tiny_bert


@contextlib.contextmanager
def engine_environment(root: Path, experiment: str) -> Iterator[dict]:
    """Yields ``{"root", "encoder", "experiment_id", "uri"}``; restores MLflow and the environment after."""
    import mlflow
    import ray

    from interlingua.models.sentence_encoder import SentenceEncoder

    saved = {k: os.environ.get(k) for k in ("MLFLOW_TRACKING_URI", "DS_ACCELERATOR")}
    previous_uri = mlflow.get_tracking_uri()
    uri = f"sqlite:///{root / 'mlflow.db'}"
    os.environ["MLFLOW_TRACKING_URI"] = uri
    os.environ["DS_ACCELERATOR"] = "cpu"
    mlflow.set_tracking_uri(uri)
    experiment_id = mlflow.create_experiment(experiment, artifact_location=(root / "mlartifacts").as_uri())

    encoder_dir = root / "tiny_encoder"
    SentenceEncoder.from_folder(build_tiny_bert(root / "tiny_bert"), max_length=16).save(encoder_dir)

    if ray.is_initialized():
        ray.shutdown()
    ray.init(address="local", num_cpus=4, object_store_memory=200 * 1024**2, include_dashboard=False,
             log_to_driver=False, runtime_env={"env_vars": {"MLFLOW_TRACKING_URI": uri, "DS_ACCELERATOR": "cpu"}})
    try:
        yield {"root": root, "encoder": str(encoder_dir), "experiment_id": experiment_id, "uri": uri}
    finally:
        ray.shutdown()
        mlflow.set_tracking_uri(previous_uri)
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v
