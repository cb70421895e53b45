"""Dump reading: gensim's real dumps, multistream shards, and broken archives."""

import bz2
import time
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


def read_text(body: str, pieces: int = 1):
    """Pages and the stream result of XML text fed in ``pieces`` chunks."""
    data = body.encode("utf-8")
    step = max(1, len(data) // pieces)
    result = PageStreamResult()
    pages = list(iter_pages(iter([data[i : i + step] for i in range(0, len(data), step)]), result))
    return pages, result


@pytest.mark.parametrize("pieces", [1, 7, 300])
def test_a_malformed_page_costs_only_itself(pieces):
    body = (
        HEADER
        + page_xml(1, "A", "ok")
        + page_xml(2, "Bad", "a <b> unclosed element")
        + "<page><title>NoClose</title><ns>0</ns><id>3</id><revision><text>lost</text></revision>\n"
        + page_xml(4, "B", "fine")
        + "<page><title>NoId</title><revision><text>x</text></revision></page>\n"
        + page_xml(5, "C", "ctrl\x01char &amp; entity")
        + "</mediawiki>"
    )
    pages, result = read_text(body, pieces)
    assert [(p.page_id, p.title, p.text) for p in pages] == [
        (1, "A", "ok"),
        (4, "B", "fine"),
        (5, "C", "ctrl char & entity"),
    ]
    reasons = [issue.reason for issue in result.issues]
    assert reasons == ["malformed_page"] * 3 and result.malformed_pages == 3
    bad = next(i for i in result.issues if "not well-formed" in i.detail)
    assert "'Bad'" in bad.detail and bad.last_page_id == 1
    assert any("NoClose" in i.detail for i in result.issues)
    assert result.invalid_xml_chars == 1 and result.siteinfo is not None


def test_a_document_without_its_closing_root_is_reported_as_truncated():
    pages, result = read_text(HEADER + page_xml(1, "A", "ok"))
    assert [p.title for p in pages] == ["A"]
    ((issue,),) = [result.issues]
    assert issue.reason == "truncated_xml" and "</mediawiki>" in issue.detail and issue.last_page_title == "A"


def test_the_latest_revision_is_read():
    body = (
        HEADER + "<page><title>A</title><ns>0</ns><id>1</id><revision><text>old</text></revision>"
        "<revision><text>new</text></revision></page></mediawiki>"
    )
    assert [p.text for p in read_text(body)[0]] == ["new"]


def test_truncated_bz2_in_the_middle_of_a_page_reports_offset_and_the_job_goes_on(tmp_path):
    body = (HEADER + "".join(page_xml(i, f"P{i}", f"Page [[L{i}]] text {i}. " * 50) for i in range(1, 600))).encode()
    data = bz2.compress(body + b"</mediawiki>", compresslevel=1)  # 100 kB blocks: the first ones decode
    cut = tmp_path / "cut.xml.bz2"
    cut.write_bytes(data[: len(data) * 2 // 3])
    shard = plan_shards(str(cut), "en")[0]
    report = extract_shard(shard, ExtractionSettings(min_sentence_chars=5), str(tmp_path / "w"))
    (issue,) = report["dump_issues"]
    assert issue["reason"] == "truncated_archive" and issue["offset"] == len(data) * 2 // 3
    assert issue["last_page_title"] == f"P{report['counters']['pages']}"
    assert 0 < report["counters"]["linked_sentences"]


@pytest.mark.slow  # builds and extracts a 30 MB page (~15-30 s on a loaded 2-core machine)
def test_a_30_mb_page_is_rejected_by_default_and_extracted_in_linear_time_when_allowed(tmp_path):
    huge = "Paris is the capital of [[France]]. It lies on the {{cite|x}} [[Seine]] river.&lt;ref&gt;r&lt;/ref&gt; "
    huge *= 380_000
    assert len(huge) > 30_000_000
    plain = tmp_path / "huge.xml"
    plain.write_text(
        HEADER + page_xml(1, "Huge", huge) + page_xml(2, "Small", "A small [[Link]] page.") + "</mediawiki>"
    )
    shard = plan_shards(str(plain), "en")[0]
    report = extract_shard(shard, ExtractionSettings(min_sentence_chars=5), str(tmp_path / "default"))
    assert report["rejected_pages"] == [{"page_id": 1, "title": "Huge", "reason": "page_too_large"}]
    assert report["counters"]["linked_sentences"] == 1 and not report["dump_issues"]
    started = time.perf_counter()
    allowed = ExtractionSettings(min_sentence_chars=5, max_page_chars=40_000_000)
    report = extract_shard(shard, allowed, str(tmp_path / "allowed"))
    assert time.perf_counter() - started < 300
    assert report["counters"]["linked_sentences"] == 2 * 380_000 + 1 and not report["rejected_pages"]


def test_input_that_is_not_a_dump_is_reported():
    pages, result = read_text("just some text, no pages")
    assert pages == [] and [i.reason for i in result.issues] == ["no_pages"]


def test_corrupt_bz2_mid_dump_breaks_near_the_damage_and_keeps_the_pages_before(tmp_path):
    """The decompressor is fed 64 KiB slices, not the 1 MiB reads: the break is reported within a slice (and a bz2
    block) of the damage, not at the read's start 600 kB before it, and the pages decoded before it are kept."""
    import random
    import string

    from interlingua.operators.wiki.dump_shards import FEED_BYTES, StreamBreak

    rng = random.Random(5)
    text = (HEADER + "".join(page_xml(i, f"P{i}", "".join(rng.choices(string.ascii_letters + "     ", k=400)))
                             for i in range(1, 7000)) + "</mediawiki>").encode()
    data = bytearray(bz2.compress(text, compresslevel=1))  # 100 kB blocks, ~60 kB compressed each
    damage = (1 << 20) + 600_000
    assert len(data) > damage + 300_000
    data[damage : damage + 64] = bytes(64)
    (tmp_path / "bad.xml.bz2").write_bytes(bytes(data))
    reference, decompressor = bytearray(), bz2.BZ2Decompressor()  # what 4 KiB feeds decode before the damage
    with pytest.raises(OSError):
        for start in range(0, len(data), 4096):
            reference += decompressor.decompress(bytes(data[start : start + 4096]))
    pieces = list(iter_shard_bytes(plan_shards(str(tmp_path / "bad.xml.bz2"), "en")[0]))
    (brk,) = [p for p in pieces if isinstance(p, StreamBreak)]
    assert -FEED_BYTES <= brk.offset - damage <= 100_000 and "corrupt bz2 data" in brk.reason
    kept = b"".join(p for p in pieces if isinstance(p, bytes))
    assert reference.startswith(kept) and len(reference) - len(kept) <= 200_000  # at most the slice's 2 blocks
    assert kept.count(b"</page>") > 5000


@pytest.mark.parametrize("suffix", [".gz", ".xz"])
def test_gzip_and_xz_dumps_read_as_the_bz2_one_and_report_a_cut(tmp_path, suffix, enwiki_pages):
    """Told by their magic bytes, concatenated members / streams included; a cut is a truncated_archive at its
    offset, as for bz2."""
    import gzip
    import lzma

    compress = {".gz": gzip.compress, ".xz": lambda data: lzma.compress(data, preset=0)}[suffix]
    raw = bz2.open(ENWIKI).read()
    path = tmp_path / f"enwiki.xml{suffix}"
    path.write_bytes(compress(raw[:200_000]) + compress(raw[200_000:]))
    pages, results = read(str(path))
    assert [(p.page_id, p.title, p.text) for p in pages] == [(p.page_id, p.title, p.text) for p in enwiki_pages]
    assert len(pages) == 206 and not results[0].issues
    data = compress(raw)
    path.write_bytes(data[: len(data) // 2])
    pages, results = read(str(path))
    (issue,) = results[0].issues
    assert issue.reason == "truncated_archive" and issue.offset == len(data) // 2 and 0 < len(pages) < 206
