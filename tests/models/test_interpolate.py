"""Weight interpolation (WiSE-FT): θ(α) = (1 − α)·θ_first + α·θ_second, checked on tiny BERTs built here."""

from __future__ import annotations

import json

import numpy as np
import pytest
import torch
from safetensors.torch import load_file
from tiny_models import SENTENCES, build_tiny_bert

from interlingua.core.errors import UserError
from interlingua.models.interpolate import interpolate_folders, interpolate_state
from interlingua.models.load import load_encoder


@pytest.fixture(scope="module")
def parts(tmp_path_factory):
    root = tmp_path_factory.mktemp("interp")
    return build_tiny_bert(root / "a", seed=1), build_tiny_bert(root / "b", seed=2)


def test_endpoints_are_the_parts_and_midpoint_is_the_mean(parts, tmp_path):
    a, b = parts
    wa, wb = load_file(str(a / "model.safetensors")), load_file(str(b / "model.safetensors"))
    for alpha, expected in ((0.0, wa), (1.0, wb)):
        out = load_file(str(interpolate_folders(a, b, alpha, tmp_path / f"x{alpha}") / "model.safetensors"))
        assert all(torch.equal(out[k], expected[k]) for k in expected)
    mid = load_file(str(interpolate_folders(a, b, 0.25, tmp_path / "mid") / "model.safetensors"))
    for name, value in wa.items():
        if value.is_floating_point():
            np.testing.assert_allclose(mid[name].numpy(), 0.75 * value.numpy() + 0.25 * wb[name].numpy(),
                                       rtol=1e-6, atol=1e-7)


def test_interpolated_folder_encodes_like_a_model_built_from_averaged_weights(parts, tmp_path):
    a, b = parts
    folder = interpolate_folders(a, b, 0.5, tmp_path / "half")
    # reference: load part a's model and assign the averaged weights by hand
    from transformers import BertModel

    reference = BertModel.from_pretrained(str(a)).eval()
    wa, wb = load_file(str(a / "model.safetensors")), load_file(str(b / "model.safetensors"))
    reference.load_state_dict({k: (wa[k] + wb[k]) / 2 if wa[k].is_floating_point() else wa[k] for k in wa},
                              strict=False)
    ours = load_encoder(str(folder))
    vectors = ours.encode(SENTENCES, pooled=True)  # the folder ends in Normalize, as every layout we write does
    batch = ours.tokenizer(SENTENCES, padding=True, return_tensors="pt")
    with torch.no_grad():
        hidden = reference(**batch).last_hidden_state
    mask = batch["attention_mask"].unsqueeze(-1).float()
    expected = ((hidden * mask).sum(1) / mask.sum(1)).numpy()
    np.testing.assert_allclose(vectors, expected, rtol=1e-4, atol=1e-5)


def test_alpha_outside_unit_interval_is_an_error(parts, tmp_path):
    with pytest.raises(UserError, match=r"alpha must be in \[0, 1\]"):
        interpolate_folders(*parts, 1.5, tmp_path / "bad")


def test_different_architectures_are_an_error():
    a = {"w": torch.zeros(2, 3), "b": torch.zeros(3)}
    with pytest.raises(UserError, match="different tensors"):
        interpolate_state(a, {"w": torch.zeros(2, 3)}, 0.5)
    with pytest.raises(UserError, match="tensor 'w'"):
        interpolate_state(a, {"w": torch.zeros(3, 2), "b": torch.zeros(3)}, 0.5)
    with pytest.raises(UserError, match="integer tensor 'i'"):
        interpolate_state({"i": torch.arange(3)}, {"i": torch.arange(3) + 1}, 0.5)


def test_different_vocabularies_are_an_error(parts, tmp_path):
    import shutil

    a, b = parts
    other = tmp_path / "other"
    shutil.copytree(b, other)
    tokenizer = json.loads((other / "tokenizer.json").read_text())
    tokenizer["model"]["vocab"]["zzz"] = len(tokenizer["model"]["vocab"])
    (other / "tokenizer.json").write_text(json.dumps(tokenizer))
    with pytest.raises(UserError, match="different tokenizer vocabularies"):
        interpolate_folders(a, other, 0.5, tmp_path / "out")


def test_missing_safetensors_is_an_error(parts, tmp_path):
    import shutil

    a, b = parts
    other = tmp_path / "nosafe"
    shutil.copytree(b, other)
    (other / "model.safetensors").unlink()
    with pytest.raises(UserError, match="no model.safetensors"):
        interpolate_folders(a, other, 0.5, tmp_path / "out")


def test_plain_hugging_face_parts_give_a_sentence_transformers_folder(parts, tmp_path):
    from sentence_transformers import SentenceTransformer

    from interlingua.models.registry import load_sentence_transformer

    a, b = parts
    assert not (b / "modules.json").exists()
    folder = interpolate_folders(a, b, 0.5, tmp_path / "half")
    assert json.loads((folder / "1_Pooling" / "config.json").read_text())["pooling_mode_mean_tokens"] is True
    ours = load_encoder(str(folder)).encode(SENTENCES)
    theirs = SentenceTransformer(str(folder), device="cpu", local_files_only=True).encode(SENTENCES,
                                                                                          normalize_embeddings=True)
    np.testing.assert_allclose(ours, theirs, rtol=1e-4, atol=1e-5)
    assert load_sentence_transformer(folder) is not None  # what the registry logs


def test_a_sentence_transformers_second_keeps_its_own_layout(parts, tmp_path):
    from interlingua.models.sentence_encoder import SentenceEncoder

    a, b = parts
    first = SentenceEncoder.from_folder(a, pooling="cls", prefix="query: ").save(tmp_path / "st_a")
    second = SentenceEncoder.from_folder(b, pooling="cls", max_length=16, prefix="query: ").save(tmp_path / "st")
    folder = interpolate_folders(first, second, 0.5, tmp_path / "half")
    encoder = load_encoder(str(folder))
    assert (encoder.pooling, encoder.max_length, encoder.prefix) == ("cls", 16, "query: ")


@pytest.mark.parametrize("side", ["first", "second"])
def test_a_meaning_head_encoder_is_refused_not_its_head_dropped(parts, tmp_path, side):
    from tiny_models import HIDDEN_SIZE

    from interlingua.models.meaning_head import MeaningHead, save_composed
    from interlingua.models.sentence_encoder import SentenceEncoder

    a, b = parts
    SentenceEncoder.from_folder(a).save(tmp_path / "base")
    composed = save_composed(MeaningHead(HIDDEN_SIZE, 8, "tanh"), tmp_path / "composed", base_folder=tmp_path / "base")
    first, second = (composed, b) if side == "first" else (a, composed)
    with pytest.raises(UserError, match=f"^{side}: {composed} is a composed encoder \\(base \\+ meaning head\\)"):
        interpolate_folders(first, second, 0.5, tmp_path / "out")
    assert not (tmp_path / "out").exists()


def _with_dense(transformer, out, seed):
    from sentence_transformers import SentenceTransformer, models

    from tiny_models import HIDDEN_SIZE

    torch.manual_seed(seed)
    modules = [models.Transformer(str(transformer), max_seq_length=32), models.Pooling(HIDDEN_SIZE, "mean"),
               models.Dense(HIDDEN_SIZE, 8)]
    SentenceTransformer(modules=modules, device="cpu").save(str(out))
    return out


def test_a_dense_head_is_interpolated_with_the_transformer(parts, tmp_path):
    """A sentence-transformers folder with a Dense head: the copy of second skipped every module's
    model.safetensors (the head lost its weights, and the run crashed after its MLflow run existed). Each module's
    weights are now interpolated like the transformer's, and the result loads."""
    from sentence_transformers import SentenceTransformer

    a, b = parts
    first, second = _with_dense(a, tmp_path / "a_dense", 0), _with_dense(b, tmp_path / "b_dense", 1)
    folder = interpolate_folders(first, second, 0.25, tmp_path / "out")
    head = {side: load_file(str(side / "2_Dense" / "model.safetensors")) for side in (first, second, folder)}
    assert set(head[folder]) == set(head[first]) and head[folder]
    for name, value in head[first].items():
        np.testing.assert_allclose(head[folder][name].numpy(), 0.75 * value.numpy() + 0.25 * head[second][name].numpy(),
                                   rtol=1e-6, atol=1e-7)
    assert SentenceTransformer(str(folder), device="cpu", local_files_only=True).encode(SENTENCES).shape == (7, 8)


def test_a_head_on_one_side_only_is_refused(parts, tmp_path):
    from sentence_transformers import SentenceTransformer, models

    from tiny_models import HIDDEN_SIZE

    a, b = parts
    plain = tmp_path / "b_plain"
    SentenceTransformer(modules=[models.Transformer(str(b)), models.Pooling(HIDDEN_SIZE, "mean")],
                        device="cpu").save(str(plain))
    with pytest.raises(UserError, match=r"different weighted modules \(2_Dense vs none\)"):
        interpolate_folders(_with_dense(a, tmp_path / "a_dense", 0), plain, 0.5, tmp_path / "out")
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize("change, message", [
    ("lowercase", r"the tokenizer's normalizer: lowercase: True vs False"),
    ("pooling", r"pooling: 'mean' vs 'cls'"),
    ("prefix", r"prefix: '' vs 'query: '"),
    ("do_lower_case", r"lowercasing \(sentence_bert_config.json's do_lower_case\): False vs True"),
])
def test_encoders_that_read_text_differently_are_refused(parts, tmp_path, change, message):
    """Same vocabulary, but a cased tokenizer, another pooling, a prefix or sentence-transformers' ``do_lower_case``
    (our encoder honours it since 8ddab87): accepted before, the result silently read text as the second did.
    Refused in one line naming what differs."""
    import shutil

    from interlingua.models.sentence_encoder import SentenceEncoder

    a, b = parts
    other = tmp_path / "other"
    if change == "lowercase":
        shutil.copytree(b, other)
        tokenizer = json.loads((other / "tokenizer.json").read_text())
        tokenizer["normalizer"]["lowercase"] = False
        (other / "tokenizer.json").write_text(json.dumps(tokenizer))
    elif change == "do_lower_case":
        shutil.copytree(b, other)
        (other / "sentence_bert_config.json").write_text(json.dumps({"do_lower_case": True}))
    else:
        SentenceEncoder.from_folder(b, **{"pooling": "cls"} if change == "pooling" else {"prefix": "query: "}).save(other)
    with pytest.raises(UserError, match=rf"^{a} and {other} differ in {message}; [^\n]*\(hint: "):
        interpolate_folders(a, other, 0.5, tmp_path / "out")
    assert not (tmp_path / "out").exists()


def test_two_spellings_of_one_tokenizer_setting_are_one_setting(tmp_path):
    """An older Metaspace spelling (add_prefix_space) and the current one (prepend_scheme) give the same token ids,
    but compared as written they were refused as "differ in the tokenizer's pre-tokenizer" (a Hub base against a
    locally fine-tuned copy)."""
    from tokenizers import Tokenizer, models, pre_tokenizers

    from interlingua.models.interpolate import _text_settings

    tokenizer = Tokenizer(models.Unigram([("<unk>", 0.0), ("▁a", -1.0), ("▁b", -1.5), ("a", -2.0), ("b", -2.0)], 0))
    tokenizer.pre_tokenizer = pre_tokenizers.Metaspace()
    new, old = tmp_path / "new", tmp_path / "old"
    for folder in (new, old):
        folder.mkdir()
    tokenizer.save(str(new / "tokenizer.json"))
    written = json.loads((new / "tokenizer.json").read_text(encoding="utf-8"))
    assert written["pre_tokenizer"].get("prepend_scheme") == "always"
    written["pre_tokenizer"] = {"type": "Metaspace", "replacement": "▁", "add_prefix_space": True}
    (old / "tokenizer.json").write_text(json.dumps(written), encoding="utf-8")
    assert (Tokenizer.from_file(str(old / "tokenizer.json")).encode("a b").ids
            == Tokenizer.from_file(str(new / "tokenizer.json")).encode("a b").ids)
    assert _text_settings(old)[:2] == _text_settings(new)[:2]
