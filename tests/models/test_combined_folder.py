"""A saved combination s/|s| (+) h/|h| loads back through load_encoder with identical vectors."""

from __future__ import annotations

import numpy as np
import pytest

from tiny_models import SENTENCES, build_tiny_bert

from interlingua.models.combined import COMBINED_FILE, CombinedEncoder
from interlingua.models.load import load_encoder


def test_saved_combination_loads_with_the_same_vectors(tmp_path):
    first = load_encoder(str(build_tiny_bert(tmp_path / "a", seed=0)))
    second = load_encoder(str(build_tiny_bert(tmp_path / "b", seed=1)))
    combined = CombinedEncoder(first, second, "norm_concat")
    folder = combined.save(tmp_path / "combined")
    assert (folder / COMBINED_FILE).is_file()

    loaded = load_encoder(str(folder))
    assert loaded.mode == "norm_concat" and loaded.dim == 64
    expected = np.concatenate([first.encode(SENTENCES) / np.linalg.norm(first.encode(SENTENCES), axis=1, keepdims=True),
                               second.encode(SENTENCES) / np.linalg.norm(second.encode(SENTENCES), axis=1, keepdims=True)], 1)
    np.testing.assert_allclose(loaded.encode(SENTENCES), expected, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(np.linalg.norm(loaded.encode(SENTENCES, normalize=True), axis=1), 1.0, rtol=1e-5)


def test_a_broken_combination_file_is_refused(tmp_path):
    (tmp_path / COMBINED_FILE).write_text('{"mode": "norm_concat", "parts": ["first", "../x"]}')
    with pytest.raises(ValueError, match="parts must be"):
        load_encoder(str(tmp_path))


def test_a_part_whose_encode_takes_the_texts_alone_is_combined_with_a_batch_size(tmp_path):
    """``use``, a sentence-transformers folder or word vectors take no ``batch_size``: ``embed`` and
    ``MtebEncoder`` (which pass one) failed with a TypeError on such a combination. The batch size now reaches only
    the parts that take one, with the same vectors."""

    class TextsOnly:
        name, dim = "texts-only", 2

        def encode(self, texts):
            return np.array([[len(t), 1.0] for t in texts], dtype=np.float32)

    tiny = load_encoder(str(build_tiny_bert(tmp_path / "a", seed=0)))
    seen = []
    original = tiny.encode
    tiny.encode = lambda texts, batch_size=32, **kw: seen.append(batch_size) or original(texts, batch_size=batch_size, **kw)
    combined = CombinedEncoder(tiny, TextsOnly(), "norm_concat")
    vectors = combined.encode(SENTENCES, batch_size=2)
    assert vectors.shape == (len(SENTENCES), tiny.dim + 2) and seen == [2]
    np.testing.assert_allclose(vectors, combined.encode(SENTENCES), rtol=1e-5, atol=1e-6)
    both = CombinedEncoder(TextsOnly(), TextsOnly(), "sum").encode(["ab", "abc"], batch_size=16)
    np.testing.assert_array_equal(both, [[4.0, 2.0], [6.0, 2.0]])


@pytest.mark.parametrize("mode", ["concat", "sum"])
def test_concat_and_sum_combine_the_raw_outputs_under_a_marked_identity(tmp_path, mode):
    """concat is s ⊕ h and sum s + h of the parts' raw outputs (Cai et al. Table 6's unnormalized rows): they gave the
    normalized ones (a SentenceEncoder normalizes by default), the norm_ modes' vectors. Their identities carry
    ``+raw``, so an embedding cache or corpus version keyed before cannot serve those vectors as theirs."""
    from interlingua.models.identity import model_identity

    a, b = build_tiny_bert(tmp_path / "a", seed=0), build_tiny_bert(tmp_path / "b", seed=1)
    first, second = load_encoder(str(a)), load_encoder(str(b))
    s, h = first.encode(SENTENCES, normalize=False), second.encode(SENTENCES, normalize=False)
    assert not np.allclose(np.linalg.norm(s, axis=1), 1.0)
    expected = np.concatenate([s, h], 1) if mode == "concat" else s + h
    combined = CombinedEncoder(first, second, mode)
    np.testing.assert_allclose(combined.encode(SENTENCES), expected, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(combined.encode(SENTENCES, batch_size=2), expected, rtol=1e-5, atol=1e-6)
    normed = CombinedEncoder(first, second, f"norm_{mode}")
    assert combined.identity.startswith(f"{mode}+raw(") and normed.identity.startswith(f"norm_{mode}(")
    assert model_identity(f"{mode}({a}|{b})").startswith(f"{mode}+raw(")
    assert model_identity(str(combined.save(tmp_path / "c"))).endswith("+raw")
    assert not model_identity(str(normed.save(tmp_path / "n"))).endswith("+raw")
