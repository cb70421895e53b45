"""Remove the parts of wikitext that are not running prose, keeping ``[[article links]]`` in place.

What is removed (each pass is linear in the page length; the Python loops run over markup tokens, not chars):

1. HTML comments ``<!-- … -->`` (an unclosed comment hides the rest of the page, as in MediaWiki).
2. Elements whose content is not prose: ``<ref>``, ``<math>``, ``<gallery>``, ``<timeline>``, ``<pre>``, …
3. Templates, parser functions and template arguments (``{{…}}``, ``{{{…}}}``), nested, matched by brace runs
   the way MediaWiki's preprocessor does (a run of closing braces closes ``{{{`` first when it can, else
   ``{{``). Nesting deeper than ``max_template_depth`` cuts the page at the outermost open template.
4. Tables (``{|`` … ``|}`` at line starts), nested.
5. Links into the File/Image/Media and Category namespaces and interlanguage links, whole, including nested
   links inside image captions.
6. Any remaining HTML tag (its content is kept), and behaviour switches (``__NOTOC__``).

Unclosed or stray markup tokens (``{{``, ``}}``, ``[[``, ``]]``, ``{|``) are removed as tokens and counted,
so the text around them survives. Every event is counted in the returned :class:`collections.Counter`.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass, field

_COMMENT = re.compile(r"<!--.*?-->", re.DOTALL)
_NON_PROSE_TAGS = (
    "ref|math|chem|ce|gallery|timeline|score|syntaxhighlight|source|pre|graph|mapframe|maplink|templatedata"
    "|imagemap|hiero|inputbox|categorytree|references|code"
)
_NON_PROSE_SELF_CLOSING = re.compile(rf"<(?:{_NON_PROSE_TAGS})\b[^<>]*/>", re.IGNORECASE)
_NON_PROSE_ELEMENT = re.compile(rf"<({_NON_PROSE_TAGS})\b[^<>]*>.*?</\1\s*>", re.IGNORECASE | re.DOTALL)
_NON_PROSE_OPEN = re.compile(rf"<(?:{_NON_PROSE_TAGS})\b[^<>]*>", re.IGNORECASE)
_ANY_TAG = re.compile(r"</?[A-Za-z][A-Za-z0-9]*\b[^<>]*>")
_BREAK_TAG = re.compile(r"<br\s*/?>", re.IGNORECASE)
_BEHAVIOUR_SWITCH = re.compile(r"__[A-Z]+__")
_BRACE_RUN = re.compile(r"\{\{+|\}\}+")
_TABLE_TOKEN = re.compile(r"^[ \t]*(\{\||\|\})", re.MULTILINE)
_BRACKET_TOKEN = re.compile(r"\[\[|\]\]")
_INTERLANGUAGE_PREFIX = re.compile(r"^[a-z]{2,3}(?:-[a-z]{2,8})*$")

CANONICAL_FILE_NAMESPACES = frozenset({"file", "image", "media"})
CANONICAL_CATEGORY_NAMESPACES = frozenset({"category"})


@dataclass(frozen=True)
class NamespacePrefixes:
    """Lower-cased namespace names of one wiki, grouped by what a link into them means for extraction.

    ``drop``: links removed whole (files, images, media, categories). ``non_article``: every other namespace
    (the link's label stays as text, but it names no entity).
    """

    drop: frozenset[str] = CANONICAL_FILE_NAMESPACES | CANONICAL_CATEGORY_NAMESPACES
    non_article: frozenset[str] = field(
        default_factory=lambda: frozenset(
            {
                "talk",
                "user",
                "user talk",
                "wikipedia",
                "wp",
                "help",
                "template",
                "portal",
                "special",
                "draft",
                "module",
                "mediawiki",
                "book",
                "timedtext",
                "wikt",
                "wiktionary",
                "s",
                "wikisource",
                "q",
                "wikiquote",
                "commons",
                "meta",
                "m",
                "d",
                "wikidata",
                "n",
                "b",
                "v",
                "voy",
                "species",
                "mw",
            }
        )
    )

    @classmethod
    def from_siteinfo(cls, namespaces: dict[int, str]) -> NamespacePrefixes:
        """Prefixes of a wiki from its ``<siteinfo>`` namespaces (key 6 File, 14 Category, −2 Media)."""
        base = cls()
        drop = set(base.drop)
        other = set(base.non_article)
        for key, name in namespaces.items():
            if not name:
                continue
            (drop if key in (-2, 6, 14) else other).add(name.lower())
        return cls(drop=frozenset(drop), non_article=frozenset(other - drop))

    def classify(self, target: str) -> str:
        """``"drop"``, ``"non_article"``, ``"interlanguage"`` or ``"article"`` for a raw link target."""
        if ":" not in target:
            return "article"
        stripped = target.strip()
        leading_colon = stripped.startswith(":")
        head, sep, _ = stripped.lstrip(":").partition(":")
        if not sep:
            return "article"
        prefix = head.strip().replace("_", " ").lower()
        if prefix in self.drop:
            return "non_article" if leading_colon else "drop"
        if prefix in self.non_article:
            return "non_article"
        if _INTERLANGUAGE_PREFIX.match(prefix):
            return "non_article" if leading_colon else "interlanguage"
        return "article"


def strip_markup(text: str, prefixes: NamespacePrefixes, max_template_depth: int, issues: Counter) -> str:
    """Wikitext with non-prose removed (see module doc); ``[[links]]``, bold/italic and entities remain."""
    text = _strip_comments(text, issues)
    text = _strip_non_prose_elements(text, issues)
    text = _delete_spans(text, _template_spans(text, max_template_depth, issues))
    text = _delete_spans(text, _table_spans(text, issues))
    text = _delete_spans(text, _dropped_link_spans(text, prefixes, issues))
    text = _BREAK_TAG.sub(" ", text)
    text = _ANY_TAG.sub("", text)
    return _BEHAVIOUR_SWITCH.sub("", text)


def _strip_comments(text: str, issues: Counter) -> str:
    if "<!--" not in text:
        return text
    text = _COMMENT.sub("", text)
    cut = text.find("<!--")
    if cut >= 0:
        issues["unclosed_comment"] += 1
        text = text[:cut]
    return text


def _strip_non_prose_elements(text: str, issues: Counter) -> str:
    if "<" not in text:
        return text
    text = _NON_PROSE_SELF_CLOSING.sub("", text)
    text = _NON_PROSE_ELEMENT.sub("", text)
    text, unclosed = _NON_PROSE_OPEN.subn("", text)
    if unclosed:
        issues["unclosed_tag"] += unclosed
    return text


def _template_spans(text: str, max_depth: int, issues: Counter) -> list[tuple[int, int]]:
    """Spans of templates / template arguments, matched by brace runs; unmatched runs become token spans."""
    if "{{" not in text and "}}" not in text:
        return []
    spans: list[tuple[int, int]] = []
    stack: list[list[int]] = []  # [run_start, braces_left]
    for match in _BRACE_RUN.finditer(text):
        run_start, run_length = match.start(), match.end() - match.start()
        if text[run_start] == "{":
            stack.append([run_start, run_length])
            if len(stack) > max_depth or run_length > 3 * max_depth:
                issues["template_depth_exceeded"] += 1
                return spans + [(stack[0][0], len(text))]
            continue
        close_at, left = run_start, run_length
        while left >= 2 and stack:
            top = stack[-1]
            take = 3 if top[1] >= 3 and left >= 3 else 2
            top[1] -= take
            close_at += take
            left -= take
            spans.append((top[0] + top[1], close_at))
            if top[1] < 2:
                stack.pop()
        if left >= 2:
            issues["unbalanced_template_close"] += 1
            spans.append((close_at, close_at + left))
    for run_start, braces_left in stack:
        issues["unclosed_template"] += 1
        spans.append((run_start, run_start + braces_left))
    return spans


def _table_spans(text: str, issues: Counter) -> list[tuple[int, int]]:
    if "{|" not in text:
        return []
    spans: list[tuple[int, int]] = []
    stack: list[int] = []
    for match in _TABLE_TOKEN.finditer(text):
        if match.group(1) == "{|":
            stack.append(match.start(1))
        elif stack:
            spans.append((stack.pop(), match.end(1)))
        else:
            issues["unbalanced_table_close"] += 1
            spans.append((match.start(1), match.end(1)))
    for start in stack:
        issues["unclosed_table"] += 1
        spans.append((start, start + 2))
    return spans


def _dropped_link_spans(text: str, prefixes: NamespacePrefixes, issues: Counter) -> list[tuple[int, int]]:
    """Whole File/Category/interlanguage links, plus unmatched ``[[`` / ``]]`` tokens."""
    if "[[" not in text and "]]" not in text:
        return []
    spans: list[tuple[int, int]] = []
    stack: list[int] = []
    for match in _BRACKET_TOKEN.finditer(text):
        if match.group() == "[[":
            stack.append(match.start())
            continue
        if not stack:
            issues["unbalanced_link_close"] += 1
            spans.append((match.start(), match.end()))
            continue
        start = stack.pop()
        if stack:
            continue
        inner = text[start + 2 : match.start()]
        target = inner.split("|", 1)[0]
        kind = prefixes.classify(target)
        if kind in ("drop", "interlanguage"):
            issues[f"removed_{kind}_link"] += 1
            spans.append((start, match.end()))
        elif "[[" in inner:
            issues["nested_link"] += 1
            spans.append((start, match.end()))
    for start in stack:
        issues["unclosed_link"] += 1
        spans.append((start, start + 2))
    return spans


def _delete_spans(text: str, spans: list[tuple[int, int]]) -> str:
    """``text`` without the union of ``spans`` (which may nest or overlap)."""
    if not spans:
        return text
    spans.sort()
    pieces: list[str] = []
    cursor = 0
    for start, end in spans:
        if end <= cursor:
            continue
        if start > cursor:
            pieces.append(text[cursor:start])
        cursor = max(cursor, end)
    pieces.append(text[cursor:])
    return "".join(pieces)
