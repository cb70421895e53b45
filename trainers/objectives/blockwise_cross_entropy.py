r"""Per-row cross-entropy of cosine logits, computed block by block without the [n, C] logits matrix.

For unit queries q_i [n, D], unit keys k_c [C, D], the label column y_i of each row, optional extra
logits e_{i,l} [n, k] (cosines of row i's own candidates, appended as columns C..C+k-1), temperature τ,
additive margin m and an optional constant w added to each row's own set of biased columns B_i (a row's own
hard negatives: SimCSE's hard-negative weight, α = e^w):

.. math::

    z_{i,c} = (q_i \cdot k_c - m\,[c = y_i]) / \tau + w\,[c \in B_i], \qquad z_{i,C+l} = e_{i,l} / \tau + w\,[C+l \in B_i],

    \ell_i = \log \sum_{c} e^{z_{i,c}} - z_{i,y_i}.

The dense way (``F.cross_entropy`` on the full logits) keeps the [n, C] logits, their softmax and
their gradient alive through autograd: memory quadratic in the batch when C grows with n (in-batch
negatives). :class:`BlockwiseCosineCrossEntropy` instead computes ``block_rows`` rows of logits at a
time, keeps only the per-row log-sum-exp L_i = log Σ_c e^{z_{i,c}} for backward, and recomputes each
block there:

.. math::

    \frac{\partial \ell_i}{\partial (q_i \cdot k_c)} = g_i \,(e^{z_{i,c} - L_i} - [c = y_i]) / \tau

(g_i the incoming gradient of ℓ_i), from which ∂/∂q_i = Σ_c (·) k_c, ∂/∂k_c = Σ_i (·) q_i and
∂/∂e_{i,l} = g_i e^{z_{i,C+l} - L_i} / τ. Extra memory beyond the inputs and their gradients:
O(block_rows × (C + k)) for one block of logits, plus O(n) for the log-sum-exp.

Half-precision inputs (fp16/bf16) are computed in fp32 (the losses come back in fp32, like the dense
path of :func:`interlingua.trainers.objectives.contrastive.info_nce`); the gradients come back in each
input's own dtype. Autocast is switched off inside, so the matmuls really run in the compute dtype.
"""

from __future__ import annotations

import contextlib

import torch
from torch import Tensor
from torch.autograd.function import once_differentiable

from interlingua.trainers.objectives.options import require_non_negative, require_number, require_temperature

#: Logit rows computed at once: above this many query rows the loss never holds the full [n, C]
#: matrix (O(DEFAULT_BLOCK_ROWS x C) memory); at or below it the dense path is used.
DEFAULT_BLOCK_ROWS = 256


class BlockwiseCosineCrossEntropy(torch.autograd.Function):
    """Autograd function behind :func:`blockwise_cosine_cross_entropy` (see the module docstring).

    ``forward(ctx, queries, keys, labels, extra_logits, temperature, margin, block_rows, biased_columns,
    column_bias)`` returns the
    per-row losses [n]. Saved for backward: the inputs (no copies) and the per-row log-sum-exp [n].
    First-order gradients only (``once_differentiable``).
    """

    @staticmethod
    def forward(
        ctx,
        queries: Tensor,
        keys: Tensor,
        labels: Tensor,
        extra_logits: Tensor | None,
        temperature: float,
        margin: float,
        block_rows: int,
        biased_columns: Tensor | None = None,
        column_bias: float = 0.0,
    ) -> Tensor:
        dtype = _compute_dtype(queries, keys, extra_logits)
        n = queries.shape[0]
        lse = torch.empty(n, dtype=dtype, device=queries.device)
        losses = torch.empty(n, dtype=dtype, device=queries.device)
        with _no_autocast(queries.device):
            keys_c = keys.to(dtype)
            for start in range(0, n, block_rows):
                stop = min(start + block_rows, n)
                scaled, label_column = _block_logits(
                    queries, keys_c, labels, extra_logits, start, stop, dtype, temperature, margin,
                    biased_columns, column_bias,
                )
                block_lse = torch.logsumexp(scaled, dim=1)
                lse[start:stop] = block_lse
                losses[start:stop] = block_lse - scaled.gather(1, label_column).squeeze(1)
        ctx.save_for_backward(queries, keys, labels, extra_logits, lse, biased_columns)
        ctx.column_bias = column_bias
        ctx.temperature = temperature
        ctx.margin = margin
        ctx.block_rows = block_rows
        return losses

    @staticmethod
    @once_differentiable
    def backward(ctx, grad_losses: Tensor):
        queries, keys, labels, extra_logits, lse, biased_columns = ctx.saved_tensors
        temperature, margin, block_rows = ctx.temperature, ctx.margin, ctx.block_rows
        need_queries, need_keys, _, need_extra = ctx.needs_input_grad[:4]
        dtype = lse.dtype
        n, num_keys = queries.shape[0], keys.shape[0]
        grad_queries = torch.empty(queries.shape, dtype=dtype, device=queries.device) if need_queries else None
        grad_keys = torch.zeros(keys.shape, dtype=dtype, device=keys.device) if need_keys else None
        grad_extra = (
            torch.empty(extra_logits.shape, dtype=dtype, device=extra_logits.device) if need_extra else None
        )
        if need_queries or need_keys or need_extra:
            with _no_autocast(queries.device):
                keys_c = keys.to(dtype)
                scale = grad_losses.to(dtype) / temperature
                for start in range(0, n, block_rows):
                    stop = min(start + block_rows, n)
                    scaled, label_column = _block_logits(
                        queries, keys_c, labels, extra_logits, start, stop, dtype, temperature, margin,
                        biased_columns, ctx.column_bias,
                    )
                    # d loss / d cosine = g/τ (softmax - one_hot): built in place over the block's logits
                    grad_block = scaled.sub_(lse[start:stop, None]).exp_()
                    grad_block.scatter_add_(
                        1, label_column, torch.full_like(label_column, -1, dtype=dtype)
                    )
                    grad_block.mul_(scale[start:stop, None])
                    grad_cosine = grad_block[:, :num_keys]
                    if need_queries:
                        torch.mm(grad_cosine, keys_c, out=grad_queries[start:stop])
                    if need_keys:
                        grad_keys.addmm_(grad_cosine.T, queries[start:stop].to(dtype))
                    if need_extra:
                        grad_extra[start:stop] = grad_block[:, num_keys:]
        return (
            None if grad_queries is None else grad_queries.to(queries.dtype),
            None if grad_keys is None else grad_keys.to(keys.dtype),
            None,
            None if grad_extra is None else grad_extra.to(extra_logits.dtype),
            None,
            None,
            None,
            None,
            None,
        )


def blockwise_cosine_cross_entropy(
    queries: Tensor,
    keys: Tensor,
    labels: Tensor,
    *,
    temperature: float,
    margin: float = 0.0,
    extra_logits: Tensor | None = None,
    block_rows: int = DEFAULT_BLOCK_ROWS,
    biased_columns: Tensor | None = None,
    column_bias: float = 0.0,
) -> Tensor:
    """Per-row cross-entropy losses [n] of the cosine logits ``queries @ keys.T`` (plus ``extra_logits``).

    Equal to ``F.cross_entropy(cat([queries @ keys.T - m·onehot(labels), extra_logits]) / τ + w·[c ∈ B_i], labels,
    reduction="none")`` but never holds more than ``block_rows`` rows of logits (module docstring).

    Args:
        queries: [n, D] unit-normalised query rows (normalisation is the caller's, with autograd).
        keys: [C, D] unit-normalised candidate rows, shared by all queries.
        labels: [n] integer column in ``0..C-1`` of each row's positive (always a key, never an extra column).
        temperature: τ >= 1e-4; logits are cosine/τ.
        margin: m >= 0 subtracted from the label cosine before /τ.
        extra_logits: optional [n, k] cosines of each row's own extra candidates (e.g. its own hard
            negatives), appended after the C key columns; they receive gradients.
        block_rows: rows of logits computed at once (>= 1); memory O(block_rows × (C + k)).
        biased_columns: optional [n, b] integer columns (``0..C+k-1``, never a row's label) whose logits get
            ``column_bias`` added after the division by τ (each row its own b columns).
        column_bias: w, a finite number added to those logits (a log-weight: their terms of the softmax are
            multiplied by e^w); 0 leaves the loss unchanged.

    Returns:
        Losses [n] in the compute dtype (fp32 for fp16/bf16 inputs, else the inputs' dtype).

    Raises:
        ValueError: on a bad option or inconsistent shapes.
    """
    require_temperature("temperature", temperature)
    require_non_negative("margin", margin)
    if isinstance(block_rows, bool) or not isinstance(block_rows, int) or block_rows < 1:
        raise ValueError(f"block_rows must be an int >= 1, got {block_rows!r}")
    if queries.dim() != 2 or keys.dim() != 2 or queries.shape[1] != keys.shape[1] or keys.shape[0] == 0:
        raise ValueError(
            f"queries {tuple(queries.shape)} and keys {tuple(keys.shape)} must be [n, D] and [C>=1, D]"
        )
    n = queries.shape[0]
    if labels.shape != (n,) or labels.dtype.is_floating_point or labels.dtype == torch.bool:
        raise ValueError(f"labels must be an integer tensor of shape ({n},), got {labels.dtype} {tuple(labels.shape)}")
    if extra_logits is not None and (extra_logits.dim() != 2 or extra_logits.shape[0] != n):
        raise ValueError(f"extra_logits has shape {tuple(extra_logits.shape)}, expected ({n}, k)")
    column_bias = require_number("column_bias", column_bias)
    if biased_columns is not None:
        columns = keys.shape[0] + (0 if extra_logits is None else extra_logits.shape[1])
        if (biased_columns.dim() != 2 or biased_columns.shape[0] != n or biased_columns.dtype.is_floating_point
                or biased_columns.dtype == torch.bool):
            raise ValueError(f"biased_columns must be an integer tensor of shape ({n}, b), got "
                             f"{biased_columns.dtype} {tuple(biased_columns.shape)}")
        # checked where it costs no device sync (on a GPU an out-of-range column is scatter_add_'s device assert)
        if (biased_columns.device.type == "cpu" and biased_columns.numel()
                and not 0 <= int(biased_columns.min()) <= int(biased_columns.max()) < columns):
            raise ValueError(f"biased_columns must lie in 0..{columns - 1} (the {columns} logit columns)")
        if not column_bias:
            biased_columns = None
    return BlockwiseCosineCrossEntropy.apply(
        queries, keys, labels.long(), extra_logits, float(temperature), float(margin), block_rows,
        None if biased_columns is None else biased_columns.long(), column_bias,
    )


def _block_logits(
    queries: Tensor,
    keys_c: Tensor,
    labels: Tensor,
    extra_logits: Tensor | None,
    start: int,
    stop: int,
    dtype: torch.dtype,
    temperature: float,
    margin: float,
    biased_columns: Tensor | None = None,
    column_bias: float = 0.0,
) -> tuple[Tensor, Tensor]:
    """Scaled logits z of rows start..stop-1 ([b, C+k], margin and column bias applied) and their label columns
    [b, 1]."""
    cosine = queries[start:stop].to(dtype) @ keys_c.T
    if extra_logits is not None:
        cosine = torch.cat([cosine, extra_logits[start:stop].to(dtype)], dim=1)
    label_column = labels[start:stop].unsqueeze(1)
    if margin:
        penalty = torch.full(label_column.shape, -margin, dtype=dtype, device=cosine.device)
        cosine.scatter_add_(1, label_column, penalty)
    scaled = cosine.div_(temperature)
    if biased_columns is not None:
        columns = biased_columns[start:stop]
        scaled.scatter_add_(1, columns, torch.full(columns.shape, column_bias, dtype=dtype, device=scaled.device))
    return scaled, label_column


def _compute_dtype(*tensors: Tensor | None) -> torch.dtype:
    dtype = torch.float32
    for tensor in tensors:
        if tensor is not None:
            dtype = torch.promote_types(dtype, tensor.dtype)
    return dtype


def _no_autocast(device: torch.device):
    if torch.amp.is_autocast_available(device.type):
        return torch.autocast(device_type=device.type, enabled=False)
    return contextlib.nullcontext()
