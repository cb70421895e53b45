"""Launch the training loop on Ray Train workers: ``fit(model, dataset, config) -> TrainResult``."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from interlingua.trainers.engine.config import TrainConfig
from interlingua.trainers.engine.preflight import check_before_training
from interlingua.trainers.engine.train_loop import DEEPSPEED_SUBDIR, ENCODER_SUBDIR, train_loop_per_worker


@dataclass(frozen=True)
class TrainResult:
    encoder_dir: str          # the trained encoder (sentence-transformers layout)
    checkpoint_dir: str       # the final Ray Train checkpoint
    metrics: dict
    entity_table: str | None = None  # EASE: the trained entity table (entity_table.npz), else None
    extras: dict | None = None       # file name -> path of what the objective saved next to the encoder


def _tracking_uri() -> str:
    import mlflow

    return mlflow.get_tracking_uri()


def fit(model: str, train_dataset, config: TrainConfig, *, storage_path: str | os.PathLike, name: str,
        run_id: str | None = None) -> TrainResult:
    """Train ``model`` (any :func:`load_encoder` URI) on ``train_dataset`` (a Ray dataset with the
    objective's text columns). Re-running with the same ``storage_path`` and ``name`` after a crash
    resumes from the latest checkpoint."""
    from ray.train import CheckpointConfig, RunConfig, ScalingConfig
    from ray.train.torch import TorchConfig, TorchTrainer

    from interlingua.core.runtime import device_plan

    objective_class = check_before_training(model, train_dataset, config)
    plan = device_plan(config.use_gpu)
    trainer = TorchTrainer(
        train_loop_per_worker,
        train_loop_config={"train": config.model_dump(), "model": model, "use_gpu": plan.use_gpu, "run_id": run_id,
                           "tracking_uri": _tracking_uri() if run_id else None,
                           "objective_class": objective_class},
        scaling_config=ScalingConfig(num_workers=config.num_workers, use_gpu=plan.use_gpu,
                                     resources_per_worker={"CPU": config.cpus_per_worker}),
        torch_config=TorchConfig(backend=plan.backend),
        run_config=RunConfig(storage_path=str(Path(storage_path).resolve()), name=name,
                             checkpoint_config=CheckpointConfig(num_to_keep=config.keep_checkpoints)),
        datasets={"train": train_dataset},
    )
    result = trainer.fit()
    if result.checkpoint is None:
        raise RuntimeError(f"training run {name!r} finished without a checkpoint: {result.error}")
    folder = result.checkpoint.path
    extras = {name: os.path.join(folder, name) for name in sorted(os.listdir(folder))
              if name not in (ENCODER_SUBDIR, DEEPSPEED_SUBDIR) and not name.startswith(".")}
    return TrainResult(encoder_dir=os.path.join(folder, ENCODER_SUBDIR), checkpoint_dir=folder,
                       metrics=dict(result.metrics or {}), entity_table=extras.get("entity_table.npz"), extras=extras)
