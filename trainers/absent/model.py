"""ABSent's networks (Fu et al. 2020): generators G: X→Y, F: Y→X and discriminators.

* :class:`Generator`: fully connected, hidden widths 512-1024-512 with BatchNorm + ReLU, tanh output (the
  sentence vectors it imitates are L2-normalized, inside [-1, 1]). With ``init`` (a linear map W, shape
  (in, out), e.g. orthogonal Procrustes fitted on the parallel pairs) it also has a linear skip path,
  G(x) = tanh(x W' + MLP(x)), with W' starting at W and the MLP's last layer at zero, so training starts from
  the linear map (tanh(x W) ≈ x W for unit vectors) and the adversarial terms refine it. Without ``init``
  it is the paper's plain MLP from random weights.
* :class:`Discriminator`: fully connected 512-1024-512 with leaky ReLU (0.2) over its input (a concatenated
  (x, y) pair for the pair and direction discriminators, one vector for the conditional-GAN variant), one
  logit out; sigmoid(logit) is the probability of "real" (the losses use the logits, which is the same
  cross-entropy computed stably).
"""

from __future__ import annotations

from typing import Sequence

import numpy as np
import torch
from torch import nn

HIDDEN = (512, 1024, 512)


def _check(widths: Sequence[int]) -> tuple[int, ...]:
    widths = tuple(int(w) for w in widths)
    if not widths or any(w < 1 for w in widths):
        raise ValueError(f"hidden widths must be positive integers; got {widths}")
    return widths


class Generator(nn.Module):
    def __init__(self, in_dim: int, out_dim: int, hidden: Sequence[int] = HIDDEN, init: np.ndarray | None = None):
        super().__init__()
        layers, width = [], in_dim
        for size in _check(hidden):
            layers += [nn.Linear(width, size), nn.BatchNorm1d(size), nn.ReLU()]
            width = size
        layers += [nn.Linear(width, out_dim), nn.Tanh()]
        self.net = nn.Sequential(*layers)
        self.skip = None
        if init is not None:
            init = np.asarray(init, dtype=np.float32)
            if init.shape != (in_dim, out_dim):
                raise ValueError(f"init map must have shape ({in_dim}, {out_dim}); got {init.shape}")
            self.skip = nn.Linear(in_dim, out_dim, bias=False)
            with torch.no_grad():
                self.skip.weight.copy_(torch.from_numpy(init.T.copy()))
                self.net[-2].weight.zero_()
                self.net[-2].bias.zero_()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if self.skip is None:
            return self.net(x)
        return torch.tanh(self.skip(x) + self.net[:-1](x))


class Discriminator(nn.Module):
    def __init__(self, in_dim: int, hidden: Sequence[int] = HIDDEN):
        super().__init__()
        layers, width = [], in_dim
        for size in _check(hidden):
            layers += [nn.Linear(width, size), nn.LeakyReLU(0.2)]
            width = size
        layers.append(nn.Linear(width, 1))
        self.net = nn.Sequential(*layers)

    def forward(self, *parts: torch.Tensor) -> torch.Tensor:
        """Logit of "real" for the concatenation of ``parts`` ([B, d1], [B, d2], ...) -> [B]."""
        return self.net(torch.cat(parts, dim=-1)).squeeze(-1)
