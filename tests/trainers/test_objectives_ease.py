"""EASE: loss = weighted sum of the two InfoNCE terms (hand case), entity table/vectors, training."""

from __future__ import annotations

import math
import sys
from pathlib import Path

import numpy as np
import pytest
import torch

sys.path.insert(0, str(Path(__file__).parent))

from contrastive_harness import TinyEncoder, assert_loss_falls, token_batch, train_losses  # noqa: E402

from interlingua.trainers.objectives.ease import EASELoss, EntityEmbeddingTable  # noqa: E402
from interlingua.trainers.objectives.entity_vectors import load_npy_with_ids, load_word2vec_text  # noqa: E402


def test_two_sentences_by_hand():
    tau = 0.5
    sentences = torch.tensor([[1.0, 0.0], [0.0, 1.0]])
    again = torch.tensor([[1.0, 0.0], [0.0, 1.0]])
    entities = torch.tensor([[1.0, 0.0], [1.0, 1.0]])
    negatives = torch.tensor([[0.0, 1.0], [-1.0, 0.0]])
    c = 1 / math.sqrt(2)
    # sentence 1: entities cos 1, c ; negatives 0, -1.  sentence 2: entities 0, c ; negatives 1, 0.
    entity_loss = 0.5 * (
        -math.log(math.exp(1 / tau) / (math.exp(1 / tau) + math.exp(c / tau) + 1 + math.exp(-1 / tau)))
        + -math.log(math.exp(c / tau) / (1 + math.exp(c / tau) + math.exp(1 / tau) + 1))
    )
    simcse_loss = -math.log(math.exp(1 / tau) / (math.exp(1 / tau) + 1))
    loss = EASELoss(entity_temperature=tau, simcse_temperature=tau, simcse_weight=0.3, entity_weight=2.0)
    expected = 2.0 * entity_loss + 0.3 * simcse_loss
    assert loss(sentences, again, entities, negatives).item() == pytest.approx(expected, rel=1e-6)


def test_options_are_validated():
    with pytest.raises(ValueError, match="simcse_weight must be a number >= 0, got -1"):
        EASELoss(simcse_weight=-1)
    with pytest.raises(ValueError, match="entity_temperature must be a number >= 0.0001"):
        EASELoss(entity_temperature=0)
    with pytest.raises(ValueError, match="entities has shape"):
        EASELoss()(torch.randn(2, 3), torch.randn(2, 3), torch.randn(3, 3), torch.randn(2, 3))
    with pytest.raises(ValueError, match="ids must be unique"):
        EntityEmbeddingTable(["Q1", "Q1"], np.zeros((2, 3)), output_dim=4)


def test_entity_vectors_from_word2vec_text_and_npy(tmp_path):
    text = tmp_path / "entities.txt"
    text.write_text("3 2\nQ1 0.5 1.0\nQ2 1 oops\nQ3 2.0\nQ1 9 9\nQ4 -1 0\n", encoding="utf-8")
    loaded = load_word2vec_text(str(text))
    assert loaded.ids == ["Q1", "Q4"]
    np.testing.assert_array_equal(loaded.vectors, np.array([[0.5, 1.0], [-1.0, 0.0]], dtype=np.float32))
    assert [(row.line, row.reason) for row in loaded.rejected] == [
        (3, "non-numeric value"),
        (4, "1 values, expected 2"),
        (5, "repeated id 'Q1'"),
    ]
    np.save(tmp_path / "vectors.npy", np.arange(6, dtype=np.float64).reshape(3, 2))
    (tmp_path / "ids.txt").write_text("Q7\nQ8\nQ7\n", encoding="utf-8")
    from_npy = load_npy_with_ids(str(tmp_path / "vectors.npy"), str(tmp_path / "ids.txt"))
    assert from_npy.ids == ["Q7", "Q8"] and from_npy.vectors.dtype == np.float32
    assert from_npy.rejected[0].reason == "repeated id 'Q7'"


def test_non_finite_entity_vectors_are_rejected_in_every_format(tmp_path):
    """One NaN or infinite row would be a negative for every anchor of its batch and train the batch to NaN: it is
    written aside with its line, as a malformed row is (word2vec text, .npy, and a float64 value beyond float32)."""
    text = tmp_path / "entities.txt"
    text.write_text("4 2\nQ1 0.1 0.2\nQ2 nan 0.3\nQ3 inf -1\nQ4 1e300 0\nQ5 0 1\n", encoding="utf-8")
    loaded = load_word2vec_text(str(text))
    assert loaded.ids == ["Q1", "Q5"] and np.isfinite(loaded.vectors).all()
    assert [(row.line, row.reason) for row in loaded.rejected] == [
        (3, "a value is not finite"), (4, "a value is not finite"), (5, "a value is not finite")]
    np.save(tmp_path / "vectors.npy", np.array([[0.0, 1.0], [np.nan, 0.0], [1e300, 0.0]]))
    (tmp_path / "ids.txt").write_text("Q7\nQ8\nQ9\n", encoding="utf-8")
    from_npy = load_npy_with_ids(str(tmp_path / "vectors.npy"), str(tmp_path / "ids.txt"))
    assert from_npy.ids == ["Q7"]
    assert [(row.line, row.reason) for row in from_npy.rejected] == [(2, "a value is not finite"),
                                                                      (3, "a value is not finite")]


def test_entity_table_starts_from_the_given_vectors():
    vectors = np.random.default_rng(0).normal(size=(3, 4))
    table = EntityEmbeddingTable(["Q1", "Q2", "Q3"], vectors, output_dim=5)
    rows = table.rows(["Q3", "Q1"])
    assert rows.tolist() == [2, 0]
    np.testing.assert_allclose(table.table(rows).detach().numpy(), vectors[[2, 0]], rtol=1e-6)
    assert table(rows).shape == (2, 5)
    with pytest.raises(KeyError, match="1 entity ids not in the table"):
        table.rows(["Q9"])


def test_sentence_encoder_and_entity_table_learn_together():
    torch.manual_seed(0)
    model = TinyEncoder(dropout=0.1)
    entity_ids = [f"Q{i}" for i in range(8)]
    table = EntityEmbeddingTable(entity_ids, np.random.default_rng(1).normal(size=(8, 6)), output_dim=8)
    sentences = token_batch(8, seed=5)
    entity_rows = torch.arange(8)
    negative_rows = (entity_rows + 3) % 8
    objective = EASELoss(entity_temperature=0.1, simcse_temperature=0.1)
    parameters = list(model.parameters()) + list(table.parameters())

    def step_loss():
        return objective(model.encode(sentences), model.encode(sentences), table(entity_rows), table(negative_rows))

    assert_loss_falls(train_losses(parameters, step_loss))
