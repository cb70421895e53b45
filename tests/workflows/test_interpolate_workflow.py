"""``interlingua run interpolate`` over two plain Hugging Face folders: the result is a sentence-transformers folder
the registry logs, and a combined encoder (not its first part) or a composed one (base + meaning head) is refused
before an MLflow run exists."""

from __future__ import annotations

import json

import numpy as np
import pytest
from tiny_models import SENTENCES, build_tiny_bert


@pytest.fixture()
def state(tmp_path, monkeypatch):
    monkeypatch.setenv("INTERLINGUA_HOME", str(tmp_path / "state"))
    monkeypatch.setenv("MLFLOW_TRACKING_URI", f"sqlite:///{tmp_path / 'mlflow.db'}")
    monkeypatch.delenv("RAY_ADDRESS", raising=False)
    monkeypatch.chdir(tmp_path)
    yield tmp_path
    import mlflow

    mlflow.set_tracking_uri(None)
    mlflow.set_registry_uri(None)


def test_two_plain_hugging_face_folders_interpolate_and_register(state, capfd):
    from interlingua.models.load import load_encoder
    from interlingua.workflows.cli import main

    first, second = build_tiny_bert(state / "bert", seed=1), build_tiny_bert(state / "bert2", seed=2)
    code = main(["run", "interpolate", "--set", f"first={first}", "--set", f"second={second}",
                 "--set", "evaluate=false"])
    out, err = capfd.readouterr()
    assert code == 0, err
    summary = json.loads(out[out.index("{"):])
    folder = state / "state" / "interpolate" / summary["run_id"] / "encoder"
    assert summary["encoder_dir"] == str(folder) and (folder / "modules.json").is_file()
    assert summary["model"] == "models:/interlingua-interpolated/1"
    np.testing.assert_allclose(load_encoder(summary["model"], cache_dir=state / "cache").encode(SENTENCES),
                               load_encoder(str(folder)).encode(SENTENCES), rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("kind", ["combined", "composed"])
@pytest.mark.parametrize("side", ["first", "second"])
def test_a_combined_or_composed_encoder_is_refused_before_the_run(state, side, kind, monkeypatch, capfd):
    import mlflow

    from interlingua.core import runtime
    from interlingua.models.combined import CombinedEncoder
    from interlingua.models.sentence_encoder import SentenceEncoder
    from interlingua.workflows.cli import main

    monkeypatch.setattr(runtime, "configure_mlflow", lambda *a, **k: pytest.fail("MLflow configured"))
    monkeypatch.setattr(mlflow, "start_run", lambda *a, **k: pytest.fail("MLflow run started"))
    bert = build_tiny_bert(state / "bert", seed=1)
    part = SentenceEncoder.from_folder(bert)
    if kind == "combined":
        refused, what = CombinedEncoder(part, part, "concat").save(state / "both"), "a combination of two encoders"
    else:  # a meaning head over the transformer: its head would be dropped (first) or kept unmixed (second)
        from tiny_models import HIDDEN_SIZE

        from interlingua.models.meaning_head import MeaningHead, save_composed

        part.save(state / "base")
        refused = save_composed(MeaningHead(HIDDEN_SIZE, 8, "tanh"), state / "composed", base_folder=state / "base")
        what = "a composed encoder (base + meaning head)"
    other = "second" if side == "first" else "first"
    code = main(["run", "interpolate", "--set", f"{side}={refused}", "--set", f"{other}={bert}",
                 "--set", "evaluate=false"])
    _, err = capfd.readouterr()
    assert code == 2
    [line] = [l for l in err.splitlines() if what in l]
    assert f"{side}: {refused} is {what}" in line
    assert not (state / "state" / "interpolate").exists()
