"""A value a config refuses is told with what to give instead, and with where it came from (the file or --set)."""

from __future__ import annotations

import pytest

from interlingua.core.config import ConfigError, load_config
from interlingua.workflows.combine import CombineConfig
from interlingua.workflows.interpolate import InterpolateConfig
from interlingua.workflows.meaning_head import MeaningHeadConfig
from interlingua.workflows.recipe_spec import RecipeConfig


def _message(cls, path=None, overrides=()) -> str:
    with pytest.raises(ConfigError) as info:
        load_config(cls, path, list(overrides))
    return str(info.value)


def test_a_set_mistake_beside_a_file_names_set_and_a_scalar_for_a_list_gets_the_list_spelling(tmp_path):
    """``run recipe -c tiny.yaml --set force=tr`` blamed tiny.yaml; a list field given one value had no hint."""
    tiny = tmp_path / "tiny.yaml"
    tiny.write_text("name: tiny\nstages: {tr: {workflow: train}}\n", encoding="utf-8")
    assert _message(RecipeConfig, tiny, ["force=tr"]) == (
        "invalid config (--set): force = 'tr': Input should be a valid list (hint: give a list: --set force=[tr])")
    tiny.write_text("name: tiny\nforce: tr\nstages: {tr: {workflow: train}}\n", encoding="utf-8")
    assert _message(RecipeConfig, tiny, ["stop_after=tr"]) == (
        f"invalid config ({tiny}): force = 'tr': Input should be a valid list (hint: give a list: [tr])")


def test_a_value_not_among_a_literals_gets_the_closest_one():
    assert _message(MeaningHeadConfig, None, ["train.distance=cosin"]).endswith(
        "train.distance = 'cosin': Input should be 'squared_l2', 'mse' or 'cosine' (did you mean 'cosine'?)")
    # combine's mode has the message a MODE(A|B) spec's mistake gets (tests/models/test_combination_mode_message.py)
    assert _message(CombineConfig, None, ["first=a", "second=b", "mode=normconcat"]).endswith(
        "mode = 'normconcat': combination mode 'normconcat' is not one of concat, sum, norm_concat, norm_sum "
        "(did you mean 'norm_concat'?)")


def test_a_missing_required_key_says_what_it_expects():
    description = InterpolateConfig.model_fields["second"].description
    assert _message(InterpolateConfig) == (
        f"invalid config (--set): second = missing: Field required (expected: {description})")


def test_a_recipe_stages_literal_typo_gets_the_closest_value_too():
    from interlingua.workflows.recipe_spec import RecipeError, validate_recipe

    recipe = RecipeConfig.model_validate({"name": "t", "stages": {
        "heads": {"workflow": "meaning-head", "config": {"train": {"distance": "cosin"}}}}})
    with pytest.raises(RecipeError, match=r"^stage 'heads' \(meaning-head\): train\.distance: Input should be .* "
                                          r"\(did you mean 'cosine'\?\)$"):
        validate_recipe(recipe)
