"""``mixed_triples``: amr-corpus rows -> mixed NLI triples (Algorithm 1 of Cai et al. 2022)."""

from __future__ import annotations

import random

import pytest

from interlingua.trainers.objectives.amr_mixing import TRIPLE_ROLES, mixed_triples

SENTENCES = {
    "premise": ("the boy wants to go", "el chico quiere ir", "( want-01 :ARG0 ( boy ) :ARG1 ( go-02 :ARG0 boy ) )"),
    "entailment": ("a boy wants something", "un chico quiere algo", "( want-01 :ARG0 ( boy ) :ARG1 ( thing ) )"),
    "contradiction": ("the girl sleeps", "la chica duerme", "( sleep-01 :ARG0 ( girl ) )"),
}


def corpus(n: int, langs=("en", "es"), graphs: bool = True, es_graphs: bool = True) -> list[dict]:
    """``n`` triples; every row's text and graph carry the triple id and language so they can be traced."""
    rows = []
    for i in range(n):
        for role, (en, es, graph) in SENTENCES.items():
            for lang in langs:
                text = en if lang == "en" else es
                has_graph = graphs and (lang == "en" or es_graphs)
                rows.append({"source_id": f"t{i:04d}", "role": role, "lang": lang, "text": f"{text} #{i}",
                             "penman": "", "linearized": f"{graph} #{i}{lang}" if has_graph else ""})
    return rows


def test_triples_are_grouped_by_source_id_with_all_three_slots():
    triples, counts = mixed_triples(corpus(3), ["es"], seed=1)
    assert [t["source_id"] for t in triples] == ["t0000", "t0001", "t0002"]
    assert counts["triples"] == 3 and counts["skipped_missing_english"] == 0
    assert counts["inputs_text"] + counts["inputs_graph"] == 9
    for t in triples:
        i = int(t["source_id"][1:])
        for role in TRIPLE_ROLES:
            assert t[role].endswith(f"#{i}") or t[role].endswith(f"#{i}{t[f'{role}_lang']}")
            assert t[f"{role}_lang"] in ("en", "es")


def test_deterministic_by_seed_and_independent_of_row_order():
    rows = corpus(50)
    first, counts = mixed_triples(rows, ["es"], seed=7)
    shuffled = list(rows)
    random.Random(0).shuffle(shuffled)
    again, counts_again = mixed_triples(shuffled, ["es"], seed=7)
    assert first == again and counts == counts_again
    other, _ = mixed_triples(rows, ["es"], seed=8)
    assert other != first


def test_english_text_and_graph_share_about_half():
    triples, counts = mixed_triples(corpus(500, langs=("en",)), ["en"], seed=3)
    slots = [(t[role], t[f"{role}_is_graph"]) for t in triples for role in TRIPLE_ROLES]
    graph_share = sum(is_graph for _, is_graph in slots) / len(slots)
    assert len(slots) == 1500
    assert abs(graph_share - 0.5) < 0.05
    for content, is_graph in slots:
        assert content.startswith("(") == is_graph
    assert counts["inputs_graph"] == sum(is_graph for _, is_graph in slots)


@pytest.mark.parametrize(("probability", "graph_share"), [(0.0, 0.0), (1.0, 1.0)])
def test_english_graph_probability_is_honoured(probability, graph_share):
    triples, _ = mixed_triples(corpus(20, langs=("en",)), ["en"], english_graph_probability=probability)
    shares = [t[f"{role}_is_graph"] for t in triples for role in TRIPLE_ROLES]
    assert sum(shares) / len(shares) == graph_share


def test_non_english_draws_are_always_graphs_of_that_language():
    triples, _ = mixed_triples(corpus(200, langs=("en", "es", "de")), ["es", "de"], seed=5)
    langs = [t[f"{role}_lang"] for t in triples for role in TRIPLE_ROLES]
    assert {"en", "es", "de"} <= set(langs)
    for t in triples:
        for role in TRIPLE_ROLES:
            lang = t[f"{role}_lang"]
            if lang != "en":
                assert t[f"{role}_is_graph"]
                assert t[role].endswith(f"{lang}") and t[role].startswith("(")
    # languages uniform: roughly a third of the slots each
    assert all(abs(langs.count(lang) / len(langs) - 1 / 3) < 0.06 for lang in ("en", "es", "de"))


def test_missing_graphs_are_redrawn_and_counted():
    # Spanish rows without graphs (no parser), German not in the corpus at all: every slot ends up English.
    triples, counts = mixed_triples(corpus(100, es_graphs=False), ["es", "de"], seed=2)
    assert all(t[f"{role}_lang"] == "en" for t in triples for role in TRIPLE_ROLES)
    assert counts["unavailable.es.no_graph"] > 0
    assert counts["unavailable.de.no_translation"] > 0
    # offline demo corpus: no graph anywhere, English text is always available
    triples, counts = mixed_triples(corpus(30, graphs=False), ["es"], seed=2)
    assert len(triples) == 30 and counts["inputs_graph"] == 0 and counts["inputs_text"] == 90
    assert counts["unavailable.en.no_graph"] > 0


def test_triples_missing_an_english_slot_are_skipped_and_counted():
    rows = corpus(4)
    rows = [r for r in rows if not (r["source_id"] == "t0001" and r["role"] == "contradiction" and r["lang"] == "en")]
    rows = [r for r in rows if not (r["source_id"] == "t0002" and r["lang"] == "en")]
    rows += [{"source_id": "t0003", "role": "premise", "lang": "fr", "text": "x", "linearized": "( x )"},
             {"source_id": "t0003", "role": "premise", "lang": "en", "text": "dup", "linearized": ""}]
    triples, counts = mixed_triples(rows, ["es"], english_graph_probability=0.0, seed=0)
    assert [t["source_id"] for t in triples] == ["t0000", "t0003"]
    assert counts["skipped_missing_english"] == 2
    assert counts["rows_ignored"] == 1 and counts["rows_duplicate"] == 1
    assert all("dup" not in t["premise"] for t in triples)  # the first row of a slot is kept


def test_an_invalid_probability_is_refused():
    with pytest.raises(ValueError, match="english_graph_probability"):
        mixed_triples(corpus(1), ["es"], english_graph_probability=1.5)
