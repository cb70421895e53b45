"""Grouped horizontal bar chart of the primary metrics (mean with std error bars), one bar per model.

One group per (task, language) from top to bottom, so the chart stays readable with many tasks."""

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
    group, height = np.arange(len(rows)), 0.8 / max(len(models), 1)
    fig, ax = plt.subplots(figsize=(8.0, max(3.0, 0.22 * len(rows) * max(len(models), 1) + 1.2)))
    for i, model in enumerate(models):
        stats = [summary.get((model, *row)) for row in rows]
        ax.barh(group + i * height, [s.mean if s else 0.0 for s in stats], height,
                xerr=[s.std if s else 0.0 for s in stats], label=model, capsize=2)
    ax.set_yticks(group + height * (len(models) - 1) / 2, [f"{t} ({lang}, {m})" for t, lang, m in rows], fontsize=7)
    ax.invert_yaxis()  # first task at the top, as in the table
    ax.set_xlabel("score (%)")
    ax.grid(axis="x", alpha=0.3)
    ax.legend(fontsize=7, loc="lower center", bbox_to_anchor=(0.5, 1.0), ncol=min(len(models), 3), frameon=False)
    fig.tight_layout()
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=120)
    plt.close(fig)
    return path
