"""Word retrieval inside ``run train`` end to end on a tiny BERT (slow): a bitext corpus with first-subword pairs
written here, explicit alignment (linear map, layer 1) on 2 Ray Train workers through the CLI, the before/after
numbers against a reference computed by hand (hidden states one sentence at a time, W applied in numpy), the
MLflow metrics and artifact, the evaluation row; and the training dataset the engine gets holds none of the
held-out rows."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pyarrow as pa
import pytest

from tiny_models import EN_ES_PAIRS, build_tiny_bert

pytestmark = pytest.mark.slow

COPIES = 4
MARKS = [".", ",", "?", "!"]
HELDOUT = 8


def _corpus(state: Path, model: Path) -> str:
    from transformers import AutoTokenizer

    from interlingua.operators.align.word_pairs import first_subword_positions
    from interlingua.operators.corpus.store import CorpusStore

    tokenizer = AutoTokenizer.from_pretrained(str(model))
    rows = {"id": [], "src": [], "tgt": [], "src_lang": [], "tgt_lang": [], "src_tokens": [], "tgt_tokens": [],
            "subword_pairs": []}
    for copy in range(COPIES):
        for k, (source, target) in enumerate(EN_ES_PAIRS):
            # each copy ends with its own mark, so no two rows share a context (no ties in the nearest neighbours)
            src, tgt = source.split(), target.split()
            sp, tp = first_subword_positions(tokenizer, src), first_subword_positions(tokenizer, tgt)
            src, tgt = src + [MARKS[copy]], tgt + [MARKS[copy]]
            rows["id"].append(f"r{copy}-{k}")
            rows["src"].append(" ".join(src))
            rows["tgt"].append(" ".join(tgt))
            rows["src_lang"].append("en")
            rows["tgt_lang"].append("es")
            rows["src_tokens"].append(src)
            rows["tgt_tokens"].append(tgt)
            rows["subword_pairs"].append([[sp[i], tp[i]] for i in range(min(len(sp), len(tp)))])  # one-to-one
    store = CorpusStore(str(state / "corpus"))
    writer = store.open_version("tiny-aligned", {"test": 1}, ["memory://tiny"])
    table = pa.table({**{c: rows[c] for c in ("id", "src", "tgt", "src_lang", "tgt_lang")},
                      "src_tokens": pa.array(rows["src_tokens"], pa.list_(pa.string())),
                      "tgt_tokens": pa.array(rows["tgt_tokens"], pa.list_(pa.string())),
                      "subword_pairs": pa.array(rows["subword_pairs"], pa.list_(pa.list_(pa.int32())))})
    writer.write_shard("shard-00000", table)
    return writer.publish().version


def _reference(model: Path, rows: list[dict], layer: int, weight: np.ndarray | None) -> float:
    """Word retrieval by hand: one sentence at a time, hidden states of ``layer``, target vectors times Wᵀ (the map
    into the source space), cosine argmax in numpy."""
    import torch
    from transformers import AutoTokenizer, BertModel

    tokenizer = AutoTokenizer.from_pretrained(str(model))
    bert = BertModel.from_pretrained(str(model)).eval()
    sources, targets = [], []
    with torch.no_grad():
        for row in rows:
            hidden = [bert(**tokenizer(words, is_split_into_words=True, return_tensors="pt"),
                           output_hidden_states=True).hidden_states[layer][0].numpy()
                      for words in (row["src_tokens"], row["tgt_tokens"])]
            for i, j in row["subword_pairs"]:
                sources.append(hidden[0][i])
                targets.append(hidden[1][j])
    s, t = np.array(sources), np.array(targets)
    if weight is not None:
        t = t @ weight.T
    s /= np.linalg.norm(s, axis=1, keepdims=True)
    t /= np.linalg.norm(t, axis=1, keepdims=True)
    return 100.0 * float(np.mean(np.argmax(s @ t.T, axis=1) == np.arange(len(s))))


def test_train_reports_word_retrieval_before_and_after_on_heldout_rows(tmp_path):
    from mlflow.tracking import MlflowClient

    from interlingua.operators.corpus.store import CorpusStore

    state = tmp_path / "state"
    model = build_tiny_bert(tmp_path / "tiny_bert")
    version = _corpus(state, model)
    env = {k: v for k, v in os.environ.items() if k not in ("MLFLOW_TRACKING_URI", "RAY_ADDRESS", "MLFLOW_RUN_ID")}
    env.update(INTERLINGUA_HOME=str(state), RAY_DEDUP_LOGS="1", PYTHONUNBUFFERED="1")
    args = ["run", "train", "--set", "corpus=tiny-aligned", "--set", f"model={model}", "--set", "evaluate=false",
            "--set", "exclude_pack=false", "--set", f"word_retrieval_rows={HELDOUT}", "--set", "word_retrieval_seed=3",
            "--set", "registered_model=tiny-aligned", "--set", "train.objective=explicit_alignment",
            "--set", "train.method=linear", "--set", "train.align_layer=1", "--set", "train.max_steps=3",
            "--set", "train.batch_size=4", "--set", "train.max_length=16", "--set", "train.lr=0.05",
            "--set", "train.warmup_steps=0"]
    proc = subprocess.run([sys.executable, "-m", "interlingua.workflows.cli", *args], cwd=tmp_path, env=env,
                          capture_output=True, text=True, timeout=900)
    assert proc.returncode == 0, proc.stdout[-4000:] + proc.stderr[-4000:]
    out = proc.stdout
    summary = json.loads(out[out.rindex("\n{\n") + 1:])
    assert f"word retrieval (Wu & Dredze), {HELDOUT} held-out rows, layer 1" in out
    assert summary["rows"] == {"corpus": COPIES * len(EN_ES_PAIRS), "excluded_pack": 0,
                               "heldout_word_retrieval": HELDOUT, "rows": COPIES * len(EN_ES_PAIRS) - HELDOUT}

    document = json.loads((state / "train" / summary["run_id"] / "evaluation" / "word_retrieval.json").read_text())
    ids = document.pop("ids")
    assert document == summary["word_retrieval"] and len(ids) == HELDOUT
    table = CorpusStore(str(state / "corpus")).read_table("tiny-aligned", version).to_pylist()
    heldout = [row for row in table if row["id"] in set(ids)]
    assert len(heldout) == HELDOUT
    # the linear method leaves the encoder as it was and maps the target vectors with the learned W
    with np.load(Path(summary["encoder_dir"]).parent / "alignment_mapping.npz", allow_pickle=False) as saved:
        weight, layer = saved["weight"], int(saved["layer"])
    assert layer == 1 and not np.allclose(weight, np.eye(32))
    base = _reference(model, heldout, 1, None)
    tuned = _reference(model, heldout, 1, weight)
    assert document["base"]["accuracy"] == pytest.approx(base, abs=1e-3)
    assert document["tuned"]["accuracy"] == pytest.approx(tuned, abs=1e-3)
    assert document["tuned"]["pairs"] == sum(len(r["subword_pairs"]) for r in heldout)
    [row] = summary["evaluation"]  # evaluate=false: the word-retrieval row only
    assert (row["task"], row["language"], row["metric"]) == ("word_retrieval", "en-es", "accuracy")
    assert row["base"] == pytest.approx(base, abs=0.006) and row["tuned"] == pytest.approx(tuned, abs=0.006)

    store = f"sqlite:///{state / 'mlflow.db'}"
    client = MlflowClient(tracking_uri=store, registry_uri=store)
    metrics = client.get_run(summary["run_id"]).data.metrics
    assert metrics["word_retrieval_base"] == pytest.approx(base, abs=1e-3)
    assert metrics["word_retrieval_tuned"] == pytest.approx(tuned, abs=1e-3)
    assert "evaluation/word_retrieval.json" in {a.path for a in client.list_artifacts(summary["run_id"], "evaluation")}


def test_the_training_dataset_holds_none_of_the_heldout_rows(tmp_path, ray_local):
    from interlingua.operators.corpus.store import CorpusStore
    from interlingua.workflows import word_retrieval_check as words
    from interlingua.workflows.train import TrainWorkflowConfig, _dataset, check_columns

    state = tmp_path / "state"
    version = _corpus(state, build_tiny_bert(tmp_path / "tiny_bert"))
    store = CorpusStore(str(state / "corpus"))
    manifest = store.manifest("tiny-aligned", version)
    config = TrainWorkflowConfig(corpus="tiny-aligned", word_retrieval_rows=HELDOUT, exclude_pack=False,
                                 train={"batch_size": 4})
    heldout = words.select_heldout(store, manifest, HELDOUT, 0, words.word_columns(config.train, {}))
    dataset, counts = _dataset(store, manifest, check_columns(config, manifest), config.train, config, None,
                               heldout["id"])
    trained = dataset.take_all()
    text_of = {row["id"]: row["src"] for row in store.read_table("tiny-aligned", version).to_pylist()}
    assert len(trained) == counts["rows"] == COPIES * len(EN_ES_PAIRS) - HELDOUT
    assert {row["src"] for row in trained} == set(text_of.values()) - {text_of[i] for i in heldout["id"]}
    assert counts["heldout_word_retrieval"] == HELDOUT and counts["excluded_pack"] == 0
