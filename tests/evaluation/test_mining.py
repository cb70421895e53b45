"""Ratio margin vs a brute-force loop over the paper's formula; candidate strategies; threshold tuning; F1."""

import numpy as np
import pytest

from interlingua.evaluation.metrics.mining import (
    bucc_f1, extract_candidates, mine_scored_pairs, optimal_threshold, precision_recall_f1, ratio_margin_matrix)


def _cos(a, b):
    return float(a @ b / np.linalg.norm(a) / np.linalg.norm(b))


def _brute_margin(x, y, k):
    out = np.zeros((len(x), len(y)))
    for i, xi in enumerate(x):
        nn_x = sorted((_cos(xi, z) for z in y), reverse=True)[:k]
        for j, yj in enumerate(y):
            nn_y = sorted((_cos(yj, z) for z in x), reverse=True)[:k]
            out[i, j] = _cos(xi, yj) / (sum(nn_x) / (2 * k) + sum(nn_y) / (2 * k))
    return out


@pytest.mark.parametrize("k", [1, 2, 4])
def test_ratio_margin_equals_brute_force(k):
    rng = np.random.default_rng(k)
    x, y = rng.normal(size=(7, 5)), rng.normal(size=(9, 5))
    np.testing.assert_allclose(ratio_margin_matrix(x, y, k), _brute_margin(x, y, k), rtol=1e-10)


def test_k_larger_than_set_is_an_error():
    with pytest.raises(ValueError, match="k must be"):
        ratio_margin_matrix(np.eye(3), np.eye(3), k=4)


def test_candidate_strategies_on_small_matrix():
    margin = np.array([[0.9, 0.8, 0.1],
                       [0.95, 0.2, 0.3]])
    forward = {(c.src, c.tgt) for c in extract_candidates(margin, "forward")}
    backward = {(c.src, c.tgt) for c in extract_candidates(margin, "backward")}
    assert forward == {(0, 0), (1, 0)}
    assert backward == {(1, 0), (0, 1), (1, 2)}
    assert {(c.src, c.tgt) for c in extract_candidates(margin, "intersection")} == {(1, 0)}
    # max: union sorted by score, greedy one-to-one: (1,0)=.95, (0,0)=.9 blocked by tgt 0, (0,1)=.8 kept, (1,2) blocked by src 1
    assert [(c.src, c.tgt) for c in extract_candidates(margin, "max")] == [(1, 0), (0, 1)]
    with pytest.raises(ValueError, match="strategy"):
        extract_candidates(margin, "union")


def test_precision_recall_f1_by_hand():
    result = precision_recall_f1({("a", "1"), ("b", "2"), ("c", "9")}, {("a", "1"), ("b", "2"), ("d", "4"), ("e", "5")})
    assert result["precision"] == pytest.approx(200 / 3)
    assert result["recall"] == pytest.approx(50.0)
    assert result["f1"] == pytest.approx(100 * 2 * (2 / 3) * 0.5 / (2 / 3 + 0.5))


def test_optimal_threshold_picks_best_f1_cut_midpoint():
    scored = [(("a", "1"), 1.5), (("b", "2"), 1.4), (("x", "9"), 1.3), (("c", "3"), 1.2), (("y", "8"), 1.0)]
    gold = {("a", "1"), ("b", "2"), ("c", "3")}
    # cuts: 1 -> F1 .5; 2 -> .8; 3 -> .667; 4 -> .857 (P=3/4, R=1); 5 -> .75
    assert optimal_threshold(scored, gold) == pytest.approx(1.1)


def test_optimal_threshold_does_not_cut_ties():
    scored = [(("a", "1"), 2.0), (("x", "9"), 2.0), (("b", "2"), 1.0)]
    assert optimal_threshold(scored, {("a", "1")}) == pytest.approx(1.5)  # must keep both tied pairs


def test_bucc_end_to_end_finds_planted_pairs():
    rng = np.random.default_rng(3)
    base = rng.normal(size=(30, 16))
    src = np.vstack([base[:20] + 0.05 * rng.normal(size=(20, 16)), rng.normal(size=(10, 16))])
    tgt = np.vstack([base[:20] + 0.05 * rng.normal(size=(20, 16)), rng.normal(size=(10, 16))])
    src_ids, tgt_ids = [f"s{i}" for i in range(30)], [f"t{i}" for i in range(30)]
    gold = {(f"s{i}", f"t{i}") for i in range(20)}
    scored = mine_scored_pairs(src_ids, src, tgt_ids, tgt, k=4)
    result = bucc_f1(scored, gold, scored, gold)
    assert result["f1"] == pytest.approx(100.0)


@pytest.mark.parametrize("chunk_rows", [1, 3, 100])
def test_chunked_best_matches_equal_the_dense_matrix(chunk_rows):
    from interlingua.evaluation.metrics.mining import best_matches, best_matches_from_matrix

    rng = np.random.default_rng(7)
    x, y = rng.normal(size=(11, 6)), rng.normal(size=(8, 6))
    dense, chunked = best_matches_from_matrix(ratio_margin_matrix(x, y, 3)), best_matches(x, y, 3, chunk_rows)
    np.testing.assert_array_equal(chunked.forward_index, dense.forward_index)
    np.testing.assert_array_equal(chunked.backward_index, dense.backward_index)
    np.testing.assert_allclose(chunked.forward_score, dense.forward_score, rtol=1e-12)
    np.testing.assert_allclose(chunked.backward_score, dense.backward_score, rtol=1e-12)
