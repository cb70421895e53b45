"""Reading files whose size and SHA-256 a manifest records, on any fsspec file system.

A corpus store may be shared, so what it holds is untrusted input: every read of a published version checks the
bytes it reads against the version's manifest and raises :class:`CorruptVersionError` (one line naming the file,
with the hint ``interlingua corpus verify NAME@VERSION``) when they differ. The store (``operators.corpus``) and
the readers outside it (the EASE entity vectors in ``trainers``) share these helpers.
"""

from __future__ import annotations

import hashlib
import os
import stat
from collections.abc import Callable

from fsspec import AbstractFileSystem
from fsspec.implementations.local import LocalFileSystem

_CHUNK_BYTES = 1 << 20

#: The most a small file of a store is read up to (a larger one is refused, never read whole: a store may be shared).
MANIFEST_MAX_BYTES = 64 << 20  # manifest.json
RECORD_MAX_BYTES = 16 << 20  # a writer's shard completion and artifact records
POINTER_MAX_BYTES = 4 << 10  # latest, writer leases, publish locks


class CorruptVersionError(ValueError):
    """A published file does not match its manifest (size or SHA-256), or the manifest is invalid."""


def verify_hint(name: str, version: str) -> str:
    return f"(hint: interlingua corpus verify {name}@{version})"


def mismatch(size: int | None, expected_size: int | None, sha256: str | None = None,
             expected_sha256: str | None = None) -> str | None:
    """What differs between a file (``size`` None: missing) and what its manifest records, as the words that
    follow "does not match" (or "is missing"), else None."""
    if size is None:
        return "is missing"
    if expected_size is not None and size != expected_size:
        return f"does not match the size its manifest records ({size} bytes, the manifest says {expected_size})"
    if sha256 is not None and expected_sha256 is not None and sha256 != expected_sha256:
        return (f"does not match the SHA-256 its manifest records ({sha256[:16]}…, the manifest says "
                f"{expected_sha256[:16]}…)")
    return None


def corrupt(path: str, problem: str, name: str, version: str) -> CorruptVersionError:
    """The error for a file of ``name@version`` that ``problem`` (see :func:`mismatch`)."""
    return CorruptVersionError(f"{path} of {name}@{version} {problem}: the published version was altered "
                               f"{verify_hint(name, version)}")


def file_size(fs: AbstractFileSystem, path: str) -> int | None:
    try:
        return int(fs.size(path))
    except FileNotFoundError:
        return None


def file_identity(fs: AbstractFileSystem, path: str) -> tuple[int, ...] | None:
    """``(device, inode, size, mtime_ns, ctime_ns)`` of a file on a local disk, None elsewhere (or when it is
    missing): what a rewrite changes. Replacing the file gives another inode, writing into it a new ctime, which
    ``os.utime`` cannot set back. Object stores give None: their files are hashed at every read."""
    if not isinstance(fs, LocalFileSystem):
        return None
    try:
        return stat_identity(os.stat(fs._strip_protocol(path)))
    except FileNotFoundError:
        return None


def stat_identity(info: os.stat_result) -> tuple[int, int, int, int, int]:
    """``(device, inode, size, mtime_ns, ctime_ns)`` of a ``stat`` result (:func:`file_identity`'s tuple)."""
    return (info.st_dev, info.st_ino, info.st_size, info.st_mtime_ns, info.st_ctime_ns)


def hash_file(fs: AbstractFileSystem, path: str, progress: Callable[[int], object] | None = None) -> tuple[int, str]:
    """``(bytes read, hex SHA-256)`` of the file, read in 1 MiB chunks; ``progress(n)`` after each chunk."""
    digest, size = hashlib.sha256(), 0
    with fs.open(path, "rb") as stream:
        while chunk := stream.read(_CHUNK_BYTES):
            digest.update(chunk)
            size += len(chunk)
            if progress is not None:
                progress(len(chunk))
    return size, digest.hexdigest()


def file_problem(fs: AbstractFileSystem, path: str, size: int | None, sha256: str | None,
                 progress: Callable[[int], object] | None = None) -> str | None:
    """What differs between the file and its recorded size and SHA-256 (see :func:`mismatch`), else None. The size
    is compared first, without reading; ``sha256`` None (an old manifest that records none): the size alone."""
    problem = mismatch(file_size(fs, path), size)
    if problem is None and sha256 is not None:
        try:
            read, digest = hash_file(fs, path, progress)
        except FileNotFoundError:
            read, digest = None, None
        problem = mismatch(read, size, digest, sha256)
    return problem


def check_file(fs: AbstractFileSystem, path: str, size: int | None, sha256: str | None, name: str, version: str,
               progress: Callable[[int], object] | None = None) -> None:
    """Raise :class:`CorruptVersionError` unless the file has the recorded size and SHA-256."""
    problem = file_problem(fs, path, size, sha256, progress)
    if problem is not None:
        raise corrupt(path, problem, name, version)


class OversizedFileError(CorruptVersionError):
    """A small file of a store (a manifest, ``latest``, a record, a lease) that is larger than any such file."""


def read_capped(fs: AbstractFileSystem, path: str, limit: int, what: str) -> bytes:
    """The bytes of the file ``path`` (a ``what``), reading at most ``limit`` + 1 of them: one larger than ``limit``
    is refused with :class:`OversizedFileError`, and on a local disk so is anything but a regular file (a FIFO or a
    device would block or never end). FileNotFoundError when it is missing."""
    if isinstance(fs, LocalFileSystem):
        fs.size(path)  # a store's reads (no_follow.NoFollowReads) refuse a link here, a broken one or one to a FIFO too
        mode = os.stat(fs._strip_protocol(path)).st_mode
        if not stat.S_ISREG(mode):
            raise CorruptVersionError(f"refusing the {what} {path}: it is not a regular file")
    with fs.open(path, "rb") as handle:
        data = handle.read(limit + 1)
    if len(data) > limit:
        raise OversizedFileError(f"refusing the {what} {path}: it is larger than {_mib(limit)}, more than any {what} "
                                 "holds (the store may be shared: it was altered)")
    return data


def _mib(size: int) -> str:
    return f"{size >> 20} MiB" if size >= 1 << 20 else f"{size >> 10} KiB"


def read_checked(fs: AbstractFileSystem, path: str, size: int | None, sha256: str | None, name: str,
                 version: str) -> bytes:
    """The file's bytes, checked as :func:`check_file` checks them (the size before reading, so a file replaced by a
    huge one is not read)."""
    problem = mismatch(file_size(fs, path), size)
    if problem is None:
        try:
            data = fs.cat_file(path)
        except FileNotFoundError:
            data = None
        problem = mismatch(None if data is None else len(data), size,
                           None if data is None else hashlib.sha256(data).hexdigest(), sha256)
    if problem is not None:
        raise corrupt(path, problem, name, version)
    return data
