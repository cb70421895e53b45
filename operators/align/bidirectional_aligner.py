"""Align tokenized sentence pairs in both directions with learned fast_align parameters, then symmetrize.

:class:`BidirectionalAligner` runs the compiled kernel (:mod:`~interlingua.operators.align.compiled_decoder`);
:func:`align_reference` is the NumPy reference (directional decoder + Python symmetrization) it is
tested against, link for link.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from dataclasses import dataclass
from itertools import chain, repeat

import numpy as np

from interlingua.operators.align.fast_align_decoder import DirectionalModel, decode_directional, flip, to_ids
from interlingua.operators.align.fast_align_training import SEPARATOR, FastAlignParameters, fast_align_token
from interlingua.operators.align.lexical_table import UNKNOWN_ID
from interlingua.operators.align.pharaoh import Link, target_first
from interlingua.operators.align.symmetrize import SYMMETRIZATIONS, symmetrize


@dataclass(frozen=True)
class PairAlignment:
    """Links of one sentence pair, all (source index, target index); ``forward`` by target index and ``reverse`` by
    source index, as fast_align prints them."""

    forward: list[Link]
    reverse: list[Link]
    symmetrized: set[Link]


def _directions(parameters: FastAlignParameters, symmetrization: str, tension_override: float | None) -> tuple[DirectionalModel, DirectionalModel]:
    if symmetrization not in SYMMETRIZATIONS:
        raise ValueError(f"symmetrization {symmetrization!r} is not supported; expected one of {', '.join(SYMMETRIZATIONS)}")
    forward, reverse = parameters.forward, parameters.reverse
    if tension_override is not None:
        forward = dataclasses.replace(forward, tension=tension_override)
        reverse = dataclasses.replace(reverse, tension=tension_override)
    return forward, reverse


class BidirectionalAligner:
    """fast_align forward + reverse Viterbi decoding, then ``symmetrization`` (compiled).

    ``tension_override`` replaces both learned tensions (``systran_align.Aligner`` decodes with
    fast_align's default 4.0 whatever was learned; pass 4.0 to reproduce it).
    """

    def __init__(self, parameters: FastAlignParameters, symmetrization: str = "grow-diag-final-and", tension_override: float | None = None):
        from interlingua.operators.align.compiled_decoder import CompiledPair

        self.forward, self.reverse = _directions(parameters, symmetrization, tension_override)
        self.symmetrization = symmetrization
        # one lookup per token: word -> index into the union of both vocabularies -> each table's id
        union = sorted(set(self.forward.table.vocabulary) | set(self.reverse.table.vocabulary))
        self._union_ids = {word: k + 1 for k, word in enumerate(union)}
        stand_in = self._union_ids.get(fast_align_token(SEPARATOR))
        self._union_ids.pop(SEPARATOR, None)  # the reference renames the separator before looking it up
        if stand_in is not None:
            self._union_ids[SEPARATOR] = stand_in
        forward_ids, reverse_ids = self.forward.table.word_ids, self.reverse.table.word_ids
        to_forward = np.array([UNKNOWN_ID] + [forward_ids.get(w, UNKNOWN_ID) for w in union], np.int64)
        to_reverse = np.array([UNKNOWN_ID] + [reverse_ids.get(w, UNKNOWN_ID) for w in union], np.int64)
        self._compiled = CompiledPair(self.forward, self.reverse, to_forward, to_reverse)

    def align_links(self, sources: Sequence[Sequence[str]], targets: Sequence[Sequence[str]]):
        """:class:`~interlingua.operators.align.compiled_decoder.BatchLinks` of the pairs (flat arrays)."""
        if len(sources) != len(targets):
            raise ValueError(f"sources has {len(sources)} sentences but targets has {len(targets)}")
        src, src_start = self._ids(sources)
        tgt, tgt_start = self._ids(targets)
        return self._compiled.align(src, tgt, src_start, tgt_start, self.symmetrization)

    def align_pharaoh(self, sources: Sequence[Sequence[str]], targets: Sequence[Sequence[str]]) -> tuple[list[str], list[str], list[str]]:
        """Forward, reverse and symmetrized Pharaoh strings (source-target order), one per pair."""
        return self.align_links(sources, targets).pharaoh()

    def align(self, sources: Sequence[Sequence[str]], targets: Sequence[Sequence[str]]) -> list[PairAlignment]:
        """One :class:`PairAlignment` per pair; a pair with an empty side gets empty alignments."""
        links = self.align_links(sources, targets)
        forward, reverse, symmetrized = links.per_pair(0), links.per_pair(1), links.per_pair(2)
        return [PairAlignment(f, r, set(s)) for f, r, s in zip(forward, reverse, symmetrized)]

    def _ids(self, sentences: Sequence[Sequence[str]]) -> tuple[np.ndarray, np.ndarray]:
        lengths = np.fromiter(map(len, sentences), np.int64, len(sentences))
        start = np.zeros(len(sentences) + 1, np.int64)
        np.cumsum(lengths, out=start[1:])
        ids = np.fromiter(map(self._union_ids.get, chain.from_iterable(sentences), repeat(UNKNOWN_ID)), np.int64, int(start[-1]))
        return ids, start


def align_reference(parameters: FastAlignParameters, sources: Sequence[Sequence[str]], targets: Sequence[Sequence[str]],
                    symmetrization: str = "grow-diag-final-and", tension_override: float | None = None) -> list[PairAlignment]:
    """The NumPy reference of :meth:`BidirectionalAligner.align` (vectorized decoder, Python symmetrization)."""
    if len(sources) != len(targets):
        raise ValueError(f"sources has {len(sources)} sentences but targets has {len(targets)}")
    forward_model, reverse_model = _directions(parameters, symmetrization, tension_override)
    sources = [[fast_align_token(t) for t in s] for s in sources]
    targets = [[fast_align_token(t) for t in s] for s in targets]
    forward = decode_directional(forward_model, to_ids(forward_model.table, sources), to_ids(forward_model.table, targets))
    reverse = decode_directional(reverse_model, to_ids(reverse_model.table, targets), to_ids(reverse_model.table, sources))
    out = []
    for fwd, rev in zip(forward, reverse):
        rev = flip(rev)
        out.append(PairAlignment(sorted(fwd, key=target_first), sorted(rev), symmetrize(fwd, rev, symmetrization)))
    return out
