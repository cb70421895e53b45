"""Builds whose result is empty: the corpus store needs at least one shard per version. An empty but valid result
(every row rejected, a direction whose every article is left out) publishes its rejects, in one empty shard where
nothing else would hold them; an input with no rows at all, and an NLI source giving no triple (as ease-corpus keeping
no pair), is refused in one line (nothing to build, nothing published)."""

from __future__ import annotations

import json
import sys

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from interlingua.core.errors import UserError
from interlingua.operators.bitext.hygiene import HygieneSettings
from interlingua.operators.corpus.store import CorpusStore


def _ray_started() -> bool:
    ray = sys.modules.get("ray")
    return ray is not None and ray.is_initialized()


def _bitext(ids: list[str], src: list[str], tgt: list[str]) -> pa.Table:
    return pa.table({"id": pa.array(ids, pa.string()), "src": pa.array(src, pa.string()),
                     "tgt": pa.array(tgt, pa.string())})


def test_a_bitext_table_with_no_rows_is_refused_and_one_all_rejected_is_published(tmp_path):
    from interlingua.workflows import bible_bitext
    from interlingua.workflows.bitext_source import publish_bitext_corpus

    store = CorpusStore(str(tmp_path / "store"))
    with pytest.raises(UserError, match=r"^no bitext rows to publish as corpus b from in\.parquet: nothing to build"):
        publish_bitext_corpus(store, "b", _bitext([], [], []), src_lang="en", tgt_lang="es", inputs=["in.parquet"],
                              hygiene=HygieneSettings())
    assert store.corpus_names() == []

    bible = tmp_path / "bible.parquet"
    pq.write_table(pa.table({"id": pa.array([], pa.string()), "en": pa.array([], pa.string()),
                             "es": pa.array([], pa.string())}), bible)
    with pytest.raises(UserError, match="no bitext rows to publish as corpus bible-en-es"):
        bible_bitext.run(bible_bitext.BibleBitextConfig(bitext=str(bible), state_dir=str(tmp_path / "state")))

    manifest = publish_bitext_corpus(store, "b", _bitext(["1", "2"], ["", "the house"], ["la casa", ""]),
                                     src_lang="en", tgt_lang="es", inputs=["in.parquet"], hygiene=HygieneSettings())
    assert (manifest.total_rows, len(manifest.shards), manifest.rejects_by_reason) == (0, 1, {"empty": 2})
    assert store.read_table("b").num_rows == 0 and store.read_rejects("b").num_rows == 2


def _nli_line(pair: str, label: str, hypothesis: str = "A child is outdoors.") -> str:
    return json.dumps({"captionID": "c0", "pairID": pair, "sentence1": "A girl rides a bicycle.",
                       "sentence2": hypothesis, "gold_label": label}) + "\n"


def test_amr_corpus_with_no_triple_fails_in_one_line_and_publishes_nothing(tmp_path):
    """As ease-corpus keeping no pair: the version before stays ``latest``, no empty version moves it."""
    from interlingua.workflows import amr_corpus

    nli = tmp_path / "nli.jsonl"
    nli.write_text(_nli_line("c0#0", "neutral") + _nli_line("c0#1", "maybe") + "{not json\n" + _nli_line("c0#2", "-"))
    config = amr_corpus.AmrCorpusConfig(source=str(nli), store_root=str(tmp_path / "store"))
    with pytest.raises(UserError, match=r"^amr-corpus: no NLI triple to publish: .*nli\.jsonl gives no \(premise, "
                                        r"entailment, contradiction\) triple \(premises dropped: no entailment 1; pairs "
                                        r"unused: no gold label 1, neutral 1; malformed rows: 2\) \(hint: ") as refused:
        amr_corpus.run(config)
    assert "\n" not in str(refused.value)
    assert not _ray_started()  # refused before Ray
    assert CorpusStore(str(tmp_path / "store")).corpus_names() == []
    assert not list((tmp_path / "store").rglob("manifest.json"))


def test_amr_corpus_writes_its_malformed_rows_aside_with_the_triples(tmp_path, monkeypatch):
    from interlingua.core import runtime
    from interlingua.workflows import amr_corpus

    nli = tmp_path / "nli.jsonl"
    nli.write_text(_nli_line("c0#0", "entailment") + _nli_line("c0#1", "contradiction", "A girl sleeps.")
                   + json.dumps({"sentence1": "", "gold_label": "entailment"}) + "\n")
    monkeypatch.setattr(runtime, "init_ray", lambda *a, **k: None)
    monkeypatch.setattr(amr_corpus, "_build_shard", lambda triples, config: (amr_corpus._english_rows(triples), []))
    summary = amr_corpus.run(amr_corpus.AmrCorpusConfig(source=str(nli), languages=[], translate={},
                                                        store_root=str(tmp_path / "store")))
    store = CorpusStore(str(tmp_path / "store"))
    assert summary["rows"] == 3 and store.manifest("amr-corpus").rejects_by_reason == {"missing premise": 1}


def test_a_title_lead_direction_whose_every_article_is_left_out_keeps_its_rejects(tmp_path, monkeypatch):
    from interlingua.workflows import wiki_title_lead

    pairs = {"en-fr": [("en-fr:Paris", "Paris", "Paris est la capitale de la France.")]}
    left_out = {"en-fr": [("en-fr:Lyon", "Lyon", "Lyon est une ville.")],
                "fr-en": [("fr-en:Lyon", "Lyon", "Lyon is a city in France.")]}
    monkeypatch.setattr(wiki_title_lead, "title_lead_pairs", lambda languages, monolingual, banned: (pairs, left_out))
    config = wiki_title_lead.WikiTitleLeadConfig(languages=["fr"], exclude_pack=False, state_dir=str(tmp_path / "state"))
    summary = wiki_title_lead.run(config)
    store = CorpusStore(str(tmp_path / "state" / "corpus"))
    manifest = store.manifest("wiki-title-lead")
    assert (summary["rows"], summary["rejects"]) == (1, 2)
    assert sorted(s.shard_id for s in manifest.shards) == ["en-fr", "fr-en"]
    assert sorted(json.loads(r["row"])["id"] for r in store.read_rejects("wiki-title-lead").to_pylist()) == [
        "en-fr:Lyon", "fr-en:Lyon"]


def test_refresh_refuses_an_input_with_no_rows_as_a_build_does(tmp_path):
    from interlingua.workflows.bitext_corpus import BitextCorpusConfig, run
    from interlingua.workflows.refresh import RefreshSpec, refresh

    empty = tmp_path / "in" / "empty.tsv"
    empty.parent.mkdir()
    pq.write_table(_bitext([], [], []), tmp_path / "in" / "none.parquet")
    empty.write_text("")
    for url in (str(empty), str(tmp_path / "in" / "none.parquet")):
        spec = RefreshSpec(workflow="bitext-corpus", inputs=[url], config={
            "corpus_name": "bt", "store_root": str(tmp_path / "store"), "workers": 1})
        with pytest.raises(UserError, match="holds no bitext rows: nothing to build"):
            refresh(spec, log=lambda line: None)
    with pytest.raises(UserError, match="holds no bitext rows: nothing to build"):
        run(BitextCorpusConfig(source=str(tmp_path / "in" / "none.parquet"), store_root=str(tmp_path / "store")))
    assert not _ray_started()


def test_a_mix_of_empty_sources_publishes_their_empty_shards(tmp_path):
    from interlingua.workflows.corpus_mix import CorpusMixConfig, run

    store = CorpusStore(str(tmp_path / "state" / "corpus"))
    for name in ("a", "b"):
        writer = store.open_version(name, {"k": name}, [f"{name}.tsv"])
        writer.write_shard("shard-00000", _bitext([], [], []),
                           rejects=[{"operator": "hygiene", "reason": "empty", "row": {"id": "1"}}])
        writer.publish(expected_shards=["shard-00000"])
    summary = run(CorpusMixConfig(sources=[{"corpus": "a"}, {"corpus": "b"}], state_dir=str(tmp_path / "state")))
    manifest = store.manifest("corpus-mix")
    assert summary["rows"] == 0 and len(manifest.shards) == 2 and store.read_table("corpus-mix").num_rows == 0
