"""Options of an objective that is not the one training were validated and then dropped: ``--set
train.options.simcse_unsup.temperature=0.1`` under the default objective ran at nothing the user asked. They are
refused, naming the key, the chosen objective and the fix; the workflow's own defaults for an objective the user
replaces are not the user's and never trip it."""

from __future__ import annotations

import pytest

from interlingua.core.config import ConfigError, load_config, validate
from interlingua.trainers.engine.config import TrainConfig
from interlingua.workflows.train import TrainWorkflowConfig

REFUSED = (r"^invalid config \(--set\): train: options\.simcse_unsup\.temperature: an option of objective "
           r"'simcse_unsup', but the objective is 'translation_ranking', so it would be ignored; set this section's "
           r"objective to simcse_unsup too, or drop the key$")


def test_a_set_option_of_an_objective_not_chosen_is_refused():
    with pytest.raises(ConfigError, match=REFUSED):
        load_config(TrainWorkflowConfig, None, ["corpus=c", "train.options.simcse_unsup.temperature=0.1"])
    chosen = load_config(TrainWorkflowConfig, None, ["corpus=c", "train.objective=simcse_unsup",
                                                     "train.options.simcse_unsup.temperature=0.1"])
    assert chosen.train.options == {"simcse_unsup": {"temperature": 0.1}}
    empty = load_config(TrainWorkflowConfig, None, ["corpus=c", "train.options.simcse_unsup={}"])  # nothing given
    assert list(empty.train.options) == ["translation_ranking"]


def test_a_file_or_python_giving_an_objective_not_chosen_is_refused(tmp_path):
    path = tmp_path / "t.yaml"
    path.write_text("corpus: c\ntrain: {objective: ease, options: {translation_ranking: {margin: 0.2}}}\n")
    with pytest.raises(ConfigError, match=r"options\.translation_ranking\.margin: an option of objective "
                                          r"'translation_ranking', but the objective is 'ease'"):
        load_config(TrainWorkflowConfig, path)
    with pytest.raises(ValueError, match=r"options\.simcse_unsup\.temperature: .* so it would be ignored"):
        TrainConfig(options={"simcse_unsup": {"temperature": 0.1}})


def test_the_workflows_defaults_for_a_replaced_objective_do_not_trip_it():
    """The train workflow's default section holds translation_ranking's options; choosing another objective (a
    --set, a recipe stage) lays the user's section over it, and those defaults are dropped, not refused."""
    config = load_config(TrainWorkflowConfig, None, ["corpus=c", "train.objective=simcse_unsup"])
    assert config.train.options == {"simcse_unsup": {"temperature": 0.05}}
    stage = validate(TrainWorkflowConfig, {"corpus": "c", "train": {"objective": "ease", "ease_lambda": 0.5}})
    assert list(stage.train.options) == ["ease"] and stage.train.ease_lambda == 0.5
    assigned = TrainConfig()
    assigned.objective = "simcse_unsup"  # the options held were the replaced objective's
    assert assigned.options == {"simcse_unsup": {"temperature": 0.05}}


def test_a_recipe_stage_giving_an_objective_not_chosen_is_refused():
    from interlingua.workflows.recipe_spec import RecipeConfig, RecipeError, validate_recipe

    stages = {"tr": {"workflow": "train", "config": {"corpus": "c",
                                                     "train": {"options": {"ease": {"ease_lambda": 0.5}}}}}}
    with pytest.raises(RecipeError, match=r"stage 'tr' \(train\): train: .*options\.ease\.ease_lambda: an option of "
                                          r"objective 'ease', but the objective is 'translation_ranking'"):
        validate_recipe(RecipeConfig(name="r", stages=stages))


def test_a_files_objective_and_its_options_replaced_by_set_are_dropped_together(tmp_path):
    """A file tuned for simcse_unsup (its objective and options) with ``--set train.objective=translation_ranking``
    over it worked before 26b2c4d and was then refused, the message naming the file: the options went with the
    file's choice, which --set replaced, as the workflow's default options of a replaced objective do. Options the
    file gives for an objective it did not choose are still refused."""
    path = tmp_path / "obj.yaml"
    path.write_text("corpus: c\ntrain: {objective: simcse_unsup, options: {simcse_unsup: {temperature: 0.07}}}\n")
    replaced = load_config(TrainWorkflowConfig, path, ["train.objective=translation_ranking"])
    assert replaced.train.objective == "translation_ranking" and list(replaced.train.options) == ["translation_ranking"]
    kept = load_config(TrainWorkflowConfig, path)
    assert kept.train.options == {"simcse_unsup": {"temperature": 0.07}}
    other = tmp_path / "other.yaml"
    other.write_text("corpus: c\ntrain: {objective: simcse_unsup, options: {ease: {ease_lambda: 0.5}}}\n")
    with pytest.raises(ConfigError, match=r"options\.ease\.ease_lambda: an option of objective 'ease'"):
        load_config(TrainWorkflowConfig, other, ["train.objective=translation_ranking"])
