"""Aggregation of one metric over seeds: mean and standard deviation."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

import numpy as np


@dataclass(frozen=True)
class SeedSummary:
    """Mean and standard deviation of a metric over ``n`` seeds (population std, ddof=0 by default)."""

    mean: float
    std: float
    n: int

    def format(self, digits: int = 2) -> str:
        """``"mean ± std"`` rounded to ``digits`` decimals; ``"n/a"`` when the mean is not a number (a score that could
        not be computed, such as an STS correlation of equal vectors, in some seed)."""
        if not np.isfinite(self.mean):
            return "n/a"
        return f"{self.mean:.{digits}f} ± {self.std:.{digits}f}"


def mean_std(values: Sequence[float], ddof: int = 0) -> SeedSummary:
    """Mean ± std of per-seed values. ``ddof=0`` is numpy's population std; pass 1 for sample std."""
    array = np.asarray(values, dtype=np.float64)
    if array.ndim != 1 or len(array) == 0:
        raise ValueError(f"values must be a non-empty 1-D sequence; got shape {array.shape}")
    if ddof not in (0, 1) or len(array) <= ddof:
        raise ValueError(f"ddof must be 0 or 1 and smaller than the number of values ({len(array)}); got {ddof}")
    return SeedSummary(float(array.mean()), float(array.std(ddof=ddof)), len(array))
