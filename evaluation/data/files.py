"""Reading text files from local paths or fsspec URLs (s3://, gs://, hf://, ...)."""

from __future__ import annotations

import csv
import io
from typing import Iterator


def read_text(url: str) -> str:
    """Whole file as UTF-8 text (a UTF-8 BOM is removed)."""
    import fsspec

    with fsspec.open(url, "rb") as handle:
        return handle.read().decode("utf-8-sig")


def read_lines(url: str) -> list[str]:
    """Lines of a UTF-8 text file without their line terminators (``\\n`` or ``\\r\\n``)."""
    return read_text(url).splitlines()


def read_tsv_rows(url: str) -> Iterator[tuple[int, list[str]]]:
    """(1-based line number, fields) for each line of a tab-separated file, with no quoting
    (the STS/XNLI/PAWS-X files contain bare quote characters)."""
    for number, line in enumerate(read_lines(url), start=1):
        yield number, line.split("\t")


def read_tsv_dicts(url: str) -> Iterator[tuple[int, dict[str, str]]]:
    """(line number, row) for a tab-separated file with a header line; no quoting."""
    reader = csv.reader(io.StringIO(read_text(url)), delimiter="\t", quoting=csv.QUOTE_NONE)
    header = next(reader, None)
    if header is None:
        return
    for number, fields in enumerate(reader, start=2):
        if len(fields) != len(header):
            yield number, {"__error__": f"{len(fields)} fields, header has {len(header)}"}
        else:
            yield number, dict(zip(header, fields))


def join_url(base: str, name: str) -> str:
    """``base/name`` for a local directory or fsspec URL."""
    return base.rstrip("/") + "/" + name
