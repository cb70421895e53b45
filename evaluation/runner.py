"""Evaluate encoders on tasks over seeds: the engine behind ``interlingua eval``."""

from __future__ import annotations

import fnmatch
import logging
from typing import Sequence

from interlingua.models.protocol import TextEncoder
from interlingua.evaluation.tasks.records import Measurement
from interlingua.evaluation.tasks.spec import TaskSpec

logger = logging.getLogger(__name__)


def select_tasks(tasks: Sequence[TaskSpec], patterns: Sequence[str]) -> list[TaskSpec]:
    """Tasks whose name or kind matches one of ``patterns`` (shell wildcards; ``NAME`` also selects
    ``NAME_*``; "all" = every task). Raises ValueError for a pattern that matches nothing."""
    chosen: list[TaskSpec] = []
    for pattern in patterns:
        matched = [t for t in tasks if pattern == "all" or t.kind == pattern or fnmatch.fnmatch(t.name, pattern)
                   or fnmatch.fnmatch(t.name, pattern + "_*")]
        if not matched:
            names = ", ".join(dict.fromkeys(t.name for t in tasks)) or "none"
            raise ValueError(f"task {pattern!r} matches nothing; available: {names}")
        chosen += [t for t in matched if t not in chosen]
    return chosen


def evaluate_encoder(encoder: TextEncoder, model_label: str, tasks: Sequence[TaskSpec], seeds: Sequence[int]) -> list[Measurement]:
    """Every (task, seed) for one encoder -> flat list of measurements."""
    if not seeds:
        raise ValueError("seeds must hold at least one seed; got none")
    out: list[Measurement] = []
    for task in tasks:
        for seed in seeds:
            logger.info("evaluating %s on %s %s (seed %d)", model_label, task.name, task.language, seed)
            metrics = task.run(encoder, seed)
            out += [Measurement(model_label, task.name, task.language, name, seed, float(value), name == task.primary)
                    for name, value in metrics.items()]
    return out


def evaluate_models(encoders: dict[str, TextEncoder], tasks: Sequence[TaskSpec], seeds: Sequence[int]) -> list[Measurement]:
    """All encoders ({label: encoder}) on ``tasks``."""
    results: list[Measurement] = []
    for label, encoder in encoders.items():
        results += evaluate_encoder(encoder, label, tasks, seeds)
    return results
