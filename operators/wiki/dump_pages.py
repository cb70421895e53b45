"""Stream ``<page>`` records out of decompressed MediaWiki export XML.

Input: an iterator of byte chunks (from :func:`dump_shards.iter_shard_bytes`), possibly ending with a
``StreamBreak``. Output: :class:`RawPage` records for every page, plus a :class:`DumpIssue` for everything that
stopped or cut the stream. Parsing is incremental (``xml.etree.ElementTree.XMLPullParser``) and each finished
``<page>`` element is cleared from the tree, so memory stays flat in the dump size (it grows with the largest
page only).

Encoding: a UTF-16/UTF-8 byte-order mark selects the codec (gensim's Bulgarian test dump is UTF-16); otherwise
UTF-8. Invalid byte sequences are replaced with U+FFFD and counted (``invalid_utf8_bytes``); the page
extractor rejects pages that contain a replacement character, with reason ``invalid_utf8``.

Bare ``<page>`` elements (a multistream shard) are wrapped in a synthetic root; a stray ``</mediawiki>``
closing tag of the dump's last stream is dropped.
"""

from __future__ import annotations

import codecs
import re
import xml.etree.ElementTree as ET
from collections.abc import Iterator
from dataclasses import dataclass, field

from interlingua.operators.wiki.dump_shards import StreamBreak

_BOMS: tuple[tuple[bytes, str], ...] = (
    (codecs.BOM_UTF8, "utf-8-sig"),
    (codecs.BOM_UTF16_LE, "utf-16"),
    (codecs.BOM_UTF16_BE, "utf-16"),
)
_SURROGATE_ESCAPE = re.compile("[\udc80-\udcff]")
_ROOT_CLOSE = "</mediawiki>"
_MEDIAWIKI_CLOSE = re.compile(r"</mediawiki>")
_MEDIAWIKI_OPEN = re.compile(r"^\s*(?:<\?xml[^>]*\?>)?\s*<mediawiki\b")
SYNTHETIC_ROOT = "<interlingua-shard>"


@dataclass(frozen=True)
class RawPage:
    """One ``<page>``: id, title, namespace, redirect target (or ``None``) and the latest revision's wikitext."""

    page_id: int
    title: str
    namespace: int
    redirect: str | None
    text: str


@dataclass(frozen=True)
class SiteInfo:
    """What the ``<siteinfo>`` header says: namespace names by key and the title case rule."""

    namespaces: dict[int, str] = field(default_factory=dict)
    case: str = "first-letter"


@dataclass
class DumpIssue:
    """A problem that stopped or cut the stream: reason, compressed offset (if known), last complete page."""

    reason: str
    detail: str
    offset: int | None = None
    last_page_id: int | None = None
    last_page_title: str | None = None


@dataclass
class PageStreamResult:
    """Side results of streaming one shard, filled while :func:`iter_pages` runs."""

    siteinfo: SiteInfo | None = None
    issues: list[DumpIssue] = field(default_factory=list)
    invalid_utf8_bytes: int = 0
    pages_seen: int = 0


def iter_pages(chunks: Iterator[bytes | StreamBreak], result: PageStreamResult) -> Iterator[RawPage]:
    """Yield every page of the XML in ``chunks`` (all namespaces); record problems in ``result``.

    Never raises on bad input: a truncated archive, an XML syntax error or a stream break end the iteration
    with a :class:`DumpIssue` naming where it broke (compressed offset, last complete page).
    """
    parser = ET.XMLPullParser(events=("start", "end"))
    decoder: codecs.IncrementalDecoder | None = None
    root: ET.Element | None = None
    last_page: RawPage | None = None
    wrapped = False
    held_back = ""  # a possible start of "</mediawiki>" at the end of the previous chunk

    def issue(reason: str, detail: str, offset: int | None = None) -> None:
        result.issues.append(
            DumpIssue(
                reason=reason,
                detail=detail,
                offset=offset,
                last_page_id=None if last_page is None else last_page.page_id,
                last_page_title=None if last_page is None else last_page.title,
            )
        )

    for chunk in chunks:
        if isinstance(chunk, StreamBreak):
            issue("truncated_archive", chunk.reason, chunk.offset)
            return
        if decoder is None:
            decoder = _decoder_for(chunk)
            text = decoder.decode(chunk)
            if not _MEDIAWIKI_OPEN.match(text):
                parser.feed(SYNTHETIC_ROOT)
                wrapped = True
        else:
            text = decoder.decode(chunk)
        if wrapped:
            text, held_back = _drop_root_close(held_back + text)
        text = _replace_invalid_bytes(text, result)
        try:
            parser.feed(text)
            for event, element in parser.read_events():
                if root is None and event == "start":
                    root = element
                if event != "end":
                    continue
                tag = _local(element.tag)
                if tag == "page":
                    page = _page_from_element(element)
                    if root is not None:
                        root.clear()
                    if page is None:
                        continue
                    result.pages_seen += 1
                    last_page = page
                    yield page
                elif tag == "siteinfo":
                    result.siteinfo = _siteinfo_from_element(element)
                    if root is not None:
                        root.clear()
        except ET.ParseError as error:
            issue("xml_error", f"XML not well-formed: {error}")
            return
    if decoder is None:
        issue("empty_input", "the shard holds no bytes")
        return
    tail = decoder.decode(b"", final=True)
    if wrapped:
        tail, _unfinished_root_close = _drop_root_close(held_back + tail)
    tail = _replace_invalid_bytes(tail, result)
    try:
        parser.feed(tail + ("</interlingua-shard>" if wrapped else ""))
        parser.close()
        for _event, _element in parser.read_events():
            pass
    except ET.ParseError as error:
        issue("truncated_xml", f"XML ended inside an element: {error}")


def _drop_root_close(text: str) -> tuple[str, str]:
    """``(text without "</mediawiki>", held-back tail)``: a tail that may begin a split "</mediawiki>" waits
    for the next chunk. (Page text cannot hold the tag: XML escapes ``<`` inside ``<text>``.)"""
    text = _MEDIAWIKI_CLOSE.sub("", text)
    cut = text.rfind("<", max(0, len(text) - len(_ROOT_CLOSE)))
    if cut >= 0 and _ROOT_CLOSE.startswith(text[cut:]):
        return text[:cut], text[cut:]
    return text, ""


def _decoder_for(first_chunk: bytes) -> codecs.IncrementalDecoder:
    for bom, codec in _BOMS:
        if first_chunk.startswith(bom):
            return codecs.getincrementaldecoder(codec)(
                errors="surrogateescape" if codec.startswith("utf-8") else "replace"
            )
    return codecs.getincrementaldecoder("utf-8")(errors="surrogateescape")


def _replace_invalid_bytes(text: str, result: PageStreamResult) -> str:
    """Replace surrogate-escaped invalid bytes with U+FFFD and count them."""
    if not _SURROGATE_ESCAPE.search(text):
        return text
    replaced, count = _SURROGATE_ESCAPE.subn("\ufffd", text)
    result.invalid_utf8_bytes += count
    return replaced


def _local(tag: str) -> str:
    return tag.rsplit("}", 1)[-1]


def _child(element: ET.Element, name: str) -> ET.Element | None:
    for child in element:
        if _local(child.tag) == name:
            return child
    return None


def _page_from_element(element: ET.Element) -> RawPage | None:
    title_el, ns_el, id_el = _child(element, "title"), _child(element, "ns"), _child(element, "id")
    if title_el is None or id_el is None or not (id_el.text or "").strip().isdigit():
        return None
    redirect_el = _child(element, "redirect")
    revision = _child(element, "revision")
    text_el = None if revision is None else _child(revision, "text")
    ns_text = (ns_el.text or "0").strip() if ns_el is not None else "0"
    return RawPage(
        page_id=int((id_el.text or "").strip()),
        title=title_el.text or "",
        namespace=int(ns_text) if ns_text.lstrip("-").isdigit() else 0,
        redirect=None if redirect_el is None else redirect_el.get("title"),
        text=(text_el.text or "") if text_el is not None else "",
    )


def _siteinfo_from_element(element: ET.Element) -> SiteInfo:
    namespaces: dict[int, str] = {}
    case = "first-letter"
    for child in element:
        name = _local(child.tag)
        if name == "case" and child.text:
            case = child.text.strip()
        elif name == "namespaces":
            for ns in child:
                key = ns.get("key")
                if key is not None and key.lstrip("-").isdigit():
                    namespaces[int(key)] = ns.text or ""
    return SiteInfo(namespaces=namespaces, case=case)
