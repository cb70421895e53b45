"""Recipe seeds: ``${seed}`` substitution, which stages run per seed, validation, and the results table."""

from __future__ import annotations

import pytest

from interlingua.workflows.recipe_report import results_table, stage_columns
from interlingua.workflows.recipe_spec import (RecipeConfig, RecipeError, key_stage, seeded_stages, state_key, substitute,
                                               validate_recipe)


def recipe(stages: dict, **extra) -> RecipeConfig:
    return RecipeConfig.model_validate({"name": "t", "stages": stages, **extra})


def seeded_chain() -> dict:
    return {
        "bitext": {"workflow": "apertium-bitext", "config": {"sentences_per_language": 10, "languages": ["es"]}},
        "tr": {"workflow": "train", "config": {"corpus": "${stages.bitext.corpus}",
                                               "train": {"max_steps": 3, "seed": "${seed}"}}},
        "mix": {"workflow": "interpolate", "config": {"second": "${stages.tr.model}", "alpha": 0.5}},
        "other": {"workflow": "apertium-bitext", "config": {"sentences_per_language": 5, "languages": ["ca"]}},
    }


def test_a_state_key_names_its_stage_and_seed():
    assert (state_key("tr", 2), state_key("tr", None)) == ("tr.seed2", "tr")
    assert key_stage(state_key("tr", 2)) == key_stage(state_key("tr", None)) == "tr"


def test_seed_substitution_keeps_int_type_and_interpolates_in_strings():
    assert substitute({"seed": "${seed}", "name": "m-${seed}"}, {}, seed=3) == {"seed": 3, "name": "m-3"}
    with pytest.raises(RecipeError, match="no seeds"):
        substitute("${seed}", {}, seed=None)


def test_seeded_stages_are_users_of_seed_and_their_dependants():
    assert seeded_stages(recipe(seeded_chain(), seeds=[1, 2])) == {"tr", "mix"}


def test_validation_accepts_a_seed_placeholder_in_an_int_field_and_needs_seeds():
    assert validate_recipe(recipe(seeded_chain(), seeds=[1, 2, 3]))[:2] == ["bitext", "tr"]
    with pytest.raises(RecipeError, match=r"stages \['tr'\] use \$\{seed\} but the recipe has no seeds"):
        validate_recipe(recipe(seeded_chain()))
    with pytest.raises(RecipeError, match="repeat a seed"):
        validate_recipe(recipe(seeded_chain(), seeds=[1, 1]))


def test_interpolate_stage_config_is_checked():
    stages = seeded_chain()
    stages["mix"]["config"]["alpha"] = 2.0
    with pytest.raises(RecipeError, match=r"stage 'mix' \(interpolate\): alpha"):
        validate_recipe(recipe(stages, seeds=[1]))


def test_results_table_means_and_stds_over_seeds_with_the_first_stages_base():
    rows = lambda base, tuned: [{"task": "bible", "language": "en-es", "metric": "acc", "base": base, "tuned": tuned}]
    columns = stage_columns({"tr": [rows(96.0, 98.0), rows(96.0, 99.0), rows(96.0, 97.0)],
                             "mix": [rows(98.0, 97.5), rows(99.0, 98.5), rows(97.0, 97.0)]})
    columns["use"] = {("bible", "en-es", "acc"): [98.2]}
    table, document = results_table(columns)
    assert document == [{"task": "bible", "language": "en-es", "metric": "acc",
                         "base": {"mean": 96.0, "std": 0.0, "n": 3},
                         "tr": {"mean": 98.0, "std": 0.82, "n": 3},
                         "mix": {"mean": 97.67, "std": 0.62, "n": 3},
                         "use": {"mean": 98.2, "std": 0.0, "n": 1}}]
    assert table.splitlines()[0] == "| task | language | metric | base | tr | mix | use |"
    assert table.splitlines()[2] == "| bible | en-es | acc | 96.00 ± 0.00 | 98.00 ± 0.82 | 97.67 ± 0.62 | 98.20 |"
