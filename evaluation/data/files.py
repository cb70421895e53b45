"""Reading text files from local paths or fsspec URLs (s3://, gs://, hf://, ...).

Lines are split on ``\\n`` only (a ``\\r`` right before it is dropped), as Python's file iteration and the
reference scripts (LASER, SentEval, sentence-transformers) do. ``str.splitlines`` is *not* used: it also
breaks on U+0085, U+2028, U+2029, form feed, vertical tab and other separators that occur inside
sentences of web-crawled corpora (BUCC, Tatoeba, WMT) and would silently misalign line-aligned files."""

from __future__ import annotations

import codecs
from typing import Iterator


def _open_binary(url: str):
    """``url`` opened for reading bytes; ValueError naming it when it does not exist."""
    import fsspec

    # over http(s), one streamed GET read in order (block_size 0): block reads need range requests, which not every
    # server answers, and every reader here reads from the start to the end or stops
    streamed = {"block_size": 0} if url.lower().startswith(("http://", "https://")) else {}
    try:
        return fsspec.open(url, "rb", **streamed).open()
    except FileNotFoundError:
        raise ValueError(f"file not found: {url}") from None


def _decoded(data: bytes, url: str, start: int = 0) -> str:
    """``data`` (the file's bytes from byte ``start``) as text, a UTF-8 BOM at the file's start removed; ValueError
    naming the file and the byte (counted from the file's start, the BOM included) when it is not valid UTF-8."""
    text = data[len(codecs.BOM_UTF8):] if start == 0 and data.startswith(codecs.BOM_UTF8) else data
    try:
        return text.decode("utf-8")
    except UnicodeDecodeError as err:
        at = start + len(data) - len(text) + err.start
        raise ValueError(f"{url} is not valid UTF-8 (byte {at}): {err.reason}") from None


def read_text(url: str) -> str:
    """Whole file as UTF-8 text (a UTF-8 BOM is removed). Raises ValueError naming the file when it
    does not exist or is not valid UTF-8."""
    with _open_binary(url) as handle:
        return _decoded(handle.read(), url)


def _without_cr(line: str) -> str:
    return line[:-1] if line.endswith("\r") else line


#: Bytes :func:`stream_lines` reads at a time: whole blocks, split into lines here (iterating an fsspec remote file
#: line by line reads a block per line and seeks back, quadratic in the file's size, and a streamed HTTP file cannot
#: seek at all).
CHUNK_BYTES = 1 << 16


def stream_lines(url: str) -> Iterator[str]:
    """Lines of a UTF-8 text file without their terminator (``\\n`` or ``\\r\\n``), read a block at a time: a pass over
    a large file holds one block and the line it is in, and one that stops early reads no further (close the iterator
    to close the file). A final terminator does not start an extra empty line; an empty file, or one of a BOM alone,
    has none."""
    with _open_binary(url) as handle:
        start, pending = 0, b""  # the byte where ``pending`` (a line not yet ended) starts in the file
        while chunk := handle.read(CHUNK_BYTES):
            pieces = (pending + chunk).split(b"\n")  # on b"\n" only: no UTF-8 character holds that byte
            pending = pieces.pop()
            for raw in pieces:  # each ended by a b"\n": a line, empty or not
                line = _decoded(raw, url, start)
                start += len(raw) + 1
                yield _without_cr(line)
        if pending:
            line = _decoded(pending, url, start)
            if line:  # a file of a BOM alone has no line
                yield _without_cr(line)


def read_lines(url: str) -> list[str]:
    """All the lines :func:`stream_lines` gives."""
    return list(stream_lines(url))


def read_tsv_rows(url: str) -> Iterator[tuple[int, list[str]]]:
    """(1-based line number, fields) for each line of a tab-separated file, with no quoting
    (the STS/XNLI/PAWS-X files contain bare quote characters)."""
    for number, line in enumerate(read_lines(url), start=1):
        yield number, line.split("\t")


def read_tsv_dicts(url: str) -> Iterator[tuple[int, dict[str, str]]]:
    """(line number, row) for a tab-separated file with a header line, read one line at a time (:func:`stream_lines`);
    no quoting, no field-size limit.
    Blank lines are skipped (as pandas does); a row whose field count differs from the header's is
    yielded as ``{"__error__": reason}``."""
    lines = stream_lines(url)
    header = next(lines, None)
    if header is None:
        return
    header = header.split("\t")
    for number, line in enumerate(lines, start=2):
        if not line.strip():
            continue
        fields = line.split("\t")
        if len(fields) != len(header):
            yield number, {"__error__": f"{len(fields)} fields, header has {len(header)}"}
        else:
            yield number, dict(zip(header, fields))


def read_tsv_header(url: str) -> list[str]:
    """Column names of a tab-separated file with a header line ([] for an empty file); only its first line is read."""
    from contextlib import closing

    with closing(stream_lines(url)) as lines:
        header = next(lines, None)
    return header.split("\t") if header is not None else []


def join_url(base: str, name: str) -> str:
    """``base/name`` for a local directory or fsspec URL."""
    return base.rstrip("/") + "/" + name
