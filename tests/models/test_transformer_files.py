"""Fast loading of a transformer folder: the same model as ``from_pretrained`` (values, buffers, outputs, eval
mode) without its random init or weight copy, copy-on-write weights, and the fallback for other layouts;
the tokenizer's added tokens read from the head of ``tokenizer.json``."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
import torch

from interlingua.models.transformer_files import added_tokens_of, load_tokenizer, load_transformer
from tiny_models import SENTENCES, build_tiny_bert

E5 = Path(".interlingua/assets/e5-small")


@pytest.fixture(scope="module")
def bert_folder(tmp_path_factory):
    return build_tiny_bert(tmp_path_factory.mktemp("tiny_bert"))


def _same_model(ours, reference, tokenizer) -> None:
    assert type(ours) is type(reference) and not ours.training
    assert ours.config._attn_implementation == reference.config._attn_implementation
    theirs = dict(reference.state_dict())
    assert list(ours.state_dict()) == list(theirs)
    assert all(torch.equal(tensor, theirs[name]) for name, tensor in ours.state_dict().items())
    buffers = dict(reference.named_buffers())
    assert all(torch.equal(buffer, buffers[name]) for name, buffer in ours.named_buffers())
    features = tokenizer(SENTENCES, padding=True, return_tensors="pt")
    with torch.no_grad():
        assert torch.equal(ours(**features).last_hidden_state, reference(**features).last_hidden_state)


def test_fast_path_gives_from_pretrained_s_model_without_calling_it(bert_folder, monkeypatch):
    from transformers import AutoModel

    reference = AutoModel.from_pretrained(bert_folder)

    def refuse(*args, **kwargs):
        raise AssertionError("from_pretrained called for a plain safetensors folder")

    monkeypatch.setattr(AutoModel, "from_pretrained", refuse)
    _same_model(load_transformer(bert_folder), reference, load_tokenizer(bert_folder))


def test_weights_are_copy_on_write_never_written_back(bert_folder, tmp_path):
    from safetensors.torch import load_file

    folder = Path(shutil.copytree(bert_folder, tmp_path / "copy"))
    before = (folder / "model.safetensors").read_bytes()
    model = load_transformer(folder)
    with torch.no_grad():
        for parameter in model.parameters():
            parameter.add_(1.0)  # what an optimizer step does in place
    assert (folder / "model.safetensors").read_bytes() == before
    name, parameter = next(iter(model.named_parameters()))
    assert torch.equal(parameter, load_file(folder / "model.safetensors")[name] + 1.0)


def test_other_weight_names_fall_back_to_from_pretrained(bert_folder, tmp_path, monkeypatch):
    from safetensors.torch import load_file, save_file
    from transformers import AutoModel

    folder = Path(shutil.copytree(bert_folder, tmp_path / "prefixed"))
    state = load_file(folder / "model.safetensors")
    save_file({f"bert.{name}": tensor.contiguous() for name, tensor in state.items()}, folder / "model.safetensors",
              metadata={"format": "pt"})  # the names a BertForMaskedLM checkpoint has
    reference = AutoModel.from_pretrained(bert_folder)
    calls = []
    original = AutoModel.from_pretrained
    monkeypatch.setattr(AutoModel, "from_pretrained", lambda *a, **k: calls.append(a) or original(*a, **k))
    _same_model(load_transformer(folder), reference, load_tokenizer(bert_folder))
    assert len(calls) == 1


def test_added_tokens_from_the_head_of_tokenizer_json(bert_folder, capfd):
    written = json.loads((bert_folder / "tokenizer.json").read_text())["added_tokens"]
    added = added_tokens_of(bert_folder / "tokenizer.json")
    assert capfd.readouterr() == ("", "")  # tokenizers prints "Ignored unknown kwarg option id" for a stray key
    assert sorted(added) == [t["id"] for t in written] and written
    assert [added[t["id"]].content for t in written] == [t["content"] for t in written]
    assert all(added[t["id"]].special == t["special"] for t in written)
    assert added_tokens_of(bert_folder / "tokenizer.json", head_bytes=60) is None  # list cut off: let transformers parse


def test_tokenizer_without_added_tokens_in_its_config_matches_transformers(bert_folder, tmp_path):
    from transformers import PreTrainedTokenizerFast

    folder = Path(shutil.copytree(bert_folder, tmp_path / "legacy"))
    config = json.loads((folder / "tokenizer_config.json").read_text())
    config.pop("added_tokens_decoder", None)  # an older layout: the added tokens only in tokenizer.json
    (folder / "tokenizer_config.json").write_text(json.dumps(config))
    ours, reference = load_tokenizer(folder), PreTrainedTokenizerFast.from_pretrained(folder)
    assert {k: str(v) for k, v in ours.added_tokens_decoder.items()} == {
        k: str(v) for k, v in reference.added_tokens_decoder.items()}
    assert ours(SENTENCES)["input_ids"] == reference(SENTENCES)["input_ids"]
    assert ours.all_special_ids == reference.all_special_ids


@pytest.mark.slow
@pytest.mark.skipif(not (E5 / "model.safetensors").is_file(), reason="e5-small asset not built (interlingua assets)")
def test_e5_small_encodes_as_sentence_transformers_does():
    import numpy as np
    from sentence_transformers import SentenceTransformer

    from interlingua.models.sentence_encoder import SentenceEncoder

    texts = ["The Lord is my shepherd.", "Jehová es mi pastor.", "日本語のテキスト"]
    ours = SentenceEncoder.from_folder(E5).encode(texts)
    theirs = SentenceTransformer(str(E5), device="cpu", local_files_only=True).encode(texts, normalize_embeddings=True)
    np.testing.assert_allclose(ours, theirs, rtol=0, atol=1e-6)
