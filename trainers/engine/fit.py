"""Launch the training loop on Ray Train workers: ``fit(model, dataset, config) -> TrainResult``."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from interlingua.trainers.engine.checkpoints import MARKER_PREFIX, RNG_PREFIX
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


def _mlflow_uris() -> tuple[str, str]:
    """The driver's MLflow tracking and registry URIs."""
    import mlflow

    return mlflow.get_tracking_uri(), mlflow.get_registry_uri()


def fit(model: str, train_dataset, config: TrainConfig, *, storage_path: str | os.PathLike, name: str,
        run_id: str | None = None) -> TrainResult:
    """Train ``model`` (any :func:`load_encoder` URI) on ``train_dataset`` (a Ray dataset with the
    objective's text columns). Re-running with the same ``storage_path`` and ``name`` after a crash
    resumes from the latest *complete* checkpoint found on disk under ``<storage_path>/<name>`` (see
    :mod:`interlingua.trainers.engine.checkpoints`): model, optimizer, scheduler, RNG state and position in
    the data, so the resumed run takes the steps the uninterrupted one would have. When that checkpoint
    already reached ``max_steps`` nothing is trained again."""
    from ray.train import CheckpointConfig, DataConfig, RunConfig, ScalingConfig
    from ray.train.torch import TorchConfig, TorchTrainer

    from interlingua.core.runtime import device_plan
    from interlingua.trainers.engine.checkpoints import latest_complete

    objective_class = check_before_training(model, train_dataset, config)
    train_dataset = _read_before_training(train_dataset, config)
    plan = device_plan(config.use_gpu)
    storage = Path(storage_path).resolve()
    resume = latest_complete(storage / name)
    if resume is not None and resume.step >= config.max_steps:
        print(f"[train] {name}: checkpoint at step {resume.step} already done; not training again", flush=True)
        return _result(resume.path, resume.metrics)
    if resume is not None:
        print(f"[train] {name}: resuming from step {resume.step} ({resume.path})", flush=True)
    trainer = TorchTrainer(
        train_loop_per_worker,
        train_loop_config={"train": config.model_dump(), "model": model, "use_gpu": plan.use_gpu, "run_id": run_id,
                           "mlflow_uris": _mlflow_uris(),
                           "objective_class": objective_class, "resume_from": resume.path if resume else None},
        scaling_config=ScalingConfig(num_workers=config.num_workers, use_gpu=plan.use_gpu,
                                     resources_per_worker={"CPU": config.cpus_per_worker}),
        torch_config=TorchConfig(backend=plan.backend),
        run_config=RunConfig(storage_path=str(storage), name=name,
                             checkpoint_config=CheckpointConfig(num_to_keep=config.keep_checkpoints)),
        datasets={"train": train_dataset},
        dataset_config=DataConfig(execution_options=_ordered_ingest()),
    )
    result = trainer.fit()
    if result.checkpoint is None:
        raise RuntimeError(f"training run {name!r} finished without a checkpoint: {result.error}")
    return _result(result.checkpoint.path, dict(result.metrics or {}))


def _read_before_training(dataset, config: TrainConfig):
    """``dataset``, with its reads done first (materialized) when the workers would hold every CPU of the Ray cluster:
    a lazy dataset's read tasks (``store.read_ray(...)``) each need a CPU, and 2 workers on 2 CPUs left them waiting
    forever. With a CPU to spare a lazy dataset streams into the workers, as a corpus larger than the object store
    must; a dataset already materialized (what the workflows hand over, shuffled) is used as it is."""
    import ray
    from ray.data.dataset import MaterializedDataset

    if isinstance(dataset, MaterializedDataset):
        return dataset
    spare = ray.cluster_resources().get("CPU", 0) - config.num_workers * config.cpus_per_worker
    return dataset.materialize() if spare < 1 else dataset


def _ordered_ingest():
    """Ray Train's ingest options with ``preserve_order``: blocks reach the workers' shards in the dataset's order,
    whatever order parallel tasks finish in, so the same config and data give each worker the same batches."""
    from ray.train import DataConfig

    options = DataConfig.default_ingest_options()
    options.preserve_order = True
    return options


def _result(folder: str, metrics: dict) -> TrainResult:
    extras = {name: os.path.join(folder, name) for name in sorted(os.listdir(folder))
              if name not in (ENCODER_SUBDIR, DEEPSPEED_SUBDIR) and not name.startswith((".", MARKER_PREFIX, RNG_PREFIX))}
    return TrainResult(encoder_dir=os.path.join(folder, ENCODER_SUBDIR), checkpoint_dir=folder, metrics=metrics,
                       entity_table=extras.get("entity_table.npz"), extras=extras)
