"""amr-corpus settings that an actor found out after Ray started (hundreds of lines of traceback) are refused by its
preflight, one line with a hint, before Ray or a model starts."""

from __future__ import annotations

import json

import pytest

from interlingua.core.errors import UserError
from interlingua.operators.translate import apertium_backend
from interlingua.workflows import amr_corpus
from interlingua.workflows.amr_corpus import AmrCorpusConfig
from interlingua.workflows.cli import main
from interlingua.workflows.registry import preflight


def _folder(path, config: dict, *files: str):
    path.mkdir(parents=True)
    (path / "config.json").write_text(json.dumps(config), encoding="utf-8")
    for name in files:
        (path / name).write_text("x", encoding="utf-8")
    return str(path)


@pytest.fixture()
def marian(tmp_path):
    folder = _folder(tmp_path / "marian", {"model_type": "marian"}, "source.spm")
    (tmp_path / "marian" / "vocab.json").write_text("{}", encoding="utf-8")
    return folder


@pytest.fixture()
def modes(monkeypatch):
    """Apertium installed with the modes listed (whatever this machine has)."""
    installed: set[str] = set()
    monkeypatch.setattr(apertium_backend.shutil, "which", lambda name: "/usr/bin/apertium")
    monkeypatch.setattr(apertium_backend, "installed_modes", lambda: installed)
    return installed


def _problem(**settings) -> str:
    with pytest.raises(UserError) as caught:
        preflight(amr_corpus, AmrCorpusConfig(**settings))
    message = str(caught.value)
    assert "\n" not in message
    return message


def test_a_language_code_without_an_opus_mt_model_is_refused(modes):
    assert "'xx' is not an ISO 639-1 language code: there is no OPUS-MT model Helsinki-NLP/opus-mt-en-xx" in _problem(
        languages=["xx"], translate={})


def test_translation_model_folders_are_checked(tmp_path, modes, marian):
    missing = str(tmp_path / "nowhere" / "opus")
    assert f"marian model folder {missing} does not exist (nor is it a Hugging Face hub id): set translate.fr.model" in _problem(
        languages=["fr"], translate={"fr": {"model": missing}})
    no_tokenizer = _folder(tmp_path / "bare", {"model_type": "marian"})
    assert "has no tokenizer files" in _problem(languages=["fr"], translate={"fr": {"backend": "ctranslate2",
                                                                                    "model": no_tokenizer}})
    no_config = tmp_path / "empty"
    no_config.mkdir()
    assert "has no config.json" in _problem(languages=["fr"], translate={"fr": {"model": str(no_config)}})
    # what passes: a model folder, a hub id (its shape), the default OPUS-MT id of a real language
    preflight(amr_corpus, AmrCorpusConfig(languages=["fr", "de", "it"], translate={
        "fr": {"model": marian}, "de": {"backend": "ctranslate2", "model": "someone/opus-mt-en-de"}}))


def test_a_missing_apertium_mode_names_its_own_package(modes):
    assert ("translate.ca: apertium mode 'eng-cat' (en -> ca) is not installed: apt-get install apertium "
            "apertium-eng-cat") in _problem(languages=["ca"], translate={"ca": {"backend": "apertium"}})
    french = _problem(languages=["fr"], translate={"fr": {"backend": "apertium"}})
    assert "mode 'eng-fra'" in french and "no known Debian package" in french and "install apertium apertium-eng-spa" not in french
    modes.update({"eng-spa", "eng-cat"})
    preflight(amr_corpus, AmrCorpusConfig(languages=["es", "ca"], translate={"ca": {"backend": "apertium"}}))


def test_the_apertium_translator_names_the_package_of_its_mode(modes):
    from interlingua.operators.translate.backend import BackendSpec

    with pytest.raises(ValueError, match=r"apt-get install apertium apertium-eng-cat\)"):
        apertium_backend.ApertiumTranslator(BackendSpec(backend="apertium"), "eng-cat")


def test_the_parser_must_be_a_seq2seq_model_folder(tmp_path, modes, marian):
    modes.add("eng-spa")
    bert = _folder(tmp_path / "bert", {"model_type": "bert"}, "tokenizer.json")
    assert "parser_model " + bert + " is a bert model, not an encoder-decoder (seq2seq) one" in _problem(
        parser_model=bert)
    missing = str(tmp_path / "no-parser")
    assert f"parser_model folder {missing} does not exist" in _problem(parser_model=missing)
    bart = _folder(tmp_path / "bart", {"model_type": "bart"}, "tokenizer.json")
    for parser in (bart, marian, "someone/amr-parser"):
        preflight(amr_corpus, AmrCorpusConfig(parser_model=parser))


def test_the_cli_refuses_before_ray_in_one_line(tmp_path, monkeypatch, capsys, modes):
    from interlingua.core import runtime

    monkeypatch.setenv("INTERLINGUA_HOME", str(tmp_path / "state"))
    monkeypatch.setattr(runtime, "init_ray", lambda *a, **k: pytest.fail("Ray started"))
    bert = _folder(tmp_path / "bert", {"model_type": "bert"})
    modes.add("eng-spa")
    code = main(["run", "amr-corpus", "--set", f"parser_model={bert}", "--set", f"store_root={tmp_path / 's'}"])
    err = [line for line in capsys.readouterr().err.splitlines() if line.strip() and not line.startswith("[")]
    assert code == 2 and len(err) == 1 and "is a bert model, not an encoder-decoder" in err[0]


@pytest.fixture()
def cluster(tmp_path, monkeypatch, modes):
    """`run amr-corpus --address ray://head:10001` against a fake cluster: connecting is recorded, the task that checks
    the cluster's machines runs here with the Apertium modes of ``cluster["modes"]``, shards are stubbed."""
    from interlingua.core import runtime, where_it_runs

    events: list[str] = []
    cluster_modes: set[str] = set()

    def on_the_cluster(function, *args):
        events.append("cluster check")
        driver_modes = set(modes)
        modes.clear()
        modes.update(cluster_modes)
        try:
            return function(*args)
        finally:
            modes.clear()
            modes.update(driver_modes)

    monkeypatch.setenv("INTERLINGUA_HOME", str(tmp_path / "state"))
    monkeypatch.delenv("RAY_ADDRESS", raising=False)
    monkeypatch.setattr(runtime, "check_cluster_address", lambda *a, **k: None)
    monkeypatch.setattr(runtime, "init_ray", lambda *a, **k: events.append("connect"))
    monkeypatch.setattr(where_it_runs, "on_the_cluster", on_the_cluster)
    monkeypatch.setattr(amr_corpus, "_build_shard", lambda part, config: (events.append("build"), ([], []))[1])
    return {"events": events, "modes": cluster_modes,
            "args": ["run", "amr-corpus", "--set", f"store_root={tmp_path / 's'}", "--set", "max_triples=2"]}


def test_a_driver_without_apertium_runs_on_a_cluster_that_has_it(cluster, modes, capsys):
    """The driver's missing Apertium refused a valid run on a cluster whose image has it."""
    cluster["modes"].add("eng-spa")
    assert main([*cluster["args"], "--address", "ray://head:10001"]) == 0
    assert cluster["events"] == ["connect", "cluster check", "build"]


def test_what_the_cluster_lacks_is_one_line_before_any_actor(cluster, modes, capsys):
    modes.add("eng-spa")  # the driver has it, the cluster does not
    code = main([*cluster["args"], "--address", "ray://head:10001"])
    err = [line for line in capsys.readouterr().err.splitlines() if line.strip() and not line.startswith("[")]
    assert code == 2 and len(err) == 1 and cluster["events"] == ["connect", "cluster check"]
    assert ("apertium mode 'eng-spa' (en -> es) is not installed: apt-get install apertium apertium-eng-spa "
            "(checked on the Ray cluster, where the work runs") in err[0]
    modes.clear()  # a local run checks this machine, before Ray
    assert main(cluster["args"]) == 2 and cluster["events"] == ["connect", "cluster check"]


def test_the_settings_own_mistakes_are_refused_before_connecting_to_a_cluster(cluster, capsys):
    code = main([*cluster["args"], "--set", "languages=[xx]", "--address", "ray://head:10001"])
    assert code == 2 and cluster["events"] == []
    assert "'xx' is not an ISO 639-1 language code" in capsys.readouterr().err


@pytest.mark.parametrize("workflow", ["amr-corpus", "apertium-bitext"])
def test_show_config_checks_the_settings_not_this_machine(workflow, tmp_path, monkeypatch, capsys, modes):
    """``--show-config`` runs nothing: a machine without Apertium (or the parser folder) prints the config."""
    monkeypatch.setenv("INTERLINGUA_HOME", str(tmp_path / "state"))
    monkeypatch.delenv("RAY_ADDRESS", raising=False)
    extra = ["--set", "parser_model=/nowhere/parser"] if workflow == "amr-corpus" else []
    assert main(["run", workflow, *extra, "--show-config"]) == 0
    assert json.loads(capsys.readouterr().out)["languages"]
    assert main(["run", workflow, "--set", "languages=[xx]", "--show-config"]) == 2  # the settings' own mistakes


def test_a_local_run_checks_this_machine_once(cluster, modes, monkeypatch, capsys):
    """The command's preflight checked this machine before Ray, then the workflow's run checked it again; the run
    still checks a config no command checked (called alone, or a second time)."""
    checked = []
    real = amr_corpus.environment_preflight
    monkeypatch.setattr(amr_corpus, "environment_preflight", lambda config: checked.append(config) or real(config))
    modes.add("eng-spa")
    assert main(cluster["args"]) == 0
    assert len(checked) == 1 and cluster["events"] == ["connect", "build"]
    config = amr_corpus.AmrCorpusConfig(store_root=str(cluster["args"][3].split("=", 1)[1]), max_triples=2)
    amr_corpus.run(config)
    amr_corpus.run(config)
    assert len(checked) == 3
    preflight(amr_corpus, config)
    config.max_triples = 1  # changed after the command's check: checked again
    amr_corpus.run(config)
    assert len(checked) == 5
