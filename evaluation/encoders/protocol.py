"""The one interface the evaluation tasks need from an encoder."""

from __future__ import annotations

from typing import Protocol, Sequence, runtime_checkable

import numpy as np


@runtime_checkable
class TextEncoder(Protocol):
    """``encode(texts)`` returns a float array (len(texts), dim); ``name`` identifies the encoder
    (it keys the embedding cache, so two different encoders must not share it)."""

    name: str

    def encode(self, texts: Sequence[str]) -> np.ndarray: ...
