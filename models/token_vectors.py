"""Contextual vectors of single tokens: pre-split words tokenized the way ``bitext-corpus`` records
first-subword positions, and the hidden states of a chosen layer read at given positions.

``bitext-corpus`` writes ``subword_pairs`` from the words of ``src_tokens`` / ``tgt_tokens`` encoded as one
pre-split sequence with special tokens and no prompt prefix (``first_subword_positions``). Training and
evaluation on word pairs tokenize the same way (:func:`tokenize_words`), so a recorded position indexes the
encoder's output directly. A position is *usable* when it is, after truncation, the first subword of a word
(:meth:`TokenizedWords.is_word_start`); the others are the caller's to count and drop.

Column formats accepted (corpus versions may hold either): tokens as one space-joined string or a list of
strings; pairs as a space-joined ``"i-j i-j"`` string, a list of ``"i-j"`` strings, a list of ``[i, j]``
pairs, or a list of two-field mappings.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import torch
from torch import Tensor

#: Features key of a token-level view: [rows, P] positions to read (-1: padding).
TOKEN_POSITIONS = "token_positions"


def parse_words(cell) -> list[str]:
    """A tokens cell (space-joined string, or a list/array of strings) as a list of words."""
    if cell is None:
        return []
    if isinstance(cell, bytes):
        cell = cell.decode()
    if isinstance(cell, str):
        return cell.split()
    return [str(word) for word in cell]


def parse_pairs(cell) -> list[tuple[int, int]]:
    """A pairs cell (``"0-1 2-3"``, ``["0-1", "2-3"]``, ``[[0, 1], [2, 3]]`` or ``[{"src": 0, "tgt": 1}]``)
    as (source, target) integer pairs. Raises ValueError naming the bad item."""
    if cell is None:
        return []
    if isinstance(cell, bytes):
        cell = cell.decode()
    items = cell.split() if isinstance(cell, str) else list(cell)
    pairs = []
    for item in items:
        if isinstance(item, bytes):
            item = item.decode()
        if isinstance(item, str):
            left, sep, right = item.partition("-")
            values = (left, right) if sep else ()
        elif isinstance(item, Mapping):
            values = tuple(item.values())
        else:
            values = tuple(item)
        try:
            if len(values) != 2:
                raise ValueError
            pairs.append((int(values[0]), int(values[1])))
        except (TypeError, ValueError):
            raise ValueError(f"word pair {item!r} is not 'i-j', [i, j] or a two-field mapping") from None
    return pairs


@dataclass
class TokenizedWords:
    """Rows of pre-split words tokenized with special tokens (``features``: input_ids, attention_mask, ...)
    and, per row, the positions that start a word after truncation."""

    features: dict[str, Tensor]
    word_starts: list[set[int]]
    last_word_position: list[int]   # per row: the last position holding a word's subword (-1: none)

    def is_word_start(self, row: int, position: int) -> bool:
        return position in self.word_starts[row]

    def at(self, positions: Sequence[Sequence[int]]) -> dict[str, Tensor]:
        """The features plus :data:`TOKEN_POSITIONS` (rows padded with -1) for reading ``positions[row]``."""
        if len(positions) != len(self.word_starts):
            raise ValueError(f"{len(positions)} position lists for {len(self.word_starts)} rows")
        width = max((len(p) for p in positions), default=0)
        device = next(iter(self.features.values())).device
        table = torch.full((len(positions), max(width, 1)), -1, dtype=torch.long)
        for row, row_positions in enumerate(positions):
            if row_positions:
                table[row, : len(row_positions)] = torch.tensor(list(row_positions), dtype=torch.long)
        return {**self.features, TOKEN_POSITIONS: table.to(device)}

    def to(self, device) -> "TokenizedWords":
        return TokenizedWords({k: v.to(device) for k, v in self.features.items()}, self.word_starts,
                              self.last_word_position)


def tokenize_words(tokenizer, words: Sequence[Sequence[str]], max_length: int) -> TokenizedWords:
    """Tokenize rows of words as pre-split sequences (special tokens, truncation at ``max_length``, padding).
    ``tokenizer`` must be a fast Hugging Face tokenizer (it reports ``word_ids``)."""
    if not getattr(tokenizer, "is_fast", False):
        raise ValueError(f"word positions need a fast (Rust) tokenizer reporting word_ids, got {type(tokenizer).__name__}")
    rows = [list(w) if w else [""] for w in words]
    batch = tokenizer(rows, is_split_into_words=True, add_special_tokens=True, truncation=True,
                      max_length=max_length, padding=True, return_tensors="pt")
    starts, last = [], []
    for row, row_words in enumerate(words):
        ids = batch.word_ids(row) if row_words else []
        starts.append({p for p, w in enumerate(ids) if w is not None and (p == 0 or ids[p - 1] != w)})
        last.append(max((p for p, w in enumerate(ids) if w is not None), default=-1))
    features = {k: v for k, v in batch.items() if k in ("input_ids", "attention_mask", "token_type_ids")}
    return TokenizedWords(features, starts, last)


@dataclass
class SelectedPairs:
    """Per row, the source and target positions of the usable pairs, and the pairs dropped by reason."""

    source: list[list[int]]
    target: list[list[int]]
    kept: int = 0
    beyond_length: int = 0     # a position past the last word after truncation
    not_word_start: int = 0    # inside the sequence but not a word's first subword (another tokenizer?)


def select_pairs(source: TokenizedWords, target: TokenizedWords,
                 pairs: Sequence[Sequence[tuple[int, int]]]) -> SelectedPairs:
    """Keep the (source, target) position pairs whose two positions are word starts; count the others."""
    selected = SelectedPairs([], [])
    for row, row_pairs in enumerate(pairs):
        src_row, tgt_row = [], []
        for i, j in row_pairs:
            if source.is_word_start(row, i) and target.is_word_start(row, j):
                src_row.append(i)
                tgt_row.append(j)
            elif i > source.last_word_position[row] or j > target.last_word_position[row]:
                selected.beyond_length += 1
            else:
                selected.not_word_start += 1
        selected.source.append(src_row)
        selected.target.append(tgt_row)
        selected.kept += len(src_row)
    return selected


def hidden_layers(transformer) -> int:
    """Number of transformer layers (``num_hidden_layers`` of the model config)."""
    return int(transformer.config.num_hidden_layers)


def check_layer(layer: int | None, num_layers: int, what: str = "align_layer") -> int:
    """``layer`` (None: the last) as an index into ``hidden_states`` (0 = embeddings, 1..N = layers)."""
    if layer is None:
        return num_layers
    if not 0 <= layer <= num_layers:
        raise ValueError(f"{what}={layer}: the encoder has {num_layers} layers; choose 0 (embeddings) to "
                         f"{num_layers} (the last), or null for the last")
    return layer


def token_vectors(transformer, features: Mapping[str, Tensor], layer: int | None = None) -> Tensor:
    """[n, H] hidden states of layer ``layer`` (None: the last) at ``features[TOKEN_POSITIONS]`` (>= 0),
    row-major: row 0's positions first, in their given order."""
    positions = features[TOKEN_POSITIONS]
    inputs = {k: v for k, v in features.items() if k != TOKEN_POSITIONS}
    index = check_layer(layer, hidden_layers(transformer))
    last = index == hidden_layers(transformer)
    out = transformer(**inputs, output_hidden_states=not last)
    states = out.last_hidden_state if last else out.hidden_states[index]
    rows, columns = (positions >= 0).nonzero(as_tuple=True)
    return states[rows, positions[rows, columns]]
