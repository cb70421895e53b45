"""Shared test set-up: make ``tests/`` importable so tests can ``import tiny_models``; no Ray runtime outlives
the test module that started it."""

from __future__ import annotations

import sys
from pathlib import Path

_TESTS_DIR = str(Path(__file__).resolve().parent)
if _TESTS_DIR not in sys.path:
    sys.path.insert(0, _TESTS_DIR)


import pytest


@pytest.fixture(autouse=True, scope="module")
def _shut_down_ray_after_module():
    """Each module that uses Ray starts its own local runtime (its own CPU count); one left running by a
    module (e.g. started by a workflow under test) would make the next module's ``ray.init`` fail."""
    yield
    ray = sys.modules.get("ray")
    if ray is not None and ray.is_initialized():
        ray.shutdown()


@pytest.fixture(scope="module")
def ray_local():
    """A local Ray runtime for one test module: 2 CPUs (this machine's), 200 MiB object store."""
    import ray

    ray.init(address="local", num_cpus=2, object_store_memory=200 * 1024**2, include_dashboard=False,
             log_to_driver=False)
    yield ray
    ray.shutdown()
