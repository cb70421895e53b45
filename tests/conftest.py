"""Shared test set-up: make ``tests/`` importable so tests can ``import tiny_models``; no Ray runtime outlives
the test module that started it."""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

_TESTS_DIR = str(Path(__file__).resolve().parent)
if _TESTS_DIR not in sys.path:
    sys.path.insert(0, _TESTS_DIR)


import pytest

_CHECKOUT = Path(__file__).resolve().parent.parent


@pytest.fixture(autouse=True, scope="module")
def _no_mlruns_left_in_the_checkout(request):
    """A test that logs to MLflow without an artifact location of its own (a ``sqlite:///`` tracking URI
    and no ``artifact_location``) writes MLflow's default ``./mlruns`` into the checkout: the module fails
    (and the folder goes), so the test gets a tmp artifact root or a tmp working directory."""
    folders = {_CHECKOUT / "mlruns", Path.cwd() / "mlruns"}
    existed = {folder for folder in folders if folder.exists()}
    yield
    left = sorted(str(f) for f in folders - existed if f.exists())
    for folder in left:
        shutil.rmtree(folder, ignore_errors=True)
    if left:
        pytest.fail(f"{request.module.__name__} left MLflow's default artifact folder {', '.join(left)} "
                    "(hint: create the experiment with a tmp artifact_location, or monkeypatch.chdir(tmp_path))")


@pytest.fixture(autouse=True, scope="session")
def _input_hash_memo_in_tmp(tmp_path_factory):
    """The input fingerprints' memo (``<state>/cache/input-sha256.jsonl``) goes to a session folder, not to the
    development state folder that tests without ``INTERLINGUA_HOME`` share. Yields the real ``_memo_path`` (for the
    tests of the memo's own place, which set ``INTERLINGUA_HOME``)."""
    from interlingua.operators.corpus import input_fingerprints

    memo = tmp_path_factory.mktemp("input-hash-memo") / "input-sha256.jsonl"
    real = input_fingerprints._memo_path
    input_fingerprints._memo_path = lambda: memo
    yield real
    input_fingerprints._memo_path = real


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


@pytest.fixture()
def mlflow_logging_as_imported(monkeypatch):
    """MLflow's loggers as ``import mlflow`` sets them up without ``MLFLOW_LOGGING_LEVEL`` (``mlflow`` at INFO with a
    handler of its own on MLflow's stderr stream, not propagating), and that stream as MLflow made it: what a test or a
    command earlier in the process may leave. Loggers and stream are restored after."""
    import logging

    from mlflow.utils import logging_utils

    names = ("mlflow", "sqlalchemy.engine", "alembic", "huey")
    saved = {name: (list(logger.handlers), logger.level, logger.propagate)
             for name, logger in ((name, logging.getLogger(name)) for name in names)}
    stream = logging_utils.MLFLOW_LOGGING_STREAM.__dict__
    ours = ("write", "flush", "_interlingua")
    patched = {key: stream.pop(key) for key in ours if key in stream}
    monkeypatch.delenv("MLFLOW_LOGGING_LEVEL", raising=False)
    logging_utils._configure_mlflow_loggers(root_module_name="mlflow")
    yield logging_utils
    for key in ours:
        stream.pop(key, None)
    stream.update(patched)
    for name, (handlers, level, propagate) in saved.items():
        logger = logging.getLogger(name)
        logger.handlers[:], logger.propagate = handlers, propagate
        logger.setLevel(level)
