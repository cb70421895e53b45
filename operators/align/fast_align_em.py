"""fast_align's EM (Dyer, Chahuneau & Smith 2013) for both directions at once, with a shardable E-step.

Semantics follow fast_align's ``-d -o -v`` training (and its other switches):

- **Parameters**: the lexical table holds one entry per (conditioning word, predicted word) that
  co-occur in some pair, plus (NULL, w) for every predicted-side word ``w``. Before the first
  M-step every probability is fast_align's uninitialized 1e-9.
- **E-step** for each predicted word ``f_j`` of a pair: ``p(i) = t(f_j | e_i) * prior(i)`` with
  ``prior(0) = p0`` (NULL), ``prior(i) = exp(-tension * |i / n - (j + 1) / m|) / (Z / (1 - p0))``
  (``Z``: :func:`diagonal_partition`), posterior ``p(i) / sum``. Expected counts, the posterior NULL
  mass, ``log(sum)`` and the empirical diagonal feature ``sum p(i) * -|i / n - j / m|`` (fast_align
  takes the 0-based ``j`` there) are accumulated.
- **Tension** (``optimize_tension``, every iteration but the first): 8 steps of
  ``tension += 20 * (empirical - model feature)``, clipped to [0.1, 14], the model feature being
  fast_align's ``ComputeDLogZ`` summed over the corpus's sentence shapes.
- **M-step**: variational Bayes, ``t = exp(digamma(count + alpha) - digamma(sum_row(count + alpha)))``
  with fast_align's digamma series, or plain normalization.
- fast_align's last iteration only prints alignments, so ``iterations = I`` gives ``I - 1`` updates;
  with ``I = 1`` the tables stay uninitialized (:meth:`LexicalTable.uninitialized`: every probability
  1e-9, the links come from the prior alone, as ``fast_align -I 1`` prints them).
- The exported table keeps, per conditioning word, entries with ``log t >= 4 * log(max t)``
  (fast_align's beam threshold -4).

Both directions are learned together: an entry is a (source word, target word) cell holding the
forward ``t(target | source)`` and the reverse ``t(source | target)``; the forward NULL entries are
cells (NULL, target word), the reverse ones (source word, NULL). A shard works on its *local entries*
only (those its cells use, numbered by first use, both directions' values side by side): each cell is
resolved to its local entry once (:class:`EStepShard`), so an E-step is a gather, a few
multiplications and a scatter-add over local-size tables; :class:`ShardSlots` maps the local entries
to the M-step's ranges.

The E-step of a shard of pairs is independent of the others, and so is the M-step of a range of
groups (:class:`MStepRanges`): each range's owner sums every shard's expected counts for its groups
(int64 fixed point, so the sum is exact: the same parameters for any number of shards or ranges) and
normalizes them. :func:`learn_tables` only sums the shards' statistics and does the tension steps.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

import numba
import numpy as np

from interlingua.operators.align.diagonal_prior import UINT32, partition_given_ratio
from interlingua.operators.align.lexical_table import NULL_WORD, LexicalTable
from interlingua.operators.align.row_hash import UNNUMBERED, RowHash, find_slot

#: fast_align's probability before the first M-step (``TTable::prob`` when uninitialized).
UNINITIALIZED_PROBABILITY = 1e-9
#: fast_align's default beam threshold for writing the table (log-space multiple of the row maximum).
BEAM_THRESHOLD = -4.0
#: Statistics an E-step returns besides counts (index in the ``stats`` array).
STATS = ("likelihood_forward", "likelihood_reverse", "feature_forward", "feature_reverse", "null_forward", "null_reverse")
#: Fixed-point scale of the expected counts, the diagonal features and the NULL posteriors (int64 sums, see
#: :func:`learn_tables`): posteriors are rounded to multiples of 2**-32.
COUNT_SCALE = float(2**32)
#: Fixed-point scale of the log-likelihoods (logged only): multiples of 2**-20.
LIKELIHOOD_SCALE = float(2**20)
#: Scale of each :data:`STATS` entry; the features are accumulated as ``-feature`` (non-negative).
STATS_SCALE = np.array([LIKELIHOOD_SCALE, LIKELIHOOD_SCALE, -COUNT_SCALE, -COUNT_SCALE, COUNT_SCALE, COUNT_SCALE])
#: Most tokens per side the int64 sums can hold (a count, a feature or a NULL sum is at most the token count).
MAX_TOKENS = 2**31 - 1
NULL_ID = 1
#: E-step and resolution cost of one distinct local entry, in cells (measured on the Bible on this 2-core VM: 0.083 us a
#: cell, 0.56 us an entry, from resolve + E-step seconds of the two halves).
ENTRY_COST_IN_CELLS = 7.0
_SAMPLE_BITS = 6  # keys sampled: 1 in 2**6


# -- corpus encoding ---------------------------------------------------------------------------


@dataclass(frozen=True)
class EncodedCorpus:
    """Pairs as word ids (``vocabulary[id - 1]``; id 1 is the NULL word), flat with boundaries."""

    vocabulary: tuple[str, ...]
    src: np.ndarray  # int64 flat
    tgt: np.ndarray
    src_start: np.ndarray  # int64, pairs + 1
    tgt_start: np.ndarray

    @property
    def pairs(self) -> int:
        return self.src_start.size - 1

    def shard_bounds(self, shards: int) -> list[tuple[int, int]]:
        """``shards`` contiguous pair ranges of about equal cell counts (deterministic)."""
        cells = np.cumsum(np.diff(self.src_start) * np.diff(self.tgt_start))
        total = int(cells[-1]) if cells.size else 0
        cuts = [0] + [int(np.searchsorted(cells, total * k / shards, side="left")) + 1 for k in range(1, shards)] + [self.pairs]
        cuts = [min(max(c, 0), self.pairs) for c in cuts]
        for k in range(1, len(cuts)):
            cuts[k] = max(cuts[k], cuts[k - 1])
        return [(cuts[k], cuts[k + 1]) for k in range(shards)]

    def balanced_bounds(self, shards: int, entry_cost: float = ENTRY_COST_IN_CELLS) -> list[tuple[int, int]]:
        """``shards`` contiguous pair ranges of about equal E-step work: cells plus ``entry_cost`` x the range's
        distinct entries (estimated from a 1/64 hash sample of its cell and NULL-cell keys; deterministic).

        A shard's E-step and resolution read and write its local-entry tables at random, so a range with more
        distinct entries costs more per cell; cutting by cells alone left the second half of the Bible (2.14 M
        local entries against 1.73 M) 10-20 % slower at every barrier. Greedy from the left: each range grows
        until its cost reaches the mean of the cell-balanced ranges' costs."""
        cell_bounds = self.shard_bounds(shards)
        if shards < 2 or self.pairs < 2 * shards:
            return cell_bounds
        stride = len(self.vocabulary) + 1
        args = (self.src, self.tgt, self.src_start, self.tgt_start, stride, float(entry_cost))
        target = sum(_range_cost(*args, a, b) for a, b in cell_bounds) / shards
        cuts, start = [0], 0
        for k in range(1, shards):
            # at least one pair per range, and one left for each range still to come
            start = min(max(_grow_range(*args, start, target), start + 1), self.pairs - (shards - k))
            cuts.append(start)
        cuts.append(self.pairs)
        return [(cuts[k], cuts[k + 1]) for k in range(shards)]

    def shard(self, start: int, stop: int) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """src, tgt, src_start, tgt_start of pairs ``start .. stop - 1`` (boundaries from 0)."""
        a, b = self.src_start[start], self.src_start[stop]
        c, d = self.tgt_start[start], self.tgt_start[stop]
        return (self.src[a:b], self.tgt[c:d], self.src_start[start : stop + 1] - a, self.tgt_start[start : stop + 1] - c)


@numba.njit(cache=True, nogil=True, inline="always")
def _sampled(key):
    """Whether ``key`` is in the 1/64 sample (the top bits of a multiplicative hash), and its hash."""
    h = np.uint64(key) * np.uint64(0x9E3779B97F4A7C15)
    return (h >> np.uint64(64 - _SAMPLE_BITS)) == np.uint64(0), h


@numba.njit(cache=True, nogil=True)
def _walk_range(src, tgt, src_start, tgt_start, stride, entry_cost, start, stop, target):
    """Pairs from ``start`` on, accumulating cells + entry_cost x 64 x new sampled keys; returns (the first pair after
    the accumulated cost reached ``target``, or ``stop``; the cost of start .. that pair)."""
    cells = 0
    for s in range(start, stop):
        cells += (src_start[s + 1] - src_start[s]) * (tgt_start[s + 1] - tgt_start[s]) + \
            (src_start[s + 1] - src_start[s]) + (tgt_start[s + 1] - tgt_start[s])
    size = 1
    while size < 2 * (cells >> _SAMPLE_BITS) + 16:
        size *= 2
    table = np.full(size, -1, np.int64)
    mask = np.uint64(size - 1)
    cost = 0.0
    scale = entry_cost * (1 << _SAMPLE_BITS)
    for s in range(start, stop):
        a, b, c, d = src_start[s], src_start[s + 1], tgt_start[s], tgt_start[s + 1]
        new = 0
        for i in range(a, b + 1):  # i == b: the NULL source word
            for j in range(c, d + 1):  # j == d: the NULL target word
                if i == b and j == d:
                    continue
                key = (src[i] if i < b else NULL_ID) * stride + (tgt[j] if j < d else NULL_ID)
                sampled, h = _sampled(key)
                if not sampled:
                    continue
                slot = h & mask
                while table[slot] != -1 and table[slot] != key:
                    slot = (slot + np.uint64(1)) & mask
                if table[slot] == -1:
                    table[slot] = key
                    new += 1
        cost += (b - a) * (d - c) + scale * new
        if cost >= target:
            return s + 1, cost
    return stop, cost


@numba.njit(cache=True, nogil=True)
def _range_cost(src, tgt, src_start, tgt_start, stride, entry_cost, start, stop):
    return _walk_range(src, tgt, src_start, tgt_start, stride, entry_cost, start, stop, np.inf)[1]


@numba.njit(cache=True, nogil=True)
def _grow_range(src, tgt, src_start, tgt_start, stride, entry_cost, start, target):
    return _walk_range(src, tgt, src_start, tgt_start, stride, entry_cost, start, src_start.size - 1, target)[0]


def encode_corpus(pairs: Iterable[tuple[Sequence[str], Sequence[str]]]) -> EncodedCorpus:
    """Ids in order of first appearance (the NULL word first, as fast_align's dictionary).

    Pairs must have two non-empty sides. A token spelled as the NULL word gets the NULL id, as in fast_align.
    """
    ids: dict[str, int] = {NULL_WORD: NULL_ID}
    src_ids: list[int] = []
    tgt_ids: list[int] = []
    src_lengths: list[int] = []
    tgt_lengths: list[int] = []
    for src, tgt in pairs:
        src_ids.extend([ids.setdefault(word, len(ids) + 1) for word in src])
        tgt_ids.extend([ids.setdefault(word, len(ids) + 1) for word in tgt])
        src_lengths.append(len(src))
        tgt_lengths.append(len(tgt))
    vocabulary = tuple(ids)
    return EncodedCorpus(vocabulary, np.array(src_ids, np.int64), np.array(tgt_ids, np.int64),
                         np.concatenate(([0], np.cumsum(src_lengths, dtype=np.int64))),
                         np.concatenate(([0], np.cumsum(tgt_lengths, dtype=np.int64))))


# -- fast_align's closed forms (da.h, ttables.h), compiled ---------------------------------------


#: :func:`partition` given ``ratio`` = exp(-tension / n), the same for every j1 of a shape: the decoders' pure-Python
#: :func:`~interlingua.operators.align.diagonal_prior.partition_given_ratio` (fast_align's unsigned wrap included), compiled.
_partition = numba.njit(cache=True, nogil=True)(partition_given_ratio)


@numba.njit(cache=True, nogil=True)
def partition(j1, m, n, tension):
    """fast_align's ``ComputeZ(j1, m, n)``: sum over i = 1..n of exp(-tension * |i / n - j1 / m|) for ``j1 <= m``."""
    return _partition(j1, m, n, tension, math.exp(-tension / n))


@numba.njit(cache=True, nogil=True)
def _arithmetico_geometric(a_1, g_1, r, d, count):
    """fast_align's ``arithmetico_geometric_series``; ``count`` (its ``unsigned n``) reaches libm's ``pow`` as a double:
    numba's ``math.pow`` with an integer exponent multiplies by squaring instead, which differs from libm's ``pow`` in
    the last bit for most of the ratios and counts the tension search meets (the update amplifies such bits)."""
    g_np1 = g_1 * math.pow(r, float(count))
    a_n = d * (count - 1) + a_1
    x_1 = a_1 * g_1
    g_2 = g_1 * r
    rm1 = r - 1
    return (a_n * g_np1 - x_1) / rm1 - d * (g_np1 - g_2) / (rm1 * rm1)


@numba.njit(cache=True, nogil=True)
def dlog_partition(j1, m, n, tension):
    """fast_align's ``ComputeDLogZ(j1, m, n)``. Its Z call swaps m and n, kept as fast_align computes it: for
    ``j1 > n`` that Z's unsigned ``num_top`` wraps (:func:`_partition`), as in fast_align's and systran-align's builds."""
    return _dlog_partition(j1, m, n, tension, math.exp(-tension / n), math.exp(-tension / m))


@numba.njit(cache=True, nogil=True)
def _dlog_partition(j1, m, n, tension, ratio, swapped_ratio):
    """:func:`dlog_partition` given ``ratio`` = exp(-tension / n) and ``swapped_ratio`` = exp(-tension / m) (its Z's)."""
    z = _partition(j1, n, m, tension, swapped_ratio)
    split = float(j1) * n / m
    floor = int(split) & UINT32
    ceil = floor + 1
    d = -1.0 / n
    num_top = (n - floor) & UINT32
    top = 0.0
    bottom = 0.0
    if num_top:
        feature = -abs(ceil / n - j1 / m)
        top = _arithmetico_geometric(feature, math.exp(feature * tension), ratio, d, num_top)
    if floor:
        feature = -abs(floor / n - j1 / m)
        bottom = _arithmetico_geometric(feature, math.exp(feature * tension), ratio, d, floor)
    return (top + bottom) / z


@numba.njit(cache=True, nogil=True)
def model_feature(shape_m, shape_n, shape_count, tension):
    """sum over shapes (m predicted, n conditioning words) x j of count * DLogZ (before / tokens).

    A shape's two geometric ratios are computed once for all its j (the tension search calls this 16 times an
    iteration on the driver, while the workers wait for the new tensions)."""
    total = 0.0
    for k in range(shape_m.size):
        m, n = shape_m[k], shape_n[k]
        ratio, swapped_ratio = math.exp(-tension / n), math.exp(-tension / m)
        for j in range(1, m + 1):
            total += shape_count[k] * _dlog_partition(j, m, n, tension, ratio, swapped_ratio)
    return total


@numba.njit(cache=True, nogil=True)
def optimize_tension(shape_m, shape_n, shape_count, tension, feature, tokens):
    """fast_align's tension update of one direction: 8 steps of ``tension += 20 * (feature - model feature / tokens)``,
    clipped to [0.1, 14] (``feature``: the E-step's empirical diagonal feature per token)."""
    for _ in range(8):
        modelled = model_feature(shape_m, shape_n, shape_count, tension) / tokens
        tension += (feature - modelled) * 20.0
        tension = min(max(tension, 0.1), 14.0)
    return tension


@numba.njit(cache=True, nogil=True)
def digamma(x):
    """fast_align's ``Md::digamma`` (recurrence up to 7, then the asymptotic series)."""
    result = 0.0
    while x < 7:
        result -= 1 / x
        x += 1
    x -= 1.0 / 2.0
    xx = 1.0 / x
    xx2 = xx * xx
    xx4 = xx2 * xx2
    result += math.log(x) + (1.0 / 24.0) * xx2 - (7.0 / 960.0) * xx4 + (31.0 / 8064.0) * xx4 * xx2 - (127.0 / 30720.0) * xx4 * xx4
    return result


@numba.njit(cache=True, nogil=True)
def _normalize_groups(counts, group_start, alpha, variational_bayes, out):
    """out[k] for each group ``group_start[g] <= k < group_start[g + 1]`` (fast_align's Normalize[VB]).

    Each group is summed in order, so the result depends only on the group, not on which range holds it. An entry
    with no expected count gets the group's one ``exp(digamma(alpha) - digamma(total))`` (``0.0 + alpha == alpha``:
    the same bits as computing it per entry).
    """
    for g in range(group_start.size - 1):
        a, b = group_start[g], group_start[g + 1]
        total = 0.0
        for k in range(a, b):
            total += counts[k] + (alpha if variational_bayes else 0.0)
        if total == 0.0:
            total = 1.0
        if variational_bayes:
            digamma_total = digamma(total)
            # most entries have no expected count after a few iterations (the Bible: 1 %, 45 %, 88 %, 94 % in its 4
            # updates): digamma(0.0 + alpha) once a group, the same bits
            no_count = math.exp(digamma(alpha) - digamma_total)
            for k in range(a, b):
                count = counts[k]
                out[k] = no_count if count == 0.0 else math.exp(digamma(count + alpha) - digamma_total)
        else:
            for k in range(a, b):
                out[k] = counts[k] / total


# -- the E-step of one shard -------------------------------------------------------------------


def sorted_distinct(keys: np.ndarray) -> np.ndarray:
    """The distinct values of ``keys``, sorted (same as ``np.unique(keys)``).

    Sort-based on purpose: NumPy 2.4's plain ``np.unique`` takes a hash path that costs seconds on the
    millions of distinct int64 keys a Bible-size corpus has (8.9 s vs 0.04 s for 3.8 M keys).
    """
    return _distinct_of_sorted(np.sort(keys))


@numba.njit(cache=True, nogil=True)
def _distinct_of_sorted(ordered):
    """The distinct values of a sorted array (a new array)."""
    count = 1 if ordered.size else 0
    for k in range(1, ordered.size):
        count += ordered[k] != ordered[k - 1]
    out = np.empty(count, ordered.dtype)
    at = 0
    for k in range(ordered.size):
        if k == 0 or ordered[k] != ordered[k - 1]:
            out[at] = ordered[k]
            at += 1
    return out


@numba.njit(cache=True, nogil=True)
def _shard_keys(src, tgt, src_start, tgt_start, stride, null_id):
    """Keys ``source * stride + target`` of every cell (pair by pair, source-major), then of every (NULL, target word)
    and (source word, NULL), in one array."""
    cells = 0
    for s in range(src_start.size - 1):
        cells += (src_start[s + 1] - src_start[s]) * (tgt_start[s + 1] - tgt_start[s])
    out = np.empty(cells + tgt.size + src.size, np.int64)
    k = 0
    for s in range(src_start.size - 1):
        for i in range(src_start[s], src_start[s + 1]):
            for j in range(tgt_start[s], tgt_start[s + 1]):
                out[k] = src[i] * stride + tgt[j]
                k += 1
    for j in range(tgt.size):
        out[k + j] = null_id * stride + tgt[j]
    for i in range(src.size):
        out[k + tgt.size + i] = src[i] * stride + null_id
    return out


@numba.njit(cache=True, nogil=True)
def _resolve_cells(src, tgt, src_start, tgt_start, row_start, row_mask, packed, entry, entries, null_id):
    """Every cell's, (NULL, target word)'s and (source word, NULL)'s local entry, entries numbered in order of first
    use (pair by pair: its NULL cells, then its cells), so the entries a pair uses sit together in memory.

    ``packed``: the hash's :meth:`RowHash.packed` records; a slot's number is written into its record's low half at
    first use, so a lookup touches one record (not the slot's column, its entry and the entry's number: three
    random reads, and two shards resolving at once slowed each other by 15-25 %). ``entry``: the hash's sorted-key
    index per slot. Returns cells, NULL cells of the targets, of the sources, and each local entry's sorted-key
    index (``entries`` of them, every one used). The cells' local entries are uint32 (a shard has fewer than
    :data:`UNNUMBERED` = 2**32 - 1): the E-step streams half the bytes it did with int64 and runs about 10 % faster
    (the Bible in one process: 0.58-0.64 s, 0.53-0.56 s with uint32).
    """
    sorted_index = np.empty(entries, np.int64)
    total = 0
    for s in range(src_start.size - 1):
        total += (src_start[s + 1] - src_start[s]) * (tgt_start[s + 1] - tgt_start[s])
    cells = np.empty(total, np.uint32)
    null_f = np.empty(tgt.size, np.uint32)
    null_r = np.empty(src.size, np.uint32)
    used = 0
    cell = 0
    # the numbering is written out in each loop: an inlined helper returning (number, used) made this 1.5-1.8x slower
    for s in range(src_start.size - 1):
        for j in range(tgt_start[s], tgt_start[s + 1]):
            slot = find_slot(row_start, row_mask, packed, null_id, tgt[j], 32)
            number = packed[slot] & UNNUMBERED
            if number == UNNUMBERED:
                number = used
                packed[slot] += used - UNNUMBERED
                sorted_index[used] = entry[slot]
                used += 1
            null_f[j] = number
        for i in range(src_start[s], src_start[s + 1]):
            slot = find_slot(row_start, row_mask, packed, src[i], null_id, 32)
            number = packed[slot] & UNNUMBERED
            if number == UNNUMBERED:
                number = used
                packed[slot] += used - UNNUMBERED
                sorted_index[used] = entry[slot]
                used += 1
            null_r[i] = number
        for i in range(src_start[s], src_start[s + 1]):
            for j in range(tgt_start[s], tgt_start[s + 1]):
                slot = find_slot(row_start, row_mask, packed, src[i], tgt[j], 32)
                number = packed[slot] & UNNUMBERED
                if number == UNNUMBERED:
                    number = used
                    packed[slot] += used - UNNUMBERED
                    sorted_index[used] = entry[slot]
                    used += 1
                cells[cell] = number
                cell += 1
    if used != entries:
        raise ValueError("a local entry is used by no cell")
    return cells, null_f, null_r, sorted_index


@numba.njit(cache=True, nogil=True)
def _priors(shape_n, shape_m, shape_offset, total, tension, p0):
    """prior(i, j) of every shape (n conditioning x m predicted), block [(i - 1) * m + j]."""
    out = np.empty(total, np.float64)
    for k in range(shape_n.size):
        n, m = shape_n[k], shape_m[k]
        ratio = math.exp(-tension / n)
        for j in range(m):
            az = _partition(j + 1, m, n, tension, ratio) / (1.0 - p0)
            for i in range(1, n + 1):
                out[shape_offset[k] + (i - 1) * m + j] = math.exp(-abs(i / n - (j + 1) / m) * tension) / az
    return out


@numba.njit(cache=True, nogil=True, inline="always")
def _fixed(value, scale):
    """``value`` in units of ``1 / scale``, rounded to the nearest integer (int64)."""
    return np.int64(math.floor(value * scale + 0.5))


@numba.njit(cache=True, nogil=True)
def _e_step(src, tgt, src_start, tgt_start, cells, null_f_entry, null_r_entry, shape_of, f_offset, r_offset,
            f_prior, r_prior, t, use_null, favor_diagonal, p0, counts, stats):
    """Accumulate both directions' expected counts of the shard's pairs into ``counts`` (int64, fixed point).

    ``t[e]`` holds entry ``e``'s forward and reverse probabilities side by side and ``counts[e]`` its two counts; both
    are views of one ``(entries, 4)`` buffer (:attr:`EStepShard.table`), so a cell reads and updates one 32-byte record.
    """
    max_cells, max_n, max_m = 1, 1, 1
    for s in range(src_start.size - 1):
        n, m = src_start[s + 1] - src_start[s], tgt_start[s + 1] - tgt_start[s]
        max_cells, max_n, max_m = max(max_cells, n * m), max(max_n, n), max(max_m, m)
    pf = np.empty(max_cells, np.float64)
    pr = np.empty(max_cells, np.float64)
    sum_f = np.empty(max_m, np.float64)
    sum_r = np.empty(max_n, np.float64)
    cell = 0
    for s in range(src_start.size - 1):
        a, c = src_start[s], tgt_start[s]
        n, m = src_start[s + 1] - a, tgt_start[s + 1] - c
        uniform_f = 1.0 / (n + (1.0 if use_null else 0.0))
        uniform_r = 1.0 / (m + (1.0 if use_null else 0.0))
        shape = shape_of[s]
        for j in range(m):
            sum_f[j] = t[null_f_entry[c + j], 0] * (p0 if favor_diagonal else uniform_f) if use_null else 0.0
        for i in range(n):
            sum_r[i] = t[null_r_entry[a + i], 1] * (p0 if favor_diagonal else uniform_r) if use_null else 0.0
        for i in range(n):
            for j in range(m):
                k = i * m + j
                entry = cells[cell + k]
                # forward: source i + 1 of n generates target j; reverse: target j + 1 of m generates source i
                pf[k] = t[entry, 0] * (f_prior[f_offset[shape] + k] if favor_diagonal else uniform_f)
                pr[k] = t[entry, 1] * (r_prior[r_offset[shape] + j * n + i] if favor_diagonal else uniform_r)
                sum_f[j] += pf[k]
                sum_r[i] += pr[k]
        if use_null:
            for j in range(m):
                q = t[null_f_entry[c + j], 0] * (p0 if favor_diagonal else uniform_f) / sum_f[j]
                fixed = _fixed(q, COUNT_SCALE)
                counts[null_f_entry[c + j], 0] += fixed
                stats[4] += fixed
            for i in range(n):
                q = t[null_r_entry[a + i], 1] * (p0 if favor_diagonal else uniform_r) / sum_r[i]
                fixed = _fixed(q, COUNT_SCALE)
                counts[null_r_entry[a + i], 1] += fixed
                stats[5] += fixed
        for i in range(n):
            for j in range(m):
                k = i * m + j
                entry = cells[cell + k]
                qf = pf[k] / sum_f[j]
                qr = pr[k] / sum_r[i]
                counts[entry, 0] += _fixed(qf, COUNT_SCALE)
                counts[entry, 1] += _fixed(qr, COUNT_SCALE)
                stats[2] += _fixed(abs((i + 1) / n - j / m) * qf, COUNT_SCALE)
                stats[3] += _fixed(abs((j + 1) / m - i / n) * qr, COUNT_SCALE)
        for j in range(m):
            stats[0] += _fixed(math.log(sum_f[j]), LIKELIHOOD_SCALE)
        for i in range(n):
            stats[1] += _fixed(math.log(sum_r[i]), LIKELIHOOD_SCALE)
        cell += n * m


@numba.njit(cache=True, nogil=True)
def positions_in(sub, keys):
    """Index in ``keys`` of each value of ``sub`` (both sorted and distinct, ``sub`` a subset): a linear merge."""
    out = np.empty(sub.size, np.int64)
    k = 0
    for i in range(sub.size):
        while k < keys.size and keys[k] < sub[i]:
            k += 1
        if k == keys.size or keys[k] != sub[i]:
            raise ValueError("a shard key is missing from the merged keys")
        out[i] = k
    return out


@numba.njit(cache=True, nogil=True)
def _merge_distinct(a, b):
    """The sorted distinct union of two sorted distinct arrays."""
    out = np.empty(a.size + b.size, np.int64)
    i = j = k = 0
    while i < a.size and j < b.size:
        if a[i] < b[j]:
            out[k] = a[i]
            i += 1
        elif b[j] < a[i]:
            out[k] = b[j]
            j += 1
        else:
            out[k] = a[i]
            i += 1
            j += 1
        k += 1
    while i < a.size:
        out[k] = a[i]
        i += 1
        k += 1
    while j < b.size:
        out[k] = b[j]
        j += 1
        k += 1
    return out[:k]


def merge_distinct(parts: Sequence[np.ndarray]) -> np.ndarray:
    """The sorted distinct union of sorted distinct int64 arrays (linear merges, pairwise)."""
    parts = [np.asarray(p, np.int64) for p in parts] or [np.zeros(0, np.int64)]
    while len(parts) > 1:
        parts = [_merge_distinct(parts[k], parts[k + 1]) if k + 1 < len(parts) else parts[k] for k in range(0, len(parts), 2)]
    return parts[0]


class EStepShard:
    """One shard of pairs and its *local entries* (the entries its cells and NULL cells touch), cells resolved to
    local entries once; :meth:`e_step` per iteration on local-size tables (:class:`ShardSlots` maps them to the
    M-step's ranges)."""

    def __init__(self, src: np.ndarray, tgt: np.ndarray, src_start: np.ndarray, tgt_start: np.ndarray, stride: int):
        self.src, self.tgt, self.src_start, self.tgt_start, self.stride = src, tgt, src_start, tgt_start, stride
        n, m = np.diff(src_start), np.diff(tgt_start)
        shapes, self.shape_of = np.unique(n * (1 << 20) + m, return_inverse=True)
        self.shape_n, self.shape_m = shapes >> 20, shapes & ((1 << 20) - 1)
        sizes = self.shape_n * self.shape_m
        self.shape_offset = np.concatenate(([0], np.cumsum(sizes)[:-1])).astype(np.int64)
        self.prior_size = int(sizes.sum())

    def distinct_keys(self) -> np.ndarray:
        """The initial pass: sorted distinct keys of the shard's cells, (NULL, target word) and (source word, NULL)
        cells (its local entries)."""
        keys = _shard_keys(self.src, self.tgt, self.src_start, self.tgt_start, self.stride, NULL_ID)
        keys.sort()  # in place: one array of the shard's cell count, not three
        self.local_keys = _distinct_of_sorted(keys)
        return self.local_keys

    def resolve(self, keys: np.ndarray) -> None:
        """Every cell and NULL cell resolved to its local entry (once, before the iterations), and where the local
        entries are in ``keys`` (every shard's keys, merged): :meth:`resolve_local`, then :meth:`globalize`."""
        self.resolve_local()
        self.globalize(keys)

    def resolve_local(self) -> None:
        """Every cell and NULL cell resolved to its local entry, from the shard's own keys only (so it can run while the
        driver merges every shard's keys). Local entries are numbered in order of first use (:func:`_resolve_cells`):
        the E-step's reads and writes then stay in fewer cache lines and pages."""
        local = self.local_keys
        if local.size >= UNNUMBERED:
            raise ValueError(f"a shard touches {local.size:,} entries, at most {UNNUMBERED - 1:,} fit: use more shards")
        h = RowHash.build(local // self.stride, local % self.stride, self.stride)
        self.cells, self.null_f, self.null_r, self.local_order = _resolve_cells(
            self.src, self.tgt, self.src_start, self.tgt_start, h.row_start, h.row_mask, h.packed(), h.entry, local.size, NULL_ID)
        self.entries = local.size
        self._table = self._counts = None  # the E-step's views of one buffer (:attr:`table`), made at first use

    def globalize(self, keys: np.ndarray) -> None:
        """``sorted_entries``: the shard's entries' indices in ``keys`` (the merged keys), ascending; local entry ``e``
        (numbered by :meth:`resolve_local`) is ``sorted_entries[local_order[e]]``."""
        self.sorted_entries = positions_in(self.local_keys, keys)
        del self.local_keys

    @property
    def global_index(self) -> np.ndarray:
        """Each local entry's index in the merged keys."""
        return self.sorted_entries[self.local_order]

    @property
    def table(self) -> np.ndarray:
        """The E-step's input, forward and reverse probability per local entry (``(entries, 2)`` float64): fill it in
        place (:meth:`ShardSlots.tables` with ``out=``) to save a copy.

        It shares one ``(entries, 4)`` buffer with the counts (an entry's two probabilities, then its two counts): a
        cell then reads and updates one 32-byte record, half a cache line, instead of a line of each array. The
        E-step's random accesses are bound by the shared last-level cache, so this halves the lines in use; two
        shards' E-steps running at once slowed each other by 5-15 % before, 1-6 % after (the Bible's halves)."""
        if self._table is None:
            work = _aligned_records(self.entries, 4)
            self._table, self._counts = work[:, :2].view(np.float64), work[:, 2:]
        return self._table

    def e_step(self, t: np.ndarray, tensions: tuple[float, float], settings) -> tuple[np.ndarray, np.ndarray]:
        """Expected counts per local entry (forward, reverse: shape ``(entries, 2)``) and :data:`STATS` of the shard,
        int64 fixed point (:data:`COUNT_SCALE`, :data:`STATS_SCALE`); ``t``: forward and reverse probability per
        local entry, shape ``(entries, 2)`` (:attr:`table`, or an array copied into it). The counts are a view of the
        shard's buffer, valid until its next E-step."""
        p0 = settings.prob_align_null if not settings.no_null_word else 0.0
        if settings.favor_diagonal:
            f_prior = _priors(self.shape_n, self.shape_m, self.shape_offset, self.prior_size, tensions[0], p0)
            # reverse: conditioning = target (m), predicted = source (n); block [(j - 1) * n + i]
            r_prior = _priors(self.shape_m, self.shape_n, self.shape_offset, self.prior_size, tensions[1], p0)
        else:
            f_prior = r_prior = np.zeros(1)
        table = self.table
        if t is not table:
            table[...] = t
        counts = self._counts
        counts[...] = 0
        stats = np.zeros(len(STATS), np.int64)
        _e_step(self.src, self.tgt, self.src_start, self.tgt_start, self.cells, self.null_f, self.null_r, self.shape_of,
                self.shape_offset, self.shape_offset, f_prior, r_prior, table, not settings.no_null_word,
                settings.favor_diagonal, p0, counts, stats)
        return counts, stats


def _aligned_records(rows: int, columns: int) -> np.ndarray:
    """A zeroed ``(rows, columns)`` int64 array whose first row starts on a 64-byte cache line (numpy's own large
    arrays start 16 bytes into a page, so every other 32-byte record would straddle two lines)."""
    raw = np.zeros(rows * columns + 8, np.int64)
    skip = (-raw.ctypes.data % 64) // 8
    return raw[skip:skip + rows * columns].reshape(rows, columns)


# -- the M-step, cut into ranges of whole groups (one per worker) ------------------------------


@dataclass(frozen=True)
class MStepRanges:
    """The M-step's groups cut into ``parts`` ranges, one per worker (a reduce-scatter of the counts).

    A direction's groups are its conditioning words' rows (forward: entries by source word, reverse:
    by target word); ``rank`` gives each entry's place in the direction's table, group by group (-1:
    not in that table), ``groups`` the groups' starts among those places and ``cuts`` the first group
    of each range (about equal entry counts). Each shard finds where its local entries sit in the
    ranges once (:meth:`slots`, a pass over its local entries only). Per iteration shard ``p`` adds its
    counts in range ``p`` (it owns that range) into the range's totals and sends every other range
    only its non-zero counts, with their places (:meth:`ShardSlots.split`); the owner adds those
    (exact integer sums) and normalizes its groups (:meth:`normalize`); each shard gathers its local
    entries' probabilities from all ranges for its next E-step (:meth:`ShardSlots.tables`), and each
    range exports its beam (:meth:`export`). A group is always normalized whole by one worker, in the
    same order, so the tables do not depend on ``parts``.
    """

    forward_rank: np.ndarray  # int64 per entry: its place in the forward table (groups in order); -1: not in it
    forward_groups: np.ndarray  # int64 group starts among those places, groups + 1
    forward_cuts: np.ndarray  # int64 first group of each range, parts + 1
    reverse_rank: np.ndarray
    reverse_groups: np.ndarray
    reverse_cuts: np.ndarray

    @classmethod
    def build(cls, keys: np.ndarray, stride: int, corpus: EncodedCorpus, settings, parts: int) -> MStepRanges:
        if keys.size > PLACE_MASK:
            raise ValueError(f"{keys.size:,} table entries, at most {PLACE_MASK:,} can be learned in one run: split the corpus")
        # forward entries: co-occurrences and (NULL, w) for target-side words; reverse: and (w, NULL) for source-side
        forward_member, reverse_member = _membership(keys, stride, corpus, not settings.no_null_word)
        forward_rank, forward_groups = _groups(keys // stride, forward_member, stride)
        reverse_rank, reverse_groups = _groups(keys % stride, reverse_member, stride)
        return cls(forward_rank, forward_groups, _cuts(forward_groups, parts),
                   reverse_rank, reverse_groups, _cuts(reverse_groups, parts))

    @property
    def parts(self) -> int:
        return self.forward_cuts.size - 1

    def _directions(self) -> tuple[tuple[np.ndarray, np.ndarray, np.ndarray], ...]:
        return ((self.forward_rank, self.forward_groups, self.forward_cuts),
                (self.reverse_rank, self.reverse_groups, self.reverse_cuts))

    def slots(self, sorted_entries: np.ndarray, local_order: np.ndarray) -> ShardSlots:
        """Where a shard's local entries sit in the ranges: local entry ``e`` is entry ``sorted_entries[local_order[e]]``
        (``sorted_entries`` ascending: the ranks are then read in order, and each local entry's result once, at
        random; reading both ranks at random for each local entry took twice as long)."""
        starts = np.array([groups[cuts] for _, groups, cuts in self._directions()], np.int64)  # (2, parts + 1)
        destination, capacity = _destinations(_frozen(self.forward_rank), _frozen(self.reverse_rank), starts,
                                              np.asarray(sorted_entries, np.int64), np.asarray(local_order, np.int64))
        return ShardSlots(destination, capacity, np.diff(starts, axis=1))

    def normalize(self, part: int, own: tuple[np.ndarray, np.ndarray], received: Sequence[SparseCounts],
                  settings) -> tuple[np.ndarray, np.ndarray]:
        """Range ``part``'s (forward, reverse) probabilities from its owner's totals (``own``, from
        :meth:`ShardSlots.split`; added to in place) and every other shard's counts in it (``received``, in any
        order: the sums are exact)."""
        out = []
        for d, (_, groups, cuts) in enumerate(self._directions()):
            starts = groups[cuts[part]:cuts[part + 1] + 1] - groups[cuts[part]]
            counts = sum_scaled_at(own[d], [r[2 * d] for r in received], [r[2 * d + 1] for r in received], COUNT_SCALE)
            t = np.empty(counts.size)
            _normalize_groups(counts, starts, settings.alpha, settings.variational_bayes, t)
            out.append(t)
        return out[0], out[1]

    def export(self, part: int, normalized: tuple[np.ndarray, np.ndarray], keys: np.ndarray, stride: int,
               beam: bool = True) -> tuple[np.ndarray, ...]:
        """Range ``part``'s entries kept by fast_align's beam (every entry without ``beam``: the table fast_align's
        last iteration decodes with): forward keys, probabilities, reverse keys, probabilities."""
        out: list[np.ndarray] = []
        for d, (rank, groups, cuts) in enumerate(self._directions()):
            a, b = cuts[part], cuts[part + 1]
            if beam:
                keep = _beam(normalized[d], groups[a:b + 1] - groups[a], BEAM_THRESHOLD)
            else:
                keep = np.ones(int(groups[b] - groups[a]), np.bool_)
            chosen = keys[_entries_at(_frozen(rank), groups[a], groups[b])[keep]]
            out += [chosen if d == 0 else (chosen % stride) * stride + chosen // stride, normalized[d][keep]]
        return tuple(out)

    @staticmethod
    def lexical_tables(parts: Sequence[tuple[np.ndarray, ...]], vocabulary: tuple[str, ...]) -> tuple[LexicalTable, LexicalTable]:
        """The forward and reverse tables from every range's :meth:`export`, in range order."""
        out = []
        for d in (0, 1):
            keys = np.concatenate([p[2 * d] for p in parts]).astype(np.int64)
            probabilities = np.concatenate([p[2 * d + 1] for p in parts]).astype(np.float64)
            sort = np.argsort(keys, kind="stable")
            out.append(LexicalTable(vocabulary, keys[sort], probabilities[sort]))
        return out[0], out[1]


#: A shard's non-zero counts in one range it does not own (:meth:`ShardSlots.split`): forward places in the range's
#: slice (uint32), their int64 counts, reverse places, their counts.
SparseCounts = tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]
#: A destination packs ``range << 32 | place in the range's slice``.
PLACE_MASK = 0xFFFFFFFF


@dataclass(frozen=True)
class ShardSlots:
    """Where one shard's local entries sit in the M-step's ranges (:meth:`MStepRanges.slots`).

    ``destination[e, d]`` is local entry ``e``'s range and place in that range's slice in direction ``d``
    (``range << 32 | place``; -1: the entry is not in direction ``d``'s table); ``capacity[d, p]`` counts the
    shard's local entries in range ``p`` of direction ``d`` and ``sizes[d, p]`` is the size of range ``p``'s
    slice. Shard ``p`` owns range ``p``: its counts there never leave it, and it sends every other range only
    its non-zero counts (:meth:`split`), so nothing is sent for an entry the shard never touches and, from the
    third iteration on, for most of those it does (88-94 % of the Bible's counts are then 0).
    """

    destination: np.ndarray
    capacity: np.ndarray
    sizes: np.ndarray

    @property
    def size(self) -> int:
        """Local entries."""
        return self.destination.shape[0]

    def split(self, counts: np.ndarray, own: int | None) -> tuple[tuple[np.ndarray, np.ndarray], list[SparseCounts | None]]:
        """The shard's local counts (``(entries, 2)`` int64: forward, reverse) by range, in one pass over the local
        entries: those in range ``own`` added into zeroed int64 totals of its (forward, reverse) slices, those in
        every other range as :data:`SparseCounts` (non-zero counts only). Returns the totals and one entry per range
        (``None`` at ``own``); ``own=None``: the shard owns no range, all its counts travel (empty totals)."""
        parts = self.sizes.shape[1]
        capacity = self.capacity.copy()
        if own is None:
            own, totals = -1, (np.zeros(0, np.int64), np.zeros(0, np.int64))
        else:
            totals = (np.zeros(self.sizes[0, own], np.int64), np.zeros(self.sizes[1, own], np.int64))
            capacity[:, own] = 0  # the own range's counts are added up in place, never listed
        starts = np.zeros((2, parts + 1), np.int64)
        np.cumsum(capacity, axis=1, out=starts[:, 1:])
        places = np.empty((2, int(starts[:, -1].max())), np.uint32)
        values = np.empty(places.shape, np.int64)
        ends = _split_counts(counts, self.destination, own, totals[0], totals[1], starts, places, values)
        sends: list[SparseCounts | None] = [
            None if p == own else tuple(a[d, starts[d, p]:ends[d, p]] for d in (0, 1) for a in (places, values))
            for p in range(parts)]
        return totals, sends

    def tables(self, normalized: Sequence[tuple[np.ndarray, np.ndarray]], out: np.ndarray | None = None) -> np.ndarray:
        """Forward and reverse probability per local entry (``(entries, 2)``) from every range's probabilities (none
        yet: uninitialized); written into ``out`` (e.g. :attr:`EStepShard.table`) when given."""
        t = np.zeros((self.size, 2)) if out is None else out
        if not normalized:
            t[...] = UNINITIALIZED_PROBABILITY
            return t
        # an entry outside a direction's table is never read by its E-step: ``out`` keeps whatever it held there
        # one compiled signature whatever the ranges' origin (the object store's arrays are read-only, local ones not)
        forward, reverse = (tuple(_read_only(part[d]) for part in normalized) for d in (0, 1))
        _take_ranges(t, self.destination, forward, reverse)
        return t


def _frozen(values: np.ndarray) -> np.ndarray:
    """A read-only view of ``values``: what the object store hands an actor, so the compiled kernels see one signature
    in process and on Ray (and :func:`~interlingua.operators.align.distributed_em.warm_up` loads the one a run uses)."""
    view = values.view()
    view.flags.writeable = False
    return view


def _read_only(values: np.ndarray) -> np.ndarray:
    """A read-only, C-contiguous float64 view of ``values`` (a copy only if it is not already so laid out)."""
    return _frozen(np.ascontiguousarray(values, np.float64))


@numba.njit(cache=True, nogil=True)
def _destinations(forward_rank, reverse_rank, starts, sorted_entries, local_order):
    """:attr:`ShardSlots.destination` of each local entry (see :meth:`MStepRanges.slots`) given the ranges' first
    places per direction (``starts``, ``(2, parts + 1)``), and :attr:`ShardSlots.capacity`."""
    parts = starts.shape[1] - 1
    by_entry = np.empty((sorted_entries.size, 2), np.int64)
    capacity = np.zeros((2, parts), np.int64)
    for k in range(sorted_entries.size):
        for d in range(2):
            place = forward_rank[sorted_entries[k]] if d == 0 else reverse_rank[sorted_entries[k]]
            if place < 0:
                by_entry[k, d] = -1
                continue
            # the range holding the place: the last p with starts[d, p] <= place (an empty range shares its start
            # with the next one); a binary search (numba's np.searchsorted on a scalar was 3x slower here)
            low, high = 0, parts
            while high - low > 1:
                middle = (low + high) // 2
                if starts[d, middle] <= place:
                    low = middle
                else:
                    high = middle
            by_entry[k, d] = (low << 32) | (place - starts[d, low])
            capacity[d, low] += 1
    out = np.empty((local_order.size, 2), np.int64)
    for e in range(local_order.size):
        out[e, 0] = by_entry[local_order[e], 0]
        out[e, 1] = by_entry[local_order[e], 1]
    return out, capacity


@numba.njit(cache=True, nogil=True)
def _split_counts(counts, destination, own, own_forward, own_reverse, starts, places, values):
    """:meth:`ShardSlots.split`'s pass: adds range ``own``'s counts into ``own_forward`` / ``own_reverse`` and lists the
    others' non-zero counts from ``starts[d, p]`` on in ``places`` / ``values``; returns where each list ends."""
    ends = starts[:, :-1].copy()
    for e in range(destination.shape[0]):
        for d in range(2):
            where = destination[e, d]
            if where < 0:
                continue
            p = where >> 32
            value = counts[e, d]
            if p == own:
                if d == 0:
                    own_forward[where & PLACE_MASK] += value
                else:
                    own_reverse[where & PLACE_MASK] += value
            elif value != 0:
                k = ends[d, p]
                places[d, k] = where & PLACE_MASK
                values[d, k] = value
                ends[d, p] = k + 1
    return ends


@numba.njit(cache=True, nogil=True)
def _take_ranges(t, destination, forward, reverse):
    """``t[e, d]`` = local entry ``e``'s probability in direction ``d`` from its range's (``forward[p]``, ``reverse[p]``:
    range ``p``'s), for the entries in that direction's table."""
    for e in range(destination.shape[0]):
        where = destination[e, 0]
        if where >= 0:
            t[e, 0] = forward[where >> 32][where & PLACE_MASK]
        where = destination[e, 1]
        if where >= 0:
            t[e, 1] = reverse[where >> 32][where & PLACE_MASK]


@numba.njit(cache=True, nogil=True)
def _entries_at(rank, low, high):
    """The entry at each place ``low .. high - 1`` of a direction's table (``rank``: each entry's place)."""
    out = np.empty(high - low, np.int64)
    for k in range(rank.size):
        if low <= rank[k] < high:
            out[rank[k] - low] = k
    return out


def _cuts(groups: np.ndarray, parts: int) -> np.ndarray:
    """First group of each of ``parts`` ranges of about equal entry counts, and the group count last."""
    starts, total = groups[:-1], int(groups[-1])
    cuts = [0] + [int(np.searchsorted(starts, total * k / parts, side="left")) for k in range(1, parts)] + [starts.size]
    return np.maximum.accumulate(np.minimum(cuts, starts.size)).astype(np.int64)


# -- the driver --------------------------------------------------------------------------------


class InProcessExecutor:
    """Runs every shard's E-step and every range's M-step in this process, one after the other (the reference).

    Executors: ``parts`` (shards, and as many M-step ranges), ``distinct_keys()`` (the initial pass, one
    sorted array per shard), ``resolve(keys, stride)`` and ``prepare(m_step)`` (the :class:`MStepRanges`;
    both may start the work and return), ``iterate(tensions, settings)`` (the shards' E-steps on the
    current tables, then the ranges' M-steps into the next tables, kept by the executor; returns each
    shard's statistics, in shard order) and ``export(beam=True)`` (each range's :meth:`MStepRanges.export`, in order).
    """

    def __init__(self, corpus: EncodedCorpus, shards: int = 1):
        stride = len(corpus.vocabulary) + 1
        self.shards = [EStepShard(*corpus.shard(a, b), stride) for a, b in corpus.shard_bounds(shards)]
        self.parts = len(self.shards)
        self.normalized: list[tuple[np.ndarray, np.ndarray]] = []

    def distinct_keys(self) -> list[np.ndarray]:
        return [shard.distinct_keys() for shard in self.shards]

    def resolve(self, keys: np.ndarray, stride: int) -> None:
        self.keys, self.stride = keys, stride
        for shard in self.shards:
            shard.resolve(keys)

    def prepare(self, m_step: MStepRanges) -> None:
        self.m_step = m_step
        self.slots = [m_step.slots(shard.sorted_entries, shard.local_order) for shard in self.shards]

    def iterate(self, tensions, settings) -> list[np.ndarray]:
        results = [shard.e_step(slots.tables(self.normalized, out=shard.table), tensions, settings)
                   for shard, slots in zip(self.shards, self.slots)]
        # shard p owns range p
        splits = [slots.split(counts, p) for p, (slots, (counts, _)) in enumerate(zip(self.slots, results))]
        self.normalized = [self.m_step.normalize(p, splits[p][0], [sends[p] for s, (_, sends) in enumerate(splits) if s != p],
                                                 settings) for p in range(self.parts)]
        return [stats for _, stats in results]

    def export(self, beam: bool = True) -> list[tuple[np.ndarray, ...]]:
        return [self.m_step.export(p, self.normalized[p], self.keys, self.stride, beam) for p in range(self.parts)]


@dataclass(frozen=True)
class LearnedTables:
    forward: LexicalTable
    reverse: LexicalTable
    forward_tension: float
    reverse_tension: float
    log: list[str]
    #: every entry at full precision (``learn_tables(..., unpruned=True)``): the tables fast_align's last iteration
    #: decodes with (it prints its links from them, not from the beam-pruned tables it writes with ``-p``)
    unpruned_forward: LexicalTable | None = None
    unpruned_reverse: LexicalTable | None = None


def learn_tables(corpus: EncodedCorpus, settings, executor=None, progress: Callable[[str], None] | None = None,
                 unpruned: bool = False) -> LearnedTables:
    """Both directions' tables and tensions (``settings``: a ``FastAlignSettings``); with ``unpruned`` also the tables
    before the beam (:attr:`LearnedTables.unpruned_forward`), which fast_align's training run aligns with.

    ``executor`` runs the shards' initial pass and E-steps and the M-step's ranges (default: in
    process, one shard); this function sums the shards' statistics and optimizes the tensions. Expected
    counts and statistics are int64 fixed-point sums (posteriors rounded to multiples of 2**-32), so
    adding the shards' sums is exact and the tables, tensions and log are bit-identical for any number
    of shards or workers. Float sums would not do: fast_align's tension update (8 steps of 20 x the
    feature gap) amplifies a 1e-16 difference in the diagonal feature into tensions differing in the
    first digit on some corpora, and through the next E-step into every table entry.
    """
    if max(corpus.src.size, corpus.tgt.size) > MAX_TOKENS:
        raise ValueError(f"at most {MAX_TOKENS:,} tokens per side can be learned in one run, got "
                         f"{max(corpus.src.size, corpus.tgt.size):,}: split the corpus")
    executor = executor or InProcessExecutor(corpus)
    stride = len(corpus.vocabulary) + 1
    # initial pass: each shard's co-occurring cells, (NULL, target word) and (source word, NULL), merged
    keys = merge_distinct(executor.distinct_keys())
    executor.resolve(keys, stride)  # shards map their local entries to these and resolve their cells; meanwhile:
    executor.prepare(MStepRanges.build(keys, stride, corpus, settings, executor.parts))
    shapes = _shapes(corpus)
    tensions = [settings.diagonal_tension, settings.diagonal_tension]
    tokens = (float(corpus.tgt.size), float(corpus.src.size))
    log: list[str] = []
    updates = settings.iterations - 1
    with ThreadPoolExecutor(2, thread_name_prefix="tension") as threads:
        tensions = _iterations(executor, settings, updates, tensions, shapes, tokens, log, progress, threads)
    full_forward = full_reverse = None
    if updates == 0:  # never normalized: fast_align's t(f | e) is 1e-9 for every pair
        forward = reverse = LexicalTable.uninitialized(corpus.vocabulary)
        if unpruned:
            full_forward, full_reverse = forward, reverse
    else:
        forward, reverse = MStepRanges.lexical_tables(executor.export(), corpus.vocabulary)
        if unpruned:
            full_forward, full_reverse = MStepRanges.lexical_tables(executor.export(beam=False), corpus.vocabulary)
    return LearnedTables(forward, reverse, float(tensions[0]), float(tensions[1]), log, full_forward, full_reverse)


def _iterations(executor, settings, updates: int, tensions: list[float], shapes, tokens, log: list[str], progress,
                threads: ThreadPoolExecutor) -> list[float]:
    """The EM's ``updates`` iterations on ``executor``; appends a line per iteration to ``log``, returns the tensions."""
    for iteration in range(updates):
        # the executor normalizes the counts into the next tables while the tensions are optimized here
        stats = np.sum(executor.iterate(tuple(tensions), settings), axis=0) / STATS_SCALE
        features = (stats[2] / tokens[0], stats[3] / tokens[1])
        line = (f"iteration {iteration + 1}: log-likelihood forward {stats[0]:.6g} reverse {stats[1]:.6g}, "
                f"posterior p0 {stats[4] / tokens[0]:.4f} / {stats[5] / tokens[1]:.4f}, "
                f"diagonal feature {features[0]:.6g} / {features[1]:.6g}")
        if settings.favor_diagonal and settings.optimize_tension and iteration > 0:
            # the two directions at once (compiled without the GIL): the next E-steps wait for both
            tensions = list(threads.map(
                optimize_tension, (shapes[1], shapes[0]), (shapes[0], shapes[1]), (shapes[2], shapes[2]),
                [float(t) for t in tensions], features, tokens))
            line += f", tension {tensions[0]:.6g} / {tensions[1]:.6g}"
        log.append(line)
        if progress:
            progress(line)
    return tensions


def sum_scaled_at(total: np.ndarray, positions: Sequence[np.ndarray], values: Sequence[np.ndarray], scale: float) -> np.ndarray:
    """(``total`` + ``sum_s values[s] at positions[s]``) / ``scale`` as float64; ``total`` (int64) is added to in
    place. The int64 values are summed exactly (in any order, the same sums), then rounded once."""
    for at, value in zip(positions, values):
        _add_at(total, _frozen(at), _frozen(value))
    return total / scale


@numba.njit(cache=True, nogil=True)
def _add_at(out, at, values):
    """out[at[k]] += values[k]."""
    for k in range(at.size):
        out[at[k]] += values[k]


def _membership(keys: np.ndarray, stride: int, corpus: EncodedCorpus, use_null: bool) -> tuple[np.ndarray, np.ndarray]:
    """Which entries belong to the forward / reverse table, as in fast_align's: every co-occurrence (source word,
    target word) of a pair, and with ``use_null`` (NULL, w) for every target-side word w (forward) and (w, NULL) for
    every source-side word (reverse). A literal ``<eps>`` token is fast_align's NULL word (the dictionary's ``<eps>``
    entry), so a key naming the NULL word is also a co-occurrence when some pair holds ``<eps>`` on that side with the
    other word; other NULL keys (added for the NULL alignment) are not, even when ``<eps>`` appears elsewhere."""
    in_target = np.zeros(stride, bool)
    in_target[corpus.tgt] = True
    in_source = np.zeros(stride, bool)
    in_source[corpus.src] = True
    beside_null_source = _words_beside_null(corpus.src, corpus.src_start, corpus.tgt, corpus.tgt_start, stride)
    beside_null_target = _words_beside_null(corpus.tgt, corpus.tgt_start, corpus.src, corpus.src_start, stride)
    return _members(keys, stride, in_source, in_target, beside_null_source, beside_null_target, use_null, NULL_ID)


@numba.njit(cache=True, nogil=True)
def _members(keys, stride, in_source, in_target, beside_null_source, beside_null_target, use_null, null_id):
    """:func:`_membership`'s pass over the keys (one compiled pass; NumPy's took 5x as long on the Bible's 3.3 M)."""
    forward = np.empty(keys.size, np.bool_)
    reverse = np.empty(keys.size, np.bool_)
    for k in range(keys.size):
        source, target = keys[k] // stride, keys[k] % stride
        # a key of two words comes from a cell: a co-occurrence
        cooccurs = (source != null_id and target != null_id) or (source == null_id and beside_null_source[target]) or (
            target == null_id and beside_null_target[source])
        forward[k] = cooccurs or (use_null and source == null_id and in_target[target])
        reverse[k] = cooccurs or (use_null and target == null_id and in_source[source])
    return forward, reverse


def _words_beside_null(side: np.ndarray, side_start: np.ndarray, other: np.ndarray, other_start: np.ndarray,
                       stride: int) -> np.ndarray:
    """Per word id, whether it is on the ``other`` side of a pair whose ``side`` holds the literal NULL word."""
    has_null = np.zeros(side_start.size - 1, bool)
    has_null[np.searchsorted(side_start, np.flatnonzero(side == NULL_ID), side="right") - 1] = True
    out = np.zeros(stride, bool)
    if has_null.any():
        out[other[np.repeat(has_null, np.diff(other_start))]] = True
    return out


def _groups(by: np.ndarray, member: np.ndarray, values: int) -> tuple[np.ndarray, np.ndarray]:
    """Each member entry's place when the members are ordered by ``by`` (``0 <= by < values``, ``values >= 1``;
    stable; -1: not a member) and the start of each group among those places."""
    rank, ends = _counting_sort(by, member, values)
    starts = np.concatenate(([0], ends[:-1]))
    return rank, np.concatenate((starts[ends > starts], [ends[-1]])).astype(np.int64)


@numba.njit(cache=True, nogil=True)
def _counting_sort(by, member, values):
    """Each member's place when the members are ordered by ``by``, stable (a counting sort; -1: not a member), and
    where each value's run ends."""
    ends = np.zeros(values, np.int64)
    for k in range(by.size):
        if member[k]:
            ends[by[k]] += 1
    for v in range(1, values):
        ends[v] += ends[v - 1]
    at = np.empty(values, np.int64)
    at[0] = 0
    at[1:] = ends[:-1]
    rank = np.full(by.size, -1, np.int64)
    for k in range(by.size):
        if member[k]:
            rank[k] = at[by[k]]
            at[by[k]] += 1
    return rank, ends


def _shapes(corpus: EncodedCorpus) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Distinct (source length, target length) and how many pairs have each."""
    n, m = np.diff(corpus.src_start), np.diff(corpus.tgt_start)
    shapes, counts = np.unique(n * (1 << 20) + m, return_counts=True)
    return (shapes >> 20).astype(np.int64), (shapes & ((1 << 20) - 1)).astype(np.int64), counts.astype(np.float64)


@numba.njit(cache=True, nogil=True)
def _beam(t, groups, threshold):
    """Which entries fast_align writes: per group ``t[groups[g]:groups[g + 1]]``, log t >= -threshold x log max t."""
    keep = np.zeros(t.size, np.bool_)
    for g in range(groups.size - 1):
        best = -1.0
        for k in range(groups[g], groups[g + 1]):
            best = max(best, t[k])
        limit = -math.log(best) * threshold
        for k in range(groups[g], groups[g + 1]):
            keep[k] = math.log(t[k]) >= limit
    return keep
