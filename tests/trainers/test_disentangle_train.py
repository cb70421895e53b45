"""The disentanglement trainer on synthetic embeddings: meaning heads align translations, early stopping
restores the best epoch, bad inputs are refused with the input named."""

from __future__ import annotations

import numpy as np
import pytest

from interlingua.trainers.disentangle.objective import LossTerms
from interlingua.trainers.disentangle.train import DisentangleSettings, PairEmbeddings, train_disentangle


def _synthetic(n=400, d=12, seed=0):
    """e = meaning + language offset: translations share the meaning part, each language adds its own vector."""
    rng = np.random.default_rng(seed)
    meaning = rng.normal(size=(n, d))
    offsets = 2.0 * rng.normal(size=(2, d))
    src, tgt = meaning + offsets[0], meaning + offsets[1] + 0.1 * rng.normal(size=(n, d))
    unit = lambda a: (a / np.linalg.norm(a, axis=1, keepdims=True)).astype(np.float32)  # noqa: E731
    return PairEmbeddings(unit(src), unit(tgt), np.zeros(n, int), np.ones(n, int))


def test_meaning_embeddings_retrieve_translations_better_than_raw():
    pairs = _synthetic()
    train, val, test = pairs.rows(np.arange(300)), pairs.rows(np.arange(300, 340)), pairs.rows(np.arange(340, 400))
    result = train_disentangle(train, val, ["en", "es"], DisentangleSettings(batch_size=32, lr=1e-2, max_epochs=60, patience=5))
    import torch

    def accuracy(a, b):
        a, b = a / np.linalg.norm(a, axis=1, keepdims=True), b / np.linalg.norm(b, axis=1, keepdims=True)
        return np.mean(np.argmax(a @ b.T, axis=1) == np.arange(len(a)))

    with torch.no_grad():
        ms = result.model.meaning(torch.as_tensor(test.src)).numpy()
        mt = result.model.meaning(torch.as_tensor(test.tgt)).numpy()
    assert accuracy(ms, mt) >= accuracy(test.src, test.tgt)
    best = min(r["val_loss"] for r in result.history)
    assert result.history[result.best_epoch - 1]["val_loss"] == best
    assert {"train_reconstruction", "val_language_id", "train_loss"} <= set(result.history[0])


def test_early_stopping_waits_patience_epochs_after_the_best():
    pairs = _synthetic(200)
    result = train_disentangle(pairs.rows(np.arange(160)), pairs.rows(np.arange(160, 200)), ["en", "es"],
                               DisentangleSettings(batch_size=32, lr=5e-2, max_epochs=400, patience=3))
    if result.stopped_early:
        assert len(result.history) == result.best_epoch + 3


def test_switched_off_terms_are_absent_from_the_history():
    pairs = _synthetic(100)
    terms = LossTerms(reconstruction=False, language_id=False)
    result = train_disentangle(pairs.rows(np.arange(80)), pairs.rows(np.arange(80, 100)), ["en", "es"],
                               DisentangleSettings(batch_size=16, max_epochs=2, terms=terms))
    assert "train_reconstruction" not in result.history[0] and "train_language_id" not in result.history[0]
    assert "train_meaning_cross" in result.history[0]


def test_refusals_name_the_input():
    pairs = _synthetic(40)
    with pytest.raises(ValueError, match="language 'es' has 10 training sentences, fewer than a batch"):
        uneven = PairEmbeddings(pairs.src, pairs.tgt, np.zeros(40, int), np.r_[np.ones(10, int), 2 * np.ones(30, int)])
        train_disentangle(uneven.rows(np.arange(40)), uneven.rows(np.arange(5)), ["en", "es", "de"],
                          DisentangleSettings(batch_size=16, max_epochs=1))
    nan = PairEmbeddings(pairs.src.copy(), pairs.tgt, pairs.src_lang, pairs.tgt_lang)
    nan.src[3, 0] = np.nan
    with pytest.raises(ValueError, match="train src embeddings hold NaN"):
        train_disentangle(nan, pairs, ["en", "es"], DisentangleSettings(batch_size=8, max_epochs=1))
    with pytest.raises(ValueError, match="same language"):
        PairEmbeddings(pairs.src, pairs.tgt, np.zeros(40, int), np.zeros(40, int))
    with pytest.raises(ValueError, match="at least one meaning term"):
        LossTerms(meaning_cross=False, meaning_mono=False)
