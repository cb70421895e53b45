"""gather_with_grad / gather_no_grad: identity on one process; layout, reduce-scatter backward and
2 workers × B == 1 worker × 2B (loss and averaged parameter gradients) on 2 gloo processes."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
import torch

sys.path.insert(0, str(Path(__file__).parent))

import distributed_scenarios  # noqa: E402
import gather_scenarios as scenarios  # noqa: E402
from contrastive_harness import TinyEncoder, assert_close_relative, gradient_vector, triplet_views  # noqa: E402

from interlingua.trainers.distributed.gather import gather_no_grad, gather_with_grad, rank_offset  # noqa: E402
from interlingua.trainers.objectives.contrastive import info_nce  # noqa: E402


def test_single_process_gather_is_identity_with_gradient():
    x = torch.randn(3, 2, 4, requires_grad=True)
    gathered = gather_with_grad(x)
    (gathered * 2).sum().backward()
    assert torch.equal(gathered, x)
    assert torch.equal(x.grad, torch.full_like(x, 2.0))
    assert torch.equal(gather_no_grad(torch.arange(3)), torch.arange(3))
    assert rank_offset(3, torch.device("cpu")) == 0


@pytest.fixture(scope="module")
def worker_results() -> list[dict]:
    return [result["gather"] for result in distributed_scenarios.worker_results()]


def test_hard_negative_blocks_stay_with_their_anchor(worker_results):
    expected = torch.cat([scenarios.labelled_block(rank, rows) for rank, rows in scenarios.LOCAL_ROWS.items()])
    for result in worker_results:
        assert torch.equal(result["gathered"], expected)
    assert [result["offset"] for result in worker_results] == [0, 3]
    for result in worker_results:
        assert result["gathered_ids"].tolist() == [0, 1, 2, 100, 101]


def test_backward_sums_gradients_of_all_workers_for_the_local_slice(worker_results):
    total = sum(scenarios.LOCAL_ROWS.values())
    summed_weights = scenarios.gather_weights(total, 0) + scenarios.gather_weights(total, 1)
    assert torch.equal(worker_results[0]["local_gradient"], summed_weights[:3])
    assert torch.equal(worker_results[1]["local_gradient"], summed_weights[3:])


def one_worker(variant: str, dtype: torch.dtype):
    """The encoder (its gradients filled) and the loss of 1 worker holding all PAIRS pairs."""
    settings = scenarios.LOSS_VARIANTS[variant]
    model = TinyEncoder(dropout=0.0).to(dtype)
    views = triplet_views(scenarios.PAIRS, settings["negatives_per_pair"], seed=5)
    embeddings = [model.encode(view) for view in views]
    negatives = embeddings[2] if len(embeddings) == 3 else None
    loss = info_nce(embeddings[0], embeddings[1], negatives, temperature=0.1, **settings["options"])
    loss.backward()
    return model, loss


@pytest.mark.parametrize("variant", sorted(scenarios.LOSS_VARIANTS))
def test_two_workers_equal_one_worker_with_double_batch(worker_results, variant):
    model, loss = one_worker(variant, torch.float32)
    worker_losses = [result["losses"][variant]["loss"] for result in worker_results]
    assert_close_relative(torch.stack(worker_losses).mean(), loss.detach())
    for result in worker_results:
        assert_close_relative(result["losses"][variant]["gradients"], gradient_vector(model))


@pytest.mark.parametrize("variant", sorted(scenarios.LOSS_VARIANTS))
def test_two_unequal_workers_equal_one_worker_with_their_batch(worker_results, variant):
    """5 + 3 pairs on 2 gloo workers (float64): the mean of the workers' losses and the averaged gradients are
    those of 1 worker with the 8 pairs (each worker scales its mean by W·n_r/N)."""
    model, loss = one_worker(variant, torch.float64)
    worker_losses = [result["uneven_losses"][variant]["loss"] for result in worker_results]
    torch.testing.assert_close(torch.stack(worker_losses).mean(), loss.detach(), rtol=1e-12, atol=1e-12)
    for result in worker_results:
        torch.testing.assert_close(result["uneven_losses"][variant]["gradients"], gradient_vector(model),
                                   rtol=1e-12, atol=1e-12)
