"""Precision@k of cross-lingual sentence retrieval with cosine or CSLS scores (ABSent's metric).

Query i is correct at k when its aligned candidate (row i) is among its k best-scored candidates. Ties go
to the lower index, as in the Tatoeba metric (``np.argmax``): P@1 with cosine equals nearest-neighbour
accuracy, and a collapsed encoder (every score equal) scores 1/n, not 100 %.
CSLS (Conneau et al. 2018, "Word translation without parallel data"):

    CSLS(x, y) = 2 cos(x, y) − r_Y(x) − r_X(y),   r_Y(x) = mean cos of x to its k nearest candidates y,
                                                   r_X(y) = mean cos of y to its k nearest queries x,

which lowers the scores of "hub" candidates close to many queries (k = 10 by default, as in MUSE).
"""

from __future__ import annotations

from typing import Sequence

import numpy as np

from interlingua.evaluation.metrics.mining import knn_mean_similarity
from interlingua.evaluation.metrics.similarity import cosine_matrix

SCORINGS = ("cosine", "csls")


def csls_matrix(queries: np.ndarray, candidates: np.ndarray, k: int = 10) -> np.ndarray:
    """CSLS score of every (query, candidate) pair: (n, d), (m, d) -> (n, m)."""
    cos = cosine_matrix(queries, candidates)
    return 2.0 * cos - knn_mean_similarity(cos, k)[:, None] - knn_mean_similarity(cos.T, k)[None, :]


def precision_at_k(queries: np.ndarray, candidates: np.ndarray, ks: Sequence[int] = (1, 5),
                   scoring: str = "cosine", csls_k: int = 10) -> dict[int, float]:
    """{k: percent of queries whose aligned candidate ranks in the top k}; rows aligned by index."""
    if len(queries) != len(candidates) or len(queries) == 0:
        raise ValueError(f"need aligned, non-empty queries and candidates; got {len(queries)} and {len(candidates)}")
    if scoring not in SCORINGS:
        raise ValueError(f"scoring must be one of {SCORINGS}; got {scoring!r}")
    scores = cosine_matrix(queries, candidates) if scoring == "cosine" else csls_matrix(queries, candidates, csls_k)
    gold = scores[np.arange(len(scores)), np.arange(len(scores))]
    column = np.arange(scores.shape[1])[None, :]
    ahead = (scores > gold[:, None]) | ((scores == gold[:, None]) & (column < np.arange(len(scores))[:, None]))
    rank = ahead.sum(axis=1)  # candidates ranked above the aligned one: scored higher, or equal at a lower index
    return {k: 100.0 * float(np.mean(rank < k)) for k in ks}
