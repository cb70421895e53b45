"""SimCSE losses: hand-computed cases, equality with the equation's terms, validation, training."""

from __future__ import annotations

import math
import sys
from pathlib import Path

import pytest
import torch

sys.path.insert(0, str(Path(__file__).parent))

from contrastive_harness import TinyEncoder, assert_loss_falls, token_batch, train_losses, translated  # noqa: E402

from interlingua.trainers.objectives.simcse import SupervisedSimCSELoss, UnsupervisedSimCSELoss  # noqa: E402


def test_unsupervised_by_hand():
    first = torch.tensor([[1.0, 0.0], [0.0, 1.0]])
    second = torch.tensor([[1.0, 1.0], [0.0, 2.0]])  # cos: h1·h1'=1/√2, h1·h2'=0, h2·h1'=1/√2, h2·h2'=1
    c = 1 / math.sqrt(2)
    expected = 0.5 * (
        -math.log(math.exp(c / 0.5) / (math.exp(c / 0.5) + 1.0))
        + -math.log(math.exp(1 / 0.5) / (math.exp(c / 0.5) + math.exp(1 / 0.5)))
    )
    assert UnsupervisedSimCSELoss(temperature=0.5)(first, second).item() == pytest.approx(expected, rel=1e-6)


def test_supervised_contradictions_of_all_premises_are_negatives():
    premise = torch.tensor([[1.0, 0.0], [0.0, 1.0]])
    entailment = torch.tensor([[1.0, 0.0], [0.0, 1.0]])
    contradiction = torch.tensor([[-1.0, 0.0], [1.0, 1.0]])
    tau = 0.5
    c = 1 / math.sqrt(2)
    # premise 1: positives cos 1, 0 ; contradictions cos -1, c.   premise 2: positives 0, 1 ; contradictions 0, c.
    expected = 0.5 * (
        -math.log(math.exp(2) / (math.exp(2) + 1 + math.exp(-2) + math.exp(c / tau)))
        + -math.log(math.exp(2) / (1 + math.exp(2) + 1 + math.exp(c / tau)))
    )
    loss = SupervisedSimCSELoss(temperature=tau)(premise, entailment, contradiction)
    assert loss.item() == pytest.approx(expected, rel=1e-6)
    without = SupervisedSimCSELoss(temperature=tau)(premise, entailment)
    assert without.item() == pytest.approx(-math.log(math.exp(2) / (math.exp(2) + 1)), rel=1e-6)


def test_validation():
    with pytest.raises(ValueError, match="temperature must be a number >= 0.0001 \\(a softmax temperature\\), got 0"):
        UnsupervisedSimCSELoss(temperature=0)
    with pytest.raises(ValueError, match="must have the same shape"):
        SupervisedSimCSELoss()(torch.randn(3, 4), torch.randn(3, 5))
    with pytest.raises(ValueError, match="contradiction \\(2, 4\\) must match premise"):
        SupervisedSimCSELoss()(torch.randn(3, 4), torch.randn(3, 4), torch.randn(2, 4))


def test_unsupervised_trains_a_dropout_encoder():
    torch.manual_seed(0)
    model = TinyEncoder(dropout=0.3)
    sentences = token_batch(16, seed=2)
    objective = UnsupervisedSimCSELoss(temperature=0.1)
    losses = train_losses(model.parameters(), lambda: objective(model.encode(sentences), model.encode(sentences)))
    assert_loss_falls(losses)


def test_supervised_trains_on_triples():
    torch.manual_seed(0)
    model = TinyEncoder(dropout=0.1)
    premise = token_batch(16, seed=3)
    entailment = translated(premise)
    contradiction = token_batch(16, seed=4)
    objective = SupervisedSimCSELoss(temperature=0.1)
    losses = train_losses(
        model.parameters(),
        lambda: objective(model.encode(premise), model.encode(entailment), model.encode(contradiction)),
    )
    assert_loss_falls(losses)
