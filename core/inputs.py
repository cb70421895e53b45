"""Checks on the user's inputs and outputs that run before Ray or a model starts: one line each, with a hint.

- :func:`require_input_files`: every input exists and is not empty (an empty file used to surface as a traceback
  after Ray's start-up), and one named ``.zst`` is decompressed here (:func:`~interlingua.core.archives.require_decompressor`).
- :func:`require_writable`: a local output folder (a corpus store, the state folder) can be created and written;
  :func:`require_writable_file`: a local output file's folder exists and can be written.
Remote URLs (``s3://`` …) are checked for existence only where listing is cheap; writability is left to the write.
- :func:`require_distinct_files`: no output file of a command is one of its inputs or another of its outputs.
- :func:`change_markers`: what an fsspec ``info`` record says of a file's version (ETag, modification time), for
  the input fingerprints and the remote model cache's key.
"""

from __future__ import annotations

import os
import uuid
from collections.abc import Iterable, Mapping
from typing import Any
from pathlib import Path

from interlingua.core.errors import UserError
from interlingua.core.redact import redact_text


def require_input_files(urls: Iterable[str], what: str = "input", *, local_only: bool = False) -> None:
    """:class:`UserError` for the first of ``urls`` that is missing, a folder, or empty (0 bytes), or compressed by
    its name with a codec no installed package decompresses (``.zst`` without zstandard: it would be read raw), or
    a URL whose protocol fsspec does not know (:func:`~interlingua.core.url_filesystems.require_known_protocol`).
    ``local_only``: the files on this machine alone, a URL (``s3://`` …) only its protocol: a check that asks no
    network."""
    from fsspec.core import url_to_fs

    from interlingua.core.archives import require_decompressor
    from interlingua.core.local_paths import is_url
    from interlingua.core.url_filesystems import require_known_protocol

    for url in urls:
        require_known_protocol(str(url))  # of every URL, local_only too: the open below need not check it again
        if local_only and is_url(str(url)):
            continue
        require_decompressor(str(url), what)
        shown = redact_text(str(url))
        try:
            fs, path = url_to_fs(str(url))
            info = fs.info(path)
        except FileNotFoundError:
            raise UserError(f"{what} {shown} not found (hint: check the path or URL)") from None
        except PermissionError:
            raise UserError(f"{what} {shown} is not readable: permission denied") from None
        except (OSError, ValueError) as err:
            raise UserError(f"cannot open {what} {shown}: {redact_text(str(err))}") from None
        if info.get("type") == "directory":
            raise UserError(f"{what} {shown} is a folder; give a file")
        if info.get("size") == 0:
            raise UserError(f"{what} {shown} is empty (0 bytes): nothing to read (hint: check the file, "
                            f"or that the export that wrote it finished)")


def require_writable(url: str, what: str = "output folder") -> None:
    """:class:`UserError` when the local folder ``url`` cannot be created or written (remote URLs: only that fsspec
    knows their protocol)."""
    from interlingua.core.url_filesystems import url_filesystem

    fs, path = url_filesystem(str(url))
    protocols = fs.protocol if isinstance(fs.protocol, tuple) else (fs.protocol,)
    if "file" not in protocols and "local" not in protocols:
        return
    folder = Path(path)
    try:
        folder.mkdir(parents=True, exist_ok=True)
        probe = folder / f".write-check-{uuid.uuid4().hex}"
        probe.write_bytes(b"")
        probe.unlink()
    except OSError as err:
        reason = err.strerror or type(err).__name__
        raise UserError(f"{what} {folder} is not writable: {reason} (hint: choose another folder or fix its "
                        f"permissions)") from None
    if not os.access(folder, os.W_OK | os.X_OK):  # pragma: no cover - the probe above already failed
        raise UserError(f"{what} {folder} is not writable")


def require_writable_file(path: str, what: str = "output file") -> None:
    """:class:`UserError` when the local file ``path`` could not be written: a folder by that name, a parent folder
    that does not exist or is not writable. Checked before the work that produces it (an evaluation, an alignment),
    not after. Remote URLs: only that fsspec knows their protocol."""
    from interlingua.core.url_filesystems import require_known_protocol

    require_known_protocol(str(path))
    if "://" in str(path):
        return
    target = Path(path).expanduser()
    if target.is_dir():
        raise UserError(f"{what} {path} is a folder; give a file name")
    parent = target.resolve().parent
    if not parent.is_dir():
        raise UserError(f"{what} {path}: folder {parent} does not exist (hint: create it first)")
    try:
        probe = parent / f".write-check-{uuid.uuid4().hex}"
        probe.write_bytes(b"")
        probe.unlink()
    except OSError as err:
        raise UserError(f"{what} {path}: folder {parent} is not writable: {err.strerror or type(err).__name__} "
                        "(hint: choose another folder)") from None


def require_distinct_files(inputs: Mapping[str, str], outputs: Mapping[str, str]) -> None:
    """:class:`UserError` when an output file (``outputs``: option -> path) is one of the ``inputs`` or another output:
    the command would overwrite its own input, or write two outputs into one file. Local paths are compared as the
    file they reach (an existing file by device and inode, so a link or another spelling of the input counts; one
    not yet written by its resolved path); URLs as written. Two inputs may be one file."""
    seen: dict[tuple, str] = {}
    for option, path in [*inputs.items(), *outputs.items()]:
        identity = _file_identity(str(path))
        first = seen.setdefault(identity, option)
        if first != option and option in outputs:
            role = "an input" if first in inputs else "another output"
            named = {**inputs, **outputs}[first]
            raise UserError(f"{option} {redact_text(str(path))} is the same file as {first} {redact_text(str(named))} "
                            f"({role}): it would be overwritten; give {option} another file name")


def _file_identity(path: str) -> tuple:
    if "://" in path:
        return ("url", path)
    target = Path(path).expanduser()
    try:
        status = target.stat()
    except OSError:
        return ("path", str(target.resolve()))
    return ("file", status.st_dev, status.st_ino)


#: Where fsspec stores put a file's ETag (S3, HTTP, GCS) and its modification time (local, S3, others).
_ETAG_KEYS = ("ETag", "etag", "md5Hash")
_MTIME_KEYS = ("mtime", "LastModified", "last_modified")


def change_markers(info: Mapping[str, Any]) -> tuple[Any, Any]:
    """(ETag, modification time) of an fsspec ``info`` record, each as the store gives it, or None."""
    etag = next((info[k] for k in _ETAG_KEYS if info.get(k)), None)
    mtime = next((info[k] for k in _MTIME_KEYS if info.get(k) is not None), None)
    return etag, mtime
