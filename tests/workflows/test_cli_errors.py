"""User mistakes give one line and exit 2; unexpected failures one line plus the log file's path."""

from __future__ import annotations

import pytest

from interlingua.workflows import cli


@pytest.fixture(autouse=True)
def state(tmp_path, monkeypatch):
    monkeypatch.setenv("INTERLINGUA_HOME", str(tmp_path / "state"))
    monkeypatch.delenv("INTERLINGUA_VERBOSE", raising=False)
    return tmp_path / "state"


def test_missing_config_file(capsys):
    assert cli.main(["run", "quickstart", "-c", "missing.yaml"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err == ["interlingua run: error: config file missing.yaml not found (hint: check the path given to -c)"]


def test_unknown_key_suggests_the_close_one(capsys):
    assert cli.main(["run", "quickstart", "--set", "train.max_stepz=3"]) == 2
    assert "did you mean train.max_steps?" in capsys.readouterr().err


def test_list_keys_shows_literal_values(capsys):
    assert cli.main(["run", "quickstart", "--list-keys"]) == 0
    line = next(l for l in capsys.readouterr().out.splitlines() if l.startswith("train.objective "))
    from interlingua.trainers.objectives.registry import objective_names

    # the objective is a registry name now, not a Literal: every registered objective is listed
    assert all(f"'{name}'" in line for name in objective_names()) and "'translation_ranking'" in line


def test_embed_missing_input_file(capsys):
    assert cli.main(["embed", "--model", "x", "--input", "nope.txt"]) == 2
    assert "--input nope.txt: no such file" in capsys.readouterr().err


def test_unexpected_failure_is_one_line_and_traceback_goes_to_the_log(monkeypatch, capsys, state):
    from interlingua.workflows.commands import embed

    def boom(args):
        raise RuntimeError("deep failure")

    monkeypatch.setattr(embed, "run", boom)
    assert cli.main(["embed", "--model", "x", "hello"]) == 1
    err = capsys.readouterr().err
    assert "failed: RuntimeError: deep failure" in err and "Traceback" not in err
    logs = list((state / "logs").glob("embed-*.log"))
    assert len(logs) == 1 and "Traceback" in logs[0].read_text() and "deep failure" in logs[0].read_text()


def test_broken_pipe_exits_quietly(monkeypatch, capsys):
    from interlingua.workflows.commands import embed

    def closed_reader(args):
        raise BrokenPipeError(32, "Broken pipe")

    monkeypatch.setattr(embed, "run", closed_reader)
    monkeypatch.setattr(cli, "_silence_stdout", lambda: None)
    assert cli.main(["embed", "--model", "x", "hello"]) == 141
    assert "Traceback" not in capsys.readouterr().err
