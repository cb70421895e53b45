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


def test_a_reference_inside_a_py_spec_is_refused_when_the_recipe_loads():
    """It was refused only when its stage ran, after the stages before it."""
    stages = {"bible": {"workflow": "bible-bitext"},
              "tr": {"workflow": "train", "config": {"model": "py:${stages.bible.corpus}:f",
                                                     "corpus": "${stages.bible.corpus}"}}}
    with pytest.raises(RecipeError, match=r"^stage 'tr': 'py:\$\{stages\.bible\.corpus\}:f': \$\{stages\.bible\.corpus\} "
                                          r"would become part of the py: spec 'py:\$\{stages\.bible\.corpus\}:f'; a py: "
                                          r"factory runs code"):
        validate_recipe(recipe(stages))
    stages["tr"]["config"]["model"] = "concat(py:pkg.mod:f|${stages.bible.corpus})"  # beside a spec: not part of it
    assert validate_recipe(recipe(stages)) == ["bible", "tr"]


def test_a_mistyped_compare_encoder_is_refused_with_the_closest_short_name(tmp_path):
    """``compare: [usee]`` passed --show-config and failed after every stage ran, asking the hub for 'usee'."""
    stages = {"bible": {"workflow": "bible-bitext"}}
    with pytest.raises(RecipeError, match=r"^compare: 'usee' is no encoder \(did you mean 'use'\? short names: use, "
                                          r"minilm; else a folder, st:FOLDER, models:/NAME/VERSION or a hub id "
                                          r"ORG/NAME\)$"):
        validate_recipe(recipe(stages, compare=["minilm", "usee"]))
    with pytest.raises(RecipeError, match=r"^compare: 'minlm' is no encoder \(did you mean 'minilm'\?"):
        validate_recipe(recipe(stages, compare=["concat(use|minlm)"]))
    folder = tmp_path / "enc"
    folder.mkdir()
    fine = ["use", "concat(use|minilm)", "models:/enc/1", "intfloat/multilingual-e5-small", str(folder), "st:/x",
            "bert-base-multilingual-cased", "xlm-roberta-base", "concat(use|gpt2)"]  # hub ids without an org
    assert validate_recipe(recipe(stages, compare=fine)) == ["bible"]


def test_show_config_refuses_a_literal_corpus_nothing_builds_as_a_run_does(tmp_path):
    """``--show-config`` returned 0 for a recipe reading a corpus no stage before it builds and the store lacks; only
    a run refused it. A stage the recipe's state records done (and not forced) is left out, as a rerun skips it."""
    import json
    import subprocess
    import sys

    bad = tmp_path / "bad.yaml"
    bad.write_text("name: bad\nstages:\n  tr: {workflow: train, config: {corpus: bible-en-s}}\n")
    state = tmp_path / "s"

    def show_config(*overrides: str) -> subprocess.CompletedProcess:
        return subprocess.run([sys.executable, "-m", "interlingua.workflows.cli", "run", "recipe", "-c", str(bad),
                               "--show-config", *overrides], capture_output=True, text=True, timeout=120,
                              env={"INTERLINGUA_HOME": str(state), "PATH": "/usr/bin:/bin"})

    proc = show_config()
    assert proc.returncode == 2
    assert proc.stderr.strip().splitlines()[-1] == (
        f"interlingua run: error: stage 'tr' (train): corpus: no stage before it builds corpus 'bible-en-s' and the "
        f"corpus store {state / 'corpus'} does not hold it (see: interlingua corpus list --root {state / 'corpus'})")
    recorded = state / "recipes" / "bad" / "state.json"
    recorded.parent.mkdir(parents=True)
    recorded.write_text(json.dumps({"stages": {"tr": {"status": "done", "hash": "h", "outputs": {}}}}))
    assert show_config().returncode == 0
    assert show_config("--set", "force=[tr]").returncode == 2


def test_submit_leaves_this_machines_corpus_store_to_the_job(tmp_path, capsys):
    """The job of ``submit recipe`` reads the cluster's corpus store (its INTERLINGUA_HOME, or the share --state-dir
    names), not this machine's: a corpus only the cluster holds was refused by a submit checking the local store.
    The literal-corpus check this machine's store answers stays with --show-config and local runs."""
    from interlingua.workflows.cli import main

    recipe = tmp_path / "r.yaml"
    recipe.write_text("name: r\nstages:\n  tr: {workflow: train, config: {corpus: held-by-the-cluster}}\n")
    code = main(["submit", "recipe", "-c", str(recipe), "--dry-run", "--shared-path", str(tmp_path), "--tracking-uri", "http://mlflow.internal:5000",
                 "--set", f"state_dir={tmp_path / 's'}"])  # a share: the store the job would read
    out = capsys.readouterr()
    assert code == 0, out.err
    assert '"held-by-the-cluster"' in out.out
