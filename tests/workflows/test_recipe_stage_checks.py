"""Each stage's own workflow checks run when the recipe loads: a later stage's mistake is one line before MLflow starts
or an earlier stage runs (it was found when that stage's turn came, after the parent run had opened)."""

from __future__ import annotations

import pytest

from interlingua.workflows.recipe_spec import RecipeConfig, RecipeError

FIRST = {"workflow": "bible-bitext"}


def _recipe(tmp_path, second: dict) -> RecipeConfig:
    return RecipeConfig.model_validate({"name": "t", "state_dir": str(tmp_path / "state"),
                                        "stages": {"bible": FIRST, "amr": second}})


@pytest.fixture
def first_stage(tmp_path, monkeypatch):
    """The first stage's runs (its workflow replaced: nothing runs)."""
    import mlflow

    from interlingua.workflows import bible_bitext

    monkeypatch.delenv("MLFLOW_TRACKING_URI", raising=False)
    monkeypatch.delenv("RAY_ADDRESS", raising=False)
    monkeypatch.chdir(tmp_path)
    ran = []
    monkeypatch.setattr(bible_bitext, "run", lambda config, *, address=None: ran.append(config) or {})
    yield ran
    mlflow.set_tracking_uri(None)
    mlflow.set_registry_uri(None)


def test_a_later_stage_naming_a_missing_model_folder_fails_before_mlflow_and_the_first_stage(tmp_path, first_stage):
    from interlingua.workflows import recipe

    missing = tmp_path / "no-such-model"
    second = {"workflow": "amr-corpus", "config": {"translate": {"es": {"backend": "marian", "model": str(missing)}}}}
    with pytest.raises(RecipeError) as refused:
        recipe.run(_recipe(tmp_path, second))
    message = str(refused.value)
    assert message.startswith(f"stage 'amr' (amr-corpus): translate.es: marian model folder {missing} does not exist")
    assert "set translate.es.model" in message and "\n" not in message
    assert first_stage == []
    assert not (tmp_path / "state" / "mlflow.db").exists() and not (tmp_path / "mlruns").exists()


def test_a_later_stage_s_missing_input_file_fails_before_mlflow_and_the_first_stage(tmp_path, first_stage):
    """amr-corpus checked its NLI file only in its run (``require_input_files``), after the parent run had opened and
    the first stage had run; a URL is left to the run (no network when the recipe loads)."""
    from interlingua.workflows import recipe

    missing = tmp_path / "no-such-nli.jsonl"
    with pytest.raises(RecipeError) as refused:
        recipe.run(_recipe(tmp_path, {"workflow": "amr-corpus", "config": {"source": str(missing)}}))
    assert str(refused.value) == f"stage 'amr' (amr-corpus): input {missing} not found (hint: check the path or URL)"
    assert first_stage == []
    assert not (tmp_path / "state" / "mlflow.db").exists() and not (tmp_path / "mlruns").exists()


def test_a_stage_settings_mistake_is_refused_by_the_recipes_checks_show_config_and_submit_run():
    """``--show-config`` and ``submit --dry-run`` run the recipe's checks (its ``preflight``)."""
    from interlingua.workflows import recipe

    config = RecipeConfig.model_validate({"name": "t", "seeds": [1], "stages": {"bible": FIRST, "amr": {
        "workflow": "amr-corpus", "config": {"languages": ["xx"], "corpus_name": "amr-${seed}"}}}})
    with pytest.raises(RecipeError, match=r"^stage 'amr' \(amr-corpus, seed 1\): translate\.xx: 'xx' is not an ISO "
                                          r"639-1 language code: .*set translate\.xx\.model$"):
        recipe.preflight(config)


def test_a_stage_reading_an_earlier_stages_output_is_left_to_its_run(tmp_path):
    """Its workflow's checks see the whole config, which has no value before the stage it reads has run (the same
    mistake in a stage without a reference is refused)."""
    from interlingua.workflows import recipe

    second = {"workflow": "amr-corpus", "config": {"languages": ["xx"], "corpus_name": "${stages.bible.corpus}-amr"}}
    recipe.preflight(_recipe(tmp_path, second))
    second["config"]["corpus_name"] = "amr"
    with pytest.raises(RecipeError, match="^stage 'amr' \\(amr-corpus\\): translate.xx: "):
        recipe.preflight(_recipe(tmp_path, second))


def _record_done(tmp_path, recipe_config: RecipeConfig, stage: str, digest: str) -> None:
    """The recipe's state with ``stage`` done under ``digest`` (its outputs as amr-corpus gives them)."""
    from interlingua.workflows.recipe import save_state

    save_state(tmp_path / "state" / "recipes" / recipe_config.name / "state.json",
               {stage: {"hash": digest, "status": "done", "run_id": "0123456789abcdef0123456789abcdef",
                        "workflow": "amr-corpus", "outputs": {"corpus": "amr-corpus", "version": "v-0123456789ab"}}})


def _hash_now(recipe_config: RecipeConfig, stage: str) -> str:
    """The hash :func:`~interlingua.workflows.recipe.plan` gives the stage now (its input file fingerprinted)."""
    from interlingua.core.config import validate
    from interlingua.workflows import amr_corpus, recipe
    from interlingua.workflows.recipe_spec import stage_values

    resolved = stage_values(recipe_config, stage, amr_corpus.CONFIG, {})
    inputs = amr_corpus.input_urls(validate(amr_corpus.CONFIG, resolved))
    return recipe.plan(recipe_config, {}, stage, resolved, stage, inputs)[1]


def _refused_for_its_missing_input(tmp_path, recipe_config: RecipeConfig, missing, first_stage) -> None:
    from interlingua.workflows import recipe

    with pytest.raises(RecipeError) as refused:
        recipe.run(recipe_config)
    assert str(refused.value) == f"stage 'amr' (amr-corpus): input {missing} not found (hint: check the path or URL)"
    assert first_stage == []
    assert not (tmp_path / "state" / "mlflow.db").exists() and not (tmp_path / "mlruns").exists()


def test_a_done_stage_in_force_whose_input_is_missing_is_refused_when_the_recipe_loads(tmp_path, first_stage):
    """A stage in ``force`` runs again, so its checks are made even though the state records it done with the hash
    it has now; without ``force`` the rerun skips it, and the checks leave it out."""
    from interlingua.workflows.recipe import stages_a_rerun_skips

    missing = tmp_path / "gone-nli.jsonl"
    stages = {"bible": FIRST, "amr": {"workflow": "amr-corpus", "config": {"source": str(missing)}}}
    unforced = RecipeConfig.model_validate({"name": "t", "state_dir": str(tmp_path / "state"), "stages": stages})
    _record_done(tmp_path, unforced, "amr", _hash_now(unforced, "amr"))
    state = {"amr": {"hash": _hash_now(unforced, "amr"), "status": "done"}}
    assert stages_a_rerun_skips(unforced, ["bible", "amr"], state) == {"amr"}
    forced = unforced.model_copy(update={"force": ["amr"]})
    assert stages_a_rerun_skips(forced, ["bible", "amr"], state) == frozenset()
    _refused_for_its_missing_input(tmp_path, forced, missing, first_stage)


def test_a_done_stage_whose_config_changed_and_whose_input_is_missing_is_refused_when_the_recipe_loads(
        tmp_path, first_stage):
    """The state records the stage done with another config (another ``max_triples``): it runs again, so it is
    checked."""
    missing = tmp_path / "gone-nli.jsonl"
    before = {"bible": FIRST, "amr": {"workflow": "amr-corpus", "config": {"source": str(missing), "max_triples": 5}}}
    earlier = RecipeConfig.model_validate({"name": "t", "state_dir": str(tmp_path / "state"), "stages": before})
    _record_done(tmp_path, earlier, "amr", _hash_now(earlier, "amr"))
    now = _recipe(tmp_path, {"workflow": "amr-corpus", "config": {"source": str(missing), "max_triples": 6}})
    _refused_for_its_missing_input(tmp_path, now, missing, first_stage)
