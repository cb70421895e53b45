"""Align tokenized sentence pairs in both directions with learned fast_align parameters, then symmetrize."""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from dataclasses import dataclass

from interlingua.operators.align.fast_align_decoder import decode_directional, flip, to_ids
from interlingua.operators.align.fast_align_training import FastAlignParameters, fast_align_token
from interlingua.operators.align.pharaoh import Link
from interlingua.operators.align.symmetrize import SYMMETRIZATIONS, symmetrize


@dataclass(frozen=True)
class PairAlignment:
    """Links of one sentence pair, all in (source index, target index) order."""

    forward: list[Link]
    reverse: list[Link]
    symmetrized: set[Link]


class BidirectionalAligner:
    """fast_align forward + reverse Viterbi decoding, then ``symmetrization``.

    ``tension_override`` replaces both learned tensions (``systran_align.Aligner`` decodes with
    fast_align's default 4.0 whatever was learned; pass 4.0 to reproduce it).
    """

    def __init__(self, parameters: FastAlignParameters, symmetrization: str = "grow-diag-final-and", tension_override: float | None = None):
        if symmetrization not in SYMMETRIZATIONS:
            raise ValueError(f"symmetrization {symmetrization!r} is not supported; expected one of {', '.join(SYMMETRIZATIONS)}")
        forward, reverse = parameters.forward, parameters.reverse
        if tension_override is not None:
            forward = dataclasses.replace(forward, tension=tension_override)
            reverse = dataclasses.replace(reverse, tension=tension_override)
        self.forward, self.reverse = forward, reverse
        self.symmetrization = symmetrization

    def align(self, sources: Sequence[Sequence[str]], targets: Sequence[Sequence[str]]) -> list[PairAlignment]:
        """One :class:`PairAlignment` per pair; a pair with an empty side gets empty alignments."""
        if len(sources) != len(targets):
            raise ValueError(f"sources has {len(sources)} sentences but targets has {len(targets)}")
        sources = [[fast_align_token(t) for t in s] for s in sources]
        targets = [[fast_align_token(t) for t in s] for s in targets]
        forward = decode_directional(self.forward, to_ids(self.forward.table, sources), to_ids(self.forward.table, targets))
        reverse = decode_directional(self.reverse, to_ids(self.reverse.table, targets), to_ids(self.reverse.table, sources))
        out = []
        for fwd, rev in zip(forward, reverse):
            rev = flip(rev)
            out.append(PairAlignment(sorted(fwd), sorted(rev), symmetrize(fwd, rev, self.symmetrization)))
        return out
