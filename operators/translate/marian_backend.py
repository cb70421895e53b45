"""Marian / OPUS-MT translation through transformers ``generate`` (Junczys-Dowmunt et al. 2018;
Tiedemann & Thottingal 2020).

Sentences are batched by length (:func:`length_sorted_batches`) and translated as ``model.generate`` does with the
model folder's generation config (OPUS-MT's: 4 or 6 beams, ``max_length`` 512), except for ``spec.beam_size`` (1 =
greedy) and ``spec.max_length`` where they are set (:func:`generation_settings`); on GPU the model runs in
``float16`` or ``bfloat16`` when ``spec.precision`` asks for it. Multilingual models take a
``>>lang<<`` token before every source sentence (``spec.target_token``).

A source longer than the model's positions (``max_position_embeddings``, or the tokenizer's ``model_max_length``
when smaller) is refused (``source has K tokens > N``: the operator rejects its row), never truncated; an output
that reaches ``max_length`` without an end token before its last position is kept and flagged in :attr:`MarianTranslator.at_max_length`.
"""

from __future__ import annotations

from interlingua.operators.translate.backend import (
    BackendSpec,
    declared_generation,
    encode_sources,
    end_token_ids,
    generation_settings,
    language_codes,
    length_sorted_batches,
    padded_batch,
    position_limit,
    resolve_target_token,
    resolve_device,
    stopped_at_max_length,
)

_TORCH_DTYPES = {"default": "float32", "float32": "float32", "float16": "float16", "bfloat16": "bfloat16"}


class MarianTranslator:
    """Translate with a Marian seq2seq model folder / HF id (see the module docstring)."""

    def __init__(self, spec: BackendSpec, model: str, target: str | None = None):
        import torch
        from transformers import AutoModelForSeq2SeqLM, AutoTokenizer

        if spec.precision not in _TORCH_DTYPES:
            raise ValueError(f"precision for marian must be one of {sorted(_TORCH_DTYPES)}, got {spec.precision!r}")
        self.spec = spec
        self.device = resolve_device(spec.device)
        dtype_name = _TORCH_DTYPES[spec.precision]
        if self.device == "cpu" and dtype_name != "float32":
            raise ValueError(f"precision {spec.precision!r} needs a GPU; use float32 on CPU")
        self.tokenizer = AutoTokenizer.from_pretrained(model)
        self.target_token = resolve_target_token(language_codes(self.tokenizer.get_vocab()), spec.target_token, target)
        self.model = AutoModelForSeq2SeqLM.from_pretrained(model, dtype=getattr(torch, dtype_name))
        self.model.to(self.device).eval()
        self.source_limit = position_limit(getattr(self.model.config, "max_position_embeddings", None),
                                           self.tokenizer.model_max_length)
        self.at_max_length: list[bool] = []
        self.end_ids = end_token_ids(self.model)
        declared = declared_generation(model)
        self.generation = generation_settings(spec, declared)
        # given to generate only where they differ from the folder's own (which generate uses when not given)
        self.overrides = {key: value for key, value in self.generation.items() if declared.get(key) != value}

    def _prepare(self, sentences: list[str]) -> list[str]:
        if self.target_token is None:
            return sentences
        return [f"{self.target_token} {s}" for s in sentences]

    def translate(self, sentences: list[str]) -> list[str]:
        import torch

        encoded = encode_sources(self.tokenizer, self._prepare(sentences), self.source_limit)
        outputs: list[str] = [""] * len(sentences)
        at_max_length = [False] * len(sentences)
        for indices in length_sorted_batches(sentences, self.spec.batch_size):
            batch = padded_batch(self.tokenizer, encoded, indices).to(self.device)
            with torch.inference_mode():
                generated = self.model.generate(**batch, do_sample=False, **self.overrides)
            cut = stopped_at_max_length(generated, self.end_ids, self.generation["max_length"])
            for i, text, stopped in zip(indices, self.tokenizer.batch_decode(generated, skip_special_tokens=True), cut):
                outputs[i] = text
                at_max_length[i] = stopped
        self.at_max_length = at_max_length
        return outputs
