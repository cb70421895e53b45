"""The translate operator: a Ray Data actor that loads one translator and maps batches through it.

Input batch: a ``text`` column (name configurable). Output: the batch plus ``translation`` and
``lang`` (the target language) columns. A row with empty text, or whose translation comes back
empty, gets a reason in :data:`~interlingua.operators.base.REJECT_REASON`; if the backend raises on a
batch, its rows are translated again by halves (:func:`~interlingua.operators.by_halves.run_by_halves`) and only
the rows that still fail alone are rejected, each with its own error, instead of failing the job. A source longer
than the model's positions is rejected as ``translate: source has K tokens > N`` (never cut); a translation that
stopped at ``max_length`` without an end token is kept and flagged in ``translation_at_max_length``.
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
from interlingua.operators.by_halves import row_reason, run_by_halves
from interlingua.operators.translate.backend import BackendSpec
from interlingua.operators.translate.factory import make_translator, parse_pair


#: Column: the translation stopped at ``max_length`` without an end token (kept; the workflow counts these rows).
AT_MAX_LENGTH = "translation_at_max_length"


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

    def _translate(self, sentences: list[str]) -> list[tuple[str, bool]]:
        """(translation, stopped at max_length) per sentence."""
        outputs = self.translator.translate(sentences)
        flags = getattr(self.translator, "at_max_length", None) or [False] * len(outputs)
        return list(zip(outputs, flags))

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
        at_max_length = np.zeros(len(texts), dtype=bool)
        # a backend failure rejects only the rows that fail alone (retried by halves), it does not kill the job
        outputs, errors = run_by_halves(self._translate, [texts[i] for i in todo])
        for k, i in enumerate(todo):
            if k in errors:
                reasons[i] = f"translate: {row_reason(errors[k], 'backend error')}"
                continue
            translations[i], at_max_length[i] = outputs[k]
            if not translations[i].strip() and not reasons[i]:
                reasons[i] = "translate: empty translation"
        out = dict(batch)
        out["translation"] = translations
        out["lang"] = np.full(len(texts), self.target, dtype=object)
        out[AT_MAX_LENGTH] = at_max_length
        out[REJECT_REASON] = reasons
        return out
