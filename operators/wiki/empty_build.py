"""The ``ease-corpus`` build's refusals of an empty result: a dump that yields no page, a build that keeps no pair.

Each is one line (:class:`UserError`) naming the file, or the funnel stage where the pairs ran out, with a hint; the
build then publishes nothing (an empty corpus version is never published from non-empty dumps).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from interlingua.core.empty_result import require_kept
from interlingua.core.errors import UserError
from interlingua.core.redact import redact_text

_SOURCES = {"wikidata_json": "Wikidata JSON's sitelinks", "page_props": "page_props dumps"}


def require_pages(dumps: Sequence[Any], shards: Sequence[Any], reports: Mapping[str, dict]) -> None:
    """:class:`UserError` for the first of ``dumps`` (``lang``, ``url``) whose extracted shards hold no page."""
    for dump in dumps:
        own = [reports.get(s.shard_id, {}) for s in shards if s.lang == dump.lang]
        if any(report.get("counters", {}).get("pages", 0) for report in own):
            continue
        issues = [issue for report in own for issue in report.get("dump_issues", [])]
        why = f" ({issues[0]['reason']}: {issues[0].get('detail', '')})" if issues else ""
        raise UserError(f"dump {redact_text(str(dump.url))} (lang {dump.lang}) yields no <page>{why}: nothing to "
                        f"build from (hint: give a pages-articles .xml.bz2 dump)")


def require_pairs(kept: int, funnel: Mapping[str, int], link_counts: Mapping[str, int], min_entity_links: int,
                  id_source: str) -> None:
    """:class:`UserError` when no pair is ``kept`` after the caps, naming the stage of ``funnel`` that emptied
    (:func:`~interlingua.core.empty_result.require_kept`)."""
    require_kept(kept, "ease-corpus", "pair",
                 lambda: _where_pairs_ran_out(funnel, link_counts, min_entity_links, id_source))


def _where_pairs_ran_out(funnel: Mapping[str, int], link_counts: Mapping[str, int], min_entity_links: int,
                         id_source: str) -> str:
    pages, articles, links = (funnel.get(f"extract_{k}", 0) for k in ("pages", "articles", "links"))
    if not articles:
        return (f"the dumps' {pages} pages hold no article (each is a redirect, outside the main namespace, or "
                f"rejected; see the extraction counters)")
    if not links:
        return (f"their {articles} articles hold no sentence with an article link ({funnel.get('extract_sentences', 0)} "
                f"sentences within min_sentence_chars..max_sentence_chars)")
    if not funnel.get("pairs"):
        return (f"none of their {links} links names an entity of the {_SOURCES.get(id_source, id_source)} (hint: is "
                f"each dump's lang the language of its wiki, and does the entity source cover its titles?)")
    if not funnel.get("entities_kept"):
        return (f"no entity is linked more than min_entity_links={min_entity_links} times (the most linked one: "
                f"{max(link_counts.values(), default=0)}) (hint: lower min_entity_links, or give larger dumps)")
    dropped = ", ".join(f"{k.removeprefix('pairs_dropped_')} {v}" for k, v in sorted(funnel.items())
                        if k.startswith("pairs_dropped_"))
    return (f"no pair of the {funnel['entities_kept']} kept entities got a hard negative (dropped: {dropped or 'none'}) "
            f"(hint: lower min_entity_links so more entities are candidates)")
