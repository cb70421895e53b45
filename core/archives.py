"""Compressed inputs: opening one decompressed, and what goes wrong with one.

- :func:`open_compressed` opens an input decompressed by its name (fsspec's ``compression="infer"``), after
  :func:`require_decompressor`: fsspec decompresses ``.zst`` (``.lz4``) only when an optional package is importable
  (``zstandard``, ``backports.zstd`` or Python 3.14's ``compression.zstd``; ``lz4``) and otherwise hands back the
  compressed bytes, which would be read as text (garbage rows, or none). Such an input is refused in one line
  naming the package to install; workflows check their inputs so before Ray (:func:`interlingua.core.inputs.require_input_files`).
- Truncated or corrupt compressed inputs (``.gz``, ``.bz2``, ``.xz``): one error naming the file and the byte
  offset, unless the workflow's ``allow_truncated_inputs`` publishes the part read (marked partial). A line reader
  raises :func:`cut_short`'s error, which says how many complete lines came before the damage.
- Reading that fails is no damage: an ``OSError`` with an errno (EIO, ENOSPC, ECONNRESET, …), or of any subclass
  (a ``TimeoutError`` from a socket or fsspec's HTTP reads, a ``ConnectionResetError``, a ``FileNotFoundError`` …),
  raised while reading propagates (:func:`is_damage`, :func:`read_failure`: the same errno or type, naming the file),
  whatever ``allow_truncated_inputs`` says, so a disk or network error never publishes a partial version.
"""

from __future__ import annotations

import gzip
import lzma
import os
import zlib

from interlingua.core.errors import UserError
from interlingua.core.redact import redact_text

#: What Python's decompressors raise on data that stops early or does not decode (EOFError: a stream cut short; bz2's
#: corrupt data is a plain OSError, gzip's a BadGzipFile, both without an errno), and what reading the file raises (an
#: OSError with an errno, or one of its subclasses: TimeoutError …): a handler tells them apart with :func:`is_damage`.
DECOMPRESSION_ERRORS = (EOFError, zlib.error, gzip.BadGzipFile, lzma.LZMAError, OSError)

ALLOW_HINT = "set allow_truncated_inputs=true to publish what was read, marked partial in the manifest"

#: Name suffixes fsspec decompresses only with an optional package: suffix -> (the compression, the package to install).
OPTIONAL_DECOMPRESSORS = {"zst": ("zstd", "zstandard"), "lz4": ("lz4", "lz4")}


def require_decompressor(url: str, what: str = "input") -> None:
    """:class:`UserError` when ``url``'s name says a compression (:data:`OPTIONAL_DECOMPRESSORS`) that fsspec cannot
    decompress here: ``compression="infer"`` decides by the same suffix and, without the package, reads the raw bytes."""
    missing = _missing_codec(url)
    if missing:
        suffix, compression, package = missing
        raise UserError(f"{what} {redact_text(str(url))} is {compression}-compressed (.{suffix}) but no {compression} "
                        f"decompressor is installed, so it would be read as compressed bytes (hint: pip install {package})")


def require_compressor(url: str, what: str = "output") -> None:
    """:class:`UserError` when ``url``'s name says a compression fsspec cannot apply here: written with
    ``compression="infer"``, the file would hold plain bytes under a compressed name, which its readers
    (:func:`open_compressed`) refuse or fail to decompress."""
    missing = _missing_codec(url)
    if missing:
        suffix, compression, package = missing
        raise UserError(f"{what} {redact_text(str(url))} is named {compression}-compressed (.{suffix}) but no "
                        f"{compression} compressor is installed, so it would be written uncompressed (hint: pip "
                        f"install {package}, or drop the .{suffix} suffix)")


def _missing_codec(url: str) -> tuple[str, str, str] | None:
    """``(suffix, compression, package)`` when ``url``'s suffix is one of :data:`OPTIONAL_DECOMPRESSORS` and fsspec
    has no codec registered for it (its package is not importable), else None."""
    from fsspec.utils import infer_compression

    import fsspec.compression  # noqa: F401  (registers the optional decompressors that are importable)

    suffix = os.path.splitext(str(url))[-1].strip(".").lower()  # as fsspec's infer_compression takes it
    if suffix in OPTIONAL_DECOMPRESSORS and infer_compression(str(url)) is None:
        return (suffix, *OPTIONAL_DECOMPRESSORS[suffix])
    return None


def compressed_suffixes() -> tuple[str, ...]:
    """Every name suffix (``.gz``, ``.bz2``, ``.xz``, ``.zst`` …) :func:`open_compressed` decompresses: fsspec's
    registered compressions, and those of :data:`OPTIONAL_DECOMPRESSORS` even when their package is missing (a name
    that says ``.zst`` is a compressed file, refused by :func:`require_decompressor`, not something else)."""
    from fsspec.utils import compressions

    import fsspec.compression  # noqa: F401  (registers the optional decompressors that are importable)

    return tuple(sorted({f".{suffix}" for suffix in (*compressions, *OPTIONAL_DECOMPRESSORS)}))


def strip_compression(name: str) -> str:
    """``name`` without its compression suffix (one of :func:`compressed_suffixes`, any case), if it has one."""
    lower = name.lower()
    for suffix in compressed_suffixes():
        if lower.endswith(suffix):
            return name[: -len(suffix)]
    return name


def open_compressed(url: str, mode: str = "rb", **kwargs):
    """``fsspec.open(url, mode, compression="infer", **kwargs)`` for reading an input decompressed by its name;
    refused first by :func:`require_decompressor` when that needs a package that is not installed."""
    import fsspec

    require_decompressor(url)
    return fsspec.open(url, mode, compression="infer", **kwargs)


class TruncatedInputError(UserError):
    """A compressed input that ends early or is corrupt (``url``, ``offset``: compressed bytes read; ``lines``: the
    complete lines before the damage, where a line reader raised it)."""

    def __init__(self, url: str, offset: int | None, detail: str, *, lines: int | None = None):
        self.url, self.offset, self.detail, self.lines = url, offset, detail, lines
        where = f" at byte {offset}" if offset is not None else ""
        super().__init__(f"input {redact_text(url)} is truncated or corrupt{where}: {detail} ({ALLOW_HINT})")


def compressed_offset(handle) -> int | None:
    """How many compressed bytes the decompressing ``handle`` (gzip, bz2, lzma file object) has consumed."""
    for name in ("fileobj", "_fp", "_fileobj"):
        raw = getattr(handle, name, None)
        if raw is not None and hasattr(raw, "tell"):
            try:
                return int(raw.tell())
            except (OSError, ValueError):
                return None
    return None


def is_damage(error: BaseException) -> bool:
    """Whether ``error`` (one of :data:`DECOMPRESSION_ERRORS`) says the compressed data is cut short or corrupt, not
    that reading it failed. Decided by type: ``EOFError``, zlib's, lzma's and gzip's errors, and an ``OSError`` of
    exactly that type without an errno (bz2's corrupt data) are damage; any other ``OSError`` (with an errno, or a
    subclass: ``TimeoutError`` from a socket or fsspec's HTTP reads, ``ConnectionResetError``, ``FileNotFoundError``
    …, errno or not) is a read failure, and so is anything else."""
    if isinstance(error, (EOFError, zlib.error, lzma.LZMAError, gzip.BadGzipFile)):
        return True
    return type(error) is OSError and error.errno is None


def is_read_failure(error: BaseException) -> bool:
    """Whether ``error`` is an ``OSError`` that says reading failed (not :func:`is_damage`)."""
    return isinstance(error, OSError) and not is_damage(error)


class InputReadError(OSError):
    """A read failure without an errno whose own type :func:`read_failure` could not rebuild (or a plain
    ``OSError``, which :func:`is_damage` would take for bz2's corrupt data)."""


def read_failure(url: str, error: OSError, offset: int | None = None) -> OSError:
    """The error to raise for ``error``, an I/O failure (not :func:`is_damage`) while reading ``url``, naming the file
    (redacted) and, when known, the compressed byte where reading stopped: an ``OSError`` of the same errno (so of the
    same subclass: ``ConnectionResetError`` for ECONNRESET …, ``filename`` the file), or, without an errno, of the
    same type (``TimeoutError`` …; :class:`InputReadError` when that cannot be built), never taken for damage."""
    where = f" at byte {offset}" if offset is not None else ""
    note = "(an I/O failure, not a truncated or corrupt file: nothing of it is published)"
    if error.errno is not None:
        return OSError(error.errno, f"{error.strerror or error} reading the input{where} {note}", redact_text(str(url)))
    detail = f"{type(error).__name__}: {error}" if str(error) else type(error).__name__
    message = f"{detail} reading the input {redact_text(str(url))}{where} {note}"
    try:
        failure = type(error)(message)
    except Exception:  # noqa: BLE001 - a subclass whose constructor takes other arguments
        failure = None
    return failure if failure is not None and is_read_failure(failure) else InputReadError(message)


def cut_short(url: str, handle, error: BaseException, lines: int) -> TruncatedInputError:
    """The error for ``error`` (one of :data:`DECOMPRESSION_ERRORS`), raised by the decompressing ``handle`` of
    ``url`` after ``lines`` complete lines; an I/O failure (not :func:`is_damage`) is raised here instead, as
    :func:`read_failure`'s error."""
    if not is_damage(error):
        raise read_failure(url, error, compressed_offset(handle)) from error
    return TruncatedInputError(url, compressed_offset(handle), f"{type(error).__name__}: {error} (after line {lines})",
                               lines=lines)
