"""Wu & Dredze explicit alignment: linear mapping + orthogonality, L2 + regulariser, weak/strong contrastive."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest
import torch

sys.path.insert(0, str(Path(__file__).parent))

from contrastive_harness import TinyEncoder, assert_loss_falls, token_batch, train_losses, translated  # noqa: E402

from interlingua.trainers.objectives.contrastive import info_nce  # noqa: E402
from interlingua.trainers.objectives.explicit_alignment import (  # noqa: E402
    ContrastiveAlignmentLoss,
    CosineHead,
    L2AlignmentLoss,
    LinearAlignmentMapping,
    ParameterAnchor,
)


def test_linear_mapping_loss_and_orthogonality_update():
    mapping = LinearAlignmentMapping(2)
    source, target = torch.tensor([[1.0, 2.0], [0.0, 1.0]]), torch.tensor([[1.0, 0.0], [3.0, 1.0]])
    assert mapping(source, target).item() == pytest.approx((4.0 + 9.0) / 2)
    with torch.no_grad():  # W maps the target into the source space: mean ||x - W y||^2, not ||W x - y||^2
        mapping.weight.copy_(torch.tensor([[0.0, 2.0], [1.0, 0.0]]))
    # W y = (0, 1) and (2, 3): differences (1, 1) and (-2, -2) -> (2 + 8) / 2 = 5; ||W x - y||^2 would give 6
    assert mapping(source, target).item() == pytest.approx((2.0 + 8.0) / 2)
    with torch.no_grad():
        mapping.weight.copy_(torch.tensor([[1.3, 0.2], [-0.1, 0.8]]))
    before = torch.linalg.norm(mapping.weight.T @ mapping.weight - torch.eye(2))
    mapping.orthogonalize_()
    after = torch.linalg.norm(mapping.weight.T @ mapping.weight - torch.eye(2))
    assert after < before
    rotation = torch.tensor([[0.6, -0.8], [0.8, 0.6]])
    with torch.no_grad():
        mapping.weight.copy_(rotation)
    mapping.orthogonalize_()
    torch.testing.assert_close(mapping.weight.detach(), rotation)


def test_linear_mapping_learns_a_rotation():
    torch.manual_seed(0)
    source = torch.randn(32, 4)
    rotation, _ = torch.linalg.qr(torch.randn(4, 4))
    target = source @ rotation.T
    mapping = LinearAlignmentMapping(4)

    def step_loss():
        return mapping(source, target)

    optimizer = torch.optim.SGD(mapping.parameters(), lr=0.05)
    losses = []
    for _ in range(30):
        optimizer.zero_grad()
        loss = step_loss()
        loss.backward()
        optimizer.step()
        mapping.orthogonalize_()
        losses.append(loss.item())
    assert_loss_falls(losses, factor=0.5)
    # y = R x, so the map into the source space moves towards R^T, not R
    assert torch.linalg.norm(mapping.weight.detach() - rotation.T) < torch.linalg.norm(torch.eye(4) - rotation.T)


def test_l2_alignment_with_parameter_regulariser_by_hand():
    model = torch.nn.Linear(2, 2)
    anchor = ParameterAnchor(model)
    with torch.no_grad():
        model.weight += 1.0  # 4 entries moved by 1 -> ||theta - theta0||_2 = 2 (its square would be 4)
        model.bias -= torch.tensor([2.0, 0.0])  # and one by 2 -> sqrt(4 + 4) in all
    loss = L2AlignmentLoss(anchor, regularization_weight=0.1)
    source, target = torch.tensor([[1.0, 1.0]]), torch.tensor([[0.0, 3.0]])
    assert anchor.squared_distance().item() == pytest.approx(8.0)
    assert loss(source, target).item() == pytest.approx(5.0 + 0.1 * 8.0 ** 0.5)
    assert L2AlignmentLoss()(source, target).item() == pytest.approx(5.0)


def test_parameter_anchor_gradient_is_the_unit_direction_and_zero_at_the_start():
    torch.manual_seed(0)
    model = torch.nn.Linear(3, 2)
    anchor = ParameterAnchor(model)
    anchor.penalty().backward()  # theta == theta0: the norm's subgradient 0, not NaN
    assert all(torch.equal(p.grad, torch.zeros_like(p)) for p in model.parameters())
    model.zero_grad()
    start = {name: p.detach().clone() for name, p in model.named_parameters()}
    with torch.no_grad():
        for p in model.parameters():
            p.add_(torch.randn_like(p))
    penalty = anchor.penalty()
    penalty.backward()
    moved = torch.cat([(p.detach() - start[name]).flatten() for name, p in model.named_parameters()])
    assert penalty.item() == pytest.approx(torch.linalg.vector_norm(moved).item(), rel=1e-6)
    grads = torch.cat([p.grad.flatten() for p in model.parameters()])
    torch.testing.assert_close(grads, moved / torch.linalg.vector_norm(moved))


def test_weak_is_info_nce_through_the_head():
    torch.manual_seed(0)
    loss = ContrastiveAlignmentLoss(dim=6, strength="weak", temperature=0.2)
    source, target = torch.randn(5, 6), torch.randn(5, 6)
    expected = info_nce(loss.head(source), loss.head(target), temperature=0.2, symmetric=True)
    torch.testing.assert_close(loss(source, target), expected)
    linears = [layer for layer in loss.head if isinstance(layer, torch.nn.Linear)]
    assert [layer.out_features for layer in linears] == [6, 128]
    assert all(layer.bias is None for layer in linears)  # g(h) = W2 ReLU(W1 h), as in the authors' code


def test_contrastive_loss_adds_the_parameter_anchor():
    torch.manual_seed(0)
    model = torch.nn.Linear(6, 6)
    anchor = ParameterAnchor(model)
    with torch.no_grad():
        model.weight.add_(0.1)
    plain = ContrastiveAlignmentLoss(dim=6, strength="strong", temperature=0.2)
    anchored = ContrastiveAlignmentLoss(dim=6, strength="strong", temperature=0.2, anchor=anchor,
                                        regularization_weight=0.5)
    anchored.head.load_state_dict(plain.head.state_dict())
    source, target = torch.randn(4, 6), torch.randn(4, 6)
    expected = plain(model(source), model(target)) + 0.5 * 0.1 * 36 ** 0.5
    torch.testing.assert_close(anchored(model(source), model(target)), expected)


def test_strong_matches_a_numpy_nt_xent():
    torch.manual_seed(0)
    loss = ContrastiveAlignmentLoss(dim=8, strength="strong", temperature=0.5)
    source, target = torch.randn(3, 8), torch.randn(3, 8)
    z = torch.cat([loss.head(source), loss.head(target)]).detach().numpy().astype(np.float64)
    assert np.linalg.norm(z, axis=1).min() > 0  # no row lost to the ReLU (the reference divides by the norm)
    z /= np.linalg.norm(z, axis=1, keepdims=True)
    terms = []
    for i in range(6):
        partner = (i + 3) % 6
        logits = np.array([z[i] @ z[j] / 0.5 for j in range(6) if j != i])
        positive = z[i] @ z[partner] / 0.5
        terms.append(np.log(np.exp(logits).sum()) - positive)
    assert loss(source, target).item() == pytest.approx(float(np.mean(terms)), rel=1e-5)


def test_options_are_validated():
    with pytest.raises(ValueError, match="strength must be one of 'weak', 'strong'; got 'medium'"):
        ContrastiveAlignmentLoss(dim=4, strength="medium")
    with pytest.raises(ValueError, match="regularization_weight must be a number >= 0"):
        L2AlignmentLoss(regularization_weight=-1.0)
    with pytest.raises(ValueError, match="regularization_weight must be a number >= 0"):
        ContrastiveAlignmentLoss(dim=4, regularization_weight=-0.5)
    with pytest.raises(ValueError, match="must both be \\[n, D\\] word vectors"):
        L2AlignmentLoss()(torch.randn(2, 3), torch.randn(3, 3))


@pytest.mark.parametrize("strength", ["weak", "strong"])
def test_contrastive_alignment_trains_a_tiny_encoder(strength):
    torch.manual_seed(0)
    model = TinyEncoder(dropout=0.0)
    objective = ContrastiveAlignmentLoss(dim=8, strength=strength, temperature=0.1)
    source = token_batch(16, seed=6)
    target = translated(source)
    parameters = list(model.parameters()) + list(objective.parameters())
    assert_loss_falls(train_losses(parameters, lambda: objective(model.encode(source), model.encode(target))))


def test_l2_alignment_trains_a_tiny_encoder():
    torch.manual_seed(0)
    model = TinyEncoder(dropout=0.0)
    objective = L2AlignmentLoss(ParameterAnchor(model), regularization_weight=0.01)
    source = token_batch(16, seed=7)
    target = translated(source)
    assert_loss_falls(train_losses(model.parameters(), lambda: objective(model.encode(source), model.encode(target))))


@pytest.mark.parametrize("method", ["weak", "strong"])
def test_cosine_head_is_drawn_from_the_setup_seed_alone(method):
    """Workers seed their global RNG with seed + rank; the head must still start identical on every one."""
    from interlingua.trainers.objectives.base import ObjectiveSetup
    from interlingua.trainers.objectives.explicit_alignment import ExplicitAlignment, ExplicitAlignmentOptions

    class Encoder(torch.nn.Linear):
        dim = 6

    def head(global_seed: int, setup_seed: int) -> list[torch.Tensor]:
        torch.manual_seed(global_seed)  # what the engine does per worker: config.seed + rank
        objective = ExplicitAlignment(ExplicitAlignmentOptions(method=method),
                                      ObjectiveSetup(encoder=Encoder(6, 6), seed=setup_seed))
        return [p.detach().clone() for p in objective.criterion.head.parameters()]

    rank_0, rank_1 = head(42, 42), head(43, 42)
    assert all(torch.equal(a, b) for a, b in zip(rank_0, rank_1))
    torch.manual_seed(42)
    expected = CosineHead(6)  # the head seeded with the setup's seed, drawn the same way
    assert all(torch.equal(a, b) for a, b in zip(rank_0, expected.parameters()))
    assert not torch.equal(head(42, 7)[0], rank_0[0])
