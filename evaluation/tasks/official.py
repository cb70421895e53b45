"""Tasks over the official benchmark files (loaded with ``interlingua.evaluation.data``): embed the
texts with an encoder and apply the protocol's metric. Each returns {metric: value}."""

from __future__ import annotations

from typing import Mapping

import numpy as np

from interlingua.evaluation.data.records import LabelledPairs, LabelledTexts, MiningSplit, ParallelTexts, ScoredPairs
from interlingua.models.protocol import TextEncoder
from interlingua.evaluation.metrics.alignment_uniformity import alignment_uniformity
from interlingua.evaluation.metrics.clustering import kmeans_clustering_accuracy
from interlingua.evaluation.metrics.mining import bucc_f1, mine_scored_pairs
from interlingua.evaluation.metrics.quality_estimation import qe_pearson
from interlingua.evaluation.metrics.retrieval import bitext_retrieval_accuracy
from interlingua.evaluation.metrics.sts import sts_correlations
from interlingua.evaluation.metrics.transfer import pair_features, zero_shot_transfer_accuracy


def sts_task(data: ScoredPairs, encoder: TextEncoder) -> dict[str, float]:
    return sts_correlations(encoder.encode(data.first), encoder.encode(data.second), np.asarray(data.scores))


def tatoeba_task(data: ParallelTexts, encoder: TextEncoder) -> dict[str, float]:
    """Accuracy each direction and average, plus alignment/uniformity of the translation pairs."""
    source, target = encoder.encode(data.source), encoder.encode(data.target)
    return {**bitext_retrieval_accuracy(source, target), **alignment_uniformity(source, target)}


def bucc_task(sample: MiningSplit, test: MiningSplit, encoder: TextEncoder, k: int = 4, strategy: str = "max") -> dict[str, float]:
    """Threshold tuned on ``sample`` (e.g. BUCC 'sample'), F1 on ``test`` (e.g. BUCC 'training').
    Duplicate sentences are unified as in LASER (see ``metrics.mining``)."""
    scored = [mine_scored_pairs(s.source_ids, encoder.encode(s.source_texts), s.target_ids, encoder.encode(s.target_texts), k, strategy,
                                src_texts=s.source_texts, tgt_texts=s.target_texts)
              for s in (sample, test)]
    return bucc_f1(scored[0], sample.gold, scored[1], test.gold)


def clustering_task(data: LabelledTexts, encoder: TextEncoder, seed: int = 0, runs: int = 3) -> dict[str, float]:
    return {"accuracy": kmeans_clustering_accuracy(encoder.encode(data.texts), data.labels, seed=seed, runs=runs)}


def qe_task(data: ScoredPairs, encoder: TextEncoder) -> dict[str, float]:
    return {"pearson": qe_pearson(encoder.encode(data.first), encoder.encode(data.second), np.asarray(data.scores))}


def _features(data: LabelledTexts | LabelledPairs, encoder: TextEncoder) -> tuple[np.ndarray, np.ndarray]:
    if isinstance(data, LabelledPairs):
        return pair_features(encoder.encode(data.first), encoder.encode(data.second)), np.asarray(data.labels)
    return np.asarray(encoder.encode(data.texts), dtype=np.float64), np.asarray(data.labels)


def transfer_task(train: LabelledTexts | LabelledPairs, dev: Mapping[str, LabelledTexts | LabelledPairs],
                  test: Mapping[str, LabelledTexts | LabelledPairs], encoder: TextEncoder, seed: int = 0) -> dict[str, float]:
    """Zero-shot transfer (MLDoc, MARC: single texts; XNLI, PAWS-X, QAM: pairs): English ``train``,
    C selected on the union of the ``dev`` sets given (the official suite gives every language's dev set, English's included),
    accuracy on each ``test`` language."""
    train_x, train_y = _features(train, encoder)
    return zero_shot_transfer_accuracy(train_x, train_y, {k: _features(v, encoder) for k, v in dev.items()},
                                       {k: _features(v, encoder) for k, v in test.items()}, seed=seed)
