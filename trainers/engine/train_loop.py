"""The per-worker training function (``train_loop_per_worker`` of Ray Train's ``TorchTrainer``).

Each worker loads the encoder, builds the objective (any registered
:class:`~interlingua.trainers.objectives.base.Objective`; the loop never names one), wraps encoder + objective
in a DeepSpeed engine, reads its shard of the training dataset, and runs ``max_steps`` steps. Per batch the
objective turns the rows into views (:class:`~interlingua.trainers.engine.train_module.EngineViews`), ``prefetch_batches``
batches ahead in a background thread (:mod:`~interlingua.trainers.engine.prefetch`); the loss
of every worker is computed over the *global* batch (the objectives gather with gradient), optionally with
gradient caching. Rank 0 logs per-step metrics (plus the objective's counters, summed over workers) to MLflow.
Checkpoints (DeepSpeed state + the encoder in sentence-transformers layout + what the objective saves) go
through ``ray.train.report``; a restarted run resumes from the latest one.

Training length and inference length are separate: the encoder reads ``max_length`` tokens while training
and is saved with ``save_max_length``, or the base model's own ``max_seq_length`` when that is unset.
"""

from __future__ import annotations

import contextlib
import itertools
import os
import tempfile
import time
import warnings
from typing import Any

from interlingua.trainers.worker_output import show

ENCODER_SUBDIR = "encoder"
DEEPSPEED_SUBDIR = "deepspeed"


def train_loop_per_worker(loop_config: dict[str, Any]) -> None:
    import ray.train
    import torch
    import torch.distributed as dist

    from interlingua.core.console import quiet_worker_libraries, worker_prints_whole_lines
    from interlingua.models.load import load_encoder
    from interlingua.trainers.engine.config import TrainConfig
    from interlingua.trainers.engine.deepspeed_setup import build_engine
    from interlingua.trainers.engine.prefetch import prefetched
    from interlingua.trainers.engine.train_module import EngineViews, TrainModule, count_tokens, prepare_encoder
    from interlingua.trainers.objectives.registry import register_objective

    # init_ray's worker setup hook did it already, save on a Ray it did not start (fit called with Ray Data's own Ray)
    # or reached through Ray Client (ray://), which runs no setup hook: a second call changes nothing
    worker_prints_whole_lines()
    quiet_worker_libraries()
    objective_cls = loop_config.get("objective_class")
    if objective_cls is not None:  # shipped by fit: also objectives registered at run time on the driver
        register_objective(objective_cls)
    config = TrainConfig.model_validate(loop_config["train"])
    use_gpu = bool(loop_config["use_gpu"])
    ctx = ray.train.get_context()
    rank, world = ctx.get_world_rank(), ctx.get_world_size()
    torch.set_num_threads(config.cpus_per_worker)

    tracking_uri, registry_uri = loop_config.get("mlflow_uris") or (None, None)
    if tracking_uri:  # a models:/ or runs:/ base resolves in the driver's store, not in a default store in the worker's cwd
        import mlflow

        mlflow.set_tracking_uri(tracking_uri)
        mlflow.set_registry_uri(registry_uri)
    encoder = load_encoder(loop_config["model"])
    save_length = config.save_max_length or encoder.max_length  # the base's inference length unless set
    encoder.max_length = config.max_length
    torch.manual_seed(config.seed + rank)
    compiled = prepare_encoder(encoder, config)
    if compiled and rank == 0:
        show(f"[train] compile_encoder: compiling {compiled}; the first steps include the compilation")
    device = torch.device("cuda", torch.cuda.current_device()) if use_gpu else torch.device("cpu")
    objective = build_objective(config, encoder, world)
    if not objective.trains_encoder:
        encoder.requires_grad_(False)
    model = TrainModule(encoder, objective)
    model.to(device)
    model.train()
    engine, scheduler = build_engine(model, config, use_gpu)

    start_step = _restore(engine, loop_config.get("resume_from"), rank)
    tracker = _MetricsLogger(loop_config.get("run_id"), tracking_uri, resumed=start_step > 0) if rank == 0 else None
    global_batch = config.batch_size * world
    negatives = objective.negatives_per_anchor(global_batch)
    run_step = step_function(engine, objective, config, world)
    make = EngineViews(encoder, device, config.max_length)

    step = start_step
    batches = _batches(ray.train.get_dataset_shard("train"), config)
    for _ in range(start_step):  # a resumed run continues with the batches it had not seen
        next(batches)
    # the next batches are tokenized into views in a background thread while this step computes
    upcoming = prefetched(itertools.islice(batches, config.max_steps - start_step),
                          lambda batch: objective.views(batch, make), ahead=config.prefetch_batches)
    try:
        while step < config.max_steps:
            t0 = time.perf_counter()
            views = next(upcoming)
            loss = run_step(views.tensors)
            lr = scheduler.get_last_lr()[0]  # the rate this step uses: engine.step() moves the schedule on
            engine.step()
            objective.after_step()
            step += 1
            counts = _counters(objective, views.counters, count_tokens(views.tensors))
            totals = _sum_over_workers(torch.tensor(list(counts.values()), dtype=torch.float64, device=device),
                                       world, dist)
            loss_value = _mean_over_workers(loss.detach().float(), world, dist)
            elapsed = time.perf_counter() - t0
            totals = dict(zip(counts, (int(round(v)) for v in totals.tolist())))
            tokens = totals.pop(_TOKENS)
            metrics = {
                "loss": loss_value,
                "lr": lr,
                "samples_per_s": global_batch / elapsed,
                "tokens_per_s": tokens / elapsed,
                "negatives_per_anchor": negatives,
                "effective_batch": global_batch,
                "step_time_s": elapsed,
                "step": step,
                **totals,
            }
            if tracker:
                tracker.log(metrics, step)
                show(f"[train] step {step}/{config.max_steps} loss {loss_value:.4f} "
                     f"lr {metrics['lr']:.2e} {metrics['samples_per_s']:.1f} samples/s "
                     f"({batch_note(global_batch, objective.progress_note(negatives, totals))})")
            last = step == config.max_steps
            if last or (config.checkpoint_every and step % config.checkpoint_every == 0):
                _report_with_checkpoint(engine, encoder, objective, metrics, step, rank, save_length)
            else:
                ray.train.report(metrics)
    finally:
        if tracker:
            tracker.close()


def batch_note(global_batch: int, objective_note: str) -> str:
    """The step line's parenthesis: the effective batch, then what the objective says of it (nothing when its note is
    empty, e.g. a loss of pairs without negatives)."""
    return ", ".join(filter(None, (f"effective batch {global_batch}", objective_note)))


def build_objective(config, encoder, world: int = 1):
    """The configured objective for ``encoder``, its own parameters initialised from ``config.seed`` alone (the
    same on every worker)."""
    import torch

    from interlingua.trainers.objectives.base import ObjectiveSetup

    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(config.seed)
        return config.objective_class(config.objective_options,
                                      ObjectiveSetup(encoder=encoder, seed=config.seed, world_size=world))


def step_function(engine, objective, config, world: int):
    """forward + backward of one step: plain, or GradCache (ZeRO 0: sync deferred to the last backward; ZeRO 1:
    one coalesced reduction). An objective that freezes the encoder needs no cache (no encoder graph)."""
    from interlingua.trainers.gradcache import cached_step, plain_step

    def encode(features):
        return engine(features)

    loss_fn = objective.loss
    chunk = config.grad_cache_chunk
    if chunk is None or not objective.trains_encoder:
        return lambda views: plain_step(encode, views, loss_fn, chunk, backward=engine.backward)
    if config.zero_stage == 0:
        return lambda views: cached_step(encode, views, loss_fn, chunk, backward=engine.backward,
                                         defer_sync=engine.no_sync if world > 1 else None)

    def coalesced(views):
        with engine.coalesce_grad_reduction():
            return cached_step(encode, views, loss_fn, chunk, backward=engine.backward)

    return coalesced


_TOKENS = "__tokens__"


def _counters(objective, counters: dict[str, int], tokens: int) -> dict[str, int]:
    """The objective's declared counters in a fixed order (every worker reduces the same vector), plus tokens."""
    unknown = sorted(set(counters) - set(objective.counter_names))
    if unknown:
        raise ValueError(f"objective {objective.name!r} returned counters {unknown} it does not declare in "
                         f"counter_names {list(objective.counter_names)}")
    return {**{name: int(counters.get(name, 0)) for name in objective.counter_names}, _TOKENS: tokens}


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


def _sum_over_workers(value, world, dist):
    if world > 1 and dist.is_initialized():
        value = value.clone()
        dist.all_reduce(value)
    return value


def _mean_over_workers(value, world, dist) -> float:
    return float(_sum_over_workers(value, world, dist)) / (world if world > 1 and dist.is_initialized() else 1)


def _report_with_checkpoint(engine, encoder, objective, metrics, step, rank, save_length: int) -> None:
    import ray.train

    from interlingua.trainers.engine.checkpoints import seal

    with tempfile.TemporaryDirectory() as tmp:
        engine.save_checkpoint(os.path.join(tmp, DEEPSPEED_SUBDIR), tag=f"step{step}", client_state={"step": step})
        if rank == 0:
            save_outputs(tmp, encoder, objective, save_length)
        seal(tmp, rank=rank, world_size=ray.train.get_context().get_world_size(), step=step, metrics=metrics)
        ray.train.report(metrics, checkpoint=ray.train.Checkpoint.from_directory(tmp))


def save_outputs(folder: str, encoder, objective, save_length: int) -> list[str]:
    """The encoder (``encoder/``, with inference length ``save_length``) and the objective's files next to it;
    returns the objective's file names."""
    with _max_length(encoder, save_length):
        encoder.save(os.path.join(folder, ENCODER_SUBDIR))
    return objective.save(folder)


@contextlib.contextmanager
def _max_length(encoder, length: int):
    training_length = encoder.max_length
    encoder.max_length = length
    try:
        yield
    finally:
        encoder.max_length = training_length


def _restore(engine, resume_from: str | None, rank: int) -> int:
    """Load the checkpoint to continue from into the engine (and this worker's RNG state); returns its step.
    ``resume_from``: the latest complete checkpoint ``fit`` found on disk; else Ray's latest one, if any."""
    import ray.train

    from interlingua.trainers.engine.checkpoints import restore_rng
    from interlingua.trainers.engine.safe_checkpoint import load_weights_only

    checkpoint = ray.train.get_checkpoint() if resume_from is None else ray.train.Checkpoint.from_directory(resume_from)
    if checkpoint is None:
        return 0
    load_weights_only(engine)  # DeepSpeed's own loader would unpickle arbitrary objects
    with checkpoint.as_directory() as folder:
        _, client_state = engine.load_checkpoint(os.path.join(folder, DEEPSPEED_SUBDIR))
        restore_rng(folder, rank)
    return int((client_state or {}).get("step", 0))


#: The metric every step logs, whose last step in a run's history says where a resumed run's logging goes on.
EVERY_STEP_METRIC = "loss"


def metric_batch(metrics: dict[str, float], step: int) -> list:
    """One step's values as MLflow metrics, stamped now (``step`` is their x axis, not a metric of its own)."""
    from mlflow.entities import Metric

    now = int(time.time() * 1000)
    return [Metric(k, float(v), now, step) for k, v in metrics.items() if k != "step"]


class _MetricsLogger:
    """Rank-0 per-step metrics to the driver's MLflow run (no-op without a run id).

    Each step's batch is logged asynchronously (MLflow's ``synchronous=False``), so the step loop does not wait for
    the tracking store: a write to the local sqlite store took about 8 ms, a remote server adds a round trip, and on
    a GPU the device would idle for that long every step. Before a step's batch is queued, the batches of earlier
    steps are waited for (they have normally long finished; a store slower than the steps holds the loop back instead
    of queueing without bound), and :meth:`close` waits for the rest. A failed write is warned about and counted; it
    never stops training.

    A run resumed after a kill trains again the steps between its checkpoint and the kill, which the run's history
    already holds: for a ``resumed`` loop the run's last logged step is read once, here, and steps up to it are not
    logged again (each (metric, step) is in the history once, its value the one logged first). A loop from step 0
    logs every step, into a run with a history too (a second training logged to one run)."""

    def __init__(self, run_id: str | None, tracking_uri: str | None, *, resumed: bool = False):
        self.run_id = run_id
        self.client = None
        self.failures = 0
        self.pending: list[tuple[int, Any]] = []  # (step, MLflow RunOperations) not yet waited for
        self.logged_through = 0  # the last step the run's history already holds (a resumed run's)
        if run_id:
            from mlflow.tracking import MlflowClient

            self.client = MlflowClient(tracking_uri=tracking_uri)
            self.logged_through = self._last_logged_step() if resumed else 0

    def _last_logged_step(self) -> int:
        """The step of the run's latest ``loss`` (logged with every step's batch), 0 for none or an unreadable run
        (warned about: its steps are then logged, as before)."""
        try:
            latest = self.client.get_run(self.run_id).data.to_proto().metrics  # each key's value at its last step
        except Exception as err:
            warnings.warn(f"MLflow run {self.run_id}: its last logged step could not be read ({err}); every step is "
                          "logged, a resumed run's steps before the kill again")
            return 0
        return max((metric.step for metric in latest if metric.key == EVERY_STEP_METRIC), default=0)

    def log(self, metrics: dict[str, float], step: int) -> None:
        if not self.client or step <= self.logged_through:
            return
        self._wait()
        try:
            operation = self.client.log_batch(self.run_id, metrics=metric_batch(metrics, step), synchronous=False)
        except Exception as err:  # a tracking-server hiccup must not kill training: warn and go on
            self._failed(step, err)
            return
        if operation is not None:
            self.pending.append((step, operation))

    def close(self) -> None:
        """Wait for every queued batch (call before the training function returns)."""
        self._wait()

    def _wait(self) -> None:
        pending, self.pending = self.pending, []
        for step, operation in pending:
            try:
                operation.wait()
            except Exception as err:
                self._failed(step, err)

    def _failed(self, step: int, err: Exception) -> None:
        self.failures += 1
        warnings.warn(f"MLflow metric logging failed at step {step} ({self.failures} failures so far): {err}")
