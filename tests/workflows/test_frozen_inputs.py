"""Inputs of the frozen-encoder workflows: bitext loading and its refusals, config validation, the embed
operator over a spec encoder (no Ray: the operator called directly)."""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from interlingua.core.errors import UserError
from interlingua.workflows.frozen_bitext import BitextSource, check_language_sizes, load_bitext, split_validation


def _parquet(path, src, tgt, **extra):
    pq.write_table(pa.table({"src": src, "tgt": tgt, **extra}), path)
    return str(path)


def test_file_bitext_counts_empty_sides_and_samples_deterministically(tmp_path):
    src = [f"s{i}" for i in range(20)] + [""]
    tgt = [f"t{i}" for i in range(20)] + ["x"]
    path = _parquet(tmp_path / "b.parquet", src, tgt)
    first = load_bitext(BitextSource(file=path, max_pairs=8, data_seed=3), tmp_path)
    again = load_bitext(BitextSource(file=path, max_pairs=8, data_seed=3), tmp_path)
    assert first.src == again.src and len(first) == 8 and first.rejected == {"empty_side": 1}
    assert all(s[1:] == t[1:] for s, t in zip(first.src, first.tgt))
    bigger = load_bitext(BitextSource(file=path, max_pairs=12, data_seed=3), tmp_path)
    assert set(first.src) <= set(bigger.src)  # a smaller sample is part of the larger one: cached vectors reused


def test_bible_heldout_is_excluded_from_any_source_that_asks(tmp_path):
    """The default (null) drops the held-out verses from the default Bible source only; ``true`` drops them from a
    file or corpus too (by its id column: a copy of the Bible asset given as a file must not leak test verses into
    training); ``true`` without an id column is refused, before anything is embedded."""
    from interlingua.evaluation.splits import bible_heldout_split

    ids = [f"Gen.1.{i}" for i in range(1, 101)]
    tested = bible_heldout_split(ids)
    assert 0 < tested.sum() < len(ids)
    path = _parquet(tmp_path / "bible.parquet", [f"s{i}" for i in range(100)], [f"t{i}" for i in range(100)], id=ids)
    kept = load_bitext(BitextSource(file=path, max_pairs=None, exclude_bible_heldout=True), tmp_path)
    assert kept.ids == [i for i, t in zip(ids, tested) if not t]
    assert kept.rejected == {"bible_heldout": int(tested.sum())}
    untouched = load_bitext(BitextSource(file=path, max_pairs=None), tmp_path)  # null: a file is the user's own
    assert untouched.ids == ids and untouched.rejected == {}
    no_ids = _parquet(tmp_path / "plain.parquet", ["a", "b"], ["c", "d"])
    with pytest.raises(UserError, match="exclude_bible_heldout is true but the table has no id column"):
        load_bitext(BitextSource(file=no_ids, exclude_bible_heldout=True), tmp_path)
    assert len(load_bitext(BitextSource(file=no_ids, exclude_bible_heldout=False), tmp_path)) == 2


def test_same_language_sides_are_refused(tmp_path):
    path = _parquet(tmp_path / "b.parquet", ["a", "b"], ["c", "d"], src_lang=["en", "en"], tgt_lang=["es", "en"])
    with pytest.raises(UserError, match="1 pairs have both sides in the same language \\('en', e.g. row 1\\)"):
        load_bitext(BitextSource(file=path), tmp_path)
    with pytest.raises(UserError, match="same language"):
        load_bitext(BitextSource(file=_parquet(tmp_path / "c.parquet", ["a"], ["b"]), src_lang="en", tgt_lang="en"), tmp_path)


def test_tsv_with_a_bad_line_is_named(tmp_path):
    path = tmp_path / "b.tsv"
    path.write_text("a\tb\nc\td\te\n")
    with pytest.raises(UserError, match="line 2 has 3 tab-separated columns"):
        load_bitext(BitextSource(file=str(path)), tmp_path)


def test_validation_split():
    train, val = split_validation(20, 0.1, seed=0)
    assert len(val) == 2 and len(train) == 18 and not set(train) & set(val)


def test_workflow_configs_refuse_bad_values():
    from interlingua.core.config import load_config
    from interlingua.workflows import absent, meaning_head

    with pytest.raises(Exception, match="ablations"):
        load_config(meaning_head.CONFIG, None, ["ablations=[\"recon\"]"])
    with pytest.raises(Exception, match="ratios must lie in"):
        load_config(absent.CONFIG, None, ["ratios=[0.0, 0.5]"])
    with pytest.raises(Exception, match="variants"):
        load_config(absent.CONFIG, None, ["variants=[\"cyclegan\"]"])


def test_embed_operator_takes_any_spec(monkeypatch):
    """``use``-like encoders without batch_size/normalize arguments go through the operator normalized."""
    import interlingua.models.resolve as resolve
    from interlingua.operators.embed import Embed

    class Plain:
        name, dim = "plain", 3

        def encode(self, texts):
            return np.array([[len(t), 1.0, 0.0] for t in texts], dtype=np.float32)

    monkeypatch.setattr(resolve, "_resolve_single", lambda spec: Plain())
    batch = Embed("use")({"text": np.array(["ab", "", "abcd"], dtype=object)})
    expected = np.array([[2, 1, 0], [4, 1, 0]], dtype=np.float32)
    np.testing.assert_allclose(batch["vector"][[0, 2]], expected / np.linalg.norm(expected, axis=1, keepdims=True), rtol=1e-6)
    assert batch["_reject_reason"][1] == "embed: empty or missing text"


def test_meaning_head_refuses_a_language_smaller_than_a_batch():
    langs = ["en"] * 6 + ["es"] * 4 + ["de"] * 2
    with pytest.raises(UserError, match="bitext.parquet: language 'de' has 2 sentences, fewer than a batch \\(train.batch_size=4\\)"):
        check_language_sizes(langs, ["en", "es", "de"], 4, "bitext.parquet")
    check_language_sizes(langs, ["en", "es", "de"], 2, "bitext.parquet")


def _forbid(monkeypatch, tmp_path, *steps):
    """A fresh state folder, and each ``(module, name, what)`` step (plus starting Ray) failing the test if reached."""
    from interlingua.core import runtime

    monkeypatch.setenv("INTERLINGUA_HOME", str(tmp_path / "state"))
    for module, name, what in ((runtime, "init_ray", "Ray started"), *steps):
        monkeypatch.setattr(module, name, lambda *a, _what=what, **k: pytest.fail(_what))


def test_meaning_head_counts_a_languages_sentences_before_embedding(tmp_path, monkeypatch):
    from interlingua.workflows import frozen_embeddings, meaning_head

    _forbid(monkeypatch, tmp_path, (frozen_embeddings, "frozen_encoder", "encoder loaded"),
            (meaning_head, "_pack_tasks", "pack read"))
    path = _parquet(tmp_path / "b.parquet", [f"s{i}" for i in range(12)], [f"t{i}" for i in range(12)],
                    src_lang=["en"] * 12, tgt_lang=["es"] * 10 + ["de"] * 2)
    config = meaning_head.MeaningHeadConfig(model="use", register_model=False, bitext={"file": path},
                                            train={"batch_size": 8})
    with pytest.raises(UserError, match=f"^{path}: language 'de' has 2 sentences left for training .*, fewer than a "
                                        "batch \\(train.batch_size=8\\)"):
        meaning_head.run(config)


def test_meaning_head_counts_the_training_split_before_embedding(tmp_path, monkeypatch):
    """The 10 % validation split leaves 18 of 20 pairs for training: a batch of 19 is refused before the encoder
    loads (it passed this check and died in the train stage after everything was embedded), naming the largest
    batch that fits; 18 passes the check."""
    from interlingua.workflows import frozen_embeddings, meaning_head

    _forbid(monkeypatch, tmp_path, (frozen_embeddings, "frozen_encoder", "encoder loaded"),
            (meaning_head, "_pack_tasks", "pack read"))
    path = _parquet(tmp_path / "b.parquet", [f"s{i}" for i in range(20)], [f"t{i}" for i in range(20)])
    config = meaning_head.MeaningHeadConfig(model="use", register_model=False, bitext={"file": path, "max_pairs": None},
                                            train={"batch_size": 19})
    with pytest.raises(UserError, match=f"^{path}: language 'en' has 18 sentences left for training "
                                        "\\(train.validation_fraction=0.1 held out\\), fewer than a batch "
                                        "\\(train.batch_size=19\\); lower train.batch_size to at most 18"):
        meaning_head.run(config)
    meaning_head.check_training_split(["en"] * 20, ["es"] * 20, ["en", "es"],
                                      config.model_copy(update={"train": config.train.model_copy(update={"batch_size": 18})}),
                                      path)


def test_non_finite_embeddings_are_counted_rows():
    from interlingua.workflows.frozen_embeddings import finite_rows

    a = np.ones((4, 2))
    b = np.ones((4, 2))
    a[1, 0], b[3, 1] = np.nan, np.inf
    assert finite_rows(a, b).tolist() == [True, False, True, False]


def test_meaning_head_over_use_is_logged_as_run_artifacts_not_registered(tmp_path, monkeypatch):
    """The sentence_transformers flavor cannot serve USE + head: the composed folder goes to the run's
    artifacts, nothing is registered, and ``load_encoder('runs:/…/encoder')`` gives the trained head back."""
    import mlflow
    import torch
    from mlflow.tracking import MlflowClient

    import interlingua.models.resolve as resolve
    from interlingua.core.runtime import configure_mlflow
    from interlingua.models.load import load_encoder
    from interlingua.trainers.disentangle.model import DisentangleModel
    from interlingua.workflows.meaning_head import MeaningHeadConfig, publish_encoder, registrable

    class FakeUSE:
        name, dim = "fake-use", 6

        def encode(self, texts):
            return np.arange(len(texts) * 6, dtype=np.float32).reshape(len(texts), 6) + 1.0

    monkeypatch.setattr(resolve, "_resolve_single", lambda spec: FakeUSE())
    monkeypatch.setenv("INTERLINGUA_HOME", str(tmp_path / "state"))
    monkeypatch.delenv("MLFLOW_TRACKING_URI", raising=False)
    assert not registrable("use") and registrable("minilm") and registrable("/some/folder")
    torch.manual_seed(0)
    model = DisentangleModel(6, 2)
    configure_mlflow("meaning-head-test", tmp_path / "state")
    with mlflow.start_run() as run:
        pass
    config = MeaningHeadConfig(model="use")
    uri, pinned = publish_encoder("use", model, tmp_path / "out" / "encoder", config, run.info.run_id, None, [])
    assert uri == pinned == f"runs:/{run.info.run_id}/encoder"
    assert MlflowClient().search_registered_models() == []
    loaded = load_encoder(uri, cache_dir=tmp_path / "cache")
    raw = FakeUSE().encode(["a", "b"])
    unit = raw / np.linalg.norm(raw, axis=1, keepdims=True)
    expected = unit @ model.meaning.linear.weight.detach().numpy().T + model.meaning.linear.bias.detach().numpy()
    np.testing.assert_allclose(loaded.encode(["a", "b"], normalize=False), expected, atol=1e-5)


def test_absent_centering_subtracts_the_training_mean_then_normalizes():
    from interlingua.workflows.absent import center_unit

    rng = np.random.default_rng(3)
    train, test = rng.normal(size=(20, 4)) + 5.0, rng.normal(size=(7, 4)) + 5.0
    centered_train, centered_test = center_unit(train, test)
    mean = train.mean(axis=0)
    for got, raw in ((centered_train, train), (centered_test, test)):
        shifted = raw - mean
        np.testing.assert_allclose(got, shifted / np.linalg.norm(shifted, axis=1, keepdims=True), rtol=1e-5)
        np.testing.assert_allclose(np.linalg.norm(got, axis=1), 1.0, rtol=1e-5)
    # the common direction is gone: mean cosine between training rows drops from ~1 to ~0
    assert np.mean(centered_train @ centered_train.T) < 0.1 < np.mean((train / np.linalg.norm(train, axis=1, keepdims=True)) @
                                                                      (train / np.linalg.norm(train, axis=1, keepdims=True)).T)


def test_meaning_head_table_metrics_leave_out_na_cells():
    from interlingua.workflows.meaning_head import table_metrics

    rows = [{"method": "projected to en", "tasks": {"bible_retrieval": {"mean": 57.0, "std": 0.0},
                                                    "debian_retrieval_de": {"mean": None, "std": None}}},
            {"method": "meaning head −language_id", "tasks": {"bible_retrieval": {"mean": 52.5, "std": 0.5}}}]
    metrics = table_metrics(rows)
    assert metrics == {"eval.projected_to_en.bible_retrieval": 57.0, "eval.projected_to_en.bible_retrieval_std": 0.0,
                       "eval.meaning_head_minus-language_id.bible_retrieval": 52.5,
                       "eval.meaning_head_minus-language_id.bible_retrieval_std": 0.5}


def test_absent_counts_a_languages_sentences_before_the_word_vectors(tmp_path, monkeypatch):
    from interlingua.workflows import absent

    _forbid(monkeypatch, tmp_path, (absent, "_sentence_encoder", "word vectors learned"),
            (absent, "_test_pairs", "test pairs read"))
    path = _parquet(tmp_path / "b.parquet", [f"s{i}" for i in range(6)], [f"t{i}" for i in range(6)],
                    src_lang=["en"] * 6, tgt_lang=["es"] * 6)
    config = absent.AbsentConfig(bitext={"file": path}, train={"batch_size": 8})
    with pytest.raises(UserError, match=f"^{path}: language 'en' has 6 sentences, fewer than a batch "
                                        "\\(train.batch_size=8\\)"):
        absent.run(config)
