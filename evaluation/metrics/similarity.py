"""Cosine similarity helpers shared by the metrics."""

from __future__ import annotations

import numpy as np

from interlingua.models.protocol import l2_normalize

__all__ = ["cosine_matrix", "l2_normalize"]


def cosine_matrix(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """All-pairs cosine similarity: (n, d) x (m, d) -> (n, m), float64."""
    a_n, b_n = l2_normalize(a), l2_normalize(b)
    if a_n.shape[1] != b_n.shape[1]:
        raise ValueError(f"embedding dims differ: {a_n.shape[1]} vs {b_n.shape[1]}")
    return a_n @ b_n.T


def paired_cosine(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Row-wise cosine of aligned pairs: (n, d), (n, d) -> (n,)."""
    a_n, b_n = l2_normalize(a), l2_normalize(b)
    if a_n.shape != b_n.shape:
        raise ValueError(f"paired embeddings must have the same shape; got {a_n.shape} and {b_n.shape}")
    return np.sum(a_n * b_n, axis=1)
