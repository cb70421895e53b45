"""List a corpus's inputs on their fsspec URLs and fingerprint them.

A fingerprint is the size plus the store's change marker: the ETag where the store gives one (S3, GCS,
HTTP), else the SHA-256 of the content (local disks, ``memory://``). Equal fingerprints mean "unchanged" to
``interlingua refresh``, and every corpus build puts its inputs' fingerprints in its version id
(:func:`build_fingerprints`): an input rewritten in place gives a new version instead of reopening the old
one, and the same bytes at the same path give the same version id however often they were written (a copy
over the file, a ``touch``, a fresh checkout). A build and a refresh record the same fingerprints, so
``corpus diff`` compares their versions input for input.

Hashes are remembered by (path, size, modification time, inode, change time) in this process and in the state folder
(``cache/input-sha256.jsonl``): an unchanged file is read once, not on every refresh. ``content=False``
gives the modification time instead of the hash (what refreshes recorded before they hashed).
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import time
from collections.abc import Iterator, Sequence
from datetime import datetime

from interlingua.core.errors import UserError
from interlingua.core.inputs import change_markers
from interlingua.core.redact import redact_url
from interlingua.core.url_filesystems import url_filesystem
from interlingua.operators.corpus.manifest import InputFingerprint

_GLOB_CHARS = ("*", "?", "[")


def list_inputs(patterns: Sequence[str], storage_options: dict | None = None) -> list[str]:
    """The input URLs the patterns name (globs expanded), sorted and without duplicates. A plain
    URL that does not exist, or a glob matching no file, is a ``UserError`` naming it."""
    urls: set[str] = set()
    for pattern in patterns:
        fs, path = url_filesystem(pattern, **(storage_options or {}))
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
    in)."""
    return {redact_url(url): fingerprint(url, storage_options, content=content) for url in urls}


def build_fingerprints(urls: Sequence[str], storage_options: dict | None = None) -> dict[str, InputFingerprint]:
    """What a corpus build passes to ``CorpusStore.open_version`` and a refresh compares: :func:`fingerprints_of`
    with content hashes."""
    return fingerprints_of(urls, storage_options, content=True)


def fingerprint(url: str, storage_options: dict | None = None, *, content: bool = False) -> InputFingerprint:
    """Size plus ETag, modification time or content hash of the file at ``url``; ``content``: the content hash
    where the store gives no ETag (local files), in place of the modification time."""
    fs, path = url_filesystem(url, **(storage_options or {}))
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
    if stamp is None:
        return InputFingerprint(size=size, sha256=_content_sha256(fs, path, size, redact_url(url)))
    # the inode and change time too: `cp -p`, `rsync -t`, `tar x` and `touch -r` set a modification time, and a
    # rewrite of the same size under an old time would otherwise reuse the old hash (no one can set a change time)
    key = f"{'+'.join(_protocols(fs))}\0{path}\0{size}\0{stamp}\0{info.get('ino', '')}\0{info.get('created', '')}"
    digest = _known_hashes().get(key)
    if digest is None:
        started = time.time()
        digest = _content_sha256(fs, path, size, redact_url(url))
        if _settled(mtime, started) and _settled(info.get("created") or 0.0, started):
            _remember(key, digest)
    return InputFingerprint(size=size, sha256=digest)


#: SHA-256 of files already hashed, by protocols, path, size, modification time, inode and change time: kept in this process and
#: in ``<state>/cache/input-sha256.jsonl``, so a refresh, a build or the EASE build (which asks three times)
#: hashes an unchanged file once, and a ``touch`` costs one read, not a rebuild.
_CONTENT_HASHES: dict[str, str] = {}
_LOADED_FROM: list[str] = []
#: A file modified or changed this recently (seconds before its hash started) is not remembered: a second write
#: within the file system's time resolution could keep its times and size with other bytes.
_SETTLE_SECONDS = 2.0
_MEMO_FILE = "input-sha256.jsonl"
_MEMO_MAX_BYTES = 32 << 20
#: A memo line holds a key (protocols, path, size, times) and a hash: far shorter than this; a longer one is skipped.
_MEMO_LINE_MAX_BYTES = 64 << 10
_HEX64 = frozenset("0123456789abcdef")
#: Files at least this large (about 3 s of hashing at 1.4 GB/s) show a progress bar while they are hashed.
_BAR_BYTES = 4 << 30


def _settled(mtime, started: float) -> bool:
    seconds = mtime.timestamp() if isinstance(mtime, datetime) else float(mtime)
    return started - seconds > _SETTLE_SECONDS


def _memo_path():
    """``<state>/cache/input-sha256.jsonl``, nothing created: a fingerprint only reads it (its folder is made when
    the memo is first written, :func:`_remember`), so a state folder that cannot be created still fingerprints."""
    from interlingua.core.runtime import state_path

    return state_path() / "cache" / _MEMO_FILE


def _known_hashes() -> dict[str, str]:
    """The memo, read from the state folder once per state folder and process. Its lines are untrusted: a line
    that is not a JSON pair of a key and 64 hex digits, or is longer than :data:`_MEMO_LINE_MAX_BYTES`, is skipped
    (read in bounded pieces); a memo larger than the writer ever leaves it (:data:`_MEMO_MAX_BYTES` plus one line)
    is not read at all, with one warning: its files are hashed again, and the next hash remembered starts it afresh."""
    path = str(_memo_path())
    if _LOADED_FROM != [path]:
        _CONTENT_HASHES.clear()
        _LOADED_FROM[:] = [path]
        try:
            with open(path, "rb") as handle:
                size = os.fstat(handle.fileno()).st_size
                if size > _MEMO_MAX_BYTES + _MEMO_LINE_MAX_BYTES:
                    logging.getLogger(__name__).warning(
                        "the input-hash memo %s holds %d bytes, more than the %d MiB it is kept under: not read "
                        "(inputs are hashed again; it starts afresh when a hash is next remembered)",
                        path, size, _MEMO_MAX_BYTES >> 20)
                    return _CONTENT_HASHES
                for line in _bounded_lines(handle, _MEMO_LINE_MAX_BYTES, _MEMO_MAX_BYTES + _MEMO_LINE_MAX_BYTES):
                    try:
                        key, digest = json.loads(line)
                    except (ValueError, TypeError):
                        continue
                    if isinstance(key, str) and isinstance(digest, str) and len(digest) == 64 \
                            and set(digest) <= _HEX64:
                        _CONTENT_HASHES[key] = digest
        except OSError:
            pass
    return _CONTENT_HASHES


def _bounded_lines(handle, line_max: int, total_max: int) -> Iterator[bytes]:
    """The lines of the binary ``handle`` of at most ``line_max`` bytes (a longer one is skipped, read ``line_max``
    bytes at a time), until ``total_max`` bytes were read (a file that grows while it is read)."""
    read = 0
    while read < total_max:
        line = handle.readline(line_max + 1)
        if not line:
            return
        read += len(line)
        if len(line) <= line_max:
            yield line
            continue
        while not line.endswith(b"\n") and read < total_max:  # the rest of the long line, never held whole
            line = handle.readline(line_max)
            if not line:
                return
            read += len(line)


def _remember(key: str, digest: str) -> None:
    """Add to the memo; its file is appended to (one short line, whole) and started afresh past 32 MiB. A state
    folder that cannot be written keeps the memo in this process only."""
    _CONTENT_HASHES[key] = digest
    path = _memo_path()
    line = json.dumps([key, digest]) + "\n"
    try:
        try:
            _append(path, line)
        except FileNotFoundError:  # the first memo of this state folder: its folder is made now, once
            path.parent.mkdir(parents=True, exist_ok=True)
            _append(path, line)
    except OSError:
        pass


def _append(path, line: str) -> None:
    mode = "w" if path.exists() and path.stat().st_size > _MEMO_MAX_BYTES else "a"
    with open(path, mode, encoding="utf-8") as handle:
        handle.write(line)


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
