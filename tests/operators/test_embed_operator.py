"""The ``embed`` operator: vectors equal to the encoder's own, in input order; empty texts rejected."""

from __future__ import annotations

import numpy as np
import pytest

from interlingua.operators.base import REJECT_REASON


@pytest.fixture(scope="module")
def tiny_encoder_dir(tmp_path_factory):
    from tiny_models import build_tiny_bert

    from interlingua.models.sentence_encoder import SentenceEncoder

    hf = build_tiny_bert(tmp_path_factory.mktemp("bert"))
    folder = tmp_path_factory.mktemp("encoder")
    SentenceEncoder.from_folder(hf, pooling="mean", max_length=32).save(folder)
    return folder


TEXTS = ["the cat sits on the mat", "el gato", "", "you like good bread and water in the big red house",
         "a dog", "   ", "buenos dias", "the book"]


def test_embed_matches_encoder_in_input_order(tiny_encoder_dir):
    from interlingua.operators.embed import Embed
    from interlingua.models.sentence_encoder import SentenceEncoder

    op = Embed(str(tiny_encoder_dir), encode_batch_size=3)
    batch = op({"text": np.array(TEXTS, dtype=object), "id": np.arange(len(TEXTS))})

    ok = [i for i, t in enumerate(TEXTS) if t.strip()]
    expected = SentenceEncoder.from_folder(tiny_encoder_dir).encode([TEXTS[i] for i in ok], batch_size=64)
    np.testing.assert_allclose(batch["vector"][ok], expected, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(np.linalg.norm(batch["vector"][ok], axis=1), 1.0, rtol=1e-5)
    assert batch["id"].tolist() == list(range(len(TEXTS)))
    assert [i for i, r in enumerate(batch[REJECT_REASON]) if r] == [2, 5]
    assert batch[REJECT_REASON][2] == "embed: empty or missing text"


def test_embed_names_missing_column(tiny_encoder_dir):
    from interlingua.operators.embed import Embed

    with pytest.raises(KeyError, match="no column 'sentence'"):
        Embed(str(tiny_encoder_dir), text_column="sentence")({"text": np.array(["a"], dtype=object)})


def test_embed_through_runner_on_ray(tiny_encoder_dir):
    import ray

    from interlingua.operators.embed import Embed
    from interlingua.operators.runner import run_operator, split_rejects
    from interlingua.models.sentence_encoder import SentenceEncoder

    ray.init(address="local", num_cpus=2, object_store_memory=200 * 1024**2, include_dashboard=False,
             log_to_driver=False)
    try:
        ds = ray.data.from_items([{"id": i, "text": t} for i, t in enumerate(TEXTS * 5)], override_num_blocks=4)
        out = run_operator(ds, Embed, {"model": str(tiny_encoder_dir)}, batch_size=6)
        kept_rows, rejects = [], []
        for batch in out.iter_batches(batch_size=None, batch_format="numpy"):
            kept, rej = split_rejects(batch, "embed")
            kept_rows += list(zip(kept["id"].tolist(), kept["vector"]))
            rejects += rej
    finally:
        ray.shutdown()
    assert len(kept_rows) == 30 and len(rejects) == 10
    encoder = SentenceEncoder.from_folder(tiny_encoder_dir)
    kept_rows.sort(key=lambda r: r[0])
    expected = encoder.encode([(TEXTS * 5)[i] for i, _ in kept_rows])
    np.testing.assert_allclose(np.stack([v for _, v in kept_rows]), expected, rtol=1e-4, atol=1e-5)


def test_encode_batch_size_defaults_to_the_cpu_size_without_a_gpu(tiny_encoder_dir, monkeypatch):
    import torch

    from interlingua.operators.embed import Embed

    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    assert Embed(str(tiny_encoder_dir)).encode_batch_size == Embed.ENCODE_BATCH_SIZE[0] == 32
    assert Embed(str(tiny_encoder_dir), encode_batch_size=5).encode_batch_size == 5
