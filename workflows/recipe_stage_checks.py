"""Each stage's own workflow checks (:func:`~interlingua.workflows.registry.preflight`) made when the recipe loads: its
``preflight`` (its settings) when the recipe is checked (:func:`~interlingua.workflows.recipe_spec.validate_recipe`,
``--show-config`` and ``submit`` too), and, for a run on this machine, its ``environment_preflight`` and
``input_preflight`` before the run starts; so a mistake of a later stage (a model folder that is none, a language
without a model, a missing Apertium mode, a missing input file) is one line before MLflow starts or an earlier stage
runs, not after them. Each check is made once per stage and seed.

A stage whose config references another stage's output (``${stages.X.Y}``) is not checked here: its workflow's
checks see the whole config, which has no value before X has run (its run checks it, as a workflow run alone does).
A stage using ``${seed}`` is checked once per seed.
"""

from __future__ import annotations

from interlingua.workflows.recipe_spec import RecipeConfig, RecipeError, references, stage_values, uses_seed


def check_stages(recipe: RecipeConfig, order: list[str], done: frozenset[str] = frozenset(), *,
                 machine: bool = False) -> None:
    """:class:`RecipeError` (one line, naming the stage) for the first stage in ``order`` (those in ``done``
    excepted: a rerun skips them) that its workflow's checks refuse: its settings' (``preflight``), or, with
    ``machine``, those of what this machine has alone (the settings were checked with the recipe)."""
    from interlingua.core.config import validate
    from interlingua.core.errors import UserError
    from interlingua.workflows.registry import CHECK_HOOKS, load_workflow, preflight

    for name in order:
        stage = recipe.stages[name]
        if name in done or references(stage.config):
            continue
        workflow = load_workflow(stage.workflow)
        if all(getattr(workflow, hook, None) is None for hook in CHECK_HOOKS):
            continue
        for seed in (recipe.seeds if uses_seed(stage.config) else [None]):
            label = f"stage {name!r} ({stage.workflow}{'' if seed is None else f', seed {seed}'})"
            try:
                config = validate(workflow.CONFIG, stage_values(recipe, name, workflow.CONFIG, {}, seed), source=label)
                preflight(workflow, config, settings=not machine, machine=machine)
            except RecipeError:
                raise
            except UserError as err:
                refusal = RecipeError(f"{label}: {err}")
                refusal.exit_code = err.exit_code  # a service that does not answer stays one
                raise refusal from None
