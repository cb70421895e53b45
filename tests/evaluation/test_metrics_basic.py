"""STS, retrieval, QE, alignment/uniformity and seed aggregation against hand or independent computations."""

import math

import numpy as np
import pytest
from scipy.stats import rankdata

from interlingua.evaluation.metrics.alignment_uniformity import alignment, alignment_uniformity, uniformity
from interlingua.evaluation.metrics.quality_estimation import qe_pearson
from interlingua.evaluation.metrics.retrieval import bitext_retrieval_accuracy
from interlingua.evaluation.metrics.seeds import mean_std
from interlingua.evaluation.metrics.sts import sts_correlations


def _pearson(a, b):
    a, b = np.asarray(a, float) - np.mean(a), np.asarray(b, float) - np.mean(b)
    return float((a @ b) / math.sqrt((a @ a) * (b @ b)))


def test_sts_matches_cosine_rank_correlation_by_hand():
    rng = np.random.default_rng(0)
    u, v = rng.normal(size=(20, 5)), rng.normal(size=(20, 5))
    gold = rng.uniform(0, 5, size=20)
    cos = [float(a @ b / np.linalg.norm(a) / np.linalg.norm(b)) for a, b in zip(u, v)]
    result = sts_correlations(u, v, gold)
    assert result["spearman"] == pytest.approx(100 * _pearson(rankdata(cos), rankdata(gold)), abs=1e-9)
    assert result["pearson"] == pytest.approx(100 * _pearson(cos, gold), abs=1e-9)


def test_sts_perfectly_monotone_scores_give_100():
    u = np.array([[1.0, 0.0]] * 4)
    v = np.array([[1.0, 0.0], [1.0, 1.0], [0.0, 1.0], [-1.0, 1.0]])  # cosine 1, .71, 0, -.71
    assert sts_correlations(u, v, [5, 3, 1, 0])["spearman"] == pytest.approx(100.0)


def test_sts_rejects_misaligned_gold():
    with pytest.raises(ValueError, match="gold"):
        sts_correlations(np.ones((3, 2)), np.ones((3, 2)), [1, 2])


def test_retrieval_counts_each_direction():
    src = np.array([[1.0, 0.0], [0.0, 1.0], [1.0, 0.1]])
    tgt = np.array([[1.0, 0.05], [0.0, 1.0], [0.0, -1.0]])
    # src->tgt: 0->0 ok, 1->1 ok, 2->0 wrong => 2/3 ; tgt->src: 0->? cos with src0=.9988, src2=.9998 -> 2 wrong; 1->1 ok; 2->? all <=0 ... src0 cos 0 -> wrong
    result = bitext_retrieval_accuracy(src, tgt)
    assert result["src2tgt"] == pytest.approx(200 / 3)
    assert result["tgt2src"] == pytest.approx(100 / 3)
    assert result["average"] == pytest.approx(50.0)


def test_qe_is_pearson_of_cosine():
    rng = np.random.default_rng(1)
    s, t, h = rng.normal(size=(15, 4)), rng.normal(size=(15, 4)), rng.normal(size=15)
    cos = [float(a @ b / np.linalg.norm(a) / np.linalg.norm(b)) for a, b in zip(s, t)]
    assert qe_pearson(s, t, h) == pytest.approx(100 * _pearson(cos, h), abs=1e-9)


def test_alignment_and_uniformity_by_hand():
    u = np.array([[1.0, 0.0], [0.0, 2.0]])
    v = np.array([[0.0, 3.0], [0.0, 1.0]])
    # normalised: u=[(1,0),(0,1)], v=[(0,1),(0,1)] -> squared distances 2 and 0
    assert alignment(u, v) == pytest.approx(1.0)
    # uniformity(u): one pair, squared distance 2 -> log(exp(-4)) = -4 ; uniformity(v) = log(exp(0)) = 0
    assert uniformity(u) == pytest.approx(-4.0)
    assert alignment_uniformity(u, v)["uniformity"] == pytest.approx(-2.0)


def test_uniformity_averages_over_distinct_pairs():
    x = np.array([[1.0, 0.0], [0.0, 1.0], [-1.0, 0.0]])
    expected = math.log((math.exp(-4) + math.exp(-8) + math.exp(-4)) / 3)
    assert uniformity(x) == pytest.approx(expected)


def test_mean_std_population_and_sample():
    assert mean_std([1.0, 2.0, 3.0]).std == pytest.approx(math.sqrt(2 / 3))
    assert mean_std([1.0, 2.0, 3.0], ddof=1).std == pytest.approx(1.0)
    assert mean_std([70.0, 72.0]).format(2) == "71.00 ± 1.00"
    with pytest.raises(ValueError, match="ddof"):
        mean_std([1.0], ddof=1)


def test_retrieval_equals_l2_search_on_normalised_vectors_as_in_laser():
    # LASER's Tatoeba error: L2 nearest neighbour over L2-normalised embeddings, index-based; accuracy = 100 - error
    rng = np.random.default_rng(4)
    base = rng.normal(size=(40, 8))
    src, tgt = base + 0.8 * rng.normal(size=(40, 8)), base + 0.8 * rng.normal(size=(40, 8))
    def error(queries, index):
        q = queries / np.linalg.norm(queries, axis=1, keepdims=True)
        d = index / np.linalg.norm(index, axis=1, keepdims=True)
        wrong = sum(int(np.argmin([np.sum((qi - dj) ** 2) for dj in d]) != i) for i, qi in enumerate(q))
        return 100.0 * wrong / len(q)
    result = bitext_retrieval_accuracy(src, tgt)
    assert result["src2tgt"] == pytest.approx(100 - error(src, tgt))
    assert result["tgt2src"] == pytest.approx(100 - error(tgt, src))
    assert 0 < result["average"] < 100


def test_alignment_uniformity_equal_plain_loops():
    rng = np.random.default_rng(6)
    u, v = rng.normal(size=(12, 5)), rng.normal(size=(12, 5))
    un = [a / math.sqrt(a @ a) for a in u]
    vn = [b / math.sqrt(b @ b) for b in v]
    align = sum(float((a - b) @ (a - b)) for a, b in zip(un, vn)) / len(un)
    def unif(xs):
        terms = [math.exp(-2 * float((xs[i] - xs[j]) @ (xs[i] - xs[j]))) for i in range(len(xs)) for j in range(i + 1, len(xs))]
        return math.log(sum(terms) / len(terms))
    result = alignment_uniformity(u, v)
    assert result["alignment"] == pytest.approx(align, rel=1e-12)
    assert result["uniformity"] == pytest.approx((unif(un) + unif(vn)) / 2, rel=1e-12)


def test_embeddings_with_nan_or_infinity_are_refused_naming_the_rows():
    """A NaN vector used to be ranked as a vector (argmax picks a NaN; every comparison with one is false): one NaN
    line moved Tatoeba accuracy with no warning, and one in BUCC's training half made F1 0."""
    from interlingua.evaluation.metrics.mining import mine_scored_pairs
    from interlingua.evaluation.metrics.precision_at_k import precision_at_k

    x, y = np.eye(4), np.eye(4)
    y[3, 0] = np.nan
    y[1, 2] = np.inf
    for call in (lambda: bitext_retrieval_accuracy(x, y), lambda: precision_at_k(y, x, (1,)),
                 lambda: mine_scored_pairs(list("0123"), x, list("0123"), y)):
        with pytest.raises(ValueError, match=r"2 of 4 embeddings are not finite .*rows 1, 3"):
            call()
    assert bitext_retrieval_accuracy(x, np.eye(4))["average"] == 100.0
