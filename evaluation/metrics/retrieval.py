"""Bitext retrieval (Tatoeba protocol, Artetxe & Schwenk 2019 / XTREME).

For every source sentence the nearest target sentence by cosine is retrieved among all targets;
it is correct when it is the aligned sentence (same index). Accuracy is reported in each direction
(src->tgt, tgt->src) and their average, times 100. Ties go to the lowest index (``np.argmax``).
"""

from __future__ import annotations

import numpy as np

from interlingua.evaluation.metrics.similarity import cosine_matrix


def nearest_neighbour_accuracy(queries: np.ndarray, candidates: np.ndarray) -> float:
    """Percentage of rows i of ``queries`` whose cosine nearest row of ``candidates`` is row i.
    Requires as many candidates as queries (aligned by index)."""
    if len(queries) != len(candidates):
        raise ValueError(f"retrieval needs aligned rows; got {len(queries)} queries and {len(candidates)} candidates")
    if len(queries) == 0:
        raise ValueError("retrieval needs at least one pair; got 0")
    nearest = np.argmax(cosine_matrix(queries, candidates), axis=1)
    return 100.0 * float(np.mean(nearest == np.arange(len(queries))))


def bitext_retrieval_accuracy(src: np.ndarray, tgt: np.ndarray) -> dict[str, float]:
    """Tatoeba accuracy: ``{"src2tgt", "tgt2src", "average"}`` in percent for aligned (n, d) arrays."""
    forward = nearest_neighbour_accuracy(src, tgt)
    backward = nearest_neighbour_accuracy(tgt, src)
    return {"src2tgt": forward, "tgt2src": backward, "average": (forward + backward) / 2.0}
