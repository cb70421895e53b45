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


def _cross_entropy(logits: torch.Tensor, labels: torch.Tensor) -> float:
    total = 0.0
    for z, y in zip(rows(logits), labels.tolist()):
        total += -(z[y] - math.log(sum(math.exp(v) for v in z)))
    return total / len(labels)


def test_language_terms_match_equations(batch):
    s, t, s2, t2 = batch
    g = torch.Generator().manual_seed(5)
    logits_s, logits_t = torch.randn(6, 3, generator=g), torch.randn(6, 3, generator=g)
    labels_s, labels_t = torch.randint(0, 3, (6,), generator=g), torch.randint(0, 3, (6,), generator=g)
    terms = LanguageLoss().terms(s, t, s2, t2, logits_s, logits_t, labels_s, labels_t)
    mono = sum(2 - cos(a, c) - cos(b, d) for a, b, c, d in zip(rows(s), rows(t), rows(s2), rows(t2))) / 6
    assert terms["language_mono"].item() == pytest.approx(mono, rel=1e-5)
    # the authors' cal_loss: CE(I(l_s), y_s) + CE(I(l_t), y_t), a sum over the two sides (not one mean)
    ce = _cross_entropy(logits_s, labels_s) + _cross_entropy(logits_t, labels_t)
    assert terms["language_id"].item() == pytest.approx(ce, rel=1e-5)
    only_mono = LanguageLoss(identification=False).terms(s, t, s2, t2, logits_s, logits_t, labels_s, labels_t)
    assert set(only_mono) == {"language_mono"}
    with pytest.raises(ValueError, match="logits_t and labels_t must have one row per input"):
        LanguageLoss().terms(s, t, s2, t2, logits_s, logits_t[:5], labels_s, labels_t)


def test_objective_classifies_a_and_b_and_sums_the_two_sides():
    from interlingua.trainers.disentangle.model import DisentangleModel
    from interlingua.trainers.disentangle.objective import DisentangleObjective, LossTerms

    torch.manual_seed(0)
    g = torch.Generator().manual_seed(7)
    a, b, c, d = (torch.randn(5, 6, generator=g) for _ in range(4))
    lang_a, lang_b = torch.tensor([0, 1, 2, 0, 1]), torch.tensor([1, 2, 0, 2, 0])
    model = DisentangleModel(6, 3)
    terms = DisentangleObjective(LossTerms())
    got = terms.terms(model, a, b, c, d, lang_a, lang_b)["language_id"].item()
    with torch.no_grad():
        expected = (_cross_entropy(model.identify(model.language(a)), lang_a)
                    + _cross_entropy(model.identify(model.language(b)), lang_b))
    assert got == pytest.approx(expected, rel=1e-6)


@pytest.mark.parametrize("distance", ["squared_l2", "cosine"])
def test_reconstruction_distances(batch, distance):
    e, m, l, _ = batch
    got = ReconstructionLoss(distance)(e, m, l).item()
    per_row = []
    for x, a, b in zip(rows(e), rows(m), rows(l)):
        rebuilt = [p + q for p, q in zip(a, b)]
        squared = sum((u - v) ** 2 for u, v in zip(x, rebuilt))
        per_row.append({"squared_l2": squared, "cosine": 1 - cos(x, rebuilt)}[distance])
    assert got == pytest.approx(sum(per_row) / len(per_row), rel=1e-5)


def test_reconstruction_mse_is_the_authors_sum_over_a_and_b():
    g = torch.Generator().manual_seed(4)
    e, m, l = (torch.randn(8, 5, generator=g) for _ in range(3))  # a, b, c, d: 2 rows each
    expected = 0.0
    for block in (slice(0, 2), slice(2, 4)):  # MSELoss (mean over elements) of a, plus that of b
        squared = [(x - (p + q)) ** 2 for rx, rp, rq in zip(rows(e[block]), rows(m[block]), rows(l[block]))
                   for x, p, q in zip(rx, rp, rq)]
        expected += sum(squared) / len(squared)
    assert ReconstructionLoss("mse")(e, m, l).item() == pytest.approx(expected, rel=1e-6)
    with pytest.raises(ValueError, match="4 equal blocks"):
        ReconstructionLoss("mse")(e[:6], m[:6], l[:6])


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
