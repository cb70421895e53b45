"""Relation and frame counts for vocabulary extension (threshold 5 as in Cai et al. 2022)."""

from __future__ import annotations

import pytest

from interlingua.operators.amr.vocabulary import count_vocabulary

GRAPH = "(w / want-01 :ARG0 (b / boy :wiki -) :ARG1 (g / go-02 :ARG0 b :polarity -))"
OTHER = "(p / person :ARG0-of (t / teach-01 :ARG1 (h / history)))"


def test_counts_relations_per_edge_and_frames_per_node():
    counts = count_vocabulary([GRAPH, GRAPH, OTHER])
    assert counts.relations == {":ARG0": 4, ":ARG1": 3, ":polarity": 2, ":ARG0-of": 1}
    assert counts.frames == {"want-01": 2, "go-02": 2, "teach-01": 1}
    assert counts.graphs == 3 and counts.invalid_graphs == 0


def test_threshold_keeps_tokens_with_at_least_min_count():
    counts = count_vocabulary([GRAPH] * 5 + [OTHER] * 4)
    assert counts.tokens() == [":ARG0", ":ARG1", ":polarity", "go-02", "want-01"]
    assert counts.tokens(min_count=4) == [":ARG0", ":ARG1", ":polarity", ":ARG0-of", "go-02", "want-01", "teach-01"]


def test_role_alignments_are_stripped_like_the_linearizer_does():
    counts = count_vocabulary(["(s / sleep-01~e.1 :ARG0~e.2 (c / cat) :wiki~e.3 -)"])
    assert counts.relations == {":ARG0": 1} and counts.frames == {"sleep-01": 1}


def test_invalid_graphs_are_counted_not_raised():
    counts = count_vocabulary([GRAPH, "(a / b", ""])
    assert counts.graphs == 1 and counts.invalid_graphs == 2


def test_bad_threshold_is_rejected():
    with pytest.raises(ValueError, match="min_count"):
        count_vocabulary([GRAPH]).tokens(min_count=0)
