"""The output folders and files of the commands that write them (``eval``, ``align``, ``embed``), checked before their
work: a missing folder is made, as ``eval`` and ``bench-pack`` make their ``--out`` folder, and removed again if the
command fails while it is still empty."""

from __future__ import annotations

import contextlib
from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path


@contextlib.contextmanager
def writable_output_files(outputs: Mapping[str, str]) -> Iterator[None]:
    """Around a command's work: its local output files ``outputs`` (option -> path) checked first, one line each
    (:func:`~interlingua.core.inputs.require_writable` makes a missing folder, as for ``eval --out``;
    :func:`~interlingua.core.inputs.require_writable_file` checks the file); the folders made here are removed again
    (:func:`folders_made_for`) when the block fails while they are still empty. URLs are left to the write."""
    from interlingua.core.inputs import require_writable, require_writable_file

    folders = {option: str(Path(path).expanduser().resolve().parent) for option, path in outputs.items()
               if "://" not in path}
    with folders_made_for(folders.values()):
        for option, path in outputs.items():
            if option in folders:
                require_writable(folders[option], f"{option} folder")
            require_writable_file(path, option)
        yield


@contextlib.contextmanager
def folders_made_for(folders: Iterable[str]) -> Iterator[None]:
    """Around a command that makes the local ``folders`` (its checks and its work): those of them and of their parents
    that do not exist yet are removed again, innermost first, when the block fails while they are still empty. A
    folder that existed before, or holds a file (an output written, another's file), is kept; URLs are skipped."""
    missing = {f for folder in folders if "://" not in folder
               for f in _missing_folders(Path(folder).expanduser().resolve())}
    try:
        yield
    except BaseException:
        for folder in sorted(missing, key=lambda f: len(f.parts), reverse=True):
            with contextlib.suppress(OSError):  # not empty, or never made (the command failed before): kept
                folder.rmdir()
        raise


def _missing_folders(folder: Path) -> list[Path]:
    """``folder`` and those of its parents that do not exist."""
    return [f for f in (folder, *folder.parents) if not f.exists()]
