"""The output folders and files of the commands that write them (``eval``, ``align``, ``embed``), checked before their
work: a missing folder is made, as ``eval`` and ``bench-pack`` make their ``--out`` folder, and removed again if the
command fails while it is still empty."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator, Mapping

from interlingua.core.made_folders import folders_made_for, resolved_local


@contextlib.contextmanager
def writable_output_files(outputs: Mapping[str, str]) -> Iterator[None]:
    """Around a command's work: its local output files ``outputs`` (option -> path) checked first, one line each
    (:func:`~interlingua.core.inputs.require_writable` makes a missing folder, as for ``eval --out``;
    :func:`~interlingua.core.inputs.require_writable_file` checks the file); the folders made here are removed again
    (:func:`~interlingua.core.made_folders.folders_made_for`) when the block fails while they are still empty.
    URLs are left to the write."""
    from interlingua.core.inputs import require_writable, require_writable_file

    folders = {option: str(local.parent) for option, path in outputs.items()
               if (local := resolved_local(path)) is not None}
    with folders_made_for(folders.values()):
        for option, path in outputs.items():
            if option in folders:
                require_writable(folders[option], f"{option} folder")
            require_writable_file(path, option)
        yield
