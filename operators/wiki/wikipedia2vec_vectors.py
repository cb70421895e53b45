"""Entity vectors from Wikipedia2Vec (Yamada et al. 2020), the initialization EASE uses, trained on a dump here.

Wikipedia2Vec (PyPI ``wikipedia2vec==2.0.0``) learns word and entity vectors jointly with skip-gram over word
contexts, anchor contexts and the link graph. :func:`train_wikipedia2vec` runs its ``train`` command on one
``pages-articles`` dump (a local copy is made for non-local fsspec URLs) and exports the vectors as word2vec
text; :func:`wikipedia2vec_entity_vectors` reads that text and keys each entity vector by our entity id (its
title mapped through redirects and the entity catalog by the caller's ``entity_of_title``).

Wikipedia2Vec 2.0 takes no seed: it draws its initial vectors, page order and link samples from unseeded NumPy and
``random`` generators, and each of its pool's worker processes reseeds from the OS, so two trainings of the same dump
differ, whatever the pool size; with more than one process, the workers also update the shared vectors in the order
they happen to run. :func:`train_wikipedia2vec` therefore runs it on one process (``--pool-size 1``) with every
generator seeded from ``seed``: the vectors depend on the dump, ``dim``, ``iterations``, ``link_graph`` and ``seed``
(and :data:`TRAINING_VERSION`), never on how many workers the build has. That seeding rests on 2.0.0's internals (its
pool worker's argument-less ``numpy.random.seed()``), so the installed Wikipedia2Vec version
(:func:`wikipedia2vec_version`) names the cached vectors' folder and enters the entities version's ``vector_source``:
another version's vectors are never taken for these, nor published under their id.

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

_ENTITY = "ENTITY/"
VECTORS_FILE = "vectors.txt"
#: What :func:`train_wikipedia2vec` writes for a dump and its settings, in its version: raised whenever a change to the
#: training changes the vectors (2: seeded, on one process), so a cached training of the code before is never reused.
TRAINING_VERSION = 2


def _cli(seed: int) -> str:
    """The code a training subprocess runs: Wikipedia2Vec's command line with NumPy's and ``random``'s generators
    seeded, and the argument-less ``numpy.random.seed()`` its pool's worker calls seeded too (the worker is forked, so
    it runs the seeding of this process, not a fresh interpreter's)."""
    numpy_seed = int(seed) % (1 << 32)  # NumPy's legacy seeds are 32-bit
    return (
        "import multiprocessing, random, numpy\n"
        "multiprocessing.set_start_method('fork', force=True)\n"
        f"random.seed({int(seed)})\nnumpy.random.seed({numpy_seed})\n"
        "_seed = numpy.random.seed\n"
        f"numpy.random.seed = lambda seed=None: _seed({numpy_seed} if seed is None else seed)\n"
        "from wikipedia2vec.cli import cli\ncli()"
    )


def vectors_folder(base: str, lang: str, dim: int, iterations: int, seed: int) -> str:
    """``<base>/wikipedia2vec/<lang>-d<dim>-i<iterations>-s<seed>-v<TRAINING_VERSION>-w<wikipedia2vec version>``:
    where the ease-corpus build keeps one dump's trained vectors (``base``: its extraction folder, named by the dump's
    fingerprint), named by everything else that determines them, so a rerun reuses them only when they would come
    out the same."""
    return f"{base}/wikipedia2vec/{lang}-d{dim}-i{iterations}-s{seed}-v{TRAINING_VERSION}-w{wikipedia2vec_version()}"


def vector_source() -> str:
    """The entities manifest's ``vector_source`` of vectors trained here (it enters that version's id), with the
    installed Wikipedia2Vec's version: the unseeded trainings before, each run's vectors different, were
    ``wikipedia2vec``."""
    return f"wikipedia2vec {wikipedia2vec_version()} (seeded by seed, one process)"


def wikipedia2vec_version() -> str:
    """The installed Wikipedia2Vec's version (``none`` when it is not installed)."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("wikipedia2vec")
    except PackageNotFoundError:
        return "none"


def wikipedia2vec_available() -> bool:
    import importlib.util

    return importlib.util.find_spec("wikipedia2vec") is not None


def train_wikipedia2vec(
    dump_url: str, out_dir: str, dim: int, iterations: int = 1, seed: int = 0, link_graph: bool = True
) -> str:
    """Train a Wikipedia2Vec model on one dump; returns its vectors as word2vec text (``<out_dir>/vectors.txt``).
    Seeded by ``seed``, on one process: the same arguments write the same bytes (see the module doc).

    ``link_graph=False`` skips the entity–entity link-graph objective (Wikipedia2Vec cannot build the graph
    of a dump with almost no links, e.g. gensim's one-article Bulgarian excerpt)."""
    for name, value in (("dim", dim), ("iterations", iterations)):
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
            sys.executable, "-c", _cli(seed), "train", str(local_dump), str(model),
            "--dim-size", str(dim), "--iteration", str(iterations), "--pool-size", "1",
            "--min-entity-count", "1", "--link-graph" if link_graph else "--no-link-graph",
        ]  # fmt: skip
        export = [sys.executable, "-c", _cli(seed), "save-text", str(model), str(partial), "--out-format", "word2vec"]
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
