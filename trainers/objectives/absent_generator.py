"""Generator losses of ABSent (Fu et al. 2020).

* :class:`AdversarialGeneratorLoss`: the non-saturating GAN loss −mean log σ(D(fake)) over the logits of
  generated pairs (x, G(x)) (or, for the direction discriminator, the logits with the labels flipped:
  pass ``target=0``).
* :class:`PairedMappingLoss`: on the parallel part, mean ‖G(x_i) − y_i‖² (summed over dimensions); the
  supervised anchor of the mappings (weight ``weight``; 0 switches it off), as the least-squares baseline's
  objective.

Inputs: logits [B]; mapped [B, D] and target [B, D].
"""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn

from interlingua.trainers.objectives.options import require_non_negative


class AdversarialGeneratorLoss(nn.Module):
    def forward(self, logits: torch.Tensor, target: float = 1.0) -> torch.Tensor:
        return F.binary_cross_entropy_with_logits(logits, torch.full_like(logits, float(target)))


class PairedMappingLoss(nn.Module):
    def __init__(self, weight: float = 1.0):
        super().__init__()
        self.weight = require_non_negative("weight", weight)

    def forward(self, mapped: torch.Tensor, target: torch.Tensor) -> torch.Tensor:
        if mapped.shape != target.shape:
            raise ValueError(f"mapped and target must have one shape; got {tuple(mapped.shape)} and {tuple(target.shape)}")
        return self.weight * (mapped - target).pow(2).sum(-1).mean()
