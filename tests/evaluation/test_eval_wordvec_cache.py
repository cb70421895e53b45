"""``interlingua eval --model wordvec:PATH`` keys its embedding cache by the vector file's content
(:func:`~interlingua.models.identity.model_identity`), not by the spec: a file rewritten in place, named by the same
relative path, was served the vectors cached for its old content."""

from __future__ import annotations

import argparse
import json

import pytest

from interlingua.models.identity import model_identity
from interlingua.workflows.commands import eval as eval_command

#: Each German word next to its English translation (accuracy 100), then each next to another word's (accuracy 0);
#: both files have the same size, so only the content tells them apart.
MATCHING = "6 3\neins 1 0 0\none 1 0 0\nzwei 0 1 0\ntwo 0 1 0\ndrei 0 0 1\nthree 0 0 1\n"
CROSSED = "6 3\neins 1 0 0\none 0 1 0\nzwei 0 1 0\ntwo 0 0 1\ndrei 0 0 1\nthree 1 0 0\n"
SPECS = ("wordvec:w.vec", "concat(wordvec:w.vec|wordvec:w.vec)")


@pytest.fixture()
def workdir(tmp_path, monkeypatch):
    (tmp_path / "tat").mkdir()
    (tmp_path / "tat" / "tatoeba.deu-eng.deu").write_text("eins\nzwei\ndrei\n", encoding="utf-8")
    (tmp_path / "tat" / "tatoeba.deu-eng.eng").write_text("one\ntwo\nthree\n", encoding="utf-8")
    monkeypatch.chdir(tmp_path)  # the spec names the file by a relative path, as in the report
    return tmp_path


def _accuracy(*arguments: str) -> dict[str, float]:
    """``interlingua eval --model SPECS --data tatoeba=tat --out same ARGUMENTS``: tatoeba accuracy by model."""
    parser = argparse.ArgumentParser()
    eval_command.add_arguments(parser)
    args = parser.parse_args(["--model", ",".join(SPECS), "--pack", "no-pack", "--seeds", "1",
                              "--data", "tatoeba=tat", "--out", "same", *arguments])
    assert eval_command.run(args) == 0
    summary = json.loads(open("same/results.json", encoding="utf-8").read())["summary"]
    return {row["model"]: row["mean"] for row in summary if row["task"] == "tatoeba" and row["metric"] == "accuracy"}


def test_a_word_vector_file_rewritten_in_place_is_evaluated_anew(workdir):
    (workdir / "w.vec").write_text(MATCHING, encoding="utf-8")
    assert _accuracy() == {spec: pytest.approx(100.0) for spec in SPECS}
    (workdir / "w.vec").write_text(CROSSED, encoding="utf-8")
    truth = _accuracy("--no-cache")
    assert truth == {spec: pytest.approx(0.0) for spec in SPECS}
    assert _accuracy() == truth  # the cache of the first run holds the old file's vectors


def test_the_word_vector_encoder_states_the_files_content_identity(workdir):
    from interlingua.models.resolve import resolve_encoder

    (workdir / "w.vec").write_text(MATCHING, encoding="utf-8")
    encoder = resolve_encoder("wordvec:w.vec")
    assert encoder.identity == model_identity("wordvec:w.vec") == model_identity(f"wordvec:{workdir / 'w.vec'}")
    assert "w.vec" not in encoder.identity
