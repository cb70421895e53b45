"""Which encoders the pack evaluation keeps in the shared embedding cache (``pack_eval.cacheable``)."""

from __future__ import annotations

from interlingua.workflows.pack_eval import cacheable


def test_registered_models_and_stable_paths_are_kept_and_a_fresh_folder_is_not(tmp_path):
    stable = tmp_path / "assets" / "e5-small"
    fresh = tmp_path / "runs" / "tuned"
    # the cache keys a model by its files' content, so even a moving alias is safe to keep
    assert cacheable("models:/enc@champion") and cacheable("models:/enc/3")
    assert cacheable(str(stable), [str(stable.resolve())])
    assert not cacheable(str(fresh), [str(stable.resolve())])
    assert not cacheable("s3://bucket/enc", [str(stable.resolve())])
