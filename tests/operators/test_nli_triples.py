"""NLI pairs → triples grouped by premise, with dropped premises counted and malformed rows kept."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest

from interlingua.operators.nli.sources import read_nli_rows
from interlingua.operators.nli.triples import build_triples

SAMPLE = Path(__file__).parents[2] / "workflows" / "data" / "nli_sample.jsonl"


def _pair(premise, hypothesis, label, prompt="p1"):
    return {"promptID": prompt, "sentence1": premise, "sentence2": hypothesis, "gold_label": label}


def test_groups_by_premise_and_pairs_each_entailment_with_a_contradiction():
    rows = [
        _pair("A man sleeps.", "A person rests.", "entailment"),
        _pair("A man sleeps.", "A man runs.", "contradiction"),
        _pair("A man  sleeps. ", "Someone is resting.", "entailment"),
        _pair("A man sleeps.", "A man dreams.", "neutral"),
    ]
    build = build_triples(rows)
    assert [(t.triple_id, t.premise, t.entailment, t.contradiction) for t in build.triples] == [
        ("p1-0", "A man sleeps.", "A person rests.", "A man runs."),
        ("p1-1", "A man sleeps.", "Someone is resting.", "A man runs."),
    ]
    assert build.unused_pairs == {"neutral": 1}


def test_premises_lacking_either_hypothesis_are_dropped_and_counted():
    rows = [
        _pair("Only entailed.", "x", "entailment", "a"),
        _pair("Only contradicted.", "y", "contradiction", "b"),
        _pair("Only contradicted.", "z", "-", "b"),
    ]
    build = build_triples(rows)
    assert build.triples == []
    assert build.dropped_premises == {"no contradiction": 1, "no entailment": 1}
    assert build.unused_pairs == {"-": 1}


def test_hf_convention_with_integer_labels():
    rows = [
        {"premise": "A dog barks.", "hypothesis": "An animal makes noise.", "label": 0},
        {"premise": "A dog barks.", "hypothesis": "A dog is silent.", "label": 2},
        {"premise": "A dog barks.", "hypothesis": "A dog is angry.", "label": 1},
    ]
    build = build_triples(rows)
    assert len(build.triples) == 1
    assert build.triples[0].contradiction == "A dog is silent."
    assert build.triples[0].triple_id.startswith("p")


def test_malformed_rows_are_kept_with_reason(tmp_path):
    path = tmp_path / "pairs.jsonl.gz"
    with gzip.open(path, "wt", encoding="utf-8") as handle:
        handle.write(json.dumps(_pair("A.", "B.", "entailment")) + "\n")
        handle.write("{not json\n")
        handle.write(json.dumps({"sentence1": "A.", "sentence2": "", "gold_label": "entailment"}) + "\n")
        handle.write(json.dumps(_pair("A.", "C.", "maybe")) + "\n")
    build = build_triples(read_nli_rows(str(path)))
    reasons = [m["reason"] for m in build.malformed_rows]
    assert reasons[0].startswith("invalid JSON")
    assert reasons[1:] == ["missing hypothesis", "unknown label 'maybe'"]
    assert build.dropped_premises == {"no contradiction": 1}


def test_bundled_sample_has_a_few_hundred_triples():
    build = build_triples(read_nli_rows(str(SAMPLE)))
    assert 200 <= len(build.triples) <= 400
    assert sum(build.dropped_premises.values()) > 0
    assert len({t.triple_id for t in build.triples}) == len(build.triples)


def test_empty_source_is_rejected():
    with pytest.raises(ValueError, match="source"):
        read_nli_rows("")


def test_triple_ids_are_unique_per_premise_text_when_a_caption_id_is_shared():
    rows = [
        {"captionID": "c1", "sentence1": "A dog runs.", "sentence2": "An animal moves.", "gold_label": "entailment"},
        {"captionID": "c1", "sentence1": "A dog runs.", "sentence2": "A dog sleeps.", "gold_label": "contradiction"},
        {"captionID": "c1", "sentence1": "A dog is running.", "sentence2": "A pet moves.", "gold_label": "entailment"},
        {"captionID": "c1", "sentence1": "A dog is running.", "sentence2": "It sits.", "gold_label": "contradiction"},
        {"captionID": "c2", "sentence1": "Kids play.", "sentence2": "Children play.", "gold_label": "entailment"},
        {"captionID": "c2", "sentence1": "Kids play.", "sentence2": "Kids cry.", "gold_label": "contradiction"},
    ]
    ids = [t.triple_id for t in build_triples(rows).triples]
    assert len(set(ids)) == 3 and ids[2] == "c2-0"  # an id only one premise carries is left as it was
    assert ids[0].startswith("c1-") and ids[1].startswith("c1-") and ids[0] != ids[1]
    by_premise = lambda build: {t.premise: t.triple_id for t in build.triples}  # noqa: E731
    assert by_premise(build_triples(rows)) == by_premise(build_triples(list(reversed(rows))))  # not order-dependent


def test_mixed_triples_keep_both_premises_that_share_a_caption_id():
    from interlingua.trainers.objectives.amr_mixing import mixed_triples

    rows = [
        {"captionID": "c1", "sentence1": premise, "sentence2": hypothesis, "gold_label": label}
        for premise in ("A dog runs.", "A dog is running.")
        for hypothesis, label in (("An animal moves.", "entailment"), ("A cat sleeps.", "contradiction"))
    ]
    corpus = [{"source_id": t.triple_id, "role": role, "lang": "en", "text": getattr(t, role), "linearized": ""}
              for t in build_triples(rows).triples for role in ("premise", "entailment", "contradiction")]
    triples, counts = mixed_triples(corpus, ["en"])
    assert counts["triples"] == 2 and counts["rows_duplicate"] == 0
    assert sorted(t["premise"] for t in triples) == ["A dog is running.", "A dog runs."]


@pytest.mark.parametrize("suffix", [".jsonl.xz", ".JSONL.XZ", ".jsonl.lzma", ".jsonl.bz2", ".json.gz"])
def test_every_compression_open_compressed_reads_is_a_file_not_a_dataset_id(tmp_path, monkeypatch, suffix):
    import bz2
    import lzma

    from interlingua.operators.nli import sources

    monkeypatch.setattr(sources, "read_hf_rows", lambda *a, **k: pytest.fail("read as a hub dataset id"))
    text = (json.dumps(_pair("A man sleeps.", "A man rests.", "entailment")) + "\n"
            + json.dumps(_pair("A man sleeps.", "A man runs.", "contradiction")) + "\n").encode("utf-8")
    codec = {".xz": lzma.compress, ".lzma": lambda b: lzma.compress(b, format=lzma.FORMAT_ALONE),
             ".bz2": bz2.compress, ".gz": gzip.compress}[Path(suffix).suffix.lower()]
    path = tmp_path / f"pairs{suffix}"
    path.write_bytes(codec(text))
    [triple] = build_triples(sources.read_nli_rows(str(path))).triples
    assert (triple.premise, triple.entailment, triple.contradiction) == ("A man sleeps.", "A man rests.", "A man runs.")
