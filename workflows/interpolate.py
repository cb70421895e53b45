"""Workflow ``interpolate``: one encoder whose weights are ``(1 − α)·θ_first + α·θ_second`` (WiSE-FT,
Wortsman et al. 2022; :mod:`interlingua.models.interpolate`), evaluated on the pack against both parts, and
registered like any trained encoder (a plain sentence-transformers folder: the registry's flavor serves it).

Typical use, as the last stage of a recipe: ``first`` = the base encoder, ``second`` = the model fine-tuned from
it, α = 0.5 (the paper's default mixing coefficient; choose it a priori or on a validation set, never on the
evaluation pairs). The model card records α, both parts and the fine-tuned part's corpus versions and languages.
"""

from __future__ import annotations

import json
import time
from typing import Any

from pydantic import Field

from interlingua.workflows.pack_eval import PackEvaluationConfig
from interlingua.core.names import ExperimentName, Location, RegisteredModelName, RegistryAlias

DESCRIPTION = "interpolate two encoders' weights (WiSE-FT: (1-a)*first + a*second), evaluate, register"


class InterpolateConfig(PackEvaluationConfig):
    first: Location | None = Field(None, description="encoder URI of θ at α = 0 (the base); default: the e5-small asset")
    second: Location = Field(description="encoder URI of θ at α = 1 (fine-tuned from first; same architecture)")
    alpha: float = Field(0.5, ge=0.0, le=1.0, description="mixing coefficient α (WiSE-FT's default: 0.5)")
    registered_model: RegisteredModelName = "interlingua-interpolated"
    alias: RegistryAlias = "interpolate"
    experiment: ExperimentName = "interpolate"
    evaluate_second: bool = Field(False, description="also evaluate the second part (a recipe's training stage has "
                                  "usually evaluated it already)")


CONFIG = InterpolateConfig


def run(config: InterpolateConfig, *, address: str | None = None) -> dict[str, Any]:
    import mlflow

    from interlingua.core import tracking
    from interlingua.core.redact import redact
    from interlingua.core.progress import Stages
    from interlingua.core.runtime import assets_dir, configure_mlflow, state_dir
    from interlingua.models.interpolate import check_folders, interpolate_folders
    from interlingua.models.load import find_model_root, load_encoder
    from interlingua.workflows.assets.build import e5_asset_uri, e5_model_dir
    from interlingua.workflows.combine import part_provenance

    stages = Stages("interpolate")
    state = state_dir(config.state_dir)
    first_uri = config.first or e5_asset_uri(assets_dir(state))
    stable = [str(e5_model_dir(assets_dir(state)).resolve())]
    with stages("check"):  # every mistake is refused here, before an MLflow run exists
        from interlingua.workflows.model_uri import resolve_in_state

        first_dir = find_model_root(resolve_in_state(first_uri, state))
        second_dir = find_model_root(resolve_in_state(config.second, state))
        check_folders(first_dir, second_dir, config.alpha)
        pack = None
        if config.evaluate:
            from interlingua.workflows.pack_eval import ensure_pack

            pack = ensure_pack(config.pack, state, tasks=config.eval_tasks)
    configure_mlflow(config.experiment, state)
    with mlflow.start_run(run_name=f"interpolate-{time.strftime('%Y%m%d-%H%M%S')}") as mlflow_run:
        run_id = mlflow_run.info.run_id
        tracking.log_params({"first": first_uri, "second": config.second, "alpha": config.alpha})
        tracking.set_tags({"interlingua.workflow": "interpolate"})
    out_dir = state / "interpolate" / run_id
    with stages("interpolate"):
        folder = interpolate_folders(first_dir, second_dir, config.alpha, out_dir / "encoder", checked=True)
        print(f"  θ = {1 - config.alpha:g}·θ({first_uri}) + {config.alpha:g}·θ({config.second}) -> {folder}")
    rows: list[dict] = []
    if config.evaluate:
        with stages("evaluate"):
            from interlingua.workflows.pack_eval import cacheable, compare_on_pack

            parts = {"first": first_uri, **({"second": config.second} if config.evaluate_second else {})}
            encoders = {label: (load_encoder(uri), cacheable(uri, stable)) for label, uri in parts.items()}
            encoders["interpolated"] = (load_encoder(str(folder)), False)
            rows = compare_on_pack(encoders, pack, config, state, run_id,
                                   out_dir / "evaluation", "first", "interpolated")
    with stages("register"):
        from interlingua.models.model_card import ModelCard
        from interlingua.models.registry import log_and_register_encoder

        versions, languages = part_provenance(config.second)
        card = ModelCard(base_model=first_uri, objective=f"interpolate:alpha={config.alpha:g}", workflow="interpolate",
                         corpus_versions=versions, languages=languages, config=config.model_dump(mode="json"),
                         evaluation=rows, description=f"WiSE-FT interpolation (1-α)·{first_uri} + α·{config.second}, "
                                                      f"α = {config.alpha:g} (evaluation: base = the first part)")
        registered = log_and_register_encoder(str(folder), config.registered_model, config.alias, run_id, card=card,
                                              tags={"interlingua.interpolation_alpha": f"{config.alpha:g}"})
        print(f"  registered {registered.uri} (version {registered.version})")
    summary = {"run_id": run_id, "model_uri": registered.uri, "model": registered.version_uri,
               "model_version": registered.version, "first": first_uri, "second": config.second,
               "alpha": config.alpha, "encoder_dir": str(folder), "corpus_versions": versions,
               "languages": languages, "evaluation": rows, "seconds": stages.seconds}
    out_dir.mkdir(parents=True, exist_ok=True)
    (out_dir / "summary.json").write_text(json.dumps(redact(summary), indent=2, default=str) + "\n")
    return summary
