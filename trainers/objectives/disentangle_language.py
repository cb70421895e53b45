"""L_L of the meaning/language disentanglement (Tiyajamorn et al. 2021, §3): language embeddings of two
sentences of one language agree, and they identify the language.

Inputs: language embeddings ``s`` = ŝ_L (sentence a), ``t`` = t̂_L (its translation b), ``s_other`` = ŝ'_L
(random sentence c in a's language), ``t_other`` = t̂'_L (random d in b's language), each [B, D];
``logits`` = MLP_I(ê_L) [N, L] for the N language embeddings of the step and ``labels`` [N] their language ids.

    L_L^m = 2 − cos(ŝ_L, ŝ'_L) − cos(t̂_L, t̂'_L)                 (``mono``, batch mean)
    L_L^i = −log softmax(MLP_I(ê_L))[language]                   (``identification``, mean over the N inputs)
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

    def terms(self, s, t, s_other, t_other, logits: torch.Tensor, labels: torch.Tensor) -> dict[str, torch.Tensor]:
        out = {}
        if self.mono:
            out["language_mono"] = (2.0 - F.cosine_similarity(s, s_other, dim=-1)
                                    - F.cosine_similarity(t, t_other, dim=-1)).mean()
        if self.identification:
            if logits.shape[0] != labels.shape[0]:
                raise ValueError(f"logits and labels must have one row per input; got {logits.shape[0]} and {labels.shape[0]}")
            out["language_id"] = F.cross_entropy(logits, labels)
        return out

    def forward(self, s, t, s_other, t_other, logits, labels) -> torch.Tensor:
        return sum(self.terms(s, t, s_other, t_other, logits, labels).values())
