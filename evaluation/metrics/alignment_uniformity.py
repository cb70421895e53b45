"""Alignment and uniformity of embeddings (Wang & Isola, 2020), on L2-normalised embeddings.

alignment  = E_{(x, y) positive} ||f(x) - f(y)||^alpha, alpha = 2 (lower is better)
uniformity = log E_{x, y i.i.d.} exp(-t ||f(x) - f(y)||^2), t = 2, over distinct pairs (i < j) of a
             set (lower is better). For positive pairs (u, v) we report the mean of the two sides'
             uniformities, as in the paper's combined loss.
"""

from __future__ import annotations

import numpy as np
from scipy.spatial.distance import pdist

from interlingua.evaluation.metrics.similarity import l2_normalize


def alignment(u: np.ndarray, v: np.ndarray, alpha: float = 2.0) -> float:
    """Mean ||u_i - v_i||^alpha over positive pairs of normalised embeddings (n, d)."""
    u_n, v_n = l2_normalize(u), l2_normalize(v)
    if u_n.shape != v_n.shape:
        raise ValueError(f"positive pairs must have the same shape; got {u_n.shape} and {v_n.shape}")
    return float(np.mean(np.linalg.norm(u_n - v_n, axis=1) ** alpha))


def uniformity(x: np.ndarray, t: float = 2.0) -> float:
    """log of mean exp(-t ||x_i - x_j||^2) over pairs i < j of normalised embeddings (n >= 2)."""
    x_n = l2_normalize(x)
    if len(x_n) < 2:
        raise ValueError(f"uniformity needs at least 2 embeddings; got {len(x_n)}")
    return float(np.log(np.mean(np.exp(-t * pdist(x_n, "sqeuclidean")))))


def alignment_uniformity(u: np.ndarray, v: np.ndarray, alpha: float = 2.0, t: float = 2.0) -> dict[str, float]:
    """``{"alignment": ..., "uniformity": (uniformity(u) + uniformity(v)) / 2}`` for positive pairs."""
    return {"alignment": alignment(u, v, alpha), "uniformity": (uniformity(u, t) + uniformity(v, t)) / 2.0}
