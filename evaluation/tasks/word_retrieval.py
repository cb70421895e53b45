"""Word retrieval of aligned word pairs (Wu & Dredze 2020's own check of explicit alignment).

On held-out ``bitext-corpus`` rows: the contextual vector (layer ``layer``, first subword) of every source word
of a kept one-to-one link retrieves, by cosine, its nearest neighbour among the contextual vectors of all the
target words of those links; it is correct when that is its aligned word. Run it on the base and on the
aligned encoder (before / after). Pairs whose positions fall outside the sequence after truncation, or not at a
word start, are counted, not evaluated. A linear-mapping model is evaluated with ``target_map`` (W applied to
the target vectors, mapping them into the source space as the objective learned it, ``alignment_mapping.npz``).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from interlingua.evaluation.metrics.retrieval import nearest_neighbour_accuracy


@dataclass(frozen=True)
class WordRetrieval:
    accuracy: float          # percent of source words whose nearest target word is their aligned word
    pairs: int               # pairs evaluated
    beyond_length: int       # pairs dropped: a position past the sequence after truncation
    not_word_start: int      # pairs dropped: a position not at a word's first subword


def word_retrieval_accuracy(encoder, rows: Sequence[Mapping] | Mapping[str, Sequence], *, layer: int | None = None,
                            max_length: int = 512, batch_size: int = 32,
                            target_map: Callable[[np.ndarray], np.ndarray] | None = None,
                            src_tokens_column: str = "src_tokens", tgt_tokens_column: str = "tgt_tokens",
                            pairs_column: str = "subword_pairs") -> WordRetrieval:
    """Word-retrieval accuracy of ``encoder`` (a ``SentenceEncoder``) on ``rows`` (a list of row dicts or a dict of
    columns, e.g. a pandas/numpy batch of a ``bitext-corpus`` version)."""
    import torch

    from interlingua.models.token_vectors import parse_pairs, parse_words, select_pairs, token_vectors, tokenize_words

    columns = _columns(rows, (src_tokens_column, tgt_tokens_column, pairs_column))
    n = len(columns[pairs_column])
    sources, targets, beyond, not_start = [], [], 0, 0
    was_training = encoder.training
    encoder.eval()
    try:
        with torch.no_grad():
            for start in range(0, n, batch_size):
                part = slice(start, start + batch_size)
                src = tokenize_words(encoder.tokenizer, [parse_words(c) for c in columns[src_tokens_column][part]],
                                     max_length).to(encoder.device)
                tgt = tokenize_words(encoder.tokenizer, [parse_words(c) for c in columns[tgt_tokens_column][part]],
                                     max_length).to(encoder.device)
                selected = select_pairs(src, tgt, [parse_pairs(c) for c in columns[pairs_column][part]])
                beyond += selected.beyond_length
                not_start += selected.not_word_start
                if selected.kept:
                    sources.append(token_vectors(encoder.transformer, src.at(selected.source), layer).float().cpu().numpy())
                    targets.append(token_vectors(encoder.transformer, tgt.at(selected.target), layer).float().cpu().numpy())
    finally:
        encoder.train(was_training)
    if not sources:
        raise ValueError(f"no usable word pair in {n} rows ({beyond} beyond max_length={max_length}, "
                         f"{not_start} not at a word start): is {pairs_column!r} from this encoder's tokenizer?")
    source, target = np.concatenate(sources), np.concatenate(targets)
    if target_map is not None:
        target = target_map(target)
    return WordRetrieval(accuracy=nearest_neighbour_accuracy(source, target), pairs=len(source),
                         beyond_length=beyond, not_word_start=not_start)


def read_linear_map(path: str) -> tuple[np.ndarray, int | None]:
    """The target -> source matrix W and its layer (None: the last) of a saved linear alignment
    (``alignment_mapping.npz``, written by the ``explicit_alignment`` objective).

    A file without ``direction`` was saved by an older version, whose W mapped source vectors to the target space;
    its target map is the inverse, W⁺ (pseudo-inverse)."""
    with np.load(path, allow_pickle=False) as saved:
        weight = saved["weight"]
        layer = int(saved["layer"]) if "layer" in saved.files else -1
        direction = str(saved["direction"]) if "direction" in saved.files else "source_to_target"
    if direction == "source_to_target":
        weight = np.linalg.pinv(weight)
    elif direction != "target_to_source":
        raise ValueError(f"{path}: direction {direction!r} is not one of target_to_source, source_to_target")
    return weight, (None if layer < 0 else layer)


def mapped_by(weight: np.ndarray) -> Callable[[np.ndarray], np.ndarray]:
    """``target_map`` applying W to each row vector: y -> W y."""
    return lambda vectors: vectors @ weight.T


def linear_map(path: str) -> Callable[[np.ndarray], np.ndarray]:
    """``target_map`` of a saved linear alignment (``alignment_mapping.npz``: y -> W y; see :func:`read_linear_map`)."""
    return mapped_by(read_linear_map(path)[0])


def _columns(rows, names: Sequence[str]) -> dict[str, list]:
    if isinstance(rows, Mapping):
        missing = [c for c in names if c not in rows]
        if missing:
            raise ValueError(f"word retrieval needs columns {list(names)}; missing {missing}")
        return {c: list(rows[c]) for c in names}
    rows = list(rows)
    missing = sorted({c for row in rows for c in names if c not in row})
    if missing:
        raise ValueError(f"word retrieval needs columns {list(names)}; missing {missing}")
    return {c: [row[c] for row in rows] for c in names}
