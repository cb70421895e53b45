"""Recipes without running anything: parsing, references, validation errors, order, hashes and skip/resume."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from interlingua.core.config import ConfigError, load_config
from interlingua.workflows.recipe import load_state, plan, save_state
from interlingua.workflows.recipe_spec import (RecipeConfig, RecipeError, execution_order, references, stage_hash,
                                               stage_outputs, stage_payload, substitute, validate_recipe)

REPO = Path(__file__).resolve().parents[2]


def recipe(stages: dict, **extra) -> RecipeConfig:
    return RecipeConfig.model_validate({"name": "t", "stages": stages, **extra})


def chain() -> dict:
    return {
        "bitext": {"workflow": "apertium-bitext", "config": {"sentences_per_language": 10, "languages": ["es"]}},
        "tr": {"workflow": "train", "config": {"corpus": "${stages.bitext.corpus}", "version": "${stages.bitext.version}",
                                               "train": {"max_steps": 3}}},
        "both": {"workflow": "combine", "config": {"first": "${stages.tr.model}", "second": "${stages.ease.model}"}},
        "ease": {"workflow": "train", "config": {"model": "${stages.tr.model}", "corpus": "ease",
                                                 "train": {"objective": "ease", "ease_lambda": 0.5}}},
    }


def test_references_and_substitution_keep_types_and_interpolate():
    value = {"a": "${stages.x.model}", "b": ["pre-${stages.y.version}-post"], "c": 3}
    assert references(value) == [("x", "model"), ("y", "version")]
    outputs = {"x": {"model": "models:/m/2"}, "y": {"version": "v-1"}, "z": {"rows": 7}}
    assert substitute(value, outputs) == {"a": "models:/m/2", "b": ["pre-v-1-post"], "c": 3}
    assert substitute("${stages.z.rows}", outputs) == 7  # a whole-value reference keeps the output's type
    with pytest.raises(RecipeError, match="stage 'x' has no output 'corpus'"):
        substitute("${stages.x.corpus}", outputs)


def test_order_follows_references_then_file_order():
    assert execution_order(recipe(chain())) == ["bitext", "tr", "ease", "both"]
    assert validate_recipe(recipe(chain())) == ["bitext", "tr", "ease", "both"]


def test_unknown_stage_reference_is_one_line_error():
    stages = chain()
    stages["ease"]["config"]["model"] = "${stages.trr.model}"
    with pytest.raises(RecipeError, match=r"stage 'ease' refers to unknown stage 'trr' \(stages: bitext, tr, both, ease\)"):
        validate_recipe(recipe(stages))


def test_cycle_is_named():
    stages = chain()
    stages["tr"]["config"]["model"] = "${stages.ease.model}"
    with pytest.raises(RecipeError, match=r"has a cycle: (tr -> ease -> tr|ease -> tr -> ease)"):
        validate_recipe(recipe(stages))
    with pytest.raises(RecipeError, match="refers to its own output"):
        validate_recipe(recipe({"a": {"workflow": "combine", "config": {"first": "${stages.a.model}", "second": "x"}}}))


def test_unknown_workflow_and_bad_keys():
    with pytest.raises(RecipeError, match=r"stage 'x': unknown workflow 'trian' \(did you mean 'train'\? known: .*train"):
        validate_recipe(recipe({"x": {"workflow": "trian"}}))
    stages = chain()
    stages["tr"]["config"]["train"]["max_stpes"] = 3
    with pytest.raises(RecipeError, match=r"stage 'tr' \(train\): unknown config key 'train.max_stpes'"):
        validate_recipe(recipe(stages))
    stages = chain()
    stages["ease"]["config"]["train"]["ease_lambda"] = -1
    with pytest.raises(RecipeError, match=r"stage 'ease' \(train\): train: .*ease_lambda: Input should be greater"):
        validate_recipe(recipe(stages))
    stages = chain()
    del stages["ease"]["config"]["corpus"]
    with pytest.raises(RecipeError, match=r"stage 'ease' \(train\): corpus: Field required"):
        validate_recipe(recipe(stages))
    with pytest.raises(RecipeError, match="cannot run the recipe workflow"):
        validate_recipe(recipe({"x": {"workflow": "recipe"}}))
    with pytest.raises(ConfigError, match="stages.x.wokflow: unknown key"):
        load_config(RecipeConfig, None, ["name=t", "stages.x.wokflow=train"])


def test_a_reference_inside_an_objective_option_is_taken_on_trust():
    """``train: {temperature: "${stages.X.Y}"}``: the section fails as a whole (a check across its keys), with the
    section as the error's key, so the reference inside it used to be refused; a section without one still is."""
    stages = chain()
    stages["ease"]["config"]["train"]["temperature"] = "${stages.tr.rows}"
    assert validate_recipe(recipe(stages))
    stages = chain()
    stages["ease"]["config"]["train"]["ease_lambda"] = -1
    with pytest.raises(RecipeError, match="ease_lambda"):
        validate_recipe(recipe(stages))


def test_hash_changes_with_config_and_upstream_outputs_only():
    base = {"model": "models:/m/1", "train": {"max_steps": 3}}
    assert stage_hash("train", base) == stage_hash("train", {"train": {"max_steps": 3}, "model": "models:/m/1"})
    assert stage_hash("train", base) != stage_hash("train", {**base, "model": "models:/m/2"})
    assert stage_hash("train", base) != stage_hash("combine", base)


def test_plan_skips_done_resumes_started_reruns_changed(tmp_path):
    r = recipe(chain())
    resolved = {"corpus": "c", "version": "v-1"}
    digest = stage_hash("train", resolved)
    state_file = tmp_path / "state.json"
    save_state(state_file, {"tr": {"hash": digest, "status": "done", "run_id": "r1", "outputs": {"model": "m"}},
                            "ease": {"hash": digest, "status": "running", "run_id": "r2"}})
    state = load_state(state_file)
    assert plan(r, state, "tr", resolved) == ("skip", digest)
    assert plan(r, state, "ease", resolved) == ("resume", digest)
    assert plan(r, state, "tr", {**resolved, "version": "v-2"})[0] == "run"
    assert plan(r, state, "both", resolved)[0] == "run"
    forced = recipe(chain(), force=["tr"])
    assert plan(forced, state, "tr", resolved)[0] == "run"


def test_a_seeded_stage_adopts_its_unseeded_run_only_with_the_same_hash():
    """A recipe that gains ``seeds:`` keeps seed N's run when the stage ran before with the same config."""
    r = recipe(chain())
    resolved = {"corpus": "c", "version": "v-1", "train": {"seed": 1}}
    digest = stage_hash("train", resolved)
    state = {"tr": {"hash": digest, "status": "done", "run_id": "r1", "outputs": {"model": "m"}}}
    assert plan(r, state, "tr", resolved, "tr.seed1") == ("skip", digest)
    assert state["tr.seed1"] == state["tr"] and state["tr.seed1"] is not state["tr"]
    other = {**resolved, "train": {"seed": 2}}
    assert plan(r, state, "tr", other, "tr.seed2")[0] == "run" and "tr.seed2" not in state
    state["tr.seed3"] = {"hash": "older", "status": "done", "run_id": "r3"}
    assert plan(r, state, "tr", resolved, "tr.seed3")[0] == "run"  # its own entry wins over the unseeded one


def test_outputs_split_corpus_and_name_model():
    assert stage_outputs({"corpus": "apertium-bitext@v-0123456789ab"})["version"] == "v-0123456789ab"
    out = stage_outputs({"corpus": "ease/v-0123456789ab", "model_uri": "models:/x@a"})
    assert (out["corpus"], out["version"], out["model"]) == ("ease", "v-0123456789ab", "models:/x@a")


@pytest.mark.parametrize("path", sorted((REPO / "recipes").glob("*.yaml")), ids=lambda p: p.name)
def test_shipped_recipes_validate(path, tmp_path, monkeypatch):
    """Every load-time check ``recipe.run`` makes, on an empty state (each corpus a stage reads is built before it)."""
    from interlingua.workflows.recipe_corpora import check_stored_corpora

    monkeypatch.setenv("INTERLINGUA_HOME", str(tmp_path))
    config = load_config(RecipeConfig, path)
    check_stored_corpora(config, validate_recipe(config))


def test_cli_reports_a_cycle_in_one_line_before_anything_runs(tmp_path):
    bad = tmp_path / "bad.yaml"
    bad.write_text("name: bad\nstages:\n  a: {workflow: combine, config: {first: '${stages.b.model}', second: x}}\n"
                   "  b: {workflow: combine, config: {first: '${stages.a.model}', second: x}}\n")
    proc = subprocess.run([sys.executable, "-m", "interlingua.workflows.cli", "run", "recipe", "-c", str(bad)],
                          capture_output=True, text=True, timeout=120, env={"INTERLINGUA_HOME": str(tmp_path / "s"),
                                                                             "PATH": "/usr/bin:/bin"})
    assert proc.returncode == 2
    assert proc.stderr.strip().splitlines() == ["interlingua run: error: recipe 'bad' has a cycle: a -> b -> a"]
    assert not (tmp_path / "s" / "mlflow.db").exists()


def test_a_local_model_folder_is_hashed_by_content(tmp_path):
    folder = tmp_path / "my-encoder"
    folder.mkdir()
    (folder / "config.json").write_text('{"model_type": "bert"}')
    (folder / "model.safetensors").write_bytes(b"v1")
    config = {"model": str(folder), "train": {"max_steps": 3}, "note": str(tmp_path)}  # tmp_path: no model there
    first = stage_hash("train", config)
    assert stage_hash("train", config) == first
    (folder / "model.safetensors").write_bytes(b"v2")  # retrained in place: the stage runs again
    assert stage_hash("train", config) != first
    assert stage_hash("train", {**config, "model": folder.as_uri()}) != first
    # a config naming no model folder hashes exactly as before, so existing recipe states keep their stages
    plain = {"model": "models:/m/1", "train": {"max_steps": 3}, "note": str(tmp_path)}
    assert stage_payload("train", plain) == {"workflow": "train", "config": plain}
    assert stage_hash("train", {"model": "models:/m/1", "train": {"max_steps": 3}}) == "135f40731a132faa"


def test_a_mistyped_stage_key_in_a_recipe_file_gets_the_did_you_mean_of_set(tmp_path):
    """A recipe stage's unknown key was told only 'see: interlingua run train --list-keys'; it now gets the hint
    --set and config files give (core.config.unknown_key_hint), one line."""
    path = tmp_path / "r.yaml"
    path.write_text("name: r\nstages:\n  bible:\n    workflow: bible-bitext\n  tr:\n    workflow: train\n"
                    "    config: {corpus: '${stages.bible.corpus}', train: {batch_sise: 8}}\n")
    with pytest.raises(RecipeError) as err:
        validate_recipe(load_config(RecipeConfig, path))
    assert str(err.value) == ("stage 'tr' (train): unknown config key 'train.batch_sise'; "
                              "did you mean train.batch_size?")
    stages = chain()
    stages["tr"]["config"]["nosuchkey"] = 1  # nothing close: where to list the stage workflow's keys
    with pytest.raises(RecipeError, match=r"unknown config key 'nosuchkey'; see interlingua run train --list-keys$"):
        validate_recipe(recipe(stages))
