"""Evaluate encoders on tasks over seeds: the engine behind ``interlingua eval``."""

from __future__ import annotations

import fnmatch
import logging
import sys
from typing import Sequence

from interlingua.models.protocol import TextEncoder
from interlingua.evaluation.tasks.records import Measurement
from interlingua.evaluation.tasks.spec import TaskSpec

logger = logging.getLogger(__name__)


def select_tasks(tasks: Sequence[TaskSpec], patterns: Sequence[str]) -> list[TaskSpec]:
    """Tasks whose name or kind matches one of ``patterns`` (:func:`matching_tasks`), their files checked
    (:func:`check_task_files`): ValueError for a pattern that matches nothing, or for a chosen task whose ``check``
    finds a missing or malformed file (before any encoder loads, not after other tasks ran)."""
    return check_task_files(matching_tasks(tasks, patterns))


def matching_tasks(tasks: Sequence[TaskSpec], patterns: Sequence[str]) -> list[TaskSpec]:
    """Tasks whose name or kind matches one of ``patterns`` (shell wildcards; ``NAME`` also selects
    ``NAME_*``; "all" = every task). Raises ValueError for a pattern that matches nothing, or only tasks this
    interlingua cannot run (``unsupported``); those a pattern selects along with others are skipped with one line each
    (:func:`_name_skipped`)."""
    chosen: list[TaskSpec] = []
    skipped: list[TaskSpec] = []
    for pattern in patterns:
        matched = [t for t in tasks if pattern == "all" or t.kind == pattern or fnmatch.fnmatch(t.name, pattern)
                   or fnmatch.fnmatch(t.name, pattern + "_*")]
        if not matched:
            names = ", ".join(dict.fromkeys(t.name for t in tasks)) or "none"
            raise ValueError(f"task {pattern!r} matches nothing; available: {names}")
        runnable = [t for t in matched if t.unsupported is None]
        if not runnable:
            raise ValueError(f"{matched[0].unsupported}; upgrade interlingua to run it, or select other tasks")
        chosen += [t for t in runnable if t not in chosen]
        skipped += [t for t in matched if t.unsupported is not None and t not in skipped]
    _name_skipped(skipped)
    return chosen


#: The skipped tasks' lines :func:`_name_skipped` has printed in this process (a workflow selects its tasks before
#: training and again to evaluate).
_SKIPS_NAMED: set[str] = set()


def _name_skipped(tasks: Sequence[TaskSpec]) -> None:
    """One line on stderr per task this interlingua cannot run, once per process: skipped, not silently dropped."""
    for task in tasks:
        if task.unsupported not in _SKIPS_NAMED:
            _SKIPS_NAMED.add(task.unsupported)
            print(f"{task.unsupported}; skipped, the results cover the other tasks", file=sys.stderr, flush=True)


def check_task_files(tasks: list[TaskSpec]) -> list[TaskSpec]:
    """``tasks`` once each one's ``check`` passed (ValueError from the first that finds a missing or malformed file;
    then no task keeps what its check read: there is no run to serve). Only the first task, which runs first, keeps its
    check's read for the run; the others release theirs at once, so the checks hold at most two tasks' data."""
    try:
        for position, task in enumerate(tasks):
            if task.check is not None:
                task.check()
                if position > 0:
                    release_task_data([task])
    except BaseException:
        release_task_data(tasks)
        raise
    return tasks


def evaluate_encoder(encoder: TextEncoder, model_label: str, tasks: Sequence[TaskSpec], seeds: Sequence[int],
                     bar=None) -> list[Measurement]:
    """Every (task, seed) for one encoder -> flat list of measurements; ``bar`` (a progress bar) advances
    by one per (task, seed)."""
    if not seeds:
        raise ValueError("seeds must hold at least one seed; got none")
    out: list[Measurement] = []
    for task in tasks:
        for seed in seeds:
            logger.info("evaluating %s on %s %s (seed %d)", model_label, task.name, task.language, seed)
            if bar is not None:
                bar.set_postfix_str(f"{model_label} {task.name} seed {seed}", refresh=False)
            metrics = task.run(encoder, seed)
            out += [Measurement(model_label, task.name, task.language, name, seed, float(value), name == task.primary)
                    for name, value in metrics.items()]
            if bar is not None:
                bar.update(1)
    return out


def evaluate_models(encoders: dict[str, TextEncoder], tasks: Sequence[TaskSpec], seeds: Sequence[int],
                    release: bool = True) -> list[Measurement]:
    """All encoders ({label: encoder}) on ``tasks``, one task at a time: every encoder and seed run on a task's one read,
    which the task then releases (:func:`release_task_data`; ``release=False`` leaves that to the caller, e.g. one
    that runs the same task for another encoder next), so one task's data is held at a time. The measurements come in
    encoder order, then task and seed order."""
    from interlingua.core.progress import progress_bar

    by_encoder: dict[str, list[Measurement]] = {label: [] for label in encoders}
    try:
        with progress_bar(len(encoders) * len(tasks) * len(seeds), desc="eval", unit="task") as bar:
            for task in tasks:
                for label, encoder in encoders.items():
                    by_encoder[label] += evaluate_encoder(encoder, label, [task], seeds, bar=bar)
                if release:
                    release_task_data([task])
    finally:
        if release:
            release_task_data(tasks)
    return [m for label in encoders for m in by_encoder[label]]


def release_task_data(tasks: Sequence[TaskSpec]) -> None:
    """Each task drops the data it kept for the run (those with a ``release``)."""
    for task in tasks:
        if task.release is not None:
            task.release()
