"""Extracted sentences → (sentence, entity) pairs → pairs with hard negatives.

``link_pairs``: every link of every extracted sentence, with its target resolved through the language's redirect
table and mapped to an entity id by the :class:`EntityCatalog`; links whose title maps to no entity are counted
(``unmapped_links``). Each pair carries the entities linked anywhere on its page (every article link of the raw
page, redirect-resolved, plus the page's own entity), which the hard-negative sampler must avoid.

``attach_negatives``: pairs whose entity is in the kept vocabulary get ``k`` negatives
(:class:`HardNegativeSampler`) and a cap priority (:func:`pair_priority`); pairs with no candidate are returned
as rejects with their reason.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Collection

import pyarrow as pa
from interlingua.operators.wiki.hard_negatives import HardNegativeSampler
from interlingua.operators.wiki.sampling_caps import pair_priority
from interlingua.operators.wiki.titles import RedirectTable
from interlingua.operators.wiki.wikidata import EntityCatalog

PAIRS_SCHEMA = pa.schema(
    [
        ("lang", pa.string()),
        ("page_id", pa.int64()),
        ("sentence_index", pa.int32()),
        ("sentence", pa.string()),
        ("link_start", pa.int32()),
        ("link_end", pa.int32()),
        ("entity_id", pa.string()),
        ("page_entities", pa.list_(pa.string())),
    ]
)
CORPUS_SCHEMA = pa.schema(
    [
        ("lang", pa.string()),
        ("sentence", pa.string()),
        ("entity_id", pa.string()),
        ("hard_negative_ids", pa.list_(pa.string())),
        ("page_id", pa.int64()),
        ("sentence_index", pa.int32()),
        ("link_start", pa.int32()),
        ("link_end", pa.int32()),
    ]
)


def pair_key(lang: str, page_id: int, sentence_index: int, link_start: int, entity_id: str) -> str:
    """Identity of a pair, stable across runs and shardings (seeds negatives and cap priorities)."""
    return f"{lang}|{page_id}|{sentence_index}|{link_start}|{entity_id}"


def link_pairs(
    sentences: pa.Table,
    pages: pa.Table,
    lang: str,
    redirects: RedirectTable,
    catalog: EntityCatalog,
    counters: Counter,
) -> pa.Table:
    """One row per (sentence, linked entity); see module doc. ``sentences`` and ``pages`` have the
    ``shard_extract`` schemas (``pages.linked_titles``: every article link of the raw page)."""
    page_entities: dict[int, set[str]] = {}
    for page in pages.to_pylist():
        titles = [redirects.resolve(t) for t in page["linked_titles"]] + [page["title"]]
        page_entities[page["page_id"]] = {e for e in (catalog.entity_id(lang, t) for t in titles) if e is not None}
    resolved_rows: list[tuple[dict, list[str | None]]] = []
    for row in sentences.to_pylist():
        entities: list[str | None] = []
        for target in row["targets"]:
            entity = catalog.entity_id(lang, redirects.resolve(target))
            entities.append(entity)
            if entity is None:
                counters["unmapped_links"] += 1
            else:
                page_entities.setdefault(row["page_id"], set()).add(entity)
        resolved_rows.append((row, entities))
    out: dict[str, list] = {name: [] for name in PAIRS_SCHEMA.names}
    for row, entities in resolved_rows:
        on_page = sorted(page_entities.get(row["page_id"], ()))
        for start, end, entity in zip(row["starts"], row["ends"], entities, strict=True):
            if entity is None:
                continue
            out["lang"].append(lang)
            out["page_id"].append(row["page_id"])
            out["sentence_index"].append(row["sentence_index"])
            out["sentence"].append(row["sentence"])
            out["link_start"].append(start)
            out["link_end"].append(end)
            out["entity_id"].append(entity)
            out["page_entities"].append(on_page)
    counters["pairs"] += len(out["lang"])
    return pa.table(out, schema=PAIRS_SCHEMA)


def attach_negatives(
    pairs: pa.Table, kept: Collection[str], sampler: HardNegativeSampler, seed: int, counters: Counter
) -> tuple[pa.Table, list[int], list[dict]]:
    """``(corpus rows, cap priorities, rejects)`` for the pairs whose entity is kept."""
    out: dict[str, list] = {name: [] for name in CORPUS_SCHEMA.names}
    priorities: list[int] = []
    rejects: list[dict] = []
    for row in pairs.to_pylist():
        if row["entity_id"] not in kept:
            counters["pairs_entity_below_min_links"] += 1
            continue
        key = pair_key(row["lang"], row["page_id"], row["sentence_index"], row["link_start"], row["entity_id"])
        negatives, reason = sampler.sample(row["entity_id"], frozenset(row["page_entities"]), key, row["lang"])
        if reason is not None:
            counters[f"pairs_dropped_{reason}"] += 1
            rejects.append({"operator": "hard_negatives", "reason": reason, "row": _reject_row(row)})
            continue
        counters["pairs_with_negatives"] += 1
        for name in CORPUS_SCHEMA.names:
            out[name].append(negatives if name == "hard_negative_ids" else row[name])
        priorities.append(pair_priority(seed, key))
    return pa.table(out, schema=CORPUS_SCHEMA), priorities, rejects


def _reject_row(row: dict) -> dict:
    return {k: v for k, v in row.items() if k != "page_entities"}
