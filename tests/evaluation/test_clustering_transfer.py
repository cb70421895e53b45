"""Hungarian accuracy, K-means clustering accuracy and the zero-shot transfer probe."""

import numpy as np
import pytest

from interlingua.evaluation.metrics.clustering import hungarian_accuracy, kmeans_clustering_accuracy
from interlingua.evaluation.metrics.transfer import pair_features, zero_shot_transfer_accuracy


def test_hungarian_accuracy_of_a_permuted_labelling_is_100():
    gold = ["a", "a", "b", "b", "c", "c"]
    assert hungarian_accuracy(gold, [2, 2, 0, 0, 1, 1]) == pytest.approx(100.0)


def test_hungarian_accuracy_by_hand():
    # clusters 0 -> {a,a,b}, 1 -> {b,c,c}: best map 0->a, 1->c gives 4 of 6
    assert hungarian_accuracy(["a", "a", "b", "b", "c", "c"], [0, 0, 0, 1, 1, 1]) == pytest.approx(400 / 6)


def test_hungarian_accuracy_with_more_clusters_than_labels():
    assert hungarian_accuracy(["a", "a", "b"], [0, 1, 2]) == pytest.approx(200 / 3)


def test_kmeans_accuracy_on_separated_blobs():
    rng = np.random.default_rng(0)
    centers = np.array([[10.0, 0.0], [0.0, 10.0], [-10.0, -10.0]])
    labels = np.repeat(["x", "y", "z"], 20)
    points = centers[np.repeat([0, 1, 2], 20)] + rng.normal(size=(60, 2))
    assert kmeans_clustering_accuracy(points, labels, seed=1) == pytest.approx(100.0)
    with pytest.raises(ValueError, match="runs"):
        kmeans_clustering_accuracy(points, labels, runs=0)


def test_pair_features_layout():
    u, v = np.array([[1.0, -2.0]]), np.array([[3.0, 4.0]])
    np.testing.assert_allclose(pair_features(u, v), [[1, -2, 3, 4, 2, 6, 3, -8]])


def test_zero_shot_transfer_selects_c_on_dev_union_and_scores_each_language():
    from sklearn.linear_model import LogisticRegression

    rng = np.random.default_rng(0)
    def make(n, shift):
        y = rng.integers(0, 2, size=n)
        return rng.normal(size=(n, 3)) + np.outer(2 * y - 1, [1.0, 0.0, 0.0]) + shift, y
    train_x, train_y = make(80, 0.0)
    dev = {"de": make(30, 0.2), "fr": make(30, -0.2)}
    test = {"de": make(40, 0.2), "fr": make(40, -0.2)}
    grid = (0.001, 1.0)
    result = zero_shot_transfer_accuracy(train_x, train_y, dev, test, seed=0, c_grid=grid)
    dev_x = np.vstack([dev["de"][0], dev["fr"][0]]); dev_y = np.concatenate([dev["de"][1], dev["fr"][1]])
    accs = {c: LogisticRegression(C=c, max_iter=1000).fit(train_x, train_y).score(dev_x, dev_y) for c in grid}
    best = max(grid, key=lambda c: (accs[c], -grid.index(c)))
    model = LogisticRegression(C=best, max_iter=1000).fit(train_x, train_y)
    assert result["best_C"] == best
    for lang in test:
        assert result[lang] == pytest.approx(100 * model.score(*test[lang]))
    with pytest.raises(ValueError, match="dev"):
        zero_shot_transfer_accuracy(train_x, train_y, {}, test)
