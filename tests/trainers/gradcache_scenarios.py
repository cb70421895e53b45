"""Worker-side code of tests/trainers/test_gradcache.py (2 gloo processes; not a test module)."""

from __future__ import annotations

import torch
from torch import Tensor

from contrastive_harness import TinyEncoder, averaged_gradient_vector, local_views, triplet_views
from interlingua.trainers.gradcache import cached_step, plain_step
from interlingua.trainers.objectives.global_info_nce import global_info_nce

PAIRS = 8
CHUNK_SIZE = 3
NEGATIVE_COUNTS = (0, 2)


def contrastive_loss(embeddings: list[Tensor]) -> Tensor:
    negatives = embeddings[2] if len(embeddings) == 3 else None
    return global_info_nce(embeddings[0], embeddings[1], negatives, temperature=0.1)


def run_step(step, dropout: float, negatives_per_pair: int, rank: int, world_size: int, seed: int) -> dict:
    """One step of ``step`` (cached_step or plain_step) on this rank's slice; loss and averaged gradients."""
    model = TinyEncoder(dropout=dropout)
    views = triplet_views(PAIRS, negatives_per_pair, seed=11)
    if world_size > 1:
        views = local_views(views, rank, world_size)
    torch.manual_seed(seed)
    loss = step(model.encode, views, contrastive_loss, CHUNK_SIZE)
    return {"loss": loss, "gradients": averaged_gradient_vector(model)}


def all_scenarios(rank: int, world_size: int) -> dict:
    results = {}
    for negatives in NEGATIVE_COUNTS:
        for name, step in (("cached", cached_step), ("plain", plain_step)):
            results[("dropout", negatives, name)] = run_step(step, 0.3, negatives, rank, world_size, seed=40 + rank)
        results[("no_dropout", negatives, "cached")] = run_step(cached_step, 0.0, negatives, rank, world_size, seed=0)
    return results
