"""Model mistakes of interpolate and combine stages refused when the recipe loads (before any stage runs or MLflow
starts), and combine's sum of unequal dims refused before either model loads."""

from __future__ import annotations

import json
import shutil

import pytest
from tiny_models import build_tiny_bert

from interlingua.core.errors import UserError
from interlingua.workflows.recipe_spec import RecipeConfig, RecipeError


@pytest.fixture(scope="module")
def folders(tmp_path_factory):
    root = tmp_path_factory.mktemp("models")
    a, b = build_tiny_bert(root / "a", seed=1), build_tiny_bert(root / "b", seed=2)
    other_vocab = root / "other_vocab"
    shutil.copytree(b, other_vocab)
    tokenizer = json.loads((other_vocab / "tokenizer.json").read_text())
    tokenizer["model"]["vocab"]["zzz"] = len(tokenizer["model"]["vocab"])
    (other_vocab / "tokenizer.json").write_text(json.dumps(tokenizer))
    narrow = root / "narrow"  # config.json says 16: what the checks read (its weights are never loaded)
    shutil.copytree(b, narrow)
    config = json.loads((narrow / "config.json").read_text())
    (narrow / "config.json").write_text(json.dumps({**config, "hidden_size": 16}))
    return {"a": str(a), "b": str(b), "other_vocab": str(other_vocab), "narrow": str(narrow)}


def _run_recipe(tmp_path, stages):
    from interlingua.workflows import recipe

    recipe.run(RecipeConfig.model_validate({"name": "t", "stages": stages, "state_dir": str(tmp_path / "state")}))


def test_an_interpolate_stage_of_mismatched_folders_is_refused_at_load(folders, tmp_path):
    """Refused before the corpus-mix stage before it runs, not when the interpolate stage's turn comes."""
    import pyarrow as pa

    from interlingua.operators.corpus.store import CorpusStore

    writer = CorpusStore(str(tmp_path / "state" / "corpus")).open_version("bt", {}, ["bt"])
    writer.write_shard("s0", pa.table({"id": ["0"], "src": ["a"], "tgt": ["b"]}))
    writer.publish(expected_shards=["s0"])
    stages = {"mix": {"workflow": "corpus-mix", "config": {"sources": [{"corpus": "bt"}], "name": "m"}},
              "wise": {"workflow": "interpolate", "config": {"first": folders["a"], "second": folders["other_vocab"]}}}
    with pytest.raises(RecipeError, match=r"^stage 'wise' \(interpolate\): .* different tokenizer vocabularies"):
        _run_recipe(tmp_path, stages)
    assert not (tmp_path / "state" / "mlflow.db").exists()
    assert not (tmp_path / "state" / "corpus" / "m").exists()


def test_a_combine_stage_summing_unequal_dims_is_refused_at_load(folders, tmp_path):
    stages = {"comb": {"workflow": "combine", "config": {"first": folders["a"], "second": folders["narrow"],
                                                         "mode": "sum", "evaluate": False}}}
    with pytest.raises(RecipeError, match=r"^stage 'comb' \(combine\): mode 'sum' needs encoders of equal dims; "
                                          r"first '.*' has 32, second '.*narrow' has 16 \(use concat"):
        _run_recipe(tmp_path, stages)
    assert not (tmp_path / "state" / "mlflow.db").exists()


def test_matching_literal_folders_and_references_pass_the_load_checks(folders):
    from interlingua.workflows.recipe_models import check_literal_models

    stages = {"wise": {"workflow": "interpolate", "config": {"first": folders["a"], "second": folders["b"]}},
              "comb": {"workflow": "combine", "config": {"first": "${stages.wise.model}", "second": folders["narrow"],
                                                         "mode": "sum"}},
              "cat": {"workflow": "combine", "config": {"first": folders["a"], "second": folders["narrow"],
                                                        "mode": "concat"}}}
    check_literal_models(RecipeConfig.model_validate({"name": "t", "stages": stages}), ["wise", "comb", "cat"])


def test_standalone_combine_checks_sum_dims_before_loading_either_model(folders, tmp_path, monkeypatch):
    from interlingua.models import load
    from interlingua.workflows import combine

    def no_load(*args, **kwargs):
        raise AssertionError("a model was loaded before the dims were checked")

    monkeypatch.setattr(load, "load_encoder", no_load)
    config = combine.CombineConfig(first=folders["a"], second=folders["narrow"], mode="norm_sum", evaluate=False,
                                   state_dir=str(tmp_path / "state"))
    with pytest.raises(UserError, match=r"mode 'norm_sum' needs encoders of equal dims; first .* has 32, second "
                                        r".*narrow' has 16"):
        combine.run(config)
    assert not (tmp_path / "state" / "mlflow.db").exists()
