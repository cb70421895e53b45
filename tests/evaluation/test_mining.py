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


def test_k_is_capped_at_the_other_side_size_as_in_laser():
    rng = np.random.default_rng(5)
    x, y = rng.normal(size=(3, 4)), rng.normal(size=(5, 4))
    # NN_k(x) has min(4, 5) = 4 targets, NN_k(y) min(4, 3) = 3 sources
    expected = np.array([[_cos(a, b) / (sum(sorted((_cos(a, z) for z in y), reverse=True)[:4]) / 8
                                        + sum(sorted((_cos(b, z) for z in x), reverse=True)[:3]) / 6) for b in y] for a in x])
    np.testing.assert_allclose(ratio_margin_matrix(x, y, 4), expected, rtol=1e-10)
    with pytest.raises(ValueError, match="k must be"):
        ratio_margin_matrix(x, y, k=0)


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


def test_optimal_threshold_cuts_inside_ties_like_laser():
    # LASER's BuccOptimize scores every prefix, ties included: after ("a","1") F1 = 1, threshold = (2.0 + 2.0) / 2
    scored = [(("a", "1"), 2.0), (("x", "9"), 2.0), (("b", "2"), 1.0)]
    assert optimal_threshold(scored, {("a", "1")}) == 2.0


def test_optimal_threshold_edge_cases():
    # no correct candidate: LASER's initial threshold 0
    assert optimal_threshold([(("x", "9"), 1.3), (("y", "8"), 1.1)], {("a", "1")}) == 0.0
    # best F1 at the last candidate (LASER would index past the end): its own score
    assert optimal_threshold([(("a", "1"), 1.3), (("b", "2"), 1.1)], {("a", "1"), ("b", "2")}) == 1.1
    # input order does not matter (sorted by decreasing score)
    assert optimal_threshold([(("y", "8"), 1.0), (("a", "1"), 1.5)], {("a", "1")}) == pytest.approx(1.25)


def _laser_style_threshold(items, gold):
    """Written from the description of LASER tasks/bucc/bucc.py BuccOptimize (with a guard at the end)."""
    items = sorted(items, key=lambda item: -item[1])
    n_correct, best, threshold = 0, 0.0, 0.0
    for n_extract, (pair, score) in enumerate(items, start=1):
        n_correct += int(pair in gold)
        if n_correct == 0:
            continue
        p, r = n_correct / n_extract, n_correct / len(gold)
        if 2 * p * r / (p + r) > best:
            best = 2 * p * r / (p + r)
            threshold = (score + items[n_extract][1]) / 2 if n_extract < len(items) else score
    return threshold


@pytest.mark.parametrize("seed", range(5))
def test_optimal_threshold_equals_laser_loop_with_rounded_ties(seed):
    rng = np.random.default_rng(seed)
    scored = [((f"s{i}", f"t{i}"), float(np.round(rng.uniform(0.9, 1.3), 2))) for i in range(60)]
    gold = {pair for pair, _ in scored if rng.random() < 0.6} | {("s999", "t999")}
    assert optimal_threshold(scored, gold) == _laser_style_threshold(scored, gold)


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


def _brute_best(x, y, k):
    """Best-margin target of each source among its k cosine-nearest targets, by plain loops."""
    k_x, k_y = min(k, len(y)), min(k, len(x))
    cos = [[_cos(a, b) for b in y] for a in x]
    x_mean = [sum(sorted(row, reverse=True)[:k_x]) / k_x for row in cos]
    y_mean = [sum(sorted((cos[i][j] for i in range(len(x))), reverse=True)[:k_y]) / k_y for j in range(len(y))]
    best = []
    for i in range(len(x)):
        neighbours = sorted(range(len(y)), key=lambda j: (-cos[i][j], j))[:k_x]
        scores = [cos[i][j] / ((x_mean[i] + y_mean[j]) / 2) for j in neighbours]
        best.append((neighbours[scores.index(max(scores))], max(scores)))
    return best


@pytest.mark.parametrize("k", [1, 3, 4, 20])
def test_best_matches_search_only_the_k_nearest_neighbours(k):
    from interlingua.evaluation.metrics.mining import best_matches

    rng = np.random.default_rng(10 + k)
    x, y = rng.normal(size=(13, 5)), rng.normal(size=(9, 5))
    got = best_matches(x, y, k, chunk_rows=4)
    forward, backward = _brute_best(x, y, k), _brute_best(y, x, k)
    assert list(got.forward_index) == [j for j, _ in forward]
    assert list(got.backward_index) == [i for i, _ in backward]
    np.testing.assert_allclose(got.forward_score, [s for _, s in forward], rtol=1e-12)
    np.testing.assert_allclose(got.backward_score, [s for _, s in backward], rtol=1e-12)


def test_knn_restriction_changes_the_match_of_a_hub_neighbour():
    from interlingua.evaluation.metrics.mining import best_matches, best_matches_from_matrix

    angle = lambda deg: [np.cos(np.radians(deg)), np.sin(np.radians(deg))]
    a0, a1 = np.degrees(np.arccos(0.9)), np.degrees(np.arccos(0.85))
    x = np.array([angle(0), angle(a0)])          # x1 duplicates y0, which makes y0 a hub
    y = np.array([angle(a0), angle(-a1)])        # cos(x0, y0) = .9, cos(x0, y1) = .85
    # k = 1: margin(x0, y0) = .9 / ((.9 + 1) / 2) = .947 < margin(x0, y1) = .85 / ((.9 + .85) / 2) = .971,
    # but y1 is not among x0's nearest neighbour, so LASER keeps y0
    assert best_matches_from_matrix(ratio_margin_matrix(x, y, 1)).forward_index[0] == 1
    got = best_matches(x, y, k=1)
    assert got.forward_index[0] == 0 and got.forward_score[0] == pytest.approx(0.9 / 0.95)


def test_duplicate_sentences_are_unified_and_their_candidates_dropped():
    from interlingua.evaluation.metrics.mining import unify_texts

    assert unify_texts(["a", "b", "a", " b ", "c"]) == ([0, 1, 3, 4], [None, None, None, "4"])
    src_texts, tgt_texts = ["one", "two", "two", "three"], ["uno", "dos", "tres", "tres"]
    emb = {"one": [1, 0, 0], "uno": [1, 0.1, 0], "two": [0, 1, 0], "dos": [0.1, 1, 0], "three": [0, 0, 1], "tres": [0, 0.1, 1]}
    src = np.array([emb[t] for t in src_texts], float)
    tgt = np.array([emb[t] for t in tgt_texts], float)
    pairs = dict(mine_scored_pairs(["s1", "s2", "s3", "s4"], src, ["t1", "t2", "t3", "t4"], tgt, k=2,
                                   src_texts=src_texts, tgt_texts=tgt_texts))
    # "two" and "tres" are repeated: only (s1, t1) survives; its margin is computed over the unified sets
    assert set(pairs) == {("s1", "t1")}
    x, y = src[[0, 1, 3]], tgt[[0, 1, 2]]
    assert pairs[("s1", "t1")] == pytest.approx(_brute_best(x, y, 2)[0][1])
    # without texts every row is its own point and all rows can be matched
    assert len(mine_scored_pairs(["s1", "s2", "s3", "s4"], src, ["t1", "t2", "t3", "t4"], tgt, k=2)) >= 3


def test_bucc_f1_applies_the_sample_threshold_to_the_test_split():
    sample = [(("a", "1"), 1.5), (("x", "9"), 1.2), (("b", "2"), 1.1)]
    test = [(("c", "3"), 1.4), (("d", "4"), 1.3), (("y", "7"), 1.25), (("e", "5"), 1.0)]
    # sample: after a F1 = 2/3 (threshold (1.5 + 1.2) / 2); after x .5; after b .8 (P 2/3, R 1), b is last -> 1.1
    result = bucc_f1(sample, {("a", "1"), ("b", "2")}, test, {("c", "3"), ("d", "4"), ("e", "5")})
    assert result["threshold"] == 1.1
    # test: c, d, y extracted (>= 1.1): P = 2/3, R = 2/3
    assert result["precision"] == pytest.approx(200 / 3) and result["recall"] == pytest.approx(200 / 3)
    assert result["f1"] == pytest.approx(200 / 3)
