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


def _variant(tiny_marian: str, folder, *, ends_first: bool = False, forced_eos: bool = False) -> str:
    """The tiny model saved again: its end token made the first output (``ends_first``), or forced at the last step
    when ``max_length`` is hit, as BART's and OPUS-MT's generation configs do (``forced_eos``)."""
    import torch
    from transformers import MarianMTModel, MarianTokenizer

    model = MarianMTModel.from_pretrained(tiny_marian)
    if ends_first:
        with torch.no_grad():
            model.final_logits_bias[0, model.config.eos_token_id] += 5.0
    if forced_eos:
        model.generation_config.forced_eos_token_id = model.config.eos_token_id
    model.save_pretrained(folder)
    MarianTokenizer.from_pretrained(tiny_marian).save_pretrained(folder)
    return str(folder)


def test_an_output_that_ends_is_not_flagged(tiny_marian, tmp_path):
    from interlingua.operators.translate.backend import BackendSpec
    from interlingua.operators.translate.marian_backend import MarianTranslator

    spec = BackendSpec(device="cpu", beam_size=1, max_length=8)
    translator = MarianTranslator(spec, _variant(tiny_marian, tmp_path / "ends", ends_first=True))
    assert translator.translate(["two dogs run", "a child"]) == ["", ""] and translator.at_max_length == [False, False]
    # an end token forced at the last step does not end a cut-off output
    translator = MarianTranslator(spec, _variant(tiny_marian, tmp_path / "forced", forced_eos=True))
    assert all(translator.translate(["two dogs run", "a child"])) and translator.at_max_length == [True, True]


PARSER = {"beam_size": 1, "retry_beam_size": 2, "max_length": 8, "device": "cpu"}
CUT_OFF = "parse: max-length: output reached max_length 8 without an end token (after retry with beam 2)"


def test_parses_cut_off_at_max_length_are_rejected_with_their_own_reason(tiny_marian, tmp_path):
    from interlingua.operators.amr.operator import ParseOperator

    texts = np.array(["two dogs run", "a child"], dtype=object)
    for model in (tiny_marian, _variant(tiny_marian, tmp_path / "forced", forced_eos=True)):
        out = ParseOperator(model, parser_kwargs=PARSER)({"text": texts})
        assert list(out[REJECT_REASON]) == [CUT_OFF, CUT_OFF]  # random weights never end: cut off, not validated
        assert all(out["parse_raw"]) and list(out["parse_beam"]) == [2, 2] and not any(out["penman"])
    ends = ParseOperator(_variant(tiny_marian, tmp_path / "ends", ends_first=True), parser_kwargs=PARSER)
    assert list(ends({"text": texts})[REJECT_REASON]) == ["parse: empty-output (after retry with beam 2)"] * 2


def test_amr_corpus_writes_parses_cut_off_at_max_length_aside(tiny_marian, tmp_path, monkeypatch):
    from interlingua.core import runtime
    from interlingua.operators.amr.operator import ParseOperator
    from interlingua.operators.corpus.store import CorpusStore
    from interlingua.workflows import amr_corpus

    def parse_english(part, config):  # the shard's English rows through the parse operator, without Ray
        rows = amr_corpus._english_rows(part)
        out = ParseOperator(config.parser_model, parser_kwargs=config.parser)(
            {key: np.array([row[key] for row in rows], dtype=object) for key in rows[0]})
        return amr_corpus.partition_rows([{key: out[key][i] for key in out} for i in range(len(rows))])

    monkeypatch.setattr(runtime, "init_ray", lambda *a, **k: None)
    monkeypatch.setattr(amr_corpus, "_build_shard", parse_english)
    config = amr_corpus.AmrCorpusConfig(store_root=str(tmp_path / "store"), max_triples=2, languages=[],
                                        parser_model=tiny_marian, parser=PARSER)
    summary = amr_corpus.run(config)
    store = CorpusStore(str(tmp_path / "store"))
    rejects = store.read_rejects("amr-corpus", summary["version"]).to_pylist()
    assert summary["rows"] == 6 and summary["rejects"] == 6  # English stays as text only, its graph written aside
    assert [(r["operator"], r["reason"]) for r in rejects] == [("parse", CUT_OFF)] * 6
    assert store.manifest("amr-corpus", summary["version"]).rejects_by_reason == {CUT_OFF: 6}
    assert all(row["linearized"] == "" for row in store.read_table("amr-corpus", summary["version"]).to_pylist())


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
    monkeypatch.setattr(amr_corpus, "environment_preflight", lambda config: None)  # Apertium or not
    monkeypatch.setattr(amr_corpus, "_build_shard", lambda part, config: (
        [{"source_id": t.triple_id, "role": "premise", "lang": lang, "text": t.premise, AT_MAX_LENGTH: flag}
         for t in part for lang, flag in (("en", None), ("es", True), ("fr", False))], []))
    summary = amr_corpus.run(amr_corpus.AmrCorpusConfig(store_root=str(tmp_path / "store"), max_triples=3))
    counters = CorpusStore(str(tmp_path / "store")).manifest("amr-corpus", summary["version"]).counters
    assert summary["rows"] == 9 and counters["rows_translation_at_max_length"] == 3


def test_an_end_token_at_the_last_position_ends_unless_the_model_forces_it_there():
    """A T5 parser's own end token at the last position is a natural end; BART's or OPUS-MT's, forced there when the
    limit is hit (``forced_eos_token_id``), is not."""
    from types import SimpleNamespace

    import torch

    from interlingua.operators.translate.backend import end_token_ids, stopped_at_max_length

    generated = torch.tensor([[0, 5, 6, 1], [0, 5, 1, 0], [0, 5, 6, 7]])
    for forced, cut in ((None, [False, False, True]), (1, [True, False, True])):
        model = SimpleNamespace(generation_config=SimpleNamespace(eos_token_id=1, forced_eos_token_id=forced))
        assert stopped_at_max_length(generated, end_token_ids(model), 4) == cut
    assert stopped_at_max_length(generated[:, :3], end_token_ids(model), 4) == [False] * 3  # ended before the limit
