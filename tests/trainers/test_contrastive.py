"""info_nce against a loop-by-loop numpy reference written from the equation, plus option validation."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from interlingua.trainers.objectives.contrastive import info_nce


def _cosine(u: np.ndarray, v: np.ndarray) -> float:
    return float(u @ v / (np.linalg.norm(u) * np.linalg.norm(v)))


def reference_info_nce(anchors, positives, hard_negatives=None, temperature=0.05, offset=0, shared=True, margin=0.0):
    """-log softmax of the positive among all positives and (shared or own) hard negatives, averaged."""
    losses = []
    for i, anchor in enumerate(anchors):
        target = offset + i
        logits = []
        for j, positive in enumerate(positives):
            logits.append((_cosine(anchor, positive) - (margin if j == target else 0.0)) / temperature)
        if hard_negatives is not None:
            owners = range(len(positives)) if shared else [target]
            for j in owners:
                for negative in hard_negatives[j]:
                    logits.append(_cosine(anchor, negative) / temperature)
        logits = np.asarray(logits)
        log_partition = np.log(np.exp(logits - logits.max()).sum()) + logits.max()
        losses.append(log_partition - logits[target])
    return float(np.mean(losses))


@pytest.fixture()
def embeddings():
    rng = np.random.default_rng(3)
    return {
        "anchors": rng.normal(size=(4, 6)),
        "positives": rng.normal(size=(4, 6)),
        "negatives": rng.normal(size=(4, 3, 6)),
    }


def _t(array: np.ndarray) -> torch.Tensor:
    return torch.tensor(array, dtype=torch.float64)


def test_in_batch_negatives_match_reference(embeddings):
    loss = info_nce(_t(embeddings["anchors"]), _t(embeddings["positives"]), temperature=0.1)
    expected = reference_info_nce(embeddings["anchors"], embeddings["positives"], temperature=0.1)
    assert loss.item() == pytest.approx(expected, rel=1e-9)


def test_shared_and_own_hard_negatives_match_reference(embeddings):
    a, p, h = embeddings["anchors"], embeddings["positives"], embeddings["negatives"]
    shared = info_nce(_t(a), _t(p), _t(h), temperature=0.07)
    own = info_nce(_t(a), _t(p), _t(h), temperature=0.07, shared_hard_negatives=False)
    assert shared.item() == pytest.approx(reference_info_nce(a, p, h, 0.07), rel=1e-9)
    assert own.item() == pytest.approx(reference_info_nce(a, p, h, 0.07, shared=False), rel=1e-9)
    assert shared.item() > own.item()  # more negatives in the denominator


def test_local_anchors_with_offset_match_reference(embeddings):
    a, p, h = embeddings["anchors"], embeddings["positives"], embeddings["negatives"]
    loss = info_nce(_t(a[2:]), _t(p), _t(h), anchor_offset=2, shared_hard_negatives=False)
    assert loss.item() == pytest.approx(reference_info_nce(a[2:], p, h, offset=2, shared=False), rel=1e-9)


def test_margin_matches_reference(embeddings):
    a, p = embeddings["anchors"], embeddings["positives"]
    loss = info_nce(_t(a), _t(p), margin=0.3)
    assert loss.item() == pytest.approx(reference_info_nce(a, p, margin=0.3), rel=1e-9)


def test_symmetric_is_mean_of_both_directions(embeddings):
    a, p = embeddings["anchors"], embeddings["positives"]
    loss = info_nce(_t(a), _t(p), symmetric=True)
    expected = 0.5 * (reference_info_nce(a, p) + reference_info_nce(p, a))
    assert loss.item() == pytest.approx(expected, rel=1e-9)


def test_symmetric_local_anchors_use_global_anchors(embeddings):
    a, p = embeddings["anchors"], embeddings["positives"]
    per_anchor = info_nce(_t(a), _t(p), symmetric=True, reduction="none")
    local = info_nce(_t(a[:2]), _t(p), symmetric=True, anchor_offset=0, global_anchors=_t(a), reduction="none")
    torch.testing.assert_close(local, per_anchor[:, :2])


def test_flat_hard_negatives_are_pair_major(embeddings):
    a, p, h = (_t(embeddings[key]) for key in ("anchors", "positives", "negatives"))
    grouped = info_nce(a, p, h, shared_hard_negatives=False)
    pair_major = info_nce(a, p, h.reshape(-1, 6), shared_hard_negatives=False)
    negative_major = info_nce(a, p, h.transpose(0, 1).reshape(-1, 6), shared_hard_negatives=False)
    assert pair_major.item() == pytest.approx(grouped.item(), rel=1e-12)
    assert negative_major.item() != pytest.approx(grouped.item(), rel=1e-3)


def test_gradient_matches_finite_differences():
    torch.manual_seed(0)
    anchors = torch.randn(3, 4, dtype=torch.float64, requires_grad=True)
    positives = torch.randn(3, 4, dtype=torch.float64, requires_grad=True)
    negatives = torch.randn(3, 2, 4, dtype=torch.float64, requires_grad=True)
    assert torch.autograd.gradcheck(
        lambda x, y, z: info_nce(x, y, z, temperature=0.5, symmetric=True), (anchors, positives, negatives)
    )


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"temperature": 0.0}, "temperature must be a number >= 0.0001"),
        ({"margin": -0.1}, "margin must be a number >= 0"),
        ({"reduction": "max"}, "reduction must be"),
        ({"anchor_offset": 3}, "exceeds the 4 rows"),
        ({"anchor_offset": -1}, "anchor_offset must be >= 0"),
        ({"margin": float("nan")}, "margin must be a finite number, got nan"),
        ({"margin": float("inf")}, "margin must be a finite number, got inf"),
        ({"temperature": float("inf")}, "temperature must be a finite number, got inf"),
        ({"temperature": float("nan")}, "temperature must be a finite number, got nan"),
        ({"temperature": True}, "temperature must be a number, got True"),
        ({"margin": False}, "margin must be a number, got False"),
    ],
)
def test_bad_options_are_rejected(kwargs, message):
    with pytest.raises(ValueError, match=message):
        info_nce(torch.randn(2, 3), torch.randn(4, 3), **kwargs)


def test_bad_shapes_are_rejected():
    with pytest.raises(ValueError, match="positives has dimension 5"):
        info_nce(torch.randn(2, 3), torch.randn(2, 5))
    with pytest.raises(ValueError, match="expected \\(2\\*k, 3\\)"):
        info_nce(torch.randn(2, 3), torch.randn(2, 3), torch.randn(5, 3))
    with pytest.raises(ValueError, match="expected \\(2, k>=1, 3\\)"):
        info_nce(torch.randn(2, 3), torch.randn(2, 3), torch.randn(3, 1, 3))
    with pytest.raises(ValueError, match="needs global_anchors"):
        info_nce(torch.randn(2, 3), torch.randn(4, 3), symmetric=True)
