r"""AMR retrofitting of multilingual sentence embeddings (Cai et al. 2022, "Retrofitting Multilingual
Sentence Embeddings with Abstract Meaning Representation", EMNLP).

An AMR encoder (BERT-like, vocabulary extended with AMR relations and frames, see
:mod:`interlingua.trainers.objectives.amr_vocabulary`) is trained with the *supervised* contrastive
loss of SimCSE on NLI triples whose slots hold, per Algorithm 1 (*mixed training*,
:mod:`interlingua.trainers.objectives.amr_mixing`), either linearized AMR graphs of translations or
English text/graphs. With AMR-encoder embeddings g (premise), g⁺ (entailment), g⁻ (contradiction):

.. math::

    \ell_i = -\log \frac{e^{\cos(g_i, g_i^+)/\tau}}
        {\sum_{j=1}^{N} \left(e^{\cos(g_i, g_j^+)/\tau} + e^{\cos(g_i, g_j^-)/\tau}\right)}, \quad \tau = 0.05

(batch 512 in the paper; across workers N is the global batch). This is the paper's equation (SimCSE's
supervised loss, one direction) and the default. The authors' released code (MSE-AMR ``simcse/models.py``,
``cl_forward``) adds the entailment → premise direction, without hard negatives, and sums the two:

.. math::

    \ell_i^{\text{code}} = \ell_i - \log \frac{e^{\cos(g_i^+, g_i)/\tau}}{\sum_{j=1}^{N} e^{\cos(g_i^+, g_j)/\tau}}

``reverse_direction=True`` (option ``reverse_direction`` of the ``amr_retrofit`` objective) gives that form: in
our terms 2 × ``info_nce(g, g⁺, g⁻, symmetric=True)`` (the mean of the two directions, doubled). For downstream use the sentence
embedding s of the original multilingual encoder and the AMR embedding h of the sentence's graph are
combined (:func:`combine_embeddings`): s/‖s‖ ⊕ h/‖h‖ (paper's choice, default), s ⊕ h, s + h,
s/‖s‖ + h/‖h‖.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import Tensor, nn
from torch.distributed import ProcessGroup

from pydantic import Field

from interlingua.models.combined import Combination, check_mode, normalizes, sums
from interlingua.trainers.objectives.global_info_nce import global_info_nce
from interlingua.trainers.objectives.simcse import (
    SupervisedSimCSEOptions,
    SupervisedSimCSELoss,
    TemperatureObjective,
    triple_hard_negatives,
)


class AMRRetrofitLoss(nn.Module):
    """Supervised contrastive loss of the AMR encoder on mixed NLI triples (τ = 0.05 by default).

    Args:
        temperature: τ >= 1e-4 (MIN_TEMPERATURE).
        group: process group for cross-worker negatives.
        reverse_direction: False (default): the paper's equation, premise → entailment with the contradictions
            as hard negatives. True: the authors' released code, that term plus the entailment → premise term
            (candidates: the premises of the batch), summed.
        hard_negative_weight: w added to the logit of each premise's own contradiction (as
            :class:`~interlingua.trainers.objectives.simcse.SupervisedSimCSELoss`; default 0).

    Inputs of ``forward``: ``premise``, ``entailment`` [n, D] and optional ``contradiction`` [n, D]
    (hard negative) — AMR-encoder embeddings of the mixed inputs. Output: scalar, mean over this worker.
    """

    def __init__(self, temperature: float = 0.05, group: ProcessGroup | None = None,
                 reverse_direction: bool = False, hard_negative_weight: float = 0.0) -> None:
        super().__init__()
        if not isinstance(reverse_direction, bool):
            raise ValueError(f"reverse_direction must be True or False, got {reverse_direction!r}")
        self.supervised = SupervisedSimCSELoss(temperature=temperature, group=group,
                                               hard_negative_weight=hard_negative_weight)
        self.reverse_direction = reverse_direction

    def forward(self, premise: Tensor, entailment: Tensor, contradiction: Tensor | None = None) -> Tensor:
        if not self.reverse_direction:
            return self.supervised(premise, entailment, contradiction)
        hard_negatives = triple_hard_negatives(premise, entailment, contradiction)
        both = global_info_nce(premise, entailment, hard_negatives, temperature=self.supervised.temperature,
                               symmetric=True, group=self.supervised.group,
                               hard_negative_weight=self.supervised.hard_negative_weight)
        return 2.0 * both  # info_nce averages the two directions; the authors' code adds them


def combine_embeddings(sentence: Tensor, amr: Tensor, mode: Combination = "norm_concat") -> Tensor:
    """Final embedding from the sentence embedding s [n, Ds] and the AMR embedding h [n, Dh]: the torch twin of
    :func:`interlingua.models.combined.combine_embeddings` (same modes, same vectors).

    ``norm_concat``: s/‖s‖ ⊕ h/‖h‖ [n, Ds+Dh]; ``concat``: s ⊕ h; ``sum``: s + h;
    ``norm_sum``: s/‖s‖ + h/‖h‖ (the sums need Ds == Dh).
    """
    check_mode(mode)
    if sentence.dim() != 2 or amr.dim() != 2 or sentence.shape[0] != amr.shape[0]:
        raise ValueError(f"sentence {tuple(sentence.shape)} and amr {tuple(amr.shape)} must be [n, D] with equal n")
    if sums(mode) and sentence.shape[1] != amr.shape[1]:
        raise ValueError(f"mode={mode!r} needs equal dimensions, got {sentence.shape[1]} and {amr.shape[1]}")
    if normalizes(mode):
        sentence, amr = F.normalize(sentence, dim=-1), F.normalize(amr, dim=-1)
    return sentence + amr if sums(mode) else torch.cat([sentence, amr], dim=-1)


class AMRRetrofitOptions(SupervisedSimCSEOptions):
    reverse_direction: bool = Field(
        False, description="false: the paper's loss (premise → entailment, contradictions as hard negatives); true: "
                           "the authors' released code, plus the entailment → premise term, summed")


class AMRRetrofit(TemperatureObjective):
    """Engine objective ``amr_retrofit``: columns ``premise``, ``entailment``, ``contradiction``, each holding
    English text or a linearized AMR graph (mixed training, Algorithm 1)."""

    name = "amr_retrofit"
    Options = AMRRetrofitOptions
    text_columns = ("premise", "entailment", "contradiction")
    loss_class = AMRRetrofitLoss

    def loss_options(self, options: AMRRetrofitOptions) -> dict:
        return {"reverse_direction": options.reverse_direction, "hard_negative_weight": options.hard_negative_weight}
