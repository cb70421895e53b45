"""TranslationRankingLoss: a hand-computed 2-pair case (with and without hard negatives), the one-direction option,
validation, training."""

from __future__ import annotations

import math
import sys
from pathlib import Path

import pytest
import torch

sys.path.insert(0, str(Path(__file__).parent))

from contrastive_harness import TinyEncoder, assert_loss_falls, token_batch, train_losses, translated  # noqa: E402

from interlingua.trainers.objectives.translation_ranking import TranslationRankingLoss  # noqa: E402


def test_two_pairs_by_hand():
    # cos(u1,v1)=1, cos(u1,v2)=0, cos(u2,v1)=0.6, cos(u2,v2)=0.8 ; reverse: cos(v1,u1)=1, cos(v1,u2)=0.6, ...
    source = torch.tensor([[1.0, 0.0], [0.6, 0.8]])
    target = torch.tensor([[2.0, 0.0], [0.0, 3.0]])
    tau = 0.5
    forward = 0.5 * (
        -math.log(math.exp(1 / tau) / (math.exp(1 / tau) + math.exp(0)))
        + -math.log(math.exp(0.8 / tau) / (math.exp(0.6 / tau) + math.exp(0.8 / tau)))
    )
    reverse = 0.5 * (
        -math.log(math.exp(1 / tau) / (math.exp(1 / tau) + math.exp(0.6 / tau)))
        + -math.log(math.exp(0.8 / tau) / (math.exp(0) + math.exp(0.8 / tau)))
    )
    both = TranslationRankingLoss(temperature=tau)(source, target)
    one = TranslationRankingLoss(temperature=tau, symmetric=False)(source, target)
    assert one.item() == pytest.approx(forward, rel=1e-6)
    assert both.item() == pytest.approx(0.5 * (forward + reverse), rel=1e-6)


def test_hard_negatives_join_the_forward_candidates_of_every_source_and_leave_the_reverse_alone():
    # u1 = (1, 0), u2 = (0.6, 0.8); v1 = (1, 0), v2 = (0, 1); hard negatives w1 = (0.8, 0.6), w2 = (0, -1)
    source = torch.tensor([[1.0, 0.0], [0.6, 0.8]])
    target = torch.tensor([[2.0, 0.0], [0.0, 3.0]])
    negative = torch.tensor([[0.8, 0.6], [0.0, -5.0]])
    tau = 0.5
    e = lambda c: math.exp(c / tau)  # noqa: E731
    # each source ranks its target against both targets and both negatives (cos(u1, w1) = 0.8, cos(u2, w1) = 0.96)
    forward = 0.5 * (-math.log(e(1) / (e(1) + e(0) + e(0.8) + e(0)))
                     - math.log(e(0.8) / (e(0.6) + e(0.8) + e(0.96) + e(-0.8))))
    reverse = 0.5 * (-math.log(e(1) / (e(1) + e(0.6))) - math.log(e(0.8) / (e(0) + e(0.8))))
    one = TranslationRankingLoss(temperature=tau, symmetric=False)(source, target, negative)
    both = TranslationRankingLoss(temperature=tau)(source, target, negative)
    assert one.item() == pytest.approx(forward, rel=1e-6)
    assert both.item() == pytest.approx(0.5 * (forward + reverse), rel=1e-6)
    with pytest.raises(ValueError, match="one hard negative per pair"):
        TranslationRankingLoss()(source, target, negative[:1])


def test_the_objective_reads_neg_only_with_hard_negatives_on():
    from interlingua.trainers.engine.config import TrainConfig

    plain = TrainConfig(objective="translation_ranking")
    mined = TrainConfig(objective="translation_ranking", hard_negatives=True)
    assert plain.objective_class.columns(plain.objective_options) == ("src", "tgt")
    assert mined.objective_class.columns(mined.objective_options) == ("src", "tgt", "neg")


def test_margin_makes_the_loss_larger():
    source, target = torch.randn(4, 3), torch.randn(4, 3)
    assert TranslationRankingLoss(margin=0.3)(source, target) > TranslationRankingLoss()(source, target)


def test_options_and_shapes_are_validated():
    with pytest.raises(ValueError, match="temperature must be a number >= 0.0001 \\(a softmax temperature\\), got -1"):
        TranslationRankingLoss(temperature=-1)
    with pytest.raises(ValueError, match="margin must be a number >= 0"):
        TranslationRankingLoss(margin=-0.2)
    with pytest.raises(ValueError, match="must have the same shape"):
        TranslationRankingLoss()(torch.randn(3, 4), torch.randn(2, 4))


def test_tiny_encoder_learns_to_rank_translations():
    torch.manual_seed(0)
    model = TinyEncoder(dropout=0.0)
    source = token_batch(16, seed=1)
    target = translated(source)
    objective = TranslationRankingLoss(temperature=0.1)
    losses = train_losses(model.parameters(), lambda: objective(model.encode(source), model.encode(target)))
    assert_loss_falls(losses)
