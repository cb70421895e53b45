"""A folder of benchmark files given as a local path or an fsspec URL (``file://``, ``s3://``, ``gs://``, ``hf://``,
``memory://``, ...): the files below it, each named by its path relative to the folder, and the URL a loader reads."""

from __future__ import annotations

import posixpath
from functools import cached_property
from pathlib import Path


class DataFolder:
    """``DataFolder("s3://bucket/sts")``: :attr:`files` lists ``"sub/STS.en-de.txt"``-style relative paths,
    :meth:`url` joins one back onto the folder as given (a local path stays a path)."""

    def __init__(self, location: str | Path):
        import fsspec

        self.location = str(location).rstrip("/") or "/"
        self.fs, path = fsspec.core.url_to_fs(self.location)
        self._path = path.rstrip("/")

    def __str__(self) -> str:
        return self.location

    def is_dir(self) -> bool:
        return self.fs.isdir(self._path)

    @cached_property
    def files(self) -> list[str]:
        """Relative paths (``/``-separated) of every file below the folder, sorted."""
        prefix = self._path + "/"
        return sorted(found[len(prefix):] for found in self.fs.find(self._path, withdirs=False)
                      if found.startswith(prefix))

    def url(self, relative: str = "") -> str:
        """The folder (``relative`` empty) or the file or folder ``relative`` below it, as a loader opens it."""
        return posixpath.join(self.location, relative) if relative else self.location

    def exists(self, relative: str) -> bool:
        return relative in self.files

    def parent(self, relative: str) -> str:
        """The URL of the folder holding the file ``relative``."""
        return self.url(posixpath.dirname(relative))
