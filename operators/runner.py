"""Run an :class:`~interlingua.operators.base.Operator` over a Ray dataset.

``run_operator`` is the one place that turns an operator class into Ray Data work:
``map_batches`` with an actor pool sized from the class's declared resources, GPUs requested only
when the cluster has them, and Ray's progress bar on. ``split_rejects`` turns the reject column an
operator fills into a rejects list, so failed rows are kept with their reason instead of vanishing.
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
):
    """Map ``op_cls`` over ``ds`` on a pool of actors; returns the (lazy) output dataset.

    ``concurrency``, ``batch_size`` and ``num_gpus`` override what the class declares. On a
    cluster without GPUs the GPU request is dropped, so one config runs on CPU and GPU machines.
    """
    if not (isinstance(op_cls, type) and issubclass(op_cls, Operator)):
        raise TypeError(f"op_cls must be an Operator subclass, got {op_cls!r}")
    gpus = op_cls.num_gpus if num_gpus is None else num_gpus
    if gpus and not cluster_has_gpus():
        gpus = 0
    return ds.map_batches(
        op_cls,
        fn_constructor_kwargs=op_kwargs or {},
        compute=actor_pool(concurrency or op_cls.concurrency),
        batch_size=batch_size or op_cls.batch_size,
        num_cpus=op_cls.num_cpus,
        num_gpus=gpus,
        batch_format=batch_format,
    )


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
