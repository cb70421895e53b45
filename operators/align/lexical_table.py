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

import contextlib

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

    @classmethod
    def uninitialized(cls, vocabulary: tuple[str, ...]) -> LexicalTable:
        """The table before fast_align's first M-step: no entry, so every t(f | e) is the floor.

        fast_align's ``TTable::prob`` answers 1e-9 for every pair until the first normalization, so
        ``-I 1`` (one iteration, which only prints alignments) aligns by the prior alone; the table it
        then exports holds its zeroed counts, which ``systran_align.Aligner`` also reads as the floor.
        """
        return cls(tuple(vocabulary), np.zeros(0, np.int64), np.zeros(0, np.float64))

    def lookup(self, conditioning_ids: np.ndarray, predicted_ids: np.ndarray) -> np.ndarray:
        """t(f | e) for arrays of ids of equal shape; unknown or absent pairs get the floor."""
        keys = conditioning_ids.astype(np.int64) * self.stride + predicted_ids.astype(np.int64)
        if self.keys.size == 0:
            return np.full(keys.shape, UNSEEN_PROBABILITY)
        slots = np.searchsorted(self.keys, keys).clip(max=self.keys.size - 1)
        found = (self.keys[slots] == keys) & (conditioning_ids != UNKNOWN_ID) & (predicted_ids != UNKNOWN_ID)
        return np.where(found, self.probabilities[slots], UNSEEN_PROBABILITY)

    def save_npz(self, path: str, compressed: bool = False) -> None:
        """Write the table as a NumPy archive of plain arrays (no pickled objects; :meth:`load_npz`), deflated with
        ``compressed`` (the same bytes for the same table: NumPy dates every member 1980-01-01).

        The vocabulary is stored as its UTF-8 bytes joined (``vocabulary_utf8``) and the end offset
        of each word (``vocabulary_ends``).
        """
        import fsspec

        encoded = [word.encode("utf-8") for word in self.vocabulary]
        ends = np.cumsum([len(word) for word in encoded], dtype=np.int64)
        blob = np.frombuffer(b"".join(encoded), dtype=np.uint8)
        with fsspec.open(path, "wb") as handle:
            save = np.savez_compressed if compressed else np.savez
            save(handle, vocabulary_utf8=blob, vocabulary_ends=ends, keys=self.keys.astype(np.int64),
                 probabilities=self.probabilities.astype(np.float64))

    @classmethod
    def load_npz(cls, path: str, data: bytes | None = None) -> LexicalTable:
        """Read what :meth:`save_npz` wrote (``data``: the file's bytes, already read); never unpickles (an archive
        holding objects is refused). A file that is not such an archive (cut short, damaged, another format) is a
        ``ValueError`` naming ``path``."""
        import io
        import zipfile
        import zlib

        import fsspec

        with (fsspec.open(path, "rb") if data is None else contextlib.nullcontext(io.BytesIO(data))) as handle:
            try:
                with np.load(handle, allow_pickle=False) as archive:
                    arrays = {name: archive[name] for name in archive.files}  # an object array raises here
                missing = [k for k in ("vocabulary_utf8", "vocabulary_ends", "keys", "probabilities") if k not in arrays]
                if missing:
                    raise ValueError(f"it has no {', '.join(missing)} array (it holds {', '.join(arrays) or 'nothing'})")
                blob, ends = arrays["vocabulary_utf8"], arrays["vocabulary_ends"]
                keys, probabilities = arrays["keys"], arrays["probabilities"]
            except (ValueError, EOFError, zipfile.BadZipFile, zlib.error) as err:
                if "allow_pickle" in str(err) or "Object arrays" in str(err):
                    err = ValueError("it holds pickled objects, which are never loaded (a table written before "
                                     "the pickle-free format: learn the parameters again)")
                raise ValueError(f"{path} is not a lexical table archive: {err}") from None
        if blob.dtype != np.uint8 or ends.dtype.kind not in "iu" or keys.dtype.kind not in "iu" or probabilities.dtype.kind != "f":
            raise ValueError(f"{path} is not a lexical table archive: unexpected array types")
        raw = blob.tobytes()
        starts = np.concatenate(([0], ends[:-1])).tolist()
        vocabulary = tuple(raw[a:b].decode("utf-8") for a, b in zip(starts, ends.tolist()))
        if keys.size and not (np.all(np.diff(keys) > 0) and 0 < keys[0] and keys[-1] < (len(vocabulary) + 1) ** 2):
            raise ValueError(f"{path} is not a lexical table archive: keys are not sorted ids of its vocabulary")
        return cls(vocabulary, keys.astype(np.int64), probabilities.astype(np.float64))


def read_systran_table(path: str) -> LexicalTable:
    """Parse a ``systran-align`` probability file (format in the module docstring)."""
    import fsspec

    with fsspec.open(path, "rb") as handle:
        data = handle.read()
    try:
        return _parse(data)
    except (struct.error, IndexError, ValueError) as err:
        raise ValueError(f"{path} is not a systran-align probability file: {err}") from err


def write_systran_table(table: LexicalTable, path: str) -> None:
    """Write ``table`` in the ``systran-align`` probability format (:func:`read_systran_table`'s input),
    probabilities as float32, so ``systran_align.Aligner`` can decode with it. A word holding U+0000 is refused
    (``ValueError``): the format ends each word at a NUL byte, so the file would be corrupt."""
    import fsspec

    holding_nul = next((k for k, word in enumerate(table.vocabulary) if "\0" in word), None)
    if holding_nul is not None:
        raise ValueError(f"word {table.vocabulary[holding_nul]!r} (id {holding_nul + 1}) holds a NUL character, which "
                         "the systran-align format cannot store (it ends each word at NUL)")
    stride = table.stride
    rows = table.keys // stride
    columns = (table.keys % stride).astype("<i4")
    pair = np.dtype([("f", "<i4"), ("p", "<f4")])
    parts = [struct.pack("<ii", 2, len(table.vocabulary))]
    parts += [word.encode("utf-8") + b"\0" for word in table.vocabulary]
    parts.append(struct.pack("<i", stride))
    bounds = np.flatnonzero(np.concatenate(([True], rows[1:] != rows[:-1], [True]))) if rows.size else np.array([0])
    for a, b in zip(bounds[:-1].tolist(), bounds[1:].tolist()):
        entries = np.empty(b - a, dtype=pair)
        entries["f"] = columns[a:b]
        entries["p"] = table.probabilities[a:b]
        parts.append(struct.pack("<ii", int(rows[a]), b - a))
        parts.append(entries.tobytes())
    with fsspec.open(path, "wb") as handle:
        handle.write(b"".join(parts))


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
