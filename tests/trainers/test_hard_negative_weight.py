"""The hard-negative weight w (SimCSE's α = e^w on each anchor's own hard negatives): by hand, against the authors'
construction (a weight matrix added to the logits), on a gathered batch, dense = block by block, cached = plain,
and the engine options of simcse_sup, amr_retrofit and ease."""

from __future__ import annotations

import math
import sys
from pathlib import Path

import pytest
import torch
import torch.nn.functional as F

sys.path.insert(0, str(Path(__file__).parent))

from contrastive_harness import TinyEncoder, assert_close_relative, gradient_vector, triplet_views  # noqa: E402

from interlingua.trainers.gradcache import cached_step, plain_step  # noqa: E402
from interlingua.trainers.objectives.amr_retrofit import AMRRetrofitLoss, AMRRetrofitOptions  # noqa: E402
from interlingua.trainers.objectives.contrastive import info_nce  # noqa: E402
from interlingua.trainers.objectives.ease import EASELoss, EASEOptions  # noqa: E402
from interlingua.trainers.objectives.simcse import (  # noqa: E402
    SimCSEOptions, SupervisedSimCSELoss, SupervisedSimCSEOptions)


def authors_reference(anchors, positives, negatives, tau, weight):
    """The SimCSE authors' construction for k = 1 on one worker: cos_sim = [z1·z2 | z1·z3] / τ, plus a matrix holding
    ``weight`` at each row's own z3 column (0 elsewhere), then cross-entropy with label i."""
    cos = lambda a, b: F.cosine_similarity(a[:, None], b[None], dim=-1)  # noqa: E731
    logits = torch.cat([cos(anchors, positives), cos(anchors, negatives)], dim=1) / tau
    n = anchors.shape[0]
    weights = torch.tensor([[0.0] * n + [0.0] * i + [weight] + [0.0] * (n - i - 1) for i in range(n)])
    return F.cross_entropy(logits + weights, torch.arange(n))


def test_by_hand():
    """Each premise's own contradiction term is multiplied by α = e^w; the others' are not."""
    premise = torch.tensor([[1.0, 0.0], [0.0, 1.0]])
    entailment = torch.tensor([[1.0, 0.0], [0.0, 1.0]])
    contradiction = torch.tensor([[-1.0, 0.0], [1.0, 1.0]])
    tau, weight = 0.5, 0.8
    alpha, c = math.exp(weight), 1 / math.sqrt(2)
    # premise 1: positives cos 1, 0; contradictions cos -1 (own), c.  premise 2: positives 0, 1; contradictions 0, c (own)
    expected = 0.5 * (
        -math.log(math.exp(2) / (math.exp(2) + 1 + alpha * math.exp(-2) + math.exp(c / tau)))
        + -math.log(math.exp(2) / (1 + math.exp(2) + 1 + alpha * math.exp(c / tau)))
    )
    loss = SupervisedSimCSELoss(temperature=tau, hard_negative_weight=weight)(premise, entailment, contradiction)
    assert loss.item() == pytest.approx(expected, rel=1e-6)


@pytest.mark.parametrize("weight", [0.0, 1.0, -1.5, 3.0])
def test_equals_the_authors_weight_matrix(weight):
    generator = torch.Generator().manual_seed(3)
    anchors, positives, negatives = (torch.randn(6, 8, generator=generator) for _ in range(3))
    ours = SupervisedSimCSELoss(temperature=0.05, hard_negative_weight=weight)(anchors, positives, negatives)
    torch.testing.assert_close(ours, authors_reference(anchors, positives, negatives, 0.05, weight))


def test_weight_zero_is_the_equation():
    generator = torch.Generator().manual_seed(4)
    anchors, positives = torch.randn(5, 8, generator=generator), torch.randn(5, 8, generator=generator)
    negatives = torch.randn(5, 2, 8, generator=generator)
    assert torch.equal(info_nce(anchors, positives, negatives, hard_negative_weight=0.0),
                       info_nce(anchors, positives, negatives))
    assert not torch.equal(info_nce(anchors, positives, negatives, hard_negative_weight=0.5),
                           info_nce(anchors, positives, negatives))


def gathered_reference(anchors, positives, negatives, offset, tau, weight, shared):
    """Row by row over a gathered batch: anchor i (pair offset + i) against every positive, then every pair's k hard
    negatives (shared) or its own k only, its own pair's terms weighted by e^w."""
    losses = []
    for i, anchor in enumerate(anchors):
        pair = offset + i
        cos = lambda rows: F.cosine_similarity(anchor[None], rows, dim=-1) / tau  # noqa: E731
        terms = [cos(positives)]
        for j in (range(len(positives)) if shared else [pair]):
            terms.append(cos(negatives[j]) + (weight if j == pair else 0.0))
        terms = torch.cat(terms)
        losses.append(torch.logsumexp(terms, 0) - cos(positives[pair:pair + 1])[0])
    return torch.stack(losses).mean()


@pytest.mark.parametrize("shared", [True, False])
@pytest.mark.parametrize("k", [1, 3])
def test_gathered_batch_weights_the_local_anchors_own_pairs(shared, k):
    """Worker 2 of 3 (rows 4..7 of 12 gathered pairs): its anchors' own hard negatives are pairs 4..7's."""
    generator = torch.Generator().manual_seed(5)
    positives, negatives = torch.randn(12, 8, generator=generator), torch.randn(12, k, 8, generator=generator)
    anchors = torch.randn(4, 8, generator=generator)
    for block_rows in (None, 2):  # dense and block by block
        ours = info_nce(anchors, positives, negatives, temperature=0.1, anchor_offset=4, shared_hard_negatives=shared,
                        hard_negative_weight=1.3, block_rows=block_rows)
        torch.testing.assert_close(ours, gathered_reference(anchors, positives, negatives, 4, 0.1, 1.3, shared))


@pytest.mark.parametrize("shared", [True, False])
def test_blockwise_gradients_equal_the_dense_ones(shared):
    generator = torch.Generator().manual_seed(6)
    inputs = [torch.randn(9, 8, generator=generator), torch.randn(9, 8, generator=generator),
              torch.randn(9, 2, 8, generator=generator)]
    gradients = []
    for block_rows in (None, 4):
        leaves = [tensor.clone().requires_grad_() for tensor in inputs]
        loss = info_nce(*leaves, temperature=0.05, shared_hard_negatives=shared, symmetric=True,
                        hard_negative_weight=-0.7, block_rows=block_rows)
        loss.backward()
        gradients.append((loss.detach(), [leaf.grad for leaf in leaves]))
    torch.testing.assert_close(gradients[0][0], gradients[1][0])
    for dense, blockwise in zip(gradients[0][1], gradients[1][1]):
        torch.testing.assert_close(dense, blockwise)


def test_cached_step_equals_the_plain_one():
    """GradCache with dropout: the weighted loss's gradients are the plain step's."""
    model = TinyEncoder(dropout=0.3)
    views = triplet_views(12, 1, seed=8)
    loss = SupervisedSimCSELoss(temperature=0.05, hard_negative_weight=1.0)
    results = {}
    for name, step in (("cached", cached_step), ("plain", plain_step)):
        model.zero_grad(set_to_none=True)
        torch.manual_seed(2)
        value = step(model.encode, views, lambda embeddings: loss(*embeddings), 5)
        results[name] = (value, gradient_vector(model))
    assert_close_relative(results["cached"][0], results["plain"][0])
    assert_close_relative(results["cached"][1], results["plain"][1])


def test_ease_and_amr_pass_the_weight_to_their_hard_negatives():
    generator = torch.Generator().manual_seed(7)
    sentences, again, entities, negatives = (torch.randn(6, 8, generator=generator) for _ in range(4))
    ease = EASELoss(entity_temperature=0.1, simcse_temperature=0.05, simcse_weight=0.0, hard_negative_weight=1.0)
    torch.testing.assert_close(ease(sentences, again, entities, negatives),
                               authors_reference(sentences, entities, negatives, 0.1, 1.0))
    amr = AMRRetrofitLoss(temperature=0.05, hard_negative_weight=2.0)
    torch.testing.assert_close(amr(sentences, entities, negatives),
                               authors_reference(sentences, entities, negatives, 0.05, 2.0))
    both = AMRRetrofitLoss(temperature=0.05, reverse_direction=True, hard_negative_weight=2.0)
    reverse = F.cross_entropy(F.cosine_similarity(entities[:, None], sentences[None], dim=-1) / 0.05, torch.arange(6))
    torch.testing.assert_close(both(sentences, entities, negatives),
                               authors_reference(sentences, entities, negatives, 0.05, 2.0) + reverse)


def test_options():
    assert SupervisedSimCSEOptions().hard_negative_weight == 0.0
    assert SupervisedSimCSEOptions(hard_negative_weight="1").hard_negative_weight == 1.0
    assert AMRRetrofitOptions(hard_negative_weight=-2).hard_negative_weight == -2.0
    assert EASEOptions(entity_vectors="v.txt", hard_negative_weight=1).hard_negative_weight == 1.0
    assert "hard_negative_weight" not in SimCSEOptions.model_fields  # unsupervised SimCSE has no hard negatives
    for bad in (float("nan"), float("inf"), True):
        with pytest.raises(ValueError, match="hard_negative_weight must be a"):
            SupervisedSimCSEOptions(hard_negative_weight=bad)
        with pytest.raises(ValueError, match="hard_negative_weight must be a"):
            info_nce(torch.randn(2, 3), torch.randn(2, 3), hard_negative_weight=bad)


@pytest.mark.parametrize("objective", ["simcse_sup", "amr_retrofit"])
def test_the_engine_objective_hands_the_weight_to_its_loss(objective):
    """``train.hard_negative_weight`` reaches the criterion the engine steps with (``loss_options``)."""
    from interlingua.trainers.engine.config import TrainConfig
    from interlingua.trainers.engine.train_loop import build_objective

    class Encoder(torch.nn.Module):
        dim = 8

    def weight(config):
        built = build_objective(config, Encoder())
        return (built.criterion.supervised if objective == "amr_retrofit" else built.criterion).hard_negative_weight

    assert weight(TrainConfig(objective=objective, hard_negative_weight=1.5)) == 1.5
    assert weight(TrainConfig(objective=objective)) == 0.0
