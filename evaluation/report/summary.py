"""Aggregate measurements over seeds and print them as one (task, language) x model table."""

from __future__ import annotations

import math
from collections import defaultdict
from typing import Sequence

from interlingua.evaluation.metrics.seeds import SeedSummary, mean_std
from interlingua.evaluation.tasks.records import Measurement


def summarize(measurements: Sequence[Measurement]) -> dict[tuple[str, str, str, str], SeedSummary]:
    """{(model, task, language, metric): mean ± std over seeds}."""
    grouped: dict[tuple[str, str, str, str], list[float]] = defaultdict(list)
    for m in measurements:
        grouped[(m.model, m.task, m.language, m.metric)].append(m.value)
    return {key: mean_std(values) for key, values in grouped.items()}


def format_table(measurements: Sequence[Measurement], digits: int = 2) -> str:
    """Plain-text table of the primary metrics: one row per (task, language, metric), one column per model."""
    summary = summarize(measurements)
    models = list(dict.fromkeys(m.model for m in measurements))
    rows = list(dict.fromkeys((m.task, m.language, m.metric) for m in measurements if m.primary))
    header = ["task", "language", "metric", *models]
    body = [[task, lang, metric, *(summary[(model, task, lang, metric)].format(digits) if (model, task, lang, metric) in summary else "-"
                                  for model in models)] for task, lang, metric in rows]
    widths = [max(len(str(r[i])) for r in [header, *body]) for i in range(len(header))]
    lines = ["  ".join(str(cell).ljust(w) for cell, w in zip(row, widths)).rstrip() for row in [header, *body]]
    lines.insert(1, "  ".join("-" * w for w in widths))
    return "\n".join(lines)


def results_document(measurements: Sequence[Measurement], seeds: Sequence[int], digits: int = 2) -> dict:
    """JSON-ready document: every per-seed value and every (model, task, language, metric) summary. A value that is
    not a finite number (a score that could not be computed) is ``None`` (JSON ``null``; ``NaN`` is not JSON)."""
    summary = summarize(measurements)
    return {
        "seeds": list(seeds),
        "measurements": [{**m.__dict__, "value": _number(m.value)} for m in measurements],
        "summary": [{"model": k[0], "task": k[1], "language": k[2], "metric": k[3], "mean": _number(s.mean),
                     "std": _number(s.std), "n": s.n, "formatted": s.format(digits)} for k, s in summary.items()],
    }


def _number(value: float) -> float | None:
    return float(value) if math.isfinite(value) else None
