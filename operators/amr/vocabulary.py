"""Relation and frame counts over a corpus of AMR graphs, for extending an encoder's vocabulary.

Cai et al. (2022, §3) add AMR relations (``:ARG0``, ``:ARG0-of``, ``:op1``, …) and PropBank frames
(``believe-01``) that occur at least 5 times in the training graphs to the tokenizer as whole
tokens. :func:`count_vocabulary` counts both over PENMAN strings, as the linearizer emits them:

- a *relation* is a role as written in the graph (inverse roles kept as ``:ARG0-of``, alignment
  markers such as ``~e.3`` stripped), counted once per edge or attribute; ``:wiki`` is not counted
  because the linearizer removes it;
- a *frame* is a concept ending in a two-digit sense (``-01``, ``-91``), counted once per node.

Graphs that do not decode are counted in ``invalid_graphs`` and skipped, never raised.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field

import penman

from interlingua.operators.amr.linearize import WIKI_ROLE

PAPER_MIN_COUNT = 5
_FRAME = re.compile(r"^\S+-\d\d$")
_ALIGNMENT = re.compile(r"~[A-Za-z]*\.?\d+(?:,\d+)*$")


@dataclass
class VocabularyCounts:
    """Counts of relations and frames; ``graphs`` decoded, ``invalid_graphs`` skipped."""

    relations: Counter[str] = field(default_factory=Counter)
    frames: Counter[str] = field(default_factory=Counter)
    graphs: int = 0
    invalid_graphs: int = 0

    def tokens(self, min_count: int = PAPER_MIN_COUNT) -> list[str]:
        """Relations then frames with count >= ``min_count``, each group sorted by (-count, name)."""
        if min_count < 1:
            raise ValueError(f"min_count must be >= 1, got {min_count}")

        def frequent(counter: Counter[str]) -> list[str]:
            kept = [(name, n) for name, n in counter.items() if n >= min_count]
            return [name for name, _ in sorted(kept, key=lambda item: (-item[1], item[0]))]

        return frequent(self.relations) + frequent(self.frames)


def _count_tree(node: tuple, counts: VocabularyCounts) -> None:
    _, branches = node
    for role, target in branches:
        if role == "/":
            concept = _ALIGNMENT.sub("", str(target)) if target is not None else ""
            if _FRAME.match(concept):
                counts.frames[concept] += 1
            continue
        role = _ALIGNMENT.sub("", role)
        if role == WIKI_ROLE:
            continue
        counts.relations[role] += 1
        if isinstance(target, tuple):
            _count_tree(target, counts)


def count_vocabulary(graphs: Iterable[str]) -> VocabularyCounts:
    """Count relations and frames over PENMAN strings (see the module docstring)."""
    counts = VocabularyCounts()
    for text in graphs:
        try:
            tree = penman.parse(text)
        except (penman.DecodeError, TypeError):
            counts.invalid_graphs += 1
            continue
        counts.graphs += 1
        _count_tree(tree.node, counts)
    return counts
