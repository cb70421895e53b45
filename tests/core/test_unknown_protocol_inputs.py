"""Every input and output URL a command takes gets the one 'unknown protocol' line (core.url_filesystems), not
fsspec's bare 'Protocol not known: s4': align's and embed's files, a workflow's inputs, a refresh spec's inputs."""

from __future__ import annotations

import pytest

from interlingua.core.errors import UserError
from interlingua.core.inputs import require_input_files, require_writable, require_writable_file
from interlingua.operators.corpus.input_fingerprints import fingerprint, list_inputs
from interlingua.workflows.cli import main

UNKNOWN_S4 = r"^unknown protocol 's4' in s4://b/x \(hint: did you mean s3://\?"


def error_lines(capsys) -> list[str]:
    return [line for line in capsys.readouterr().err.splitlines() if not line.startswith("[interlingua]")]


@pytest.mark.parametrize("check", [
    lambda: require_input_files(["s4://b/x"]),
    lambda: require_input_files(["s4://b/x"], local_only=True),  # a workflow's check before its run: no network
    lambda: require_writable("s4://b/x"),
    lambda: require_writable_file("s4://b/x"),  # align --out, embed --out
    lambda: list_inputs(["s4://b/x"]),  # a refresh's and a corpus build's inputs
    lambda: fingerprint("s4://b/x"),
])
def test_each_input_and_output_check_names_an_unknown_protocol(check):
    with pytest.raises(UserError, match=UNKNOWN_S4):
        check()


@pytest.mark.parametrize("option", ["--src", "--out", "--save-params"])
def test_align_files_with_an_unknown_protocol_get_the_one_line(option, tmp_path, monkeypatch, capsys):
    """align --src s4://b/x said 'cannot open input s4://b/x: Protocol not known: s4'; --out and --save-params
    failed with fsspec's ValueError (exit 1)."""
    monkeypatch.setenv("INTERLINGUA_HOME", str(tmp_path / "home"))
    text = tmp_path / "t.txt"
    text.write_text("a b\n")
    files = {"--src": str(text), "--tgt": str(text), "--out": str(tmp_path / "links.txt")}
    files[option] = "s4://b/x"
    argv = ["align", *[part for pair in files.items() for part in pair]]
    assert main(argv) == 2
    (line,) = error_lines(capsys)
    assert line.startswith("interlingua align: error: unknown protocol 's4' in s4://b/x (hint: did you mean s3://?")


def test_a_workflow_input_with_an_unknown_protocol_gets_the_one_line_before_its_run(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("INTERLINGUA_HOME", str(tmp_path / "home"))
    assert main(["run", "bitext-corpus", "--set", "source=s4://b/x", "--set", "src_lang=en",
                 "--set", "tgt_lang=es"]) == 2
    (line,) = error_lines(capsys)
    assert line.startswith("interlingua run: error: unknown protocol 's4' in s4://b/x (hint: did you mean s3://?")
