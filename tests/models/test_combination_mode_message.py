"""A mistyped combination mode gets one message wherever it is given: the combine workflow's ``mode`` (pydantic's
Literal line, without the spec's wording) and a ``MODE(A|B)`` model spec (which named the modes as a Python tuple)
said different things for the same mistake; both now end in check_mode's line."""

from __future__ import annotations

import pytest

from interlingua.models.combined import check_mode

LINE = ("combination mode 'norm_concot' is not one of concat, sum, norm_concat, norm_sum "
        "(did you mean 'norm_concat'?)")


def test_check_mode_names_the_modes_and_the_closest():
    with pytest.raises(ValueError) as caught:
        check_mode("norm_concot")
    assert str(caught.value) == LINE


def test_the_combine_workflow_and_a_model_spec_give_the_same_line(tmp_path, monkeypatch, capsys):
    from interlingua.workflows.cli import main

    monkeypatch.setenv("INTERLINGUA_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("INTERLINGUA_LOG_FILE", "")
    qam = tmp_path / "qam"
    qam.mkdir()
    for name in ("QAM.train", "QAM.dev.en", "QAM.dev.de", "QAM.test.de"):
        (qam / name).write_text("aa\taa\t1\naa\tjj\t0\n")
    assert main(["run", "combine", "--set", "first=a", "--set", "second=b", "--set", "mode=norm_concot"]) == 2
    workflow = capsys.readouterr().err.strip()
    assert main(["eval", "--model", "norm_concot(use|minilm)", "--pack", str(tmp_path / "none"), "--data", f"qam={qam}",
                 "--no-cache", "--out", str(tmp_path / "o")]) == 2
    spec = capsys.readouterr().err.strip()
    assert workflow == f"interlingua run: error: invalid config (--set): mode = 'norm_concot': {LINE}"
    assert spec == f"interlingua eval: error: model spec 'norm_concot(use|minilm)': {LINE}"
