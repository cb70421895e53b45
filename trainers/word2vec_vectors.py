"""Train word vectors offline with gensim's Word2Vec (skip-gram or CBOW) on tokenized sentences.

Deterministic for a seed: one worker thread and a hash of the word that does not depend on Python's
per-process string hash (gensim seeds each initial vector with ``hashfxn(word + str(seed))``)."""

from __future__ import annotations

import zlib
from typing import Iterable, Sequence

import numpy as np

from interlingua.models.averaged_word_vectors import tokenize


def stable_hash(text: str) -> int:
    return zlib.crc32(text.encode("utf-8"))


def train_word_vectors(texts: Iterable[str], *, dim: int = 300, epochs: int = 10, min_count: int = 2,
                       window: int = 5, skip_gram: bool = True, seed: int = 0) -> tuple[list[str], np.ndarray]:
    """(words, float32 matrix) learned from ``texts`` (lower-cased ``\\w+`` tokens)."""
    from gensim.models import Word2Vec

    sentences: Sequence[list[str]] = [[t.lower() for t in tokenize(text)] for text in texts]
    sentences = [s for s in sentences if s]
    if not sentences:
        raise ValueError("no tokens to learn word vectors from")
    model = Word2Vec(sentences, vector_size=dim, window=window, min_count=min_count, sg=int(skip_gram), epochs=epochs,
                     seed=seed, workers=1, hashfxn=stable_hash)
    return list(model.wv.index_to_key), np.asarray(model.wv.vectors, dtype=np.float32)
