"""Hand-worked symmetrization cases (atools semantics), including final-and corner cases."""

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
