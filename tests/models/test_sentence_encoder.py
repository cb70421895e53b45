"""SentenceEncoder + pooling: pooling vs hand computation, input order kept, sentence-transformers layout."""

from __future__ import annotations

import json

import numpy as np
import pytest
import torch

from interlingua.models.pooling import POOLING_MODES, check_pooling, pool
from interlingua.models.sentence_encoder import ENCODER_CONFIG, SentenceEncoder
from tiny_models import SENTENCES, build_tiny_bert


@pytest.fixture(scope="module")
def bert_folder(tmp_path_factory):
    return build_tiny_bert(tmp_path_factory.mktemp("tiny_bert"))


@pytest.fixture(scope="module")
def encoder(bert_folder):
    return SentenceEncoder.from_folder(bert_folder)


# --- pooling -------------------------------------------------------------------------------------

def _states_and_mask():
    generator = torch.Generator().manual_seed(0)
    states = torch.randn(3, 5, 4, generator=generator)
    mask = torch.tensor([[1, 1, 1, 1, 1], [1, 1, 0, 0, 0], [1, 0, 0, 0, 0]])
    return states, mask


def test_mean_pooling_averages_only_real_tokens():
    states, mask = _states_and_mask()
    expected = torch.stack([states[b, : int(mask[b].sum())].mean(dim=0) for b in range(3)])
    torch.testing.assert_close(pool(states, mask, "mean"), expected)


def test_max_pooling_ignores_padding_even_when_padding_is_larger():
    states, mask = _states_and_mask()
    states = states.clone()
    states[mask == 0] = 100.0  # padding must never win the max
    expected = torch.stack([states[b, : int(mask[b].sum())].max(dim=0).values for b in range(3)])
    torch.testing.assert_close(pool(states, mask, "max"), expected)


def test_cls_pooling_takes_the_first_token():
    states, mask = _states_and_mask()
    torch.testing.assert_close(pool(states, mask, "cls"), states[:, 0])


def test_unknown_pooling_is_refused_naming_the_options():
    with pytest.raises(ValueError, match=r"pooling must be one of .*'sum'"):
        check_pooling("sum")
    states, mask = _states_and_mask()
    with pytest.raises(ValueError, match="pooling"):
        pool(states, mask, "sum")


def test_encoder_rejects_bad_options(bert_folder):
    with pytest.raises(ValueError, match="pooling"):
        SentenceEncoder.from_folder(bert_folder, pooling="sum")
    with pytest.raises(ValueError, match="max_length must be >= 1, got 0"):
        SentenceEncoder(torch.nn.Linear(1, 1), tokenizer=None, max_length=0)


@pytest.mark.parametrize("mode", POOLING_MODES)
def test_forward_equals_pooling_of_transformer_states(encoder, mode):
    encoder.pooling = mode
    try:
        features = encoder.tokenize(SENTENCES[:3])
        with torch.no_grad():
            states = encoder.transformer(**features).last_hidden_state
            got = encoder(features)
        mask = features["attention_mask"]
        for b in range(3):
            real = states[b, mask[b].bool()]
            expected = {"mean": real.mean(0), "max": real.max(0).values, "cls": states[b, 0]}[mode]
            torch.testing.assert_close(got[b], expected, atol=1e-5, rtol=1e-5)
    finally:
        encoder.pooling = "mean"


# --- encode --------------------------------------------------------------------------------------

def test_encode_keeps_input_order_despite_length_sorting(encoder):
    one_by_one = np.stack([encoder.encode([text], batch_size=1)[0] for text in SENTENCES])
    batched = encoder.encode(SENTENCES, batch_size=3)  # length-sorted batches that cut across the input
    np.testing.assert_allclose(batched, one_by_one, atol=1e-5)
    # the sentences differ, so a permuted output could not pass the check above
    assert len({tuple(np.round(v, 4)) for v in batched}) == len(SENTENCES)


def test_encode_normalizes_by_default(encoder):
    normalized = encoder.encode(SENTENCES)
    raw = encoder.encode(SENTENCES, normalize=False)
    np.testing.assert_allclose(np.linalg.norm(normalized, axis=1), 1.0, atol=1e-5)
    np.testing.assert_allclose(normalized, raw / np.linalg.norm(raw, axis=1, keepdims=True), atol=1e-5)
    assert not np.allclose(np.linalg.norm(raw, axis=1), 1.0)


def test_encode_empty_list_and_restores_training_mode(encoder):
    assert encoder.encode([]).shape == (0, encoder.dim)
    encoder.train()
    try:
        encoder.encode(SENTENCES[:2])
        assert encoder.training
    finally:
        encoder.eval()


def test_prefix_is_prepended_before_tokenizing(bert_folder, encoder):
    prefixed = SentenceEncoder.from_folder(bert_folder, prefix="query: ")
    np.testing.assert_allclose(prefixed.encode(["the cat"]), encoder.encode(["query: the cat"]), atol=1e-6)
    assert not np.allclose(prefixed.encode(["the cat"]), encoder.encode(["the cat"]), atol=1e-4)


def test_max_length_truncates_tokens(bert_folder):
    short = SentenceEncoder.from_folder(bert_folder, max_length=4)
    ids = short.tokenize(["i see a small blue book on the big red mat"])["input_ids"]
    assert ids.shape[1] == 4


# --- save / load ---------------------------------------------------------------------------------

@pytest.mark.parametrize(("pooling", "prefix"), [("mean", "query: "), ("cls", ""), ("max", "passage: ")])
def test_saved_folder_loads_in_sentence_transformers_with_same_embeddings(bert_folder, tmp_path, pooling, prefix):
    """``SentenceTransformer(saved).encode`` gives what ``encode`` gives by default (unit vectors): the saved stack
    ends in Normalize (without it the vectors differed by their norm, up to 0.48 on a real model). Read back, the
    pooled vectors are the same too."""
    from sentence_transformers import SentenceTransformer

    ours = SentenceEncoder.from_folder(bert_folder, pooling=pooling, max_length=32, prefix=prefix)
    saved = ours.save(tmp_path / "saved")
    theirs = SentenceTransformer(str(saved), device="cpu")
    assert theirs.max_seq_length == 32
    got = theirs.encode(SENTENCES, convert_to_numpy=True)
    np.testing.assert_allclose(got, ours.encode(SENTENCES), rtol=0, atol=1e-6)
    np.testing.assert_allclose(SentenceEncoder.from_folder(saved).encode(SENTENCES, pooled=True),
                               ours.encode(SENTENCES, pooled=True), rtol=0, atol=1e-6)


def test_a_saved_folder_read_back_and_saved_again_keeps_one_normalize(bert_folder, tmp_path):
    """Read back with interlingua, a saved folder encodes as the encoder that saved it; saved again (over itself or
    elsewhere) it still ends in one Normalize, which sentence-transformers loads once."""
    from sentence_transformers import SentenceTransformer

    from interlingua.models.registry import load_sentence_transformer

    original = SentenceEncoder.from_folder(bert_folder, max_length=32)
    first = original.save(tmp_path / "first")
    loaded = SentenceEncoder.from_folder(first)
    assert loaded.normalized
    np.testing.assert_allclose(loaded.encode(SENTENCES), original.encode(SENTENCES), rtol=0, atol=1e-6)
    for folder in (loaded.save(first), loaded.save(tmp_path / "second")):
        kinds = [m["type"].rsplit(".", 1)[-1] for m in json.loads((folder / "modules.json").read_text())]
        assert kinds == ["Transformer", "Pooling", "Normalize"], folder
        assert [type(m).__name__ for m in load_sentence_transformer(folder)] == kinds
        np.testing.assert_allclose(SentenceTransformer(str(folder), device="cpu").encode(SENTENCES),
                                   original.encode(SENTENCES), rtol=0, atol=1e-6)


def test_save_writes_sentence_transformers_layout(bert_folder, tmp_path):
    encoder = SentenceEncoder.from_folder(bert_folder, prefix="query: ")
    folder = encoder.save(tmp_path / "saved")
    modules = json.loads((folder / "modules.json").read_text())
    assert [m["type"] for m in modules] == ["sentence_transformers.models.Transformer",
                                            "sentence_transformers.models.Pooling",
                                            "sentence_transformers.models.Normalize"]
    assert (folder / "2_Normalize").is_dir()
    pooling_cfg = json.loads((folder / "1_Pooling" / "config.json").read_text())
    assert pooling_cfg["pooling_mode_mean_tokens"] and not pooling_cfg["pooling_mode_cls_token"]
    assert pooling_cfg["word_embedding_dimension"] == encoder.dim
    st_cfg = json.loads((folder / "config_sentence_transformers.json").read_text())
    assert st_cfg["prompts"] == {"default": "query: "} and st_cfg["default_prompt_name"] == "default"
    assert (folder / "config.json").exists() and (folder / "tokenizer_config.json").exists()
    ours = json.loads((folder / ENCODER_CONFIG).read_text())
    positions = encoder.transformer.config.max_position_embeddings  # 64 in the tiny model: under the default 128
    assert ours == {"pooling": "mean", "max_length": min(128, positions), "prefix": "query: "}


def test_round_trip_keeps_settings_and_embeddings(bert_folder, tmp_path):
    original = SentenceEncoder.from_folder(bert_folder, pooling="max", max_length=16, prefix="passage: ")
    loaded = SentenceEncoder.from_folder(original.save(tmp_path / "enc"))
    assert (loaded.pooling, loaded.max_length, loaded.prefix) == ("max", 16, "passage: ")
    np.testing.assert_allclose(loaded.encode(SENTENCES), original.encode(SENTENCES), atol=1e-6)


def test_explicit_arguments_override_the_folder(bert_folder, tmp_path):
    folder = SentenceEncoder.from_folder(bert_folder, pooling="max", max_length=16, prefix="passage: ").save(
        tmp_path / "enc")
    loaded = SentenceEncoder.from_folder(folder, pooling="cls", max_length=8, prefix="")
    assert (loaded.pooling, loaded.max_length, loaded.prefix) == ("cls", 8, "")


def test_sentence_transformers_folder_without_our_config_is_read(bert_folder, tmp_path):
    folder = SentenceEncoder.from_folder(bert_folder, pooling="cls", max_length=24, prefix="query: ").save(
        tmp_path / "st")
    (folder / ENCODER_CONFIG).unlink()
    loaded = SentenceEncoder.from_folder(folder)
    assert (loaded.pooling, loaded.max_length, loaded.prefix) == ("cls", 24, "query: ")


def test_plain_hf_folder_defaults_to_mean_pooling(encoder):
    """The tokenizer's limit capped by the model's positions (the tiny tokenizer names none, the model has 64)."""
    assert encoder.transformer.config.max_position_embeddings == 64
    assert (encoder.pooling, encoder.max_length, encoder.prefix) == ("mean", 64, "")
    assert encoder.dim == 32
