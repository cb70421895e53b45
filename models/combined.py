"""Combination of two encoders' outputs, as in Cai et al. (2022) Table 6: s ⊕ h (concat), s + h (sum),
s/‖s‖ ⊕ h/‖h‖ (norm_concat, the AMR-retrofit final embedding) and s/‖s‖ + h/‖h‖ (norm_sum)."""

from __future__ import annotations

from typing import Sequence

import numpy as np

from interlingua.models.protocol import TextEncoder, l2_normalize

COMBINATIONS = ("concat", "sum", "norm_concat", "norm_sum")


def combine_embeddings(s: np.ndarray, h: np.ndarray, mode: str) -> np.ndarray:
    """Combine two (n, d1), (n, d2) arrays; the sums need d1 == d2."""
    if mode not in COMBINATIONS:
        raise ValueError(f"mode must be one of {COMBINATIONS}; got {mode!r}")
    if len(s) != len(h):
        raise ValueError(f"both encoders must embed the same rows; got {len(s)} and {len(h)}")
    if mode.startswith("norm_"):
        s, h = l2_normalize(s), l2_normalize(h)
    if mode.endswith("sum"):
        if s.shape[1] != h.shape[1]:
            raise ValueError(f"mode {mode!r} needs equal dims; got {s.shape[1]} and {h.shape[1]}")
        return np.asarray(s + h, dtype=np.float32)
    return np.concatenate([s, h], axis=1).astype(np.float32)


class CombinedEncoder:
    """Encodes with both encoders and combines the outputs with ``mode``."""

    def __init__(self, first: TextEncoder, second: TextEncoder, mode: str):
        if mode not in COMBINATIONS:
            raise ValueError(f"mode must be one of {COMBINATIONS}; got {mode!r}")
        self.first, self.second, self.mode = first, second, mode
        self.name = f"{mode}({first.name}|{second.name})"

    @property
    def dim(self) -> int:
        return self.first.dim if self.mode.endswith("sum") else self.first.dim + self.second.dim

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        return combine_embeddings(self.first.encode(texts), self.second.encode(texts), self.mode)
