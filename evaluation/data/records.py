"""Containers the loaders return. Every container keeps the rows it could not parse in
``rejected`` as (location, reason) instead of dropping them silently; rows the official protocol
itself leaves out (an STS pair without a gold score, an empty MewsC-16 sentence) go to ``skipped``.
:func:`require_clean` turns rejected rows into an error for benchmarks where a malformed row would
change the metric."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


def require_clean(data: Any, what: str, show: int = 3) -> Any:
    """``data`` unchanged when its ``rejected`` list is empty; otherwise ValueError naming ``what``,
    the number of malformed rows and the first ``show`` of them (location: reason)."""
    rejected = getattr(data, "rejected", [])
    if rejected:
        examples = "; ".join(f"{where}: {reason}" for where, reason in rejected[:show])
        raise ValueError(f"{what}: {len(rejected)} malformed row(s), e.g. {examples}")
    return data


@dataclass
class ScoredPairs:
    """Sentence pairs with a gold score (STS, QE)."""

    first: list[str] = field(default_factory=list)
    second: list[str] = field(default_factory=list)
    scores: list[float] = field(default_factory=list)
    rejected: list[tuple[str, str]] = field(default_factory=list)
    skipped: list[tuple[str, str]] = field(default_factory=list)


@dataclass
class ParallelTexts:
    """Aligned sentences: ``source[i]`` translates ``target[i]`` (Tatoeba, pack retrieval)."""

    source: list[str] = field(default_factory=list)
    target: list[str] = field(default_factory=list)
    rejected: list[tuple[str, str]] = field(default_factory=list)


@dataclass
class MiningSplit:
    """One BUCC split: id -> text on both sides and the gold (source id, target id) pairs."""

    source_ids: list[str] = field(default_factory=list)
    source_texts: list[str] = field(default_factory=list)
    target_ids: list[str] = field(default_factory=list)
    target_texts: list[str] = field(default_factory=list)
    gold: set[tuple[str, str]] = field(default_factory=set)
    rejected: list[tuple[str, str]] = field(default_factory=list)


@dataclass
class LabelledTexts:
    """Single texts with a class label (MewsC-16, MLDoc, MARC)."""

    texts: list[str] = field(default_factory=list)
    labels: list[str] = field(default_factory=list)
    rejected: list[tuple[str, str]] = field(default_factory=list)
    skipped: list[tuple[str, str]] = field(default_factory=list)


@dataclass
class LabelledPairs:
    """Text pairs with a class label (XNLI, PAWS-X, QAM)."""

    first: list[str] = field(default_factory=list)
    second: list[str] = field(default_factory=list)
    labels: list[str] = field(default_factory=list)
    rejected: list[tuple[str, str]] = field(default_factory=list)
