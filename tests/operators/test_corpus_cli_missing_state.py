"""A state folder that does not exist: `corpus` commands read the store and make no state folder. A mistyped
``INTERLINGUA_HOME`` listed as an empty store ("no published corpora", exit 0) and was made by the command's log, so
it looked like an empty store from then on; no ``./.interlingua`` yet (a fresh checkout) says so."""

from __future__ import annotations

import pytest

from interlingua.workflows.cli import main


def error_lines(capsys) -> list[str]:
    return [line for line in capsys.readouterr().err.splitlines() if not line.startswith("[interlingua]")]


@pytest.mark.parametrize("command", [["list"], ["show", "c"], ["export", "c", "--out", "exported"],
                                     ["verify", "c"], ["prune", "c", "--keep", "1"]])
def test_a_mistyped_interlingua_home_is_one_line_and_is_not_made(tmp_path, monkeypatch, capsys, command):
    missing = tmp_path / "no-such-home"
    monkeypatch.setenv("INTERLINGUA_HOME", str(missing))
    monkeypatch.chdir(tmp_path)
    assert main(["corpus", *command]) == 2
    assert error_lines(capsys) == [
        f"interlingua corpus: error: state folder {missing} (from INTERLINGUA_HOME) does not exist (hint: check "
        "INTERLINGUA_HOME; a workflow run makes it, e.g. `interlingua run quickstart`)"]
    assert not missing.exists() and not (tmp_path / "exported").exists()
    assert main(["corpus", *command]) == 2  # the same the second time: the first made nothing
    assert len(error_lines(capsys)) == 1 and not missing.exists()


def test_no_default_state_folder_yet_is_said_and_list_still_exits_0(tmp_path, monkeypatch, capsys):
    monkeypatch.delenv("INTERLINGUA_HOME", raising=False)
    monkeypatch.chdir(tmp_path)
    line = (f"no state folder here yet: {tmp_path}/.interlingua does not exist (hint: a workflow run makes it, e.g. "
            "`interlingua run quickstart`; or set INTERLINGUA_HOME to your state folder)")
    assert main(["corpus", "list"]) == 0
    assert capsys.readouterr().out.strip() == line
    assert main(["corpus", "show", "c"]) == 2
    assert error_lines(capsys) == [f"interlingua corpus: error: {line}"]
    assert not (tmp_path / ".interlingua").exists()


def test_an_existing_state_folder_and_a_given_root_are_read_as_before(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("INTERLINGUA_HOME", str(tmp_path / "no-such-home"))
    (tmp_path / "store").mkdir()
    assert main(["corpus", "list", "--root", str(tmp_path / "store")]) == 0  # --root: the state folder is not read
    assert capsys.readouterr().out.strip() == f"no published corpora under {tmp_path}/store"
    assert not (tmp_path / "no-such-home").exists()  # nor made for the log
    monkeypatch.setenv("INTERLINGUA_HOME", str(tmp_path))
    assert main(["corpus", "list"]) == 0
    assert capsys.readouterr().out.strip() == f"no published corpora under {tmp_path}/corpus"
