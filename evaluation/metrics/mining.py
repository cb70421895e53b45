"""Bitext mining (BUCC 2017/2018 protocol) with ratio-margin scoring (Artetxe & Schwenk, 2019).

Score of a candidate pair (x, y), with NN_k(x) the k nearest targets of x by cosine and NN_k(y)
the k nearest sources of y::

    margin(x, y) = cos(x, y) / ( sum_{z in NN_k(x)} cos(x, z) / 2k + sum_{z in NN_k(y)} cos(y, z) / 2k )

Candidate extraction (paper section 3.2), all over the full target/source sets:

* ``forward``: every source gets its best-margin target.
* ``backward``: every target gets its best-margin source.
* ``intersection``: pairs found in both directions.
* ``max`` (default; the strategy the paper retains for BUCC): the union of forward and backward
  candidates, taken greedily by decreasing score while keeping the mapping one-to-one.

The decision threshold is tuned on the ``sample`` split to maximise F1 (candidates sorted by score;
the threshold is the midpoint between the last kept and the next score) and applied unchanged to
the other split. Precision = correct / extracted, recall = correct / gold pairs, in percent.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Iterable, Sequence

import numpy as np

from interlingua.evaluation.metrics.similarity import cosine_matrix, l2_normalize

CANDIDATE_STRATEGIES = ("forward", "backward", "intersection", "max")


@dataclass(frozen=True)
class Candidate:
    """A mined pair: row in the source set, row in the target set, its margin score."""

    src: int
    tgt: int
    score: float


def knn_mean_similarity(similarity: np.ndarray, k: int) -> np.ndarray:
    """Mean of the k largest values of each row of ``similarity`` (n, m) -> (n,)."""
    if not 1 <= k <= similarity.shape[1]:
        raise ValueError(f"k must be in [1, {similarity.shape[1]}] (the number of neighbours available); got {k}")
    top_k = np.partition(similarity, similarity.shape[1] - k, axis=1)[:, -k:]
    return top_k.mean(axis=1)


def ratio_margin_matrix(src: np.ndarray, tgt: np.ndarray, k: int = 4) -> np.ndarray:
    """Ratio-margin score of every (source, target) pair: (n, d), (m, d) -> (n, m)."""
    cos = cosine_matrix(src, tgt)
    src_knn = knn_mean_similarity(cos, k)      # over NN_k(x) among targets
    tgt_knn = knn_mean_similarity(cos.T, k)    # over NN_k(y) among sources
    return cos / ((src_knn[:, None] + tgt_knn[None, :]) / 2.0)


@dataclass(frozen=True)
class BestMatches:
    """Best-margin target of every source (``forward``) and best-margin source of every target (``backward``)."""

    forward_index: np.ndarray
    forward_score: np.ndarray
    backward_index: np.ndarray
    backward_score: np.ndarray


def best_matches_from_matrix(margin: np.ndarray) -> BestMatches:
    """Row and column argmax (first index on ties) of a dense margin matrix (n, m)."""
    forward, backward = np.argmax(margin, axis=1), np.argmax(margin, axis=0)
    return BestMatches(forward, margin[np.arange(len(forward)), forward], backward, margin[backward, np.arange(len(backward))])


def best_matches(src: np.ndarray, tgt: np.ndarray, k: int = 4, chunk_rows: int = 512) -> BestMatches:
    """Same as ``best_matches_from_matrix(ratio_margin_matrix(src, tgt, k))`` without materialising the
    (n, m) matrix: similarities are computed ``chunk_rows`` rows at a time (BUCC-sized sets)."""
    if chunk_rows < 1:
        raise ValueError(f"chunk_rows must be >= 1; got {chunk_rows}")
    x, y = l2_normalize(src), l2_normalize(tgt)
    if x.shape[1] != y.shape[1]:
        raise ValueError(f"embedding dims differ: {x.shape[1]} vs {y.shape[1]}")
    chunks = lambda n: (slice(i, min(i + chunk_rows, n)) for i in range(0, n, chunk_rows))
    x_knn = np.concatenate([knn_mean_similarity(x[c] @ y.T, k) for c in chunks(len(x))])
    y_knn = np.concatenate([knn_mean_similarity(y[c] @ x.T, k) for c in chunks(len(y))])
    result = []
    for a, b, a_knn, b_knn in ((x, y, x_knn, y_knn), (y, x, y_knn, x_knn)):
        index, score = np.empty(len(a), dtype=np.int64), np.empty(len(a))
        for c in chunks(len(a)):
            margin = (a[c] @ b.T) / ((a_knn[c][:, None] + b_knn[None, :]) / 2.0)
            index[c] = np.argmax(margin, axis=1)
            score[c] = margin[np.arange(len(index[c])), index[c]]
        result += [index, score]
    return BestMatches(*result)


def extract_candidates(margin_or_best: np.ndarray | BestMatches, strategy: str = "max") -> list[Candidate]:
    """Candidate pairs with one of ``CANDIDATE_STRATEGIES``, from a margin matrix (n, m) or its best matches."""
    if strategy not in CANDIDATE_STRATEGIES:
        raise ValueError(f"strategy must be one of {CANDIDATE_STRATEGIES}; got {strategy!r}")
    best = margin_or_best if isinstance(margin_or_best, BestMatches) else best_matches_from_matrix(margin_or_best)
    forward = [Candidate(i, int(j), float(s)) for i, (j, s) in enumerate(zip(best.forward_index, best.forward_score))]
    backward = [Candidate(int(i), j, float(s)) for j, (i, s) in enumerate(zip(best.backward_index, best.backward_score))]
    if strategy == "forward":
        return forward
    if strategy == "backward":
        return backward
    if strategy == "intersection":
        backward_pairs = {(c.src, c.tgt) for c in backward}
        return [c for c in forward if (c.src, c.tgt) in backward_pairs]
    kept: list[Candidate] = []
    used_src: set[int] = set()
    used_tgt: set[int] = set()
    for cand in sorted(forward + backward, key=lambda c: -c.score):  # stable: forward first on equal scores
        if cand.src not in used_src and cand.tgt not in used_tgt:
            kept.append(cand)
            used_src.add(cand.src)
            used_tgt.add(cand.tgt)
    return kept


def precision_recall_f1(predicted: Iterable[tuple], gold: set[tuple]) -> dict[str, float]:
    """Precision, recall, F1 in percent of a predicted set of pairs against gold pairs."""
    predicted = set(predicted)
    if not gold:
        raise ValueError("gold must contain at least one pair; got none")
    correct = len(predicted & gold)
    precision = correct / len(predicted) if predicted else 0.0
    recall = correct / len(gold)
    f1 = 2 * precision * recall / (precision + recall) if correct else 0.0
    return {"precision": 100.0 * precision, "recall": 100.0 * recall, "f1": 100.0 * f1}


def optimal_threshold(scored_pairs: Sequence[tuple[tuple, float]], gold: set[tuple]) -> float:
    """Threshold maximising F1 when pairs with score >= threshold are kept.

    ``scored_pairs`` are ((src_id, tgt_id), score). Cuts are only placed between distinct scores;
    the threshold is the midpoint between the last kept score and the next one (the last score
    itself when everything is kept). With no correct candidate, returns +inf (extract nothing)."""
    if not gold:
        raise ValueError("gold must contain at least one pair; got none")
    ordered = sorted(scored_pairs, key=lambda item: -item[1])
    best_f1, threshold, correct = 0.0, float("inf"), 0
    for rank, (pair, score) in enumerate(ordered):
        correct += pair in gold
        next_score = ordered[rank + 1][1] if rank + 1 < len(ordered) else None
        if next_score is not None and next_score == score:
            continue  # cannot cut between equal scores
        if correct:
            precision, recall = correct / (rank + 1), correct / len(gold)
            f1 = 2 * precision * recall / (precision + recall)
            if f1 > best_f1:
                best_f1 = f1
                threshold = score if next_score is None else (score + next_score) / 2.0
    return threshold


def mine_scored_pairs(
    src_ids: Sequence[str], src: np.ndarray, tgt_ids: Sequence[str], tgt: np.ndarray,
    k: int = 4, strategy: str = "max",
) -> list[tuple[tuple[str, str], float]]:
    """Margin-scored candidate pairs ((src_id, tgt_id), score) for one split."""
    if len(src_ids) != len(src) or len(tgt_ids) != len(tgt):
        raise ValueError(f"ids and embeddings differ in length: {len(src_ids)}/{len(src)} and {len(tgt_ids)}/{len(tgt)}")
    candidates = extract_candidates(best_matches(src, tgt, k), strategy)
    return [((src_ids[c.src], tgt_ids[c.tgt]), c.score) for c in candidates]


def bucc_f1(
    sample_pairs: Sequence[tuple[tuple, float]], sample_gold: set[tuple],
    test_pairs: Sequence[tuple[tuple, float]], test_gold: set[tuple],
) -> dict[str, float]:
    """Tune the threshold on the sample split, apply it to the test split.
    Output: precision, recall, f1 (percent) on the test split and the threshold used."""
    threshold = optimal_threshold(sample_pairs, sample_gold)
    predicted = [pair for pair, score in test_pairs if score >= threshold]
    return {**precision_recall_f1(predicted, test_gold), "threshold": threshold}
