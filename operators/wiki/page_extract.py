"""One Wikipedia page → sentences with their hyperlinks (the extraction step of the EASE corpus).

Input: a :class:`RawPage`, its language and an :class:`ExtractionSettings`. Output: a :class:`PageExtraction`
with one :class:`LinkedSentence` per sentence that holds at least one article link, the page's redirect (if it
is one), the reason the page was rejected (if it was), and counters of everything cut.

Only the main namespace (ns 0) is extracted. A page is rejected, with a reason, when it is larger than
``max_page_chars`` (``page_too_large``), holds undecodable bytes (``invalid_utf8``: a U+FFFD replacement
character in its text or title), or when extraction itself fails on it (``extraction_error``; a page never stops
the shard). A redirect page (``<redirect title=…>``, or wikitext starting with ``#REDIRECT [[…]]`` or the
localized magic word, :data:`REDIRECT_WORDS`) yields a redirect and no sentences.

Link targets are normalized (:func:`titles.normalize_title`); a link to a section of the page itself
(``[[#History|history]]``) targets the page's own title. Redirects are resolved later, once the whole dump's
redirect table is known. ``linked_titles`` lists every article link of the raw page (prose, lists, tables,
template arguments, image captions, references; deliberately also links hidden in comments or ``<nowiki>``, so
that a hard negative is never something the page links; a comment inside a link's target is not part of it), not
only those in extracted sentences. A link whose
label straddles a sentence boundary is dropped and counted (``link_across_sentences``).
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass, field, replace

from interlingua.operators.wiki.dump_pages import RawPage
from interlingua.operators.wiki.sentence_split import split_sentences
from interlingua.operators.wiki.titles import normalize_title
from interlingua.operators.wiki.wikitext_links import iter_paragraphs, render_paragraph
from interlingua.operators.wiki.wikitext_markup import NamespacePrefixes, split_comments, strip_markup

ARTICLE_NAMESPACE = 0
_ANY_LINK_TARGET = re.compile(r"\[\[([^\[\]|\n]++)(?=\||\]\])")
REDIRECT_WORDS = (
    "redirect weiterleitung redirection redirección redireccion rinvia rinvio redirecionamento redirecionar "
    "doorverwijzing перенаправление перенапр пренасочване виж перенаправлення patrz przekieruj tam omdirigering "
    "přesměruj presmeruj 重定向 転送 リダイレクト 넘겨주기 تحويل הפניה yönlendirme yönlendir ohjaus uudelleenohjaus "
    "átirányítás"
).split()
_REDIRECT = re.compile(
    r"\s*#(?:" + "|".join(map(re.escape, REDIRECT_WORDS)) + r")\s*:?\s*\[\[([^\[\]|\n]+)(?:\|[^\]\n]*)?\]\]",
    re.IGNORECASE,
)
_REDIRECT_PREFIX_CHARS = 2048


@dataclass(frozen=True)
class ExtractionSettings:
    """Limits of the extractor. Validated on construction (ValueError names the bad option)."""

    max_page_chars: int = 5_000_000
    max_template_depth: int = 40
    min_sentence_chars: int = 10
    max_sentence_chars: int = 2_000
    first_letter_case: bool = True
    prefixes: NamespacePrefixes = field(default_factory=NamespacePrefixes)

    def __post_init__(self) -> None:
        for name in ("max_page_chars", "max_template_depth", "min_sentence_chars", "max_sentence_chars"):
            value = getattr(self, name)
            if not isinstance(value, int) or value < 1:
                raise ValueError(f"{name} must be a positive integer, got {value!r}")
        if self.min_sentence_chars > self.max_sentence_chars:
            raise ValueError(
                f"min_sentence_chars ({self.min_sentence_chars}) must not exceed "
                f"max_sentence_chars ({self.max_sentence_chars})"
            )


@dataclass(frozen=True)
class LinkedSentence:
    """A sentence and its article links: ``sentence[starts[i]:ends[i]]`` links to ``targets[i]`` (normalized)."""

    page_id: int
    sentence_index: int
    sentence: str
    starts: tuple[int, ...]
    ends: tuple[int, ...]
    targets: tuple[str, ...]


@dataclass
class PageExtraction:
    page_id: int
    title: str
    sentences: list[LinkedSentence] = field(default_factory=list)
    sentence_count: int = 0
    linked_titles: tuple[str, ...] = ()
    redirect_target: str | None = None
    rejected: str | None = None
    issues: Counter = field(default_factory=Counter)


def page_link_titles(text: str, settings: ExtractionSettings, page_title: str | None = None) -> tuple[str, ...]:
    """Normalized targets of every article link anywhere in the raw page (prose, lists, tables, templates,
    captions), sorted and distinct: the "linked on the same page" set that hard negatives must avoid. The text is
    scanned with its HTML comments removed and each comment's body apart, so a comment inside a link
    (``[[Lyon<!-- twin -->]]``) leaves its target ``Lyon`` and a link inside a comment still counts."""
    titles: set[str] = set()
    outside, comments, _ = split_comments(text)
    for part in (outside, *comments):
        for match in _ANY_LINK_TARGET.finditer(part):
            target = match.group(1)
            if settings.prefixes.classify(target) == "article":
                title = normalize_title(settings.prefixes.local_target(target), settings.first_letter_case, page_title)
                if title:
                    titles.add(title)
    return tuple(sorted(titles))


def redirect_target_in_text(text: str) -> str | None:
    """The raw target of a ``#REDIRECT [[Target]]`` page (any :data:`REDIRECT_WORDS`), else ``None``."""
    if "#" not in text[:_REDIRECT_PREFIX_CHARS]:
        return None
    match = _REDIRECT.match(text[:_REDIRECT_PREFIX_CHARS])
    return None if match is None else match.group(1)


def extract_page(page: RawPage, lang: str, settings: ExtractionSettings) -> PageExtraction:
    """Sentences with links of one page (see module doc). Never raises on the page's content."""
    try:
        return _extract_page(page, lang, settings)
    except Exception as error:  # noqa: BLE001 - one bad page must not stop the shard; counted with a reason
        result = PageExtraction(page_id=page.page_id, title=str(page.title))
        result.rejected = "extraction_error"
        result.issues[f"extraction_error_{type(error).__name__}"] += 1
        return result


def _extract_page(page: RawPage, lang: str, settings: ExtractionSettings) -> PageExtraction:
    if settings.prefixes.own_language != lang:  # a prefix naming lang links back into this wiki
        settings = replace(settings, prefixes=settings.prefixes.for_language(lang))
    title = normalize_title(page.title, settings.first_letter_case)
    result = PageExtraction(page_id=page.page_id, title=title)
    if page.namespace != ARTICLE_NAMESPACE:
        result.rejected = "non_article_namespace"
        return result
    redirect = page.redirect if page.redirect is not None else redirect_target_in_text(page.text)
    if redirect is not None:
        result.redirect_target = normalize_title(redirect, settings.first_letter_case, title)
        return result
    if len(page.text) > settings.max_page_chars:
        result.rejected = "page_too_large"
        return result
    if "\ufffd" in page.text or "\ufffd" in page.title:
        result.rejected = "invalid_utf8"
        return result
    result.linked_titles = page_link_titles(page.text, settings, title)
    prose = strip_markup(page.text, settings.prefixes, settings.max_template_depth, result.issues)
    sentence_index = 0
    for raw_paragraph in iter_paragraphs(prose):
        paragraph = render_paragraph(raw_paragraph, settings.prefixes, result.issues, lang)
        spans = split_sentences(paragraph.text, lang)
        links_in = _links_by_sentence(paragraph.links, spans, result.issues)
        for (start, end), sentence_links in zip(spans, links_in, strict=True):
            length = end - start
            if length < settings.min_sentence_chars or length > settings.max_sentence_chars:
                result.issues["sentence_length_out_of_range"] += 1
                continue
            result.sentence_count += 1
            starts: list[int] = []
            ends: list[int] = []
            targets: list[str] = []
            for link in sentence_links:
                target = normalize_title(link.target, settings.first_letter_case, title)
                if not target:
                    continue
                starts.append(link.start - start)
                ends.append(link.end - start)
                targets.append(target)
            if targets:
                result.sentences.append(
                    LinkedSentence(
                        page_id=page.page_id,
                        sentence_index=sentence_index,
                        sentence=paragraph.text[start:end],
                        starts=tuple(starts),
                        ends=tuple(ends),
                        targets=tuple(targets),
                    )
                )
            sentence_index += 1
    return result


def _links_by_sentence(links, spans: list[tuple[int, int]], issues: Counter) -> list[list]:
    """The links inside each sentence span (one sweep: both are in text order); a link not inside one span is
    counted once as ``link_across_sentences``."""
    inside: list[list] = [[] for _ in spans]
    index = 0
    for link in links:
        while index < len(spans) and spans[index][1] <= link.start:
            index += 1
        if index < len(spans) and spans[index][0] <= link.start and link.end <= spans[index][1]:
            inside[index].append(link)
        else:
            issues["link_across_sentences"] += 1
    return inside
