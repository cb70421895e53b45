"""A model URI with credentials in it (``https://user:password@host/...``, ``?token=``) is used to load the model,
and is masked everywhere it is recorded or shown: MLflow params and tags, the model card, the console and the log."""

from __future__ import annotations

import pytest

from tiny_models import build_tiny_bert

SECRET_URI = "https://reader:hunter2@models.example.org/enc?token=abc123"


@pytest.fixture()
def state(tmp_path, monkeypatch):
    monkeypatch.setenv("INTERLINGUA_HOME", str(tmp_path / "state"))
    monkeypatch.setenv("MLFLOW_TRACKING_URI", f"sqlite:///{tmp_path / 'mlflow.db'}")
    monkeypatch.chdir(tmp_path)
    yield tmp_path
    import mlflow

    mlflow.set_tracking_uri(None)


def _recorded_text(run_id: str, tmp_path) -> str:
    """Everything MLflow holds for the run (params, tags, artifact files) and the command's log files."""
    from pathlib import Path

    import mlflow
    from mlflow.tracking import MlflowClient

    run = MlflowClient().get_run(run_id)
    text = [str(run.data.params), str(run.data.tags)]
    local = Path(mlflow.artifacts.download_artifacts(run_id=run_id, dst_path=str(tmp_path / "artifacts")))
    text += [p.read_text(encoding="utf-8", errors="replace") for p in local.rglob("*") if p.is_file()
             and p.suffix in (".md", ".json", ".txt", ".yaml")]
    text += [p.read_text(encoding="utf-8", errors="replace") for p in (tmp_path / "state" / "logs").rglob("*.log")]
    return "\n".join(text)


def test_combine_masks_a_credentialed_part_uri_everywhere(state, monkeypatch, capfd):
    import json

    from interlingua.models import load
    from interlingua.models.sentence_encoder import SentenceEncoder
    from interlingua.workflows.cli import main

    folder = build_tiny_bert(state / "tiny", seed=0)
    real_load = load.load_encoder

    def load_encoder(uri, **kwargs):  # the URL stands for a model a user fetches with credentials
        if uri == SECRET_URI:
            encoder = SentenceEncoder.from_folder(folder)
            encoder.name = uri
            return encoder
        return real_load(uri, **kwargs)

    monkeypatch.setattr(load, "load_encoder", load_encoder)
    code = main(["run", "combine", "--set", f"first={SECRET_URI}", "--set", f"second={folder}",
                 "--set", "evaluate=false"])
    out, err = capfd.readouterr()
    assert code == 0, err
    summary = json.loads(out[out.index("{"):])
    recorded = _recorded_text(summary["run_id"], state)
    for text in (out, err, recorded):
        assert "hunter2" not in text and "abc123" not in text
    assert "https://***@models.example.org/enc?token=***" in recorded  # masked, not dropped


def test_interpolate_masks_a_credentialed_model_uri_everywhere(state, monkeypatch, capfd):
    import json

    from interlingua.models import load
    from interlingua.workflows.cli import main

    from interlingua.models.sentence_encoder import SentenceEncoder

    folder = str(SentenceEncoder.from_folder(build_tiny_bert(state / "tiny", seed=0)).save(state / "st"))
    real_resolve = load.resolve_model_folder
    monkeypatch.setattr(load, "resolve_model_folder",
                        lambda uri, cache_dir=None: folder if uri == SECRET_URI else real_resolve(uri, cache_dir))
    code = main(["run", "interpolate", "--set", f"first={SECRET_URI}", "--set", f"second={folder}",
                 "--set", "alpha=0.5", "--set", "evaluate=false"])
    out, err = capfd.readouterr()
    assert code == 0, err
    summary = json.loads(out[out.index("{"):])
    recorded = _recorded_text(summary["run_id"], state)
    written = (state / "state" / "interpolate" / summary["run_id"] / "summary.json").read_text(encoding="utf-8")
    for text in (out, err, recorded, written):
        assert "hunter2" not in text and "abc123" not in text
    assert "https://***@models.example.org/enc?token=***" in recorded
