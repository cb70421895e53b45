"""``interlingua eval`` caches each part of ``concat(A|B)`` / ``sum(A|B)``: the cache called the part's ``encode(texts)``,
which normalizes, so eval combined unit part vectors where ``embed --model "concat(A|B)"`` combines raw pooled ones."""

from __future__ import annotations

import numpy as np
import pytest

from interlingua.models.combined import combine_embeddings
from interlingua.models.resolve import resolve_encoder
from interlingua.workflows.commands.eval import model_encoders


@pytest.fixture(scope="module")
def folders(tmp_path_factory):
    from tiny_models import build_tiny_bert

    root = tmp_path_factory.mktemp("parts")
    return str(build_tiny_bert(root / "a", seed=0)), str(build_tiny_bert(root / "b", seed=1))


@pytest.mark.parametrize("mode", ["concat", "sum"])
def test_eval_s_cached_combination_gives_the_uncached_vectors(folders, tmp_path, mode):
    from tiny_models import SENTENCES

    a, b = folders
    spec = f"{mode}({a}|{b})"
    expected = resolve_encoder(spec).encode(SENTENCES)  # what `embed --model` builds
    unit_parts = combine_embeddings(resolve_encoder(a).encode(SENTENCES), resolve_encoder(b).encode(SENTENCES), mode)
    assert not np.allclose(unit_parts, expected, atol=1e-3)  # what eval gave: the normalized parts combined
    for warm in (False, True):
        encoders = model_encoders([spec, a], tmp_path / "cache")
        combined = encoders[spec]
        np.testing.assert_allclose(combined.encode(SENTENCES), expected, rtol=1e-5, atol=1e-6)
        parts = (combined.first, combined.second)
        assert [part.hits > 0 for part in parts] == [warm, warm]
        # the part alone keeps its own (normalized) vectors, in a cache of its own
        np.testing.assert_allclose(encoders[a].encode(SENTENCES), resolve_encoder(a).encode(SENTENCES),
                                   rtol=1e-5, atol=1e-6)
        assert encoders[a].directory != parts[0].directory and parts[0].identity.endswith("+raw")
