"""One 2-process gloo run per test session for all distributed checks (gather and GradCache); not a test module."""

from __future__ import annotations

import functools
import tempfile
from pathlib import Path

import gather_scenarios
import gradcache_scenarios
from contrastive_harness import run_on_workers


def run_all(rank: int, world_size: int) -> dict:
    return {
        "gather": gather_scenarios.all_scenarios(rank, world_size),
        "gradcache": gradcache_scenarios.all_scenarios(rank, world_size),
    }


@functools.cache
def worker_results() -> list[dict]:
    """Per-rank results of :func:`run_all` on 2 workers, computed once and shared by the test files."""
    with tempfile.TemporaryDirectory() as folder:
        return run_on_workers(run_all, Path(folder))
