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

Defaults: τ_s = 0.05 (SimCSE). The weights and τ_e default to 1, 1 and 0.05. Our loss is the paper's equation
above. The authors' released run scripts (github.com/studio-ousia/ease) differ in three settings:

* ``ease_loss_ratio`` 0.01, the weight of the entity term (SimCSE term weight 1): ``entity_weight=0.01``
  (``ease_entity_weight`` of the engine objective), ``simcse_weight=1``;
* ``ease_temp`` — 100 in the monolingual script, 10 in the multilingual one — the τ_e of the entity term (their
  logits are cos/``ease_temp``), with ``simcse_temp`` 0.05 for the SimCSE term: :class:`EASELoss`
  ``entity_temperature=100`` (or 10), ``simcse_temperature=0.05``; on the engine objective ``ease``,
  ``ease_entity_temperature=100`` (or 10) beside ``temperature=0.05``;
* ``hard_negative_weight`` 1.0: in their ``cl_forward`` it is added to the logit (after the division by
  ``ease_temp``) of each sentence's *own* hard-negative entity, a term the paper's equation does not have (it
  multiplies that term by e^w, as SimCSE's hard-negative weighting): our ``hard_negative_weight`` (default 0, the
  paper's equation).

So :class:`EASELoss` with ``entity_weight=0.01, simcse_weight=1, entity_temperature=ease_temp,
simcse_temperature=0.05, hard_negative_weight=1`` is their scripts' loss, and so is the ``ease`` objective with
``ease_entity_weight: 0.01, ease_lambda: 1, ease_entity_temperature: <ease_temp>, temperature: 0.05,
hard_negative_weight: 1``.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import torch
from pydantic import Field, model_validator
from torch import Tensor, nn
from torch.distributed import ProcessGroup

from interlingua.trainers.objectives.base import Objective, ObjectiveOptions, ObjectiveSetup, ViewMaker, Views
from interlingua.trainers.objectives.global_info_nce import global_info_nce
from interlingua.trainers.objectives.options import (
    MIN_TEMPERATURE, Number, require_non_negative, require_number, require_positive, require_temperature)
from interlingua.trainers.worker_output import show

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
        entity_temperature: τ_e >= 1e-4 of the entity term.
        simcse_temperature: τ_s >= 1e-4 of the SimCSE term (paper: 0.05, as SimCSE).
        simcse_weight: λ >= 0.
        entity_weight: w_ent >= 0.
        group: process group for cross-worker negatives.
        hard_negative_weight: w added to the logit of each sentence's own hard-negative entity (α = e^w; default 0,
            the paper's equation; the authors' scripts use 1).

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
        hard_negative_weight: float = 0.0,
    ) -> None:
        super().__init__()
        self.entity_temperature = require_temperature("entity_temperature", entity_temperature)
        self.simcse_temperature = require_temperature("simcse_temperature", simcse_temperature)
        self.simcse_weight = require_non_negative("simcse_weight", simcse_weight)
        self.entity_weight = require_non_negative("entity_weight", entity_weight)
        self.hard_negative_weight = require_number("hard_negative_weight", hard_negative_weight)
        self.group = group

    def forward(
        self, sentences: Tensor, sentences_again: Tensor, entities: Tensor, hard_negative_entities: Tensor
    ) -> Tensor:
        for name, tensor in (("sentences_again", sentences_again), ("entities", entities)):
            if tensor.shape != sentences.shape:
                raise ValueError(f"{name} has shape {tuple(tensor.shape)}, expected {tuple(sentences.shape)}")
        negatives = hard_negative_entities.unsqueeze(1) if hard_negative_entities.dim() == 2 else hard_negative_entities
        entity_loss = global_info_nce(
            sentences, entities, negatives, temperature=self.entity_temperature, group=self.group,
            hard_negative_weight=self.hard_negative_weight,
        )
        simcse_loss = global_info_nce(
            sentences, sentences_again, temperature=self.simcse_temperature, group=self.group
        )
        return self.entity_weight * entity_loss + self.simcse_weight * simcse_loss


# -- EASE on the training engine ---------------------------------------------------------------------------

ENTITY_TABLE_FILE = "entity_table.npz"  # next to the encoder in the checkpoint
#: the entity-table submodule of :class:`EASE` (its views are ``make.module(ENTITY_MODULE, rows)``)
ENTITY_MODULE = "entities"


class EASEOptions(ObjectiveOptions):
    entity_vectors: str = Field(
        description="entity vectors initialising the entity table (path or fsspec URL): word2vec text, a .npy "
                    "matrix (with entity_vector_ids), or the ease-corpus '<name>-entities' parquet (a .parquet "
                    "file or a folder of them; columns entity_id, vector)")
    entity_vector_ids: str | None = Field(None, description="ids file (one per line) of a .npy entity_vectors")
    # Same default as EASELoss(simcse_weight=...) (tests/trainers/test_engine_ease.py checks they agree).
    ease_lambda: Number = Field(1.0, ge=0, description="λ, the weight of the SimCSE term")
    ease_entity_weight: Number = Field(1.0, ge=0, description="weight of the entity term (authors' scripts: 0.01)")
    temperature: Number = Field(0.05, ge=MIN_TEMPERATURE,
                                description="softmax temperature of the SimCSE term (τ_s) and, unless "
                                            "ease_entity_temperature is set, of the entity term (τ_e)")
    ease_entity_temperature: Number | None = Field(
        None, ge=MIN_TEMPERATURE, description="τ_e of the entity term; null: temperature (authors' scripts: their "
                                              "ease_temp, 100 monolingual, 10 multilingual, with temperature 0.05)")
    hard_negative_weight: Number = Field(
        0.0, description="w added to the logit of each sentence's own hard-negative entity (α = e^w; 0: the paper's "
                         "equation; the authors' scripts: 1)")

    @model_validator(mode="after")
    def _npy_needs_ids(self) -> "EASEOptions":
        if str(self.entity_vectors).endswith(".npy") and not self.entity_vector_ids:
            raise ValueError(f"entity_vectors={self.entity_vectors!r} is a .npy matrix: set entity_vector_ids "
                             f"(its ids, one per line, in row order)")
        return self


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
        show(f"[ease] {len(loaded.rejected)} entity vector rows rejected, e.g. {loaded.rejected[:3]}")
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


class EASE(Objective):
    """Engine objective ``ease`` on the ``ease-corpus`` columns: ``sentence`` (encoded twice: the SimCSE dropout
    views), ``entity_id`` and ``hard_negative_ids`` (a list: the first id is used; a plain string works too).

    The entity table is this objective's submodule, so DeepSpeed trains it and averages its gradients with the
    encoder's. Rows whose entity or hard negative has no vector are dropped and counted
    (``ease_unknown_entities``); ``entity_table.npz`` is saved next to the encoder."""

    name = "ease"
    contrasts_in_batch = True
    Options = EASEOptions
    counter_names = ("ease_unknown_entities",)

    def __init__(self, options: EASEOptions, setup: ObjectiveSetup) -> None:
        super().__init__(options, setup)
        table = build_entity_table(options.entity_vectors, options.entity_vector_ids, setup.dim, setup.seed)
        self.add_module(ENTITY_MODULE, table)
        entity_temperature = options.temperature if options.ease_entity_temperature is None \
            else options.ease_entity_temperature
        self.criterion = EASELoss(entity_temperature=entity_temperature, simcse_temperature=options.temperature,
                                  simcse_weight=options.ease_lambda, entity_weight=options.ease_entity_weight,
                                  group=setup.group, hard_negative_weight=options.hard_negative_weight)

    @classmethod
    def columns(cls, options: EASEOptions) -> tuple[str, ...]:
        return ("sentence", "entity_id", "hard_negative_ids")

    def views(self, batch: Mapping[str, Any], make: ViewMaker) -> Views:
        table = self.get_submodule(ENTITY_MODULE)
        mapped = entity_batch(table.row_of, list(batch["entity_id"]), list(batch["hard_negative_ids"]))
        if not mapped.keep:
            raise ValueError(f"none of the {mapped.unknown} rows of this batch has its 'entity_id' and first "
                             f"'hard_negative_ids' in the entity table: do entity_vectors and the corpus match?")
        sentences = [str(batch["sentence"][i]) for i in mapped.keep]
        return Views([make.text(sentences), make.text(sentences), make.module(ENTITY_MODULE, mapped.entity_rows),
                      make.module(ENTITY_MODULE, mapped.negative_rows)],
                     counters={"ease_unknown_entities": mapped.unknown})

    def negatives_per_anchor(self, global_batch: int) -> int:
        return 2 * global_batch - 1

    def save(self, folder: str | os.PathLike) -> list[str]:
        save_entity_table(self.get_submodule(ENTITY_MODULE), folder)
        return [ENTITY_TABLE_FILE]
