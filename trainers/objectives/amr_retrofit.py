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

(batch 512 in the paper; across workers N is the global batch). For downstream use the sentence
embedding s of the original multilingual encoder and the AMR embedding h of the sentence's graph are
combined (:func:`combine_embeddings`): s/‖s‖ ⊕ h/‖h‖ (paper's choice, default), s ⊕ h, s + h,
s/‖s‖ + h/‖h‖.
"""

from __future__ import annotations

from typing import Literal

import torch
import torch.nn.functional as F
from torch import Tensor, nn
from torch.distributed import ProcessGroup

from interlingua.trainers.objectives.options import require_choice
from interlingua.trainers.objectives.simcse import SupervisedSimCSELoss, TemperatureObjective

Combination = Literal["concat_normalized", "concat", "sum", "sum_normalized"]
COMBINATIONS: tuple[str, ...] = ("concat_normalized", "concat", "sum", "sum_normalized")


class AMRRetrofitLoss(nn.Module):
    """Supervised contrastive loss of the AMR encoder on mixed NLI triples (τ = 0.05 by default).

    Args:
        temperature: τ > 0.
        group: process group for cross-worker negatives.

    Inputs of ``forward``: ``premise``, ``entailment`` [n, D] and optional ``contradiction`` [n, D]
    (hard negative) — AMR-encoder embeddings of the mixed inputs. Output: scalar, mean over this worker.
    """

    def __init__(self, temperature: float = 0.05, group: ProcessGroup | None = None) -> None:
        super().__init__()
        self.supervised = SupervisedSimCSELoss(temperature=temperature, group=group)

    def forward(self, premise: Tensor, entailment: Tensor, contradiction: Tensor | None = None) -> Tensor:
        return self.supervised(premise, entailment, contradiction)


def combine_embeddings(sentence: Tensor, amr: Tensor, mode: Combination = "concat_normalized") -> Tensor:
    """Final embedding from the sentence embedding s [n, Ds] and the AMR embedding h [n, Dh].

    ``concat_normalized``: s/‖s‖ ⊕ h/‖h‖ [n, Ds+Dh]; ``concat``: s ⊕ h; ``sum``: s + h;
    ``sum_normalized``: s/‖s‖ + h/‖h‖ (the sums need Ds == Dh).
    """
    require_choice("mode", mode, COMBINATIONS)
    if sentence.dim() != 2 or amr.dim() != 2 or sentence.shape[0] != amr.shape[0]:
        raise ValueError(f"sentence {tuple(sentence.shape)} and amr {tuple(amr.shape)} must be [n, D] with equal n")
    if mode.startswith("sum") and sentence.shape[1] != amr.shape[1]:
        raise ValueError(f"mode={mode!r} needs equal dimensions, got {sentence.shape[1]} and {amr.shape[1]}")
    if mode.endswith("normalized"):
        sentence, amr = F.normalize(sentence, dim=-1), F.normalize(amr, dim=-1)
    return torch.cat([sentence, amr], dim=-1) if mode.startswith("concat") else sentence + amr


class AMRRetrofit(TemperatureObjective):
    """Engine objective ``amr_retrofit``: columns ``premise``, ``entailment``, ``contradiction``, each holding
    English text or a linearized AMR graph (mixed training, Algorithm 1)."""

    name = "amr_retrofit"
    text_columns = ("premise", "entailment", "contradiction")
    loss_class = AMRRetrofitLoss
