"""A workflow stopped where it opens its MLflow run: the resume key it hands ``workflow_run``, no Ray, no MLflow."""

from __future__ import annotations


class StopAtResume(Exception):
    """Raised in place of opening the run."""


def capture_resume_keys(monkeypatch, folder_of) -> list[dict]:
    """Patch the model resolution (``folder_of()``: the folder a URI resolves to now, e.g. after an alias moved), Ray's
    start, the MLflow experiment and ``workflow_run``; returns the list each run's resume key is appended to (the run
    then raises :class:`StopAtResume`)."""
    from interlingua.core import runtime
    from interlingua.workflows import model_uri, resume

    keys: list[dict] = []

    def capture(name, resolved, *args, **kwargs):
        keys.append(resolved)
        raise StopAtResume

    monkeypatch.setattr(model_uri, "resolve_in_state", lambda uri, state: folder_of())
    monkeypatch.setattr(runtime, "init_ray", lambda *a, **k: None)
    monkeypatch.setattr(runtime, "configure_mlflow", lambda *a, **k: "0")
    monkeypatch.setattr(resume, "workflow_run", capture)
    return keys
