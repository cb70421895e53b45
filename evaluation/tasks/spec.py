"""A runnable evaluation task: what the runner iterates over, whatever the data source."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

from interlingua.models.protocol import TextEncoder


@dataclass(frozen=True)
class TaskSpec:
    """``run(encoder, seed) -> {metric: value}``; ``primary`` names the metric shown in the table."""

    name: str
    kind: str
    language: str
    primary: str
    run: Callable[[TextEncoder, int], dict[str, float]]
