"""Sentence vectors from word vectors: plain average or TF-IDF-weighted average, L2-normalized (ABSent's
inputs, Fu et al. 2020). Tokens are ``\\w+`` runs, looked up as-is, then lower-cased; IDF is
``log((1 + N) / (1 + df(w))) + 1`` over a reference corpus (smoothed, as scikit-learn's ``TfidfVectorizer``; one-letter
words count, as with its ``token_pattern=r"(?u)\\b\\w+\\b"``, not its default pattern, which drops them).
A text with no known word has no vector: :meth:`WordVectorSentenceEncoder.encode_with_mask` returns which
rows are empty so callers count them as rejects instead of using a zero vector silently."""

from __future__ import annotations

import math
from collections import Counter
from typing import Iterable, Sequence

import numpy as np

from interlingua.models.averaged_word_vectors import tokenize
from interlingua.models.protocol import l2_normalize

WEIGHTINGS = ("mean", "tfidf")


def fit_idf(texts: Iterable[str]) -> dict[str, float]:
    """Smoothed IDF of every lower-cased token of ``texts``."""
    df: Counter = Counter()
    n = 0
    for text in texts:
        n += 1
        df.update({t.lower() for t in tokenize(text)})
    return {word: math.log((1 + n) / (1 + count)) + 1.0 for word, count in df.items()}


class WordVectorSentenceEncoder:
    """A :class:`~interlingua.models.protocol.TextEncoder` over a word-vector table."""

    def __init__(self, words: Sequence[str], matrix: np.ndarray, *, weighting: str = "mean",
                 idf: dict[str, float] | None = None, name: str = "word-vectors"):
        if weighting not in WEIGHTINGS:
            raise ValueError(f"weighting must be one of {WEIGHTINGS}; got {weighting!r}")
        if weighting == "tfidf" and not idf:
            raise ValueError("tfidf weighting needs idf (fit_idf over the training texts)")
        if len(words) != len(matrix):
            raise ValueError(f"{len(words)} words for {len(matrix)} vectors")
        self.index = {w: i for i, w in enumerate(words)}
        self.matrix = np.asarray(matrix, dtype=np.float32)
        self.weighting, self.idf = weighting, idf or {}
        self.name = f"{name}:{weighting}"
        self._max_idf = max(self.idf.values()) if self.idf else 1.0
        self._norms: dict[int, float] = {}  # row -> L2 norm of its vector, computed on the row's first use

    def _norm(self, row: int) -> float:
        """The L2 norm of the table's vector ``row``, computed once per encoder (not once per text that has it)."""
        norm = self._norms.get(row)
        if norm is None:
            norm = self._norms[row] = float(np.linalg.norm(self.matrix[row]))
        return norm

    @property
    def dim(self) -> int:
        return int(self.matrix.shape[1])

    def encode_with_mask(self, texts: Sequence[str]) -> tuple[np.ndarray, np.ndarray]:
        """(vectors (n, dim), known (n,) bool: False where no token had a vector or their weighted sum is the zero
        vector (zero vectors in the file, or vectors that cancel); those rows are 0)."""
        out = np.zeros((len(texts), self.dim), dtype=np.float64)
        known = np.zeros(len(texts), dtype=bool)
        for row, text in enumerate(texts):
            counts = Counter()
            for token in tokenize(text):
                word = token if token in self.index else token.lower()
                if word in self.index:
                    counts[word] += 1
            if not counts:
                continue
            weights = {w: c * (self.idf.get(w.lower(), self._max_idf) if self.weighting == "tfidf" else 1.0)
                       for w, c in counts.items()}
            total = sum(weights.values())
            out[row] = sum(self.matrix[self.index[w]] * (v / total) for w, v in weights.items())
            scale = sum(self._norm(self.index[w]) * (v / total) for w, v in weights.items())
            # a sum (near) zero against its vectors' sizes has no direction: centering would invent one
            known[row] = float(np.linalg.norm(out[row])) > 1e-6 * scale
            if not known[row]:
                out[row] = 0.0
        vectors = l2_normalize(out).astype(np.float32)
        return vectors, known

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        return self.encode_with_mask(texts)[0]
