"""Shared set-up of the engine's end-to-end tests (not a test module): a SQLite MLflow store and a tiny
encoder under ``root``, and a local Ray runtime (4 logical CPUs, so 2 train workers leave room for Ray Data)
whose workers inherit the store and the CPU accelerator.

Ray is started as the CLI starts it (:func:`own_local_ray`), not with a bare ``ray.init(include_dashboard=False)``: Ray
Train's placement-group cleaner asks Ray's state API whether the training's controller lives. A bare Ray without a
dashboard records the default 127.0.0.1:8265 as its API server while nothing of its own listens there, and a worker
finds its cluster by looking for running Rays (none named in ``RAY_ADDRESS``). With another Ray's dashboard on 8265 (a
concurrent test or run), that one answered "no such actor", the cleaner removed the training's placement group and the
worker died ("A worker health check failed"). init_ray's Ray has its own dashboard and its workers ask their own
cluster (``RAY_ADDRESS``); a dashboard alone is not enough (a worker could still pick the other Ray)."""

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

    try:
        with own_local_ray(num_cpus=4, object_store_memory=200 * 1024**2):  # workers get the store and accelerator
            yield {"root": root, "encoder": str(encoder_dir), "experiment_id": experiment_id, "uri": uri}
    finally:
        mlflow.set_tracking_uri(previous_uri)
        _restore(saved)


#: What :func:`~interlingua.core.runtime.init_ray` sets in this process's environment for a local Ray.
_INIT_RAY_ENV = ("RAY_ADDRESS", "INTERLINGUA_LOCAL_RAY_ADDRESS", "DS_ACCELERATOR", "TORCH_EXTENSIONS_DIR",
                 "RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER")


@contextlib.contextmanager
def own_local_ray(num_cpus: int, object_store_memory: int):
    """A local Ray for a test that runs Ray Train, started by the product's ``init_ray`` (its own dashboard on
    127.0.0.1, workers that ask their own cluster: see the module's note). Yields ``ray``; shuts it down and restores
    the environment variables init_ray set after."""
    import ray

    from interlingua.core.runtime import init_ray

    saved = {k: os.environ.get(k) for k in _INIT_RAY_ENV}
    if ray.is_initialized():
        ray.shutdown()
    try:
        yield init_ray(num_cpus=num_cpus, object_store_memory=object_store_memory)
    finally:
        ray.shutdown()
        _restore(saved)


def _restore(saved: dict) -> None:
    for k, v in saved.items():
        if v is None:
            os.environ.pop(k, None)
        else:
            os.environ[k] = v
