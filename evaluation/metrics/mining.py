"""Bitext mining (BUCC 2017/2018 protocol) with ratio-margin scoring (Artetxe & Schwenk, 2019), following
the reference implementation (LASER ``source/mine_bitexts.py`` + ``tasks/bucc/bucc.py``, also used by XTREME).

Score of a candidate pair (x, y), with NN_k(x) the k nearest targets of x by cosine and NN_k(y)
the k nearest sources of y (k is capped at the size of the other side, as LASER does)::

    margin(x, y) = cos(x, y) / ( sum_{z in NN_k(x)} cos(x, z) / 2k + sum_{z in NN_k(y)} cos(y, z) / 2k )

Candidate generation: the best-margin target of a source is searched among its k nearest targets by
cosine (``NN_k(x)``), not among all targets; likewise backward. Strategies (paper section 3.2):

* ``forward``: every source gets its best-margin target.
* ``backward``: every target gets its best-margin source.
* ``intersection``: pairs found in both directions (scored with the forward score).
* ``max`` (default; the strategy used for BUCC): the union of forward and backward candidates, taken
  greedily by decreasing score while keeping the mapping one-to-one.

Duplicate sentences (LASER ``--unify`` + ``bucc.py``): when texts are given, each side is reduced to its
distinct texts before the k-NN search (a repeated sentence is one point), and candidates whose sentence
(stripped of surrounding whitespace) occurs more than once on its side are dropped, since no single id
can be assigned to them; their gold pairs still count in the recall.

Threshold (``bucc.py`` ``BuccOptimize``): candidates are sorted by decreasing score; walking down the list,
F1 is computed after each candidate, and each time it strictly improves the threshold becomes the midpoint
between this candidate's score and the next one's (this candidate's own score when it is the last one).
It starts at 0 (so with no correct candidate every pair with score >= 0 is kept). Pairs with
score >= threshold are extracted. Precision = correct / extracted, recall = correct / gold pairs.
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


def _effective_k(k: int, available: int) -> int:
    if k < 1:
        raise ValueError(f"k must be >= 1; got {k}")
    if available < 1:
        raise ValueError("mining needs at least one sentence on each side; got an empty side")
    return min(k, available)


def knn_mean_similarity(similarity: np.ndarray, k: int) -> np.ndarray:
    """Mean of the min(k, m) largest values of each row of ``similarity`` (n, m) -> (n,)."""
    k = _effective_k(k, similarity.shape[1])
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
    """Row and column argmax (first index on ties) over *all* entries of a dense margin matrix (n, m).
    The BUCC protocol restricts the search to the k nearest neighbours: use :func:`best_matches`."""
    forward, backward = np.argmax(margin, axis=1), np.argmax(margin, axis=0)
    return BestMatches(forward, margin[np.arange(len(forward)), forward], backward, margin[backward, np.arange(len(backward))])


def _top_k(a: np.ndarray, b: np.ndarray, k: int, chunk_rows: int) -> tuple[np.ndarray, np.ndarray]:
    """Cosines and indices of the k nearest rows of ``b`` for every row of ``a`` (both normalised),
    ordered by decreasing cosine (lower index first on ties)."""
    sims, idx = np.empty((len(a), k)), np.empty((len(a), k), dtype=np.int64)
    for start in range(0, len(a), chunk_rows):
        block = a[start:start + chunk_rows] @ b.T
        m = block.shape[1]
        top = np.argpartition(block, m - k, axis=1)[:, m - k:] if k < m else np.tile(np.arange(m), (len(block), 1))
        top_sims = np.take_along_axis(block, top, axis=1)
        order = np.lexsort((top, -top_sims), axis=1)  # by decreasing cosine, then increasing index
        idx[start:start + len(block)] = np.take_along_axis(top, order, axis=1)
        sims[start:start + len(block)] = np.take_along_axis(top_sims, order, axis=1)
    return sims, idx


def best_matches(src: np.ndarray, tgt: np.ndarray, k: int = 4, chunk_rows: int = 128) -> BestMatches:
    """Best-margin target of each source among its k cosine-nearest targets, and best-margin source of
    each target among its k cosine-nearest sources (LASER ``mine_bitexts.py``: k-NN, then
    ``score_candidates``, then argmax; ties go to the nearer neighbour). Similarities are computed
    ``chunk_rows`` rows at a time, so the (n, m) matrix is never materialised."""
    if chunk_rows < 1:
        raise ValueError(f"chunk_rows must be >= 1; got {chunk_rows}")
    x, y = l2_normalize(src), l2_normalize(tgt)
    if x.shape[1] != y.shape[1]:
        raise ValueError(f"embedding dims differ: {x.shape[1]} vs {y.shape[1]}")
    x2y_sim, x2y_idx = _top_k(x, y, _effective_k(k, len(y)), chunk_rows)
    y2x_sim, y2x_idx = _top_k(y, x, _effective_k(k, len(x)), chunk_rows)
    x_mean, y_mean = x2y_sim.mean(axis=1), y2x_sim.mean(axis=1)
    result = []
    for sims, idx, own_mean, other_mean in ((x2y_sim, x2y_idx, x_mean, y_mean), (y2x_sim, y2x_idx, y_mean, x_mean)):
        scores = sims / ((own_mean[:, None] + other_mean[idx]) / 2.0)
        best = np.argmax(scores, axis=1)
        rows = np.arange(len(idx))
        result += [idx[rows, best], scores[rows, best]]
    return BestMatches(*result)


def extract_candidates(margin_or_best: np.ndarray | BestMatches, strategy: str = "max") -> list[Candidate]:
    """Candidate pairs with one of ``CANDIDATE_STRATEGIES``, from best matches (or a dense margin matrix,
    searched over all entries)."""
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
    """Threshold of LASER's ``BuccOptimize`` for ``scored_pairs`` ((src_id, tgt_id), score).

    Pairs sorted by decreasing score (stable); after each pair, if F1 of the pairs so far strictly beats
    the best F1, the threshold becomes (score + next score) / 2 (the score itself for the last pair,
    where LASER would fail). Equal scores are not special-cased, so a cut inside a run of ties gives a
    threshold equal to the tied score. Starts at 0.0 (returned when no pair is correct)."""
    if not gold:
        raise ValueError("gold must contain at least one pair; got none")
    ordered = sorted(scored_pairs, key=lambda item: -item[1])
    best_f1, threshold, correct = 0.0, 0.0, 0
    for rank, (pair, score) in enumerate(ordered):
        correct += pair in gold
        if correct:
            precision, recall = correct / (rank + 1), correct / len(gold)
            f1 = 2 * precision * recall / (precision + recall)
            if f1 > best_f1:
                best_f1 = f1
                threshold = (score + ordered[rank + 1][1]) / 2.0 if rank + 1 < len(ordered) else score
    return float(threshold)


def unify_texts(texts: Sequence[str]) -> tuple[list[int], list[str | None]]:
    """LASER's duplicate handling for one side. Returns (rows, names): ``rows`` holds the row of the first
    occurrence of each distinct text (in order of appearance), and ``names[u]`` is None when the text of
    ``rows[u]``, stripped, occurs more than once on the side (or the row's index as a string otherwise; the
    caller maps rows to ids)."""
    first_row: dict[str, int] = {}
    stripped_count: dict[str, int] = {}
    for row, text in enumerate(texts):
        first_row.setdefault(text, row)
        stripped_count[text.strip()] = stripped_count.get(text.strip(), 0) + 1
    rows = list(first_row.values())
    return rows, [None if stripped_count[texts[r].strip()] > 1 else str(r) for r in rows]


def mine_scored_pairs(
    src_ids: Sequence[str], src: np.ndarray, tgt_ids: Sequence[str], tgt: np.ndarray,
    k: int = 4, strategy: str = "max", src_texts: Sequence[str] | None = None, tgt_texts: Sequence[str] | None = None,
) -> list[tuple[tuple[str, str], float]]:
    """Margin-scored candidate pairs ((src_id, tgt_id), score) for one split.

    With ``src_texts`` and ``tgt_texts`` (the BUCC protocol), duplicate sentences are unified and
    candidates on repeated sentences dropped (see the module docstring); without them every row is a
    distinct point."""
    if len(src_ids) != len(src) or len(tgt_ids) != len(tgt):
        raise ValueError(f"ids and embeddings differ in length: {len(src_ids)}/{len(src)} and {len(tgt_ids)}/{len(tgt)}")
    if (src_texts is None) != (tgt_texts is None):
        raise ValueError("give texts for both sides or for neither")
    src, tgt = np.asarray(src), np.asarray(tgt)
    if src_texts is None:
        src_rows, tgt_rows = list(range(len(src_ids))), list(range(len(tgt_ids)))
        src_names, tgt_names = list(src_ids), list(tgt_ids)
    else:
        if len(src_texts) != len(src_ids) or len(tgt_texts) != len(tgt_ids):
            raise ValueError(f"texts and ids differ in length: {len(src_texts)}/{len(src_ids)} and {len(tgt_texts)}/{len(tgt_ids)}")
        src_rows, src_keep = unify_texts(src_texts)
        tgt_rows, tgt_keep = unify_texts(tgt_texts)
        src_names = [None if keep is None else src_ids[r] for r, keep in zip(src_rows, src_keep)]
        tgt_names = [None if keep is None else tgt_ids[r] for r, keep in zip(tgt_rows, tgt_keep)]
    candidates = extract_candidates(best_matches(src[src_rows], tgt[tgt_rows], k), strategy)
    scored: dict[tuple[str, str], float] = {}
    for c in candidates:
        s_name, t_name = src_names[c.src], tgt_names[c.tgt]
        if s_name is not None and t_name is not None:
            scored[(s_name, t_name)] = max(c.score, scored.get((s_name, t_name), c.score))
    return list(scored.items())


def bucc_f1(
    sample_pairs: Sequence[tuple[tuple, float]], sample_gold: set[tuple],
    test_pairs: Sequence[tuple[tuple, float]], test_gold: set[tuple],
) -> dict[str, float]:
    """Tune the threshold on the sample split, apply it to the test split (pairs with score >= threshold).
    Output: precision, recall, f1 (percent) on the test split and the threshold used."""
    threshold = optimal_threshold(sample_pairs, sample_gold)
    predicted = [pair for pair, score in test_pairs if score >= threshold]
    return {**precision_recall_f1(predicted, test_gold), "threshold": threshold}
