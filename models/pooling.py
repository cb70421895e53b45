"""Pooling token states into one sentence vector."""

from __future__ import annotations

import torch

POOLING_MODES = ("mean", "cls", "max")


def check_pooling(mode: str) -> str:
    if mode not in POOLING_MODES:
        raise ValueError(f"pooling must be one of {POOLING_MODES}, got {mode!r}")
    return mode


def pool(token_states: torch.Tensor, attention_mask: torch.Tensor, mode: str) -> torch.Tensor:
    """[B, T, H] token states + [B, T] mask -> [B, H].

    ``mean`` averages non-padding tokens (multilingual-e5, EASE multilingual); ``cls`` takes the
    first token (SimCSE, EASE monolingual); ``max`` takes the element-wise max over real tokens.
    """
    if mode == "cls":
        return token_states[:, 0]
    mask = attention_mask.unsqueeze(-1).to(token_states.dtype)
    if mode == "mean":
        return (token_states * mask).sum(1) / mask.sum(1).clamp(min=1e-9)
    if mode == "max":
        return token_states.masked_fill(mask == 0, torch.finfo(token_states.dtype).min).max(1).values
    raise ValueError(f"pooling must be one of {POOLING_MODES}, got {mode!r}")
