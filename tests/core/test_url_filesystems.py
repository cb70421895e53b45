"""A URL whose protocol fsspec does not know, and a model folder that does not exist: one line with a hint."""

from __future__ import annotations

import pytest

from interlingua.core.errors import UserError
from interlingua.core.url_filesystems import require_known_protocol, url_filesystem
from interlingua.workflows.cli import main


def error_lines(capsys) -> list[str]:
    return [line for line in capsys.readouterr().err.splitlines() if not line.startswith("[interlingua]")]


def test_an_unknown_protocol_names_the_closest_known_one(tmp_path, monkeypatch, capsys):
    """`corpus list --root s4://x/y` said "Protocol not known: s4", where gs:// without gcsfs says what to install."""
    monkeypatch.setenv("INTERLINGUA_HOME", str(tmp_path))
    assert main(["corpus", "list", "--root", "s4://x/y"]) == 2
    assert error_lines(capsys) == [
        "interlingua corpus: error: unknown protocol 's4' in s4://x/y (hint: did you mean s3://? a URL takes a "
        "protocol fsspec knows: file, memory, s3, gs, az, hf, http, https, ...; fsspec.available_protocols() lists "
        "them all)"]
    assert main(["embed", "--model", "s4://KEY:SECRET@bucket/enc", "hello"]) == 2  # a model URL: the same line
    (line,) = error_lines(capsys)
    assert line.startswith("interlingua embed: error: unknown protocol 's4' in s4://***@bucket/enc (hint: did you "
                           "mean s3://?") and "SECRET" not in line


def test_a_protocol_close_to_none_gets_the_common_list_and_a_known_one_opens():
    with pytest.raises(UserError, match=r"^unknown protocol 'zzzz' in zzzz://a \(hint: a URL takes a protocol"):
        url_filesystem("zzzz://a")
    fs, path = url_filesystem("memory://a/b")
    assert type(fs).__name__ == "MemoryFileSystem" and path == "/a/b"


def test_a_model_folder_that_does_not_exist_says_what_a_model_spec_is(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("INTERLINGUA_HOME", str(tmp_path))
    assert main(["embed", "--model", "./nosuchdir", "hello"]) == 2
    assert error_lines(capsys) == [
        "interlingua embed: error: model folder './nosuchdir' does not exist (hint: a model is a folder, a hub id "
        "such as org/name, models:/NAME@ALIAS or runs:/RUN_ID/PATH; embed and eval also take wordvec:FILE and "
        "py:module:factory)"]


def unknown_s4_line(command: str, url: str) -> str:
    return (f"interlingua {command}: error: unknown protocol 's4' in {url} (hint: did you mean s3://? a URL takes a "
            "protocol fsspec knows: file, memory, s3, gs, az, hf, http, https, ...; fsspec.available_protocols() "
            "lists them all)")


def test_every_url_a_command_takes_gets_the_same_line_before_any_work(tmp_path, monkeypatch, capsys):
    """`refresh s4://b/spec.yaml` said "failed: ValueError: Protocol not known: s4" (exit 1); `corpus export --out
    s4://x/y` and `bench-pack --out s4://x/y` printed fsspec's bare error, the export after reading the store."""
    monkeypatch.setenv("INTERLINGUA_HOME", str(tmp_path / "home"))
    assert main(["refresh", "s4://bucket/spec.yaml"]) == 2
    assert error_lines(capsys) == [unknown_s4_line("refresh", "s4://bucket/spec.yaml")]
    spec = tmp_path / "spec.yaml"  # its inputs and its store root: before any input is listed
    spec.write_text("workflow: bitext-corpus\ninputs: [s4://b/pairs.tsv]\n"
                    "config: {src_lang: en, tgt_lang: es, corpus_name: c}\n")
    assert main(["refresh", str(spec)]) == 2
    assert error_lines(capsys) == [unknown_s4_line("refresh", "s4://b/pairs.tsv")]
    spec.write_text(f"workflow: bitext-corpus\ninputs: [{tmp_path}/missing.tsv]\n"
                    "config: {src_lang: en, tgt_lang: es, corpus_name: c, store_root: 's4://b/store'}\n")
    assert main(["refresh", str(spec)]) == 2
    assert error_lines(capsys) == [unknown_s4_line("refresh", "s4://b/store")]
    assert main(["corpus", "export", "nosuchcorpus", "--out", "s4://x/y"]) == 2  # not "no published corpus named"
    assert error_lines(capsys) == [unknown_s4_line("corpus", "s4://x/y")]
    assert main(["bench-pack", "--assets", str(tmp_path / "no-assets"), "--out", "s4://x/y"]) == 2
    assert error_lines(capsys) == [unknown_s4_line("bench-pack", "s4://x/y")]  # not "--assets ... is not a folder"


def test_each_link_of_a_chained_url_is_checked():
    require_known_protocol("simplecache::memory://a")  # fsspec's own protocols pass
    require_known_protocol("data:text/plain,hi")
    with pytest.raises(UserError, match=r"^unknown protocol 'simplecach' in simplecach::s3://b/k \(hint: did you "
                                        r"mean simplecache://\?"):
        require_known_protocol("simplecach::s3://b/k")
