"""A transformer plus pooling: the sentence encoder every trainer and operator uses.

Saved in the sentence-transformers folder layout (transformer files at the root, ``modules.json``,
``1_Pooling/config.json``, ``2_Normalize``, ``sentence_bert_config.json``, ``config_sentence_transformers.json``
with the prompt), so ``sentence_transformers.SentenceTransformer(path)`` loads the same model and encodes as
``encode`` does by default.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Sequence

import numpy as np
import torch
from torch import nn

from interlingua.models.batch_tokenize import batch_tokenize
from interlingua.core.errors import UserError
from interlingua.models.pooling import POOLING_MODES, check_pooling, pool
from interlingua.models.transformer_files import json_or_empty, load_tokenizer, load_transformer

ENCODER_CONFIG = "interlingua_encoder.json"


class SentenceEncoder(nn.Module):
    """``forward(features) -> [B, H]`` pooled embeddings (not normalized: objectives normalize).

    Args:
        transformer: a Hugging Face encoder returning ``last_hidden_state``.
        tokenizer: its tokenizer.
        pooling: ``mean`` | ``cls`` | ``max``.
        max_length: truncation length in tokens.
        prefix: text prepended to every input (e5 expects ``"query: "`` or ``"passage: "``).
        name: what the encoder is called (its URI when loaded; it keys embedding caches).
        normalized: the model ends in a ``Normalize`` module (its folder's ``modules.json``; every folder ``save``
            writes does): ``encode`` returns unit vectors whatever ``normalize`` says, as
            ``SentenceTransformer(folder).encode`` does (unless ``pooled``).

    A :class:`~interlingua.models.protocol.TextEncoder`: ``name``, ``dim`` and ``encode(texts)``.
    """

    def __init__(self, transformer: nn.Module, tokenizer, pooling: str = "mean", max_length: int = 128,
                 prefix: str = "", name: str = "", normalized: bool = False):
        super().__init__()
        if max_length < 1:
            raise ValueError(f"max_length must be >= 1, got {max_length}")
        self.transformer = transformer
        self.tokenizer = tokenizer
        self.pooling = check_pooling(pooling)
        self.max_length = max_length
        self.prefix = prefix
        self.normalized = normalized
        self.name = name or f"{type(transformer).__name__}-{pooling}"

    @property
    def dim(self) -> int:
        return int(self.transformer.config.hidden_size)

    @property
    def device(self) -> torch.device:
        return next(self.parameters()).device

    def tokenize(self, texts: Sequence[str]) -> dict[str, torch.Tensor]:
        return batch_tokenize(self.tokenizer, [self.prefix + t for t in texts], self.max_length)

    def forward(self, features: dict[str, torch.Tensor]) -> torch.Tensor:
        out = self.transformer(**features)
        return pool(out.last_hidden_state, features["attention_mask"], self.pooling)

    @torch.no_grad()
    def encode(self, texts: Sequence[str], batch_size: int = 32, normalize: bool = True,
               show_progress: bool = False, *, pooled: bool = False) -> np.ndarray:
        """Embed ``texts`` in eval mode; batches are formed from length-sorted texts (less padding)
        and the result is returned in the input order. ``pooled``: the pooled vectors as they are, neither
        ``normalize`` nor the model's ``Normalize`` module applied (what ``concat`` and ``sum`` combine)."""
        texts = list(texts)
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        was_training = self.training
        self.eval()
        order = np.argsort([-len(t) for t in texts], kind="stable")
        out = np.empty((len(texts), self.dim), dtype=np.float32)
        starts = range(0, len(texts), batch_size)
        if show_progress:
            from tqdm.auto import tqdm

            starts = tqdm(starts, desc="embed", unit="batch")
        for start in starts:
            idx = order[start:start + batch_size]
            features = {k: v.to(self.device) for k, v in self.tokenize([texts[i] for i in idx]).items()}
            emb = self(features).float()
            if not pooled and (normalize or self.normalized):
                emb = torch.nn.functional.normalize(emb, dim=-1)
            out[idx] = emb.cpu().numpy()
        self.train(was_training)
        return out

    def save(self, path: str | Path) -> Path:
        """Write the model in the sentence-transformers layout (plus our own small config), ending in ``Normalize``
        (:func:`write_layout`): ``SentenceTransformer(path).encode`` gives what :meth:`encode` gives by default."""
        path = Path(path)
        path.mkdir(parents=True, exist_ok=True)
        self.transformer.save_pretrained(path)
        self.tokenizer.save_pretrained(path)
        write_layout(path, dim=self.dim, pooling=self.pooling, max_length=self.max_length, prefix=self.prefix)
        return path

    @classmethod
    def from_folder(cls, path: str | Path, pooling: str | None = None, max_length: int | None = None,
                    prefix: str | None = None) -> "SentenceEncoder":
        """Load a folder written by :meth:`save`, a sentence-transformers folder or a plain HF folder
        (mean pooling by default). Explicit arguments override what the folder says."""
        path = Path(path)
        saved = _read_folder_settings(path)
        transformer = load_transformer(path)
        tokenizer = load_tokenizer(path)
        if lowercases_input(path):
            lowercase_input(tokenizer)
        settings = _settings(saved, getattr(transformer, "config", None))
        return cls(
            transformer,
            tokenizer,
            pooling=pooling or settings["pooling"],
            max_length=max_length or settings["max_length"],
            prefix=settings["prefix"] if prefix is None else prefix,
            name=str(path),
            normalized="Normalize" in module_names(path),
        )


def write_layout(path: Path, *, dim: int, pooling: str, max_length: int, prefix: str) -> None:
    """The sentence-transformers files around a transformer folder (``modules.json``: Transformer, Pooling,
    Normalize; ``1_Pooling/config.json``, ``2_Normalize``, ``sentence_bert_config.json``,
    ``config_sentence_transformers.json``) and our own config. ``Normalize`` ends the stack because
    :meth:`SentenceEncoder.encode` normalizes by default: so ``SentenceTransformer(path).encode`` gives its vectors,
    as a registered version's pipeline does (:func:`~interlingua.models.registry.log_and_register_encoder`, which
    finds the module here and adds none); :meth:`SentenceEncoder.from_folder` reads the folder back as ``normalized``.
    ``modules.json`` is written whole, so a folder saved again keeps one ``Normalize``."""
    modules = [
        {"idx": 0, "name": "0", "path": "", "type": "sentence_transformers.models.Transformer"},
        {"idx": 1, "name": "1", "path": "1_Pooling", "type": "sentence_transformers.models.Pooling"},
        {"idx": 2, "name": "2", "path": "2_Normalize", "type": "sentence_transformers.models.Normalize"},
    ]
    (path / "2_Normalize").mkdir(exist_ok=True)
    _write_json(path / "modules.json", modules)
    _write_json(path / "sentence_bert_config.json", {"max_seq_length": max_length, "do_lower_case": False})
    (path / "1_Pooling").mkdir(exist_ok=True)
    _write_json(path / "1_Pooling" / "config.json", {
        "word_embedding_dimension": dim,
        "pooling_mode_cls_token": pooling == "cls",
        "pooling_mode_mean_tokens": pooling == "mean",
        "pooling_mode_max_tokens": pooling == "max",
        "pooling_mode_mean_sqrt_len_tokens": False,
    })
    st_config = {"similarity_fn_name": "cosine", "prompts": {}, "default_prompt_name": None}
    if prefix:
        st_config.update(prompts={"default": prefix}, default_prompt_name="default")
    _write_json(path / "config_sentence_transformers.json", st_config)
    _write_json(path / ENCODER_CONFIG, {"pooling": pooling, "max_length": max_length, "prefix": prefix})


def add_layout(path: str | Path) -> Path:
    """Give a plain Hugging Face folder (``config.json``, weights, tokenizer; no ``modules.json``) the
    sentence-transformers layout :meth:`SentenceEncoder.save` writes (ending in ``Normalize``), with the settings
    :meth:`SentenceEncoder.from_folder` reads from it (mean pooling, its max length), without loading the weights.
    A folder that has ``modules.json`` is left as it is."""
    from transformers import AutoConfig

    path = Path(path)
    if not (path / "modules.json").exists():
        config = AutoConfig.from_pretrained(str(path), local_files_only=True)
        write_layout(path, dim=int(config.hidden_size), **_settings(_read_folder_settings(path), config))
    return path


#: Truncation length of a folder when neither its tokenizer nor its model's positions give one.
_DEFAULT_MAX_LENGTH = 128
#: A tokenizer's ``model_max_length`` at or above this means "no limit" (transformers writes 1e30).
_NO_LIMIT = 1e6
#: sentence-transformers' pooling flags before ``pooling_mode`` (v5 and earlier), in its order.
_LEGACY_POOLING_KEYS = {"pooling_mode_cls_token": "cls", "pooling_mode_max_tokens": "max",
                        "pooling_mode_mean_tokens": "mean", "pooling_mode_mean_sqrt_len_tokens": "mean_sqrt_len_tokens",
                        "pooling_mode_weightedmean_tokens": "weightedmean", "pooling_mode_lasttoken": "lasttoken"}
#: Model types whose position ids start after the padding index (``padding_idx + 1``).
_OFFSET_POSITIONS = frozenset({"roberta", "xlm-roberta", "xlm-roberta-xl", "camembert"})


def module_names(folder: str | Path) -> list[str]:
    """Class names of the sentence-transformers modules in ``folder``'s ``modules.json``, in order ([] for a plain
    Hugging Face folder)."""
    modules = Path(folder) / "modules.json"
    if not modules.is_file():
        return []
    return [str(m.get("type", "")).rsplit(".", 1)[-1] for m in json.loads(modules.read_text(encoding="utf-8"))]


def lowercases_input(folder: Path) -> bool:
    """Whether ``folder``'s ``sentence_bert_config.json`` asks for lowercased input (``do_lower_case``; no file: no)."""
    return bool(json_or_empty(Path(folder) / "sentence_bert_config.json").get("do_lower_case"))


def lowercase_input(tokenizer) -> None:
    """Make ``tokenizer`` lowercase its input (prompt included) first, as sentence-transformers' ``do_lower_case``
    does: a ``Lowercase`` step ahead of a fast tokenizer's normalizer, unless one is there already (so ``save``
    keeps it in ``tokenizer.json``); a slow tokenizer's ``do_lower_case`` flag."""
    backend = getattr(tokenizer, "backend_tokenizer", None) if getattr(tokenizer, "is_fast", False) else None
    if backend is None:
        target = tokenizer if hasattr(tokenizer, "do_lower_case") else getattr(tokenizer, "basic_tokenizer", None)
        if target is None:
            raise UserError(f"{type(tokenizer).__name__} cannot be made to lowercase its input, which the folder's "
                            "do_lower_case asks for (hint: load it with sentence-transformers)")
        target.do_lower_case = True
        return
    from tokenizers import normalizers

    current = backend.normalizer
    steps = list(current) if isinstance(current, normalizers.Sequence) else [current] if current is not None else []
    if not any(isinstance(step, normalizers.Lowercase) for step in steps):
        backend.normalizer = normalizers.Sequence([normalizers.Lowercase(), *steps])


def reading_mark(folder: str | Path) -> str:
    """What :meth:`SentenceEncoder.from_folder` (no overrides) now reads otherwise in ``folder`` than it did, for
    its identity (:func:`~interlingua.models.identity.model_identity`), so an embedding cache or corpus version keyed
    before does not serve its old vectors: ``+max_length=N`` when the folder names no max length and reads ``N``
    tokens, not min(128, positions) as it did; ``+do_lower_case`` when ``sentence_bert_config.json`` asks for
    lowercasing, which was ignored. ``""`` otherwise: a folder that names its max length (ours, the e5-small asset)
    or is read at the length it was (a registered version, whose length sentence-transformers writes as the
    tokenizer's, of a model trained at 128 tokens) keeps its key."""
    path = Path(folder)
    mark = "+do_lower_case" if lowercases_input(path) else ""
    saved = _read_folder_settings(path)
    if saved.get("max_length") or not (path / "config.json").is_file():
        return mark
    from transformers import AutoConfig

    try:
        config = AutoConfig.from_pretrained(str(path), local_files_only=True)
    except (OSError, ValueError):  # a config transformers cannot read: loading the folder says why
        return mark
    length = _settings(saved, config)["max_length"]
    before = min(_DEFAULT_MAX_LENGTH, _position_limit(config) or _DEFAULT_MAX_LENGTH)
    return (f"+max_length={length}" if length != before else "") + mark


def folder_pooling_and_prefix(path: str | Path) -> tuple[str, str]:
    """The pooling and prefix a folder's encoder uses (:meth:`SentenceEncoder.from_folder` without overrides)."""
    settings = _settings(_read_folder_settings(Path(path)), None)
    return settings["pooling"], settings["prefix"]


def pooling_refusal(folder: str | Path) -> str:
    """Why :class:`SentenceEncoder` cannot pool as ``folder``'s ``1_Pooling`` says (a mode it does not compute, or
    ``include_prompt`` false under a prompt); "" when it can. ``SentenceTransformer`` runs such a folder:
    :func:`~interlingua.models.load.load_text_encoder` hands it over."""
    return _folder_settings(Path(folder))[1]


def _read_folder_settings(path: Path) -> dict:
    """:func:`_folder_settings`; a pooling our encoder does not compute is a :class:`UserError` (it used to be read
    as mean pooling)."""
    settings, refusal = _folder_settings(path)
    if refusal:
        raise UserError(f"{path}: {refusal} (hint: as a --model spec of embed or eval, or with load_text_encoder, it "
                        "runs through sentence-transformers)")
    return settings


def _folder_settings(path: Path) -> tuple[dict, str]:
    """Pooling / max length / prefix from our config, else from a sentence-transformers layout as
    sentence-transformers reads it: ``1_Pooling/config.json``'s ``pooling_mode`` (v6) or its ``pooling_mode_*``
    flags (earlier); ``sentence_bert_config.json``'s ``max_seq_length``, else (v6 leaves it out; a plain
    Hugging Face folder has none) the tokenizer's ``model_max_length`` as ``tokenizer_max_length``, which
    :func:`_settings` caps by the model's positions; the default prompt. With them, why our encoder cannot pool as
    the folder says ("" when it can)."""
    ours = path / ENCODER_CONFIG
    if ours.exists():
        return json.loads(ours.read_text()), ""
    settings: dict = {}
    refusal = ""
    include_prompt = True
    pooling_cfg = path / "1_Pooling" / "config.json"
    if pooling_cfg.exists():
        cfg = json.loads(pooling_cfg.read_text())
        mode = cfg.get("pooling_mode")
        if mode is None:
            mode = [name for key, name in _LEGACY_POOLING_KEYS.items() if cfg.get(key)] or ["mean"]
        modes = [mode] if isinstance(mode, str) else list(mode)
        if len(modes) == 1 and modes[0] in POOLING_MODES:
            settings["pooling"] = modes[0]
        else:
            refusal = (f"sentence-transformers pooling {'+'.join(map(str, modes))} is not one this encoder computes "
                       f"({', '.join(POOLING_MODES)})")
        include_prompt = bool(cfg.get("include_prompt", True))
    sbert = path / "sentence_bert_config.json"
    sbert_cfg = json.loads(sbert.read_text()) if sbert.exists() else {}
    if sbert_cfg.get("max_seq_length"):
        settings["max_length"] = int(sbert_cfg["max_seq_length"])
    else:
        tokenizer_cfg = path / "tokenizer_config.json"
        limit = json.loads(tokenizer_cfg.read_text()).get("model_max_length") if tokenizer_cfg.exists() else None
        if isinstance(limit, (int, float)) and 0 < limit < _NO_LIMIT:  # "no limit" is written as a huge number
            settings["tokenizer_max_length"] = int(limit)
    st_cfg = path / "config_sentence_transformers.json"
    if st_cfg.exists():
        cfg = json.loads(st_cfg.read_text())
        name = cfg.get("default_prompt_name")
        if name and name in (cfg.get("prompts") or {}):
            settings["prefix"] = cfg["prompts"][name]
    if settings.get("prefix") and not include_prompt and not refusal:
        refusal = "its pooling leaves the prompt's tokens out (include_prompt false), which this encoder does not do"
    return settings, refusal


def _settings(saved: dict, config) -> dict:
    """Pooling, max length and prefix of a folder: what it says (``saved``), else mean pooling and no prefix.
    The max length, as sentence-transformers sets it: ``max_seq_length`` as written; else the tokenizer's
    ``model_max_length`` capped by the model ``config``'s positions; :data:`_DEFAULT_MAX_LENGTH` only when
    neither says (a tokenizer with "no limit" and a config without positions)."""
    length = saved.get("max_length")
    if not length:
        limits = [limit for limit in (saved.get("tokenizer_max_length"), _position_limit(config)) if limit]
        length = min(limits) if limits else _DEFAULT_MAX_LENGTH
    return {"pooling": saved.get("pooling", "mean"), "max_length": length, "prefix": saved.get("prefix", "")}


def _position_limit(config) -> int | None:
    """How many tokens the model's position embeddings take (``max_position_embeddings``, less the offset of
    RoBERTa-style models, which sentence-transformers leaves in and then fails on past it); None when the config
    does not say."""
    positions = getattr(config, "max_position_embeddings", None)
    if not isinstance(positions, int) or positions <= 0:
        return None
    if getattr(config, "model_type", None) in _OFFSET_POSITIONS and getattr(config, "pad_token_id", None) is not None:
        positions -= config.pad_token_id + 1
    return max(1, positions)


def _write_json(path: Path, data) -> None:
    path.write_text(json.dumps(data, indent=2) + "\n")
