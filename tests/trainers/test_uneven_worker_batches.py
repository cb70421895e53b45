"""Unequal local batches: W workers with n_r rows each (simulated in one process) give the loss and, after the
engine's averaging over workers, the gradients of 1 worker holding all N rows (float64, tight tolerance).

The simulation: worker r's local rows are a slice of the full batch; its gather returns the full tensor (what
an all-gather with gradient hands every worker), ``gather_sizes`` / ``rank`` say what a real group would.
Summing the workers' losses and dividing by W is what DeepSpeed does with their gradients."""

from __future__ import annotations

import pytest
import torch

from interlingua.trainers.distributed import gather
from interlingua.trainers.objectives import explicit_alignment, global_info_nce as global_module
from interlingua.trainers.objectives.contrastive import info_nce
from interlingua.trainers.objectives.explicit_alignment import ContrastiveAlignmentLoss, L2AlignmentLoss, LinearAlignmentMapping
from interlingua.trainers.objectives.global_info_nce import global_info_nce

TOLERANCE = dict(rtol=1e-12, atol=1e-12)


class SimulatedGroup:
    """Makes the gather functions behave as on worker ``current`` of a group whose workers hold ``sizes`` rows."""

    def __init__(self, monkeypatch, sizes: list[int]) -> None:
        self.sizes, self.current, self.full = sizes, 0, {}
        monkeypatch.setattr(gather, "gather_sizes", lambda local, device, group=None: list(self.sizes))
        monkeypatch.setattr(gather, "rank", lambda group=None: self.current)
        for module in (global_module, explicit_alignment):
            monkeypatch.setattr(module, "gather_with_grad", self._gather)

    def local(self, full: torch.Tensor, rank: int) -> torch.Tensor:
        start = sum(self.sizes[:rank])
        piece = full[start:start + self.sizes[rank]]
        self.full[id(piece)] = full
        return piece

    def _gather(self, x, group=None):
        return self.full.get(id(x), x)  # the full tensor for a slice made by local(); else as computed

    def run(self, loss_of_rank) -> torch.Tensor:
        """Average over workers of ``loss_of_rank(rank)`` (each computed as on that worker)."""
        losses = []
        for rank in range(len(self.sizes)):
            self.current = rank
            losses.append(loss_of_rank(rank))
        return torch.stack(losses).mean()


def tensors(*shapes, seed=0):
    generator = torch.Generator().manual_seed(seed)
    return [torch.randn(*shape, generator=generator, dtype=torch.float64).requires_grad_() for shape in shapes]


def gradients(loss, inputs):
    return torch.autograd.grad(loss, inputs)


def test_the_auditors_example_two_workers_of_3_and_1_rows_equal_one_worker(monkeypatch):
    """Unscaled, the two workers' average was 2.0340 where one worker with all 4 rows has 2.6102; through
    ``global_info_nce`` (which scales by W·n_r/N) the average is the one worker's loss."""
    anchors, positives = tensors((4, 5), (4, 5))
    unscaled = 0.5 * (info_nce(anchors[:3], positives, temperature=0.07, anchor_offset=0)
                      + info_nce(anchors[3:], positives, temperature=0.07, anchor_offset=3))
    one = info_nce(anchors, positives, temperature=0.07)
    assert unscaled.item() == pytest.approx(2.0340, abs=1e-4) and one.item() == pytest.approx(2.6102, abs=1e-4)
    group = SimulatedGroup(monkeypatch, [3, 1])
    averaged = group.run(lambda r: global_info_nce(group.local(anchors, r), group.local(positives, r),
                                                   temperature=0.07))
    torch.testing.assert_close(averaged, one, **TOLERANCE)


@pytest.mark.parametrize("sizes", [[3, 1], [5, 2, 1], [4, 4]])
@pytest.mark.parametrize("options", [{}, {"symmetric": True, "margin": 0.1}, {"hard": True},
                                     {"hard": True, "shared_hard_negatives": False}])
def test_global_info_nce_over_unequal_workers_equals_one_worker(monkeypatch, sizes, options):
    options = dict(options)
    hard = options.pop("hard", False)
    total = sum(sizes)
    anchors, positives, negatives = tensors((total, 6), (total, 6), (total, 2, 6), seed=len(sizes))
    inputs = [anchors, positives] + ([negatives] if hard else [])
    one = info_nce(anchors, positives, negatives if hard else None, temperature=0.07, **options)
    expected = gradients(one, inputs)

    group = SimulatedGroup(monkeypatch, sizes)
    averaged = group.run(lambda r: global_info_nce(
        group.local(anchors, r), group.local(positives, r), group.local(negatives, r) if hard else None,
        temperature=0.07, **options))
    torch.testing.assert_close(averaged, one, **TOLERANCE)  # the logged value (mean over workers): global mean
    for got, want in zip(gradients(averaged, inputs), expected):
        torch.testing.assert_close(got, want, **TOLERANCE)


def test_equal_worker_batches_are_not_rescaled(monkeypatch):
    anchors, positives = tensors((6, 4), (6, 4), seed=3)
    group = SimulatedGroup(monkeypatch, [3, 3])
    group.current = 1
    got = global_info_nce(group.local(anchors, 1), group.local(positives, 1), temperature=0.05)
    assert torch.equal(got, info_nce(anchors[3:], positives, temperature=0.05, anchor_offset=3))
    assert gather.batch_layout(3, torch.device("cpu")) == (3, 1.0)


class HeadOfFullBatch(torch.nn.Module):
    """The cosine head on a worker's slice, as the slice of the head applied to the full batch (what the
    workers' gathered head outputs are), so the simulated gather can return the full batch's outputs."""

    def __init__(self, head, group: SimulatedGroup) -> None:
        super().__init__()
        self.head, self.group = head, group

    def forward(self, piece):
        return self.group.local(self.head(self.group.full[id(piece)]), self.group.current)


def _alignment_losses(dim):
    torch.manual_seed(0)
    strong = ContrastiveAlignmentLoss(dim, strength="strong", temperature=0.1).double()
    weak = ContrastiveAlignmentLoss(dim, strength="weak", temperature=0.1).double()
    linear = LinearAlignmentMapping(dim).double()
    with torch.no_grad():
        linear.weight.add_(0.1 * torch.randn(dim, dim, dtype=torch.float64))
    return {"l2": L2AlignmentLoss(regularization_weight=0.0), "linear": linear, "weak": weak, "strong": strong}


@pytest.mark.parametrize("method", ["l2", "linear", "weak", "strong"])
def test_explicit_alignment_over_unequal_workers_equals_one_worker(monkeypatch, method):
    sizes = [5, 2]
    source, target = tensors((7, 4), (7, 4), seed=11)
    criterion = _alignment_losses(4)[method]
    one = criterion(source, target)
    expected = gradients(one, [source, target, *criterion.parameters()])

    group = SimulatedGroup(monkeypatch, sizes)
    if method in ("weak", "strong"):
        criterion.head = HeadOfFullBatch(criterion.head, group)
    averaged = group.run(lambda r: criterion(group.local(source, r), group.local(target, r)))
    torch.testing.assert_close(averaged, one, **TOLERANCE)
    for got, want in zip(gradients(averaged, [source, target, *criterion.parameters()]), expected):
        torch.testing.assert_close(got, want, **TOLERANCE)
