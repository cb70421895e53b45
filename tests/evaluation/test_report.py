"""Summary table formatting and MLflow logging of measurements."""

import pytest

from interlingua.evaluation.report.mlflow_log import log_to_mlflow, metric_key
from interlingua.evaluation.report.summary import format_table, summarize
from interlingua.evaluation.tasks.records import Measurement


def _measurements():
    rows = []
    for seed, (a, b) in zip((1, 2, 3), ((70.0, 60.0), (72.0, 61.0), (74.0, 62.0))):
        rows.append(Measurement("enc-a", "bible_retrieval", "en-es", "accuracy", seed, a, primary=True))
        rows.append(Measurement("enc-b", "bible_retrieval", "en-es", "accuracy", seed, b, primary=True))
        rows.append(Measurement("enc-a", "bible_retrieval", "en-es", "accuracy_src2tgt", seed, a + 1))
    return rows


def test_table_shows_mean_and_population_std_per_model():
    table = format_table(_measurements())
    lines = table.splitlines()
    assert lines[0].split() == ["task", "language", "metric", "enc-a", "enc-b"]
    assert len(lines) == 3  # header, rule, one primary row (secondary metrics stay in the JSON)
    assert "72.00 ± 1.63" in lines[2] and "61.00 ± 0.82" in lines[2]
    summary = summarize(_measurements())
    assert summary[("enc-a", "bible_retrieval", "en-es", "accuracy_src2tgt")].mean == pytest.approx(73.0)


def test_metric_key_is_mlflow_safe():
    assert metric_key("eval", "norm_concat(a|b)", "x") == "eval/norm_concat_a_b_/x"


def test_log_to_mlflow_writes_metrics_and_artifacts(tmp_path, monkeypatch):
    import mlflow

    monkeypatch.setenv("MLFLOW_TRACKING_URI", f"sqlite:///{tmp_path / 'mlflow.db'}")
    mlflow.set_tracking_uri(f"sqlite:///{tmp_path / 'mlflow.db'}")
    experiment = mlflow.create_experiment("eval-test", artifact_location=str(tmp_path / "artifacts"))
    run = mlflow.MlflowClient().create_run(experiment)
    artifact = tmp_path / "results.txt"
    artifact.write_text("table\n")
    log_to_mlflow(run.info.run_id, _measurements(), [artifact])
    metrics = mlflow.MlflowClient().get_run(run.info.run_id).data.metrics
    assert metrics["eval/enc-a/bible_retrieval/en-es/accuracy"] == pytest.approx(72.0)
    assert metrics["eval/enc-b/bible_retrieval/en-es/accuracy_std"] == pytest.approx((2 / 3) ** 0.5)
    assert [f.path for f in mlflow.MlflowClient().list_artifacts(run.info.run_id, "evaluation")] == ["evaluation/results.txt"]
