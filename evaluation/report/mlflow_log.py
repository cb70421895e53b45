"""Log evaluation results into an existing MLflow run: one metric per (model, task, language, metric)
mean and std, plus the JSON/PNG/table files as artifacts under ``evaluation/``."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Sequence

from interlingua.evaluation.report.summary import summarize
from interlingua.evaluation.tasks.records import Measurement

_UNSAFE = re.compile(r"[^A-Za-z0-9_\-./ ]")


def metric_key(*parts: str) -> str:
    """MLflow-safe metric name from parts (characters MLflow rejects become '_')."""
    return _UNSAFE.sub("_", "/".join(parts))


def log_to_mlflow(run_id: str, measurements: Sequence[Measurement], artifacts: Sequence[str | Path]) -> None:
    import mlflow

    client = mlflow.tracking.MlflowClient()
    multi_model = len({m.model for m in measurements}) > 1
    for (model, task, lang, metric), stats in summarize(measurements).items():
        parts = ("eval", model, task, lang, metric) if multi_model else ("eval", task, lang, metric)
        client.log_metric(run_id, metric_key(*parts), stats.mean)
        client.log_metric(run_id, metric_key(*parts[:-1], metric + "_std"), stats.std)
    for artifact in artifacts:
        client.log_artifact(run_id, str(artifact), artifact_path="evaluation")
