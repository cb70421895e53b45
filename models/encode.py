"""One way to call any :class:`~interlingua.models.protocol.TextEncoder` with a batch size and normalization:
our transformer encoders take both as arguments, others (USE, sentence-transformers folders, word
vectors) are called plainly and normalized here."""

from __future__ import annotations

import inspect
from typing import Sequence

import numpy as np

from interlingua.models.protocol import TextEncoder, l2_normalize


def takes(function, *names: str) -> bool:
    """Whether ``function`` (an encoder's ``encode``) has parameters called ``names``: ``use``, a
    sentence-transformers folder or word vectors take the texts alone."""
    parameters = inspect.signature(function).parameters
    return all(name in parameters for name in names)


def encode_texts(encoder: TextEncoder, texts: Sequence[str], *, batch_size: int = 32, normalize: bool = True) -> np.ndarray:
    """``encoder.encode(texts)`` as float32 (n, dim), L2-normalized when ``normalize``."""
    texts = list(texts)
    if takes(encoder.encode, "batch_size", "normalize"):
        return np.asarray(encoder.encode(texts, batch_size=batch_size, normalize=normalize), dtype=np.float32)
    vectors = np.asarray(encoder.encode(texts), dtype=np.float32)
    if not texts:
        return vectors.reshape(0, encoder.dim)
    return l2_normalize(vectors).astype(np.float32) if normalize else vectors
