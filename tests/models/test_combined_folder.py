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


def test_combine_workflow_offers_exactly_the_combinations():
    import typing

    from interlingua.models.combined import COMBINATIONS
    from interlingua.workflows.combine import CombineConfig

    assert typing.get_args(CombineConfig.model_fields["mode"].annotation) == COMBINATIONS
