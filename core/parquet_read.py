"""Read a Parquet table from bytes or an open file object without leaving pyarrow work that needs Python at exit.

``pq.read_table`` on Python-owned memory (``pa.BufferReader(bytes)``) or on a Python file object can leave
background work that releases that memory, or closes that file, after the call returns. When it runs while the
interpreter shuts down, it cannot take the GIL and the process aborts ("terminate called without an active
exception", exit 134) after a command has printed its result (apache/arrow#49942, #33975, #50482; seen here in
about one run in three of ``interlingua run train`` / ``hard-negatives``). :func:`read_parquet` hands pyarrow no Python
object: bytes, and what a file object holds, are copied into Arrow-owned memory first (parsing stays
multi-threaded). A local path needs neither and is read as is.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import IO, Any

import pyarrow as pa
import pyarrow.parquet as pq


def arrow_owned(data: bytes | bytearray | memoryview) -> pa.Buffer:
    """``data`` copied into memory Arrow allocated (freeing it never needs the interpreter)."""
    sink = pa.BufferOutputStream()
    sink.write(data)
    return sink.getvalue()


def read_parquet(source: bytes | bytearray | memoryview | IO[bytes] | str, columns: Sequence[str] | None = None,
                 **kwargs: Any) -> pa.Table:
    """The Parquet table in ``source``: bytes, an open binary file object (read from its position to its end) or a
    local path; ``columns`` as ``pq.read_table``'s."""
    wanted = list(columns) if columns is not None else None
    if isinstance(source, str):
        return pq.read_table(source, columns=wanted, **kwargs)
    data = source if isinstance(source, (bytes, bytearray, memoryview)) else source.read()
    return pq.read_table(pa.BufferReader(arrow_owned(data)), columns=wanted, **kwargs)


def read_parquet_at(url: str, columns: Sequence[str] | None = None) -> pa.Table:
    """The Parquet table at ``url``: a local path or any fsspec URL (``s3://``, ``file://``, ``memory://`` …), read
    through fsspec as :func:`read_parquet` reads an open file; ``columns`` as ``pq.read_table``'s."""
    import fsspec

    with fsspec.open(str(url), "rb") as handle:
        return read_parquet(handle, columns)


def parquet_schema_at(url: str) -> pa.Schema:
    """The schema of the Parquet file at ``url`` (a local path or any fsspec URL), its footer alone read."""
    import fsspec

    with fsspec.open(str(url), "rb") as handle:
        return pq.read_schema(handle)
