"""Workflow ``combine``: one encoder from two, ``s/‖s‖ ⊕ h/‖h‖`` (Cai et al. 2022; any mode of
:mod:`interlingua.models.combined`), saved as one folder that ``load_encoder``, ``interlingua embed`` and
``interlingua eval`` read, evaluated on the pack against both parts, and logged to its run with a model card
that merges the parts' corpus versions and languages (from their registry tags). Not registered: the registry
holds sentence-transformers folders (MLflow's flavor), which cannot hold two transformers side by side.
"""

from __future__ import annotations

import json
import time
from typing import Annotated, Any

from pydantic import BeforeValidator, Field

from interlingua.core.names import ExperimentName, Location
from interlingua.models.combined import Combination, check_mode
from interlingua.workflows.pack_eval import PackEvaluationConfig

DESCRIPTION = "combine two encoders (s/|s| + h/|h| concatenation by default) into one encoder folder, evaluated"


class CombineConfig(PackEvaluationConfig):
    first: Location = Field(description="encoder URI of s (models:/NAME/VERSION, a folder, ...)")
    second: Location = Field(description="encoder URI of h")
    mode: Annotated[Combination, BeforeValidator(check_mode)] = Field(  # the message a MODE(A|B) spec's mistake gets
        "norm_concat", description="s ⊕ h, s + h, s/‖s‖ ⊕ h/‖h‖ or s/‖s‖ + h/‖h‖")
    experiment: ExperimentName = "combine"


CONFIG = CombineConfig


def stage_marks(config: dict[str, Any]) -> dict[str, str]:
    """A recipe stage's marks (:func:`~interlingua.workflows.recipe_spec.stage_hash`): ``concat`` and ``sum`` combine
    the parts' raw outputs since they were mended (they gave the normalized ones), so such a stage runs again once
    instead of keeping the evaluation of the normalized vectors."""
    from interlingua.models.combined import RAW_MARK, RAW_MODES

    return {"outputs": RAW_MARK} if config.get("mode") in RAW_MODES else {}


def run(config: CombineConfig, *, address: str | None = None) -> dict[str, Any]:
    import mlflow

    from interlingua.core.errors import UserError
    from interlingua.core import tracking
    from interlingua.core.progress import Stages
    from interlingua.core.runtime import check_tracking_store, configure_mlflow, state_dir
    from interlingua.models.combined import CombinedEncoder, check_folder_sum_dims
    from interlingua.models.load import load_encoder

    stages = Stages("combine")
    state = state_dir(config.state_dir)
    try:  # a sum of local folders of unequal dims: from their config.json, before the server or either model
        check_folder_sum_dims(config.mode, config.first, config.second)
    except ValueError as err:
        raise UserError(str(err)) from None
    check_tracking_store(state)  # an MLflow server that does not answer: exit 69 before the pack is built
    pack = None
    if config.evaluate:  # a task name that selects nothing: before any model loads or a run starts
        from interlingua.workflows.pack_eval import ensure_pack

        pack = ensure_pack(config.pack, state, tasks=config.eval_tasks)
    configure_mlflow(config.experiment, state)
    with stages("load"):
        first, second = load_encoder(config.first), load_encoder(config.second)
        try:  # e.g. a sum of unequal dims: refused here, in one line, before the MLflow run
            combined = CombinedEncoder(first, second, config.mode)
        except ValueError as err:
            raise UserError(str(err)) from None
    with mlflow.start_run(run_name=f"combine-{time.strftime('%Y%m%d-%H%M%S')}") as mlflow_run:
        run_id = mlflow_run.info.run_id
        tracking.log_params({"first": config.first, "second": config.second, "mode": config.mode})
        tracking.set_tags({"interlingua.workflow": "combine"})
    out_dir = state / "combine" / run_id
    with stages("save"):
        folder = combined.save(out_dir / "encoder")
        print(f"  {combined.name}: {combined.dim} dimensions, saved in {folder}")
    rows: list[dict] = []
    if config.evaluate:
        with stages("evaluate"):
            from interlingua.workflows.pack_eval import cacheable, compare_on_pack

            encoders = {"first": (first, cacheable(config.first)), "second": (second, cacheable(config.second)),
                        "combined": (load_encoder(str(folder)), False)}
            rows = compare_on_pack(encoders, pack, config, state, run_id,
                                   out_dir / "evaluation", "first", "combined")
    from interlingua.models.model_card import ModelCard

    versions, languages = {}, set()
    for uri in (config.first, config.second):
        part_versions, part_languages = part_provenance(uri)
        versions |= part_versions
        languages |= set(part_languages)
    card = ModelCard(base_model=config.first, objective=f"combine:{config.mode}", workflow="combine",
                     corpus_versions=versions, languages=sorted(languages), config=config.model_dump(mode="json"),
                     evaluation=rows, description=f"{config.mode} of {config.first} and {config.second} "
                                                  "(evaluation: base = the first part)")
    # The registry logs sentence-transformers folders (MLflow's sentence_transformers flavor), which cannot
    # hold two transformers side by side: the combination stays a folder, logged to the run with its card.
    (folder / "README.md").write_text(card.to_markdown(), encoding="utf-8")
    mlflow.tracking.MlflowClient().log_artifacts(run_id, str(folder), "combined-encoder")
    summary = {"run_id": run_id, "model": str(folder), "encoder_dir": str(folder), "dim": combined.dim,
               "corpus_versions": versions, "languages": sorted(languages), "evaluation": rows,
               "seconds": stages.seconds}
    (out_dir / "summary.json").write_text(json.dumps(summary, indent=2, default=str) + "\n")
    return summary


def part_provenance(uri: str) -> tuple[dict[str, str], list[str]]:
    """Corpus versions and languages a registered encoder's card recorded (its version tags); empty otherwise."""
    if not uri.startswith("models:/"):
        return {}, []
    from mlflow.tracking import MlflowClient

    from interlingua.core.errors import UserError
    from interlingua.models.load import pin_registry_uri
    from interlingua.models.registry_errors import registry_error

    try:
        name, _, version = pin_registry_uri(uri)[len("models:/"):].partition("/")
        tags = MlflowClient().get_model_version(name, version.split("/")[0]).tags
    except UserError:  # pin_registry_uri's own line
        raise
    except Exception as err:  # an outage exits 69, the rest 2 (as the load of the same part)
        raise registry_error(uri, err) from err
    versions = dict(item.rsplit("@", 1) for item in tags.get("interlingua.corpus_versions", "").split(",") if "@" in item)
    languages = [lang for lang in tags.get("interlingua.languages", "").split(",") if lang]
    return versions, languages
