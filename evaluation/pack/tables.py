"""Reading and writing pack task tables (parquet, string columns)."""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq


def write_table(columns: dict[str, list], path: Path) -> None:
    """Write equal-length columns to ``path`` as parquet."""
    lengths = {name: len(values) for name, values in columns.items()}
    if len(set(lengths.values())) > 1:
        raise ValueError(f"columns differ in length: {lengths}")
    path.parent.mkdir(parents=True, exist_ok=True)
    pq.write_table(pa.table(columns), path)


def read_table(path: str | Path) -> dict[str, list]:
    """Columns of a parquet file as Python lists."""
    return pq.read_table(path).to_pydict()
