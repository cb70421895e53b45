"""Shared helpers for the contrastive/gather/GradCache tests: a tiny encoder, batches, and 2-process gloo runs.

Not a test module. Test files import it after putting this folder on ``sys.path``; spawned workers get
the same ``sys.path`` from multiprocessing, so worker functions defined here are importable in them.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

import torch
import torch.distributed as dist
import torch.multiprocessing as mp
from torch import Tensor, nn

VOCAB = 40
TOKENS_PER_TEXT = 5
DIM = 8


class TinyEncoder(nn.Module):
    """Embedding-bag sentence encoder with a dropout MLP head: token ids [rows, L] -> embeddings [rows, DIM]."""

    def __init__(self, dropout: float = 0.1, seed: int = 0) -> None:
        super().__init__()
        generator_state = torch.get_rng_state()
        torch.manual_seed(seed)
        self.bag = nn.EmbeddingBag(VOCAB, 16, mode="mean")
        self.hidden = nn.Linear(16, 16)
        self.dropout = nn.Dropout(dropout)
        self.out = nn.Linear(16, DIM)
        torch.set_rng_state(generator_state)

    def forward(self, token_ids: Tensor) -> Tensor:
        return self.out(self.dropout(torch.tanh(self.hidden(self.bag(token_ids)))))

    def encode(self, batch: dict[str, Tensor]) -> Tensor:
        return self(batch["token_ids"])


def token_batch(rows: int, seed: int) -> dict[str, Tensor]:
    generator = torch.Generator().manual_seed(seed)
    return {"token_ids": torch.randint(0, VOCAB, (rows, TOKENS_PER_TEXT), generator=generator)}


def triplet_views(pairs: int, negatives_per_pair: int, seed: int) -> list[dict[str, Tensor]]:
    """Views [anchors, positives] (+ pair-major hard negatives with pairs*k rows when k > 0)."""
    views = [token_batch(pairs, seed), token_batch(pairs, seed + 1)]
    if negatives_per_pair:
        views.append(token_batch(pairs * negatives_per_pair, seed + 2))
    return views


def local_views(views: list[dict[str, Tensor]], rank: int, world_size: int) -> list[dict[str, Tensor]]:
    """This rank's contiguous slice of every view (rows of hard negatives sliced in whole pair blocks)."""
    pairs = views[0]["token_ids"].shape[0]
    local = pairs // world_size
    sliced = []
    for view in views:
        per_pair = view["token_ids"].shape[0] // pairs
        start, stop = rank * local * per_pair, (rank + 1) * local * per_pair
        sliced.append({name: tensor[start:stop] for name, tensor in view.items()})
    return sliced


def gradient_vector(model: nn.Module) -> Tensor:
    return torch.cat([parameter.grad.reshape(-1) for parameter in model.parameters()])


def averaged_gradient_vector(model: nn.Module) -> Tensor:
    """Parameter gradients averaged over workers, as DDP/DeepSpeed do."""
    gradients = gradient_vector(model).clone()
    if dist.is_initialized():
        dist.all_reduce(gradients)
        gradients /= dist.get_world_size()
    return gradients


def _worker_entry(
    rank: int, world_size: int, init_file: str, out_dir: str, scenario: Callable[[int, int], dict]
) -> None:
    torch.set_num_threads(1)
    dist.init_process_group("gloo", init_method=f"file://{init_file}", rank=rank, world_size=world_size)
    try:
        results = scenario(rank, world_size)
        torch.save(results, os.path.join(out_dir, f"rank{rank}.pt"))
    finally:
        dist.destroy_process_group()


def run_on_workers(scenario: Callable[[int, int], dict], tmp_path: Path, world_size: int = 2) -> list[dict]:
    """Run ``scenario(rank, world_size)`` on ``world_size`` gloo processes; return each rank's result dict."""
    init_file = tmp_path / "dist_init"
    mp.spawn(_worker_entry, args=(world_size, str(init_file), str(tmp_path), scenario), nprocs=world_size, join=True)
    return [torch.load(tmp_path / f"rank{rank}.pt") for rank in range(world_size)]


def assert_close_relative(actual: Tensor, expected: Tensor, rtol: float = 1e-5) -> None:
    """Element-wise |actual - expected| <= rtol * (|expected| + max|expected|): relative to the tensor's scale,
    so near-zero entries of fp32 gradients are compared at the precision of the whole tensor."""
    torch.testing.assert_close(actual, expected, rtol=rtol, atol=rtol * float(expected.abs().max()))


def translated(batch: dict[str, Tensor], shift: int = 7) -> dict[str, Tensor]:
    """A deterministic 'translation': every token id shifted by ``shift`` (mod VOCAB)."""
    return {"token_ids": (batch["token_ids"] + shift) % VOCAB}


def train_losses(parameters, step_loss: Callable[[], Tensor], steps: int = 30, lr: float = 0.01) -> list[float]:
    """Run ``steps`` Adam steps on ``step_loss()``; return the loss of every step."""
    optimizer = torch.optim.Adam(list(parameters), lr=lr)
    losses = []
    for _ in range(steps):
        optimizer.zero_grad()
        loss = step_loss()
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
    return losses


def assert_loss_falls(losses: list[float], factor: float = 0.8) -> None:
    """Mean of the last five losses is below ``factor`` × the mean of the first five."""
    first, last = sum(losses[:5]) / 5, sum(losses[-5:]) / 5
    assert last < factor * first, f"loss did not fall enough: first {first:.4f}, last {last:.4f}"
