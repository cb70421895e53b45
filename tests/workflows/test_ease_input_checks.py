"""ease-corpus refuses inputs that would publish an empty or wrong corpus, in one line: before Ray what the files'
first bytes show, after the extraction a dump without pages and a build without pairs (nothing is published)."""

from __future__ import annotations

import bz2
import gzip
import json
import lzma

import numpy as np
import pytest

from interlingua.core.errors import UserError
from interlingua.operators.corpus.store import CorpusStore
from interlingua.workflows import ease_corpus
from interlingua.workflows.ease_corpus import EaseCorpusConfig, WikiDump

PAGE = ("<page><title>{title}</title><ns>0</ns><id>{id}</id><revision><id>{id}0</id><text>{title} is a city in "
        "[[{country}]], a country of many old towns and long rivers.</text></revision></page>")
CITIES = [("Paris", "France"), ("Lyon", "France"), ("Madrid", "Spain"), ("Seville", "Spain")]


def _xml(dbname: str | None = "enwiki", cities=CITIES) -> bytes:
    site = f"<dbname>{dbname}</dbname>" if dbname else ""
    pages = "".join(PAGE.format(title=t, id=i, country=c) for i, (t, c) in enumerate(cities, start=1))
    return f'<mediawiki xml:lang="en"><siteinfo><sitename>W</sitename>{site}</siteinfo>{pages}</mediawiki>'.encode()


def _config(tmp_path, dump, **changes) -> EaseCorpusConfig:
    fields = {"dumps": [WikiDump(lang="en", url=str(dump))], "min_entity_links": 0, "min_sentence_chars": 5,
              "vector_method": "skipgram", "vector_dim": 4, "vector_epochs": 1, "store": str(tmp_path / "store"),
              "work_dir": str(tmp_path / "work")}
    return EaseCorpusConfig(**(fields | changes))


@pytest.fixture
def no_ray(monkeypatch, tmp_path):
    from interlingua.core import runtime

    monkeypatch.setenv("INTERLINGUA_HOME", str(tmp_path / "home"))
    monkeypatch.setattr(runtime, "init_ray", lambda *a, **k: pytest.fail("Ray started"))


@pytest.fixture
def extract_here(monkeypatch, tmp_path):
    """The extraction runs here, not on Ray actors."""
    import ray.data

    from interlingua.core import runtime
    from interlingua.operators import runner

    def extract_in_process(rows, op_cls, op_kwargs, **_):
        out = op_cls(**op_kwargs)({key: np.array([row[key] for row in rows], dtype=object) for key in rows[0]})

        class Extracted:
            def take_all(self):
                return [{"shard_id": s, "report": r} for s, r in zip(out["shard_id"], out["report"], strict=True)]

        return Extracted()

    monkeypatch.setenv("INTERLINGUA_HOME", str(tmp_path / "home"))
    monkeypatch.setattr(ray.data, "from_items", lambda items, **_: items)
    monkeypatch.setattr(runtime, "init_ray", lambda *a, **k: None)
    monkeypatch.setattr(runner, "run_operator", extract_in_process)


WIKIDATA_LINE = json.dumps({"id": "Q90", "sitelinks": {"enwiki": {"title": "Paris"}}})


@pytest.mark.parametrize("name, data, message", [
    ("enwiki-zstd.xml", b"\x28\xb5\x2f\xfd" + bytes(20), "is zstd-compressed; the dump reader takes bz2"),
    ("enwiki.xml.7z", b"7z\xbc\xaf\x27\x1c" + bytes(20), "is 7z-compressed; the dump reader takes bz2"),
    ("enwiki.json", f"[\n{WIKIDATA_LINE},\n]\n".encode(), r"is not MediaWiki export XML: it starts with '\[.*a Wikidata "
                                                          r"JSON dump\? it goes in wikidata_json"),
    ("wd.json.bz2", bz2.compress(f"[\n{WIKIDATA_LINE}\n]\n".encode()), "is not MediaWiki export XML.*wikidata_json"),
    ("props.sql.gz", gzip.compress(b"-- MySQL dump\nINSERT INTO page_props VALUES (1,'x','y',NULL);\n"),
     "is not MediaWiki export XML: .*an SQL dump"),
    ("error.html", b"<!DOCTYPE html><html><body>404</body></html>", r"is not MediaWiki export XML: no <mediawiki> or <page> element"),
    ("enwiki.xml.bz2", gzip.compress(_xml()), "is named bz2-compressed but holds gzip data"),
    ("enwiki.xml.bz2", _xml(), "is named bz2-compressed but holds uncompressed data"),
    ("enwiki.xml.gz", gzip.compress(b"  \n"), "holds no text once decompressed"),
], ids=["zstd", "7z", "wikidata-json", "wikidata-json-bz2", "sql", "html", "gzip-named-bz2", "xml-named-bz2", "blank"])
def test_a_file_that_is_no_readable_dump_is_refused_before_ray(tmp_path, no_ray, name, data, message):
    (tmp_path / name).write_bytes(data)
    with pytest.raises(UserError, match=f"^dump .*{name.replace('.', '[.]')} {message}") as caught:
        ease_corpus.run(_config(tmp_path, tmp_path / name))
    assert "\n" not in str(caught.value) and not list(tmp_path.rglob("manifest.json"))


def test_a_multistream_index_needs_a_bz2_dump(tmp_path, no_ray):
    (tmp_path / "enwiki.xml.gz").write_bytes(gzip.compress(_xml()))
    (tmp_path / "index.txt").write_text("10:1:Paris\n")
    config = _config(tmp_path, tmp_path / "enwiki.xml.gz")
    config = config.model_copy(update={"dumps": [WikiDump(lang="en", url=str(tmp_path / "enwiki.xml.gz"),
                                                          index_url=str(tmp_path / "index.txt"))]})
    with pytest.raises(UserError, match="is gzip, but index_url makes it a multistream dump, which is bz2"):
        ease_corpus.run(config)


@pytest.mark.parametrize("name, compress", [("enwiki.xml.gz", gzip.compress), ("enwiki.xml.xz", lzma.compress),
                                            ("enwiki.xml", lambda data: data)], ids=["gzip", "xz", "plain"])
def test_gzip_xz_and_plain_dumps_build_the_corpus_of_the_bz2_one(tmp_path, extract_here, name, compress):
    """The audit's .gz dump published an empty version with exit 0; read by its magic bytes, it gives the rows of
    the same dump as .bz2."""
    (tmp_path / "enwiki.xml.bz2").write_bytes(bz2.compress(_xml()))
    (tmp_path / name).write_bytes(compress(_xml()))
    store = CorpusStore(str(tmp_path / "store"))
    rows = {}
    for dump in ("enwiki.xml.bz2", name):
        summary = ease_corpus.run(_config(tmp_path, tmp_path / dump, work_dir=str(tmp_path / f"work-{dump}")))
        rows[dump] = store.read_table("ease", summary["corpus"].split("/")[1]).to_pylist()
    assert len(rows[name]) == 4 and rows[name] == rows["enwiki.xml.bz2"]
    assert {(r["entity_id"], tuple(r["hard_negative_ids"])) for r in rows[name]} == {("France", ("Spain",)),
                                                                                        ("Spain", ("France",))}


def test_a_dump_without_pages_fails_naming_it(tmp_path, extract_here):
    dump = tmp_path / "enwiki.xml.bz2"
    dump.write_bytes(bz2.compress(_xml(cities=[])))
    with pytest.raises(UserError, match=r"^dump .*enwiki\.xml\.bz2 \(lang en\) yields no <page>: nothing to build"):
        ease_corpus.run(_config(tmp_path, dump))
    assert not list((tmp_path / "store").rglob("manifest.json"))


@pytest.mark.parametrize("cities, changes, message", [
    ([("Paris", "France")], {"min_sentence_chars": 500}, "their 1 articles hold no sentence with an article link"),
    (CITIES, {"min_entity_links": 2}, r"no entity is linked more than min_entity_links=2 times \(the most linked "
                                      r"one: 2\) \(hint: lower min_entity_links"),
    ([("Paris", "France"), ("Lyon", "France")], {}, r"no pair of the 1 kept entities got a hard negative \(dropped: "
                                                    r"no_negative_candidate 2\)"),
], ids=["no-linked-sentence", "no-entity-kept", "no-negative"])
def test_a_build_that_keeps_no_pair_fails_naming_where_they_ran_out(tmp_path, extract_here, cities, changes, message):
    dump = tmp_path / "enwiki.xml.bz2"
    dump.write_bytes(bz2.compress(_xml(cities=cities)))
    config = _config(tmp_path, dump, **({"max_sentence_chars": 2000} | changes))
    with pytest.raises(UserError, match=f"^ease-corpus: no pair to publish: {message}"):
        ease_corpus.run(config)
    assert not list((tmp_path / "store").rglob("manifest.json"))


@pytest.mark.parametrize("lang, hint", [("eng", "did you mean 'en'?"), ("deu", "did you mean 'de'?"),
                                        ("english", "did you mean 'en'?"), ("xx", "the code is the wiki's subdomain")])
def test_lang_must_be_a_wikipedia_language_code(lang, hint):
    from interlingua.core.config import validate

    with pytest.raises(UserError, match=rf"dumps\.0\.lang = '{lang}': '{lang}' is not a Wikipedia language code "
                                        rf"\(.*{hint}"):
        validate(EaseCorpusConfig, {"dumps": [{"lang": lang, "url": "enwiki.xml.bz2"}]}, source="test")
    for known in ("en", "zh-min-nan", "be-tarask", "simple"):
        assert validate(EaseCorpusConfig, {"dumps": [{"lang": known, "url": "x"}]}, source="test").dumps[0].lang == known


@pytest.mark.parametrize("dbname, lang, message", [
    ("enwiki", "de", r"is a dump of enwiki \(its <siteinfo> <dbname>\), but its lang 'de' names dewiki \(hint: lang: "
                     r"en\)"),
    ("zh_min_nanwiki", "nan", r"is a dump of zh_min_nanwiki .* names nanwiki \(hint: lang: zh-min-nan\)"),
    ("enwiktionary", "en", r"is a dump of enwiktionary .* names enwiki \(hint: give the pages-articles dump of a "
                           r"Wikipedia\)"),
])
def test_a_dump_of_another_wiki_than_its_lang_is_refused_before_ray(tmp_path, no_ray, dbname, lang, message):
    dump = tmp_path / "dump.xml.bz2"
    dump.write_bytes(bz2.compress(_xml(dbname)))
    config = _config(tmp_path, dump, dumps=[WikiDump(lang=lang, url=str(dump))])
    with pytest.raises(UserError, match=f"^dump .*dump.xml.bz2 {message}$"):
        ease_corpus.run(config)


@pytest.mark.parametrize("dbname, lang", [("enwiki", "en"), (None, "de"), ("be_x_oldwiki", "be-tarask"),
                                          ("be_x_oldwiki", "be-x-old"), ("zh_yuewiki", "zh-yue")])
def test_a_dump_of_its_langs_wiki_or_without_dbname_is_taken(tmp_path, dbname, lang):
    from interlingua.operators.wiki.dump_check import check_dump

    dump = tmp_path / "dump.xml.bz2"
    dump.write_bytes(bz2.compress(_xml(dbname)))
    assert check_dump(str(dump), lang).dbname == dbname


def _wikidata(path, site: str = "enwiki", count: int = 4) -> str:
    lines = [json.dumps({"id": f"Q{i}", "sitelinks": {site: {"title": title}}})
             for i, title in enumerate(["France", "Spain", "Paris", "Madrid"][:count], start=1)]
    path.write_text("[\n" + ",\n".join(lines) + "\n]\n")
    return str(path)


def test_a_wikidata_json_that_is_no_wikidata_or_misses_a_language_is_refused_before_ray(tmp_path, no_ray):
    dump = tmp_path / "enwiki.xml.bz2"
    dump.write_bytes(bz2.compress(_xml()))
    with pytest.raises(UserError, match=r"^wikidata_json .*enwiki\.xml\.bz2 holds no Wikidata entity: 1 lines "
                                        r"rejected, the first line 1 \(invalid_json: '<mediawiki"):
        ease_corpus.run(_config(tmp_path, dump, wikidata_json=str(dump)))
    german = _wikidata(tmp_path / "wd.json", site="dewiki")
    with pytest.raises(UserError, match=r"^wikidata_json .*wd\.json: none of its 4 entities has a sitelink to enwiki "
                                        r"\(hint"):
        ease_corpus.run(_config(tmp_path, dump, wikidata_json=german))


def test_a_large_wikidata_json_is_checked_by_its_head_before_ray_and_whole_after(tmp_path, monkeypatch, extract_here):
    from interlingua.operators.wiki import wikidata

    monkeypatch.setattr(wikidata, "HEAD_BYTES", 64)  # the files below are "large": only their head is read first
    dump = tmp_path / "enwiki.xml.bz2"
    dump.write_bytes(bz2.compress(_xml()))
    xml = tmp_path / "dump.json"
    xml.write_text("<mediawiki>\n" * 10)
    with pytest.raises(UserError, match=r"^wikidata_json .*dump\.json is not Wikidata JSON: none of its first 5 lines "
                                        r"is an entity: 5 lines rejected"):
        ease_corpus.run(_config(tmp_path, dump, wikidata_json=str(xml)))
    assert not (tmp_path / "work").exists()  # before the extraction
    german = _wikidata(tmp_path / "wd.json", site="dewiki")
    with pytest.raises(UserError, match=r"^wikidata_json .*wd\.json: none of its 4 entities has a sitelink to enwiki"):
        ease_corpus.run(_config(tmp_path, dump, wikidata_json=german))
    assert (tmp_path / "work").exists() and not list(tmp_path.rglob("manifest.json"))
    summary = ease_corpus.run(_config(tmp_path, dump, wikidata_json=_wikidata(tmp_path / "wd.json")))
    assert summary["entity_id_source"] == "wikidata_json" and summary["funnel"]["pairs_kept_after_caps"] == 4


def _cut(path, data: bytes, keep: float = 0.6) -> str:
    path.write_bytes(data[: int(len(data) * keep)])
    return str(path)


def test_a_cut_wikidata_json_fails_with_file_and_offset_before_ray_not_an_eoferror(tmp_path, no_ray):
    """The audit's truncated Wikidata JSON stopped the run with a bare EOFError after the whole extraction; a file
    this small is read whole before Ray."""
    from interlingua.core.archives import TruncatedInputError

    dump = tmp_path / "enwiki.xml.bz2"
    dump.write_bytes(bz2.compress(_xml()))
    (tmp_path / "full.json").write_text("")
    cut = _cut(tmp_path / "wd.json.gz", gzip.compress(open(_wikidata(tmp_path / "full.json"), "rb").read()))
    with pytest.raises(TruncatedInputError, match=r"^input .*wd\.json\.gz is truncated or corrupt at byte \d+: "
                                                  r"EOFError: .*allow_truncated_inputs") as caught:
        ease_corpus.run(_config(tmp_path, dump, wikidata_json=cut))
    assert caught.value.url == cut and 0 < caught.value.offset <= (tmp_path / "wd.json.gz").stat().st_size


@pytest.mark.parametrize("source", ["wikidata_json", "page_props_url"])
def test_a_cut_entity_source_read_after_the_extraction_fails_or_is_published_partial(tmp_path, monkeypatch,
                                                                                      extract_here, source):
    """A large Wikidata JSON (only its head is read before Ray) or a page_props dump cut short: the project's
    truncated-input error naming file and offset; with allow_truncated_inputs what was read is used and the corpus
    version lists the file in its partial inputs."""
    from interlingua.core.archives import TruncatedInputError
    from interlingua.operators.wiki import wikidata

    monkeypatch.setattr(wikidata, "HEAD_BYTES", 64)
    dump = tmp_path / "enwiki.xml.bz2"  # the countries are pages too: page_props map their page ids
    dump.write_bytes(bz2.compress(_xml(cities=CITIES + [("France", "Spain"), ("Spain", "France")])))
    if source == "wikidata_json":  # the four entities, then lines enough that the cut falls among them
        entities = [{"id": f"Q{i}", "sitelinks": {"enwiki": {"title": title}}}
                    for i, title in enumerate(["France", "Spain", "Paris", "Madrid"], start=1)]
        entities += [{"id": f"Q{i}", "sitelinks": {"dewiki": {"title": f"T{i}"}}} for i in range(100, 9000)]
        text = "[\n" + ",\n".join(json.dumps(e) for e in entities) + "\n]\n"
        inputs = {"wikidata_json": _cut(tmp_path / "wd.json.gz", gzip.compress(text.encode()))}
    else:
        rows = [f"INSERT INTO `page_props` VALUES ({i},'wikibase_item','Q{i}',NULL);\n" for i in range(1, 9000)]
        props = _cut(tmp_path / "props.sql.gz", gzip.compress("".join(rows).encode()))
        inputs = {"dumps": [WikiDump(lang="en", url=str(dump), page_props_url=props)]}
    cut = inputs.get("wikidata_json") or inputs["dumps"][0].page_props_url
    with pytest.raises(TruncatedInputError, match=r"^input .* is truncated or corrupt at byte \d+: EOFError") as caught:
        ease_corpus.run(_config(tmp_path, dump, **inputs))
    assert caught.value.url == cut and (tmp_path / "work").exists() and not list(tmp_path.rglob("manifest.json"))
    summary = ease_corpus.run(_config(tmp_path, dump, allow_truncated_inputs=True, **inputs))
    manifest = CorpusStore(str(tmp_path / "store")).manifest("ease")
    entities = CorpusStore(str(tmp_path / "store")).manifest("ease-entities")
    for version in (manifest, entities):
        assert version.partial and [(p.input, p.offset) for p in version.partial_inputs] == [(cut, caught.value.offset)]
    assert summary["entity_id_source"] == {"wikidata_json": "wikidata_json", "page_props_url": "page_props"}[source]
    assert summary["funnel"]["pairs_kept_after_caps"] == 4
