"""What interlingua sends to MLflow as text — params, tags, JSON and text artifacts, a new run's name and tags, a
registered model version's description and tags — goes through this module, masked by :func:`masked`
(:func:`interlingua.core.redact.redact`), so no call site has to remember it. ``tests/test_architecture.py`` fails
on an MLflow call that sends such text from anywhere else.

A function given ``run_id`` logs through an ``MlflowClient`` (``client``, else a new one) to that run; without it, to
the active run (MLflow's fluent API, inside ``mlflow.start_run``). Metrics (numbers under fixed or sanitized names)
and artifact files are logged directly.
"""

from __future__ import annotations

from typing import Any

from interlingua.core.params import flatten
from interlingua.core.redact import redact


def masked(value: Any) -> Any:
    """``value`` as MLflow may record it: URLs' user-info and token parameters, ``password=`` pairs, connection-string
    secrets and the values of credential-named keys masked (strings, mappings and lists alike)."""
    return redact(value)


def log_params(params: dict[str, Any], run_id: str | None = None, client=None) -> None:
    """``params`` (nested mappings flattened to dotted keys) as the run's params."""
    _record("log_params", "log_param", masked(flatten(params)), run_id, client)


def set_tags(tags: dict[str, Any], run_id: str | None = None, client=None) -> None:
    """``tags`` (values as text) on the run."""
    _record("set_tags", "set_tag", masked({key: str(value) for key, value in tags.items()}), run_id, client)


def _record(fluent: str, each: str, values: dict[str, Any], run_id: str | None, client) -> None:
    """``values`` (masked already) through ``mlflow.<fluent>`` to the active run, or ``<client>.<each>`` to
    ``run_id`` one key at a time."""
    if run_id is None:
        import mlflow

        getattr(mlflow, fluent)(values)
        return
    client = client or _client()
    for key, value in values.items():
        getattr(client, each)(run_id, key, value)


def log_dict(data: Any, path: str, run_id: str | None = None, client=None) -> None:
    """``data`` as the JSON (or YAML, by ``path``'s suffix) artifact ``path`` of the run."""
    if run_id is None:
        import mlflow

        mlflow.log_dict(masked(data), path)
    else:
        (client or _client()).log_dict(run_id, masked(data), path)


def log_text(text: str, path: str, run_id: str | None = None, client=None) -> None:
    """``text`` as the artifact ``path`` of the run."""
    if run_id is None:
        import mlflow

        mlflow.log_text(masked(text), path)
    else:
        (client or _client()).log_text(run_id, masked(text), path)


def create_run(experiment_id: str, run_name: str | None = None, tags: dict[str, Any] | None = None, client=None):
    """A new run of ``experiment_id`` (MLflow's ``Run``), named and tagged."""
    shown = masked({key: str(value) for key, value in (tags or {}).items()})
    return (client or _client()).create_run(experiment_id, run_name=masked(run_name), tags=shown)


def describe_model_version(name: str, version: str, description: str, client=None) -> None:
    """``description`` (markdown: a model card) on the registered model version."""
    (client or _client()).update_model_version(name, version, description=masked(description))


def set_model_version_tags(name: str, version: str, tags: dict[str, Any], client=None) -> None:
    """``tags`` (values as text) on the registered model version."""
    client = client or _client()
    for key, value in masked({key: str(value) for key, value in tags.items()}).items():
        client.set_model_version_tag(name, version, key, value)


def _client():
    from mlflow.tracking import MlflowClient

    return MlflowClient()
