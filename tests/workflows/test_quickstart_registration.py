"""The quickstart registers its encoder under the model card ``train`` gives, so corpus retention keeps the corpus
version it trained on: it registered without a card, and ``corpus prune bible-en-es --keep 1`` deleted that version
once a newer one existed."""

from __future__ import annotations

from types import SimpleNamespace

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from interlingua.evaluation.splits import bible_heldout_split

IDS = [f"Gen.{c}.{v}" for c in range(1, 11) for v in range(1, 31)]
TABLE = {"bible en-es": {"pairs": 9, "base": 40.0, "tuned": 55.5}}


class _Dataset:
    """What the quickstart does to the corpus's Ray dataset before ``fit`` (patched here): nothing to train on."""

    def random_shuffle(self, seed=None):
        return self

    def materialize(self):
        return self


@pytest.fixture
def quickstart_home(tmp_path, monkeypatch):
    """A state folder with its local MLflow store, no Ray; MLflow's URIs restored afterwards."""
    import mlflow

    from interlingua.core import runtime

    monkeypatch.setenv("INTERLINGUA_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("MLFLOW_TRACKING_URI", "")  # the local store under the state folder; restored after the test
    monkeypatch.setenv(runtime.OWN_TRACKING_URI, "")
    monkeypatch.delenv("RAY_ADDRESS", raising=False)
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(runtime, "init_ray", lambda *a, **k: None)
    yield tmp_path / "home"
    mlflow.set_tracking_uri(None)
    mlflow.set_registry_uri(None)


def test_quickstarts_model_card_keeps_its_corpus_version_from_prune(quickstart_home, tmp_path, monkeypatch):
    from mlflow.tracking import MlflowClient
    from tiny_models import build_tiny_bert

    from interlingua.models.sentence_encoder import SentenceEncoder
    from interlingua.operators.corpus.store import CorpusStore
    from interlingua.trainers.engine import fit
    from interlingua.workflows import quickstart
    from interlingua.workflows.corpus_retention import prune_corpus
    from interlingua.workflows.quickstart import QuickstartConfig

    bert = build_tiny_bert(tmp_path / "bert")
    encoder = tmp_path / "encoder"
    SentenceEncoder.from_folder(bert, max_length=16).save(encoder)
    assert 0 < int(bible_heldout_split(IDS).sum()) < len(IDS)
    bible = tmp_path / "bible.parquet"
    pq.write_table(pa.table({"id": IDS, "en": [f"verse {i}" for i in range(len(IDS))],
                             "es": [f"versiculo {i}" for i in range(len(IDS))]}), bible)
    debian = tmp_path / "debian"
    debian.mkdir()
    trained = []
    monkeypatch.setattr(CorpusStore, "read_ray", lambda self, *a, **k: _Dataset())
    monkeypatch.setattr(fit, "fit", lambda *a, **k: trained.append(a) or SimpleNamespace(
        encoder_dir=str(encoder), metrics={"loss": 0.5}))
    monkeypatch.setattr(quickstart, "_evaluate", lambda *a: TABLE)
    config = QuickstartConfig(model=str(bert), bitext=str(bible), debian_reference_dir=str(debian),
                              registered_model="tiny-quickstart", alias="qs",
                              train={"num_workers": 1, "batch_size": 2, "max_steps": 1, "use_gpu": False})

    quickstart.run(config)

    assert len(trained) == 1
    store = CorpusStore(str(quickstart_home / "corpus"))
    (version,) = store.versions("bible-en-es")
    client = MlflowClient()
    registered = client.get_model_version_by_alias("tiny-quickstart", "qs")
    assert registered.tags["interlingua.corpus_versions"] == f"bible-en-es@{version}"
    assert registered.tags["interlingua.workflow"] == "quickstart"
    assert registered.tags["interlingua.objective"] == "translation_ranking"
    assert registered.tags["interlingua.base_model"] == str(bert)
    assert registered.tags["interlingua.languages"] == "en,es"
    assert "without a model card" not in registered.description
    assert "| bible en-es | retrieval accuracy | 9 | 40.00 | 55.50 | 15.50 |" in registered.description

    newer = store.open_version("bible-en-es", {"newer": 1}, ["x"])
    newer.write_shard("s0", pa.table({"id": ["1"]}))
    newer.publish()
    report = prune_corpus(store, "bible-en-es", keep_last=1, dry_run=True)
    assert "would delete 0 version(s)" in report
    assert f"kept {version}: referenced by a registered model (tiny-quickstart/{registered.version})" in report
