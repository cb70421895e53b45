"""A model spec, input or option value as a path on this machine: a plain path (``~`` expanded) or a ``file://`` URL.

``file://`` is dropped as fsspec drops it, so a value names the same place here as where fsspec opens it:
``file:///x`` is ``/x``, ``file://x`` and ``file://localhost/x`` are relative paths (``x``, ``localhost/x``), and
``file://~/x`` is ``~/x`` in the home folder. Any other URL (``s3://``, ``hf://``, ``models:/`` specs aside) is none.
"""

from __future__ import annotations

from pathlib import Path

FILE_SCHEME = "file://"


def without_file_scheme(text: str) -> str:
    """``text`` less a leading ``file://`` (the rest as written)."""
    return text[len(FILE_SCHEME):] if text.startswith(FILE_SCHEME) else text


def is_url(text: str) -> bool:
    """Whether ``text`` is a URL read remotely: ``SCHEME://`` other than ``file://``."""
    return "://" in without_file_scheme(text)


def local_path(text: str) -> Path | None:
    """The path ``text`` (a plain path or ``file://`` URL) names on this machine, ``~`` expanded; None for another
    URL or what can be no path here (:func:`plain_path`)."""
    return plain_path(without_file_scheme(text))


def plain_path(text: str) -> Path | None:
    """``text`` as a local path (``~`` expanded), or None for what cannot be one: empty, a URL (``file://`` too), a
    line break, over 4096 characters, the home of a user this machine has none of (``~nobody/x``)."""
    if not text or "://" in text or "\n" in text or len(text) > 4096:
        return None
    try:
        return Path(text).expanduser()
    except RuntimeError:
        return None


def path_or_url(text: str) -> str:
    """A plain local path as :class:`~pathlib.Path` spells it (``./x`` is ``x``, ``a//b`` is ``a/b``, ``x/.`` is ``x``;
    ``~`` kept), so its spellings record as one; a URL (``file://`` too) and what can be no path (:func:`plain_path`)
    as written."""
    return text if plain_path(text) is None else str(Path(text))


def exists_here(text: str) -> bool:
    """Whether the local path ``text`` names (:func:`local_path`) is a file or folder on this machine; False for a
    URL and what can be no path here (one too long for the file system too)."""
    path = local_path(text)
    try:
        return path is not None and path.exists()
    except OSError:
        return False
