"""A sparse (row, column) -> entry map as one small open-addressing hash table per row (numba).

Row ``r`` owns slots ``row_start[r] .. row_start[r] + row_mask[r]`` (a power of two, at most half
full). Column ``c`` (>= 1; 0 marks an empty slot) starts probing at ``hash(c) & row_mask[r]`` and
walks forward until it finds ``c`` or an empty slot. One row's slots are contiguous, so looking one
row word up against a whole sentence stays in cache. ``entry[slot]`` is the index of the entry in
the caller's arrays (the order the entries were given in).
"""

from __future__ import annotations

from dataclasses import dataclass

import numba
import numpy as np


UNNUMBERED = 0xFFFFFFFF  # low half of a :meth:`RowHash.packed` record not numbered yet


@dataclass(frozen=True)
class RowHash:
    row_start: np.ndarray  # int64 per row
    row_mask: np.ndarray  # int64 per row: slots - 1
    columns: np.ndarray  # int32 per slot, 0 = empty
    entry: np.ndarray  # int64 per slot: index of the entry (-1 = empty)

    @classmethod
    def build(cls, rows: np.ndarray, columns: np.ndarray, num_rows: int) -> RowHash:
        """Entries ``(rows[k], columns[k])`` (distinct, columns >= 1) for rows ``0 .. num_rows - 1``."""
        counts = np.bincount(rows, minlength=num_rows).astype(np.int64)
        slots = np.ones(num_rows, np.int64)
        while (slots < 2 * counts).any():
            slots = np.where(slots < 2 * counts, slots * 2, slots)
        row_start = np.concatenate(([0], np.cumsum(slots)[:-1])).astype(np.int64)
        table_columns = np.zeros(int(slots.sum()), np.int32)
        entry = np.full(table_columns.size, -1, np.int64)
        _fill(rows.astype(np.int64), columns.astype(np.int32), row_start, slots - 1, table_columns, entry)
        return cls(row_start, slots - 1, table_columns, entry)

    def packed(self) -> np.ndarray:
        """One int64 record per slot: the column in the high 32 bits, :data:`UNNUMBERED` in the low ones, for a
        caller that numbers the entries it meets (:func:`find_slot` with ``shift=32``): a lookup and its number
        then read one array, not three."""
        return (self.columns.astype(np.int64) << 32) | UNNUMBERED

    def find(self, rows: np.ndarray, columns: np.ndarray) -> np.ndarray:
        """Entry index of each ``(rows[k], columns[k])``; -1 where absent."""
        return _find_many(self.row_start, self.row_mask, self.columns, self.entry, rows.astype(np.int64), columns.astype(np.int64))


@numba.njit(cache=True, nogil=True, inline="always")
def hash_start(column, mask):
    """Knuth's multiplicative hash of ``column`` (32 bits, low bits dropped), in int64 arithmetic."""
    return (((np.int64(column) * 2654435761) & 0xFFFFFFFF) >> 7) & mask


@numba.njit(cache=True, nogil=True, inline="always")
def find_slot(row_start, row_mask, columns, row, column, shift=0):
    """Slot of ``(row, column)``, or -1 (row 0 / column 0 are never stored); ``shift``: 32 when ``columns`` holds
    :meth:`RowHash.packed` records (the column in the high 32 bits)."""
    if row == 0 or column == 0:
        return -1
    mask = row_mask[row]
    base = row_start[row]
    at = hash_start(column, mask)
    while True:
        c = columns[base + at] >> shift
        if c == column:
            return base + at
        if c == 0:
            return -1
        at = (at + 1) & mask


@numba.njit(cache=True, nogil=True)
def _fill(rows, columns_in, row_start, row_mask, columns, entry):
    for k in range(rows.size):
        r, c = rows[k], columns_in[k]
        mask = row_mask[r]
        at = hash_start(c, mask)
        while columns[row_start[r] + at] != 0:
            at = (at + 1) & mask
        columns[row_start[r] + at] = c
        entry[row_start[r] + at] = k


@numba.njit(cache=True, nogil=True)
def _find_many(row_start, row_mask, columns, entry, rows, columns_in):
    out = np.empty(rows.size, np.int64)
    for k in range(rows.size):
        slot = find_slot(row_start, row_mask, columns, rows[k], columns_in[k])
        out[k] = -1 if slot < 0 else entry[slot]
    return out
