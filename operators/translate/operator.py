"""The translate operator: a Ray Data actor that loads one translator and maps batches through it.

Input batch: a ``text`` column (name configurable). Output: the batch plus ``translation`` and
``lang`` (the target language) columns. A row with empty text, or whose translation comes back
empty, gets a reason in :data:`~interlingua.operators.base.REJECT_REASON`; if the backend raises on a
batch, its rows are translated again by halves (:func:`~interlingua.operators.by_halves.run_by_halves`) and only
the rows that still fail alone are rejected, each with its own error, instead of failing the job.
Resources: GPU backends ask for ``num_gpus`` (fractional by default, 0.5, so the parser can share
the device); Apertium needs none. On a GPU two actors share the device by default (``gpu_concurrency``):
beam search launches many small kernels from Python, so one actor left an H200 busy 28 % of the time while
an OPUS-MT-size Marian streamed a dataset, two 92 % (``benchmarks/gpu_busy``).
"""

from __future__ import annotations

from dataclasses import asdict
from typing import Any, ClassVar

import numpy as np

from interlingua.operators.base import REJECT_REASON, Batch, Operator, reject_column
from interlingua.operators.by_halves import run_by_halves
from interlingua.operators.translate.backend import BackendSpec
from interlingua.operators.translate.factory import make_translator, parse_pair


class TranslateOperator(Operator):
    """Translate ``batch[text_column]`` from the pair's source to its target language."""

    num_cpus: ClassVar[float] = 1.0
    num_gpus: ClassVar[float] = 0.5
    concurrency: ClassVar[int | tuple[int, int]] = 1
    gpu_concurrency: ClassVar[int | tuple[int, int] | None] = 2
    batch_size: ClassVar[int | None] = 256
    name: ClassVar[str] = "translate"

    def __init__(self, pair: str, spec: dict[str, Any] | BackendSpec | None = None, text_column: str = "text"):
        self.source, self.target = parse_pair(pair)
        self.spec = spec if isinstance(spec, BackendSpec) else BackendSpec(**(spec or {}))
        self.text_column = text_column
        self.translator = make_translator(self.spec, pair)

    @staticmethod
    def spec_dict(spec: BackendSpec) -> dict[str, Any]:
        """A spec as plain constructor kwargs (what Ray ships to actors)."""
        return asdict(spec)

    def __call__(self, batch: Batch) -> Batch:
        if self.text_column not in batch:
            raise ValueError(f"text_column {self.text_column!r} not in batch columns {sorted(batch)}")
        texts = [str(t) if t is not None else "" for t in batch[self.text_column]]
        reasons = reject_column(len(texts)) if REJECT_REASON not in batch else np.asarray(batch[REJECT_REASON], dtype=object).copy()
        todo = [i for i, t in enumerate(texts) if t.strip() and not reasons[i]]
        for i, t in enumerate(texts):
            if not t.strip() and not reasons[i]:
                reasons[i] = "translate: empty source text"
        translations = np.full(len(texts), "", dtype=object)
        # a backend failure rejects only the rows that fail alone (retried by halves), it does not kill the job
        outputs, errors = run_by_halves(self.translator.translate, [texts[i] for i in todo])
        for k, i in enumerate(todo):
            if k in errors:
                reasons[i] = f"translate: backend error: {type(errors[k]).__name__}: {errors[k]}"
                continue
            translations[i] = outputs[k]
            if not outputs[k].strip() and not reasons[i]:
                reasons[i] = "translate: empty translation"
        out = dict(batch)
        out["translation"] = translations
        out["lang"] = np.full(len(texts), self.target, dtype=object)
        out[REJECT_REASON] = reasons
        return out
