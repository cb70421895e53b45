"""One measured value, the unit every task returns and every report consumes."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Measurement:
    """``value`` of ``metric`` for (``model``, ``task``, ``language``, ``seed``); ``primary`` marks the
    metric shown in the summary table."""

    model: str
    task: str
    language: str
    metric: str
    seed: int
    value: float
    primary: bool = False
