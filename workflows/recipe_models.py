"""Model mistakes a recipe's stages would make, found when the recipe loads: ``interpolate`` of two literal local
folders that :func:`~interlingua.models.interpolate.check_folders` refuses, ``combine`` ``sum``/``norm_sum`` of
literal local folders of unequal dims (read from their ``config.json``). Each was caught only when its stage ran,
after the stages before it had run and its MLflow run had opened. A value holding a reference or ``${seed}``, or
naming anything but an existing local folder (a registry URI, a hub id), is left to the stage.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from interlingua.workflows.recipe_spec import REFERENCE, SEED, RecipeConfig, RecipeError


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


def _local_folder(value: Any) -> Path | None:
    """The existing local folder a literal config value names (a path or ``file://`` URL), else None."""
    if not isinstance(value, str) or REFERENCE.search(value) or SEED.search(value):
        return None
    folder = Path(value[len("file://"):] if value.startswith("file://") else value).expanduser()
    return folder if folder.is_dir() else None
