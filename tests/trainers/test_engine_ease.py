"""EASE on the engine (fast): config validation, the encoder+objective module's dispatch, entity-id -> row
mapping with unknown entities dropped, the vector loaders' dispatch, and the saved table."""

from __future__ import annotations

import inspect

import numpy as np
import pytest
import torch
from torch import nn

from interlingua.core.config import ConfigError
from interlingua.trainers.engine.config import TrainConfig
from interlingua.trainers.engine.train_module import MODULE_INPUT, TrainModule
from interlingua.trainers.gradcache import cached_step, plain_step
from interlingua.trainers.objectives.base import ObjectiveSetup
from interlingua.trainers.objectives.ease import (
    EASE,
    ENTITY_MODULE,
    EASELoss,
    EntityEmbeddingTable,
    build_entity_table,
    entity_batch,
    first_negative,
    save_entity_table,
)
from interlingua.trainers.objectives.entity_vectors import load_entity_vectors


class _BagEncoder(nn.Module):
    """Text features -> mean of token embeddings (a stand-in for SentenceEncoder), with dropout."""

    def __init__(self, vocab: int = 20, dim: int = 6):
        super().__init__()
        self.embed = nn.Embedding(vocab, dim)
        self.dropout = nn.Dropout(0.1)

    def forward(self, features):
        mask = features["attention_mask"].unsqueeze(-1).float()
        return self.dropout((self.embed(features["input_ids"]) * mask).sum(1) / mask.sum(1))


def _table(dim: int = 6) -> EntityEmbeddingTable:
    torch.manual_seed(0)
    return EntityEmbeddingTable(["Q1", "Q2", "Q3"], torch.randn(3, 4).numpy(), output_dim=dim)


def test_config_ease_requires_entity_vectors():
    with pytest.raises(ConfigError, match="objective 'ease': entity_vectors is required"):
        TrainConfig(objective="ease")
    with pytest.raises(ConfigError, match="entity_vector_ids"):
        TrainConfig(objective="ease", entity_vectors="/x/vectors.npy")
    config = TrainConfig(objective="ease", entity_vectors="/x/vectors.txt")
    assert config.ease_lambda == inspect.signature(EASELoss).parameters["simcse_weight"].default
    TrainConfig(objective="translation_ranking")  # other objectives do not need it


def test_ease_objective_options_and_columns(tmp_path):
    vectors = tmp_path / "v.txt"
    vectors.write_text("Q1 0.1 0.2\nQ2 0.3 0.4\n")
    config = TrainConfig(objective="ease", entity_vectors=str(vectors), temperature=0.1, ease_lambda=0.5,
                         ease_entity_weight=0.01)
    encoder = _BagEncoder()
    encoder.dim = 6
    objective = EASE(config.objective_options, ObjectiveSetup(encoder=encoder, seed=7))
    assert isinstance(objective.criterion, EASELoss)
    assert objective.criterion.simcse_weight == 0.5 and objective.criterion.entity_weight == 0.01
    assert objective.criterion.entity_temperature == objective.criterion.simcse_temperature == 0.1
    assert EASE.columns(config.objective_options) == ("sentence", "entity_id", "hard_negative_ids")
    assert objective.negatives_per_anchor(8) == 15
    # the authors' scripts: τ_e (their ease_temp) apart from the SimCSE term's τ_s, and the +1 own-hard-negative logit
    scripts = TrainConfig(objective="ease", entity_vectors=str(vectors), temperature=0.05, ease_entity_temperature=10,
                          ease_entity_weight=0.01, hard_negative_weight=1)
    criterion = EASE(scripts.objective_options, ObjectiveSetup(encoder=encoder, seed=7)).criterion
    assert (criterion.entity_temperature, criterion.simcse_temperature) == (10.0, 0.05)
    assert (criterion.entity_weight, criterion.simcse_weight, criterion.hard_negative_weight) == (0.01, 1.0, 1.0)
    with pytest.raises(ConfigError, match="ease_entity_temperature"):
        TrainConfig(objective="ease", entity_vectors=str(vectors), ease_entity_temperature=1e-40)


class _TableObjective(nn.Module):
    token_layer = None

    def __init__(self, table):
        super().__init__()
        self.add_module(ENTITY_MODULE, table)


def test_train_module_dispatches_text_to_encoder_and_rows_to_the_objectives_module():
    encoder, table = _BagEncoder().eval(), _table()
    model = TrainModule(encoder, _TableObjective(table))
    text = {"input_ids": torch.tensor([[1, 2, 0], [3, 4, 5]]), "attention_mask": torch.tensor([[1, 1, 0], [1, 1, 1]])}
    torch.testing.assert_close(model(text), encoder(text))
    rows = torch.tensor([2, 0, 0])
    key = ENTITY_MODULE + MODULE_INPUT
    torch.testing.assert_close(model({key: rows}), table(rows))
    assert model({key: rows}).shape == (3, 6)
    with pytest.raises(ValueError, match="a module view holds one"):
        model({key: rows, "attention_mask": rows})
    # the table's parameters are the module's: DeepSpeed trains and all-reduces them with the encoder's
    names = {name for name, _ in model.named_parameters()}
    assert {"objective.entities.table.weight", "objective.entities.transformation.weight",
            "encoder.embed.weight"} <= names


def test_first_negative_takes_the_first_of_a_list():
    assert first_negative(["Q2", "Q3"]) == "Q2"
    assert first_negative(np.array(["Q3", "Q1"], dtype=object)) == "Q3"
    assert first_negative("Q1") == "Q1"
    assert first_negative([]) is None and first_negative(None) is None and first_negative("") is None


def test_entity_batch_maps_rows_and_drops_unknown():
    row_of = {"Q1": 0, "Q2": 1, "Q3": 2}
    mapped = entity_batch(row_of, ["Q1", "Q9", "Q3", "Q2", "Q2"],
                          [["Q2", "Q9"], ["Q1"], np.array(["Q1"]), ["Q8"], []])
    assert mapped.keep == [0, 2]
    assert mapped.entity_rows.tolist() == [0, 2] and mapped.negative_rows.tolist() == [1, 0]
    assert mapped.entity_rows.dtype == torch.long
    assert mapped.unknown == 3  # unknown entity, unknown hard negative, no hard negative
    with pytest.raises(ValueError, match="2 entity ids but 1"):
        entity_batch(row_of, ["Q1", "Q2"], [["Q1"]])


@pytest.mark.parametrize("chunk", [None, 2])
def test_ease_step_through_gradcache_trains_table(chunk):
    """Four views (text, text, entity rows, hard-negative rows) through plain_step / cached_step: same loss,
    the table and the encoder both get gradients; cached equals plain."""
    def run(step, chunk_size):
        torch.manual_seed(1)
        model = TrainModule(_BagEncoder(), _TableObjective(_table()))
        key = ENTITY_MODULE + MODULE_INPUT
        text = {"input_ids": torch.randint(1, 20, (4, 5)), "attention_mask": torch.ones(4, 5, dtype=torch.long)}
        views = [text, text, {key: torch.tensor([0, 1, 2, 0])}, {key: torch.tensor([1, 2, 0, 2])}]
        loss_fn = lambda emb: EASELoss()(*emb)  # noqa: E731
        torch.manual_seed(2)
        loss = step(model, views, loss_fn, chunk_size)
        return loss, {n: p.grad.clone() for n, p in model.named_parameters()}

    loss, grads = run(cached_step if chunk else plain_step, chunk)
    assert torch.isfinite(loss)
    assert grads["objective.entities.table.weight"].abs().sum() > 0 and grads["encoder.embed.weight"].abs().sum() > 0
    if chunk:
        ref_loss, ref = run(plain_step, chunk)  # same chunks, so the same dropout masks
        torch.testing.assert_close(loss, ref_loss)
        for name in ref:
            torch.testing.assert_close(grads[name], ref[name], rtol=1e-5, atol=1e-6)


def test_build_entity_table_from_word2vec_text_is_seeded(tmp_path):
    path = tmp_path / "vectors.txt"
    path.write_text("3 4\nQ1 0.1 0.2 0.3 0.4\nQ2 0.5 0.6 0.7 0.8\nQ3 1 0 0 1\n")
    torch.manual_seed(123)
    a = build_entity_table(str(path), None, output_dim=6, seed=7)
    torch.manual_seed(456)
    b = build_entity_table(str(path), None, output_dim=6, seed=7)
    assert a.row_of == {"Q1": 0, "Q2": 1, "Q3": 2}
    torch.testing.assert_close(a.transformation.weight, b.transformation.weight)  # same on every worker
    np.testing.assert_allclose(a.table.weight.detach().numpy()[2], [1, 0, 0, 1])


def test_load_entity_vectors_formats(tmp_path):
    import pyarrow as pa
    import pyarrow.parquet as pq

    np.save(tmp_path / "v.npy", np.eye(2, dtype=np.float32))
    (tmp_path / "ids.txt").write_text("Q1\nQ2\n")
    assert load_entity_vectors(str(tmp_path / "v.npy"), str(tmp_path / "ids.txt")).ids == ["Q1", "Q2"]
    # the ease-corpus '<name>-entities' version folder: data/<shard>.parquet with entity_id, vector
    data = tmp_path / "corpus-entities" / "v1" / "data"
    data.mkdir(parents=True)
    pq.write_table(pa.table({"entity_id": ["Q1", "Q2", "Q1"], "link_count": [11, 12, 13],
                             "vector": pa.array([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]], pa.list_(pa.float32()))}),
                   data / "entities-00000.parquet")
    loaded = load_entity_vectors(str(tmp_path / "corpus-entities" / "v1"))
    assert loaded.ids == ["Q1", "Q2"] and loaded.vectors.tolist() == [[1, 2], [3, 4]] and len(loaded.rejected) == 1
    assert load_entity_vectors(str(data / "entities-00000.parquet")).ids == ["Q1", "Q2"]
    (tmp_path / "w2v.txt").write_text("Q5 1 2\n")
    assert load_entity_vectors(str(tmp_path / "w2v.txt")).ids == ["Q5"]


def test_save_entity_table(tmp_path):
    table = _table()
    path = save_entity_table(table, tmp_path)
    saved = np.load(path)
    assert saved["ids"].tolist() == ["Q1", "Q2", "Q3"]
    np.testing.assert_allclose(saved["vectors"], table.table.weight.detach().numpy())
    assert saved["transformation_weight"].shape == (6, 4) and saved["transformation_bias"].shape == (6,)
