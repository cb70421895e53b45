"""Title → entity mapping (Wikidata JSON, page_props SQL, titles fallback) and entity vectors."""

import gzip
import json
from pathlib import Path

import numpy as np
import pytest
from interlingua.operators.wiki.entity_vectors import (
    entity_context_sequences,
    load_entity_vectors,
    train_entity_vectors,
    vectors_for,
)
from interlingua.operators.wiki.wikidata import (
    add_page_props,
    load_wikidata_json,
    read_page_props_qids,
    title_catalog,
    wikidata_site_id,
)

FIXTURE = Path(__file__).parent / "fixtures" / "wiki" / "wikidata_sample.json"


def test_wikidata_json_sitelinks_and_p31_types(tmp_path):
    catalog = load_wikidata_json(str(FIXTURE), ["en", "bg"])
    assert catalog.id_source == "wikidata_json"
    assert catalog.entity_id("en", "Portugal") == catalog.entity_id("bg", "Португалия") == "Q45"
    assert catalog.types["Q45"] == ("Q6256",) and catalog.types["Q868"] == ("Q5",)
    assert catalog.entity_id("en", "Nowhere") is None and catalog.lines_rejected == 0
    compressed = tmp_path / "dump.json.gz"
    compressed.write_bytes(gzip.compress(FIXTURE.read_bytes().replace(b'"Q45"', b'"Q45"', 1) + b"{broken\n"))
    again = load_wikidata_json(str(compressed), ["bg"])
    assert again.titles["bg"]["Земя"] == "Q2" and again.lines_rejected == 1


def test_languages_with_a_hyphen_find_their_wikidata_site_ids(tmp_path):
    # site ids as Wikidata writes them (database names): hyphens become underscores, be-tarask kept be-x-old's
    lines = [
        {"id": "Q1", "sitelinks": {"zh_yuewiki": {"title": "香港"}, "zh-yuewiki": {"title": "wrong key"}}},
        {"id": "Q2", "sitelinks": {"zh_min_nanwiki": {"title": "Tâi-pak"}, "roa_rupwiki": {"title": "Bucureshti"}}},
        {"id": "Q3", "sitelinks": {"be_x_oldwiki": {"title": "Менск"}, "be_taraskwiki": {"title": "wrong key"}}},
        {"id": "Q4", "sitelinks": {"enwiki": {"title": "Oslo"}}},
    ]
    path = tmp_path / "dump.json"
    path.write_text("[\n" + "".join(json.dumps(line, ensure_ascii=False) + ",\n" for line in lines) + "]\n", encoding="utf-8")
    catalog = load_wikidata_json(str(path), ["zh-yue", "zh-min-nan", "roa-rup", "be-tarask", "en"])
    assert catalog.titles == {"zh-yue": {"香港": "Q1"}, "zh-min-nan": {"Tâi-pak": "Q2"}, "roa-rup": {"Bucureshti": "Q2"},
                              "be-tarask": {"Менск": "Q3"}, "en": {"Oslo": "Q4"}}
    assert catalog.entity_id("zh-yue", "香港") == "Q1" and catalog.lines_rejected == 0
    assert [wikidata_site_id(lang) for lang in ("en", "zh-classical", "be-x-old", "nds-nl")] == [
        "enwiki", "zh_classicalwiki", "be_x_oldwiki", "nds_nlwiki"]


def test_page_props_sql_and_titles_fallback(tmp_path):
    sql = tmp_path / "page_props.sql"
    sql.write_text(
        "-- MySQL dump\nINSERT INTO `page_props` VALUES (12,'wikibase_item','Q6199',NULL),"
        "(12,'page_image_free','A.jpg',NULL),(25,'wikibase_item','Q38404',NULL),(30,'defaultsort','O\\'Neil',NULL);\n"
    )
    qids = read_page_props_qids(str(sql))
    assert qids == {12: "Q6199", 25: "Q38404"}
    catalog = title_catalog()
    assert catalog.entity_id("en", "Anarchism") == "Anarchism" and catalog.entity_id("bg", "Земя") == "bgwiki:Земя"
    props = load_wikidata_json(str(FIXTURE), [])
    add_page_props(props, "en", {12: "Anarchism", 99: "Other"}, qids)
    assert props.entity_id("en", "Anarchism") == "Q6199" and props.entity_id("en", "Other") is None


def test_word2vec_text_and_npy_vectors(tmp_path):
    text = tmp_path / "vectors.txt"
    text.write_text("2 3\nENTITY/Q1 1 2 3\nQ2 0.5 0 -1\n")
    loaded = load_entity_vectors(str(text))
    assert set(loaded) == {"Q1", "Q2"} and np.allclose(loaded["Q2"], [0.5, 0, -1])
    np.save(tmp_path / "m.npy", np.eye(2, dtype=np.float32))
    (tmp_path / "m.ids.txt").write_text("Q1\nQ2\n")
    assert np.allclose(load_entity_vectors(str(tmp_path / "m.npy"))["Q2"], [0, 1])
    (tmp_path / "bad.txt").write_text("Q1 1 2\n")
    with pytest.raises(ValueError, match="word2vec"):
        load_entity_vectors(str(tmp_path / "bad.txt"))
    matrix, missing = vectors_for(["Q1", "Q9"], loaded, 3, seed=0)
    assert missing == 1 and np.allclose(matrix[0], [1, 2, 3]) and np.linalg.norm(matrix[1]) > 0


@pytest.mark.slow  # imports gensim (~4 s CPU)
def test_skipgram_entity_vectors_from_link_contexts():
    rows = [("Paris is in France.", [0, 12], [5, 18], ["Q90", "Q142"]), ("Lyon is in France.", [0], [4], [None])] * 30
    sequences = entity_context_sequences(rows)
    assert sequences[0] == ["ENTITY/Q90", "is", "in", "ENTITY/Q142"]
    assert sequences[1] == ["lyon", "is", "in", "france"]
    vectors = train_entity_vectors(sequences, dim=8, epochs=2, seed=1)
    assert set(vectors) == {"Q90", "Q142"} and vectors["Q90"].shape == (8,)


@pytest.mark.slow  # trains Wikipedia2Vec on gensim's Bulgarian dump (~15 s)
def test_wikipedia2vec_vectors_keyed_by_entity_id(tmp_path):
    pytest.importorskip("wikipedia2vec")
    import importlib.util

    from interlingua.operators.wiki.wikipedia2vec_vectors import train_wikipedia2vec, wikipedia2vec_entity_vectors

    gensim_data = Path(importlib.util.find_spec("gensim").origin).parent / "test" / "test_data"
    dump = str(gensim_data / "bgwiki-latest-pages-articles-shortened.xml.bz2")  # UTF-16: transcoded for it
    model = train_wikipedia2vec(dump, str(tmp_path), 8, link_graph=False)
    catalog = load_wikidata_json(str(FIXTURE), ["bg"])
    vectors = wikipedia2vec_entity_vectors(model, lambda title: catalog.entity_id("bg", title))
    assert vectors and set(vectors) <= set(catalog.titles["bg"].values())
    assert all(v.shape == (8,) for v in vectors.values())


def test_malformed_wikidata_lines_are_counted_and_never_stop_the_load(tmp_path):
    good = {
        "id": "Q1",
        "sitelinks": {"enwiki": {"title": "Good"}, "frwiki": {"title": "Bon"}},
        "claims": {
            "P31": [
                {"mainsnak": {"datavalue": {"value": {"id": "Q5"}}}, "rank": "normal"},
                {"mainsnak": {"datavalue": {"value": {"id": "Q5"}}}, "rank": "preferred"},
                {"mainsnak": {"datavalue": {"value": {"id": "Q999"}}}, "rank": "deprecated"},
                {"mainsnak": {"snaktype": "somevalue"}},
                "not a claim",
            ]
        },
    }
    lines = [
        b"[",
        json.dumps(good).encode() + b",",
        json.dumps({"id": "Q2", "sitelinks": {"enwiki": {"title": "No claims"}}, "claims": []}).encode() + b",",
        json.dumps({"id": "Q3", "sitelinks": ["enwiki"]}).encode() + b",",  # wrong shape
        json.dumps({"id": 4, "sitelinks": {}}).encode() + b",",  # id not a string
        json.dumps([1, 2]).encode() + b",",
        b'{"id": "Q6", "sitelinks": {"enwiki": {"title": "Bad \xff bytes"}}},',  # invalid UTF-8
        json.dumps({"id": "Q7", "sitelinks": {"enwiki": {"title": 7}}, "claims": {"P31": "x"}}).encode() + b",",
        b"{truncated",
        b"]",
    ]
    path = tmp_path / "wd.json"
    path.write_bytes(b"\n".join(lines) + b"\n")
    catalog = load_wikidata_json(str(path), ["en"])
    assert catalog.titles["en"] == {"Good": "Q1", "No claims": "Q2"}
    assert catalog.types == {"Q1": ("Q5",)} and catalog.lines_rejected == 5
    assert catalog.rejected_reasons == {"not_an_entity": 3, "invalid_utf8": 1, "invalid_json": 1}
    assert [(r["line"], r["reason"]) for r in catalog.rejects] == [
        (4, "not_an_entity"), (5, "not_an_entity"), (6, "not_an_entity"), (7, "invalid_utf8"), (9, "invalid_json")]
    assert catalog.rejects[3]["text"] == '{"id": "Q6", "sitelinks": {"enwiki": {"title": "Bad \ufffd bytes"}}}'
    assert catalog.rejects[4]["text"] == "{truncated" and catalog.entities_read == 3 and catalog.complete


def test_no_entity_or_no_sitelink_to_a_configured_language_is_refused(tmp_path):
    from interlingua.core.errors import UserError
    from interlingua.operators.wiki.wikidata import require_sitelinks

    path = tmp_path / "wd.json"
    path.write_text("[\n" + json.dumps({"id": "Q1", "sitelinks": {"enwiki": {"title": "A"}}}) + "\n]\n")
    require_sitelinks(load_wikidata_json(str(path), ["en"]), str(path), ["en"])
    with pytest.raises(UserError, match=r"wd\.json: none of its 1 entities has a sitelink to bgwiki, zh_yuewiki"):
        require_sitelinks(load_wikidata_json(str(path), ["en", "bg", "zh-yue"]), str(path), ["en", "bg", "zh-yue"])
    path.write_text("<mediawiki>\n<page>\n")
    with pytest.raises(UserError, match=r"wd\.json holds no Wikidata entity: 2 lines rejected, the first line 1 "
                                        r"\(invalid_json: '<mediawiki>'\)"):
        require_sitelinks(load_wikidata_json(str(path), ["en"]), str(path), ["en"])


@pytest.mark.parametrize("suffix", [".gz", ".bz2"])
def test_a_cut_wikidata_json_or_page_props_raises_with_file_and_offset_or_keeps_what_was_read(tmp_path, suffix):
    import bz2

    from interlingua.core.archives import TruncatedInputError

    compress = {".gz": gzip.compress, ".bz2": lambda data: bz2.compress(data, 1)}[suffix]
    entities = "[\n" + ",\n".join(json.dumps({"id": f"Q{i}", "sitelinks": {"enwiki": {"title": f"T{i} " + "x" * 40}}})
                                  for i in range(1, 6000)) + "\n]\n"
    sql = "".join(f"INSERT INTO `page_props` VALUES ({i},'wikibase_item','Q{i}',NULL);\n" for i in range(1, 6000))
    for name, text, load in [("wd.json", entities, lambda url, partial=None: load_wikidata_json(url, ["en"],
                                                                                               partial=partial)),
                             ("props.sql", sql, read_page_props_qids)]:
        blob = compress(text.encode())
        path = tmp_path / f"{name}{suffix}"
        path.write_bytes(blob[: len(blob) * 3 // 4])
        with pytest.raises(TruncatedInputError, match=rf"input .*{name}{suffix} is truncated or corrupt at byte \d+: "
                                                      r"EOFError.*allow_truncated_inputs") as caught:
            load(str(path))
        assert caught.value.url == str(path) and 0 < caught.value.offset <= len(blob) * 3 // 4
        partial: list[dict] = []
        loaded = load(str(path), partial)
        read = len(loaded.titles["en"]) if name == "wd.json" else len(loaded)
        assert 0 < read < 5999 and caught.value.lines >= read  # lines before the damage kept
        (record,) = partial
        assert record["input_url"] == str(path) and record["offset"] == caught.value.offset
        assert "EOFError" in record["reason"]


@pytest.mark.parametrize("name, pack", [("enwiki.xml", "gzip"), ("enwiki.xml", "bz2"), ("enwiki.dump", "xz"),
                                        ("enwiki.xml.bz2", "bz2")])
def test_wikipedia2vec_gets_a_bz2_copy_of_a_dump_read_by_its_magic_bytes(tmp_path, name, pack):
    """The extraction reads a dump by its magic bytes, but the Wikipedia2Vec path opened it by its name: a gzip or bz2
    dump without the suffix was read as text (UnicodeDecodeError after the whole extraction)."""
    import bz2
    import gzip
    import lzma

    from interlingua.operators.wiki.wikipedia2vec_vectors import _local_path

    text = "<mediawiki><page><title>Été</title><ns>0</ns><revision><text>x</text></revision></page></mediawiki>\n"
    dump = tmp_path / name
    dump.write_bytes({"gzip": gzip.compress, "bz2": bz2.compress, "xz": lzma.compress}[pack](text.encode("utf-8")))
    (tmp_path / "scratch").mkdir()
    local = _local_path(str(dump), tmp_path / "scratch")
    assert local.name.endswith(".bz2") and bz2.decompress(local.read_bytes()).decode("utf-8") == text
    assert (local == dump) == (name.endswith(".bz2") and pack == "bz2")  # a bz2 named so is used in place
