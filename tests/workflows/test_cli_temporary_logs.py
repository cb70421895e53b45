"""A command whose log goes to a temporary folder (a `corpus` command without a state folder, a state folder that
cannot hold the log) removes that folder when it succeeds or stops at a user mistake (exit 2), and keeps it, naming
the log, when it fails unexpectedly: before, each run left one more /tmp/interlingua-logs-XXXX behind."""

from __future__ import annotations

import tempfile

import pytest

from interlingua.workflows.cli import main


@pytest.fixture
def own_temp(tmp_path, monkeypatch):
    """The system temp folder, for this test: the test's own (TMPDIR as tempfile reads it)."""
    temp = tmp_path / "tmp"
    temp.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(temp))
    monkeypatch.setenv("INTERLINGUA_LOG_FILE", "")  # restored after the test: main() points it at its log
    return temp


def in_a_folder_without_state(tmp_path, monkeypatch):
    monkeypatch.delenv("INTERLINGUA_HOME", raising=False)
    (tmp_path / "empty").mkdir()
    monkeypatch.chdir(tmp_path / "empty")


def test_a_corpus_command_that_succeeds_leaves_no_temporary_log_folder(tmp_path, monkeypatch, own_temp, capsys):
    in_a_folder_without_state(tmp_path, monkeypatch)
    assert main(["corpus", "list"]) == 0
    assert "no state folder here yet" in capsys.readouterr().out
    assert list(own_temp.iterdir()) == [] and list((tmp_path / "empty").iterdir()) == []


def test_a_command_that_fails_keeps_its_temporary_log(tmp_path, monkeypatch, own_temp, capsys):
    from interlingua.workflows.commands import corpus

    in_a_folder_without_state(tmp_path, monkeypatch)

    def broken(args):
        raise RuntimeError("a bug")

    monkeypatch.setattr(corpus, "run", broken)
    assert main(["corpus", "list"]) == 1
    err = capsys.readouterr().err
    log = err.split("(the traceback is in ")[1].split(";")[0]
    assert log.startswith(str(own_temp)) and "RuntimeError: a bug" in open(log, encoding="utf-8").read()


def test_a_user_mistake_leaves_no_temporary_log_folder(tmp_path, monkeypatch, own_temp, capsys):
    """Exit 2 is one line naming no log: a mistyped INTERLINGUA_HOME left one more temporary log folder per run."""
    in_a_folder_without_state(tmp_path, monkeypatch)
    monkeypatch.setenv("INTERLINGUA_HOME", str(tmp_path / "no-such-home"))
    assert main(["corpus", "show", "x"]) == 2
    assert "does not exist" in capsys.readouterr().err
    assert list(own_temp.iterdir()) == [] and not (tmp_path / "no-such-home").exists()


def test_an_expected_failure_leaves_no_temporary_log_and_no_path_to_it(tmp_path, monkeypatch, own_temp, capsys):
    """Exit 1 for a damaged store names the manifest, not the log: its temporary log folder went on piling up; and the
    environment kept naming the removed log, so a Ray started later in the process failed opening it."""
    import os

    from interlingua.core.console import LOG_FILE_ENV

    in_a_folder_without_state(tmp_path, monkeypatch)
    version = tmp_path / "store" / "foo" / "v1"
    version.mkdir(parents=True)
    (version / "manifest.json").write_text("{not json")
    (tmp_path / "store" / "foo" / "latest").write_text("v1")
    assert main(["corpus", "list", "--root", str(tmp_path / "store")]) == 1
    assert "manifest" in capsys.readouterr().err
    assert list(own_temp.iterdir()) == [] and not os.environ.get(LOG_FILE_ENV)
