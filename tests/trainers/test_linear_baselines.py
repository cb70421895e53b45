"""Linear-map baselines and CSLS against closed forms / definitions computed another way."""

from __future__ import annotations

import numpy as np
import pytest

from interlingua.evaluation.metrics.precision_at_k import csls_matrix, precision_at_k
from interlingua.trainers.baselines.linear_maps import language_means, least_squares_map, procrustes_map


def test_least_squares_solves_the_normal_equations():
    rng = np.random.default_rng(0)
    x, y = rng.normal(size=(50, 6)), rng.normal(size=(50, 4))
    w = least_squares_map(x, y)
    np.testing.assert_allclose(w, np.linalg.solve(x.T @ x, x.T @ y), atol=1e-10)
    # a perturbed W is never better
    assert np.linalg.norm(x @ w - y) < np.linalg.norm(x @ (w + 1e-3 * rng.normal(size=w.shape)) - y)


def test_procrustes_recovers_a_rotation_and_is_orthogonal():
    rng = np.random.default_rng(1)
    q, _ = np.linalg.qr(rng.normal(size=(5, 5)))
    x = rng.normal(size=(40, 5))
    w = procrustes_map(x, x @ q + 1e-6 * rng.normal(size=(40, 5)))
    np.testing.assert_allclose(w, q, atol=1e-5)
    noisy = procrustes_map(x, rng.normal(size=(40, 5)))
    np.testing.assert_allclose(noisy.T @ noisy, np.eye(5), atol=1e-10)


def test_procrustes_beats_random_orthogonal_maps():
    rng = np.random.default_rng(2)
    x, y = rng.normal(size=(30, 4)), rng.normal(size=(30, 4))
    best = np.linalg.norm(x @ procrustes_map(x, y) - y)
    for _ in range(50):
        q, _ = np.linalg.qr(rng.normal(size=(4, 4)))
        assert best <= np.linalg.norm(x @ q - y) + 1e-12


def test_language_means():
    v = np.array([[1.0, 0.0], [3.0, 2.0], [5.0, 5.0]])
    means = language_means(v, ["en", "en", "es"])
    np.testing.assert_allclose(means["en"], [2.0, 1.0])
    np.testing.assert_allclose(means["es"], [5.0, 5.0])


def test_maps_refuse_nan_and_misaligned_rows():
    with pytest.raises(ValueError, match="NaN"):
        least_squares_map(np.array([[np.nan, 1.0]]), np.array([[1.0, 1.0]]))
    with pytest.raises(ValueError, match="aligned"):
        procrustes_map(np.zeros((3, 2)), np.zeros((2, 2)))


def test_csls_by_its_definition():
    rng = np.random.default_rng(3)
    q, c = rng.normal(size=(7, 3)), rng.normal(size=(9, 3))
    k = 3
    unit = lambda a: a / np.linalg.norm(a, axis=1, keepdims=True)  # noqa: E731
    cos = unit(q) @ unit(c).T
    expected = np.empty_like(cos)
    for i in range(7):
        r_q = np.mean(sorted(cos[i], reverse=True)[:k])
        for j in range(9):
            r_c = np.mean(sorted(cos[:, j], reverse=True)[:k])
            expected[i, j] = 2 * cos[i, j] - r_q - r_c
    np.testing.assert_allclose(csls_matrix(q, c, k=k), expected, atol=1e-10)


def test_precision_at_k_counts_ranks():
    # query 0 -> gold ranks 1st; query 1 -> gold ranks 2nd; query 2 -> gold ranks 3rd
    q = np.eye(3)
    c = np.array([[1.0, 0.0, 0.0], [0.0, 0.5, 0.0], [0.9, 0.0, 0.1]])
    c[1] = [0.2, 0.3, 0.0]  # cos(q1, c1) < cos(q1, c0)? q1=(0,1,0): c0 cos 0, c1 cos 0.83 -> 1st
    p = precision_at_k(q, c, ks=(1, 2, 3))
    scores = q @ (c / np.linalg.norm(c, axis=1, keepdims=True)).T
    ranks = [(scores[i] > scores[i, i]).sum() for i in range(3)]
    assert p == {k: 100.0 * np.mean([r < k for r in ranks]) for k in (1, 2, 3)}
    assert precision_at_k(q, q, ks=(1,), scoring="csls")[1] == 100.0


def test_precision_at_k_breaks_ties_as_the_tatoeba_metric_does():
    """Ties go to the lower index (np.argmax's rule): P@1 with cosine equals nearest-neighbour accuracy, also with
    duplicate candidates, and a collapsed encoder (every vector equal) scores 1/n, not 100 % (before: a query
    counted as right whenever no candidate scored strictly higher)."""
    from interlingua.evaluation.metrics.retrieval import nearest_neighbour_accuracy

    collapsed = np.ones((5, 3))
    assert precision_at_k(collapsed, collapsed, ks=(1, 5)) == {1: 20.0, 5: 100.0}
    assert precision_at_k(collapsed, collapsed, ks=(2,), scoring="csls") == {2: 40.0}
    rng = np.random.default_rng(0)
    q = np.round(rng.normal(size=(40, 4)), 0)  # few distinct values: many exact ties
    c = np.round(q + rng.normal(scale=0.5, size=q.shape), 0)
    c[7] = c[3]
    assert precision_at_k(q, c, ks=(1,))[1] == pytest.approx(nearest_neighbour_accuracy(q, c))
    scores = q @ (c / np.maximum(np.linalg.norm(c, axis=1, keepdims=True), 1e-12)).T
    order = [np.argsort(-scores[i], kind="stable") for i in range(len(q))]  # stable: lower index first
    for k in (1, 3, 5):
        expected = 100.0 * np.mean([i in order[i][:k] for i in range(len(q))])
        assert precision_at_k(q, c, ks=(k,))[k] == pytest.approx(expected)
