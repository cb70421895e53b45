"""Symmetrization (atools semantics): hand-worked cases, final-and corner cases, and a random
cross-check against an independent transcription of fast_align's atools."""

import random

import pytest

from interlingua.operators.align.pharaoh import format_pharaoh, parse_pharaoh
from interlingua.operators.align.symmetrize import SYMMETRIZATIONS, symmetrize


def test_intersect_and_union():
    forward, reverse = {(0, 0), (1, 2)}, {(0, 0), (2, 1)}
    assert symmetrize(forward, reverse, "intersect") == {(0, 0)}
    assert symmetrize(forward, reverse, "union") == {(0, 0), (1, 2), (2, 1)}


def test_grow_diag_adds_neighbours_of_the_intersection():
    forward, reverse = {(0, 0), (1, 1), (2, 1)}, {(0, 0), (1, 1), (1, 2)}
    assert symmetrize(forward, reverse, "grow-diag") == {(0, 0), (1, 1), (2, 1), (1, 2)}


def test_grow_diag_repeats_sweeps_until_nothing_changes():
    # (1,1) sorts before (2,2) and only becomes a neighbour once (2,2) is added: needs a 2nd sweep.
    forward, reverse = {(3, 3), (1, 1)}, {(3, 3), (2, 2)}
    assert symmetrize(forward, reverse, "grow-diag") == {(1, 1), (2, 2), (3, 3)}


def test_grow_diag_additions_take_effect_within_the_sweep():
    # Sweep order (0,1), (1,0), (1,1): after the first two, both words of (1,1) are aligned,
    # so (1,1) is not added although it had a chosen neighbour when the sweep began.
    forward, reverse = {(0, 0), (2, 2), (0, 1)}, {(0, 0), (2, 2), (1, 0), (1, 1)}
    assert symmetrize(forward, reverse, "grow-diag") == {(0, 0), (0, 1), (1, 0), (2, 2)}
    assert symmetrize(forward, reverse, "grow-diag-final-and") == {(0, 0), (0, 1), (1, 0), (2, 2)}


def test_grow_diag_ignores_non_neighbours():
    forward, reverse = {(0, 0), (0, 3)}, {(0, 0)}
    assert symmetrize(forward, reverse, "grow-diag") == {(0, 0)}


def test_final_adds_when_one_word_unaligned_but_final_and_needs_both():
    # (0,3): source 0 is aligned, target 3 is not -> grow-diag-final adds it, final-and does not.
    forward, reverse = {(0, 0), (0, 3)}, {(0, 0)}
    assert symmetrize(forward, reverse, "grow-diag-final") == {(0, 0), (0, 3)}
    assert symmetrize(forward, reverse, "grow-diag-final-and") == {(0, 0)}


def test_final_and_adds_isolated_link_with_both_words_unaligned():
    forward, reverse = {(0, 0)}, {(0, 0), (4, 5)}
    assert symmetrize(forward, reverse, "grow-diag-final-and") == {(0, 0), (4, 5)}


def test_final_and_visits_forward_before_reverse():
    # Forward (3,3) is added first; then reverse (3,5) and (4,3) each have one aligned word.
    forward, reverse = {(0, 0), (3, 3)}, {(0, 0), (3, 5), (4, 3)}
    assert symmetrize(forward, reverse, "grow-diag-final-and") == {(0, 0), (3, 3)}
    assert symmetrize(forward, reverse, "grow-diag-final") == {(0, 0), (3, 3), (3, 5), (4, 3)}


def test_final_and_within_one_direction_first_link_in_order_wins():
    # Both forward links compete for source 2; (2,1) sorts first and blocks (2,4).
    forward, reverse = {(2, 1), (2, 4)}, set()
    assert symmetrize(forward, reverse, "grow-diag-final-and") == {(2, 1)}
    assert symmetrize(forward, reverse, "grow-diag-final") == {(2, 1), (2, 4)}


def test_empty_alignments():
    for method in SYMMETRIZATIONS:
        assert symmetrize([], [], method) == set()


def test_unknown_method_is_rejected_with_the_choices():
    with pytest.raises(ValueError, match="grow-diag-final-and"):
        symmetrize([], [], "grow")


def test_pharaoh_round_trip_and_errors():
    assert parse_pharaoh(format_pharaoh({(3, 1), (0, 2)})) == [(0, 2), (3, 1)]
    assert parse_pharaoh("  ") == []
    with pytest.raises(ValueError, match="'1-x'"):
        parse_pharaoh("0-0 1-x")
    for token in ("\uff11-2", "\u0663-1", "\u00b2-1", "1--1"):  # fullwidth, Arabic-Indic and superscript digits
        with pytest.raises(ValueError, match="is not of the form i-j"):
            parse_pharaoh(f"0-0 {token}")
    with pytest.raises(ValueError, match=r"link \(-1, 2\) has a negative index"):
        format_pharaoh([(0, 0), (-1, 2)])  # it wrote "-1-2", which parse_pharaoh refuses


# --- further hand-worked cases where the visiting order or the exact predicate matters -----------


def test_grow_diag_uses_diagonal_neighbours():
    # (1,1) touches the intersection point (0,0) only diagonally; grow-diag (8 neighbours) takes it.
    forward, reverse = {(0, 0), (1, 1)}, {(0, 0)}
    assert symmetrize(forward, reverse, "grow-diag") == {(0, 0), (1, 1)}


def test_grow_diag_never_links_two_aligned_words():
    # (0,1) neighbours both (0,0) and (1,1), but source 0 and target 1 are both aligned already.
    forward, reverse = {(0, 0), (1, 1), (0, 1)}, {(0, 0), (1, 1)}
    for method in ("grow-diag", "grow-diag-final", "grow-diag-final-and"):
        assert symmetrize(forward, reverse, method) == {(0, 0), (1, 1)}


def test_grow_diag_chain_within_one_sweep():
    # Ascending sweep: (1,1) joins via (0,0), then (2,2) via (1,1), then (3,3) via (2,2).
    forward, reverse = {(0, 0), (1, 1), (3, 3)}, {(0, 0), (2, 2)}
    assert symmetrize(forward, reverse, "grow-diag") == {(0, 0), (1, 1), (2, 2), (3, 3)}


def test_grow_diag_needs_only_one_unaligned_word():
    # Candidates (1,0) and (1,2) both touch (0,1) diagonally. (1,0) is visited first and aligns
    # source 1; (1,2) still qualifies because its target 2 is unaligned.
    forward, reverse = {(0, 1), (1, 0)}, {(0, 1), (1, 2)}
    assert symmetrize(forward, reverse, "grow-diag") == {(0, 1), (1, 0), (1, 2)}


def test_final_or_blocks_a_link_once_both_words_got_aligned_earlier_in_the_sweep():
    # Empty intersection, so everything comes from the final sweep over forward, ascending.
    # final: (0,1) in, (0,2) in (target 2 unaligned), (1,0) in, (1,1) out (both words aligned).
    # final-and: (0,1) in, (0,2) out (source 0 aligned), (1,0) in (both unaligned), (1,1) out.
    forward, reverse = {(0, 1), (0, 2), (1, 0), (1, 1)}, set()
    assert symmetrize(forward, reverse, "grow-diag-final") == {(0, 1), (0, 2), (1, 0)}
    assert symmetrize(forward, reverse, "grow-diag-final-and") == {(0, 1), (1, 0)}


def test_final_step_is_not_symmetric_in_its_operands():
    # Disjoint directions competing for source 0: whichever is the forward (first) operand wins.
    forward, reverse = {(0, 1)}, {(0, 0)}
    assert symmetrize(forward, reverse, "grow-diag-final-and") == {(0, 1)}
    assert symmetrize(reverse, forward, "grow-diag-final-and") == {(0, 0)}
    assert symmetrize(forward, reverse, "grow-diag-final") == {(0, 0), (0, 1)}


def test_final_and_does_not_grow_again_from_links_it_added():
    # (5,5) comes in at the final-and forward sweep; reverse (5,6) is its neighbour with target 6
    # unaligned, which grow-diag would accept, but final-and needs both words unaligned.
    forward, reverse = {(0, 0), (5, 5)}, {(0, 0), (5, 6)}
    assert symmetrize(forward, reverse, "grow-diag") == {(0, 0)}
    assert symmetrize(forward, reverse, "grow-diag-final-and") == {(0, 0), (5, 5)}
    assert symmetrize(forward, reverse, "grow-diag-final") == {(0, 0), (5, 5), (5, 6)}


def test_final_and_sees_words_aligned_by_grow_diag():
    # grow-diag aligns source 1 via (1,1); the forward-only (1,4) far away is then rejected by
    # final-and (source 1 aligned) but accepted by final (target 4 unaligned).
    forward, reverse = {(0, 0), (1, 1), (1, 4)}, {(0, 0)}
    assert symmetrize(forward, reverse, "grow-diag-final-and") == {(0, 0), (1, 1)}
    assert symmetrize(forward, reverse, "grow-diag-final") == {(0, 0), (1, 1), (1, 4)}


def test_input_order_and_duplicates_do_not_matter():
    forward = [(2, 2), (0, 1), (1, 0), (0, 1), (1, 1)]
    reverse = [(1, 1), (2, 3), (2, 3), (0, 0)]
    for method in SYMMETRIZATIONS:
        assert symmetrize(forward, reverse, method) == symmetrize(sorted(set(forward)), sorted(set(reverse)), method)


# --- cross-check against an independent transcription of atools -----------------------------------
#
# Written from the C++ semantics of fast_align's ``atools`` (``RefineCommand`` and friends): dense
# boolean grids sized like ``ReadPharaohAlignmentGrid`` (max index + 1, at least 1x1), grids of
# different sizes combined with bounds-checked reads, row-major (i, then j) traversal everywhere,
# the non-idempotent grow (sweeps over the still-pending union points, additions visible at once,
# added points dropped after each sweep, stop after a sweep that adds nothing) and the idempotent
# final passes (one row-major pass over operand ``-i`` then one over operand ``-j``).

_ATOOLS_NEIGHBOURS = ((1, 0), (-1, 0), (0, 1), (0, -1), (1, 1), (-1, 1), (1, -1), (-1, -1))


def _grid(links):
    width = max((i for i, _ in links), default=0) + 1
    height = max((j for _, j in links), default=0) + 1
    cells = [[False] * height for _ in range(width)]
    for i, j in links:
        cells[i][j] = True
    return cells


def _atools(first, second, command, neighbours=_ATOOLS_NEIGHBOURS, final_first_operand_first=True):
    """Pharaoh string atools would print for ``atools -i first -j second -c command``."""
    a, b = _grid(list(first)), _grid(list(second))
    width, height = max(len(a), len(b)), max(len(a[0]), len(b[0]))

    def safe(g, i, j):
        return 0 <= i < len(g) and 0 <= j < len(g[0]) and g[i][j]

    def serialize(g):
        return " ".join(f"{i}-{j}" for i in range(len(g)) for j in range(len(g[0])) if g[i][j])

    if command == "intersect":
        return serialize([[safe(a, i, j) and safe(b, i, j) for j in range(height)] for i in range(width)])
    if command == "union":
        return serialize([[safe(a, i, j) or safe(b, i, j) for j in range(height)] for i in range(width)])

    res = [[False] * height for _ in range(width)]
    i_aligned, j_aligned = [False] * width, [False] * height

    def align(i, j):
        res[i][j] = True
        i_aligned[i] = True
        j_aligned[j] = True

    union = [[safe(a, i, j) or safe(b, i, j) for j in range(height)] for i in range(width)]
    for i in range(width):
        for j in range(height):
            if safe(a, i, j) and safe(b, i, j):
                align(i, j)

    def koehn(i, j):
        one_or_both = not (i_aligned[i] and j_aligned[j])
        return one_or_both and any(safe(res, i + di, j + dj) for di, dj in neighbours)

    pending = [(i, j) for i in range(width) for j in range(height) if union[i][j] and not res[i][j]]
    keep_going = len(pending) > 0
    while keep_going:
        keep_going = False
        added = []
        for i, j in pending:
            if koehn(i, j):
                align(i, j)
                added.append((i, j))
                keep_going = True
        pending = [p for p in pending if p not in added]

    if command in ("grow-diag-final", "grow-diag-final-and"):
        if command == "grow-diag-final":
            def accept(i, j):
                return not (i_aligned[i] and j_aligned[j])
        else:
            def accept(i, j):
                return not (i_aligned[i] or j_aligned[j])
        for adds in ((a, b) if final_first_operand_first else (b, a)):
            for i in range(len(adds)):
                for j in range(len(adds[0])):
                    if adds[i][j] and not res[i][j] and accept(i, j):
                        align(i, j)
    else:
        assert command == "grow-diag"
    return serialize(res)


def _random_cases():
    """Random forward/reverse pairs, sizes up to 8x8: free-form grids and fast_align-shaped ones."""
    rng = random.Random(20240611)
    cases = []
    for n in range(600):
        src_len, tgt_len = rng.randint(1, 8), rng.randint(1, 8)
        if n % 2 == 0:
            # free-form: any cell, density varies per case
            density = rng.uniform(0.05, 0.5)
            forward = {(i, j) for i in range(src_len) for j in range(tgt_len) if rng.random() < density}
            reverse = {(i, j) for i in range(src_len) for j in range(tgt_len) if rng.random() < density}
        else:
            # fast_align-shaped: forward gives each target word at most one source word, reverse
            # each source word at most one target word; mostly near the diagonal
            def pick(k, length, other_length):
                centre = round(k * other_length / length)
                return min(other_length - 1, max(0, centre + rng.randint(-2, 2)))

            forward = {(pick(j, tgt_len, src_len), j) for j in range(tgt_len) if rng.random() < 0.85}
            reverse = {(i, pick(i, src_len, tgt_len)) for i in range(src_len) if rng.random() < 0.85}
        cases.append((forward, reverse))
    return cases


_CASES = _random_cases()


@pytest.mark.parametrize("method", SYMMETRIZATIONS)
def test_matches_independent_atools_transcription_on_random_alignments(method):
    mismatches = []
    for forward, reverse in _CASES:
        expected = _atools(forward, reverse, method)
        got = format_pharaoh(symmetrize(forward, reverse, method))
        if got != expected:
            mismatches.append((sorted(forward), sorted(reverse), expected, got))
    assert not mismatches, f"{len(mismatches)} of {len(_CASES)} differ, first: {mismatches[0]}"


def test_random_cases_discriminate_plausible_misreadings_of_atools():
    # The cross-check above would catch these deviations: each changes the outcome on some case.
    def differs(method, **variant):
        return any(_atools(f, r, method) != _atools(f, r, method, **variant) for f, r in _CASES)

    four_neighbours = _ATOOLS_NEIGHBOURS[:4]
    assert differs("grow-diag", neighbours=four_neighbours)
    assert differs("grow-diag-final-and", final_first_operand_first=False)
    assert differs("grow-diag-final", final_first_operand_first=False)
    assert any(_atools(f, r, "grow-diag-final") != _atools(f, r, "grow-diag-final-and") for f, r in _CASES)
    assert any(_atools(f, r, "grow-diag-final-and") != _atools(f, r, "grow-diag") for f, r in _CASES)
    # symmetrize must not be symmetric in its operands for the final variants
    assert any(symmetrize(f, r, "grow-diag-final-and") != symmetrize(r, f, "grow-diag-final-and") for f, r in _CASES)
