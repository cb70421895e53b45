"""Reading word2vec / fastText vector files (text ``.vec`` / ``.txt`` or binary ``.bin``) without pickle.

The text format is parsed here so a bad file gets an error naming it and the line: a header that is not
``<count> <dim>``, a vector with a different number of values (mixed dimensions), a value that is not a
number, fewer or more vectors than the header says. Binary files go through gensim's
``KeyedVectors.load_word2vec_format`` (no pickle), after the same header check. A word listed twice keeps its
first vector in both formats (gensim's rule for either); the later lines are counted (``stats``), not used. ``KeyedVectors.load``
(pickle) is never used: vector files may come from anywhere."""

from __future__ import annotations

import logging
from pathlib import Path

import numpy as np

from interlingua.core.errors import UserError


def read_word_vectors(path: str | Path, binary: bool | None = None, *,
                      stats: dict[str, int] | None = None) -> tuple[list[str], np.ndarray]:
    """(distinct words, float32 matrix (words, dim)); ``binary`` defaults to ``path.endswith('.bin')``.

    A repeated word keeps its first vector; ``stats`` (a dict, if given) gets ``repeated_words``: the lines of the
    header's count that repeated an earlier word."""
    stats = {} if stats is None else stats
    path = Path(path)
    if not path.is_file():
        raise UserError(f"word-vector file {path} does not exist")
    binary = path.suffix == ".bin" if binary is None else binary
    with path.open("rb") as handle:
        count, dim = _header(path, handle.readline())
    if binary:
        words, matrix = _read_binary(path, count, dim)
        stats["repeated_words"] = count - len(words)
        return words, matrix
    words, rows, seen, repeated = [], [], set(), 0
    with path.open("r", encoding="utf-8", errors="strict") as handle:
        handle.readline()
        for number, line in enumerate(handle, start=2):
            parts = line.rstrip("\n").rstrip(" ").split(" ")
            if len(parts) == 1 and not parts[0]:
                continue
            if len(parts) != dim + 1:
                raise UserError(f"{path}, line {number}: {len(parts) - 1} values for {parts[0]!r}; the header says {dim} "
                                "(mixed dimensions or a wrong dimension line)")
            try:
                with np.errstate(over="ignore"):  # a value beyond float32 becomes inf, refused below
                    row = np.asarray(parts[1:], dtype=np.float32)
            except ValueError:
                raise UserError(f"{path}, line {number}: a value of {parts[0]!r} is not a number") from None
            if not np.isfinite(row).all():  # NaN, inf, or beyond float32's range
                raise UserError(f"{path}, line {number}: the vector of {parts[0]!r} holds NaN or inf")
            if parts[0] in seen:
                repeated += 1
                continue
            seen.add(parts[0])
            rows.append(row)
            words.append(parts[0])
    if len(words) + repeated != count:
        raise UserError(f"{path}: the header says {count} vectors, the file holds {len(words) + repeated}")
    stats["repeated_words"] = repeated
    matrix = np.stack(rows) if rows else np.zeros((0, dim), dtype=np.float32)
    return words, matrix


def write_word_vectors(path: str | Path, words: list[str], matrix: np.ndarray) -> Path:
    """Write the word2vec text format (``<count> <dim>`` then ``word v1 ... vd``)."""
    path = Path(path)
    matrix = np.asarray(matrix, dtype=np.float32)
    if len(words) != len(matrix):
        raise ValueError(f"{len(words)} words for {len(matrix)} vectors")
    bad = [w for w in words if not w or any(c.isspace() for c in w)]
    if bad:
        raise ValueError(f"words must be non-empty without whitespace; got {bad[0]!r}")
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w", encoding="utf-8") as handle:
        handle.write(f"{len(words)} {matrix.shape[1]}\n")
        for word, row in zip(words, matrix):
            handle.write(word + " " + " ".join(f"{v:.6g}" for v in row) + "\n")
    return path


def _header(path: Path, line: bytes) -> tuple[int, int]:
    try:
        count, dim = (int(v) for v in line.decode("utf-8").split())
    except (UnicodeDecodeError, ValueError):
        raise UserError(f"{path}: first line {line[:60]!r} is not a word2vec header '<count> <dim>'") from None
    if count < 0 or dim < 1:
        raise UserError(f"{path}: header says {count} vectors of dimension {dim}")
    return count, dim


def _read_binary(path: Path, count: int, dim: int) -> tuple[list[str], np.ndarray]:
    from gensim.models import KeyedVectors

    logger = logging.getLogger("gensim.models.keyedvectors")  # one warning per repeated word: counted by the caller
    level = logger.level
    logger.setLevel(logging.ERROR)
    try:
        vectors = KeyedVectors.load_word2vec_format(str(path), binary=True)
    except (ValueError, EOFError, UnicodeDecodeError) as err:
        raise UserError(f"{path}: not a valid word2vec binary file with {count} vectors of dimension {dim} ({err})") from err
    finally:
        logger.setLevel(level)
    # gensim keeps a repeated word's first vector (4.4 leaves the repeat's slot at the end: key None, a zero row; a
    # later version may drop it); a file cut short raises EOFError above
    words = [word for word in vectors.index_to_key if word is not None]
    matrix = np.asarray(vectors.vectors, dtype=np.float32)[[vectors.key_to_index[word] for word in words]]
    if matrix.shape != (len(words), dim) or len(words) > count:
        raise UserError(f"{path}: header says {count} x {dim}, read {matrix.shape[0]} x {matrix.shape[1]}")
    if not np.isfinite(matrix).all():
        raise UserError(f"{path}: vectors hold NaN or inf")
    return words, matrix
