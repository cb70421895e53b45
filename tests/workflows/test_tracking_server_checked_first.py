"""A workflow that logs to MLflow asks an ``http(s)://`` tracking server whether it answers (3 s) before its work:
the quickstart built its assets, started Ray and published its corpus, and only then exited 69 (92 s on a fresh
state). Each workflow below is given inputs that do not exist, which it reads before its MLflow run: the server that
does not answer is what it reports, exit 69, not the missing input."""

from __future__ import annotations

import pytest

from interlingua.core.errors import ServiceUnavailable
from ports import closed_port


@pytest.fixture
def closed_tracking_uri(tmp_path, monkeypatch):
    """``MLFLOW_TRACKING_URI`` of a port nothing listens on, a fresh state folder, no Ray or MLflow reachable."""
    from interlingua.core import runtime

    uri = f"http://127.0.0.1:{closed_port()}"
    monkeypatch.setenv("MLFLOW_TRACKING_URI", uri)
    monkeypatch.setenv("INTERLINGUA_HOME", str(tmp_path / "home"))
    monkeypatch.delenv("RAY_ADDRESS", raising=False)
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(runtime, "init_ray", lambda *a, **k: pytest.fail("Ray started"))
    monkeypatch.setattr(runtime, "configure_mlflow", lambda *a, **k: pytest.fail("reached MLflow"))
    return uri


def test_quickstart_exits_69_before_its_assets_ray_and_corpus(closed_tracking_uri, monkeypatch, capsys):
    from interlingua.workflows import cli, quickstart

    monkeypatch.setattr(quickstart, "_ensure_assets", lambda *a, **k: pytest.fail("assets built"))
    monkeypatch.setattr(quickstart, "_publish_corpus", lambda *a, **k: pytest.fail("corpus published"))
    assert cli.main(["run", "quickstart", "--set", "train.max_steps=2"]) == 69
    assert f"the MLflow tracking server at {closed_tracking_uri} does not answer" in capsys.readouterr().err


def _missing_inputs(tmp_path) -> dict:
    """workflow -> a config naming inputs that do not exist (each read before the workflow's MLflow run)."""
    missing = str(tmp_path / "missing")
    return {
        "train": {"corpus": "nothing"},
        "amr-retrofit": {"corpus": "nothing"},
        "meaning-head": {"model": missing, "bitext": {"file": f"{missing}.parquet"}},
        "absent": {"bitext": {"file": f"{missing}.parquet"}},
        "combine": {"first": missing, "second": missing, "pack": missing},
        "interpolate": {"first": missing, "second": missing, "evaluate": False},
        "recipe": {"name": "r", "stages": {"t": {"workflow": "train", "config": {"corpus": "nothing"}}}},
    }


@pytest.mark.parametrize("name", ["train", "amr-retrofit", "meaning-head", "absent", "combine", "interpolate",
                                  "recipe"])
def test_a_workflow_logging_to_mlflow_asks_the_server_before_reading_its_inputs(closed_tracking_uri, tmp_path, name):
    from interlingua.workflows.registry import load_workflow

    workflow = load_workflow(name)
    config = workflow.CONFIG.model_validate(_missing_inputs(tmp_path)[name])
    answer = f"the MLflow tracking server at {closed_tracking_uri} does not answer"
    with pytest.raises(ServiceUnavailable, match=answer):
        workflow.run(config)


def _config_mistakes(tmp_path) -> dict:
    """workflow -> (--set options with a mistake found without the server, a piece of the line that names it)."""
    first, second = tmp_path / "first", tmp_path / "second"
    for folder, dim in ((first, 8), (second, 16)):
        folder.mkdir()
        (folder / "config.json").write_text(f'{{"hidden_size": {dim}}}')
    return {
        "meaning-head": ([], "no model given and the e5-small asset"),
        "combine": ([f"first={first}", f"second={second}", "mode=sum", "evaluate=false"],
                    "mode 'sum' needs encoders of equal dims"),
        "train": (["corpus=nothing", "train.num_workers=4096"], "train.num_workers 4096 x train.cpus_per_worker 1"),
    }


@pytest.mark.parametrize("name", ["meaning-head", "combine", "train"])
def test_a_config_mistake_is_reported_before_a_server_that_does_not_answer(closed_tracking_uri, tmp_path, capsys,
                                                                          name):
    """The user's mistake, found without the server, is exit 2 with its line; the server came first (exit 69) and
    the mistake was told only once the server answered."""
    from interlingua.workflows import cli

    options, line = _config_mistakes(tmp_path)[name]
    assert cli.main(["run", name, *(part for option in options for part in ("--set", option))]) == 2
    err = capsys.readouterr().err
    assert line in err and "does not answer" not in err and "Traceback" not in err
