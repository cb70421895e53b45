"""The meaning/language disentanglement losses against the paper's equations written out by hand (plain
Python loops over rows, math.sqrt cosines; Tiyajamorn et al. 2021 §3)."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch

from interlingua.trainers.objectives.disentangle_language import LanguageLoss
from interlingua.trainers.objectives.disentangle_meaning import MeaningLoss
from interlingua.trainers.objectives.disentangle_reconstruction import ReconstructionLoss


def cos(u, v):
    dot = sum(a * b for a, b in zip(u, v))
    return dot / (math.sqrt(sum(a * a for a in u)) * math.sqrt(sum(b * b for b in v)))


def rows(x: torch.Tensor) -> list[list[float]]:
    return x.double().tolist()


@pytest.fixture
def batch():
    g = torch.Generator().manual_seed(3)
    return [torch.randn(6, 5, generator=g) for _ in range(4)]


def test_meaning_terms_match_equations(batch):
    s, t, s2, t2 = batch
    terms = MeaningLoss().terms(s, t, s2, t2)
    cross = sum(1 - cos(a, b) for a, b in zip(rows(s), rows(t))) / 6
    mono = sum(max(0.0, cos(a, c)) + max(0.0, cos(b, d)) for a, b, c, d in zip(rows(s), rows(t), rows(s2), rows(t2))) / 6
    assert terms["meaning_cross"].item() == pytest.approx(cross, rel=1e-5)
    assert terms["meaning_mono"].item() == pytest.approx(mono, rel=1e-5)
    assert MeaningLoss()(s, t, s2, t2).item() == pytest.approx(cross + mono, rel=1e-5)
    assert set(MeaningLoss(mono=False).terms(s, t, s2, t2)) == {"meaning_cross"}
    assert MeaningLoss(cross=False)(s, t, s2, t2).item() == pytest.approx(mono, rel=1e-5)


def test_meaning_mono_is_zero_for_orthogonal_or_opposed_sentences():
    s = torch.tensor([[1.0, 0.0], [1.0, 0.0]])
    other = torch.tensor([[0.0, 1.0], [-1.0, 0.0]])  # orthogonal, opposed: max(0, cos) = 0 both
    assert MeaningLoss(cross=False)(s, s, other, other).item() == pytest.approx(0.0, abs=1e-7)


def test_language_terms_match_equations(batch):
    s, t, s2, t2 = batch
    g = torch.Generator().manual_seed(5)
    logits = torch.randn(24, 3, generator=g)
    labels = torch.randint(0, 3, (24,), generator=g)
    terms = LanguageLoss().terms(s, t, s2, t2, logits, labels)
    mono = sum(2 - cos(a, c) - cos(b, d) for a, b, c, d in zip(rows(s), rows(t), rows(s2), rows(t2))) / 6
    ce = 0.0
    for z, y in zip(rows(logits), labels.tolist()):
        ce += -(z[y] - math.log(sum(math.exp(v) for v in z)))
    assert terms["language_mono"].item() == pytest.approx(mono, rel=1e-5)
    assert terms["language_id"].item() == pytest.approx(ce / 24, rel=1e-5)
    assert set(LanguageLoss(identification=False).terms(s, t, s2, t2, logits, labels)) == {"language_mono"}


@pytest.mark.parametrize("distance", ["squared_l2", "mse", "cosine"])
def test_reconstruction_distances(batch, distance):
    e, m, l, _ = batch
    got = ReconstructionLoss(distance)(e, m, l).item()
    per_row = []
    for x, a, b in zip(rows(e), rows(m), rows(l)):
        rebuilt = [p + q for p, q in zip(a, b)]
        squared = sum((u - v) ** 2 for u, v in zip(x, rebuilt))
        per_row.append({"squared_l2": squared, "mse": squared / len(x), "cosine": 1 - cos(x, rebuilt)}[distance])
    assert got == pytest.approx(sum(per_row) / len(per_row), rel=1e-5)


def test_reconstruction_is_zero_when_parts_add_up():
    e = torch.randn(4, 3)
    part = torch.randn(4, 3)
    assert ReconstructionLoss()(e, part, e - part).item() == pytest.approx(0.0, abs=1e-10)


def test_options_are_validated():
    with pytest.raises(ValueError, match="distance must be one of"):
        ReconstructionLoss("l1")
    with pytest.raises(ValueError, match="at least one of cross, mono"):
        MeaningLoss(cross=False, mono=False)
    with pytest.raises(ValueError, match="at least one of mono, identification"):
        LanguageLoss(mono=False, identification=False)
    with pytest.raises(ValueError, match="one shape"):
        ReconstructionLoss()(torch.zeros(2, 3), torch.zeros(2, 3), torch.zeros(2, 4))
