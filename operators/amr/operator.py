"""Ray Data operators of the AMR stage: parse (a GPU actor) and linearize (a cheap function).

:class:`ParseOperator` reads ``batch[text_column]`` and adds ``penman`` (the validated graph, one
line), ``parse_raw`` (the model output, kept so rejects can be inspected) and ``parse_beam``; a row
whose output is not a valid graph, or was cut off at the parser's ``max_length`` (``max-length``), gets its reason in
``REJECT_REASON``; if the parser raises on a batch, its rows are
parsed again by halves and only the rows that still fail alone are rejected, each with its own error. It asks for half a GPU by
default so it can share a device with the translator. :func:`linearize_batch` adds ``linearized``
(Cai et al. 2022 rules, :mod:`~interlingua.operators.amr.linearize`) to rows that have a graph.
"""

from __future__ import annotations

from typing import Any, ClassVar

import numpy as np

from interlingua.operators.amr.linearize import linearize
from interlingua.operators.amr.parser import Seq2SeqAmrParser
from interlingua.operators.base import REJECT_REASON, Batch, Operator, reject_column
from interlingua.operators.by_halves import row_reason, run_by_halves


def _reasons(batch: Batch, rows: int) -> np.ndarray:
    if REJECT_REASON in batch:
        return np.asarray(batch[REJECT_REASON], dtype=object).copy()
    return reject_column(rows)


class ParseOperator(Operator):
    """Parse text into PENMAN with a seq2seq AMR parser; invalid graphs become rejects with a reason."""

    num_cpus: ClassVar[float] = 1.0
    num_gpus: ClassVar[float] = 0.5
    concurrency: ClassVar[int | tuple[int, int]] = 1
    batch_size: ClassVar[int | None] = 64
    name: ClassVar[str] = "parse"

    def __init__(self, model: str, text_column: str = "text", parser_kwargs: dict[str, Any] | None = None,
                 parser: Seq2SeqAmrParser | None = None):
        self.text_column = text_column
        self.parser = parser or Seq2SeqAmrParser(model, **(parser_kwargs or {}))

    def __call__(self, batch: Batch) -> Batch:
        if self.text_column not in batch:
            raise ValueError(f"text_column {self.text_column!r} not in batch columns {sorted(batch)}")
        texts = [str(t) if t is not None else "" for t in batch[self.text_column]]
        reasons = _reasons(batch, len(texts))
        graphs = np.full(len(texts), "", dtype=object)
        raw = np.full(len(texts), "", dtype=object)
        beams = np.zeros(len(texts), dtype=np.int64)
        todo = [i for i, t in enumerate(texts) if t.strip() and not reasons[i]]
        for i, t in enumerate(texts):
            if not t.strip() and not reasons[i]:
                reasons[i] = "parse: empty text"
        # a parser failure rejects only the rows that fail alone (retried by halves), it does not kill the job
        results, errors = run_by_halves(self.parser.parse, [texts[i] for i in todo])
        for k, i in enumerate(todo):
            if k in errors:
                reasons[i] = f"parse: {row_reason(errors[k], 'parser error')}"
                continue
            result = results[k]
            graphs[i], raw[i], beams[i] = result.penman, result.raw, result.beam_size
            if result.reason:
                reasons[i] = f"parse: {result.reason}"
        out = dict(batch)
        out.update({"penman": graphs, "parse_raw": raw, "parse_beam": beams, REJECT_REASON: reasons})
        return out


def linearize_batch(batch: Batch, drop_parentheses: bool = False) -> Batch:
    """Add ``linearized`` for every row with a ``penman`` graph and no reject reason."""
    graphs = batch["penman"]
    reasons = _reasons(batch, len(graphs))
    linearized = np.full(len(graphs), "", dtype=object)
    for i, graph in enumerate(graphs):
        if graph and not reasons[i]:
            linearized[i] = linearize(str(graph), drop_parentheses=drop_parentheses)
    out = dict(batch)
    out["linearized"] = linearized
    out[REJECT_REASON] = reasons
    return out
