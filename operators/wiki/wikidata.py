"""Map Wikipedia titles to entity ids, and entities to their Wikidata P31 ("instance of") types.

Sources, in order of preference:

1. A Wikidata JSON dump (``latest-all.json[.bz2|.gz]``): a JSON array written one entity per line (each line
   ends with ``,``). Streamed line by line; for each entity we keep ``sitelinks[<site id>].title`` for the
   languages asked for (:func:`wikidata_site_id`: ``zh-yue`` → ``zh_yuewiki``) and the ids in ``claims.P31[*].mainsnak.datavalue.value.id``.
2. ``page_props`` SQL dumps (``<lang>wiki-latest-page_props.sql.gz``): ``INSERT`` tuples
   ``(pp_page, 'pp_propname', 'pp_value', pp_sortkey)``; rows with ``pp_propname = 'wikibase_item'`` map a page id
   to a QID (page ids → titles come from the article dump). They carry no P31 types.
3. Neither: the title itself is the entity id (the monolingual EASE setting; English titles as ids, other
   languages prefixed ``<lang>wiki:``). :attr:`EntityCatalog.id_source` says which one was used, and the
   workflow writes it into the corpus manifest.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from interlingua.core.archives import open_compressed

_SQL_TUPLE = re.compile(r"\((\d+),'((?:[^'\\]|\\.)*)','((?:[^'\\]|\\.)*)',(?:NULL|[-+0-9.eE]+)\)")
_SQL_ESCAPE = re.compile(r"\\(.)")


@dataclass
class EntityCatalog:
    """Title → entity id per language, and entity id → P31 type ids."""

    id_source: str
    titles: dict[str, dict[str, str]] = field(default_factory=dict)
    types: dict[str, tuple[str, ...]] = field(default_factory=dict)
    lines_rejected: int = 0

    def entity_id(self, lang: str, title: str) -> str | None:
        """The entity a (normalized, redirect-resolved) title of ``lang`` names, or ``None`` if unmapped."""
        if self.id_source == "titles":
            return title if lang == "en" else f"{lang}wiki:{title}"
        return self.titles.get(lang, {}).get(title)

    @property
    def has_types(self) -> bool:
        return bool(self.types)


# Wikipedias whose database name (Wikidata's site id) is not their language code's: Belarusian in the
# Taraškievica orthography moved from be-x-old.wikipedia.org to be-tarask.wikipedia.org and kept its database.
_RENAMED_SITES = {"be-tarask": "be_x_oldwiki"}


def wikidata_site_id(lang: str) -> str:
    """Wikidata's sitelink key for the Wikipedia of ``lang`` (its database name): ``en`` → ``enwiki``,
    ``zh-min-nan`` → ``zh_min_nanwiki`` (database names write the code's hyphens as underscores),
    ``be-tarask`` → ``be_x_oldwiki``."""
    return _RENAMED_SITES.get(lang) or f"{lang.replace('-', '_')}wiki"


def title_catalog() -> EntityCatalog:
    """The fallback catalog: titles are entity ids, no types."""
    return EntityCatalog(id_source="titles")


def load_wikidata_json(url: str, langs: Iterable[str]) -> EntityCatalog:
    """Stream a Wikidata JSON dump; keep entities with a sitelink in one of ``langs`` (e.g. ``["en", "bg"]``).

    Lines that are not valid entity JSON (bad JSON, invalid UTF-8, no string ``id``, ``sitelinks`` / ``claims``
    of the wrong shape) are counted in ``lines_rejected`` (the array brackets are not); the load never stops on
    one. P31 values of claims ranked ``deprecated`` (known to be wrong) are not types.
    """
    wanted = {wikidata_site_id(lang): lang for lang in langs}
    catalog = EntityCatalog(id_source="wikidata_json", titles={lang: {} for lang in wanted.values()})
    with open_compressed(url, "rb") as handle:
        for raw in handle:
            line = raw.strip().rstrip(b",")
            if not line or line in (b"[", b"]"):
                continue
            try:
                entity = json.loads(line.decode("utf-8"))
                qid = entity["id"]
                sitelinks = entity.get("sitelinks") or {}
                if not isinstance(qid, str) or not qid or not isinstance(sitelinks, Mapping):
                    raise TypeError("not an entity")
            except (ValueError, KeyError, TypeError, AttributeError):
                catalog.lines_rejected += 1
                continue
            linked = False
            for site, link in sitelinks.items():
                lang = wanted.get(site)
                if lang is None or not isinstance(link, Mapping):
                    continue
                title = link.get("title")
                if isinstance(title, str) and title:
                    catalog.titles[lang][title] = qid
                    linked = True
            if linked:
                types = _p31_types(entity)
                if types:
                    catalog.types[qid] = types
    return catalog


def _p31_types(entity: Mapping) -> tuple[str, ...]:
    claims = entity.get("claims") or {}
    statements = claims.get("P31") if isinstance(claims, Mapping) else None
    types: list[str] = []
    for claim in statements if isinstance(statements, list) else ():
        try:
            if claim.get("rank") == "deprecated":
                continue
            value = claim["mainsnak"]["datavalue"]["value"]["id"]
        except (KeyError, TypeError, AttributeError):
            continue
        if isinstance(value, str) and value and value not in types:
            types.append(value)
    return tuple(types)


def read_page_props_qids(url: str) -> dict[int, str]:
    """``page id → QID`` from a ``page_props`` SQL dump (``wikibase_item`` rows only)."""
    qids: dict[int, str] = {}
    with open_compressed(url, "rt", encoding="utf-8", errors="replace") as handle:
        for line in handle:
            if not line.startswith("INSERT INTO"):
                continue
            for match in _SQL_TUPLE.finditer(line):
                if _SQL_ESCAPE.sub(r"\1", match.group(2)) == "wikibase_item":
                    qids[int(match.group(1))] = _SQL_ESCAPE.sub(r"\1", match.group(3))
    return qids


def add_page_props(catalog: EntityCatalog, lang: str, page_titles: Mapping[int, str], qids: Mapping[int, str]) -> None:
    """Add ``lang`` titles to ``catalog`` through page ids (titles from the dump, QIDs from ``page_props``)."""
    mapping = catalog.titles.setdefault(lang, {})
    for page_id, title in page_titles.items():
        qid = qids.get(page_id)
        if qid is not None:
            mapping.setdefault(title, qid)
