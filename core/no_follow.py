"""Folders below a trusted root on a local disk are listed, written and deleted without following symbolic links.

A corpus store may be shared (a team volume) and its contents are untrusted: somebody who can write in it can
replace a folder the store manages (``<name>/_staging/<version>``, a writer's folder, ``_pins``, ``_locks``, a version
folder) or a file in it with a symbolic link to a folder or file of yours, and a writer that followed the link would
write into, or delete, what it points to; gc (``cluster.state_gc``) deletes below the state folder under the same
rule. So, on a local file system, every path below the root is opened one component at a time, each relative to
the folder opened before it and with ``O_NOFOLLOW``: a link below the root is never followed. Writing into, listing,
reading from (:meth:`StoreFolders.refuse_links`, checked first) or linking from a folder reached through a link
raises :class:`StoreLinkError` (naming the link); deleting a link removes the link itself, never its target (or,
with ``remove_tree(keep_link=True)``, leaves it); files are written
by an exclusive create after removing what was there (a link or a hard link is replaced, not written through). The
root itself may be a link (that is the user's own choice). One path is opened the same way, a link at its name refused,
by :func:`open_folder_no_follow` and :func:`open_file_no_follow` (a temporary folder's lock, eflomal's private folder
and binary). A store reads its files through :class:`NoFollowReads` (:func:`reading_fs`): a file below the root that
is a link (``latest``, a manifest, a shard) is refused with the same :class:`StoreLinkError`, never read through.

Object stores and ``memory://`` have no symbolic links: there the fsspec calls are made as they always were.
"""

from __future__ import annotations

import errno
import os
import shutil
import stat
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from typing import BinaryIO

from fsspec import AbstractFileSystem
from fsspec.implementations.local import LocalFileSystem

_CLOEXEC = getattr(os, "O_CLOEXEC", 0)
_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_DIRECTORY = os.O_RDONLY | getattr(os, "O_DIRECTORY", 0) | _CLOEXEC  # a folder to read (a link followed: the root)
_NEW_FILE = os.O_WRONLY | os.O_CREAT | os.O_EXCL | _NOFOLLOW | _CLOEXEC
#: ``os.open`` flags: a file to read, a symbolic link at its name refused (ELOOP), where the platform has the flags.
_READ_NO_FOLLOW = os.O_RDONLY | _NOFOLLOW | _CLOEXEC
#: The same for a folder (ENOTDIR when the name is no folder).
_FOLDER_NO_FOLLOW = _DIRECTORY | _NOFOLLOW


def open_folder_no_follow(path: str, dir_fd: int | None = None) -> int:
    """A descriptor of the folder ``path`` (relative to the folder ``dir_fd`` when given) open to read; OSError when
    it is missing, not a folder, or a symbolic link (never followed)."""
    return os.open(path, _FOLDER_NO_FOLLOW, dir_fd=dir_fd)


def open_file_no_follow(path: str) -> int:
    """A descriptor of the file ``path`` open to read; OSError when it is missing or a symbolic link (never followed)."""
    return os.open(path, _READ_NO_FOLLOW)


class StoreLinkError(ValueError):
    """A folder or file of the store (below its root) is a symbolic link: it is never followed."""


def is_local(fs: AbstractFileSystem) -> bool:
    return isinstance(fs, LocalFileSystem)


class StoreFolders:
    """Listing, writing and deleting under one store root (``root``: a path on ``fs``) without following links."""

    def __init__(self, fs: AbstractFileSystem, root: str) -> None:
        self.fs = fs
        self.root = root.rstrip("/") or "/"
        self.local = is_local(fs)

    # -- folders ---------------------------------------------------------------------------------

    def makedirs(self, path: str) -> None:
        """``path`` and its missing parents as folders (none of them a link)."""
        if not self.local:
            self.fs.makedirs(path, exist_ok=True)
            return
        os.close(self._open_dir(path, create=True))

    def child_dirs(self, path: str) -> list[str]:
        """Names of the folders in ``path`` (a link to a folder is not one), sorted; [] when ``path`` is missing."""
        return self.child_dirs_and_links(path)[0]

    def child_dirs_and_links(self, path: str) -> tuple[list[str], list[str]]:
        """Names of the folders in ``path`` (a link to a folder is not one) and of the symbolic links in it, each
        sorted, from one listing; ([], []) when ``path`` is missing. Object stores have no links."""
        if not self.local:
            if not self.fs.exists(path):
                return [], []
            self.fs.invalidate_cache(path)
            entries = self.fs.ls(path, detail=True)
            return sorted(entry["name"].rstrip("/").rsplit("/", 1)[-1] for entry in entries
                          if entry["type"] == "directory"), []
        entries = self._entries(path)
        return (sorted(entry.name for entry in entries if entry.is_dir(follow_symlinks=False)),
                sorted(entry.name for entry in entries if entry.is_symlink()))

    def refuse_links(self, path: str) -> None:
        """Raise :class:`StoreLinkError` (naming the link) when ``path`` (a folder, or a link in place of a folder or a
        file), or a folder above it below the root, is a symbolic link: what a reader is about to read through. Nothing
        when one of them is missing or not a folder, and on object stores (which have no links)."""
        if not self.local:
            return
        try:
            os.close(self._open_dir(path))
        except (FileNotFoundError, NotADirectoryError):
            pass

    def open_file(self, path: str) -> BinaryIO:
        """The file ``path`` open to read, reached through no link (local only): :class:`StoreLinkError` naming the
        link when it, or a folder above it below the root, is one; FileNotFoundError when it is missing."""
        with self._parent(path) as (parent, name):
            try:
                descriptor = os.open(name, _READ_NO_FOLLOW, dir_fd=parent)
            except OSError as error:
                _refuse_link(parent, name, path, error)
                raise
        return os.fdopen(descriptor, "rb")

    def file_size(self, path: str) -> int:
        """The size of the file ``path`` (local only), refused as :meth:`open_file` refuses it."""
        with self._parent(path) as (parent, name):
            info = os.lstat(name, dir_fd=parent)
            if stat.S_ISLNK(info.st_mode):
                _refuse_link(parent, name, path)
        return info.st_size

    def files(self, path: str) -> list[str]:
        """Names of the files in ``path`` (regular files only, no link), sorted; [] when ``path`` is missing."""
        if not self.local:
            if not self.fs.exists(path):
                return []
            self.fs.invalidate_cache(path)
            return sorted(name.rstrip("/").rsplit("/", 1)[-1] for name in self.fs.ls(path, detail=False))
        return sorted(entry.name for entry in self._entries(path) if entry.is_file(follow_symlinks=False))

    def remove_tree(self, path: str, keep_link: bool = False) -> bool:
        """Delete the folder (or file) ``path`` and everything in it; a link at ``path``: the link alone, or with
        ``keep_link`` nothing (gc leaves a link for its owner to remove). True when something was removed, False
        when ``path`` is missing or is a link kept."""
        if not self.local:
            if not self.fs.exists(path):
                return False
            self.fs.rm(path, recursive=True)
            return True
        with self._parent(path, missing_ok=True) as (parent, name):
            if parent is None:
                return False
            try:
                info = os.lstat(name, dir_fd=parent)
            except FileNotFoundError:
                return False
            if stat.S_ISDIR(info.st_mode):
                shutil.rmtree(name, dir_fd=parent)  # fd-based: links inside are removed, never followed
            elif stat.S_ISLNK(info.st_mode) and keep_link:
                return False
            else:
                os.unlink(name, dir_fd=parent)
            return True

    def remove_empty_dir(self, path: str) -> None:
        """Remove the folder ``path`` when it is empty (OSError otherwise, and when it is a link)."""
        if not self.local:
            self.fs.rmdir(path)
            return
        with self._parent(path) as (parent, name):
            os.rmdir(name, dir_fd=parent)

    def rename_dir(self, source: str, target: str) -> None:
        """Rename the folder ``source`` to ``target`` (local only; OSError when ``target`` is a non-empty folder)."""
        with self._parent(source) as (source_parent, source_name), self._parent(target) as (target_parent, target_name):
            if not stat.S_ISDIR(os.lstat(source_name, dir_fd=source_parent).st_mode):
                raise StoreLinkError(f"refusing to publish {source}: it is not a folder (a symbolic link?)")
            os.rename(source_name, target_name, src_dir_fd=source_parent, dst_dir_fd=target_parent)

    # -- files -----------------------------------------------------------------------------------

    def write(self, path: str, data: bytes) -> None:
        """Write ``data`` to ``path``, replacing what was there (a link, or a hard link into a published version,
        is removed first, never written through); missing parent folders are made."""
        if not self.local:
            self.fs.pipe_file(path, data)
            return
        with self._parent(path, create=True) as (parent, name):
            _unlink_at(parent, name, path)
            _write_new(parent, name, data)

    def write_atomically(self, path: str, data: bytes) -> None:
        """Readers of ``path`` see the old content or ``data``, never a prefix of it: a file beside it, renamed over
        it (a link at ``path`` is replaced by the file, never followed)."""
        if not self.local:  # object stores and memory:// replace an object with one put
            self.fs.pipe_file(path, data)
            return
        with self._parent(path, create=True) as (parent, name):
            _replace_at(parent, name, data, path)

    def remove_file(self, path: str) -> None:
        """Delete the file ``path`` (a link: the link itself); nothing when it is missing."""
        if not self.local:
            if self.fs.exists(path):
                self.fs.rm_file(path)
            return
        with self._parent(path, missing_ok=True) as (parent, name):
            if parent is not None:
                _unlink_at(parent, name, path)

    def regular_file_size(self, path: str) -> int | None:
        """The size of ``path`` when it is a regular file reached through no link (local only), else None."""
        try:
            with self._parent(path, missing_ok=True) as (parent, name):
                if parent is None:
                    return None
                info = os.lstat(name, dir_fd=parent)
        except (OSError, StoreLinkError):
            return None
        return info.st_size if stat.S_ISREG(info.st_mode) else None

    def hard_link(self, source: str, target: str) -> None:
        """Hard-link the regular file ``source`` as ``target`` (local only), replacing what ``target`` was; a
        ``source`` that is a link is refused (its target could be anybody's file)."""
        with self._parent(source) as (source_parent, source_name):
            mode = os.lstat(source_name, dir_fd=source_parent).st_mode
            if not stat.S_ISREG(mode):
                raise StoreLinkError(f"refusing to link {source}: it is not a regular file"
                                     + (" but a symbolic link" if stat.S_ISLNK(mode) else ""))
            with self._parent(target, create=True) as (target_parent, target_name):
                _unlink_at(target_parent, target_name, target)
                os.link(source_name, target_name, src_dir_fd=source_parent, dst_dir_fd=target_parent,
                        follow_symlinks=False)

    def unlink_if_link(self, path: str) -> str | None:
        """Remove ``path`` when it is a symbolic link (the link, not its target); returns where it pointed, else None."""
        if not self.local:
            return None
        with self._parent(path, missing_ok=True) as (parent, name):
            if parent is None:
                return None
            try:
                if not stat.S_ISLNK(os.lstat(name, dir_fd=parent).st_mode):
                    return None
                target = os.readlink(name, dir_fd=parent)
                os.unlink(name, dir_fd=parent)
            except FileNotFoundError:
                return None
            return target

    # -- helpers ---------------------------------------------------------------------------------

    def _parts(self, path: str) -> list[str]:
        if path == self.root:
            return []
        prefix = self.root if self.root.endswith("/") else self.root + "/"
        if not path.startswith(prefix):
            raise ValueError(f"{path} is not below the store root {self.root}")
        parts = path[len(prefix):].rstrip("/").split("/")
        if any(part in ("", ".", "..") for part in parts):
            raise ValueError(f"{path} is not a plain path below the store root {self.root}")
        return parts

    def _open_dir(self, path: str, create: bool = False) -> int:
        """A descriptor of the folder ``path``, each component below the root opened with ``O_NOFOLLOW``."""
        if create:
            os.makedirs(self.root, exist_ok=True)
        descriptor = os.open(self.root, _DIRECTORY)
        walked = self.root.rstrip("/")
        try:
            for part in self._parts(path):
                walked = f"{walked}/{part}"
                child = _open_child(descriptor, part, walked, create)
                os.close(descriptor)
                descriptor = child
        except BaseException:
            os.close(descriptor)
            raise
        return descriptor

    @contextmanager
    def _parent(self, path: str, create: bool = False, missing_ok: bool = False) -> Iterator[tuple[int | None, str]]:
        """``(descriptor of path's folder, path's last component)``; ``(None, name)`` when the folder is missing
        and ``missing_ok``."""
        parts = self._parts(path)
        if not parts:
            raise ValueError(f"{path} is the store root itself")
        folder = path.rstrip("/").rsplit("/", 1)[0] or "/"
        try:
            descriptor = self._open_dir(folder, create=create)
        except (FileNotFoundError, NotADirectoryError):
            if not missing_ok:
                raise
            yield None, parts[-1]
            return
        try:
            yield descriptor, parts[-1]
        finally:
            os.close(descriptor)

    def _entries(self, path: str) -> list[os.DirEntry]:
        try:
            descriptor = self._open_dir(path)
        except (FileNotFoundError, NotADirectoryError):
            return []
        try:
            with os.scandir(descriptor) as entries:  # scans a duplicate of the descriptor
                return list(entries)
        finally:
            os.close(descriptor)


class NoFollowReads(LocalFileSystem):
    """The local file system of a store rooted at ``root``: a file below the root is read (``open(..., "rb")``,
    ``cat_file``, ``size``) without following a link, :meth:`StoreFolders.open_file`, so every reader of the store
    (its own, export, a writer's records, :mod:`core.integrity`'s checks) refuses a linked file in one place. Other
    calls, and paths outside the root, are those of ``LocalFileSystem``."""

    cachable = False  # one per store root

    def __init__(self, root: str, **storage_options) -> None:
        super().__init__(**storage_options)
        self._folders = StoreFolders(self, root)

    def _open(self, path, mode="rb", block_size=None, **kwargs):
        below = self._below_root(path)
        if mode != "rb" or below is None:
            return super()._open(path, mode=mode, block_size=block_size, **kwargs)
        return self._folders.open_file(below)

    def size(self, path):
        below = self._below_root(path)
        return super().size(path) if below is None else self._folders.file_size(below)

    def _below_root(self, path) -> str | None:
        """``path`` without its protocol when it is below the root, else None."""
        stripped = self._strip_protocol(path)
        root = self._folders.root.rstrip("/")
        return stripped if stripped.startswith(root + "/") else None


def reading_fs(fs: AbstractFileSystem, root: str) -> AbstractFileSystem:
    """The file system a store rooted at ``root`` on ``fs`` reads and writes through: :class:`NoFollowReads` on a
    local disk, ``fs`` itself elsewhere (object stores and ``memory://`` have no links)."""
    return NoFollowReads(root, **fs.storage_options) if is_local(fs) else fs


def replace_file(fs: AbstractFileSystem, path: str, data: bytes) -> None:
    """Replace the file ``path`` with ``data`` (a file beside it renamed over it on a local disk, so a link at
    ``path`` is replaced, never written through; one put elsewhere)."""
    if not is_local(fs):
        fs.pipe_file(path, data)
        return
    folder, name = os.path.split(path)
    parent = os.open(folder or ".", _DIRECTORY)
    try:
        _replace_at(parent, name, data, path)
    finally:
        os.close(parent)


def _open_child(parent: int, name: str, walked: str, create: bool) -> int:
    """Open the folder ``name`` in the folder ``parent`` without following a link."""
    try:
        try:
            return open_folder_no_follow(name, dir_fd=parent)
        except FileNotFoundError:
            if not create:
                raise
            try:
                os.mkdir(name, dir_fd=parent)
            except FileExistsError:
                pass
            return open_folder_no_follow(name, dir_fd=parent)
    except OSError as error:
        _refuse_link(parent, name, walked, error)
        raise


def _refuse_link(parent: int, name: str, walked: str, error: OSError | None = None) -> None:
    """Raise :class:`StoreLinkError` naming ``walked`` when ``name`` in the folder ``parent`` is a symbolic link (and
    ``error``, when given, is what opening it without following the link gives)."""
    if (error is None or error.errno in (errno.ELOOP, errno.ENOTDIR, errno.EMLINK)) and _is_link(parent, name):
        raise StoreLinkError(
            f"{walked} is a symbolic link (to {_link_target(parent, name)}); the corpus store never follows "
            f"one (the store may be shared): remove the link"
        ) from None


def _is_link(parent: int, name: str) -> bool:
    try:
        return stat.S_ISLNK(os.lstat(name, dir_fd=parent).st_mode)
    except OSError:
        return False


def _link_target(parent: int, name: str) -> str:
    try:
        return os.readlink(name, dir_fd=parent)
    except OSError:
        return "?"


def _unlink_at(parent: int, name: str, path: str) -> None:
    try:
        os.unlink(name, dir_fd=parent)
    except FileNotFoundError:
        pass
    except IsADirectoryError:
        raise IsADirectoryError(errno.EISDIR, "is a folder, not a file", path) from None


def _replace_at(parent: int, name: str, data: bytes, path: str) -> None:
    """Replace ``name`` in the folder ``parent`` with a file holding ``data``: a new file beside it renamed over it
    (a link at ``name`` is replaced, never followed); the file beside it is removed when the rename fails."""
    temporary = f"{name}.tmp-{uuid.uuid4().hex}"
    _write_new(parent, temporary, data)
    try:
        os.replace(temporary, name, src_dir_fd=parent, dst_dir_fd=parent)
    except BaseException:
        _unlink_at(parent, temporary, path)
        raise


def _write_new(parent: int, name: str, data: bytes) -> None:
    descriptor = os.open(name, _NEW_FILE, 0o666, dir_fd=parent)
    with os.fdopen(descriptor, "wb") as handle:
        handle.write(data)
