"""Workflow ``recipe``: run a chain of stages (see :mod:`interlingua.workflows.recipe_spec`) as one MLflow
parent run with one child run per stage.

``interlingua run recipe -c recipes/NAME.yaml``. The whole recipe is validated first (workflows, references,
cycles, every stage's config keys); then each stage in order: its references are resolved from the outputs
of the stages before it, its hash is computed over (workflow, resolved config), and

- a stage finished before with the same hash is skipped (its recorded outputs are reused);
- a stage started before with the same hash but not finished is resumed in its own child run (workflows
  resume from there: corpus versions skip complete shards, training restarts from its last checkpoint);
- anything else runs in a new child run.

The stage's workflow runs in this process with ``MLFLOW_RUN_ID`` set to the child run (MLflow's own
convention, so the workflow's ``mlflow.start_run`` opens the child) and ``experiment`` set to the recipe's.
State: ``<state>/recipes/<name>/state.json`` (hash, status, run id and outputs per stage), written after
every change. Registered models are referenced by pinned version (``models:/NAME/VERSION``).
"""

from __future__ import annotations

import json
import os
import time
from pathlib import Path
from typing import Any

from interlingua.workflows.recipe_spec import (RecipeConfig, RecipeError, stage_hash, stage_outputs, substitute,
                                               validate_recipe)

DESCRIPTION = "run a YAML recipe of chained stages (corpus builds, training, heads, combinations) with skip/resume"
CONFIG = RecipeConfig


def load_state(path: Path) -> dict[str, dict[str, Any]]:
    if not path.exists():
        return {}
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except ValueError as err:
        raise RecipeError(f"recipe state {path} is not valid JSON ({err}); delete it to start over") from None
    return data.get("stages", {}) if isinstance(data, dict) else {}


def save_state(path: Path, stages: dict[str, dict[str, Any]]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps({"stages": stages}, indent=2, default=str) + "\n", encoding="utf-8")
    tmp.replace(path)


def plan(recipe: RecipeConfig, state: dict[str, dict[str, Any]], name: str, resolved: dict[str, Any]) -> tuple[str, str]:
    """(action, hash) for a stage: ``skip`` (done, unchanged), ``resume`` (started, unchanged) or ``run``."""
    digest = stage_hash(recipe.stages[name].workflow, resolved)
    previous = state.get(name, {})
    if previous.get("hash") == digest and name not in recipe.force:
        if previous.get("status") == "done":
            return "skip", digest
        if previous.get("run_id"):
            return "resume", digest
    return "run", digest


def run(config: RecipeConfig, *, address: str | None = None) -> dict[str, Any]:
    import mlflow
    from mlflow.tracking import MlflowClient

    from interlingua.core.runtime import configure_mlflow, state_dir
    from interlingua.workflows.registry import load_workflow

    order = validate_recipe(config)
    state_root = state_dir(config.state_dir)
    state_path = state_root / "recipes" / config.name / "state.json"
    state = load_state(state_path)
    experiment_id = configure_mlflow(config.experiment, state_root)
    client = MlflowClient()
    parent = client.create_run(experiment_id, run_name=f"recipe-{config.name}-{time.strftime('%Y%m%d-%H%M%S')}",
                               tags={"interlingua.workflow": "recipe", "interlingua.recipe": config.name})
    parent_id = parent.info.run_id
    client.log_dict(parent_id, config.model_dump(mode="json"), "recipe/recipe.json")
    print(f"recipe {config.name}: {len(order)} stages ({' -> '.join(order)}); parent run {parent_id}")
    outputs: dict[str, dict[str, Any]] = {}
    actions: dict[str, str] = {}
    started = time.time()
    for name in order:
        stage = config.stages[name]
        workflow = load_workflow(stage.workflow)
        resolved = substitute(stage.config, outputs)
        if "experiment" in workflow.CONFIG.model_fields:
            resolved = {**resolved, "experiment": config.experiment}
        if "state_dir" in workflow.CONFIG.model_fields and config.state_dir and "state_dir" not in resolved:
            resolved = {**resolved, "state_dir": config.state_dir}
        action, digest = plan(config, state, name, resolved)
        actions[name] = action
        if action == "skip":
            outputs[name] = state[name]["outputs"]
            print(f"[{name}] unchanged (hash {digest}): skipped; outputs from run {state[name].get('run_id')}")
            client.set_tag(parent_id, f"stage.{name}", f"skipped:{state[name].get('run_id')}")
            if name == config.stop_after:
                break
            continue
        from interlingua.core.config import validate

        stage_config = validate(workflow.CONFIG, resolved, source=f"recipe stage {name!r}")
        if action == "resume":
            run_id = state[name]["run_id"]
            client.set_tag(run_id, "mlflow.parentRunId", parent_id)
            print(f"[{name}] {stage.workflow}: resuming run {run_id}")
        else:
            run_id = client.create_run(experiment_id, run_name=f"{config.name}/{name}",
                                       tags={"mlflow.parentRunId": parent_id, "interlingua.recipe": config.name,
                                             "interlingua.stage": name}).info.run_id
            print(f"[{name}] {stage.workflow}: run {run_id}")
        client.log_dict(run_id, {"workflow": stage.workflow, "config": resolved, "hash": digest}, "stage/config.json")
        state[name] = {"hash": digest, "status": "running", "run_id": run_id, "workflow": stage.workflow}
        save_state(state_path, state)
        client.set_tag(parent_id, f"stage.{name}", f"running:{run_id}")
        os.environ["MLFLOW_RUN_ID"] = run_id  # the workflow's mlflow.start_run() opens this child run
        try:
            summary = workflow.run(stage_config, address=address)
        except BaseException:
            os.environ.pop("MLFLOW_RUN_ID", None)
            _end_run(client, run_id, "FAILED")
            _end_run(client, parent_id, "FAILED")
            print(f"[{name}] failed; rerun the recipe to resume from this stage")
            raise
        os.environ.pop("MLFLOW_RUN_ID", None)
        if mlflow.active_run() is not None:
            mlflow.end_run()
        outputs[name] = _pinned(stage_outputs(summary))
        client.log_dict(run_id, outputs[name], "stage/outputs.json")
        client.set_tag(run_id, "mlflow.runName", f"{config.name}/{name}")
        _end_run(client, run_id, "FINISHED")
        state[name] = {**state[name], "status": "done", "outputs": outputs[name]}
        save_state(state_path, state)
        client.set_tag(parent_id, f"stage.{name}", f"done:{run_id}")
        if name == config.stop_after:
            print(f"recipe {config.name}: stopped after {name} (stop_after); rerun without it to go on")
            break
    summary = {"recipe": config.name, "parent_run_id": parent_id, "actions": actions,
               "outputs": {name: {k: outputs[name].get(k) for k in ("model", "corpus", "version") if k in outputs[name]}
                           for name in order if name in outputs},
               "state": str(state_path), "seconds": round(time.time() - started, 1)}
    client.log_dict(parent_id, summary, "recipe/summary.json")
    _end_run(client, parent_id, "FINISHED")
    return summary


def _end_run(client, run_id: str, status: str) -> None:
    try:
        client.set_terminated(run_id, status)
    except Exception as err:  # never hide the stage's own error behind a tracking hiccup
        print(f"  (could not mark run {run_id} {status}: {err})")


def _pinned(outputs: dict[str, Any]) -> dict[str, Any]:
    """``model`` as ``models:/NAME/VERSION``: an alias may move, a reference must not."""
    model = outputs.get("model")
    if isinstance(model, str) and model.startswith("models:/") and "@" in model:
        from interlingua.models.load import pin_registry_uri

        outputs = {**outputs, "model": pin_registry_uri(model)}
    return outputs
