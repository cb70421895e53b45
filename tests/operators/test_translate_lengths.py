"""Over-long sources and outputs that reach max_length: a source longer than the model's positions is rejected with
its length (both backends, and the parser), never cut; an output that stopped at max_length is kept and flagged, and
amr-corpus counts such rows."""

from __future__ import annotations

import numpy as np
import pytest

from interlingua.operators.base import REJECT_REASON

LONG = " ".join(["the woman is reading a book on the beach"] * 40)  # 1041 tokens, the tiny model takes 256
TEXTS = ["two dogs run", LONG, "a child"]


@pytest.fixture(scope="module")
def tiny_marian(tmp_path_factory):
    from interlingua.operators.translate.tiny_marian import build_tiny_marian

    return str(build_tiny_marian(tmp_path_factory.mktemp("marian")))


@pytest.mark.parametrize("backend", ["marian", "ctranslate2"])
def test_a_source_longer_than_the_positions_is_rejected_with_its_length(tiny_marian, tmp_path, monkeypatch, backend):
    from interlingua.operators.translate import ctranslate2_backend
    from interlingua.operators.translate.operator import AT_MAX_LENGTH, TranslateOperator

    monkeypatch.setattr(ctranslate2_backend, "DEFAULT_CT2_CACHE", tmp_path / "ct2")
    spec = {"backend": backend, "model": tiny_marian, "device": "cpu", "beam_size": 1, "max_length": 8,
            "precision": "float32" if backend == "ctranslate2" else "default"}
    op = TranslateOperator("en-es", spec)
    out = op({"text": np.array(TEXTS, dtype=object)})
    alone = op({"text": np.array(TEXTS[::2], dtype=object)})
    assert list(out[REJECT_REASON]) == ["", "translate: source has 1041 tokens > 256", ""]
    assert list(out["translation"][::2]) == list(alone["translation"]) and all(alone["translation"])
    # random weights never give the end token: both kept translations stopped at max_length
    assert list(out[AT_MAX_LENGTH]) == [True, False, True]


def test_an_output_that_ends_is_not_flagged(tiny_marian, tmp_path):
    import torch
    from transformers import MarianMTModel, MarianTokenizer

    from interlingua.operators.translate.backend import BackendSpec
    from interlingua.operators.translate.marian_backend import MarianTranslator

    model = MarianMTModel.from_pretrained(tiny_marian)
    with torch.no_grad():
        model.final_logits_bias[0, model.config.eos_token_id] += 5.0  # the end token first
    model.save_pretrained(tmp_path / "ends")
    MarianTokenizer.from_pretrained(tiny_marian).save_pretrained(tmp_path / "ends")
    translator = MarianTranslator(BackendSpec(device="cpu", beam_size=1, max_length=8), str(tmp_path / "ends"))
    assert translator.translate(["two dogs run", "a child"]) == ["", ""] and translator.at_max_length == [False, False]


def test_the_parser_rejects_a_source_longer_than_its_positions(tiny_marian):
    from interlingua.operators.amr.operator import ParseOperator

    op = ParseOperator(tiny_marian, parser_kwargs={"beam_size": 1, "retry_beam_size": None, "max_length": 8,
                                                   "device": "cpu"})
    out = op({"text": np.array(TEXTS, dtype=object)})
    assert out[REJECT_REASON][1] == "parse: source has 1041 tokens > 256" and out["parse_raw"][1] == ""
    assert out["parse_raw"][0] and out["parse_raw"][2]  # parsed (random weights: an invalid graph, its reason)


def test_amr_corpus_counts_kept_translations_that_stopped_at_max_length(tmp_path, monkeypatch):
    from interlingua.core import runtime
    from interlingua.operators.corpus.store import CorpusStore
    from interlingua.operators.translate.operator import AT_MAX_LENGTH
    from interlingua.workflows import amr_corpus

    monkeypatch.setattr(runtime, "init_ray", lambda *a, **k: None)
    monkeypatch.setattr(amr_corpus, "preflight", lambda config: None)
    monkeypatch.setattr(amr_corpus, "_build_shard", lambda part, config: (
        [{"source_id": t.triple_id, "role": "premise", "lang": lang, "text": t.premise, AT_MAX_LENGTH: flag}
         for t in part for lang, flag in (("en", None), ("es", True), ("fr", False))], []))
    summary = amr_corpus.run(amr_corpus.AmrCorpusConfig(store_root=str(tmp_path / "store"), max_triples=3))
    counters = CorpusStore(str(tmp_path / "store")).manifest("amr-corpus", summary["version"]).counters
    assert summary["rows"] == 9 and counters["rows_translation_at_max_length"] == 3
