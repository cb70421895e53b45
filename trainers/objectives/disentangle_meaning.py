"""L_M of the meaning/language disentanglement (Tiyajamorn et al. 2021, §3): meaning embeddings of a
translation pair agree, those of two unrelated sentences of one language do not.

Inputs (meaning embeddings, each [B, D]): ``s`` = ŝ_M of the source sentence a, ``t`` = t̂_M of its
translation b, ``s_other`` = ŝ'_M of a random sentence c in a's language, ``t_other`` = t̂'_M of a random
sentence d in b's language.

    L_M^x = 1 − cos(ŝ_M, t̂_M)                                  (``cross``)
    L_M^m = max(0, cos(ŝ_M, ŝ'_M)) + max(0, cos(t̂_M, t̂'_M))   (``mono``)

each averaged over the batch; ``forward`` returns the sum of the enabled terms, :meth:`terms` each one.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn


class MeaningLoss(nn.Module):
    def __init__(self, cross: bool = True, mono: bool = True):
        super().__init__()
        if not (cross or mono):
            raise ValueError("MeaningLoss needs at least one of cross, mono enabled")
        self.cross, self.mono = bool(cross), bool(mono)

    def terms(self, s: torch.Tensor, t: torch.Tensor, s_other: torch.Tensor, t_other: torch.Tensor) -> dict[str, torch.Tensor]:
        out = {}
        if self.cross:
            out["meaning_cross"] = (1.0 - F.cosine_similarity(s, t, dim=-1)).mean()
        if self.mono:
            out["meaning_mono"] = (F.cosine_similarity(s, s_other, dim=-1).clamp(min=0)
                                   + F.cosine_similarity(t, t_other, dim=-1).clamp(min=0)).mean()
        return out

    def forward(self, s, t, s_other, t_other) -> torch.Tensor:
        return sum(self.terms(s, t, s_other, t_other).values())
