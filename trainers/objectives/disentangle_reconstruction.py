"""L_R of the meaning/language disentanglement (Tiyajamorn et al. 2021, §3): the meaning embedding ê_M and
the language embedding ê_L must add up to the frozen encoder's embedding e.

Inputs: ``e`` [N, D] (all four inputs of a step stacked: a, b, c, d, B rows each), ``meaning`` ê_M [N, D],
``language`` ê_L [N, D]. Output: mean over rows of ``distance(e, ê_M + ê_L)`` (``mse``: see below).

Distance (``distance`` option):

* ``squared_l2`` (default): ‖e − (ê_M + ê_L)‖², summed over dimensions. The split is additive, so the
  vector itself, not only its direction, must be rebuilt; a cosine distance would let ê_M + ê_L drift in
  norm and the two parts grow without bound. Summing (not averaging) over dimensions keeps the term on the
  scale of the cosine terms of L_M and L_L (for unit-norm e, ‖e − ê‖² = 2 − 2cos when ‖ê‖ = 1); the
  per-dimension mean (``mse``) divides it by D (384 for e5-small) and in practice switches L_R off.
* ``mse``: the authors' released form (``cal_loss``): PyTorch ``MSELoss`` (mean over rows and dimensions) of a's
  reconstruction plus that of b's, MSE(e_a, ê_a) + MSE(e_b, ê_b); c and d are not reconstructed. Per row it is
  ``squared_l2`` divided by D, for comparison with the paper's runs.
* ``cosine``: 1 − cos(e, ê_M + ê_L).
"""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn

from interlingua.trainers.objectives.options import require_choice

DISTANCES = ("squared_l2", "mse", "cosine")


class ReconstructionLoss(nn.Module):
    def __init__(self, distance: str = "squared_l2"):
        super().__init__()
        self.distance = require_choice("distance", distance, DISTANCES)

    def forward(self, e: torch.Tensor, meaning: torch.Tensor, language: torch.Tensor) -> torch.Tensor:
        if not e.shape == meaning.shape == language.shape:
            raise ValueError(f"e, meaning and language must have one shape; got {tuple(e.shape)}, "
                             f"{tuple(meaning.shape)}, {tuple(language.shape)}")
        rebuilt = meaning + language
        if self.distance == "cosine":
            return (1.0 - F.cosine_similarity(e, rebuilt, dim=-1)).mean()
        if self.distance == "mse":
            if e.shape[0] % 4:
                raise ValueError(f"distance 'mse' reads e as a, b, c, d stacked (4 equal blocks); got {e.shape[0]} rows")
            e_a, e_b, _, _ = e.chunk(4)
            rebuilt_a, rebuilt_b, _, _ = rebuilt.chunk(4)
            return F.mse_loss(rebuilt_a, e_a) + F.mse_loss(rebuilt_b, e_b)
        return (e - rebuilt).pow(2).sum(-1).mean()
