"""List a refresh's inputs on their fsspec URLs and fingerprint them.

A fingerprint is the size plus the store's change marker: the ETag where the store gives one
(S3, GCS, HTTP), else the modification time (local disks), else — ``memory://`` and stores with
neither — the SHA-256 of the content. Equal fingerprints mean "unchanged" to ``interlingua refresh``, and
every corpus build puts its inputs' fingerprints in its version id (:func:`fingerprints_of`), so an input
rewritten in place gives a new version instead of reopening the old one.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from datetime import datetime

from fsspec.core import url_to_fs

from interlingua.core.errors import UserError
from interlingua.core.redact import redact_url
from interlingua.operators.corpus.manifest import InputFingerprint

_GLOB_CHARS = ("*", "?", "[")


def list_inputs(patterns: Sequence[str], storage_options: dict | None = None) -> list[str]:
    """The input URLs the patterns name (globs expanded), sorted and without duplicates. A plain
    URL that does not exist, or a glob matching no file, is a ``UserError`` naming it."""
    urls: set[str] = set()
    for pattern in patterns:
        fs, path = url_to_fs(pattern, **(storage_options or {}))
        if any(char in path for char in _GLOB_CHARS):
            matches = [p for p in fs.glob(path) if fs.isfile(p)]
            if not matches:
                raise UserError(f"input pattern {pattern!r} matches no file; check the path or the glob")
        else:
            if not fs.isfile(path):
                what = "is a folder, not a file" if fs.isdir(path) else "does not exist"
                raise UserError(f"input {pattern!r} {what}; name files or a glob such as 'dir/*.tsv'")
            matches = [path]
        urls.update(_url(fs, p, pattern) for p in matches)
    return sorted(urls)


def fingerprints_of(urls: Sequence[str], storage_options: dict | None = None) -> dict[str, InputFingerprint]:
    """Each input's fingerprint, keyed by its URL with credentials masked (the spelling manifests record inputs
    in): what a corpus build passes to ``CorpusStore.open_version`` and what a refresh compares."""
    return {redact_url(url): fingerprint(url, storage_options) for url in urls}


def fingerprint(url: str, storage_options: dict | None = None) -> InputFingerprint:
    """Size plus ETag, modification time or content hash of the file at ``url``."""
    fs, path = url_to_fs(url, **(storage_options or {}))
    try:
        info = fs.info(path)
    except FileNotFoundError:
        raise UserError(f"input {redact_url(url)!r} does not exist (it may have been moved or deleted while the "
                        "inputs were listed); check the path and run again") from None
    except PermissionError as error:
        raise UserError(f"input {redact_url(url)!r} is not readable: {error}") from None
    size = int(info.get("size") or 0)
    etag = info.get("ETag") or info.get("etag") or info.get("md5Hash")
    if etag:
        return InputFingerprint(size=size, etag=str(etag).strip('"'))
    mtime = info.get("mtime") or info.get("LastModified") or info.get("last_modified")
    if mtime is not None and "memory" not in _protocols(fs):
        stamp = mtime.isoformat() if isinstance(mtime, datetime) else repr(float(mtime))
        return InputFingerprint(size=size, mtime=stamp)
    digest = hashlib.sha256()
    with fs.open(path, "rb") as handle:
        while chunk := handle.read(1 << 20):
            digest.update(chunk)
    return InputFingerprint(size=size, sha256=digest.hexdigest())


def _url(fs, path: str, pattern: str) -> str:
    """Keep the user's spelling for local paths without a scheme; a URL with its protocol otherwise."""
    if "://" not in pattern:
        return path
    return fs.unstrip_protocol(path)


def _protocols(fs) -> tuple[str, ...]:
    protocol = fs.protocol
    return (protocol,) if isinstance(protocol, str) else tuple(protocol)
