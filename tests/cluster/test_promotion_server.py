"""``interlingua promote`` against a real ``mlflow server`` on 127.0.0.1 (started and stopped here).

Encoders: a tiny random BERT (holder), the same BERT with each Spanish word's embedding set to its English
translation's (so translated sentences embed identically: retrieval accuracy 100), and another random BERT."""

from __future__ import annotations

import json

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from mlflow_services import mlflow_server

pytestmark = pytest.mark.slow

PAIRS = [("cat", "gato"), ("dog", "perro"), ("house", "casa"), ("water", "agua"), ("bread", "pan"),
         ("book", "libro"), ("big", "grande"), ("red", "rojo"), ("blue", "azul"), ("i", "yo"), ("you", "tu"),
         ("we", "nosotros"), ("see", "veo"), ("night", "noche"), ("reads", "lee"), ("runs", "corre")]


def _sentences():
    out = []
    for i, (a_en, a_es) in enumerate(PAIRS):
        for b_en, b_es in PAIRS[i + 1:i + 4]:
            out.append((f"{a_en} {b_en}", f"{a_es} {b_es}"))
    return out


def _aligned_bert(folder, tmp_path):
    """The seed-0 tiny BERT whose Spanish word embeddings are copies of their English translations'."""
    import torch
    from tiny_models import build_tiny_bert, tiny_vocab
    from transformers import BertModel

    base = build_tiny_bert(tmp_path / "aligned-base", seed=0)
    model = BertModel.from_pretrained(base)
    vocab = tiny_vocab()
    with torch.no_grad():
        table = model.embeddings.word_embeddings.weight
        for en, es in PAIRS:
            table[vocab[es]] = table[vocab[en]]
    model.save_pretrained(folder)
    from transformers import AutoTokenizer

    AutoTokenizer.from_pretrained(base).save_pretrained(folder)
    return folder


@pytest.fixture(scope="module")
def pack(tmp_path_factory):
    root = tmp_path_factory.mktemp("pack")
    pairs = _sentences()
    pq.write_table(pa.table({"source": [p[0] for p in pairs], "target": [p[1] for p in pairs]}), root / "toy.parquet")
    # a table with the columns a retrieval task reads but numbers for texts: its check passes, its run fails
    pq.write_table(pa.table({"source": [1, 2], "target": [3, 4]}), root / "numbers.parquet")
    (root / "manifest.json").write_text(json.dumps({"tasks": [
        {"name": "toy_retrieval", "kind": "retrieval", "language": "en-es", "file": "toy.parquet"},
        {"name": "broken_retrieval", "kind": "retrieval", "language": "en-es", "file": "numbers.parquet"},
        {"name": "lost_retrieval", "kind": "retrieval", "language": "en-es", "file": "missing.parquet"}]}))
    return root


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    with mlflow_server(tmp_path_factory.mktemp("mlflow-server")) as uri:
        yield uri


def _cli(*argv):
    from interlingua.workflows.cli import main

    return main(list(argv))


def test_gated_promotion_through_the_cli(server, pack, tmp_path, monkeypatch, capsys):
    import mlflow
    from mlflow.tracking import MlflowClient
    from tiny_models import build_tiny_bert

    from interlingua.cluster.promotion import decide
    from interlingua.core.runtime import configure_mlflow
    from interlingua.evaluation.metrics.retrieval import bitext_retrieval_accuracy
    from interlingua.models.registry import log_and_register_encoder
    from interlingua.models.sentence_encoder import SentenceEncoder

    monkeypatch.setenv("MLFLOW_TRACKING_URI", server)
    monkeypatch.setenv("INTERLINGUA_HOME", str(tmp_path / "state"))
    folders = {
        "random": SentenceEncoder.from_folder(build_tiny_bert(tmp_path / "r0", seed=0)).save(tmp_path / "random"),
        "aligned": SentenceEncoder.from_folder(_aligned_bert(tmp_path / "a0", tmp_path)).save(tmp_path / "aligned"),
        "other": SentenceEncoder.from_folder(build_tiny_bert(tmp_path / "r7", seed=7)).save(tmp_path / "other"),
    }
    pairs = _sentences()
    expected = {}
    for key, folder in folders.items():  # the scores computed here, without the registry
        encoder = SentenceEncoder.from_folder(folder)
        expected[key] = bitext_retrieval_accuracy(encoder.encode([p[0] for p in pairs]),
                                                  encoder.encode([p[1] for p in pairs]))["average"]
    assert expected["aligned"] == 100.0 and expected["random"] < 100.0 and expected["other"] < 100.0

    configure_mlflow("promotion-test")
    with mlflow.start_run() as run:
        pass
    client = MlflowClient()
    try:
        for key in ("random", "aligned", "other"):  # versions 1, 2, 3; the registry call sets a staging alias only
            log_and_register_encoder(str(folders[key]), "enc", "staging", run.info.run_id)
        common = ["--tasks", "toy_retrieval", "--pack", str(pack)]

        # a candidate that does not exist, a task that does not exist, a task the model cannot run
        assert _cli("promote", "models:/enc/9", "--alias", "champion", *common) == 2
        assert "models:/enc/9 does not exist (registered versions of enc: 1, 2, 3)" in capsys.readouterr().err
        assert _cli("promote", "models:/nope/1", "--alias", "champion", *common) == 2
        assert "no registered model named 'nope'" in capsys.readouterr().err
        assert _cli("promote", "models:/enc/1", "--alias", "champion", "--tasks", "nosuch", "--pack", str(pack)) == 2
        assert "task 'nosuch' matches nothing" in capsys.readouterr().err
        assert _cli("promote", "models:/enc/1", "--alias", "champion", "--tasks", "broken_retrieval", "--pack", str(pack)) == 2
        assert "models:/enc/1 cannot run task broken_retrieval (en-es)" in capsys.readouterr().err
        # a task whose table is missing is refused by the pack's check, before any model loads
        assert _cli("promote", "models:/enc/1", "--alias", "champion", "--tasks", "lost_retrieval", "--pack", str(pack)) == 2
        assert "missing.parquet not found (pack task 'lost_retrieval' reads it" in capsys.readouterr().err

        # first promotion: no holder
        assert _cli("promote", "models:/enc/1", "--alias", "champion", *common) == 0
        out = capsys.readouterr().out
        assert "promoted: models:/enc/1 now holds @champion: first promotion: the alias has no holder" in out
        assert client.get_model_version_by_alias("enc", "champion").version == "1"

        # dry run of a better candidate: decision shown, nothing changed or recorded
        assert _cli("promote", "models:/enc/2", "--alias", "champion", "--margin", "0.5", "--dry-run", *common) == 0
        assert "dry run: @champion would move to models:/enc/2" in capsys.readouterr().out
        assert client.get_model_version_by_alias("enc", "champion").version == "1"
        assert not [k for k in client.get_model_version("enc", "2").tags if k.startswith("interlingua.promotion")]

        # the better candidate moves the alias; both scores as computed without the registry
        assert _cli("promote", "models:/enc/2", "--alias", "champion", "--margin", "0.5", *common) == 0
        out = capsys.readouterr().out
        assert f"{expected['aligned']:.2f}" in out and f"{expected['random']:.2f}" in out
        assert client.get_model_version_by_alias("enc", "champion").version == "2"
        tags = client.get_model_version("enc", "2").tags
        assert tags["interlingua.promotion.champion.decision"] == "promoted"
        assert tags["interlingua.promotion.champion.holder"] == "models:/enc/1"
        record = mlflow.artifacts.load_dict(f"runs:/{tags['interlingua.promotion.champion.run_id']}/decision.json")
        assert record["scores"]["models:/enc/2"]["toy_retrieval/en-es"] == pytest.approx(expected["aligned"])
        assert record["scores"]["models:/enc/1"]["toy_retrieval/en-es"] == pytest.approx(expected["random"])
        assert list(record["data_versions"]) == [f"pack:{pack}"] and record["data_versions"][f"pack:{pack}"].startswith("sha256:")
        assert record["git_commit"] and len(record["git_commit"]) == 40

        # a worse candidate is refused and the refusal recorded
        assert _cli("promote", "models:/enc/3", "--alias", "champion", "--margin", "0.5", *common) == 1
        out = capsys.readouterr().out
        assert "not promoted: @champion stays on models:/enc/2" in out
        assert client.get_model_version_by_alias("enc", "champion").version == "2"
        rule = decide({"t": expected["other"]}, {"t": expected["aligned"]}, 0.5)
        assert not rule.promote
        assert client.get_model_version("enc", "3").tags["interlingua.promotion.champion.decision"] == "rejected"
    finally:
        mlflow.set_tracking_uri(None)
        mlflow.set_registry_uri(None)
