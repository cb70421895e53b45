"""Turn markup-stripped wikitext into prose paragraphs whose article links carry character spans.

Input: text from :func:`wikitext_markup.strip_markup` (templates, tables, files gone; ``[[links]]`` kept).
Output: :class:`LinkedParagraph` values: the visible text and, for each article link, ``(start, end, target)``
where ``text[start:end]`` is exactly what the reader sees for that link.

Rules (MediaWiki rendering semantics):

- Paragraphs are runs of non-blank lines; headings (``=``), list and indent lines (``* # : ;``), table rows
  (``| !``) end a paragraph and are not prose.
- ``[[Target]]`` shows ``Target`` as written (underscores and a ``#section`` included, one leading ``:``
  dropped); ``[[Target|label]]`` shows ``label`` (everything after the first ``|``); ``[[Target (x)|]]`` /
  ``[[Paris, Texas|]]`` (pipe trick) show ``Target`` / ``Paris``.
- A *link trail* right after ``]]`` joins the label (``[[bus]]es`` → ``buses``), with MediaWiki's per-language
  trail characters (:data:`LINK_TRAILS`; languages not listed use MediaWiki's default, ASCII ``a-z`` only, so
  ``[[Bus]]Es`` and ``[[Paris]]é`` do not blend in English). ``<nowiki/>`` ends a trail.
- ``[[Namespace:Page|label]]`` outside the article namespace shows its label but names no entity. A link to a
  section of the same page (``[[#History|history]]``) is kept with its raw target ``#History``; the page
  extractor resolves it to the page itself.
- ``[http://url label]`` (any MediaWiki URL protocol, or ``//``) shows ``label``; ``[http://url]`` shows
  nothing; a ``[`` with no closing ``]`` is text.
- Bold/italic quotes (``''``, ``'''``, ``'''''``) are removed, HTML entities decoded, whitespace collapsed.

Every step is linear in the paragraph length (no backtracking over unclosed brackets).
"""

from __future__ import annotations

import functools
import html
import re
from collections import Counter
from dataclasses import dataclass

from interlingua.operators.wiki.wikitext_markup import NamespacePrefixes, restore_literals

_PROTOCOLS = (
    r"(?:https?|ftps?|sftp|ircs?|gopher|nntp|telnet|worldwind|svn|git|mms|ssh|redis)://|//"
    r"|(?:mailto|news|tel|urn|geo|magnet|xmpp|sips?|sms|bitcoin|matrix):"
)
_LINK_START = re.compile(rf"\[\[|\[(?=(?:{_PROTOCOLS}))", re.IGNORECASE)
_INTERNAL_LINK = re.compile(r"\[\[((?:[^\[\]]|\[(?!\[)|\](?!\]))*+)\]\]")
_EXTERNAL_URL = re.compile(rf"\[(?:{_PROTOCOLS})[^\[\]<>\"\s]*+", re.IGNORECASE)
_QUOTES = re.compile(r"'{2,}")
_WHITESPACE = re.compile(r"\s+")
_PARENTHETICAL = re.compile(r" ?\([^()]*\)$")
_PROTECTED = re.compile("[\ue000-\ue0ff]")
_NOT_PROSE_LINE_STARTS = ("=", "*", "#", ":", ";", "|", "!", "{", "}")

LINK_TRAILS: dict[str, str] = {
    "en": "a-z",
    "de": "äöüßa-z",
    "fr": "a-zàâçéèêîôûäëïöüùÇÉÂÊÎÔÛÄËÏÖÜÀÈÙ",
    "es": "a-záéíñóúü",
    "it": "a-zàéèíîìóòúù",
    "pt": "a-záâãàéêçíóôõúü",
    "nl": "a-zäöüïëéèà",
    "sv": "a-zåäöéÅÄÖÉ",
    "pl": "a-zęóąśłżźćńĘÓĄŚŁŻŹĆŃ",
    "cs": "a-záčďéěíňóřšťúůýž",
    "ru": "a-zа-яё",
    "uk": "a-zабвгґдеєжзиіїйклмнопрстуфхцчшщьюяʼ",
    "bg": "a-zабвгдежзийклмнопрстуфхцчшщъьюя",
    "he": "a-zא-ת",
    "zh": "",
}
"""Characters of the link trail per language (a regex character class body; ``""``: no trail)."""
DEFAULT_LINK_TRAIL = "a-z"


@functools.lru_cache(maxsize=64)
def _trail_pattern(lang: str) -> re.Pattern | None:
    chars = LINK_TRAILS.get(lang, LINK_TRAILS.get(lang.split("-", 1)[0], DEFAULT_LINK_TRAIL))
    return re.compile(f"[{chars}]+") if chars else None


@dataclass(frozen=True)
class LinkSpan:
    """A link in visible text: ``text[start:end]`` is its label, ``target`` the raw (unnormalized) target."""

    start: int
    end: int
    target: str


@dataclass(frozen=True)
class LinkedParagraph:
    text: str
    links: tuple[LinkSpan, ...]


def iter_paragraphs(text: str) -> list[str]:
    """Prose paragraphs (raw wikitext, lines joined by a space) of markup-stripped text."""
    paragraphs: list[str] = []
    current: list[str] = []
    for line in text.split("\n"):
        stripped = line.strip()
        if not stripped or stripped.startswith(_NOT_PROSE_LINE_STARTS):
            if current:
                paragraphs.append(" ".join(current))
                current = []
            continue
        current.append(stripped)
    if current:
        paragraphs.append(" ".join(current))
    return paragraphs


def render_paragraph(raw: str, prefixes: NamespacePrefixes, issues: Counter, lang: str = "en") -> LinkedParagraph:
    """Visible text of one paragraph with the spans of its article links (see module doc)."""
    builder = _TextBuilder()
    links: list[LinkSpan] = []
    raw = _clean_inline(raw)
    trail_pattern = _trail_pattern(lang)
    next_close = -1  # first "]" at or after the last search position (len(raw): none)
    cursor = 0
    search_at = 0
    while True:
        start_match = _LINK_START.search(raw, search_at)
        if start_match is None:
            break
        start = start_match.start()
        if start_match.group() == "[[":
            link = _INTERNAL_LINK.match(raw, start)
            if link is None:
                search_at = start + 2
                continue
            builder.append(raw[cursor:start])
            end = link.end()
            trail = ""
            if trail_pattern is not None:
                trail_match = trail_pattern.match(raw, end)
                if trail_match is not None:
                    trail, end = trail_match.group(), trail_match.end()
            cursor = search_at = end
            _render_link(link.group(1), trail, prefixes, builder, links, issues)
            continue
        url_end = _EXTERNAL_URL.match(raw, start).end()
        if next_close < url_end:
            found = raw.find("]", url_end)
            next_close = len(raw) if found < 0 else found
        if next_close >= len(raw):
            search_at = start + 1
            continue
        builder.append(raw[cursor:start])
        label = raw[url_end:next_close].strip()
        if label:
            builder.append(label)
        cursor = search_at = next_close + 1
    builder.append(raw[cursor:])
    return LinkedParagraph(text=builder.text(), links=tuple(links))


def _render_link(
    inner: str, trail: str, prefixes: NamespacePrefixes, builder: _TextBuilder, links: list, issues: Counter
) -> None:
    target, has_pipe, label = inner.partition("|")
    kind = prefixes.classify(target)
    if has_pipe and not label.strip():
        label = _pipe_trick(prefixes.local_target(target), kind)
    elif not has_pipe:
        label = target.strip()
        label = label[1:] if label.startswith(":") else label
    start, end = builder.append(label.strip() + trail, label=True)
    if start == end:
        issues["empty_link_label"] += 1
        return
    target = restore_literals(prefixes.local_target(target)).strip()
    if kind == "article" and target:
        links.append(LinkSpan(start, end, target))
    else:
        issues["non_article_link"] += 1


def _pipe_trick(target: str, kind: str) -> str:
    """MediaWiki's pipe trick: namespace, a final parenthetical, or else a ``, qualifier`` removed."""
    name = target.strip().lstrip(":")
    if kind != "article":
        name = name.split(":", 1)[-1]
    shortened = _PARENTHETICAL.sub("", name)
    if shortened == name:
        shortened = name.split(", ", 1)[0]
    return shortened


def _clean_inline(fragment: str) -> str:
    """Bold/italic quotes removed, whitespace runs → one space (whole paragraph at once). HTML entities are
    decoded later, per rendered fragment, so that ``&#91;&#91;x&#93;&#93;`` shows brackets and is no link."""
    if "''" in fragment:
        fragment = _QUOTES.sub("", fragment)
    return _WHITESPACE.sub(" ", fragment)


class _TextBuilder:
    """Concatenates fragments, never producing two spaces in a row or a leading space; returns label spans.

    HTML entities are decoded and protected ``<nowiki>`` characters restored (trail breaks dropped) as
    fragments come in, so spans index the final text."""

    def __init__(self) -> None:
        self._parts: list[str] = []
        self._length = 0
        self._ends_with_space = True

    def append(self, fragment: str, label: bool = False) -> tuple[int, int]:
        """Add ``fragment``; a ``label`` is trimmed so that its span holds no outer space."""
        if "&" in fragment:
            fragment = _WHITESPACE.sub(" ", html.unescape(fragment))
        if _PROTECTED.search(fragment):
            fragment = _WHITESPACE.sub(" ", restore_literals(fragment))
        if label:
            fragment = fragment.strip()
        if self._ends_with_space:
            fragment = fragment.lstrip(" ")
        if not fragment:
            return (self._length, self._length)
        start = self._length
        self._parts.append(fragment)
        self._length += len(fragment)
        self._ends_with_space = fragment.endswith(" ")
        return (start, self._length)

    def text(self) -> str:
        return "".join(self._parts).rstrip(" ")
