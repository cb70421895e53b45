"""Sentence-level quality estimation without references (WMT20 QE task 1 / MLQE-PE).

Model score = cosine(source embedding, translation embedding); metric = Pearson correlation with
the human direct-assessment scores (the ``z_mean`` column), times 100 (the task's official metric is
Pearson's r; we print it on the same 0-100 scale as the other tasks).
"""

from __future__ import annotations

import numpy as np
from scipy.stats import pearsonr

from interlingua.evaluation.metrics.similarity import paired_cosine


def qe_pearson(src: np.ndarray, mt: np.ndarray, human: np.ndarray) -> float:
    """100 * Pearson r between cosine(src_i, mt_i) and human scores (n,)."""
    human = np.asarray(human, dtype=np.float64)
    scores = paired_cosine(src, mt)
    if human.shape != scores.shape or len(human) < 2:
        raise ValueError(f"human scores must have shape {scores.shape} with at least 2 rows; got {human.shape}")
    return 100.0 * float(pearsonr(scores, human).statistic)
