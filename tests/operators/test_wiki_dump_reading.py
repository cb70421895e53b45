"""Dump reading: gensim's real dumps, multistream shards, and broken archives."""

import bz2
import importlib.util
from pathlib import Path

import pytest
from interlingua.operators.wiki.dump_pages import PageStreamResult, iter_pages
from interlingua.operators.wiki.dump_shards import iter_shard_bytes, plan_shards
from interlingua.operators.wiki.multistream_writer import write_multistream
from interlingua.operators.wiki.page_extract import ExtractionSettings
from interlingua.operators.wiki.shard_extract import extract_shard

TEST_DATA = Path(importlib.util.find_spec("gensim").origin).parent / "test" / "test_data"  # no gensim import
ENWIKI = str(TEST_DATA / "enwiki-latest-pages-articles1.xml-p000000010p000030302-shortened.bz2")
BGWIKI = str(TEST_DATA / "bgwiki-latest-pages-articles-shortened.xml.bz2")
HEADER = '<mediawiki xmlns="http://www.mediawiki.org/xml/export-0.10/"><siteinfo><case>first-letter</case></siteinfo>\n'


def read(url: str, index_url: str | None = None, shard_bytes: int = 1 << 26):
    pages, results = [], []
    for shard in plan_shards(url, "en", index_url, shard_bytes):
        result = PageStreamResult()
        pages += list(iter_pages(iter_shard_bytes(shard), result))
        results.append(result)
    return pages, results


def page_xml(page_id: int, title: str, text: str) -> str:
    return f"<page><title>{title}</title><ns>0</ns><id>{page_id}</id><revision><text>{text}</text></revision></page>\n"


@pytest.fixture(scope="module")
def enwiki_pages():
    return read(ENWIKI)[0]


def test_enwiki_pages_match_the_raw_xml(enwiki_pages):
    raw = bz2.open(ENWIKI).read().decode("utf-8")
    assert len(enwiki_pages) == raw.count("<page>") == 206
    assert sum(p.redirect is not None for p in enwiki_pages) == raw.count("<redirect ")
    assert [p.title for p in enwiki_pages[:2]] == ["AccessibleComputing", "Anarchism"]
    assert enwiki_pages[0].redirect == "Computer accessibility"
    assert "'''Anarchism''' is a [[political philosophy]]" in enwiki_pages[1].text


@pytest.fixture(scope="module")
def multistream(tmp_path_factory):
    folder = tmp_path_factory.mktemp("multistream")
    dump, index = str(folder / "ms.xml.bz2"), str(folder / "index.txt")
    assert write_multistream(ENWIKI, dump, index, pages_per_stream=25) == 206
    return dump, index


def test_multistream_shards_read_the_same_pages_as_the_plain_dump(multistream, enwiki_pages):
    dump, index = multistream
    shards = plan_shards(dump, "en", index, shard_bytes=300_000)
    assert len(shards) > 2 and shards[0].start > 0 and shards[-1].end is None
    pages, results = read(dump, index, shard_bytes=300_000)
    assert pages == enwiki_pages
    assert all(not r.issues for r in results)


def test_multistream_shard_reads_namespaces_from_the_header_stream(tmp_path, multistream):
    dump, index = multistream
    second = plan_shards(dump, "en", index, shard_bytes=300_000)[1]
    report = extract_shard(second, ExtractionSettings(), str(tmp_path / "work"))
    assert report["counters"]["pages"] > 0 and report["markup_issues"]["removed_drop_link"] > 0


def test_utf16_bulgarian_dump_is_decoded():
    pages, results = read(BGWIKI)
    assert [p.namespace for p in pages].count(0) >= 1
    article = next(p for p in pages if p.namespace == 0 and not p.redirect)
    assert "Григорианският календар" in article.text
    assert results[0].siteinfo is not None and results[0].siteinfo.namespaces[14] == "Категория"


def test_truncated_archive_reports_offset_and_last_page(tmp_path):
    data = Path(ENWIKI).read_bytes()
    cut = tmp_path / "cut.xml.bz2"
    cut.write_bytes(data[: len(data) // 2])
    pages, results = read(str(cut))
    (issue,) = results[0].issues
    assert issue.reason == "truncated_archive" and issue.offset == len(data) // 2
    assert 0 < len(pages) < 206 and issue.last_page_id == pages[-1].page_id


def test_truncated_xml_and_corrupt_bytes_are_reported(tmp_path):
    plain = tmp_path / "plain.xml"
    plain.write_text(HEADER + page_xml(1, "A", "ok") + "<page><title>B</title>", encoding="utf-8")
    pages, results = read(str(plain))
    assert [p.title for p in pages] == ["A"] and results[0].issues[0].reason == "truncated_xml"
    garbage = tmp_path / "garbage.bz2"
    garbage.write_bytes(bz2.compress((HEADER + page_xml(1, "A", "ok") + "</mediawiki>").encode()) + b"BZh9garbage")
    pages, results = read(str(garbage))
    assert [p.title for p in pages] == ["A"] and results[0].issues[0].reason == "truncated_archive"


def test_invalid_utf8_is_replaced_counted_and_the_page_rejected(tmp_path):
    body = (
        HEADER + page_xml(1, "Good", "Fine [[Link]] text here.") + page_xml(2, "Bad", "Broken XXXX [[Link]] text.")
    ).encode()
    body = body.replace(b"XXXX", b"\xff\xfe\xc3") + b"</mediawiki>"
    dump = tmp_path / "bad.xml.bz2"
    dump.write_bytes(bz2.compress(body))
    shard = plan_shards(str(dump), "en")[0]
    report = extract_shard(shard, ExtractionSettings(min_sentence_chars=5), str(tmp_path / "work"))
    assert report["counters"]["invalid_utf8_bytes"] == 3
    assert report["rejected_pages"] == [{"page_id": 2, "title": "Bad", "reason": "invalid_utf8"}]
    assert report["counters"]["linked_sentences"] == 1


def test_plan_shards_validates_options(tmp_path):
    with pytest.raises(ValueError, match="shard_bytes"):
        plan_shards(ENWIKI, "en", None, 0)
    bad_index = tmp_path / "index.txt"
    bad_index.write_text("not-an-offset\n")
    with pytest.raises(ValueError, match="offset:id:title"):
        plan_shards(ENWIKI, "en", str(bad_index))


def test_a_page_of_tens_of_megabytes_is_rejected_and_the_shard_finishes(tmp_path):
    huge = "Big [[Link]] text. " * 1_200_000  # ~23 MB of wikitext
    plain = tmp_path / "huge.xml"
    plain.write_text(
        HEADER + page_xml(1, "Huge", huge) + page_xml(2, "Small", "A small [[Link]] page.") + "</mediawiki>"
    )
    report = extract_shard(
        plan_shards(str(plain), "en")[0], ExtractionSettings(min_sentence_chars=5), str(tmp_path / "w")
    )
    assert report["rejected_pages"] == [{"page_id": 1, "title": "Huge", "reason": "page_too_large"}]
    assert report["counters"]["linked_sentences"] == 1 and not report["dump_issues"]


def test_root_close_split_across_chunks_in_a_multistream_shard():
    body = (page_xml(1, "A", "x &lt;/mediawiki&gt;") * 3 + "</mediawiki>\n").encode()
    for cut in range(1, len(body), 5):
        result = PageStreamResult()
        pages = list(iter_pages(iter([body[:cut], body[cut:]]), result))
        assert [p.text for p in pages] == ["x </mediawiki>"] * 3 and not result.issues, cut
