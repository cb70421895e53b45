"""The engine's ``amr_retrofit`` objective: AMRRetrofitLoss over mixed (premise, entailment, contradiction)."""

from __future__ import annotations

import torch
from torch import nn

from interlingua.trainers.engine.config import TrainConfig
from interlingua.trainers.objectives.amr_retrofit import AMRRetrofitLoss
from interlingua.trainers.objectives.base import ObjectiveSetup
from interlingua.trainers.objectives.simcse import SupervisedSimCSELoss


def _build(config: TrainConfig):
    return config.objective_class(config.objective_options, ObjectiveSetup(encoder=nn.Identity()))


def test_amr_retrofit_objective_builds_the_loss_on_triple_columns():
    config = TrainConfig(objective="amr_retrofit", temperature=0.1)
    objective = _build(config)
    assert isinstance(objective.criterion, AMRRetrofitLoss)
    assert objective.criterion.supervised.temperature == 0.1
    assert config.objective_class.columns(config.objective_options) == ("premise", "entailment", "contradiction")
    # like simcse_sup: the other positives plus every contradiction of the global batch
    assert objective.negatives_per_anchor(8) == 8 - 1 + 8
    assert objective.negatives_per_anchor(8) == _build(TrainConfig(objective="simcse_sup")).negatives_per_anchor(8)


def test_amr_retrofit_objective_equals_supervised_simcse():
    torch.manual_seed(0)
    a, p, n = torch.randn(6, 8), torch.randn(6, 8), torch.randn(6, 8)
    objective = _build(TrainConfig(objective="amr_retrofit"))
    expected = SupervisedSimCSELoss(0.05)(a, p, n)
    torch.testing.assert_close(objective.loss([a, p, n]), expected)


def test_existing_objectives_keep_their_columns():
    def columns(name):
        return TrainConfig(objective=name).objective_class.text_columns

    assert columns("translation_ranking") == ("src", "tgt")
    assert columns("simcse_unsup") == ("text", "text")
    assert columns("simcse_sup") == ("premise", "entailment", "contradiction")


def test_amr_retrofit_reverse_direction_option_reaches_the_loss():
    torch.manual_seed(1)
    a, p, n = torch.randn(6, 8), torch.randn(6, 8), torch.randn(6, 8)
    assert _build(TrainConfig(objective="amr_retrofit")).criterion.reverse_direction is False
    objective = _build(TrainConfig(objective="amr_retrofit", reverse_direction=True))
    expected = AMRRetrofitLoss(0.05, reverse_direction=True)(a, p, n)
    torch.testing.assert_close(objective.loss([a, p, n]), expected)
    assert not torch.allclose(expected, SupervisedSimCSELoss(0.05)(a, p, n))
