"""Recipe mistakes visible in the file, refused when it loads (validate_recipe: ``--show-config`` too), before any
stage runs: a mistyped stage workflow, a reference inside a py: spec, a mistyped ``compare`` encoder."""

from __future__ import annotations

import pytest

from interlingua.workflows.recipe_spec import RecipeConfig, RecipeError, validate_recipe


def recipe(stages: dict, **extra) -> RecipeConfig:
    return RecipeConfig.model_validate({"name": "t", "stages": stages, **extra})


def test_a_mistyped_stage_workflow_gets_the_closest_one():
    with pytest.raises(RecipeError, match=r"^stage 'bible': unknown workflow 'bibel-bitext' \(did you mean "
                                          r"'bible-bitext'\? known: absent, amr-corpus, "):
        validate_recipe(recipe({"bible": {"workflow": "bibel-bitext"}}))
