"""Read pretrained entity vectors (Wikipedia2Vec-style) to initialise the EASE entity table.

Two formats, any fsspec URL:

* word2vec text: optional header line ``<count> <dim>``, then ``<entity id> <v_1> ... <v_dim>`` per line
  (Wikipedia2Vec's ``save_text`` writes entities as ``ENTITY/Title``; any id string works).
* ``.npy`` matrix [count, dim] plus a text file with one id per line, in row order.

Bad rows (wrong number of values, non-numeric or non-finite values, repeated ids) are counted and returned with
their line number and reason in :attr:`EntityVectors.rejected`; they never stop the load.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np


@dataclass(frozen=True)
class RejectedRow:
    line: int
    reason: str


@dataclass
class EntityVectors:
    """Entity ids, their vectors [len(ids), dim] (float32) and the rows that could not be used."""

    ids: list[str]
    vectors: np.ndarray
    rejected: list[RejectedRow] = field(default_factory=list)


class _Collector:
    """The ids and vectors accepted so far and the rows rejected with their reason (shared by the loaders)."""

    def __init__(self) -> None:
        self.ids: list[str] = []
        self.rows: list[np.ndarray] = []
        self.rejected: list[RejectedRow] = []
        self.seen: set[str] = set()

    def id_problem(self, entity_id: str | None) -> str | None:
        if not entity_id:
            return "empty id"
        return f"repeated id {entity_id!r}" if entity_id in self.seen else None

    def reject(self, line: int, reason: str) -> None:
        self.rejected.append(RejectedRow(line, reason))

    def add(self, line: int, entity_id: str, vector: np.ndarray) -> None:
        """Keep ``vector`` under ``entity_id`` unless the id is empty or repeated or a value is not finite (then
        reject the row: one NaN or infinite row would make every batch it is a negative in train to NaN)."""
        problem = self.id_problem(entity_id) or (None if np.isfinite(vector).all() else "a value is not finite")
        if problem:
            self.reject(line, problem)
            return
        self.seen.add(entity_id)
        self.ids.append(entity_id)
        self.rows.append(vector)

    def result(self, url: str) -> EntityVectors:
        if not self.rows:
            raise ValueError(f"no usable entity vectors in {url} ({len(self.rejected)} rejected rows)")
        return EntityVectors(ids=self.ids, vectors=np.stack(self.rows), rejected=self.rejected)


def load_word2vec_text(url: str) -> EntityVectors:
    """Read entity vectors from a word2vec text file at ``url`` (fsspec; ``.gz``/``.bz2`` by extension)."""
    from interlingua.core.archives import open_compressed

    found = _Collector()
    dim: int | None = None
    with open_compressed(url, "rt", encoding="utf-8") as handle:
        for line_number, line in enumerate(handle, start=1):
            parts = line.rstrip("\n").rstrip().split(" ")
            if line_number == 1 and len(parts) == 2 and all(part.isdigit() for part in parts):
                dim = int(parts[1])
                continue
            if len(parts) < 2:
                found.reject(line_number, "no vector values")
                continue
            entity_id, values = parts[0], parts[1:]
            if dim is None:
                dim = len(values)
            if len(values) != dim:
                found.reject(line_number, f"{len(values)} values, expected {dim}")
                continue
            try:
                vector = np.asarray(values, dtype=np.float32)
            except ValueError:
                found.reject(line_number, "non-numeric value")
                continue
            found.add(line_number, entity_id, vector)
    return found.result(url)


def load_npy_with_ids(vectors_url: str, ids_url: str) -> EntityVectors:
    """Read a [count, dim] ``.npy`` matrix and its ids (one per line, row order); repeated ids are rejected."""
    import fsspec

    from interlingua.core.safe_load import load_array

    matrix = load_array(vectors_url)
    with fsspec.open(ids_url, "rt", encoding="utf-8") as handle:
        all_ids = [line.rstrip("\n") for line in handle]
    if matrix.ndim != 2 or matrix.shape[0] != len(all_ids):
        raise ValueError(f"{vectors_url} has shape {matrix.shape}, expected ({len(all_ids)}, dim) to match {ids_url}")
    found = _Collector()
    for row, entity_id in enumerate(all_ids):
        found.add(row + 1, entity_id, matrix[row].astype(np.float32))
    return found.result(vectors_url)


#: The manifest of a corpus store's version folder (``operators.corpus``; read here as JSON: trainers are beside the
#: operators, not above them).
MANIFEST_FILE = "manifest.json"
_SEGMENT = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9._-]*$")
_VERSION = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]*$")


def load_parquet_entities(url: str) -> EntityVectors:
    """Read the ``entity_id`` and ``vector`` columns of a parquet file, or of every ``.parquet`` under a folder.

    A published corpus version (the ease-corpus ``<name>-entities`` version folder, its ``data/`` or one of its
    shard files: a folder holding ``manifest.json``) is read as the store reads it: only the shard files its manifest
    lists, each checked against the manifest's size and SHA-256 on the bytes read (``CorruptVersionError``, one line
    naming the file). Elsewhere every ``.parquet`` under the folder (``rejects/`` skipped). Repeated or empty ids and
    vectors of a different length than the first are rejected."""
    import fsspec

    from interlingua.core.parquet_read import read_parquet

    fs, path = fsspec.core.url_to_fs(url)
    published = _published_shards(fs, path.rstrip("/"))
    if published is not None:
        files = published
    elif fs.isdir(path):
        files = [(f, None) for f in sorted(f for f in fs.find(path) if f.endswith(".parquet") and "/rejects/" not in f)]
        if not files:
            raise ValueError(f"no .parquet files under {url}")
    else:
        files = [(path, None)]
    found = _Collector()
    line = 0
    for file, checked in files:
        if checked is not None:
            table = read_parquet(checked(), ["entity_id", "vector"])
        else:
            with fs.open(file, "rb") as handle:
                table = read_parquet(handle, ["entity_id", "vector"])
        for entity_id, vector in zip(table.column("entity_id").to_pylist(), table.column("vector").to_pylist()):
            line += 1
            problem = found.id_problem(entity_id)
            values = np.asarray(vector if vector is not None else [], dtype=np.float32)
            if problem is None and (values.ndim != 1 or values.size == 0
                                    or (found.rows and values.shape != found.rows[0].shape)):
                problem = f"vector of shape {values.shape}"
            if problem:
                found.reject(line, problem)
                continue
            found.add(line, entity_id, values)
    return found.result(url)


def _published_shards(fs, path: str) -> list[tuple[str, Callable[[], bytes]]] | None:
    """``(file, read its checked bytes)`` of each shard of the corpus version that ``path`` is (its folder, its
    ``data/`` folder or one of its shard files), in the manifest's order; None when ``path`` is not in a version
    folder. Read as the store reads it: below the store's root (``<root>/<name>/<version>``) no symbolic link is
    followed (a corpus or version folder, the manifest or a shard that is one is refused: ``StoreLinkError``)."""
    from interlingua.core.integrity import MANIFEST_MAX_BYTES, CorruptVersionError, read_capped, read_checked
    from interlingua.core.no_follow import reading_fs

    parent, _, base = path.rpartition("/")
    if path.endswith(".parquet"):  # <version>/data/<shard>.parquet
        candidates = [parent.rpartition("/")[0]] if parent.endswith("/data") else []
    else:  # <version> or <version>/data
        candidates = [path, parent] if base == "data" else [path]
    folder = next((c for c in candidates if c and fs.isfile(f"{c}/{MANIFEST_FILE}")), None)
    if folder is None:
        return None
    fs = reading_fs(fs, folder.rpartition("/")[0].rpartition("/")[0])  # the store's root
    manifest_path = f"{folder}/{MANIFEST_FILE}"
    data = read_capped(fs, manifest_path, MANIFEST_MAX_BYTES, "manifest")
    try:
        manifest = json.loads(data)
        name, version = manifest["name"], manifest["version"]
        shards = [(shard["path"], shard.get("stored_in") or version, int(shard["bytes"]), str(shard["sha256"]))
                  for shard in manifest["shards"]]
    except (ValueError, KeyError, TypeError) as error:
        raise CorruptVersionError(f"refusing the manifest {manifest_path}: {type(error).__name__}: {error}") from None
    corpus_dir, _, folder_name = folder.rpartition("/")
    bad = [p for p, holder, _, _ in shards if not isinstance(p, str) or not isinstance(holder, str)
           or not _VERSION.match(holder) or any(not _SEGMENT.match(s) for s in p.split("/"))]
    if folder_name != version or not isinstance(name, str) or bad:
        raise CorruptVersionError(f"refusing the manifest {manifest_path}: it names {version!r} or paths outside "
                                  f"its corpus {bad[:3]}")
    files = [(f"{corpus_dir}/{holder}/{relative}", size, sha256) for relative, holder, size, sha256 in shards]
    if path != folder and path.endswith(".parquet"):  # one shard file: it must be one the manifest lists
        files = [f for f in files if f[0] == path]
        if not files:
            raise CorruptVersionError(f"{path} is not a shard of {name}@{version} (its manifest does not list it) "
                                      f"(hint: interlingua corpus verify {name}@{version})")
    return [(file, lambda file=file, size=size, sha256=sha256: read_checked(fs, file, size, sha256, name, version))
            for file, size, sha256 in files]


def load_entity_vectors(url: str, ids_url: str | None = None) -> EntityVectors:
    """Any of the supported formats, by ``url``: ``.npy`` (needs ``ids_url``), ``.parquet`` or a folder
    (:func:`load_parquet_entities`, e.g. the ease-corpus entities), else word2vec text."""
    import fsspec

    if url.endswith(".npy"):
        if not ids_url:
            raise ValueError(f"{url} is a .npy matrix: its ids file (one id per line) is needed too")
        return load_npy_with_ids(url, ids_url)
    fs, path = fsspec.core.url_to_fs(url)
    if url.endswith(".parquet") or fs.isdir(path):
        return load_parquet_entities(url)
    return load_word2vec_text(url)
