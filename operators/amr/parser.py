"""A seq2seq AMR parser: any Hugging Face encoder-decoder checkpoint trained to emit PENMAN.

``model`` is an HF id, a local folder or an amrlib ``parse_xfm`` model folder. An amrlib folder
holds ``amrlib_meta.json`` (``model_type: parse_xfm``, ``base_model`` such as
``facebook/bart-large``, and amrlib's inference ``kwargs``, not read: beam and batch sizes are this parser's
options), ``config.json`` (amrlib's ``task_specific_params.parse_amr``) and the weights
(``pytorch_model.bin`` / ``model.safetensors``), usually without tokenizer files: the tokenizer is
then loaded from ``base_model``. amrlib's models emit a variable-free serialization that amrlib's
own de-serializer turns into PENMAN; pass ``postprocess=`` a callable doing that (e.g. built on
``amrlib`` when installed) — by default outputs are validated as they come.

Generation never blocks repeated n-grams: ``no_repeat_ngram_size=0``, ``encoder_no_repeat_ngram_size=0`` and
``repetition_penalty=1.0`` are always passed, overriding the folder's generation config (a BART-derived checkpoint
carries ``no_repeat_ngram_size: 3``, which forbids the trigrams PENMAN repeats, ``:ARG0 (``). A folder that amrlib
trained (its ``config.json`` holds ``task_specific_params.parse_amr``, or it has ``amrlib_meta.json``) generates as
amrlib's ``parse_xfm`` inference does: ``early_stopping`` when beam search runs, and, unless ``max_length`` is given,
``max_length`` = ``parse_amr.max_out_len``. That effective ``max_length`` is the one cut-off outputs are measured
against.

An output that filled ``max_length`` tokens without ending (no end token before the last position) is cut off:
it is a ``max-length`` failure, never validated (a cut-off graph may still parse). Every other output is validated
with :func:`~interlingua.operators.amr.validate.validate_penman`. Sentences whose output failed either way are
generated again once with ``retry_beam_size`` beams (if set; a wider beam may find an output that ends, or hit
``max_length`` again); what still fails is returned with its reason and raw output, never dropped. A sentence longer than the model's
positions is refused (``source has K tokens > N``, the operator rejects its row), never truncated.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import penman

from interlingua.operators.amr.validate import validate_penman
from interlingua.operators.translate.backend import (
    encode_sources,
    encoded_rows,
    length_sorted_batches,
    padded_batch,
    position_limit,
    end_token_ids,
    resolve_device,
    stopped_at_max_length,
)

AMRLIB_META = "amrlib_meta.json"
#: ``max_length`` of a folder that names none (amrlib's ``max_out_len``).
DEFAULT_MAX_LENGTH = 512


@dataclass(frozen=True)
class ParseResult:
    """One sentence's parse: ``penman`` (re-encoded, empty if invalid), ``reason`` (empty if valid),
    the ``raw`` model output and the beam size that produced it."""

    penman: str
    reason: str
    raw: str
    beam_size: int


def read_amrlib_meta(folder: str | Path) -> dict[str, Any] | None:
    """The parsed ``amrlib_meta.json`` of a local amrlib model folder, or ``None``."""
    path = Path(folder) / AMRLIB_META
    if not path.is_file():
        return None
    return json.loads(path.read_text(encoding="utf-8"))


def amrlib_parse_settings(config: dict[str, Any]) -> dict[str, Any] | None:
    """The ``task_specific_params`` amrlib's parse_xfm trainer writes into a model's config (``parse_amr``, or
    ``translation_amr_to_text`` as one of its released T5 models has it), or ``None``."""
    params = config.get("task_specific_params") if isinstance(config, dict) else None
    if not isinstance(params, dict):
        return None
    settings = params.get("parse_amr") or params.get("translation_amr_to_text")
    return settings if isinstance(settings, dict) else None


def amrlib_max_out_len(config: dict[str, Any]) -> int | None:
    """``parse_amr.max_out_len`` of an amrlib-trained model's config, or ``None``; a value that is not a positive
    integer raises ``ValueError`` naming the key."""
    settings = amrlib_parse_settings(config) or {}
    value = settings.get("max_out_len")
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise ValueError(f"config.json task_specific_params.parse_amr.max_out_len must be a positive integer, "
                         f"got {value!r}")
    return value


def tokenizer_source(model: str, meta: dict[str, Any] | None) -> str:
    """Where the tokenizer of ``model`` lives: the folder itself, or an amrlib folder's base model (``meta``: its
    :func:`read_amrlib_meta`)."""
    has_tokenizer = any((Path(model) / name).is_file() for name in ("tokenizer.json", "tokenizer_config.json", "vocab.json"))
    if meta and not has_tokenizer:
        base = meta.get("base_model")
        if not base:
            raise ValueError(f"{model}/{AMRLIB_META} has no base_model to load the tokenizer from")
        return str(base)
    return model


def parser_model_problem(model: str) -> str:
    """Why ``model`` cannot be loaded as a seq2seq parser (offline checks: a local folder must hold a ``config.json``
    of an encoder-decoder model type; a hub id is checked for its shape only), or ``""``."""
    from interlingua.operators.translate.preflight import local_folder_problem

    problem = local_folder_problem(model, "parser_model")
    if problem is None:
        return ""
    if problem:
        return f"{problem}: give a seq2seq AMR parser folder (BART/T5, amrlib parse_xfm) or a hub id"
    from transformers.models.auto.modeling_auto import MODEL_FOR_SEQ_TO_SEQ_CAUSAL_LM_MAPPING_NAMES

    try:
        config = json.loads((Path(model).expanduser() / "config.json").read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError) as err:
        return f"parser_model {model}/config.json is not readable JSON ({err})"
    try:
        amrlib_max_out_len(config)
    except ValueError as err:
        return f"parser_model {model}/{err}"
    model_type = config.get("model_type") if isinstance(config, dict) else None
    if model_type in MODEL_FOR_SEQ_TO_SEQ_CAUSAL_LM_MAPPING_NAMES or (isinstance(config, dict)
                                                                     and config.get("is_encoder_decoder") is True):
        return ""
    return (f"parser_model {model} is a {model_type or 'model without model_type'} model, not an encoder-decoder "
            f"(seq2seq) one: give a BART/T5-style AMR parser (model_type e.g. bart, t5, mbart)")


class Seq2SeqAmrParser:
    """Parse sentences into validated PENMAN graphs (see the module docstring)."""

    def __init__(self, model: str, *, beam_size: int = 4, retry_beam_size: int | None = 8,
                 max_length: int | None = None, batch_size: int = 16, device: str = "auto", check_roles: bool = False,
                 postprocess: Callable[[str], str] | None = None, load: bool = True):
        """``max_length``: the longest output in tokens; ``None``: an amrlib folder's ``max_out_len``, else
        :data:`DEFAULT_MAX_LENGTH`."""
        for name, value in (("beam_size", beam_size), ("max_length", max_length), ("batch_size", batch_size)):
            if (value is not None or name != "max_length") and (not isinstance(value, int) or value < 1):
                raise ValueError(f"{name} must be a positive integer, got {value!r}")
        if retry_beam_size is not None and retry_beam_size <= beam_size:
            raise ValueError(f"retry_beam_size must be larger than beam_size ({beam_size}), got {retry_beam_size}")
        self.beam_size = beam_size
        self.retry_beam_size = retry_beam_size
        self.max_length = max_length or DEFAULT_MAX_LENGTH
        self.amrlib = False  # generate as amrlib's parse_xfm inference (set from the folder when loaded)
        self.batch_size = batch_size
        self.check_roles = check_roles
        self.postprocess = postprocess
        self.device = resolve_device(device) if load else "cpu"
        if load:
            from transformers import AutoModelForSeq2SeqLM, AutoTokenizer

            meta = read_amrlib_meta(model)
            self.tokenizer = AutoTokenizer.from_pretrained(tokenizer_source(model, meta))
            self.model = AutoModelForSeq2SeqLM.from_pretrained(model).to(self.device).eval()
            config = self.model.config.to_dict()
            self.amrlib = amrlib_parse_settings(config) is not None or meta is not None
            self.max_length = max_length or amrlib_max_out_len(config) or DEFAULT_MAX_LENGTH
            self.source_limit = position_limit(getattr(self.model.config, "max_position_embeddings", None),
                                               self.tokenizer.model_max_length)
            self.end_ids = end_token_ids(self.model)

    def encode(self, sentences: list[str]):
        """The sentences' token ids, tokenized once (:meth:`parse` hands them to its retry); a sentence longer than
        the model's positions is refused."""
        return encode_sources(self.tokenizer, sentences, self.source_limit)

    def generate(self, sentences: list[str], beam_size: int, encoded=None) -> list[tuple[str, bool]]:
        """(raw decoder output, cut off at ``max_length``) per sentence, in input order; ``encoded``: their
        :meth:`encode` (tokenized here when not given)."""
        import torch

        encoded = self.encode(sentences) if encoded is None else encoded
        outputs: list[tuple[str, bool]] = [("", False)] * len(sentences)
        for indices in length_sorted_batches(sentences, self.batch_size):
            batch = padded_batch(self.tokenizer, encoded, indices).to(self.device)
            with torch.inference_mode():
                ids = self.model.generate(**batch, **self.generation_kwargs(beam_size))
            cut = stopped_at_max_length(ids, self.end_ids, self.max_length)
            for i, text, stopped in zip(indices, self.tokenizer.batch_decode(ids, skip_special_tokens=True), cut):
                outputs[i] = (text, stopped)
        return outputs

    def generation_kwargs(self, beam_size: int) -> dict[str, Any]:
        """What :meth:`generate` passes to ``model.generate`` besides the batch (see the module docstring)."""
        kwargs: dict[str, Any] = {"num_beams": beam_size, "do_sample": False, "max_length": self.max_length,
                                  "no_repeat_ngram_size": 0, "encoder_no_repeat_ngram_size": 0,
                                  "repetition_penalty": 1.0}
        if self.amrlib:
            kwargs["early_stopping"] = beam_size > 1
        return kwargs

    def _check(self, raw: str, cut_off: bool, beam_size: int) -> ParseResult:
        if cut_off:
            return ParseResult("", f"max-length: output reached max_length {self.max_length} without an end token",
                               raw, beam_size)
        text = self.postprocess(raw) if self.postprocess else raw
        validation = validate_penman(text, check_roles=self.check_roles)
        if not validation.ok:
            return ParseResult("", validation.reason, raw, beam_size)
        return ParseResult(penman.encode(validation.graph, indent=None), "", raw, beam_size)

    def parse(self, sentences: list[str]) -> list[ParseResult]:
        """Parse, validate, retry cut-off or invalid outputs once with the larger beam."""
        encoded = self.encode(sentences)
        results = [self._check(raw, cut, self.beam_size)
                   for raw, cut in self.generate(sentences, self.beam_size, encoded)]
        failed = [i for i, r in enumerate(results) if r.reason]
        if failed and self.retry_beam_size:
            retried = self.generate([sentences[i] for i in failed], self.retry_beam_size, encoded_rows(encoded, failed))
            for i, (raw, cut) in zip(failed, retried):
                result = self._check(raw, cut, self.retry_beam_size)
                results[i] = result if not result.reason else ParseResult(
                    "", f"{result.reason} (after retry with beam {self.retry_beam_size})", raw, self.retry_beam_size)
        return results
