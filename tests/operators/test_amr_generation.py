"""The AMR parser generates without n-gram blocking whatever the folder's generation config says, and an amrlib
folder generates as amrlib's parse_xfm inference does (its max_out_len, early stopping)."""

from __future__ import annotations

import json
import shutil

import pytest

SENTENCES = ["a man is playing the guitar", "two dogs run in the garden", "the woman is reading a book", "rain"]


@pytest.fixture(scope="module")
def tiny_folder(tmp_path_factory):
    from interlingua.operators.translate.tiny_marian import build_tiny_marian

    return build_tiny_marian(tmp_path_factory.mktemp("parser") / "tiny")


def _copy(tiny_folder, tmp_path, *, generation=None, config=None):
    folder = tmp_path / "folder"
    shutil.copytree(tiny_folder, folder)
    for name, update in (("generation_config.json", generation), ("config.json", config)):
        if update:
            data = json.loads((folder / name).read_text())
            data.update(update)
            (folder / name).write_text(json.dumps(data))
    return folder


def _reference(parser, beam_size: int, **kwargs) -> list[str]:
    import torch

    encoded = parser.tokenizer(SENTENCES, return_tensors="pt", padding=True)
    with torch.inference_mode():
        ids = parser.model.generate(**encoded, num_beams=beam_size, do_sample=False, **kwargs)
    return parser.tokenizer.batch_decode(ids, skip_special_tokens=True)


@pytest.mark.parametrize("inherited", [{"no_repeat_ngram_size": 3}, {"repetition_penalty": 1.3}])
def test_a_folder_s_ngram_blocking_is_not_inherited(tiny_folder, tmp_path, inherited):
    from interlingua.operators.amr.parser import Seq2SeqAmrParser

    folder = _copy(tiny_folder, tmp_path, generation={**inherited, "num_beams": 4, "max_length": 1024})
    parser = Seq2SeqAmrParser(str(folder), beam_size=2, retry_beam_size=None, max_length=24, device="cpu")
    got = [raw for raw, _ in parser.generate(SENTENCES, 2)]
    unblocked = _reference(parser, 2, max_length=24, no_repeat_ngram_size=0, repetition_penalty=1.0)
    assert got == unblocked and all(got)
    assert _reference(parser, 2, max_length=24) != unblocked  # the folder's setting would have changed them


def test_an_amrlib_folder_s_max_out_len_is_the_max_length_and_the_cut_off(tiny_folder, tmp_path):
    from interlingua.operators.amr.parser import Seq2SeqAmrParser

    params = {"parse_amr": {"max_in_len": 100, "max_out_len": 7, "model_name_or_path": "facebook/bart-large"}}
    folder = _copy(tiny_folder, tmp_path, generation={"no_repeat_ngram_size": 3},
                   config={"task_specific_params": params})
    parser = Seq2SeqAmrParser(str(folder), beam_size=2, retry_beam_size=3, device="cpu")
    assert parser.max_length == 7
    # what amrlib passes (the random model never ends a beam, so the outputs below cannot tell early stopping apart)
    assert parser.generation_kwargs(2)["early_stopping"] is True
    assert parser.generation_kwargs(1)["early_stopping"] is False
    got = [raw for raw, _ in parser.generate(SENTENCES, 2)]
    assert got == _reference(parser, 2, max_length=7, early_stopping=True, no_repeat_ngram_size=0)
    assert got != _reference(parser, 2, max_length=7, early_stopping=True)  # the folder's blocking is overridden
    results = parser.parse(SENTENCES)  # random weights never end: every output is cut off at 7, retried, cut again
    assert {r.reason for r in results} == {
        "max-length: output reached max_length 7 without an end token (after retry with beam 3)"}
    assert Seq2SeqAmrParser(str(folder), beam_size=2, max_length=9, device="cpu").max_length == 9  # given: kept
    plain = Seq2SeqAmrParser(str(tiny_folder), retry_beam_size=None, device="cpu")
    assert plain.max_length == 512 and "early_stopping" not in plain.generation_kwargs(2)


def test_a_folder_with_only_amrlib_meta_generates_as_amrlib(tiny_folder, tmp_path, monkeypatch):
    """amrlib_meta.json alone (no parse_amr in its config) makes a folder amrlib's: early stopping with beams, the
    default max_length (no max_out_len to take). The parser reads the file once (it read it for the tokenizer's source
    and again for this)."""
    from interlingua.operators.amr import parser as parser_module

    folder = _copy(tiny_folder, tmp_path)
    (folder / "amrlib_meta.json").write_text(json.dumps({"model_type": "parse_xfm", "base_model": "facebook/bart-large"}))
    reads = []
    read = parser_module.read_amrlib_meta
    monkeypatch.setattr(parser_module, "read_amrlib_meta", lambda model: reads.append(model) or read(model))
    parser = parser_module.Seq2SeqAmrParser(str(folder), retry_beam_size=None, device="cpu")
    assert reads == [str(folder)]
    assert parser.max_length == 512
    assert parser.generation_kwargs(4)["early_stopping"] is True and parser.generation_kwargs(1)["early_stopping"] is False


def test_an_amrlib_max_out_len_that_is_no_positive_integer_is_refused_before_loading(tiny_folder, tmp_path):
    from interlingua.operators.amr.parser import parser_model_problem

    folder = _copy(tiny_folder, tmp_path, config={"task_specific_params": {"parse_amr": {"max_out_len": "long"}}})
    assert parser_model_problem(str(folder)) == (
        f"parser_model {folder}/config.json task_specific_params.parse_amr.max_out_len must be a positive integer, "
        "got 'long'")
