"""Selecting clean aligned pairs for retrieval/mining tasks, with the rejects counted by reason."""

from __future__ import annotations

from collections import Counter
from collections.abc import Set

import numpy as np


def clean_pair_indices(first: list[str], second: list[str], min_chars: int = 1,
                       trained: tuple[Set[str], Set[str]] = (frozenset(), frozenset())) -> tuple[list[int], Counter]:
    """Indices of pairs usable for retrieval: both sides at least ``min_chars`` long after stripping, neither side
    equal (after :func:`normalize_text`) to a text of ``trained`` (that side's training texts, already normalized:
    the model saw it) and neither side repeating an earlier kept text (a repeated text would make the gold target
    ambiguous; the first one is kept). Returns (kept indices, Counter of rejected reasons)."""
    kept, rejected = [], Counter()
    seen_first, seen_second = set(), set()
    trained_first, trained_second = trained
    for i, (a, b) in enumerate(zip(first, second, strict=True)):
        a, b = (a or "").strip(), (b or "").strip()
        if len(a) < min_chars or len(b) < min_chars:
            rejected["too_short"] += 1
        elif normalize_text(a) in trained_first or normalize_text(b) in trained_second:
            rejected["text_in_training"] += 1
        elif a in seen_first or b in seen_second:
            rejected["duplicate_text"] += 1
        else:
            seen_first.add(a)
            seen_second.add(b)
            kept.append(i)
    return kept, rejected


def normalize_text(text: str | None) -> str:
    """``text`` with runs of whitespace made one space and the ends stripped (how training texts are compared)."""
    return " ".join(str(text or "").split())


def sample_indices(indices: list[int], size: int, seed: int) -> list[int]:
    """``size`` of ``indices`` drawn without replacement (all when fewer), in their original order."""
    if size < 1:
        raise ValueError(f"size must be >= 1; got {size}")
    if len(indices) <= size:
        return list(indices)
    chosen = np.random.default_rng(seed).choice(len(indices), size=size, replace=False)
    return [indices[i] for i in sorted(chosen)]
