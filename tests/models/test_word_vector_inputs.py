"""Word-vector files (text and binary, checked line by line, never unpickled) and TF-IDF sentence vectors
against a hand computation."""

from __future__ import annotations

import math

import numpy as np
import pytest

from interlingua.core.errors import UserError
from interlingua.models.weighted_word_vectors import WordVectorSentenceEncoder, fit_idf
from interlingua.models.word_vector_files import read_word_vectors, write_word_vectors


def test_text_round_trip_and_binary(tmp_path):
    words, matrix = ["el", "gato", "perro"], np.arange(9, dtype=np.float32).reshape(3, 3) / 10
    path = write_word_vectors(tmp_path / "es.vec", words, matrix)
    got_words, got = read_word_vectors(path)
    assert got_words == words
    np.testing.assert_allclose(got, matrix, rtol=1e-6)
    from gensim.models import KeyedVectors

    kv = KeyedVectors(3)
    kv.add_vectors(words, matrix)
    kv.save_word2vec_format(str(tmp_path / "es.bin"), binary=True)
    got_words, got = read_word_vectors(tmp_path / "es.bin")
    assert got_words == words
    np.testing.assert_allclose(got, matrix)


@pytest.mark.parametrize("content, message", [
    ("3 dims\nel 1 2 3\n", "is not a word2vec header"),
    ("2 3\nel 1 2 3\ngato 1 2\n", "line 3: 2 values for 'gato'; the header says 3"),
    ("2 2\nel 1 2 3\ngato 1 2\n", "line 2: 3 values for 'el'; the header says 2"),
    ("3 2\nel 1 2\ngato 1 2\n", "the header says 3 vectors, the file holds 2"),
    ("1 2\nel 1 x\n", "a value of 'el' is not a number"),
    ("1 2\nel 1 nan\n", "line 2: the vector of 'el' holds NaN or inf"),
    ("2 2\nel 1 2\ngato 1e39 0\n", "line 3: the vector of 'gato' holds NaN or inf"),  # beyond float32
])
def test_bad_text_files_are_named(tmp_path, content, message):
    path = tmp_path / "bad.vec"
    path.write_text(content)
    with pytest.raises(UserError, match=message) as err:
        read_word_vectors(path)
    assert str(path) in str(err.value)


def test_a_repeated_word_keeps_its_first_vector_in_both_formats(tmp_path):
    """gensim's rule (``load_word2vec_format`` keeps the first, for text and binary alike); the repeat is counted."""
    from gensim.models import KeyedVectors

    text = tmp_path / "es.vec"
    text.write_text("3 2\nel 1 2\ngato 3 4\nel 5 6\n")
    stats: dict[str, int] = {}
    words, matrix = read_word_vectors(text, stats=stats)
    assert words == ["el", "gato"] and stats == {"repeated_words": 1}
    np.testing.assert_array_equal(matrix, [[1, 2], [3, 4]])
    reference = KeyedVectors.load_word2vec_format(str(text), binary=False)  # gensim itself, on the same file
    np.testing.assert_array_equal(matrix, reference.vectors[[reference.key_to_index[w] for w in words]])
    binary = tmp_path / "es.bin"
    rows = [("el", [1, 2]), ("gato", [3, 4]), ("el", [5, 6])]
    binary.write_bytes(b"3 2\n" + b"".join(w.encode() + b" " + np.asarray(v, np.float32).tobytes() + b"\n"
                                             for w, v in rows))
    stats = {}
    words, matrix = read_word_vectors(binary, stats=stats)
    assert words == ["el", "gato"] and stats == {"repeated_words": 1}
    np.testing.assert_array_equal(matrix, [[1, 2], [3, 4]])
    text.write_text("2 2\nel 1 2\nel 5 6\ngato 3 4\n")  # the header counts lines, repeats included
    with pytest.raises(UserError, match="the header says 2 vectors, the file holds 3"):
        read_word_vectors(text)


def test_truncated_binary_is_named(tmp_path):
    path = tmp_path / "bad.bin"
    path.write_bytes(b"2 3\nel " + np.zeros(3, np.float32).tobytes() + b"\ngato \x00\x00")
    with pytest.raises(UserError, match="bad.bin"):
        read_word_vectors(path)


def test_tfidf_sentence_vectors_by_hand():
    words = ["the", "cat", "dog"]
    matrix = np.array([[1.0, 0.0], [0.0, 1.0], [1.0, 1.0]], dtype=np.float32)
    corpus = ["the cat", "the dog", "the the cat"]
    idf = fit_idf(corpus)
    assert idf["the"] == pytest.approx(math.log(4 / 4) + 1) and idf["cat"] == pytest.approx(math.log(4 / 3) + 1)
    encoder = WordVectorSentenceEncoder(words, matrix, weighting="tfidf", idf=idf)
    vectors, known = encoder.encode_with_mask(["The the CAT", "nothing known", "dog"])
    raw = 2 * idf["the"] * matrix[0] + 1 * idf["cat"] * matrix[1]
    np.testing.assert_allclose(vectors[0], raw / np.linalg.norm(raw), rtol=1e-5)
    assert known.tolist() == [True, False, True] and not vectors[1].any()
    mean = WordVectorSentenceEncoder(words, matrix, weighting="mean").encode(["the cat cat"])[0]
    expected = (matrix[0] + 2 * matrix[1]) / 3
    np.testing.assert_allclose(mean, expected / np.linalg.norm(expected), rtol=1e-5)
    with pytest.raises(ValueError, match="tfidf weighting needs idf"):
        WordVectorSentenceEncoder(words, matrix, weighting="tfidf")


def test_a_sentence_whose_word_vectors_sum_to_zero_is_not_known():
    """A zero sum has no direction: kept as known, centering would turn it into minus the mean, a made-up unit
    vector. Zero vectors in the file, or vectors that cancel, leave the sentence unknown (rejected and counted)."""
    words = ["up", "down", "pad", "almost"]
    matrix = np.array([[1.0, 2.0], [-1.0, -2.0], [0.0, 0.0], [-1.0, -2.0000002]], dtype=np.float32)
    encoder = WordVectorSentenceEncoder(words, matrix, weighting="mean")
    vectors, known = encoder.encode_with_mask(["up down", "pad", "up pad", "up almost"])
    assert known.tolist() == [False, False, True, False]  # a residue of float rounding is no direction either
    assert not vectors[[0, 1, 3]].any() and np.linalg.norm(vectors[2]) == pytest.approx(1.0)
    assert encoder.encode_with_reasons(["up down", "pad", "up pad", "nothing known"])[1] == [
        "zero_vector", "zero_vector", None, "no_known_word"]  # each cause its own reason, as absent counts them


class _NormPerText(WordVectorSentenceEncoder):
    """The computation before: every text took its words' norms again."""

    def _norm(self, row: int) -> float:
        return float(np.linalg.norm(self.matrix[row]))


@pytest.mark.parametrize("weighting", ["mean", "tfidf"])
def test_word_vector_norms_are_computed_once_per_encoder_with_the_same_outputs(monkeypatch, weighting):
    rng = np.random.default_rng(0)
    words = [f"w{i}" for i in range(30)]
    matrix = rng.standard_normal((30, 16)).astype(np.float32)
    matrix[5], matrix[6] = 0.0, -matrix[7]  # a zero vector, and two that cancel at equal weights
    texts = [" ".join(rng.choice(words[:20], size=int(rng.integers(1, 6)))) for _ in range(100)]
    texts += ["w6 w7", "w5", "nothing known", "W3 w3 w8"]
    idf = fit_idf(texts) if weighting == "tfidf" else None
    want_vectors, want_known = _NormPerText(words, matrix, weighting=weighting, idf=idf).encode_with_mask(texts)
    encoder = WordVectorSentenceEncoder(words, matrix, weighting=weighting, idf=idf)
    table_norms = []  # the rows whose norm was taken (the table is float32; the sentence sums are float64)
    norm = np.linalg.norm

    def counting(x, *args, **kwargs):
        if np.asarray(x).dtype == np.float32:
            table_norms.append(next(i for i in range(len(matrix)) if np.array_equal(matrix[i], x)))
        return norm(x, *args, **kwargs)

    monkeypatch.setattr(np.linalg, "norm", counting)
    for _ in range(2):
        vectors, known = encoder.encode_with_mask(texts)
        assert np.array_equal(vectors, want_vectors) and np.array_equal(known, want_known)
    assert sorted(table_norms) == list(range(20))  # the words w0..w19 the texts use: once each, over 2 x 104 texts
    assert not known[-3:-1].any() and known[-4] == (weighting == "tfidf")  # w6, w7 weighed apart do not cancel
