"""Word retrieval inside ``run train`` (fast, no Ray): the default per objective, the one-line error for a corpus
without word pairs (before Ray or a model starts), the seeded held-out draw (only rows with pairs, independent of
the training config), the held-out ids dropped from the training rows, and the before/after numbers of
``measure`` against word_retrieval_accuracy called directly with the map applied by hand."""

from __future__ import annotations

import json

import numpy as np
import pyarrow as pa
import pytest

from interlingua.core.errors import UserError
from interlingua.operators.corpus.store import CorpusStore
from interlingua.workflows import word_retrieval_check as words
from interlingua.workflows.train import TrainWorkflowConfig, _rename_and_drop

PAIRS = [[[1, 1]], [], [[1, 2], [2, 1]], None, [[3, 3]], [[1, 1]], [[2, 2]], [[1, 3]]]


def _corpus(tmp_path, ids=None, with_pairs=True):
    store = CorpusStore(str(tmp_path / "corpus"))
    writer = store.open_version("tiny-words", {"ids": ids is not None, "pairs": with_pairs}, ["memory://tiny"])
    n = len(PAIRS)
    columns = {"id": ids or [f"r{k}" for k in range(n)], "src": [f"s{k}" for k in range(n)],
               "tgt": [f"t{k}" for k in range(n)]}
    if with_pairs:
        columns |= {"src_tokens": [["a", "b", "c"]] * n, "tgt_tokens": [["x", "y", "z"]] * n}
        columns["subword_pairs"] = pa.array(PAIRS, pa.list_(pa.list_(pa.int32())))
    writer.write_shard("shard-00000", pa.table(columns))
    return store, writer.publish()


def test_on_by_default_for_explicit_alignment_only():
    assert words.wanted_rows(None, "explicit_alignment") == words.DEFAULT_ROWS == 500
    assert words.wanted_rows(None, "translation_ranking") == 0
    assert words.wanted_rows(0, "explicit_alignment") == 0 and words.wanted_rows(7, "translation_ranking") == 7
    assert TrainWorkflowConfig(corpus="x").word_retrieval_rows is None
    with pytest.raises(ValueError, match="word_retrieval_rows"):
        TrainWorkflowConfig(corpus="x", word_retrieval_rows=-1)


def test_a_corpus_without_word_pairs_is_refused_in_one_line_before_ray(tmp_path, monkeypatch):
    from interlingua.workflows import train

    store, manifest = _corpus(tmp_path, with_pairs=False)
    monkeypatch.setenv("INTERLINGUA_HOME", str(tmp_path))
    started = []
    monkeypatch.setattr("interlingua.core.runtime.init_ray", lambda *a, **k: started.append(1))
    config = TrainWorkflowConfig(corpus="tiny-words", word_retrieval_rows=3, evaluate=False, exclude_pack=False,
                                 state_dir=str(tmp_path))
    with pytest.raises(UserError) as err:
        train.run(config)
    message = str(err.value)
    assert "\n" not in message and not started
    assert message.startswith("word_retrieval_rows=3 needs a bitext-corpus version made with subword_tokenizer")
    assert f"tiny-words@{manifest.version} lacks ['src_tokens', 'tgt_tokens', 'subword_pairs']" in message
    assert "set word_retrieval_rows=0" in message


def test_the_objective_column_names_are_the_ones_checked():
    config = TrainWorkflowConfig(corpus="x", train={"objective": "explicit_alignment", "pairs_column": "pairs2"},
                                 columns={"src_tokens": "words_en"})
    assert words.word_columns(config.train, config.columns) == {"src_tokens": "words_en", "tgt_tokens": "tgt_tokens",
                                                                 "pairs": "pairs2"}
    assert words.word_layer(TrainWorkflowConfig(corpus="x", train={"objective": "explicit_alignment",
                                                                   "align_layer": 3}).train) == 3
    assert words.word_layer(TrainWorkflowConfig(corpus="x").train) is None  # other objectives: the last layer


def test_heldout_draw_is_seeded_among_rows_with_pairs(tmp_path):
    store, manifest = _corpus(tmp_path)
    cols = words.word_columns(TrainWorkflowConfig(corpus="x").train, {})
    first = words.select_heldout(store, manifest, 3, 0, cols)
    assert first == words.select_heldout(store, manifest, 3, 0, cols)  # same rows for the same seed
    with_pairs = [f"r{k}" for k, p in enumerate(PAIRS) if p]
    assert len(first["id"]) == 3 and set(first["id"]) <= set(with_pairs)
    # reference drawn another way: the same generator over the positions of the rows with pairs
    expected = sorted(np.random.default_rng(0).choice(len(with_pairs), size=3, replace=False))
    assert first["id"] == [with_pairs[k] for k in expected]
    k = int(first["id"][0][1:])
    assert first["subword_pairs"][0] == PAIRS[k] and first["src_tokens"][0] == ["a", "b", "c"]
    draws = {tuple(words.select_heldout(store, manifest, 3, seed, cols)["id"]) for seed in range(6)}
    assert len(draws) > 1  # the seed matters
    with pytest.raises(UserError, match="word_retrieval_rows=6 leaves nothing to train on: .* has 6 rows with word pairs"):
        words.select_heldout(store, manifest, 6, 0, cols)


def test_duplicate_ids_are_refused(tmp_path):
    store, manifest = _corpus(tmp_path, ids=["a", "a", "b", "c", "d", "e", "f", "g"])
    with pytest.raises(UserError, match="the 'id' column is not unique"):
        words.select_heldout(store, manifest, 2, 0, words.word_columns(TrainWorkflowConfig(corpus="x").train, {}))


def test_heldout_ids_are_dropped_from_the_training_rows():
    table = pa.table({"id": ["1", "2", "3", "4"], "src": ["a", "b", "c", "d"], "tgt": ["w", "x", "y", "z"]})
    out = _rename_and_drop({"src": "src", "tgt": "tgt"}, ["c"], ["src", "tgt"], table, exclude_ids=["2", "4"])
    assert out.column_names == ["src", "tgt"] and out.to_pylist() == [{"src": "a", "tgt": "w"}]
    assert _rename_and_drop({"src": "src"}, [], ["src"], table, exclude_ids=[]).num_rows == 4


def test_measure_and_report_match_word_retrieval_accuracy_with_the_map_by_hand(tmp_path):
    from interlingua.evaluation.tasks.word_retrieval import word_retrieval_accuracy
    from interlingua.models.sentence_encoder import SentenceEncoder
    from interlingua.operators.align.word_pairs import first_subword_positions
    from tiny_models import EN_ES_PAIRS, build_tiny_bert

    encoder = SentenceEncoder.from_folder(build_tiny_bert(tmp_path / "bert"), max_length=16)
    other = SentenceEncoder.from_folder(build_tiny_bert(tmp_path / "bert2", seed=1), max_length=16)
    heldout = {"id": [], "src_tokens": [], "tgt_tokens": [], "subword_pairs": []}
    for k, (source, target) in enumerate(EN_ES_PAIRS):
        src, tgt = source.split(), target.split()
        sp, tp = first_subword_positions(encoder.tokenizer, src), first_subword_positions(encoder.tokenizer, tgt)
        heldout["id"].append(str(k))
        heldout["src_tokens"].append(src)
        heldout["tgt_tokens"].append(tgt)
        heldout["subword_pairs"].append(sorted({(sp[i], tp[min(i, len(tgt) - 1)]) for i in range(len(src))}))
    rotation = np.linalg.qr(np.random.default_rng(0).normal(size=(32, 32)))[0].astype(np.float32)
    np.savez(tmp_path / "alignment_mapping.npz", weight=rotation, layer=np.asarray(1),
             direction=np.asarray("target_to_source"))
    target_map, layer = words.linear_target_map({"alignment_mapping.npz": str(tmp_path / "alignment_mapping.npz")})
    assert layer == 1
    results = words.measure({"base": encoder, "tuned": other}, heldout, layer, {"tuned": target_map})
    assert results["base"]["accuracy"] == pytest.approx(word_retrieval_accuracy(encoder, heldout, layer=1).accuracy, abs=1e-4)
    mapped = word_retrieval_accuracy(other, heldout, layer=1, target_map=lambda v: v @ rotation.T)
    assert results["tuned"]["accuracy"] == pytest.approx(mapped.accuracy, abs=1e-4)
    assert results["tuned"]["pairs"] == sum(len(p) for p in heldout["subword_pairs"])

    document = words.report(results, heldout["id"], layer, 0, "en-es", None, tmp_path / "out")
    assert json.loads((tmp_path / "out" / "word_retrieval.json").read_text()) == {**document, "ids": heldout["id"]}
    assert document["layer"] == 1 and document["rows"] == len(EN_ES_PAIRS)
    row = words.card_row(document)
    assert row["task"] == "word_retrieval" and row["base"] == round(results["base"]["accuracy"], 2)
    assert row["delta"] == pytest.approx(row["tuned"] - row["base"], abs=0.011)
