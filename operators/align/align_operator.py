"""Ray Data operator: word-align tokenized bitext with parameters learned beforehand (fast_align, or eflomal priors).

fast_align's parameters are global to a corpus, so they are learned once
(:func:`~interlingua.operators.align.fast_align_training.learn_fast_align`) and every actor loads
them from the parameters directory in ``__init__`` (or gets them already read: ``parameters``); shards are then
aligned independently and the output does not depend on how rows are split into batches or actors.

eflomal samples the pairs it aligns together jointly, so its links depend on which pairs those are: it gets
*units* (:func:`pack_units`: one row holding a unit's pairs, e.g. a shard's) through :class:`AlignUnitsOperator`,
never Ray's batches, and the output is again the same on any number of actors.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Hashable
from typing import TYPE_CHECKING, Any, ClassVar

import numpy as np

from interlingua.operators.align.bidirectional_aligner import BidirectionalAligner
from interlingua.operators.align.eflomal_backend import UNIT_PAIRS, EflomalAligner
from interlingua.operators.align.fast_align_training import FastAlignParameters
from interlingua.operators.align.tokens import split_tokens
from interlingua.operators.base import Batch, Operator

if TYPE_CHECKING:
    from ray import ObjectRef


ALIGNERS = ("fast_align", "eflomal")


def load_aligner(parameters_dir: str, aligner: str = "fast_align", symmetrization: str = "grow-diag-final-and",
                 tension_override: float | None = None, unit_pairs: int = UNIT_PAIRS):
    """The aligner whose parameters (fast_align tables, or eflomal priors) are in ``parameters_dir``.

    Both have ``align_pharaoh(sources, targets) -> (forward, reverse, symmetrized)``; eflomal aligns runs of
    ``unit_pairs`` pairs (fast_align's links do not depend on which pairs come together).
    """
    if aligner == "fast_align":
        return BidirectionalAligner(FastAlignParameters.load(parameters_dir), symmetrization, tension_override)
    if aligner == "eflomal":
        return EflomalAligner(parameters_dir, symmetrization, unit_pairs)
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

    def __init__(self, parameters_dir: str | None = None, symmetrization: str = "grow-diag-final-and",
                 tension_override: float | None = None, aligner: str = "fast_align",
                 parameters: FastAlignParameters | ObjectRef | None = None):
        """``parameters_dir``: the folder each actor reads (its files checked against their SHA-256 here); or
        ``parameters``: fast_align's parameters the driver read and checked once (``FastAlignParameters.load``) or
        learned, so no actor reads a file. On Ray, pass an ObjectRef to them (``ray.put`` once on the driver): each
        actor gets them from the object store here (NumPy arrays zero-copy on the driver's node) and the operator Ray
        Data pickles stays small (with the tables in it, ~138 MB unpruned for the whole Bible, Ray warns of a UDF "too
        large")."""
        parameters = _from_object_store(parameters)
        if (parameters_dir is None) == (parameters is None):
            raise ValueError("give parameters_dir or parameters, not both or neither")
        if parameters is not None and aligner != "fast_align":
            raise ValueError(f"parameters are fast_align's; aligner {aligner!r} reads parameters_dir")
        self.aligner = (BidirectionalAligner(parameters, symmetrization, tension_override) if parameters is not None
                        else load_aligner(parameters_dir, aligner, symmetrization, tension_override))

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


def _from_object_store(value):
    """``value``, or what it refers to when it is a Ray ObjectRef (Ray is never imported for it: an ObjectRef only
    exists once Ray is)."""
    ray = sys.modules.get("ray")
    return ray.get(value) if ray is not None and isinstance(value, ray.ObjectRef) else value


class AlignUnitsOperator(Operator):
    """Rows that are units of pairs (:func:`pack_units`): columns ``k`` (each pair's id), ``src_tokens`` and
    ``tgt_tokens`` (as :class:`FastAlignOperator` takes them), one list per unit. Each unit's pairs are aligned
    together, apart from every other unit's (a unit of more than ``unit_pairs`` pairs in runs of ``unit_pairs``), and
    returned one row per pair: ``k``, ``forward``, ``reverse`` and ``alignment``."""

    num_cpus: ClassVar[float] = 1.0
    concurrency: ClassVar[int | tuple[int, int]] = 1
    batch_size: ClassVar[int | None] = 1
    name: ClassVar[str] = "fast_align"

    def __init__(self, parameters_dir: str, symmetrization: str = "grow-diag-final-and", aligner: str = "eflomal",
                 unit_pairs: int = UNIT_PAIRS):
        self.aligner = load_aligner(parameters_dir, aligner, symmetrization, unit_pairs=unit_pairs)

    def __call__(self, batch: Batch) -> Batch:
        out: dict[str, list] = {"k": [], "forward": [], "reverse": [], "alignment": []}
        for keys, sources, targets in zip(batch["k"], batch["src_tokens"], batch["tgt_tokens"]):
            forward, reverse, symmetrized = self.aligner.align_pharaoh([split_tokens(str(t)) for t in sources],
                                                                       [split_tokens(str(t)) for t in targets])
            for column, values in zip(out, (list(keys), forward, reverse, symmetrized)):
                out[column] += values
        return {"k": np.asarray(out["k"], np.int64), **{c: np.array(v, dtype=object) for c, v in out.items() if c != "k"}}


def pack_units(rows: list[dict[str, Any]], unit_of: Callable[[dict[str, Any]], Hashable]) -> list[dict[str, list]]:
    """Rows with ``k``, ``src_tokens`` and ``tgt_tokens`` (in order) as :class:`AlignUnitsOperator`'s units: each run of
    consecutive rows with the same ``unit_of(row)`` is one unit."""
    units: list[dict[str, list]] = []
    last = object()
    for row in rows:
        unit = unit_of(row)
        if not units or unit != last:
            units.append({"k": [], "src_tokens": [], "tgt_tokens": []})
            last = unit
        for column in ("k", "src_tokens", "tgt_tokens"):
            units[-1][column].append(row[column])
    return units
