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


def test_the_random_same_language_partner_is_never_the_sentence_itself():
    from interlingua.trainers.disentangle.train import LanguagePools

    vectors = np.repeat(np.arange(6, dtype=np.float32)[:, None], 2, axis=1)  # sentence k is (k, k)
    # language 0: sentences 0, 1 (sources) and 5 (target); language 1: sentence 2 (source) and 3, 4 (targets)
    pairs = PairEmbeddings(vectors[:3], vectors[3:], np.array([0, 0, 1]), np.array([1, 1, 0]))
    pools = LanguagePools(pairs, 2, 1)
    chosen = np.array([0, 1, 2] * 300)
    batch = pairs.rows(chosen)
    partners: dict[float, set[float]] = {}
    for seed in range(2):
        rng = np.random.default_rng(seed)
        c = pools.draw(batch.src_lang, rng, own=pools.src_rows[chosen])
        d = pools.draw(batch.tgt_lang, rng, own=pools.tgt_rows[chosen])
        for sentences, drawn in ((batch.src, c), (batch.tgt, d)):
            for sentence, partner in zip(sentences[:, 0], drawn[:, 0]):
                partners.setdefault(float(sentence), set()).add(float(partner))
        again = np.random.default_rng(seed)  # deterministic under the seed
        assert (pools.draw(batch.src_lang, again, own=pools.src_rows[chosen]) == c).all()
    pool = {0.0: {0.0, 1.0, 5.0}, 1.0: {0.0, 1.0, 5.0}, 5.0: {0.0, 1.0, 5.0},
            2.0: {2.0, 3.0, 4.0}, 3.0: {2.0, 3.0, 4.0}, 4.0: {2.0, 3.0, 4.0}}
    assert partners == {k: same - {k} for k, same in pool.items()}  # every other one of the language, never itself
    with pytest.raises(ValueError, match="than 2"):  # a language with one sentence has nothing else to draw
        LanguagePools(PairEmbeddings(vectors[:2], vectors[2:4], np.array([0, 1]), np.array([1, 2])), 3, 1)
