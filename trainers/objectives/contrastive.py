r"""InfoNCE with in-batch negatives, hard negatives and cross-worker (local-over-global) batches.

The one pure function here is the math shared by every contrastive objective of the project
(SimCSE, translation ranking, EASE, AMR retrofit).

Equation (anchor a_i, its positive p_i, in-batch positives p_j, hard negatives h_{j,l}):

.. math::

    \ell_i = -\log \frac{e^{(\cos(a_i, p_i) - m)/\tau}}
        {e^{(\cos(a_i, p_i) - m)/\tau} + \sum_{j \ne i} e^{\cos(a_i, p_j)/\tau}
         + \sum_{j \in H_i} \sum_{l=1}^{k} e^{\cos(a_i, h_{j,l})/\tau}}

with temperature τ, additive margin m (0 unless asked for) and H_i = every row of the batch
(``shared_hard_negatives=True``: the hard negatives of all anchors are negatives for every anchor,
as in supervised SimCSE) or H_i = {i} (only the anchor's own k hard negatives).

``hard_negative_weight`` w (0 unless asked for) multiplies the terms of the anchor's *own* hard negatives
(j = i) by α = e^w: SimCSE's weighting (Gao et al. 2021, appendix: α^{1[i=j]} on e^{cos(h_i, h_j^-)/τ}; α = 1,
w = 0, works best there), which the authors' code applies as w added to those logits after the division by τ
(their ``hard_negative_weight``; EASE's and MSE-AMR's code carry the same option).

References: van den Oord et al. 2018, "Representation Learning with Contrastive Predictive Coding"
(InfoNCE); Gao et al. 2021, "SimCSE" (cosine/τ, in-batch negatives, hard negatives shared across the
batch); Yang et al. 2019, "Improving Multilingual Sentence Embedding using Bi-directional Dual Encoder
with Additive Margin Softmax" (translation ranking, both directions, additive margin m).

Local loss over a global batch: on worker r the caller passes its *local* anchors (n rows) and the
*gathered* positives and hard negatives of all workers (M rows), plus ``anchor_offset`` — the row of
the gathered tensors where worker r's rows start (see
:func:`interlingua.trainers.distributed.gather.rank_offset`). The positive of local anchor i is then
``positives[anchor_offset + i]``. The returned value is the mean over the local anchors.

Memory: past ``block_rows`` local anchors the logits are never materialised as one [n, candidates]
matrix; each direction is computed block by block by
:mod:`interlingua.trainers.objectives.blockwise_cross_entropy` (recomputed in backward), so the loss
needs memory linear in the batch, which is what lets gradient caching reach very large batches.
"""

from __future__ import annotations

from typing import Literal

import torch
import torch.nn.functional as F
from torch import Tensor

from interlingua.trainers.objectives.blockwise_cross_entropy import DEFAULT_BLOCK_ROWS, blockwise_cosine_cross_entropy
from interlingua.trainers.objectives.options import require_non_negative, require_number, require_temperature

Reduction = Literal["mean", "sum", "none"]


def info_nce(
    anchors: Tensor,
    positives: Tensor,
    hard_negatives: Tensor | None = None,
    *,
    temperature: float = 0.05,
    symmetric: bool = False,
    anchor_offset: int = 0,
    global_anchors: Tensor | None = None,
    shared_hard_negatives: bool = True,
    margin: float = 0.0,
    reduction: Reduction = "mean",
    block_rows: int | None = DEFAULT_BLOCK_ROWS,
    hard_negative_weight: float = 0.0,
) -> Tensor:
    """InfoNCE of local anchors against a (possibly gathered) batch of positives and hard negatives.

    Args:
        anchors: [n, D] local anchor embeddings (not normalised; cosine is taken here).
        positives: [M, D] positives of the whole (global) batch, M >= anchor_offset + n. Row
            ``anchor_offset + i`` is the positive of ``anchors[i]``; every other row is a negative.
        hard_negatives: optional, rows aligned with ``positives``. Either [M, k, D] (``hard_negatives[j, l]``
            is the l-th hard negative of the pair j) or flat [M*k, D] with the rule *pair-major*:
            rows ``j*k ... j*k+k-1`` belong to pair j (i.e. ``flat.view(M, k, D)``). k >= 1.
        temperature: τ >= 1e-4 (``options.MIN_TEMPERATURE``), finite; logits are cos/τ.
        symmetric: also compute the reverse direction (each positive against all anchors of the global
            batch, no hard negatives) and return the mean of both directions.
        anchor_offset: row of ``positives`` where this worker's pairs start (0 on one worker).
        global_anchors: [M, D] anchors of the whole batch, needed for ``symmetric`` when the batch is
            gathered; defaults to ``anchors`` (valid only when n == M).
        shared_hard_negatives: True: every anchor is scored against the hard negatives of all pairs
            (SimCSE); False: only against its own k hard negatives.
        margin: additive margin m >= 0 (finite) subtracted from the positive cosine (Yang et al. 2019).
        reduction: "mean" (over local anchors; both directions averaged), "sum", or "none"
            (per-anchor losses [n], or [2, n] when symmetric: forward then reverse).
        block_rows: rows of the logits computed at once; None: dense. With more than ``block_rows``
            local anchors each direction goes through
            :func:`interlingua.trainers.objectives.blockwise_cross_entropy.blockwise_cosine_cross_entropy`,
            which never stores the [n, M(+M*k)] logits (memory O(block_rows x candidates) for the loss
            instead of O(n x candidates), so linear in the batch); with at most ``block_rows`` anchors, or
            None, the logits are built densely as one matrix (same result up to float rounding).
        hard_negative_weight: w, a finite number added to the logits (cos/τ) of each anchor's own k hard negatives
            (module docstring); 0 (default) is the equation above. No effect without ``hard_negatives``; the
            reverse direction of ``symmetric`` has no hard negatives.

    Returns:
        Scalar loss (or per-anchor losses for ``reduction="none"``).

    Raises:
        ValueError: on a bad option (a bool, NaN or ±inf temperature or margin included) or inconsistent shapes.
    """
    _validate_options(temperature, margin, reduction, anchor_offset)
    hard_negative_weight = require_number("hard_negative_weight", hard_negative_weight)
    if block_rows is not None and (isinstance(block_rows, bool) or not isinstance(block_rows, int) or block_rows < 1):
        raise ValueError(f"block_rows must be None or an int >= 1, got {block_rows!r}")
    n, dim = _require_matrix("anchors", anchors)
    total, positive_dim = _require_matrix("positives", positives)
    if positive_dim != dim:
        raise ValueError(f"positives has dimension {positive_dim}, expected {dim} like anchors")
    if anchor_offset + n > total:
        raise ValueError(
            f"anchor_offset={anchor_offset} + {n} local anchors exceeds the {total} rows of positives"
        )
    labels = torch.arange(anchor_offset, anchor_offset + n, device=anchors.device)
    anchor_unit = F.normalize(anchors, dim=-1)
    positive_unit = F.normalize(positives, dim=-1)

    shared_negative_unit = own_logits = own_columns = None
    if hard_negatives is not None:
        negative_unit = F.normalize(group_hard_negatives(hard_negatives, total, dim), dim=-1)
        if hard_negative_weight:
            own_columns = own_hard_negative_columns(total, negative_unit.shape[1], anchor_offset, n,
                                                    shared_hard_negatives, anchors.device)
        if shared_hard_negatives:
            shared_negative_unit = negative_unit.reshape(-1, dim)
        else:
            own = negative_unit[anchor_offset : anchor_offset + n]
            own_logits = torch.einsum("nd,nkd->nk", anchor_unit, own)
    blockwise = block_rows is not None and n > block_rows
    if blockwise:  # columns in the dense order: positives, shared hard negatives, own hard negatives
        keys = positive_unit if shared_negative_unit is None else torch.cat([positive_unit, shared_negative_unit])
        forward_losses = blockwise_cosine_cross_entropy(
            anchor_unit, keys, labels, temperature=temperature, margin=margin, extra_logits=own_logits,
            block_rows=block_rows, biased_columns=own_columns, column_bias=hard_negative_weight,
        )
    else:
        logits = anchor_unit @ positive_unit.T
        if shared_negative_unit is not None:
            logits = torch.cat([logits, anchor_unit @ shared_negative_unit.T], dim=1)
        elif own_logits is not None:
            logits = torch.cat([logits, own_logits], dim=1)
        forward_losses = _cross_entropy_with_margin(logits, labels, margin, temperature, own_columns,
                                                    hard_negative_weight)
    if not symmetric:
        return _reduce(forward_losses, reduction)

    if global_anchors is None:
        if n != total:
            raise ValueError(
                f"symmetric=True over a gathered batch needs global_anchors ([{total}, {dim}]); "
                f"got only {n} local anchors"
            )
        global_anchors = anchors
    global_rows, global_dim = _require_matrix("global_anchors", global_anchors)
    if (global_rows, global_dim) != (total, dim):
        raise ValueError(f"global_anchors has shape {tuple(global_anchors.shape)}, expected ({total}, {dim})")
    local_positive_unit = positive_unit[anchor_offset : anchor_offset + n]
    global_anchor_unit = F.normalize(global_anchors, dim=-1)
    if blockwise:
        reverse_losses = blockwise_cosine_cross_entropy(
            local_positive_unit, global_anchor_unit, labels, temperature=temperature, margin=margin,
            block_rows=block_rows,
        )
    else:
        reverse_logits = local_positive_unit @ global_anchor_unit.T
        reverse_losses = _cross_entropy_with_margin(reverse_logits, labels, margin, temperature)
    if reduction == "none":
        return torch.stack([forward_losses, reverse_losses])
    return 0.5 * (_reduce(forward_losses, reduction) + _reduce(reverse_losses, reduction))


def group_hard_negatives(hard_negatives: Tensor, pairs: int, dim: int) -> Tensor:
    """Return hard negatives as [pairs, k, dim] from [pairs, k, dim] or pair-major flat [pairs*k, dim]."""
    if hard_negatives.dim() == 3:
        if hard_negatives.shape[0] != pairs or hard_negatives.shape[2] != dim or hard_negatives.shape[1] < 1:
            raise ValueError(
                f"hard_negatives has shape {tuple(hard_negatives.shape)}, expected ({pairs}, k>=1, {dim})"
            )
        return hard_negatives
    if hard_negatives.dim() == 2:
        rows, negative_dim = hard_negatives.shape
        if negative_dim != dim or rows == 0 or rows % pairs != 0:
            raise ValueError(
                f"flat hard_negatives has shape {tuple(hard_negatives.shape)}, expected ({pairs}*k, {dim}) "
                f"with k>=1 (rows j*k..j*k+k-1 belong to pair j)"
            )
        return hard_negatives.view(pairs, rows // pairs, dim)
    raise ValueError(f"hard_negatives must be 2-D or 3-D, got shape {tuple(hard_negatives.shape)}")


def own_hard_negative_columns(pairs: int, k: int, anchor_offset: int, n: int, shared: bool,
                              device: torch.device) -> Tensor:
    """[n, k] columns of each local anchor's own k hard negatives in ``info_nce``'s forward logits (positives
    first, ``pairs`` columns): with shared hard negatives pair j's sit at ``pairs + j*k + l``; without, every
    anchor's own k follow the positives (``pairs + l``)."""
    within = torch.arange(k, device=device)
    if not shared:
        return (pairs + within).expand(n, k)
    rows = torch.arange(anchor_offset, anchor_offset + n, device=device)
    return pairs + rows[:, None] * k + within[None, :]


def _cross_entropy_with_margin(logits: Tensor, labels: Tensor, margin: float, temperature: float,
                               biased_columns: Tensor | None = None, column_bias: float = 0.0) -> Tensor:
    """Per-row cross-entropy of cosine logits [n, C] (label column gets ``-margin``), scaled by 1/τ, plus
    ``column_bias`` at each row's ``biased_columns``."""
    if margin:
        logits = logits - margin * F.one_hot(labels, logits.shape[1]).to(logits.dtype)
    if logits.dtype in (torch.float16, torch.bfloat16):
        logits = logits.float()  # softmax over thousands of candidates in fp32
    scaled = logits / temperature
    if biased_columns is not None:
        bias = torch.zeros_like(scaled).scatter_(1, biased_columns, column_bias)
        scaled = scaled + bias
    return F.cross_entropy(scaled, labels, reduction="none")


def _reduce(losses: Tensor, reduction: Reduction) -> Tensor:
    if reduction == "mean":
        return losses.mean()
    if reduction == "sum":
        return losses.sum()
    return losses


def _require_matrix(name: str, tensor: Tensor) -> tuple[int, int]:
    if tensor.dim() != 2 or tensor.shape[0] == 0:
        raise ValueError(f"{name} must be a non-empty [rows, dim] matrix, got shape {tuple(tensor.shape)}")
    return int(tensor.shape[0]), int(tensor.shape[1])


def _validate_options(temperature: float, margin: float, reduction: str, anchor_offset: int) -> None:
    require_temperature("temperature", temperature)
    require_non_negative("margin", margin)
    if reduction not in ("mean", "sum", "none"):
        raise ValueError(f"reduction must be 'mean', 'sum' or 'none', got {reduction!r}")
    if anchor_offset < 0:
        raise ValueError(f"anchor_offset must be >= 0, got {anchor_offset}")
