"""Worker-side code of tests/trainers/test_gather.py (runs inside 2 gloo processes; not a test module)."""

from __future__ import annotations

import torch

from contrastive_harness import TinyEncoder, averaged_gradient_vector, local_views, triplet_views
from interlingua.trainers.distributed.gather import gather_no_grad, gather_with_grad, rank_offset
from interlingua.trainers.objectives.global_info_nce import global_info_nce

LOCAL_ROWS = {0: 3, 1: 2}  # uneven on purpose
NEGATIVES_PER_PAIR = 2
PAIRS = 8
LOSS_VARIANTS = {
    "in_batch": {"negatives_per_pair": 0, "options": {}},
    "shared_hard": {"negatives_per_pair": 3, "options": {}},
    "own_hard": {"negatives_per_pair": 3, "options": {"shared_hard_negatives": False}},
    "symmetric_margin": {"negatives_per_pair": 0, "options": {"symmetric": True, "margin": 0.2}},
}


def labelled_block(rank: int, rows: int) -> torch.Tensor:
    """x[i, j] = (rank, i, j): every hard-negative row says whose it is."""
    block = torch.zeros(rows, NEGATIVES_PER_PAIR, 3)
    for i in range(rows):
        for j in range(NEGATIVES_PER_PAIR):
            block[i, j] = torch.tensor([rank, i, j], dtype=torch.float32)
    return block


def gather_weights(total_rows: int, rank: int) -> torch.Tensor:
    """Rank-specific weights of the toy loss sum(gathered * weights)."""
    values = torch.arange(total_rows * NEGATIVES_PER_PAIR * 3, dtype=torch.float32)
    return values.view(total_rows, NEGATIVES_PER_PAIR, 3) * (rank + 1)


def contrastive_loss(variant: str, rank: int, world_size: int) -> dict:
    settings = LOSS_VARIANTS[variant]
    model = TinyEncoder(dropout=0.0)
    views = local_views(triplet_views(PAIRS, settings["negatives_per_pair"], seed=5), rank, world_size)
    embeddings = [model.encode(view) for view in views]
    negatives = embeddings[2] if len(embeddings) == 3 else None
    loss = global_info_nce(embeddings[0], embeddings[1], negatives, temperature=0.1, **settings["options"])
    loss.backward()
    return {"loss": loss.detach(), "gradients": averaged_gradient_vector(model)}


UNEVEN_PAIRS = {0: 5, 1: 3}  # of PAIRS: rank 0 holds pairs 0-4, rank 1 pairs 5-7


def uneven_views(views: list[dict[str, torch.Tensor]], rank: int) -> list[dict[str, torch.Tensor]]:
    """This rank's UNEVEN_PAIRS[rank] pairs of every view (hard-negative rows in whole pair blocks)."""
    start, stop = sum(UNEVEN_PAIRS[r] for r in range(rank)), sum(UNEVEN_PAIRS[r] for r in range(rank + 1))
    sliced = []
    for view in views:
        per_pair = view["token_ids"].shape[0] // PAIRS
        sliced.append({name: tensor[start * per_pair:stop * per_pair] for name, tensor in view.items()})
    return sliced


def uneven_contrastive_loss(variant: str, rank: int) -> dict:
    """As :func:`contrastive_loss`, with 5 pairs on rank 0 and 3 on rank 1."""
    settings = LOSS_VARIANTS[variant]
    model = TinyEncoder(dropout=0.0).double()
    views = uneven_views(triplet_views(PAIRS, settings["negatives_per_pair"], seed=5), rank)
    embeddings = [model.encode(view) for view in views]
    negatives = embeddings[2] if len(embeddings) == 3 else None
    loss = global_info_nce(embeddings[0], embeddings[1], negatives, temperature=0.1, **settings["options"])
    loss.backward()
    return {"loss": loss.detach(), "gradients": averaged_gradient_vector(model)}


def all_scenarios(rank: int, world_size: int) -> dict:
    block = labelled_block(rank, LOCAL_ROWS[rank]).requires_grad_(True)
    gathered = gather_with_grad(block)
    (gathered * gather_weights(gathered.shape[0], rank)).sum().backward()
    ids = torch.arange(LOCAL_ROWS[rank]) + 100 * rank
    return {
        "gathered": gathered.detach(),
        "local_gradient": block.grad,
        "offset": rank_offset(LOCAL_ROWS[rank], torch.device("cpu")),
        "gathered_ids": gather_no_grad(ids),
        "losses": {variant: contrastive_loss(variant, rank, world_size) for variant in LOSS_VARIANTS},
        "uneven_losses": {variant: uneven_contrastive_loss(variant, rank) for variant in LOSS_VARIANTS},
    }
