"""The per-worker training function (``train_loop_per_worker`` of Ray Train's ``TorchTrainer``).

Each worker loads the encoder, wraps it in a DeepSpeed engine, reads its shard of the training
dataset, and runs ``max_steps`` contrastive steps. The loss of every worker is computed over the
*global* batch (embeddings gathered with gradient), optionally with gradient caching. Rank 0 logs
per-step metrics to MLflow. Checkpoints (DeepSpeed state + the encoder in sentence-transformers
layout) go through ``ray.train.report``; a restarted run resumes from the latest one. With the EASE
objective DeepSpeed wraps :class:`interlingua.trainers.engine.ease.EaseModel` (encoder + entity table) and
the checkpoint also holds ``entity_table.npz``.
"""

from __future__ import annotations

import os
import tempfile
import time
import warnings
from typing import Any

ENCODER_SUBDIR = "encoder"
DEEPSPEED_SUBDIR = "deepspeed"
ENTITY_TABLE_FILE = "entity_table.npz"  # EASE: next to the encoder in the checkpoint


def train_loop_per_worker(loop_config: dict[str, Any]) -> None:
    import ray.train
    import torch
    import torch.distributed as dist

    from interlingua.core.console import quiet_worker_libraries
    from interlingua.models.load import load_encoder
    from interlingua.trainers.engine.config import TrainConfig
    from interlingua.trainers.engine.deepspeed_setup import build_engine
    from interlingua.trainers.engine.objectives import build_objective
    from interlingua.trainers.gradcache import cached_step, plain_step

    quiet_worker_libraries()
    config = TrainConfig.model_validate(loop_config["train"])
    use_gpu = bool(loop_config["use_gpu"])
    ctx = ray.train.get_context()
    rank, world = ctx.get_world_rank(), ctx.get_world_size()
    torch.set_num_threads(config.cpus_per_worker)
    torch.manual_seed(config.seed + rank)

    encoder = load_encoder(loop_config["model"], max_length=config.max_length)
    if config.freeze_embeddings:
        encoder.transformer.get_input_embeddings().weight.requires_grad_(False)
    device = torch.device("cuda", torch.cuda.current_device()) if use_gpu else torch.device("cpu")
    entities = None
    model = encoder
    if config.objective == "ease":
        from interlingua.trainers.engine.ease import EaseModel, build_entity_table

        entities = build_entity_table(config.entity_vectors, config.entity_vector_ids, encoder.dim, config.seed)
        model = EaseModel(encoder, entities)
    model.to(device)
    model.train()
    engine, scheduler = build_engine(model, config, use_gpu)
    objective = build_objective(config, group=None)

    start_step = _restore(engine)
    tracker = _MetricsLogger(loop_config.get("run_id"), loop_config.get("tracking_uri")) if rank == 0 else None
    global_batch = config.batch_size * world
    negatives = objective.negatives_per_anchor(global_batch)

    def encode(features):
        return engine(features)

    def loss_fn(embeddings):
        return objective.loss(*embeddings)

    if config.grad_cache_chunk is None:
        def run_step(views):
            return plain_step(encode, views, loss_fn, None, backward=engine.backward)
    elif config.zero_stage == 0:
        def run_step(views):
            return cached_step(encode, views, loss_fn, config.grad_cache_chunk, backward=engine.backward,
                               defer_sync=engine.no_sync if world > 1 else None)
    else:  # ZeRO 1: one coalesced reduction for all the chunk backwards of the step
        def run_step(views):
            with engine.coalesce_grad_reduction():
                return cached_step(encode, views, loss_fn, config.grad_cache_chunk, backward=engine.backward)

    step = start_step
    batches = _batches(ray.train.get_dataset_shard("train"), config)
    while step < config.max_steps:
        batch = next(batches)
        t0 = time.perf_counter()
        if objective.entity_columns:
            views, unknown = _entity_views(batch, objective, encoder, entities, device)
        else:
            views = [_to_device(encoder.tokenize([str(t) for t in batch[col]]), device) for col in objective.columns]
        loss = run_step(views)
        engine.step()
        step += 1
        loss_value = _mean_over_workers(loss.detach().float(), world, dist)
        elapsed = time.perf_counter() - t0
        metrics = {
            "loss": loss_value,
            "lr": scheduler.get_last_lr()[0],
            "samples_per_s": global_batch / elapsed,
            "negatives_per_anchor": negatives,
            "effective_batch": global_batch,
            "step_time_s": elapsed,
            "step": step,
        }
        if objective.entity_columns:  # rows dropped for an entity unknown to the table, summed over workers
            metrics["ease_unknown_entities"] = int(round(_mean_over_workers(
                torch.tensor(float(unknown), device=device), world, dist) * world))
        if tracker:
            tracker.log(metrics, step)
            print(f"[train] step {step}/{config.max_steps} loss {loss_value:.4f} "
                  f"lr {metrics['lr']:.2e} {metrics['samples_per_s']:.1f} samples/s "
                  f"(effective batch {global_batch}, {negatives} negatives/anchor)", flush=True)
        last = step == config.max_steps
        if last or (config.checkpoint_every and step % config.checkpoint_every == 0):
            _report_with_checkpoint(engine, encoder, metrics, step, rank, entities)
        else:
            ray.train.report(metrics)


def _batches(shard, config):
    """Endless fixed-size batches from the worker's shard (epoch after epoch)."""
    epoch = 0
    while True:
        produced = 0
        for batch in shard.iter_batches(batch_size=config.batch_size, drop_last=True, batch_format="numpy",
                                        local_shuffle_buffer_size=config.shuffle_buffer or None,
                                        local_shuffle_seed=(config.seed + epoch) if config.shuffle_buffer else None):
            produced += 1
            yield batch
        if produced == 0:
            raise ValueError(f"training shard has fewer rows than batch_size={config.batch_size}")
        epoch += 1


def _entity_views(batch, objective, encoder, entities, device):
    """(views, rows dropped): text columns tokenized, entity-id columns mapped to table rows
    (``{"entity_rows": LongTensor}``); rows whose entity or hard negative is unknown to the table are dropped."""
    from interlingua.trainers.engine.ease import ENTITY_ROWS, entity_batch

    entity_col, negative_col = objective.entity_columns
    mapped = entity_batch(entities.row_of, list(batch[entity_col]), list(batch[negative_col]))
    if not mapped.keep:
        raise ValueError(f"none of the {mapped.unknown} rows of this batch has its {entity_col!r} and first "
                         f"{negative_col!r} in the entity table: do entity_vectors and the corpus match?")
    rows = {entity_col: mapped.entity_rows, negative_col: mapped.negative_rows}
    views = []
    for col in objective.columns:
        if col in rows:
            views.append({ENTITY_ROWS: rows[col].to(device)})
        else:
            views.append(_to_device(encoder.tokenize([str(batch[col][i]) for i in mapped.keep]), device))
    return views, mapped.unknown


def _to_device(features, device):
    return {k: v.to(device) for k, v in features.items()}


def _mean_over_workers(value, world, dist) -> float:
    if world > 1 and dist.is_initialized():
        value = value.clone()
        dist.all_reduce(value)
        value /= world
    return float(value)


def _report_with_checkpoint(engine, encoder, metrics, step, rank, entities=None) -> None:
    import ray.train

    with tempfile.TemporaryDirectory() as tmp:
        engine.save_checkpoint(os.path.join(tmp, DEEPSPEED_SUBDIR), tag=f"step{step}", client_state={"step": step})
        if rank == 0:
            encoder.save(os.path.join(tmp, ENCODER_SUBDIR))
            if entities is not None:
                from interlingua.trainers.engine.ease import save_entity_table

                save_entity_table(entities, tmp)
        ray.train.report(metrics, checkpoint=ray.train.Checkpoint.from_directory(tmp))


def _restore(engine) -> int:
    """Load the latest Ray Train checkpoint into the engine; returns the step to continue from."""
    import ray.train

    checkpoint = ray.train.get_checkpoint()
    if checkpoint is None:
        return 0
    with checkpoint.as_directory() as folder:
        _, client_state = engine.load_checkpoint(os.path.join(folder, DEEPSPEED_SUBDIR))
    return int((client_state or {}).get("step", 0))


class _MetricsLogger:
    """Rank-0 per-step metrics to the driver's MLflow run (no-op without a run id)."""

    def __init__(self, run_id: str | None, tracking_uri: str | None):
        self.run_id = run_id
        self.client = None
        self.failures = 0
        if run_id:
            from mlflow.tracking import MlflowClient

            self.client = MlflowClient(tracking_uri=tracking_uri)

    def log(self, metrics: dict[str, float], step: int) -> None:
        if not self.client:
            return
        from mlflow.entities import Metric

        now = int(time.time() * 1000)
        try:
            self.client.log_batch(self.run_id, metrics=[
                Metric(k, float(v), now, step) for k, v in metrics.items() if k != "step"])
        except Exception as err:  # a tracking-server hiccup must not kill training: warn and go on
            self.failures += 1
            warnings.warn(f"MLflow metric logging failed at step {step} ({self.failures} failures so far): {err}")
