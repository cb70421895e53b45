"""Whether a temporary folder under ``<state>/tmp`` is in use: its process holds a shared ``flock`` on it.

:func:`~interlingua.core.runtime.state_tempdir` holds one while its folder lives (released by the kernel when the
process ends, killed included); ``interlingua gc`` removes a folder left behind only when no process holds it. Where
``flock`` is missing (Windows) or refused (an NFS mount may refuse an exclusive lock on a folder opened to read),
nothing is held and :func:`held` cannot tell: gc then goes by the folder's age alone.
"""

from __future__ import annotations

import os

try:
    import fcntl
except ImportError:  # pragma: no cover - Windows
    fcntl = None

_FOLDER = os.O_RDONLY | getattr(os, "O_DIRECTORY", 0) | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)


def _open(path: str) -> int | None:
    """Folder ``path`` open to read (a link not followed), or None without ``flock`` or when it cannot be opened."""
    if fcntl is None:
        return None
    try:
        return os.open(path, _FOLDER)
    except OSError:
        return None


def hold(path: str) -> int | None:
    """A descriptor of folder ``path`` holding a shared lock on it (close it to release), or None where none is held."""
    handle = _open(path)
    if handle is None:
        return None
    try:
        fcntl.flock(handle, fcntl.LOCK_SH)
    except OSError:
        os.close(handle)
        return None
    return handle


def held(path: str) -> bool | None:
    """True when a process holds folder ``path`` (:func:`hold`), False when none does, None when it cannot be told (no
    ``flock``, a lock refused, or ``path`` not a folder: links are not followed)."""
    handle = _open(path)
    if handle is None:
        return None
    try:
        fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        return True
    except OSError:
        return None
    finally:
        os.close(handle)  # releases the probe's lock at once
    return False
