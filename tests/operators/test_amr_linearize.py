"""Linearization (Cai et al. 2022 rules) of hand-written AMR fixtures against hand-written expectations."""

from __future__ import annotations

from pathlib import Path

import penman
import pytest

from interlingua.operators.amr.linearize import linearize, linearize_tokens

FIXTURES = Path(__file__).parent / "fixtures" / "amr" / "linearization_cases.amr"


def _load_cases() -> list[dict[str, str]]:
    cases = []
    for block in FIXTURES.read_text(encoding="utf-8").split("\n\n"):
        meta = {}
        graph_lines = []
        for line in block.strip().splitlines():
            if line.startswith("# ::"):
                key, _, value = line[4:].partition(" ")
                meta[key] = value.strip()
            elif not line.startswith("#"):
                graph_lines.append(line)
        if "id" in meta:
            cases.append({**meta, "penman": "\n".join(graph_lines)})
    return cases


CASES = _load_cases()


def test_fixture_file_has_at_least_30_distinct_graphs():
    assert len(CASES) >= 30
    assert len({c["id"] for c in CASES}) == len(CASES)
    assert len({c["penman"] for c in CASES}) == len(CASES)


@pytest.mark.parametrize(
    "prefix", ["reentrancy-", "inverse-role-", "negation-", "named-entity-", "quantity-", "coordination-"]
)
def test_fixture_covers_each_required_phenomenon_several_times(prefix):
    assert sum(c["id"].startswith(prefix) for c in CASES) >= 3


@pytest.mark.parametrize("case", CASES, ids=[c["id"] for c in CASES])
def test_linearization_matches_hand_written_expectation(case):
    assert linearize(case["penman"]) == case["linearized"]


@pytest.mark.parametrize("case", CASES, ids=[c["id"] for c in CASES])
def test_dropping_parentheses_removes_only_depth_markers(case):
    expected = " ".join(t for t in case["linearized"].split(" ") if t not in ("(", ")"))
    assert linearize(case["penman"], drop_parentheses=True) == expected


def test_drop_parentheses_hand_written():
    graph = "(w / want-01 :ARG0 (b / boy) :ARG1 (g / go-02 :ARG0 b :polarity -))"
    assert linearize(graph, drop_parentheses=True) == "want-01 :ARG0 boy :ARG1 go-02 :ARG0 boy :polarity -"


def test_no_variables_survive():
    for case in CASES:
        tokens = set(linearize_tokens(case["penman"]))
        variables = {v for v, _, _ in penman.decode(case["penman"]).instances()}
        concepts = {c for _, _, c in penman.decode(case["penman"]).instances()}
        assert not (tokens & (variables - concepts)), case["id"]
        assert "/" not in tokens


def test_tokens_are_the_space_split_string():
    for case in CASES:
        tokens = linearize_tokens(case["penman"])
        assert tokens == linearize(case["penman"]).split(" "), case["id"]
        assert all(t and " " not in t for t in tokens), case["id"]


def test_module_docstring_example():
    graph = """(b / believe-01
       :ARG0 (p / person :wiki "Barack_Obama" :name (n / name :op1 "Barack" :op2 "Obama"))
       :ARG1 (w / want-01 :ARG0 p :ARG1 (g / go-02 :ARG0 p :polarity -)))"""
    assert linearize(graph) == (
        "( believe-01 :ARG0 ( person :name ( name :op1 Barack :op2 Obama ) ) :ARG1 ( want-01 "
        ":ARG0 person :ARG1 ( go-02 :ARG0 person :polarity - ) ) )"
    )


def test_reference_is_never_re_expanded_and_order_is_as_written():
    graph = "(a / and :op1 (b / boy :mod (t / tall)) :op2 b :op3 b)"
    assert linearize(graph) == "( and :op1 ( boy :mod ( tall ) ) :op2 boy :op3 boy )"


def test_wiki_with_alignment_and_a_node_target_is_removed():
    graph = '(c / city :wiki~e.1 "Rome" :name (n / name :op1 "Rome") :wiki (x / thing))'
    assert linearize(graph) == "( city :name ( name :op1 Rome ) )"


def test_empty_string_constant_emits_no_token():
    assert linearize('(n / name :op1 "")') == "( name :op1 )"


def test_accepts_a_parsed_tree():
    tree = penman.parse("(s / sleep-01 :ARG0 (c / cat))")
    assert linearize(tree) == "( sleep-01 :ARG0 ( cat ) )"


def test_invalid_penman_raises_decode_error():
    with pytest.raises(penman.DecodeError):
        linearize("(s / sleep-01 :ARG0 (c / cat)")
