"""Run an :class:`~interlingua.operators.base.Operator` over a Ray dataset.

``run_operator`` is the one place that turns an operator class into Ray Data work:
``map_batches`` with an actor pool sized from the class's declared resources, GPUs requested only
when the cluster has them, and Ray's progress bar on. ``split_rejects`` turns the reject column an
operator fills into a rejects list, so failed rows are kept with their reason instead of vanishing.
"""

from __future__ import annotations

import json
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
