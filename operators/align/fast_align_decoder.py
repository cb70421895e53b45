"""Directional Viterbi alignment under fast_align's model, vectorized over a batch of sentences.

fast_align (Dyer, Chahuneau & Smith 2013, "A Simple, Fast, and Effective Reparameterization of IBM
Model 2") predicts each target word f_j (j = 1..m) from one source position a_j in {0 (NULL), 1..n}:

    p(a_j = 0)       = p0                                     (``prob_align_null``, 0.08)
    p(a_j = i > 0)   = (1 - p0) * exp(lambda * h(i, j, m, n)) / Z_lambda(j, m, n)
    h(i, j, m, n)    = -| i / n - j / m |
    p(f_j, a_j = i)  = p(a_j = i) * t(f_j | e_i)              (e_0 is the NULL word)

``Z`` is the closed-form geometric sum of fast_align's ``DiagonalAlignment::ComputeZ``; the prior is computed with
libm's ``exp`` and ``pow`` in fast_align's order of operations (:mod:`~interlingua.operators.align.diagonal_prior`),
so equal scores are equal here too. Without
``favor_diagonal`` the prior is uniform, 1 / (n + 1) (1 / n without the NULL word). Because the
alignment links are independent given the sentence, the best alignment is, for each target word,
the argmax over positions; as in fast_align's output loop ties go to the earlier position, NULL
first, and a target word whose argmax is NULL gets no link.

The ``reverse`` model is the same model with the roles of the two languages swapped; its links are
returned flipped back to (source, target) order, exactly as ``fast_align -r`` prints them.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from interlingua.operators.align.diagonal_prior import libm_exp, partitions
from interlingua.operators.align.lexical_table import UNKNOWN_ID, LexicalTable
from interlingua.operators.align.pharaoh import Link

#: Upper bound on (sentence, target word, source position) cells evaluated at once.
_MAX_CELLS_PER_CHUNK = 2_000_000


@dataclass(frozen=True)
class DirectionalModel:
    """One direction of fast_align: the table t(predicted | conditioning) and the prior's settings."""

    table: LexicalTable
    tension: float = 4.0
    favor_diagonal: bool = True
    prob_align_null: float = 0.08
    use_null: bool = True

    def __post_init__(self) -> None:
        if not self.tension > 0:
            raise ValueError(f"tension must be > 0, got {self.tension}")
        if not 0.0 <= self.prob_align_null < 1.0:
            raise ValueError(f"prob_align_null must be in [0, 1), got {self.prob_align_null}")


def diagonal_partition(j: np.ndarray, m: np.ndarray, n: np.ndarray, tension: float) -> np.ndarray:
    """fast_align's ``ComputeZ``: sum over i = 1..n of exp(tension * h(i, j, m, n)), closed form, with libm's exp and
    pow (:func:`~interlingua.operators.align.diagonal_prior.partition`).

    ``j`` is 1-based. All arguments broadcast; returns float64.
    """
    return partitions(j, m, n, tension)


def decode_directional(
    model: DirectionalModel,
    conditioning: Sequence[np.ndarray],
    predicted: Sequence[np.ndarray],
) -> list[list[tuple[int, int]]]:
    """Best alignment of each sentence pair: links ``(conditioning index, predicted index)``, 0-based.

    ``conditioning[s]`` / ``predicted[s]`` are word-id arrays (ids of ``model.table``). A pair with
    an empty side has no links.
    """
    if len(conditioning) != len(predicted):
        raise ValueError(f"conditioning has {len(conditioning)} sentences but predicted has {len(predicted)}")
    results: list[list[tuple[int, int]]] = [[] for _ in conditioning]
    chunk: list[int] = []
    cells = 0
    for s, (cond, pred) in enumerate(zip(conditioning, predicted)):
        if len(cond) == 0 or len(pred) == 0:
            continue
        chunk.append(s)
        cells += len(pred) * (len(cond) + 1)
        if cells >= _MAX_CELLS_PER_CHUNK:
            _decode_chunk(model, conditioning, predicted, chunk, results)
            chunk, cells = [], 0
    if chunk:
        _decode_chunk(model, conditioning, predicted, chunk, results)
    return results


def _decode_chunk(model, conditioning, predicted, chunk: list[int], results) -> None:
    n = np.array([len(conditioning[s]) for s in chunk], dtype=np.int64)
    m = np.array([len(predicted[s]) for s in chunk], dtype=np.int64)
    cond_flat = np.concatenate([conditioning[s] for s in chunk]).astype(np.int64)
    pred_flat = np.concatenate([predicted[s] for s in chunk]).astype(np.int64)
    cond_start = np.concatenate(([0], np.cumsum(n)[:-1]))
    pred_start = np.concatenate(([0], np.cumsum(m)[:-1]))

    # One segment per (sentence, target word); each segment has n + 1 cells: NULL, then 1..n.
    seg_sentence = np.repeat(np.arange(len(chunk)), m)
    seg_j = np.arange(seg_sentence.size) - np.repeat(pred_start, m)  # 0-based target index
    seg_len = n[seg_sentence] + 1
    seg_start = np.concatenate(([0], np.cumsum(seg_len)[:-1]))
    cell_seg = np.repeat(np.arange(seg_sentence.size), seg_len)
    cell_i = np.arange(cell_seg.size) - seg_start[cell_seg]  # 0 = NULL, else 1-based source index
    cell_sentence = seg_sentence[cell_seg]
    cell_n = n[cell_sentence]
    cell_m = m[cell_sentence]
    cell_j1 = seg_j[cell_seg] + 1

    null_id = model.table.null_id if model.use_null else UNKNOWN_ID
    source_pos = cond_start[cell_sentence] + np.maximum(cell_i - 1, 0)
    e_ids = np.where(cell_i == 0, null_id, cond_flat[source_pos])
    f_ids = pred_flat[pred_start[cell_sentence] + cell_j1 - 1]
    translation = model.table.lookup(e_ids, f_ids)

    seg_z = None
    if model.favor_diagonal:
        seg_n, seg_m = n[seg_sentence], m[seg_sentence]
        seg_z = diagonal_partition(seg_j + 1, seg_m, seg_n, model.tension)[cell_seg]
    prior = _alignment_prior(model, cell_i, cell_j1, cell_m, cell_n, seg_z)
    scores = translation * prior
    if not model.use_null:
        scores = np.where(cell_i == 0, -1.0, scores)

    best = np.maximum.reduceat(scores, seg_start)
    is_best = scores == best[cell_seg]
    first_best = np.minimum.reduceat(np.where(is_best, cell_i, np.iinfo(np.int64).max), seg_start)
    for seg in np.flatnonzero(first_best > 0):
        s = chunk[seg_sentence[seg]]
        results[s].append((int(first_best[seg]) - 1, int(seg_j[seg])))


def _alignment_prior(model: DirectionalModel, i, j1, m, n, z: np.ndarray | None) -> np.ndarray:
    """p(a_j = i) per cell; ``z`` is the diagonal partition of each cell's (sentence, j)."""
    if not model.favor_diagonal:
        return 1.0 / (n + (1.0 if model.use_null else 0.0))
    p0 = model.prob_align_null if model.use_null else 0.0
    diagonal = libm_exp(-model.tension * np.abs(i / n - j1 / m)) / (z / (1.0 - p0))
    return np.where(i == 0, p0, diagonal)


def to_ids(table: LexicalTable, sentences: Sequence[Sequence[str]], ids: dict[str, int] | None = None) -> list[np.ndarray]:
    """Token lists -> id arrays under ``table``'s vocabulary (unknown words get id 0)."""
    vocabulary = ids if ids is not None else table.word_ids
    return [np.fromiter((vocabulary.get(token, UNKNOWN_ID) for token in sentence), dtype=np.int64, count=len(sentence)) for sentence in sentences]


def flip(links: list[Link]) -> list[Link]:
    """(predicted, conditioning) order <-> (conditioning, predicted) order."""
    return [(b, a) for a, b in links]
