"""Grouped bar chart of the primary metrics (mean with std error bars), one bar per model."""

from __future__ import annotations

from pathlib import Path
from typing import Sequence

import numpy as np

from interlingua.evaluation.report.summary import summarize
from interlingua.evaluation.tasks.records import Measurement


def write_chart(measurements: Sequence[Measurement], path: str | Path) -> Path:
    """Write a PNG to ``path`` (matplotlib Agg backend, no display needed)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    summary = summarize(measurements)
    models = list(dict.fromkeys(m.model for m in measurements))
    rows = list(dict.fromkeys((m.task, m.language, m.metric) for m in measurements if m.primary))
    if not rows:
        raise ValueError("no primary metric to plot; measurements are empty")
    x, width = np.arange(len(rows)), 0.8 / max(len(models), 1)
    fig, ax = plt.subplots(figsize=(max(6.0, 0.9 * len(rows) * max(len(models), 1)), 4.5))
    for i, model in enumerate(models):
        stats = [summary.get((model, *row)) for row in rows]
        ax.bar(x + i * width, [s.mean if s else 0.0 for s in stats], width, yerr=[s.std if s else 0.0 for s in stats],
               label=model, capsize=2)
    ax.set_xticks(x + width * (len(models) - 1) / 2, [f"{t}\n{lang} {m}" for t, lang, m in rows], rotation=45, ha="right", fontsize=7)
    ax.set_ylabel("score (%)")
    ax.legend(fontsize=7)
    fig.tight_layout()
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=120)
    plt.close(fig)
    return path
