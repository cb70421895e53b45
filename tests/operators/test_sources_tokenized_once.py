"""Marian translation and the AMR parser tokenize each source once (the length check and the batches share the ids),
and give what tokenizing each batch again gave: the same batch tensors, the same outputs."""

from __future__ import annotations

import pytest

from interlingua.operators.translate.backend import BackendSpec, length_sorted_batches

SENTENCES = ["the children are singing in the garden after school", "a cat sleeps", "rain",
             "three friends walk along the river", "la casa es grande"]


@pytest.fixture(scope="module")
def tiny_marian(tmp_path_factory):
    from interlingua.operators.translate.tiny_marian import build_tiny_marian

    return str(build_tiny_marian(tmp_path_factory.mktemp("marian")))


class CountingTokenizer:
    """The tokenizer, counting the texts it is called on."""

    def __init__(self, tokenizer):
        self.tokenizer = tokenizer
        self.texts: list[str] = []

    def __call__(self, texts, *args, **kwargs):
        self.texts.extend([texts] if isinstance(texts, str) else texts)
        return self.tokenizer(texts, *args, **kwargs)

    def __getattr__(self, name):
        return getattr(self.tokenizer, name)


def _watch(owner) -> tuple[CountingTokenizer, list[dict]]:
    """Count ``owner``'s tokenizer calls and record the batches its model generates from."""
    counting = CountingTokenizer(owner.tokenizer)
    owner.tokenizer = counting
    batches: list[dict] = []
    generate = owner.model.generate

    def recording(**kwargs):
        batches.append({key: value.clone() for key, value in kwargs.items() if hasattr(value, "clone")})
        return generate(**kwargs)

    owner.model.generate = recording
    return counting, batches


def _retokenized(tokenizer, model, texts: list[str], batch_size: int, **generate) -> tuple[list[dict], list[str]]:
    """Reference, the path before: each length-sorted batch tokenized again with padding; its tensors and outputs."""
    import torch

    batches, outputs = [], [""] * len(texts)
    for indices in length_sorted_batches(texts, batch_size):
        encoded = tokenizer([texts[i] for i in indices], return_tensors="pt", padding=True)
        batches.append(dict(encoded))
        with torch.inference_mode():
            ids = model.generate(**encoded, do_sample=False, **generate)
        for i, text in zip(indices, tokenizer.batch_decode(ids, skip_special_tokens=True)):
            outputs[i] = text
    return batches, outputs


def _same_tensors(got: list[dict], want: list[dict]) -> None:
    import torch

    assert [sorted(b) for b in got] == [sorted(b) for b in want]
    for g, w in zip(got, want):
        for key in w:
            assert g[key].dtype == w[key].dtype and torch.equal(g[key], w[key]), key


def test_marian_tokenizes_each_sentence_once_with_the_same_batches_and_outputs(tiny_marian):
    from interlingua.operators.translate.marian_backend import MarianTranslator

    spec = BackendSpec(backend="marian", beam_size=2, max_length=12, batch_size=2, device="cpu")
    translator = MarianTranslator(spec, tiny_marian)
    plain_tokenizer, model = translator.tokenizer, translator.model
    want_batches, want = _retokenized(plain_tokenizer, model, SENTENCES, 2, num_beams=2, max_length=12)
    counting, batches = _watch(translator)
    got = translator.translate(SENTENCES)
    assert sorted(counting.texts) == sorted(SENTENCES)
    assert len(batches) == 3 and any((b["attention_mask"] == 0).any() for b in batches)  # batches were padded
    _same_tensors(batches, want_batches)
    assert got == want and all(got)


def test_the_parser_tokenizes_each_sentence_once_across_its_retry(tiny_marian):
    from interlingua.operators.amr.parser import Seq2SeqAmrParser

    parser = Seq2SeqAmrParser(tiny_marian, beam_size=1, retry_beam_size=2, max_length=8, batch_size=2, device="cpu")
    plain_tokenizer, model = parser.tokenizer, parser.model
    first_batches, _ = _retokenized(plain_tokenizer, model, SENTENCES, 2, num_beams=1, max_length=8)
    retry_batches, want = _retokenized(plain_tokenizer, model, SENTENCES, 2, num_beams=2, max_length=8)
    counting, batches = _watch(parser)
    results = parser.parse(SENTENCES)
    assert sorted(counting.texts) == sorted(SENTENCES)
    assert [r.beam_size for r in results] == [2] * len(SENTENCES)  # random weights: every parse was retried
    _same_tensors(batches, first_batches + retry_batches)
    assert [r.raw for r in results] == want and all(want)
