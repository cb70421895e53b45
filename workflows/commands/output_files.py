"""The output files of the commands that write files (``align``, ``embed``), checked before their work: a missing
folder is made, as ``eval`` and ``bench-pack`` make their ``--out`` folder, and removed again if the command fails."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator, Mapping
from pathlib import Path


@contextlib.contextmanager
def writable_output_files(outputs: Mapping[str, str]) -> Iterator[None]:
    """Around a command's work: its local output files ``outputs`` (option -> path) checked first, one line each
    (:func:`~interlingua.core.inputs.require_writable` makes a missing folder, as for ``eval --out``;
    :func:`~interlingua.core.inputs.require_writable_file` checks the file); the folders made here are removed again,
    innermost first, when the block fails while they are still empty. URLs are left to the write."""
    from interlingua.core.inputs import require_writable, require_writable_file

    made: list[Path] = []
    try:
        for option, path in outputs.items():
            if "://" not in path:
                folder = Path(path).expanduser().resolve().parent
                made += _missing_folders(folder)
                require_writable(str(folder), f"{option} folder")
            require_writable_file(path, option)
        yield
    except BaseException:
        for folder in reversed(made):
            with contextlib.suppress(OSError):  # not empty (an output written, another's file): kept
                folder.rmdir()
        raise


def _missing_folders(folder: Path) -> list[Path]:
    """``folder`` and those of its parents that do not exist, outermost first."""
    return [f for f in (folder, *folder.parents) if not f.exists()][::-1]
