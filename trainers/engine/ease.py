"""EASE on the engine: one module holding the encoder and the entity table, and entity-id -> row views.

DeepSpeed wraps :class:`EaseModel`, so the entity table (and its linear/tanh transformation) is trained
and its gradients are averaged across workers like the encoder's. ``forward`` dispatches on the feature
dict: ``{"entity_rows": LongTensor[n]}`` goes to the table, anything else (tokenizer output) to the
encoder. Every view is therefore a dict of tensors with batch dim 0, which GradCache already splits.

Per step the views are: sentence, sentence again (2nd dropout view), entity rows, hard-negative entity
rows (the *first* id of the corpus's ``hard_negative_ids`` list). Rows whose entity or hard negative is not
in the table are dropped before encoding and counted (``ease_unknown_entities``).
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import torch
from torch import Tensor, nn

from interlingua.trainers.engine.train_loop import ENTITY_TABLE_FILE
from interlingua.trainers.objectives.ease import EntityEmbeddingTable

ENTITY_ROWS = "entity_rows"


class EaseModel(nn.Module):
    """``encoder`` (text features -> sentence embeddings) + ``entities`` (entity rows -> embeddings)."""

    def __init__(self, encoder: nn.Module, entities: EntityEmbeddingTable) -> None:
        super().__init__()
        self.encoder = encoder
        self.entities = entities

    def forward(self, features: dict[str, Tensor]) -> Tensor:
        if ENTITY_ROWS in features:
            if len(features) != 1:
                raise ValueError(f"entity features hold only {ENTITY_ROWS!r}, got keys {sorted(features)}")
            return self.entities(features[ENTITY_ROWS])
        return self.encoder(features)


def first_negative(value) -> str | None:
    """The hard-negative id of a corpus cell: a string as is, a list/array's first element, None if empty."""
    if value is None:
        return None
    if isinstance(value, (str, bytes)):
        text = value.decode() if isinstance(value, bytes) else value
        return text or None
    items = list(value)
    return str(items[0]) if items and items[0] is not None else None


@dataclass(frozen=True)
class EntityBatch:
    keep: list[int]           # positions of the batch rows kept, in order
    entity_rows: Tensor       # LongTensor [len(keep)]
    negative_rows: Tensor     # LongTensor [len(keep)]
    unknown: int              # rows dropped: entity or hard negative not in the table (or no negative)


def entity_batch(row_of: dict[str, int], entity_ids: Sequence, negative_ids: Sequence) -> EntityBatch:
    """Map each row's entity id and first hard-negative id to table rows; drop rows with an unknown one."""
    if len(entity_ids) != len(negative_ids):
        raise ValueError(f"{len(entity_ids)} entity ids but {len(negative_ids)} hard-negative cells")
    keep, entities, negatives = [], [], []
    for position, (entity_id, cell) in enumerate(zip(entity_ids, negative_ids)):
        negative = first_negative(cell)
        entity = None if entity_id is None else str(entity_id)
        if entity in row_of and negative in row_of:
            keep.append(position)
            entities.append(row_of[entity])
            negatives.append(row_of[negative])
    return EntityBatch(keep=keep, entity_rows=torch.tensor(entities, dtype=torch.long),
                       negative_rows=torch.tensor(negatives, dtype=torch.long),
                       unknown=len(entity_ids) - len(keep))


def build_entity_table(url: str, ids_url: str | None, output_dim: int, seed: int) -> EntityEmbeddingTable:
    """The table initialised from the vectors at ``url``; the transformation is seeded by ``seed`` alone so
    every worker starts from the same parameters."""
    from interlingua.trainers.objectives.entity_vectors import load_entity_vectors

    loaded = load_entity_vectors(url, ids_url)
    if loaded.rejected:
        print(f"[ease] {len(loaded.rejected)} entity vector rows rejected, e.g. {loaded.rejected[:3]}", flush=True)
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        return EntityEmbeddingTable(loaded.ids, loaded.vectors, output_dim=output_dim)


def save_entity_table(entities: EntityEmbeddingTable, folder: str | os.PathLike) -> str:
    """Write ``entity_table.npz``: ``ids``, ``vectors`` (the trained table) and the transformation
    (``transformation_weight``, ``transformation_bias``)."""
    ids = [None] * len(entities.row_of)
    for entity_id, row in entities.row_of.items():
        ids[row] = entity_id
    path = os.path.join(folder, ENTITY_TABLE_FILE)
    np.savez(path, ids=np.asarray(ids, dtype=str),
             vectors=entities.table.weight.detach().float().cpu().numpy(),
             transformation_weight=entities.transformation.weight.detach().float().cpu().numpy(),
             transformation_bias=entities.transformation.bias.detach().float().cpu().numpy())
    return path
