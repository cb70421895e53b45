"""Beam size and max_length left unset are the model folder's (its generation_config.json, as OPUS-MT's: 6 beams,
512 tokens), so a translation is what ``model.generate`` gives by default; a value given still overrides it."""

from __future__ import annotations

import json
import shutil

import pytest

from interlingua.operators.translate.backend import FALLBACK_GENERATION, BackendSpec, generation_settings

TEXTS = ["a man is playing the guitar", "two dogs run", "the old woman is reading a book on the beach in the park",
         "a child", "el anciano camina", "the woman is eating an apple", "a dog is walking to the park", "two men"]


def _with_generation(source, folder, **settings) -> str:
    """A copy of the model folder ``source`` whose generation_config.json says ``settings``."""
    shutil.copytree(source, folder)
    path = folder / "generation_config.json"
    path.write_text(json.dumps({**json.loads(path.read_text()), **settings}))
    return str(folder)


@pytest.fixture(scope="module")
def opus_like(tmp_path_factory):
    """A trained tiny Marian (its outputs follow the input) with 512 positions and OPUS-MT's 6 beams, 512 tokens."""
    from interlingua.operators.translate.tiny_marian import build_tiny_marian

    root = tmp_path_factory.mktemp("generation")
    model = build_tiny_marian(root / "trained", positions=512, train_steps=60)
    return _with_generation(model, root / "opus", num_beams=6, max_length=512)


def _generate(folder: str, texts: list[str], **kwargs):
    """The reference: transformers' generate on the whole padded batch, with the folder's defaults unless given."""
    import torch
    from transformers import AutoModelForSeq2SeqLM, AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(folder)
    model = AutoModelForSeq2SeqLM.from_pretrained(folder).eval()
    with torch.inference_mode():
        ids = model.generate(**tokenizer(texts, return_tensors="pt", padding=True), **kwargs)
    cut = [bool(len(row) == ids.shape[1] and model.config.eos_token_id not in row.tolist()) for row in ids]
    return tokenizer.batch_decode(ids, skip_special_tokens=True), cut, ids.shape[1]


@pytest.mark.slow
def test_marian_translates_as_generate_does_with_the_folder_s_generation_config(opus_like, tmp_path):
    from interlingua.operators.translate.marian_backend import MarianTranslator

    expected, _, longest = _generate(opus_like, TEXTS)
    assert longest > 200  # beyond the length the folder's own cut-off decides (below)
    translator = MarianTranslator(BackendSpec(device="cpu", batch_size=len(TEXTS)), opus_like)
    assert translator.generation == {"num_beams": 6, "max_length": 512}
    assert translator.translate(TEXTS) == expected and translator.at_max_length == [False] * len(TEXTS)
    shorter = _with_generation(opus_like, tmp_path / "shorter", max_length=100)
    expected_shorter, cut, _ = _generate(shorter, TEXTS)
    translator = MarianTranslator(BackendSpec(device="cpu", batch_size=len(TEXTS)), shorter)
    assert translator.translate(TEXTS) == expected_shorter and any(cut)
    assert translator.at_max_length == cut  # counted at the folder's max_length
    given = MarianTranslator(BackendSpec(device="cpu", batch_size=len(TEXTS), beam_size=4, max_length=20), opus_like)
    expected_given, cut_given, _ = _generate(opus_like, TEXTS, num_beams=4, max_length=20)
    assert given.translate(TEXTS) == expected_given != expected
    assert given.at_max_length == cut_given


@pytest.mark.slow
def test_ctranslate2_takes_the_marian_folder_s_generation_config(opus_like, tmp_path):
    """Greedy (num_beams 1) in the folder's generation config: CTranslate2 float32 gives transformers' default
    output; the converted folder keeps the settings, so it translates the same when named directly."""
    from interlingua.operators.translate.ctranslate2_backend import CTranslate2Translator

    greedy = _with_generation(opus_like, tmp_path / "greedy", num_beams=1, max_length=40)
    expected, cut, _ = _generate(greedy, TEXTS)
    spec = BackendSpec(backend="ctranslate2", device="cpu", precision="float32")
    translator = CTranslate2Translator(spec, greedy, cache_dir=tmp_path / "ct2")
    assert translator.translate(TEXTS) == expected and translator.at_max_length == cut and any(cut)
    converted = CTranslate2Translator(spec, str(translator.folder))
    assert converted.generation == {"num_beams": 1, "max_length": 40}
    assert converted.translate(TEXTS) == expected
    given = CTranslate2Translator(BackendSpec(backend="ctranslate2", device="cpu", precision="float32", max_length=10),
                                  greedy, cache_dir=tmp_path / "ct2")
    assert given.translate(TEXTS) == _generate(greedy, TEXTS, max_length=10)[0]


def test_generation_settings_take_the_spec_then_the_folder_then_the_fallback():
    assert generation_settings(BackendSpec(), {"num_beams": 6, "max_length": 512}) == {"num_beams": 6, "max_length": 512}
    assert generation_settings(BackendSpec(beam_size=2), {"num_beams": 6}) == {"num_beams": 2, "max_length": 256}
    assert generation_settings(BackendSpec(), {}) == FALLBACK_GENERATION == {"num_beams": 4, "max_length": 256}


def test_explicit_beam_size_and_max_length_are_still_validated_by_the_typed_config():
    from interlingua.workflows.amr_corpus import AmrCorpusConfig

    config = AmrCorpusConfig(translate={"es": {"backend": "marian", "beam_size": 6, "max_length": 512}})
    assert BackendSpec(**config.translate["es"]).beam_size == 6
    assert BackendSpec(**AmrCorpusConfig(translate={"es": {"backend": "marian"}}).translate["es"]).max_length is None
    with pytest.raises(ValueError, match="max_length must be a positive integer"):
        AmrCorpusConfig(translate={"es": {"backend": "marian", "max_length": 0}})
