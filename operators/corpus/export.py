"""Export a published corpus version for tools outside interlingua.

``parquet``: a self-contained folder — ``data/<shard>.parquet``, ``rejects/<shard>.parquet``, the
dataset card ``README.md`` and ``manifest.json`` — that ``datasets.load_dataset(DIR)`` and
``pandas.read_parquet(DIR/data)`` read as is (every file copied in is checked against its manifest's size
and SHA-256 first: ``CorruptVersionError`` naming the one that differs). ``hf``: ``DatasetDict.save_to_disk``
of ``CorpusStore.to_hf`` (``train`` and ``rejects``), for ``datasets.load_from_disk(DIR)``.

An export that fails (a file of the version that is a link or damaged, a full disk) leaves no partial ``DIR`` that
could pass for a finished one: see :func:`_whole_or_nothing`. One that was killed (SIGKILL, power loss) left its hidden
staging folder beside ``DIR``: the next export beside it removes it (see :func:`_remove_stale_staging`).
"""

from __future__ import annotations

import errno
import fcntl
import logging
import os
import re
import shutil
import socket
import uuid
from collections.abc import Iterator
from contextlib import AbstractContextManager, contextmanager
from typing import TYPE_CHECKING, Literal

from fsspec import AbstractFileSystem
from fsspec.core import url_to_fs

from interlingua.core.integrity import read_checked
from interlingua.core.no_follow import is_local
from interlingua.core.url_filesystems import require_known_protocol
from interlingua.operators.corpus.dataset_card import CARD_FILE, dataset_card
from interlingua.core.made_folders import folders_made_for

if TYPE_CHECKING:
    from interlingua.operators.corpus.manifest import Manifest
    from interlingua.operators.corpus.store import CorpusStore

ExportFormat = Literal["parquet", "hf"]

logger = logging.getLogger(__name__)

#: A staging folder's name: ``.<base>.exporting-<host>-<pid>-<12 hex>`` (before, ``.<base>.exporting-<12 hex>``).
_STAGING_NAME = re.compile(r"\..+\.exporting-(?:(?P<host>.+)-(?P<pid>\d+)-)?[0-9a-f]{12}")


def export_version(store: CorpusStore, name: str, version: str, out: str, fmt: ExportFormat = "parquet") -> str:
    """Write version ``version`` of ``name`` to the folder ``out`` (any fsspec URL); returns its id.
    Refuses a non-empty ``out`` (an export never mixes with other files), and one of a protocol fsspec does not know
    (:func:`~interlingua.core.url_filesystems.require_known_protocol`'s one line) before the version is read."""
    if fmt not in ("parquet", "hf"):
        raise ValueError(f"format must be 'parquet' or 'hf', got {fmt!r}")
    require_known_protocol(out)
    manifest = store.manifest(name, version)
    fs, root = url_to_fs(out)
    root = root.rstrip("/")
    store_fs, store_root = url_to_fs(store.root)
    store_root = store_root.rstrip("/")
    if "://" not in out and "://" not in store.root:  # local: the folders links lead to
        root, store_root = os.path.realpath(root), os.path.realpath(store_root)
    inside = root[len(store_root):].strip("/").split("/") if root == store_root or root.startswith(store_root + "/") else None
    if type(fs) is type(store_fs) and inside is not None and (len(inside) > 1 or inside[0] in ("", *store.corpus_names())):
        # a copy inside a corpus's folder looks like a version of it, and the store reads it as one
        raise ValueError(f"{out} is inside the corpus store {store.root} (in a corpus's folder); export to a folder "
                         "outside it")
    if fs.exists(root) and fs.ls(root, detail=False):
        raise _not_empty(out)
    with _whole_or_nothing(fs, root, out) as folder:
        if fmt == "hf":
            dataset = store.to_hf(name, manifest.version)
            # an empty split (no rejects) is saved as one empty shard: datasets writes none by default, and
            # load_from_disk then fails (IndexError) on a split with no data file
            empty = {split: 1 for split, rows in dataset.items() if rows.num_rows == 0}
            with _datasets_progress_bars_off():
                dataset.save_to_disk(fs.unstrip_protocol(folder), num_shards=empty)
        else:
            _write_parquet(store, manifest, fs, folder)
    return manifest.version


@contextmanager
def _datasets_progress_bars_off() -> Iterator[None]:
    """Inside the block, datasets' progress bars ("Saving the dataset (1/1 shards)") stay off the console, as the
    other libraries' output does, unless --verbose or the user's HF_DATASETS_DISABLE_PROGRESS_BARS=0 asks for them."""
    import datasets

    from interlingua.core.console import is_verbose

    wanted = is_verbose() or datasets.config.HF_DATASETS_DISABLE_PROGRESS_BARS is False
    if wanted or datasets.are_progress_bars_disabled():
        yield
        return
    datasets.disable_progress_bars()
    try:
        yield
    finally:
        datasets.enable_progress_bars()


def _write_parquet(store: CorpusStore, manifest: Manifest, fs: AbstractFileSystem, root: str) -> None:
    """The ``parquet`` export of ``manifest`` in the folder ``root`` of ``fs``, its ``manifest.json`` written last."""
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


def _whole_or_nothing(fs: AbstractFileSystem, root: str, out: str) -> AbstractContextManager[str]:
    """The folder to write the export of ``root`` (absent or empty) into, so that ``root`` ends holding a finished
    export or as it was. A local ``root`` that does not exist is written beside it and renamed into place; one that
    exists (empty: a mount point, a folder whose parent is read-only, the working folder) is written in place and
    emptied again on failure, keeping the folder itself (its mode, owner, mount)."""
    if not is_local(fs):
        return _removed_on_failure(fs, root)
    _remove_stale_staging(os.path.dirname(os.path.realpath(root)), out)
    return _emptied_on_failure(root) if os.path.isdir(root) else _renamed_into_place(root, out)


@contextmanager
def _renamed_into_place(root: str, out: str) -> Iterator[str]:
    """On a local disk: a hidden sibling of ``root``, renamed onto it at the end (atomic: even a killed export leaves
    ``root`` untouched), removed, with the parents made for it, when the export fails."""
    target = os.path.realpath(root)
    parent, base = os.path.split(target)
    with folders_made_for([parent]):  # the parents made for it go too when the export fails
        os.makedirs(parent, exist_ok=True)
        with _locked_staging(parent, base) as staging:
            yield staging
            try:
                os.rename(staging, target)  # replaces an empty folder, never one with files
            except OSError as error:
                if error.errno in (errno.ENOTEMPTY, errno.EEXIST):
                    raise _not_empty(out) from None
                raise


@contextmanager
def _locked_staging(parent: str, base: str) -> Iterator[str]:
    """A new staging folder for ``base`` in ``parent``, locked in the block (a later export sees that it is no killed
    export's) and removed when the block fails. It is made under a name no export cleans up and renamed to its staging
    name once locked (the lock stays with the folder), so no export beside it ever sees it unlocked."""
    owner = f"{_this_host()}-{os.getpid()}-{uuid.uuid4().hex[:12]}"
    unnamed, staging = (os.path.join(parent, f".{base}.{stage}-{owner}") for stage in ("locking", "exporting"))
    os.mkdir(unnamed)
    try:
        with _locked(unnamed):
            os.rename(unnamed, staging)
            yield staging
    except BaseException:
        for folder in (unnamed, staging):
            shutil.rmtree(folder, ignore_errors=True)
        raise


@contextmanager
def _emptied_on_failure(root: str) -> Iterator[str]:
    """On a local disk: the existing, empty folder ``root`` itself, whose entries are removed when the export fails."""
    try:
        yield root
    except BaseException:
        for entry in os.scandir(root):
            if entry.is_dir(follow_symlinks=False):
                shutil.rmtree(entry.path, ignore_errors=True)
            else:
                os.unlink(entry.path)
        raise


@contextmanager
def _removed_on_failure(fs: AbstractFileSystem, root: str) -> Iterator[str]:
    """On an object store (no rename): ``root`` itself, whose files are removed when the export fails."""
    existed = fs.exists(root)
    try:
        yield root
    except BaseException:
        if fs.exists(root):
            fs.rm(root, recursive=True)
        if existed:
            fs.makedirs(root, exist_ok=True)
        raise


def _remove_stale_staging(parent: str, out: str) -> None:
    """Remove the staging folders in ``parent`` that killed exports of this host left (their process is gone and
    holds no lock on them); name, in one warning, those of other hosts, of older versions (no owner in the name) or
    whose lock cannot be tried (a file system that takes no lock on a folder), which may be writing still. A folder is
    this host's by the host name in its name, and its export alive while the process of its pid runs or a process
    holds its lock (the lock also answers for a pid reused, or a process of another PID namespace on this host)."""
    try:
        entries = list(os.scandir(parent))
    except OSError:  # not made yet, or not listable (a folder others may only pass through): nothing to tell
        return
    unknown = []
    for entry in entries:
        owner = _STAGING_NAME.fullmatch(entry.name)
        if owner is None or not entry.is_dir(follow_symlinks=False):
            continue
        if owner["host"] != _this_host() or (not _is_running(int(owner["pid"])) and not _remove_unlocked(entry.path)):
            unknown.append(entry.name)
    if unknown:
        logger.warning("left alone beside %s, exports of another machine, an older interlingua or a file system "
                       "without locks, maybe running: %s (remove those that no export is writing)", out,
                       ", ".join(sorted(unknown)))


def _remove_unlocked(staging: str) -> bool:
    """Remove the staging folder ``staging`` unless a process holds its lock (or it is gone, or cannot be opened);
    False when it is kept because its lock cannot be tried (nothing tells whether its export runs)."""
    try:
        with _locked(staging, wait=False) as taken:
            if taken:
                shutil.rmtree(staging, ignore_errors=True)
                logger.info("removed %s, left by a killed export", staging)
            return taken is not None
    except OSError:  # removed by another export meanwhile, or another user's: not this export's concern
        return True


def _this_host() -> str:
    """This machine's host name, as a staging folder's name holds it."""
    return re.sub(r"[^A-Za-z0-9.-]", "_", socket.gethostname())


def _is_running(pid: int) -> bool:
    """Whether a process of this PID namespace has the id ``pid``."""
    try:
        os.kill(pid, 0)
    except (ProcessLookupError, OverflowError):
        return False
    except PermissionError:  # another user's process
        pass
    return True


@contextmanager
def _locked(folder: str, *, wait: bool = True) -> Iterator[bool | None]:
    """An exclusive ``flock`` on ``folder`` held in the block, released when it ends or the process dies; yields True
    when this process took it, False when another process holds it (``wait`` False), None when the lock could not be
    tried (a file system that takes no lock on a folder, some network mounts: ENOLCK, EINVAL, ...): only a lock taken
    tells that no process holds it."""
    handle = os.open(folder, os.O_RDONLY)
    try:
        try:
            fcntl.flock(handle, fcntl.LOCK_EX if wait else fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            taken = False
        except OSError:
            taken = None
        else:
            taken = True
        yield taken
    finally:
        os.close(handle)


def _not_empty(out: str) -> ValueError:
    return ValueError(f"{out} exists and is not empty; export into a new folder")
