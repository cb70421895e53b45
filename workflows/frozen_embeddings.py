"""Embeddings of a frozen encoder, computed once by the ``embed`` operator and cached on disk.

The cache (:class:`~interlingua.models.cache.CachedEncoder`, ``<state>/embedding-cache``) is keyed by the
encoder spec and the text, so training seeds, ablations and evaluations reuse the same vectors, and an
interrupted encoding resumes at the last finished chunk. Non-finite vectors are never used silently: the
caller gets the rows to reject (:func:`finite_rows`)."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Sequence

import numpy as np

from interlingua.models.cache import CachedEncoder


def frozen_encoder(spec: str, state: Path, address: str | None = None) -> CachedEncoder:
    """The cached, operator-backed encoder for ``spec`` (``use``, ``minilm``, a folder, ``models:/...``); Ray
    (``address``, else local) starts only when a text is not in the cache. MLflow is pointed at ``state``'s store
    first: ``models:/`` and ``runs:/`` name versions there, not in ``./mlflow.db``."""
    from interlingua.core.runtime import use_tracking_store
    from interlingua.operators.embed_encoder import OperatorEmbedEncoder

    use_tracking_store(state)
    return CachedEncoder(OperatorEmbedEncoder(spec, address=address), state / "embedding-cache")


def embed(encoder: CachedEncoder, texts: Sequence[str], *, chunk: int = 4000, label: str = "") -> np.ndarray:
    """Vectors of ``texts`` (duplicates encoded once), new ones in chunks of ``chunk`` texts."""
    from interlingua.operators.embed_encoder import encode_in_chunks

    unique = list(dict.fromkeys(texts))
    before = encoder.misses

    def progress(done: int, total: int) -> None:
        print(f"  embed {label or encoder.name}: {done}/{total} texts ({encoder.misses - before} newly encoded)",
              file=sys.stderr, flush=True)

    vectors = encode_in_chunks(encoder, unique, chunk, progress if len(unique) > chunk else None)
    index = {t: i for i, t in enumerate(unique)}
    return vectors[[index[t] for t in texts]] if len(texts) else vectors


def finite_rows(*arrays: np.ndarray) -> np.ndarray:
    """Boolean mask of rows finite in every array (NaN / inf embeddings are rejects, counted by the caller)."""
    mask = np.ones(len(arrays[0]), dtype=bool)
    for array in arrays:
        mask &= np.isfinite(array).all(axis=1)
    return mask
