"""L_L of the meaning/language disentanglement (Tiyajamorn et al. 2021, §3): language embeddings of two
sentences of one language agree, and they identify the language.

Inputs: language embeddings ``s`` = ŝ_L (sentence a), ``t`` = t̂_L (its translation b), ``s_other`` = ŝ'_L
(random sentence c in a's language), ``t_other`` = t̂'_L (random d in b's language), each [B, D];
``logits_s`` = MLP_I(ŝ_L), ``logits_t`` = MLP_I(t̂_L) [B, L] and ``labels_s``, ``labels_t`` [B] the language ids
of a and b.

    L_L^m = 2 − cos(ŝ_L, ŝ'_L) − cos(t̂_L, t̂'_L)                         (``mono``, batch mean)
    L_L^i = CE(MLP_I(ŝ_L), y_s) + CE(MLP_I(t̂_L), y_t)                   (``identification``, each CE a batch mean)

L_L^i is a sum over the two sides of the pair, as the other terms are, and as the authors' released code
(``cal_loss``) computes it; c and d are not classified.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn


class LanguageLoss(nn.Module):
    def __init__(self, mono: bool = True, identification: bool = True):
        super().__init__()
        if not (mono or identification):
            raise ValueError("LanguageLoss needs at least one of mono, identification enabled")
        self.mono, self.identification = bool(mono), bool(identification)

    def terms(self, s, t, s_other, t_other, logits_s: torch.Tensor, logits_t: torch.Tensor,
              labels_s: torch.Tensor, labels_t: torch.Tensor) -> dict[str, torch.Tensor]:
        out = {}
        if self.mono:
            out["language_mono"] = (2.0 - F.cosine_similarity(s, s_other, dim=-1)
                                    - F.cosine_similarity(t, t_other, dim=-1)).mean()
        if self.identification:
            for side, logits, labels in (("s", logits_s, labels_s), ("t", logits_t, labels_t)):
                if logits.shape[0] != labels.shape[0]:
                    raise ValueError(f"logits_{side} and labels_{side} must have one row per input; "
                                     f"got {logits.shape[0]} and {labels.shape[0]}")
            out["language_id"] = F.cross_entropy(logits_s, labels_s) + F.cross_entropy(logits_t, labels_t)
        return out

    def forward(self, s, t, s_other, t_other, logits_s, logits_t, labels_s, labels_t) -> torch.Tensor:
        return sum(self.terms(s, t, s_other, t_other, logits_s, logits_t, labels_s, labels_t).values())
