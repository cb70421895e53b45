"""The recipe's results table: for every evaluating stage, the mean ± std over the recipe's seeds of the model it
produced, beside the base of the first evaluating stage and any comparison encoders (pure functions).

Each evaluating stage's summary holds ``evaluation``: rows ``{task, language, metric, base, tuned}`` (means over
evaluation seeds, see :func:`interlingua.workflows.pack_eval.card_rows`); the stage's column is its ``tuned``
value, aggregated over the recipe's training seeds.
"""

from __future__ import annotations

import statistics
from typing import Any

Row = tuple[str, str, str]


def stage_columns(evaluations: dict[str, list[list[dict[str, Any]]]]) -> dict[str, dict[Row, list[float]]]:
    """``{stage: [rows of seed 1, rows of seed 2, ...]}`` -> ``{column: {(task, language, metric): values}}`` with
    a ``base`` column (the first stage's base values) and one column per stage (its tuned values)."""
    columns: dict[str, dict[Row, list[float]]] = {}
    for i, (stage, per_seed) in enumerate(evaluations.items()):
        for rows in per_seed:
            for row in rows:
                key = (row["task"], row["language"], row["metric"])
                if i == 0 and row.get("base") is not None:
                    columns.setdefault("base", {}).setdefault(key, []).append(float(row["base"]))
                if row.get("tuned") is not None:
                    columns.setdefault(stage, {}).setdefault(key, []).append(float(row["tuned"]))
    return columns


def results_table(columns: dict[str, dict[Row, list[float]]], digits: int = 2) -> tuple[str, list[dict[str, Any]]]:
    """A Markdown table (one row per task, one column per entry: mean ± std over its values; a single value has
    no ± part) and the same as JSON rows ``{task, language, metric, COLUMN: {mean, std, n}}``."""
    keys = list(dict.fromkeys(key for values in columns.values() for key in values))
    names = list(columns)
    lines = ["| task | language | metric | " + " | ".join(names) + " |",
             "|---|---|---|" + "---:|" * len(names)]
    document = []
    for key in keys:
        cells, entry = [], {"task": key[0], "language": key[1], "metric": key[2]}
        for name in names:
            values = columns[name].get(key)
            if not values:
                cells.append("-")
                continue
            mean = statistics.fmean(values)
            std = statistics.pstdev(values) if len(values) > 1 else 0.0
            entry[name] = {"mean": round(mean, digits), "std": round(std, digits), "n": len(values)}
            cells.append(f"{mean:.{digits}f} ± {std:.{digits}f}" if len(values) > 1 else f"{mean:.{digits}f}")
        lines.append(f"| {key[0]} | {key[1]} | {key[2]} | " + " | ".join(cells) + " |")
        document.append(entry)
    return "\n".join(lines), document
