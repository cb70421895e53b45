"""Deterministic shard plans and checksum helpers for the corpus store.

A shard is the unit of work, of resume and of publication: a pipeline splits its input into a
fixed plan of shards (the same plan on every rerun, so a resumed run skips exactly the shards a
crashed run completed), writes one Parquet file per shard, and the manifest records each file's
row count, byte size and SHA-256 checksum.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass

from fsspec import AbstractFileSystem

from interlingua.core.integrity import hash_file

SHARD_ID_PATTERN = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]*$")
"""Shard ids become file names on every filesystem: letters, digits, '.', '_' and '-' only."""


@dataclass(frozen=True)
class ShardSpec:
    """One shard of a plan: rows ``[start, stop)`` of the input, written as shard ``id``."""

    id: str
    start: int
    stop: int

    @property
    def num_rows(self) -> int:
        return self.stop - self.start


def plan_shards(num_rows: int, rows_per_shard: int) -> list[ShardSpec]:
    """Split ``num_rows`` input rows into consecutive shards of at most ``rows_per_shard`` rows.

    The plan depends only on its two arguments, so a rerun produces the same ids and ranges.
    Ids are ``shard-00000``, ``shard-00001``, ... zero-padded to at least 5 digits (wider when
    needed) so that their lexical order is their numeric order. ``num_rows == 0`` gives no shards.
    """
    if isinstance(num_rows, bool) or not isinstance(num_rows, int) or num_rows < 0:
        raise ValueError(f"num_rows must be an integer >= 0, got {num_rows!r}")
    if isinstance(rows_per_shard, bool) or not isinstance(rows_per_shard, int) or rows_per_shard < 1:
        raise ValueError(f"rows_per_shard must be an integer >= 1, got {rows_per_shard!r}")
    num_shards = -(-num_rows // rows_per_shard)
    width = max(5, len(str(max(num_shards - 1, 0))))
    return [
        ShardSpec(
            id=f"shard-{index:0{width}d}",
            start=index * rows_per_shard,
            stop=min((index + 1) * rows_per_shard, num_rows),
        )
        for index in range(num_shards)
    ]


def validate_shard_id(shard_id: str) -> str:
    """Return ``shard_id`` unchanged, or raise ValueError if it cannot be used as a file name."""
    if not isinstance(shard_id, str) or not SHARD_ID_PATTERN.match(shard_id):
        raise ValueError(
            f"shard_id must be a string of letters, digits, '.', '_' or '-' not starting with "
            f"a punctuation mark, got {shard_id!r}"
        )
    return shard_id


def sha256_bytes(data: bytes) -> str:
    """Hex SHA-256 digest of ``data``."""
    return hashlib.sha256(data).hexdigest()


def sha256_file(fs: AbstractFileSystem, path: str) -> str:
    """Hex SHA-256 digest of the file at ``path`` on ``fs`` (:func:`~interlingua.core.integrity.hash_file`)."""
    return hash_file(fs, path)[1]
