"""Page-title normalization and redirect resolution (MediaWiki title semantics).

MediaWiki stores titles with spaces (links may use underscores), ignores a ``#section`` anchor when choosing the
target page, and, on wikis whose ``<case>`` is ``first-letter`` (all Wikipedias), upper-cases the first
character. ``normalize_title`` applies exactly that.

Redirects: ``RedirectTable`` holds the main-namespace redirects collected from the dump itself (``<redirect
title=…>``, or the page's ``#REDIRECT [[…]]`` line), source and target normalized (a redirect to ``B#section``
points at ``B``). A link to a redirect resolves to its target; *chains* (double redirects ``A → B → C``) are
followed to the end, up to ``MAX_REDIRECT_HOPS`` hops. MediaWiki itself follows one hop when a reader clicks, but
a double redirect is a maintenance bug that bots fix, and its final target is the article meant. A cycle or an
over-long chain stops where following stopped (counted in ``broken_chains``).
"""

from __future__ import annotations

import html
import re
from collections.abc import Iterable, Mapping
from urllib.parse import unquote

_WHITESPACE = re.compile(r"[\s_]+")
_BIDI_MARKS = re.compile("[\u200e\u200f\u202a-\u202e]")
MAX_REDIRECT_HOPS = 8


def normalize_title(raw: str, first_letter_case: bool = True, page_title: str | None = None) -> str:
    """Canonical title of a link target: anchor dropped, ``_`` → space, whitespace collapsed, first letter upper.

    Also: ``%XX`` escapes and HTML entities decoded, bidirectional marks removed, one leading ``:`` removed. A
    pure in-page anchor (``#History``) is a link to the page itself: it returns ``page_title`` when given, else
    ``""`` (as does an empty target).
    """
    title = raw
    if "%" in title:
        try:
            title = unquote(title, errors="strict")
        except UnicodeDecodeError:
            pass
    if "&" in title:
        title = html.unescape(title)
    title, anchor, _ = title.partition("#")
    title = _BIDI_MARKS.sub("", title)
    title = _WHITESPACE.sub(" ", title).strip()
    if title.startswith(":"):
        title = title[1:].strip()
    if not title:
        return page_title if anchor and page_title else ""
    if first_letter_case:
        title = upper_first(title)
    return title


def upper_first(title: str) -> str:
    """MediaWiki's first-letter case: the first character upper-cased, unless that changes its length (``ß``
    stays) or it is Georgian Mkhedruli (MediaWiki keeps it, Unicode 11 Mtavruli notwithstanding)."""
    first = title[0]
    upper = first.upper()
    if len(upper) != 1 or "\u10d0" <= first <= "\u10ff":
        return title
    return upper + title[1:]


class RedirectTable:
    """Redirect source title → final target title, following chains of up to ``MAX_REDIRECT_HOPS``.

    Input: ``(source_title, target_title)`` pairs, already normalized. A cycle or an over-long chain resolves to
    the title where following stopped (the cycle is counted in ``broken_chains``).
    """

    def __init__(self, pairs: Iterable[tuple[str, str]]) -> None:
        self._target: dict[str, str] = {}
        for source, target in pairs:
            if source and target and source != target:
                self._target[source] = target
        self.broken_chains = 0

    def __len__(self) -> int:
        return len(self._target)

    def as_mapping(self) -> Mapping[str, str]:
        return self._target

    def resolve(self, title: str) -> str:
        """Final title after following redirects; the title itself when it is not a redirect."""
        seen = {title}
        current = title
        for _ in range(MAX_REDIRECT_HOPS):
            nxt = self._target.get(current)
            if nxt is None:
                return current
            if nxt in seen:
                self.broken_chains += 1
                return current
            seen.add(nxt)
            current = nxt
        self.broken_chains += 1
        return current
