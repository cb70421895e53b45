"""One MLflow run per (workflow, config) until it completes: a rerun after a crash continues it.

:func:`workflow_run` looks for a run of the experiment tagged with the workflow's *resume key* (a hash of the
workflow name and its resolved config) that has not completed; it reopens it (status ``RUNNING``) or creates
one. The block's normal end marks the run complete (tag ``interlingua.complete=true``, status ``FINISHED``); an
exception marks it ``FAILED`` and leaves it resumable; a SIGKILL leaves it ``RUNNING`` and resumable. Runs are
found by the tag rather than by status alone because stages in between (``log_model`` inside
``mlflow.start_run(run_id=...)``) end the run as ``FINISHED`` when they leave their block.

Names derived from the run id (the quickstart's Ray Train run ``quickstart-<id>``) are therefore stable across
a crash and a rerun, so training resumes from its last complete checkpoint.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from interlingua.core import tracking

RESUME_TAG = "interlingua.resume_key"
COMPLETE_TAG = "interlingua.complete"
WORKFLOW_TAG = "interlingua.workflow"


def resume_key(workflow: str, config: Any) -> str:
    """Hash of the workflow name and its resolved config (a pydantic model or a JSON-able mapping), with the file
    digest of every local model folder the config names: after a base model is rewritten in place, a rerun starts
    afresh instead of continuing a run (and its checkpoints) made from the old one."""
    from interlingua.models.identity import with_model_files

    data = config.model_dump(mode="json") if hasattr(config, "model_dump") else config
    text = json.dumps(with_model_files({"workflow": workflow, "config": data}), sort_keys=True, default=str)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]


def resume_inputs(config: Any, model_folder: str, **resolved: Any) -> dict[str, Any]:
    """What a training workflow hands :func:`workflow_run` as its config: its own config, the model folder its model
    resolved to and what else it resolved (``corpus=NAME@VERSION``, ``corpus_versions=...``), so a corpus's newer
    latest version or a ``models:/name@alias`` that moved starts a new run instead of continuing the old one."""
    return {"config": config.model_dump(mode="json"), "model": model_folder, **resolved}


@dataclass(frozen=True)
class WorkflowRun:
    run_id: str
    resumed: bool
    key: str


def find_resumable(experiment_id: str, key: str) -> str | None:
    """The newest run of ``experiment_id`` tagged ``key`` that has not completed, or None."""
    from mlflow.tracking import MlflowClient

    runs = MlflowClient().search_runs(
        [experiment_id], filter_string=f"tags.`{RESUME_TAG}` = '{key}' and tags.`{COMPLETE_TAG}` = 'false'",
        order_by=["attributes.start_time DESC"], max_results=1)
    return runs[0].info.run_id if runs else None


@contextlib.contextmanager
def workflow_run(workflow: str, config: Any, experiment_id: str, run_name: str) -> Iterator[WorkflowRun]:
    """Open (resume or create) the run of ``workflow`` with ``config``; see the module doc. With ``MLFLOW_RUN_ID``
    set (MLflow's convention: a recipe stage's child run, which the recipe creates, resumes and ends), that run."""
    import os

    from mlflow.tracking import MlflowClient

    client = MlflowClient()
    key = resume_key(workflow, config)
    given = os.environ.get("MLFLOW_RUN_ID")
    if given:
        yield WorkflowRun(given, False, key)
        return
    run_id = find_resumable(experiment_id, key)
    resumed = run_id is not None
    if resumed:
        client.update_run(run_id, status="RUNNING")
        print(f"  continuing MLflow run {run_id} (same workflow and config, not completed)", flush=True)
    else:
        run = tracking.create_run(experiment_id, run_name,
                                  {RESUME_TAG: key, COMPLETE_TAG: "false", WORKFLOW_TAG: workflow}, client)
        run_id = run.info.run_id
    try:
        yield WorkflowRun(run_id, resumed, key)
    except BaseException:
        client.set_terminated(run_id, "FAILED")
        raise
    tracking.set_tags({COMPLETE_TAG: "true"}, run_id, client)
    client.set_terminated(run_id, "FINISHED")

