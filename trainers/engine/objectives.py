"""Which loss and which input columns each engine objective uses."""

from __future__ import annotations

from dataclasses import dataclass

from torch import nn

from interlingua.trainers.engine.config import TrainConfig


#: Text columns each objective reads, one per view, in the loss's argument order.
OBJECTIVE_COLUMNS: dict[str, tuple[str, ...]] = {
    "translation_ranking": ("src", "tgt"),
    "simcse_unsup": ("text", "text"),
    "simcse_sup": ("premise", "entailment", "contradiction"),
    # mixed NLI triples (Cai et al. 2022): each slot holds English text or a linearized AMR graph
    "amr_retrofit": ("premise", "entailment", "contradiction"),
    # EASE (Nishikawa et al. 2022), the ease-corpus columns: sentence twice (two dropout views), the linked
    # entity's id and the hard-negative entity ids (a list: the first one is used; a plain string works too).
    "ease": ("sentence", "sentence", "entity_id", "hard_negative_ids"),
}

#: Columns holding entity ids instead of text (looked up in the entity table, not tokenized).
ENTITY_COLUMNS: dict[str, tuple[str, ...]] = {
    "ease": ("entity_id", "hard_negative_ids"),
}


@dataclass(frozen=True)
class ObjectiveSpec:
    loss: nn.Module
    columns: tuple[str, ...]  # one column per view, in the loss's argument order
    entity_columns: tuple[str, ...] = ()  # those of ``columns`` holding entity ids (EASE), not text

    def negatives_per_anchor(self, global_batch: int) -> int:
        """In-batch candidates each anchor is contrasted with, besides its positive."""
        hard = global_batch if len(self.columns) > 2 else 0
        return global_batch - 1 + hard


def build_objective(config: TrainConfig, group=None) -> ObjectiveSpec:
    from interlingua.trainers.objectives.amr_retrofit import AMRRetrofitLoss
    from interlingua.trainers.objectives.ease import EASELoss
    from interlingua.trainers.objectives.simcse import SupervisedSimCSELoss, UnsupervisedSimCSELoss
    from interlingua.trainers.objectives.translation_ranking import TranslationRankingLoss

    losses = {
        "translation_ranking": lambda: TranslationRankingLoss(config.temperature, symmetric=config.symmetric,
                                                              group=group),
        "simcse_unsup": lambda: UnsupervisedSimCSELoss(config.temperature, group=group),
        "simcse_sup": lambda: SupervisedSimCSELoss(config.temperature, group=group),
        "amr_retrofit": lambda: AMRRetrofitLoss(config.temperature, group=group),
        "ease": lambda: EASELoss(entity_temperature=config.temperature, simcse_temperature=config.temperature,
                                 simcse_weight=config.ease_lambda, entity_weight=config.ease_entity_weight,
                                 group=group),
    }
    if config.objective not in losses:
        raise ValueError(f"unknown objective {config.objective!r}; expected one of {sorted(losses)}")
    return ObjectiveSpec(losses[config.objective](), OBJECTIVE_COLUMNS[config.objective],
                         ENTITY_COLUMNS.get(config.objective, ()))
