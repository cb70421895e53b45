"""Marian / OPUS-MT models run by CTranslate2 (Klein et al. 2020), converted offline with
``ctranslate2.converters.TransformersConverter``.

``model`` is either a CTranslate2 folder (has ``model.bin``) or a Marian folder / HF id, which is
converted once into ``<cache>/<name>-<digest>-ct2-float32/ct2`` (default cache ``~/.cache/interlingua/ct2``) with
the tokenizer files copied along and the Marian folder's ``num_beams`` / ``max_length`` (:func:`declared_generation`;
the conversion keeps no generation config) written as its ``generation_config.json``, so the converted folder is
self-contained. ``spec.beam_size`` / ``spec.max_length`` left unset are the Marian folder's (OPUS-MT's: 4 or 6 beams,
512 tokens), as the Marian backend takes them (:func:`generation_settings`). ``digest`` is the SHA-256 of the Marian
model's files, so a model rewritten in place is converted again; a conversion is written beside the cache entry
and renamed into place when finished, so translate actors converting at the same time, or a conversion cut
short, never leave an entry that later runs take for a model or fail on. Compute type ``default`` is int8 on
CPU and float16 on GPU. Tokenization is the model's own SentencePiece tokenizer (loaded with transformers); decoding uses
``translate_batch`` with ``max_decoding_length = max_length - 1``, matching transformers'
``max_length`` which counts the decoder start token. A source longer than the tokenizer's ``model_max_length`` (the
model's positions; 1024, CTranslate2's own cut-off, when unset) is refused (``source has K tokens > N``) as the
Marian backend refuses it, never cut; an output of ``max_length - 1`` tokens (no end token) is flagged in
:attr:`CTranslate2Translator.at_max_length`.

Greedy decoding in float32 gives transformers' output. Beam search does not always: CTranslate2 stops once
``beam_size`` hypotheses have ended, as transformers' ``early_stopping=True`` does, where transformers' default (OPUS-MT's
generation config sets none) may keep searching and return another, longer hypothesis.
"""

from __future__ import annotations

import json
from pathlib import Path

from interlingua.operators.translate.backend import (
    BackendSpec,
    declared_generation,
    generation_settings,
    language_codes,
    length_sorted_batches,
    position_limit,
    refuse_long_sources,
    resolve_target_token,
)

COMPUTE_TYPES = ("default", "auto", "int8", "int8_float32", "int8_float16", "int8_bfloat16", "int16",
                 "float16", "bfloat16", "float32")
TOKENIZER_FILES = ("source.spm", "target.spm", "vocab.json", "tokenizer_config.json",
                   "special_tokens_map.json", "tokenizer.json", "sentencepiece.bpe.model")


def is_ctranslate2_folder(path: str | Path) -> bool:
    return (Path(path) / "model.bin").is_file()


def convert_marian(model: str, output_dir: str | Path, quantization: str | None = None, force: bool = False) -> Path:
    """Convert a transformers Marian model (folder or HF id) into a CTranslate2 folder."""
    import ctranslate2

    source = Path(model)
    copy_files = [name for name in TOKENIZER_FILES if (source / name).is_file()] if source.is_dir() else []
    converter = ctranslate2.converters.TransformersConverter(model, copy_files=copy_files or None)
    converted = Path(converter.convert(str(output_dir), quantization=quantization, force=force))
    # CTranslate2's config.json is its own: the Marian folder's num_beams / max_length are kept beside it
    (converted / "generation_config.json").write_text(json.dumps(declared_generation(model)), encoding="utf-8")
    return converted


#: Source tokens a model takes when its tokenizer names no ``model_max_length`` (CTranslate2's own default cut-off).
CT2_INPUT_LIMIT = 1024

#: Where conversions are kept on each machine that translates (``interlingua gc`` prunes interrupted ones).
DEFAULT_CT2_CACHE = Path.home() / ".cache" / "interlingua" / "ct2"


def marian_source(model: str) -> Path:
    """The local folder of the Marian model ``model``: the folder itself, or a hub id's local snapshot."""
    from interlingua.models.load import from_hub

    return Path(model) if Path(model).is_dir() else Path(from_hub(model))


#: Where a Marian checkpoint keeps the embedding its decoder starts from (tied: one tensor under the first name).
EMBEDDING_KEYS = ("model.decoder.embed_tokens.weight", "model.shared.weight", "model.encoder.embed_tokens.weight")


def start_row_problem(source: str | Path) -> str:
    """Why the Marian folder ``source`` cannot be converted faithfully, or ``""``: CTranslate2 starts Marian's decoder
    from a zero vector (Marian's own models have a zero ``<pad>``, decoder start, embedding row); a Marian fine-tuned
    with transformers (output layer tied to the embeddings) has a non-zero row, and its conversion translates
    garbage. Reads the folder's config, then that one row (:func:`start_row`); another model type is ``""``."""
    from transformers import AutoConfig

    config = AutoConfig.from_pretrained(str(source))
    start = config.decoder_start_token_id
    if config.model_type != "marian" or start is None or not start_row(Path(source), start).any():
        return ""
    return (f"ctranslate2 model folder {source}: its decoder start (<pad>, id {start}) embedding row is not zero (a "
            "Marian fine-tuned with transformers?), which CTranslate2's conversion assumes; it would translate garbage: "
            "use backend marian (transformers) for this model")


def start_row(folder: Path, start: int):
    """Row ``start`` of the Marian model's decoder embedding: sliced from ``model.safetensors`` (one row read), else
    (``.bin`` weights, a sharded or unknown layout) from the model loaded in full."""
    weights = folder / "model.safetensors"
    if weights.is_file():
        from safetensors import safe_open

        with safe_open(str(weights), framework="pt") as tensors:
            key = next((name for name in EMBEDDING_KEYS if name in tensors.keys()), None)
            if key is not None:
                return tensors.get_slice(key)[start]
    from transformers import AutoModelForSeq2SeqLM

    model = AutoModelForSeq2SeqLM.from_pretrained(str(folder))
    return model.get_decoder().embed_tokens.weight[start].detach()


def converted_folder(model: str, cache: Path, source: Path | None = None) -> Path:
    """The CTranslate2 (float32) conversion of the Marian model ``model`` (a folder or a hub id; ``source``: its
    local folder, :func:`marian_source`) under ``cache``, made on first use; keyed by the model's name and file
    digest."""
    from interlingua.models.identity import files_digest
    from interlingua.models.load import cached_copy

    source = source or marian_source(model)
    name = Path(model.rstrip("/")).name or "model"
    target = Path(cache) / f"{name}-{files_digest(source)[:16]}-ct2-float32"
    return cached_copy(target, lambda partial: convert_marian(str(source), partial / "ct2"))


def runnable_folder(model: str, cache_dir: str | Path | None) -> tuple[Path, Path]:
    """``(CTranslate2 folder to run, folder whose generation_config.json applies)`` for ``model``: a CTranslate2
    folder is both; a Marian model (folder or hub id) is checked (:func:`start_row_problem`, raised as ``ValueError``;
    also for a conversion cached before this was checked), then converted (:func:`converted_folder`, under
    ``cache_dir``, else :data:`DEFAULT_CT2_CACHE`), its own folder's settings applying (a conversion cached before
    they were kept beside it has none)."""
    if is_ctranslate2_folder(model):
        return Path(model), Path(model)
    source = marian_source(model)
    if problem := start_row_problem(source):
        raise ValueError(problem)
    return converted_folder(model, Path(cache_dir) if cache_dir else DEFAULT_CT2_CACHE, source), source


def ctranslate2_device(device: str) -> str:
    import ctranslate2

    if device != "auto":
        return device
    return "cuda" if ctranslate2.get_cuda_device_count() > 0 else "cpu"


class CTranslate2Translator:
    """Translate with a CTranslate2 model (see the module docstring)."""

    def __init__(self, spec: BackendSpec, model: str, cache_dir: str | Path | None = None, target: str | None = None):
        import ctranslate2
        from transformers import AutoTokenizer

        if spec.precision not in COMPUTE_TYPES:
            raise ValueError(f"precision for ctranslate2 must be one of {COMPUTE_TYPES}, got {spec.precision!r}")
        self.spec = spec
        self.device = ctranslate2_device(spec.device)
        compute_type = spec.precision
        if compute_type == "default":
            compute_type = "int8" if self.device == "cpu" else "float16"
        folder, settings = runnable_folder(model, cache_dir)
        self.generation = generation_settings(spec, declared_generation(str(settings)))
        self.folder = folder
        self.tokenizer = AutoTokenizer.from_pretrained(str(folder))
        self.target_token = resolve_target_token(language_codes(self.tokenizer.get_vocab()), spec.target_token, target)
        self.translator = ctranslate2.Translator(
            str(folder), device=self.device, compute_type=compute_type, inter_threads=spec.inter_threads,
            intra_threads=spec.intra_threads,
        )
        self.source_limit = position_limit(self.tokenizer.model_max_length) or CT2_INPUT_LIMIT
        self.at_max_length: list[bool] = []

    def _source_tokens(self, sentence: str) -> list[str]:
        if self.target_token is not None:
            sentence = f"{self.target_token} {sentence}"
        return self.tokenizer.convert_ids_to_tokens(self.tokenizer.encode(sentence))

    def translate(self, sentences: list[str]) -> list[str]:
        outputs: list[str] = [""] * len(sentences)
        at_max_length = [False] * len(sentences)
        batches = length_sorted_batches(sentences, self.spec.batch_size)
        order = [i for batch in batches for i in batch]
        sources = [self._source_tokens(sentences[i]) for i in order]
        refuse_long_sources([len(tokens) for tokens in sources], self.source_limit)
        results = self.translator.translate_batch(
            sources,
            beam_size=self.generation["num_beams"],
            max_decoding_length=self.generation["max_length"] - 1,
            max_batch_size=self.spec.batch_size,
            batch_type="examples",
            max_input_length=0,  # never cut: longer sources were refused above
        )
        for i, result in zip(order, results):
            ids = self.tokenizer.convert_tokens_to_ids(result.hypotheses[0])
            outputs[i] = self.tokenizer.decode(ids, skip_special_tokens=True)
            # the end token takes a decoding step and is not returned: a full-length hypothesis never ended
            at_max_length[i] = len(result.hypotheses[0]) >= self.generation["max_length"] - 1
        self.at_max_length = at_max_length
        return outputs
