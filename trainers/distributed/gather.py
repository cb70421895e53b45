"""All-gather along the batch dimension, with and without gradient, for cross-worker negatives.

Contrastive losses get their negatives from the batch. With W data-parallel workers each holding a
local batch, every worker gathers the *global* batch of candidate embeddings and computes the loss of
its *local* anchors against it ("local loss over the global batch").

Gradient semantics of :func:`gather_with_grad` (the part most implementations get wrong):
every worker r computes its own loss L_r on the gathered tensor G = [x_0; x_1; ...; x_{W-1}].
The gradient that worker s must push into its encoder for its slice x_s is

    dL/dx_s  with  L = sum_r L_r,   i.e.   sum_r  dL_r/dG[slice_s]

so the backward all-reduces (sums) the incoming gradient of G over the workers and keeps the local
slice (reduce-scatter semantics). After the usual data-parallel gradient *averaging* of parameter
gradients (DDP, DeepSpeed), each worker holds d/dθ (1/W · sum_r L_r): with equal local batch sizes and
mean-reduced local losses this is exactly the gradient of the mean loss over the global batch,
i.e. W workers × batch B are equivalent to 1 worker × batch W·B.

With *unequal* local batches (n_r rows on worker r, N = sum_r n_r) averaging the workers' means would
weight a row of worker r by 1/(W·n_r) instead of 1/N. :func:`batch_layout` gives the factor W·n_r/N by
which worker r multiplies its mean loss (:func:`share_of_global_mean`), so that the average over workers
is again the mean over all N rows, for the loss value and its gradient. The factor is exactly 1 when all
workers hold equal batches (results unchanged, bit for bit).

Local batches may have different sizes along dim 0 (e.g. the last batch of an epoch); the other
dimensions must agree. Tensors are gathered whole along dim 0, so a tensor shaped [B, k, D]
(k hard negatives per anchor) keeps each anchor's k rows together: gathered[offset_r + i, j] is
worker r's x[i, j]. When torch.distributed is not initialised every function is the identity.
"""

from __future__ import annotations

import torch
import torch.distributed as dist
from torch import Tensor
from torch.distributed import ProcessGroup


def is_distributed(group: ProcessGroup | None = None) -> bool:
    """True when torch.distributed is initialised and the group has more than one member."""
    return dist.is_available() and dist.is_initialized() and dist.get_world_size(group) > 1


def world_size(group: ProcessGroup | None = None) -> int:
    """Number of workers in ``group`` (1 when not distributed)."""
    return dist.get_world_size(group) if dist.is_available() and dist.is_initialized() else 1


def rank(group: ProcessGroup | None = None) -> int:
    """This worker's rank in ``group`` (0 when not distributed)."""
    return dist.get_rank(group) if dist.is_available() and dist.is_initialized() else 0


def gather_sizes(local_size: int, device: torch.device, group: ProcessGroup | None = None) -> list[int]:
    """Dim-0 sizes of every worker's local tensor, in rank order (``[local_size]`` when not distributed).

    ``device`` must be one the backend can communicate on (CPU for gloo, the current CUDA device for NCCL).
    """
    if not is_distributed(group):
        return [local_size]
    local = torch.tensor([local_size], dtype=torch.long, device=device)
    sizes = [torch.zeros_like(local) for _ in range(dist.get_world_size(group))]
    dist.all_gather(sizes, local, group=group)
    return [int(size.item()) for size in sizes]


def rank_offset(local_size: int, device: torch.device, group: ProcessGroup | None = None) -> int:
    """Row index in the gathered tensor where this worker's local rows start (:func:`batch_layout`'s offset).

    Equals ``rank * local_size`` when all workers hold equal batches. Use it as ``anchor_offset`` of
    :func:`interlingua.trainers.objectives.contrastive.info_nce`.
    """
    return batch_layout(local_size, device, group)[0]


def batch_layout(local_size: int, device: torch.device, group: ProcessGroup | None = None) -> tuple[int, float]:
    """``(offset, weight)`` of this worker's ``local_size`` rows in the global batch (one collective).

    ``offset`` is :func:`rank_offset`; ``weight`` = W·n_r/N, the factor that turns this worker's mean over its
    own rows into its share of the global mean (averaged over the W workers, as DDP/DeepSpeed average
    gradients): 1.0 exactly when every worker holds ``local_size`` rows, and always on one process.
    """
    sizes = gather_sizes(local_size, device, group)
    offset = sum(sizes[: rank(group)])
    if all(size == local_size for size in sizes):
        return offset, 1.0
    return offset, len(sizes) * local_size / sum(sizes)


def share_of_global_mean(loss: Tensor, local_size: int, group: ProcessGroup | None = None) -> Tensor:
    """Scale ``loss``, a mean over this worker's ``local_size`` rows, by W·n_r/N (:func:`batch_layout`): the
    average over workers of the returned values (and of their gradients) is the mean over all rows of the
    global batch, whatever the local sizes. Unchanged when the sizes are equal or not distributed."""
    return scaled(loss, batch_layout(local_size, loss.device, group)[1])


def scaled(loss: Tensor, weight: float) -> Tensor:
    """``loss * weight``, or ``loss`` itself when ``weight`` is 1.0 (equal batches stay bit-identical)."""
    return loss if weight == 1.0 else loss * weight


def _all_gather_dim0(x: Tensor, group: ProcessGroup | None) -> tuple[Tensor, list[int]]:
    """Concatenate every worker's ``x`` along dim 0 (sizes may differ); returns the result and the sizes."""
    sizes = gather_sizes(x.shape[0], x.device, group)
    largest = max(sizes)
    padded = x.contiguous()
    if x.shape[0] < largest:
        padding = x.new_zeros((largest - x.shape[0], *x.shape[1:]))
        padded = torch.cat([padded, padding], dim=0)
    buffers = [torch.empty_like(padded) for _ in sizes]
    dist.all_gather(buffers, padded, group=group)
    return torch.cat([buffer[:size] for buffer, size in zip(buffers, sizes)], dim=0), sizes


class _AllGatherWithGrad(torch.autograd.Function):
    """Autograd function: forward all-gathers along dim 0; backward sums gradients over workers and slices."""

    @staticmethod
    def forward(ctx, x: Tensor, group: ProcessGroup | None) -> Tensor:  # type: ignore[override]
        gathered, sizes = _all_gather_dim0(x, group)
        my_rank = dist.get_rank(group)
        ctx.group = group
        ctx.start = sum(sizes[:my_rank])
        ctx.stop = ctx.start + sizes[my_rank]
        return gathered

    @staticmethod
    def backward(ctx, grad_output: Tensor) -> tuple[Tensor, None]:  # type: ignore[override]
        summed = grad_output.contiguous().clone()
        dist.all_reduce(summed, op=dist.ReduceOp.SUM, group=ctx.group)
        return summed[ctx.start : ctx.stop], None


def gather_with_grad(x: Tensor, group: ProcessGroup | None = None) -> Tensor:
    """All-gather ``x`` along dim 0 from every worker, keeping the graph to the local slice.

    Input: ``x`` of shape [n_r, *S] on worker r (n_r may differ between workers, S may not).
    Output: [sum_r n_r, *S], workers' tensors concatenated in rank order. Backward: the gradient of the
    output is summed over all workers and this worker's slice flows into ``x`` (see module docstring).
    Every worker must call it (it is a collective), and, if any worker back-propagates through it,
    all must. Identity when not distributed.
    """
    if not is_distributed(group):
        return x
    return _AllGatherWithGrad.apply(x, group)


def gather_no_grad(x: Tensor, group: ProcessGroup | None = None) -> Tensor:
    """All-gather ``x`` along dim 0 without gradient (labels, ids, metrics); identity when not distributed."""
    if not is_distributed(group):
        return x
    with torch.no_grad():
        gathered, _ = _all_gather_dim0(x.detach(), group)
    return gathered
