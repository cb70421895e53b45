"""The one pattern every heavy operator follows.

An operator is a callable class. Ray Data creates it once per actor (so ``__init__`` loads the
model once), then calls it on many batches. The class declares the resources one actor needs
instead of leaving the caller to guess::

    class Embed(Operator):
        num_cpus = 1
        num_gpus = 0.5          # fractional: two operators may share one device
        concurrency = (1, 4)    # actor-pool size (min, max), or an int for a fixed pool

        def __init__(self, model: str):
            self.encoder = load_encoder(model)

        def __call__(self, batch):
            batch["vector"] = self.encoder.encode(list(batch["text"]))
            return batch

Rows an operator cannot process are not dropped: the operator returns them in
``batch[REJECT_REASON]`` (empty string for rows that succeeded) and the runner splits them into
a rejects table (see :func:`interlingua.operators.runner.split_rejects`).
"""

from __future__ import annotations

from typing import Any, ClassVar

import numpy as np

Batch = dict[str, np.ndarray]

#: Column an operator fills with a non-empty reason for each row it could not process.
REJECT_REASON = "_reject_reason"


class Operator:
    """Base of the callable-class operators run by :func:`~interlingua.operators.runner.run_operator`."""

    #: CPUs one actor reserves.
    num_cpus: ClassVar[float] = 1.0
    #: GPUs one actor reserves (fractions allowed); the runner sets 0 on a machine without GPUs.
    num_gpus: ClassVar[float] = 0.0
    #: Actor-pool size: an int (fixed) or (min, max) for an autoscaling pool.
    concurrency: ClassVar[int | tuple[int, int]] = 1
    #: Actor-pool size when the actors get GPUs (several actors sharing one device keep it busy while each one
    #: prepares its next batch on the CPU); ``None``: ``concurrency``.
    gpu_concurrency: ClassVar[int | tuple[int, int] | None] = None
    #: Rows per call; ``None`` lets Ray choose.
    batch_size: ClassVar[int | None] = 64
    #: Short name used in progress bars, stats and reject records.
    name: ClassVar[str] = ""

    def __call__(self, batch: Batch) -> Batch:  # pragma: no cover - interface
        raise NotImplementedError

    @classmethod
    def operator_name(cls) -> str:
        return cls.name or cls.__name__

    @classmethod
    def resources(cls) -> dict[str, Any]:
        """The resources one actor of this operator asks for."""
        return {"num_cpus": cls.num_cpus, "num_gpus": cls.num_gpus, "concurrency": cls.concurrency}


def reject_column(num_rows: int) -> np.ndarray:
    """An all-empty reason column: fill entries with a reason for rows that failed."""
    return np.full(num_rows, "", dtype=object)
