"""Discriminator loss of ABSent's pair discriminators (Fu et al. 2020).

A pair discriminator D scores (x, y) pairs. Real pairs are parallel (x_i, y_i); fake pairs pair a sentence
with the generator's mapping of it, (x, G(x)); mismatch pairs are two real sentences that are not
translations, (x_i, y_j), i ≠ j, so D must learn that a pair is real because its sides correspond, not only
because each side looks like a real sentence. With logits r, f, m and σ the sigmoid:

    L_D = −mean log σ(r) − mean log(1 − σ(f)) − λ_m · mean log(1 − σ(m))      (``mismatch`` on: λ_m = 1)

Inputs: ``real`` [B_r], ``fake`` [B_f], ``mismatch`` [B_m] logits (``mismatch`` may be None when off).
The same loss serves the direction discriminator (``real`` = pairs (x, G(x)), ``fake`` = pairs (F(y), y)) and
the conditional-GAN variant's vector discriminator (``real`` = y, ``fake`` = G(x)), with mismatch off.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn


class PairDiscriminatorLoss(nn.Module):
    def __init__(self, mismatch: bool = True):
        super().__init__()
        self.mismatch = bool(mismatch)

    def forward(self, real: torch.Tensor, fake: torch.Tensor, mismatch: torch.Tensor | None = None) -> torch.Tensor:
        loss = (F.binary_cross_entropy_with_logits(real, torch.ones_like(real))
                + F.binary_cross_entropy_with_logits(fake, torch.zeros_like(fake)))
        if self.mismatch:
            if mismatch is None:
                raise ValueError("mismatch logits are required when the mismatch term is on")
            loss = loss + F.binary_cross_entropy_with_logits(mismatch, torch.zeros_like(mismatch))
        return loss
