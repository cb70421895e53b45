"""Blockwise cosine cross-entropy against the dense ``F.cross_entropy`` path, and info_nce blockwise vs dense."""

from __future__ import annotations

import pytest
import torch
import torch.nn.functional as F

from interlingua.trainers.objectives.blockwise_cross_entropy import blockwise_cosine_cross_entropy
from interlingua.trainers.objectives.contrastive import info_nce

N, C, D, K = 7, 11, 5, 3


def _case(dtype, *, extra: bool, offset: int, seed: int = 0):
    generator = torch.Generator().manual_seed(seed)
    queries = F.normalize(torch.randn(N, D, generator=generator, dtype=torch.float64), dim=-1).to(dtype)
    keys = F.normalize(torch.randn(C, D, generator=generator, dtype=torch.float64), dim=-1).to(dtype)
    extra_logits = (torch.rand(N, K, generator=generator, dtype=torch.float64) * 2 - 1).to(dtype) if extra else None
    labels = torch.arange(offset, offset + N)
    # a gathered batch: row i's positive is key offset+i; shuffle two rows so labels are not monotone
    labels[[0, 3]] = labels[[3, 0]]
    return queries, keys, extra_logits, labels


def _dense(queries, keys, labels, temperature, margin, extra_logits):
    logits = queries @ keys.T
    logits = logits - margin * F.one_hot(labels, keys.shape[0]).to(logits.dtype)
    if extra_logits is not None:
        logits = torch.cat([logits, extra_logits], dim=1)
    return F.cross_entropy(logits / temperature, labels, reduction="none")


def _values_and_grads(fn, inputs, weights):
    leaves = [None if x is None else x.detach().clone().requires_grad_(True) for x in inputs]
    losses = fn(*leaves)
    (losses * weights).sum().backward()
    return losses.detach(), [None if x is None else x.grad for x in leaves]


def _assert_close(actual, expected, rtol):
    assert actual.dtype == expected.dtype
    scale = expected.abs().max().clamp_min(1e-12)
    assert (actual - expected).abs().max() <= rtol * scale, (actual, expected)


@pytest.mark.parametrize("dtype", [torch.float64, torch.float32])
@pytest.mark.parametrize("block_rows", [1, 3, N, 64])
@pytest.mark.parametrize("margin", [0.0, 0.25])
@pytest.mark.parametrize("extra", [False, True])
@pytest.mark.parametrize("offset", [0, 4])
def test_matches_dense_cross_entropy(dtype, block_rows, margin, extra, offset):
    queries, keys, extra_logits, labels = _case(dtype, extra=extra, offset=offset)
    temperature = 0.07
    weights = torch.linspace(0.5, 1.5, N, dtype=dtype)  # non-uniform upstream gradient

    def blockwise(q, k, e):
        return blockwise_cosine_cross_entropy(
            q, k, labels, temperature=temperature, margin=margin, extra_logits=e, block_rows=block_rows
        )

    def dense(q, k, e):
        return _dense(q, k, labels, temperature, margin, e)

    got, got_grads = _values_and_grads(blockwise, (queries, keys, extra_logits), weights)
    want, want_grads = _values_and_grads(dense, (queries, keys, extra_logits), weights)
    rtol = 1e-5
    _assert_close(got, want, rtol)
    for got_grad, want_grad in zip(got_grads, want_grads):
        if want_grad is None:
            assert got_grad is None
        else:
            _assert_close(got_grad, want_grad, rtol)


@pytest.mark.parametrize("extra", [False, True])
def test_gradcheck_float64(extra):
    generator = torch.Generator().manual_seed(1)
    queries = torch.randn(4, 3, generator=generator, dtype=torch.float64, requires_grad=True)
    keys = torch.randn(6, 3, generator=generator, dtype=torch.float64, requires_grad=True)
    inputs = [queries, keys]
    if extra:
        inputs.append(torch.randn(4, 2, generator=generator, dtype=torch.float64, requires_grad=True))
    labels = torch.tensor([2, 3, 5, 4])

    def fn(q, k, e=None):
        return blockwise_cosine_cross_entropy(q, k, labels, temperature=0.5, margin=0.2, extra_logits=e, block_rows=3)

    assert torch.autograd.gradcheck(fn, tuple(inputs))


def test_only_requested_gradients_are_computed():
    queries, keys, extra_logits, labels = _case(torch.float64, extra=True, offset=2)
    keys.requires_grad_(True)
    losses = blockwise_cosine_cross_entropy(
        queries, keys, labels, temperature=0.1, extra_logits=extra_logits, block_rows=2
    )
    losses.sum().backward()
    assert keys.grad is not None and queries.grad is None and extra_logits.grad is None


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16])
def test_half_inputs_compute_in_float32(dtype):
    queries, keys, extra_logits, labels = _case(dtype, extra=True, offset=1)
    weights = torch.ones(N)

    def blockwise(q, k, e):
        return blockwise_cosine_cross_entropy(q, k, labels, temperature=0.05, margin=0.1, extra_logits=e, block_rows=2)

    def reference(q, k, e):  # dense in fp32 on the same (rounded) half inputs
        return _dense(q.float(), k.float(), labels, 0.05, 0.1, e.float())

    got, got_grads = _values_and_grads(blockwise, (queries, keys, extra_logits), weights)
    want, want_grads = _values_and_grads(reference, (queries, keys, extra_logits), weights)
    assert got.dtype == torch.float32
    _assert_close(got, want, 1e-5)
    for got_grad, want_grad in zip(got_grads, want_grads):
        assert got_grad.dtype == dtype
        _assert_close(got_grad.float(), want_grad.float(), 1e-2)  # one rounding to the half dtype


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"temperature": 0.0}, "temperature must be a number >= 0.0001"),
        ({"margin": -0.1}, "margin must be a number >= 0"),
        ({"block_rows": 0}, "block_rows must be an int >= 1"),
        ({"labels": torch.zeros(3)}, "labels must be an integer tensor"),
        ({"extra_logits": torch.zeros(2, 1)}, "extra_logits has shape"),
        ({"keys": torch.zeros(4, 3)}, "must be \\[n, D\\] and \\[C>=1, D\\]"),
        ({"biased_columns": torch.ones(3, 1, dtype=torch.bool), "column_bias": 1.0}, "biased_columns must be an integer"),
        ({"biased_columns": torch.full((3, 1), 4), "column_bias": 1.0}, "biased_columns must lie in 0..3"),
        ({"biased_columns": torch.full((3, 1), -1), "column_bias": 1.0}, "biased_columns must lie in 0..3"),
        ({"biased_columns": torch.zeros(3, 1, dtype=torch.long), "column_bias": float("nan")},
         "column_bias must be a finite number"),
    ],
)
def test_bad_arguments_are_rejected(kwargs, message):
    arguments = {"queries": torch.randn(3, 2), "keys": torch.randn(4, 2), "labels": torch.arange(3), "temperature": 0.1}
    arguments.update(kwargs)
    with pytest.raises(ValueError, match=message):
        blockwise_cosine_cross_entropy(**arguments)


@pytest.mark.parametrize("dtype", [torch.float64, torch.float32])
@pytest.mark.parametrize("shared", [True, False])
@pytest.mark.parametrize("reduction", ["mean", "none"])
def test_info_nce_blockwise_equals_dense(dtype, shared, reduction):
    generator = torch.Generator().manual_seed(5)
    total, local, offset, k = 12, 8, 3, 2  # worker with 8 anchors starting at row 3 of a 12-row gathered batch
    global_anchors = torch.randn(total, D, generator=generator, dtype=dtype)
    positives = torch.randn(total, D, generator=generator, dtype=dtype)
    negatives = torch.randn(total, k, D, generator=generator, dtype=dtype)

    def run(block_rows):
        leaves = [t.clone().requires_grad_(True) for t in (global_anchors, positives, negatives)]
        all_anchors, all_positives, all_negatives = leaves
        loss = info_nce(
            all_anchors[offset : offset + local],
            all_positives,
            all_negatives,
            temperature=0.05,
            symmetric=True,
            anchor_offset=offset,
            global_anchors=all_anchors,
            shared_hard_negatives=shared,
            margin=0.2,
            reduction=reduction,
            block_rows=block_rows,
        )
        weights = torch.linspace(0.5, 1.5, loss.numel(), dtype=loss.dtype).view(loss.shape)
        (loss * weights).sum().backward()
        return loss.detach(), [leaf.grad for leaf in leaves]

    blockwise_loss, blockwise_grads = run(3)
    dense_loss, dense_grads = run(None)
    assert blockwise_loss.shape == dense_loss.shape == ((2, local) if reduction == "none" else ())
    _assert_close(blockwise_loss, dense_loss, 1e-5)
    for got, want in zip(blockwise_grads, dense_grads):
        _assert_close(got, want, 1e-5)


def test_info_nce_small_batch_is_exactly_dense():
    generator = torch.Generator().manual_seed(2)
    anchors, positives = torch.randn(5, D, generator=generator), torch.randn(5, D, generator=generator)
    negatives = torch.randn(5, 2, D, generator=generator)
    for kwargs in ({}, {"symmetric": True}, {"shared_hard_negatives": False, "margin": 0.1}):
        default = info_nce(anchors, positives, negatives, block_rows=5, **kwargs)
        dense = info_nce(anchors, positives, negatives, block_rows=None, **kwargs)
        assert torch.equal(default, dense)


@pytest.mark.parametrize("block_rows", [0, -2, 1.5, True])
def test_info_nce_rejects_bad_block_rows(block_rows):
    with pytest.raises(ValueError, match="block_rows must be None or an int >= 1"):
        info_nce(torch.randn(2, 3), torch.randn(2, 3), block_rows=block_rows)
