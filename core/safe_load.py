"""Read arrays from files that may come from a shared store, never running code from them.

A store or registry may be shared (``s3://``, a team volume), so its contents are untrusted input: NumPy files
are read with ``allow_pickle=False`` (an object array — a pickle — is refused with :class:`UnsafeFileError`),
and formats that are pickles by design (``.pkl``, ``.pickle``, ``.joblib``, gensim ``.kv``, torch ``.pt``) are
refused by :func:`refuse_pickle_format` before anything opens them.
"""

from __future__ import annotations

from typing import IO

import numpy as np

from interlingua.core.errors import UserError

#: Suffixes of formats that are Python pickles (loading one runs whatever code it names).
PICKLE_SUFFIXES = (".pkl", ".pickle", ".joblib", ".kv", ".pt", ".pth", ".ckpt")


class UnsafeFileError(UserError, ValueError):
    """A file that holds (or is) a Python pickle; it is refused, never loaded."""


def refuse_pickle_format(path: str, hint: str = "") -> None:
    """Raise :class:`UnsafeFileError` when ``path`` names a pickle-based format (by suffix)."""
    if str(path).lower().endswith(PICKLE_SUFFIXES):
        raise UnsafeFileError(f"{path}: pickle-based files are never loaded (they can run code)"
                              + (f"; {hint}" if hint else ""))


def load_array(source: str | IO[bytes], *, name: str | None = None) -> np.ndarray:
    """One array from a ``.npy`` file (a path/URL, or an open binary handle) without unpickling."""
    import fsspec

    label = name or str(getattr(source, "path", None) or getattr(source, "name", None) or source)
    try:
        if isinstance(source, str):
            with fsspec.open(source, "rb") as handle:
                return np.load(handle, allow_pickle=False)
        return np.load(source, allow_pickle=False)
    except ValueError as err:
        if "allow_pickle" in str(err):
            raise UnsafeFileError(f"{label}: holds pickled Python objects (an object array); refused — "
                                  f"store numeric or string arrays only") from None
        raise


def load_arrays(source: str | IO[bytes], *, name: str | None = None) -> dict[str, np.ndarray]:
    """Every array of a ``.npz`` archive, read eagerly without unpickling (an object array is refused)."""
    import fsspec

    label = name or str(getattr(source, "path", None) or getattr(source, "name", None) or source)

    def read(handle) -> dict[str, np.ndarray]:
        with np.load(handle, allow_pickle=False) as archive:
            return {key: archive[key] for key in archive.files}

    try:
        if isinstance(source, str):
            with fsspec.open(source, "rb") as handle:
                return read(handle)
        return read(source)
    except ValueError as err:
        if "allow_pickle" in str(err):
            raise UnsafeFileError(f"{label}: holds pickled Python objects (an object array); refused — "
                                  f"store numeric or string arrays only") from None
        raise
