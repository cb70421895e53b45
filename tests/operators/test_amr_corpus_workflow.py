"""The amr-corpus workflow end to end on a few sample triples with Apertium en→es (no parser weights)."""

from __future__ import annotations

import pytest

from interlingua.operators.translate.apertium_backend import apertium_available

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(not apertium_available("eng-spa"), reason="apertium eng-spa not installed"),
]


def test_workflow_writes_a_resumable_corpus_version(tmp_path):
    from interlingua.operators.corpus.store import CorpusStore
    from interlingua.workflows.amr_corpus import AmrCorpusConfig, run

    config = AmrCorpusConfig(store_root=str(tmp_path), max_triples=4, triples_per_shard=2)
    summary = run(config)
    assert summary["shards_total"] == 2 and summary["rows"] == 4 * 3 * 2
    table = CorpusStore(str(tmp_path)).read_table("amr-corpus").to_pylist()
    english = [r for r in table if r["lang"] == "en"]
    spanish = [r for r in table if r["lang"] == "es"]
    assert len(english) == len(spanish) == 12
    assert {r["role"] for r in table} == {"premise", "entailment", "contradiction"}
    assert all(r["text"] and r["penman"] == "" for r in spanish)
    assert CorpusStore(str(tmp_path)).manifest("amr-corpus").counters["rows_unparsed"] == 24
    again = run(config)
    assert again["version"] == summary["version"] and again["rows"] == summary["rows"]
