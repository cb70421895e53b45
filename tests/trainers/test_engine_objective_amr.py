"""The engine's ``amr_retrofit`` objective: AMRRetrofitLoss over mixed (premise, entailment, contradiction)."""

from __future__ import annotations

import torch

from interlingua.trainers.engine.config import TrainConfig
from interlingua.trainers.engine.objectives import OBJECTIVE_COLUMNS, build_objective
from interlingua.trainers.objectives.amr_retrofit import AMRRetrofitLoss
from interlingua.trainers.objectives.simcse import SupervisedSimCSELoss


def test_amr_retrofit_objective_builds_the_loss_on_triple_columns():
    spec = build_objective(TrainConfig(objective="amr_retrofit", temperature=0.1))
    assert isinstance(spec.loss, AMRRetrofitLoss)
    assert spec.loss.supervised.temperature == 0.1
    assert spec.columns == ("premise", "entailment", "contradiction") == OBJECTIVE_COLUMNS["amr_retrofit"]
    # like simcse_sup: the other positives plus every contradiction of the global batch
    assert spec.negatives_per_anchor(8) == 8 - 1 + 8
    assert spec.negatives_per_anchor(8) == build_objective(TrainConfig(objective="simcse_sup")).negatives_per_anchor(8)


def test_amr_retrofit_objective_equals_supervised_simcse():
    torch.manual_seed(0)
    a, p, n = torch.randn(6, 8), torch.randn(6, 8), torch.randn(6, 8)
    spec = build_objective(TrainConfig(objective="amr_retrofit"))
    expected = SupervisedSimCSELoss(0.05)(a, p, n)
    torch.testing.assert_close(spec.loss(a, p, n), expected)


def test_existing_objectives_keep_their_columns():
    assert OBJECTIVE_COLUMNS["translation_ranking"] == ("src", "tgt")
    assert OBJECTIVE_COLUMNS["simcse_unsup"] == ("text", "text")
    assert OBJECTIVE_COLUMNS["simcse_sup"] == ("premise", "entailment", "contradiction")
