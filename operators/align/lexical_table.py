"""fast_align's lexical translation table t(f | e), read from the binary file ``systran-align`` writes.

``systran_align.generate_alignment_probabilities`` saves each direction's table as (little endian):

- ``int32`` format version (2), ``int32`` vocabulary size ``V``, then ``V`` NUL-terminated UTF-8
  words. Word ids are 1-based in file order (fast_align's ``Dict``: ``<eps>``, the NULL word, is 1).
- ``int32`` table size, then until end of file one record per conditioning word ``e`` that has
  entries: ``int32 e``, ``int32 k``, then ``k`` pairs ``(int32 f, float32 t(f | e))``.

Pairs missing from the table (never co-occurring, or pruned by the beam when the table was
written) get fast_align's floor probability :data:`UNSEEN_PROBABILITY`, as do unknown words.

In memory the table is a sorted array of keys ``e * stride + f`` with their probabilities, so a
whole batch of (e, f) lookups is one ``np.searchsorted``.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass
from functools import cached_property

import numpy as np

#: fast_align's probability for a (e, f) pair absent from the table (``TTable::prob``'s 1e-9).
UNSEEN_PROBABILITY = 1e-9
#: The NULL word as fast_align spells it.
NULL_WORD = "<eps>"
#: Id given to words absent from the vocabulary (never a key in the table).
UNKNOWN_ID = 0


@dataclass(frozen=True)
class LexicalTable:
    """t(f | e) for one direction: ``vocabulary[id - 1]`` is the word with id ``id``."""

    vocabulary: tuple[str, ...]
    keys: np.ndarray  # int64, sorted, e * stride + f
    probabilities: np.ndarray  # float64, aligned with keys

    @property
    def stride(self) -> int:
        return len(self.vocabulary) + 1

    @cached_property
    def word_ids(self) -> dict[str, int]:
        """Word -> 1-based id (unknown words are not in the map; use :data:`UNKNOWN_ID`)."""
        return {word: index + 1 for index, word in enumerate(self.vocabulary)}

    @property
    def null_id(self) -> int:
        """Id of the NULL word ``<eps>`` (:data:`UNKNOWN_ID` if the table has none)."""
        return self.word_ids.get(NULL_WORD, UNKNOWN_ID)

    def lookup(self, conditioning_ids: np.ndarray, predicted_ids: np.ndarray) -> np.ndarray:
        """t(f | e) for arrays of ids of equal shape; unknown or absent pairs get the floor."""
        keys = conditioning_ids.astype(np.int64) * self.stride + predicted_ids.astype(np.int64)
        if self.keys.size == 0:
            return np.full(keys.shape, UNSEEN_PROBABILITY)
        slots = np.searchsorted(self.keys, keys).clip(max=self.keys.size - 1)
        found = (self.keys[slots] == keys) & (conditioning_ids != UNKNOWN_ID) & (predicted_ids != UNKNOWN_ID)
        return np.where(found, self.probabilities[slots], UNSEEN_PROBABILITY)

    def save_npz(self, path: str) -> None:
        """Write the table as a NumPy archive (what alignment actors load)."""
        import fsspec

        with fsspec.open(path, "wb") as handle:
            np.savez(handle, vocabulary=np.array(self.vocabulary, dtype=object), keys=self.keys, probabilities=self.probabilities)

    @classmethod
    def load_npz(cls, path: str) -> LexicalTable:
        import fsspec

        with fsspec.open(path, "rb") as handle:
            data = np.load(handle, allow_pickle=True)
            return cls(tuple(data["vocabulary"].tolist()), data["keys"], data["probabilities"])


def read_systran_table(path: str) -> LexicalTable:
    """Parse a ``systran-align`` probability file (format in the module docstring)."""
    import fsspec

    with fsspec.open(path, "rb") as handle:
        data = handle.read()
    try:
        return _parse(data)
    except (struct.error, IndexError, ValueError) as err:
        raise ValueError(f"{path} is not a systran-align probability file: {err}") from err


def _parse(data: bytes) -> LexicalTable:
    version, size = struct.unpack_from("<ii", data, 0)
    if version != 2:
        raise ValueError(f"format version {version}, expected 2")
    offset = 8
    words: list[str] = []
    for _ in range(size):
        end = data.index(b"\0", offset)
        words.append(data[offset:end].decode("utf-8"))
        offset = end + 1
    offset += 4  # table size (number of conditioning slots); rows are read until end of file
    stride = size + 1
    key_parts: list[np.ndarray] = []
    prob_parts: list[np.ndarray] = []
    pair = np.dtype([("f", "<i4"), ("p", "<f4")])
    while offset < len(data):
        row, count = struct.unpack_from("<ii", data, offset)
        offset += 8
        entries = np.frombuffer(data, dtype=pair, count=count, offset=offset)
        offset += count * pair.itemsize
        key_parts.append(np.int64(row) * stride + entries["f"].astype(np.int64))
        prob_parts.append(entries["p"].astype(np.float64))
    keys = np.concatenate(key_parts) if key_parts else np.empty(0, np.int64)
    probabilities = np.concatenate(prob_parts) if prob_parts else np.empty(0, np.float64)
    order = np.argsort(keys, kind="stable")
    return LexicalTable(tuple(words), keys[order], probabilities[order])
