"""The ``amr-retrofit`` workflow's config and its steps before training (fast: no Ray, no MLflow)."""

from __future__ import annotations

import pytest

from amr_tiny_corpus import INCOMPLETE, TRIPLES, write_tiny_amr_corpus
from tiny_models import build_tiny_bert

from interlingua.workflows import amr_retrofit
from interlingua.core.config import ConfigError, load_config
from interlingua.core.errors import UserError
from interlingua.workflows.registry import WORKFLOWS, load_workflow


def test_registered_with_typed_config_and_training_defaults():
    assert WORKFLOWS["amr-retrofit"] == "interlingua.workflows.amr_retrofit"
    module = load_workflow("amr-retrofit")
    config = load_config(module.CONFIG)
    assert (config.corpus, config.version, config.model, config.languages) == ("amr-corpus", None, None, None)
    assert config.min_symbol_count == 5 and config.english_graph_probability == 0.5
    assert config.train.objective == "amr_retrofit" and config.train.temperature == 0.05
    assert config.train.num_workers == 2 and config.train.max_steps <= 50
    assert module.DESCRIPTION


def test_partial_train_section_keeps_the_workflow_defaults():
    config = load_config(amr_retrofit.CONFIG, None, ["train.max_steps=3", "train.batch_size=4"])
    assert config.train.objective == "amr_retrofit"
    assert config.train.max_steps == 3 and config.train.batch_size == 4
    assert config.train.max_length == amr_retrofit.TRAIN_DEFAULTS["max_length"]


@pytest.mark.parametrize("override", ["train.objective=simcse_sup", "english_graph_probability=1.5",
                                      "min_symbol_count=0", "languages=[]"])
def test_bad_values_are_config_errors(override):
    with pytest.raises(ConfigError):
        load_config(amr_retrofit.CONFIG, None, [override])


def test_reads_the_corpus_and_picks_languages(tmp_path):
    manifest = write_tiny_amr_corpus(tmp_path / "corpus")
    config = amr_retrofit.AmrRetrofitConfig()
    read, rows = amr_retrofit._read_corpus(config, str(tmp_path / "corpus"))
    assert read.version == manifest.version
    assert len(rows) == len(TRIPLES) * 6 - 1 and set(rows[0]) == set(amr_retrofit.CORPUS_COLUMNS)
    assert amr_retrofit._languages(config, rows) == ["en", "es"]
    assert amr_retrofit._languages(amr_retrofit.AmrRetrofitConfig(languages=["es", "en"]), rows) == ["en", "es"]
    assert amr_retrofit._languages(amr_retrofit.AmrRetrofitConfig(languages=["en"]), rows) == ["en"]
    with pytest.raises(UserError, match=r"\['de'\] are not in the corpus"):
        amr_retrofit._languages(amr_retrofit.AmrRetrofitConfig(languages=["de"]), rows)
    with pytest.raises(UserError, match="no English"):
        amr_retrofit._languages(config, [r for r in rows if r["lang"] != "en"])


def test_missing_corpus_points_at_amr_corpus(tmp_path):
    with pytest.raises(UserError, match="interlingua run amr-corpus"):
        amr_retrofit._read_corpus(amr_retrofit.AmrRetrofitConfig(), str(tmp_path / "corpus"))
    write_tiny_amr_corpus(tmp_path / "corpus")
    with pytest.raises(UserError, match="interlingua run amr-corpus"):
        amr_retrofit._read_corpus(amr_retrofit.AmrRetrofitConfig(version="v-000000000000"), str(tmp_path / "corpus"))


def test_too_few_triples_for_one_global_batch():
    train = amr_retrofit._amr_train()
    with pytest.raises(UserError, match="fewer than one global batch"):
        amr_retrofit._check_enough(train, train.batch_size * train.num_workers - 1)
    amr_retrofit._check_enough(train, train.batch_size * train.num_workers)


def test_extended_encoder_holds_the_symbols_as_single_tokens(tmp_path):
    from interlingua.models.load import load_encoder

    symbols = [":ARG0", "want-01", "the"]  # "the" is already a word of the tiny vocabulary
    target, extension = amr_retrofit._extend_encoder(str(build_tiny_bert(tmp_path / "bert")), symbols,
                                                     tmp_path / "extended")
    assert extension.added == [":ARG0", "want-01"] and "the" in extension.skipped
    encoder = load_encoder(str(target))
    vocab = encoder.tokenizer.get_vocab()
    assert {":ARG0", "want-01"} <= set(vocab)
    assert encoder.transformer.get_input_embeddings().weight.shape[0] == len(encoder.tokenizer)
    ids = encoder.tokenizer("( want-01 :ARG0 ( boy ) )", add_special_tokens=False)["input_ids"]
    assert vocab[":ARG0"] in ids and vocab["want-01"] in ids


def test_the_incomplete_triple_is_the_one_skipped(tmp_path):
    from interlingua.trainers.objectives.amr_mixing import mixed_triples

    write_tiny_amr_corpus(tmp_path / "corpus")
    _, rows = amr_retrofit._read_corpus(amr_retrofit.AmrRetrofitConfig(), str(tmp_path / "corpus"))
    triples, counts = mixed_triples(rows, ["en", "es"], seed=42)
    assert counts["skipped_missing_english"] == 1 and len(triples) == len(TRIPLES) - 1
    assert INCOMPLETE not in {t["source_id"] for t in triples}


def test_each_pass_over_the_triples_gets_its_own_draw():
    """Algorithm 1 draws a sentence's language (and, for English, text or graph) at every visit: a run making
    several passes draws once per pass (seed, seed + 1, ...), each pass in its own seeded order; a run within one
    pass draws once; the text held stops at MAX_MIXED_TEXT characters (later passes then repeat the draws)."""
    from interlingua.trainers.engine.config import TrainConfig

    train = TrainConfig(objective="amr_retrofit", batch_size=4, num_workers=2, max_steps=10)
    assert amr_retrofit.mixing_passes(train, 24, 1000) == (4, 4)  # 3 steps a pass: 10 steps need 4 passes
    assert amr_retrofit.mixing_passes(train, 80, 1000) == (1, 1)  # 10 steps a pass
    assert amr_retrofit.mixing_passes(train, 9, 1000) == (10, 10)  # one global batch a pass (the last row dropped)
    third = amr_retrofit.MAX_MIXED_TEXT // 3  # three passes' text fit, the fourth does not
    assert amr_retrofit.mixing_passes(train, 24, third) == (3, 4)
    assert amr_retrofit.mixing_passes(train, 24, amr_retrofit.MAX_MIXED_TEXT + 1) == (1, 4)

    draws = [[{"premise": f"p{k}-{i}", "entailment": f"e{i}", "contradiction": f"c{i}", "source_id": str(i)}
              for i in range(6)] for k in range(2)]
    rows = amr_retrofit.shuffled_passes(draws, seed=3)
    assert [r["premise"][:2] for r in rows] == ["p0"] * 6 + ["p1"] * 6  # pass after pass
    assert sorted(r["premise"] for r in rows[:6]) == [f"p0-{i}" for i in range(6)] and set(rows[0]) == {
        "premise", "entailment", "contradiction"}
    assert rows == amr_retrofit.shuffled_passes(draws, seed=3) != amr_retrofit.shuffled_passes(draws, seed=4)
    assert [r["entailment"] for r in rows[:6]] != [r["entailment"] for r in rows[6:]]  # each pass its own order


def test_the_draws_of_two_passes_differ(tmp_path):
    from interlingua.trainers.objectives.amr_mixing import mixed_triples

    write_tiny_amr_corpus(tmp_path / "corpus")
    _, rows = amr_retrofit._read_corpus(amr_retrofit.AmrRetrofitConfig(), str(tmp_path / "corpus"))
    first, second = (mixed_triples(rows, ["en", "es"], seed=seed)[0] for seed in (42, 43))
    assert [t["source_id"] for t in first] == [t["source_id"] for t in second]
    assert [t["premise"] for t in first] != [t["premise"] for t in second]


def _small_run_config(tmp_path, model):
    from interlingua.core.runtime import corpus_root, state_dir

    write_tiny_amr_corpus(corpus_root(state_dir(str(tmp_path / "state"))))
    return load_config(amr_retrofit.CONFIG, None, [f"state_dir={tmp_path / 'state'}", f"model={model}",
                                                   "min_symbol_count=1", "train.batch_size=2", "train.num_workers=1"])


def test_a_model_uri_naming_nothing_fails_before_ray(tmp_path, monkeypatch):
    import interlingua.core.runtime as runtime

    monkeypatch.setattr(runtime, "init_ray", lambda *a, **k: pytest.fail("Ray started"))
    with pytest.raises(UserError, match="absent-encoder"):
        amr_retrofit.run(_small_run_config(tmp_path, "models:/absent-encoder@prod"))


def test_the_resume_key_holds_the_model_folder_the_uri_resolved_to(tmp_path, monkeypatch):
    """An alias that moved resolves to another folder: the rerun starts a new MLflow run instead of continuing the
    one trained from the old version (the key held the URI as written, which does not change when the alias moves)."""
    from resume_capture import StopAtResume, capture_resume_keys

    folders = {"now": str(build_tiny_bert(tmp_path / "v2"))}
    keys = capture_resume_keys(monkeypatch, lambda: folders["now"])
    config = _small_run_config(tmp_path, "models:/encoder@prod")
    with pytest.raises(StopAtResume):
        amr_retrofit.run(config)
    folders["now"] = str(tmp_path / "v3")  # the alias moved
    with pytest.raises(StopAtResume):
        amr_retrofit.run(config)
    assert [key["model"] for key in keys] == [str(tmp_path / "v2"), str(tmp_path / "v3")]
    assert keys[0]["config"] == keys[1]["config"]
