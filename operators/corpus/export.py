"""Export a published corpus version for tools outside interlingua.

``parquet``: a self-contained folder — ``data/<shard>.parquet``, ``rejects/<shard>.parquet``, the
dataset card ``README.md`` and ``manifest.json`` — that ``datasets.load_dataset(DIR)`` and
``pandas.read_parquet(DIR/data)`` read as is (every file copied in is checked against its manifest's size
and SHA-256 first: ``CorruptVersionError`` naming the one that differs). ``hf``: ``DatasetDict.save_to_disk``
of ``CorpusStore.to_hf`` (``train`` and ``rejects``), for ``datasets.load_from_disk(DIR)``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Literal

from fsspec.core import url_to_fs

from interlingua.core.integrity import read_checked
from interlingua.operators.corpus.dataset_card import CARD_FILE, dataset_card

if TYPE_CHECKING:
    from interlingua.operators.corpus.store import CorpusStore

ExportFormat = Literal["parquet", "hf"]


def export_version(store: CorpusStore, name: str, version: str, out: str, fmt: ExportFormat = "parquet") -> str:
    """Write version ``version`` of ``name`` to the folder ``out`` (any fsspec URL); returns its id.
    Refuses a non-empty ``out`` (an export never mixes with other files)."""
    if fmt not in ("parquet", "hf"):
        raise ValueError(f"format must be 'parquet' or 'hf', got {fmt!r}")
    manifest = store.manifest(name, version)
    fs, root = url_to_fs(out)
    root = root.rstrip("/")
    store_fs, store_root = url_to_fs(store.root)
    store_root = store_root.rstrip("/")
    if "://" not in out and "://" not in store.root:  # local: the folders links lead to
        import os

        root, store_root = os.path.realpath(root), os.path.realpath(store_root)
    inside = root[len(store_root):].strip("/").split("/") if root == store_root or root.startswith(store_root + "/") else None
    if type(fs) is type(store_fs) and inside is not None and (len(inside) > 1 or inside[0] in ("", *store.corpus_names())):
        # a copy inside a corpus's folder looks like a version of it, and the store reads it as one
        raise ValueError(f"{out} is inside the corpus store {store.root} (in a corpus's folder); export to a folder "
                         "outside it")
    if fs.exists(root) and fs.ls(root, detail=False):
        raise ValueError(f"{out} exists and is not empty; export into a new folder")
    if fmt == "hf":
        store.to_hf(name, manifest.version).save_to_disk(out)
        return manifest.version
    local_shards = []
    for shard in manifest.shards:
        for relative, size, expected in ((shard.path, shard.bytes, shard.sha256),
                                         (shard.rejects_path, None, shard.rejects_sha256)):
            if relative is None:
                continue
            data = read_checked(store.fs, store._file_path(manifest.name, manifest.version, shard, relative), size,
                                expected, manifest.name, manifest.version)
            fs.makedirs(f"{root}/{relative.rsplit('/', 1)[0]}", exist_ok=True)
            fs.pipe_file(f"{root}/{relative}", data)
        local_shards.append(shard.model_copy(update={"stored_in": None}))
    exported = manifest.model_copy(update={"shards": tuple(local_shards), "artifacts": ()})
    fs.pipe_file(f"{root}/{CARD_FILE}", dataset_card(exported).encode("utf-8"))
    fs.pipe_file(f"{root}/manifest.json", exported.to_json().encode("utf-8"))
    return manifest.version
