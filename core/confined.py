"""A path a folder's own files name (a model folder's JSON: a meaning head's folder, a Dense module's ``path``, an
MLmodel's data path), and the files read there, kept inside that folder.

A model folder may come from a shared registry or store, so what its JSON says is untrusted input: a path it names
is taken only when it is relative and, with every symbolic link resolved, lies below the folder. An absolute path, a
``..`` that climbs out, or a link that points out is refused in one line naming the file and the key.
"""

from __future__ import annotations

from pathlib import Path, PurePath

from interlingua.core.errors import UserError


def path_inside(root: str | Path, relative: object, where: str) -> Path:
    """``root / relative`` with links resolved, when ``relative`` (read from a file of ``root``) is a relative path
    that leads below ``root``; :class:`UserError` naming ``where`` (the file and its key, e.g.
    ``.../modules.json: modules[3].path``) otherwise."""
    if isinstance(relative, str) and relative and not PurePath(relative).is_absolute():
        return lies_inside(root, Path(root) / relative, where, shown=relative)
    raise _outside(root, where, relative)


def lies_inside(root: str | Path, path: str | Path, where: str, shown: object = None) -> Path:
    """``path`` with links resolved, when that lies below ``root`` (itself resolved: a folder the user reaches through
    a link of their own is fine); :class:`UserError` naming ``where`` otherwise."""
    target = Path(path).resolve()
    if Path(root).resolve() in target.parents:
        return target
    raise _outside(root, where, str(target) if shown is None else shown)


def _outside(root: str | Path, where: str, shown: object) -> UserError:
    return UserError(f"{where}: {shown!r} is not a path inside {Path(root).resolve()} (hint: a model folder's files "
                     "may name only paths below it: no absolute path, no '..' out of it, no link out of it)")
