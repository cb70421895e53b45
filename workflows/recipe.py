"""Workflow ``recipe``: run a chain of stages (see :mod:`interlingua.workflows.recipe_spec`) as one MLflow
parent run with one child run per stage.

``interlingua run recipe -c recipes/NAME.yaml``. The whole recipe is validated first (workflows, references and
the outputs they name, cycles, every stage's config keys and its workflow's own checks, corpora read by literal
name); then each stage in order:
its references are resolved from the outputs of the stages before it, its hash is computed over (workflow,
resolved config), and

- a stage finished before with the same hash is skipped (its recorded outputs are reused, once each has the shape
  its workflow gives: :mod:`~interlingua.workflows.recipe_outputs`; the state folder may be shared);
- a stage started before with the same hash but not finished is resumed in its own child run (workflows
  resume from there: corpus versions skip complete shards, training restarts from its last checkpoint); one whose
  workflow finished but whose ``models:/NAME@ALIAS`` could not be pinned (the state records its outputs as
  ``finished``) is pinned and marked done, its workflow not run again;
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
import weakref
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from interlingua.core import tracking
from interlingua.core.checked_once import content_key
from interlingua.core.redact import redact_text
from interlingua.workflows.recipe_outputs import aliased_model, checked_entry, checked_stages
from interlingua.workflows.recipe_spec import (RecipeConfig, RecipeError, references, seeded_stages, stage_hash,
                                               stage_outputs, stage_values, state_key, validate_recipe)

DESCRIPTION = "run a YAML recipe of chained stages (corpus builds, training, heads, combinations) with skip/resume"
CONFIG = RecipeConfig


def load_state(path: Path) -> dict[str, dict[str, Any]]:
    """The stages ``path`` records (a mapping of mappings: :func:`~interlingua.workflows.recipe_outputs.checked_stages`;
    what a stage hands on is checked when it is reused, :func:`_run_stage`)."""
    if not path.exists():
        return {}
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except ValueError as err:
        raise RecipeError(f"recipe state {path} is not valid JSON ({err}); delete it to start over") from None
    if not isinstance(data, dict):
        raise RecipeError(f"recipe state {path}: a {type(data).__name__}, not a mapping; delete it to start over")
    return checked_stages(data.get("stages", {}), path)


def save_state(path: Path, stages: dict[str, dict[str, Any]]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps({"stages": stages}, indent=2, default=str) + "\n", encoding="utf-8")
    tmp.replace(path)


def plan(recipe: RecipeConfig, state: dict[str, dict[str, Any]], name: str, resolved: dict[str, Any],
         key: str | None = None, input_files: Sequence[str] = ()) -> tuple[str, str]:
    """(action, hash) for a stage: ``skip`` (done, unchanged), ``resume`` (started, unchanged) or ``run``.
    ``key``: the stage's entry in ``state`` (``NAME`` or ``NAME.seedN``; default ``name``). A seeded key with no entry
    yet adopts the stage's unseeded entry (``NAME``) when its hash is the same: the stage ran with that very config
    before the recipe had ``seeds`` (copied into ``state[key]``). ``input_files``: the files the stage's workflow
    reads (their fingerprints enter the hash)."""
    digest = stage_hash(recipe.stages[name].workflow, resolved, input_files)
    key = key or name
    if key != name and key not in state and state.get(name, {}).get("hash") == digest:
        state[key] = dict(state[name])
    previous = state.get(key, {})
    if previous.get("hash") == digest and name not in recipe.force:
        if previous.get("status") == "done":
            return "skip", digest
        if previous.get("run_id"):
            return "resume", digest
    return "run", digest


def preflight(config: RecipeConfig) -> None:
    """Every stage, reference and stage config checked (:func:`validate_recipe`), and the corpora stages read by
    literal name (:func:`~interlingua.workflows.recipe_corpora.check_stored_corpora`; not for ``submit``, whose job
    reads the cluster's store), for ``--show-config`` and ``submit`` as for a run. The stages the recipe's state records done and not in ``force`` are left out: a run
    leaves out those of them it skips (:func:`stages_a_rerun_skips`, which hashes their model folders), so nothing
    refused here is taken by the run."""
    from interlingua.core.where_it_runs import checks_this_machines_store
    from interlingua.workflows.recipe_corpora import check_stored_corpora, finished_stages

    order = checked_order(config)
    if checks_this_machines_store():  # submit: the job's store is the cluster's, checked by the job's run
        check_stored_corpora(config, order, finished_stages(load_state(state_file(config))) - set(config.force))


def state_file(config: RecipeConfig) -> Path:
    """``<state>/recipes/<name>/state.json`` (not created)."""
    from interlingua.core.runtime import state_path

    return state_path(config.state_dir) / "recipes" / config.name / "state.json"


#: The recipe :func:`checked_order` checked last: (a weak reference to it, its :func:`content_key`, its order). Kept
#: here, never on the model: a private attribute made two equal recipes compare unequal once one was checked.
_LAST_CHECKED: tuple[weakref.ref, str | None, list[str]] | None = None


def checked_order(config: RecipeConfig) -> list[str]:
    """The execution order :func:`validate_recipe` gives, computed once per content of ``config``: ``interlingua run
    recipe`` checks the recipe (:func:`preflight`) before :func:`run`, which checks it only when it is not the recipe
    checked (another object, a config changed since, or one that no command checked)."""
    global _LAST_CHECKED
    key, last = content_key(config), _LAST_CHECKED
    if key is not None and last is not None and last[0]() is config and last[1] == key:
        return list(last[2])
    order = validate_recipe(config)
    _LAST_CHECKED = (weakref.ref(config), key, list(order))
    return order


def run(config: RecipeConfig, *, address: str | None = None) -> dict[str, Any]:
    from mlflow.tracking import MlflowClient

    from interlingua.core.runtime import check_tracking_store, configure_mlflow, state_dir
    from interlingua.core.runtime import state_path as state_folder
    from interlingua.workflows.recipe_corpora import check_stored_corpora
    from interlingua.core.where_it_runs import runs_on_cluster
    from interlingua.workflows.recipe_models import check_cluster_only_models, check_literal_models
    from interlingua.workflows.recipe_stage_checks import check_stages

    order = checked_order(config)  # once: the command's preflight checked it already
    folder = state_folder(config.state_dir)
    check_tracking_store(folder)  # no answer: exit 69 before any model folder is hashed
    state_path = state_file(config)
    state = load_state(state_path)
    skipped = stages_a_rerun_skips(config, order, state)  # done, unchanged and not forced: left out of the checks
    # a corpus read by name that nothing builds or holds: before MLflow starts (stages a rerun skips excepted)
    check_stored_corpora(config, order, skipped)
    check_literal_models(config, order, skipped)  # interpolate's and combine's model checks
    check_cluster_only_models(config, order, skipped, address)  # model folders hashed on this machine
    if not runs_on_cluster(address):  # what each stage's workflow needs of this machine (a cluster's: when it runs)
        check_stages(config, order, skipped, machine=True)  # its settings: checked with the recipe (checked_order)
    state_root = state_dir(config.state_dir)
    experiment_id = configure_mlflow(config.experiment, state_root)
    client = MlflowClient()
    parent = tracking.create_run(experiment_id, f"recipe-{config.name}-{time.strftime('%Y%m%d-%H%M%S')}",
                                 {"interlingua.workflow": "recipe", "interlingua.recipe": config.name}, client)
    parent_id = parent.info.run_id
    tracking.log_dict(config.model_dump(mode="json"), "recipe/recipe.json", parent_id, client)
    print(f"recipe {config.name}: {len(order)} stages ({' -> '.join(order)}); parent run {parent_id}")
    seeded = seeded_stages(config)
    if config.seeds:
        print(f"  seeds {config.seeds}: once per seed: {', '.join(n for n in order if n in seeded) or '-'}")
    actions: dict[str, str] = {}
    evaluations: dict[str, list[list[dict]]] = {}
    started = time.time()
    try:  # whatever stops the recipe (a stage's refusal before its run opens, its workflow's error) ends it FAILED
        _run_stages(config, order, seeded, state, state_path, actions, evaluations, client, experiment_id, parent_id,
                    address)
    except BaseException:
        _end_run(client, parent_id, "FAILED")
        raise
    table = _results(config, evaluations, client, parent_id)
    summary = {"recipe": config.name, "parent_run_id": parent_id, "actions": actions,
               "outputs": {key: {k: state[key]["outputs"].get(k) for k in ("model", "corpus", "version")
                                 if k in state[key].get("outputs", {})}
                           for key in actions if state.get(key, {}).get("status") == "done"},
               "state": str(state_path), "seconds": round(time.time() - started, 1)}
    if table:
        summary["results"] = table
    tracking.log_dict(summary, "recipe/summary.json", parent_id, client)
    _end_run(client, parent_id, "FINISHED")
    return summary


def _run_stages(config: RecipeConfig, order: list[str], seeded: set[str], state: dict[str, dict[str, Any]],
                state_path: Path, actions: dict[str, str], evaluations: dict[str, list[list[dict]]], client,
                experiment_id: str, parent_id: str, address: str | None) -> None:
    """Every stage in ``order``, once per seed (a stage no seed reaches once), until one says stop."""
    stopped = False
    for seed in config.seeds or [None]:
        if stopped:
            break
        outputs: dict[str, dict[str, Any]] = {}
        for name in order:
            key = state_key(name, seed if name in seeded else None)
            if key in actions:  # a stage shared by all seeds ran (or was skipped) for an earlier seed
                outputs[name] = state[key]["outputs"]
                continue
            stopped = _run_stage(config, name, key, seed, outputs, state, state_path, actions, client, experiment_id,
                                 parent_id, address)
            if isinstance(outputs[name].get("evaluation"), list) and outputs[name]["evaluation"]:
                evaluations.setdefault(name, []).append(outputs[name]["evaluation"])
            if stopped:
                break


def pack_identity(pack: str | None, state_dir: str | None) -> str:
    """sha256 of the manifest of the pack a stage reads (the default pack is built or completed first), so a stage
    that evaluated on, or left out the texts of, another pack is run again."""
    import hashlib

    from interlingua.core.runtime import state_dir as resolve_state_dir
    from interlingua.workflows.pack_eval import ensure_pack

    folder = ensure_pack(pack, resolve_state_dir(state_dir))
    return hashlib.sha256((folder / "manifest.json").read_bytes()).hexdigest()[:16]


def _hashed(workflow, resolved: dict[str, Any], *, build_pack: bool = True) -> dict[str, Any] | None:
    """What a stage's hash covers besides ``resolved``: the pack it reads (evaluation, texts left out of training),
    by :func:`pack_identity`; ``build_pack=False``: None where that pack has no manifest yet (it is built first)."""
    if "pack" not in workflow.CONFIG.model_fields:
        return resolved
    pack, folder = resolved.get("pack"), resolved.get("state_dir")
    if not build_pack:
        from interlingua.core.runtime import state_dir

        if not (Path(pack) if pack else state_dir(folder) / "bench-pack").joinpath("manifest.json").exists():
            return None
    return {**resolved, "pack_manifest": pack_identity(pack, folder)}


def _plan_stage(config: RecipeConfig, state: dict[str, dict[str, Any]], name: str, key: str, workflow,
                hashed: dict[str, Any], stage_config) -> tuple[str, str]:
    """:func:`plan` of stage ``name``'s entry ``key``, the files its workflow reads counted (a corpus build: an input
    rewritten in place runs it again)."""
    input_urls = getattr(workflow, "input_urls", None)
    return plan(config, state, name, hashed, key, input_urls(stage_config) if input_urls else ())


def stages_a_rerun_skips(config: RecipeConfig, order: Sequence[str],
                         state: dict[str, dict[str, Any]]) -> frozenset[str]:
    """The stages of ``order`` that this run of the recipe will skip, which the checks made when it loads leave out:
    each recorded done (:func:`~interlingua.workflows.recipe_corpora.finished_stages`), not in ``force``, and, for a
    stage without references, whose every entry (one per seed where it uses ``${seed}``) :func:`plan` skips now (its
    config, model folders and input files hash as recorded). A stage with references (no value before its turn),
    or one reading a pack not built yet, is taken as its state says (its run checks it)."""
    from interlingua.core.config import validate
    from interlingua.core.errors import UserError
    from interlingua.workflows.recipe_corpora import finished_stages
    from interlingua.workflows.registry import load_workflow

    done, seeded, seeds = finished_stages(state), seeded_stages(config), config.seeds or [None]
    skipped = set()
    for name in order:
        stage = config.stages[name]
        if name not in done or name in config.force:
            continue
        if references(stage.config):
            skipped.add(name)
            continue
        workflow = load_workflow(stage.workflow)
        entries = [(state_key(name, seed), seed) for seed in seeds] if name in seeded else [(name, seeds[0])]
        try:
            actions = set()
            for key, seed in entries:
                resolved = stage_values(config, name, workflow.CONFIG, {}, seed)
                hashed = _hashed(workflow, resolved, build_pack=False)
                if hashed is None:
                    actions.add("skip")
                    continue
                stage_config = validate(workflow.CONFIG, resolved, source=f"recipe stage {name!r}")
                actions.add(_plan_stage(config, dict(state), name, key, workflow, hashed, stage_config)[0])
        except UserError:  # its run refuses it (the checks name why)
            continue
        if actions == {"skip"}:
            skipped.add(name)
    return frozenset(skipped)


def _run_stage(config: RecipeConfig, name: str, key: str, seed: int | None, outputs: dict[str, dict[str, Any]],
               state: dict[str, dict[str, Any]], state_path: Path, actions: dict[str, str], client, experiment_id: str,
               parent_id: str, address: str | None) -> bool:
    """Skip, resume or run one stage (``key``: its state entry); fills ``outputs[name]``; True = stop here."""
    import mlflow

    from interlingua.workflows.cluster_models import refuse_models_only_the_cluster_has
    from interlingua.workflows.registry import load_workflow

    label = key
    stage = config.stages[name]
    workflow = load_workflow(stage.workflow)
    resolved = stage_values(config, name, workflow.CONFIG, outputs, seed)
    hashed = _hashed(workflow, resolved)
    from interlingua.core.config import validate

    stage_config = validate(workflow.CONFIG, resolved, source=f"recipe stage {name!r}")
    # its hash counts model folders as this machine has them: on a cluster, one only the cluster has is refused
    # (literal paths before any stage ran: recipe_models.check_cluster_only_models)
    refuse_models_only_the_cluster_has(workflow, stage_config, address, stage.workflow, stage=name)
    action, digest = _plan_stage(config, state, name, key, workflow, hashed, stage_config)
    actions[key] = action
    if action in ("skip", "resume"):  # the state may be shared: what it says of the stage is checked before use
        checked_entry(state[key], workflow=stage.workflow, key=key, state_file=state_path, config=resolved,
                      done=action == "skip")
    if action == "skip":
        outputs[name] = state[key]["outputs"]
        print(f"[{label}] unchanged (hash {digest}): skipped; outputs from run {state[key].get('run_id')}")
        tracking.set_tags({f"stage.{key}": f"skipped:{state[key].get('run_id')}"}, parent_id, client)
        return name == config.stop_after
    finished = state[key].get("finished") if action == "resume" else None
    if finished is not None:  # the workflow finished, pinning its model did not: pinned now, the workflow not rerun
        actions[key] = "pin"
        run_id = state[key]["run_id"]
        tracking.set_tags({"mlflow.parentRunId": parent_id}, run_id, client)
        print(f"[{label}] {stage.workflow}: run {run_id} finished; pinning its outputs")
    elif action == "resume":
        run_id = state[key]["run_id"]
        tracking.set_tags({"mlflow.parentRunId": parent_id}, run_id, client)
        print(f"[{label}] {stage.workflow}: resuming run {run_id}")
    else:
        run_id = tracking.create_run(experiment_id, f"{config.name}/{key}",
                                     {"mlflow.parentRunId": parent_id, "interlingua.recipe": config.name,
                                      "interlingua.stage": name,
                                      **({"interlingua.seed": str(seed)} if key != name else {})}, client).info.run_id
        print(f"[{label}] {stage.workflow}: run {run_id}")
    if finished is None:
        tracking.log_dict({"workflow": stage.workflow, "config": resolved, "hash": digest}, "stage/config.json",
                          run_id, client)
        state[key] = {"hash": digest, "status": "running", "run_id": run_id, "workflow": stage.workflow}
        save_state(state_path, state)
        tracking.set_tags({f"stage.{key}": f"running:{run_id}"}, parent_id, client)
    try:
        if finished is None:
            os.environ["MLFLOW_RUN_ID"] = run_id  # the workflow's mlflow.start_run() opens this child run
            summary = workflow.run(stage_config, address=address)
            os.environ.pop("MLFLOW_RUN_ID", None)
            if mlflow.active_run() is not None:
                mlflow.end_run()
            finished = stage_outputs(summary)
            state[key] = {**state[key], "finished": finished}  # a rerun pins these, without the workflow
            save_state(state_path, state)
        # a registry that fails here fails the stage's run too; pinned on a rerun: the alias may have moved since
        outputs[name] = _repinned(finished, run_id, name, label) if actions[key] == "pin" else _pinned(finished)
    except BaseException as err:
        os.environ.pop("MLFLOW_RUN_ID", None)
        _end_run(client, run_id, "FAILED")  # the parent: by run
        resume = "" if isinstance(err, RecipeError) else "; rerun the recipe to resume from this stage"
        print(f"[{label}] failed{resume}")  # a refusal's line says its own way out
        raise
    tracking.log_dict(outputs[name], "stage/outputs.json", run_id, client)
    tracking.set_tags({"mlflow.runName": f"{config.name}/{key}"}, run_id, client)
    _end_run(client, run_id, "FINISHED")
    state[key] = {**{k: v for k, v in state[key].items() if k != "finished"}, "status": "done",
                  "outputs": outputs[name]}
    save_state(state_path, state)
    tracking.set_tags({f"stage.{key}": f"done:{run_id}"}, parent_id, client)
    if name == config.stop_after:
        print(f"recipe {config.name}: stopped after {label} (stop_after); rerun without it to go on")
        return True
    return False


def _results(config: RecipeConfig, evaluations: dict[str, list[list[dict]]], client, parent_id: str) -> str:
    """Print and log the results table: base, each evaluating stage (mean ± std over seeds), comparisons."""
    if not evaluations:
        return ""
    from interlingua.workflows.recipe_report import results_table, stage_columns

    columns = stage_columns(evaluations)
    if config.compare:
        columns |= _compare_columns(config)
    table, document = results_table(columns)
    seeds = f"mean ± std over seeds {config.seeds}" if config.seeds else "one run"
    print(f"recipe {config.name}: results ({seeds}; comparisons: ± over evaluation seeds)\n{table}")
    tracking.log_text(table + "\n", "recipe/results.md", parent_id, client)
    tracking.log_dict({"seeds": config.seeds, "rows": document}, "recipe/results.json", parent_id, client)
    return table


def _compare_columns(config: RecipeConfig) -> dict[str, dict]:
    """Each ``compare`` encoder on the pack (the default pack of the recipe's state), per evaluation seed."""
    from interlingua.core.runtime import state_dir
    from interlingua.models.resolve import resolve_encoder
    from interlingua.workflows.pack_eval import ensure_pack, evaluate_encoders

    state = state_dir(config.state_dir)
    pack = ensure_pack(None, state)
    encoders = {redact_text(spec): (resolve_encoder(spec), True) for spec in config.compare}  # labels are shown
    measurements = evaluate_encoders(encoders, pack, ["all"], [1, 2, 3], state / "embedding-cache")
    columns: dict[str, dict] = {}
    for m in measurements:
        if m.primary:
            columns.setdefault(m.model, {}).setdefault((m.task, m.language, m.metric), []).append(m.value)
    return columns


def _end_run(client, run_id: str, status: str) -> None:
    try:
        client.set_terminated(run_id, status)
    except Exception as err:  # never hide the stage's own error behind a tracking hiccup
        print(f"  (could not mark run {run_id} {status}: {err})")


def _pinned(outputs: dict[str, Any]) -> dict[str, Any]:
    """``model`` as ``models:/NAME/VERSION``: an alias may move, a reference must not (a registry that does not
    answer exits 69, one that says no 2)."""
    model = outputs.get("model")
    if isinstance(model, str) and model.startswith("models:/") and "@" in model:
        from interlingua.models.load import pin_registry_uri

        outputs = {**outputs, "model": pin_registry_uri(model)}
    return outputs


def _repinned(finished: dict[str, Any], run_id: str, name: str, label: str) -> dict[str, Any]:
    """``finished`` with its ``models:/NAME@ALIAS`` pinned on a rerun, by one registry call that also names the run
    that registered the version the alias names now: :class:`RecipeError` when neither ``run_id`` (the stage's run)
    nor the run its workflow's summary names (``finished["run_id"]``) registered it: the alias moved (a shared
    registry) between the failed pin and this rerun, so the model is not the one the stage made (state left as is)."""
    alias_uri = finished.get("model")
    if aliased_model(alias_uri) is None:  # pinned already, or no registered model
        return finished
    from interlingua.models.load import registered_version

    version = registered_version(alias_uri)
    if version.run_id not in (run_id, finished.get("run_id")):
        raise RecipeError(f"stage {label}: {alias_uri} now names version {version.version}, registered by run "
                          f"{version.run_id}, not by the stage's run {run_id} (the alias "
                          f"moved after the stage finished; hint: rerun with --set force=[{name}] to run it again)")
    return {**finished, "model": version.uri}
