"""Semantic textual similarity (SemEval STS / STS2017 protocol).

The model score of a pair is the cosine of the two embeddings; the metric is the Spearman rank
correlation (and the Pearson correlation) between model scores and gold scores, times 100, as in
Reimers & Gurevych (2020) and the SentEval/SimCSE evaluation ("all" setting over one file).
"""

from __future__ import annotations

import numpy as np
from scipy.stats import pearsonr, spearmanr

from interlingua.evaluation.metrics.similarity import paired_cosine


def sts_correlations(emb1: np.ndarray, emb2: np.ndarray, gold: np.ndarray) -> dict[str, float]:
    """Inputs: embeddings of first and second sentences (n, d) and gold scores (n,).
    Output: ``{"spearman": 100*rho, "pearson": 100*r}`` of cosine(emb1_i, emb2_i) vs gold."""
    gold = np.asarray(gold, dtype=np.float64)
    scores = paired_cosine(emb1, emb2)
    if gold.shape != scores.shape:
        raise ValueError(f"gold has shape {gold.shape}; expected {scores.shape} (one score per pair)")
    if len(gold) < 2:
        raise ValueError(f"STS needs at least 2 pairs; got {len(gold)}")
    return {
        "spearman": 100.0 * float(spearmanr(scores, gold).statistic),
        "pearson": 100.0 * float(pearsonr(scores, gold).statistic),
    }
