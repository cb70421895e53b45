"""Write an asset's rows as a Parquet file, atomically.

An asset is built once and skipped when its file is present, so a build cut short (Ctrl-C, a killed job) must
never leave a truncated file at the asset's path: the rows are written to ``PATH.partial-PID`` beside it and
renamed into place when complete.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq


def write_rows(rows: list[dict[str, str]], columns: Sequence[str], path: Path) -> None:
    """``rows`` (dicts of strings) as a Parquet file of the string ``columns``, in order, at ``path``."""
    table = pa.table({name: pa.array([row[name] for row in rows], type=pa.string()) for name in columns})
    partial = path.with_name(f"{path.name}.partial-{os.getpid()}")
    try:
        pq.write_table(table, partial)
        os.replace(partial, path)
    finally:
        partial.unlink(missing_ok=True)
