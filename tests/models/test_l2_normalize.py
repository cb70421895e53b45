import numpy as np
import pytest

from interlingua.models.protocol import l2_normalize


def test_rows_get_unit_norm_and_zero_rows_stay_zero():
    x = np.array([[3.0, 4.0], [0.0, 0.0], [-1.0, 0.0]])
    out = l2_normalize(x)
    assert out.dtype == np.float64
    np.testing.assert_allclose(out, [[0.6, 0.8], [0.0, 0.0], [-1.0, 0.0]])


def test_float32_computes_in_float32_like_the_plain_formula():
    rng = np.random.default_rng(0)
    x = rng.normal(size=(64, 384)).astype(np.float32)
    out = l2_normalize(x, dtype=np.float32)
    assert out.dtype == np.float32
    reference = x / np.maximum(np.sqrt((x.astype(np.float32) ** 2).sum(axis=1, keepdims=True)), np.float32(1e-12))
    np.testing.assert_allclose(out, reference, rtol=1e-6)
    # bit for bit the float32 formula hard-negatives mining has always used (float64 then a cast rounds differently)
    assert np.array_equal(out, x / np.maximum(np.linalg.norm(x, axis=1, keepdims=True), 1e-12))


def test_rejects_non_matrix():
    with pytest.raises(ValueError, match="2-D"):
        l2_normalize(np.ones(3))
