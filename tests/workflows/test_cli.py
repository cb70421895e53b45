"""The ``interlingua`` command line: subcommand registry, help, user errors -> exit 2, light start-up."""

from __future__ import annotations

import importlib
import json
import subprocess
import sys
import tempfile

import pytest

from interlingua.workflows.cli import build_parser, main
from interlingua.workflows.commands import COMMANDS
from interlingua.workflows.registry import WORKFLOWS

HEAVY_MODULES = ("torch", "ray", "mlflow", "transformers", "deepspeed")


def run_main(argv: list[str]) -> int:
    """``main(argv)`` with argparse's SystemExit turned into a return code."""
    try:
        return main(argv)
    except SystemExit as exit_:
        return int(exit_.code or 0)


def test_top_level_help_lists_every_subcommand(capsys):
    assert run_main(["--help"]) == 0
    out = capsys.readouterr().out
    for name in COMMANDS:
        assert name in out


@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_help_of_every_subcommand_exits_zero_with_usage(command, capsys):
    assert run_main([command, "--help"]) == 0
    out = capsys.readouterr().out
    assert out.startswith(f"usage: interlingua {command}")


def test_every_command_module_has_the_subcommand_interface():
    import importlib

    for name, module_name in COMMANDS.items():
        module = importlib.import_module(module_name)
        assert isinstance(module.HELP, str) and module.HELP.strip(), name
        assert callable(module.add_arguments) and callable(module.run), name


def test_parser_for_one_command_only_registers_that_command():
    parser = build_parser(load="run")
    args = parser.parse_args(["run", "quickstart"])
    assert args.command == "run" and args.workflow == "quickstart"
    with pytest.raises(SystemExit):
        parser.parse_args(["embed", "--model", "x"])


def test_no_command_prints_help_and_exits_2(capsys):
    assert run_main([]) == 2
    assert "usage: interlingua" in capsys.readouterr().out


def test_unknown_subcommand_is_an_argparse_error(capsys):
    assert run_main(["no-such-command"]) == 2
    assert "invalid choice" in capsys.readouterr().err


def test_run_unknown_workflow_lists_known_workflows_and_exits_2(capsys):
    assert run_main(["run", "no-such-workflow"]) == 2
    err = capsys.readouterr().err
    assert "unknown workflow 'no-such-workflow'" in err
    for name in WORKFLOWS:
        assert name in err
    assert "Traceback" not in err


def test_run_bad_set_value_names_key_and_value(capsys):
    assert run_main(["run", "quickstart", "--set", "train.batch_size=abc", "--show-config"]) == 2
    err = capsys.readouterr().err
    assert "interlingua run: error:" in err
    assert "train.batch_size" in err and "'abc'" in err


def test_run_set_without_equals_is_reported(capsys):
    assert run_main(["run", "quickstart", "--set", "train.batch_size", "--show-config"]) == 2
    assert "--set expects key=value, got 'train.batch_size'" in capsys.readouterr().err


def test_run_set_unknown_key_is_reported(capsys):
    assert run_main(["run", "quickstart", "--set", "train.nonsense=1", "--show-config"]) == 2
    err = capsys.readouterr().err
    assert "train.nonsense" in err and "unknown key" in err


def test_run_show_config_applies_yaml_then_set(tmp_path, capsys):
    config_file = tmp_path / "q.yaml"
    config_file.write_text("alias: from-yaml\ntrain:\n  max_steps: 5\n  lr: 1.0e-3\n", encoding="utf-8")
    argv = ["run", "quickstart", "-c", str(config_file), "--set", "train.max_steps=3", "--set", "train.lr=1e-4",
            "--show-config"]
    assert run_main(argv) == 0
    shown = json.loads(capsys.readouterr().out)
    assert shown["alias"] == "from-yaml"
    assert shown["train"]["max_steps"] == 3
    assert shown["train"]["lr"] == pytest.approx(1e-4)


@pytest.mark.parametrize("flag", ["--show-config", "--list-keys"])
def test_a_run_that_only_prints_its_config_or_keys_names_no_log_file(tmp_path, monkeypatch, capsys, flag):
    """`run W --show-config` and `--list-keys` printed "[interlingua] full log: ..." as a long run does."""
    monkeypatch.setenv("INTERLINGUA_HOME", str(tmp_path))
    assert run_main(["run", "quickstart", flag]) == 0
    captured = capsys.readouterr()
    assert captured.out and "full log" not in captured.err


def test_run_list_keys_shows_dotted_nested_keys(capsys):
    assert run_main(["run", "quickstart", "--list-keys"]) == 0
    out = capsys.readouterr().out
    assert "train.max_steps (int" in out
    assert "registered_model (str" in out


def test_embed_without_texts_is_a_user_error(capsys):
    assert run_main(["embed", "--model", "/nonexistent/model"]) == 2
    assert "no texts given" in capsys.readouterr().err


def test_help_does_not_import_heavy_libraries():
    """``interlingua --help`` and every ``interlingua CMD --help`` stay light (stdlib + argparse)."""
    script = (
        "import sys\n"
        "from interlingua.workflows.cli import main\n"
        "from interlingua.workflows.commands import COMMANDS\n"
        "for argv in [['--help']] + [[name, '--help'] for name in COMMANDS]:\n"
        "    try:\n"
        "        main(argv)\n"
        "    except SystemExit:\n"
        "        pass\n"
        f"sys.stderr.write(repr(sorted(m for m in {HEAVY_MODULES!r} if m in sys.modules)))\n"
    )
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    assert "usage: interlingua" in result.stdout
    assert result.stderr.strip().splitlines()[-1] == "[]"


def test_a_command_given_a_local_state_dir_logs_under_it(tmp_path, monkeypatch):
    """``gc --state-dir D`` (and ``assets --state-dir D``) write their log under D, not under $INTERLINGUA_HOME;
    ``submit --state-dir`` names the job's state on the cluster, so its log stays where it was."""
    home, state = tmp_path / "home", tmp_path / "elsewhere"
    monkeypatch.setenv("INTERLINGUA_HOME", str(home))
    monkeypatch.setenv("INTERLINGUA_LOG_FILE", "")  # restored after the test: main() points it at its log
    monkeypatch.delenv("MLFLOW_TRACKING_URI", raising=False)
    state.mkdir()  # gc reads an existing state folder
    assert run_main(["gc", "--dry-run", "--state-dir", str(state)]) == 0
    assert [p.name.split("-")[0] for p in (state / "logs").iterdir()] == ["gc"]
    assert not (home / "logs").exists()
    assert getattr(importlib.import_module(COMMANDS["assets"]), "LOCAL_STATE_DIR", False)
    assert not getattr(importlib.import_module(COMMANDS["submit"]), "LOCAL_STATE_DIR", False)


def test_a_workflow_config_naming_a_state_dir_logs_under_it(tmp_path, monkeypatch):
    """``run W --set state_dir=D`` and a ``-c`` file with ``state_dir: D`` write the command's log under D/logs,
    where the workflow's other state goes (before, the log was opened under $INTERLINGUA_HOME before the config
    was read). A workflow without the key logs where it did; validation refuses the key."""
    home = tmp_path / "home"
    monkeypatch.setenv("INTERLINGUA_HOME", str(home))
    monkeypatch.setenv("INTERLINGUA_LOG_FILE", "")
    by_set, by_file = tmp_path / "by-set", tmp_path / "by-file"
    assert run_main(["run", "quickstart", "--set", f"state_dir={by_set}", "--show-config"]) == 0
    assert [p.name.split("-")[0] for p in (by_set / "logs").iterdir()] == ["run"]
    config = tmp_path / "q.yaml"
    config.write_text(f"state_dir: {by_file}\n")
    assert run_main(["run", "quickstart", "-c", str(config), "--show-config"]) == 0
    assert [p.name.split("-")[0] for p in (by_file / "logs").iterdir()] == ["run"]
    assert not (home / "logs").exists()
    assert run_main(["run", "bitext-corpus", "--set", f"state_dir={tmp_path / 'no'}", "--show-config"]) == 2
    assert not (tmp_path / "no").exists() and [p.name.split("-")[0] for p in (home / "logs").iterdir()] == ["run"]


def test_a_state_folder_that_cannot_hold_the_log_is_a_note_not_a_traceback(tmp_path, monkeypatch, capsys):
    """A read-only state folder (the nightly CronJob mounts the shared volume read-only) or one that cannot be created:
    the log goes to a temporary folder, one note says so, and the command runs (before: a traceback, exit 1)."""
    from interlingua.core import console

    monkeypatch.setenv("INTERLINGUA_HOME", "/proc/interlingua-cannot-exist")
    monkeypatch.setenv("INTERLINGUA_LOG_FILE", "")
    # a command that makes its state folder for the log (a corpus command only reads it: its log goes elsewhere)
    assert run_main(["run", "quickstart", "--show-config"]) == 0
    err = capsys.readouterr().err
    assert err.startswith("interlingua run: note: the state folder's log cannot be written (state folder "
                          "/proc/interlingua-cannot-exist cannot be created") and len(err.strip().splitlines()) == 1
    (tmp_path / "store").mkdir()  # an empty store (a --root that does not exist is refused)
    real = console.configure_console

    def read_only(command, *, verbose=False, log_dir=None):
        if log_dir is None:
            raise OSError(30, "Read-only file system")
        return real(command, verbose=verbose, log_dir=log_dir)

    monkeypatch.setenv("INTERLINGUA_HOME", str(tmp_path / "home"))
    (tmp_path / "home").mkdir()  # there, so the log is written in it: the read-only folder refuses it
    monkeypatch.setattr(console, "configure_console", read_only)
    (tmp_path / "tmp").mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path / "tmp"))  # the system temp folder, for this command
    assert run_main(["corpus", "list", "--root", str(tmp_path / "store")]) == 0
    err = capsys.readouterr().err
    assert "(Read-only file system); the log is " in err and len(err.strip().splitlines()) == 1
    assert list((tmp_path / "tmp").iterdir()) == []  # the command succeeded: its temporary log folder is gone


def test_embed_names_the_blank_lines_it_embeds(tmp_path, monkeypatch, capsys):
    """Blank input lines become vectors of the empty text (rows stay line-aligned): the summary says how many."""
    (tmp_path / "const_encoder.py").write_text(
        "import numpy as np\nclass E:\n    name = 'e'\n    def encode(self, texts):\n"
        "        return np.ones((len(texts), 3))\ndef make():\n    return E()\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    (tmp_path / "in.txt").write_text("one\n\n   \ntwo\n", encoding="utf-8")
    out = tmp_path / "v.npy"
    assert run_main(["embed", "--model", "py:const_encoder:make", "--input", str(tmp_path / "in.txt"),
                     "--out", str(out)]) == 0
    assert capsys.readouterr().out.strip() == (f"wrote 4 x 3 vectors to {out} (2 blank line(s) embedded as empty "
                                               "text, so rows stay line-aligned)")


@pytest.mark.parametrize(("argv", "message"), [
    (["eval", "--seeds", "-1"], "interlingua eval: error: argument --seeds: --seeds must be integers from 0"),
    (["promote"], "interlingua promote: error: the following arguments are required: models:/NAME/VERSION"),
    (["corpus", "prune", "c1", "--keep", "abc"], "interlingua corpus prune: error: argument --keep: invalid int value"),
])
def test_an_argument_mistake_is_one_line_with_a_hint(argv, message, capsys):
    """argparse printed its usage lines before the error (two to four lines for one mistake)."""
    assert run_main(argv) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith(message) and err[0].endswith("--help lists the arguments)")
