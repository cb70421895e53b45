"""On a cluster, amr-corpus's version id counts the model folders as the cluster has them (hashed there by the check
task, before the version opens), not the driver's copies: a parser that exists only on the cluster and is rewritten
there in place is another version. A local run's id is the one it had before."""

from __future__ import annotations

import json
import shutil

import pytest

from interlingua.operators.corpus.store import CorpusStore
from interlingua.workflows import amr_corpus
from interlingua.workflows.amr_corpus import AmrCorpusConfig

#: The version id a local run of the config of ``test_a_local_runs_version_id_is_unchanged`` gets: the cluster's
#: digests threaded through left it as it was (v-f28a6550be55 at 797e1a1, the driver-side ``with_model_files``); the
#: parser's generation mark (``amr_corpus.stage_marks``, 5c3e6a5) changed it on purpose. Nothing else may.
LOCAL_VERSION = "v-12b2d15afc74"


def _parser(folder, marker: str = "1"):
    folder.mkdir(parents=True)
    (folder / "config.json").write_text(json.dumps({"model_type": "bart"}), encoding="utf-8")
    (folder / "tokenizer.json").write_text(marker, encoding="utf-8")
    return folder


@pytest.fixture()
def stubbed(tmp_path, monkeypatch):
    """Ray and the shards stubbed; ``events`` records connecting, the cluster task, opening the version and the
    builds."""
    from interlingua.core import runtime

    events: list[str] = []
    open_version = CorpusStore.open_version
    monkeypatch.setattr(CorpusStore, "open_version",
                        lambda self, *a, **k: (events.append("open"), open_version(self, *a, **k))[1])
    monkeypatch.setenv("INTERLINGUA_HOME", str(tmp_path / "state"))
    monkeypatch.delenv("RAY_ADDRESS", raising=False)
    monkeypatch.setattr(runtime, "init_ray", lambda *a, **k: events.append("connect"))
    monkeypatch.setattr(amr_corpus, "_build_shard", lambda part, config: (events.append("build"), ([], []))[1])
    return events


@pytest.fixture()
def cluster_parser(tmp_path, monkeypatch, stubbed):
    """A parser folder at ``path`` that only the cluster has: it lies at ``hidden`` and is moved to ``path`` while the
    cluster's task runs (in this process), so the driver never sees it."""
    from interlingua.core import where_it_runs

    hidden = _parser(tmp_path / "cluster-disk" / "parser")
    path = tmp_path / "models" / "parser"

    def on_the_cluster(function, *args):
        stubbed.append("cluster check")
        path.parent.mkdir(exist_ok=True)
        shutil.move(hidden, path)
        try:
            return function(*args)
        finally:
            shutil.move(path, hidden)

    monkeypatch.setattr(where_it_runs, "on_the_cluster", on_the_cluster)
    return {"path": path, "hidden": hidden, "events": stubbed}


def _cluster_config(tmp_path, parser) -> AmrCorpusConfig:
    return AmrCorpusConfig(languages=[], parser_model=str(parser), max_triples=2, store_root=str(tmp_path / "store"))


def test_a_parser_rewritten_on_the_cluster_is_another_version(tmp_path, cluster_parser):
    from interlingua.models.identity import files_digest

    config = _cluster_config(tmp_path, cluster_parser["path"])
    first = amr_corpus.run(config, address="ray://head:10001")
    assert not cluster_parser["path"].exists()  # the driver never had it
    assert cluster_parser["events"] == ["connect", "cluster check", "open", "build"]  # checked and hashed first
    manifest = CorpusStore(config.store_root).manifest(config.corpus_name, first["version"])
    assert manifest.config["model_files"] == {str(cluster_parser["path"]): files_digest(cluster_parser["hidden"])}
    (cluster_parser["hidden"] / "tokenizer.json").write_text("retrained", encoding="utf-8")  # rewritten in place there
    second = amr_corpus.run(config, address="ray://head:10001")
    assert second["version"] != first["version"]
    assert cluster_parser["events"][-1] == "build"  # built again, not the version published with the old parser


def test_what_the_cluster_lacks_opens_no_version(tmp_path, cluster_parser):
    from interlingua.core.errors import UserError

    (cluster_parser["hidden"] / "config.json").unlink()  # the cluster's folder is no model
    config = _cluster_config(tmp_path, cluster_parser["path"])
    with pytest.raises(UserError, match="parser_model folder .* has no config.json: .*checked on the Ray cluster"):
        amr_corpus.run(config, address="ray://head:10001")
    assert cluster_parser["events"] == ["connect", "cluster check"]  # no version opened


def test_a_local_runs_version_id_is_unchanged(tmp_path, monkeypatch, stubbed):
    monkeypatch.chdir(tmp_path)
    shutil.copy(amr_corpus.SAMPLE_NLI, tmp_path / "nli.jsonl")
    _parser(tmp_path / "parser")
    config = AmrCorpusConfig(source="nli.jsonl", languages=[], parser_model="parser", max_triples=2,
                             store_root=str(tmp_path / "store"))
    assert amr_corpus.run(config)["version"] == LOCAL_VERSION
    assert stubbed == ["open", "connect", "build"]


def test_a_recipe_on_a_cluster_refuses_a_model_folder_this_machine_lacks(tmp_path, monkeypatch):
    """A recipe stage's hash counts model folders as the driver has them: one only the cluster has is refused."""
    from interlingua.workflows.recipe_spec import RecipeError

    from interlingua.workflows import cluster_models

    monkeypatch.delenv("RAY_ADDRESS", raising=False)
    # the cluster, asked about the hub-shaped value, has no folder there: a hub id
    monkeypatch.setattr(cluster_models, "_cluster_model_folders", lambda workflow, config, address: [])
    missing = str(tmp_path / "cluster-only" / "parser")
    here = str(_parser(tmp_path / "parser"))
    config = AmrCorpusConfig(languages=["fr"], parser_model=missing, translate={"fr": {"model": here}})
    with pytest.raises(RecipeError) as caught:
        cluster_models.refuse_models_only_the_cluster_has(amr_corpus, config, "ray://head:10001", "amr-corpus",
                                                          stage="amr")
    assert str(caught.value).startswith(f"stage 'amr' (amr-corpus): model folder {missing} is not on this machine")
    assert "\n" not in str(caught.value)
    cluster_models.refuse_models_only_the_cluster_has(amr_corpus, config, None, "amr-corpus", stage="amr")  # read here
    for fine in (here, "someone/amr-parser"):  # here, or a hub id
        cluster_models.refuse_models_only_the_cluster_has(amr_corpus, AmrCorpusConfig(languages=[], parser_model=fine),
                                                          "ray://head:10001", "amr-corpus", stage="amr")
