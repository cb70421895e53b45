"""List a refresh's inputs on their fsspec URLs and fingerprint them.

A fingerprint is the size plus the store's change marker: the ETag where the store gives one
(S3, GCS, HTTP), else the modification time (local disks), else — ``memory://`` and stores with
neither — the SHA-256 of the content. Equal fingerprints mean "unchanged" to ``interlingua refresh``.

Every corpus build puts its inputs' fingerprints in its version id (:func:`build_fingerprints`), so an input rewritten in place gives a new version instead of reopening the old one. A
build asks for the content: a file without an ETag (a local file) is identified by its SHA-256, so the same
bytes at the same path give the same version id however often they were written (a copy over the file, a
``touch``, a fresh checkout), and a build cut short resumes its version even if its input was written again. Hashed once
per process and file state (path, size, modification time); the refresh, which lists every input on every
run, keeps the modification time.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from datetime import datetime

from fsspec.core import url_to_fs

from interlingua.core.errors import UserError
from interlingua.core.inputs import change_markers
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


def fingerprints_of(urls: Sequence[str], storage_options: dict | None = None, *,
                    content: bool = False) -> dict[str, InputFingerprint]:
    """Each input's fingerprint, keyed by its URL with credentials masked (the spelling manifests record inputs
    in): what a refresh compares (a corpus build asks for ``content``: :func:`build_fingerprints`)."""
    return {redact_url(url): fingerprint(url, storage_options, content=content) for url in urls}


def build_fingerprints(urls: Sequence[str], storage_options: dict | None = None) -> dict[str, InputFingerprint]:
    """What a corpus build passes to ``CorpusStore.open_version``: :func:`fingerprints_of` with content hashes."""
    return fingerprints_of(urls, storage_options, content=True)


def fingerprint(url: str, storage_options: dict | None = None, *, content: bool = False) -> InputFingerprint:
    """Size plus ETag, modification time or content hash of the file at ``url``; ``content``: the content hash
    where the store gives no ETag (local files), in place of the modification time."""
    fs, path = url_to_fs(url, **(storage_options or {}))
    try:
        info = fs.info(path)
    except FileNotFoundError:
        raise UserError(f"input {redact_url(url)!r} does not exist (it may have been moved or deleted while the "
                        "inputs were listed); check the path and run again") from None
    except PermissionError as error:
        raise UserError(f"input {redact_url(url)!r} is not readable: {error}") from None
    size = int(info.get("size") or 0)
    etag, mtime = change_markers(info)
    if etag:
        return InputFingerprint(size=size, etag=str(etag).strip('"'))
    stamp = None
    if mtime is not None and "memory" not in _protocols(fs):
        stamp = mtime.isoformat() if isinstance(mtime, datetime) else repr(float(mtime))
        if not content:
            return InputFingerprint(size=size, mtime=stamp)
    key = (_protocols(fs), path, size, stamp)
    if stamp is None or key not in _CONTENT_HASHES:
        digest = _content_sha256(fs, path, size, redact_url(url))
        if stamp is None:
            return InputFingerprint(size=size, sha256=digest)
        _CONTENT_HASHES[key] = digest
    return InputFingerprint(size=size, sha256=_CONTENT_HASHES[key])


#: SHA-256 of files already hashed in this process, by (protocols, path, size, modification time).
_CONTENT_HASHES: dict[tuple, str] = {}
#: Files at least this large (about 3 s of hashing at 1.4 GB/s) show a progress bar while they are hashed.
_BAR_BYTES = 4 << 30


def _content_sha256(fs, path: str, size: int, shown: str) -> str:
    digest = hashlib.sha256()
    bar = None
    if size >= _BAR_BYTES:
        from interlingua.core.progress import progress_bar

        bar = progress_bar(total=size, desc=f"sha256 {shown.rsplit('/', 1)[-1]}", unit="B", unit_scale=True)
    with fs.open(path, "rb") as handle:
        while chunk := handle.read(1 << 22):
            digest.update(chunk)
            if bar is not None:
                bar.update(len(chunk))
    if bar is not None:
        bar.close()
    return digest.hexdigest()


def _url(fs, path: str, pattern: str) -> str:
    """Keep the user's spelling for local paths without a scheme; a URL with its protocol otherwise."""
    if "://" not in pattern:
        return path
    return fs.unstrip_protocol(path)


def _protocols(fs) -> tuple[str, ...]:
    protocol = fs.protocol
    return (protocol,) if isinstance(protocol, str) else tuple(protocol)
