"""The names in ``<state>/tmp`` (:func:`~interlingua.core.runtime.state_tempdir_root`) that eflomal's seeded binary is
written under and that ``interlingua gc`` sweeps by (:mod:`interlingua.cluster.state_gc`):

- ``u<uid>``: one user's private folder (a state folder may be shared); without user ids (Windows) there is none and
  what it would hold lies in ``<state>/tmp`` itself;
- ``eflomal-<16 digits of the SHA-256 of the binary>``: the folder of one seeded eflomal binary, in its user's folder.
"""

from __future__ import annotations

import hashlib
import os
import re

_USER_FOLDER = re.compile(r"u[0-9]+")
_BINARY_FOLDER_PREFIX = "eflomal-"
_BINARY_FOLDER = re.compile(re.escape(_BINARY_FOLDER_PREFIX) + r"[0-9a-f]{16}")


def euid() -> int | None:
    """This process's effective user id; None where the platform has none (Windows: owners and modes not checked)."""
    geteuid = getattr(os, "geteuid", None)
    return geteuid() if geteuid is not None else None


def user_folder_name() -> str | None:
    """``u<uid>``: the name of this user's folder in ``<state>/tmp``; None without user ids."""
    uid = euid()
    return None if uid is None else f"u{uid}"


def is_user_folder_name(name: str) -> bool:
    """Whether ``name`` is some user's folder in ``<state>/tmp`` (``u`` and digits)."""
    return _USER_FOLDER.fullmatch(name) is not None


def binary_folder_name(image: bytes) -> str:
    """The name of the folder holding the seeded binary ``image``: ``eflomal-`` and 16 digits of its SHA-256."""
    return f"{_BINARY_FOLDER_PREFIX}{hashlib.sha256(image).hexdigest()[:16]}"


def is_binary_folder_name(name: str) -> bool:
    """Whether ``name`` is the folder of a seeded eflomal binary (:func:`binary_folder_name`), of any version: not an
    eflomal run's temporary folder (``eflomal-run-…``)."""
    return _BINARY_FOLDER.fullmatch(name) is not None
