"""Marian (transformers) and CTranslate2 backends on a tiny random Marian model built here, and the
translate operator's reject handling."""

from __future__ import annotations

import numpy as np
import pytest

from interlingua.operators.base import REJECT_REASON
from interlingua.operators.translate.backend import BackendSpec, length_sorted_batches
from interlingua.operators.translate.factory import default_model, parse_pair

SENTENCES = [
    "a man is playing the guitar",
    "two dogs run",
    "the old woman is reading a book on the beach in the park",
    "a child",
    "el anciano camina",
]


@pytest.fixture(scope="module")
def tiny_marian(tmp_path_factory):
    from interlingua.operators.translate.tiny_marian import build_tiny_marian

    return str(build_tiny_marian(tmp_path_factory.mktemp("marian")))


@pytest.fixture(scope="module")
def trained_marian(tmp_path_factory):
    """The tiny Marian after a few seeded Adam steps: its outputs differ by input (the untrained one gives about the
    same output for every input, so two engines could agree on it without decoding alike)."""
    from interlingua.operators.translate.tiny_marian import build_tiny_marian

    return str(build_tiny_marian(tmp_path_factory.mktemp("trained"), train_steps=60))


def _plain_generate(folder: str, sentences: list[str], max_length: int) -> list[str]:
    """Reference: transformers generate, one sentence at a time, no batching or sorting."""
    import torch
    from transformers import MarianMTModel, MarianTokenizer

    tokenizer = MarianTokenizer.from_pretrained(folder)
    model = MarianMTModel.from_pretrained(folder).eval()
    outputs = []
    for sentence in sentences:
        with torch.inference_mode():
            ids = model.generate(**tokenizer([sentence], return_tensors="pt"), num_beams=1, do_sample=False,
                                 max_length=max_length)
        outputs.append(tokenizer.decode(ids[0], skip_special_tokens=True))
    return outputs


@pytest.mark.slow
def test_marian_backend_equals_unbatched_generate(tiny_marian):
    from interlingua.operators.translate.marian_backend import MarianTranslator

    spec = BackendSpec(backend="marian", beam_size=1, max_length=12, batch_size=2, device="cpu")
    got = MarianTranslator(spec, tiny_marian).translate(SENTENCES)
    assert got == _plain_generate(tiny_marian, SENTENCES, max_length=12)
    assert all(got)


@pytest.mark.slow
def test_ctranslate2_float32_greedy_equals_transformers(trained_marian, tmp_path):
    from interlingua.operators.translate.ctranslate2_backend import CTranslate2Translator

    spec = BackendSpec(backend="ctranslate2", beam_size=1, max_length=12, batch_size=2, device="cpu",
                       precision="float32")
    translator = CTranslate2Translator(spec, trained_marian, cache_dir=tmp_path)
    assert (translator.folder / "model.bin").is_file()
    assert (translator.folder / "source.spm").is_file()
    expected = _plain_generate(trained_marian, SENTENCES, max_length=12)
    assert len(set(expected)) > 2  # the outputs follow the input
    assert translator.translate(SENTENCES) == expected


@pytest.mark.slow
def test_ctranslate2_refuses_a_marian_whose_decoder_start_row_is_not_zero(tiny_marian, tmp_path):
    """CTranslate2 starts Marian's decoder from a zero vector: a folder whose <pad> (decoder start) row is not zero
    (a Marian fine-tuned with transformers) is refused in one line naming it, by the preflight (before Ray) and by the
    translator before any conversion; the marian backend takes it."""
    import torch
    from transformers import MarianMTModel, MarianTokenizer

    from interlingua.operators.translate.ctranslate2_backend import CTranslate2Translator
    from interlingua.operators.translate.preflight import translation_problem

    folder = tmp_path / "fine-tuned"
    model = MarianMTModel.from_pretrained(tiny_marian)
    with torch.no_grad():
        model.get_input_embeddings().weight[model.config.decoder_start_token_id] = 0.1
    model.save_pretrained(folder)
    MarianTokenizer.from_pretrained(tiny_marian).save_pretrained(folder)
    spec = BackendSpec(backend="ctranslate2", model=str(folder), device="cpu", precision="float32")
    problem = translation_problem(spec, "en-es")
    assert problem.startswith(f"ctranslate2 model folder {folder}: its decoder start (<pad>")
    assert "use backend marian" in problem and "\n" not in problem
    with pytest.raises(ValueError, match="embedding row is not zero") as refused:
        CTranslate2Translator(spec, str(folder), cache_dir=tmp_path / "ct2")
    assert str(folder) in str(refused.value) and not (tmp_path / "ct2").exists()
    assert translation_problem(BackendSpec(backend="marian", model=str(folder)), "en-es") == ""
    assert translation_problem(BackendSpec(backend="ctranslate2", model=tiny_marian), "en-es") == ""


def test_start_row_is_one_row_sliced_from_safetensors_and_other_models_are_not_loaded(tiny_marian, tmp_path,
                                                                                      monkeypatch):
    """The <pad> row check reads config.json, then that one row from model.safetensors: a Marian folder's verdict (zero
    row: none; non-zero: refused, by the preflight and by the translator) comes without constructing the model, as it
    comes from a .bin folder loaded in full; a folder of another model type is no problem, never loaded."""
    import torch
    from transformers import AutoModelForSeq2SeqLM, BartConfig, MarianMTModel, MarianTokenizer

    from interlingua.operators.translate.ctranslate2_backend import CTranslate2Translator, start_row_problem
    from interlingua.operators.translate.preflight import translation_problem

    model = MarianMTModel.from_pretrained(tiny_marian)
    model.save_pretrained(tmp_path / "zero-bin", safe_serialization=False)
    with torch.no_grad():
        model.get_input_embeddings().weight[model.config.decoder_start_token_id] = 0.1
    model.save_pretrained(tmp_path / "tuned", safe_serialization=True)
    MarianTokenizer.from_pretrained(tiny_marian).save_pretrained(tmp_path / "tuned")
    model.save_pretrained(tmp_path / "tuned-bin", safe_serialization=False)
    BartConfig().save_pretrained(tmp_path / "bart")  # config.json only: loading it would fail
    assert start_row_problem(tmp_path / "zero-bin") == ""  # loaded in full: no safetensors file
    assert "embedding row is not zero" in start_row_problem(tmp_path / "tuned-bin")

    def loads(*args, **kwargs):
        raise AssertionError("the model was loaded")

    monkeypatch.setattr(AutoModelForSeq2SeqLM, "from_pretrained", loads)
    monkeypatch.setattr(MarianMTModel, "__init__", loads)
    assert start_row_problem(tiny_marian) == ""
    assert start_row_problem(tmp_path / "tuned").startswith(f"ctranslate2 model folder {tmp_path / 'tuned'}: its decoder")
    assert start_row_problem(tmp_path / "bart") == ""
    spec = BackendSpec(backend="ctranslate2", model=str(tmp_path / "tuned"), device="cpu", precision="float32")
    assert "embedding row is not zero" in translation_problem(spec, "en-es")
    assert translation_problem(BackendSpec(backend="ctranslate2", model=tiny_marian), "en-es") == ""
    with pytest.raises(ValueError, match="embedding row is not zero"):
        CTranslate2Translator(spec, str(tmp_path / "tuned"), cache_dir=tmp_path / "ct2")
    assert not (tmp_path / "ct2").exists()


def test_ctranslate2_preflight_names_a_corrupt_weights_file_in_one_line(tiny_marian, tmp_path):
    """A Marian folder whose model.safetensors is cut short is one line naming the error's type, not a traceback."""
    import shutil

    from interlingua.operators.translate.preflight import translation_problem

    folder = tmp_path / "corrupt"
    shutil.copytree(tiny_marian, folder)
    (folder / "model.safetensors").write_bytes((folder / "model.safetensors").read_bytes()[:100])
    problem = translation_problem(BackendSpec(backend="ctranslate2", model=str(folder)), "en-es")
    assert problem.startswith(f"ctranslate2 model folder {folder} does not load as a transformers model (")
    assert "Error" in problem and "\n" not in problem


@pytest.mark.slow
def test_ctranslate2_int8_runs_and_reuses_the_converted_folder(tiny_marian, tmp_path):
    from interlingua.operators.translate.ctranslate2_backend import CTranslate2Translator

    spec = BackendSpec(backend="ctranslate2", beam_size=2, max_length=10, device="cpu")
    first = CTranslate2Translator(spec, tiny_marian, cache_dir=tmp_path)
    again = CTranslate2Translator(spec, str(first.folder))
    assert again.folder == first.folder
    assert len(again.translate(SENTENCES)) == len(SENTENCES)


@pytest.mark.slow
def test_ctranslate2_conversion_survives_a_cut_short_one_and_follows_a_rewritten_model(tmp_path):
    """A conversion cut short (a folder without model.bin, as the old cache left it, and a partial folder) is
    converted again instead of failing every later run; a Marian folder rewritten in place gets its own entry."""
    from interlingua.operators.translate.ctranslate2_backend import CTranslate2Translator
    from interlingua.operators.translate.tiny_marian import build_tiny_marian

    model, cache = tmp_path / "opus-mt-en-es", tmp_path / "cache"
    build_tiny_marian(model, seed=0)
    spec = BackendSpec(backend="ctranslate2", beam_size=1, max_length=10, device="cpu", precision="float32")
    first = CTranslate2Translator(spec, str(model), cache_dir=cache)
    entry = first.folder.parent
    assert first.folder.name == "ct2" and entry.name.startswith("opus-mt-en-es-") and (entry / ".complete").is_file()
    expected = first.translate(SENTENCES)
    (first.folder / "model.bin").unlink()  # cut short: the entry is made again, not an error
    (entry / ".complete").unlink()
    (cache / f"{entry.name}.partial-999999").mkdir()
    again = CTranslate2Translator(spec, str(model), cache_dir=cache)
    assert again.folder == first.folder and again.translate(SENTENCES) == expected
    assert sorted(p.name for p in cache.iterdir() if ".partial-" not in p.name) == [entry.name]
    build_tiny_marian(model, seed=1)  # retrained into the same folder
    rewritten = CTranslate2Translator(spec, str(model), cache_dir=cache)
    assert rewritten.folder.parent != entry
    assert rewritten.translate(SENTENCES) == _plain_generate(str(model), SENTENCES, max_length=10)


@pytest.mark.slow
def test_operator_translates_and_rejects_empty_rows(tiny_marian):
    from interlingua.operators.translate.operator import TranslateOperator

    spec = {"backend": "marian", "model": tiny_marian, "beam_size": 1, "max_length": 8, "device": "cpu"}
    op = TranslateOperator("en-es", spec)
    out = op({"text": np.array(["two dogs run", "   ", "a child"], dtype=object), "id": np.array([1, 2, 3])})
    assert list(out["lang"]) == ["es", "es", "es"]
    assert out[REJECT_REASON][1] == "translate: empty source text"
    assert out["translation"][0] and out["translation"][2] and out["translation"][1] == ""
    assert list(out["id"]) == [1, 2, 3]


def test_spec_validation_names_the_option():
    with pytest.raises(ValueError, match="backend"):
        BackendSpec(backend="google")
    with pytest.raises(ValueError, match="beam_size"):
        BackendSpec(beam_size=0)
    with pytest.raises(ValueError, match="target_token"):
        BackendSpec(target_token="es")
    with pytest.raises(ValueError, match="language pair"):
        parse_pair("english")


def test_default_models_per_backend():
    assert default_model(BackendSpec(), "en-de") == "Helsinki-NLP/opus-mt-en-de"
    assert default_model(BackendSpec(backend="apertium"), "en-es") == "eng-spa"


@pytest.mark.parametrize("spec", [
    pytest.param({"backend": "apertium"}, id="apertium-default"),
    pytest.param("amr-corpus", id="amr-corpus-default"),
])
def test_apertium_defaults_translate_without_unknown_word_marks(spec, monkeypatch):
    """Training text must not carry Apertium's ``*``/``#``/``@`` marks: the command gets ``-u`` (checked without
    Apertium: the marks are the command's doing, so the command line is what decides)."""
    from interlingua.operators.translate import apertium_backend
    from interlingua.operators.translate.factory import make_translator
    from interlingua.workflows.amr_corpus import AmrCorpusConfig

    monkeypatch.setattr(apertium_backend, "apertium_available", lambda mode=None: True)
    kwargs = AmrCorpusConfig().translate["es"] if spec == "amr-corpus" else spec
    assert make_translator(BackendSpec(**kwargs), "en-es").command == ["apertium", "-u", "eng-spa"]
    marked = make_translator(BackendSpec(backend="apertium", mark_unknown=True), "en-es")
    assert marked.command == ["apertium", "eng-spa"]


def test_length_sorted_batches_cover_every_index_once():
    sentences = ["aaaa", "a", "aaa", "aa", "aaaaa"]
    batches = length_sorted_batches(sentences, 2)
    assert batches == [[4, 0], [2, 3], [1]]
