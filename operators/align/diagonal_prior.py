"""fast_align's diagonal prior (its ``DiagonalAlignment``) with the C library's arithmetic.

fast_align's prior of source position ``i`` (of ``n``) for target position ``j1`` (1-based, of ``m``) is
``exp(-|i / n - j1 / m| * tension) / (Z(j1, m, n) / (1 - p0))``, with libm's ``exp`` and ``pow``. CPython's
``math.exp`` / ``math.pow`` call those functions; NumPy's ``exp`` does not (its SIMD kernels differ from libm in the
last bit for about 5 % of these values on AVX-512 CPUs), and a last-bit difference decides which of two source
positions equidistant from the diagonal wins a tie. The decoders compute their priors here; the EM's compiled
partition (:func:`~interlingua.operators.align.fast_align_em.partition`) is :func:`partition_given_ratio` compiled.
"""

from __future__ import annotations

import math
from itertools import repeat

import numpy as np

#: fast_align's ``unsigned`` (32 bits): its ComputeZ counts positions in it, and ComputeDLogZ's swapped call wraps.
UINT32 = 0xFFFFFFFF


def partition_given_ratio(j1, m, n, tension, ratio):
    """fast_align's ``ComputeZ(j1, m, n)`` (sum over i = 1..n of exp(-tension * |i / n - j1 / m|), closed form) given
    ``ratio`` = exp(-tension / n), the same for every j1 of a shape; its operations in its order.

    ``floor`` and ``num_top`` are fast_align's ``unsigned``: past ``j1 = m`` (ComputeDLogZ calls it with m and n
    swapped, so ``floor`` may exceed ``n``) ``n - floor`` wraps to about 2**32 and ``ratio ** num_top`` is 0."""
    split = float(j1) * n / m
    floor = int(split) & UINT32
    ceil = floor + 1
    num_top = (n - floor) & UINT32
    top = 0.0
    bottom = 0.0
    if num_top:
        top = math.exp(-abs(ceil / n - j1 / m) * tension) * (1.0 - math.pow(ratio, float(num_top))) / (1.0 - ratio)
    if floor:
        bottom = math.exp(-abs(floor / n - j1 / m) * tension) * (1.0 - math.pow(ratio, float(floor))) / (1.0 - ratio)
    return bottom + top


def partition(j1: int, m: int, n: int, tension: float) -> float:
    """fast_align's ``ComputeZ(j1, m, n)`` with libm's exp and pow."""
    return partition_given_ratio(j1, m, n, tension, math.exp(-tension / n))


def partitions(j1: np.ndarray, m: np.ndarray, n: np.ndarray, tension: float) -> np.ndarray:
    """:func:`partition` of each element (the arguments broadcast; float64)."""
    j1, m, n = np.broadcast_arrays(*(np.asarray(a, np.int64) for a in (j1, m, n)))
    values = map(partition, j1.ravel().tolist(), m.ravel().tolist(), n.ravel().tolist(), repeat(float(tension)))
    return np.fromiter(values, np.float64, j1.size).reshape(j1.shape)


def libm_exp(exponents: np.ndarray) -> np.ndarray:
    """``exp`` of each element by the C library (``math.exp``), as fast_align computes it (float64)."""
    exponents = np.asarray(exponents, np.float64)
    return np.fromiter(map(math.exp, exponents.ravel().tolist()), np.float64, exponents.size).reshape(exponents.shape)
