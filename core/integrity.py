"""Reading files whose size and SHA-256 a manifest records, on any fsspec file system.

A corpus store may be shared, so what it holds is untrusted input: every read of a published version checks the
bytes it reads against the version's manifest and raises :class:`CorruptVersionError` (one line naming the file,
with the hint ``interlingua corpus verify NAME@VERSION``) when they differ. The store (``operators.corpus``) and
the readers outside it (the EASE entity vectors in ``trainers``) share these helpers.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable

from fsspec import AbstractFileSystem

_CHUNK_BYTES = 1 << 20


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
