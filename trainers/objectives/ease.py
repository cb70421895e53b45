r"""EASE: entity-aware contrastive learning of sentence embeddings (Nishikawa et al. 2022, NAACL).

A sentence s_i is pulled towards the embedding e_i of an entity hyperlinked in it and pushed from the
other entities of the batch and from hard-negative entities e_j^- (one per pair: same Wikidata type,
not linked from the same page); an unsupervised SimCSE term (two dropout views h_i, h_i') keeps the
sentence space uniform:

.. math::

    L_{ent} = -\frac1N \sum_i \log \frac{e^{\cos(h_i, e_i)/\tau_e}}
        {\sum_{j=1}^{N} \left(e^{\cos(h_i, e_j)/\tau_e} + e^{\cos(h_i, e_j^-)/\tau_e}\right)}

.. math::

    L = w_{ent} \cdot L_{ent} + \lambda \cdot L_{SimCSE}(h, h'; \tau_s)

Entity embeddings come from :class:`EntityEmbeddingTable`: a trainable table initialised from
pretrained entity vectors (Wikipedia2Vec in the paper), followed by a learned linear + tanh
"entity transformation" into the sentence space (as in the authors' release). Pooling is the
encoder's business: the paper uses CLS for monolingual and mean pooling for multilingual models
(:data:`PAPER_POOLING`). Across workers entities and hard negatives of the global batch are negatives.

Defaults: τ_s = 0.05 (SimCSE). The weights and τ_e default to 1, 1 and 0.05; note that the authors'
released run scripts (github.com/studio-ousia/ease) put a 0.01 weight on the *entity* term
(``ease_loss_ratio``) next to a weight 1 SimCSE term — set ``entity_weight=0.01`` to follow them.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import torch
from torch import Tensor, nn
from torch.distributed import ProcessGroup

from interlingua.trainers.objectives.global_info_nce import global_info_nce
from interlingua.trainers.objectives.options import require_non_negative, require_positive

PAPER_POOLING = {"monolingual": "cls", "multilingual": "mean"}


class EntityEmbeddingTable(nn.Module):
    """Entity id -> embedding in the sentence space: pretrained table + linear/tanh transformation.

    Args:
        ids: entity ids in row order of ``vectors``.
        vectors: [len(ids), entity_dim] initial vectors.
        output_dim: sentence-embedding dimension D.
        trainable: whether the table itself is updated (the transformation always is).
    """

    def __init__(
        self, ids: Sequence[str], vectors: np.ndarray | Tensor, output_dim: int, trainable: bool = True
    ) -> None:
        super().__init__()
        weight = torch.as_tensor(np.asarray(vectors), dtype=torch.float32)
        if weight.dim() != 2 or weight.shape[0] != len(ids) or weight.shape[0] == 0:
            raise ValueError(f"vectors has shape {tuple(weight.shape)}, expected ({len(ids)}, entity_dim) with ids")
        if len(set(ids)) != len(ids):
            raise ValueError("ids must be unique")
        require_positive("output_dim", output_dim)
        self.row_of = {entity_id: row for row, entity_id in enumerate(ids)}
        self.table = nn.Embedding.from_pretrained(weight, freeze=not trainable)
        self.transformation = nn.Linear(weight.shape[1], int(output_dim))

    def rows(self, ids: Sequence[str]) -> Tensor:
        """Row indices of ``ids`` (LongTensor); unknown ids raise a KeyError naming them."""
        missing = [entity_id for entity_id in ids if entity_id not in self.row_of]
        if missing:
            raise KeyError(f"{len(missing)} entity ids not in the table, e.g. {missing[:3]}")
        rows = [self.row_of[entity_id] for entity_id in ids]
        return torch.tensor(rows, dtype=torch.long, device=self.table.weight.device)

    def forward(self, rows: Tensor) -> Tensor:
        """Embeddings [..., D] of the entity rows ``rows`` (LongTensor of any shape)."""
        return torch.tanh(self.transformation(self.table(rows)))


class EASELoss(nn.Module):
    """Entity contrastive loss with hard-negative entities plus λ × unsupervised SimCSE.

    Args:
        entity_temperature: τ_e > 0 of the entity term.
        simcse_temperature: τ_s > 0 of the SimCSE term (paper: 0.05, as SimCSE).
        simcse_weight: λ >= 0.
        entity_weight: w_ent >= 0.
        group: process group for cross-worker negatives.

    Inputs of ``forward``: ``sentences`` [n, D] (first dropout view), ``sentences_again`` [n, D] (second
    dropout view of the same sentences), ``entities`` [n, D] (entity of each sentence) and
    ``hard_negative_entities`` [n, D] or [n, k, D]. Output: scalar loss, mean over this worker's sentences.
    """

    def __init__(
        self,
        entity_temperature: float = 0.05,
        simcse_temperature: float = 0.05,
        simcse_weight: float = 1.0,
        entity_weight: float = 1.0,
        group: ProcessGroup | None = None,
    ) -> None:
        super().__init__()
        self.entity_temperature = require_positive("entity_temperature", entity_temperature)
        self.simcse_temperature = require_positive("simcse_temperature", simcse_temperature)
        self.simcse_weight = require_non_negative("simcse_weight", simcse_weight)
        self.entity_weight = require_non_negative("entity_weight", entity_weight)
        self.group = group

    def forward(
        self, sentences: Tensor, sentences_again: Tensor, entities: Tensor, hard_negative_entities: Tensor
    ) -> Tensor:
        for name, tensor in (("sentences_again", sentences_again), ("entities", entities)):
            if tensor.shape != sentences.shape:
                raise ValueError(f"{name} has shape {tuple(tensor.shape)}, expected {tuple(sentences.shape)}")
        negatives = hard_negative_entities.unsqueeze(1) if hard_negative_entities.dim() == 2 else hard_negative_entities
        entity_loss = global_info_nce(
            sentences, entities, negatives, temperature=self.entity_temperature, group=self.group
        )
        simcse_loss = global_info_nce(
            sentences, sentences_again, temperature=self.simcse_temperature, group=self.group
        )
        return self.entity_weight * entity_loss + self.simcse_weight * simcse_loss
