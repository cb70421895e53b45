"""fast_align's directional Viterbi decoding and atools symmetrization, compiled with numba.

Same model and tie-breaking as :mod:`~interlingua.operators.align.fast_align_decoder` (the vectorized
NumPy reference, kept for tests), over a whole batch of sentence pairs in one compiled call:

- The lexical table is held as compressed rows (:class:`CompressedTable`): the sorted ``t(f | e)``
  columns of each conditioning word ``e``, looked up by binary search.
- The diagonal prior ``p(a_j = i)`` of each sentence shape ``(n, m)`` is computed once with libm's
  ``exp`` and ``pow`` in fast_align's order of operations (:class:`DiagonalPriorCache`,
  :mod:`~interlingua.operators.align.diagonal_prior`), so scores are bit-identical to the reference's and
  to fast_align's, and the argmax picks the same link on ties (NumPy's ``exp`` differs from libm's in the
  last bit for some values, and two positions equidistant from the diagonal then lost their tie).
- Symmetrization repeats :func:`~interlingua.operators.align.symmetrize.symmetrize` step for step on
  dense per-sentence grids (candidates visited in ascending ``(i, j)`` order, additions immediate).
- Links are returned as flat arrays, or written straight to Pharaoh text (:func:`format_links`).
"""

from __future__ import annotations

from dataclasses import dataclass

import numba
import numpy as np

from interlingua.operators.align.diagonal_prior import libm_exp
from interlingua.operators.align.fast_align_decoder import DirectionalModel, diagonal_partition
from interlingua.operators.align.lexical_table import UNKNOWN_ID, UNSEEN_PROBABILITY
from interlingua.operators.align.row_hash import RowHash, find_slot

#: Symmetrization names -> the code the compiled kernel takes.
SYMMETRIZATION_CODES = {"intersect": 0, "union": 1, "grow-diag": 2, "grow-diag-final": 3, "grow-diag-final-and": 4}


@dataclass(frozen=True)
class PairTable:
    """Both directions' t(.|.) for a (source word, target word) cell, in one hash table per source word.

    Words are ids of the union of both tables' vocabularies (0: unknown). Cell ``(s, t)`` holds
    ``t_forward(t | s)`` and ``t_reverse(s | t)`` (the floor when a table lacks the pair), so one probe
    serves both directions. ``null_forward[t]`` / ``null_reverse[s]`` are t(. | NULL) of each direction.

    The hash is a :class:`~interlingua.operators.align.row_hash.RowHash` (row = source word, column =
    target word); the probabilities are stored per slot.
    """

    row_start: np.ndarray  # int64, per union word
    row_mask: np.ndarray  # int64, per union word: slots - 1
    columns: np.ndarray  # int32 per slot, 0 = empty
    forward: np.ndarray  # float64 per slot
    reverse: np.ndarray  # float64 per slot
    null_forward: np.ndarray  # float64 per union word
    null_reverse: np.ndarray  # float64 per union word

    @classmethod
    def build(cls, forward: DirectionalModel, reverse: DirectionalModel, to_forward: np.ndarray, to_reverse: np.ndarray) -> PairTable:
        """``to_forward[u]`` / ``to_reverse[u]``: the id in each table of union word ``u`` (0: absent)."""
        size = to_forward.size
        forward_union = _inverse(to_forward, forward.table.stride)
        reverse_union = _inverse(to_reverse, reverse.table.stride)
        fk, rk = forward.table.keys, reverse.table.keys
        f_src, f_tgt = forward_union[fk // forward.table.stride], forward_union[fk % forward.table.stride]
        r_tgt, r_src = reverse_union[rk // reverse.table.stride], reverse_union[rk % reverse.table.stride]
        keys = np.concatenate((f_src * size + f_tgt, r_src * size + r_tgt))
        keep = np.concatenate((np.minimum(f_src, f_tgt) > 0, np.minimum(r_src, r_tgt) > 0))
        cells, inverse = np.unique(keys[keep], return_inverse=True)
        forward_p = np.full(cells.size, UNSEEN_PROBABILITY)
        reverse_p = np.full(cells.size, UNSEEN_PROBABILITY)
        split = int(keep[: fk.size].sum())
        forward_p[inverse[:split]] = forward.table.probabilities[keep[: fk.size]]
        reverse_p[inverse[split:]] = reverse.table.probabilities[keep[fk.size :]]
        table = RowHash.build(cells // size, cells % size, size)
        filled = table.entry >= 0
        # empty slots hold 0.0 (never read: find_slot stops there); indexing with their entry -1 would fail on a
        # table with no cell at all (both tables uninitialized, fast_align's one iteration)
        forward_slots, reverse_slots = np.zeros(filled.size), np.zeros(filled.size)
        forward_slots[filled] = forward_p[table.entry[filled]]
        reverse_slots[filled] = reverse_p[table.entry[filled]]
        return cls(table.row_start, table.row_mask, table.columns, forward_slots, reverse_slots,
                   _null_row(forward, to_forward), _null_row(reverse, to_reverse))


def _inverse(to_table: np.ndarray, stride: int) -> np.ndarray:
    """Table id -> union id (0 where the table's word is not in the union)."""
    inverse = np.zeros(stride, np.int64)
    known = to_table > 0
    inverse[to_table[known]] = np.flatnonzero(known)
    return inverse


def _null_row(model: DirectionalModel, to_table: np.ndarray) -> np.ndarray:
    null_id = model.table.null_id if model.use_null else UNKNOWN_ID
    return model.table.lookup(np.full(to_table.size, null_id), to_table)


class DiagonalPriorCache:
    """p(a_j = i), i = 1..n, for each sentence shape ``(n, m)`` of one direction, as one flat array.

    ``n`` is the conditioning sentence's length, ``m`` the predicted one's. A shape's block is
    ``n x m``, conditioning-major (``[(i - 1) * m + (j - 1)]``) or predicted-major
    (``[(j - 1) * n + (i - 1)]``). The values are fast_align's (and the reference decoder's) expression
    with its operands: the exponent in IEEE double arithmetic, ``exp`` by libm (``math.exp``; NumPy's
    differs in the last bit for some values), the partition by :func:`diagonal_partition`. Shapes are
    computed on first use; past ``max_values`` cached floats the cache starts over.
    """

    def __init__(self, model: DirectionalModel, conditioning_major: bool, max_values: int = 8_000_000):
        self.tension = model.tension
        self.p0 = model.prob_align_null if model.use_null else 0.0
        self.conditioning_major = conditioning_major
        self.max_values = max_values
        self.values = np.empty(0, np.float64)
        self.offsets = np.full((1, 1), -1, np.int64)

    def offsets_for(self, n: np.ndarray, m: np.ndarray) -> np.ndarray:
        """Offset of each sentence's block in :attr:`values`."""
        if n.size == 0:
            return np.empty(0, np.int64)
        rows, cols = int(n.max()) + 1, int(m.max()) + 1
        if rows > self.offsets.shape[0] or cols > self.offsets.shape[1]:
            grown = np.full((max(rows, self.offsets.shape[0]), max(cols, self.offsets.shape[1])), -1, np.int64)
            grown[: self.offsets.shape[0], : self.offsets.shape[1]] = self.offsets
            self.offsets = grown
        self.offsets[0, :] = self.offsets[:, 0] = 0  # a pair with an empty side has no cells
        found = self.offsets[n, m]
        if (found < 0).any():
            missing = np.unique(np.stack([n[found < 0], m[found < 0]], axis=1), axis=0)
            if self.values.size + int((missing[:, 0] * missing[:, 1]).sum()) > self.max_values:
                self.values = np.empty(0, np.float64)
                self.offsets[1:, 1:] = -1
                needed = (n > 0) & (m > 0)
                missing = np.unique(np.stack([n[needed], m[needed]], axis=1), axis=0)
            self._add(missing[:, 0].copy(), missing[:, 1].copy())
            found = self.offsets[n, m]
        return found

    def _add(self, n: np.ndarray, m: np.ndarray) -> None:
        sizes = n * m
        starts = np.concatenate(([0], np.cumsum(sizes)[:-1]))
        # the partition per (shape, j), as the reference computes it per (sentence, j)
        row_shape = np.repeat(np.arange(n.size), m)
        row_j1 = np.arange(row_shape.size) - np.repeat(np.cumsum(m) - m, m) + 1
        z = diagonal_partition(row_j1, m[row_shape], n[row_shape], self.tension)
        values = libm_exp(_diagonal_exponents(n, m, starts, int(sizes.sum()), self.tension, self.conditioning_major))
        _divide_by_partition(values, n, m, starts, z, np.concatenate(([0], np.cumsum(m)[:-1])), 1.0 - self.p0, self.conditioning_major)
        self.offsets[n, m] = self.values.size + starts
        self.values = np.concatenate((self.values, values))


@numba.njit(cache=True, nogil=True)
def _diagonal_exponents(n, m, starts, total, tension, conditioning_major):
    """-tension * |i / n - j / m| of every cell of every shape (the reference's operands and order)."""
    out = np.empty(total, np.float64)
    negative = -tension
    for s in range(n.size):
        for i in range(1, n[s] + 1):
            for j in range(1, m[s] + 1):
                at = starts[s] + ((i - 1) * m[s] + j - 1 if conditioning_major else (j - 1) * n[s] + i - 1)
                out[at] = negative * abs(i / n[s] - j / m[s])
    return out


@numba.njit(cache=True, nogil=True)
def _divide_by_partition(values, n, m, starts, z, row_starts, keep, conditioning_major):
    """values / (Z / (1 - p0)), Z of each cell's (shape, j)."""
    for s in range(n.size):
        for i in range(1, n[s] + 1):
            for j in range(1, m[s] + 1):
                at = starts[s] + ((i - 1) * m[s] + j - 1 if conditioning_major else (j - 1) * n[s] + i - 1)
                values[at] = values[at] / (z[row_starts[s] + j - 1] / keep)


@numba.njit(cache=True, nogil=True)
def _viterbi_both(src, tgt, row_start, row_mask, columns, t_forward, t_reverse, null_forward, null_reverse,
                  use_null, favor_diagonal, f_p0, r_p0, f_prior, f_offset, r_prior, r_offset,
                  best_f, score_f, best_r, score_r):
    """Both directions' argmax positions (0 = NULL, else 1-based) in one pass over the n x m cells.

    ``best_f[j]``: source position of target word j (forward); ``best_r[i]``: target position of
    source word i (reverse). Positions are visited in ascending order and only a strictly larger
    score replaces the best, so ties go to the earlier position, NULL first, as in the reference.
    """
    n, m = src.size, tgt.size
    f_uniform = 1.0 / (n + (1.0 if use_null else 0.0))
    r_uniform = 1.0 / (m + (1.0 if use_null else 0.0))
    for j in range(m):
        best_f[j] = 0
        score_f[j] = null_forward[tgt[j]] * (f_p0 if favor_diagonal else f_uniform) if use_null else -1.0
    for i in range(n):
        e = src[i]
        best_i = 0
        best_score = null_reverse[e] * (r_p0 if favor_diagonal else r_uniform) if use_null else -1.0
        for j in range(m):
            f = tgt[j]
            slot = find_slot(row_start, row_mask, columns, e, f)
            pf = t_forward[slot] if slot >= 0 else UNSEEN_PROBABILITY
            pr = t_reverse[slot] if slot >= 0 else UNSEEN_PROBABILITY
            cell = i * m + j
            sf = pf * (f_prior[f_offset + cell] if favor_diagonal else f_uniform)
            if sf > score_f[j]:
                score_f[j] = sf
                best_f[j] = i + 1
            sr = pr * (r_prior[r_offset + cell] if favor_diagonal else r_uniform)
            if sr > best_score:
                best_score = sr
                best_i = j + 1
        best_r[i] = best_i


@numba.njit(cache=True, nogil=True, inline="always")
def _has_chosen_neighbour(chosen, i, j, n, m):
    for di in range(-1, 2):
        for dj in range(-1, 2):
            if di == 0 and dj == 0:
                continue
            a, b = i + di, j + dj
            if 0 <= a < n and 0 <= b < m and chosen[a * m + b]:
                return True
    return False


@numba.njit(cache=True, nogil=True)
def _symmetrize(forward, reverse, n, m, method, chosen, src_aligned, tgt_aligned, candidates):
    """atools' heuristics on grids ``forward`` / ``reverse`` (uint8, n * m); result in ``chosen``."""
    for c in range(n * m):
        chosen[c] = 0
    for i in range(n):
        src_aligned[i] = 0
    for j in range(m):
        tgt_aligned[j] = 0
    if method == 1:
        for c in range(n * m):
            chosen[c] = forward[c] | reverse[c]
        return
    for c in range(n * m):
        if forward[c] and reverse[c]:
            chosen[c] = 1
            src_aligned[c // m] = 1
            tgt_aligned[c % m] = 1
    if method == 0:
        return
    pending = 0
    for c in range(n * m):
        if (forward[c] or reverse[c]) and not chosen[c]:
            candidates[pending] = c
            pending += 1
    while pending:
        kept = 0
        added = False
        for k in range(pending):
            c = candidates[k]
            i, j = c // m, c % m
            if (not src_aligned[i] or not tgt_aligned[j]) and _has_chosen_neighbour(chosen, i, j, n, m):
                chosen[c] = 1
                src_aligned[i] = 1
                tgt_aligned[j] = 1
                added = True
            else:
                candidates[kept] = c
                kept += 1
        if not added:
            break
        pending = kept
    if method == 2:
        return
    for grid in (forward, reverse):
        for c in range(n * m):
            if grid[c] and not chosen[c]:
                i, j = c // m, c % m
                if (method == 3 and (not src_aligned[i] or not tgt_aligned[j])) or (
                    method == 4 and not src_aligned[i] and not tgt_aligned[j]
                ):
                    chosen[c] = 1
                    src_aligned[i] = 1
                    tgt_aligned[j] = 1


@numba.njit(cache=True, nogil=True)
def _align_batch(src, tgt, src_start, tgt_start, row_start, row_mask, columns, t_forward, t_reverse, null_forward,
                 null_reverse, use_null, favor_diagonal, f_p0, r_p0, f_prior, f_offsets, r_prior, r_offsets, method):
    """Forward, reverse and symmetrized links of every pair: links [k, 2] int32 x 3, counts [3, pairs]."""
    pairs = src_start.size - 1
    forward_links = np.empty((tgt_start[-1], 2), np.int32)
    reverse_links = np.empty((src_start[-1], 2), np.int32)
    sym_links = np.empty((src_start[-1] + tgt_start[-1], 2), np.int32)
    counts = np.zeros((3, pairs), np.int64)
    max_n, max_m, max_cells = 1, 1, 1
    for s in range(pairs):
        n = src_start[s + 1] - src_start[s]
        m = tgt_start[s + 1] - tgt_start[s]
        max_n, max_m, max_cells = max(max_n, n), max(max_m, m), max(max_cells, n * m)
    best_f, score_f = np.empty(max_m, np.int64), np.empty(max_m, np.float64)
    best_r, score_r = np.empty(max_n, np.int64), np.empty(max_n, np.float64)
    fgrid = np.zeros(max_cells, np.uint8)
    rgrid = np.zeros(max_cells, np.uint8)
    chosen = np.zeros(max_cells, np.uint8)
    candidates = np.empty(max_cells, np.int64)
    src_aligned = np.zeros(max_n, np.uint8)
    tgt_aligned = np.zeros(max_m, np.uint8)
    nf = nr = ns = 0
    for s in range(pairs):
        a, b = src_start[s], src_start[s + 1]
        c, d = tgt_start[s], tgt_start[s + 1]
        n, m = b - a, d - c
        if n == 0 or m == 0:
            continue
        _viterbi_both(src[a:b], tgt[c:d], row_start, row_mask, columns, t_forward, t_reverse, null_forward, null_reverse,
                      use_null, favor_diagonal, f_p0, r_p0, f_prior, f_offsets[s], r_prior, r_offsets[s],
                      best_f, score_f, best_r, score_r)
        for k in range(n * m):
            fgrid[k] = 0
            rgrid[k] = 0
        for j in range(m):
            if best_f[j] > 0:
                fgrid[(best_f[j] - 1) * m + j] = 1
        for i in range(n):
            if best_r[i] > 0:
                rgrid[i * m + best_r[i] - 1] = 1
        # in fast_align's printing order: forward by target word, reverse (fast_align -r) by source word
        for j in range(m):
            if best_f[j] > 0:
                forward_links[nf, 0], forward_links[nf, 1] = best_f[j] - 1, j
                nf += 1
                counts[0, s] += 1
        for i in range(n):
            if best_r[i] > 0:
                reverse_links[nr, 0], reverse_links[nr, 1] = i, best_r[i] - 1
                nr += 1
                counts[1, s] += 1
        _symmetrize(fgrid, rgrid, n, m, method, chosen, src_aligned, tgt_aligned, candidates)
        for k in range(n * m):  # ascending (i, j), atools' order
            if chosen[k]:
                sym_links[ns, 0], sym_links[ns, 1] = k // m, k % m
                ns += 1
                counts[2, s] += 1
    return forward_links[:nf], reverse_links[:nr], sym_links[:ns], counts


@numba.njit(cache=True, nogil=True)
def _write_number(buffer, at, value):
    if value == 0:
        buffer[at] = 48
        return at + 1
    digits = 0
    v = value
    while v > 0:
        digits += 1
        v //= 10
    end = at + digits
    v = value
    for k in range(digits):
        buffer[end - 1 - k] = 48 + v % 10
        v //= 10
    return end


@numba.njit(cache=True, nogil=True)
def _format(links, counts):
    """Pharaoh lines (``i-j`` joined by spaces, one line per pair ending in newline) as ASCII bytes."""
    buffer = np.empty(counts.size + 24 * links.shape[0], np.uint8)  # a link: <= 2 x 10 digits, '-', ' '
    at = 0
    link = 0
    for s in range(counts.size):
        for k in range(counts[s]):
            if k:
                buffer[at] = 32
                at += 1
            at = _write_number(buffer, at, links[link, 0])
            buffer[at] = 45
            at += 1
            at = _write_number(buffer, at, links[link, 1])
            link += 1
        buffer[at] = 10
        at += 1
    return buffer[:at]


def format_links(links: np.ndarray, counts: np.ndarray) -> list[str]:
    """One Pharaoh string per pair from :func:`align_ids`' flat links and per-pair counts."""
    text = _format(links, counts).tobytes().decode("ascii")
    return text.split("\n")[:-1]


@dataclass(frozen=True)
class BatchLinks:
    """Flat links (``[k, 2]`` int32, source-target order) and per-pair counts. Within a pair, links are in the order
    fast_align and atools print them: forward by target position, reverse by source position (``fast_align -r``),
    symmetrized by (source, target)."""

    forward: np.ndarray
    reverse: np.ndarray
    symmetrized: np.ndarray
    counts: np.ndarray  # [3, pairs]: forward, reverse, symmetrized

    def pharaoh(self) -> tuple[list[str], list[str], list[str]]:
        """Forward, reverse and symmetrized Pharaoh strings, one per pair."""
        return (format_links(self.forward, self.counts[0]), format_links(self.reverse, self.counts[1]),
                format_links(self.symmetrized, self.counts[2]))

    def per_pair(self, which: int) -> list[list[tuple[int, int]]]:
        """Links of one kind (0 forward, 1 reverse, 2 symmetrized) as a list per pair."""
        links = (self.forward, self.reverse, self.symmetrized)[which].tolist()
        out, at = [], 0
        for count in self.counts[which].tolist():
            out.append([tuple(link) for link in links[at : at + count]])
            at += count
        return out


class CompiledPair:
    """Both directions ready for the kernel: the pair table and each direction's prior cache."""

    def __init__(self, forward: DirectionalModel, reverse: DirectionalModel, to_forward: np.ndarray, to_reverse: np.ndarray):
        if (forward.use_null, forward.favor_diagonal) != (reverse.use_null, reverse.favor_diagonal):
            raise ValueError("forward and reverse models must share use_null and favor_diagonal")
        self.forward, self.reverse = forward, reverse
        self.table = PairTable.build(forward, reverse, to_forward, to_reverse)
        # blocks indexed [source i][target j] in both directions
        self.forward_priors = DiagonalPriorCache(forward, conditioning_major=True)
        self.reverse_priors = DiagonalPriorCache(reverse, conditioning_major=False)

    def align(self, src: np.ndarray, tgt: np.ndarray, src_start: np.ndarray, tgt_start: np.ndarray, symmetrization: str) -> BatchLinks:
        """Decode a batch given as flat union-id arrays and pair boundaries (``start[k]..start[k + 1]``)."""
        n, m = np.diff(src_start), np.diff(tgt_start)
        forward, reverse, table = self.forward, self.reverse, self.table
        if forward.favor_diagonal:
            f_offsets, r_offsets = self.forward_priors.offsets_for(n, m), self.reverse_priors.offsets_for(m, n)
            f_prior, r_prior = self.forward_priors.values, self.reverse_priors.values
        else:
            f_offsets = r_offsets = np.zeros(n.size, np.int64)
            f_prior = r_prior = np.zeros(1, np.float64)
        links = _align_batch(
            src, tgt, src_start, tgt_start, table.row_start, table.row_mask, table.columns, table.forward, table.reverse,
            table.null_forward, table.null_reverse, forward.use_null, forward.favor_diagonal,
            forward.prob_align_null if forward.use_null else 0.0, reverse.prob_align_null if reverse.use_null else 0.0,
            f_prior, f_offsets, r_prior, r_offsets, SYMMETRIZATION_CODES[symmetrization],
        )
        return BatchLinks(*links)
