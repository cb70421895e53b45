"""Entity vectors from Wikipedia2Vec (Yamada et al. 2020), the initialization EASE uses, trained on a dump here.

Wikipedia2Vec (PyPI ``wikipedia2vec==2.0.0``) learns word and entity vectors jointly with skip-gram over word
contexts, anchor contexts and the link graph. :func:`train_wikipedia2vec` runs its ``train`` command on one
``pages-articles`` dump (a local copy is made for non-local fsspec URLs) and exports the vectors as word2vec
text; :func:`wikipedia2vec_entity_vectors` reads that text and keys each entity vector by our entity id (its
title mapped through redirects and the entity catalog by the caller's ``entity_of_title``).

Wikipedia2Vec saves its model as a pickle. That file only ever exists in a private temporary folder, written
and read back (to export the text) by the same training subprocess, then deleted: what is kept, and what is
read later (possibly from a shared work folder), is plain text.
"""

from __future__ import annotations

import bz2
import codecs
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import fsspec
import numpy as np

from interlingua.core.redact import redact_text
from interlingua.core.runtime import state_tempdir
from interlingua.core.safe_load import UnsafeFileError

_CLI = "from wikipedia2vec.cli import cli; cli()"
_ENTITY = "ENTITY/"
VECTORS_FILE = "vectors.txt"


def wikipedia2vec_available() -> bool:
    import importlib.util

    return importlib.util.find_spec("wikipedia2vec") is not None


def train_wikipedia2vec(
    dump_url: str, out_dir: str, dim: int, iterations: int = 1, workers: int = 1, link_graph: bool = True
) -> str:
    """Train a Wikipedia2Vec model on one dump; returns its vectors as word2vec text (``<out_dir>/vectors.txt``).

    ``link_graph=False`` skips the entity–entity link-graph objective (Wikipedia2Vec cannot build the graph
    of a dump with almost no links, e.g. gensim's one-article Bulgarian excerpt)."""
    for name, value in (("dim", dim), ("iterations", iterations), ("workers", workers)):
        if not isinstance(value, int) or value < 1:
            raise ValueError(f"{name} must be a positive integer, got {value!r}")
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    vectors = out / VECTORS_FILE
    with state_tempdir("w2v-") as scratch:
        local_dump = _local_path(dump_url, Path(scratch))
        model = Path(scratch) / "model.pkl"
        partial = Path(scratch) / VECTORS_FILE
        train = [
            sys.executable, "-c", _CLI, "train", str(local_dump), str(model),
            "--dim-size", str(dim), "--iteration", str(iterations), "--pool-size", str(workers),
            "--min-entity-count", "1", "--link-graph" if link_graph else "--no-link-graph",
        ]  # fmt: skip
        export = [sys.executable, "-c", _CLI, "save-text", str(model), str(partial), "--out-format", "word2vec"]
        for command in (train, export):
            completed = subprocess.run(command, capture_output=True, text=True, check=False)
            if completed.returncode != 0:
                raise RuntimeError(f"wikipedia2vec {command[3]} failed on {redact_text(dump_url)!r}: "
                                   f"{redact_text(completed.stderr[-2000:])}")
        shutil.move(str(partial), vectors)  # the complete text only; the pickle goes with the scratch folder
    return str(vectors)


def wikipedia2vec_entity_vectors(
    vectors_path: str, entity_of_title: Callable[[str], str | None]
) -> dict[str, np.ndarray]:
    """``entity id → vector`` for every entity (``ENTITY/<Title_with_underscores>`` line of the word2vec text
    :func:`train_wikipedia2vec` wrote) whose title maps to an entity id."""
    if not str(vectors_path).endswith(".txt"):
        raise UnsafeFileError(f"{vectors_path}: expected the word2vec text train_wikipedia2vec writes "
                              f"({VECTORS_FILE}); Wikipedia2Vec model pickles are never loaded")
    vectors: dict[str, np.ndarray] = {}
    with fsspec.open(vectors_path, "rt", encoding="utf-8") as handle:
        dim = int(handle.readline().split()[1])
        for line in handle:
            if not line.startswith(_ENTITY):
                continue
            token, *values = line.rstrip("\n").rsplit(" ", dim)
            entity_id = entity_of_title(token[len(_ENTITY):].replace("_", " "))
            if entity_id is not None and entity_id not in vectors:
                vectors[entity_id] = np.asarray(values, dtype=np.float32)
    return vectors


def _local_path(url: str, scratch: Path) -> Path:
    """A local UTF-8 bz2 file with the dump (Wikipedia2Vec reads local UTF-8 files only): the file itself when
    it already is one, else a transcoded copy (e.g. gensim's UTF-16 Bulgarian dump, or a remote URL)."""
    from interlingua.operators.wiki.dump_shards import dump_codec

    fs, path = fsspec.core.url_to_fs(url)
    protocols = fs.protocol if isinstance(fs.protocol, tuple) else (fs.protocol,)
    with fsspec.open(url, "rb") as handle:  # by its magic bytes, as the extraction reads it, not by its name
        codec = dump_codec(handle.read(8))
    with fsspec.open(url, "rb", compression=codec) as handle:
        head = handle.read(4)
    utf16 = head.startswith((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE))
    if "file" in protocols and codec == "bz2" and path.endswith(".bz2") and not utf16:
        return Path(path)
    local = scratch / "dump.xml.bz2"
    with (
        fsspec.open(url, "rt", compression=codec, encoding="utf-16" if utf16 else "utf-8") as source,
        bz2.open(local, "wt", encoding="utf-8") as target,
    ):
        shutil.copyfileobj(source, target)
    return local
