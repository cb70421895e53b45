"""Truncated or corrupt compressed inputs (``.gz``, ``.bz2``, ``.xz``): one error naming the file and the byte
offset, unless the workflow's ``allow_truncated_inputs`` publishes the part read (marked partial). A line reader
raises :func:`cut_short`'s error, which says how many complete lines came before the damage."""

from __future__ import annotations

import gzip
import lzma
import zlib

from interlingua.core.errors import UserError
from interlingua.core.redact import redact_text

#: What Python's decompressors raise on data that stops early or does not decode.
DECOMPRESSION_ERRORS = (EOFError, zlib.error, gzip.BadGzipFile, lzma.LZMAError, OSError)

ALLOW_HINT = "set allow_truncated_inputs=true to publish what was read, marked partial in the manifest"


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


def cut_short(url: str, handle, error: BaseException, lines: int) -> TruncatedInputError:
    """The error for ``error`` (one of :data:`DECOMPRESSION_ERRORS`), raised by the decompressing ``handle`` of
    ``url`` after ``lines`` complete lines."""
    return TruncatedInputError(url, compressed_offset(handle), f"{type(error).__name__}: {error} (after line {lines})",
                               lines=lines)
