"""Read NLI pairs from a JSON-lines file (any fsspec URL, compression inferred) or a Hugging Face dataset id.

``source`` ending in ``.jsonl``/``.json``, optionally followed by a compression suffix that
:func:`~interlingua.core.archives.open_compressed` decompresses (``.gz``, ``.bz2``, ``.xz``, ``.zst`` …:
:func:`~interlingua.core.archives.compressed_suffixes`; a ``.zst`` with no zstd module installed is refused in one
line, not read as a dataset id), is read line by line with fsspec, as bytes decoded line by line (a line that is not UTF-8 becomes
``{ENCODING_ERROR: "invalid UTF-8 at byte B of line n", "line": n}``); a line that is not valid JSON becomes
``{JSON_ERROR: message, "line": n}``, so that
:func:`~interlingua.operators.nli.triples.build_triples` keeps it aside with its reason. Anything
else is a dataset id for ``datasets.load_dataset(source, split=split)`` (e.g. ``snli``,
``nyu-mll/multi_nli``), imported only when used.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

from interlingua.core.archives import open_compressed, strip_compression
from interlingua.operators.nli.triples import ENCODING_ERROR, JSON_ERROR

_FILE_SUFFIXES = (".jsonl", ".json")


def is_jsonl_source(source: str) -> bool:
    return strip_compression(source).lower().endswith(_FILE_SUFFIXES)


def read_jsonl_rows(url: str) -> Iterator[dict[str, Any]]:
    with open_compressed(url, "rb") as handle:
        for number, raw in enumerate(handle, start=1):
            try:
                line = raw.decode("utf-8")
            except UnicodeDecodeError as error:
                yield {ENCODING_ERROR: f"invalid UTF-8 at byte {error.start} of line {number}", "line": number}
                continue
            if not line.strip():
                continue
            try:
                row = json.loads(line)
            except json.JSONDecodeError as error:
                yield {JSON_ERROR: str(error), "line": number}
                continue
            yield row if isinstance(row, dict) else {JSON_ERROR: "line is not an object", "line": number}


def read_hf_rows(dataset_id: str, split: str = "train") -> Iterator[dict[str, Any]]:
    from datasets import load_dataset

    yield from load_dataset(dataset_id, split=split)


def read_nli_rows(source: str, split: str = "train") -> Iterator[dict[str, Any]]:
    """Rows of an NLI source (see the module docstring)."""
    if not isinstance(source, str) or not source:
        raise ValueError(f"source must be a JSONL URL or a dataset id, got {source!r}")
    if is_jsonl_source(source):
        return read_jsonl_rows(source)
    return read_hf_rows(source, split)
