"""Sentence vectors from word vectors: plain average or TF-IDF-weighted average, L2-normalized (ABSent's
inputs, Fu et al. 2020). Tokens are ``\\w+`` runs, looked up as-is, then lower-cased; IDF is
``log((1 + N) / (1 + df(w))) + 1`` over a reference corpus (smoothed, as scikit-learn's ``TfidfVectorizer``; one-letter
words count, as with its ``token_pattern=r"(?u)\\b\\w+\\b"``, not its default pattern, which drops them).
A text with no known word, or whose word vectors sum to zero, has no vector:
:meth:`WordVectorSentenceEncoder.encode_with_reasons` says which rows are empty and why (:data:`NO_KNOWN_WORD`,
:data:`ZERO_VECTOR`) so callers count them as rejects instead of using a zero vector silently."""

from __future__ import annotations

import math
from collections import Counter
from typing import Iterable, Sequence

import numpy as np

from interlingua.models.averaged_word_vectors import tokenize
from interlingua.models.protocol import l2_normalize

WEIGHTINGS = ("mean", "tfidf")
NO_KNOWN_WORD = "no_known_word"  # no token of the text has a vector
ZERO_VECTOR = "zero_vector"  # its words' weighted vectors sum to zero (zero vectors in the file, or vectors that cancel)
REJECT_REASONS = (NO_KNOWN_WORD, ZERO_VECTOR)


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
        """(vectors (n, dim), known (n,) bool: False where :meth:`encode_with_reasons` gives a reason; those rows are 0)."""
        vectors, reasons = self.encode_with_reasons(texts)
        return vectors, np.array([reason is None for reason in reasons], dtype=bool)

    def encode_with_reasons(self, texts: Sequence[str]) -> tuple[np.ndarray, list[str | None]]:
        """(vectors (n, dim), reasons (n,): None for a vector, :data:`NO_KNOWN_WORD` where no token had a vector,
        :data:`ZERO_VECTOR` where their weighted sum is the zero vector; those rows are 0)."""
        out = np.zeros((len(texts), self.dim), dtype=np.float64)
        reasons: list[str | None] = [NO_KNOWN_WORD] * len(texts)
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
            if float(np.linalg.norm(out[row])) > 1e-6 * scale:
                reasons[row] = None
            else:
                reasons[row], out[row] = ZERO_VECTOR, 0.0
        vectors = l2_normalize(out).astype(np.float32)
        return vectors, reasons

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        return self.encode_with_mask(texts)[0]
