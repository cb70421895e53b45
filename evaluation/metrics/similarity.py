"""Cosine similarity helpers shared by the metrics."""

from __future__ import annotations

import numpy as np


def l2_normalize(x: np.ndarray, eps: float = 1e-12) -> np.ndarray:
    """Rows of ``x`` (n, d) divided by their L2 norm (rows of norm 0 stay 0)."""
    x = np.asarray(x, dtype=np.float64)
    if x.ndim != 2:
        raise ValueError(f"embeddings must be a 2-D array (n, dim); got shape {x.shape}")
    norms = np.linalg.norm(x, axis=1, keepdims=True)
    return x / np.maximum(norms, eps)


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
