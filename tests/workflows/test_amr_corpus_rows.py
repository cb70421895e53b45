"""amr-corpus's kept rows and rejects: an English sentence whose graph is invalid still gives its text
(Algorithm 1: English is text or graph), a translated sentence without a graph gives nothing but its reject."""

from __future__ import annotations

from interlingua.operators.base import REJECT_REASON
from interlingua.trainers.objectives.amr_mixing import mixed_triples
from interlingua.workflows.amr_corpus import _shard_table, partition_rows

GRAPH = "( sleep-01 :ARG0 ( man ) )"


def _row(role, lang, text, reason="", linearized=GRAPH):
    return {"source_id": "c1-0", "role": role, "lang": lang, "text": text, "penman": "" if reason else "(s / x)",
            "linearized": "" if reason else linearized, "parse_raw": "(s / broken" if reason else "",
            REJECT_REASON: reason}


ROWS = [
    _row("premise", "en", "A man sleeps.", reason="parse: unbalanced parentheses"),
    _row("entailment", "en", "A person rests."),
    _row("contradiction", "en", "A man runs."),
    _row("premise", "es", "Un hombre duerme.", reason="parse: unbalanced parentheses"),
    _row("entailment", "es", "", reason="translate: empty translation"),
    _row("contradiction", "es", "Un hombre corre."),
]


def test_english_with_an_invalid_graph_is_kept_as_text_and_its_graph_rejected():
    kept, rejects = partition_rows(ROWS)
    assert [(r["role"], r["lang"], r["text"], r["linearized"]) for r in kept] == [
        ("premise", "en", "A man sleeps.", ""),
        ("entailment", "en", "A person rests.", GRAPH),
        ("contradiction", "en", "A man runs.", GRAPH),
        ("contradiction", "es", "Un hombre corre.", GRAPH),
    ]
    assert kept[0]["penman"] == "" and kept[0]["graph_rejected"] is True
    assert [(r["operator"], r["reason"], r["row"]["lang"], r["row"]["role"]) for r in rejects] == [
        ("parse", "parse: unbalanced parentheses", "en", "premise"),
        ("parse", "parse: unbalanced parentheses", "es", "premise"),
        ("translate", "translate: empty translation", "es", "entailment"),
    ]
    assert rejects[0]["row"]["parse_raw"] == "(s / broken"


def test_mixed_training_uses_the_english_text_of_a_rejected_graph():
    kept, _ = partition_rows(ROWS)
    triples, counts = mixed_triples(_shard_table(kept).to_pylist(), ["en", "es"], english_graph_probability=1.0)
    assert counts["skipped_missing_english"] == 0 and counts["triples"] == 1
    assert triples[0]["premise"] == "A man sleeps." and triples[0]["premise_lang"] == "en"
    assert triples[0]["premise_is_graph"] is False
    assert counts["unavailable.en.no_graph"] == 1  # the premise: its graph drawn, its text given


def test_triples_cut_off_by_max_triples_are_counted(tmp_path, monkeypatch):
    import json

    from interlingua.core import runtime
    from interlingua.operators.corpus.store import CorpusStore
    from interlingua.workflows import amr_corpus

    nli = tmp_path / "nli.jsonl"
    lines = [json.dumps({"captionID": f"c{i}", "pairID": f"c{i}#{j}", "sentence1": f"A man sleeps {i}.",
                         "sentence2": f"hypothesis {i} {j}", "gold_label": label})
             for i in range(5) for j, label in enumerate(["entailment", "contradiction"])]
    nli.write_text("\n".join(lines) + "\n")
    monkeypatch.setattr(runtime, "init_ray", lambda *a, **k: None)  # no translation or parsing: rows are stubbed
    parts = []
    monkeypatch.setattr(amr_corpus, "_build_shard", lambda part, config: (parts.append(len(part)), ([], []))[1])
    config = amr_corpus.AmrCorpusConfig(source=str(nli), store_root=str(tmp_path / "store"), max_triples=2)
    summary = amr_corpus.run(config)
    counters = CorpusStore(str(tmp_path / "store")).manifest("amr-corpus", summary["version"]).counters
    assert summary["nli"]["triples"] == 5 and parts == [2]
    assert counters["triples"] == 2 and counters["triples_beyond_max_triples"] == 3


def test_actor_counts_gpu_shares_and_the_store_are_not_part_of_the_version(tmp_path, monkeypatch):
    """translate_actors, parse_actors, the GPU shares and store_root entered the version's config: a rerun with 2 actors
    built and published a second version of byte-identical rows instead of reopening the first."""
    import json
    import shutil

    from interlingua.core import runtime
    from interlingua.workflows import amr_corpus

    nli = tmp_path / "nli.jsonl"
    nli.write_text("".join(json.dumps({"captionID": f"c{i}", "pairID": f"c{i}#{j}", "sentence1": f"A man sleeps {i}.",
                                       "sentence2": f"hypothesis {i} {j}", "gold_label": label}) + "\n"
                           for i in range(3) for j, label in enumerate(["entailment", "contradiction"])))
    monkeypatch.setattr(runtime, "init_ray", lambda *a, **k: None)  # no translation or parsing: rows are stubbed
    monkeypatch.setattr(amr_corpus, "_build_shard", lambda part, config: ([], []))
    base = dict(source=str(nli), store_root=str(tmp_path / "store"))
    first = amr_corpus.run(amr_corpus.AmrCorpusConfig(**base))["version"]
    shutil.copytree(tmp_path / "store", tmp_path / "other")
    for operational in ({"translate_actors": 2, "parse_actors": 3}, {"translate_gpus": 1.0, "parse_gpus": 0.25},
                        {"store_root": str(tmp_path / "other")}):
        assert amr_corpus.run(amr_corpus.AmrCorpusConfig(**(base | operational)))["version"] == first, operational
    assert amr_corpus.run(amr_corpus.AmrCorpusConfig(**base, drop_parentheses=True))["version"] != first
