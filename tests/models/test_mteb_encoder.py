"""The MTEB door: encode options, and a real ``mteb.evaluate`` run on an STS task read from local files."""

from __future__ import annotations

import numpy as np
import pytest

from interlingua.models.mteb_encoder import MtebEncoder


class Recorder:
    """A deterministic encoder that records what it was asked to encode."""

    name, dim = "recorder", 3

    def __init__(self):
        self.calls = []

    def encode(self, texts):
        self.calls.append(list(texts))
        return np.array([[len(t), t.count("a") + 1, 2.0] for t in texts], dtype=np.float32)


def test_encode_options_follow_sentence_transformers():
    inner = Recorder()
    model = MtebEncoder(inner, prompts={"query": "q: ", "MyTask": "task: "}, batch_size=2)
    raw = Recorder().encode(["q: a", "q: bb", "q: ccc"])
    out = model.encode(["a", "bb", "ccc"], prompt_name="query", normalize_embeddings=False)
    np.testing.assert_array_equal(out, raw)
    assert inner.calls == [["q: a", "q: bb"], ["q: ccc"]]  # batch_size 2, prompt prepended

    inner.calls.clear()
    unit = model.encode(["a", "bb", "ccc"], batch_size=5, prompt="")
    assert inner.calls == [["a", "bb", "ccc"]]
    np.testing.assert_allclose(np.linalg.norm(unit, axis=1), 1.0, rtol=1e-6)

    import torch

    tensor = model.encode("a", convert_to_tensor=True, normalize_embeddings=False, prompt="")
    assert isinstance(tensor, torch.Tensor) and tensor.shape == (3,)
    with pytest.raises(ValueError, match="prompt_name 'passage' is not one of the prompts"):
        model.encode(["a"], prompt_name="passage")

    class Meta:
        name, type = "MyTask", "STS"

    inner.calls.clear()
    model.encode([{"text": ["x", "y"]}, {"text": ["z"]}], task_metadata=Meta(), hf_split="test", hf_subset="default")
    assert inner.calls == [["task: x", "task: y"], ["task: z"]]  # a DataLoader of batches; the task's prompt

    sims = model.similarity(unit, unit)
    np.testing.assert_allclose(sims.diagonal().numpy(), 1.0, rtol=1e-6)
    np.testing.assert_allclose(model.similarity_pairwise(unit, unit[::-1]).numpy(),
                               (unit * unit[::-1]).sum(1), rtol=1e-5)


def test_normalize_embeddings_false_gives_our_encoders_raw_vectors(tmp_path):
    """Our encoders normalize unless told not to: ``normalize_embeddings=False`` used to still give unit vectors
    (sentence-transformers gives the raw ones)."""
    from tiny_models import build_tiny_bert

    from interlingua.models.sentence_encoder import SentenceEncoder

    encoder = SentenceEncoder.from_folder(build_tiny_bert(tmp_path / "bert"))
    texts = ["the cat sits on the mat", "good morning"]
    raw = MtebEncoder(encoder).encode(texts, normalize_embeddings=False, prompt="")
    np.testing.assert_allclose(raw, encoder.encode(texts, normalize=False), rtol=1e-6)
    assert not np.allclose(np.linalg.norm(raw, axis=1), 1.0)
    unit = MtebEncoder(encoder).encode(texts, prompt="")
    np.testing.assert_allclose(unit, raw / np.linalg.norm(raw, axis=1, keepdims=True), rtol=1e-5, atol=1e-6)


@pytest.fixture
def sts_file(tmp_path):
    import pyarrow as pa
    import pyarrow.parquet as pq

    rows = [("the cat sits on the mat", "el gato se sienta en la alfombra", 4.8),
            ("a dog runs", "el perro corre", 4.5), ("good morning", "buenos dias", 5.0),
            ("the house is big", "la casa es grande", 4.6), ("i see a red book", "the dog is small", 0.4),
            ("we like bread", "la noche es azul", 0.2), ("the cat reads", "the dog reads", 2.5),
            ("water", "agua", 4.9), ("blue mat", "la casa roja", 1.0), ("good night", "buenos dias", 2.0)]
    path = tmp_path / "sts.parquet"
    pq.write_table(pa.table({"sentence1": [r[0] for r in rows], "sentence2": [r[1] for r in rows],
                             "score": [r[2] for r in rows]}), path)
    return path, rows


@pytest.mark.slow
def test_mteb_evaluates_a_registered_style_encoder_on_a_local_sts_task(sts_file, tmp_path, monkeypatch):
    mteb = pytest.importorskip("mteb")
    from datasets import Dataset, DatasetDict
    from mteb.abstasks.sts import AbsTaskSTS
    from mteb.abstasks.task_metadata import TaskMetadata
    from scipy.stats import spearmanr
    from tiny_models import build_tiny_bert

    from interlingua.models.sentence_encoder import SentenceEncoder

    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("HF_DATASETS_OFFLINE", "1")
    path, rows = sts_file

    class LocalSTS(AbsTaskSTS):
        metadata = TaskMetadata(
            name="InterlinguaLocalSTS", type="STS", main_score="cosine_spearman", category="t2t",
            description="en-es sentence pairs from a local parquet file", reference="https://example.org",
            dataset={"path": str(path), "revision": "local"}, eval_splits=["test"], eval_langs=["eng-Latn", "spa-Latn"],
            date=("2026-01-01", "2026-01-01"), dialect=[], domains=[], task_subtypes=[], license="cc-by-4.0",
            annotations_creators="derived", modalities=["text"], sample_creation="found", bibtex_citation="")
        min_score, max_score = 0, 5

        def load_data(self, num_proc=None, **kwargs):
            self.dataset = DatasetDict({"test": Dataset.from_parquet(str(path))})
            self.data_loaded = True

    encoder = SentenceEncoder.from_folder(build_tiny_bert(tmp_path / "bert"))
    result = mteb.evaluate(MtebEncoder(encoder, name="models:/tiny@champion"), LocalSTS(), cache=None,
                           show_progress_bar=False)
    score = result.task_results[0].scores["test"][0]["cosine_spearman"]

    a, b = encoder.encode([r[0] for r in rows]), encoder.encode([r[1] for r in rows])
    expected = spearmanr((a * b).sum(1), [r[2] for r in rows]).statistic
    assert score == pytest.approx(expected, abs=1e-6)
    assert result.model_name == "interlingua/tiny-champion"
