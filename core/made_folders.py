"""Folders a command makes for its output, removed again when it fails while they are still empty: one rule for
``corpus export`` (its staging folder's parents) and the commands that write files (``eval``, ``align``, ``embed``,
through :mod:`interlingua.workflows.commands.output_files`). Standard library only."""

from __future__ import annotations

import contextlib
from collections.abc import Iterable, Iterator
from pathlib import Path


@contextlib.contextmanager
def folders_made_for(folders: Iterable[str]) -> Iterator[None]:
    """Around a command that makes the local ``folders`` (its checks and its work): those of them and of their parents
    that do not exist yet are removed again, innermost first, when the block fails while they are still empty. A
    folder that existed before, or holds a file (an output written, another's file), is kept; URLs are skipped."""
    local = [path for path in map(resolved_local, folders) if path is not None]
    missing = {f for folder in local for f in _missing_folders(folder)}
    try:
        yield
    except BaseException:
        for folder in sorted(missing, key=lambda f: len(f.parts), reverse=True):
            with contextlib.suppress(OSError):  # not empty, or never made (the command failed before): kept
                folder.rmdir()
        raise


def resolved_local(path: str) -> Path | None:
    """``path`` resolved on this machine (``~`` expanded); None for a URL (``s3://`` ..., ``file://`` too), whose
    folders a command leaves to its write."""
    return None if "://" in path else Path(path).expanduser().resolve()


def _missing_folders(folder: Path) -> list[Path]:
    """``folder`` and those of its parents that do not exist."""
    return [f for f in (folder, *folder.parents) if not f.exists()]
