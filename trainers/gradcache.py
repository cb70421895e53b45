"""Gradient caching (GradCache) for contrastive steps whose batch does not fit with a graph.

Gao et al. 2021, "Scaling Deep Contrastive Learning Batch Size under Memory Limited Setup". The loss
of a contrastive batch couples all embeddings, so gradient accumulation cannot split it. GradCache
splits the *encoder* instead:

1. pass 1 — encode every view in chunks of ``chunk_size`` rows under ``torch.inference_mode()`` (no graph,
   no autograd bookkeeping), recording the
   random state (CPU and every initialised CUDA device) before each chunk; the very last chunk is
   encoded with its graph and kept (``keep_last_graph``), so it is not encoded a second time;
2. turn the embeddings into leaf tensors, compute the loss on the whole batch (``loss_fn`` may gather
   across workers with :func:`interlingua.trainers.distributed.gather.gather_with_grad`) and the
   gradient g = dL/dE of the loss w.r.t. this worker's embeddings. With a gathering ``loss_fn`` the
   backward of the gather sums over workers, so g already contains the other workers' losses;
3. pass 2 — re-encode each chunk *with* a graph under the recorded random state (dropout masks are
   identical to pass 1) and back-propagate the surrogate ``(E_chunk * g_chunk).sum()``, whose gradient
   w.r.t. the parameters is g_chunk · dE_chunk/dθ. Summed over chunks this equals dL/dθ.

:func:`plain_step` is the uncached path with the same signature: it encodes with the graph (in the same
chunks, so the random stream and therefore dropout masks are the same as in :func:`cached_step`) and
back-propagates the loss once. Both return the detached loss.

Engine hooks: ``backward`` is called on each scalar to back-propagate (default ``Tensor.backward``;
DeepSpeed passes ``engine.backward``; it is called on the surrogate of every chunk, and once on the loss
itself when ``loss_fn`` has parameters of its own). ``defer_sync`` (optional) returns a context manager
entered around every ``backward`` call except the last of the step, e.g. ``engine.no_sync`` (DDP,
DeepSpeed ZeRO 0/1) so gradients are all-reduced once. Modules that update state in the forward pass
(BatchNorm running statistics) see each chunk twice with caching.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass

import torch
from torch import Tensor

Batch = Mapping[str, Tensor]
Encode = Callable[[Batch], Tensor]
LossFn = Callable[[list[Tensor]], Tensor]
Backward = Callable[[Tensor], object]
DeferSync = Callable[[], contextlib.AbstractContextManager[object]]


@dataclass(frozen=True)
class RandomState:
    """The CPU generator state and the states of the CUDA devices initialised at capture time."""

    cpu: Tensor
    cuda: list[Tensor]

    @classmethod
    def capture(cls) -> "RandomState":
        cuda_states = torch.cuda.get_rng_state_all() if torch.cuda.is_initialized() else []
        return cls(cpu=torch.get_rng_state(), cuda=cuda_states)

    @contextlib.contextmanager
    def replay(self) -> Iterator[None]:
        """Run the block from this state; the surrounding random state is restored afterwards."""
        devices = list(range(len(self.cuda)))
        with torch.random.fork_rng(devices=devices):
            torch.set_rng_state(self.cpu)
            if self.cuda:
                torch.cuda.set_rng_state_all(self.cuda)
            yield


def split_batch(batch: Batch, chunk_size: int | None) -> list[dict[str, Tensor]]:
    """Split a dict of tensors with a common batch dim 0 into chunks of at most ``chunk_size`` rows."""
    if not batch:
        raise ValueError("a view batch must contain at least one tensor")
    sizes = {name: int(value.shape[0]) for name, value in batch.items()}
    if len(set(sizes.values())) != 1:
        raise ValueError(f"all tensors of a view must share batch dim 0, got sizes {sizes}")
    rows = next(iter(sizes.values()))
    if chunk_size is None or chunk_size >= rows:
        return [dict(batch)]
    starts = range(0, rows, chunk_size)
    return [{name: value[start : start + chunk_size] for name, value in batch.items()} for start in starts]


def cached_step(
    encode: Encode,
    views: Sequence[Batch],
    loss_fn: LossFn,
    chunk_size: int,
    backward: Backward | None = None,
    defer_sync: DeferSync | None = None,
    keep_last_graph: bool = True,
) -> Tensor:
    """One GradCache forward/backward over all views; parameter gradients are accumulated, not stepped.

    Args:
        encode: maps one chunk (dict of tensors, batch dim 0) to embeddings [rows, D] with a graph.
        views: one batch per view (anchors, positives, hard negatives, ...), each a dict of tensors with
            batch dim 0 (views may have different sizes, e.g. hard negatives n*k rows).
        loss_fn: maps the list of embeddings (one [rows, D] tensor per view, in ``views`` order) to a
            scalar loss; may gather across workers.
        chunk_size: rows encoded at once (>= 1).
        backward: back-propagates a scalar (default ``Tensor.backward``; e.g. ``engine.backward``).
        defer_sync: optional context-manager factory entered around every backward but the last.
        keep_last_graph: encode the last chunk of the last view with its graph in pass 1 and keep it
            (back-propagated first in pass 2) instead of encoding it twice. The peak memory is unchanged
            (one chunk's graph at a time); the step saves one chunk's forward, which matters when a view
            is one or a few chunks. Gradients are the same either way.

    Returns:
        The loss, detached.
    """
    _validate_chunk_size(chunk_size, required=True)
    _validate_views(views)
    run_backward = backward or Tensor.backward
    chunked_views = [split_batch(view, chunk_size) for view in views]

    # Pass 1. The very last chunk is encoded with its graph and kept: its backward runs first in
    # pass 2, so the peak memory is still one chunk's graph, and that chunk is not encoded twice.
    states: list[list[RandomState | None]] = []
    leaves: list[Tensor] = []
    kept: Tensor | None = None
    for v, chunks in enumerate(chunked_views):
        view_states: list[RandomState | None] = []
        outputs: list[Tensor] = []
        for c, chunk in enumerate(chunks):
            if keep_last_graph and v == len(chunked_views) - 1 and c == len(chunks) - 1:
                kept = encode(chunk)
                view_states.append(None)
                embeddings = kept.detach()
            else:
                view_states.append(RandomState.capture())
                with torch.inference_mode():
                    embeddings = encode(chunk)
            outputs.append(embeddings)
        states.append(view_states)
        # An encoder may return another number of rows than it was given (word vectors at aligned positions).
        leaves.append(torch.cat(outputs, dim=0).requires_grad_(True))

    loss = loss_fn(leaves)
    _require_scalar(loss)
    loss_has_parameters = _depends_on_other_leaves(loss, leaves)
    raw_grads = torch.autograd.grad(loss, leaves, retain_graph=loss_has_parameters, allow_unused=True)
    embedding_grads = [torch.zeros_like(leaf) if grad is None else grad for leaf, grad in zip(leaves, raw_grads)]

    calls = sum(len(chunks) for chunks in chunked_views) + int(loss_has_parameters)
    call_index = 0

    def backward_once(scalar: Tensor) -> None:
        nonlocal call_index
        call_index += 1
        is_last = call_index == calls
        context = defer_sync() if defer_sync is not None and not is_last else contextlib.nullcontext()
        with context:
            run_backward(scalar)

    if loss_has_parameters:
        backward_once(loss)
    if kept is not None:
        last_grad = embedding_grads[-1]
        backward_once((kept * last_grad[last_grad.shape[0] - kept.shape[0]:].to(kept.dtype)).sum())
        del kept
    for chunks, view_states, grad in zip(chunked_views, states, embedding_grads):
        start = 0
        for chunk, state in zip(chunks, view_states):
            if state is None:  # the kept chunk, already back-propagated
                continue
            with state.replay():
                embeddings = encode(chunk)
            chunk_grad = grad[start : start + embeddings.shape[0]].to(embeddings.dtype)
            start += embeddings.shape[0]
            backward_once((embeddings * chunk_grad).sum())
    return loss.detach()


def plain_step(
    encode: Encode,
    views: Sequence[Batch],
    loss_fn: LossFn,
    chunk_size: int | None = None,
    backward: Backward | None = None,
    defer_sync: DeferSync | None = None,
) -> Tensor:
    """Uncached step with :func:`cached_step`'s signature: encode with the graph, one backward of the loss.

    ``chunk_size`` (optional) encodes each view in chunks of that many rows *with* the graph — the same
    memory as no chunking, but the same random stream as :func:`cached_step`, so with dropout both give
    the same gradients. ``defer_sync`` is accepted for symmetry and unused (there is one backward).
    Returns the loss, detached.
    """
    del defer_sync
    _validate_chunk_size(chunk_size, required=False)
    _validate_views(views)
    run_backward = backward or Tensor.backward
    embeddings = [torch.cat([encode(chunk) for chunk in split_batch(view, chunk_size)], dim=0) for view in views]
    loss = loss_fn(embeddings)
    _require_scalar(loss)
    run_backward(loss)
    return loss.detach()


def _depends_on_other_leaves(loss: Tensor, leaves: Sequence[Tensor]) -> bool:
    """True when the loss graph reaches a leaf requiring grad other than ``leaves`` (loss_fn parameters)."""
    leaf_ids = {id(leaf) for leaf in leaves}
    seen: set[int] = set()
    pending = [loss.grad_fn]
    while pending:
        node = pending.pop()
        if node is None or id(node) in seen:
            continue
        seen.add(id(node))
        variable = getattr(node, "variable", None)
        if variable is not None and id(variable) not in leaf_ids:
            return True
        pending.extend(child for child, _ in node.next_functions)
    return False


def _require_scalar(loss: Tensor) -> None:
    if not isinstance(loss, Tensor) or loss.dim() != 0:
        raise ValueError(f"loss_fn must return a scalar tensor, got {getattr(loss, 'shape', type(loss))}")
    if not loss.requires_grad:
        raise ValueError("loss_fn returned a loss that does not depend on the embeddings (requires_grad=False)")


def _validate_chunk_size(chunk_size: int | None, required: bool) -> None:
    if chunk_size is None and not required:
        return
    if not isinstance(chunk_size, int) or isinstance(chunk_size, bool) or chunk_size < 1:
        raise ValueError(f"chunk_size must be an integer >= 1, got {chunk_size!r}")


def _validate_views(views: Sequence[Batch]) -> None:
    if len(views) == 0:
        raise ValueError("views must hold at least one batch (e.g. anchors and positives)")
