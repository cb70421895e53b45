"""Page-title normalization and redirect resolution (MediaWiki title semantics).

MediaWiki stores titles with spaces (links may use underscores), ignores a ``#section`` anchor when choosing the
target page, and, on wikis whose ``<case>`` is ``first-letter`` (all Wikipedias), upper-cases the first
character. ``normalize_title`` applies exactly that; ``RedirectTable`` follows redirect chains (bounded, cycle
safe) to the final article title.
"""

from __future__ import annotations

import html
import re
from collections.abc import Iterable, Mapping
from urllib.parse import unquote

_WHITESPACE = re.compile(r"[\s_]+")
MAX_REDIRECT_HOPS = 8


def normalize_title(raw: str, first_letter_case: bool = True) -> str:
    """Canonical title of a link target: anchor dropped, ``_`` → space, whitespace collapsed, first letter upper.

    Returns ``""`` for a pure in-page anchor (``#History``) or an empty target.
    """
    title = raw
    if "%" in title:
        title = unquote(title)
    if "&" in title:
        title = html.unescape(title)
    title = title.split("#", 1)[0]
    title = _WHITESPACE.sub(" ", title).strip()
    if title.startswith(":"):
        title = title[1:].strip()
    if first_letter_case and title:
        title = title[0].upper() + title[1:]
    return title


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
