"""Model mistakes a recipe's stages would make, found when the recipe loads: ``interpolate`` of two literal local
folders that :func:`~interlingua.models.interpolate.check_folders` refuses, ``combine`` ``sum``/``norm_sum`` of
literal local folders of unequal dims (read from their ``config.json``). Each was caught only when its stage ran,
after the stages before it had run and its MLflow run had opened. A value holding a reference or ``${seed}``, or
naming anything but an existing local folder (a registry URI, a hub id), is left to the stage. On a cluster, an
amr-corpus stage's literal model paths this machine lacks are refused too (:func:`check_cluster_only_models`).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from interlingua.workflows.recipe_spec import REFERENCE, SEED, RecipeConfig, RecipeError, references, uses_seed


def check_literal_models(recipe: RecipeConfig, order: list[str], done: frozenset[str] = frozenset()) -> None:
    """:class:`~interlingua.workflows.recipe_spec.RecipeError` (one line, naming the stage) for the first stage in
    ``order`` (those in ``done`` excepted: a rerun skips them) whose literal model folders its workflow refuses."""
    from interlingua.core.errors import UserError
    from interlingua.models.combined import check_folder_sum_dims
    from interlingua.models.interpolate import check_folders
    from interlingua.models.load import find_model_root

    for name in order:
        stage = recipe.stages[name]
        if name in done or stage.workflow not in ("interpolate", "combine"):
            continue
        config = stage.config
        try:
            if stage.workflow == "interpolate":
                folders = [_local_folder(config.get(key)) for key in ("first", "second")]
                alpha = config.get("alpha", 0.5)
                if None not in folders and isinstance(alpha, (int, float)):
                    check_folders(*(find_model_root(folder) for folder in folders), alpha)
            else:
                mode = config.get("mode", "norm_concat")
                if isinstance(mode, str) and all(_local_folder(config.get(key)) for key in ("first", "second")):
                    check_folder_sum_dims(mode, config.get("first"), config.get("second"))
        except (UserError, ValueError) as err:
            raise RecipeError(f"stage {name!r} ({stage.workflow}): {err}") from None


def check_cluster_only_models(recipe: RecipeConfig, order: list[str], done: frozenset[str], address: str | None) -> None:
    """On a cluster: :class:`RecipeError` for the first stage in ``order`` (those in ``done`` excepted) whose literal
    model paths (its workflow's ``MODEL_KEYS`` holding no reference or ``${seed}``) this machine lacks
    (:func:`~interlingua.workflows.cluster_models.models_only_the_cluster_may_have`, offline: a hub-shaped value is
    asked about when its stage runs, as a referenced one is checked)."""
    from pydantic import ValidationError

    from interlingua.core.config import with_section_defaults
    from interlingua.core.where_it_runs import runs_on_cluster
    from interlingua.workflows.cluster_models import refuse_models_only_the_cluster_has
    from interlingua.workflows.registry import load_workflow

    if not runs_on_cluster(address):
        return
    for name in order:
        stage = recipe.stages[name]
        workflow = load_workflow(stage.workflow)
        keys = getattr(workflow, "MODEL_KEYS", ())
        values = {key: stage.config[key] for key in keys if key in stage.config}
        if name in done or not keys or references(values) or uses_seed(values):
            continue
        try:
            config = workflow.CONFIG.model_validate(with_section_defaults(workflow.CONFIG, values))
        except ValidationError:  # refused with its key by the stage's own check
            continue
        refuse_models_only_the_cluster_has(workflow, config, address, stage.workflow, stage=name, ask_cluster=False)


def _local_folder(value: Any) -> Path | None:
    """The existing local folder a literal config value names (a path or ``file://`` URL), else None."""
    if not isinstance(value, str) or REFERENCE.search(value) or SEED.search(value):
        return None
    from interlingua.core.local_paths import local_path

    folder = local_path(value)
    try:
        return folder if folder is not None and folder.is_dir() else None
    except OSError:  # a text too long or odd for the file system: no folder
        return None
