"""Driver-side readers of the extraction work folder for the ``ease-corpus`` workflow.

- :func:`read_extracted`: one Parquet table of a shard's extraction (``sentences``, ``redirects``, ``pages``).
- :func:`load_catalog`: per-language redirect tables, page titles, and the entity catalog from the configured
  source (Wikidata JSON → ``page_props`` → titles fallback).
- :func:`shard_rejects`: a shard report's rejected pages and dump issues as corpus-store reject records.
- :func:`wikidata_rejects`: the Wikidata JSON lines the catalog rejected, as reject records.
- :func:`train_vectors_from_extracts`: skip-gram entity vectors over the extracted linked sentences.
"""

from __future__ import annotations

from typing import Any

import fsspec
import numpy as np
import pyarrow as pa

from interlingua.core.parquet_read import read_parquet
from interlingua.operators.wiki.dump_shards import DumpShard
from interlingua.operators.wiki.entity_vectors import entity_context_sequences, train_entity_vectors
from interlingua.operators.wiki.shard_extract import shard_dir
from interlingua.operators.wiki.titles import RedirectTable
from interlingua.operators.wiki.wikidata import (
    EntityCatalog,
    add_page_props,
    load_wikidata_json,
    read_page_props_qids,
    require_sitelinks,
    title_catalog,
)


def read_extracted(work_url: str, shard: DumpShard, table: str) -> pa.Table:
    """``table`` (``sentences`` | ``redirects`` | ``pages``) of an extracted shard."""
    if table not in ("sentences", "redirects", "pages"):
        raise ValueError(f"table must be 'sentences', 'redirects' or 'pages', got {table!r}")
    with fsspec.open(f"{shard_dir(work_url, shard)}/{table}.parquet", "rb") as handle:
        return read_parquet(handle)


def load_catalog(
    config: Any, shards: list[DumpShard], work_url: str
) -> tuple[EntityCatalog, dict[str, RedirectTable], dict[str, dict[int, str]]]:
    """``(catalog, redirects by lang, page id → title by lang)`` for the workflow config's dumps. A damaged
    compressed Wikidata JSON or ``page_props`` file raises :class:`TruncatedInputError`; with the config's
    ``allow_truncated_inputs`` what was read is used and the damage is in ``catalog.partial_inputs``."""
    langs = [dump.lang for dump in config.dumps]
    redirects: dict[str, RedirectTable] = {}
    titles: dict[str, dict[int, str]] = {}
    for lang in langs:
        lang_shards = [s for s in shards if s.lang == lang]
        pairs = [
            p
            for s in lang_shards
            for p in zip(*read_extracted(work_url, s, "redirects").to_pydict().values(), strict=True)
        ]
        redirects[lang] = RedirectTable(pairs)
        titles[lang] = {
            page_id: title
            for s in lang_shards
            for page_id, title in zip(
                *read_extracted(work_url, s, "pages").select(["page_id", "title"]).to_pydict().values(), strict=True
            )
        }
    partial = [] if config.allow_truncated_inputs else None  # else a damaged file raises TruncatedInputError
    if config.wikidata_json:
        catalog = load_wikidata_json(config.wikidata_json, langs, partial=partial)
        require_sitelinks(catalog, config.wikidata_json, langs)
    elif any(dump.page_props_url for dump in config.dumps):
        catalog = EntityCatalog(id_source="page_props")
        for dump in config.dumps:
            if dump.page_props_url:
                qids = read_page_props_qids(dump.page_props_url, partial)
                add_page_props(catalog, dump.lang, titles[dump.lang], qids)
    else:
        catalog = title_catalog()
    catalog.partial_inputs = partial or []
    return catalog, redirects, titles


def shard_rejects(report: dict) -> list[dict]:
    """Reject records (operator, reason, row) for a shard's rejected pages and dump-level issues."""
    records = [
        {"operator": "wiki_extract", "reason": page["reason"], "row": page} for page in report.get("rejected_pages", [])
    ]
    records += [
        {"operator": "wiki_dump", "reason": issue["reason"], "row": issue} for issue in report.get("dump_issues", [])
    ]
    return records


def wikidata_rejects(catalog: EntityCatalog, url: str) -> list[dict]:
    """Reject records (operator, reason, row: input, line number, the line's start) of the listed rejected lines."""
    return [{"operator": "wikidata", "reason": r["reason"], "row": {"input": url, "line": r["line"], "text": r["text"]}}
            for r in catalog.rejects]


def train_vectors_from_extracts(
    shards: list[DumpShard],
    work_url: str,
    catalog: EntityCatalog,
    redirects: dict[str, RedirectTable],
    dim: int,
    epochs: int,
    seed: int,
) -> dict[str, np.ndarray]:
    """Skip-gram entity vectors from the extracted sentences (word–entity contexts; see ``entity_vectors``)."""
    rows = []
    for shard in shards:
        for row in read_extracted(work_url, shard, "sentences").to_pylist():
            ids = [catalog.entity_id(shard.lang, redirects[shard.lang].resolve(t)) for t in row["targets"]]
            rows.append((row["sentence"], row["starts"], row["ends"], ids))
    sequences = entity_context_sequences(rows)
    return train_entity_vectors(sequences, dim=dim, epochs=epochs, seed=seed) if sequences else {}
