"""A recipe's state may be shared: what it says a finished stage gave is checked before a later stage reads it, and a
``py:`` factory is taken only as the user wrote it in a stage's config, never from a stage's output."""

from __future__ import annotations

import json
import os
import sys

import pyarrow as pa
import pytest

from interlingua.operators.corpus.store import CorpusStore
from interlingua.workflows.recipe import load_state
from interlingua.workflows.recipe_outputs import MODEL_SHAPES, SHAPES, checked_entry
from interlingua.workflows.recipe_spec import RecipeConfig, RecipeError, stage_hash, substitute
from interlingua.workflows.registry import OUTPUTS

RUN = "0123456789abcdef0123456789abcdef"


@pytest.fixture
def factory(tmp_path, monkeypatch):
    """``py:il_probe_factory:make``: a factory that leaves a file behind when something imports and calls it."""
    folder = tmp_path / "pymodules"
    folder.mkdir()
    marker = tmp_path / "factory-ran"
    (folder / "il_probe_factory.py").write_text(
        f"def make():\n    open({str(marker)!r}, 'w').close()\n    return object()\n")
    monkeypatch.syspath_prepend(str(folder))
    sys.modules.pop("il_probe_factory", None)
    yield marker
    sys.modules.pop("il_probe_factory", None)  # the next test's probe marks its own folder


def test_a_forged_finished_stage_cannot_hand_a_py_factory_to_a_later_stage(tmp_path, monkeypatch, factory):
    """The audit's repro: ``tr`` (quickstart) recorded as done with ``model: py:...`` and the hash a run with that
    config has; ``hn`` (hard-negatives) reads ``${stages.tr.model}`` and resolves it as its frozen encoder."""
    import mlflow

    from interlingua.models.resolve import resolve_encoder
    from interlingua.workflows import hard_negatives, recipe

    state = tmp_path / "state"
    monkeypatch.delenv("MLFLOW_TRACKING_URI", raising=False)
    monkeypatch.setenv("INTERLINGUA_HOME", str(state))
    monkeypatch.chdir(tmp_path)
    writer = CorpusStore(str(state / "corpus")).open_version("leak", {"k": 1}, ["x"])
    writer.write_shard("s0", pa.table({"id": ["1"], "src": ["a"], "tgt": ["b"], "src_lang": ["en"], "tgt_lang": ["es"]}))
    writer.publish()
    reached = []

    def hard_negatives_run(config, *, address=None):  # what the workflow does with its model, without Ray
        reached.append(config.model)
        resolve_encoder(config.model)
        return {}

    monkeypatch.setattr(hard_negatives, "run", hard_negatives_run)
    config = RecipeConfig.model_validate({"name": "inj", "stages": {
        "tr": {"workflow": "quickstart"},
        "hn": {"workflow": "hard-negatives", "config": {"corpus": "leak", "model": "${stages.tr.model}"}}}})
    forged = state / "recipes" / "inj" / "state.json"
    forged.parent.mkdir(parents=True)
    forged.write_text(json.dumps({"stages": {"tr": {
        "hash": stage_hash("quickstart", {"experiment": config.experiment}), "status": "done", "run_id": RUN,
        "outputs": {"model": "py:il_probe_factory:make"}}}}))
    try:
        with pytest.raises(RecipeError) as refused:
            recipe.run(config)
    finally:
        mlflow.set_tracking_uri(None)
        mlflow.set_registry_uri(None)
    message = str(refused.value)
    assert f"recipe state {forged}: stages.tr.outputs.model: 'py:il_probe_factory:make' is not what quickstart " \
           "gives (a pinned registered model, models:/NAME/VERSION)" in message
    assert "delete the entry 'tr'" in message and "--set force=[tr]" in message and "\n" not in message
    assert reached == [] and not factory.exists()


@pytest.mark.parametrize(("workflow", "output", "value", "shape"), [
    ("train", "model", "py:os:getpid", "models:/NAME/VERSION"),
    ("train", "model", "concat(models:/a/1|py:os:getpid)", "models:/NAME/VERSION"),
    ("quickstart", "model_uri", "models:/x@y|py:os:getpid", "models:/NAME@ALIAS"),
    ("bible-bitext", "corpus", "../../home/victim", "a corpus name"),
    ("bible-bitext", "version", "latest", "v-<hex>"),
    ("corpus-mix", "sources", ["ok@v-01", "py:os:getpid"], "a list of corpora"),
    ("bible-bitext", "rows", "py:os:getpid", "numbers"),
    ("train", "rows", {"corpus": "py:os:getpid"}, "numbers"),
    ("combine", "model", "py:os:getpid", "an absolute path"),
    ("combine", "model", "relative/folder", "an absolute path"),
    ("meaning-head", "model", "py:os:getpid", "runs:/RUN_ID/encoder"),
    ("meaning-head", "model", "minilm", "runs:/RUN_ID/encoder"),  # a base encoder, as state files before 94dc671 hold
    ("meaning-head", "base_model", "py:os:getpid", "a py: spec only as the stage's own config gives it"),
    ("interpolate", "first", "norm_sum(use|py:os:getpid)", "encoder spec"),
    ("train", "objective", "two\nlines", "encoder spec"),
])
def test_a_stored_output_that_does_not_have_its_workflows_shape_is_refused(tmp_path, workflow, output, value, shape):
    entry = {"hash": "h", "status": "done", "run_id": RUN, "outputs": {output: value}}
    with pytest.raises(RecipeError, match=rf"^recipe state {tmp_path}/state.json: stages\.s\.outputs\.{output}: .*"
                                          rf"is not what {workflow} gives \(.*{shape}.*\) \(hint: delete the entry 's' "
                                          rf"from that file, or rerun with --set force=\[s\]\)$"):
        checked_entry(entry, workflow=workflow, key="s", state_file=tmp_path / "state.json", config={}, done=True)


def test_a_stored_entry_with_an_odd_run_id_or_outputs_or_key_is_refused(tmp_path):
    path = tmp_path / "state.json"
    check = dict(workflow="train", key="tr.seed2", state_file=path, config={})
    with pytest.raises(RecipeError, match=r"stages\.tr\.seed2\.run_id: 'other-experiment-run' is not an MLflow run id"
                                          r".*--set force=\[tr\]"):
        checked_entry({"run_id": "other-experiment-run", "status": "running"}, done=False, **check)
    with pytest.raises(RecipeError, match=r"stages\.tr\.seed2\.outputs: \['py:os:getpid'\] is not a mapping"):
        checked_entry({"run_id": RUN, "outputs": ["py:os:getpid"]}, done=True, **check)
    with pytest.raises(RecipeError, match=r"stages\.tr\.seed2\.outputs\.loader: train gives no output 'loader'"):
        checked_entry({"run_id": RUN, "outputs": {"loader": "py:os:getpid"}}, done=True, **check)
    path.write_text(json.dumps({"stages": {"tr": ["py:os:getpid"]}}))
    with pytest.raises(RecipeError, match=rf"recipe state {path}: stages\.tr: a list, not a mapping"):
        load_state(path)
    path.write_text(json.dumps(["py:os:getpid"]))
    with pytest.raises(RecipeError, match=rf"recipe state {path}: a list, not a mapping"):
        load_state(path)


def test_what_workflows_really_record_is_accepted(tmp_path):
    genuine = {
        "train": {"run_id": RUN, "model_uri": "models:/interlingua-encoder@champion", "model": "models:/interlingua-encoder/3",
                  "model_version": "3", "base_model": "/state/assets/e5", "corpus": "bible-en-es",
                  "version": "v-0123456789ab", "corpus_versions": {"bible-en-es": "v-0123456789ab"},
                  "languages": ["en", "es"], "objective": "translation_ranking",
                  "rows": {"corpus": 10, "excluded_pack": 0, "rows": 10}, "evaluation": [{"task": "sts", "value": 0.5}],
                  "word_retrieval": None, "encoder_dir": "/state/ray_results/x/encoder",
                  "train_metrics": {"loss": 0.1}, "seconds": {"train": 1.5}},
        "combine": {"run_id": RUN, "model": "/state/combine/r/encoder", "encoder_dir": "/state/combine/r/encoder",
                    "dim": 768, "corpus_versions": {}, "languages": [], "evaluation": [], "seconds": {"load": 0.1}},
        "meaning-head": {"run_id": RUN, "base_model": "py:mine:encoder", "model": "models:/interlingua-meaning-head/2",
                         "pairs": 100, "results": "/s/results.json", "epochs": {"meaning head": [3, 4]},
                         "model_uri": "models:/interlingua-meaning-head@mh"},
        "ease-corpus": {"corpus": "ease", "version": "v-0123456789ab", "entities": "ease-entities/v-ab12",
                        "entity_id_source": "wikidata", "funnel": {"sentences": 4}, "funnel_by_lang": {"en": {"a": 1}},
                        "dump_issues": [{"shard": "s0", "issue": "x"}]},
        "corpus-mix": {"corpus": "mix", "version": "v-01", "rows": 5, "sources": ["bible@v-0123456789ab"],
                       "languages": ["en"], "seconds": {"mix": 0.1}},
    }
    for workflow, outputs in genuine.items():
        entry = {"hash": "h", "status": "done", "run_id": RUN, "outputs": outputs}
        own = {"model": "py:mine:encoder"} if workflow == "meaning-head" else {}  # the user's own spec, echoed
        assert checked_entry(entry, workflow=workflow, key="s", state_file=tmp_path / "s.json", config=own,
                             done=True) is entry


def test_every_declared_output_has_a_shape():
    assert set().union(*OUTPUTS.values()) <= set(SHAPES) and set(MODEL_SHAPES) <= set(OUTPUTS)


@pytest.mark.parametrize(("value", "reference"), [
    ("${stages.a.model}", "${stages.a.model}"),
    ("concat(${stages.a.model}|use)", "${stages.a.model}"),
    ("${stages.a.nested}", "${stages.a.nested}"),
    ("py:${stages.a.corpus}:getpid", "${stages.a.corpus}"),  # a py: spec made of the user's text and an output
    ("concat(use|${stages.a.py}:getpid)", "${stages.a.py}"),
])
def test_a_reference_never_supplies_a_py_factory(value, reference, factory):
    outputs = {"a": {"model": "py:il_probe_factory:make", "corpus": "os", "py": "py:os",
                     "nested": {"specs": ["use", " py:il_probe_factory:make"]}}}
    with pytest.raises(RecipeError, match=rf"{reference.replace('$', '[$]')}.*py: factory runs code, so it is taken "
                                          r"only as written in a stage's config"):
        substitute({"model": value}, outputs)


def test_a_py_factory_the_user_wrote_still_combines_with_references():
    outputs = {"tr": {"model": "models:/enc/3", "corpus": "bible"}}
    assert substitute({"model": "norm_concat(py:mine:encoder|${stages.tr.model})", "corpus": "${stages.tr.corpus}-hn"},
                      outputs) == {"model": "norm_concat(py:mine:encoder|models:/enc/3)", "corpus": "bible-hn"}


def test_the_factory_probe_really_runs_when_resolved(factory):
    """The probe the tests above rely on: resolving its spec runs it (so 'not factory.exists()' means something)."""
    from interlingua.models.resolve import resolve_encoder

    with pytest.raises(ValueError, match="lacks 'name'"):
        resolve_encoder("py:il_probe_factory:make")
    assert factory.exists()


@pytest.fixture
def pin_after_an_outage(tmp_path, monkeypatch):
    """A recipe whose one stage (quickstart, its workflow replaced) gives ``models:/enc@champion``, a registry that
    does not answer the first pin; yields (the recipe, the workflow's runs, the pins asked)."""
    import mlflow

    from interlingua.core.errors import ServiceUnavailable
    from interlingua.models import load
    from interlingua.workflows import quickstart

    monkeypatch.delenv("MLFLOW_TRACKING_URI", raising=False)
    monkeypatch.setenv("INTERLINGUA_HOME", str(tmp_path / "state"))
    monkeypatch.chdir(tmp_path)
    ran, pins = [], []
    real_pin = load.pin_registry_uri

    def workflow(config, *, address=None):  # registers version 1 from the stage's run, as log_and_register_encoder
        run_id = os.environ["MLFLOW_RUN_ID"]
        ran.append(run_id)
        _register_from(run_id)
        return {"run_id": run_id, "model_uri": "models:/enc@champion", "summary": "/s/summary.json"}

    def pin(uri):
        pins.append(uri)
        if len(pins) == 1:
            raise ServiceUnavailable("the MLflow model registry did not answer")
        return real_pin(uri)

    monkeypatch.setattr(quickstart, "run", workflow)
    monkeypatch.setattr(load, "pin_registry_uri", pin)
    config = RecipeConfig.model_validate({"name": "pin", "stages": {"tr": {"workflow": "quickstart"}}})
    yield config, ran, pins
    mlflow.set_tracking_uri(None)
    mlflow.set_registry_uri(None)


def _register_from(run_id: str):
    """A new version of ``enc`` (the local sqlite registry) recorded as ``run_id``'s, ``champion`` moved to it."""
    from mlflow.tracking import MlflowClient

    client = MlflowClient()
    if not client.search_registered_models("name = 'enc'"):
        client.create_registered_model("enc")
    version = client.create_model_version("enc", f"runs:/{run_id}/model", run_id=run_id).version
    client.set_registered_model_alias("enc", "champion", version)
    return version


def _run_statuses() -> dict[str, list[str]]:
    """Run name -> the statuses of the runs of that name, in the MLflow store the recipe used (the local sqlite one)."""
    from mlflow.tracking import MlflowClient

    client, statuses = MlflowClient(), {}
    for experiment in client.search_experiments():
        for run in client.search_runs([experiment.experiment_id]):
            statuses.setdefault(run.info.run_name, []).append(run.info.status)
    return statuses


def _registry_reads(monkeypatch) -> list[str]:
    """The model versions read from the registry from now on: the method asked, for each read."""
    from mlflow.tracking import MlflowClient

    asked = []
    for method in ("get_model_version_by_alias", "get_model_version"):
        def read(self, *args, _real=getattr(MlflowClient, method), _method=method):
            asked.append(_method)
            return _real(self, *args)

        monkeypatch.setattr(MlflowClient, method, read)
    return asked


def test_a_rerun_after_a_failed_pin_pins_without_running_the_workflow_again(tmp_path, pin_after_an_outage,
                                                                            monkeypatch):
    """The rerun pins the alias and checks which run registered its version with one registry call (it looked the
    alias up, then read that version again for its run)."""
    from mlflow.tracking import MlflowClient

    from interlingua.core.errors import ServiceUnavailable
    from interlingua.workflows import recipe

    config, ran, pins = pin_after_an_outage
    with pytest.raises(ServiceUnavailable):
        recipe.run(config)
    path = tmp_path / "state" / "recipes" / "pin" / "state.json"
    entry = json.loads(path.read_text())["stages"]["tr"]
    assert entry["status"] == "running" and entry["finished"]["model"] == "models:/enc@champion"
    assert MlflowClient().get_run(entry["run_id"]).info.status == "FAILED"  # the pin deferred: the stage failed
    reads = _registry_reads(monkeypatch)
    summary = recipe.run(config)
    assert ran == [entry["run_id"]] and pins == ["models:/enc@champion"] and reads == ["get_model_version_by_alias"]
    assert summary["actions"] == {"tr": "pin"} and summary["outputs"] == {"tr": {"model": "models:/enc/1"}}
    entry = json.loads(path.read_text())["stages"]["tr"]
    assert entry["status"] == "done" and entry["outputs"]["model"] == "models:/enc/1" and "finished" not in entry
    assert MlflowClient().get_run(entry["run_id"]).info.status == "FINISHED"
    assert "RUNNING" not in [status for statuses in _run_statuses().values() for status in statuses]


def _moved_to_another_runs_version(tmp_path, config) -> tuple[str, str, str]:
    """The recipe's first run, its pin failed; then another run registers version 2 and moves ``champion`` to it (a
    shared registry). Returns (the state file's text, the stage's run, the other run)."""
    from mlflow.tracking import MlflowClient

    from interlingua.core.errors import ServiceUnavailable
    from interlingua.workflows import recipe

    with pytest.raises(ServiceUnavailable):
        recipe.run(config)
    before = (tmp_path / "state" / "recipes" / "pin" / "state.json").read_text()
    own = json.loads(before)["stages"]["tr"]["run_id"]
    other = MlflowClient().create_run(MlflowClient().get_run(own).info.experiment_id).info.run_id
    assert str(_register_from(other)) == "2"
    return before, own, other


def test_a_rerun_after_a_failed_pin_refuses_an_alias_moved_to_another_runs_version(tmp_path, pin_after_an_outage):
    """A shared registry: another run registered version 2 and moved ``champion`` to it between the failed pin and
    the rerun, so the alias no longer names the stage's model: one line with a hint, the state left as it was."""
    from interlingua.workflows import recipe

    config, ran, pins = pin_after_an_outage
    before, own, other = _moved_to_another_runs_version(tmp_path, config)
    with pytest.raises(RecipeError) as refused:
        recipe.run(config)
    assert str(refused.value) == (
        f"stage tr: models:/enc@champion now names version 2, registered by run {other}, not by the stage's run "
        f"{own} (the alias moved after the stage finished; hint: rerun with --set force=[tr] to run it again)")
    assert ran == [own] and (tmp_path / "state" / "recipes" / "pin" / "state.json").read_text() == before


def test_a_refused_repin_ends_the_stages_run_failed(tmp_path, pin_after_an_outage, capsys):
    """A stage's run left RUNNING after its workflow finished (its process killed before the pin) and a rerun whose
    pin is refused: the refusal came after the stage's part of the run, so the run stayed RUNNING (the recipe's run
    ended FAILED); its printed line points to the refusal's hint, not to a rerun that would be refused again."""
    from mlflow.tracking import MlflowClient

    from interlingua.workflows import recipe

    config, ran, pins = pin_after_an_outage
    _, own, _ = _moved_to_another_runs_version(tmp_path, config)
    MlflowClient().update_run(own, status="RUNNING")  # as a killed process leaves it
    capsys.readouterr()
    with pytest.raises(RecipeError, match=r"--set force=\[tr\]"):
        recipe.run(config)
    assert MlflowClient().get_run(own).info.status == "FAILED"
    assert sorted(_run_statuses()["pin/tr"]) == ["FAILED"]
    assert "[tr] failed\n" in capsys.readouterr().out


def test_a_forged_finished_entry_is_refused_before_it_is_pinned(tmp_path, pin_after_an_outage, factory):
    from interlingua.workflows import recipe

    config, ran, pins = pin_after_an_outage
    forged = tmp_path / "state" / "recipes" / "pin" / "state.json"
    forged.parent.mkdir(parents=True)
    forged.write_text(json.dumps({"stages": {"tr": {
        "hash": stage_hash("quickstart", {"experiment": config.experiment}), "status": "running", "run_id": RUN,
        "finished": {"model": "py:il_probe_factory:make"}}}}))
    with pytest.raises(RecipeError, match=rf"^recipe state {forged}: stages\.tr\.finished\.model: "
                                          r"'py:il_probe_factory:make' is not what quickstart gives \(a pinned "
                                          r"registered model, models:/NAME/VERSION, or models:/NAME@ALIAS before it "
                                          r"is pinned\) \(hint: delete the entry 'tr' .*--set force=\[tr\]\)$"):
        recipe.run(config)
    assert ran == [] and pins == [] and not factory.exists()
    forged.write_text(json.dumps({"stages": {"tr": {
        "hash": stage_hash("quickstart", {"experiment": config.experiment}), "status": "running", "run_id": RUN,
        "finished": ["models:/enc@champion"]}}}))
    with pytest.raises(RecipeError, match=r"stages\.tr\.finished: \['models:/enc@champion'\] is not a mapping"):
        recipe.run(config)


def test_a_finished_entrys_aliased_model_is_accepted_an_outputs_one_is_not(tmp_path):
    check = dict(workflow="train", key="tr", state_file=tmp_path / "state.json", config={})
    entry = {"run_id": RUN, "status": "running", "finished": {"model": "models:/enc@champion", "rows": 3}}
    assert checked_entry(entry, done=False, **check) is entry
    with pytest.raises(RecipeError, match=r"stages\.tr\.finished\.loader: train gives no output 'loader'"):
        checked_entry({**entry, "finished": {"loader": "x"}}, done=False, **check)
    with pytest.raises(RecipeError, match=r"stages\.tr\.outputs\.model: 'models:/enc@champion' is not what train"):
        checked_entry({"run_id": RUN, "outputs": {"model": "models:/enc@champion"}}, done=True, **check)
