"""The autoencoder of Tiyajamorn et al. (2021) over a frozen encoder's embedding e: meaning head MLP_M,
language head MLP_L (single feed-forward layers, ê_M + ê_L reconstructs e) and the language classifier
MLP_I on ê_L. MLP_M is the :class:`~interlingua.models.meaning_head.MeaningHead` the composed encoder keeps."""

from __future__ import annotations

import torch
from torch import nn

from interlingua.models.meaning_head import MeaningHead


class DisentangleModel(nn.Module):
    def __init__(self, dim: int, num_languages: int, activation: str = "identity"):
        super().__init__()
        if num_languages < 2:
            raise ValueError(f"language identification needs at least 2 languages; got {num_languages}")
        self.meaning = MeaningHead(dim, dim, activation)
        self.language = MeaningHead(dim, dim, activation)
        self.identify = nn.Linear(dim, num_languages)

    def forward(self, e: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        """e [N, D] -> (ê_M [N, D], ê_L [N, D], MLP_I(ê_L) logits [N, L])."""
        language = self.language(e)
        return self.meaning(e), language, self.identify(language)
