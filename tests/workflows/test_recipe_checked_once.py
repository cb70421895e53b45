"""``interlingua run recipe`` checks the recipe once: the command's preflight and the run shared the work twice
(every stage's config validated, every reference checked); a recipe changed after its check is checked again."""

from __future__ import annotations

import pytest

from interlingua.workflows.recipe_spec import RecipeConfig, RecipeError


@pytest.fixture
def counted(monkeypatch):
    """The calls of ``validate_recipe`` the recipe workflow makes (the real checks still run)."""
    from interlingua.workflows import recipe

    calls = []
    real = recipe.validate_recipe
    monkeypatch.setattr(recipe, "validate_recipe", lambda config: calls.append(config.name) or real(config))
    return calls


def test_a_plain_run_validates_the_recipe_once(tmp_path, monkeypatch, counted):
    import mlflow

    from interlingua.workflows import bible_bitext
    from interlingua.workflows.cli import main

    monkeypatch.delenv("MLFLOW_TRACKING_URI", raising=False)
    monkeypatch.setenv("INTERLINGUA_HOME", str(tmp_path / "state"))
    monkeypatch.chdir(tmp_path)
    ran = []
    monkeypatch.setattr(bible_bitext, "run", lambda config, *, address=None: ran.append(config) or {})
    path = tmp_path / "once.yaml"
    path.write_text("name: once\nstages:\n  bible:\n    workflow: bible-bitext\n")
    try:
        assert main(["run", "recipe", "-c", str(path)]) == 0
    finally:
        mlflow.set_tracking_uri(None)
        mlflow.set_registry_uri(None)
    assert len(ran) == 1 and counted == ["once"]


def test_a_recipe_changed_after_its_check_is_checked_again(counted):
    from interlingua.workflows import recipe

    config = RecipeConfig.model_validate({"name": "r", "stages": {"bible": {"workflow": "bible-bitext"}}})
    recipe.preflight(config)
    recipe.preflight(config)
    assert counted == ["r"]
    config.stages = {**config.stages, "x": {"workflow": "nosuch"}}
    with pytest.raises(RecipeError, match="stage 'x': unknown workflow 'nosuch'"):
        recipe.run(config)
    assert counted == ["r", "r"]


def _bible(**stage_config) -> RecipeConfig:
    return RecipeConfig.model_validate({"name": "r", "stages": {"bible": {"workflow": "bible-bitext",
                                                                           "config": stage_config}}})


def test_a_checked_recipe_still_equals_its_twin(counted):
    """The check was remembered on the model (a private attribute): once one was checked, two identical recipes
    compared unequal."""
    from interlingua.workflows import recipe

    checked, twin = _bible(), _bible()
    recipe.preflight(checked)
    assert checked == twin and checked.model_dump() == twin.model_dump()
    recipe.preflight(twin)  # another object: checked on its own
    assert counted == ["r", "r"]


def test_a_stage_value_json_cannot_show_is_a_recipe_error_and_nan_is_not_none(counted):
    """The content was told by ``model_dump_json``: a stage config built in code holding a value JSON cannot show
    raised PydanticSerializationError (a traceback where the check answers with a RecipeError), and a value changed
    from None to NaN (both ``null``) after the check went unchecked."""
    from interlingua.workflows import recipe

    with pytest.raises(RecipeError, match="stage 'bible' \\(bible-bitext\\)"):
        recipe.preflight(_bible(name=object()))
    config = _bible(state_dir=None)
    recipe.preflight(config)
    config.stages["bible"].config["state_dir"] = float("nan")  # no text: refused when checked
    with pytest.raises(RecipeError, match="state_dir"):
        recipe.preflight(config)
    assert counted == ["r", "r", "r"]


def test_a_local_run_checks_each_stages_settings_once_per_seed(tmp_path, monkeypatch):
    """The settings' ``preflight`` ran when the recipe was checked and again with the checks of this machine before
    the run; the machine's checks still run, once per seed too."""
    import mlflow

    from interlingua.workflows import bible_bitext
    from interlingua.workflows.cli import main

    monkeypatch.delenv("MLFLOW_TRACKING_URI", raising=False)
    monkeypatch.delenv("RAY_ADDRESS", raising=False)
    monkeypatch.setenv("INTERLINGUA_HOME", str(tmp_path / "state"))
    monkeypatch.chdir(tmp_path)
    settings, machine = [], []
    real_input_preflight = bible_bitext.input_preflight
    monkeypatch.setattr(bible_bitext, "preflight", lambda config: settings.append(config.name), raising=False)
    monkeypatch.setattr(bible_bitext, "input_preflight",
                        lambda config: machine.append(config.name) or real_input_preflight(config))
    monkeypatch.setattr(bible_bitext, "run", lambda config, *, address=None: {})
    path = tmp_path / "seeded.yaml"
    path.write_text("name: seeded\nseeds: [1, 2]\nstages:\n  bible:\n    workflow: bible-bitext\n"
                    "    config: {name: 'bible-${seed}'}\n")
    try:
        assert main(["run", "recipe", "-c", str(path)]) == 0
    finally:
        mlflow.set_tracking_uri(None)
        mlflow.set_registry_uri(None)
    assert settings == ["bible-1", "bible-2"] and machine == ["bible-1", "bible-2"]
    assert main(["run", "recipe", "-c", str(path), "--show-config"]) == 0  # the settings alone, as before
    assert settings[2:] == ["bible-1", "bible-2"] and machine == ["bible-1", "bible-2"]
