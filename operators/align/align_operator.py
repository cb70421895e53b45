"""Ray Data operator: word-align tokenized bitext with parameters learned beforehand (fast_align, or eflomal priors).

fast_align's parameters are global to a corpus, so they are learned once
(:func:`~interlingua.operators.align.fast_align_training.learn_fast_align`) and every actor loads
them from the parameters directory in ``__init__``; shards are then aligned independently and the
output does not depend on how rows are split into batches or actors.
"""

from __future__ import annotations

from typing import ClassVar

import numpy as np

from interlingua.operators.align.bidirectional_aligner import BidirectionalAligner
from interlingua.operators.align.fast_align_training import FastAlignParameters
from interlingua.operators.align.tokens import split_tokens
from interlingua.operators.base import Batch, Operator


ALIGNERS = ("fast_align", "eflomal")


def load_aligner(parameters_dir: str, aligner: str = "fast_align", symmetrization: str = "grow-diag-final-and",
                 tension_override: float | None = None):
    """The aligner whose parameters (fast_align tables, or eflomal priors) are in ``parameters_dir``.

    Both have ``align_pharaoh(sources, targets) -> (forward, reverse, symmetrized)``.
    """
    if aligner == "fast_align":
        return BidirectionalAligner(FastAlignParameters.load(parameters_dir), symmetrization, tension_override)
    if aligner == "eflomal":
        from interlingua.operators.align.eflomal_backend import EflomalAligner

        return EflomalAligner(parameters_dir, symmetrization)
    raise ValueError(f"aligner {aligner!r} is not supported; expected one of {', '.join(ALIGNERS)}")


class FastAlignOperator(Operator):
    """Input columns ``src_tokens`` and ``tgt_tokens`` (space-joined tokens, split at spaces and tabs only, as
    fast_align splits them: :func:`~interlingua.operators.align.tokens.split_tokens`).

    Adds ``forward``, ``reverse`` (directional links) and ``alignment`` (symmetrized), all Pharaoh
    strings in source-target order. An empty side gives empty alignments (the row is kept).
    """

    num_cpus: ClassVar[float] = 1.0
    concurrency: ClassVar[int | tuple[int, int]] = 1
    batch_size: ClassVar[int | None] = 2048
    name: ClassVar[str] = "fast_align"

    def __init__(self, parameters_dir: str, symmetrization: str = "grow-diag-final-and", tension_override: float | None = None,
                 aligner: str = "fast_align"):
        self.aligner = load_aligner(parameters_dir, aligner, symmetrization, tension_override)

    def __call__(self, batch: Batch) -> Batch:
        for column in ("src_tokens", "tgt_tokens"):
            if column not in batch:
                raise ValueError(f"column {column!r} is not in the batch; columns are {sorted(batch)}")
        sources = [split_tokens(str(text)) for text in batch["src_tokens"]]
        targets = [split_tokens(str(text)) for text in batch["tgt_tokens"]]
        forward, reverse, symmetrized = self.aligner.align_pharaoh(sources, targets)
        batch["forward"] = np.array(forward, dtype=object)
        batch["reverse"] = np.array(reverse, dtype=object)
        batch["alignment"] = np.array(symmetrized, dtype=object)
        return batch
