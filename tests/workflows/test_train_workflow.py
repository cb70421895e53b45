"""`run train` checks that need no Ray and no model: columns against the objective, EASE's entity-vector
default, and the vectorized exclusion of benchmark-pack sentences."""

from __future__ import annotations

from types import SimpleNamespace

import pyarrow as pa
import pytest

from interlingua.core.errors import UserError
from interlingua.workflows.train import CORPUS_ENTITIES, TrainWorkflowConfig, _rename_and_drop, check_columns

BITEXT = SimpleNamespace(name="bible-en-es", version="v-000000000001",
                         columns={"id": "string", "src": "string", "tgt": "string"})


def test_columns_the_objective_lacks_are_named():
    with pytest.raises(UserError, match=r"bible-en-es@v-000000000001 lacks columns \['sentence', 'entity_id', "
                                        r"'hard_negative_ids'\] that objective 'ease' needs"):
        check_columns(TrainWorkflowConfig(corpus="bible-en-es", train={"objective": "ease"}), BITEXT)
    assert check_columns(TrainWorkflowConfig(corpus="x"), BITEXT) == {"src": "src", "tgt": "tgt"}
    with pytest.raises(UserError, match=r"lacks columns \['neg'\] that objective 'translation_ranking' needs"):
        check_columns(TrainWorkflowConfig(corpus="x", train={"hard_negatives": True}), BITEXT)


def test_a_column_map_feeds_an_objective_from_another_column():
    config = TrainWorkflowConfig(corpus="x", columns={"text": "src"}, train={"objective": "simcse_unsup"})
    assert check_columns(config, BITEXT) == {"text": "src"}
    with pytest.raises(UserError, match=r"lacks columns \['text \(from body\)'\]"):
        check_columns(config.model_copy(update={"columns": {"text": "body"}}), BITEXT)
    with pytest.raises(UserError, match=r"columns \['premise'\] are not read by objective 'simcse_unsup'"):
        check_columns(config.model_copy(update={"columns": {"premise": "src"}}), BITEXT)


def test_ease_defaults_to_the_corpus_entity_vectors_and_keeps_given_ones():
    assert TrainWorkflowConfig(corpus="ease", train={"objective": "ease"}).train.entity_vectors == CORPUS_ENTITIES
    given = TrainWorkflowConfig(corpus="ease", train={"objective": "ease", "entity_vectors": "/w2v.txt",
                                                      "ease_entity_weight": 0.01})
    assert given.train.entity_vectors == "/w2v.txt" and given.train.ease_entity_weight == 0.01


def test_pack_sentences_are_dropped_whitespace_insensitively():
    table = pa.table({"src": ["a  b", "c", None, "x"], "tgt": ["q", "d\te ", "z", "y"], "id": ["1", "2", "3", "4"]})
    out = _rename_and_drop({"text": "src", "other": "tgt"}, ["a b", "d e"], ["src", "tgt"], table)
    assert out.column_names == ["text", "other"]
    assert out.to_pylist() == [{"text": None, "other": "z"}, {"text": "x", "other": "y"}]
    assert _rename_and_drop({"text": "src"}, [], ["src"], table).num_rows == 4
    # a word-aligned row is dropped for its sentence although the objective reads only its tokens
    words = pa.table({"src": ["a b", "c"], "src_tokens": [["a", "b"], ["c"]]})
    assert _rename_and_drop({"src_tokens": "src_tokens"}, ["a b"], ["src_tokens", "src"], words).to_pylist() == [
        {"src_tokens": ["c"]}]


def test_mistakes_the_driver_can_see_fail_before_ray_starts(tmp_path, monkeypatch):
    """A model URI that names nothing and a corpus smaller than one global batch used to fail after Ray and an MLflow
    run had started (a 90-line WorkerGroupError for the URI); an unsafe corpus name was an unexpected failure."""
    from interlingua.core import runtime
    from interlingua.core.config import validate
    from interlingua.operators.corpus.store import CorpusStore
    from interlingua.workflows import train

    monkeypatch.setenv("INTERLINGUA_HOME", str(tmp_path / "home"))
    monkeypatch.delenv("MLFLOW_TRACKING_URI", raising=False)
    monkeypatch.chdir(tmp_path)
    writer = CorpusStore(str(tmp_path / "home" / "corpus")).open_version("tiny", {"k": 1}, ["x"])
    writer.write_shard("s0", pa.table({"id": ["1", "2", "3"], "src": ["a", "b", "c"], "tgt": ["x", "y", "z"]}))
    writer.publish()
    monkeypatch.setattr(runtime, "init_ray", lambda *a, **k: pytest.fail("Ray started"))
    small = TrainWorkflowConfig(corpus="tiny", evaluate=False, exclude_pack=False,
                                train={"num_workers": 1, "batch_size": 2, "max_steps": 1})
    with pytest.raises(UserError, match="no registered model named 'NoSuch'|NoSuch"):
        train.run(small.model_copy(update={"model": "models:/NoSuch/1"}))
    with pytest.raises(UserError, match="model folder .*missing-model.* does not exist"):
        train.run(small.model_copy(update={"model": str(tmp_path / "missing-model")}))
    big_batch = TrainWorkflowConfig(corpus="tiny", evaluate=False, exclude_pack=False, model=str(tmp_path),
                                    train={"num_workers": 2, "batch_size": 4, "max_steps": 1})
    with pytest.raises(UserError, match="3 training rows, fewer than one global batch"):
        train.run(big_batch)
    with pytest.raises(UserError, match="corpus"):
        validate(TrainWorkflowConfig, {"corpus": "../x"}, source="test")
