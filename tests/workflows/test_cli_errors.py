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


def test_invalid_yaml_is_one_line_naming_the_file_line_and_column(capsys, tmp_path):
    path = tmp_path / "bad.yaml"
    path.write_text("train:\n  max_steps: [1, 2\nname: x\n")
    assert cli.main(["run", "quickstart", "-c", str(path)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err == [f"interlingua run: error: {path}, line 3, column 5: not valid YAML: expected ',' or ']', but got ':' "
                   "(while parsing a flow sequence from line 2, column 14) (hint: check the brackets, quotes and "
                   "indentation there)"]


def test_list_keys_names_a_checked_type_without_its_validator(capsys):
    assert cli.main(["run", "hard-negatives", "--list-keys"]) == 0
    out = capsys.readouterr().out
    assert "name (str | None, default None)" in out and "Annotated" not in out and " at 0x" not in out


def test_a_model_folder_without_weights_is_a_user_error(capsys, tmp_path):
    from tiny_models import build_tiny_bert

    folder = build_tiny_bert(tmp_path / "bert")
    (folder / "model.safetensors").unlink()
    capsys.readouterr()  # save_pretrained's progress bar
    assert cli.main(["embed", "--model", str(folder), "hello"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err == [f"interlingua embed: error: {folder} has config.json but no model weights (model.safetensors or "
                   "pytorch_model.bin, or a sharded index of them) (hint: copy the weights in, or save the model with "
                   "save_pretrained)"]


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


def test_corpus_errors_read_like_the_other_commands(capsys, tmp_path):
    (tmp_path / "store").mkdir()  # an empty store (a --root that does not exist is refused)
    assert cli.main(["corpus", "show", "nosuch", "--root", str(tmp_path / "store")]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("interlingua corpus: error: no published corpus named 'nosuch'")


def test_a_word_left_over_is_one_line_naming_the_command(capsys, monkeypatch):
    from interlingua.workflows.commands import embed

    monkeypatch.setattr(embed, "run", lambda args: pytest.fail("embed ran with a word left over"))
    # `embed A --input F B`: argparse takes the sentences as one run, B is left over
    assert cli.main(["embed", "A", "--model", "x", "--input", "F", "B"]) == 2
    captured = capsys.readouterr()
    assert captured.out == "" and captured.err.splitlines() == [
        f"interlingua embed: error: unrecognized arguments: B (hint: {embed.UNRECOGNIZED_HINT})"]
    # an unknown option: the command's --help, not the sentences hint; a nested command names itself
    assert cli.main(["embed", "--model", "x", "--fp16", "A"]) == 2
    assert capsys.readouterr().err.splitlines() == [
        "interlingua embed: error: unrecognized arguments: --fp16 (hint: interlingua embed --help lists the arguments)"]
    assert cli.main(["corpus", "list", "--root", "x", "extra"]) == 2
    assert capsys.readouterr().err.splitlines() == [
        "interlingua corpus list: error: unrecognized arguments: extra (hint: interlingua corpus list --help lists the "
        "arguments)"]


def test_an_unknown_option_before_any_command_is_argparse_s_error(capsys):
    with pytest.raises(SystemExit) as exit_:
        cli.main(["--bogus"])
    assert exit_.value.code == 2
    assert "interlingua: error: unrecognized arguments: --bogus" in capsys.readouterr().err


@pytest.mark.parametrize("command", [["run", "recipe", "--show-config"],
                                     ["submit", "recipe", "--tracking-uri", "http://mlflow:5000", "--dry-run"]])
def test_a_recipe_is_checked_by_every_command_that_takes_it(tmp_path, capsys, command):
    """``run recipe --show-config`` and ``submit recipe --dry-run`` printed a recipe with an unknown stage key or
    workflow and exited 0 (a real submit sent it to the cluster): they now run the recipe's checks as a run does."""
    bad_key = tmp_path / "bad_key.yaml"
    bad_key.write_text("name: r\nstages:\n  bible:\n    workflow: bible-bitext\n    config: {nosuchkey: 1}\n")
    bad_workflow = tmp_path / "bad_workflow.yaml"
    bad_workflow.write_text("name: r\nstages:\n  x:\n    workflow: nosuch\n")
    for path, message in ((bad_key, "stage 'bible' (bible-bitext): unknown config key 'nosuchkey'"),
                          (bad_workflow, "stage 'x': unknown workflow 'nosuch'")):
        assert cli.main([*command[:2], "-c", str(path), *command[2:]]) == 2
        err = capsys.readouterr().err.strip().splitlines()
        assert len(err) == 1 and message in err[0]
    good = tmp_path / "good.yaml"
    good.write_text("name: r\nstages:\n  bible:\n    workflow: bible-bitext\n")
    assert cli.main([*command[:2], "-c", str(good), *command[2:]]) == 0
