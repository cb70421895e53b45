"""Apertium backend against Apertium itself: batched translation equals one process call per sentence."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import numpy as np
import pytest

from interlingua.operators.base import REJECT_REASON
from interlingua.operators.translate.apertium_backend import ApertiumTranslator, apertium_available
from interlingua.operators.translate.backend import BackendSpec

pytestmark = pytest.mark.skipif(
    not apertium_available("eng-spa"), reason="apertium eng-spa not installed (apt-get install apertium apertium-eng-spa)"
)
SAMPLE = Path(__file__).parents[2] / "workflows" / "data" / "nli_sample.jsonl"
TRICKY = [
    "The cat is sleeping",  # no final punctuation: must not run into the next sentence
    "He said \"hello\" to the old man.",
    "The teacher gave the students a difficult test",
    "Men are playing football in the rain",
    "  It's 5:30 p.m. now",
    "Line one\nline two",  # newline: translated on its own
]


def _direct(sentence: str, mark_unknown: bool = False) -> str:
    """What a user gets from `printf '%s\\n' SENTENCE | apertium -u eng-spa` (without ``-u`` when ``mark_unknown``),
    minus the final newline."""
    command = ["apertium"] + ([] if mark_unknown else ["-u"]) + ["eng-spa"]
    out = subprocess.run(command, input=sentence + "\n", capture_output=True, text=True, check=True)
    return out.stdout.removesuffix("\n")


def test_batched_equals_direct_calls_on_tricky_sentences():
    translator = ApertiumTranslator(BackendSpec(backend="apertium"), "eng-spa")
    assert translator.translate(TRICKY) == [_direct(s) for s in TRICKY]
    assert translator.fallback_calls == 1


def test_translation_is_spanish_and_keeps_order():
    translator = ApertiumTranslator(BackendSpec(backend="apertium"), "eng-spa")
    assert translator.translate(["A man plays the guitar.", "Two dogs run in the park."]) == [
        "Un hombre toca la guitarra.",
        _direct("Two dogs run in the park."),
    ]


def test_operator_with_apertium_backend():
    from interlingua.operators.translate.operator import TranslateOperator

    op = TranslateOperator("en-es", {"backend": "apertium"})
    out = op({"text": np.array(["The cat is sleeping", ""], dtype=object)})
    assert out["translation"][0] == _direct("The cat is sleeping")
    assert out[REJECT_REASON][1] == "translate: empty source text"


def test_amr_corpus_default_translation_has_no_unknown_word_marks():
    from interlingua.operators.translate.operator import TranslateOperator
    from interlingua.workflows.amr_corpus import AmrCorpusConfig

    sentence = "The frobnicator zorbled the quux."
    op = TranslateOperator("en-es", BackendSpec(**AmrCorpusConfig().translate["es"]))
    out = op({"text": np.array([sentence], dtype=object)})
    assert out["translation"][0] == "El frobnicator zorbled el quux." == _direct(sentence)
    marked = ApertiumTranslator(BackendSpec(backend="apertium", mark_unknown=True), "eng-spa")
    assert marked.translate([sentence]) == ["El *frobnicator *zorbled el *quux."] == [_direct(sentence, mark_unknown=True)]


def test_unknown_mode_is_a_clear_error():
    with pytest.raises(ValueError, match="apertium mode"):
        ApertiumTranslator(BackendSpec(backend="apertium"), "xxx-yyy")


@pytest.mark.slow
def test_batched_equals_direct_calls_on_sample_sentences():
    rows = [json.loads(line) for line in SAMPLE.read_text(encoding="utf-8").splitlines()[:40]]
    sentences = sorted({r["sentence1"] for r in rows} | {r["sentence2"] for r in rows})
    translator = ApertiumTranslator(BackendSpec(backend="apertium"), "eng-spa", chunk_size=25)
    assert translator.translate(sentences) == [_direct(s) for s in sentences]
    assert translator.fallback_calls == 0
