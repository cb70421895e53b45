"""Encoders the product trains, loaded through the trainers' ``load_encoder(uri)`` (a ``models:/NAME@ALIAS``
registry URI, a local/fsspec folder or an HF id), imported lazily."""

from __future__ import annotations

from typing import Sequence

import numpy as np


class ProductEncoder:
    """Adapter: ``interlingua.trainers.encoders.load.load_encoder(uri).encode(texts, batch_size=...)``."""

    def __init__(self, uri: str, batch_size: int = 32):
        from interlingua.trainers.encoders.load import load_encoder

        self.name, self.batch_size = uri, batch_size
        self._model = load_encoder(uri)

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        return np.asarray(self._model.encode(list(texts), batch_size=self.batch_size), dtype=np.float32)
