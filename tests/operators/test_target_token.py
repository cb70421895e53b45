"""The >>xx<< target token of multi-target OPUS-MT models is checked against the model's language tokens and the
pair: when the translator is built, and by the amr-corpus preflight for a local folder."""

from __future__ import annotations

import json
import shutil

import pytest

from interlingua.operators.translate.backend import BackendSpec, resolve_target_token

CODES = [">>es<<", ">>fr<<"]


def test_the_token_is_defaulted_or_refused():
    assert resolve_target_token(CODES, None, "fr") == ">>fr<<"
    assert resolve_target_token(CODES, ">>es<<", "es") == ">>es<<"
    assert resolve_target_token([], None, "fr") is None
    with pytest.raises(ValueError, match="multi-target and has no token for 'de': set target_token to one of >>es<<, >>fr<<"):
        resolve_target_token(CODES, None, "de")
    with pytest.raises(ValueError, match="target_token >>de<< is not one of the model's language tokens: >>es<<, >>fr<<"):
        resolve_target_token(CODES, ">>de<<", "de")
    with pytest.raises(ValueError, match="model has no >>xx<< language tokens .*remove target_token"):
        resolve_target_token([], ">>es<<", "es")
    with pytest.raises(ValueError, match="target_token >>es<< names another language than the pair's target 'fr'"):
        resolve_target_token(CODES, ">>es<<", "fr")


@pytest.fixture(scope="module")
def multi(tmp_path_factory):
    """The tiny Marian with >>es<< and >>fr<< in its vocabulary (a multi-target model's layout)."""
    from transformers import MarianMTModel, MarianTokenizer

    from interlingua.operators.translate.tiny_marian import build_tiny_marian

    single = build_tiny_marian(tmp_path_factory.mktemp("single"))
    folder = tmp_path_factory.mktemp("multi") / "m"
    shutil.copytree(single, folder)
    vocab = json.loads((folder / "vocab.json").read_text())
    for code in CODES:
        vocab[code] = len(vocab)
    (folder / "vocab.json").write_text(json.dumps(vocab))
    model = MarianMTModel.from_pretrained(single)
    model.resize_token_embeddings(len(vocab))
    model.save_pretrained(folder)
    MarianTokenizer.from_pretrained(folder).save_pretrained(folder)
    return str(single), str(folder)


def test_the_translator_checks_the_token_when_built(multi):
    from interlingua.operators.translate.factory import make_translator

    single, folder = multi
    assert make_translator(BackendSpec(model=folder, device="cpu"), "en-fr").target_token == ">>fr<<"
    for model, token, pair, message in ((folder, None, "en-de", "no token for 'de'"),
                                        (folder, ">>es<<", "en-fr", "names another language"),
                                        (single, ">>es<<", "en-es", "no >>xx<< language tokens")):
        with pytest.raises(ValueError, match=message):
            make_translator(BackendSpec(model=model, device="cpu", target_token=token), pair)


def test_the_amr_corpus_preflight_checks_a_local_folders_token(multi):
    from interlingua.core.errors import UserError
    from interlingua.workflows import amr_corpus

    single, folder = multi
    with pytest.raises(UserError, match=r"translate.de: the model is multi-target and has no token for 'de'"):
        amr_corpus.environment_preflight(amr_corpus.AmrCorpusConfig(languages=["de"],
                                                                    translate={"de": {"model": folder}}))
    with pytest.raises(UserError, match=r"single-target model\): remove target_token \(translate.fr.target_token\)"):
        amr_corpus.environment_preflight(amr_corpus.AmrCorpusConfig(languages=["fr"], translate={
            "fr": {"model": single, "target_token": ">>fr<<"}}))
    amr_corpus.environment_preflight(amr_corpus.AmrCorpusConfig(languages=["fr"], translate={"fr": {"model": folder}}))
