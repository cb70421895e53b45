"""Stream ``<page>`` records out of decompressed MediaWiki export XML.

Input: an iterator of byte chunks (from :func:`dump_shards.iter_shard_bytes`), possibly ending with a
``StreamBreak``. Output: :class:`RawPage` records for every page, plus a :class:`DumpIssue` for everything that
stopped or cut the stream.

Pages are cut out of the decoded text one ``<page> … </page>`` block at a time (in export XML a literal
``<page`` or ``</page>`` can only be markup: ``<`` inside ``<text>`` is escaped as ``&lt;``) and each block is
parsed on its own with ``xml.etree.ElementTree``. So memory stays flat in the dump size (it grows with the
largest page only), every step is linear in the input, and a malformed page costs that page only: it is skipped
and reported (``malformed_page``), and the pages after it are read. A page whose ``</page>`` is missing ends
where the next ``<page>`` starts. The ``<siteinfo>`` header (namespaces, title case) is parsed from the text
before the first page.

Encoding: a UTF-16/UTF-8 byte-order mark selects the codec (gensim's Bulgarian test dump is UTF-16); otherwise
UTF-8. Invalid byte sequences are replaced with U+FFFD and counted (``invalid_utf8_bytes``); the page
extractor rejects pages that contain a replacement character, with reason ``invalid_utf8``. Characters XML 1.0
forbids (C0 controls but tab/newline/return, U+FFFE/U+FFFF) would break the parse: they become spaces and are
counted (``invalid_xml_chars``).

End of input: a ``StreamBreak`` (truncated or corrupt compressed data) ends the stream with ``truncated_archive``
and the compressed offset where it broke; text that ends inside a ``<page>`` is ``truncated_xml``, and so is a
complete document (one that opened ``<mediawiki>``) that ends without ``</mediawiki>``; input with neither a root
nor a page is ``no_pages``. Bare ``<page>`` elements (a multistream shard) need no root. Every issue names the last
complete page before it.
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
_XML_INVALID = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ufffe\uffff]")
_PAGE_OPEN = re.compile(r"<page[\s>]")
_PAGE_CLOSE = "</page>"
_ROOT_CLOSE = "</mediawiki>"
_SITEINFO = re.compile(r"<siteinfo[\s>].*?</siteinfo\s*>", re.DOTALL)
_MEDIAWIKI_OPEN = re.compile(r"^\s*(?:<\?xml[^>]*\?>)?\s*<mediawiki\b")
_TITLE = re.compile(r"<title>([^<]{0,300})")
_KEEP_CHARS = 16  # a chunk's tail that may hold the start of "<page " or "</mediawiki>"
MAX_HEADER_CHARS = 1 << 22
MAX_ISSUES_LISTED = 1_000


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
    invalid_xml_chars: int = 0
    malformed_pages: int = 0
    pages_seen: int = 0
    issues_not_listed: int = 0


def iter_pages(chunks: Iterator[bytes | StreamBreak], result: PageStreamResult) -> Iterator[RawPage]:
    """Yield every page of the XML in ``chunks`` (all namespaces); record problems in ``result``.

    Never raises on bad input (see module doc): a truncated archive, a truncated document or a malformed page
    becomes a :class:`DumpIssue` naming where it broke (compressed offset if known, last complete page).
    """
    decoder: codecs.IncrementalDecoder | None = None
    splitter = _PageSplitter()
    last_page: RawPage | None = None

    def issue(reason: str, detail: str, offset: int | None = None) -> None:
        if len(result.issues) >= MAX_ISSUES_LISTED:
            result.issues_not_listed += 1
            return
        result.issues.append(
            DumpIssue(
                reason=reason,
                detail=detail,
                offset=offset,
                last_page_id=None if last_page is None else last_page.page_id,
                last_page_title=None if last_page is None else last_page.title,
            )
        )

    def pages_of(blocks: list[str]) -> Iterator[RawPage]:
        nonlocal last_page
        if splitter.header is not None:
            header, splitter.header = splitter.header, None
            _read_header(header, result, issue)
        for detail in splitter.unterminated:
            result.malformed_pages += 1
            issue("malformed_page", detail)
        splitter.unterminated.clear()
        for block in blocks:
            page, problem = _parse_page(block)
            if page is None:
                result.malformed_pages += 1
                issue("malformed_page", problem)
                continue
            result.pages_seen += 1
            last_page = page
            yield page

    stream_break: StreamBreak | None = None
    for chunk in chunks:
        if isinstance(chunk, StreamBreak):
            stream_break = chunk
            break
        if decoder is None:
            decoder = decoder_for(chunk)
        yield from pages_of(splitter.feed(_clean_text(decoder.decode(chunk), result)))
    if decoder is None and stream_break is None:
        issue("empty_input", "the shard holds no bytes")
        return
    tail = "" if decoder is None or stream_break is not None else decoder.decode(b"", final=True)
    yield from pages_of(splitter.feed(_clean_text(tail, result), final=True))
    if stream_break is not None:
        issue("truncated_archive", stream_break.reason, stream_break.offset)
    elif splitter.open_page:
        issue("truncated_xml", f"XML ended inside a <page> element ({splitter.open_chars} characters of it)")
    elif splitter.document and not splitter.root_closed:
        issue("truncated_xml", "XML ended before </mediawiki>: the document is incomplete")
    elif not splitter.pages_found and not splitter.document:
        issue("no_pages", "the input holds no <page> element and is no MediaWiki export document")


class _PageSplitter:
    """Cuts ``<page> … </page>`` blocks out of text fed in pieces; linear in the input (see module doc)."""

    def __init__(self) -> None:
        self._buffer = ""
        self._open_at = -1  # start of the page being accumulated in _buffer, or -1
        self._close_from = 0  # where to look for its "</page>"
        self._header_done = False
        self.header: str | None = None  # text before the first page, once known (consumed by the reader)
        self.document = False  # the text opened a <mediawiki> root
        self.root_closed = False
        self.unterminated: list[str] = []  # pages whose </page> never came (cut at the next <page>)
        self.pages_found = 0

    @property
    def open_page(self) -> bool:
        return self._open_at >= 0

    @property
    def open_chars(self) -> int:
        return len(self._buffer) - self._open_at if self._open_at >= 0 else 0

    def feed(self, text: str, final: bool = False) -> list[str]:
        buffer = self._buffer + text if self._buffer else text
        blocks: list[str] = []
        consumed = 0
        while True:
            if self._open_at < 0:
                opening = _PAGE_OPEN.search(buffer, consumed)
                if opening is None:
                    if not self._header_done and not final and len(buffer) < MAX_HEADER_CHARS:
                        break  # the header may still be growing
                    keep = len(buffer) if final else max(consumed, len(buffer) - _KEEP_CHARS)
                    self._gap(buffer[consumed:])
                    consumed = keep
                    break
                self._gap(buffer[consumed : opening.start()])
                self._open_at, self._close_from = opening.start(), opening.end()
            close = buffer.find(_PAGE_CLOSE, self._close_from)
            if close < 0:
                self._close_from = max(self._close_from, len(buffer) - len(_PAGE_CLOSE))
                consumed = self._open_at
                break
            end = close + len(_PAGE_CLOSE)
            inner = buffer.rfind("<page", self._open_at + 1, close)
            while inner >= 0 and not _PAGE_OPEN.match(buffer, inner):
                inner = buffer.rfind("<page", self._open_at + 1, inner)
            if inner >= 0:  # the previous page never closed: it ends where this one starts
                self.unterminated.append(f"<page> without </page>{_title_hint(buffer, self._open_at, inner)}")
                self._open_at = inner
            blocks.append(buffer[self._open_at : end])
            self.pages_found += 1
            consumed, self._open_at = end, -1
        self._buffer = buffer[consumed:]
        if self._open_at >= 0:
            self._open_at -= consumed
            self._close_from -= consumed
        return blocks

    def _gap(self, text: str) -> None:
        """Text outside pages: the header before the first page, whitespace, the closing root tag."""
        if not self._header_done:
            self._header_done = True
            self.header = text
            self.document = bool(_MEDIAWIKI_OPEN.match(text))
        if _ROOT_CLOSE in text:
            self.root_closed = True


def _title_hint(text: str, start: int, end: int) -> str:
    match = _TITLE.search(text, start, min(end, start + 4096))
    return f" (title {match.group(1)!r})" if match else ""


def _read_header(header: str, result: PageStreamResult, issue) -> None:
    match = _SITEINFO.search(header)
    if match is None:
        return
    try:
        result.siteinfo = _siteinfo_from_element(ET.fromstring(match.group()))
    except ET.ParseError as error:
        issue("malformed_siteinfo", f"<siteinfo> is not well-formed XML: {error}")


def _parse_page(block: str) -> tuple[RawPage | None, str]:
    """``(page, "")`` or ``(None, why)`` for one ``<page>…</page>`` block."""
    try:
        element = ET.fromstring(block)
    except ET.ParseError as error:
        return None, f"<page> is not well-formed XML: {error}{_title_hint(block, 0, len(block))}"
    page = _page_from_element(element)
    if page is None:
        return None, f"<page> without a <title> or a numeric <id>{_title_hint(block, 0, len(block))}"
    return page, ""


def _clean_text(text: str, result: PageStreamResult) -> str:
    """Invalid bytes → U+FFFD (counted), XML-forbidden characters → space (counted)."""
    if _SURROGATE_ESCAPE.search(text):
        text, count = _SURROGATE_ESCAPE.subn("\ufffd", text)
        result.invalid_utf8_bytes += count
    if _XML_INVALID.search(text):
        text, count = _XML_INVALID.subn(" ", text)
        result.invalid_xml_chars += count
    return text


def decoder_for(first_chunk: bytes) -> codecs.IncrementalDecoder:
    """The decoder of a dump's text: the codec its byte-order mark names, else UTF-8 (invalid bytes escaped)."""
    for bom, codec in _BOMS:
        if first_chunk.startswith(bom):
            return codecs.getincrementaldecoder(codec)(
                errors="surrogateescape" if codec.startswith("utf-8") else "replace"
            )
    return codecs.getincrementaldecoder("utf-8")(errors="surrogateescape")


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
    revisions = [child for child in element if _local(child.tag) == "revision"]
    revision = revisions[-1] if revisions else None  # the latest (a full-history dump lists them all)
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
