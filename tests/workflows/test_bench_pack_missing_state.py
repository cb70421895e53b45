"""`bench-pack` without --assets reads the state's assets: a mistyped ``INTERLINGUA_HOME`` built a pack of the
Wikipedia tasks alone (the Bible and debian-reference tasks skipped), exit 0, and made the folder."""

from __future__ import annotations

import pytest

from interlingua.workflows.cli import main


def test_a_mistyped_interlingua_home_is_one_line_before_any_task_is_built(tmp_path, monkeypatch, capsys):
    from interlingua.evaluation.pack import build

    missing = tmp_path / "no-such-home"
    monkeypatch.setenv("INTERLINGUA_HOME", str(missing))
    monkeypatch.setattr(build, "build_pack", lambda *a, **k: pytest.fail("a pack was built"))
    assert main(["bench-pack", "--out", str(tmp_path / "pack")]) == 2
    err = [line for line in capsys.readouterr().err.splitlines() if not line.startswith("[interlingua]")]
    assert err == [f"interlingua bench-pack: error: state folder {missing} (from INTERLINGUA_HOME) does not exist "
                   "(hint: check INTERLINGUA_HOME; a workflow run makes it, e.g. `interlingua run quickstart`)"]
    assert not missing.exists() and not (tmp_path / "pack").exists()
