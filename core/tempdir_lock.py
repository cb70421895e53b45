"""Whether a temporary folder under ``<state>/tmp`` is in use: its process holds a shared ``flock`` on it.

:func:`~interlingua.core.runtime.state_tempdir` holds one while its folder lives (released by the kernel when the
process ends, killed included), and names the folder after the machine that made it (:func:`host_marked_prefix`).
A lock is seen on that machine only: Linux NFS directories take ``flock`` as a lock of this machine's kernel, so gc on
another machine sees no holder. ``interlingua gc`` therefore trusts :func:`held` only for folders made on its own
machine; one made elsewhere (or by older code, its machine unknown) is judged by its age alone, over a longer time.
Where ``flock`` is missing (Windows) or refused (an NFS mount may refuse an exclusive lock on a folder opened to read),
nothing is held and :func:`held` cannot tell.
"""

from __future__ import annotations

import os
import re
import socket

try:
    import fcntl
except ImportError:  # pragma: no cover - Windows
    fcntl = None


def _open(path: str) -> int | None:
    """Folder ``path`` open to read (a link not followed), or None without ``flock`` or when it cannot be opened."""
    if fcntl is None:
        return None
    from interlingua.core.no_follow import open_folder_no_follow  # here: it imports fsspec

    try:
        return open_folder_no_follow(path)
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


_HOST_MARK = re.compile(r"@([A-Za-z0-9.-]{1,64})@[^@]*$")


def this_host() -> str | None:
    """This machine's name as temporary folders carry it (letters, digits, ``.`` and ``-``; at most 64), or None when
    it has none."""
    name = re.sub(r"[^A-Za-z0-9.-]", "-", socket.gethostname())[:64].strip("-")
    return name or None


def host_marked_prefix(prefix: str) -> str:
    """``prefix`` followed by ``@<this machine>@`` (unchanged without a machine name): the random part ``mkdtemp`` adds
    comes after it, so :func:`folder_host` reads the machine back from the folder's name."""
    host = this_host()
    return f"{prefix}@{host}@" if host else prefix


def folder_host(name: str) -> str | None:
    """The machine a temporary folder named ``name`` was made on (:func:`host_marked_prefix`), or None when its name
    does not say (made by older code, or an eflomal binary's folder)."""
    match = _HOST_MARK.search(name)
    return match.group(1) if match else None
