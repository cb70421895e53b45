"""InfoNCE of this worker's anchors against the batch gathered from all workers (local loss, global negatives).

:func:`global_info_nce` is what every objective class calls: it gathers positives, hard negatives and
(for the two-directional loss) anchors with gradient, finds this worker's offset in the gathered batch
and calls :func:`interlingua.trainers.objectives.contrastive.info_nce`. On one process it is exactly
``info_nce`` on the local batch. With unequal local batches the mean is scaled by W·n_r/N
(:func:`interlingua.trainers.distributed.gather.batch_layout`), so that averaging over workers gives the
global mean whatever the sizes (EASE drops rows with unknown entities, word-pair counts differ per worker).
"""

from __future__ import annotations

from torch import Tensor
from torch.distributed import ProcessGroup

from interlingua.trainers.distributed.gather import batch_layout, gather_with_grad, scaled
from interlingua.trainers.objectives.blockwise_cross_entropy import DEFAULT_BLOCK_ROWS
from interlingua.trainers.objectives.contrastive import Reduction, group_hard_negatives, info_nce


def global_info_nce(
    anchors: Tensor,
    positives: Tensor,
    hard_negatives: Tensor | None = None,
    *,
    temperature: float = 0.05,
    symmetric: bool = False,
    shared_hard_negatives: bool = True,
    margin: float = 0.0,
    reduction: Reduction = "mean",
    group: ProcessGroup | None = None,
    block_rows: int | None = DEFAULT_BLOCK_ROWS,
    hard_negative_weight: float = 0.0,
) -> Tensor:
    """Local InfoNCE over the global batch.

    Args:
        anchors: [n, D] this worker's anchors.
        positives: [n, D] this worker's positives (row i pairs with ``anchors[i]``).
        hard_negatives: optional [n, k, D] (or pair-major flat [n*k, D]) hard negatives of the local pairs;
            gathered as [n, k, D] blocks so they stay attached to their own pair.
        temperature, symmetric, shared_hard_negatives, margin, reduction, hard_negative_weight: as in ``info_nce``.
        group: process group to gather over (default: the world; no gather when not distributed).
        block_rows: as in ``info_nce``: rows of the logits computed at once; None: dense. Compared with
            the number of *local* anchors; the candidates are the gathered batch.

    Returns:
        The loss of the local anchors. ``reduction="mean"``: their mean times W·n_r/N (n_r local anchors on
        worker r of W, N in all; the factor is 1 when the local batches are equal), so the average of the
        workers' values is the mean loss over the global batch and averaging the parameter gradients over
        workers (DDP/DeepSpeed) gives its gradient, as 1 worker with the whole batch would. "sum" / "none":
        unscaled.
    """
    if positives.shape[0] != anchors.shape[0]:
        raise ValueError(
            f"positives has {positives.shape[0]} rows, expected {anchors.shape[0]} (one per local anchor)"
        )
    gathered_negatives = None
    if hard_negatives is not None:
        local_negatives = group_hard_negatives(hard_negatives, anchors.shape[0], anchors.shape[-1])
        gathered_negatives = gather_with_grad(local_negatives, group)
    offset, weight = batch_layout(anchors.shape[0], anchors.device, group)
    loss = info_nce(
        anchors,
        gather_with_grad(positives, group),
        gathered_negatives,
        temperature=temperature,
        symmetric=symmetric,
        anchor_offset=offset,
        global_anchors=gather_with_grad(anchors, group) if symmetric else None,
        shared_hard_negatives=shared_hard_negatives,
        margin=margin,
        reduction=reduction,
        block_rows=block_rows,
        hard_negative_weight=hard_negative_weight,
    )
    return scaled(loss, weight) if reduction == "mean" else loss
