"""Run an :class:`~interlingua.operators.base.Operator` over a Ray dataset.

``run_operator`` is the one place that turns an operator class into Ray Data work:
``map_batches`` with an actor pool sized from the class's declared resources, GPUs requested only
when the cluster has them, and Ray's progress bar on. ``split_rejects`` turns the reject column an
operator fills into a rejects list, so failed rows are kept with their reason instead of vanishing.

An actor pool lives as long as one dataset run: every run (every shard a workflow maps separately,
every stage) starts fresh worker processes that import Ray Data and the operator's modules and build
the operator again. With ``warm_workers=True`` (CPU operators) the batches run as Ray tasks instead,
and each worker process keeps the operator it built (:func:`warm_operator`, one per operator class,
rebuilt when the constructor arguments change), so later runs in the same Ray session reuse warm
processes, imports and operators.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import numpy as np

from interlingua.operators.base import REJECT_REASON, Operator


def cluster_has_gpus() -> bool:
    import ray

    return bool(ray.is_initialized() and ray.cluster_resources().get("GPU", 0) > 0)


def local_cores_cap(pool: int | tuple[int, int]) -> int | tuple[int, int]:
    """``pool`` with its maximum capped at this machine's cores when Ray is the local one :func:`init_ray
    <interlingua.core.runtime.init_ray>` started: that Ray declares at least 4 logical CPUs (Ray Train's workers hold
    one each), so an autoscaling pool of one-thread CPU actors would otherwise grow past the cores, which only share
    them (Embed on 2 cores: 55 s with 2 actors, 65 s with 4, each loading its own model). A cluster's CPUs are real."""
    import os

    import ray

    from interlingua.core.runtime import OWN_RAY_ADDRESS

    if isinstance(pool, int) or not ray.is_initialized():
        return pool
    own = os.environ.get(OWN_RAY_ADDRESS)
    if not own or own != ray.get_runtime_context().gcs_address:
        return pool
    lo, hi = pool
    return lo, max(lo, min(hi, os.cpu_count() or 1))


def actor_pool(concurrency: int | tuple[int, int]):
    """The ``ActorPoolStrategy`` for a fixed size or a (min, max) range."""
    from ray.data import ActorPoolStrategy

    if isinstance(concurrency, int):
        if concurrency < 1:
            raise ValueError(f"concurrency must be >= 1, got {concurrency}")
        return ActorPoolStrategy(size=concurrency)
    lo, hi = concurrency
    if not 1 <= lo <= hi:
        raise ValueError(f"concurrency range must satisfy 1 <= min <= max, got {concurrency}")
    return ActorPoolStrategy(min_size=lo, max_size=hi)


def run_operator(
    ds,
    op_cls: type[Operator],
    op_kwargs: dict[str, Any] | None = None,
    *,
    concurrency: int | tuple[int, int] | None = None,
    batch_size: int | None = None,
    num_gpus: float | None = None,
    batch_format: str = "numpy",
    warm_workers: bool = False,
):
    """Map ``op_cls`` over ``ds`` on a pool of actors; returns the (lazy) output dataset.

    ``concurrency``, ``batch_size`` and ``num_gpus`` override what the class declares. On a
    cluster without GPUs the GPU request is dropped, so one config runs on CPU and GPU machines; with GPUs the
    pool is the class's ``gpu_concurrency`` when it declares one; on the local Ray, a declared (min, max) pool
    grows to this machine's cores at most (:func:`local_cores_cap`).
    ``warm_workers``: run as tasks on reused worker processes that keep the operator between runs
    (see the module docstring); only for operators whose constructor arguments identify their state
    (equal arguments reuse the instance). Ignored when the operator gets GPUs (Ray retires a GPU
    task's process after each task by default).
    """
    if not (isinstance(op_cls, type) and issubclass(op_cls, Operator)):
        raise TypeError(f"op_cls must be an Operator subclass, got {op_cls!r}")
    gpus = op_cls.num_gpus if num_gpus is None else num_gpus
    if gpus and not cluster_has_gpus():
        gpus = 0
    pool = concurrency or (gpus and op_cls.gpu_concurrency) or local_cores_cap(op_cls.concurrency)
    if warm_workers and not gpus:
        from ray.data import TaskPoolStrategy

        actor_pool(pool)  # same validation as the actor pool
        return ds.map_batches(
            _run_warm_operator,
            fn_kwargs={"op_cls": op_cls, "op_kwargs": op_kwargs or {}},
            compute=TaskPoolStrategy(size=pool if isinstance(pool, int) else pool[1]),
            batch_size=batch_size or op_cls.batch_size,
            num_cpus=op_cls.num_cpus,
            batch_format=batch_format,
        )
    return ds.map_batches(
        op_cls,
        fn_constructor_kwargs=op_kwargs or {},
        compute=actor_pool(pool),
        batch_size=batch_size or op_cls.batch_size,
        num_cpus=op_cls.num_cpus,
        num_gpus=gpus,
        batch_format=batch_format,
    )


#: Per worker process: operator class -> (constructor-arguments key, instance).
_WARM_OPERATORS: dict[type, tuple[str, Operator]] = {}


def warm_operator(op_cls: type[Operator], op_kwargs: dict[str, Any]) -> Operator:
    """This process's instance of ``op_cls`` built with ``op_kwargs``, built on first use.

    One instance per class is kept: other arguments replace it (so a process holds at most one
    model per operator class)."""
    key = json.dumps(op_kwargs, sort_keys=True, default=repr)
    held = _WARM_OPERATORS.get(op_cls)
    if held is None or held[0] != key:
        _WARM_OPERATORS.pop(op_cls, None)  # free the old instance before building the new one
        _WARM_OPERATORS[op_cls] = held = (key, op_cls(**op_kwargs))
    return held[1]


def _run_warm_operator(batch, op_cls: type[Operator], op_kwargs: dict[str, Any]):
    return warm_operator(op_cls, op_kwargs)(batch)


def map_rows(rows: list[dict[str, Any]], op_cls: type[Operator], op_kwargs: dict[str, Any] | None = None, *,
             in_process_rows: int = 0, concurrency: int | tuple[int, int] | None = None,
             batch_size: int = 4096) -> Iterator[dict[str, np.ndarray]]:
    """Numpy batches of ``op_cls`` mapped over ``rows`` (dicts with the same keys).

    Up to ``in_process_rows`` rows the operator is created and called here, batch by batch
    (:func:`run_in_process`): for a few thousand rows, starting an actor pool (new processes, imports, the
    operator's ``__init__``) takes longer than the work. More rows: a Ray dataset through
    :func:`run_operator` on the actor pool (Ray must be initialized). The operator is the same code either
    way, so the rows it returns are the same; batches may be cut differently."""
    if not rows:
        return iter(())
    if len(rows) <= in_process_rows:
        return run_in_process(rows, op_cls, op_kwargs)
    import ray.data

    workers = concurrency if isinstance(concurrency, int) else (concurrency or op_cls.concurrency)
    workers = workers if isinstance(workers, int) else workers[1]
    ds = ray.data.from_items(rows, override_num_blocks=num_blocks(len(rows), workers))
    out = run_operator(ds, op_cls, op_kwargs, concurrency=concurrency)
    return out.iter_batches(batch_format="numpy", batch_size=batch_size)


def num_blocks(rows: int, workers: int) -> int:
    """Blocks for ``rows`` rows on ``workers`` actors: at least 4 per actor (so every actor gets work), at most
    ~2048 rows per block."""
    return max(1, min(rows, max(workers * 4, rows // 2048)))


def run_in_process(rows: list[dict[str, Any]], op_cls: type[Operator],
                   op_kwargs: dict[str, Any] | None = None) -> Iterator[dict[str, np.ndarray]]:
    """``op_cls(**op_kwargs)`` called in this process on batches of ``op_cls.batch_size`` rows, each column a
    numpy array as Ray Data's numpy batches have them (strings and lists as ``object``)."""
    operator = op_cls(**(op_kwargs or {}))
    size = op_cls.batch_size or len(rows)
    for start in range(0, len(rows), size):
        chunk = rows[start:start + size]
        yield operator({key: _column([row[key] for row in chunk]) for key in chunk[0]})


def _column(values: list[Any]) -> np.ndarray:
    if all(isinstance(v, (bool, int, float, np.number)) for v in values):
        return np.asarray(values)
    column = np.empty(len(values), dtype=object)
    column[:] = values
    return column


def split_rejects(batch: dict[str, np.ndarray], operator: str) -> tuple[dict[str, np.ndarray], list[dict]]:
    """Split a batch on its reject column into (kept rows, reject records).

    Each reject record is ``{"operator", "reason", "row"}`` with the original row as JSON, the
    format the corpus store's rejects table keeps. A batch without the column has no rejects.
    """
    if REJECT_REASON not in batch:
        return batch, []
    reasons = np.asarray(batch[REJECT_REASON], dtype=object)
    bad = np.array([bool(r) for r in reasons], dtype=bool)
    columns = [c for c in batch if c != REJECT_REASON]
    kept = {c: np.asarray(batch[c])[~bad] for c in columns}
    rejects = [
        {
            "operator": operator,
            "reason": str(reasons[i]),
            "row": json.dumps({c: _jsonable(batch[c][i]) for c in columns}, ensure_ascii=False),
        }
        for i in np.flatnonzero(bad)
    ]
    return kept, rejects


def _jsonable(value: Any) -> Any:
    if isinstance(value, np.ndarray):
        return value.tolist()
    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, bytes):
        return value.decode("utf-8", errors="backslashreplace")
    return value
