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


@pytest.fixture()
def http_folder(tmp_path):
    """A local HTTP server over ``tmp_path / "served"`` (it ignores the credentials a URL sends): its base URL."""
    import functools
    import threading
    from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer

    served = tmp_path / "served"
    served.mkdir()
    handler = functools.partial(SimpleHTTPRequestHandler, directory=str(served))
    handler.log_message = lambda *args: None
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield served, server.server_address[1]
    server.shutdown()
    server.server_close()


def test_bitext_corpus_masks_a_password_holding_a_parenthesis_everywhere(state, http_folder, capfd):
    """``http://alice:s3cr3t)@host/src.txt``: the manifest's inputs and config, the dataset card, ``corpus show`` and
    the console hold ``***@host``, not the password (RFC 3986 lets user-info hold ``)``)."""
    from interlingua.workflows.cli import main

    served, port = http_folder
    (served / "src.txt").write_text("the house\nthe small book\nthe old house\n", encoding="utf-8")
    (served / "tgt.txt").write_text("das haus\ndas klein buch\ndas alt haus\n", encoding="utf-8")
    base = f"http://alice:s3cr3t)@127.0.0.1:{port}"
    store = state / "store"
    code = main(["run", "bitext-corpus", "--set", f"source={base}/src.txt", "--set", f"target={base}/tgt.txt",
                 "--set", "src_lang=en", "--set", "tgt_lang=de", "--set", "workers=1", "--set", f"store_root={store}"])
    out, err = capfd.readouterr()
    assert code == 0, err
    assert main(["corpus", "show", "bitext-corpus", "--root", str(store)]) == 0
    shown, shown_err = capfd.readouterr()
    (version,) = [p for p in (store / "bitext-corpus").iterdir() if p.is_dir() and p.name.startswith("v-")]
    manifest = (version / "manifest.json").read_text(encoding="utf-8")
    card = (version / "README.md").read_text(encoding="utf-8")
    for text in (out, err, shown, shown_err, manifest, card):
        assert "s3cr3t" not in text and "alice" not in text
    assert f"http://***@127.0.0.1:{port}/src.txt" in manifest and f"http://***@127.0.0.1:{port}/tgt.txt" in card
