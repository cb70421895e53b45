"""A recipe on a cluster hashes a stage's model folders on this machine: an amr-corpus stage naming a model folder only
the cluster may have is refused, a literal one before any stage runs or MLflow starts, one known only once the stage
runs (a reference's value, a hub-shaped ``org/name`` the cluster has a folder of) with the recipe's run ended FAILED."""

from __future__ import annotations

import json

import pytest

from interlingua.core.errors import UserError
from interlingua.workflows import amr_corpus, cluster_models
from interlingua.workflows.amr_corpus import AmrCorpusConfig
from interlingua.workflows.recipe_spec import RecipeConfig, RecipeError

CLUSTER = "ray://head:10001"


@pytest.fixture()
def recipe_run(tmp_path, monkeypatch):
    """``run(stages)`` runs a recipe on a cluster; ``configured`` records each MLflow configuration."""
    from interlingua.core import runtime
    from interlingua.workflows import recipe

    monkeypatch.setenv("INTERLINGUA_HOME", str(tmp_path / "home"))
    monkeypatch.delenv("RAY_ADDRESS", raising=False)
    monkeypatch.setenv("MLFLOW_TRACKING_URI", f"sqlite:///{tmp_path / 'mlflow.db'}")  # this test's runs only
    monkeypatch.chdir(tmp_path)
    configured: list[str] = []
    configure = runtime.configure_mlflow
    monkeypatch.setattr(runtime, "configure_mlflow", lambda *a, **k: (configured.append("mlflow"), configure(*a, **k))[1])

    def run(stages):
        config = RecipeConfig.model_validate({"name": "r", "stages": stages, "state_dir": str(tmp_path / "state")})
        return recipe.run(config, address=CLUSTER)

    run.configured = configured
    return run


def _stored_corpus(tmp_path):
    import pyarrow as pa

    from interlingua.operators.corpus.store import CorpusStore

    writer = CorpusStore(str(tmp_path / "state" / "corpus")).open_version("bt", {}, ["bt"])
    writer.write_shard("s0", pa.table({"id": ["0"], "src": ["a"], "tgt": ["b"]}))
    writer.publish(expected_shards=["s0"])


@pytest.mark.parametrize("model", ["./cluster-only/parser", "file:///srv/cluster-only/amr"])
def test_a_one_stage_recipe_is_refused_before_mlflow(recipe_run, model):
    with pytest.raises(RecipeError) as caught:
        recipe_run({"amr": {"workflow": "amr-corpus", "config": {"parser_model": model}}})
    assert str(caught.value).startswith(f"stage 'amr' (amr-corpus): model folder {model} is not on this machine: a "
                                        "recipe hashes its model folders here")
    assert "\n" not in str(caught.value)
    assert recipe_run.configured == []


def test_a_later_stage_is_refused_before_the_first_runs(recipe_run, tmp_path):
    """Refused when its turn came: the corpus-mix stage before it had run and the parent run stayed RUNNING."""
    _stored_corpus(tmp_path)
    stages = {"mix": {"workflow": "corpus-mix", "config": {"sources": [{"corpus": "bt"}], "name": "m"}},
              "amr": {"workflow": "amr-corpus", "config": {"languages": ["fr"],
                                                          "translate": {"fr": {"model": "file:///srv/opus-en-fr"}}}}}
    with pytest.raises(RecipeError, match=r"^stage 'amr' \(amr-corpus\): model folder file:///srv/opus-en-fr is not"):
        recipe_run(stages)
    assert recipe_run.configured == []
    assert not (tmp_path / "state" / "corpus" / "m").exists()


def test_a_refusal_when_the_stage_runs_ends_the_recipe_failed(recipe_run, tmp_path, monkeypatch):
    """``models/amr-parser`` has a hub id's shape: the cluster is asked when the stage runs, and has a folder there."""
    from mlflow.tracking import MlflowClient

    asked = []
    monkeypatch.setattr(cluster_models, "_cluster_model_folders",
                        lambda workflow, config, address: (asked.append(config.parser_model), ["models/amr-parser"])[1])
    with pytest.raises(RecipeError, match=r"^stage 'amr' \(amr-corpus\): model folder models/amr-parser is not on "):
        recipe_run({"amr": {"workflow": "amr-corpus", "config": {"parser_model": "models/amr-parser"}}})
    assert recipe_run.configured == ["mlflow"] and asked == ["models/amr-parser"]
    client = MlflowClient(f"sqlite:///{tmp_path / 'mlflow.db'}")
    runs = [run for exp in client.search_experiments() for run in client.search_runs([exp.experiment_id])]
    assert [(run.info.run_name.startswith("recipe-r-"), run.info.status) for run in runs] == [(True, "FAILED")]


def test_what_is_missing_here_and_what_is_shaped_like_a_hub_id(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "models" / "here").mkdir(parents=True)
    config = AmrCorpusConfig(parser_model="models/amr-parser", languages=["fr", "de"],
                             translate={"fr": {"model": "file:///srv/fr"}, "de": {"model": f"file://{tmp_path}"}})
    assert amr_corpus.models_missing_here(config) == ["file:///srv/fr"]  # a file:// path: a path, not a hub id
    assert amr_corpus.hub_shaped_models(config) == ["models/amr-parser"]
    here = AmrCorpusConfig(parser_model="models/here", languages=[])
    assert amr_corpus.models_missing_here(here) == [] and amr_corpus.hub_shaped_models(here) == []


def test_a_hub_id_the_cluster_has_no_folder_of_passes(monkeypatch):
    """Asked when the stage runs: the cluster hashes no folder at ``someone/amr-parser``, so it is a hub id."""
    monkeypatch.delenv("RAY_ADDRESS", raising=False)
    monkeypatch.setattr(cluster_models, "_cluster_model_folders", lambda workflow, config, address: [])
    config = AmrCorpusConfig(parser_model="someone/amr-parser", languages=[])
    assert cluster_models.models_only_the_cluster_may_have(amr_corpus, config, CLUSTER, ask_cluster=True) == []
    monkeypatch.setattr(cluster_models, "_cluster_model_folders", lambda workflow, config, address: ["someone/amr-parser"])
    assert cluster_models.models_only_the_cluster_may_have(amr_corpus, config, CLUSTER, ask_cluster=True) == [
        "someone/amr-parser"]
    assert cluster_models.models_only_the_cluster_may_have(amr_corpus, config, None, ask_cluster=True) == []  # local


def test_the_cluster_is_asked_for_its_model_folders_by_a_task(monkeypatch, tmp_path):
    """What ``_cluster_model_folders`` asks: the model folders found where the work runs, listed without hashing them
    (it hashed every model folder the config names, gigabytes, to learn which hub-shaped values are folders)."""
    from interlingua.core import runtime, where_it_runs
    from interlingua.models import identity

    folder = tmp_path / "models" / "amr-parser"
    folder.mkdir(parents=True)
    (folder / "config.json").write_text(json.dumps({"model_type": "bart"}))
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(runtime, "init_ray", lambda address: None)
    monkeypatch.setattr(where_it_runs, "on_the_cluster", lambda function, *args: function(*args))
    monkeypatch.setattr(identity, "files_digest", lambda folder: pytest.fail(f"{folder} hashed"))
    config = AmrCorpusConfig(parser_model="models/amr-parser", languages=[])
    assert cluster_models._cluster_model_folders(amr_corpus, config, CLUSTER) == ["models/amr-parser"]


@pytest.mark.parametrize("parser, cluster_has", [("file:///srv/cluster-only/amr", []),
                                                 ("models/amr-parser", ["models/amr-parser"])])
def test_a_refresh_on_a_cluster_refuses_a_model_folder_only_the_cluster_has(tmp_path, monkeypatch, parser,
                                                                            cluster_has):
    """A refresh hashes the config's model folders here: a parser only the cluster has, rewritten there with the same
    NLI source, was "nothing new". Refused before any input is hashed."""
    from interlingua.workflows import refresh as refresh_module
    from interlingua.workflows.refresh import RefreshSpec, refresh

    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("RAY_ADDRESS", raising=False)
    monkeypatch.setattr(cluster_models, "_cluster_model_folders", lambda workflow, config, address: cluster_has)
    monkeypatch.setattr(refresh_module, "_plan", lambda *a: (_ for _ in ()).throw(RuntimeError("planned")))
    spec = RefreshSpec(workflow="amr-corpus", config={"parser_model": parser, "store_root": str(tmp_path / "store")})
    with pytest.raises(UserError) as caught:
        refresh(spec, address=CLUSTER)
    assert str(caught.value).startswith(f"refresh spec (amr-corpus): model folder {parser} is not on this machine: a "
                                        "refresh hashes its model folders here")
    assert "\n" not in str(caught.value)
    with pytest.raises(RuntimeError, match="planned"):  # a local refresh reads (and hashes) this machine's folders
        refresh(spec)


def test_one_refusal_words_a_stage_and_a_refresh_spec_each_with_its_context(tmp_path, monkeypatch):
    """The refusal was worded by the recipe (recipe_models) and by refresh apart; one function words both, and raises
    a recipe stage's as a RecipeError, a refresh spec's as a UserError, a local run's not at all."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("RAY_ADDRESS", raising=False)
    config = AmrCorpusConfig(parser_model="file:///srv/cluster-only/amr", languages=[])
    tail = ("is not on this machine: {} hashes its model folders here, so the cluster's copy could change unseen; put "
            "the same folder at that path here (a relative folder written ./a/b, a hub id org/name), or {}, whose "
            "version id counts the cluster's copy")
    stage_line = ("stage 'amr' (amr-corpus): model folder file:///srv/cluster-only/amr "
                  + tail.format("a recipe", "run the stage alone (interlingua run amr-corpus --address ...)"))
    refresh_line = ("refresh spec (amr-corpus): model folder file:///srv/cluster-only/amr "
                    + tail.format("a refresh", "build it with interlingua run amr-corpus --address ..."))
    with pytest.raises(RecipeError) as stage:
        cluster_models.refuse_models_only_the_cluster_has(amr_corpus, config, CLUSTER, "amr-corpus", stage="amr",
                                                          ask_cluster=False)
    assert str(stage.value) == stage_line
    with pytest.raises(UserError) as spec:
        cluster_models.refuse_models_only_the_cluster_has(amr_corpus, config, CLUSTER, "amr-corpus", ask_cluster=False)
    assert str(spec.value) == refresh_line and not isinstance(spec.value, RecipeError)
    assert cluster_models.refuse_models_only_the_cluster_has(amr_corpus, config, None, "amr-corpus", stage="amr") is None


def test_a_stage_whose_alias_output_cannot_be_pinned_ends_its_run_and_the_recipe_failed(tmp_path, monkeypatch):
    """The stage had finished its work, but pinning its ``models:/NAME@ALIAS`` output asks the registry; when that
    failed, the stage's run stayed RUNNING."""
    from mlflow.tracking import MlflowClient

    from interlingua.core.errors import ServiceUnavailable
    from interlingua.workflows import recipe

    monkeypatch.setenv("INTERLINGUA_HOME", str(tmp_path / "home"))
    monkeypatch.delenv("RAY_ADDRESS", raising=False)
    monkeypatch.setenv("MLFLOW_TRACKING_URI", f"sqlite:///{tmp_path / 'mlflow.db'}")
    monkeypatch.chdir(tmp_path)
    _stored_corpus(tmp_path)

    def registry_down(outputs):
        raise ServiceUnavailable("could not fetch models:/enc@champion: the MLflow model registry did not answer")

    monkeypatch.setattr(recipe, "_pinned", registry_down)
    config = RecipeConfig.model_validate({"name": "r", "state_dir": str(tmp_path / "state"), "stages": {
        "mix": {"workflow": "corpus-mix", "config": {"sources": [{"corpus": "bt"}], "name": "m"}}}})
    with pytest.raises(ServiceUnavailable):
        recipe.run(config)
    client = MlflowClient(f"sqlite:///{tmp_path / 'mlflow.db'}")
    runs = {run.info.run_name: run.info.status for exp in client.search_experiments()
            for run in client.search_runs([exp.experiment_id])}
    assert runs.pop("r/mix") == "FAILED"
    assert [status for name, status in runs.items() if name.startswith("recipe-r-")] == ["FAILED"]
    state = json.loads(next((tmp_path / "state").rglob("state.json")).read_text())
    assert state["stages"]["mix"]["status"] == "running"  # a rerun resumes from this stage
