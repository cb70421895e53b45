"""The ease-corpus workflow on a hand-written dump with known links, redirects and types."""

import bz2
import json

import mwparserfromhell
import numpy as np
import pytest
from interlingua.operators.corpus.store import CorpusStore
from interlingua.operators.wiki.dump_shards import plan_shards
from interlingua.operators.wiki.extract_operator import ExtractShards, shards_to_rows
from interlingua.workflows.ease_corpus import EaseCorpusConfig, WikiDump, build_corpus

TYPES = {
    "Q90": ("Paris", "city"),
    "Q220": ("Rome", "city"),
    "Q64": ("Berlin", "city"),
    "Q2807": ("Madrid", "city"),
    "Q142": ("France", "country"),
    "Q38": ("Italy", "country"),
    "Q183": ("Germany", "country"),
    "Q29": ("Spain", "country"),
    "Q1471": ("Seine", "river"),
}
PAGES = [
    (
        "Paris",
        "Paris is the capital of [[France]]. It lies on the [[Seine]] river. It is twinned with [[Rome]] and [[Berlin]].",
    ),
    ("Rome", "{{Infobox city|name=Rome}}Rome is the capital of [[Italy]]. It is older than [[Paris]] and [[Madrid]]."),
    (
        "Berlin",
        "Berlin is the capital of [[Deutschland|Germany]]. It is far from [[Madrid]]. The [[Seine]] is in France.",
    ),
    (
        "Madrid",
        "Madrid is the capital of [[Spain]]. It is south of [[france|France]]. See also [[Berlin]] and [[Rome]].\n"
        "* Twin: [[Italy]]\n{{Navbox|[[Germany]]}}",
    ),
    ("Broken", "Start [[Italy]] here. {{a|" * 3 + "{{b|" * 3000 + "Never [[Nowhere]] shown."),
    ("Spain", "Spain borders [[France]]. Its capital is [[Madrid]]. It is not [[Italy]] or [[Germany]]."),
]
REDIRECTS = [("Deutschland", "Germany")]


def write_dump(path):
    parts = [
        '<mediawiki xmlns="http://www.mediawiki.org/xml/export-0.10/"><siteinfo><case>first-letter</case>'
        '<namespaces><namespace key="0" /><namespace key="14">Category</namespace></namespaces></siteinfo>\n'
    ]
    for page_id, (title, text) in enumerate(PAGES, start=1):
        parts.append(
            f"<page><title>{title}</title><ns>0</ns><id>{page_id}</id><revision><text>{text}</text></revision></page>\n"
        )
    for offset, (source, target) in enumerate(REDIRECTS, start=100):
        parts.append(
            f'<page><title>{source}</title><ns>0</ns><id>{offset}</id><redirect title="{target}" />'
            f"<revision><text>#REDIRECT [[{target}]]</text></revision></page>\n"
        )
    parts.append("</mediawiki>")
    path.write_bytes(bz2.compress("".join(parts).encode()))
    return str(path)


def write_wikidata(path):
    lines = [
        json.dumps(
            {
                "id": qid,
                "sitelinks": {"enwiki": {"title": title}},
                "claims": {"P31": [{"mainsnak": {"datavalue": {"value": {"id": kind}}}}]},
            }
        )
        for qid, (title, kind) in TYPES.items()
    ]
    path.write_text("[\n" + ",\n".join(lines) + "\n]\n")
    return str(path)


def extract(config, work):
    shards = [s for d in config.dumps for s in plan_shards(d.url, d.lang, d.index_url)]
    operator = ExtractShards(work, {"min_sentence_chars": 5})
    batch = {k: np.array([row[k] for row in shards_to_rows(shards)], dtype=object) for k in shards_to_rows(shards)[0]}
    out = operator(batch)
    return shards, {sid: json.loads(r) for sid, r in zip(out["shard_id"], out["report"], strict=True)}, operator, batch


@pytest.fixture
def setup(tmp_path):
    dump = write_dump(tmp_path / "enwiki.xml.bz2")
    vectors = tmp_path / "vectors.txt"
    vectors.write_text("2 4\nENTITY/Q90 1 0 0 0\nQ142 0 1 0 0\n")
    config = EaseCorpusConfig(
        dumps=[WikiDump(lang="en", url=dump)],
        wikidata_json=write_wikidata(tmp_path / "wd.json"),
        min_entity_links=1,
        entity_vectors=str(vectors),
        min_sentence_chars=5,
        seed=3,
    )
    return config, str(tmp_path / "work"), str(tmp_path / "store")


def reference_links():
    """(entities linked on each page incl. the page's own, link counts), computed independently with mwparserfromhell."""
    title_to_qid = {title: qid for qid, (title, _) in TYPES.items()}
    redirects = dict(REDIRECTS)
    on_page, counts = {}, {}
    for page_id, (title, text) in enumerate(PAGES, start=1):
        if title == "Broken":  # mwparserfromhell takes seconds on 3000-deep templates; the cut leaves this prefix
            text = text.split("{{", 1)[0]
        targets = [str(link.title).strip() for link in mwparserfromhell.parse(text).filter_wikilinks()]
        qids = [title_to_qid.get(redirects.get(t[0].upper() + t[1:], t[0].upper() + t[1:])) for t in targets]
        for qid in filter(None, qids):
            counts[qid] = counts.get(qid, 0) + 1
        on_page[page_id] = set(filter(None, qids)) | {title_to_qid.get(title)}
    return on_page, counts


def reference_candidates(entity, page_id, on_page, counts, min_links=1):
    return {
        q
        for q, (_, kind) in TYPES.items()
        if kind == TYPES[entity][1] and counts.get(q, 0) > min_links and q not in on_page[page_id] and q != entity
    }


def test_corpus_rows_links_and_negative_constraints(setup):
    config, work, store_url = setup
    shards, reports, _, _ = extract(config, work)
    summary = build_corpus(config, shards, reports, work, store_url)
    store = CorpusStore(store_url)
    rows = store.read_table("ease").to_pylist()
    on_page, counts = reference_links()
    assert len(rows) >= 8
    for row in rows:
        assert counts[row["entity_id"]] > 1
        assert row["sentence"][row["link_start"] : row["link_end"]] == TYPES[row["entity_id"]][0]
        (negative,) = row["hard_negative_ids"]
        assert negative in reference_candidates(row["entity_id"], row["page_id"], on_page, counts)
    spain = [r for r in rows if r["page_id"] == 4 and r["entity_id"] == "Q29"]
    assert spain == []  # Italy (list) and Germany (template) are on the page too: no country left
    berlin = [r for r in rows if r["page_id"] == 3 and r["entity_id"] == "Q183"]  # via the Deutschland redirect
    assert [r["sentence"] for r in berlin] == ["Berlin is the capital of Germany."]
    rejects = store.read_rejects("ease").to_pylist()
    assert {r["reason"] for r in rejects} == {"no_negative_candidate"}
    for reject in rejects:
        row = json.loads(reject["row"])
        assert reference_candidates(row["entity_id"], row["page_id"], on_page, counts) == set()
    assert sum(json.loads(r["row"])["entity_id"] == "Q1471" for r in rejects) == 2  # the only river
    funnel = summary["funnel"]
    assert funnel["pairs_dropped_no_negative_candidate"] == len(rejects)
    assert (
        funnel["pairs"]
        == funnel["pairs_with_negatives"]
        + funnel["pairs_dropped_no_negative_candidate"]
        + funnel["pairs_entity_below_min_links"]
    )
    assert funnel["pairs_kept_after_caps"] == len(rows)
    assert summary["funnel_by_lang"]["en"]["pairs_kept"] == len(rows)
    assert summary["funnel_by_lang"]["en"]["articles"] == len(PAGES)
    manifest = store.manifest("ease")
    assert manifest.config["entity_id_source"] == "wikidata_json"
    assert manifest.counters["markup_template_depth_exceeded"] == 1
    entities = store.read_table("ease-entities").to_pylist()
    by_id = {e["entity_id"]: e for e in entities}
    assert by_id["Q142"]["vector"] == [0, 1, 0, 0] and by_id["Q142"]["types"] == ["country"]
    assert np.linalg.norm(by_id["Q183"]["vector"]) > 0  # no vector given: seeded random init
    assert store.manifest("ease-entities").counters["vectors_missing_random_init"] == len(by_id) - 1
    assert set(by_id) == {r["entity_id"] for r in rows} | {n for r in rows for n in r["hard_negative_ids"]}


def test_broken_page_keeps_text_before_the_cut(setup):
    config, work, _ = setup
    shards, reports, _, _ = extract(config, work)
    sentences = (
        __import__("pyarrow.parquet", fromlist=["x"])
        .read_table(f"{work}/extract/en-00000/sentences.parquet")
        .to_pylist()
    )
    broken = [s["sentence"] for s in sentences if s["page_id"] == 5]
    assert broken == ["Start Italy here."]
    assert reports["en-00000"]["markup_issues"]["template_depth_exceeded"] == 1


def test_resume_skips_extracted_shards_and_reuses_the_version(setup):
    config, work, store_url = setup
    shards, reports, operator, batch = extract(config, work)
    first = build_corpus(config, shards, reports, work, store_url)
    again = json.loads(operator(batch)["report"][0])
    assert again["resumed"] is True and again["counters"] == reports["en-00000"]["counters"]
    second = build_corpus(config, shards, reports, work, store_url)
    assert second["corpus"] == first["corpus"]
    assert CorpusStore(store_url).read_table("ease").num_rows == first["funnel"]["pairs_kept_after_caps"]


def test_without_wikidata_titles_are_ids_and_the_manifest_says_so(setup):
    config, work, store_url = setup
    config = config.model_copy(update={"wikidata_json": None})
    shards, reports, _, _ = extract(config, work)
    build_corpus(config, shards, reports, work, store_url)
    manifest = CorpusStore(store_url).manifest("ease")
    assert manifest.config["entity_id_source"] == "titles"
    assert manifest.config["negative_sampling"].startswith("untyped")
    assert "Madrid" in set(CorpusStore(store_url).read_table("ease").column("entity_id").to_pylist())


def test_without_wikidata_each_language_draws_negatives_from_its_own_titles(setup, tmp_path):
    """en + de dumps, no entity source: ids are titles (German ones ``dewiki:``-prefixed); every negative must be
    an id of the pair's language, kept (linked more than once in total) and not linked on the pair's page."""
    config, work, store_url = setup
    german = write_dump(tmp_path / "dewiki.xml.bz2")  # the same pages in a second language
    config = config.model_copy(update={"wikidata_json": None,
                                       "dumps": [*config.dumps, WikiDump(lang="de", url=german)]})
    shards, reports, _, _ = extract(config, work)
    build_corpus(config, shards, reports, work, store_url)
    rows = CorpusStore(store_url).read_table("ease").to_pylist()
    on_page, counts = reference_links()  # by QID; titles as ids name the same entities
    title_of = {qid: title for qid, (title, _) in TYPES.items()}
    kept_titles = {title_of[q] for q, n in counts.items() if n > 1}
    by_lang = {"en": 0, "de": 0}
    for row in rows:
        prefix = "dewiki:" if row["lang"] == "de" else ""
        page_titles = {prefix + title_of[q] for q in on_page[row["page_id"]] if q}
        candidates = {prefix + t for t in kept_titles} - page_titles - {row["entity_id"]}
        (negative,) = row["hard_negative_ids"]
        assert negative in candidates, (row["lang"], row["entity_id"], negative)
        by_lang[row["lang"]] += 1
    assert by_lang["en"] == by_lang["de"] > 0


def test_config_rejects_duplicate_languages():
    with pytest.raises(ValueError, match="one dump"):
        EaseCorpusConfig(dumps=[WikiDump(lang="en", url="a"), WikiDump(lang="en", url="b")])


@pytest.mark.slow
def test_run_extracts_shards_in_parallel_with_ray(tmp_path):
    import ray
    from interlingua.operators.wiki.multistream_writer import write_multistream
    from interlingua.workflows.ease_corpus import run

    dump = write_dump(tmp_path / "plain.xml.bz2")
    write_multistream(dump, str(tmp_path / "ms.xml.bz2"), str(tmp_path / "index.txt"), pages_per_stream=2)
    config = EaseCorpusConfig(
        dumps=[WikiDump(lang="en", url=str(tmp_path / "ms.xml.bz2"), index_url=str(tmp_path / "index.txt"))],
        wikidata_json=write_wikidata(tmp_path / "wd.json"),
        min_entity_links=1,
        min_sentence_chars=5,
        shard_bytes=1,
        vector_dim=8,
        vector_epochs=1,
        store=str(tmp_path / "store"),
        work_dir=str(tmp_path / "work"),
    )
    ray.init(address="local", num_cpus=2, object_store_memory=200 * 1024**2, include_dashboard=False)
    try:
        summary = run(config)
    finally:
        ray.shutdown()
    assert summary["funnel"]["extract_pages"] == len(PAGES) + len(REDIRECTS)
    manifest = CorpusStore(str(tmp_path / "store")).manifest("ease")
    assert len(manifest.shards) == 4 and manifest.total_rows == summary["funnel"]["pairs_kept_after_caps"] > 0


def test_truncated_multistream_dump_finishes_and_reports_where_it_broke(tmp_path, setup):
    from interlingua.operators.wiki.multistream_writer import write_multistream

    config, work, store_url = setup
    dump, index = str(tmp_path / "ms.xml.bz2"), str(tmp_path / "index.txt.bz2")
    write_multistream(config.dumps[0].url, dump, index, pages_per_stream=2)
    data = (tmp_path / "ms.xml.bz2").read_bytes()
    (tmp_path / "ms.xml.bz2").write_bytes(data[: len(data) - 60])  # cuts the footer and the last pages stream
    config = config.model_copy(update={"dumps": [WikiDump(lang="en", url=dump, index_url=index)], "shard_bytes": 1})
    shards, reports, _, _ = extract(config, work)
    summary = build_corpus(config, shards, reports, work, store_url)
    (issue,) = summary["dump_issues"]
    assert issue["reason"] == "truncated_archive" and issue["offset"] == len(data) - 60
    assert issue["shard"] == shards[-1].shard_id
    assert summary["funnel"]["extract_articles"] >= 4 and summary["funnel"]["pairs_kept_after_caps"] > 0
    rejects = CorpusStore(store_url).read_rejects("ease").to_pylist()
    assert any(r["reason"] == "truncated_archive" for r in rejects)


STRICT_TYPES = {
    "Q90": ("Paris", "Q515"),
    "Q220": ("Rome", "Q515"),
    "Q64": ("Berlin", "Q515"),
    "Q2807": ("Madrid", "Q515"),
    "Q456": ("Lyon", "Q515"),
    "Q1741": ("Vienna", "Q515"),
    "Q142": ("France", "Q6256"),
    "Q38": ("Italy", "Q6256"),
}
STRICT_PAGES = [
    "Paris lies in [[France]] near [[lyon]]. It is twinned with [[Madrid_]] too.\n* [[Rome]]\n"
    "{{Nav|[[berlin_(city)#x|B]]}}",
    "Rome is the capital of [[Italy]]. It is older than [[Vienna]] and [[Lyon]].",
    "Berlin is far from [[France]] and [[Italy]]. It trades with [[Vienna]], [[madrid]] and [[Paris]].",
    "Vienna is east of [[France]]. It is near [[Berlin (city)]] and [[Rome]]. [[#History|Its history]] is long.",
    "Madrid likes [[Lyon]], [[Paris]] and [[Rome]]. It hosts [[Berlin]] fans.",
    "Lyon is near [[Paris]] and [[Vienna]]. " + "{{a|" * 3000 + "Never [[Rome]] seen.",
]


def test_strict_link_threshold_page_wide_exclusion_and_bad_pages(tmp_path):
    """Hand-counted: France 3, Lyon 3, Paris 3, Vienna 4 links (kept with min_entity_links=2); Italy, Madrid,
    Berlin, Rome exactly 2 (not kept). Negatives must avoid every link of the page (lists, templates, redirects,
    the text after a depth cut, the page itself), not just the sentence's."""
    from xml.sax.saxutils import escape

    titles = ["Paris", "Rome", "Berlin", "Vienna", "Madrid", "Lyon"]
    parts = [
        '<mediawiki xmlns="http://www.mediawiki.org/xml/export-0.10/"><siteinfo><case>first-letter</case>'
        "</siteinfo>\n"
    ]
    for page_id, (title, text) in enumerate(zip(titles, STRICT_PAGES, strict=True), start=1):
        parts.append(
            f"<page><title>{title}</title><ns>0</ns><id>{page_id}</id><revision><text>{escape(text)}</text>"
            "</revision></page>\n"
        )
    parts.append("<page><title>Bad</title><ns>0</ns><id>7</id><revision><text>a <b> c</text></revision></page>\n")
    parts.append(  # a redirect known only from its wikitext
        "<page><title>Berlin (city)</title><ns>0</ns><id>8</id><revision><text>#REDIRECT [[Berlin]]</text>"
        "</revision></page>\n</mediawiki>"
    )
    dump = tmp_path / "enwiki.xml.bz2"
    dump.write_bytes(bz2.compress("".join(parts).encode()))
    lines = [
        json.dumps(
            {
                "id": qid,
                "sitelinks": {"enwiki": {"title": title}},
                "claims": {"P31": [{"mainsnak": {"datavalue": {"value": {"id": kind}}}}]},
            }
        )
        for qid, (title, kind) in STRICT_TYPES.items()
    ]
    (tmp_path / "wd.json").write_text("[\n" + ",\n".join(lines) + "\n]\n")
    (tmp_path / "vectors.txt").write_text("1 2\nQ90 1 0\n")
    config = EaseCorpusConfig(
        dumps=[WikiDump(lang="en", url=str(dump))],
        wikidata_json=str(tmp_path / "wd.json"),
        min_entity_links=2,
        entity_vectors=str(tmp_path / "vectors.txt"),
        min_sentence_chars=5,
        seed=11,
    )
    work, store_url = str(tmp_path / "work"), str(tmp_path / "store")
    shards, reports, _, _ = extract(config, work)
    summary = build_corpus(config, shards, reports, work, store_url)
    store = CorpusStore(store_url)
    name = {qid: title for qid, (title, _) in STRICT_TYPES.items()}
    rows = {
        (r["page_id"], name[r["entity_id"]], r["sentence"][r["link_start"] : r["link_end"]]): [
            name[n] for n in r["hard_negative_ids"]
        ]
        for r in store.read_table("ease").to_pylist()
    }
    vienna_self = rows.pop((4, "Vienna", "Its history"))
    assert vienna_self in (["Lyon"], ["Paris"])
    assert rows == {
        (1, "Lyon", "lyon"): ["Vienna"],
        (2, "Vienna", "Vienna"): ["Paris"],
        (2, "Lyon", "Lyon"): ["Paris"],
        (3, "Vienna", "Vienna"): ["Lyon"],
        (3, "Paris", "Paris"): ["Lyon"],
        (5, "Lyon", "Lyon"): ["Vienna"],
        (5, "Paris", "Paris"): ["Vienna"],
    }
    funnel = summary["funnel"]
    assert funnel["entities_kept"] == 4 and funnel["pairs_entity_below_min_links"] == 8
    rejects = store.read_rejects("ease").to_pylist()
    dropped = sorted(
        (json.loads(r["row"])["page_id"], name[json.loads(r["row"])["entity_id"]])
        for r in rejects
        if r["reason"] == "no_negative_candidate"
    )
    assert dropped == [(1, "France"), (3, "France"), (4, "France"), (6, "Paris"), (6, "Vienna")]
    assert funnel["pairs_dropped_no_negative_candidate"] == 5
    assert [i["reason"] for i in summary["dump_issues"]] == ["malformed_page"]
    assert funnel["extract_malformed_pages"] == 1 and funnel["extract_redirects"] == 1


def test_rejected_wikidata_lines_are_counted_and_kept_aside(setup, tmp_path):
    """Lines of the Wikidata JSON that are no entity reach the funnel, the manifest's counters and the rejects (with
    their line number and start); the corpus rows are those of the clean file."""
    config, work, store_url = setup
    shards, reports, _, _ = extract(config, work)
    clean = build_corpus(config, shards, reports, work, str(tmp_path / "clean"))
    path = tmp_path / "wd.json"
    lines = path.read_bytes().split(b"\n")
    path.write_bytes(b"\n".join(lines[:2] + [b'{"id": "Q1", "sitelinks": {"enwiki": {"title": "\xff"}}},',
                                             b"{not json,", b'{"sitelinks": {}},'] + lines[2:]))
    summary = build_corpus(config, shards, reports, work, store_url)
    funnel = summary["funnel"]
    assert (funnel["wikidata_lines_rejected"], funnel["wikidata_lines_rejected_invalid_utf8"],
            funnel["wikidata_lines_rejected_invalid_json"], funnel["wikidata_lines_rejected_not_an_entity"]) == (3, 1, 1, 1)
    store = CorpusStore(store_url)
    assert store.manifest("ease").counters["wikidata_lines_rejected"] == 3
    rejected = [(r["reason"], json.loads(r["row"])) for r in store.read_rejects("ease").to_pylist()
                if r["operator"] == "wikidata"]
    assert [(reason, row["line"], row["text"]) for reason, row in rejected] == [
        ("invalid_utf8", 3, '{"id": "Q1", "sitelinks": {"enwiki": {"title": "\ufffd"}}}'),
        ("invalid_json", 4, "{not json"), ("not_an_entity", 5, '{"sitelinks": {}}')]
    assert rejected[0][1]["input"] == str(path)
    assert store.read_table("ease").to_pylist() == CorpusStore(str(tmp_path / "clean")).read_table("ease").to_pylist()
    assert "wikidata_lines_rejected" not in clean["funnel"]


def test_what_the_readme_says_of_untyped_entities_disambiguation_pages_and_inline_templates(tmp_path):
    """README (ease-corpus): with a typed catalog, a kept entity without P31 gets no negative (its pairs dropped,
    counted ``pairs_dropped_entity_has_no_type``, kept in the rejects); a disambiguation page is an ordinary
    article; inline templates are removed from the sentences."""
    pages = [("Paris", "Paris is a city in [[France]] about {{convert|105|km2}} wide and near [[Lyon]]. It is twinned "
                       "with [[Rome]] in [[Italy]]."),
             ("Lyon", "Lyon is a city in [[France]] and [[Spain]] is far away from [[Paris]] and [[Mercury]]."),
             ("Mercury", "{{disambiguation}}'''Mercury''' may refer to:\n* [[Paris]], a city in [[France]] too.\n"
                         "Mercury is a name for the planet [[Spain]] and for the city [[Lyon]] of old.")]
    dump = tmp_path / "enwiki.xml.bz2"
    dump.write_bytes(bz2.compress(("<mediawiki><siteinfo><case>first-letter</case></siteinfo>" + "".join(
        f"<page><title>{t}</title><ns>0</ns><id>{i}</id><revision><text>{x}</text></revision></page>"
        for i, (t, x) in enumerate(pages, start=1)) + "</mediawiki>").encode()))
    claims = {"Q90": ("Paris", "Q515"), "Q456": ("Lyon", "Q515"), "Q142": ("France", "Q6256"),
              "Q29": ("Spain", "Q6256"), "Q220": ("Rome", "Q515"), "Q38": ("Italy", "Q6256"), "Q5": ("Mercury", None)}
    (tmp_path / "wd.json").write_text("[\n" + ",\n".join(json.dumps(
        {"id": q, "sitelinks": {"enwiki": {"title": t}},
         "claims": {"P31": [{"mainsnak": {"datavalue": {"value": {"id": k}}}}]} if k else {}})
        for q, (t, k) in claims.items()) + "\n]\n")
    (tmp_path / "vectors.txt").write_text("1 2\nQ90 1 0\n")
    config = EaseCorpusConfig(dumps=[WikiDump(lang="en", url=str(dump))], wikidata_json=str(tmp_path / "wd.json"),
                              min_entity_links=0, entity_vectors=str(tmp_path / "vectors.txt"), min_sentence_chars=5)
    work, store_url = str(tmp_path / "work"), str(tmp_path / "store")
    shards, reports, _, _ = extract(config, work)
    assert reports[shards[0].shard_id]["counters"]["articles"] == 3  # the disambiguation page too
    summary = build_corpus(config, shards, reports, work, store_url)
    store = CorpusStore(store_url)
    rows = store.read_table("ease").to_pylist()
    sentences = {r["sentence"] for r in rows}
    assert "Paris is a city in France about wide and near Lyon." in sentences  # {{convert|105|km2}} removed
    assert {r["page_id"] for r in rows} == {1, 2, 3}  # the disambiguation page's pairs are corpus rows
    assert summary["funnel"]["entities_kept"] == 7 and summary["funnel"]["pairs_dropped_entity_has_no_type"] == 1
    assert "Q5" not in {r["entity_id"] for r in rows}  # Mercury: kept, untyped, never a pair of a typed catalog
    (dropped,) = [r for r in store.read_rejects("ease").to_pylist() if r["reason"] == "entity_has_no_type"]
    assert json.loads(dropped["row"])["entity_id"] == "Q5"


def test_workers_store_and_work_dir_are_not_part_of_the_versions(setup, tmp_path):
    """workers, store and work_dir entered the versions' config: a rerun with 1 worker instead of 2 published second
    ease and ease-entities versions of byte-identical rows instead of reopening the first ones."""
    config, work, store_url = setup
    shards, reports, _, _ = extract(config, work)
    first = build_corpus(config, shards, reports, work, store_url)
    other = config.model_copy(update={"workers": 1, "store": str(tmp_path / "elsewhere"), "work_dir": str(tmp_path / "w")})
    again = build_corpus(other, shards, reports, work, store_url)
    assert (again["corpus"], again["entities"]) == (first["corpus"], first["entities"])
    changed = build_corpus(config.model_copy(update={"seed": 4}), shards, reports, work, store_url)
    assert changed["corpus"] != first["corpus"]


def _entities(store_url: str, summary: dict) -> tuple[list, list]:
    """``(entity ids, vectors)`` of a build's published ``<name>-entities`` version."""
    name, version = summary["entities"].split("/")
    table = CorpusStore(store_url).read_table(name, version)
    return table.column("entity_id").to_pylist(), table.column("vector").to_pylist()


def test_wikipedia2vec_training_is_seeded_and_never_given_the_workers(setup, tmp_path, monkeypatch):
    """``workers`` (left out of the version ids) was Wikipedia2Vec's pool size, and its vectors were cached in a folder
    named without the seed that now determines them."""
    import interlingua.operators.wiki.wikipedia2vec_vectors as w2v

    config, work, store_url = setup
    calls = []

    def train(dump_url, out_dir, *args, **kwargs):
        calls.append((dump_url, out_dir.removeprefix(work), args, tuple(kwargs.items())))
        raise RuntimeError("recorded")  # tried again without the link graph, then raised (vector_method: wikipedia2vec)

    monkeypatch.setattr(w2v, "train_wikipedia2vec", train)
    shards, reports, _, _ = extract(config, work)
    config = config.model_copy(update={"entity_vectors": None, "vector_method": "wikipedia2vec", "vector_dim": 8,
                                       "vector_epochs": 1})
    for workers, seed in ((1, 3), (2, 3), (2, 4)):
        calls.clear()
        with pytest.raises(RuntimeError, match="recorded"):
            build_corpus(config.model_copy(update={"workers": workers, "seed": seed}), shards, reports, work, store_url)
        assert [call[2:] for call in calls] == [((8, 1, seed), ()), ((8, 1, seed), (("link_graph", False),))]
        assert {call[1] for call in calls} == {
            f"/wikipedia2vec/en-d8-i1-s{seed}-v{w2v.TRAINING_VERSION}-w{w2v.wikipedia2vec_version()}"}


def test_the_installed_wikipedia2vec_version_names_the_vectors_folder_and_the_vector_source(tmp_path, monkeypatch):
    """Its seeding rests on 2.0.0's internals: vectors another version trained were reused from the same folder and
    published under the same ``vector_source``, so the same version id."""
    import importlib.metadata

    import interlingua.operators.wiki.wikipedia2vec_vectors as w2v
    from interlingua.workflows.ease_corpus import _entity_vectors

    real_version = importlib.metadata.version
    config = EaseCorpusConfig(dumps=[WikiDump(lang="en", url=str(tmp_path / "enwiki.xml.bz2"))],
                              vector_method="wikipedia2vec", vector_dim=2, vector_epochs=1, seed=3)
    catalog = type("Catalog", (), {"entity_id": staticmethod(lambda lang, title: f"{lang}:{title}")})()
    redirects = {"en": type("Redirects", (), {"resolve": staticmethod(lambda title: title)})()}
    monkeypatch.setattr(w2v, "wikipedia2vec_available", lambda: True)

    def train(dump_url, out_dir, *args, **kwargs):
        trained.append(out_dir.removeprefix(str(tmp_path)))
        (path := tmp_path / out_dir / w2v.VECTORS_FILE).parent.mkdir(parents=True, exist_ok=True)
        path.write_text("1 2\nENTITY/Paris 0.5 0.25\n")
        return str(path)

    monkeypatch.setattr(w2v, "train_wikipedia2vec", train)
    sources = {}
    for installed in ("2.0.0", "2.1.0"):
        monkeypatch.setattr(importlib.metadata, "version",
                            lambda name, v=installed: v if name == "wikipedia2vec" else real_version(name))
        trained: list[str] = []
        vectors, sources[installed] = _entity_vectors(config, catalog, redirects, str(tmp_path / "work"), [])
        assert list(vectors) == ["en:Paris"]
        assert trained == [f"/work/wikipedia2vec/en-d2-i1-s3-v{w2v.TRAINING_VERSION}-w{installed}"]  # not reused
    assert sources == {v: f"wikipedia2vec {v} (seeded by seed, one process)" for v in ("2.0.0", "2.1.0")}


@pytest.mark.slow  # trains Wikipedia2Vec twice on the hand-written dump (~40 s)
def test_wikipedia2vec_entity_vectors_are_the_same_bytes_on_1_or_2_workers(setup, tmp_path):
    """Wikipedia2Vec ran on ``workers`` processes, unseeded: every build, on 1 or 2 workers (or twice on the same
    number), published other entity vectors under the same version id."""
    pytest.importorskip("wikipedia2vec")
    config, _, _ = setup
    dump = tmp_path / "enwiki-lang.xml.bz2"  # Wikipedia2Vec reads the language from the root's xml:lang
    dump.write_bytes(bz2.compress(bz2.decompress((tmp_path / "enwiki.xml.bz2").read_bytes())
                                  .replace(b"<mediawiki ", b'<mediawiki xml:lang="en" ', 1)))
    config = config.model_copy(update={"dumps": [WikiDump(lang="en", url=str(dump))], "entity_vectors": None,
                                       "vector_method": "wikipedia2vec", "vector_dim": 8, "vector_epochs": 1})
    built = []
    for workers in (1, 2):
        work, store_url = str(tmp_path / f"work{workers}"), str(tmp_path / f"store{workers}")
        shards, reports, _, _ = extract(config, work)
        summary = build_corpus(config.model_copy(update={"workers": workers}), shards, reports, work, store_url)
        manifest = CorpusStore(store_url).manifest("ease-entities")
        assert manifest.config["vector_source"].startswith("wikipedia2vec")
        assert manifest.counters["vectors_missing_random_init"] < manifest.counters["entities"]  # trained ones
        built.append((summary["entities"], _entities(store_url, summary)))
    assert built[0] == built[1]
