"""Zero-shot cross-lingual transfer with a linear probe (MLDoc, XNLI, PAWS-X, MARC, QAM).

A logistic-regression classifier is trained on fixed embeddings of the English training set; its
inverse regularisation strength C is chosen on the union of the dev sets passed in ``dev`` (the
official suite passes every language's dev set, English's included: the protocol of the explicit-alignment
paper, Wu & Dredze 2020); the chosen classifier is applied to each language's test set (accuracy in percent).
Ties between values of C go to the first in the grid. Sentence-pair tasks use the InferSent/SentEval
pair features [u, v, |u - v|, u * v].
"""

from __future__ import annotations

from typing import Mapping, Sequence

import numpy as np

DEFAULT_C_GRID: tuple[float, ...] = (0.01, 0.1, 1.0, 10.0, 100.0)


def pair_features(u: np.ndarray, v: np.ndarray) -> np.ndarray:
    """Concatenation [u, v, |u - v|, u * v] of paired embeddings (n, d) -> (n, 4d)."""
    u, v = np.asarray(u, dtype=np.float64), np.asarray(v, dtype=np.float64)
    if u.shape != v.shape:
        raise ValueError(f"pair embeddings must have the same shape; got {u.shape} and {v.shape}")
    return np.concatenate([u, v, np.abs(u - v), u * v], axis=1)


def zero_shot_transfer_accuracy(
    train_x: np.ndarray, train_y: Sequence,
    dev: Mapping[str, tuple[np.ndarray, Sequence]],
    test: Mapping[str, tuple[np.ndarray, Sequence]],
    seed: int = 0, c_grid: Sequence[float] = DEFAULT_C_GRID, max_iter: int = 1000,
) -> dict[str, float]:
    """Inputs: English train features/labels; dev and test as {language: (features, labels)}.
    Output: {language: test accuracy in percent, "best_C": chosen C, "dev_accuracy": its dev accuracy}."""
    from sklearn.linear_model import LogisticRegression

    if not dev:
        raise ValueError("dev must hold at least one language for model selection; got none")
    if not c_grid or any(c <= 0 for c in c_grid):
        raise ValueError(f"c_grid must be non-empty positive values; got {tuple(c_grid)}")
    dev_x = np.concatenate([np.asarray(x) for x, _ in dev.values()])
    dev_y = np.concatenate([np.asarray(y) for _, y in dev.values()])
    best_model, best_c, best_accuracy = None, None, -1.0
    for c in c_grid:
        model = LogisticRegression(C=c, max_iter=max_iter, random_state=seed)
        model.fit(np.asarray(train_x), np.asarray(train_y))
        accuracy = float(np.mean(model.predict(dev_x) == dev_y))
        if accuracy > best_accuracy:
            best_model, best_c, best_accuracy = model, c, accuracy
    result = {lang: 100.0 * float(np.mean(best_model.predict(np.asarray(x)) == np.asarray(y))) for lang, (x, y) in test.items()}
    result["best_C"] = float(best_c)
    result["dev_accuracy"] = 100.0 * best_accuracy
    return result
