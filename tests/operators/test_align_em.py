"""Our fast_align EM: sharded E-step equals one process, runs are byte-identical, tables are pickle-free."""

import hashlib
import io
import os

import numpy as np
import pytest

from interlingua.operators.align import fast_align_em
from interlingua.operators.align.fast_align_em import (
    InProcessExecutor, digamma, dlog_partition, encode_corpus, learn_tables, partition, sorted_distinct)
from interlingua.operators.align.fast_align_training import FastAlignParameters, FastAlignSettings, learn_fast_align
from interlingua.operators.align.lexical_table import LexicalTable, read_systran_table

from .test_align_fast_align import synthetic_corpus


def digest(directory) -> dict[str, str]:
    return {name: hashlib.sha256(open(os.path.join(directory, name), "rb").read()).hexdigest()
            for name in ("forward.npz", "reverse.npz", "forward.bin", "reverse.bin", "fast_align_params.json")}


def test_closed_forms_match_direct_sums():
    for n, m, lam in [(1, 1, 4.0), (5, 7, 4.0), (9, 3, 0.7), (12, 12, 14.0)]:
        for j in range(1, m + 1):
            h = np.array([-abs(i / n - j / m) for i in range(1, n + 1)])
            assert partition(j, m, n, lam) == pytest.approx(np.exp(lam * h).sum(), rel=1e-12)
    # fast_align's ComputeDLogZ normalizes by Z(j, n, m) (arguments swapped, as published); for n == m it is E[h]
    n = m = 6
    for j in range(1, m + 1):
        h = np.array([-abs(i / n - j / m) for i in range(1, n + 1)])
        w = np.exp(4.0 * h)
        assert dlog_partition(j, m, n, 4.0) == pytest.approx((h * w).sum() / w.sum(), rel=1e-9)
    assert digamma(1.0) == pytest.approx(-0.5772156649, abs=1e-8)


def test_learning_is_deterministic_and_learns_the_lexicon(tmp_path):
    corpus = synthetic_corpus(300)
    first = learn_fast_align(corpus, str(tmp_path / "a"))
    learn_fast_align(corpus, str(tmp_path / "b"))
    assert digest(tmp_path / "a") == digest(tmp_path / "b")
    table = first.forward.table
    ids = table.word_ids
    assert table.lookup(np.array([ids["house"]]), np.array([ids["haus"]]))[0] > 0.5
    assert 0.1 <= first.forward.tension <= 14
    loaded = FastAlignParameters.load(str(tmp_path / "a"))
    assert loaded.forward.tension == first.forward.tension
    assert np.array_equal(loaded.reverse.table.probabilities, first.reverse.table.probabilities)
    # the systran-format copy holds the same entries (float32 probabilities)
    copy = read_systran_table(str(tmp_path / "a" / "forward.bin"))
    assert np.array_equal(copy.keys, table.keys) and np.allclose(copy.probabilities, table.probabilities, rtol=1e-6)


def test_sharded_learning_is_bit_identical_to_one_shard():
    """Fixed-point sums: any number of shards gives the one-shard tables, tensions and log exactly."""
    corpus = encode_corpus(synthetic_corpus(200, seed=2))
    settings = FastAlignSettings()
    one = learn_tables(corpus, settings, InProcessExecutor(corpus, 1))
    for shards in (2, 3):
        other = learn_tables(corpus, settings, InProcessExecutor(corpus, shards))
        for a, b in ((one.forward, other.forward), (one.reverse, other.reverse)):
            assert np.array_equal(a.keys, b.keys) and np.array_equal(a.probabilities, b.probabilities)
        assert (one.forward_tension, one.reverse_tension) == (other.forward_tension, other.reverse_tension)
        assert one.log == other.log


def test_corpus_too_large_for_the_fixed_point_sums_is_refused(monkeypatch):
    corpus = encode_corpus(synthetic_corpus(20, seed=5))
    monkeypatch.setattr(fast_align_em, "MAX_TOKENS", corpus.src.size - 1)
    with pytest.raises(ValueError, match="tokens per side"):
        learn_tables(corpus, FastAlignSettings())


def test_sorted_distinct_equals_numpy_unique():
    rng = np.random.default_rng(0)
    for keys in (rng.integers(0, 50, 1000), rng.integers(0, 2**40, 5000), np.array([7]), np.array([], np.int64)):
        assert np.array_equal(sorted_distinct(keys.copy()), np.unique(keys))


def test_m_step_threads_give_identical_tables(monkeypatch):
    """The driver's M-step runs on ``executor.threads`` threads; the tables must not depend on it."""
    import numba

    corpus = encode_corpus(synthetic_corpus(200, seed=3))
    settings = FastAlignSettings()
    one = learn_tables(corpus, settings, InProcessExecutor(corpus, 2))
    two_threads = InProcessExecutor(corpus, 2)
    two_threads.threads = 2
    seen = []
    real = fast_align_em._numba_threads

    def spy(threads):
        seen.append(threads)
        return real(threads)

    monkeypatch.setattr(fast_align_em, "_numba_threads", spy)
    two = learn_tables(corpus, settings, two_threads)
    assert seen and set(seen) == {2} and numba.get_num_threads() == numba.config.NUMBA_NUM_THREADS
    assert np.array_equal(one.forward.probabilities, two.forward.probabilities)
    assert np.array_equal(one.reverse.probabilities, two.reverse.probabilities)
    assert (one.forward_tension, one.reverse_tension) == (two.forward_tension, two.reverse_tension)


@pytest.mark.slow
def test_ray_workers_equal_in_process(ray_local):
    from interlingua.operators.align.distributed_em import RayExecutor

    corpus = encode_corpus(synthetic_corpus(200, seed=4))
    settings = FastAlignSettings()
    reference = learn_tables(corpus, settings, InProcessExecutor(corpus, 1))  # one process, one shard
    for workers in (1, 2):
        executor = RayExecutor(corpus, workers, settings)
        try:
            on_ray = learn_tables(corpus, settings, executor)
        finally:
            executor.close()
        assert np.array_equal(on_ray.forward.probabilities, reference.forward.probabilities)
        assert np.array_equal(on_ray.reverse.probabilities, reference.reverse.probabilities)
        assert (on_ray.forward_tension, on_ray.reverse_tension) == (reference.forward_tension, reference.reverse_tension)


def test_pickle_bearing_archive_is_refused(tmp_path):
    path = str(tmp_path / "forward.npz")
    np.savez(path, vocabulary=np.array(["<eps>", "a"], dtype=object), keys=np.array([3]), probabilities=np.array([1.0]))
    with pytest.raises(ValueError, match="pickled objects, which are never loaded"):
        LexicalTable.load_npz(path)
    table = LexicalTable(("<eps>", "ä", "b"), np.array([5, 6]), np.array([0.5, 0.25]))
    table.save_npz(path)
    loaded = LexicalTable.load_npz(path)
    assert loaded.vocabulary == table.vocabulary and np.array_equal(loaded.keys, table.keys)
    buffer = io.BytesIO()
    np.savez(buffer, keys=np.array([1]))
    (tmp_path / "other.npz").write_bytes(buffer.getvalue())
    with pytest.raises(ValueError, match="no vocabulary_utf8"):
        LexicalTable.load_npz(str(tmp_path / "other.npz"))


def test_unknown_learner_is_refused(tmp_path):
    with pytest.raises(ValueError, match="learner 'x'"):
        learn_fast_align(synthetic_corpus(5), str(tmp_path), learner="x")


def test_shard_counts_are_summed_as_integers_then_scaled_once():
    from interlingua.operators.align.fast_align_em import _sum_scaled

    rng = np.random.default_rng(0)
    parts = [rng.integers(0, 2**40, 1000) for _ in range(4)]
    for shards in (1, 2, 3, 4):
        assert np.array_equal(_sum_scaled(parts[:shards], 2.0**32), np.sum(parts[:shards], axis=0) / 2.0**32)
