"""Read a source and a target text file line by line in parallel, keeping line numbers aligned.

Bad input is never dropped silently:

- different line counts -> :class:`LineCountMismatch`, naming the first file and both counts;
- a line that is not valid UTF-8 -> that pair is rejected with the byte offset of the first bad
  byte (in the file and in the line);
- empty lines are *kept* (they get an empty alignment downstream).

Lines end at ``\\n`` only (a trailing ``\\r`` is removed); Unicode line separators inside a line
stay in it, so line numbers equal ``wc -l``'s (plus a last line without a newline). A UTF-8 byte order mark
at the start of a file is not text: it is removed from the first line (it was aligned as a word, and kept the
pair from deduplicating against the same pair without it). Compressed files (``.gz``, ``.bz2``, ``.xz``,
``.zst`` …) are read decompressed, as TSV inputs are (:func:`~interlingua.core.archives.open_compressed`: a ``.zst``
file with no zstd decompressor installed is refused, not read raw); one cut short or corrupt yields the pairs whose lines are
complete before the damage, then raises :class:`~interlingua.core.archives.TruncatedInputError` naming that file
(no line count check: the lines after the damage cannot be counted).
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

from interlingua.core.archives import DECOMPRESSION_ERRORS, TruncatedInputError, cut_short, open_compressed


class LineCountMismatch(ValueError):
    """Source and target files do not have the same number of lines."""


@dataclass(frozen=True)
class LinePair:
    """Line ``number`` (1-based) of both files; ``reject`` is ``None`` or a reject record."""

    number: int
    src: str
    tgt: str
    reject: dict | None = None


def count_lines(path: str) -> int:
    """Lines in ``path`` as :func:`read_parallel_lines` counts them. A compressed file cut short or corrupt raises
    :class:`~interlingua.core.archives.TruncatedInputError` whose ``lines`` are the complete lines before the damage."""
    lines, last = 0, b""
    with open_compressed(path, "rb") as handle:
        read = getattr(handle, "read1", handle.read)  # one decompressed block at a time: none lost at the damage
        try:
            while chunk := read(1 << 20):
                lines += chunk.count(b"\n")
                last = chunk[-1:]
        except DECOMPRESSION_ERRORS as err:
            raise cut_short(path, handle, err, lines) from None
    return lines + (1 if last not in (b"", b"\n") else 0)


def read_parallel_lines(src_path: str, tgt_path: str) -> Iterator[LinePair]:
    """Yield one :class:`LinePair` per line; raises :class:`LineCountMismatch` before reading any. A damaged
    compressed file: the pairs up to its last complete line, then its
    :class:`~interlingua.core.archives.TruncatedInputError`."""
    counts, damage = [], None
    for path in (src_path, tgt_path):
        try:
            counts.append(count_lines(path))
        except TruncatedInputError as err:
            damage = damage or err
            counts.append(err.lines)
    src_count, tgt_count = counts
    if damage is None and src_count != tgt_count:
        raise LineCountMismatch(
            f"{src_path} has {src_count} lines but {tgt_path} has {tgt_count} lines; "
            "source and target must have one sentence per line, line for line"
        )
    with open_compressed(src_path, "rb") as src_file, open_compressed(tgt_path, "rb") as tgt_file:
        src_offset = tgt_offset = 0
        for number in range(1, min(counts) + 1):
            src_raw, tgt_raw = _line(src_file, src_path, number), _line(tgt_file, tgt_path, number)
            src_text, src_error = _decode(src_raw, src_offset, src_path, number, "src")
            tgt_text, tgt_error = _decode(tgt_raw, tgt_offset, tgt_path, number, "tgt")
            src_offset += len(src_raw)
            tgt_offset += len(tgt_raw)
            yield LinePair(number, src_text, tgt_text, src_error or tgt_error)
    if damage is not None:
        raise damage


def _line(handle, path: str, number: int) -> bytes:
    """Line ``number`` of ``handle``; damage found only now (the file changed since it was counted) is the same
    error as when counting."""
    try:
        return handle.readline()
    except DECOMPRESSION_ERRORS as err:
        raise cut_short(path, handle, err, number - 1) from None


_BOM = b"\xef\xbb\xbf"


def _decode(raw: bytes, file_offset: int, path: str, number: int, side: str) -> tuple[str, dict | None]:
    line = raw[:-1] if raw.endswith(b"\n") else raw
    line = line[:-1] if line.endswith(b"\r") else line
    if file_offset == 0 and line.startswith(_BOM):  # a byte order mark, not text
        line, file_offset = line[len(_BOM):], len(_BOM)
    try:
        return line.decode("utf-8"), None
    except UnicodeDecodeError as err:
        return "", invalid_utf8_reject(line, err, line=number, side=side, file=path, file_offset=file_offset)


def invalid_utf8_reject(data: bytes, error: UnicodeDecodeError, *, line: int, side: str, file: str,
                        file_offset: int | None = None) -> dict:
    """The reject record of ``data`` that ``error`` found not UTF-8, for every reader: a line of a text or TSV
    file (``file_offset``: where the line's bytes start in the file, a byte order mark skipped) or a Parquet cell
    (no ``file_offset``; ``line`` is its row). ``line``, ``side``, ``file``, ``reason`` ``invalid_utf8``, the offset
    of the first bad byte in the file (``byte_offset``, lines only) and in ``data`` (``byte_offset_in_line``), and a
    ``detail`` sentence."""
    bad = f"invalid UTF-8 byte 0x{data[error.start]:02x}"
    record = {"line": line, "side": side, "file": file, "reason": "invalid_utf8"}
    if file_offset is None:
        return record | {"byte_offset_in_line": error.start, "detail": f"row {line} {side}: {bad} at byte {error.start}"}
    at = file_offset + error.start
    return record | {"byte_offset": at, "byte_offset_in_line": error.start,
                     "detail": f"{bad} at byte {at} of {file} ({error.reason})"}
