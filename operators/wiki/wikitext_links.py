"""Turn markup-stripped wikitext into prose paragraphs whose article links carry character spans.

Input: text from :func:`wikitext_markup.strip_markup` (templates, tables, files gone; ``[[links]]`` kept).
Output: :class:`LinkedParagraph` values: the visible text and, for each article link, ``(start, end, target)``
where ``text[start:end]`` is exactly what the reader sees for that link.

Rules (MediaWiki rendering semantics):

- Paragraphs are runs of non-blank lines; headings (``=``), list and indent lines (``* # : ;``), table rows
  (``| !``) end a paragraph and are not prose.
- ``[[Target]]`` shows ``Target``; ``[[Target|label]]`` shows ``label``; ``[[Target (x)|]]`` (pipe trick) shows
  ``Target``; a *link trail* of letters right after ``]]`` joins the label (``[[bus]]es`` → ``buses``).
- ``[[Namespace:Page|label]]`` outside the article namespace shows its label but names no entity.
- ``[http://url label]`` shows ``label``; ``[http://url]`` shows nothing.
- Bold/italic quotes (``''``, ``'''``, ``'''''``) are removed, HTML entities decoded, whitespace collapsed.
"""

from __future__ import annotations

import html
import re
from collections import Counter
from dataclasses import dataclass

from interlingua.operators.wiki.wikitext_markup import NamespacePrefixes

_INLINE_TOKEN = re.compile(
    r"\[\[(?P<inner>[^\[\]\n]*)\]\](?P<trail>[^\W\d_]*)"
    r"|\[(?:https?:|ftp:)?//[^\s\]]*(?:[ \t]+(?P<ext_label>[^\]\n]*))?\]"
)
_QUOTES = re.compile(r"'{2,}")
_WHITESPACE = re.compile(r"\s+")
_PARENTHETICAL = re.compile(r"\s*\([^()]*\)\s*$")
_NOT_PROSE_LINE_STARTS = ("=", "*", "#", ":", ";", "|", "!", "{", "}")


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


def render_paragraph(raw: str, prefixes: NamespacePrefixes, issues: Counter) -> LinkedParagraph:
    """Visible text of one paragraph with the spans of its article links."""
    builder = _TextBuilder()
    links: list[LinkSpan] = []
    cursor = 0
    raw = _clean_inline(raw)
    for match in _INLINE_TOKEN.finditer(raw):
        builder.append(raw[cursor : match.start()])
        cursor = match.end()
        inner = match.group("inner")
        if inner is None:
            label = match.group("ext_label")
            if label:
                builder.append(label)
            continue
        target, has_pipe, label = inner.partition("|")
        kind = prefixes.classify(target)
        if has_pipe and not label.strip():
            label = _PARENTHETICAL.sub("", target.split(":", 1)[-1] if kind != "article" else target)
        elif not has_pipe:
            label = target.lstrip(":")
        label = (label + (match.group("trail") or "")).strip()
        if not label:
            issues["empty_link_label"] += 1
            continue
        start, end = builder.append(label)
        if kind == "article" and target.strip() and not target.strip().startswith("#"):
            links.append(LinkSpan(start, end, target))
        else:
            issues["non_article_link"] += 1
    builder.append(raw[cursor:])
    return LinkedParagraph(text=builder.text(), links=tuple(links))


def _clean_inline(fragment: str) -> str:
    """Bold/italic quotes removed, HTML entities decoded, whitespace runs → one space (whole paragraph at once)."""
    if "''" in fragment:
        fragment = _QUOTES.sub("", fragment)
    if "&" in fragment:
        fragment = html.unescape(fragment)
    return _WHITESPACE.sub(" ", fragment)


class _TextBuilder:
    """Concatenates fragments, never producing two spaces in a row or a leading space; returns label spans."""

    def __init__(self) -> None:
        self._parts: list[str] = []
        self._length = 0
        self._ends_with_space = True

    def append(self, fragment: str) -> tuple[int, int]:
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
