"""Rule-based sentence splitter, per language.

Method (documented because the corpus depends on it):

- A boundary candidate is a run of terminal punctuation ``. ! ? …`` (optionally followed by closing quotes or
  brackets) followed by whitespace, where the next non-quote character is an upper-case letter or a digit.
- A ``.`` candidate is rejected when the word before it is an abbreviation of the language (lists below, matched
  case-insensitively, e.g. English ``Dr.``, ``e.g.``; Bulgarian ``г.``, ``т.е.``), or a single letter (an initial,
  ``J. R. R. Tolkien``).
- In languages written without spaces (zh, ja) the full-width ``。！？`` end a sentence with no space needed.

Output: ``(start, end)`` character spans into the paragraph, whitespace-trimmed, in order.
"""

from __future__ import annotations

import re

_CANDIDATE = re.compile(r"[.!?…]+[\"'”’»)\]]*\s+")
_FULLWIDTH_END = re.compile(r"[。！？]+[」』）]*")
_OPENING = "\"'“‘«([¿¡"
_WORD_BEFORE = re.compile(r"([\w.\-]+)$")
_NO_SPACE_LANGS = frozenset({"zh", "ja"})
_ABBREVIATION_WINDOW = 24  # characters looked at before a period: longer than any listed abbreviation

ABBREVIATIONS: dict[str, frozenset[str]] = {
    "en": frozenset(
        "mr mrs ms dr prof sr jr st mt ft vs etc e.g i.e cf al approx ca c no nos vol vols ed eds rev gen col lt "
        "sgt capt cmdr adm gov sen rep pres inc ltd co corp bros dept univ jan feb mar apr jun jul aug sep sept "
        "oct nov dec fig figs p pp u.s u.k a.d b.c op ch est".split()
    ),
    "bg": frozenset("г гр ул т.е напр вж др проф д-р ст с в ок бел млн млрд хил т.нар пр.н.е сл.н.е".split()),
    "de": frozenset("z.b d.h u.a usw bzw vgl ca nr dr prof hr fr st bd jh s u.ä z.t".split()),
    "fr": frozenset("m mm mme mlle dr pr st ste etc p ex cf av apr j.-c env".split()),
    "es": frozenset("sr sra srta dr dra ud uds etc p ej pág vol núm a.c d.c aprox".split()),
    "ru": frozenset("г гг т.е т.д т.п др см напр ок им ул в вв стр".split()),
    "it": frozenset("sig sigg dott prof ecc p es ca vol".split()),
}


def split_sentences(text: str, lang: str) -> list[tuple[int, int]]:
    """Sentence spans of ``text`` in language ``lang`` (unknown languages use the rules with no abbreviations)."""
    abbreviations = ABBREVIATIONS.get(lang, frozenset())
    boundaries: list[int] = []
    for match in _CANDIDATE.finditer(text):
        end = match.end()
        if end >= len(text) or not _starts_sentence(text, end):
            continue
        dot = match.start()
        if text[dot] == "." and _is_abbreviation(text[max(0, dot - _ABBREVIATION_WINDOW) : dot], abbreviations):
            continue
        boundaries.append(end)
    if lang in _NO_SPACE_LANGS:
        boundaries.extend(m.end() for m in _FULLWIDTH_END.finditer(text) if m.end() < len(text))
        boundaries = sorted(set(boundaries))
    spans: list[tuple[int, int]] = []
    start = 0
    for boundary in [*boundaries, len(text)]:
        span = _trim(text, start, boundary)
        if span is not None:
            spans.append(span)
        start = boundary
    return spans


def _starts_sentence(text: str, position: int) -> bool:
    while position < len(text) and text[position] in _OPENING:
        position += 1
    return position < len(text) and (text[position].isupper() or text[position].isdigit())


def _is_abbreviation(before: str, abbreviations: frozenset[str]) -> bool:
    match = _WORD_BEFORE.search(before)
    if match is None:
        return False
    word = match.group(1).lower().strip(".")
    if len(word) == 1 and word.isalpha():
        return True
    return word in abbreviations


def _trim(text: str, start: int, end: int) -> tuple[int, int] | None:
    while start < end and text[start].isspace():
        start += 1
    while end > start and text[end - 1].isspace():
        end -= 1
    return (start, end) if end > start else None
