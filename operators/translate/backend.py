"""The one interface every translation backend implements, and the spec that picks one per pair.

A backend turns a list of source sentences into the same number of translations, in order.
:class:`BackendSpec` names the backend for one language pair and its options; it is validated on
construction so a bad option fails before any model is loaded.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal, NamedTuple, Protocol

BackendName = Literal["marian", "ctranslate2", "apertium"]
BACKENDS: tuple[str, ...] = ("marian", "ctranslate2", "apertium")
DEVICES: tuple[str, ...] = ("auto", "cpu", "cuda")
OPUS_MT_TEMPLATE = "Helsinki-NLP/opus-mt-{source}-{target}"


class Translator(Protocol):
    """Translate sentences; the output has one translation per input, in input order. A neural backend also sets
    ``at_max_length``: per sentence of the last call, whether its output stopped at ``max_length`` without an end
    token (kept, and counted by the operator)."""

    def translate(self, sentences: list[str]) -> list[str]: ...


@dataclass(frozen=True)
class BackendSpec:
    """How to translate one pair.

    - ``backend``: ``marian`` (transformers), ``ctranslate2`` or ``apertium``.
    - ``model``: HF id / local folder / fsspec URL of the Marian model (``marian``), the
      CTranslate2 model folder or a Marian folder to convert (``ctranslate2``), or the Apertium mode
      (``apertium``, e.g. ``eng-spa``). ``None`` → the OPUS-MT model of the pair, or the Apertium
      mode made from the pair's ISO 639-3 codes.
    - ``target_token``: for multi-target Marian models, the prefix ``>>xx<<`` put before each source; checked when
      the translator is built (:func:`resolve_target_token`): default ``>>target<<`` when the model has it.
    - ``beam_size``, ``max_length`` (tokens, the decoder start token included): ``None`` (the default) = the model
      folder's ``generation_config.json`` (``num_beams``, ``max_length``; OPUS-MT's: 4 or 6 beams, 512 tokens), so a
      translation is what ``model.generate`` gives by default; :data:`FALLBACK_GENERATION` where the folder names
      neither (:func:`generation_settings`). A value given overrides the folder's.
    - ``batch_size`` (sentences per forward pass).
    - ``device``: ``auto`` (GPU if present), ``cpu`` or ``cuda``.
    - ``precision``: ``marian``: ``float32`` / ``float16`` / ``bfloat16`` (half only on GPU);
      ``ctranslate2``: its compute type (``int8``, ``float16``, ``int8_float16``, ``float32``,
      ``default`` = int8 on CPU, float16 on GPU).
    - ``inter_threads``: ``ctranslate2`` only: batches translated in parallel by one translator (give
      it the CPUs the actor holds; on GPU, 1).
    - ``intra_threads``: ``ctranslate2`` only: threads inside one batch. 1 (the default) with
      ``inter_threads`` = cores is the fast CPU setting for batched throughput; on a 2-core machine a
      small Marian ran 6x faster with (inter 2, intra 1) than with CTranslate2's own default (intra 0,
      i.e. its automatic choice). 0 = CTranslate2's default.
    - ``mark_unknown``: ``apertium`` only: keep Apertium's ``*``/``@``/``#`` marks on words it could not
      translate. False (the default): ``apertium -u``, plain text, what training data wants; True: the marks
      (``El *frobnicator ...``), for inspecting the dictionary's coverage.
    """

    backend: BackendName = "marian"
    model: str | None = None
    target_token: str | None = None
    beam_size: int | None = None
    max_length: int | None = None
    batch_size: int = 32
    device: str = "auto"
    precision: str = "default"
    inter_threads: int = 1
    intra_threads: int = 1
    mark_unknown: bool = False

    def __post_init__(self) -> None:
        if self.backend not in BACKENDS:
            raise ValueError(f"backend must be one of {BACKENDS}, got {self.backend!r}")
        for name in ("beam_size", "max_length", "batch_size", "inter_threads"):
            value = getattr(self, name)
            if value is None and name in ("beam_size", "max_length"):
                continue  # the model's generation config
            if not isinstance(value, int) or value < 1:
                raise ValueError(f"{name} must be a positive integer, got {value!r}")
        if not isinstance(self.intra_threads, int) or self.intra_threads < 0:
            raise ValueError(f"intra_threads must be an integer >= 0 (0: CTranslate2's default), got {self.intra_threads!r}")
        if self.device not in DEVICES:
            raise ValueError(f"device must be one of {DEVICES}, got {self.device!r}")
        if self.target_token is not None and not (
            self.target_token.startswith(">>") and self.target_token.endswith("<<")
        ):
            raise ValueError(f"target_token must look like '>>es<<', got {self.target_token!r}")


#: ``num_beams`` and ``max_length`` used where a model's generation config names neither (and no spec sets them).
FALLBACK_GENERATION = {"num_beams": 4, "max_length": 256}


def declared_generation(model: str) -> dict[str, int]:
    """``num_beams`` and ``max_length`` as the model folder / hub id ``model`` declares them: its
    ``generation_config.json``, else its ``config.json`` (transformers builds the generation config from it then);
    a key it does not name (or names as no positive integer) is absent."""
    import json

    from transformers.utils import cached_file

    for name in ("generation_config.json", "config.json"):
        path = cached_file(model, name, _raise_exceptions_for_missing_entries=False,
                           _raise_exceptions_for_connection_errors=False)
        if path:
            declared = json.loads(Path(path).read_text(encoding="utf-8"))
            return {key: declared[key] for key in FALLBACK_GENERATION
                    if isinstance(declared.get(key), int) and not isinstance(declared[key], bool) and declared[key] >= 1}
    return {}


def generation_settings(spec: BackendSpec, declared: dict[str, int]) -> dict[str, int]:
    """The ``num_beams`` and ``max_length`` a translation runs with: the spec's where it sets them, else the model's
    ``declared`` ones (:func:`declared_generation`), else :data:`FALLBACK_GENERATION`."""
    given = {"num_beams": spec.beam_size, "max_length": spec.max_length}
    return {key: given[key] or declared.get(key) or fallback for key, fallback in FALLBACK_GENERATION.items()}


def resolve_device(device: str) -> str:
    """``auto`` → ``cuda`` when torch sees a GPU, else ``cpu``."""
    if device != "auto":
        return device
    import torch

    return "cuda" if torch.cuda.is_available() else "cpu"


#: A tokenizer's ``model_max_length`` when nothing set it (transformers' VERY_LARGE_INTEGER): no limit known.
_UNSET_LENGTH = 10**9


def position_limit(*limits: int | None) -> int | None:
    """The most source tokens a model takes: the smallest of the limits it declares (``max_position_embeddings``, a
    tokenizer's ``model_max_length``), ``None`` when it declares none."""
    known = [int(n) for n in limits if isinstance(n, int) and 0 < n < _UNSET_LENGTH]
    return min(known) if known else None


def refuse_long_sources(lengths: list[int], limit: int | None) -> None:
    """Raise :class:`RowRejected` (``source has K tokens > N``) for the first source longer than the model's positions:
    it is rejected, never cut (the operator retries the batch by halves, so only its row is rejected)."""
    from interlingua.operators.by_halves import RowRejected

    for length in lengths:
        if limit is not None and length > limit:
            raise RowRejected(f"source has {length} tokens > {limit}")


def encode_sources(tokenizer, sentences: list[str], limit: int | None):
    """Tokenize ``sentences`` once (token ids per sentence, unpadded) and refuse the first longer than ``limit``
    (:func:`refuse_long_sources`); :func:`padded_batch` builds the model's batches from these ids."""
    encoded = tokenizer(sentences)
    refuse_long_sources([len(ids) for ids in encoded["input_ids"]], limit)
    return encoded


def encoded_rows(encoded, indices: list[int]) -> dict[str, list]:
    """Rows ``indices`` of :func:`encode_sources`'s ``encoded`` (every key), in that order."""
    return {key: [values[i] for i in indices] for key, values in encoded.items()}


def padded_batch(tokenizer, encoded, indices: list[int]):
    """Rows ``indices`` of :func:`encode_sources`'s ``encoded``, padded to the longest as torch tensors: the batch
    ``tokenizer(texts, padding=True, return_tensors="pt")`` makes of those rows' texts, without tokenizing again."""
    return tokenizer.pad(encoded_rows(encoded, indices), return_tensors="pt")


class EndTokens(NamedTuple):
    """A model's end token ids (a tensor) and whether its generation forces one at the last position when the length
    limit is hit (``forced_eos_token_id``: BART's, OPUS-MT's), which then does not count as ending."""

    ids: Any
    forced_at_last: bool = False


def end_token_ids(model) -> EndTokens:
    """The end tokens of a transformers ``model``'s generation config (for :func:`stopped_at_max_length`)."""
    import torch

    config = model.generation_config
    end = config.eos_token_id
    return EndTokens(torch.tensor(end if isinstance(end, list) else [end]),
                     getattr(config, "forced_eos_token_id", None) is not None)


def stopped_at_max_length(generated, end: EndTokens, max_length: int) -> list[bool]:
    """Per sequence of ``generate``'s output (the decoder start token first): it filled all ``max_length`` positions
    without an end token, i.e. it was cut off. An end token in the last position counts as ending unless the model
    forces one there (``end.forced_at_last``): then it is the limit's, not the model's (a T5 parser's own end token
    at the last position is a natural end)."""
    import torch

    if generated.shape[1] < max_length:
        return [False] * generated.shape[0]
    body = generated[:, 1 : max_length - 1 if end.forced_at_last else max_length]
    return (~torch.isin(body, end.ids.to(generated.device)).any(dim=1)).tolist()


def language_codes(vocabulary) -> list[str]:
    """The ``>>xx<<`` target-language tokens of a multi-target (OPUS-MT ``en-mul`` style) model's vocabulary."""
    return sorted(token for token in vocabulary if token.startswith(">>") and token.endswith("<<") and len(token) > 4)


def resolve_target_token(codes: list[str], token: str | None, target: str | None) -> str | None:
    """The ``>>xx<<`` token to put before each source: the one given, checked against the model's ``codes`` and the
    pair's ``target``, else ``>>target<<`` (or its ISO 639-3 spelling) when the model has codes; ``None`` for a
    single-target model. A mistake is a ``ValueError`` naming the fix."""
    from interlingua.operators.translate.apertium_backend import ISO_639_3

    shown = ", ".join(codes[:30]) + (" ..." if len(codes) > 30 else "")
    spellings = {f">>{code}<<" for code in (target, ISO_639_3.get(target or "")) if code}
    if token is None:
        if not codes:
            return None
        found = sorted(spellings & set(codes))
        if found:
            return found[0]
        raise ValueError(f"the model is multi-target and has no token for {target!r}: set target_token to one of {shown}")
    if not codes:
        raise ValueError(f"target_token {token} is given but the model has no >>xx<< language tokens (a single-target "
                         "model): remove target_token")
    if token not in codes:
        raise ValueError(f"target_token {token} is not one of the model's language tokens: {shown}")
    code = token[2:-2].replace("-", "_").split("_")[0]
    if target and token not in spellings and (len(code) == 2 or code in ISO_639_3.values()):
        raise ValueError(f"target_token {token} names another language than the pair's target {target!r}")
    return token


def length_sorted_batches(sentences: list[str], batch_size: int) -> list[list[int]]:
    """Indices of ``sentences`` grouped into batches of similar length (longest first), so padding
    is small; callers scatter results back by index."""
    order = sorted(range(len(sentences)), key=lambda i: len(sentences[i]), reverse=True)
    return [order[i : i + batch_size] for i in range(0, len(order), batch_size)]
