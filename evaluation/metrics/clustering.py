"""Short-text clustering (MewsC-16 protocol of Nishikawa et al. 2022, after Zhang et al. 2021).

K-means with k = number of distinct gold labels; the clustering is scored by accuracy after the
best one-to-one mapping of clusters to labels (Hungarian algorithm on the contingency table,
``scipy.optimize.linear_sum_assignment``); reported as the mean over runs (3 by default) in percent.
"""

from __future__ import annotations

from typing import Sequence

import numpy as np
from scipy.optimize import linear_sum_assignment


def hungarian_accuracy(gold: Sequence, predicted: Sequence) -> float:
    """Percentage of items correctly labelled under the best one-to-one cluster->label map."""
    gold, predicted = np.asarray(gold), np.asarray(predicted)
    if gold.shape != predicted.shape or gold.ndim != 1 or len(gold) == 0:
        raise ValueError(f"gold and predicted must be equal-length non-empty 1-D; got {gold.shape} and {predicted.shape}")
    gold_values, gold_idx = np.unique(gold, return_inverse=True)
    pred_values, pred_idx = np.unique(predicted, return_inverse=True)
    contingency = np.zeros((len(pred_values), len(gold_values)), dtype=np.int64)
    np.add.at(contingency, (pred_idx, gold_idx), 1)
    rows, cols = linear_sum_assignment(contingency, maximize=True)
    return 100.0 * contingency[rows, cols].sum() / len(gold)


def kmeans_clustering_accuracy(
    embeddings: np.ndarray, labels: Sequence, seed: int = 0, runs: int = 3, n_init: int = 10,
) -> float:
    """Mean Hungarian accuracy (percent) of ``runs`` K-means runs (random_state seed, seed+1, ...)
    with k = number of distinct labels on raw embeddings (n, d)."""
    from sklearn.cluster import KMeans

    if runs < 1:
        raise ValueError(f"runs must be >= 1; got {runs}")
    labels = np.asarray(labels)
    if len(labels) != len(embeddings):
        raise ValueError(f"{len(labels)} labels for {len(embeddings)} embeddings")
    n_clusters = len(np.unique(labels))
    scores = []
    for run in range(runs):
        kmeans = KMeans(n_clusters=n_clusters, random_state=seed + run, n_init=n_init)
        scores.append(hungarian_accuracy(labels, kmeans.fit_predict(np.asarray(embeddings, dtype=np.float64))))
    return float(np.mean(scores))
