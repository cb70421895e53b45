"""Closed-form baselines over frozen embeddings (fitted on training pairs only).

* per-language mean centering (Libovický et al. 2020; the raw-vs-centered rows of Tiyajamorn et al. 2021):
  subtract each language's mean training embedding;
* least-squares linear map (Mikolov et al. 2013): W = argmin_W ‖X W − Y‖_F, X, Y the aligned rows
  (``numpy.linalg.lstsq``); with Y English this is the paper's "projection to English";
* orthogonal Procrustes (Schönemann 1966; Xing et al. 2015): W = U Vᵀ with U Σ Vᵀ = SVD(Xᵀ Y), the
  orthogonal W minimizing ‖X W − Y‖_F.
"""

from __future__ import annotations

import numpy as np


def _aligned(x: np.ndarray, y: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    x, y = np.asarray(x, dtype=np.float64), np.asarray(y, dtype=np.float64)
    if x.ndim != 2 or y.ndim != 2 or len(x) != len(y):
        raise ValueError(f"need aligned 2-D arrays with one row per pair; got {x.shape} and {y.shape}")
    if len(x) == 0:
        raise ValueError("need at least one pair to fit a map; got 0")
    if not (np.isfinite(x).all() and np.isfinite(y).all()):
        raise ValueError("embeddings hold NaN or inf; reject those pairs before fitting")
    return x, y


def language_means(vectors: np.ndarray, languages) -> dict[str, np.ndarray]:
    """language -> mean of its rows of ``vectors`` (float64)."""
    languages = np.asarray(languages)
    vectors = np.asarray(vectors, dtype=np.float64)
    if len(vectors) != len(languages):
        raise ValueError(f"one language per row needed; got {len(vectors)} rows and {len(languages)} languages")
    return {str(lang): vectors[languages == lang].mean(axis=0) for lang in np.unique(languages)}


def least_squares_map(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """W (d_x, d_y) minimizing ‖x W − y‖_F (minimum-norm solution when x is rank deficient)."""
    x, y = _aligned(x, y)
    return np.linalg.lstsq(x, y, rcond=None)[0]


def procrustes_map(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Orthogonal W (d, d) minimizing ‖x W − y‖_F; x and y must share their dimension."""
    x, y = _aligned(x, y)
    if x.shape[1] != y.shape[1]:
        raise ValueError(f"Procrustes maps between equal dimensions; got {x.shape[1]} and {y.shape[1]}")
    u, _, vt = np.linalg.svd(x.T @ y)
    return u @ vt
