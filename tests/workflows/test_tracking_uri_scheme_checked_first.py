"""A tracking URI whose scheme MLflow takes no store for (``htp:/x``) is refused by the workflows' tracking check, one
line and exit 2, before any work: the quickstart built its assets, started Ray and published its corpus (~23 s), then
failed with MLflow's ``UnsupportedModelRegistryStoreURIException``, exit 1; ``eval --mlflow-run`` said the run was
not in the tracking store. URIs MLflow takes pass, and the check creates none of their files."""

from __future__ import annotations

import pytest

from interlingua.core.errors import UserError

SCHEME_LINE = "the URI scheme 'htp' of MLFLOW_TRACKING_URI=htp:/x is not one MLflow supports (supported: "


@pytest.fixture
def unsupported_tracking_uri(tmp_path, monkeypatch):
    """``MLFLOW_TRACKING_URI=htp:/x``, a fresh state folder; starting Ray or reaching MLflow fails the test."""
    from interlingua.core import runtime

    monkeypatch.setenv("MLFLOW_TRACKING_URI", "htp:/x")
    monkeypatch.delenv("MLFLOW_REGISTRY_URI", raising=False)
    monkeypatch.setenv("INTERLINGUA_HOME", str(tmp_path / "home"))
    monkeypatch.delenv("RAY_ADDRESS", raising=False)
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(runtime, "init_ray", lambda *a, **k: pytest.fail("Ray started"))
    monkeypatch.setattr(runtime, "configure_mlflow", lambda *a, **k: pytest.fail("reached MLflow"))


def _the_scheme_line(err: str, command: str) -> str:
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    assert lines[0].startswith(f"interlingua {command}: error: {SCHEME_LINE}")
    assert lines[0].endswith(") (hint: set MLFLOW_TRACKING_URI to such a URI, e.g. sqlite:///mlflow.db or "
                             "http://HOST:5000)")
    return lines[0]


def test_quickstart_refuses_the_scheme_before_its_assets_ray_and_corpus(unsupported_tracking_uri, monkeypatch,
                                                                        capsys):
    from interlingua.workflows import cli, quickstart

    monkeypatch.setattr(quickstart, "_ensure_assets", lambda *a, **k: pytest.fail("assets built"))
    monkeypatch.setattr(quickstart, "_publish_corpus", lambda *a, **k: pytest.fail("corpus published"))
    assert cli.main(["run", "quickstart", "--set", "train.max_steps=3"]) == 2
    line = _the_scheme_line(capsys.readouterr().err, "run")
    assert "sqlite" in line and "http" in line


def test_train_refuses_the_scheme_before_its_corpus_or_model_is_read(unsupported_tracking_uri, capsys):
    from interlingua.workflows import cli

    assert cli.main(["run", "train", "--set", "corpus=bible-en-es", "--set", "model=reg/enc"]) == 2
    _the_scheme_line(capsys.readouterr().err, "run")


def test_eval_mlflow_run_names_the_scheme_not_a_missing_run(unsupported_tracking_uri, tmp_path, capsys):
    from interlingua.workflows import cli

    assert cli.main(["eval", "--model", "use", "--mlflow-run", "abc", "--out", str(tmp_path / "out")]) == 2
    line = _the_scheme_line(capsys.readouterr().err, "eval")
    assert "no such run" not in line


def test_the_line_lists_every_scheme_mlflow_takes_and_masks_credentials():
    from mlflow.tracking._tracking_service.utils import _tracking_store_registry

    from interlingua.core.runtime import check_store_scheme

    with pytest.raises(UserError) as caught:
        check_store_scheme("htps://reader:s3cret@host:5000")
    message = str(caught.value)
    assert type(caught.value) is UserError and "s3cret" not in message
    listed = message.partition("(supported: ")[2].partition(") (hint: ")[0]
    assert set(listed.split(", ")) == {scheme or "'' (a local path)" for scheme in _tracking_store_registry._registry}


@pytest.mark.parametrize("uri", ["{tmp}/store", "file://{tmp}/store", "sqlite:///{tmp}/store/mlflow.db",
                                 "postgresql://u:p@db.invalid/mlflow", "postgresql+psycopg2://db.invalid/mlflow",
                                 "mysql://db.invalid/mlflow", "databricks", "http://127.0.0.1:1",
                                 "https://mlflow.invalid"])
def test_uris_mlflow_takes_pass_and_nothing_is_created(uri, tmp_path):
    from interlingua.core.runtime import check_store_scheme

    check_store_scheme(uri.format(tmp=tmp_path))
    assert list(tmp_path.iterdir()) == []


def test_a_sqlite_tracking_uri_passes_the_workflows_check_without_creating_its_file(tmp_path, monkeypatch):
    from interlingua.core.runtime import check_tracking_store

    monkeypatch.setenv("MLFLOW_TRACKING_URI", f"sqlite:///{tmp_path / 'db' / 'mlflow.db'}")
    check_tracking_store(tmp_path / "state")
    assert list(tmp_path.iterdir()) == []


def test_an_mlflow_without_the_private_store_registries_skips_the_check(monkeypatch):
    """The check reads MLflow's private store registries: an MLflow that renamed them must not break every workflow
    (MLflow's own error then comes later, as before the check)."""
    import mlflow.tracking._tracking_service.utils as tracking_utils

    from interlingua.core.runtime import check_store_scheme

    monkeypatch.delattr(tracking_utils, "_tracking_store_registry")
    check_store_scheme("htp:/x")  # no UserError, no ImportError


def test_a_near_miss_of_a_database_scheme_is_refused_by_the_same_early_line(unsupported_tracking_uri, monkeypatch,
                                                                              tmp_path, capsys):
    """``sqlitex:///a.db`` starts with a database's name: MLflow's scheme lookup raised its own "Invalid database
    engine: 'sqlitex'" (an MlflowException, `run` failed with exit 1) instead of the check's line; nothing is made."""
    from interlingua.workflows import cli, quickstart

    monkeypatch.setenv("MLFLOW_TRACKING_URI", "sqlitex:///a.db")
    monkeypatch.setattr(quickstart, "_ensure_assets", lambda *a, **k: pytest.fail("assets built"))
    assert cli.main(["run", "quickstart", "--set", "train.max_steps=3"]) == 2
    (line,) = capsys.readouterr().err.strip().splitlines()
    assert line.startswith("interlingua run: error: the URI scheme 'sqlitex' of MLFLOW_TRACKING_URI=sqlitex:///a.db "
                           "is not one MLflow supports (supported: ") and "sqlite, " in line, line
    assert not (tmp_path / "a.db").exists()
