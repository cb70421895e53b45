"""Entity vectors that initialize the trainer's entity table (EASE initializes it from Wikipedia2Vec).

- :func:`load_entity_vectors`: a provided file, word2vec text format (``count dim`` header, then
  ``token v1 … vd`` lines; tokens may be ``ENTITY/<id>`` as Wikipedia2Vec writes them, or bare ids), or a
  ``.npy`` matrix with a sidecar ``.ids.txt`` (one id per line, row order).
- :func:`train_entity_vectors`: no file given → a skip-gram (gensim ``Word2Vec``, ``sg=1``) over sequences
  in the spirit of Wikipedia2Vec: each linked sentence as words with every link's words replaced by its entity
  token (word–entity context), and each page's linked entities as one sequence (entity–entity, the link graph).
- :func:`vectors_for`: the matrix for a vocabulary, in vocabulary order; entities without a vector get a seeded
  random normal vector (scaled to the mean norm), counted in the returned ``missing``.
"""

from __future__ import annotations

import re
import zlib
from collections.abc import Iterable, Mapping, Sequence

import fsspec
import numpy as np

from interlingua.core.archives import open_compressed
from interlingua.core.safe_load import load_array

ENTITY_PREFIX = "ENTITY/"
_WORD = re.compile(r"\w+")


def vector_files(url: str, ids_url: str | None = None) -> list[str]:
    """The files :func:`load_entity_vectors` reads for ``url``: the vectors, and for a ``.npy`` matrix its ids file
    (``ids_url``, default ``<stem>.ids.txt``; a word2vec text file has its ids inside)."""
    if url.endswith(".npy"):
        return [url, ids_url or url[: -len(".npy")] + ".ids.txt"]
    return [url]


def load_entity_vectors(url: str, ids_url: str | None = None) -> dict[str, np.ndarray]:
    """``entity id → vector`` from a word2vec text file, or a ``.npy`` matrix plus an ids file
    (default ``<stem>.ids.txt``)."""
    if url.endswith(".npy"):
        ids_url = vector_files(url, ids_url)[1]
        matrix = load_array(url)
        with fsspec.open(ids_url, "rt", encoding="utf-8") as handle:
            ids = [line.rstrip("\n") for line in handle if line.strip()]
        if matrix.ndim != 2 or matrix.shape[0] != len(ids):
            raise ValueError(f"{url!r} has shape {matrix.shape}; expected ({len(ids)}, dim) to match {ids_url!r}")
        return {_strip_prefix(i): matrix[row].astype(np.float32) for row, i in enumerate(ids)}
    vectors: dict[str, np.ndarray] = {}
    with open_compressed(url, "rt", encoding="utf-8") as handle:
        header = handle.readline().split()
        if len(header) != 2 or not all(part.isdigit() for part in header):
            raise ValueError(f"{url!r} is not word2vec text format: first line should be 'count dim', got {header!r}")
        dim = int(header[1])
        for line_number, line in enumerate(handle, start=2):
            parts = line.rstrip("\n").rsplit(" ", dim)
            if len(parts) != dim + 1:
                raise ValueError(f"{url!r} line {line_number}: expected a token and {dim} numbers")
            vectors[_strip_prefix(parts[0].replace("_", " ") if parts[0].startswith(ENTITY_PREFIX) else parts[0])] = (
                np.asarray(parts[1:], dtype=np.float32)
            )
    return vectors


def _strip_prefix(token: str) -> str:
    return token[len(ENTITY_PREFIX) :] if token.startswith(ENTITY_PREFIX) else token


def entity_context_sequences(
    sentences: Iterable[tuple[str, Sequence[int], Sequence[int], Sequence[str]]],
) -> list[list[str]]:
    """Token sequences for skip-gram: words with link spans replaced by ``ENTITY/<id>`` tokens.

    Input: ``(sentence, starts, ends, entity_ids)`` with ``None`` ids for links to skip.
    """
    sequences: list[list[str]] = []
    for sentence, starts, ends, ids in sentences:
        tokens: list[str] = []
        cursor = 0
        for start, end, entity in sorted(zip(starts, ends, ids, strict=True), key=lambda link: link[0]):
            tokens.extend(word.lower() for word in _WORD.findall(sentence[cursor:start]))
            tokens.append(ENTITY_PREFIX + entity if entity else sentence[start:end].lower())
            cursor = end
        tokens.extend(word.lower() for word in _WORD.findall(sentence[cursor:]))
        sequences.append(tokens)
    return sequences


def train_entity_vectors(
    sequences: list[list[str]], dim: int = 768, window: int = 5, epochs: int = 5, seed: int = 0
) -> dict[str, np.ndarray]:
    """Skip-gram vectors of every ``ENTITY/`` token in ``sequences`` (gensim Word2Vec, ``sg=1``, min_count 1), the
    same bytes for the same arguments: one worker thread (on more, gensim's threads update the vectors in the order
    they happen to run, and each run's differ) and a hash function that is not Python's per-process salted ``hash``
    (gensim 4.4 initializes the vectors from ``seed`` alone; older releases seeded each from ``hashfxn(word)``)."""
    if dim < 1:
        raise ValueError(f"dim must be a positive integer, got {dim!r}")
    from gensim.models import Word2Vec

    model = Word2Vec(
        sentences=sequences,
        vector_size=dim,
        window=window,
        min_count=1,
        sg=1,
        epochs=epochs,
        seed=seed,
        workers=1,
        hashfxn=_stable_hash,
    )
    return {
        token[len(ENTITY_PREFIX) :]: model.wv[token].astype(np.float32)
        for token in model.wv.index_to_key
        if token.startswith(ENTITY_PREFIX)
    }


def _stable_hash(text: str) -> int:
    """A hash of ``text`` that is the same in every process (CRC-32 of its UTF-8), for gensim's ``hashfxn``."""
    return zlib.crc32(text.encode("utf-8"))


def vectors_for(
    vocabulary: Sequence[str], vectors: Mapping[str, np.ndarray], dim: int, seed: int = 0
) -> tuple[np.ndarray, int]:
    """``(matrix [len(vocabulary), dim], missing)``; rows without a vector are seeded random normals."""
    matrix = np.zeros((len(vocabulary), dim), dtype=np.float32)
    known = [v for v in vectors.values() if v.shape == (dim,)]
    scale = float(np.mean([np.linalg.norm(v) for v in known])) / np.sqrt(dim) if known else 1.0 / np.sqrt(dim)
    rng = np.random.default_rng(seed)
    missing = 0
    for row, entity in enumerate(vocabulary):
        vector = vectors.get(entity)
        if vector is not None and vector.shape != (dim,):
            raise ValueError(f"vector of {entity!r} has dimension {vector.shape[0]}, expected {dim}")
        if vector is None:
            missing += 1
            vector = rng.normal(0.0, scale, size=dim).astype(np.float32)
        matrix[row] = vector
    return matrix, missing
