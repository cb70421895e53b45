"""Reports of evaluation results: summary table, JSON, PNG chart, MLflow logging."""
