"""Vocabulary extension of the AMR encoder (Cai et al. 2022).

AMR relations (``:ARG0``, ``:mod``, ``:ARG1-of`` ...) and PropBank frame names (``want-01``) that occur
at least ``min_count`` (5) times in the training graphs become new tokens; the embedding of each new
token starts as the mean of the embeddings of the sub-tokens the old tokenizer splits it into.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

import torch
from torch import Tensor

RELATION = re.compile(r"^:[A-Za-z][A-Za-z0-9-]*$")
FRAME = re.compile(r"^[a-z][a-z0-9]*(?:-[a-z0-9]+)*-\d{2,}$")


def graph_symbols(graph: str) -> list[str]:
    """Relations and frame names of one linearized PENMAN graph, in order of occurrence."""
    tokens = graph.replace("(", " ").replace(")", " ").split()
    return [token for token in tokens if RELATION.match(token) or FRAME.match(token)]


def frequent_amr_symbols(graphs: Iterable[str], min_count: int = 5) -> list[str]:
    """Relations and frames occurring >= ``min_count`` times over ``graphs``, most frequent first."""
    if min_count < 1:
        raise ValueError(f"min_count must be >= 1, got {min_count}")
    counts = Counter(symbol for graph in graphs for symbol in graph_symbols(graph))
    frequent = [(symbol, count) for symbol, count in counts.items() if count >= min_count]
    return [symbol for symbol, _ in sorted(frequent, key=lambda item: (-item[1], item[0]))]


def mean_subtoken_rows(weight: Tensor, new_rows: Sequence[int], subtoken_rows: Sequence[Sequence[int]]) -> None:
    """In place: ``weight[new_rows[t]] = mean(weight[subtoken_rows[t]])`` for every new token t."""
    if len(new_rows) != len(subtoken_rows):
        raise ValueError(f"{len(new_rows)} new rows but {len(subtoken_rows)} sub-token lists")
    with torch.no_grad():
        for row, pieces in zip(new_rows, subtoken_rows):
            if not pieces:
                raise ValueError(f"new row {row} has no sub-tokens to average")
            weight[row] = weight[list(pieces)].mean(dim=0)


@dataclass
class VocabularyExtension:
    """Tokens added, and tokens kept aside with the reason (already in the vocabulary, no sub-tokens)."""

    added: list[str] = field(default_factory=list)
    skipped: dict[str, str] = field(default_factory=dict)


def extend_vocabulary(tokenizer, model, tokens: Sequence[str]) -> VocabularyExtension:
    """Add ``tokens`` to a Hugging Face tokenizer/model pair, initialising each new embedding row as the
    mean of its old sub-token embeddings. ``tokenizer`` needs ``get_vocab``, ``__call__`` (returning
    ``input_ids``), ``add_tokens`` and ``__len__``; ``model`` needs ``resize_token_embeddings`` and
    ``get_input_embeddings``."""
    report = VocabularyExtension()
    vocabulary = tokenizer.get_vocab()
    pieces: dict[str, list[int]] = {}
    for token in tokens:
        if token in vocabulary:
            report.skipped[token] = "already in the vocabulary"
            continue
        ids = list(tokenizer(token, add_special_tokens=False)["input_ids"])
        if not ids:
            report.skipped[token] = "the old tokenizer gives no sub-tokens"
            continue
        pieces[token] = ids
    from tokenizers import AddedToken

    # not normalized: relations like ":ARG0" stay case-sensitive under a lower-casing tokenizer
    tokenizer.add_tokens([AddedToken(token, normalized=False) for token in pieces])
    model.resize_token_embeddings(len(tokenizer), mean_resizing=False)
    new_vocabulary = tokenizer.get_vocab()
    weight = model.get_input_embeddings().weight
    mean_subtoken_rows(weight, [new_vocabulary[token] for token in pieces], list(pieces.values()))
    report.added = list(pieces)
    return report
