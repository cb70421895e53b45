"""Encoder combinations, the embedding cache, averaged word vectors and spec resolution."""

import numpy as np
import pytest

from interlingua.models.averaged_word_vectors import AveragedWordVectorEncoder, from_keyed_vectors
from interlingua.models.cache import CachedEncoder
from interlingua.models.combined import CombinedEncoder, combine_embeddings
from interlingua.models.resolve import resolve_encoder


class CountingEncoder:
    def __init__(self, name="count", dim=3):
        self.name, self.dim, self.calls = name, dim, []

    def encode(self, texts):
        self.calls.append(list(texts))
        return np.array([[len(t), t.count("a"), 1.0][: self.dim] for t in texts], dtype=np.float32)


def test_combinations_match_the_definitions():
    s, h = np.array([[3.0, 4.0]]), np.array([[0.0, 2.0]])
    np.testing.assert_allclose(combine_embeddings(s, h, "concat"), [[3, 4, 0, 2]])
    np.testing.assert_allclose(combine_embeddings(s, h, "sum"), [[3, 6]])
    np.testing.assert_allclose(combine_embeddings(s, h, "norm_concat"), [[0.6, 0.8, 0, 1]])
    np.testing.assert_allclose(combine_embeddings(s, h, "norm_sum"), [[0.6, 1.8]])
    with pytest.raises(ValueError, match="equal dims"):
        combine_embeddings(s, np.ones((1, 3)), "sum")
    with pytest.raises(ValueError, match="mode"):
        combine_embeddings(s, h, "product")


def test_combined_encoder_names_both_parts():
    enc = CombinedEncoder(CountingEncoder("a"), CountingEncoder("b", dim=2), "concat")
    assert enc.name == "concat(a|b)" and enc.encode(["aa"]).shape == (1, 5)


def test_cache_reuses_embeddings_across_instances(tmp_path):
    inner = CountingEncoder()
    first = CachedEncoder(inner, tmp_path).encode(["banana", "kiwi", "banana"])
    assert inner.calls == [["banana", "kiwi"]]
    again_inner = CountingEncoder()
    cached = CachedEncoder(again_inner, tmp_path)
    second = cached.encode(["kiwi", "banana", "apple"])
    assert again_inner.calls == [["apple"]] and (cached.hits, cached.misses) == (2, 1)
    np.testing.assert_array_equal(second[:2], first[[1, 0]])
    other = CountingEncoder(name="other")
    CachedEncoder(other, tmp_path).encode(["kiwi"])
    assert other.calls == [["kiwi"]]  # a different encoder name never reads this cache


def test_averaged_word_vectors():
    table = {"cat": np.array([1.0, 0.0]), "sat": np.array([0.0, 1.0])}
    enc = AveragedWordVectorEncoder(table.get, 2, "toy")
    np.testing.assert_allclose(enc.encode(["The CAT sat!", "nothing known"]), [[0.5, 0.5], [0.0, 0.0]])


def test_keyed_vectors_file(tmp_path):
    path = tmp_path / "vectors.txt"
    path.write_text("2 3\nhola 1 0 0\nmundo 0 0 1\n", encoding="utf-8")
    enc = from_keyed_vectors(str(path))
    np.testing.assert_allclose(enc.encode(["Hola mundo"]), [[0.5, 0.0, 0.5]])


def test_resolve_py_factory_and_combination(tmp_path, monkeypatch):
    (tmp_path / "fake_encoders_mod.py").write_text(
        "import numpy as np\nclass E:\n    name='fake'\n    def encode(self, texts):\n        return np.ones((len(texts), 2))\n"
        "def make():\n    return E()\ndef bad():\n    return 3\n", encoding="utf-8")
    monkeypatch.syspath_prepend(str(tmp_path))
    assert resolve_encoder("py:fake_encoders_mod:make").name == "fake"
    assert resolve_encoder("norm_sum(py:fake_encoders_mod:make|py:fake_encoders_mod:make)").encode(["x"]).shape == (1, 2)
    with pytest.raises(ValueError, match="lacks"):
        resolve_encoder("py:fake_encoders_mod:bad")
    with pytest.raises(ValueError, match="combination mode"):
        resolve_encoder("mul(py:fake_encoders_mod:make|py:fake_encoders_mod:make)")
    with pytest.raises(ValueError, match="empty"):
        resolve_encoder(" ")
