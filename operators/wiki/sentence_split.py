"""Rule-based sentence splitter, per language.

Method (documented because the corpus depends on it):

- A boundary candidate is a run of terminal punctuation ``. ! ? …`` (also Devanagari ``। ॥``, Arabic ``؟``,
  Armenian ``։``, Ethiopic ``።``, Burmese ``။``), optionally followed by closing quotes or brackets, followed by
  whitespace, where the next character after any opening quotes/brackets is an upper-case (or title-case)
  letter, a digit, or a letter of a script without case (Hebrew, Arabic, Devanagari, CJK, …): not a lower-case
  letter and not other punctuation.
- A ``.`` candidate is rejected when the word before it is an abbreviation of the language (lists below, matched
  case-insensitively, e.g. English ``Dr.``, ``e.g.``; Bulgarian ``г.``, ``т.е.``), or a single letter (an initial,
  ``J. R. R. Tolkien``). Abbreviations that only ever precede a number (English ``No. 5``, ``pp. 3``, ``vol. 2``)
  are rejected only when a digit follows, so "He said no. The end." still splits.
- In Chinese, Japanese and other languages written without spaces (:data:`NO_SPACE_LANGS`, any ``zh-*``) the
  full-width ``。！？`` end a sentence with no space needed.
- Languages without a list use the rules with no abbreviations.

Output: ``(start, end)`` character spans into the paragraph, whitespace-trimmed, in order. Linear time (a run of
punctuation is matched once, from its first character).
"""

from __future__ import annotations

import re

_TERMINALS = ".!?…।॥؟։።။"
_CANDIDATE = re.compile(rf"(?<![{_TERMINALS}])[{_TERMINALS}]++[\"'”’»)\]]*+\s+")
_FULLWIDTH_END = re.compile(r"(?<![。！？])[。！？]++[」』）]*+")
_OPENING = "\"'“‘«([¿¡„"
_WORD_BEFORE = re.compile(r"([\w.\-]+)$")
NO_SPACE_LANGS = frozenset({"zh", "ja", "yue", "wuu", "gan", "lzh", "cdo", "hak", "zh-yue", "zh-classical"})
_ABBREVIATION_WINDOW = 24  # characters looked at before a period: longer than any listed abbreviation

ABBREVIATIONS: dict[str, frozenset[str]] = {
    "en": frozenset(
        "mr mrs ms dr prof sr jr st mt ft vs etc e.g i.e cf al approx ca c vol vols ed eds rev gen col lt "
        "sgt capt cmdr adm gov sen rep pres inc ltd co corp bros dept univ jan feb mar apr jun jul aug sep sept "
        "oct nov dec fig figs u.s u.k a.d b.c est".split()
    ),
    "bg": frozenset("г гр ул т.е напр вж др проф д-р ст с в ок бел млн млрд хил т.нар пр.н.е сл.н.е".split()),
    "de": frozenset("z.b d.h u.a usw bzw vgl ca dr prof hr fr st bd jh s u.ä z.t".split()),
    "fr": frozenset("m mm mme mlle dr pr st ste etc p ex cf av apr j.-c env".split()),
    "es": frozenset("sr sra srta dr dra ud uds etc p ej pág vol a.c d.c aprox".split()),
    "ru": frozenset("г гг т.е т.д т.п др см напр ок им ул в вв стр".split()),
    "it": frozenset("sig sigg dott prof ecc p es ca vol".split()),
}
NUMBER_ABBREVIATIONS: dict[str, frozenset[str]] = {
    "en": frozenset("no nos p pp ch op art nr".split()),
    "de": frozenset("nr".split()),
    "fr": frozenset("no".split()),
    "es": frozenset("núm".split()),
    "it": frozenset("n".split()),
}


def split_sentences(text: str, lang: str) -> list[tuple[int, int]]:
    """Sentence spans of ``text`` in language ``lang`` (see module doc)."""
    base = lang.split("-", 1)[0]
    abbreviations = ABBREVIATIONS.get(lang, ABBREVIATIONS.get(base, frozenset()))
    number_abbreviations = NUMBER_ABBREVIATIONS.get(lang, NUMBER_ABBREVIATIONS.get(base, frozenset()))
    boundaries: list[int] = []
    for match in _CANDIDATE.finditer(text):
        end = match.end()
        if end >= len(text):
            continue
        first = _first_sentence_char(text, end)
        if first is None or not (first.isdigit() or (first.isalpha() and not first.islower())):
            continue
        dot = match.start()
        if text[dot] == ".":
            word = _word_before(text[max(0, dot - _ABBREVIATION_WINDOW) : dot])
            if word is not None and (
                (len(word) == 1 and word.isalpha())
                or word in abbreviations
                or (word in number_abbreviations and first.isdigit())
            ):
                continue
        boundaries.append(end)
    if lang in NO_SPACE_LANGS or base == "zh":
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


def _first_sentence_char(text: str, position: int) -> str | None:
    while position < len(text) and text[position] in _OPENING:
        position += 1
    return text[position] if position < len(text) else None


def _word_before(before: str) -> str | None:
    match = _WORD_BEFORE.search(before)
    return None if match is None else match.group(1).lower().strip(".")


def _trim(text: str, start: int, end: int) -> tuple[int, int] | None:
    while start < end and text[start].isspace():
        start += 1
    while end > start and text[end - 1].isspace():
        end -= 1
    return (start, end) if end > start else None
